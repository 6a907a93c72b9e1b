/* SPDX-License-Identifier: MIT */
/*
 * plugins/hip/hip_intercept.h - the HIP runtime interposers of the hip
 * plugin (internal). When `gbpf run` preloads the plugin, its exported
 * __hipRegisterFatBinary, __hipRegisterFunction, __hipUnregisterFatBinary,
 * hipModuleLoad*, hipModuleGetFunction, every launch entry point and dlsym
 * (hip_intercept.c) come before libamdhip64: each calls the agent side
 * (hip_agent.c) and then the runtime's own function, found with
 * dlsym(RTLD_NEXT) or, for applications that dlopen the runtime, recorded
 * when the application looks the name up with dlsym.
 */
#ifndef GBPF_HIP_INTERCEPT_H
#define GBPF_HIP_INTERCEPT_H

#include <stddef.h>
#include <stdint.h>

/** dim3 of the HIP ABI. */
struct hip_dim3 {
	uint32_t x, y, z;
};

/** The fat binary wrapper hipcc emits in .hipFatBinSegment. */
struct hip_fatbin_wrapper {
	uint32_t magic; /**< HIP_FATBIN_MAGIC */
	uint32_t version;
	const void *bundle; /**< clang offload bundle (plain or CCOB) */
	void *unused;
};
#define HIP_FATBIN_MAGIC 0x48495046u /* "FPIH" */

/** Runtime entry points the interposers forward to. */
enum hip_fn {
	HIP_FN_REGISTER_FATBIN,
	HIP_FN_REGISTER_FUNCTION,
	HIP_FN_UNREGISTER_FATBIN,
	HIP_FN_MODULE_LOAD,
	HIP_FN_MODULE_LOAD_DATA,
	HIP_FN_MODULE_LOAD_DATA_EX,
	HIP_FN_MODULE_GET_FUNCTION,
	HIP_FN_LAUNCH_KERNEL,
	HIP_FN_MODULE_LAUNCH_KERNEL,
	HIP_FN_EXT_MODULE_LAUNCH_KERNEL,     /**< C name (HIP >= 6) */
	HIP_FN_EXT_MODULE_LAUNCH_KERNEL_CXX, /**< mangled name of HIP 5.x */
	HIP_FN_LAUNCH_COOPERATIVE_KERNEL,
	HIP_FN_EXT_LAUNCH_KERNEL,
	HIP_FN_GET_DEVICE_COUNT,
	HIP_FN_GET_DEVICE,           /**< the calling thread's current device */
	HIP_FN_GET_STREAM_DEVICE_ID, /**< the device a stream belongs to */
	HIP_FN_N,
};

/** Symbol name of @p fn. */
const char *hip_fn_name(enum hip_fn fn);
/** The runtime's own entry point (never one of ours), or NULL when none is loaded. */
void *hip_real(enum hip_fn fn);

/** Which launch entry point a launch came through (for reports). */
struct hip_launch {
	const char *api;     /**< "hipLaunchKernel", ... */
	const char *kernel;  /**< mangled name, or NULL when unknown */
	struct hip_dim3 grid, block;
	size_t shmem;
	void *stream;
};

/* ---- agent side (hip_agent.c), called by the interposers ---- */

/**
 * A fat binary is being registered: returns the wrapper to register
 * instead (rewritten bundle), or @p w itself when nothing was rewritten.
 * Never fails: problems are reported and the original is used.
 */
const struct hip_fatbin_wrapper *hip_agent_fatbin(const struct hip_fatbin_wrapper *w);
/** __hipRegisterFunction: host stub @p host is kernel @p name. */
void hip_agent_function(const void *host, const char *name);
/**
 * hipModuleLoadData / hipModuleLoadDataEx / hipModuleLoad (file read by
 * the caller): returns the image to load instead, or @p image itself.
 */
const void *hip_agent_module_image(const char *api, const void *image, size_t size);
/** hipModuleGetFunction succeeded: handle @p f is kernel @p name. */
void hip_agent_module_function(const void *f, const char *name);
/** Mangled name of a host stub or module function handle, or NULL. */
const char *hip_agent_kernel_name(const void *handle, int module_function);
/** A launch is about to be forwarded to the runtime. */
void hip_agent_launch(const struct hip_launch *l);

#endif /* GBPF_HIP_INTERCEPT_H */
