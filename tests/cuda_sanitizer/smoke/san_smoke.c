/* SPDX-License-Identifier: MIT */
/*
 * tests/cuda_sanitizer/smoke/san_smoke.c - device diagnostic of the
 * Compute Sanitizer patching path without gbpf (built on the GPU machine
 * against NVIDIA's headers by smoke.sh). Usage:
 *   san_smoke PATCH(.ptx|.cubin|.fatbin) APP.cubin MODE
 * MODE load: only sanitizerAddPatches; cnt: the patch counts exits in
 * record word 3; glob: gbpf patch module with the placeholder globals set
 * to a counter; imm: gbpf patch module whose probe has the counter address
 * as an immediate (@COUNTER@ replaced, then ptxas). Prints one line.
 * SMOKE_ORDER=init_first subscribes after cuInit, ctx_first after cuInit
 * and the primary context (what gbpf's agent does before main).
 */
#include <cuda.h>
#include <dlfcn.h>
#include <sanitizer.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef SMOKE_LATE_CUDA
/* libcuda loaded only after sanitizerSubscribe, as in a process gbpf's agent subscribes in. */
static void *cuda_h;
#define CUF(name, sym) ((__typeof__(&name))dlsym(cuda_h, sym))
#define cuInit(f) CUF(cuInit, "cuInit")(f)
#define cuDeviceGet(d, o) CUF(cuDeviceGet, "cuDeviceGet")(d, o)
#undef cuDevicePrimaryCtxRetain
#define cuDevicePrimaryCtxRetain(c, d) CUF(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain")(c, d)
#define cuCtxSetCurrent(c) CUF(cuCtxSetCurrent, "cuCtxSetCurrent")(c)
#undef cuMemAlloc
#define cuMemAlloc(p, n) CUF(cuMemAlloc_v2, "cuMemAlloc_v2")(p, n)
#undef cuMemsetD8
#define cuMemsetD8(p, v, n) CUF(cuMemsetD8_v2, "cuMemsetD8_v2")(p, v, n)
#undef cuMemcpyHtoD
#define cuMemcpyHtoD(d, s, n) CUF(cuMemcpyHtoD_v2, "cuMemcpyHtoD_v2")(d, s, n)
#undef cuMemcpyDtoH
#define cuMemcpyDtoH(d, s, n) CUF(cuMemcpyDtoH_v2, "cuMemcpyDtoH_v2")(d, s, n)
#define cuModuleLoad(m, f) CUF(cuModuleLoad, "cuModuleLoad")(m, f)
#define cuModuleGetFunction(f, m, n) CUF(cuModuleGetFunction, "cuModuleGetFunction")(f, m, n)
#define cuLaunchKernel(f, a, b, c, d, e, g, h, i, j, k) CUF(cuLaunchKernel, "cuLaunchKernel")(f, a, b, c, d, e, g, h, i, j, k)
#undef cuCtxSynchronize
#define cuCtxSynchronize() CUF(cuCtxSynchronize, "cuCtxSynchronize")()
#define SMOKE_NO_TIMING 1
#endif

static void cb(void *u, Sanitizer_CallbackDomain d, Sanitizer_CallbackId id, const void *data)
{
	(void)u; (void)d; (void)id; (void)data;
}

static void smoke_subscribe(Sanitizer_SubscriberHandle *sub)
{
	const char *s = "";
	SanitizerResult r = sanitizerSubscribe(sub, cb, NULL);

	if (r) {
		sanitizerGetResultString(r, &s);
		/* Another subscriber (gbpf's agent) owns the callbacks: patching still works through it. */
		printf("# subscribe %d %s (continuing)\n", r, s);
	} else {
		sanitizerEnableDomain(1, *sub, SANITIZER_CB_DOMAIN_RESOURCE);
	}
}

static char *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	char *b;
	long sz;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	sz = ftell(f);
	fseek(f, 0, SEEK_SET);
	b = calloc(1, (size_t)sz + 1);
	if (b && fread(b, 1, (size_t)sz, f) != (size_t)sz) {
		free(b);
		b = NULL;
	}
	fclose(f);
	*n = (size_t)sz;
	return b;
}

static char *ptxas(const char *text, size_t *n)
{
	FILE *f = fopen("/tmp/san_smoke.ptx", "w");

	fputs(text, f);
	fclose(f);
	if (system("/usr/local/cuda/bin/ptxas --compile-as-tools-patch -arch=sm_90 /tmp/san_smoke.ptx -o /tmp/san_smoke.cubin"))
		return NULL;
	return slurp("/tmp/san_smoke.cubin", n);
}

int main(int argc, char **argv)
{
	Sanitizer_SubscriberHandle sub;
	CUdevice dev;
	CUcontext ctx;
	CUmodule mod;
	CUfunction fn;
	CUdeviceptr rec, data;
	uint64_t host[4] = {7, 0, 0, 0}, out[4];
	char *img;
	size_t n = 0;
	SanitizerResult r;
	const char *s = "";
	const char *mode = argc > 3 ? argv[3] : "load";
	const char *order = getenv("SMOKE_ORDER");

	if (argc < 3)
		return 2;
	if (!order || !*order)
		smoke_subscribe(&sub);
#ifdef SMOKE_LATE_CUDA
	cuda_h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
	if (!cuda_h)
		return 4;
#endif
	cuInit(0);
	if (order && !strcmp(order, "init_first"))
		smoke_subscribe(&sub);
	cuDeviceGet(&dev, 0);
	cuDevicePrimaryCtxRetain(&ctx, dev);
	cuCtxSetCurrent(ctx);
	if (order && !strcmp(order, "ctx_first"))
		smoke_subscribe(&sub);
	printf("[order %s] ", order && *order ? order : "subscribe_first");
	if (cuMemAlloc(&rec, 64) || cuMemAlloc(&data, 65536 * 4) || cuMemsetD8(data, 0, 65536 * 4))
		return 3;
	img = slurp(argv[1], &n);
	if (img && strstr(argv[1], ".ptx")) {
		char *t = img, *at = strstr(t, "@COUNTER@"), buf[32];

		if (at) {
			/* The counter lives in rec+32.. (the record is words 0..3). */
			char *u = malloc(strlen(t) + 32);

			snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)(rec + 32));
			memcpy(u, t, (size_t)(at - t));
			strcpy(u + (at - t), buf);
			strcat(u, at + 9);
			t = u;
		}
		img = ptxas(t, &n);
	}
	if (!img) {
		printf("%s: no image\n", argv[1]);
		return 1;
	}
	if (!strcmp(mode, "glob")) {
		uint64_t magic = 0x67627066f0000d00ull, pid = 0x67627066f1000effull, v, c = rec + 32;

		for (size_t o = 0; o + 8 <= n; o++) {
			memcpy(&v, img + o, 8);
			if (v == magic)
				memcpy(img + o, &c, 8);
			if (v == pid)
				memset(img + o, 0, 8);
		}
	}
	r = sanitizerAddPatches(img, ctx);
	sanitizerGetResultString(r, &s);
	printf("%s: AddPatches(%zu bytes, ctx) = %d %s", argv[1], n, r, s);
	r = sanitizerAddPatches(img, NULL);
	sanitizerGetResultString(r, &s);
	printf("; AddPatches(NULL ctx) = %d %s", r, s);
	if (!strcmp(mode, "load")) {
		printf("\n");
		return 0;
	}
	if (cuModuleLoad(&mod, argv[2]) || cuModuleGetFunction(&fn, mod, "k")) {
		printf("; app load failed\n");
		return 1;
	}
	r = sanitizerPatchInstructions(SANITIZER_INSTRUCTION_BLOCK_EXIT, mod, "__gbpf_san_exit");
	sanitizerGetResultString(r, &s);
	printf("; PatchInstructions %d %s", r, s);
	r = sanitizerPatchModule(mod);
	sanitizerGetResultString(r, &s);
	printf("; PatchModule %d %s", r, s);
	host[3] = 1; /* probes mask */
	cuMemcpyHtoD(rec, host, 32);
	cuMemsetD8(rec + 32, 0, 32);
	r = sanitizerSetCallbackData(fn, (void *)(uintptr_t)rec);
	printf("; SetCallbackData %d", r);
	{
		void *args[] = {&data};
		CUresult cr = cuLaunchKernel(fn, 256, 1, 1, 256, 1, 1, 0, NULL, args, NULL);
		CUresult cs = cuCtxSynchronize();

		printf("; launch %d sync %d", cr, cs);
	}
	cuMemcpyDtoH(out, rec, 32);
	{
		uint64_t cnt[4] = {0};

		cuMemcpyDtoH(cnt, rec + 32, 32);
		printf("; record.probes %llu counter %llu kernel_id_sum %llu (want 65536, %llu)\n",
		       (unsigned long long)out[3], (unsigned long long)cnt[0], (unsigned long long)cnt[1],
		       7ull * 65536);
	}
#ifndef SMOKE_NO_TIMING
	{
		/* a second launch, timed roughly */
		float ms = 0;
		CUevent a, b;
		void *args[] = {&data};

		cuEventCreate(&a, 0);
		cuEventCreate(&b, 0);
		cuEventRecord(a, NULL);
		for (int i = 0; i < 10; i++)
			cuLaunchKernel(fn, 256, 1, 1, 256, 1, 1, 0, NULL, args, NULL);
		cuEventRecord(b, NULL);
		cuEventSynchronize(b);
		cuEventElapsedTime(&ms, a, b);
		printf("# 10 patched launches: %.3f ms\n", ms);
	}
#endif
	return 0;
}
