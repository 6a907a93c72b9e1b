/* SPDX-License-Identifier: MIT */
/*
 * tests/cuda_agent/ptx_app.c - an application linked with -lcuda (the fake
 * driver of this folder) that loads a PTX module of two kernels with
 * cuModuleLoadData and launches each: target_k N times, other_k once.
 * Usage: ptx_app [N]. Prints "app: N+1 launches ok".
 * ptx_app N multi: the same in the primary context and in a context of
 * its own (cuCtxCreate), which it destroys before exiting; prints
 * "app: 2N+2 launches ok in 2 contexts".
 * ptx_app N streams: target_k N times alternating on streams 0x11 and
 * 0x22 (argument 42), once more with its argument in an `extra` buffer,
 * once into stream 0x77 (the fake driver says it captures a graph), then
 * other_k; prints "app: N+3 launches ok".
 * ptx_app N reload: target_k once, the module unloaded, another module whose
 * target_k differs (register %second) loaded and its target_k launched once;
 * prints "app: reload ok". Under GBPF_FAKE_REUSE_MODULE=1 the fake driver
 * gives the second module the first one's handle.
 * ptx_app N churn R: R rounds, each a context of its own created, the
 * module loaded and launched there as above, the context synchronised (a
 * sync point: the agent snapshots its maps soon), a few milliseconds for
 * the snapshot to overlap, the context destroyed; prints "app: K launches
 * ok in R contexts".
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef int CUresult;
CUresult cuInit(unsigned f);
CUresult cuDeviceGet(int *d, int i);
CUresult cuDevicePrimaryCtxRetain(void **c, int d);
CUresult cuCtxSetCurrent(void *c);
CUresult cuCtxCreate_v2(void **c, unsigned flags, int dev);
CUresult cuCtxDestroy_v2(void *c);
CUresult cuCtxSynchronize(void);
CUresult cuModuleLoadData(void **m, const void *img);
CUresult cuModuleUnload(void *m);
CUresult cuModuleGetFunction(void **f, void *m, const char *name);
CUresult cuFuncSetAttribute(void *f, int a, int v);
CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
			unsigned bz, unsigned sh, void *st, void **p, void **e);

static const char module_ptx[] =
	".version 7.8\n.target sm_90\n.address_size 64\n\n"
	".visible .entry target_k(\n\t.param .u64 target_k_param_0\n)\n{\n\t.reg .b64 %rd<2>;\n"
	"\tld.param.u64 %rd1, [target_k_param_0];\n\tret;\n}\n\n"
	".visible .entry other_k(\n\t.param .u64 other_k_param_0\n)\n{\n\tret;\n}\n";

static const char second_ptx[] =
	".version 7.8\n.target sm_90\n.address_size 64\n\n"
	".visible .entry target_k(\n\t.param .u64 target_k_param_0\n)\n{\n\t.reg .b64 %second<2>;\n"
	"\tld.param.u64 %second1, [target_k_param_0];\n\tret;\n}\n";

/* target_k of one module, then of another loaded after the first was unloaded. */
static int reload(void)
{
	void *mod, *tk;
	uint64_t arg = 0;
	void *params[] = {&arg};

	if (cuModuleLoadData(&mod, module_ptx) || cuModuleGetFunction(&tk, mod, "target_k") ||
	    cuLaunchKernel(tk, 4, 1, 1, 32, 1, 1, 0, NULL, params, NULL) || cuModuleUnload(mod))
		return -1;
	if (cuModuleLoadData(&mod, second_ptx) || cuModuleGetFunction(&tk, mod, "target_k") ||
	    cuLaunchKernel(tk, 4, 1, 1, 32, 1, 1, 0, NULL, params, NULL))
		return -1;
	return 0;
}

/* Load the module in the current context and launch target_k n times, other_k once. */
static int launches(int n)
{
	void *mod, *tk, *ok_fn;
	uint64_t arg = 0;
	void *params[] = {&arg};
	int ok = 0;

	if (cuModuleLoadData(&mod, module_ptx) || cuModuleGetFunction(&tk, mod, "target_k") ||
	    cuModuleGetFunction(&ok_fn, mod, "other_k")) {
		fprintf(stderr, "app: module setup failed\n");
		return -1;
	}
	/* An attribute the replacement must receive too (max dynamic shared memory). */
	cuFuncSetAttribute(tk, 8, 4096);
	for (int i = 0; i < n; i++)
		ok += !cuLaunchKernel(tk, 4, 1, 1, 32, 1, 1, 0, NULL, params, NULL);
	ok += !cuLaunchKernel(ok_fn, 2, 1, 1, 64, 1, 1, 0, NULL, params, NULL);
	return ok;
}

/* The streams mode: launch ids must be per launch, whatever the stream or parameter form. */
static int stream_launches(int n)
{
	void *mod, *tk, *ok_fn;
	uint64_t arg = 42;
	size_t size = sizeof(arg);
	void *params[] = {&arg};
	void *extra[] = {(void *)1 /* BUFFER_POINTER */, &arg, (void *)2 /* BUFFER_SIZE */, &size,
			 (void *)0 /* END */};
	int ok = 0;

	if (cuModuleLoadData(&mod, module_ptx) || cuModuleGetFunction(&tk, mod, "target_k") ||
	    cuModuleGetFunction(&ok_fn, mod, "other_k"))
		return -1;
	for (int i = 0; i < n; i++)
		ok += !cuLaunchKernel(tk, 4, 1, 1, 32, 1, 1, 0, (void *)(uintptr_t)(i % 2 ? 0x22 : 0x11), params,
				      NULL);
	ok += !cuLaunchKernel(tk, 4, 1, 1, 32, 1, 1, 0, (void *)0x22, NULL, extra);
	ok += !cuLaunchKernel(tk, 4, 1, 1, 32, 1, 1, 0, (void *)0x77, params, NULL);
	ok += !cuLaunchKernel(ok_fn, 2, 1, 1, 64, 1, 1, 0, NULL, params, NULL);
	return ok;
}

/* The churn mode: contexts made, used, synchronised and destroyed while the agent snapshots maps. */
static int churn(int n, int rounds, int dev, void *primary)
{
	int ok = 0;

	for (int r = 0; r < rounds; r++) {
		void *own;

		if (cuCtxCreate_v2(&own, 0, dev))
			return -1;
		ok += launches(n);
		if (cuCtxSynchronize())
			return -1;
		usleep(2000 + (useconds_t)(r % 4) * 1500);
		if (cuCtxSetCurrent(primary) || cuCtxDestroy_v2(own))
			return -1;
	}
	return ok;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 3, multi = argc > 2 && !strcmp(argv[2], "multi"), dev, ok;
	void *ctx, *own;

	if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) || cuCtxSetCurrent(ctx)) {
		fprintf(stderr, "app: driver setup failed\n");
		return 1;
	}
	if (argc > 2 && !strcmp(argv[2], "reload")) {
		ok = reload();
		printf("app: reload %s\n", ok ? "failed" : "ok");
		return ok ? 2 : 0;
	}
	if (argc > 2 && !strcmp(argv[2], "churn")) {
		int rounds = argc > 3 ? atoi(argv[3]) : 10;

		ok = churn(n, rounds, dev, ctx);
		printf("app: %d launches ok in %d contexts\n", ok, rounds);
		return ok == rounds * (n + 1) ? 0 : 2;
	}
	if (argc > 2 && !strcmp(argv[2], "streams")) {
		ok = stream_launches(n);
		printf("app: %d launches ok\n", ok);
		return ok == n + 3 ? 0 : 2;
	}
	ok = launches(n);
	if (!multi) {
		printf("app: %d launches ok\n", ok);
		return ok == n + 1 ? 0 : 2;
	}
	if (cuCtxCreate_v2(&own, 0, dev)) {
		fprintf(stderr, "app: cuCtxCreate failed\n");
		return 1;
	}
	ok += launches(n);
	/* Back to the primary context, then the own one goes (its counts must stay). */
	if (cuCtxSetCurrent(ctx) || cuCtxDestroy_v2(own)) {
		fprintf(stderr, "app: cuCtxDestroy failed\n");
		return 1;
	}
	printf("app: %d launches ok in 2 contexts\n", ok);
	return ok == 2 * n + 2 ? 0 : 2;
}
