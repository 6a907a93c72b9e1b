/* SPDX-License-Identifier: MIT */
/*
 * gbpf prog inject OBJ --into FILE [-o DIR] [--backend B]
 * Shows, offline, what gbpf would inject into an application: every kernel
 * of FILE (PTX, fatbin, cubin or executable), whether it is instrumented
 * (and why not), and the instrumented device code.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <gbpf/backend.h>
#include <gbpf/object.h>
#include <gbpf/verifier.h>

#include "cli.h"
#include "prog_input.h"

struct select_ctx {
	const struct gbpf_prog_desc *const *progs;
	size_t count;
};

static int select_kernel(void *ctx, size_t prog_index, const char *mangled)
{
	struct select_ctx *sc = ctx;

	return prog_index < sc->count && gbpf_prog_targets_kernel(sc->progs[prog_index], mangled);
}

static struct gbpf_plugin *inject_backend(struct gbpf_registry *reg, const char *name)
{
	size_t i, n = gbpf_registry_plugin_count(reg);

	if (name) {
		struct gbpf_plugin *p = gbpf_registry_find(reg, name);
		const struct gbpf_backend_ops *ops = p ? gbpf_plugin__ops(p) : NULL;

		return ops && ops->inject ? p : NULL;
	}
	for (i = 0; i < n; i++) {
		struct gbpf_plugin *p = gbpf_registry_plugin(reg, i);
		const struct gbpf_backend_caps *caps = gbpf_plugin__caps(p);

		if (caps && (caps->flags & GBPF_CAP_INJECT) && gbpf_plugin__ops(p)->inject)
			return p;
	}
	return NULL;
}

/*
 * Nothing is injected unverified, offline included. @ctx_reads[i]: the
 * context bytes program i may read, handed to the plugin as the agent's
 * are, so that it leaves out the same context stores.
 */
static int verify_all(const struct prog_input *in, const struct gbpf_prog_desc **progs, size_t n,
		      uint64_t *ctx_reads)
{
	size_t i;

	for (i = 0; i < n; i++) {
		struct gbpf_verify_result r = {.sz = sizeof(r)};
		GBPF_OPTS(gbpf_verify_opts, o, .log_level = GBPF_VERIFY_LOG_ERROR);

		gbpf_verify(progs[i], &o, &r);
		if (r.verdict != GBPF_VERDICT_ACCEPT)
			return cli_error("%s: program '%s' (section %s) rejected by the verifier at "
					 "instruction %lld: %s",
					 in->path, progs[i]->name, progs[i]->section ? progs[i]->section : "-",
					 (long long)r.error_insn, r.reason);
		ctx_reads[i] = r.ctx_read_mask;
	}
	return 0;
}

static int write_module(const char *dir, size_t idx, const struct gbpf_inject_module *m,
			char *path, size_t path_size)
{
	FILE *f;

	snprintf(path, path_size, "%s/module%zu.ptx", dir, idx);
	f = fopen(path, "w");
	if (!f || fwrite(m->text, 1, m->text_len, f) != m->text_len) {
		if (f)
			fclose(f);
		return cli_error("%s: %s", path, strerror(errno));
	}
	if (fclose(f))
		return cli_error("%s: %s", path, strerror(errno));
	return 0;
}

int cmd_inject(int argc, char **argv)
{
	static const struct option options[] = {
		{"into", required_argument, NULL, 'i'},
		{"output", required_argument, NULL, 'o'},
		{"backend", required_argument, NULL, 'b'},
		{0},
	};
	const char *into = NULL, *out_dir = NULL, *backend = NULL;
	struct gbpf_inject_result res = {.sz = sizeof(res)};
	const struct gbpf_backend_ops *ops = NULL;
	const struct gbpf_prog_desc **progs = NULL;
	uint64_t *ctx_reads = NULL;
	struct gbpf_registry *reg = NULL;
	struct gbpf_plugin *plugin;
	struct prog_input in;
	char log[2048] = "", *image = NULL;
	size_t image_size = 0, n, i;
	int opt, err, ret = -1, have_input = 0;

	while ((opt = getopt_long(argc, argv, "i:o:b:", options, NULL)) >= 0) {
		switch (opt) {
		case 'i': into = optarg; break;
		case 'o': out_dir = optarg; break;
		case 'b': backend = optarg; break;
		default: return cli_error("usage: prog inject OBJ --into FILE [-o DIR] [--backend B]");
		}
	}
	if (optind != argc - 1 || !into)
		return cli_error("usage: prog inject OBJ --into FILE [-o DIR] [--backend B]");
	if (gbpf_registry_new(NULL, &reg))
		return cli_error("cannot scan for plugins");
	plugin = inject_backend(reg, backend);
	if (!plugin) {
		cli_error("no loaded backend can inject%s%s", backend ? " named " : "",
			  backend ? backend : "");
		goto out;
	}
	ops = gbpf_plugin__ops(plugin);
	if (prog_input_open(argv[optind], &in))
		goto out;
	have_input = 1;
	n = prog_input_count(&in);
	progs = calloc(n ? n : 1, sizeof(*progs));
	ctx_reads = calloc(n ? n : 1, sizeof(*ctx_reads));
	if (!progs || !ctx_reads) {
		cli_error("out of memory");
		goto out;
	}
	for (i = 0; i < n; i++)
		progs[i] = prog_input_prog(&in, i);
	if (verify_all(&in, progs, n, ctx_reads))
		goto out;
	image = cli_read_file(into, &image_size);
	if (!image) {
		cli_error("%s: %s", into, strerror(errno));
		goto out;
	}
	struct select_ctx sc = {.progs = progs, .count = n};
	struct gbpf_inject_opts opts = {
		.sz = sizeof(opts),
		.progs = progs,
		.prog_cnt = n,
		.image = image,
		.image_size = image_size,
		.image_name = into,
		.kernel_selected = select_kernel,
		.select_ctx = &sc,
		.prog_ctx_reads = ctx_reads,
	};
	err = ops->inject(&opts, &res, log, sizeof(log));
	if (err) {
		cli_error_code(err, "%s into %s%s%s", in.path, into, log[0] ? ": " : "", log);
		goto out;
	}
	if (out_dir && mkdir(out_dir, 0755) && errno != EEXIST) {
		cli_error("%s: %s", out_dir, strerror(errno));
		goto out;
	}
	if (cli.json) {
		jw_start_object(&cli.jw);
		jw_kv_string(&cli.jw, "backend", gbpf_plugin__name(plugin));
		jw_key(&cli.jw, "kernels");
		jw_start_array(&cli.jw);
		for (i = 0; i < res.kernel_cnt; i++) {
			struct gbpf_inject_kernel kk, *k = &kk;

			gbpf_inject_result_kernel(&res, i, k);
			jw_start_object(&cli.jw);
			jw_kv_string(&cli.jw, "name", k->name);
			jw_kv_string(&cli.jw, "module", k->module);
			jw_kv_bool(&cli.jw, "instrumented", k->instrumented);
			if (k->reason)
				jw_kv_string(&cli.jw, "reason", k->reason);
			jw_kv_uint(&cli.jw, "entry_sites", k->n_entry);
			jw_kv_uint(&cli.jw, "exit_sites", k->n_exit);
			jw_kv_uint(&cli.jw, "mem_sites", k->n_mem);
			jw_kv_uint(&cli.jw, "barrier_sites", k->n_barrier);
			jw_kv_uint(&cli.jw, "block_sites", k->n_block);
			jw_end_object(&cli.jw);
		}
		jw_end_array(&cli.jw);
		jw_key(&cli.jw, "modules");
		jw_start_array(&cli.jw);
	} else {
		for (i = 0; i < res.kernel_cnt; i++) {
			struct gbpf_inject_kernel kk, *k = &kk;

			gbpf_inject_result_kernel(&res, i, k);
			if (k->instrumented)
				fprintf(stderr, "kernel %s (%s): instrumented: %u entry, %u exit, %u "
						"memory, %u barrier, %u basic-block sites\n",
					k->name, k->module, k->n_entry, k->n_exit, k->n_mem, k->n_barrier,
					k->n_block);
			if (k->instrumented && k->reason)
				fprintf(stderr, "kernel %s (%s): note: %s\n", k->name, k->module, k->reason);
			else if (!k->instrumented)
				fprintf(stderr, "kernel %s (%s): not instrumented: %s\n", k->name,
					k->module, k->reason ? k->reason : "not targeted");
		}
	}
	for (i = 0; i < res.module_cnt; i++) {
		char path[4096];

		if (out_dir) {
			if (write_module(out_dir, i, &res.modules[i], path, sizeof(path)))
				goto out;
		}
		if (cli.json) {
			jw_start_object(&cli.jw);
			jw_kv_string(&cli.jw, "module", res.modules[i].module);
			if (out_dir)
				jw_kv_string(&cli.jw, "path", path);
			else
				jw_kv_string(&cli.jw, "text", res.modules[i].text);
			jw_end_object(&cli.jw);
		} else if (out_dir) {
			fprintf(stderr, "wrote %s (%s)\n", path, res.modules[i].module);
		} else {
			printf("// gbpf: instrumented %s\n", res.modules[i].module);
			fwrite(res.modules[i].text, 1, res.modules[i].text_len, stdout);
		}
	}
	if (cli.json) {
		jw_end_array(&cli.jw);
		jw_end_object(&cli.jw);
		jw_finish(&cli.jw);
	}
	ret = 0;
out:
	if (ops && ops->inject_free)
		ops->inject_free(&res);
	free(image);
	free(progs);
	free(ctx_reads);
	if (have_input)
		prog_input_close(&in);
	gbpf_registry_free(reg);
	return ret;
}
