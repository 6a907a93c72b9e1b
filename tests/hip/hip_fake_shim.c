/* SPDX-License-Identifier: MIT */
/*
 * Fake-device HIP shim for tests (LD_PRELOAD): interposes the registration
 * and launch entry points a hipcc-built application imports, logs each call
 * (one line per event to $GBPF_HIP_SHIM_LOG) and answers as a device would:
 * push/pop of the launch configuration, hipMalloc as calloc. With the real
 * runtime and no GPU, __hipPushCallConfiguration returns an error so <<<>>>
 * never reaches hipLaunchKernel; with this shim the app runs to its end.
 * Built without sanitizers: it runs inside an uninstrumented application.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SHIM_EXPORT __attribute__((visibility("default")))
#define SHIM_MAX_FUNCS 1024

typedef struct {
	uint32_t x, y, z;
} shim_dim3;

struct shim_func {
	const void *host;
	char name[256];
};

/* Registered kernels of the process (host stub -> device name). */
static struct shim_func shim_funcs[SHIM_MAX_FUNCS];
static size_t shim_nfuncs;
/* The configuration of the pending <<<>>> launch (one per thread). */
static _Thread_local shim_dim3 shim_cfg_grid, shim_cfg_block;
static _Thread_local size_t shim_cfg_shmem;
static _Thread_local void *shim_cfg_stream;

static void shim_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void shim_log(const char *fmt, ...)
{
	const char *path = getenv("GBPF_HIP_SHIM_LOG");
	FILE *f = path ? fopen(path, "a") : stderr;
	va_list ap;

	if (!f)
		return;
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
	if (f != stderr)
		fclose(f);
}

struct hip_fatbin_wrapper {
	uint32_t magic, version;
	const uint8_t *bundle;
	void *unused;
};

SHIM_EXPORT void **__hipRegisterFatBinary(const void *data);
SHIM_EXPORT void **__hipRegisterFatBinary(const void *data)
{
	const struct hip_fatbin_wrapper *w = data;
	static void *handle[4];
	uint64_t n = 0, pos = 32;

	if (!w || w->magic != 0x48495046u || !w->bundle ||
	    memcmp(w->bundle, "__CLANG_OFFLOAD_BUNDLE__", 24)) {
		shim_log("register_fatbin bad_wrapper");
		return handle;
	}
	memcpy(&n, w->bundle + 24, 8);
	shim_log("register_fatbin entries=%llu", (unsigned long long)n);
	for (uint64_t i = 0; i < n && i < 64; i++) {
		uint64_t off, size, idl;

		memcpy(&off, w->bundle + pos, 8);
		memcpy(&size, w->bundle + pos + 8, 8);
		memcpy(&idl, w->bundle + pos + 16, 8);
		if (idl > 200)
			break;
		shim_log("bundle_entry id=%.*s size=%llu elf=%d", (int)idl, (const char *)w->bundle + pos + 24,
			 (unsigned long long)size, size >= 4 && !memcmp(w->bundle + off, "\177ELF", 4));
		pos += 24 + idl;
	}
	return handle;
}

SHIM_EXPORT void __hipRegisterFunction(void **modules, const void *host, char *device_fn, const char *device_name,
				       unsigned thread_limit, void *tid, void *bid, void *block_dim, void *grid_dim,
				       int *wsize);
SHIM_EXPORT void __hipRegisterFunction(void **modules, const void *host, char *device_fn, const char *device_name,
				       unsigned thread_limit, void *tid, void *bid, void *block_dim, void *grid_dim,
				       int *wsize)
{
	(void)modules, (void)device_fn, (void)thread_limit, (void)tid, (void)bid, (void)block_dim, (void)grid_dim;
	(void)wsize;
	if (shim_nfuncs < SHIM_MAX_FUNCS) {
		shim_funcs[shim_nfuncs].host = host;
		snprintf(shim_funcs[shim_nfuncs].name, sizeof(shim_funcs[0].name), "%s", device_name);
		shim_nfuncs++;
	}
	shim_log("register_function name=%s", device_name);
}

SHIM_EXPORT void __hipUnregisterFatBinary(void **modules);
SHIM_EXPORT void __hipUnregisterFatBinary(void **modules)
{
	(void)modules;
	shim_log("unregister_fatbin");
}

SHIM_EXPORT int __hipPushCallConfiguration(shim_dim3 grid, shim_dim3 block, size_t shmem, void *stream);
SHIM_EXPORT int __hipPushCallConfiguration(shim_dim3 grid, shim_dim3 block, size_t shmem, void *stream)
{
	shim_cfg_grid = grid;
	shim_cfg_block = block;
	shim_cfg_shmem = shmem;
	shim_cfg_stream = stream;
	return 0;
}

SHIM_EXPORT int __hipPopCallConfiguration(shim_dim3 *grid, shim_dim3 *block, size_t *shmem, void **stream);
SHIM_EXPORT int __hipPopCallConfiguration(shim_dim3 *grid, shim_dim3 *block, size_t *shmem, void **stream)
{
	*grid = shim_cfg_grid;
	*block = shim_cfg_block;
	*shmem = shim_cfg_shmem;
	*stream = shim_cfg_stream;
	return 0;
}

static const char *shim_name(const void *host)
{
	for (size_t i = 0; i < shim_nfuncs; i++)
		if (shim_funcs[i].host == host)
			return shim_funcs[i].name;
	return "?";
}

SHIM_EXPORT int hipLaunchKernel(const void *f, shim_dim3 grid, shim_dim3 block, void **args, size_t shmem,
				void *stream);
SHIM_EXPORT int hipLaunchKernel(const void *f, shim_dim3 grid, shim_dim3 block, void **args, size_t shmem,
				void *stream)
{
	(void)args, (void)stream;
	shim_log("launch via=hipLaunchKernel name=%s grid=%u,%u,%u block=%u,%u,%u shmem=%zu", shim_name(f), grid.x,
		 grid.y, grid.z, block.x, block.y, block.z, shmem);
	return 0;
}

SHIM_EXPORT int hipMalloc(void **p, size_t n);
SHIM_EXPORT int hipMalloc(void **p, size_t n)
{
	*p = calloc(1, n ? n : 1);
	shim_log("malloc bytes=%zu", n);
	return *p ? 0 : 2;
}

SHIM_EXPORT int hipFree(void *p);
SHIM_EXPORT int hipFree(void *p)
{
	free(p);
	return 0;
}

SHIM_EXPORT int hipGetLastError(void);
SHIM_EXPORT int hipGetLastError(void)
{
	return 0;
}

SHIM_EXPORT int hipDeviceSynchronize(void);
SHIM_EXPORT int hipDeviceSynchronize(void)
{
	shim_log("sync");
	return 0;
}
