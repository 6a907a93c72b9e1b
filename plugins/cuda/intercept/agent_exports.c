/* SPDX-License-Identifier: MIT */
/*
 * plugins/cuda/intercept/agent_exports.c - the symbols the preloaded agent
 * exports: dlsym, and the driver entry points of libcuda.so.1.
 *
 * Linked ONLY into the agent (gbpf_cuda_intercept_agent_dep), never into
 * libgbpf or a plugin: a library exporting cuLaunchKernel would interpose
 * on the driver for everything loaded after it.
 *
 * - dlsym: cudart (static and shared) does dlopen("libcuda.so.1") and then
 *   dlsym(h, "cuGetProcAddress_v2"); every later driver lookup goes through
 *   the pointer it gets for "cuGetProcAddress". We hand out our wrappers
 *   for both. dlsym(RTLD_NEXT, ...) is resolved relative to OUR caller,
 *   not to the agent, by walking the link maps after the caller's object.
 * - driver names: programs linked with -lcuda bind cuLaunchKernel etc. to
 *   the first definition, ours; each export finds the real one with
 *   dlsym(RTLD_NEXT) (the next object after the agent) once, and forwards
 *   through the same wrappers.
 */
#include <dlfcn.h>
#include <link.h>
#include <stddef.h>
#include <string.h>

#include "plugins/cuda/intercept/intercept_internal.h"

#define GBPF_CU_AGENT_API __attribute__((visibility("default")))

/* dlsym(RTLD_NEXT, name) as seen from the object containing @p caller. */
static void *next_after(const void *caller, const char *name)
{
	struct link_map *self = NULL;
	Dl_info info;

	if (!dladdr1(caller, &info, (void **)&self, RTLD_DL_LINKMAP) || !self)
		return gbpf_cu_real_dlsym(RTLD_NEXT, name);
	for (struct link_map *l = self->l_next; l; l = l->l_next) {
		struct link_map *def = NULL;
		void *p = gbpf_cu_real_dlsym(l, name);

		/* A link_map is a dlopen handle; it also searches l's dependencies: keep l's own. */
		if (p && dladdr1(p, &info, (void **)&def, RTLD_DL_LINKMAP) && def == l)
			return p;
	}
	return NULL;
}

/*
 * File-name prefixes of the injection libraries of NVIDIA's tools
 * (compute-sanitizer, CUPTI and the profilers built on it, Nsight). A tool
 * resolves the driver to watch the application's calls: handed our
 * wrappers, compute-sanitizer's target injection never saw the
 * application's first API call and stopped it ("Target application
 * terminated before first instrumented API call", on the H200 with CUDA
 * 13.0, even with no probe attached). A tool gets the driver itself; its own
 * launches are not the application's, and stay uninstrumented.
 */
static const char *const gbpf_cu_tool_prefixes[] = {
	"libsanitizer-", "libInterceptorInjection", "libTreeLauncher", "libcupti.so",
	"libnvperf_",    "libToolsInjection",       "libcuda-injection",
};

/*
 * Whether the code at @p caller belongs to one of the tools above. The
 * caller is dlsym's return address, as for RTLD_NEXT: a library that calls
 * dlsym as a tail call is taken for its own caller.
 */
static int caller_is_tool(const void *caller)
{
	Dl_info info;
	const char *base;

	if (!dladdr(caller, &info) || !info.dli_fname)
		return 0;
	base = strrchr(info.dli_fname, '/');
	base = base ? base + 1 : info.dli_fname;
	for (size_t i = 0; i < sizeof(gbpf_cu_tool_prefixes) / sizeof(gbpf_cu_tool_prefixes[0]); i++)
		if (!strncmp(base, gbpf_cu_tool_prefixes[i], strlen(gbpf_cu_tool_prefixes[i])))
			return 1;
	return 0;
}

/* Lookups through cu* names as an application makes them: the driver's entry points, wrapped. */
static void *dlsym_wrapped(void *handle, const char *name, const void *caller)
{
	void *p;

	if (handle == RTLD_NEXT)
		p = next_after(caller, name);
	else
		p = gbpf_cu_real_dlsym(handle, name);
	if (p && !caller_is_tool(caller))
		p = gbpf_cu_wrap_dlsym(name, p);
	return p;
}

#if defined(__has_attribute)
#if __has_attribute(musttail)
#define GBPF_CU_TAIL __attribute__((musttail))
#endif
#endif
#ifndef GBPF_CU_TAIL
#define GBPF_CU_TAIL /* gcc: a sibling call, made at -O2, which dlsym asks for even in -O0 builds */
#endif
#if defined(__GNUC__) && !defined(__clang__)
#define GBPF_CU_SIBCALL __attribute__((optimize("O2")))
#else
#define GBPF_CU_SIBCALL
#endif

/*
 * Every name but the driver's goes to glibc's dlsym as a tail call: glibc
 * takes its return address, which is then our caller's, for the object an
 * RTLD_NEXT lookup starts after (and for the namespace of RTLD_DEFAULT).
 * Resolving RTLD_NEXT on the caller's behalf by walking the link maps
 * crashed ld.so when compute-sanitizer's interceptor
 * (libInterceptorInjectionTarget.so) looked up its own next symbols (H200,
 * CUDA 13.0: SIGSEGV at 0 under _dl_catch_exception), stopping every
 * application under memcheck before its first API call.
 */
GBPF_CU_AGENT_API void *dlsym(void *handle, const char *name);
GBPF_CU_AGENT_API GBPF_CU_SIBCALL void *dlsym(void *handle, const char *name)
{
	void *(*real)(void *, const char *);

	if (name[0] == 'c' && name[1] == 'u')
		return dlsym_wrapped(handle, name, __builtin_return_address(0));
	real = gbpf_cu_libc_dlsym_fn();
	if (!real)
		return NULL;
	GBPF_CU_TAIL return real(handle, name);
}

/* Resolve an export once: the real symbol after the agent, wrapped. */
static void *export_resolve(_Atomic(void *) *cache, const struct gbpf_cu_family *fam,
			    const char *sym, int ptds)
{
	void *fn = atomic_load_explicit(cache, memory_order_acquire);
	void *real;

	if (fn)
		return fn;
	real = gbpf_cu_real_dlsym(RTLD_NEXT, sym);
	if (!real || gbpf_cu_is_own(real)) {
		/*
		 * Not in the global scope: libcuda was dlopen'ed (RTLD_LOCAL) and
		 * handed out a pointer to its own export that bound to ours (a
		 * driver whose internal references are interposable). Ask it.
		 */
		void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);

		real = h ? gbpf_cu_real_dlsym(h, sym) : NULL;
		if (h)
			dlclose(h);
		if (!real || gbpf_cu_is_own(real))
			return NULL;
	}
	if (fam == &gbpf_cu_fam_gpa_v1 || fam == &gbpf_cu_fam_gpa_v2)
		gbpf_cu_note_real_gpa(real, fam == &gbpf_cu_fam_gpa_v2);
	fn = gbpf_cu_family_wrap(fam, real, ptds);
	atomic_store_explicit(cache, fn, memory_order_release);
	return fn;
}

#define GBPF_CU_EXPORT(SYM, FAM, PTDS, PARAMS, ARGS)                                               \
	GBPF_CU_AGENT_API CUresult SYM PARAMS;                                                     \
	GBPF_CU_AGENT_API CUresult SYM PARAMS                                                      \
	{                                                                                          \
		static _Atomic(void *) fn_;                                                        \
		CUresult(*f_) PARAMS = export_resolve(&fn_, &gbpf_cu_fam_##FAM, #SYM, PTDS);       \
		if (!f_)                                                                           \
			return GBPF_CUDA_ERROR_NOT_FOUND;                                          \
		return f_ ARGS;                                                                    \
	}

#define P_GPA1 (const char *symbol, void **pfn, int version, cuuint64_t flags)
#define P_GPA2                                                                                     \
	(const char *symbol, void **pfn, int version, cuuint64_t flags,                            \
	 CUdriverProcAddressQueryResult *status)
GBPF_CU_EXPORT(cuGetProcAddress, gpa_v1, 0, P_GPA1, (symbol, pfn, version, flags))
GBPF_CU_EXPORT(cuGetProcAddress_v2, gpa_v2, 0, P_GPA2, (symbol, pfn, version, flags, status))

GBPF_CU_EXPORT(cuModuleLoad, module_load, 0, (CUmodule * m, const char *f), (m, f))
GBPF_CU_EXPORT(cuModuleLoadData, module_load_data, 0, (CUmodule * m, const void *i), (m, i))
GBPF_CU_EXPORT(cuModuleLoadDataEx, module_load_data_ex, 0,
	       (CUmodule * m, const void *i, unsigned int n, CUjit_option *o, void **v),
	       (m, i, n, o, v))
GBPF_CU_EXPORT(cuModuleLoadFatBinary, module_load_fatbin, 0, (CUmodule * m, const void *i),
	       (m, i))
#define P_LIB                                                                                      \
	(CUlibrary * l, const void *c, CUjit_option *jo, void **jv, unsigned int njo,              \
	 CUlibraryOption *lo, void **lv, unsigned int nlo)
#define P_LIBF                                                                                     \
	(CUlibrary * l, const char *c, CUjit_option *jo, void **jv, unsigned int njo,              \
	 CUlibraryOption *lo, void **lv, unsigned int nlo)
GBPF_CU_EXPORT(cuLibraryLoadData, library_load_data, 0, P_LIB, (l, c, jo, jv, njo, lo, lv, nlo))
GBPF_CU_EXPORT(cuLibraryLoadFromFile, library_load_file, 0, P_LIBF,
	       (l, c, jo, jv, njo, lo, lv, nlo))
#define P_LINK                                                                                     \
	(CUlinkState st, CUjitInputType t, void *d, size_t sz, const char *nm, unsigned int n,     \
	 CUjit_option *o, void **v)
GBPF_CU_EXPORT(cuLinkAddData, link_add_data, 0, P_LINK, (st, t, d, sz, nm, n, o, v))
GBPF_CU_EXPORT(cuLinkAddData_v2, link_add_data, 0, P_LINK, (st, t, d, sz, nm, n, o, v))
GBPF_CU_EXPORT(cuLinkComplete, link_complete, 0, (CUlinkState st, void **c, size_t *sz),
	       (st, c, sz))

GBPF_CU_EXPORT(cuModuleGetFunction, module_get_function, 0,
	       (CUfunction * f, CUmodule m, const char *n), (f, m, n))
GBPF_CU_EXPORT(cuLibraryGetKernel, library_get_kernel, 0, (CUkernel * k, CUlibrary l, const char *n),
	       (k, l, n))
GBPF_CU_EXPORT(cuKernelGetFunction, kernel_get_function, 0, (CUfunction * f, CUkernel k), (f, k))
GBPF_CU_EXPORT(cuLibraryGetModule, library_get_module, 0, (CUmodule * m, CUlibrary l), (m, l))

GBPF_CU_EXPORT(cuFuncSetAttribute, func_set_attribute, 0,
	       (CUfunction f, CUfunction_attribute a, int v), (f, a, v))
GBPF_CU_EXPORT(cuKernelSetAttribute, kernel_set_attribute, 0,
	       (CUfunction_attribute a, int v, CUkernel k, CUdevice d), (a, v, k, d))
GBPF_CU_EXPORT(cuFuncSetCacheConfig, func_set_cache_config, 0, (CUfunction f, CUfunc_cache c),
	       (f, c))
GBPF_CU_EXPORT(cuKernelSetCacheConfig, kernel_set_cache_config, 0,
	       (CUkernel k, CUfunc_cache c, CUdevice d), (k, c, d))

#define P_LAUNCH                                                                                   \
	(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,         \
	 unsigned int by, unsigned int bz, unsigned int sh, CUstream st, void **p, void **e)
#define A_LAUNCH (f, gx, gy, gz, bx, by, bz, sh, st, p, e)
GBPF_CU_EXPORT(cuLaunchKernel, launch_kernel, 0, P_LAUNCH, A_LAUNCH)
GBPF_CU_EXPORT(cuLaunchKernel_ptsz, launch_kernel, 1, P_LAUNCH, A_LAUNCH)
#define P_EX (const CUlaunchConfig *c, CUfunction f, void **p, void **e)
GBPF_CU_EXPORT(cuLaunchKernelEx, launch_kernel_ex, 0, P_EX, (c, f, p, e))
GBPF_CU_EXPORT(cuLaunchKernelEx_ptsz, launch_kernel_ex, 1, P_EX, (c, f, p, e))
#define P_COOP                                                                                     \
	(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,         \
	 unsigned int by, unsigned int bz, unsigned int sh, CUstream st, void **p)
#define A_COOP (f, gx, gy, gz, bx, by, bz, sh, st, p)
GBPF_CU_EXPORT(cuLaunchCooperativeKernel, launch_cooperative, 0, P_COOP, A_COOP)
GBPF_CU_EXPORT(cuLaunchCooperativeKernel_ptsz, launch_cooperative, 1, P_COOP, A_COOP)

#define P_GAKN1                                                                                    \
	(CUgraphNode * o, CUgraph g, const CUgraphNode *d, size_t n,                               \
	 const CUDA_KERNEL_NODE_PARAMS_v1 *p)
#define P_GAKN2                                                                                    \
	(CUgraphNode * o, CUgraph g, const CUgraphNode *d, size_t n,                               \
	 const CUDA_KERNEL_NODE_PARAMS_v2 *p)
GBPF_CU_EXPORT(cuGraphAddKernelNode, graph_add_kernel_node_v1, 0, P_GAKN1, (o, g, d, n, p))
GBPF_CU_EXPORT(cuGraphAddKernelNode_v2, graph_add_kernel_node_v2, 0, P_GAKN2, (o, g, d, n, p))
GBPF_CU_EXPORT(cuGraphKernelNodeSetParams, graph_kernel_node_set_params_v1, 0,
	       (CUgraphNode nd, const CUDA_KERNEL_NODE_PARAMS_v1 *p), (nd, p))
GBPF_CU_EXPORT(cuGraphKernelNodeSetParams_v2, graph_kernel_node_set_params_v2, 0,
	       (CUgraphNode nd, const CUDA_KERNEL_NODE_PARAMS_v2 *p), (nd, p))
GBPF_CU_EXPORT(cuGraphExecKernelNodeSetParams, graph_exec_kernel_node_set_params_v1, 0,
	       (CUgraphExec x, CUgraphNode nd, const CUDA_KERNEL_NODE_PARAMS_v1 *p), (x, nd, p))
GBPF_CU_EXPORT(cuGraphExecKernelNodeSetParams_v2, graph_exec_kernel_node_set_params_v2, 0,
	       (CUgraphExec x, CUgraphNode nd, const CUDA_KERNEL_NODE_PARAMS_v2 *p), (x, nd, p))
GBPF_CU_EXPORT(cuGraphAddNode, graph_add_node_v1, 0,
	       (CUgraphNode * o, CUgraph g, const CUgraphNode *d, size_t n, CUgraphNodeParams *p),
	       (o, g, d, n, p))
GBPF_CU_EXPORT(cuGraphAddNode_v2, graph_add_node_v2, 0,
	       (CUgraphNode * o, CUgraph g, const CUgraphNode *d, const CUgraphEdgeData *ed,
		size_t n, CUgraphNodeParams *p),
	       (o, g, d, ed, n, p))
GBPF_CU_EXPORT(cuGraphNodeSetParams, graph_node_set_params, 0,
	       (CUgraphNode nd, CUgraphNodeParams * p), (nd, p))
GBPF_CU_EXPORT(cuGraphExecNodeSetParams, graph_exec_node_set_params, 0,
	       (CUgraphExec x, CUgraphNode nd, CUgraphNodeParams * p), (x, nd, p))

GBPF_CU_EXPORT(cuMemAlloc_v2, mem_alloc, 0, (CUdeviceptr * d, size_t n), (d, n))
#define P_CP (CUdeviceptr d, CUdeviceptr s, size_t n)
#define P_CPA (CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st)
GBPF_CU_EXPORT(cuMemcpy, memcpy, 0, P_CP, (d, s, n))
GBPF_CU_EXPORT(cuMemcpy_ptds, memcpy, 1, P_CP, (d, s, n))
GBPF_CU_EXPORT(cuMemcpyAsync, memcpy_async, 0, P_CPA, (d, s, n, st))
GBPF_CU_EXPORT(cuMemcpyAsync_ptsz, memcpy_async, 1, P_CPA, (d, s, n, st))
#define P_HTOD (CUdeviceptr d, const void *s, size_t n)
#define P_DTOH (void *d, CUdeviceptr s, size_t n)
GBPF_CU_EXPORT(cuMemcpyHtoD_v2, memcpy_htod, 0, P_HTOD, (d, s, n))
GBPF_CU_EXPORT(cuMemcpyHtoD_v2_ptds, memcpy_htod, 1, P_HTOD, (d, s, n))
GBPF_CU_EXPORT(cuMemcpyDtoH_v2, memcpy_dtoh, 0, P_DTOH, (d, s, n))
GBPF_CU_EXPORT(cuMemcpyDtoH_v2_ptds, memcpy_dtoh, 1, P_DTOH, (d, s, n))
GBPF_CU_EXPORT(cuMemcpyDtoD_v2, memcpy_dtod, 0, P_CP, (d, s, n))
GBPF_CU_EXPORT(cuMemcpyDtoD_v2_ptds, memcpy_dtod, 1, P_CP, (d, s, n))
#define P_HTODA (CUdeviceptr d, const void *s, size_t n, CUstream st)
#define P_DTOHA (void *d, CUdeviceptr s, size_t n, CUstream st)
GBPF_CU_EXPORT(cuMemcpyHtoDAsync_v2, memcpy_htod_async, 0, P_HTODA, (d, s, n, st))
GBPF_CU_EXPORT(cuMemcpyHtoDAsync_v2_ptsz, memcpy_htod_async, 1, P_HTODA, (d, s, n, st))
GBPF_CU_EXPORT(cuMemcpyDtoHAsync_v2, memcpy_dtoh_async, 0, P_DTOHA, (d, s, n, st))
GBPF_CU_EXPORT(cuMemcpyDtoHAsync_v2_ptsz, memcpy_dtoh_async, 1, P_DTOHA, (d, s, n, st))
GBPF_CU_EXPORT(cuMemcpyDtoDAsync_v2, memcpy_dtod_async, 0, P_CPA, (d, s, n, st))
GBPF_CU_EXPORT(cuMemcpyDtoDAsync_v2_ptsz, memcpy_dtod_async, 1, P_CPA, (d, s, n, st))
GBPF_CU_EXPORT(cuMemsetD8_v2, memset_d8, 0, (CUdeviceptr d, unsigned char v, size_t n), (d, v, n))
GBPF_CU_EXPORT(cuMemsetD8_v2_ptds, memset_d8, 1, (CUdeviceptr d, unsigned char v, size_t n),
	       (d, v, n))
GBPF_CU_EXPORT(cuMemsetD16_v2, memset_d16, 0, (CUdeviceptr d, unsigned short v, size_t n),
	       (d, v, n))
GBPF_CU_EXPORT(cuMemsetD16_v2_ptds, memset_d16, 1, (CUdeviceptr d, unsigned short v, size_t n),
	       (d, v, n))
GBPF_CU_EXPORT(cuMemsetD32_v2, memset_d32, 0, (CUdeviceptr d, unsigned int v, size_t n),
	       (d, v, n))
GBPF_CU_EXPORT(cuMemsetD32_v2_ptds, memset_d32, 1, (CUdeviceptr d, unsigned int v, size_t n),
	       (d, v, n))
GBPF_CU_EXPORT(cuMemsetD8Async, memset_d8_async, 0,
	       (CUdeviceptr d, unsigned char v, size_t n, CUstream st), (d, v, n, st))
GBPF_CU_EXPORT(cuMemsetD8Async_ptsz, memset_d8_async, 1,
	       (CUdeviceptr d, unsigned char v, size_t n, CUstream st), (d, v, n, st))
GBPF_CU_EXPORT(cuMemsetD16Async, memset_d16_async, 0,
	       (CUdeviceptr d, unsigned short v, size_t n, CUstream st), (d, v, n, st))
GBPF_CU_EXPORT(cuMemsetD16Async_ptsz, memset_d16_async, 1,
	       (CUdeviceptr d, unsigned short v, size_t n, CUstream st), (d, v, n, st))
GBPF_CU_EXPORT(cuMemsetD32Async, memset_d32_async, 0,
	       (CUdeviceptr d, unsigned int v, size_t n, CUstream st), (d, v, n, st))
GBPF_CU_EXPORT(cuMemsetD32Async_ptsz, memset_d32_async, 1,
	       (CUdeviceptr d, unsigned int v, size_t n, CUstream st), (d, v, n, st))

GBPF_CU_EXPORT(cuCtxSynchronize, ctx_synchronize, 0, (void), ())
GBPF_CU_EXPORT(cuCtxSynchronize_v2, ctx_synchronize_v2, 0, (CUcontext c), (c))
GBPF_CU_EXPORT(cuStreamSynchronize, stream_synchronize, 0, (CUstream st), (st))
GBPF_CU_EXPORT(cuStreamSynchronize_ptsz, stream_synchronize, 1, (CUstream st), (st))
GBPF_CU_EXPORT(cuGraphLaunch, graph_launch, 0, (CUgraphExec x, CUstream st), (x, st))
GBPF_CU_EXPORT(cuGraphLaunch_ptsz, graph_launch, 1, (CUgraphExec x, CUstream st), (x, st))
GBPF_CU_EXPORT(cuEventSynchronize, event_synchronize, 0, (CUevent e), (e))
GBPF_CU_EXPORT(cuCtxDestroy_v2, ctx_destroy, 0, (CUcontext c), (c))
GBPF_CU_EXPORT(cuDevicePrimaryCtxReset_v2, primary_ctx_reset, 0, (CUdevice dev), (dev))
GBPF_CU_EXPORT(cuModuleUnload, module_unload, 0, (CUmodule m), (m))
GBPF_CU_EXPORT(cuLibraryUnload, library_unload, 0, (CUlibrary l), (l))
