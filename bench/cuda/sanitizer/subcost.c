/* SPDX-License-Identifier: MIT */
/*
 * bench/cuda/sanitizer/subcost.c - what a Compute Sanitizer subscription
 * costs the kernels of a process that no probe instruments, part by part,
 * without gbpf (docs/SANITIZER.md, "The cost of the subscription").
 *
 *   subcost MODE KERNELS.cubin PATCH.cubin
 *
 * MODE (everything before cuInit, as gbpf's plugin constructor does):
 *   none       no Sanitizer
 *   sub        sanitizerSubscribe only, no callback enabled
 *   unload     + the one callback gbpf needs (MODULE_UNLOAD_STARTING)
 *   res        + the whole resource domain (what gbpf did until session 5)
 *   launch     + the launch domain
 *   all        + every domain
 *   addpatch   res + sanitizerAddPatches of a patch module in the context
 *   patchmod   addpatch + the measured module patched at block exits, its
 *              kernels given no callback data: every thread runs the
 *              Sanitizer's trampoline and a callback that returns at once
 *   unsub      res, then sanitizerUnsubscribe once the context exists; then
 *              measured; subscribed again, measured ("resub"); then the
 *              module patched at block exits and the exits counted: does a
 *              context made while subscribed stay patchable after an
 *              unsubscribe?
 * Prints "subcost MODE sync_us=.. b2b_us=.. launch_ns=.. rtt_us=.. tiny_gpu_us=.."
 *   sync_us      vector add of 2^24 floats, events around each launch, median
 *                of 200 (bench/cuda/apps/vecadd_bench.cu's figure)
 *   b2b_us       the same kernel, 200 launches between two events, mean
 *   launch_ns    host time of one cuLaunchKernel of an empty kernel (20000 queued)
 *   rtt_us       empty kernel launch + cuStreamSynchronize, median of 2000
 *   tiny_gpu_us  empty kernels, 20000 between two events, mean
 * Built by bench/cuda/sanitizer/run.sh (gcc, cuda.h; the Sanitizer library
 * is dlopen'ed).
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int san_res;
typedef void *san_sub;
typedef void (*san_cb)(void *, int, uint32_t, const void *);

static struct {
	san_res (*subscribe)(san_sub *, san_cb, void *);
	san_res (*unsubscribe)(san_sub);
	san_res (*enable_domain)(uint32_t, san_sub, int);
	san_res (*enable_all)(uint32_t, san_sub);
	san_res (*enable_cb)(uint32_t, san_sub, int, uint32_t);
	san_res (*add_patches)(const void *, CUcontext);
	san_res (*patch_instr)(int, CUmodule, const char *);
	san_res (*patch_module)(CUmodule);
	san_res (*set_cb_data)(CUfunction, const void *);
} san;
static san_sub subcost_sub;

static void subcost_cb(void *u, int d, uint32_t id, const void *data)
{
	(void)u;
	(void)d;
	(void)id;
	(void)data;
}

static int load_san(void)
{
	const char *paths[] = {getenv("GBPF_SANITIZER_LIB"), "/usr/local/cuda/compute-sanitizer/libsanitizer-public.so",
			       "libsanitizer-public.so"};
	void *h = NULL;

	for (size_t i = 0; i < 3 && !h; i++)
		if (paths[i])
			h = dlopen(paths[i], RTLD_NOW | RTLD_GLOBAL);
	if (!h)
		return -1;
	*(void **)&san.subscribe = dlsym(h, "sanitizerSubscribe");
	*(void **)&san.unsubscribe = dlsym(h, "sanitizerUnsubscribe");
	*(void **)&san.enable_domain = dlsym(h, "sanitizerEnableDomain");
	*(void **)&san.enable_all = dlsym(h, "sanitizerEnableAllDomains");
	*(void **)&san.enable_cb = dlsym(h, "sanitizerEnableCallback");
	*(void **)&san.add_patches = dlsym(h, "sanitizerAddPatches");
	*(void **)&san.patch_instr = dlsym(h, "sanitizerPatchInstructions");
	*(void **)&san.patch_module = dlsym(h, "sanitizerPatchModule");
	*(void **)&san.set_cb_data = dlsym(h, "sanitizerSetCallbackData");
	return san.subscribe && san.unsubscribe && san.enable_domain && san.enable_all && san.enable_cb &&
			       san.add_patches && san.patch_instr && san.patch_module && san.set_cb_data
		       ? 0
		       : -1;
}

/* Subscribe with the callbacks MODE enables; 0 or the failing result. */
static int subscribe(const char *mode)
{
	san_res r = san.subscribe(&subcost_sub, subcost_cb, NULL);

	if (r || !strcmp(mode, "sub"))
		return r;
	if (!strcmp(mode, "unload"))
		return san.enable_cb(1, subcost_sub, 3 /* RESOURCE */, 10 /* MODULE_UNLOAD_STARTING */);
	if (!strcmp(mode, "all"))
		return san.enable_all(1, subcost_sub);
	r = san.enable_domain(1, subcost_sub, 3 /* RESOURCE */);
	if (!r && !strcmp(mode, "launch"))
		r = san.enable_domain(1, subcost_sub, 5 /* LAUNCH */);
	return r;
}

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int cmp_f(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;

	return x < y ? -1 : x > y;
}

static void *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *b = NULL;
	long n;

	if (!f)
		return NULL;
	if (!fseek(f, 0, SEEK_END) && (n = ftell(f)) > 0 && n < (64l << 20) && !fseek(f, 0, SEEK_SET) &&
	    (b = malloc((size_t)n)) && fread(b, 1, (size_t)n, f) != (size_t)n) {
		free(b);
		b = NULL;
	}
	fclose(f);
	return b;
}

#define CK(x)                                                                             \
	do {                                                                              \
		CUresult r_ = (x);                                                        \
		if (r_ != CUDA_SUCCESS) {                                                 \
			fprintf(stderr, "subcost: %s:%d: %s: CUresult %d\n", __FILE__, __LINE__, #x, \
				(int)r_);                                                 \
			exit(2);                                                          \
		}                                                                         \
	} while (0)

struct measured {
	double sync_us, b2b_us, launch_ns, rtt_us, tiny_gpu_us;
};

static void measure(CUfunction vec, CUfunction empty, void **vargs, int n, struct measured *m)
{
	enum { SYNC = 200, B2B = 200, TINY = 20000, RTT = 2000 };
	static float t[RTT > SYNC ? RTT : SYNC];
	unsigned blocks = (unsigned)((n + 255) / 256);
	CUevent a, b;
	float ms;
	double t0;

	CK(cuEventCreate(&a, 0));
	CK(cuEventCreate(&b, 0));
	for (int i = 0; i < 20; i++)
		CK(cuLaunchKernel(vec, blocks, 1, 1, 256, 1, 1, 0, NULL, vargs, NULL));
	CK(cuCtxSynchronize());
	for (int i = 0; i < SYNC; i++) {
		CK(cuEventRecord(a, NULL));
		CK(cuLaunchKernel(vec, blocks, 1, 1, 256, 1, 1, 0, NULL, vargs, NULL));
		CK(cuEventRecord(b, NULL));
		CK(cuEventSynchronize(b));
		CK(cuEventElapsedTime(&t[i], a, b));
	}
	qsort(t, SYNC, sizeof(t[0]), cmp_f);
	m->sync_us = t[SYNC / 2] * 1000.0;
	CK(cuEventRecord(a, NULL));
	for (int i = 0; i < B2B; i++)
		CK(cuLaunchKernel(vec, blocks, 1, 1, 256, 1, 1, 0, NULL, vargs, NULL));
	CK(cuEventRecord(b, NULL));
	CK(cuEventSynchronize(b));
	CK(cuEventElapsedTime(&ms, a, b));
	m->b2b_us = ms * 1000.0 / B2B;
	CK(cuEventRecord(a, NULL));
	t0 = now_ns();
	for (int i = 0; i < TINY; i++)
		CK(cuLaunchKernel(empty, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL));
	m->launch_ns = (now_ns() - t0) / TINY;
	CK(cuEventRecord(b, NULL));
	CK(cuEventSynchronize(b));
	CK(cuEventElapsedTime(&ms, a, b));
	m->tiny_gpu_us = ms * 1000.0 / TINY;
	for (int i = 0; i < RTT; i++) {
		t0 = now_ns();
		CK(cuLaunchKernel(empty, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL));
		CK(cuStreamSynchronize(NULL));
		t[i] = (float)((now_ns() - t0) / 1000.0);
	}
	qsort(t, RTT, sizeof(t[0]), cmp_f);
	m->rtt_us = t[RTT / 2];
	CK(cuEventDestroy(a));
	CK(cuEventDestroy(b));
}

static void print_measured(const char *mode, const struct measured *m, const char *extra)
{
	printf("subcost %s sync_us=%.2f b2b_us=%.2f launch_ns=%.0f rtt_us=%.2f tiny_gpu_us=%.3f%s\n", mode,
	       m->sync_us, m->b2b_us, m->launch_ns, m->rtt_us, m->tiny_gpu_us, extra);
	fflush(stdout);
}

/* Patch @mod at block exits and count @fn's exits in a fresh record: the number counted. */
static long long patch_and_count(CUmodule mod, CUfunction fn, void **vargs, int n, char *why, size_t why_size)
{
	CUdeviceptr rec;
	unsigned long long cnt = 0;
	san_res r;

	if ((r = san.patch_instr(2 /* BLOCK_EXIT */, mod, "subcost_exit")) || (r = san.patch_module(mod))) {
		snprintf(why, why_size, "PatchInstructions/PatchModule %d", r);
		return -1;
	}
	CK(cuMemAlloc(&rec, 8));
	CK(cuMemsetD8(rec, 0, 8));
	if ((r = san.set_cb_data(fn, (const void *)(uintptr_t)rec))) {
		snprintf(why, why_size, "SetCallbackData %d", r);
		return -1;
	}
	CK(cuLaunchKernel(fn, (unsigned)((n + 255) / 256), 1, 1, 256, 1, 1, 0, NULL, vargs, NULL));
	CK(cuCtxSynchronize());
	CK(cuMemcpyDtoH(&cnt, rec, 8));
	snprintf(why, why_size, "ok");
	return (long long)cnt;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "none";
	int n = 1 << 24, sanitizer = strcmp(mode, "none") != 0;
	CUdevice dev;
	CUcontext ctx;
	CUmodule mod;
	CUfunction vec, empty;
	CUdeviceptr a, b, c;
	void *vargs[4] = {&a, &b, &c, &n};
	void *img, *patch;
	struct measured m;
	char extra[256] = "", why[128] = "";

	if (argc < 4) {
		fprintf(stderr, "usage: subcost MODE KERNELS.cubin PATCH.cubin\n");
		return 2;
	}
	img = slurp(argv[2]);
	patch = slurp(argv[3]);
	if (!img || !patch) {
		fprintf(stderr, "subcost: cannot read %s or %s\n", argv[2], argv[3]);
		return 2;
	}
	if (sanitizer) {
		int r;

		if (load_san()) {
			fprintf(stderr, "subcost: no libsanitizer-public.so (GBPF_SANITIZER_LIB)\n");
			return 2;
		}
		r = subscribe(!strcmp(mode, "addpatch") || !strcmp(mode, "patchmod") || !strcmp(mode, "unsub") ? "res"
														    : mode);
		if (r) {
			fprintf(stderr, "subcost: subscription (%s) failed: %d\n", mode, r);
			return 2;
		}
	}
	CK(cuInit(0));
	CK(cuDeviceGet(&dev, 0));
	CK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CK(cuCtxSetCurrent(ctx));
	CK(cuModuleLoadData(&mod, img));
	CK(cuModuleGetFunction(&vec, mod, "vec_add"));
	CK(cuModuleGetFunction(&empty, mod, "empty"));
	CK(cuMemAlloc(&a, (size_t)n * 4));
	CK(cuMemAlloc(&b, (size_t)n * 4));
	CK(cuMemAlloc(&c, (size_t)n * 4));
	CK(cuMemsetD32(a, 0x3f800000u, (size_t)n));
	CK(cuMemsetD32(b, 0x40000000u, (size_t)n));
	if (!strcmp(mode, "addpatch") || !strcmp(mode, "patchmod")) {
		san_res r = san.add_patches(patch, ctx);

		if (!r && !strcmp(mode, "patchmod")) {
			r = san.patch_instr(2 /* BLOCK_EXIT */, mod, "subcost_exit");
			if (!r)
				r = san.patch_module(mod);
		}
		snprintf(extra, sizeof(extra), " patch_result=%d", r);
	}
	if (!strcmp(mode, "unsub")) {
		CUmodule mod2;
		CUfunction vec2;
		long long cnt = -1, cnt2 = -1;
		char why2[128] = "";
		san_res r = san.unsubscribe(subcost_sub);

		/* A second copy of the module, loaded while no subscription exists. */
		CK(cuModuleLoadData(&mod2, img));
		CK(cuModuleGetFunction(&vec2, mod2, "vec_add"));
		snprintf(extra, sizeof(extra), " unsubscribe=%d", r);
		measure(vec, empty, vargs, n, &m);
		print_measured(mode, &m, extra);
		r = subscribe("res");
		snprintf(extra, sizeof(extra), " resubscribe=%d", r);
		measure(vec, empty, vargs, n, &m);
		print_measured("resub", &m, extra);
		if (!r && (r = san.add_patches(patch, ctx)))
			snprintf(why, sizeof(why), "AddPatches %d", r);
		if (!r) {
			cnt = patch_and_count(mod, vec, vargs, n, why, sizeof(why));
			cnt2 = patch_and_count(mod2, vec2, vargs, n, why2, sizeof(why2));
		}
		printf("subcost resub-patch: after unsubscribe + subscribe: module loaded while subscribed: %s, exits %lld; "
		       "module loaded while unsubscribed: %s, exits %lld (want %d each)\n",
		       why, cnt, why2, cnt2, n);
		return 0;
	}
	measure(vec, empty, vargs, n, &m);
	print_measured(mode, &m, extra);
	return 0;
}
