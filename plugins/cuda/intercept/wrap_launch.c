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

	return ((PFN_cuLaunchKernel_v4000)gbpf_cu_slot_real(s))(
		f, l->grid[0], l->grid[1], l->grid[2], l->block[0], l->block[1], l->block[2],
		l->shared_mem_bytes, a->stream, a->params, a->extra);
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

	return ((PFN_cuLaunchCooperativeKernel_v9000)gbpf_cu_slot_real(s))(
		f, l->grid[0], l->grid[1], l->grid[2], l->block[0], l->block[1], l->block[2],
		l->shared_mem_bytes, a->stream, a->params);
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

	/* The app's config is passed through untouched (attributes included). */
	return ((PFN_cuLaunchKernelEx_v11060)gbpf_cu_slot_real(s))(a->config, f, a->params,
								    a->extra);
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

/* The params to pass: the app's own when f is the original, else a copy naming f. */
static const CUDA_KERNEL_NODE_PARAMS_v1 *params_v1(const struct node_args *a, CUfunction f,
						   const struct gbpf_cu_launch *l,
						   CUDA_KERNEL_NODE_PARAMS_v1 *copy)
{
	if (f == l->func)
		return a->params;
	*copy = *(const CUDA_KERNEL_NODE_PARAMS_v1 *)a->params;
	copy->func = f;
	return copy;
}

static const CUDA_KERNEL_NODE_PARAMS_v2 *params_v2(const struct node_args *a, CUfunction f,
						   const struct gbpf_cu_launch *l,
						   CUDA_KERNEL_NODE_PARAMS_v2 *copy)
{
	if (f == l->func)
		return a->params;
	*copy = *(const CUDA_KERNEL_NODE_PARAMS_v2 *)a->params;
	copy->func = f;
	copy->kern = NULL;
	return copy;
}

static CUgraphNodeParams *params_generic(const struct node_args *a, CUfunction f,
					 const struct gbpf_cu_launch *l, CUgraphNodeParams *copy)
{
	if (f == l->func)
		return (CUgraphNodeParams *)a->params;
	*copy = *(const CUgraphNodeParams *)a->params;
	copy->kernel.func = f;
	copy->kernel.kern = NULL;
	return copy;
}

static CUresult do_add_kernel_node_v1(const struct gbpf_cu_slot *s, const void *args,
				      CUfunction f, struct gbpf_cu_launch *l)
{
	const struct node_args *a = args;
	CUDA_KERNEL_NODE_PARAMS_v1 copy;
	CUresult res = ((PFN_cuGraphAddKernelNode_v10000)gbpf_cu_slot_real(s))(
		a->out, l->graph, a->deps, a->ndeps, params_v1(a, f, l, &copy));

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
	CUresult res = ((PFN_cuGraphAddKernelNode_v12000)gbpf_cu_slot_real(s))(
		a->out, l->graph, a->deps, a->ndeps, params_v2(a, f, l, &copy));

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

	return ((PFN_cuGraphKernelNodeSetParams_v10000)gbpf_cu_slot_real(s))(
		l->node, params_v1(args, f, l, &copy));
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

	return ((PFN_cuGraphKernelNodeSetParams_v12000)gbpf_cu_slot_real(s))(
		l->node, params_v2(args, f, l, &copy));
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

	return ((PFN_cuGraphExecKernelNodeSetParams_v10010)gbpf_cu_slot_real(s))(
		l->graph_exec, l->node, params_v1(args, f, l, &copy));
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

	return ((PFN_cuGraphExecKernelNodeSetParams_v12000)gbpf_cu_slot_real(s))(
		l->graph_exec, l->node, params_v2(args, f, l, &copy));
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
	CUresult res = ((PFN_cuGraphAddNode_v12020)gbpf_cu_slot_real(s))(
		a->out, l->graph, a->deps, a->ndeps, params_generic(a, f, l, &copy));

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
	CUresult res = ((PFN_cuGraphAddNode_v12030)gbpf_cu_slot_real(s))(
		a->out, l->graph, a->deps, a->edges, a->ndeps, params_generic(a, f, l, &copy));

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

	return ((PFN_cuGraphNodeSetParams_v12020)gbpf_cu_slot_real(s))(
		l->node, params_generic(args, f, l, &copy));
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

	return ((PFN_cuGraphExecNodeSetParams_v12020)gbpf_cu_slot_real(s))(
		l->graph_exec, l->node, params_generic(args, f, l, &copy));
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
