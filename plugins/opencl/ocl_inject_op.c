/* SPDX-License-Identifier: MIT */
/*
 * The opencl plugin's inject() entry (`gbpf prog inject OBJ --into FILE
 * --backend opencl`): the same path the agent takes at run time, on a file.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ocl_compile.h"
#include "ocl_inject_op.h"
#include "spirv.h"

#define SPIRV_MAGIC 0x07230203u

/* The device programs handed to the injector and their index in opts->progs. */
struct inject_sel {
	const struct gbpf_inject_opts *opts;
	size_t *origin;
};

static int inject_selected(void *ctx, size_t prog_index, const char *name)
{
	struct inject_sel *s = ctx;

	if (!s->opts->kernel_selected)
		return 1;
	return s->opts->kernel_selected(s->opts->select_ctx, s->origin[prog_index], name);
}

struct inject_owned {
	struct gbpf_spirv_inject_result raw;
	struct gbpf_inject_kernel *kernels;
	struct gbpf_inject_module module;
	char *text;
};

void ocl_inject_free(struct gbpf_inject_result *result)
{
	struct inject_owned *own;

	if (!result || !result->priv)
		return;
	own = result->priv;
	gbpf_spirv_inject_result_free(&own->raw);
	free(own->kernels);
	free(own->text);
	free(own);
	result->priv = NULL;
	result->kernels = NULL;
	result->kernel_cnt = 0;
	result->modules = NULL;
	result->module_cnt = 0;
}

int ocl_inject(const struct gbpf_inject_opts *opts, struct gbpf_inject_result *result, char *log,
	       size_t log_size)
{
	const char *name = opts && opts->image_name ? opts->image_name : "image";
	const struct gbpf_prog_desc **dev = NULL;
	struct gbpf_spirv_inject_opts io = {.sz = sizeof(io)};
	struct inject_owned *own = NULL;
	struct inject_sel sel;
	uint32_t *words = NULL, *compiled = NULL;
	size_t nwords = 0, ndev = 0, i;
	int err;

	if (!opts || !result || !opts->image || (opts->prog_cnt && !opts->progs))
		return -EINVAL;
	sel.opts = opts;
	sel.origin = calloc(opts->prog_cnt ? opts->prog_cnt : 1, sizeof(*sel.origin));
	dev = calloc(opts->prog_cnt ? opts->prog_cnt : 1, sizeof(*dev));
	if (!sel.origin || !dev) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < opts->prog_cnt; i++)
		if (gbpf_attach_is_device(opts->progs[i]->attach.kind)) {
			sel.origin[ndev] = i;
			dev[ndev++] = opts->progs[i];
		}
	if (!ndev) {
		snprintf(log, log_size, "no program attaches to GPU kernels (gpu/entry, gpu/exit, gpu/mem)");
		err = -ENOENT;
		goto out;
	}
	if (opts->image_size >= 20 && opts->image_size % 4 == 0 &&
	    *(const uint32_t *)opts->image == SPIRV_MAGIC) {
		/* The image may be unaligned for uint32_t access: copy it. */
		compiled = malloc(opts->image_size);
		if (!compiled) {
			err = -ENOMEM;
			goto out;
		}
		memcpy(compiled, opts->image, opts->image_size);
		words = compiled;
		nwords = opts->image_size / 4;
	} else if (ocl_looks_like_source(opts->image, opts->image_size)) {
		err = ocl_compile_source(opts->image, opts->image_size, NULL, &compiled, &nwords, log, log_size);
		if (err)
			goto out;
		words = compiled;
	} else {
		snprintf(log, log_size, "%s: neither a SPIR-V module (magic 0x07230203) nor OpenCL C source", name);
		err = -EINVAL;
		goto out;
	}
	io.kernel_selected = inject_selected;
	io.select_ctx = &sel;
	own = calloc(1, sizeof(*own));
	if (!own) {
		err = -ENOMEM;
		goto out;
	}
	err = gbpf_spirv_inject(words, nwords, dev, ndev, &io, &own->raw, log, log_size);
	if (err)
		goto out;
	err = gbpf_spirv_disassemble(own->raw.words, own->raw.word_count, &own->text);
	if (err) {
		snprintf(log, log_size, "%s: cannot disassemble the instrumented module (%d)", name, err);
		goto out;
	}
	own->kernels = calloc(own->raw.kernel_cnt ? own->raw.kernel_cnt : 1, sizeof(*own->kernels));
	if (!own->kernels) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < own->raw.kernel_cnt; i++) {
		const struct gbpf_spirv_inject_kernel *k = &own->raw.kernels[i];

		own->kernels[i] = (struct gbpf_inject_kernel){
			.name = k->name,
			.module = name,
			.instrumented = k->instrumented,
			.reason = k->reason,
			.n_entry = k->n_entry,
			.n_exit = k->n_exit,
			.n_mem = k->n_mem,
		};
	}
	own->module = (struct gbpf_inject_module){.module = name, .text = own->text,
						  .text_len = strlen(own->text)};
	gbpf_inject_result_set_kernels(result, own->kernels, own->raw.kernel_cnt);
	result->modules = &own->module;
	result->module_cnt = 1;
	result->priv = own;
	own = NULL;
out:
	if (own) {
		gbpf_spirv_inject_result_free(&own->raw);
		free(own->kernels);
		free(own->text);
		free(own);
	}
	free(compiled);
	free(dev);
	free(sel.origin);
	return err;
}
