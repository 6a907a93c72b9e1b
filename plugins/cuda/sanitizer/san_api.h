/* SPDX-License-Identifier: MIT */
/*
 * plugins/cuda/sanitizer/san_api.h - the part of NVIDIA's Compute Sanitizer
 * API (libsanitizer-public.so, CUDA 12/13) that the patching engine uses,
 * declared here so that gbpf builds without the CUDA toolkit; the library
 * is dlopen'ed at run time, never linked.
 *
 * Names follow the documented API with a gbpf_san_ / GBPF_SAN_ prefix.
 * Values and layouts were written from the documentation of
 * sanitizer_callbacks.h, sanitizer_patching.h and sanitizer_result.h;
 * tests/cuda_sanitizer/test_san_decls.c compares every one of them with the
 * real headers wherever they are present (.devdata/sanitizer/include).
 */
#ifndef GBPF_CUDA_SAN_API_H
#define GBPF_CUDA_SAN_API_H

#include <stddef.h>
#include <stdint.h>

#include "plugins/cuda/intercept/cuda_types.h"

/* SanitizerResult values used here. */
#define GBPF_SAN_SUCCESS 0
#define GBPF_SAN_ERROR_INVALID_PARAMETER 1
#define GBPF_SAN_ERROR_NOT_INITIALIZED 13
#define GBPF_SAN_ERROR_NOT_SUPPORTED 14

/* Sanitizer_CallbackDomain. */
#define GBPF_SAN_CB_DOMAIN_RESOURCE 3
#define GBPF_SAN_CB_DOMAIN_LAUNCH 5

/* Sanitizer_CallbackIdResource. */
#define GBPF_SAN_CBID_RESOURCE_CONTEXT_DESTROY_STARTING 4
#define GBPF_SAN_CBID_RESOURCE_MODULE_LOADED 9
#define GBPF_SAN_CBID_RESOURCE_MODULE_UNLOAD_STARTING 10

/* Sanitizer_InstructionId: the patch points the engine uses. */
#define GBPF_SAN_INSTRUCTION_BLOCK_ENTER 1
#define GBPF_SAN_INSTRUCTION_BLOCK_EXIT 2
#define GBPF_SAN_INSTRUCTION_GLOBAL_MEMORY_ACCESS 3
#define GBPF_SAN_INSTRUCTION_SHARED_MEMORY_ACCESS 4
#define GBPF_SAN_INSTRUCTION_LOCAL_MEMORY_ACCESS 5
#define GBPF_SAN_INSTRUCTION_BARRIER 6

/* Sanitizer_DeviceMemoryFlags (flags of the memory-access callback). */
#define GBPF_SAN_MEMORY_DEVICE_FLAG_READ 0x1u
#define GBPF_SAN_MEMORY_DEVICE_FLAG_WRITE 0x2u
#define GBPF_SAN_MEMORY_DEVICE_FLAG_ATOMSYS 0x4u
#define GBPF_SAN_MEMORY_DEVICE_FLAG_PREFETCH 0x8u

typedef int gbpf_san_result;
typedef struct gbpf_san_subscriber_st *gbpf_san_subscriber;

/** Sanitizer_CallbackFunc. */
typedef void (*gbpf_san_callback_fn)(void *userdata, int domain, uint32_t cbid, const void *cbdata);

/** Sanitizer_ResourceModuleData: cbdata of MODULE_LOADED / MODULE_UNLOAD_STARTING. */
struct gbpf_san_module_data {
	CUcontext context;
	CUmodule module;
	size_t cubin_size;
	const char *cubin;
	CUlibrary library;
};

/** Sanitizer_ResourceContextData: cbdata of the CONTEXT_* resource callbacks. */
struct gbpf_san_context_data {
	CUcontext context;
	CUdevice device;
};

/** The entry points, resolved from the library (every one non-NULL once loaded). */
struct gbpf_san_api {
	void *lib; /**< dlopen handle */
	char path[256];
	gbpf_san_result (*subscribe)(gbpf_san_subscriber *sub, gbpf_san_callback_fn cb, void *userdata);
	gbpf_san_result (*unsubscribe)(gbpf_san_subscriber sub);
	gbpf_san_result (*enable_domain)(uint32_t enable, gbpf_san_subscriber sub, int domain);
	gbpf_san_result (*add_patches)(const void *image, CUcontext ctx);
	gbpf_san_result (*patch_instructions)(int instruction_id, CUmodule module, const char *callback);
	gbpf_san_result (*patch_module)(CUmodule module);
	gbpf_san_result (*unpatch_module)(CUmodule module);
	gbpf_san_result (*set_callback_data)(CUfunction kernel, const void *userdata);
	gbpf_san_result (*get_result_string)(gbpf_san_result result, const char **str);
	/** sanitizerEnableCallback (one callback id of a domain) */
	gbpf_san_result (*enable_callback)(uint32_t enable, gbpf_san_subscriber sub, int domain, uint32_t cbid);
};

/**
 * Load libsanitizer-public.so and resolve the entry points. Tries, in
 * order: $GBPF_SANITIZER_LIB, $CUDA_HOME/compute-sanitizer/,
 * /usr/local/cuda/compute-sanitizer/, then the loader's search path.
 * @param api       out
 * @param why       reason on failure (every path tried)
 * @return 0, -ENOENT when no library was found, -ENOSYS when one lacks an
 *         entry point
 */
int gbpf_san_api_load(struct gbpf_san_api *api, char *why, size_t why_size);

/** A readable name for @p r ("SANITIZER_ERROR_..." from the library when loaded). */
const char *gbpf_san_api_strerror(const struct gbpf_san_api *api, gbpf_san_result r);

#endif /* GBPF_CUDA_SAN_API_H */
