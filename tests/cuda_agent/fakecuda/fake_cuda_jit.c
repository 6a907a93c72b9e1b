/* SPDX-License-Identifier: MIT */
/*
 * tests/cuda_agent/fakecuda/fake_cuda_jit.c - a small fake libcuda.so.1 for
 * the cuda agent tests: PTX modules (the "JIT" records whether the text
 * holds gbpf probes), module globals, host registration (device address ==
 * host address), async memsets, launches that only log. Every launch is
 * logged to GBPF_FAKE_CUDA_LOG as "launch NAME instrumented=0|1 grid=N";
 * GBPF_FAKE_JIT_FAIL=1 makes the load of instrumented PTX fail.
 *
 * Fault knobs (tests/reliability; unset = the behaviour above), read at
 * each call so that one process can switch them:
 *   GBPF_FAKE_LOAD_FAIL=CODE      loads of instrumented PTX return CODE
 *                                 (2 = out of memory, 200 = invalid image...)
 *   GBPF_FAKE_REGISTER_FAIL=CODE  cuMemHostRegister returns CODE (any value
 *                                 that is not a number > 1 returns 1)
 *   GBPF_FAKE_ALLOC_FAIL=1        cuMemAlloc returns 2 (out of device memory)
 *   GBPF_FAKE_GLOBAL_FAIL=1       cuModuleGetGlobal finds no gbpf global
 *   GBPF_FAKE_CONST_FAIL=1        loads of instrumented PTX with the
 *                                 constant-bank map table return 218 (as
 *                                 ptxas does when user constants pass 64 KB)
 * Each fault is logged ("fault NAME").
 *
 * Contexts: the primary one plus any made by cuCtxCreate (destroyed with
 * cuCtxDestroy, logged "ctxdestroy N"); every launch logs its context
 * number and the address its module's __gbpf_maps[0] holds.
 * GBPF_FAKE_EXEC_COUNT=1 makes an instrumented launch act like an exit
 * probe counting threads: it adds grid x block to the first u64 value of
 * the map block __gbpf_maps[0] points to (the device copy the agent made
 * for the launch's context).
 * GBPF_FAKE_DEVICE=N: cuCtxGetDevice says N (launches log the module's
 * __gbpf_device as "device=N"). Stream 0x77 is capturing a graph
 * (cuStreamIsCapturing); cuGraphLaunch logs "graphlaunch launch_id=N", N
 * being the __gbpf_launch_id of the last instrumented module loaded.
 * Launch ids: an instrumented kernel with the hidden trailing parameter
 * __gbpf_lid reads it (from kernelParams, or the last 8 bytes of an
 * `extra` buffer); bit 63 set or no such parameter: __gbpf_launch_id.
 * Launches log "launch_id=N hidden=0|1 sentinel=0|1 arg0=V" (V: the app's
 * first u64 parameter as the kernel receives it). cuMemsetD32Async logs
 * "memset32".
 */
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define API __attribute__((visibility("default")))
typedef int CUresult;
typedef uintptr_t CUdeviceptr;

struct fmod {
	int instrumented;
	const char *text;
	/* __gbpf_maps (up to 8), __gbpf_pid_tgid, __gbpf_launch_id, __gbpf_device, __gbpf_maps_const,
	 * __gbpf_slots_const (up to 16 u32), __gbpf_printq, __gbpf_printq_nmaps */
	uint64_t globals[8][8];
};
struct ffunc {
	struct fmod *mod;
	char name[128];
};

static void flog(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void flog(const char *fmt, ...)
{
	const char *p = getenv("GBPF_FAKE_CUDA_LOG");
	char line[512];
	va_list ap;
	int fd, n;

	if (!p)
		return;
	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (n > (int)sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	fd = open(p, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	if (write(fd, line, (size_t)n) < 0)
		n = 0;
	close(fd);
}

/* Error code a knob asks for: 0 when unset, @p dflt when set but not a number > 1. */
static int knob(const char *name, int dflt)
{
	const char *v = getenv(name);
	long n;

	if (!v)
		return 0;
	n = strtol(v, NULL, 0);
	return n > 1 && n < 100000 ? (int)n : dflt;
}

/* Context 0 is the primary context; cuCtxCreate hands out the others. */
#define FAKE_CTXS 8
static int ctx_storage[FAKE_CTXS];
static int ctx_live[FAKE_CTXS] = {1};
static void *cur_ctx;

static int ctx_index(const void *c)
{
	for (int i = 0; i < FAKE_CTXS; i++)
		if (c == &ctx_storage[i])
			return i;
	return -1;
}

API CUresult cuInit(unsigned f) { (void)f; return 0; }
API CUresult cuDriverGetVersion(int *v) { *v = 13000; return 0; }
API CUresult cuDeviceGetCount(int *n) { *n = 1; return 0; }
API CUresult cuDeviceGet(int *d, int i) { *d = i; return i ? 101 : 0; }
API CUresult cuDeviceGetName(char *n, int len, int d) { (void)d; snprintf(n, (size_t)len, "fake GPU"); return 0; }
API CUresult cuDeviceGetAttribute(int *v, int a, int d)
{
	(void)d;
	*v = a == 75 ? 9 : a == 76 ? 0 : a == 16 ? 4 : a == 10 ? 32 : 1;
	return 0;
}
API CUresult cuDeviceTotalMem_v2(size_t *b, int d) { (void)d; *b = 1ull << 30; return 0; }
API CUresult cuDevicePrimaryCtxRetain(void **c, int d) { (void)d; *c = &ctx_storage[0]; return 0; }
API CUresult cuDevicePrimaryCtxGetState(int d, unsigned *flags, int *active)
{
	(void)d;
	*flags = 0;
	*active = ctx_live[0];
	return 0;
}
API CUresult cuCtxCreate_v2(void **c, unsigned flags, int dev)
{
	(void)flags; (void)dev;
	for (int i = 1; i < FAKE_CTXS; i++)
		if (!ctx_live[i]) {
			ctx_live[i] = 1;
			*c = &ctx_storage[i];
			cur_ctx = *c;
			return 0;
		}
	return 2;
}
API CUresult cuCtxDestroy_v2(void *c)
{
	int i = ctx_index(c);

	if (i < 0 || !ctx_live[i])
		return 201; /* CUDA_ERROR_INVALID_CONTEXT */
	flog("ctxdestroy %d", i);
	ctx_live[i] = 0;
	if (cur_ctx == c)
		cur_ctx = NULL;
	return 0;
}
API CUresult cuCtxGetDevice(int *d)
{
	const char *v = getenv("GBPF_FAKE_DEVICE");

	*d = v ? atoi(v) : 0;
	return cur_ctx ? 0 : 201;
}
API CUresult cuMemHostUnregister(void *p) { (void)p; flog("hostunregister"); return 0; }
API CUresult cuDevicePrimaryCtxRelease_v2(int d) { (void)d; return 0; }
API CUresult cuCtxSetCurrent(void *c) { cur_ctx = c; return 0; }
API CUresult cuCtxGetCurrent(void **c) { *c = cur_ctx; return 0; }
API CUresult cuCtxSynchronize(void) { return 0; }
API CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n)
{
	if (knob("GBPF_FAKE_ALLOC_FAIL", 2)) {
		flog("fault alloc %zu", n);
		return 2; /* CUDA_ERROR_OUT_OF_MEMORY */
	}
	*p = (CUdeviceptr)calloc(1, n ? n : 1);
	return *p ? 0 : 2;
}
API CUresult cuMemFree_v2(CUdeviceptr p) { free((void *)p); return 0; }
API CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void *s, size_t n) { memcpy((void *)d, s, n); return 0; }
API CUresult cuMemcpyDtoH_v2(void *d, CUdeviceptr s, size_t n) { memcpy(d, (void *)s, n); return 0; }
API CUresult cuMemsetD8_v2(CUdeviceptr d, unsigned char v, size_t n) { memset((void *)d, v, n); return 0; }
API CUresult cuMemsetD32Async(CUdeviceptr d, unsigned v, size_t n, void *s)
{
	(void)s;
	flog("memset32");
	for (size_t i = 0; i < n; i++)
		((uint32_t *)d)[i] = v;
	return 0;
}
API CUresult cuMemHostRegister_v2(void *p, size_t n, unsigned f)
{
	int code = knob("GBPF_FAKE_REGISTER_FAIL", 1);

	flog("hostregister %zu flags=%u", n, f);
	(void)p;
	if (code)
		flog("fault hostregister %d", code);
	return code;
}
API CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr *d, void *p, unsigned f) { (void)f; *d = (CUdeviceptr)p; return 0; }
/* the print queues' host records (cuda_printq.c looks both up with dlsym) */
API CUresult cuMemHostAlloc(void **p, size_t n, unsigned f)
{
	flog("hostalloc %zu flags=%u", n, f);
	*p = calloc(1, n ? n : 1);
	return *p ? 0 : 2;
}
API CUresult cuMemFreeHost(void *p) { flog("freehost"); free(p); return 0; }
API CUresult cuEventCreate(void **e, unsigned f) { (void)f; *e = &ctx_storage[0]; return 0; }
API CUresult cuEventRecord(void *e, void *s) { (void)e; (void)s; return 0; }
API CUresult cuEventSynchronize(void *e) { (void)e; return 0; }
API CUresult cuEventElapsedTime(float *ms, void *a, void *b) { (void)a; (void)b; *ms = 0; return 0; }
API CUresult cuEventDestroy_v2(void *e) { (void)e; return 0; }
API CUresult cuGetErrorString(CUresult e, const char **s) { (void)e; *s = "fake error"; return 0; }
API CUresult cuGetErrorName(CUresult e, const char **s) { (void)e; *s = "FAKE_ERROR"; return 0; }

static struct fmod *last_instrumented;
/* GBPF_FAKE_REUSE_MODULE=1: the next module load gets the handle the last unload freed, as a real
 * driver may (the same address for another module) */
static struct fmod *unloaded;

API CUresult cuModuleLoadDataEx(struct fmod **m, const void *img, unsigned n, int *o, void **v)
{
	struct fmod *mod = unloaded ? unloaded : calloc(1, sizeof(*mod));
	int reused = unloaded != NULL;

	(void)n; (void)o; (void)v;
	unloaded = NULL;
	if (!mod)
		return 2;
	memset(mod, 0, sizeof(*mod));
	mod->text = strdup((const char *)img);
	/* every instrumented module declares it (the probe functions themselves may all be inlined
	 * and left out) */
	mod->instrumented = strstr(mod->text, "__gbpf_launch_id") != NULL;
	if (mod->instrumented)
		last_instrumented = mod;
	/* reused=1: the handle of an unloaded module; second=1: ptx_app's reloaded module */
	flog("load instrumented=%d reads_device=%d reused=%d second=%d", mod->instrumented,
	     strstr(mod->text, "[__gbpf_device]") != NULL, reused, strstr(mod->text, "%second") != NULL);
	if (mod->instrumented && getenv("GBPF_FAKE_CONST_FAIL") && strstr(mod->text, "__gbpf_maps_const")) {
		flog("fault const");
		free((void *)mod->text);
		free(mod);
		return 218; /* CUDA_ERROR_INVALID_PTX */
	}
	if (mod->instrumented && (getenv("GBPF_FAKE_JIT_FAIL") || knob("GBPF_FAKE_LOAD_FAIL", 200))) {
		int code = getenv("GBPF_FAKE_JIT_FAIL") ? 218 /* CUDA_ERROR_INVALID_PTX */
							: knob("GBPF_FAKE_LOAD_FAIL", 200);

		flog("fault load %d", code);
		free((void *)mod->text);
		free(mod);
		return code;
	}
	*m = mod;
	return 0;
}
API CUresult cuModuleLoadData(struct fmod **m, const void *img) { return cuModuleLoadDataEx(m, img, 0, NULL, NULL); }
API CUresult cuModuleUnload(struct fmod *m)
{
	if (m)
		flog("module freed instrumented=%d", m->instrumented);
	/* the application's module's handle (not gbpf's) is the one the next load gets */
	if (getenv("GBPF_FAKE_REUSE_MODULE") && m && !m->instrumented) {
		free((void *)m->text);
		m->text = NULL;
		unloaded = m;
	}
	return 0;
}
API CUresult cuModuleGetFunction(struct ffunc **f, struct fmod *m, const char *name)
{
	char pat[160];
	struct ffunc *fn;

	snprintf(pat, sizeof(pat), ".entry %s(", name);
	if (!strstr(m->text, pat))
		return 500; /* CUDA_ERROR_NOT_FOUND */
	fn = calloc(1, sizeof(*fn));
	if (!fn)
		return 2;
	fn->mod = m;
	snprintf(fn->name, sizeof(fn->name), "%s", name);
	*f = fn;
	return 0;
}
API CUresult cuModuleGetGlobal_v2(CUdeviceptr *d, size_t *sz, struct fmod *m, const char *name)
{
	int i = !strcmp(name, "__gbpf_maps") ? 0 : !strcmp(name, "__gbpf_pid_tgid") ? 1
		: !strcmp(name, "__gbpf_launch_id") ? 2 : !strcmp(name, "__gbpf_device") ? 3
		: !strcmp(name, "__gbpf_maps_const") ? 4 : !strcmp(name, "__gbpf_slots_const") ? 5
		: !strcmp(name, "__gbpf_printq") ? 6 : !strcmp(name, "__gbpf_printq_nmaps") ? 7 : -1;

	if (i < 0 || !strstr(m->text, name))
		return 500;
	if (knob("GBPF_FAKE_GLOBAL_FAIL", 500)) {
		flog("fault global %s", name);
		return 500;
	}
	*d = (CUdeviceptr)m->globals[i];
	if (sz)
		*sz = sizeof(m->globals[i]);
	return 0;
}
API CUresult cuFuncSetAttribute(struct ffunc *f, int a, int v) { flog("setattr %s %d=%d", f->name, a, v); return 0; }
API CUresult cuFuncSetCacheConfig(struct ffunc *f, int c) { (void)f; (void)c; return 0; }
/* Parameters of kernel @f in its module's text; *hidden: the last is __gbpf_lid. */
static int fake_nparams(const struct ffunc *f, int *hidden)
{
	char pat[160];
	const char *b, *e, *q;
	int n = 0;

	*hidden = 0;
	snprintf(pat, sizeof(pat), ".entry %s(", f->name);
	b = strstr(f->mod->text, pat);
	e = b ? strchr(b, ')') : NULL;
	for (q = b; q && e && (q = strstr(q, ".param")) && q < e; q++)
		n++;
	if (e && e - b > 10 && strstr(b, "__gbpf_lid") && strstr(b, "__gbpf_lid") < e)
		*hidden = 1;
	return n;
}

/* The launch id kernel @f sees, the way the injected entry code reads it; arg0: its first u64 parameter. */
static uint64_t fake_launch_id(const struct ffunc *f, void **p, void **e, int *hidden, int *sentinel,
			       uint64_t *arg0)
{
	int n = fake_nparams(f, hidden);
	uint64_t v = 0;

	*sentinel = 0;
	*arg0 = 0;
	if (p && n > 0 && p[0])
		memcpy(arg0, p[0], 8);
	if (!p && e && e[0] == (void *)1 && e[2] == (void *)2 && *(size_t *)e[3] >= 8) {
		memcpy(arg0, e[1], 8);
		if (*hidden)
			memcpy(&v, (char *)e[1] + *(size_t *)e[3] - 8, 8);
	} else if (*hidden && p) {
		memcpy(&v, p[n - 1], 8);
	}
	if (!*hidden)
		return f->mod->globals[2][0];
	if (v >> 63) {
		/* a graph node's launch: bit 62 | __gbpf_launch_id << 32 | a per-node %gridid (here 7) */
		*sentinel = 1;
		return (1ULL << 62) | (f->mod->globals[2][0] << 32) | 7;
	}
	return v;
}

/*
 * The constant-bank copy of the map table against the table itself:
 * "same" when __gbpf_maps_const holds __gbpf_maps' addresses and
 * __gbpf_slots_const each block's nr_slots (struct gbpf_map_hdr at +28),
 * "none" when the module has neither, "differ" otherwise.
 */
static const char *fake_const_tables(const struct fmod *m)
{
	uint32_t slots[16];

	if (!strstr(m->text, "__gbpf_maps_const"))
		return "none";
	memcpy(slots, m->globals[5], sizeof(slots));
	for (int i = 0; i < 8 && m->globals[0][i]; i++) {
		uint32_t n;

		memcpy(&n, (const unsigned char *)(uintptr_t)m->globals[0][i] + 28, 4);
		if (m->globals[4][i] != m->globals[0][i] || slots[i] != n)
			return "differ";
	}
	return m->globals[0][0] ? "same" : "differ";
}

/*
 * GBPF_FAKE_EXEC_PRINT=1: an instrumented launch whose module has print
 * queues (__gbpf_printq) acts like a probe that calls bpf_puts once: one
 * record "fake print <launch id>" in queue 0, published as the device
 * does (plugins/cuda/cuda_printq.h), or a drop when the queue is full.
 * GBPF_FAKE_PRINT_DROPS=N (N > 1): the first one also counts N drops.
 */
static void fake_print(uint64_t dev_block, uint64_t launch_id)
{
	unsigned char *dev = (unsigned char *)(uintptr_t)dev_block, *host, *rec;
	uint64_t pos, tail;
	uint32_t nq, nslots, len;
	static int drops_added;
	char text[64];

	memcpy(&host, dev, 8);
	memcpy(&nq, dev + 8, 4);
	memcpy(&nslots, dev + 12, 4);
	if (!drops_added) {
		__atomic_fetch_add((uint64_t *)(dev + 72), (uint64_t)knob("GBPF_FAKE_PRINT_DROPS", 0),
				   __ATOMIC_RELAXED);
		drops_added = 1;
	}
	pos = __atomic_fetch_add((uint64_t *)(dev + 64), 1, __ATOMIC_RELAXED);
	tail = __atomic_load_n((uint64_t *)host, __ATOMIC_ACQUIRE);
	if (pos - tail >= nslots) {
		__atomic_fetch_add((uint64_t *)(dev + 72), 1, __ATOMIC_RELAXED);
		return;
	}
	rec = host + (((uint64_t)nq * 8 + 63) & ~(uint64_t)63) + (pos & (nslots - 1)) * 256;
	len = (uint32_t)snprintf(text, sizeof(text), "fake print %llu", (unsigned long long)launch_id);
	memset(rec + 8, 0, 32);
	memcpy(rec + 8, &(uint32_t){2}, 4); /* GBPF_PRINTQ_KIND_PUTS */
	memcpy(rec + 12, &len, 4);
	memcpy(rec + 40, text, len);
	__atomic_store_n((uint64_t *)rec, pos + 1, __ATOMIC_RELEASE);
}

API CUresult cuLaunchKernel(struct ffunc *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
			    unsigned bz, unsigned sh, void *st, void **p, void **e)
{
	int print = f->mod->instrumented && f->mod->globals[6][0] && getenv("GBPF_FAKE_EXEC_PRINT");
	int hidden, sentinel;
	uint64_t arg0, id;

	(void)gy; (void)gz; (void)by; (void)bz; (void)sh;
	/*
	 * What the log line says is looked up in the module's text: only when
	 * someone reads it, so that a launch costs next to nothing otherwise
	 * (bench/agent/launch_cost.sh times the agent's own path against it).
	 */
	if (!print && !getenv("GBPF_FAKE_CUDA_LOG"))
		goto exec_count;
	id = fake_launch_id(f, p, e, &hidden, &sentinel, &arg0);
	flog("launch %s instrumented=%d grid=%u block=%u launch_id=%llu maps0=%s ctx=%d map0=%#llx device=%u "
	     "hidden=%d sentinel=%d arg0=%llu stream=%p const=%s printq=%s",
	     f->name, f->mod->instrumented, gx, bx, (unsigned long long)id,
	     f->mod->globals[0][0] ? "set" : "unset", ctx_index(cur_ctx),
	     (unsigned long long)f->mod->globals[0][0], (unsigned)f->mod->globals[3][0], hidden, sentinel,
	     (unsigned long long)arg0, st, fake_const_tables(f->mod), f->mod->globals[6][0] ? "set" : "unset");
	if (print)
		fake_print(f->mod->globals[6][0], id);
exec_count:
	if (f->mod->instrumented && f->mod->globals[0][0] && getenv("GBPF_FAKE_EXEC_COUNT")) {
		unsigned char *blk = (unsigned char *)(uintptr_t)f->mod->globals[0][0];
		uint64_t data_off, v;

		memcpy(&data_off, blk + 56, 8); /* struct gbpf_map_hdr.data_off */
		memcpy(&v, blk + data_off, 8);
		v += (uint64_t)gx * bx;
		memcpy(blk + data_off, &v, 8);
	}
	return 0;
}

API CUresult cuStreamIsCapturing(void *st, int *status)
{
	*status = st == (void *)0x77; /* CU_STREAM_CAPTURE_STATUS_ACTIVE */
	return 0;
}
API CUresult cuGraphLaunch(void *exec, void *st)
{
	(void)exec;
	(void)st;
	flog("graphlaunch launch_id=%llu",
	     last_instrumented ? (unsigned long long)last_instrumented->globals[2][0] : 0ull);
	return 0;
}

struct proc { const char *name; void *fn; };
#define P(n) {#n, (void *)n}
static const struct proc procs[] = {
	P(cuInit), P(cuDriverGetVersion), P(cuDeviceGetCount), P(cuDeviceGet), P(cuDeviceGetName),
	P(cuDeviceGetAttribute), {"cuDeviceTotalMem", (void *)cuDeviceTotalMem_v2},
	P(cuDevicePrimaryCtxRetain), {"cuDevicePrimaryCtxRelease", (void *)cuDevicePrimaryCtxRelease_v2},
	P(cuCtxSetCurrent), P(cuCtxGetCurrent), P(cuCtxSynchronize), P(cuDevicePrimaryCtxGetState),
	{"cuCtxCreate", (void *)cuCtxCreate_v2}, {"cuCtxDestroy", (void *)cuCtxDestroy_v2}, P(cuCtxGetDevice),
	P(cuMemHostUnregister),
	{"cuMemAlloc", (void *)cuMemAlloc_v2}, {"cuMemFree", (void *)cuMemFree_v2},
	{"cuMemcpyHtoD", (void *)cuMemcpyHtoD_v2}, {"cuMemcpyDtoH", (void *)cuMemcpyDtoH_v2},
	{"cuMemsetD8", (void *)cuMemsetD8_v2}, P(cuMemsetD32Async),
	{"cuMemHostRegister", (void *)cuMemHostRegister_v2},
	{"cuMemHostGetDevicePointer", (void *)cuMemHostGetDevicePointer_v2},
	P(cuEventCreate), P(cuEventRecord), P(cuEventSynchronize), P(cuEventElapsedTime),
	{"cuEventDestroy", (void *)cuEventDestroy_v2}, P(cuGetErrorString), P(cuGetErrorName),
	P(cuModuleLoadData), P(cuModuleLoadDataEx), P(cuModuleUnload), P(cuModuleGetFunction),
	{"cuModuleGetGlobal", (void *)cuModuleGetGlobal_v2}, P(cuFuncSetAttribute),
	P(cuFuncSetCacheConfig), P(cuLaunchKernel), P(cuStreamIsCapturing), P(cuGraphLaunch),
};

API CUresult cuGetProcAddress_v2(const char *sym, void **pfn, int ver, uint64_t flags, int *status);
API CUresult cuGetProcAddress_v2(const char *sym, void **pfn, int ver, uint64_t flags, int *status)
{
	(void)ver; (void)flags;
	if (status)
		*status = 0;
	for (size_t i = 0; i < sizeof(procs) / sizeof(procs[0]); i++)
		if (!strcmp(procs[i].name, sym)) {
			*pfn = procs[i].fn;
			return 0;
		}
	if (!strcmp(sym, "cuGetProcAddress")) {
		*pfn = (void *)cuGetProcAddress_v2;
		return 0;
	}
	*pfn = NULL;
	if (status)
		*status = 1;
	return 500;
}
API CUresult cuGetProcAddress(const char *sym, void **pfn, int ver, uint64_t flags);
API CUresult cuGetProcAddress(const char *sym, void **pfn, int ver, uint64_t flags)
{
	return cuGetProcAddress_v2(sym, pfn, ver, flags, NULL);
}
