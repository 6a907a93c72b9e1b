/* SPDX-License-Identifier: MIT */
/*
 * plugins/cuda/sanitizer/san_api.h declares the Sanitizer API itself; this
 * test compares every value and layout with NVIDIA's headers
 * (san_decls_real.c, built when they are available: GBPF_SAN_REAL_HEADERS)
 * and skips otherwise.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "plugins/cuda/sanitizer/san_api.h"
#include "san_decls.h"
#include "tests/tap.h"

static const char *const names[] = {
	"GBPF_SAN_SUCCESS",
	"GBPF_SAN_ERROR_INVALID_PARAMETER",
	"GBPF_SAN_ERROR_NOT_INITIALIZED",
	"GBPF_SAN_ERROR_NOT_SUPPORTED",
	"GBPF_SAN_CB_DOMAIN_RESOURCE",
	"GBPF_SAN_CB_DOMAIN_LAUNCH",
	"GBPF_SAN_CBID_RESOURCE_CONTEXT_DESTROY_STARTING",
	"GBPF_SAN_CBID_RESOURCE_MODULE_LOADED",
	"GBPF_SAN_CBID_RESOURCE_MODULE_UNLOAD_STARTING",
	"GBPF_SAN_INSTRUCTION_BLOCK_ENTER",
	"GBPF_SAN_INSTRUCTION_BLOCK_EXIT",
	"GBPF_SAN_INSTRUCTION_GLOBAL_MEMORY_ACCESS",
	"GBPF_SAN_INSTRUCTION_SHARED_MEMORY_ACCESS",
	"GBPF_SAN_INSTRUCTION_LOCAL_MEMORY_ACCESS",
	"GBPF_SAN_INSTRUCTION_BARRIER",
	"GBPF_SAN_MEMORY_DEVICE_FLAG_READ",
	"GBPF_SAN_MEMORY_DEVICE_FLAG_WRITE",
	"GBPF_SAN_MEMORY_DEVICE_FLAG_ATOMSYS",
	"GBPF_SAN_MEMORY_DEVICE_FLAG_PREFETCH",
	"sizeof(gbpf_san_result)",
	"sizeof(struct gbpf_san_module_data)",
	"offsetof(gbpf_san_module_data, context)",
	"offsetof(gbpf_san_module_data, module)",
	"offsetof(gbpf_san_module_data, cubin_size)",
	"offsetof(gbpf_san_module_data, cubin)",
	"offsetof(gbpf_san_module_data, library)",
	"sizeof(struct gbpf_san_context_data)",
	"offsetof(gbpf_san_context_data, device)",
	"domain enum size",
	"instruction enum size",
	"callback id size",
	"cubinSize size",
	"entry point pointer size",
};

static const long long ours[] = {
	(long long)(GBPF_SAN_SUCCESS),
	(long long)(GBPF_SAN_ERROR_INVALID_PARAMETER),
	(long long)(GBPF_SAN_ERROR_NOT_INITIALIZED),
	(long long)(GBPF_SAN_ERROR_NOT_SUPPORTED),
	(long long)(GBPF_SAN_CB_DOMAIN_RESOURCE),
	(long long)(GBPF_SAN_CB_DOMAIN_LAUNCH),
	(long long)(GBPF_SAN_CBID_RESOURCE_CONTEXT_DESTROY_STARTING),
	(long long)(GBPF_SAN_CBID_RESOURCE_MODULE_LOADED),
	(long long)(GBPF_SAN_CBID_RESOURCE_MODULE_UNLOAD_STARTING),
	(long long)(GBPF_SAN_INSTRUCTION_BLOCK_ENTER),
	(long long)(GBPF_SAN_INSTRUCTION_BLOCK_EXIT),
	(long long)(GBPF_SAN_INSTRUCTION_GLOBAL_MEMORY_ACCESS),
	(long long)(GBPF_SAN_INSTRUCTION_SHARED_MEMORY_ACCESS),
	(long long)(GBPF_SAN_INSTRUCTION_LOCAL_MEMORY_ACCESS),
	(long long)(GBPF_SAN_INSTRUCTION_BARRIER),
	(long long)(GBPF_SAN_MEMORY_DEVICE_FLAG_READ),
	(long long)(GBPF_SAN_MEMORY_DEVICE_FLAG_WRITE),
	(long long)(GBPF_SAN_MEMORY_DEVICE_FLAG_ATOMSYS),
	(long long)(GBPF_SAN_MEMORY_DEVICE_FLAG_PREFETCH),
	(long long)(sizeof(gbpf_san_result)),
	(long long)(sizeof(struct gbpf_san_module_data)),
	(long long)(offsetof(struct gbpf_san_module_data, context)),
	(long long)(offsetof(struct gbpf_san_module_data, module)),
	(long long)(offsetof(struct gbpf_san_module_data, cubin_size)),
	(long long)(offsetof(struct gbpf_san_module_data, cubin)),
	(long long)(offsetof(struct gbpf_san_module_data, library)),
	(long long)(sizeof(struct gbpf_san_context_data)),
	(long long)(offsetof(struct gbpf_san_context_data, device)),
	(long long)(sizeof(int)),
	(long long)(sizeof(int)),
	(long long)(sizeof(uint32_t)),
	(long long)(sizeof(((struct gbpf_san_module_data *)0)->cubin_size)),
	(long long)(sizeof(((struct gbpf_san_api *)0)->add_patches)),
};

int main(void)
{
#ifdef GBPF_SAN_REAL_HEADERS
	long long theirs[sizeof(ours) / sizeof(ours[0])];
	size_t n = san_decls_real(theirs, sizeof(ours) / sizeof(ours[0]));

	tap_ok(n == sizeof(ours) / sizeof(ours[0]), "both tables have %zu rows", n);
	for (size_t i = 0; i < n && i < sizeof(ours) / sizeof(ours[0]); i++)
		tap_ok(ours[i] == theirs[i], "%s: ours %lld, NVIDIA's %lld", names[i], ours[i], theirs[i]);
#else
	(void)names;
	(void)ours;
	tap_skip("NVIDIA's Sanitizer headers (.devdata/sanitizer/include) or cuda.h absent: declarations not compared");
#endif
	return tap_done();
}
