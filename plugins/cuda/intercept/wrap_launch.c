/* SPDX-License-Identifier: MIT */
/*
 * plugins/cuda/intercept/wrap_launch.c - wrappers of the launch entry
 * points and of graph kernel nodes, with CUfunction replacement.
 *
 * Every wrapper describes its call as a struct gbpf_cu_launch and hands
 * launch_common() a function that performs the call with a given
 * CUfunction. The hook sees a copy; only its choice of replacement is
 * used, so a misbehaving hook cannot alter the app's grid, stream or
 * parameters. If the hook fails, the original call is made as is; if the
 * replacement's launch fails (launch errors are reported before anything
 * is enqueued), the original is launched. No synchronisation is added.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "plugins/cuda/intercept/intercept_internal.h"

typedef CUresult (*launch_do_fn)(const struct gbpf_cu_slot *s, const void *args, CUfunction f,
				 struct gbpf_cu_launch *l);

static CUresult launch_common(const struct gbpf_cu_slot *s, struct gbpf_cu_launch *l,
			      const void *args, launch_do_fn do_call)
{
	const struct gbpf_cu_hooks *h = gbpf_cu_hooks_enter();
	struct gbpf_cu_handle_info info;
	struct gbpf_cu_launch seen;
	CUresult res;
	int rc = 0;

	if (!h)
		return do_call(s, args, l->func, l);
	l->ptds = gbpf_cu_slot_ptds(s);
	l->launch_id = gbpf_cu_next_launch_id();
	if (gbpf_cu_handle_lookup(l->func, &info) == 0) {
		l->name = info.name;
		l->module = info.module;
		l->library = info.library;
	}
	seen = *l;
	if (h->launch_pre)
		rc = h->launch_pre(h->ctx, &seen);
	l->hook_data = seen.hook_data;
	l->replacement = rc == 0 ? seen.replacement : NULL;
	if (l->replacement)
		l->extra_param = seen.extra_param;
	if (l->replacement && l->replacement != l->func) {
		res = do_call(s, args, l->replacement, l);
		l->replacement_result = res;
		if (res == GBPF_CUDA_SUCCESS)
			l->replaced = 1;
		else
			res = do_call(s, args, l->func, l);
	} else {
		res = do_call(s, args, l->func, l);
	}
	l->result = res;
	if (h->launch_post)
		h->launch_post(h->ctx, l);
	gbpf_cu_hooks_leave();
	return res;
}

/* ---- the replacement's hidden trailing parameter (launch id) ---- */

/* extra[] keys (cuLaunchKernel's `extra`). */
#define XP_END ((void *)0x00)
#define XP_BUFFER_POINTER ((void *)0x01)
#define XP_BUFFER_SIZE ((void *)0x02)
/* Key/value pairs of an `extra` array we copy; the driver knows three keys. */
#define XP_MAX_PAIRS 8
#define XP_SMALL_PARAMS 32
#define XP_SMALL_BUF 256

/*
 * The app's parameters extended by the replacement's hidden one. The
 * driver copies parameters during the call (launches, node creation and
 * node updates alike), so this lives on the wrapper's stack for the call.
 */
struct xparams {
	void **params;
	void **extra;
	uint64_t value;
	size_t size;
	void *heap;
	void *small_params[XP_SMALL_PARAMS + 1];
	void *extra_arr[2 * XP_MAX_PAIRS + 1];
	_Alignas(16) unsigned char small_buf[XP_SMALL_BUF];
};

static int xp_wanted(const struct gbpf_cu_launch *l, CUfunction f)
{
	return l->extra_param.on && f == l->replacement && f != l->func;
}

/* Extend @params / @extra into @x; -EINVAL when the app's form cannot be extended. */
static int xparams_make(struct xparams *x, const struct gbpf_cu_launch *l, void **params,
			void **extra)
{
	unsigned n = l->extra_param.n_params, off = l->extra_param.offset;
	void *buf = NULL;
	size_t size = 0, i, npairs = 0;
	unsigned char *nb;

	x->heap = NULL;
	x->value = l->extra_param.value;
	x->extra = NULL;
	if (params || !extra) {
		/* kernelParams (or a kernel without parameters: only ours). */
		if (!params && n)
			return -EINVAL;
		x->params = x->small_params;
		if (n > XP_SMALL_PARAMS) {
			x->params = x->heap = malloc(((size_t)n + 1) * sizeof(void *));
			if (!x->heap)
				return -ENOMEM;
		}
		if (n)
			memcpy(x->params, params, n * sizeof(void *));
		x->params[n] = &x->value;
		x->extra = extra; /* with kernelParams the driver ignores or rejects it, as for the app */
		return 0;
	}
	/* An `extra` buffer: copy it, put ours at its offset, and say the new size. */
	for (i = 0; extra[i] != XP_END; i += 2) {
		if (npairs++ >= XP_MAX_PAIRS)
			return -EINVAL;
		if (extra[i] == XP_BUFFER_POINTER)
			buf = extra[i + 1];
		else if (extra[i] == XP_BUFFER_SIZE && extra[i + 1])
			size = *(const size_t *)extra[i + 1];
	}
	if (!buf || size > off + (size_t)8 || off > 32764u)
		return -EINVAL;
	nb = x->small_buf;
	if (off + (size_t)8 > sizeof(x->small_buf)) {
		nb = x->heap = calloc(1, off + (size_t)8);
		if (!nb)
			return -ENOMEM;
	} else {
		memset(nb, 0, off + (size_t)8);
	}
	memcpy(nb, buf, size < off ? size : off);
	memcpy(nb + off, &x->value, 8);
	x->size = off + (size_t)8;
	for (i = 0; extra[i] != XP_END; i += 2) {
		x->extra_arr[i] = extra[i];
		x->extra_arr[i + 1] = extra[i] == XP_BUFFER_POINTER ? (void *)nb
				      : extra[i] == XP_BUFFER_SIZE ? (void *)&x->size
								   : extra[i + 1];
	}
	x->extra_arr[i] = XP_END;
	x->extra = x->extra_arr;
	x->params = NULL;
	return 0;
}

static void xparams_free(struct xparams *x)
{
	free(x->heap);
	x->heap = NULL;
}

/* ---- cuLaunchKernel and cuLaunchCooperativeKernel ---- */

struct launch_args {
	CUstream stream;
	void **params;
	void **extra;
};

static void fill_dims(struct gbpf_cu_launch *l, unsigned int gx, unsigned int gy, unsigned int gz,
		      unsigned int bx, unsigned int by, unsigned int bz, unsigned int shmem)
{
	l->grid[0] = gx;
	l->grid[1] = gy;
	l->grid[2] = gz;
	l->block[0] = bx;
	l->block[1] = by;
	l->block[2] = bz;
	l->shared_mem_bytes = shmem;
}

static CUresult do_launch_kernel(const struct gbpf_cu_slot *s, const void *args, CUfunction f,
				 struct gbpf_cu_launch *l)
{
	const struct launch_args *a = args;
	struct xparams x;
	CUresult res;

	if (!xp_wanted(l, f))
		return ((PFN_cuLaunchKernel_v4000)gbpf_cu_slot_real(s))(
			f, l->grid[0], l->grid[1], l->grid[2], l->block[0], l->block[1], l->block[2],
			l->shared_mem_bytes, a->stream, a->params, a->extra);
	if (xparams_make(&x, l, a->params, a->extra))
		return GBPF_CUDA_ERROR_INVALID_VALUE;
	res = ((PFN_cuLaunchKernel_v4000)gbpf_cu_slot_real(s))(
		f, l->grid[0], l->grid[1], l->grid[2], l->block[0], l->block[1], l->block[2],
		l->shared_mem_bytes, a->stream, x.params, x.extra);
	xparams_free(&x);
	return res;
}

static CUresult launch_kernel_impl(const struct gbpf_cu_slot *s, CUfunction f, unsigned int gx,
				   unsigned int gy, unsigned int gz, unsigned int bx,
				   unsigned int by, unsigned int bz, unsigned int shmem,
				   CUstream stream, void **params, void **extra)
{
	struct gbpf_cu_launch l = {.api = GBPF_CU_LAUNCH_KERNEL, .func = f, .stream = stream,
				   .kernel_params = params, .extra = extra};
	struct launch_args a = {stream, params, extra};

	l.api_name = gbpf_cu_slot_ptds(s) ? "cuLaunchKernel_ptsz" : "cuLaunchKernel";
	fill_dims(&l, gx, gy, gz, bx, by, bz, shmem);
	return launch_common(s, &l, &a, do_launch_kernel);
}
GBPF_CU_FAMILY(launch_kernel,
	       (CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
		unsigned int by, unsigned int bz, unsigned int shmem, CUstream stream,
		void **params, void **extra),
	       (f, gx, gy, gz, bx, by, bz, shmem, stream, params, extra));

static CUresult do_launch_cooperative(const struct gbpf_cu_slot *s, const void *args,
				      CUfunction f, struct gbpf_cu_launch *l)
{
	const struct launch_args *a = args;
	struct xparams x;
	CUresult res;

	if (!xp_wanted(l, f))
		return ((PFN_cuLaunchCooperativeKernel_v9000)gbpf_cu_slot_real(s))(
			f, l->grid[0], l->grid[1], l->grid[2], l->block[0], l->block[1], l->block[2],
			l->shared_mem_bytes, a->stream, a->params);
	if (xparams_make(&x, l, a->params, NULL) || !x.params) {
		xparams_free(&x);
		return GBPF_CUDA_ERROR_INVALID_VALUE;
	}
	res = ((PFN_cuLaunchCooperativeKernel_v9000)gbpf_cu_slot_real(s))(
		f, l->grid[0], l->grid[1], l->grid[2], l->block[0], l->block[1], l->block[2],
		l->shared_mem_bytes, a->stream, x.params);
	xparams_free(&x);
	return res;
}

static CUresult launch_cooperative_impl(const struct gbpf_cu_slot *s, CUfunction f,
					unsigned int gx, unsigned int gy, unsigned int gz,
					unsigned int bx, unsigned int by, unsigned int bz,
					unsigned int shmem, CUstream stream, void **params)
{
	struct gbpf_cu_launch l = {.api = GBPF_CU_LAUNCH_COOPERATIVE, .func = f,
				   .stream = stream, .kernel_params = params};
	struct launch_args a = {stream, params, NULL};

	l.api_name = gbpf_cu_slot_ptds(s) ? "cuLaunchCooperativeKernel_ptsz"
					  : "cuLaunchCooperativeKernel";
	fill_dims(&l, gx, gy, gz, bx, by, bz, shmem);
	return launch_common(s, &l, &a, do_launch_cooperative);
}
GBPF_CU_FAMILY(launch_cooperative,
	       (CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
		unsigned int by, unsigned int bz, unsigned int shmem, CUstream stream,
		void **params),
	       (f, gx, gy, gz, bx, by, bz, shmem, stream, params));

/* ---- cuLaunchKernelEx ---- */

struct launch_ex_args {
	const CUlaunchConfig *config;
	void **params;
	void **extra;
};

static CUresult do_launch_ex(const struct gbpf_cu_slot *s, const void *args, CUfunction f,
			     struct gbpf_cu_launch *l)
{
	const struct launch_ex_args *a = args;

	struct xparams x;
	CUresult res;

	/* The app's config is passed through untouched (attributes included). */
	if (!xp_wanted(l, f))
		return ((PFN_cuLaunchKernelEx_v11060)gbpf_cu_slot_real(s))(a->config, f, a->params,
									    a->extra);
	if (xparams_make(&x, l, a->params, a->extra))
		return GBPF_CUDA_ERROR_INVALID_VALUE;
	res = ((PFN_cuLaunchKernelEx_v11060)gbpf_cu_slot_real(s))(a->config, f, x.params, x.extra);
	xparams_free(&x);
	return res;
}

static CUresult launch_kernel_ex_impl(const struct gbpf_cu_slot *s, const CUlaunchConfig *config,
				      CUfunction f, void **params, void **extra)
{
	struct gbpf_cu_launch l = {.api = GBPF_CU_LAUNCH_KERNEL_EX, .func = f, .config = config,
				   .kernel_params = params, .extra = extra};
	struct launch_ex_args a = {config, params, extra};

	l.api_name = gbpf_cu_slot_ptds(s) ? "cuLaunchKernelEx_ptsz" : "cuLaunchKernelEx";
	if (!config) /* let the driver report the error */
		return do_launch_ex(s, &a, f, &l);
	l.stream = config->hStream;
	fill_dims(&l, config->gridDimX, config->gridDimY, config->gridDimZ, config->blockDimX,
		  config->blockDimY, config->blockDimZ, config->sharedMemBytes);
	return launch_common(s, &l, &a, do_launch_ex);
}
GBPF_CU_FAMILY(launch_kernel_ex,
	       (const CUlaunchConfig *config, CUfunction f, void **params, void **extra),
	       (config, f, params, extra));

/* ---- graph kernel nodes ---- */

static void fill_from_v1(struct gbpf_cu_launch *l, const CUDA_KERNEL_NODE_PARAMS_v1 *p)
{
	l->func = p->func;
	fill_dims(l, p->gridDimX, p->gridDimY, p->gridDimZ, p->blockDimX, p->blockDimY,
		  p->blockDimZ, p->sharedMemBytes);
	l->kernel_params = p->kernelParams;
	l->extra = p->extra;
}

static void fill_from_v2(struct gbpf_cu_launch *l, const CUDA_KERNEL_NODE_PARAMS_v2 *p)
{
	fill_from_v1(l, (const CUDA_KERNEL_NODE_PARAMS_v1 *)p);
	/* kern is used only when func is NULL. */
	if (!p->func)
		l->func = (CUfunction)p->kern;
}

struct node_args {
	CUgraphNode *out;
	const CUgraphNode *deps;
	const CUgraphEdgeData *edges;
	size_t ndeps;
	const void *params; /* v1, v2 or CUgraphNodeParams */
};

/*
 * The params to pass: the app's own when f is the original, else a copy
 * naming f (with the hidden parameter in @x when the replacement takes
 * one: a node's parameters are copied by the driver during the call).
 * NULL when the app's parameters cannot be extended.
 */
static const CUDA_KERNEL_NODE_PARAMS_v1 *params_v1(const struct node_args *a, CUfunction f,
						   const struct gbpf_cu_launch *l,
						   CUDA_KERNEL_NODE_PARAMS_v1 *copy, struct xparams *x)
{
	x->heap = NULL;
	if (f == l->func)
		return a->params;
	*copy = *(const CUDA_KERNEL_NODE_PARAMS_v1 *)a->params;
	copy->func = f;
	if (xp_wanted(l, f)) {
		if (xparams_make(x, l, copy->kernelParams, copy->extra))
			return NULL;
		copy->kernelParams = x->params;
		copy->extra = x->extra;
	}
	return copy;
}

static const CUDA_KERNEL_NODE_PARAMS_v2 *params_v2(const struct node_args *a, CUfunction f,
						   const struct gbpf_cu_launch *l,
						   CUDA_KERNEL_NODE_PARAMS_v2 *copy, struct xparams *x)
{
	x->heap = NULL;
	if (f == l->func)
		return a->params;
	*copy = *(const CUDA_KERNEL_NODE_PARAMS_v2 *)a->params;
	copy->func = f;
	copy->kern = NULL;
	if (xp_wanted(l, f)) {
		if (xparams_make(x, l, copy->kernelParams, copy->extra))
			return NULL;
		copy->kernelParams = x->params;
		copy->extra = x->extra;
	}
	return copy;
}

static CUgraphNodeParams *params_generic(const struct node_args *a, CUfunction f,
					 const struct gbpf_cu_launch *l, CUgraphNodeParams *copy,
					 struct xparams *x)
{
	x->heap = NULL;
	if (f == l->func)
		return (CUgraphNodeParams *)a->params;
	*copy = *(const CUgraphNodeParams *)a->params;
	copy->kernel.func = f;
	copy->kernel.kern = NULL;
	if (xp_wanted(l, f)) {
		if (xparams_make(x, l, copy->kernel.kernelParams, copy->kernel.extra))
			return NULL;
		copy->kernel.kernelParams = x->params;
		copy->kernel.extra = x->extra;
	}
	return copy;
}

static CUresult do_add_kernel_node_v1(const struct gbpf_cu_slot *s, const void *args,
				      CUfunction f, struct gbpf_cu_launch *l)
{
	const struct node_args *a = args;
	CUDA_KERNEL_NODE_PARAMS_v1 copy;
	struct xparams x;
	const CUDA_KERNEL_NODE_PARAMS_v1 *pp = params_v1(a, f, l, &copy, &x);
	CUresult res;

	if (!pp)
		return GBPF_CUDA_ERROR_INVALID_VALUE;
	res = ((PFN_cuGraphAddKernelNode_v10000)gbpf_cu_slot_real(s))(
		a->out, l->graph, a->deps, a->ndeps, pp);
	xparams_free(&x);

	if (res == GBPF_CUDA_SUCCESS && a->out)
		l->node = *a->out;
	return res;
}

static CUresult graph_add_kernel_node_v1_impl(const struct gbpf_cu_slot *s, CUgraphNode *out,
					      CUgraph graph, const CUgraphNode *deps,
					      size_t ndeps, const CUDA_KERNEL_NODE_PARAMS_v1 *p)
{
	struct gbpf_cu_launch l = {.api = GBPF_CU_GRAPH_ADD_KERNEL_NODE,
				   .api_name = "cuGraphAddKernelNode", .graph = graph};
	struct node_args a = {out, deps, NULL, ndeps, p};

	if (!p)
		return do_add_kernel_node_v1(s, &a, NULL, &l);
	fill_from_v1(&l, p);
	return launch_common(s, &l, &a, do_add_kernel_node_v1);
}
GBPF_CU_FAMILY(graph_add_kernel_node_v1,
	       (CUgraphNode * out, CUgraph graph, const CUgraphNode *deps, size_t ndeps,
		const CUDA_KERNEL_NODE_PARAMS_v1 *p),
	       (out, graph, deps, ndeps, p));

static CUresult do_add_kernel_node_v2(const struct gbpf_cu_slot *s, const void *args,
				      CUfunction f, struct gbpf_cu_launch *l)
{
	const struct node_args *a = args;
	CUDA_KERNEL_NODE_PARAMS_v2 copy;
	struct xparams x;
	const CUDA_KERNEL_NODE_PARAMS_v2 *pp = params_v2(a, f, l, &copy, &x);
	CUresult res;

	if (!pp)
		return GBPF_CUDA_ERROR_INVALID_VALUE;
	res = ((PFN_cuGraphAddKernelNode_v12000)gbpf_cu_slot_real(s))(
		a->out, l->graph, a->deps, a->ndeps, pp);
	xparams_free(&x);

	if (res == GBPF_CUDA_SUCCESS && a->out)
		l->node = *a->out;
	return res;
}

static CUresult graph_add_kernel_node_v2_impl(const struct gbpf_cu_slot *s, CUgraphNode *out,
					      CUgraph graph, const CUgraphNode *deps,
					      size_t ndeps, const CUDA_KERNEL_NODE_PARAMS_v2 *p)
{
	struct gbpf_cu_launch l = {.api = GBPF_CU_GRAPH_ADD_KERNEL_NODE,
				   .api_name = "cuGraphAddKernelNode_v2", .graph = graph};
	struct node_args a = {out, deps, NULL, ndeps, p};

	if (!p)
		return do_add_kernel_node_v2(s, &a, NULL, &l);
	fill_from_v2(&l, p);
	return launch_common(s, &l, &a, do_add_kernel_node_v2);
}
GBPF_CU_FAMILY(graph_add_kernel_node_v2,
	       (CUgraphNode * out, CUgraph graph, const CUgraphNode *deps, size_t ndeps,
		const CUDA_KERNEL_NODE_PARAMS_v2 *p),
	       (out, graph, deps, ndeps, p));

static CUresult do_node_set_v1(const struct gbpf_cu_slot *s, const void *args, CUfunction f,
			       struct gbpf_cu_launch *l)
{
	CUDA_KERNEL_NODE_PARAMS_v1 copy;
	struct xparams x;
	const CUDA_KERNEL_NODE_PARAMS_v1 *pp = params_v1(args, f, l, &copy, &x);
	CUresult res;

	if (!pp)
		return GBPF_CUDA_ERROR_INVALID_VALUE;
	res = ((PFN_cuGraphKernelNodeSetParams_v10000)gbpf_cu_slot_real(s))(
		l->node, pp);
	xparams_free(&x);
	return res;
}

static CUresult graph_kernel_node_set_params_v1_impl(const struct gbpf_cu_slot *s,
						     CUgraphNode node,
						     const CUDA_KERNEL_NODE_PARAMS_v1 *p)
{
	struct gbpf_cu_launch l = {.api = GBPF_CU_GRAPH_KERNEL_NODE_SET_PARAMS,
				   .api_name = "cuGraphKernelNodeSetParams", .node = node};
	struct node_args a = {.params = p};

	if (!p)
		return do_node_set_v1(s, &a, NULL, &l);
	fill_from_v1(&l, p);
	return launch_common(s, &l, &a, do_node_set_v1);
}
GBPF_CU_FAMILY(graph_kernel_node_set_params_v1,
	       (CUgraphNode node, const CUDA_KERNEL_NODE_PARAMS_v1 *p), (node, p));

static CUresult do_node_set_v2(const struct gbpf_cu_slot *s, const void *args, CUfunction f,
			       struct gbpf_cu_launch *l)
{
	CUDA_KERNEL_NODE_PARAMS_v2 copy;
	struct xparams x;
	const CUDA_KERNEL_NODE_PARAMS_v2 *pp = params_v2(args, f, l, &copy, &x);
	CUresult res;

	if (!pp)
		return GBPF_CUDA_ERROR_INVALID_VALUE;
	res = ((PFN_cuGraphKernelNodeSetParams_v12000)gbpf_cu_slot_real(s))(
		l->node, pp);
	xparams_free(&x);
	return res;
}

static CUresult graph_kernel_node_set_params_v2_impl(const struct gbpf_cu_slot *s,
						     CUgraphNode node,
						     const CUDA_KERNEL_NODE_PARAMS_v2 *p)
{
	struct gbpf_cu_launch l = {.api = GBPF_CU_GRAPH_KERNEL_NODE_SET_PARAMS,
				   .api_name = "cuGraphKernelNodeSetParams_v2", .node = node};
	struct node_args a = {.params = p};

	if (!p)
		return do_node_set_v2(s, &a, NULL, &l);
	fill_from_v2(&l, p);
	return launch_common(s, &l, &a, do_node_set_v2);
}
GBPF_CU_FAMILY(graph_kernel_node_set_params_v2,
	       (CUgraphNode node, const CUDA_KERNEL_NODE_PARAMS_v2 *p), (node, p));

static CUresult do_exec_set_v1(const struct gbpf_cu_slot *s, const void *args, CUfunction f,
			       struct gbpf_cu_launch *l)
{
	CUDA_KERNEL_NODE_PARAMS_v1 copy;
	struct xparams x;
	const CUDA_KERNEL_NODE_PARAMS_v1 *pp = params_v1(args, f, l, &copy, &x);
	CUresult res;

	if (!pp)
		return GBPF_CUDA_ERROR_INVALID_VALUE;
	res = ((PFN_cuGraphExecKernelNodeSetParams_v10010)gbpf_cu_slot_real(s))(
		l->graph_exec, l->node, pp);
	xparams_free(&x);
	return res;
}

static CUresult graph_exec_kernel_node_set_params_v1_impl(const struct gbpf_cu_slot *s,
							  CUgraphExec exec, CUgraphNode node,
							  const CUDA_KERNEL_NODE_PARAMS_v1 *p)
{
	struct gbpf_cu_launch l = {.api = GBPF_CU_GRAPH_EXEC_KERNEL_NODE_SET_PARAMS,
				   .api_name = "cuGraphExecKernelNodeSetParams",
				   .graph_exec = exec, .node = node};
	struct node_args a = {.params = p};

	if (!p)
		return do_exec_set_v1(s, &a, NULL, &l);
	fill_from_v1(&l, p);
	return launch_common(s, &l, &a, do_exec_set_v1);
}
GBPF_CU_FAMILY(graph_exec_kernel_node_set_params_v1,
	       (CUgraphExec exec, CUgraphNode node, const CUDA_KERNEL_NODE_PARAMS_v1 *p),
	       (exec, node, p));

static CUresult do_exec_set_v2(const struct gbpf_cu_slot *s, const void *args, CUfunction f,
			       struct gbpf_cu_launch *l)
{
	CUDA_KERNEL_NODE_PARAMS_v2 copy;
	struct xparams x;
	const CUDA_KERNEL_NODE_PARAMS_v2 *pp = params_v2(args, f, l, &copy, &x);
	CUresult res;

	if (!pp)
		return GBPF_CUDA_ERROR_INVALID_VALUE;
	res = ((PFN_cuGraphExecKernelNodeSetParams_v12000)gbpf_cu_slot_real(s))(
		l->graph_exec, l->node, pp);
	xparams_free(&x);
	return res;
}

static CUresult graph_exec_kernel_node_set_params_v2_impl(const struct gbpf_cu_slot *s,
							  CUgraphExec exec, CUgraphNode node,
							  const CUDA_KERNEL_NODE_PARAMS_v2 *p)
{
	struct gbpf_cu_launch l = {.api = GBPF_CU_GRAPH_EXEC_KERNEL_NODE_SET_PARAMS,
				   .api_name = "cuGraphExecKernelNodeSetParams_v2",
				   .graph_exec = exec, .node = node};
	struct node_args a = {.params = p};

	if (!p)
		return do_exec_set_v2(s, &a, NULL, &l);
	fill_from_v2(&l, p);
	return launch_common(s, &l, &a, do_exec_set_v2);
}
GBPF_CU_FAMILY(graph_exec_kernel_node_set_params_v2,
	       (CUgraphExec exec, CUgraphNode node, const CUDA_KERNEL_NODE_PARAMS_v2 *p),
	       (exec, node, p));

/* ---- generic nodes (CUgraphNodeParams): only kernel nodes are hooked ---- */

static int is_kernel_node(const CUgraphNodeParams *p)
{
	return p && p->type == GBPF_CU_GRAPH_NODE_TYPE_KERNEL;
}

static CUresult do_add_node_v1(const struct gbpf_cu_slot *s, const void *args, CUfunction f,
			       struct gbpf_cu_launch *l)
{
	const struct node_args *a = args;
	CUgraphNodeParams copy;
	struct xparams x;
	CUgraphNodeParams *pp = params_generic(a, f, l, &copy, &x);
	CUresult res;

	if (!pp)
		return GBPF_CUDA_ERROR_INVALID_VALUE;
	res = ((PFN_cuGraphAddNode_v12020)gbpf_cu_slot_real(s))(
		a->out, l->graph, a->deps, a->ndeps, pp);
	xparams_free(&x);

	if (res == GBPF_CUDA_SUCCESS && a->out)
		l->node = *a->out;
	return res;
}

static CUresult graph_add_node_v1_impl(const struct gbpf_cu_slot *s, CUgraphNode *out,
				       CUgraph graph, const CUgraphNode *deps, size_t ndeps,
				       CUgraphNodeParams *p)
{
	struct gbpf_cu_launch l = {.api = GBPF_CU_GRAPH_ADD_NODE, .api_name = "cuGraphAddNode",
				   .graph = graph};
	struct node_args a = {out, deps, NULL, ndeps, p};

	if (!is_kernel_node(p))
		return ((PFN_cuGraphAddNode_v12020)gbpf_cu_slot_real(s))(out, graph, deps, ndeps, p);
	fill_from_v2(&l, &p->kernel);
	return launch_common(s, &l, &a, do_add_node_v1);
}
GBPF_CU_FAMILY(graph_add_node_v1,
	       (CUgraphNode * out, CUgraph graph, const CUgraphNode *deps, size_t ndeps,
		CUgraphNodeParams *p),
	       (out, graph, deps, ndeps, p));

static CUresult do_add_node_v2(const struct gbpf_cu_slot *s, const void *args, CUfunction f,
			       struct gbpf_cu_launch *l)
{
	const struct node_args *a = args;
	CUgraphNodeParams copy;
	struct xparams x;
	CUgraphNodeParams *pp = params_generic(a, f, l, &copy, &x);
	CUresult res;

	if (!pp)
		return GBPF_CUDA_ERROR_INVALID_VALUE;
	res = ((PFN_cuGraphAddNode_v12030)gbpf_cu_slot_real(s))(
		a->out, l->graph, a->deps, a->edges, a->ndeps, pp);
	xparams_free(&x);

	if (res == GBPF_CUDA_SUCCESS && a->out)
		l->node = *a->out;
	return res;
}

static CUresult graph_add_node_v2_impl(const struct gbpf_cu_slot *s, CUgraphNode *out,
				       CUgraph graph, const CUgraphNode *deps,
				       const CUgraphEdgeData *edges, size_t ndeps,
				       CUgraphNodeParams *p)
{
	struct gbpf_cu_launch l = {.api = GBPF_CU_GRAPH_ADD_NODE,
				   .api_name = "cuGraphAddNode_v2", .graph = graph};
	struct node_args a = {out, deps, edges, ndeps, p};

	if (!is_kernel_node(p))
		return ((PFN_cuGraphAddNode_v12030)gbpf_cu_slot_real(s))(out, graph, deps, edges,
									  ndeps, p);
	fill_from_v2(&l, &p->kernel);
	return launch_common(s, &l, &a, do_add_node_v2);
}
GBPF_CU_FAMILY(graph_add_node_v2,
	       (CUgraphNode * out, CUgraph graph, const CUgraphNode *deps,
		const CUgraphEdgeData *edges, size_t ndeps, CUgraphNodeParams *p),
	       (out, graph, deps, edges, ndeps, p));

static CUresult do_node_set(const struct gbpf_cu_slot *s, const void *args, CUfunction f,
			    struct gbpf_cu_launch *l)
{
	CUgraphNodeParams copy;
	struct xparams x;
	CUgraphNodeParams *pp = params_generic(args, f, l, &copy, &x);
	CUresult res;

	if (!pp)
		return GBPF_CUDA_ERROR_INVALID_VALUE;
	res = ((PFN_cuGraphNodeSetParams_v12020)gbpf_cu_slot_real(s))(
		l->node, pp);
	xparams_free(&x);
	return res;
}

static CUresult graph_node_set_params_impl(const struct gbpf_cu_slot *s, CUgraphNode node,
					   CUgraphNodeParams *p)
{
	struct gbpf_cu_launch l = {.api = GBPF_CU_GRAPH_NODE_SET_PARAMS,
				   .api_name = "cuGraphNodeSetParams", .node = node};
	struct node_args a = {.params = p};

	if (!is_kernel_node(p))
		return ((PFN_cuGraphNodeSetParams_v12020)gbpf_cu_slot_real(s))(node, p);
	fill_from_v2(&l, &p->kernel);
	return launch_common(s, &l, &a, do_node_set);
}
GBPF_CU_FAMILY(graph_node_set_params, (CUgraphNode node, CUgraphNodeParams * p), (node, p));

static CUresult do_exec_node_set(const struct gbpf_cu_slot *s, const void *args, CUfunction f,
				 struct gbpf_cu_launch *l)
{
	CUgraphNodeParams copy;
	struct xparams x;
	CUgraphNodeParams *pp = params_generic(args, f, l, &copy, &x);
	CUresult res;

	if (!pp)
		return GBPF_CUDA_ERROR_INVALID_VALUE;
	res = ((PFN_cuGraphExecNodeSetParams_v12020)gbpf_cu_slot_real(s))(
		l->graph_exec, l->node, pp);
	xparams_free(&x);
	return res;
}

static CUresult graph_exec_node_set_params_impl(const struct gbpf_cu_slot *s, CUgraphExec exec,
						CUgraphNode node, CUgraphNodeParams *p)
{
	struct gbpf_cu_launch l = {.api = GBPF_CU_GRAPH_EXEC_NODE_SET_PARAMS,
				   .api_name = "cuGraphExecNodeSetParams", .graph_exec = exec,
				   .node = node};
	struct node_args a = {.params = p};

	if (!is_kernel_node(p))
		return ((PFN_cuGraphExecNodeSetParams_v12020)gbpf_cu_slot_real(s))(exec, node, p);
	fill_from_v2(&l, &p->kernel);
	return launch_common(s, &l, &a, do_exec_node_set);
}
GBPF_CU_FAMILY(graph_exec_node_set_params,
	       (CUgraphExec exec, CUgraphNode node, CUgraphNodeParams * p), (exec, node, p));
