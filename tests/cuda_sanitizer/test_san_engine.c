/* SPDX-License-Identifier: MIT */
/*
 * tests/cuda_sanitizer/test_san_engine.c - what the Compute Sanitizer
 * engine binds for a launch, without a GPU: a fake driver (in this program,
 * handed to the interception layer as the real cuGetProcAddress) whose
 * contexts sit on devices 3 and 1, the stand-in libsanitizer-public.so
 * (fake_sanitizer.c, argv[1]) that keeps the patch image and callback data
 * it was given, and the real ptxas. Checked: each kernel's record carries the
 * ordinal of its context's device (ctx->device) with a zero pad, its probe
 * mask, kernel id and launch id; the patch cubin bound to each context holds
 * CLOCK_REALTIME - CLOCK_MONOTONIC of the binding at __gbpf_clock_off
 * (bpf_ktime_get_ns = %globaltimer less it), the second context's copy
 * coming from the disk cache.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <gbpf/cuda_inject.h>
#include <gbpf/helper_ids.h>
#include <gbpf/insn.h>
#include <gbpf/plugin.h>
#include <gbpf/probe_ctx.h>

#include "plugins/cuda/intercept/intercept.h"
#include "plugins/cuda/intercept/intercept_internal.h"
#include "plugins/cuda/ptx_codegen.h"
#include "plugins/cuda/sanitizer/san_engine.h"
#include "plugins/cuda/sanitizer/san_patch.h"
#include "tests/cuda_sanitizer/san_elf.h"
#include "tests/tap.h"

#define INSN(c, d, s, o, i) ((struct gbpf_insn){.code = (c), .dst = (d), .src = (s), .off = (o), .imm = (i)})

/* r0 = bpf_ktime_get_ns(); exit */
static const struct gbpf_insn prog_ktime[] = {
	INSN(GBPF_JMP | GBPF_CALL, 0, GBPF_CALL_HELPER, 0, GBPF_HELPER_KTIME_GET_NS),
	INSN(GBPF_JMP | GBPF_EXIT, 0, 0, 0, 0),
};

/* r0 = ctx->device; exit */
static const struct gbpf_insn prog_device[] = {
	INSN(GBPF_LDX | GBPF_MEM | GBPF_W, 0, 1, 56, 0),
	INSN(GBPF_JMP | GBPF_EXIT, 0, 0, 0, 0),
};

/* ---- the fake driver: two contexts on devices 3 and 1, device memory = host memory ---- */

static CUcontext fake_ctx = (CUcontext)(uintptr_t)0x1000;
static int fake_device = 3;
static void *fake_allocs[16];
static size_t fake_alloc_cnt;

static CUresult f_ctx_current(CUcontext *c)
{
	*c = fake_ctx;
	return 0;
}

static CUresult f_ctx_device(CUdevice *d)
{
	*d = fake_device;
	return 0;
}

static CUresult f_attr(int *v, int attr, CUdevice d)
{
	(void)d;
	*v = attr == 75 ? 9 : 0; /* compute capability 9.0: sm_90 */
	return 0;
}

static CUresult f_kernel_fn(CUfunction *f, CUkernel k)
{
	*f = (CUfunction)(void *)k;
	return 0;
}

static CUresult f_func_mod(CUmodule *m, CUfunction f)
{
	/* One module per context. */
	(void)f;
	*m = (CUmodule)(uintptr_t)((uintptr_t)fake_ctx + 0x10000);
	return 0;
}

static CUresult f_alloc(CUdeviceptr *p, size_t n)
{
	void *q = fake_alloc_cnt < 16 ? calloc(1, n) : NULL;

	if (!q)
		return 2;
	fake_allocs[fake_alloc_cnt++] = q;
	*p = (CUdeviceptr)(uintptr_t)q;
	return 0;
}

static CUresult f_htod(CUdeviceptr d, const void *s, size_t n)
{
	memcpy((void *)(uintptr_t)d, s, n);
	return 0;
}

static CUresult f_memset32(CUdeviceptr d, unsigned int v, size_t n, CUstream s)
{
	(void)s;
	for (size_t i = 0; i < n; i++)
		memcpy((char *)(uintptr_t)d + 4 * i, &v, 4);
	return 0;
}

static CUresult f_gpa(const char *sym, void **pfn, int ver, cuuint64_t flags, CUdriverProcAddressQueryResult *st)
{
	static const struct {
		const char *name;
		void *fn;
	} procs[] = {
		{"cuCtxGetCurrent", (void *)f_ctx_current}, {"cuCtxGetDevice", (void *)f_ctx_device},
		{"cuDeviceGetAttribute", (void *)f_attr},   {"cuKernelGetFunction", (void *)f_kernel_fn},
		{"cuFuncGetModule", (void *)f_func_mod},    {"cuMemAlloc", (void *)f_alloc},
		{"cuMemcpyHtoD", (void *)f_htod},           {"cuMemsetD32Async", (void *)f_memset32},
	};

	(void)ver;
	(void)flags;
	(void)st;
	for (size_t i = 0; i < sizeof(procs) / sizeof(procs[0]); i++)
		if (!strcmp(procs[i].name, sym)) {
			*pfn = procs[i].fn;
			return 0;
		}
	*pfn = NULL;
	return 500; /* CUDA_ERROR_NOT_FOUND */
}

/* ---- the agent's services ---- */

static char reports[4096];
static uint64_t launch_ids;

static void svc_report(void *ctx, enum gbpf_agent_event ev, const char *kernel, const char *msg)
{
	size_t n = strlen(reports);

	(void)ctx;
	snprintf(reports + n, sizeof(reports) - n, "[%d %s] %s\n", (int)ev, kernel ? kernel : "-", msg);
}

static uint64_t svc_next_launch_id(void *ctx)
{
	(void)ctx;
	return ++launch_ids;
}

static int svc_selected(void *ctx, size_t prog_index, const char *name)
{
	(void)ctx;
	(void)prog_index;
	(void)name;
	return 1;
}

static int have_ptxas(void)
{
	return !access("/usr/local/cuda/bin/ptxas", X_OK) || getenv("CUDA_HOME") || getenv("GBPF_PTXAS");
}

static uint64_t ns(clockid_t c)
{
	struct timespec t;

	clock_gettime(c, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/*
 * One launch in the current fake context; checks its record and the clock
 * offset of the cubin bound to the context (the offset at the binding lies
 * between RT0 - MONO1 and RT1 - MONO0 of readings around the launch).
 */
static void launch_and_check(struct gbpf_san_engine *e, const char *lib, const char *what, int want_cached)
{
	const void *(*last_image)(void) = NULL, *(*last_userdata)(void) = NULL;
	void *h;
	struct gbpf_cu_launch l = {.api = GBPF_CU_LAUNCH_KERNEL, .api_name = "cuLaunchKernel",
				   .func = (CUfunction)(uintptr_t)((uintptr_t)fake_ctx + 0x20000),
				   .name = "_Z6vecaddPfS_S_i"};
	const struct gbpf_san_record *rec;
	struct gbpf_san_engine_stats st;
	const unsigned char *clk;
	const void *img;
	uint64_t id = 0, rt0, mo0, rt1, mo1, lo, hi, got = 0;
	int rc;

	rt0 = ns(CLOCK_REALTIME);
	mo0 = ns(CLOCK_MONOTONIC);
	rc = gbpf_san_engine_launch(e, &l, &id, 1);
	mo1 = ns(CLOCK_MONOTONIC);
	rt1 = ns(CLOCK_REALTIME);
	tap_ok(rc == 0 && id == launch_ids, "%s: launch runs with probes, launch id %llu (%d)", what,
	       (unsigned long long)id, rc);
	if (rc) {
		tap_diag("reports: %s", reports);
		return;
	}
	/* The engine loaded the stand-in library at this first launch (lazy subscription). */
	h = dlopen(lib, RTLD_NOW | RTLD_NOLOAD);
	*(void **)&last_image = h ? dlsym(h, "fake_san_last_image") : NULL;
	*(void **)&last_userdata = h ? dlsym(h, "fake_san_last_userdata") : NULL;
	if (h)
		dlclose(h);
	if (!last_image || !last_userdata) {
		tap_ok(0, "%s: the stand-in library is loaded: %s", what, dlerror());
		return;
	}
	rec = last_userdata();
	tap_ok(rec && rec->device == (uint32_t)fake_device && rec->device_pad == 0,
	       "%s: the record's device is the context's cuCtxGetDevice (%d), pad 0 (got %u, %u)", what, fake_device,
	       rec ? rec->device : 0, rec ? rec->device_pad : 0);
	tap_ok(rec && rec->probes == 3 && rec->kernel_id == gbpf_kernel_id(l.name) && rec->launch_id == id,
	       "%s: probe mask 3, kernel id and launch id in the record", what);
	img = last_image();
	clk = img ? elf_global(img, elf_image_size(img), "__gbpf_clock_off") : NULL;
	if (clk)
		memcpy(&got, clk, 8);
	lo = rt0 - mo1;
	hi = rt1 - mo0;
	tap_ok(clk && got >= lo && got <= hi,
	       "%s: the bound cubin's __gbpf_clock_off = CLOCK_REALTIME - CLOCK_MONOTONIC at binding (%llu in [%llu, "
	       "%llu])",
	       what, (unsigned long long)got, (unsigned long long)lo, (unsigned long long)hi);
	gbpf_san_engine_stats(e, &st);
	tap_ok(st.cubin_cached == want_cached, "%s: patch cubin %s", what,
	       want_cached ? "from the disk cache, re-bound" : "compiled by ptxas");
}

/*
 * The library reports the current context's module unloading; a kernel
 * launched afterwards with the same function handle (a later module may get
 * the old one's handles) is instrumented afresh: a new record, the module
 * patched again. Before, the handle alone found the old kernel's record.
 */
static void module_unload_and_relaunch(struct gbpf_san_engine *e, const char *lib)
{
	void (*unload)(void *, void *) = NULL;
	const void *(*last_userdata)(void) = NULL;
	struct gbpf_cu_launch l = {.api = GBPF_CU_LAUNCH_KERNEL, .api_name = "cuLaunchKernel",
				   .func = (CUfunction)(uintptr_t)((uintptr_t)fake_ctx + 0x20000),
				   .name = "_Z6vecaddPfS_S_i"};
	struct gbpf_san_engine_stats before, after;
	const void *rec_before;
	uint64_t id = 0;
	void *h = dlopen(lib, RTLD_NOW | RTLD_NOLOAD);
	int rc;

	*(void **)&unload = h ? dlsym(h, "fake_san_module_unload") : NULL;
	*(void **)&last_userdata = h ? dlsym(h, "fake_san_last_userdata") : NULL;
	if (h)
		dlclose(h);
	if (!tap_ok(unload && last_userdata, "module unload: the stand-in library reports unloads"))
		return;
	gbpf_san_engine_stats(e, &before);
	rec_before = last_userdata();
	rc = gbpf_san_engine_launch(e, &l, &id, 1);
	gbpf_san_engine_stats(e, &after);
	tap_ok(rc == 0 && after.kernels == before.kernels && last_userdata() == rec_before,
	       "module unload: before it, a launch with the same handle reuses the kernel's record (%d)", rc);
	unload((void *)fake_ctx, (void *)((uintptr_t)fake_ctx + 0x10000));
	id = 0;
	rc = gbpf_san_engine_launch(e, &l, &id, 1);
	gbpf_san_engine_stats(e, &after);
	tap_ok(rc == 0 && after.kernels == before.kernels + 1 && after.modules == before.modules + 1 &&
		       last_userdata() != rec_before,
	       "module unload: the same handle afterwards is a new kernel: a new record, its module patched again "
	       "(kernels %llu -> %llu, modules %llu -> %llu, rc %d)",
	       (unsigned long long)before.kernels, (unsigned long long)after.kernels,
	       (unsigned long long)before.modules, (unsigned long long)after.modules, rc);
}

int main(int argc, char **argv)
{
	struct gbpf_prog_desc kt = {.sz = sizeof(kt), .name = "on_entry", .section = "gpu/entry/*",
				    .insns = prog_ktime, .insn_cnt = 2, .source_file = "unit.o"};
	struct gbpf_prog_desc dv = {.sz = sizeof(dv), .name = "on_exit", .section = "gpu/exit/*",
				    .insns = prog_device, .insn_cnt = 2, .source_file = "unit.o"};
	const struct gbpf_prog_desc *progs[] = {&kt, &dv};
	struct gbpf_agent_services svc = {.sz = sizeof(svc), .report = svc_report,
					  .next_launch_id = svc_next_launch_id, .kernel_selected = svc_selected};
	struct gbpf_ptx_opts po = {.sz = sizeof(po), .arch = "sm_90"};
	size_t idx[2] = {0, 1};
	struct gbpf_san_engine *e = NULL;
	char why[1024] = "", dir[] = "/tmp/gbpf-san-engine-XXXXXX", *frag = NULL;
	int rc;

	kt.attach.kind = GBPF_ATTACH_GPU_ENTRY;
	dv.attach.kind = GBPF_ATTACH_GPU_EXIT;
	if (argc < 2) {
		tap_ok(0, "usage: test_san_engine FAKE_SANITIZER_LIB");
		return tap_done();
	}
	if (!have_ptxas()) {
		tap_skip("ptxas not installed: the engine cannot build its patch module");
		return tap_done();
	}
	if (!mkdtemp(dir)) {
		tap_ok(0, "temporary cache folder");
		return tap_done();
	}
	setenv("GBPF_CACHE_DIR", dir, 1);
	setenv("GBPF_SANITIZER_LIB", argv[1], 1);
	unsetenv("GBPF_SAN_SUBSCRIBE");
	gbpf_cu_note_real_gpa((void *)f_gpa, 1);

	rc = gbpf_ptx_emit(progs, 2, &po, &frag, NULL, why, sizeof(why));
	tap_ok(rc == 0, "fragment of a ktime entry probe and a ctx->device exit probe (%s)", why);
	struct gbpf_san_engine_opts o = {.sz = sizeof(o), .svc = &svc, .probes = progs, .prog_index = idx,
					 .probe_cnt = 2, .fragment = frag,
					 .ctx_unused = GBPF_CUDA_CTX_UNUSED_PARAMS | GBPF_CUDA_CTX_UNUSED_MEM};
	rc = rc ? rc : gbpf_san_engine_create(&e, &o, why, sizeof(why));
	tap_ok(rc == 0 && e, "engine created (%d: %s)", rc, why);
	if (rc)
		goto out;

	fake_ctx = (CUcontext)(uintptr_t)0x1000;
	fake_device = 3;
	launch_and_check(e, argv[1], "context on device 3", 0);
	/* Another context on another device: its own record, its own binding of the cached cubin. */
	fake_ctx = (CUcontext)(uintptr_t)0x2000;
	fake_device = 1;
	launch_and_check(e, argv[1], "context on device 1", 1);
	module_unload_and_relaunch(e, argv[1]);
out:
	gbpf_san_engine_destroy(e);
	free(frag);
	/* The engine leaves records to the context (the driver frees them); this fake frees them. */
	for (size_t i = 0; i < fake_alloc_cnt; i++)
		free(fake_allocs[i]);
	unsetenv("GBPF_CACHE_DIR");
	{
		char cmd[600];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd))
			tap_diag("cannot remove %s", dir);
	}
	return tap_done();
}
