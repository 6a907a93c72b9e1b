/* SPDX-License-Identifier: MIT */
/*
 * tests/intercept/fakecuda/fake_cuda.c - a fake CUDA driver (built as libcuda.so.1)
 * for the interception tests on machines without a GPU.
 *
 * It answers cuGetProcAddress like the real driver (by name, version and
 * per-thread flag), implements enough entry points that a real cudart 13
 * initialises, allocates (device memory is host memory), registers its
 * fatbinary and launches, and logs what it receives, one line per call,
 * to the file named by GBPF_FAKE_CUDA_LOG (appended with O_APPEND so that
 * lines of several threads do not interleave). Every cuGetProcAddress
 * query is logged as "gpa NAME VERSION FLAGS found|missing".
 *
 * Handles are pointers to small structs owned here; a CUkernel and a
 * CUfunction are the same struct so that a CUkernel cast to CUfunction
 * launches, as with the real driver.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plugins/cuda/intercept/cuda_types.h"

#define FAKE_API __attribute__((visibility("default")))
#define FAKE_FUNC_MAGIC 0x46554e43u /* "FUNC" */

struct fake_func {
	unsigned int magic;
	char name[128];
};

struct fake_mod {
	unsigned int magic;
	unsigned int image_magic;
};

static struct fake_mod fake_ctx_storage;
static int fake_log_fd = -2;

static void fake_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fake_log(const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n;

	if (fake_log_fd == -2) {
		const char *path = getenv("GBPF_FAKE_CUDA_LOG");

		fake_log_fd = path ? open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600) : -1;
	}
	if (fake_log_fd < 0)
		return;
	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (n > (int)sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	if (write(fake_log_fd, line, (size_t)n) < 0)
		return;
}

static unsigned int image_magic(const void *image)
{
	unsigned int m = 0;

	if (image)
		memcpy(&m, image, sizeof(m));
	return m;
}

static struct fake_func *new_func(const char *name)
{
	struct fake_func *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->magic = FAKE_FUNC_MAGIC;
	snprintf(f->name, sizeof(f->name), "%s", name ? name : "?");
	return f;
}

static const char *func_name(const void *h)
{
	const struct fake_func *f = h;

	if (!f || f->magic != FAKE_FUNC_MAGIC)
		return "<bad-handle>";
	return f->name;
}

/* ---- init, versions, devices ---- */

FAKE_API CUresult cuInit(unsigned int flags)
{
	fake_log("cuInit %u", flags);
	return 0;
}

FAKE_API CUresult cuDriverGetVersion(int *v)
{
	if (!v)
		return GBPF_CUDA_ERROR_INVALID_VALUE;
	*v = 13000;
	return 0;
}

FAKE_API CUresult cuDeviceGetCount(int *count)
{
	if (!count)
		return GBPF_CUDA_ERROR_INVALID_VALUE;
	*count = 1;
	return 0;
}

FAKE_API CUresult cuDeviceGet(CUdevice *dev, int ordinal)
{
	if (!dev || ordinal != 0)
		return GBPF_CUDA_ERROR_INVALID_VALUE;
	*dev = 0;
	return 0;
}

FAKE_API CUresult cuDeviceGetName(char *name, int len, CUdevice dev)
{
	if (!name || len <= 0)
		return GBPF_CUDA_ERROR_INVALID_VALUE;
	snprintf(name, (size_t)len, "gbpf fake GPU");
	return 0;
}

FAKE_API CUresult cuDeviceGetUuid(unsigned char *uuid, CUdevice dev)
{
	if (!uuid)
		return GBPF_CUDA_ERROR_INVALID_VALUE;
	for (int i = 0; i < 16; i++)
		uuid[i] = (unsigned char)(0xa0 + i);
	return 0;
}

FAKE_API CUresult cuDeviceGetLuid(char *luid, unsigned int *mask, CUdevice dev)
{
	return GBPF_CUDA_ERROR_NOT_SUPPORTED;
}

FAKE_API CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
	if (!bytes)
		return GBPF_CUDA_ERROR_INVALID_VALUE;
	*bytes = (size_t)16 << 30;
	return 0;
}

/* Values of an sm_90 device with 132 SMs; 0 for everything not listed. */
static int device_attribute(int attr)
{
	switch (attr) {
	case 1: return 1024;        /* max threads per block */
	case 2: case 3: return 1024; /* max block dim x, y */
	case 4: return 64;
	case 5: return 0x7fffffff;  /* max grid dim x */
	case 6: case 7: return 65535;
	case 8: return 49152;       /* shared memory per block */
	case 9: return 65536;       /* total constant memory */
	case 10: return 32;         /* warp size */
	case 11: return 0x7fffffff; /* max pitch */
	case 12: return 65536;      /* registers per block */
	case 13: return 1980000;    /* clock rate kHz */
	case 14: return 512;        /* texture alignment */
	case 15: return 1;          /* gpu overlap */
	case 16: return 132;        /* multiprocessors */
	case 19: return 1;          /* can map host memory */
	case 20: return 0;          /* compute mode default */
	case 30: return 512;        /* surface alignment */
	case 31: return 1;          /* concurrent kernels */
	case 36: return 2619000;    /* memory clock */
	case 37: return 6144;       /* memory bus width */
	case 38: return 52428800;   /* L2 cache */
	case 39: return 2048;       /* max threads per SM */
	case 40: return 2;          /* async engines */
	case 41: return 1;          /* unified addressing */
	case 75: return 9;          /* cc major */
	case 76: return 0;          /* cc minor */
	case 81: return 233472;     /* max shared memory per SM */
	case 82: return 65536;      /* max registers per SM */
	case 83: return 1;          /* managed memory */
	case 97: return 232448;     /* max shared memory per block opt-in */
	case 106: return 32;        /* max blocks per SM */
	default: return 0;
	}
}

FAKE_API CUresult cuDeviceGetAttribute(int *pi, int attrib, CUdevice dev)
{
	if (!pi)
		return GBPF_CUDA_ERROR_INVALID_VALUE;
	*pi = device_attribute(attrib);
	return 0;
}

/* ---- contexts ---- */

static __thread CUcontext fake_current;

FAKE_API CUresult cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice dev)
{
	fake_log("cuDevicePrimaryCtxRetain %d", dev);
	if (!ctx)
		return GBPF_CUDA_ERROR_INVALID_VALUE;
	*ctx = (CUcontext)&fake_ctx_storage;
	return 0;
}

FAKE_API CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
	return 0;
}

FAKE_API CUresult cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags, int *active)
{
	if (flags)
		*flags = 0;
	if (active)
		*active = 0;
	return 0;
}

FAKE_API CUresult cuDevicePrimaryCtxSetFlags_v2(CUdevice dev, unsigned int flags)
{
	return 0;
}

FAKE_API CUresult cuDevicePrimaryCtxReset_v2(CUdevice dev)
{
	return 0;
}

FAKE_API CUresult cuCtxGetCurrent(CUcontext *ctx)
{
	if (!ctx)
		return GBPF_CUDA_ERROR_INVALID_VALUE;
	*ctx = fake_current;
	return 0;
}

FAKE_API CUresult cuCtxSetCurrent(CUcontext ctx)
{
	fake_current = ctx;
	return 0;
}

FAKE_API CUresult cuCtxPushCurrent_v2(CUcontext ctx)
{
	fake_current = ctx;
	return 0;
}

FAKE_API CUresult cuCtxPopCurrent_v2(CUcontext *ctx)
{
	if (ctx)
		*ctx = fake_current;
	return 0;
}

FAKE_API CUresult cuCtxGetDevice(CUdevice *dev)
{
	if (!dev)
		return GBPF_CUDA_ERROR_INVALID_VALUE;
	*dev = 0;
	return 0;
}

FAKE_API CUresult cuCtxGetFlags(unsigned int *flags)
{
	if (flags)
		*flags = 0;
	return 0;
}

FAKE_API CUresult cuCtxGetApiVersion(CUcontext ctx, unsigned int *version)
{
	if (version)
		*version = 13000;
	return 0;
}

FAKE_API CUresult cuCtxGetId(CUcontext ctx, unsigned long long *id)
{
	if (id)
		*id = 1;
	return 0;
}

FAKE_API CUresult cuCtxGetLimit(size_t *value, int limit)
{
	if (value)
		*value = 1024;
	return 0;
}

FAKE_API CUresult cuCtxSetLimit(int limit, size_t value)
{
	return 0;
}

FAKE_API CUresult cuCtxSynchronize(void)
{
	fake_log("cuCtxSynchronize");
	return 0;
}

FAKE_API CUresult cuCtxSynchronize_v2(CUcontext ctx)
{
	fake_log("cuCtxSynchronize_v2");
	return 0;
}

FAKE_API CUresult cuCtxCreate_v4(CUcontext *ctx, void *params, unsigned int flags, CUdevice dev)
{
	if (!ctx)
		return GBPF_CUDA_ERROR_INVALID_VALUE;
	*ctx = (CUcontext)&fake_ctx_storage;
	fake_current = *ctx;
	return 0;
}

/* ---- memory: device memory is host memory ---- */

FAKE_API CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytes)
{
	void *p;

	if (!dptr || bytes == 0 || bytes > ((size_t)1 << 32))
		return GBPF_CUDA_ERROR_INVALID_VALUE;
	p = calloc(1, bytes);
	if (!p)
		return 2; /* CUDA_ERROR_OUT_OF_MEMORY */
	*dptr = (CUdeviceptr)(uintptr_t)p;
	fake_log("cuMemAlloc_v2 %zu", bytes);
	return 0;
}

FAKE_API CUresult cuMemFree_v2(CUdeviceptr dptr)
{
	free((void *)(uintptr_t)dptr);
	return 0;
}

FAKE_API CUresult cuMemGetInfo_v2(size_t *free_bytes, size_t *total)
{
	if (free_bytes)
		*free_bytes = (size_t)15 << 30;
	if (total)
		*total = (size_t)16 << 30;
	return 0;
}

FAKE_API CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n)
{
	fake_log("cuMemcpyHtoD_v2 %zu", n);
	memcpy((void *)(uintptr_t)dst, src, n);
	return 0;
}

FAKE_API CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n)
{
	fake_log("cuMemcpyDtoH_v2 %zu", n);
	memcpy(dst, (const void *)(uintptr_t)src, n);
	return 0;
}

static CUresult fake_memcpy_async(const char *api, CUdeviceptr dst, CUdeviceptr src, size_t n,
				  CUstream s)
{
	fake_log("%s %zu stream=%p", api, n, (void *)s);
	memmove((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, n);
	return 0;
}

FAKE_API CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
	return fake_memcpy_async("cuMemcpy", dst, src, n, NULL);
}

FAKE_API CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
	return fake_memcpy_async("cuMemcpyAsync", dst, src, n, s);
}

FAKE_API CUresult cuMemcpyAsync_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
	return fake_memcpy_async("cuMemcpyAsync_ptsz", dst, src, n, s);
}

FAKE_API CUresult cuMemsetD8_v2(CUdeviceptr dst, unsigned char v, size_t n)
{
	fake_log("cuMemsetD8_v2 %zu", n);
	memset((void *)(uintptr_t)dst, v, n);
	return 0;
}

FAKE_API CUresult cuMemsetD32Async(CUdeviceptr dst, unsigned int v, size_t n, CUstream s)
{
	unsigned int *p = (unsigned int *)(uintptr_t)dst;

	fake_log("cuMemsetD32Async %zu", n);
	for (size_t i = 0; i < n; i++)
		p[i] = v;
	return 0;
}

/* ---- modules, libraries, functions ---- */

static CUresult load_image(const char *api, void **out, const void *image)
{
	struct fake_mod *m;

	if (!out || !image)
		return GBPF_CUDA_ERROR_INVALID_VALUE;
	m = calloc(1, sizeof(*m));
	if (!m)
		return 2;
	m->magic = 0x4d4f4431; /* "MOD1" */
	m->image_magic = image_magic(image);
	*out = m;
	fake_log("%s magic=0x%08x handle=%p", api, m->image_magic, (void *)m);
	return 0;
}

FAKE_API CUresult cuModuleLoadData(CUmodule *mod, const void *image)
{
	return load_image("cuModuleLoadData", (void **)mod, image);
}

FAKE_API CUresult cuModuleLoadDataEx(CUmodule *mod, const void *image, unsigned int n,
				     CUjit_option *opts, void **vals)
{
	return load_image("cuModuleLoadDataEx", (void **)mod, image);
}

FAKE_API CUresult cuModuleLoadFatBinary(CUmodule *mod, const void *image)
{
	return load_image("cuModuleLoadFatBinary", (void **)mod, image);
}

FAKE_API CUresult cuModuleUnload(CUmodule mod)
{
	free(mod);
	return 0;
}

FAKE_API CUresult cuModuleGetLoadingMode(int *mode)
{
	if (mode)
		*mode = 1; /* CU_MODULE_LAZY_LOADING */
	return 0;
}

FAKE_API CUresult cuModuleGetFunction(CUfunction *f, CUmodule mod, const char *name)
{
	if (!f || !mod || !name)
		return GBPF_CUDA_ERROR_INVALID_VALUE;
	*f = (CUfunction)new_func(name);
	fake_log("cuModuleGetFunction %s handle=%p", name, (void *)*f);
	return *f ? 0 : 2;
}

FAKE_API CUresult cuLibraryLoadData(CUlibrary *lib, const void *code, CUjit_option *jo, void **jv,
				    unsigned int njo, CUlibraryOption *lo, void **lv,
				    unsigned int nlo)
{
	return load_image("cuLibraryLoadData", (void **)lib, code);
}

FAKE_API CUresult cuLibraryUnload(CUlibrary lib)
{
	free(lib);
	return 0;
}

FAKE_API CUresult cuLibraryGetKernel(CUkernel *k, CUlibrary lib, const char *name)
{
	if (!k || !lib || !name)
		return GBPF_CUDA_ERROR_INVALID_VALUE;
	*k = (CUkernel)new_func(name);
	fake_log("cuLibraryGetKernel %s handle=%p", name, (void *)*k);
	return *k ? 0 : 2;
}

FAKE_API CUresult cuLibraryGetModule(CUmodule *mod, CUlibrary lib)
{
	if (!mod || !lib)
		return GBPF_CUDA_ERROR_INVALID_VALUE;
	*mod = (CUmodule)lib;
	return 0;
}

FAKE_API CUresult cuKernelGetFunction(CUfunction *f, CUkernel k)
{
	if (!f || !k)
		return GBPF_CUDA_ERROR_INVALID_VALUE;
	*f = (CUfunction)k;
	return 0;
}

FAKE_API CUresult cuKernelGetName(const char **name, CUkernel k)
{
	if (!name || !k)
		return GBPF_CUDA_ERROR_INVALID_VALUE;
	*name = ((struct fake_func *)k)->name;
	return 0;
}

FAKE_API CUresult cuFuncGetName(const char **name, CUfunction f)
{
	return cuKernelGetName(name, (CUkernel)f);
}

FAKE_API CUresult cuFuncGetAttribute(int *pi, CUfunction_attribute attr, CUfunction f)
{
	if (!pi)
		return GBPF_CUDA_ERROR_INVALID_VALUE;
	*pi = attr == 0 ? 1024 : 0; /* max threads per block, else 0 */
	return 0;
}

FAKE_API CUresult cuKernelGetAttribute(int *pi, CUfunction_attribute attr, CUkernel k, CUdevice d)
{
	return cuFuncGetAttribute(pi, attr, (CUfunction)k);
}

FAKE_API CUresult cuFuncSetAttribute(CUfunction f, CUfunction_attribute attr, int value)
{
	fake_log("cuFuncSetAttribute %s attr=%d value=%d", func_name(f), attr, value);
	return 0;
}

FAKE_API CUresult cuKernelSetAttribute(CUfunction_attribute attr, int value, CUkernel k,
				       CUdevice dev)
{
	fake_log("cuKernelSetAttribute %s attr=%d value=%d", func_name(k), attr, value);
	return 0;
}

FAKE_API CUresult cuFuncSetCacheConfig(CUfunction f, CUfunc_cache c)
{
	fake_log("cuFuncSetCacheConfig %s config=%d", func_name(f), c);
	return 0;
}

/* ---- launches ---- */

static CUresult log_launch(const char *api, CUfunction f, unsigned int gx, unsigned int gy,
			   unsigned int gz, unsigned int bx, unsigned int by, unsigned int bz,
			   unsigned int shmem, CUstream s, void **params)
{
	if (!f)
		return GBPF_CUDA_ERROR_INVALID_HANDLE;
	/* The tests' stand-in for a launch the driver refuses (too many resources). */
	if (!strcmp(func_name(f), "gbpf_reject")) {
		fake_log("rejected %s %s", api, func_name(f));
		return 701; /* CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES */
	}
	fake_log("launch %s %s grid=%u,%u,%u block=%u,%u,%u shmem=%u stream=%p params=%s", api,
		 func_name(f), gx, gy, gz, bx, by, bz, shmem, (void *)s, params ? "yes" : "no");
	/* GBPF_TEST_AGENT_REPLACE=param: the replacement's hidden parameter follows the one of scale. */
	if (params && !strcmp(func_name(f), "gbpf_replacement") && getenv("GBPF_FAKE_XPARAM"))
		fake_log("xparam %s arg0=%p hidden=%#llx", api, *(void **)params[0],
			 (unsigned long long)*(const uint64_t *)params[1]);
	return 0;
}

FAKE_API CUresult cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
				 unsigned int bx, unsigned int by, unsigned int bz,
				 unsigned int shmem, CUstream s, void **params, void **extra)
{
	return log_launch("cuLaunchKernel", f, gx, gy, gz, bx, by, bz, shmem, s, params);
}

FAKE_API CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned int gx, unsigned int gy,
				      unsigned int gz, unsigned int bx, unsigned int by,
				      unsigned int bz, unsigned int shmem, CUstream s,
				      void **params, void **extra)
{
	return log_launch("cuLaunchKernel_ptsz", f, gx, gy, gz, bx, by, bz, shmem, s, params);
}

FAKE_API CUresult cuLaunchKernelEx(const CUlaunchConfig *c, CUfunction f, void **params,
				   void **extra)
{
	if (!c)
		return GBPF_CUDA_ERROR_INVALID_VALUE;
	return log_launch("cuLaunchKernelEx", f, c->gridDimX, c->gridDimY, c->gridDimZ,
			  c->blockDimX, c->blockDimY, c->blockDimZ, c->sharedMemBytes, c->hStream,
			  params);
}

FAKE_API CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *c, CUfunction f, void **params,
					void **extra)
{
	if (!c)
		return GBPF_CUDA_ERROR_INVALID_VALUE;
	return log_launch("cuLaunchKernelEx_ptsz", f, c->gridDimX, c->gridDimY, c->gridDimZ,
			  c->blockDimX, c->blockDimY, c->blockDimZ, c->sharedMemBytes, c->hStream,
			  params);
}

/* ---- streams and events ---- */

FAKE_API CUresult cuStreamSynchronize(CUstream s)
{
	fake_log("cuStreamSynchronize %p", (void *)s);
	return 0;
}

FAKE_API CUresult cuStreamSynchronize_ptsz(CUstream s)
{
	fake_log("cuStreamSynchronize_ptsz %p", (void *)s);
	return 0;
}

FAKE_API CUresult cuGetErrorString(CUresult e, const char **s)
{
	if (s)
		*s = "fake driver error";
	return 0;
}

FAKE_API CUresult cuGetErrorName(CUresult e, const char **s)
{
	if (s)
		*s = "CUDA_ERROR_FAKE";
	return 0;
}

FAKE_API CUresult cuEventSynchronize(CUevent e)
{
	fake_log("cuEventSynchronize %p", (void *)e);
	return 0;
}

/*
 * cudart's private driver interfaces (cuGetExportTable, tables selected by
 * a 16-byte id). Their layout is undocumented; what is here was learnt by
 * watching which slots cudart 13 calls against this fake, and is just
 * enough to get past them: slot 0 of a table holds its size, slot 2 of
 * 6bd5fb6c... returns the primary context, slots 2 and 6 of a094798c...
 * report capability numbers cudart compares against minima (it reads
 * *b > 0x20a after slot 2 and *b > 0xd after slot 6). Other slots succeed
 * without doing anything. cudart then asks table d4082055... for an
 * integrity check that this fake cannot answer: it stops there with
 * cudaErrorIntegrityCheckFailed (see README.md).
 */
#define EXPORT_SLOTS 48
#define EXPORT_TABLES 8

static CUresult export_noop(void)
{
	return 0;
}

static CUresult export_primary_ctx(CUcontext *pctx, CUdevice dev)
{
	fake_log("export primary_ctx %d", dev);
	if (!pctx)
		return GBPF_CUDA_ERROR_INVALID_VALUE;
	*pctx = (CUcontext)&fake_ctx_storage;
	return 0;
}

static CUresult export_caps_a(unsigned long long *a, unsigned long long *b)
{
	if (b)
		*b = 0x1000;
	return 0;
}

static CUresult export_caps_b(unsigned long long *a, unsigned long long *b)
{
	if (b)
		*b = 0x100;
	return 0;
}

static struct {
	unsigned char id[16];
	void *slots[EXPORT_SLOTS];
} export_tables[EXPORT_TABLES];
static int export_used;

FAKE_API CUresult cuGetExportTable(const void **table, const void *uuid)
{
	static const unsigned char id_cudart[4] = {0x6b, 0xd5, 0xfb, 0x6c};
	static const unsigned char id_caps[4] = {0xa0, 0x94, 0x79, 0x8c};
	const unsigned char *u = uuid;
	int t;

	if (!table || !u)
		return GBPF_CUDA_ERROR_INVALID_VALUE;
	fake_log("cuGetExportTable %02x%02x%02x%02x", u[0], u[1], u[2], u[3]);
	for (t = 0; t < export_used; t++)
		if (!memcmp(export_tables[t].id, u, 16))
			break;
	if (t == export_used) {
		if (export_used == EXPORT_TABLES)
			return GBPF_CUDA_ERROR_NOT_SUPPORTED;
		memcpy(export_tables[t].id, u, 16);
		export_tables[t].slots[0] = (void *)(uintptr_t)(EXPORT_SLOTS * sizeof(void *));
		for (int i = 1; i < EXPORT_SLOTS; i++)
			export_tables[t].slots[i] = (void *)export_noop;
		if (!memcmp(u, id_cudart, 4)) {
			export_tables[t].slots[2] = (void *)export_primary_ctx;
		} else if (!memcmp(u, id_caps, 4)) {
			export_tables[t].slots[2] = (void *)export_caps_a;
			export_tables[t].slots[6] = (void *)export_caps_b;
		}
		export_used++;
	}
	*table = export_tables[t].slots;
	return 0;
}

/* ---- cuGetProcAddress ---- */

struct fake_proc {
	const char *name;
	int min_version; /* the entry applies from this version on */
	void *legacy;
	void *ptsz;      /* per-thread variant, NULL if none */
};

CUresult cuGetProcAddress(const char *symbol, void **pfn, int version, cuuint64_t flags);
CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version, cuuint64_t flags,
			     CUdriverProcAddressQueryResult *status);

#define P(n, v) {#n, v, (void *)n, NULL}
#define PT(n, v, pt) {#n, v, (void *)n, (void *)pt}
#define PN(n, v, f) {#n, v, (void *)f, NULL}
static const struct fake_proc fake_procs[] = {
	PN(cuGetProcAddress, 11030, cuGetProcAddress),
	PN(cuGetProcAddress, 12000, cuGetProcAddress_v2),
	P(cuInit, 2000),
	P(cuDriverGetVersion, 2020),
	P(cuDeviceGetCount, 2000),
	P(cuDeviceGet, 2000),
	P(cuDeviceGetName, 2000),
	PN(cuDeviceGetUuid, 9020, cuDeviceGetUuid),
	PN(cuDeviceGetUuid, 11040, cuDeviceGetUuid),
	P(cuDeviceGetLuid, 10000),
	PN(cuDeviceTotalMem, 3020, cuDeviceTotalMem_v2),
	P(cuDeviceGetAttribute, 2000),
	P(cuDevicePrimaryCtxRetain, 7000),
	PN(cuDevicePrimaryCtxRelease, 11000, cuDevicePrimaryCtxRelease_v2),
	P(cuDevicePrimaryCtxGetState, 7000),
	PN(cuDevicePrimaryCtxSetFlags, 11000, cuDevicePrimaryCtxSetFlags_v2),
	PN(cuDevicePrimaryCtxReset, 11000, cuDevicePrimaryCtxReset_v2),
	P(cuCtxGetCurrent, 4000),
	P(cuCtxSetCurrent, 4000),
	PN(cuCtxPushCurrent, 4000, cuCtxPushCurrent_v2),
	PN(cuCtxPopCurrent, 4000, cuCtxPopCurrent_v2),
	P(cuCtxGetDevice, 2000),
	P(cuCtxGetFlags, 7000),
	P(cuCtxGetApiVersion, 3020),
	P(cuCtxGetId, 12000),
	P(cuCtxGetLimit, 3010),
	P(cuCtxSetLimit, 3010),
	P(cuCtxSynchronize, 2000),
	PN(cuCtxSynchronize, 13000, cuCtxSynchronize_v2),
	PN(cuCtxCreate, 12050, cuCtxCreate_v4),
	PN(cuMemAlloc, 3020, cuMemAlloc_v2),
	PN(cuMemFree, 3020, cuMemFree_v2),
	PN(cuMemGetInfo, 3020, cuMemGetInfo_v2),
	PN(cuMemcpyHtoD, 3020, cuMemcpyHtoD_v2),
	PN(cuMemcpyDtoH, 3020, cuMemcpyDtoH_v2),
	P(cuMemcpy, 4000),
	PT(cuMemcpyAsync, 4000, cuMemcpyAsync_ptsz),
	PN(cuMemsetD8, 3020, cuMemsetD8_v2),
	P(cuMemsetD32Async, 3020),
	P(cuModuleLoadData, 2000),
	P(cuModuleLoadDataEx, 2010),
	P(cuModuleLoadFatBinary, 2000),
	P(cuModuleUnload, 2000),
	P(cuModuleGetLoadingMode, 11070),
	P(cuModuleGetFunction, 2000),
	P(cuLibraryLoadData, 12000),
	P(cuLibraryUnload, 12000),
	P(cuLibraryGetKernel, 12000),
	P(cuLibraryGetModule, 12000),
	P(cuKernelGetFunction, 12000),
	P(cuKernelGetName, 12030),
	P(cuKernelGetAttribute, 12000),
	P(cuKernelSetAttribute, 12000),
	P(cuFuncGetName, 12030),
	P(cuFuncGetAttribute, 2020),
	P(cuFuncSetAttribute, 9000),
	P(cuFuncSetCacheConfig, 3000),
	PT(cuLaunchKernel, 4000, cuLaunchKernel_ptsz),
	PT(cuLaunchKernelEx, 11060, cuLaunchKernelEx_ptsz),
	PT(cuStreamSynchronize, 2000, cuStreamSynchronize_ptsz),
	P(cuGetErrorString, 6000),
	P(cuGetErrorName, 6000),
	P(cuGetExportTable, 3000),
	P(cuEventSynchronize, 2000),
};

static CUresult lookup(const char *symbol, void **pfn, int version, cuuint64_t flags,
		       CUdriverProcAddressQueryResult *status)
{
	const struct fake_proc *best = NULL;
	int known = 0;

	for (size_t i = 0; i < sizeof(fake_procs) / sizeof(fake_procs[0]); i++) {
		const struct fake_proc *p = &fake_procs[i];

		if (strcmp(p->name, symbol) != 0)
			continue;
		known = 1;
		if (p->min_version <= version && (!best || p->min_version > best->min_version))
			best = p;
	}
	fake_log("gpa %s %d %llu %s", symbol, version, (unsigned long long)flags,
		 best ? "found" : "missing");
	if (!best) {
		*pfn = NULL;
		if (status)
			*status = known ? GBPF_CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
					: GBPF_CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
		return GBPF_CUDA_ERROR_NOT_FOUND;
	}
	*pfn = (flags & GBPF_CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) && best->ptsz
		       ? best->ptsz
		       : best->legacy;
	if (status)
		*status = GBPF_CU_GET_PROC_ADDRESS_SUCCESS;
	return 0;
}

FAKE_API CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version,
				      cuuint64_t flags, CUdriverProcAddressQueryResult *status)
{
	if (!symbol || !pfn)
		return GBPF_CUDA_ERROR_INVALID_VALUE;
	return lookup(symbol, pfn, version, flags, status);
}

FAKE_API CUresult cuGetProcAddress(const char *symbol, void **pfn, int version, cuuint64_t flags)
{
	if (!symbol || !pfn)
		return GBPF_CUDA_ERROR_INVALID_VALUE;
	return lookup(symbol, pfn, version, flags, NULL);
}
