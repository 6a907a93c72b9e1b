/* SPDX-License-Identifier: MIT */
/*
 * plugins/cuda/intercept/wrap_mem.c - wrappers of memory copies, memsets,
 * cuMemAlloc and synchronisation, reported to call_pre / call_post for
 * host probes. They never change arguments or results.
 */
#include "plugins/cuda/intercept/intercept_internal.h"

/*
 * Run a host call between call_pre and call_post. CALL is an expression
 * yielding a CUresult; OUT, if not NULL, is cuMemAlloc's result pointer.
 */
#define GBPF_CU_HOST_CALL_OUT(S, EV, CALL, OUT)                                                           \
	do {                                                                                       \
		const struct gbpf_cu_hooks *h_ = gbpf_cu_hooks_enter();                            \
		CUresult res_;                                                                     \
		if (!h_)                                                                           \
			return (CALL);                                                             \
		(EV).ptds = gbpf_cu_slot_ptds(S);                                                  \
		(EV).result = -1;                                                                  \
		if (h_->call_pre)                                                                  \
			h_->call_pre(h_->ctx, &(EV));                                              \
		res_ = (CALL);                                                                     \
		(EV).result = res_;                                                                \
		if ((OUT) && res_ == GBPF_CUDA_SUCCESS)                                            \
			(EV).dst = *(OUT);                                                         \
		if (h_->call_post)                                                                 \
			h_->call_post(h_->ctx, &(EV));                                             \
		gbpf_cu_hooks_leave();                                                             \
		return res_;                                                                       \
	} while (0)

#define GBPF_CU_HOST_CALL(S, EV, CALL) GBPF_CU_HOST_CALL_OUT(S, EV, CALL, (CUdeviceptr *)NULL)

static CUresult mem_alloc_impl(const struct gbpf_cu_slot *s, CUdeviceptr *dptr, size_t bytes)
{
	struct gbpf_cu_call_event ev = {.api = "cuMemAlloc_v2", .kind = GBPF_CU_CALL_MALLOC,
					.bytes = bytes};

	if (!dptr)
		return ((PFN_cuMemAlloc_v3020)gbpf_cu_slot_real(s))(dptr, bytes);
	GBPF_CU_HOST_CALL_OUT(s, ev, ((PFN_cuMemAlloc_v3020)gbpf_cu_slot_real(s))(dptr, bytes),
			      dptr);
}
GBPF_CU_FAMILY(mem_alloc, (CUdeviceptr * dptr, size_t bytes), (dptr, bytes));

/* ---- copies ---- */

static CUresult memcpy_impl(const struct gbpf_cu_slot *s, CUdeviceptr dst, CUdeviceptr src,
			    size_t n)
{
	struct gbpf_cu_call_event ev = {.kind = GBPF_CU_CALL_MEMCPY, .dst = dst, .src = src,
					.bytes = n};

	ev.api = gbpf_cu_slot_ptds(s) ? "cuMemcpy_ptds" : "cuMemcpy";
	GBPF_CU_HOST_CALL(s, ev, ((PFN_cuMemcpy_v4000)gbpf_cu_slot_real(s))(dst, src, n));
}
GBPF_CU_FAMILY(memcpy, (CUdeviceptr dst, CUdeviceptr src, size_t n), (dst, src, n));

static CUresult memcpy_async_impl(const struct gbpf_cu_slot *s, CUdeviceptr dst,
				  CUdeviceptr src, size_t n, CUstream st)
{
	struct gbpf_cu_call_event ev = {.kind = GBPF_CU_CALL_MEMCPY, .dst = dst, .src = src,
					.bytes = n, .stream = st, .async = 1};

	ev.api = gbpf_cu_slot_ptds(s) ? "cuMemcpyAsync_ptsz" : "cuMemcpyAsync";
	GBPF_CU_HOST_CALL(s, ev,
			  ((PFN_cuMemcpyAsync_v4000)gbpf_cu_slot_real(s))(dst, src, n, st));
}
GBPF_CU_FAMILY(memcpy_async, (CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream st),
	       (dst, src, n, st));

static CUresult memcpy_htod_impl(const struct gbpf_cu_slot *s, CUdeviceptr dst, const void *src,
				 size_t n)
{
	struct gbpf_cu_call_event ev = {.kind = GBPF_CU_CALL_MEMCPY, .dst = dst,
					.src = (uint64_t)(uintptr_t)src, .bytes = n,
					.direction = GBPF_CU_COPY_H2D};

	ev.api = gbpf_cu_slot_ptds(s) ? "cuMemcpyHtoD_v2_ptds" : "cuMemcpyHtoD_v2";
	GBPF_CU_HOST_CALL(s, ev, ((PFN_cuMemcpyHtoD_v3020)gbpf_cu_slot_real(s))(dst, src, n));
}
GBPF_CU_FAMILY(memcpy_htod, (CUdeviceptr dst, const void *src, size_t n), (dst, src, n));

static CUresult memcpy_dtoh_impl(const struct gbpf_cu_slot *s, void *dst, CUdeviceptr src,
				 size_t n)
{
	struct gbpf_cu_call_event ev = {.kind = GBPF_CU_CALL_MEMCPY,
					.dst = (uint64_t)(uintptr_t)dst, .src = src, .bytes = n,
					.direction = GBPF_CU_COPY_D2H};

	ev.api = gbpf_cu_slot_ptds(s) ? "cuMemcpyDtoH_v2_ptds" : "cuMemcpyDtoH_v2";
	GBPF_CU_HOST_CALL(s, ev, ((PFN_cuMemcpyDtoH_v3020)gbpf_cu_slot_real(s))(dst, src, n));
}
GBPF_CU_FAMILY(memcpy_dtoh, (void *dst, CUdeviceptr src, size_t n), (dst, src, n));

static CUresult memcpy_dtod_impl(const struct gbpf_cu_slot *s, CUdeviceptr dst, CUdeviceptr src,
				 size_t n)
{
	struct gbpf_cu_call_event ev = {.kind = GBPF_CU_CALL_MEMCPY, .dst = dst, .src = src,
					.bytes = n, .direction = GBPF_CU_COPY_D2D};

	ev.api = gbpf_cu_slot_ptds(s) ? "cuMemcpyDtoD_v2_ptds" : "cuMemcpyDtoD_v2";
	GBPF_CU_HOST_CALL(s, ev, ((PFN_cuMemcpyDtoD_v3020)gbpf_cu_slot_real(s))(dst, src, n));
}
GBPF_CU_FAMILY(memcpy_dtod, (CUdeviceptr dst, CUdeviceptr src, size_t n), (dst, src, n));

static CUresult memcpy_htod_async_impl(const struct gbpf_cu_slot *s, CUdeviceptr dst,
				       const void *src, size_t n, CUstream st)
{
	struct gbpf_cu_call_event ev = {.kind = GBPF_CU_CALL_MEMCPY, .dst = dst,
					.src = (uint64_t)(uintptr_t)src, .bytes = n, .stream = st,
					.async = 1, .direction = GBPF_CU_COPY_H2D};

	ev.api = gbpf_cu_slot_ptds(s) ? "cuMemcpyHtoDAsync_v2_ptsz" : "cuMemcpyHtoDAsync_v2";
	GBPF_CU_HOST_CALL(s, ev,
			  ((PFN_cuMemcpyHtoDAsync_v3020)gbpf_cu_slot_real(s))(dst, src, n, st));
}
GBPF_CU_FAMILY(memcpy_htod_async, (CUdeviceptr dst, const void *src, size_t n, CUstream st),
	       (dst, src, n, st));

static CUresult memcpy_dtoh_async_impl(const struct gbpf_cu_slot *s, void *dst, CUdeviceptr src,
				       size_t n, CUstream st)
{
	struct gbpf_cu_call_event ev = {.kind = GBPF_CU_CALL_MEMCPY,
					.dst = (uint64_t)(uintptr_t)dst, .src = src, .bytes = n,
					.stream = st, .async = 1, .direction = GBPF_CU_COPY_D2H};

	ev.api = gbpf_cu_slot_ptds(s) ? "cuMemcpyDtoHAsync_v2_ptsz" : "cuMemcpyDtoHAsync_v2";
	GBPF_CU_HOST_CALL(s, ev,
			  ((PFN_cuMemcpyDtoHAsync_v3020)gbpf_cu_slot_real(s))(dst, src, n, st));
}
GBPF_CU_FAMILY(memcpy_dtoh_async, (void *dst, CUdeviceptr src, size_t n, CUstream st),
	       (dst, src, n, st));

static CUresult memcpy_dtod_async_impl(const struct gbpf_cu_slot *s, CUdeviceptr dst,
				       CUdeviceptr src, size_t n, CUstream st)
{
	struct gbpf_cu_call_event ev = {.kind = GBPF_CU_CALL_MEMCPY, .dst = dst, .src = src,
					.bytes = n, .stream = st, .async = 1,
					.direction = GBPF_CU_COPY_D2D};

	ev.api = gbpf_cu_slot_ptds(s) ? "cuMemcpyDtoDAsync_v2_ptsz" : "cuMemcpyDtoDAsync_v2";
	GBPF_CU_HOST_CALL(s, ev,
			  ((PFN_cuMemcpyDtoDAsync_v3020)gbpf_cu_slot_real(s))(dst, src, n, st));
}
GBPF_CU_FAMILY(memcpy_dtod_async, (CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream st),
	       (dst, src, n, st));

/* ---- memsets: bytes = elements x element size ---- */

#define GBPF_CU_MEMSET(FAM, PFN, VT, ESZ, NAME)                                                    \
	static CUresult FAM##_impl(const struct gbpf_cu_slot *s, CUdeviceptr dst, VT v, size_t n)  \
	{                                                                                          \
		struct gbpf_cu_call_event ev = {.kind = GBPF_CU_CALL_MEMSET, .dst = dst,           \
						.bytes = (uint64_t)n * (ESZ), .value = v};         \
		ev.api = gbpf_cu_slot_ptds(s) ? NAME "_ptds" : NAME;                               \
		GBPF_CU_HOST_CALL(s, ev, ((PFN)gbpf_cu_slot_real(s))(dst, v, n));                  \
	}                                                                                          \
	GBPF_CU_FAMILY(FAM, (CUdeviceptr dst, VT v, size_t n), (dst, v, n))

#define GBPF_CU_MEMSET_ASYNC(FAM, PFN, VT, ESZ, NAME)                                              \
	static CUresult FAM##_impl(const struct gbpf_cu_slot *s, CUdeviceptr dst, VT v, size_t n,  \
				   CUstream st)                                                    \
	{                                                                                          \
		struct gbpf_cu_call_event ev = {.kind = GBPF_CU_CALL_MEMSET, .dst = dst,           \
						.bytes = (uint64_t)n * (ESZ), .value = v,          \
						.stream = st, .async = 1};                         \
		ev.api = gbpf_cu_slot_ptds(s) ? NAME "_ptsz" : NAME;                               \
		GBPF_CU_HOST_CALL(s, ev, ((PFN)gbpf_cu_slot_real(s))(dst, v, n, st));              \
	}                                                                                          \
	GBPF_CU_FAMILY(FAM, (CUdeviceptr dst, VT v, size_t n, CUstream st), (dst, v, n, st))

GBPF_CU_MEMSET(memset_d8, PFN_cuMemsetD8_v3020, unsigned char, 1, "cuMemsetD8_v2");
GBPF_CU_MEMSET(memset_d16, PFN_cuMemsetD16_v3020, unsigned short, 2, "cuMemsetD16_v2");
GBPF_CU_MEMSET(memset_d32, PFN_cuMemsetD32_v3020, unsigned int, 4, "cuMemsetD32_v2");
GBPF_CU_MEMSET_ASYNC(memset_d8_async, PFN_cuMemsetD8Async_v3020, unsigned char, 1,
		     "cuMemsetD8Async");
GBPF_CU_MEMSET_ASYNC(memset_d16_async, PFN_cuMemsetD16Async_v3020, unsigned short, 2,
		     "cuMemsetD16Async");
GBPF_CU_MEMSET_ASYNC(memset_d32_async, PFN_cuMemsetD32Async_v3020, unsigned int, 4,
		     "cuMemsetD32Async");

/* ---- synchronisation ---- */

/* cuCtxSynchronize (v2000) takes no argument, so it cannot use GBPF_CU_FAMILY. */
static CUresult ctx_synchronize_impl(const struct gbpf_cu_slot *s)
{
	struct gbpf_cu_call_event ev = {.api = "cuCtxSynchronize", .kind = GBPF_CU_CALL_SYNC};

	GBPF_CU_HOST_CALL(s, ev, ((PFN_cuCtxSynchronize_v2000)gbpf_cu_slot_real(s))());
}
static struct gbpf_cu_slot ctx_synchronize_slots[GBPF_CU_SLOTS];
static CUresult ctx_synchronize_w0(void) { return ctx_synchronize_impl(&ctx_synchronize_slots[0]); }
static CUresult ctx_synchronize_w1(void) { return ctx_synchronize_impl(&ctx_synchronize_slots[1]); }
static CUresult ctx_synchronize_w2(void) { return ctx_synchronize_impl(&ctx_synchronize_slots[2]); }
static CUresult ctx_synchronize_w3(void) { return ctx_synchronize_impl(&ctx_synchronize_slots[3]); }
static void *const ctx_synchronize_wrappers[GBPF_CU_SLOTS] = {
	(void *)ctx_synchronize_w0, (void *)ctx_synchronize_w1, (void *)ctx_synchronize_w2,
	(void *)ctx_synchronize_w3};
const struct gbpf_cu_family gbpf_cu_fam_ctx_synchronize = {
	"ctx_synchronize", ctx_synchronize_slots, ctx_synchronize_wrappers};

static CUresult ctx_synchronize_v2_impl(const struct gbpf_cu_slot *s, CUcontext ctx)
{
	struct gbpf_cu_call_event ev = {.api = "cuCtxSynchronize_v2", .kind = GBPF_CU_CALL_SYNC};

	GBPF_CU_HOST_CALL(s, ev, ((PFN_cuCtxSynchronize_v13000)gbpf_cu_slot_real(s))(ctx));
}
GBPF_CU_FAMILY(ctx_synchronize_v2, (CUcontext ctx), (ctx));

static CUresult stream_synchronize_impl(const struct gbpf_cu_slot *s, CUstream st)
{
	struct gbpf_cu_call_event ev = {.kind = GBPF_CU_CALL_SYNC, .stream = st};

	ev.api = gbpf_cu_slot_ptds(s) ? "cuStreamSynchronize_ptsz" : "cuStreamSynchronize";
	GBPF_CU_HOST_CALL(s, ev, ((PFN_cuStreamSynchronize_v2000)gbpf_cu_slot_real(s))(st));
}
GBPF_CU_FAMILY(stream_synchronize, (CUstream st), (st));

static CUresult event_synchronize_impl(const struct gbpf_cu_slot *s, CUevent e)
{
	struct gbpf_cu_call_event ev = {.api = "cuEventSynchronize", .kind = GBPF_CU_CALL_SYNC,
					.event = e};

	GBPF_CU_HOST_CALL(s, ev, ((PFN_cuEventSynchronize_v2000)gbpf_cu_slot_real(s))(e));
}
GBPF_CU_FAMILY(event_synchronize, (CUevent e), (e));

/* ---- context teardown: device copies of maps must be saved before the context's memory goes ---- */

static CUresult ctx_destroy_impl(const struct gbpf_cu_slot *s, CUcontext ctx)
{
	struct gbpf_cu_call_event ev = {.api = "cuCtxDestroy_v2", .kind = GBPF_CU_CALL_CTX_DESTROY,
					.context = ctx, .device = -1};

	GBPF_CU_HOST_CALL(s, ev, ((PFN_cuCtxDestroy_v4000)gbpf_cu_slot_real(s))(ctx));
}
GBPF_CU_FAMILY(ctx_destroy, (CUcontext ctx), (ctx));

static CUresult primary_ctx_reset_impl(const struct gbpf_cu_slot *s, CUdevice dev)
{
	struct gbpf_cu_call_event ev = {.api = "cuDevicePrimaryCtxReset_v2", .kind = GBPF_CU_CALL_CTX_DESTROY,
					.device = dev};

	GBPF_CU_HOST_CALL(s, ev, ((PFN_cuDevicePrimaryCtxReset_v11000)gbpf_cu_slot_real(s))(dev));
}
GBPF_CU_FAMILY(primary_ctx_reset, (CUdevice dev), (dev));

/* ---- module teardown: what the agent made from a module goes with it ---- */

static CUresult module_unload_impl(const struct gbpf_cu_slot *s, CUmodule mod)
{
	struct gbpf_cu_call_event ev = {.api = "cuModuleUnload", .kind = GBPF_CU_CALL_MODULE_UNLOAD,
					.module = mod, .device = -1};

	GBPF_CU_HOST_CALL(s, ev, ((PFN_cuModuleUnload_v2000)gbpf_cu_slot_real(s))(mod));
}
GBPF_CU_FAMILY(module_unload, (CUmodule mod), (mod));

static CUresult library_unload_impl(const struct gbpf_cu_slot *s, CUlibrary lib)
{
	struct gbpf_cu_call_event ev = {.api = "cuLibraryUnload", .kind = GBPF_CU_CALL_MODULE_UNLOAD,
					.library = lib, .device = -1};

	GBPF_CU_HOST_CALL(s, ev, ((PFN_cuLibraryUnload_v12000)gbpf_cu_slot_real(s))(lib));
}
GBPF_CU_FAMILY(library_unload, (CUlibrary lib), (lib));

/* ---- graph launches: the agent gives each a launch id (stream-ordered before the graph) ---- */

static CUresult graph_launch_impl(const struct gbpf_cu_slot *s, CUgraphExec exec, CUstream st)
{
	struct gbpf_cu_call_event ev = {.kind = GBPF_CU_CALL_GRAPH_LAUNCH, .stream = st,
					.graph_exec = exec, .device = -1};

	ev.api = gbpf_cu_slot_ptds(s) ? "cuGraphLaunch_ptsz" : "cuGraphLaunch";
	GBPF_CU_HOST_CALL(s, ev, ((PFN_cuGraphLaunch_v10000)gbpf_cu_slot_real(s))(exec, st));
}
GBPF_CU_FAMILY(graph_launch, (CUgraphExec exec, CUstream st), (exec, st));
