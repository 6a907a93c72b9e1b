/* SPDX-License-Identifier: MIT */
/*
 * plugins/cuda/intercept/intercept_internal.h - wrapper slots, families and
 * the helpers shared by the files of the interception layer.
 *
 * A "family" is one ABI of one entry point (cuLaunchKernel v4000 and its
 * _ptsz twin share one). Each family has GBPF_CU_SLOTS wrapper functions,
 * each bound to one slot that holds the real function it forwards to. A
 * slot is claimed, lock-free, the first time cuGetProcAddress or dlsym
 * hands out a real pointer of that family; the same real pointer always
 * maps to the same wrapper. When the slots are exhausted the real pointer
 * is handed out unwrapped: the app keeps working, unobserved.
 */
#ifndef GBPF_CUDA_INTERCEPT_INTERNAL_H
#define GBPF_CUDA_INTERCEPT_INTERNAL_H

#include <stdatomic.h>
#include <stdint.h>

#include "plugins/cuda/intercept/intercept.h"

#define GBPF_CU_SLOTS 4

struct gbpf_cu_slot {
	_Atomic(void *) real;
	_Atomic int ptds;
};

struct gbpf_cu_family {
	const char *name;
	struct gbpf_cu_slot *slots;
	void *const *wrappers;
};

#define GBPF_CU_UNPAREN(...) __VA_ARGS__

/*
 * Define family FAM: its slots and GBPF_CU_SLOTS wrappers that call
 * FAM##_impl(slot, ARGS...). PARAMS and ARGS are parenthesised lists.
 */
#define GBPF_CU_FAMILY(FAM, PARAMS, ARGS)                                                          \
	static struct gbpf_cu_slot FAM##_slots[GBPF_CU_SLOTS];                                     \
	static CUresult FAM##_w0 PARAMS { return FAM##_impl(&FAM##_slots[0], GBPF_CU_UNPAREN ARGS); } \
	static CUresult FAM##_w1 PARAMS { return FAM##_impl(&FAM##_slots[1], GBPF_CU_UNPAREN ARGS); } \
	static CUresult FAM##_w2 PARAMS { return FAM##_impl(&FAM##_slots[2], GBPF_CU_UNPAREN ARGS); } \
	static CUresult FAM##_w3 PARAMS { return FAM##_impl(&FAM##_slots[3], GBPF_CU_UNPAREN ARGS); } \
	static void *const FAM##_wrappers[GBPF_CU_SLOTS] = {(void *)FAM##_w0, (void *)FAM##_w1,     \
							    (void *)FAM##_w2, (void *)FAM##_w3};    \
	const struct gbpf_cu_family gbpf_cu_fam_##FAM = {#FAM, FAM##_slots, FAM##_wrappers}

/* The families (defined in wrap_*.c). */
#define GBPF_CU_FAMILIES(X)                                                                        \
	X(gpa_v1) X(gpa_v2)                                                                        \
	X(module_load) X(module_load_data) X(module_load_data_ex) X(module_load_fatbin)            \
	X(library_load_data) X(library_load_file) X(link_add_data) X(link_complete)                \
	X(module_get_function) X(library_get_kernel) X(kernel_get_function) X(library_get_module)  \
	X(func_set_attribute) X(kernel_set_attribute) X(func_set_cache_config)                     \
	X(kernel_set_cache_config)                                                                 \
	X(launch_kernel) X(launch_kernel_ex) X(launch_cooperative)                                 \
	X(graph_add_kernel_node_v1) X(graph_add_kernel_node_v2)                                    \
	X(graph_kernel_node_set_params_v1) X(graph_kernel_node_set_params_v2)                      \
	X(graph_exec_kernel_node_set_params_v1) X(graph_exec_kernel_node_set_params_v2)            \
	X(graph_add_node_v1) X(graph_add_node_v2) X(graph_node_set_params)                         \
	X(graph_exec_node_set_params)                                                              \
	X(mem_alloc) X(memcpy) X(memcpy_async) X(memcpy_htod) X(memcpy_dtoh) X(memcpy_dtod)        \
	X(memcpy_htod_async) X(memcpy_dtoh_async) X(memcpy_dtod_async)                             \
	X(memset_d8) X(memset_d16) X(memset_d32) X(memset_d8_async) X(memset_d16_async)            \
	X(memset_d32_async)                                                                        \
	X(ctx_synchronize) X(ctx_synchronize_v2) X(stream_synchronize) X(event_synchronize)          \
	X(ctx_destroy) X(primary_ctx_reset) X(graph_launch) X(module_unload) X(library_unload)

#define GBPF_CU_DECLARE_FAMILY(FAM) extern const struct gbpf_cu_family gbpf_cu_fam_##FAM;
GBPF_CU_FAMILIES(GBPF_CU_DECLARE_FAMILY)
#undef GBPF_CU_DECLARE_FAMILY

/** The real function behind a slot (never NULL once its wrapper was handed out). */
static inline void *gbpf_cu_slot_real(const struct gbpf_cu_slot *s)
{
	return atomic_load_explicit(&((struct gbpf_cu_slot *)s)->real, memory_order_acquire);
}

static inline int gbpf_cu_slot_ptds(const struct gbpf_cu_slot *s)
{
	return atomic_load_explicit(&((struct gbpf_cu_slot *)s)->ptds, memory_order_relaxed);
}

/* resolve.c */
/**
 * Wrap the real driver function @p real that cuGetProcAddress returned for
 * (symbol, version, flags); returns the wrapper, or @p real when we do not
 * wrap it. Reports the query to the proc_query hook.
 */
void *gbpf_cu_wrap_proc(const char *symbol, int version, uint64_t flags, void *real);
/**
 * Wrap @p real that dlsym returned for the exported driver symbol @p name
 * (e.g. "cuMemAlloc_v2", "cuLaunchKernel_ptsz"); returns the wrapper or @p real.
 */
void *gbpf_cu_wrap_dlsym(const char *name, void *real);
/** Claim (or find) the wrapper of @p fam for @p real; @p real when the slots are full. */
void *gbpf_cu_family_wrap(const struct gbpf_cu_family *fam, void *real, int ptds);
/** Remember the real cuGetProcAddress_v2 / v1 for gbpf_cu_real_proc(). */
void gbpf_cu_note_real_gpa(void *real, int v2);

/* hooks.c */
/** The installed hooks, or NULL; NULL too while a hook runs on this thread. */
const struct gbpf_cu_hooks *gbpf_cu_hooks_enter(void);
/** Leave the section begun by a non-NULL gbpf_cu_hooks_enter(). */
void gbpf_cu_hooks_leave(void);
/** The real dlsym of the C library (never our override). */
void *gbpf_cu_real_dlsym(void *handle, const char *name);
/* glibc's dlsym itself (found through dlvsym), or NULL. */
void *(*gbpf_cu_libc_dlsym_fn(void))(void *, const char *);
/** 1 when @p addr lies in the object (executable or library) holding this code. */
int gbpf_cu_is_own(const void *addr);
/** Next launch id. */
uint64_t gbpf_cu_next_launch_id(void);

/* handles.c */
/** Record a handle; name is copied (bounded). Returns 0 or -ENOMEM / -ENOSPC. */
int gbpf_cu_handle_record(const void *handle, enum gbpf_cu_handle_kind kind, const char *name,
			  CUmodule module, CUlibrary library, CUkernel kernel);
/** Record an attribute (cache_config = 0) or cache configuration (1) set on a handle. */
int gbpf_cu_attr_record(const void *handle, int cache_config, int attrib, int value);

#endif /* GBPF_CUDA_INTERCEPT_INTERNAL_H */
