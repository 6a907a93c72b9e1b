/* SPDX-License-Identifier: MIT */
/*
 * The cuda plugin's inject() entry: offline instrumentation of an
 * application file, for `gbpf prog inject`. The same path the agent takes
 * at run time: one probe fragment for the object's device programs
 * (gbpf_ptx_emit), spliced into the file's PTX (gbpf_cuda_inject_image).
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gbpf/cuda_inject.h>
#include <gbpf/plugin.h>

#include "cuda_ctx_fields.h"
#include "cuda_inject_op.h"
#include "ptx_codegen.h"

/* Device programs and which of them serves each site kind. */
struct inject_plan {
	const struct gbpf_inject_opts *opts;
	const struct gbpf_prog_desc **device; /* programs handed to gbpf_ptx_emit */
	size_t *origin;                       /* their index in opts->progs */
	size_t device_cnt;
	int probe_for_kind[GBPF_ATTACH_GPU_BLOCK + 1]; /* index into device, -1 = none */
};

static bool plan_select(const char *mangled, void *arg)
{
	struct inject_plan *plan = arg;
	size_t i;

	for (i = 0; i < plan->device_cnt; i++) {
		if (!plan->opts->kernel_selected)
			return true;
		if (plan->opts->kernel_selected(plan->opts->select_ctx, plan->origin[i], mangled))
			return true;
	}
	return false;
}

static int plan_build(struct inject_plan *plan, const struct gbpf_inject_opts *opts, char *log,
		      size_t log_size)
{
	size_t i;
	int k;

	memset(plan, 0, sizeof(*plan));
	plan->opts = opts;
	for (k = 0; k <= GBPF_ATTACH_GPU_BLOCK; k++)
		plan->probe_for_kind[k] = -1;
	plan->device = calloc(opts->prog_cnt ? opts->prog_cnt : 1, sizeof(*plan->device));
	plan->origin = calloc(opts->prog_cnt ? opts->prog_cnt : 1, sizeof(*plan->origin));
	if (!plan->device || !plan->origin)
		return -ENOMEM;
	for (i = 0; i < opts->prog_cnt; i++) {
		const struct gbpf_prog_desc *p = opts->progs[i];
		uint32_t kind = p->attach.kind;

		if (!gbpf_attach_is_device(kind))
			continue;
		/* One probe per site kind: the injector calls a single function there. */
		if (plan->probe_for_kind[kind] >= 0) {
			snprintf(log, log_size,
				 "%s: programs '%s' and '%s' attach to the same kind of site; "
				 "injection takes one program per kind (entry, exit, mem, barrier, block)",
				 p->source_file ? p->source_file : "object",
				 plan->device[plan->probe_for_kind[kind]]->name, p->name);
			return -EOPNOTSUPP;
		}
		plan->probe_for_kind[kind] = (int)plan->device_cnt;
		plan->origin[plan->device_cnt] = i;
		plan->device[plan->device_cnt++] = p;
	}
	if (!plan->device_cnt) {
		snprintf(log, log_size, "no program attaches to GPU kernels (gpu/entry, gpu/exit, "
					"gpu/mem, gpu/barrier, gpu/block)");
		return -ENOENT;
	}
	return 0;
}

static void plan_free(struct inject_plan *plan)
{
	free(plan->device);
	free(plan->origin);
}

/* The context fields no device program reads, as the agent finds them (cuda_agent.c's attach). */
static unsigned plan_ctx_unused(const struct inject_plan *plan)
{
	const struct gbpf_inject_opts *o = plan->opts;
	const uint64_t *reads = o->sz >= offsetof(struct gbpf_inject_opts, prog_ctx_reads) +
						 sizeof(o->prog_ctx_reads)
					? o->prog_ctx_reads
					: NULL;
	unsigned unused = GBPF_CUDA_CTX_UNUSED_ALL | GBPF_CUDA_CTX_UNUSED_MEM_FIELDS;

	for (size_t i = 0; i < plan->device_cnt; i++)
		unused &= gbpf_cuda_ctx_unused(plan->device[i], reads ? &reads[plan->origin[i]] : NULL);
	return unused;
}

/* What the result's priv holds: the injector's result and our views of it. */
struct inject_owned {
	struct gbpf_cuda_inject_result *raw;
	struct gbpf_inject_kernel *kernels;
	struct gbpf_inject_module *modules;
};

int cuda_inject(const struct gbpf_inject_opts *opts, struct gbpf_inject_result *result, char *log,
		size_t log_size)
{
	/* the fragment the agent injects first (cuda_agent.c), and under GBPF_CUDA_NO_CONST_MAPS its second */
	struct gbpf_ptx_opts popts = {.sz = sizeof(popts), .arch = "sm_90",
				      .flags = GBPF_PTX_THREAD_LOCAL_CTX |
					       (getenv("GBPF_CUDA_NO_CONST_MAPS") ? 0 : GBPF_PTX_CONST_MAP_TABLE)};
	struct inject_owned *own = NULL;
	struct inject_plan plan;
	char *fragment = NULL;
	size_t len = 0, i;
	int err;

	if (!opts || !result || !opts->image || !opts->progs)
		return -EINVAL;
	err = plan_build(&plan, opts, log, log_size);
	if (err)
		goto out;
	err = gbpf_ptx_emit(plan.device, plan.device_cnt, &popts, &fragment, &len, log, log_size);
	if (err)
		goto out;

	struct gbpf_cuda_inject_opts iopts = {
		.sz = sizeof(iopts),
		.fragment = fragment,
		.select = plan_select,
		.select_arg = &plan,
		.ctx_unused = plan_ctx_unused(&plan),
		.thread_local_bytes = gbpf_progs_thread_local_size(plan.device, plan.device_cnt),
	};
	/* as the agent does: a launch id parameter only where a probe reads the id */
	iopts.launch_id_param = !(iopts.ctx_unused & GBPF_CUDA_CTX_UNUSED_LAUNCH_ID);
	if (plan.probe_for_kind[GBPF_ATTACH_GPU_ENTRY] >= 0) {
		iopts.sites |= GBPF_CUDA_SITE_ENTRY;
		iopts.entry_probe = (unsigned)plan.probe_for_kind[GBPF_ATTACH_GPU_ENTRY];
	}
	if (plan.probe_for_kind[GBPF_ATTACH_GPU_EXIT] >= 0) {
		iopts.sites |= GBPF_CUDA_SITE_EXIT;
		iopts.exit_probe = (unsigned)plan.probe_for_kind[GBPF_ATTACH_GPU_EXIT];
	}
	if (plan.probe_for_kind[GBPF_ATTACH_GPU_MEM] >= 0) {
		iopts.sites |= GBPF_CUDA_SITE_MEM;
		iopts.mem_probe = (unsigned)plan.probe_for_kind[GBPF_ATTACH_GPU_MEM];
	}
	if (plan.probe_for_kind[GBPF_ATTACH_GPU_BARRIER] >= 0) {
		iopts.sites |= GBPF_CUDA_SITE_BARRIER;
		iopts.barrier_probe = (unsigned)plan.probe_for_kind[GBPF_ATTACH_GPU_BARRIER];
	}
	if (plan.probe_for_kind[GBPF_ATTACH_GPU_BLOCK] >= 0) {
		iopts.sites |= GBPF_CUDA_SITE_BLOCK;
		iopts.block_probe = (unsigned)plan.probe_for_kind[GBPF_ATTACH_GPU_BLOCK];
	}
	own = calloc(1, sizeof(*own));
	if (!own) {
		err = -ENOMEM;
		goto out;
	}
	err = gbpf_cuda_inject_image(opts->image, opts->image_size, opts->image_name, &iopts,
				     &own->raw, log, log_size);
	if (err)
		goto out;
	own->kernels = calloc(own->raw->n_kernels ? own->raw->n_kernels : 1, sizeof(*own->kernels));
	own->modules = calloc(own->raw->n_modules ? own->raw->n_modules : 1, sizeof(*own->modules));
	if (!own->kernels || !own->modules) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < own->raw->n_kernels; i++) {
		const struct gbpf_cuda_kernel_info *k = &own->raw->kernels[i];

		own->kernels[i] = (struct gbpf_inject_kernel){
			.name = k->name,
			.module = k->module,
			.instrumented = k->instrumented,
			.reason = k->reason,
			.n_entry = k->n_entry,
			.n_exit = k->n_exit,
			.n_mem = k->n_mem,
			.n_barrier = k->n_barrier,
			.n_block = k->n_block,
		};
	}
	for (i = 0; i < own->raw->n_modules; i++)
		own->modules[i] = (struct gbpf_inject_module){
			.module = own->raw->modules[i].module,
			.text = own->raw->modules[i].ptx,
			.text_len = own->raw->modules[i].ptx_len,
		};
	gbpf_inject_result_set_kernels(result, own->kernels, own->raw->n_kernels);
	result->modules = own->modules;
	result->module_cnt = own->raw->n_modules;
	result->priv = own;
	own = NULL;
out:
	if (own) {
		gbpf_cuda_inject_result__free(own->raw);
		free(own->kernels);
		free(own->modules);
		free(own);
	}
	free(fragment);
	plan_free(&plan);
	return err;
}

void cuda_inject_free(struct gbpf_inject_result *result)
{
	struct inject_owned *own;

	if (!result || !result->priv)
		return;
	own = result->priv;
	gbpf_cuda_inject_result__free(own->raw);
	free(own->kernels);
	free(own->modules);
	free(own);
	memset(result, 0, sizeof(*result));
}
