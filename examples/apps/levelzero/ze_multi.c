/* SPDX-License-Identifier: MIT */
/*
 * Level Zero app with three kernels and seven launches on an immediate
 * command list, ordered by events, plus a device allocation filled and
 * copied on the list. Checks its own result.
 *   ze_multi [MODULE.spv]
 */
#include "ze_app.h"

#ifndef ZE_APP_SPV_DIR
#define ZE_APP_SPV_DIR "."
#endif

#define N 1024u
#define ROUNDS 3

static ze_event_handle_t multi_event(ze_event_pool_handle_t pool, uint32_t index)
{
	ze_event_desc_t desc = {.stype = ZE_STRUCTURE_TYPE_EVENT_DESC,
				.index = index,
				.signal = ZE_EVENT_SCOPE_FLAG_HOST,
				.wait = ZE_EVENT_SCOPE_FLAG_HOST};
	ze_event_handle_t e;

	ZE_CHECK(zeEventCreate(pool, &desc, &e));
	return e;
}

int main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : ZE_APP_SPV_DIR "/multi.spv";
	ze_driver_handle_t drv;
	ze_device_handle_t dev;
	ze_context_handle_t ctx;
	ze_context_desc_t cdesc = {.stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC};
	ze_command_queue_desc_t qdesc = {.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
					 .mode = ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS};
	ze_event_pool_desc_t pdesc = {.stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC,
				      .flags = ZE_EVENT_POOL_FLAG_HOST_VISIBLE,
				      .count = 2 * ROUNDS + 2};
	ze_device_mem_alloc_desc_t ddesc = {.stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC};
	ze_host_mem_alloc_desc_t hdesc = {.stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC};
	ze_event_handle_t ev[2 * ROUNDS + 2], prev = NULL;
	ze_event_pool_handle_t pool;
	ze_command_list_handle_t imm;
	ze_module_handle_t mod;
	ze_kernel_handle_t kscale, kadd, ksq;
	ze_group_count_t count = {N / 64, 1, 1};
	int32_t *x, *dx, zero = 0, expect[N];
	int64_t *y, want;
	uint32_t i, e = 0, bad = 0;
	int r, k;

	ze_app_device(&drv, &dev);
	ZE_CHECK(zeContextCreate(drv, &cdesc, &ctx));
	ZE_CHECK((ze_result_t)ze_app_module(ctx, dev, path, 0, &mod));
	kscale = ze_app_kernel(mod, "scale");
	kadd = ze_app_kernel(mod, "add_offset");
	ksq = ze_app_kernel(mod, "square_into");
	ZE_CHECK(zeKernelSetGroupSize(kscale, 64, 1, 1));
	ZE_CHECK(zeKernelSetGroupSize(kadd, 32, 1, 1));
	ZE_CHECK(zeKernelSetGroupSize(ksq, 128, 1, 1));
	ZE_CHECK(zeCommandListCreateImmediate(ctx, dev, &qdesc, &imm));
	ZE_CHECK(zeEventPoolCreate(ctx, &pdesc, 1, &dev, &pool));
	for (i = 0; i < 2 * ROUNDS + 2; i++)
		ev[i] = multi_event(pool, i);

	ZE_CHECK(zeMemAllocHost(ctx, &hdesc, N * sizeof(*x), 64, (void **)&x));
	ZE_CHECK(zeMemAllocDevice(ctx, &ddesc, N * sizeof(*dx), 64, dev, (void **)&dx));
	ZE_CHECK(zeMemAllocShared(ctx, &ddesc, &hdesc, N * sizeof(*y), 64, dev, (void **)&y));
	for (i = 0; i < N; i++) {
		x[i] = (int32_t)i - 500;
		expect[i] = x[i];
	}
	ZE_CHECK(zeCommandListAppendMemoryFill(imm, dx, &zero, sizeof(zero), N * sizeof(*dx), NULL,
					       0, NULL));
	ZE_CHECK(zeCommandListAppendMemoryCopy(imm, dx, x, N * sizeof(*x), ev[e], 0, NULL));
	prev = ev[e++];
	for (k = 0; k < ROUNDS; k++) {
		int32_t factor = k + 2, off = 10 * k - 7;

		ZE_CHECK(zeKernelSetArgumentValue(kscale, 0, sizeof(dx), &dx));
		ZE_CHECK(zeKernelSetArgumentValue(kscale, 1, sizeof(factor), &factor));
		count.groupCountX = N / 64;
		ZE_CHECK(zeCommandListAppendLaunchKernel(imm, kscale, &count, ev[e], 1, &prev));
		prev = ev[e++];
		ZE_CHECK(zeKernelSetArgumentValue(kadd, 0, sizeof(dx), &dx));
		ZE_CHECK(zeKernelSetArgumentValue(kadd, 1, sizeof(off), &off));
		count.groupCountX = N / 32;
		ZE_CHECK(zeCommandListAppendLaunchKernel(imm, kadd, &count, ev[e], 1, &prev));
		prev = ev[e++];
		for (i = 0; i < N; i++)
			expect[i] = expect[i] * factor + off + (int32_t)(i / 32);
	}
	ZE_CHECK(zeKernelSetArgumentValue(ksq, 0, sizeof(dx), &dx));
	ZE_CHECK(zeKernelSetArgumentValue(ksq, 1, sizeof(y), &y));
	count.groupCountX = N / 128;
	ZE_CHECK(zeCommandListAppendLaunchKernel(imm, ksq, &count, ev[e], 1, &prev));
	ZE_CHECK(zeEventHostSynchronize(ev[e], UINT64_MAX));
	ZE_CHECK(zeCommandListAppendMemoryCopy(imm, x, dx, N * sizeof(*x), NULL, 0, NULL));

	for (i = 0; i < N; i++) {
		want = (int64_t)expect[i] * expect[i];
		if ((x[i] != expect[i] || y[i] != want) && bad++ < 5)
			fprintf(stderr, "x[%u] = %d (want %d), y = %lld (want %lld)\n", i, x[i],
				expect[i], (long long)y[i], (long long)want);
	}
	printf("multi: %u elements, %d launches on an immediate list: %s\n", N, 2 * ROUNDS + 1,
	       bad ? "FAILED" : "ok");
	r = bad ? 1 : 0;

	for (i = 0; i < 2 * ROUNDS + 2; i++)
		zeEventDestroy(ev[i]);
	zeEventPoolDestroy(pool);
	zeCommandListDestroy(imm);
	zeMemFree(ctx, x);
	zeMemFree(ctx, dx);
	zeMemFree(ctx, y);
	zeKernelDestroy(kscale);
	zeKernelDestroy(kadd);
	zeKernelDestroy(ksq);
	zeModuleDestroy(mod);
	zeContextDestroy(ctx);
	return r;
}
