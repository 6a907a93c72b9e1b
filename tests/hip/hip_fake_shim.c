/* SPDX-License-Identifier: MIT */
/*
 * Fake-device HIP runtime for tests, built twice: as an LD_PRELOAD shim in
 * front of the real libamdhip64, and as a fake libamdhip64.so.5 that
 * LD_LIBRARY_PATH puts first (tests/hip/fakert). It implements the
 * registration, module and launch entry points a hipcc-built or
 * runtime-dlopening application uses, logs each call (one line per event to
 * $GBPF_HIP_SHIM_LOG) and answers as a device would: push/pop of the launch
 * configuration, hipMalloc as calloc, modules and functions as handles.
 * hipGetDeviceCount says there is no device. With $GBPF_HIP_SHIM_DUMP set,
 * every registered fat binary and loaded module image is written there
 * (fatbin-N.bin, module-N.bin, N counting from 0) so that tests can check
 * the bytes the runtime was given.
 * Built without sanitizers: it runs inside an uninstrumented application.
 */
#include <stdarg.h>
#include <stdatomic.h>
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

/* Sequence numbers of dumped images. */
static atomic_uint shim_fatbin_seq, shim_module_seq;

/* Write @p n bytes to $GBPF_HIP_SHIM_DUMP/<kind>-<seq>.bin (nothing without the variable). */
static void shim_dump(const char *kind, unsigned seq, const void *p, size_t n)
{
	const char *dir = getenv("GBPF_HIP_SHIM_DUMP");
	char path[4096];
	FILE *f;

	if (!dir || !p || !n)
		return;
	snprintf(path, sizeof(path), "%s/%s-%u.bin", dir, kind, seq);
	f = fopen(path, "wb");
	if (!f)
		return;
	fwrite(p, 1, n, f);
	fclose(f);
}

/* Bytes of a plain offload bundle: the end of its last entry (0 if not one). */
static size_t shim_bundle_size(const uint8_t *b)
{
	uint64_t n = 0, pos = 32, end = 0;

	if (memcmp(b, "__CLANG_OFFLOAD_BUNDLE__", 24))
		return 0;
	memcpy(&n, b + 24, 8);
	for (uint64_t i = 0; i < n && i < 64; i++) {
		uint64_t off, size, idl;

		memcpy(&off, b + pos, 8);
		memcpy(&size, b + pos + 8, 8);
		memcpy(&idl, b + pos + 16, 8);
		if (idl > 200)
			return 0;
		if (off + size > end)
			end = off + size;
		pos += 24 + idl;
	}
	return end > pos ? end : pos;
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
	{
		unsigned seq = atomic_fetch_add(&shim_fatbin_seq, 1);

		shim_dump("fatbin", seq, w->bundle, shim_bundle_size(w->bundle));
		shim_log("register_fatbin entries=%llu seq=%u", (unsigned long long)n, seq);
	}
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

SHIM_EXPORT int hipGetDeviceCount(int *n);
SHIM_EXPORT int hipGetDeviceCount(int *n)
{
	if (n)
		*n = 0;
	shim_log("device_count 0");
	return 100; /* hipErrorNoDevice */
}

/* The current device: 2, so that a host/launch probe's ctx->device shows where it came from. */
SHIM_EXPORT int hipGetDevice(int *d);
SHIM_EXPORT int hipGetDevice(int *d)
{
	if (d)
		*d = 2;
	return 0;
}

/* ---- modules ---- */

struct shim_module {
	unsigned seq;
};

struct shim_function {
	unsigned module;
	char name[256];
};

/* Bytes of an ELF image: the end of its section header table or last section. */
static size_t shim_elf_size(const uint8_t *p)
{
	uint64_t shoff, end;
	uint16_t shnum, shentsize;

	memcpy(&shoff, p + 0x28, 8);
	memcpy(&shentsize, p + 0x3a, 2);
	memcpy(&shnum, p + 0x3c, 2);
	end = shoff + (uint64_t)shnum * shentsize;
	for (unsigned i = 0; i < shnum; i++) {
		uint64_t off, size;
		uint32_t type;

		memcpy(&type, p + shoff + (uint64_t)i * shentsize + 4, 4);
		memcpy(&off, p + shoff + (uint64_t)i * shentsize + 0x18, 8);
		memcpy(&size, p + shoff + (uint64_t)i * shentsize + 0x20, 8);
		if (type != 8 /* SHT_NOBITS */ && off + size > end)
			end = off + size;
	}
	return end;
}

static int shim_module_new(const char *via, const void *image, size_t size, void **module)
{
	struct shim_module *m = calloc(1, sizeof(*m));
	const uint8_t *p = image;
	const char *kind = "unknown";

	if (!m || !p)
		return 1; /* hipErrorInvalidValue */
	if (!memcmp(p, "\177ELF", 4)) {
		kind = "elf";
		if (!size)
			size = shim_elf_size(p);
	} else if (!memcmp(p, "__CLANG_OFFLOAD_BUNDLE__", 24)) {
		kind = "bundle";
		if (!size)
			size = shim_bundle_size(p);
	}
	m->seq = atomic_fetch_add(&shim_module_seq, 1);
	shim_dump("module", m->seq, image, size);
	shim_log("module_load via=%s kind=%s bytes=%zu seq=%u", via, kind, size, m->seq);
	*module = m;
	return 0;
}

SHIM_EXPORT int hipModuleLoadData(void **module, const void *image);
SHIM_EXPORT int hipModuleLoadData(void **module, const void *image)
{
	return shim_module_new("hipModuleLoadData", image, 0, module);
}

SHIM_EXPORT int hipModuleLoadDataEx(void **module, const void *image, unsigned n, void *opts, void **vals);
SHIM_EXPORT int hipModuleLoadDataEx(void **module, const void *image, unsigned n, void *opts, void **vals)
{
	(void)n, (void)opts, (void)vals;
	return shim_module_new("hipModuleLoadDataEx", image, 0, module);
}

SHIM_EXPORT int hipModuleLoad(void **module, const char *path);
SHIM_EXPORT int hipModuleLoad(void **module, const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	long len = 0;
	int rc = 301; /* hipErrorFileNotFound */

	if (f && fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0 &&
	    (buf = malloc((size_t)len)) && fread(buf, 1, (size_t)len, f) == (size_t)len)
		rc = shim_module_new("hipModuleLoad", buf, (size_t)len, module);
	if (f)
		fclose(f);
	free(buf);
	return rc;
}

SHIM_EXPORT int hipModuleGetFunction(void **function, void *module, const char *name);
SHIM_EXPORT int hipModuleGetFunction(void **function, void *module, const char *name)
{
	struct shim_function *fn = calloc(1, sizeof(*fn));

	if (!fn || !module || !name)
		return 1;
	fn->module = ((struct shim_module *)module)->seq;
	snprintf(fn->name, sizeof(fn->name), "%s", name);
	shim_log("module_function module=%u name=%s", fn->module, name);
	*function = fn;
	return 0;
}

SHIM_EXPORT int hipModuleUnload(void *module);
SHIM_EXPORT int hipModuleUnload(void *module)
{
	shim_log("module_unload");
	free(module);
	return 0;
}

/* ---- the other launch entry points ---- */

SHIM_EXPORT int hipModuleLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
				      unsigned bz, unsigned shmem, void *stream, void **params, void **extra);
SHIM_EXPORT int hipModuleLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
				      unsigned bz, unsigned shmem, void *stream, void **params, void **extra)
{
	(void)stream, (void)params, (void)extra;
	shim_log("launch via=hipModuleLaunchKernel name=%s grid=%u,%u,%u block=%u,%u,%u shmem=%u",
		 ((struct shim_function *)f)->name, gx, gy, gz, bx, by, bz, shmem);
	return 0;
}

static int shim_ext_module_launch(void *f, uint32_t gx, uint32_t gy, uint32_t gz, uint32_t lx, uint32_t ly,
				  uint32_t lz, size_t shmem)
{
	shim_log("launch via=hipExtModuleLaunchKernel name=%s global=%u,%u,%u local=%u,%u,%u shmem=%zu",
		 ((struct shim_function *)f)->name, gx, gy, gz, lx, ly, lz, shmem);
	return 0;
}

SHIM_EXPORT int hipExtModuleLaunchKernel(void *f, uint32_t gx, uint32_t gy, uint32_t gz, uint32_t lx, uint32_t ly,
					 uint32_t lz, size_t shmem, void *stream, void **params, void **extra,
					 void *start, void *stop, uint32_t flags);
SHIM_EXPORT int hipExtModuleLaunchKernel(void *f, uint32_t gx, uint32_t gy, uint32_t gz, uint32_t lx, uint32_t ly,
					 uint32_t lz, size_t shmem, void *stream, void **params, void **extra,
					 void *start, void *stop, uint32_t flags)
{
	(void)stream, (void)params, (void)extra, (void)start, (void)stop, (void)flags;
	return shim_ext_module_launch(f, gx, gy, gz, lx, ly, lz, shmem);
}

/* HIP 5.x's C++-linkage name of the same function. */
SHIM_EXPORT int _Z24hipExtModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_j(
	void *f, uint32_t gx, uint32_t gy, uint32_t gz, uint32_t lx, uint32_t ly, uint32_t lz, size_t shmem,
	void *stream, void **params, void **extra, void *start, void *stop, uint32_t flags);
SHIM_EXPORT int _Z24hipExtModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_j(
	void *f, uint32_t gx, uint32_t gy, uint32_t gz, uint32_t lx, uint32_t ly, uint32_t lz, size_t shmem,
	void *stream, void **params, void **extra, void *start, void *stop, uint32_t flags)
{
	(void)stream, (void)params, (void)extra, (void)start, (void)stop, (void)flags;
	return shim_ext_module_launch(f, gx, gy, gz, lx, ly, lz, shmem);
}

SHIM_EXPORT int hipLaunchCooperativeKernel(const void *f, shim_dim3 grid, shim_dim3 block, void **args,
					   unsigned shmem, void *stream);
SHIM_EXPORT int hipLaunchCooperativeKernel(const void *f, shim_dim3 grid, shim_dim3 block, void **args,
					   unsigned shmem, void *stream)
{
	(void)args, (void)stream;
	shim_log("launch via=hipLaunchCooperativeKernel name=%s grid=%u,%u,%u block=%u,%u,%u shmem=%u", shim_name(f),
		 grid.x, grid.y, grid.z, block.x, block.y, block.z, shmem);
	return 0;
}

SHIM_EXPORT int hipExtLaunchKernel(const void *f, shim_dim3 grid, shim_dim3 block, void **args, size_t shmem,
				   void *stream, void *start, void *stop, int flags);
SHIM_EXPORT int hipExtLaunchKernel(const void *f, shim_dim3 grid, shim_dim3 block, void **args, size_t shmem,
				   void *stream, void *start, void *stop, int flags)
{
	(void)args, (void)stream, (void)start, (void)stop, (void)flags;
	shim_log("launch via=hipExtLaunchKernel name=%s grid=%u,%u,%u block=%u,%u,%u shmem=%zu", shim_name(f), grid.x,
		 grid.y, grid.z, block.x, block.y, block.z, shmem);
	return 0;
}

SHIM_EXPORT int hipMemcpy(void *dst, const void *src, size_t n, int kind);
SHIM_EXPORT int hipMemcpy(void *dst, const void *src, size_t n, int kind)
{
	(void)kind;
	memmove(dst, src, n);
	return 0;
}
