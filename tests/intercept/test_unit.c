/* SPDX-License-Identifier: MIT */
/*
 * tests/intercept/test_unit.c - the interception layer in-process (built
 * with ASan/UBSan): a "real driver" made of functions of this file is
 * wrapped through gbpf_cu_wrap_proc exactly as a cuGetProcAddress answer.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "plugins/cuda/intercept/intercept_internal.h"
#include "tests/tap.h"

#include "tests/intercept/unit_real.h"

/* ---- hooks ---- */

static int mode_replace, mode_fail, pre_calls, post_calls, call_pre_calls;
static struct gbpf_cu_launch last_post;
static uint64_t last_alloc;
static PFN_cuMemAlloc_v3020 wrapped_alloc;

static int on_pre(void *ctx, struct gbpf_cu_launch *l)
{
	CUdeviceptr d;

	pre_calls++;
	/* A driver call made from a hook is not hooked again (no call_pre below). */
	if (wrapped_alloc)
		wrapped_alloc(&d, 16);
	l->grid[0] = 9999; /* must have no effect */
	if (mode_replace)
		l->replacement = (CUfunction)(uintptr_t)(mode_replace == 2 ? 0xdead : 0xbeef);
	return mode_fail ? -EIO : 0;
}

static void on_post(void *ctx, const struct gbpf_cu_launch *l)
{
	post_calls++;
	last_post = *l;
}

static void on_call_pre(void *ctx, struct gbpf_cu_call_event *ev)
{
	call_pre_calls++;
}

static void on_call_post(void *ctx, const struct gbpf_cu_call_event *ev)
{
	if (ev->kind == GBPF_CU_CALL_MALLOC)
		last_alloc = ev->dst;
}

static const struct gbpf_cu_hooks hooks = {
	.sz = sizeof(hooks), .launch_pre = on_pre, .launch_post = on_post,
	.call_pre = on_call_pre, .call_post = on_call_post,
};

static PFN_cuGetProcAddress_v12000 gpa;

static void *get(const char *name, int version, int flags)
{
	void *p = NULL;

	gpa(name, &p, version, (cuuint64_t)flags, NULL);
	return p;
}

static void *launcher(void *arg)
{
	PFN_cuLaunchKernel_v4000 l = arg;

	for (int i = 0; i < 1000; i++)
		l((CUfunction)(uintptr_t)0x10, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL);
	return NULL;
}

static void test_classify(void)
{
	unsigned char elf[64] = {0x7f, 'E', 'L', 'F', 2};
	uint64_t shoff = 1000, fat[4] = {0};
	uint16_t shentsize = 64, shnum = 3;
	struct { uint32_t m, v; const void *f, *n; } wrapper = {GBPF_CU_MAGIC_WRAPPER, 1, fat, 0};
	size_t sz;

	memcpy(elf + 0x28, &shoff, 8);
	memcpy(elf + 0x3a, &shentsize, 2);
	memcpy(elf + 0x3c, &shnum, 2);
	/* Classify first: tap_ok's arguments are evaluated in no fixed order. */
	enum gbpf_cu_image_kind kind = gbpf_cu_image_classify(elf, &sz);

	tap_ok(kind == GBPF_CU_IMAGE_CUBIN && sz == 1192,
	       "classify: ELF cubin, size from section headers (%zu)", sz);
	fat[0] = GBPF_CU_MAGIC_FATBIN | (1ull << 32) | (16ull << 48);
	fat[1] = 8;
	tap_ok(gbpf_cu_image_classify(fat, &sz) == GBPF_CU_IMAGE_FATBIN && sz == 24,
	       "classify: fatbin container, size header + payload (%zu)", sz);
	tap_ok(gbpf_cu_image_classify(&wrapper, &sz) == GBPF_CU_IMAGE_WRAPPER && sz == 24,
	       "classify: fatbin wrapper");
	tap_ok(gbpf_cu_image_classify(".version 8.0\n", &sz) == GBPF_CU_IMAGE_PTX && sz == 14,
	       "classify: PTX text, size with NUL");
	tap_ok(gbpf_cu_image_classify("\x01\x02\x03\x04", &sz) == GBPF_CU_IMAGE_UNKNOWN &&
		       gbpf_cu_image_classify(NULL, &sz) == GBPF_CU_IMAGE_UNKNOWN && sz == 0,
	       "classify: binary garbage and NULL are unknown");
}

int main(void)
{
	PFN_cuLaunchKernel_v4000 l0, l0b, l2;
	PFN_cuLibraryGetKernel_v12000 getk;
	PFN_cuFuncSetAttribute_v9000 setattr;
	PFN_cuFuncSetCacheConfig_v3000 setcache;
	PFN_cuGraphAddKernelNode_v12000 addnode;
	CUDA_KERNEL_NODE_PARAMS_v2 np = {0};
	CUgraphNode node;
	CUkernel k;
	CUfunction f = (CUfunction)(uintptr_t)0x10;
	struct gbpf_cu_handle_info info;
	pthread_t th[4];
	char why[256];
	void *p;

	test_classify();

	gpa = gbpf_cu_wrap_proc("cuGetProcAddress", 12000, 0, (void *)real_gpa);
	tap_ok(gpa && gpa != real_gpa, "cuGetProcAddress answer is wrapped");
	l0 = get("cuLaunchKernel", 4000, 0);
	l0b = get("cuLaunchKernel", 4000, 0);
	l2 = get("cuLaunchKernel", 7000, 2);
	tap_ok(l0 && l0 != real_launch && l0 == l0b, "cuLaunchKernel wrapped, same wrapper twice");
	tap_ok(l2 && l2 != l0 && l2 != real_launch_ptsz, "ptsz variant (flags 2) has its own wrapper");
	p = NULL;
	gpa("cuMemAlloc", &p, 2000, 0, NULL);
	tap_ok(p == (void *)real_alloc, "cuMemAlloc v2000 (unknown ABI) handed out unwrapped");
	tap_ok(get("cuGetProcAddress", 12000, 0) == (void *)gpa,
	       "asking the wrapper for cuGetProcAddress returns the wrapper");

	/* No hooks: plain forwarding. */
	l0(f, 2, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL);
	tap_ok(got_launch.calls == 1 && got_launch.f == f && got_launch.gx == 2,
	       "without hooks the launch is forwarded as is");

	gbpf_cu_intercept_set_hooks(&hooks);
	getk = get("cuLibraryGetKernel", 12000, 0);
	getk(&k, NULL, "_Z3fooi");
	tap_ok(gbpf_cu_handle_lookup(k, &info) == 0 && info.name && !strcmp(info.name, "_Z3fooi") &&
		       info.kind == GBPF_CU_HANDLE_KERNEL,
	       "kernel handle recorded with its mangled name");

	wrapped_alloc = get("cuMemAlloc", 3020, 0);
	l0((CUfunction)k, 4, 1, 1, 256, 1, 1, 0, NULL, NULL, NULL);
	tap_ok(pre_calls == 1 && post_calls == 1 && last_post.name &&
		       !strcmp(last_post.name, "_Z3fooi") && last_post.grid[0] == 4 &&
		       last_post.block[0] == 256 && last_post.ptds == 0 && last_post.launch_id >= 1,
	       "launch hooks see name, grid, block");
	tap_ok(got_launch.gx == 4, "a hook changing grid has no effect on the launch");
	tap_ok(call_pre_calls == 0, "driver calls made inside a hook are not hooked again");

	mode_replace = 1;
	l0((CUfunction)k, 4, 1, 1, 256, 1, 1, 0, NULL, NULL, NULL);
	tap_ok(got_launch.f == (CUfunction)(uintptr_t)0xbeef && last_post.replaced == 1,
	       "replacement: the driver receives the replacement");
	mode_fail = 1;
	l0((CUfunction)k, 4, 1, 1, 256, 1, 1, 0, NULL, NULL, NULL);
	tap_ok(got_launch.f == (CUfunction)k && last_post.replaced == 0 && last_post.result == 0,
	       "failing hook: the original function is launched");
	mode_fail = 0;
	mode_replace = 2;
	got_launch.calls = 0;
	l0((CUfunction)k, 4, 1, 1, 256, 1, 1, 0, NULL, NULL, NULL);
	tap_ok(got_launch.f == (CUfunction)k && got_launch.calls == 1 &&
		       last_post.replacement_result == 701 && last_post.result == 0,
	       "refused replacement: original launched, replacement error reported");

	/* Graph node with only kern set: the copy names func, the app's struct is untouched. */
	mode_replace = 1;
	addnode = get("cuGraphAddKernelNode", 12000, 0);
	np.kern = k;
	np.gridDimX = 3;
	addnode(&node, NULL, NULL, 0, &np);
	tap_ok(got_node.func == (CUfunction)(uintptr_t)0xbeef && got_node.kern == NULL &&
		       got_node.gridDimX == 3 && np.kern == k && np.func == NULL &&
		       last_post.node == (CUgraphNode)(uintptr_t)0x77 && last_post.name &&
		       !strcmp(last_post.name, "_Z3fooi"),
	       "graph kernel node: replacement in a copy (func set, kern cleared), app's params intact");
	mode_replace = 0;

	/* Attributes: recorded, latest value wins, replayed in order. */
	setattr = get("cuFuncSetAttribute", 9000, 0);
	setcache = get("cuFuncSetCacheConfig", 3000, 0);
	setattr(f, 8, 1000);
	setcache(f, 2);
	setattr(f, 8, 65536);
	n_attr_calls = 0;
	tap_ok(gbpf_cu_attr_replay(f, (CUfunction)(uintptr_t)0xbeef, why, sizeof(why)) == 2 &&
		       n_attr_calls == 2 && attr_calls[0] == 8 && attr_values[0] == 65536 &&
		       attr_calls[1] == 1002,
	       "attribute replay: max dynamic shared memory (latest value) then cache config");
	tap_ok(gbpf_cu_attr_replay((CUfunction)(uintptr_t)0x999, f, why, sizeof(why)) == 0,
	       "attribute replay of a function without settings applies nothing");

	last_alloc = 0;
	{
		CUdeviceptr d = 0;

		wrapped_alloc(&d, 64);
		tap_ok(d == 0x1000 && last_alloc == 0x1000, "cuMemAlloc: call_post sees the address");
	}

	/* Concurrency: 4 threads x 1000 ptsz launches, ids unique and dense. */
	{
		uint64_t before = gbpf_cu_launch_count();

		post_calls = 0;
		gbpf_cu_intercept_set_hooks(NULL);
		for (int i = 0; i < 4; i++)
			pthread_create(&th[i], NULL, launcher, (void *)l2);
		for (int i = 0; i < 4; i++)
			pthread_join(th[i], NULL);
		tap_ok(got_launch_ptsz.calls == 4000 && gbpf_cu_launch_count() == before,
		       "4 threads x 1000 launches forwarded (no hooks, no ids used)");
	}
	return tap_done();
}
