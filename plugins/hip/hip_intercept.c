/* SPDX-License-Identifier: MIT */
/*
 * The HIP runtime interposers of the hip plugin (see hip_intercept.h).
 * Exported by hip_agent.map; they only interpose when the plugin is
 * preloaded (`gbpf run`). Each one tells the agent side what happens and
 * forwards to the runtime: nothing here changes arguments except the image
 * a registration or module load passes, which the agent may replace by
 * its rewritten copy.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gbpf/plugin.h>

#include "hip_intercept.h"

#define HIP_EXPORT __attribute__((visibility("default")))
/* hipErrorNotInitialized: what we answer when no runtime is loaded at all */
#define HIP_ERR_NOT_INITIALIZED 3
/* hipModuleLoad of files larger than this goes to the runtime untouched */
#define HIP_MAX_MODULE_FILE (1ull << 30)

static const char *const hip_fn_names[HIP_FN_N] = {
	[HIP_FN_REGISTER_FATBIN] = "__hipRegisterFatBinary",
	[HIP_FN_REGISTER_FUNCTION] = "__hipRegisterFunction",
	[HIP_FN_UNREGISTER_FATBIN] = "__hipUnregisterFatBinary",
	[HIP_FN_MODULE_LOAD] = "hipModuleLoad",
	[HIP_FN_MODULE_LOAD_DATA] = "hipModuleLoadData",
	[HIP_FN_MODULE_LOAD_DATA_EX] = "hipModuleLoadDataEx",
	[HIP_FN_MODULE_GET_FUNCTION] = "hipModuleGetFunction",
	[HIP_FN_LAUNCH_KERNEL] = "hipLaunchKernel",
	[HIP_FN_MODULE_LAUNCH_KERNEL] = "hipModuleLaunchKernel",
	[HIP_FN_EXT_MODULE_LAUNCH_KERNEL] = "hipExtModuleLaunchKernel",
	[HIP_FN_EXT_MODULE_LAUNCH_KERNEL_CXX] =
		"_Z24hipExtModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_j",
	[HIP_FN_LAUNCH_COOPERATIVE_KERNEL] = "hipLaunchCooperativeKernel",
	[HIP_FN_EXT_LAUNCH_KERNEL] = "hipExtLaunchKernel",
	[HIP_FN_GET_DEVICE_COUNT] = "hipGetDeviceCount",
	[HIP_FN_GET_DEVICE] = "hipGetDevice",
	[HIP_FN_GET_STREAM_DEVICE_ID] = "hipGetStreamDeviceId",
};

/*
 * The runtime's entry points, resolved once: from RTLD_NEXT (the app
 * links libamdhip64) or from the application's own dlsym on a handle of
 * the runtime (the app dlopens it). Written once, read by every thread.
 */
static _Atomic(void *) hip_real_fns[HIP_FN_N];
/* The runtime handle an application that dlopens it looked a wrapped name up in. */
static _Atomic(void *) hip_runtime_handle;

typedef void *(*hip_dlsym_fn)(void *, const char *);
/* glibc's dlsym (never our override), found through dlvsym */
static _Atomic(hip_dlsym_fn) hip_libc_dlsym;

static hip_dlsym_fn libc_dlsym(void)
{
	hip_dlsym_fn f = atomic_load_explicit(&hip_libc_dlsym, memory_order_acquire);

	if (!f) {
		/* glibc 2.34 moved dlsym into libc under a new version */
		f = (hip_dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
		if (!f)
			f = (hip_dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
		atomic_store_explicit(&hip_libc_dlsym, f, memory_order_release);
	}
	return f;
}

const char *hip_fn_name(enum hip_fn fn)
{
	return (unsigned)fn < HIP_FN_N ? hip_fn_names[fn] : "?";
}

void *hip_real(enum hip_fn fn)
{
	void *p;
	hip_dlsym_fn ds;

	if ((unsigned)fn >= HIP_FN_N)
		return NULL;
	p = atomic_load_explicit(&hip_real_fns[fn], memory_order_acquire);
	if (p)
		return p;
	ds = libc_dlsym();
	p = ds ? ds(RTLD_NEXT, hip_fn_names[fn]) : NULL;
	if (!p && ds && atomic_load_explicit(&hip_runtime_handle, memory_order_acquire))
		p = ds(atomic_load_explicit(&hip_runtime_handle, memory_order_acquire), hip_fn_names[fn]);
	if (p)
		atomic_store_explicit(&hip_real_fns[fn], p, memory_order_release);
	return p;
}

/* ---- registration ---- */

HIP_EXPORT void **__hipRegisterFatBinary(const void *data);
HIP_EXPORT void **__hipRegisterFatBinary(const void *data)
{
	void **(*real)(const void *) = (void **(*)(const void *))hip_real(HIP_FN_REGISTER_FATBIN);

	if (!real)
		return NULL;
	return real(hip_agent_fatbin(data));
}

HIP_EXPORT void __hipRegisterFunction(void **modules, const void *host, char *device_fn, const char *device_name,
				      unsigned thread_limit, void *tid, void *bid, void *block_dim, void *grid_dim,
				      int *wsize);
HIP_EXPORT void __hipRegisterFunction(void **modules, const void *host, char *device_fn, const char *device_name,
				      unsigned thread_limit, void *tid, void *bid, void *block_dim, void *grid_dim,
				      int *wsize)
{
	void (*real)(void **, const void *, char *, const char *, unsigned, void *, void *, void *, void *, int *) =
		(void (*)(void **, const void *, char *, const char *, unsigned, void *, void *, void *, void *,
			  int *))hip_real(HIP_FN_REGISTER_FUNCTION);

	hip_agent_function(host, device_name);
	if (real)
		real(modules, host, device_fn, device_name, thread_limit, tid, bid, block_dim, grid_dim, wsize);
}

HIP_EXPORT void __hipUnregisterFatBinary(void **modules);
HIP_EXPORT void __hipUnregisterFatBinary(void **modules)
{
	void (*real)(void **) = (void (*)(void **))hip_real(HIP_FN_UNREGISTER_FATBIN);

	/* The rewritten images stay allocated: the runtime may still read
	 * them until this returns, and another registration may share them. */
	if (real)
		real(modules);
}

/* ---- modules ---- */

typedef int (*hip_load_data_fn)(void **, const void *);

HIP_EXPORT int hipModuleLoadData(void **module, const void *image);
HIP_EXPORT int hipModuleLoadData(void **module, const void *image)
{
	hip_load_data_fn real = (hip_load_data_fn)hip_real(HIP_FN_MODULE_LOAD_DATA);

	if (!real)
		return HIP_ERR_NOT_INITIALIZED;
	return real(module, hip_agent_module_image("hipModuleLoadData", image, 0));
}

HIP_EXPORT int hipModuleLoadDataEx(void **module, const void *image, unsigned n_opts, void *opts, void **values);
HIP_EXPORT int hipModuleLoadDataEx(void **module, const void *image, unsigned n_opts, void *opts, void **values)
{
	int (*real)(void **, const void *, unsigned, void *, void **) =
		(int (*)(void **, const void *, unsigned, void *, void **))hip_real(HIP_FN_MODULE_LOAD_DATA_EX);

	if (!real)
		return HIP_ERR_NOT_INITIALIZED;
	return real(module, hip_agent_module_image("hipModuleLoadDataEx", image, 0), n_opts, opts, values);
}

/* The whole file, when it is a plausible code object (bounded), else NULL. */
static void *read_module_file(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	long len;
	void *buf = NULL;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) > 0 && (unsigned long long)len <= HIP_MAX_MODULE_FILE &&
	    fseek(f, 0, SEEK_SET) == 0) {
		buf = malloc((size_t)len);
		if (buf && fread(buf, 1, (size_t)len, f) != (size_t)len) {
			free(buf);
			buf = NULL;
		}
		*size = (size_t)len;
	}
	fclose(f);
	return buf;
}

HIP_EXPORT int hipModuleLoad(void **module, const char *fname);
HIP_EXPORT int hipModuleLoad(void **module, const char *fname)
{
	int (*real)(void **, const char *) = (int (*)(void **, const char *))hip_real(HIP_FN_MODULE_LOAD);
	hip_load_data_fn load_data = (hip_load_data_fn)hip_real(HIP_FN_MODULE_LOAD_DATA);
	size_t size = 0;
	void *image;
	const void *use;
	int rc;

	if (!real)
		return HIP_ERR_NOT_INITIALIZED;
	/* Read the file only to rewrite it; a file we cannot read is the runtime's to report. */
	image = fname && load_data ? read_module_file(fname, &size) : NULL;
	if (!image)
		return real(module, fname);
	use = hip_agent_module_image("hipModuleLoad", image, size);
	if (use == image) {
		free(image);
		return real(module, fname);
	}
	rc = load_data(module, use);
	free(image);
	return rc;
}

HIP_EXPORT int hipModuleGetFunction(void **function, void *module, const char *name);
HIP_EXPORT int hipModuleGetFunction(void **function, void *module, const char *name)
{
	int (*real)(void **, void *, const char *) =
		(int (*)(void **, void *, const char *))hip_real(HIP_FN_MODULE_GET_FUNCTION);
	int rc;

	if (!real)
		return HIP_ERR_NOT_INITIALIZED;
	rc = real(function, module, name);
	if (rc == 0 && function && name)
		hip_agent_module_function(*function, name);
	return rc;
}

/* ---- launches ---- */

static void launch_seen(const char *api, const void *handle, int module_function, struct hip_dim3 grid,
			struct hip_dim3 block, size_t shmem, void *stream)
{
	struct hip_launch l = {
		.api = api,
		.kernel = hip_agent_kernel_name(handle, module_function),
		.grid = grid,
		.block = block,
		.shmem = shmem,
		.stream = stream,
	};

	hip_agent_launch(&l);
}

HIP_EXPORT int hipLaunchKernel(const void *f, struct hip_dim3 grid, struct hip_dim3 block, void **args,
			       size_t shmem, void *stream);
HIP_EXPORT int hipLaunchKernel(const void *f, struct hip_dim3 grid, struct hip_dim3 block, void **args,
			       size_t shmem, void *stream)
{
	int (*real)(const void *, struct hip_dim3, struct hip_dim3, void **, size_t, void *) =
		(int (*)(const void *, struct hip_dim3, struct hip_dim3, void **, size_t, void *))hip_real(
			HIP_FN_LAUNCH_KERNEL);

	if (!real)
		return HIP_ERR_NOT_INITIALIZED;
	launch_seen("hipLaunchKernel", f, 0, grid, block, shmem, stream);
	return real(f, grid, block, args, shmem, stream);
}

HIP_EXPORT int hipExtLaunchKernel(const void *f, struct hip_dim3 grid, struct hip_dim3 block, void **args,
				  size_t shmem, void *stream, void *start, void *stop, int flags);
HIP_EXPORT int hipExtLaunchKernel(const void *f, struct hip_dim3 grid, struct hip_dim3 block, void **args,
				  size_t shmem, void *stream, void *start, void *stop, int flags)
{
	int (*real)(const void *, struct hip_dim3, struct hip_dim3, void **, size_t, void *, void *, void *, int) =
		(int (*)(const void *, struct hip_dim3, struct hip_dim3, void **, size_t, void *, void *, void *,
			 int))hip_real(HIP_FN_EXT_LAUNCH_KERNEL);

	if (!real)
		return HIP_ERR_NOT_INITIALIZED;
	launch_seen("hipExtLaunchKernel", f, 0, grid, block, shmem, stream);
	return real(f, grid, block, args, shmem, stream, start, stop, flags);
}

HIP_EXPORT int hipLaunchCooperativeKernel(const void *f, struct hip_dim3 grid, struct hip_dim3 block, void **args,
					  unsigned shmem, void *stream);
HIP_EXPORT int hipLaunchCooperativeKernel(const void *f, struct hip_dim3 grid, struct hip_dim3 block, void **args,
					  unsigned shmem, void *stream)
{
	int (*real)(const void *, struct hip_dim3, struct hip_dim3, void **, unsigned, void *) =
		(int (*)(const void *, struct hip_dim3, struct hip_dim3, void **, unsigned, void *))hip_real(
			HIP_FN_LAUNCH_COOPERATIVE_KERNEL);

	if (!real)
		return HIP_ERR_NOT_INITIALIZED;
	launch_seen("hipLaunchCooperativeKernel", f, 0, grid, block, shmem, stream);
	return real(f, grid, block, args, shmem, stream);
}

HIP_EXPORT int hipModuleLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
				     unsigned bz, unsigned shmem, void *stream, void **params, void **extra);
HIP_EXPORT int hipModuleLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
				     unsigned bz, unsigned shmem, void *stream, void **params, void **extra)
{
	int (*real)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *, void **,
		    void **) = (int (*)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
					 void *, void **, void **))hip_real(HIP_FN_MODULE_LAUNCH_KERNEL);

	if (!real)
		return HIP_ERR_NOT_INITIALIZED;
	launch_seen("hipModuleLaunchKernel", f, 1, (struct hip_dim3){gx, gy, gz}, (struct hip_dim3){bx, by, bz},
		    shmem, stream);
	return real(f, gx, gy, gz, bx, by, bz, shmem, stream, params, extra);
}

typedef int (*hip_ext_module_launch_fn)(void *, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, size_t,
					void *, void **, void **, void *, void *, uint32_t);

/* hipExtModuleLaunchKernel takes global work sizes (threads), not blocks. */
static int ext_module_launch(enum hip_fn fn, void *f, uint32_t gx, uint32_t gy, uint32_t gz, uint32_t lx,
			     uint32_t ly, uint32_t lz, size_t shmem, void *stream, void **params, void **extra,
			     void *start, void *stop, uint32_t flags)
{
	hip_ext_module_launch_fn real = (hip_ext_module_launch_fn)hip_real(fn);
	struct hip_dim3 block = {lx, ly, lz};
	struct hip_dim3 grid = {lx ? (gx + lx - 1) / lx : 0, ly ? (gy + ly - 1) / ly : 0, lz ? (gz + lz - 1) / lz : 0};

	if (!real)
		return HIP_ERR_NOT_INITIALIZED;
	launch_seen("hipExtModuleLaunchKernel", f, 1, grid, block, shmem, stream);
	return real(f, gx, gy, gz, lx, ly, lz, shmem, stream, params, extra, start, stop, flags);
}

HIP_EXPORT int hipExtModuleLaunchKernel(void *f, uint32_t gx, uint32_t gy, uint32_t gz, uint32_t lx, uint32_t ly,
					uint32_t lz, size_t shmem, void *stream, void **params, void **extra,
					void *start, void *stop, uint32_t flags);
HIP_EXPORT int hipExtModuleLaunchKernel(void *f, uint32_t gx, uint32_t gy, uint32_t gz, uint32_t lx, uint32_t ly,
					uint32_t lz, size_t shmem, void *stream, void **params, void **extra,
					void *start, void *stop, uint32_t flags)
{
	return ext_module_launch(HIP_FN_EXT_MODULE_LAUNCH_KERNEL, f, gx, gy, gz, lx, ly, lz, shmem, stream, params,
				 extra, start, stop, flags);
}

/* HIP 5.x exports hipExtModuleLaunchKernel with C++ linkage only (hip_ext.h). */
HIP_EXPORT int _Z24hipExtModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_j(
	void *f, uint32_t gx, uint32_t gy, uint32_t gz, uint32_t lx, uint32_t ly, uint32_t lz, size_t shmem,
	void *stream, void **params, void **extra, void *start, void *stop, uint32_t flags);
HIP_EXPORT int _Z24hipExtModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_j(
	void *f, uint32_t gx, uint32_t gy, uint32_t gz, uint32_t lx, uint32_t ly, uint32_t lz, size_t shmem,
	void *stream, void **params, void **extra, void *start, void *stop, uint32_t flags)
{
	return ext_module_launch(HIP_FN_EXT_MODULE_LAUNCH_KERNEL_CXX, f, gx, gy, gz, lx, ly, lz, shmem, stream,
				 params, extra, start, stop, flags);
}

/* ---- dlsym: applications that dlopen libamdhip64 ---- */

/* Our interposer of an entry point the agent wraps, or NULL. */
static void *our_wrapper(const char *name, enum hip_fn *fn)
{
	static const struct {
		enum hip_fn fn;
		void *ours;
	} wrapped[] = {
		{HIP_FN_REGISTER_FATBIN, (void *)__hipRegisterFatBinary},
		{HIP_FN_REGISTER_FUNCTION, (void *)__hipRegisterFunction},
		{HIP_FN_UNREGISTER_FATBIN, (void *)__hipUnregisterFatBinary},
		{HIP_FN_MODULE_LOAD, (void *)hipModuleLoad},
		{HIP_FN_MODULE_LOAD_DATA, (void *)hipModuleLoadData},
		{HIP_FN_MODULE_LOAD_DATA_EX, (void *)hipModuleLoadDataEx},
		{HIP_FN_MODULE_GET_FUNCTION, (void *)hipModuleGetFunction},
		{HIP_FN_LAUNCH_KERNEL, (void *)hipLaunchKernel},
		{HIP_FN_MODULE_LAUNCH_KERNEL, (void *)hipModuleLaunchKernel},
		{HIP_FN_EXT_MODULE_LAUNCH_KERNEL, (void *)hipExtModuleLaunchKernel},
		{HIP_FN_EXT_MODULE_LAUNCH_KERNEL_CXX,
		 (void *)_Z24hipExtModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_j},
		{HIP_FN_LAUNCH_COOPERATIVE_KERNEL, (void *)hipLaunchCooperativeKernel},
		{HIP_FN_EXT_LAUNCH_KERNEL, (void *)hipExtLaunchKernel},
	};

	if (!name || (name[0] != 'h' && name[0] != '_'))
		return NULL;
	for (size_t i = 0; i < sizeof(wrapped) / sizeof(wrapped[0]); i++)
		if (!strcmp(name, hip_fn_names[wrapped[i].fn])) {
			*fn = wrapped[i].fn;
			return wrapped[i].ours;
		}
	return NULL;
}

/*
 * An application that dlopens the runtime reaches it only through dlsym:
 * hand out our interposer and remember the runtime's function it found.
 * RTLD_NEXT lookups are answered relative to this plugin (which `gbpf run`
 * preloads right after the agent), not to the caller.
 */
HIP_EXPORT void *dlsym(void *handle, const char *name);
HIP_EXPORT void *dlsym(void *handle, const char *name)
{
	hip_dlsym_fn ds = libc_dlsym();
	void *p = ds ? ds(handle, name) : NULL, *ours;
	enum hip_fn fn = HIP_FN_N;
	void *expected = NULL;

	if (!p || !(ours = our_wrapper(name, &fn)) || p == ours)
		return p;
	/* first runtime found wins: one process has one HIP runtime */
	atomic_compare_exchange_strong_explicit(&hip_real_fns[fn], &expected, p, memory_order_acq_rel,
						memory_order_acquire);
	if (handle != RTLD_DEFAULT && handle != RTLD_NEXT) {
		expected = NULL;
		atomic_compare_exchange_strong_explicit(&hip_runtime_handle, &expected, handle, memory_order_acq_rel,
							memory_order_acquire);
	}
	return ours;
}
