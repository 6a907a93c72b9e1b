/* SPDX-License-Identifier: MIT */
/*
 * The values and layouts of NVIDIA's Sanitizer headers, in the order of
 * test_san_decls.c's table (a translation unit of its own: cuda.h and
 * plugins/cuda/intercept/cuda_types.h cannot be included together).
 */
#include <stddef.h>

#include <sanitizer.h>

#include "san_decls.h"

size_t san_decls_real(long long *v, size_t n)
{
	const long long t[] = {
		(long long)(SANITIZER_SUCCESS),
		(long long)(SANITIZER_ERROR_INVALID_PARAMETER),
		(long long)(SANITIZER_ERROR_NOT_INITIALIZED),
		(long long)(SANITIZER_ERROR_NOT_SUPPORTED),
		(long long)(SANITIZER_CB_DOMAIN_RESOURCE),
		(long long)(SANITIZER_CB_DOMAIN_LAUNCH),
		(long long)(SANITIZER_CBID_RESOURCE_CONTEXT_DESTROY_STARTING),
		(long long)(SANITIZER_CBID_RESOURCE_MODULE_LOADED),
		(long long)(SANITIZER_CBID_RESOURCE_MODULE_UNLOAD_STARTING),
		(long long)(SANITIZER_INSTRUCTION_BLOCK_ENTER),
		(long long)(SANITIZER_INSTRUCTION_BLOCK_EXIT),
		(long long)(SANITIZER_INSTRUCTION_GLOBAL_MEMORY_ACCESS),
		(long long)(SANITIZER_INSTRUCTION_SHARED_MEMORY_ACCESS),
		(long long)(SANITIZER_INSTRUCTION_LOCAL_MEMORY_ACCESS),
		(long long)(SANITIZER_INSTRUCTION_BARRIER),
		(long long)(SANITIZER_MEMORY_DEVICE_FLAG_READ),
		(long long)(SANITIZER_MEMORY_DEVICE_FLAG_WRITE),
		(long long)(SANITIZER_MEMORY_DEVICE_FLAG_ATOMSYS),
		(long long)(SANITIZER_MEMORY_DEVICE_FLAG_PREFETCH),
		(long long)(sizeof(SanitizerResult)),
		(long long)(sizeof(Sanitizer_ResourceModuleData)),
		(long long)(offsetof(Sanitizer_ResourceModuleData, context)),
		(long long)(offsetof(Sanitizer_ResourceModuleData, module)),
		(long long)(offsetof(Sanitizer_ResourceModuleData, cubinSize)),
		(long long)(offsetof(Sanitizer_ResourceModuleData, pCubin)),
		(long long)(offsetof(Sanitizer_ResourceModuleData, library)),
		(long long)(sizeof(Sanitizer_ResourceContextData)),
		(long long)(offsetof(Sanitizer_ResourceContextData, device)),
		(long long)(sizeof(Sanitizer_CallbackDomain)),
		(long long)(sizeof(Sanitizer_InstructionId)),
		(long long)(sizeof(Sanitizer_CallbackId)),
		(long long)(sizeof(((Sanitizer_ResourceModuleData *)0)->cubinSize)),
		(long long)(sizeof(&sanitizerAddPatches)),
	};
	size_t k;

	for (k = 0; k < n && k < sizeof(t) / sizeof(t[0]); k++)
		v[k] = t[k];
	return sizeof(t) / sizeof(t[0]);
}
