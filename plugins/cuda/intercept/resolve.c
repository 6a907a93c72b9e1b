/* SPDX-License-Identifier: MIT */
/*
 * plugins/cuda/intercept/resolve.c - which wrapper answers a driver lookup.
 *
 * cuGetProcAddress is asked for (base name, version, flags); the version
 * selects the ABI (cuMemAlloc 3020 is cuMemAlloc_v2, cuCtxSynchronize
 * 13000 takes a context), flags=2 the per-thread-default-stream variant.
 * The table below lists, per base name, the first version of each ABI we
 * wrap; a query for an older version than the first listed is handed out
 * unwrapped (we do not know that ABI). dlsym is asked for exported names
 * (cuMemAlloc_v2, cuLaunchKernel_ptsz), listed in the second table.
 */
#include <string.h>

#include "plugins/cuda/intercept/intercept_internal.h"

struct gbpf_cu_proc_entry {
	const char *name;
	int min_version;
	const struct gbpf_cu_family *fam;
};

#define E(n, v, f) {n, v, &gbpf_cu_fam_##f}
static const struct gbpf_cu_proc_entry gbpf_cu_procs[] = {
	E("cuGetProcAddress", 11030, gpa_v1),
	E("cuGetProcAddress", 12000, gpa_v2),
	E("cuModuleLoad", 2000, module_load),
	E("cuModuleLoadData", 2000, module_load_data),
	E("cuModuleLoadDataEx", 2010, module_load_data_ex),
	E("cuModuleLoadFatBinary", 2000, module_load_fatbin),
	E("cuLibraryLoadData", 12000, library_load_data),
	E("cuLibraryLoadFromFile", 12000, library_load_file),
	E("cuLinkAddData", 5050, link_add_data), /* 5050 and 6050 share the ABI */
	E("cuLinkComplete", 5050, link_complete),
	E("cuModuleGetFunction", 2000, module_get_function),
	E("cuLibraryGetKernel", 12000, library_get_kernel),
	E("cuKernelGetFunction", 12000, kernel_get_function),
	E("cuLibraryGetModule", 12000, library_get_module),
	E("cuFuncSetAttribute", 9000, func_set_attribute),
	E("cuKernelSetAttribute", 12000, kernel_set_attribute),
	E("cuFuncSetCacheConfig", 3000, func_set_cache_config),
	E("cuKernelSetCacheConfig", 12000, kernel_set_cache_config),
	E("cuLaunchKernel", 4000, launch_kernel),
	E("cuLaunchKernelEx", 11060, launch_kernel_ex),
	E("cuLaunchCooperativeKernel", 9000, launch_cooperative),
	E("cuGraphAddKernelNode", 10000, graph_add_kernel_node_v1),
	E("cuGraphAddKernelNode", 12000, graph_add_kernel_node_v2),
	E("cuGraphKernelNodeSetParams", 10000, graph_kernel_node_set_params_v1),
	E("cuGraphKernelNodeSetParams", 12000, graph_kernel_node_set_params_v2),
	E("cuGraphExecKernelNodeSetParams", 10010, graph_exec_kernel_node_set_params_v1),
	E("cuGraphExecKernelNodeSetParams", 12000, graph_exec_kernel_node_set_params_v2),
	E("cuGraphAddNode", 12020, graph_add_node_v1),
	E("cuGraphAddNode", 12030, graph_add_node_v2),
	E("cuGraphNodeSetParams", 12020, graph_node_set_params),
	E("cuGraphExecNodeSetParams", 12020, graph_exec_node_set_params),
	E("cuMemAlloc", 3020, mem_alloc),
	E("cuMemcpy", 4000, memcpy),
	E("cuMemcpyAsync", 4000, memcpy_async),
	E("cuMemcpyHtoD", 3020, memcpy_htod),
	E("cuMemcpyDtoH", 3020, memcpy_dtoh),
	E("cuMemcpyDtoD", 3020, memcpy_dtod),
	E("cuMemcpyHtoDAsync", 3020, memcpy_htod_async),
	E("cuMemcpyDtoHAsync", 3020, memcpy_dtoh_async),
	E("cuMemcpyDtoDAsync", 3020, memcpy_dtod_async),
	E("cuMemsetD8", 3020, memset_d8),
	E("cuMemsetD16", 3020, memset_d16),
	E("cuMemsetD32", 3020, memset_d32),
	E("cuMemsetD8Async", 3020, memset_d8_async),
	E("cuMemsetD16Async", 3020, memset_d16_async),
	E("cuMemsetD32Async", 3020, memset_d32_async),
	E("cuCtxSynchronize", 2000, ctx_synchronize),
	E("cuCtxSynchronize", 13000, ctx_synchronize_v2),
	E("cuStreamSynchronize", 2000, stream_synchronize),
	E("cuEventSynchronize", 2000, event_synchronize),
	E("cuCtxDestroy", 4000, ctx_destroy),
	E("cuDevicePrimaryCtxReset", 11000, primary_ctx_reset),
	E("cuGraphLaunch", 10000, graph_launch),
	E("cuModuleUnload", 2000, module_unload),
	E("cuLibraryUnload", 12000, library_unload),
};

struct gbpf_cu_export_entry {
	const char *symbol;
	const struct gbpf_cu_family *fam;
	int ptds;
};

#define X(s, f, p) {s, &gbpf_cu_fam_##f, p}
/* Exported names of libcuda.so.1, as cuda.h maps the API names onto them. */
static const struct gbpf_cu_export_entry gbpf_cu_exports[] = {
	X("cuGetProcAddress", gpa_v1, 0),
	X("cuGetProcAddress_v2", gpa_v2, 0),
	X("cuModuleLoad", module_load, 0),
	X("cuModuleLoadData", module_load_data, 0),
	X("cuModuleLoadDataEx", module_load_data_ex, 0),
	X("cuModuleLoadFatBinary", module_load_fatbin, 0),
	X("cuLibraryLoadData", library_load_data, 0),
	X("cuLibraryLoadFromFile", library_load_file, 0),
	X("cuLinkAddData", link_add_data, 0),
	X("cuLinkAddData_v2", link_add_data, 0),
	X("cuLinkComplete", link_complete, 0),
	X("cuModuleGetFunction", module_get_function, 0),
	X("cuLibraryGetKernel", library_get_kernel, 0),
	X("cuKernelGetFunction", kernel_get_function, 0),
	X("cuLibraryGetModule", library_get_module, 0),
	X("cuFuncSetAttribute", func_set_attribute, 0),
	X("cuKernelSetAttribute", kernel_set_attribute, 0),
	X("cuFuncSetCacheConfig", func_set_cache_config, 0),
	X("cuKernelSetCacheConfig", kernel_set_cache_config, 0),
	X("cuLaunchKernel", launch_kernel, 0),
	X("cuLaunchKernel_ptsz", launch_kernel, 1),
	X("cuLaunchKernelEx", launch_kernel_ex, 0),
	X("cuLaunchKernelEx_ptsz", launch_kernel_ex, 1),
	X("cuLaunchCooperativeKernel", launch_cooperative, 0),
	X("cuLaunchCooperativeKernel_ptsz", launch_cooperative, 1),
	X("cuGraphAddKernelNode", graph_add_kernel_node_v1, 0),
	X("cuGraphAddKernelNode_v2", graph_add_kernel_node_v2, 0),
	X("cuGraphKernelNodeSetParams", graph_kernel_node_set_params_v1, 0),
	X("cuGraphKernelNodeSetParams_v2", graph_kernel_node_set_params_v2, 0),
	X("cuGraphExecKernelNodeSetParams", graph_exec_kernel_node_set_params_v1, 0),
	X("cuGraphExecKernelNodeSetParams_v2", graph_exec_kernel_node_set_params_v2, 0),
	X("cuGraphAddNode", graph_add_node_v1, 0),
	X("cuGraphAddNode_v2", graph_add_node_v2, 0),
	X("cuGraphNodeSetParams", graph_node_set_params, 0),
	X("cuGraphExecNodeSetParams", graph_exec_node_set_params, 0),
	X("cuMemAlloc_v2", mem_alloc, 0),
	X("cuMemcpy", memcpy, 0),
	X("cuMemcpy_ptds", memcpy, 1),
	X("cuMemcpyAsync", memcpy_async, 0),
	X("cuMemcpyAsync_ptsz", memcpy_async, 1),
	X("cuMemcpyHtoD_v2", memcpy_htod, 0),
	X("cuMemcpyHtoD_v2_ptds", memcpy_htod, 1),
	X("cuMemcpyDtoH_v2", memcpy_dtoh, 0),
	X("cuMemcpyDtoH_v2_ptds", memcpy_dtoh, 1),
	X("cuMemcpyDtoD_v2", memcpy_dtod, 0),
	X("cuMemcpyDtoD_v2_ptds", memcpy_dtod, 1),
	X("cuMemcpyHtoDAsync_v2", memcpy_htod_async, 0),
	X("cuMemcpyHtoDAsync_v2_ptsz", memcpy_htod_async, 1),
	X("cuMemcpyDtoHAsync_v2", memcpy_dtoh_async, 0),
	X("cuMemcpyDtoHAsync_v2_ptsz", memcpy_dtoh_async, 1),
	X("cuMemcpyDtoDAsync_v2", memcpy_dtod_async, 0),
	X("cuMemcpyDtoDAsync_v2_ptsz", memcpy_dtod_async, 1),
	X("cuMemsetD8_v2", memset_d8, 0),
	X("cuMemsetD8_v2_ptds", memset_d8, 1),
	X("cuMemsetD16_v2", memset_d16, 0),
	X("cuMemsetD16_v2_ptds", memset_d16, 1),
	X("cuMemsetD32_v2", memset_d32, 0),
	X("cuMemsetD32_v2_ptds", memset_d32, 1),
	X("cuMemsetD8Async", memset_d8_async, 0),
	X("cuMemsetD8Async_ptsz", memset_d8_async, 1),
	X("cuMemsetD16Async", memset_d16_async, 0),
	X("cuMemsetD16Async_ptsz", memset_d16_async, 1),
	X("cuMemsetD32Async", memset_d32_async, 0),
	X("cuMemsetD32Async_ptsz", memset_d32_async, 1),
	X("cuCtxSynchronize", ctx_synchronize, 0),
	X("cuCtxSynchronize_v2", ctx_synchronize_v2, 0),
	X("cuStreamSynchronize", stream_synchronize, 0),
	X("cuStreamSynchronize_ptsz", stream_synchronize, 1),
	X("cuEventSynchronize", event_synchronize, 0),
	X("cuCtxDestroy_v2", ctx_destroy, 0),
	X("cuDevicePrimaryCtxReset_v2", primary_ctx_reset, 0),
	X("cuGraphLaunch", graph_launch, 0),
	X("cuGraphLaunch_ptsz", graph_launch, 1),
	X("cuModuleUnload", module_unload, 0),
	X("cuLibraryUnload", library_unload, 0),
};

/* Slot value meaning "being claimed": never a function address. */
#define GBPF_CU_CLAIMING ((void *)1)

void *gbpf_cu_family_wrap(const struct gbpf_cu_family *fam, void *real, int ptds)
{
	struct gbpf_cu_slot *slots = fam->slots;

	if (!real || gbpf_cu_is_own(real))
		return real;
	for (int i = 0; i < GBPF_CU_SLOTS; i++)
		if (atomic_load_explicit(&slots[i].real, memory_order_acquire) == real)
			return fam->wrappers[i];
	for (int i = 0; i < GBPF_CU_SLOTS; i++) {
		void *expected = NULL;

		if (atomic_compare_exchange_strong(&slots[i].real, &expected, GBPF_CU_CLAIMING)) {
			/*
			 * The slot is ours: publish ptds before the pointer. A thread
			 * racing on the same real pointer may claim a second slot;
			 * two wrappers forwarding to one function are harmless.
			 */
			atomic_store_explicit(&slots[i].ptds, ptds, memory_order_relaxed);
			atomic_store_explicit(&slots[i].real, real, memory_order_release);
			return fam->wrappers[i];
		}
		if (expected == real)
			return fam->wrappers[i];
	}
	return real;
}

static void report_query(const char *name, int version, uint64_t flags, int wrapped)
{
	const struct gbpf_cu_hooks *h = gbpf_cu_hooks_enter();

	if (!h)
		return;
	if (h->proc_query)
		h->proc_query(h->ctx, name, version, flags, wrapped);
	gbpf_cu_hooks_leave();
}

void *gbpf_cu_wrap_proc(const char *symbol, int version, uint64_t flags, void *real)
{
	const struct gbpf_cu_proc_entry *best = NULL;
	void *out = real;

	if (!symbol || !real)
		return real;
	for (size_t i = 0; i < sizeof(gbpf_cu_procs) / sizeof(gbpf_cu_procs[0]); i++) {
		const struct gbpf_cu_proc_entry *e = &gbpf_cu_procs[i];

		if (e->min_version <= version && strcmp(e->name, symbol) == 0 &&
		    (!best || e->min_version > best->min_version))
			best = e;
	}
	if (best) {
		if (best->fam == &gbpf_cu_fam_gpa_v2 || best->fam == &gbpf_cu_fam_gpa_v1)
			gbpf_cu_note_real_gpa(real, best->fam == &gbpf_cu_fam_gpa_v2);
		out = gbpf_cu_family_wrap(
			best->fam, real,
			(flags & GBPF_CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0);
	}
	/* Our own export (the driver's pointer bound to it) intercepts too. */
	report_query(symbol, version, flags, out != real || gbpf_cu_is_own(real));
	return out;
}

void *gbpf_cu_wrap_dlsym(const char *name, void *real)
{
	void *out = real;

	if (!name || !real || name[0] != 'c' || name[1] != 'u')
		return real;
	for (size_t i = 0; i < sizeof(gbpf_cu_exports) / sizeof(gbpf_cu_exports[0]); i++) {
		const struct gbpf_cu_export_entry *e = &gbpf_cu_exports[i];

		if (strcmp(e->symbol, name) != 0)
			continue;
		if (e->fam == &gbpf_cu_fam_gpa_v2 || e->fam == &gbpf_cu_fam_gpa_v1)
			if (!gbpf_cu_is_own(real))
				gbpf_cu_note_real_gpa(real, e->fam == &gbpf_cu_fam_gpa_v2);
		out = gbpf_cu_family_wrap(e->fam, real, e->ptds);
		break;
	}
	/* dlsym has no version: report it as version 0, flags 0. */
	report_query(name, 0, 0, out != real);
	return out;
}
