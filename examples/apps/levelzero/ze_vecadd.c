/* SPDX-License-Identifier: MIT */
/*
 * Level Zero vector add: c = a + b over N floats, on a regular command list
 * executed by a command queue with a fence. Checks its own result.
 *   ze_vecadd [--native] [MODULE.spv] [N]
 * --native declares the module as a native binary (a driver that does not
 * know the format answers ZE_RESULT_ERROR_INVALID_NATIVE_BINARY; the app
 * prints it and exits 4).
 */
#include "ze_app.h"

#ifndef ZE_APP_SPV_DIR
#define ZE_APP_SPV_DIR "."
#endif

int main(int argc, char **argv)
{
	const char *path = ZE_APP_SPV_DIR "/vecadd.spv";
	uint32_t n = 4096, group = 64, i, gx, gy, gz, bad = 0;
	int native = 0, a = 1;
	ze_driver_handle_t drv;
	ze_device_handle_t dev;
	ze_context_handle_t ctx;
	ze_context_desc_t cdesc = {.stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC};
	ze_command_queue_desc_t qdesc = {.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
					 .mode = ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS};
	ze_command_list_desc_t ldesc = {.stype = ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC};
	ze_fence_desc_t fdesc = {.stype = ZE_STRUCTURE_TYPE_FENCE_DESC};
	ze_device_mem_alloc_desc_t ddesc = {.stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC};
	ze_host_mem_alloc_desc_t hdesc = {.stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC};
	ze_command_queue_handle_t q;
	ze_command_list_handle_t list;
	ze_fence_handle_t fence;
	ze_module_handle_t mod;
	ze_kernel_handle_t k;
	ze_group_count_t count;
	ze_result_t r;
	float *ha, *hb, *hc, *dc;

	if (a < argc && !strcmp(argv[a], "--native")) {
		native = 1;
		a++;
	}
	if (a < argc)
		path = argv[a++];
	if (a < argc)
		n = (uint32_t)strtoul(argv[a++], NULL, 0);
	if (n == 0 || n > (1u << 24)) {
		fprintf(stderr, "N must be in 1..2^24\n");
		return 2;
	}
	ze_app_device(&drv, &dev);
	ZE_CHECK(zeContextCreate(drv, &cdesc, &ctx));
	r = ze_app_module(ctx, dev, path, native, &mod);
	if (r != ZE_RESULT_SUCCESS) {
		fprintf(stderr, "zeModuleCreate(%s, %s): 0x%x\n", path, native ? "native" : "SPIR-V",
			(unsigned)r);
		zeContextDestroy(ctx);
		return native ? 4 : 2;
	}
	k = ze_app_kernel(mod, "vecadd");
	ZE_CHECK(zeKernelSuggestGroupSize(k, n, 1, 1, &gx, &gy, &gz));
	if (gx > group || n % gx)
		gx = 1;
	group = gx;
	ZE_CHECK(zeKernelSetGroupSize(k, group, 1, 1));

	ZE_CHECK(zeMemAllocShared(ctx, &ddesc, &hdesc, n * sizeof(float), 64, dev, (void **)&ha));
	ZE_CHECK(zeMemAllocShared(ctx, &ddesc, &hdesc, n * sizeof(float), 64, dev, (void **)&hb));
	ZE_CHECK(zeMemAllocHost(ctx, &hdesc, n * sizeof(float), 64, (void **)&hc));
	ZE_CHECK(zeMemAllocDevice(ctx, &ddesc, n * sizeof(float), 64, dev, (void **)&dc));
	for (i = 0; i < n; i++) {
		ha[i] = (float)i;
		hb[i] = (float)(2 * i + 1);
		hc[i] = -1.0f;
	}
	ZE_CHECK(zeKernelSetArgumentValue(k, 0, sizeof(ha), &ha));
	ZE_CHECK(zeKernelSetArgumentValue(k, 1, sizeof(hb), &hb));
	ZE_CHECK(zeKernelSetArgumentValue(k, 2, sizeof(dc), &dc));
	ZE_CHECK(zeKernelSetArgumentValue(k, 3, sizeof(n), &n));

	ZE_CHECK(zeCommandQueueCreate(ctx, dev, &qdesc, &q));
	ZE_CHECK(zeCommandListCreate(ctx, dev, &ldesc, &list));
	count.groupCountX = n / group;
	count.groupCountY = 1;
	count.groupCountZ = 1;
	ZE_CHECK(zeCommandListAppendLaunchKernel(list, k, &count, NULL, 0, NULL));
	ZE_CHECK(zeCommandListAppendBarrier(list, NULL, 0, NULL));
	ZE_CHECK(zeCommandListAppendMemoryCopy(list, hc, dc, n * sizeof(float), NULL, 0, NULL));
	ZE_CHECK(zeCommandListClose(list));
	ZE_CHECK(zeFenceCreate(q, &fdesc, &fence));
	ZE_CHECK(zeCommandQueueExecuteCommandLists(q, 1, &list, fence));
	ZE_CHECK(zeFenceHostSynchronize(fence, UINT64_MAX));

	for (i = 0; i < n; i++)
		if (hc[i] != (float)(3 * i + 1) && bad++ < 5)
			fprintf(stderr, "c[%u] = %g, expected %u\n", i, hc[i], 3 * i + 1);
	printf("vecadd: %u elements, group size %u: %s\n", n, group, bad ? "FAILED" : "ok");

	zeFenceDestroy(fence);
	zeCommandListDestroy(list);
	zeCommandQueueDestroy(q);
	zeMemFree(ctx, ha);
	zeMemFree(ctx, hb);
	zeMemFree(ctx, hc);
	zeMemFree(ctx, dc);
	zeKernelDestroy(k);
	zeModuleDestroy(mod);
	zeContextDestroy(ctx);
	return bad ? 1 : 0;
}
