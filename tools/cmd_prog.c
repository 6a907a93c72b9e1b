/* SPDX-License-Identifier: MIT */
/* gbpf prog { show | run | codegen }: look at, run, and compile programs. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gbpf/backend.h>
#include <gbpf/maps.h>

#include "cli.h"
#include "map_print.h"
#include "names.h"
#include "prog_input.h"

static void show_prog(const struct gbpf_prog_desc *p)
{
	const struct gbpf_attach *a = &p->attach;

	if (cli.json) {
		jw_start_object(&cli.jw);
		jw_kv_string(&cli.jw, "name", p->name);
		jw_kv_string(&cli.jw, "section", p->section);
		jw_kv_string(&cli.jw, "attach", attach_kind_name(a->kind));
		jw_kv_string(&cli.jw, "target", a->target);
		if (a->symbol)
			jw_kv_string(&cli.jw, "symbol", a->symbol);
		jw_kv_bool(&cli.jw, "device", gbpf_attach_is_device(a->kind));
		jw_kv_uint(&cli.jw, "insns", p->insn_cnt);
		jw_end_object(&cli.jw);
		return;
	}
	printf("prog %s  section %s\n", p->name, p->section ? p->section : "-");
	printf("    attach %s%s%s%s%s  (%s)\n", attach_kind_name(a->kind), a->target ? " " : "",
	       a->target ? a->target : "", a->symbol ? ":" : "", a->symbol ? a->symbol : "",
	       gbpf_attach_is_device(a->kind) ? "runs on the GPU" : "runs on the host");
	printf("    %zu instructions\n", p->insn_cnt);
}

/* How `gbpf run` will print the map (its print tag, or the name rule). */
static const char *map_shown_as(const struct gbpf_map_desc *m)
{
	switch (gbpf_map_desc__hist_shape(m)) {
	case GBPF_MAP_HIST_ARRAY:
	case GBPF_MAP_HIST_SLOT_KEY:
		return "log2_hist";
	case GBPF_MAP_HIST_PER_KEY:
		return "log2_hist_per_key";
	default:
		return "default";
	}
}

static void show_map(const struct gbpf_map_desc *m)
{
	if (cli.json) {
		jw_start_object(&cli.jw);
		jw_kv_string(&cli.jw, "name", m->name);
		jw_kv_string(&cli.jw, "type", map_type_name(m->type));
		jw_kv_uint(&cli.jw, "type_id", m->type);
		jw_kv_uint(&cli.jw, "key_size", m->key_size);
		jw_kv_uint(&cli.jw, "value_size", m->value_size);
		jw_kv_uint(&cli.jw, "max_entries", m->max_entries);
		jw_kv_uint(&cli.jw, "flags", m->map_flags);
		jw_kv_string(&cli.jw, "origin", map_origin_name(m->origin));
		jw_kv_string(&cli.jw, "printed_as", map_shown_as(m));
		jw_end_object(&cli.jw);
		return;
	}
	printf("map %s  %s (%u)  key %uB  value %uB  max_entries %u  flags 0x%x  %s%s%s\n", m->name,
	       map_type_name(m->type), m->type, m->key_size, m->value_size, m->max_entries,
	       m->map_flags, map_origin_name(m->origin),
	       gbpf_map_desc__hist_shape(m) ? "  printed as " : "",
	       gbpf_map_desc__hist_shape(m) ? map_shown_as(m) : "");
}

static int do_show(int argc, char **argv)
{
	struct prog_input in;
	size_t i, n;

	if (argc != 2)
		return cli_error("usage: prog show FILE");
	if (prog_input_open(argv[1], &in))
		return -1;
	n = prog_input_count(&in);
	if (cli.json) {
		jw_start_object(&cli.jw);
		jw_kv_string(&cli.jw, "file", argv[1]);
		if (in.obj)
			jw_kv_string(&cli.jw, "license", gbpf_object__license(in.obj));
		jw_key(&cli.jw, "programs");
		jw_start_array(&cli.jw);
	} else if (in.obj) {
		printf("%s: license %s\n", argv[1],
		       gbpf_object__license(in.obj) ? gbpf_object__license(in.obj) : "(none)");
	}
	for (i = 0; i < n; i++)
		show_prog(prog_input_prog(&in, i));
	if (cli.json) {
		jw_end_array(&cli.jw);
		jw_key(&cli.jw, "maps");
		jw_start_array(&cli.jw);
	}
	if (in.obj)
		for (i = 0; i < gbpf_object__map_cnt(in.obj); i++)
			show_map(gbpf_object__map(in.obj, i));
	if (cli.json) {
		jw_end_array(&cli.jw);
		jw_end_object(&cli.jw);
		jw_finish(&cli.jw);
	}
	prog_input_close(&in);
	return 0;
}

static int parse_u64(const char *s, const char *what, uint64_t *out)
{
	char *end;

	errno = 0;
	*out = strtoull(s, &end, 0);
	if (errno || !*s || *end || s[0] == '-')
		return cli_error("%s: '%s' is not a non-negative integer", what, s);
	return 0;
}

/* Open the backend the user asked for (or the best one). */
static struct gbpf_plugin *pick_backend(struct gbpf_registry **reg, const char *name)
{
	struct gbpf_plugin *p;
	char why[512];
	int err = gbpf_registry_new(NULL, reg);

	if (err) {
		cli_error_code(err, "cannot scan for plugins");
		return NULL;
	}
	if (gbpf_registry_select(*reg, name, &p, why, sizeof(why))) {
		cli_error("%s", why);
		gbpf_registry_free(*reg);
		*reg = NULL;
		return NULL;
	}
	return p;
}

static void print_r0(const uint64_t *r0, uint64_t threads, const struct gbpf_prog_run_result *res)
{
	uint64_t i, differing = 0;

	for (i = 0; i < threads; i++)
		differing += r0[i] != res->r0;
	if (cli.json) {
		jw_kv_uint(&cli.jw, "r0", res->r0);
		jw_kv_uint(&cli.jw, "threads", threads);
		jw_kv_uint(&cli.jw, "threads_with_other_r0", differing);
		if (differing) {
			uint64_t shown = 0;

			jw_key(&cli.jw, "r0_per_thread");
			jw_start_array(&cli.jw);
			for (i = 0; i < threads && shown < 1024; i++, shown++) {
				jw_uint(&cli.jw, r0[i]);
			}
			jw_end_array(&cli.jw);
		}
		return;
	}
	if (!differing) {
		printf("r0 = %" PRIu64 " (0x%" PRIx64 ")%s\n", res->r0, res->r0,
		       threads > 1 ? " in every thread" : "");
		return;
	}
	printf("r0 differs between threads (%" PRIu64 " of %" PRIu64 " differ from thread 0):\n",
	       differing, threads);
	for (i = 0; i < threads && i < 32; i++)
		printf("  thread %" PRIu64 ": r0 = %" PRIu64 " (0x%" PRIx64 ")\n", i, r0[i], r0[i]);
	if (threads > 32)
		printf("  ... %" PRIu64 " more threads\n", threads - 32);
}

static int do_run(int argc, char **argv)
{
	static const struct option options[] = {
		{"backend", required_argument, NULL, 'b'},
		{"threads", required_argument, NULL, 't'},
		{"block", required_argument, NULL, 'k'},
		{"data", required_argument, NULL, 'D'},
		{"prog", required_argument, NULL, 'P'},
		{"shared-data", no_argument, NULL, 's'},
		{"unverified", no_argument, NULL, 'u'},
		{0},
	};
	const char *backend = NULL, *data_path = NULL, *prog_name = NULL;
	uint64_t threads = 1, block = 0;
	struct gbpf_registry *reg = NULL;
	struct gbpf_map_instance *maps = NULL;
	struct gbpf_plugin *plugin, *fallback = NULL;
	struct prog_input in;
	const struct gbpf_prog_desc *prog;
	uint64_t *r0 = NULL;
	char *data = NULL, log[2048] = "";
	size_t data_size = 0;
	int opt, err, shared = 0, unverified = 0, ret = -1;

	while ((opt = getopt_long(argc, argv, "b:t:D:P:", options, NULL)) >= 0) {
		switch (opt) {
		case 'b': backend = optarg; break;
		case 't': if (parse_u64(optarg, "--threads", &threads)) return -1; break;
		case 'k': if (parse_u64(optarg, "--block", &block)) return -1; break;
		case 'D': data_path = optarg; break;
		case 'P': prog_name = optarg; break;
		case 's': shared = 1; break;
		case 'u': unverified = 1; break;
		default: return cli_error("usage: prog run [--backend B] [--threads N] [--block N] "
					  "[--data FILE] [--prog NAME] [--shared-data] FILE");
		}
	}
	if (optind != argc - 1)
		return cli_error("usage: prog run [--backend B] [--threads N] [--data FILE] FILE");
	if (threads == 0 || threads > (1ULL << 32) || block > 1024)
		return cli_error("--threads must be in 1..2^32 and --block in 0..1024");
	if (prog_input_open(argv[optind], &in))
		return -1;
	prog = prog_input_select(&in, prog_name);
	if (!prog)
		goto out;
	if (data_path) {
		data = cli_read_file(data_path, &data_size);
		if (!data) {
			cli_error("--data %s: %s", data_path, strerror(errno));
			goto out;
		}
	} else if (in.has_tc && in.tc.has_mem) {
		data = malloc(in.tc.mem_size ? in.tc.mem_size : 1);
		if (!data) {
			cli_error("out of memory");
			goto out;
		}
		memcpy(data, in.tc.mem, in.tc.mem_size);
		data_size = in.tc.mem_size;
	}
	/* Unverified code may only run sandboxed: without a choice, that is the cpu interpreter. */
	if (unverified && !backend && !getenv("GBPF_BACKEND"))
		backend = "cpu";
	plugin = pick_backend(&reg, backend);
	if (!plugin)
		goto out;
	r0 = calloc(threads, sizeof(*r0));
	if (!r0) {
		cli_error("cannot hold r0 of %" PRIu64 " threads", threads);
		goto out;
	}
	struct gbpf_prog_run_result res = {.sz = sizeof(res)};

	for (;;) {
		err = gbpf_plugin__maps_create(plugin, prog, threads, &maps, log, sizeof(log));
		if (err) {
			cli_error("%s", log);
			goto out;
		}
		GBPF_OPTS(gbpf_prog_run_opts, opts, .threads = threads, .data = data,
			  .data_size = data_size, .run_flags = shared ? GBPF_RUN_SHARED_DATA : 0,
			  .block_size = (uint32_t)block, .r0 = r0, .maps = maps, .unverified = unverified,
			  .log = log, .log_size = sizeof(log));

		err = gbpf_plugin__run(plugin, prog, &opts, &res);
		/*
		 * The backend picked for the user cannot generate code for what the program
		 * uses (a helper, a map type only another backend keeps): the interpreter
		 * runs every program, so it runs there, and the user is told why.
		 */
		if (err != -ENOTSUP || backend || getenv("GBPF_BACKEND") ||
		    !strcmp(gbpf_plugin__name(plugin), "cpu") ||
		    gbpf_registry_select(reg, "cpu", &fallback, NULL, 0))
			break;
		fprintf(stderr, "gbpf prog run: backend '%s' cannot run '%s' (%s): running it on 'cpu'\n",
			gbpf_plugin__name(plugin), prog->name, log);
		gbpf_maps__destroy(maps, prog->map_cnt);
		maps = NULL;
		plugin = fallback;
	}
	if (err) {
		cli_error_code(err, "%s: program '%s' on backend '%s'%s%s", in.path, prog->name,
			       gbpf_plugin__name(plugin), log[0] ? ": " : "", log);
		goto out;
	}
	if (cli.json) {
		jw_start_object(&cli.jw);
		jw_kv_string(&cli.jw, "program", prog->name);
		jw_kv_string(&cli.jw, "backend", gbpf_plugin__name(plugin));
		jw_kv_uint(&cli.jw, "elapsed_ns", res.elapsed_ns);
		print_r0(r0, threads, &res);
		map_print_all(maps, prog->map_cnt);
		jw_end_object(&cli.jw);
		jw_finish(&cli.jw);
	} else {
		printf("program %s on backend %s, %" PRIu64 " thread%s, %.3f ms\n", prog->name,
		       gbpf_plugin__name(plugin), threads, threads == 1 ? "" : "s",
		       res.elapsed_ns / 1e6);
		print_r0(r0, threads, &res);
		map_print_all(maps, prog->map_cnt);
	}
	ret = 0;
out:
	gbpf_maps__destroy(maps, maps ? prog->map_cnt : 0);
	free(r0);
	free(data);
	prog_input_close(&in);
	gbpf_registry_free(reg);
	return ret;
}

/* The loaded plugin that generates code for @p target. */
static struct gbpf_plugin *codegen_backend(struct gbpf_registry *reg, const char *target)
{
	size_t i, n = gbpf_registry_plugin_count(reg), len = strlen(target);

	for (i = 0; i < n; i++) {
		struct gbpf_plugin *p = gbpf_registry_plugin(reg, i);
		const struct gbpf_backend_caps *caps = gbpf_plugin__caps(p);
		const char *t;

		if (!caps || !(caps->flags & GBPF_CAP_CODEGEN) || !caps->codegen_targets ||
		    !gbpf_plugin__ops(p)->codegen)
			continue;
		for (t = caps->codegen_targets; (t = strstr(t, target)); t += len)
			if ((t == caps->codegen_targets || t[-1] == ',') &&
			    (t[len] == 0 || t[len] == ','))
				return p;
	}
	return NULL;
}

static int do_codegen(int argc, char **argv)
{
	static const struct option options[] = {
		{"target", required_argument, NULL, 't'},
		{"arch", required_argument, NULL, 'a'},
		{"prog", required_argument, NULL, 'P'},
		{"kernel", no_argument, NULL, 'k'},
		{"output", required_argument, NULL, 'o'},
		{0},
	};
	const char *target = "ptx", *arch = NULL, *prog_name = NULL, *out_path = NULL;
	struct gbpf_registry *reg = NULL;
	struct gbpf_plugin *plugin;
	struct prog_input in;
	const struct gbpf_prog_desc **progs = NULL;
	int opt, kernel = 0, ret = -1;
	size_t i, n, count = 0;
	FILE *out = stdout;

	while ((opt = getopt_long(argc, argv, "t:a:P:ko:", options, NULL)) >= 0) {
		switch (opt) {
		case 't': target = optarg; break;
		case 'a': arch = optarg; break;
		case 'P': prog_name = optarg; break;
		case 'k': kernel = 1; break;
		case 'o': out_path = optarg; break;
		default: return cli_error("usage: prog codegen [--target ptx|spirv|amdgcn] "
					  "[--arch A] [--prog NAME] [--kernel] [-o OUT] FILE");
		}
	}
	if (optind != argc - 1)
		return cli_error("usage: prog codegen [--target T] [--arch A] FILE [-o OUT]");
	if (gbpf_registry_new(NULL, &reg))
		return cli_error("cannot scan for plugins");
	plugin = codegen_backend(reg, target);
	if (!plugin) {
		cli_error("no loaded backend generates code for target '%s'", target);
		gbpf_registry_free(reg);
		return -1;
	}
	if (prog_input_open(argv[optind], &in)) {
		gbpf_registry_free(reg);
		return -1;
	}
	if (out_path && !(out = fopen(out_path, "w"))) {
		cli_error("%s: %s", out_path, strerror(errno));
		goto done;
	}
	/* One module for the selected program, or for every program of the object. */
	n = prog_input_count(&in);
	progs = calloc(n ? n : 1, sizeof(*progs));
	if (!progs) {
		cli_error("out of memory");
		goto done;
	}
	for (i = 0; i < n; i++) {
		const struct gbpf_prog_desc *p = prog_input_prog(&in, i);

		if (!prog_name || strcmp(p->name, prog_name) == 0)
			progs[count++] = p;
	}
	if (!count) {
		cli_error("%s: no program named '%s'", in.path, prog_name);
		goto done;
	}
	{
		char log[1024] = "", *text = NULL;
		size_t len = 0;
		int err;

		GBPF_OPTS(gbpf_codegen_opts, opts, .target = target, .arch = arch,
			  .flags = kernel ? GBPF_CODEGEN_KERNEL : 0,
			  .progs = kernel ? NULL : progs, .prog_cnt = kernel ? 0 : count);
		if (kernel && count > 1) {
			cli_error("%s: --kernel runs one program: choose it with --prog", in.path);
			goto done;
		}
		err = gbpf_plugin__ops(plugin)->codegen(progs[0], &opts, &text, &len, log,
							 sizeof(log));
		if (err) {
			cli_error_code(err, "%s: %s code generation failed%s%s", in.path, target,
				       log[0] ? ": " : "", log);
			goto done;
		}
		fwrite(text, 1, len, out);
		free(text);
	}
	ret = 0;
done:
	free(progs);
	if (out && out != stdout)
		fclose(out);
	prog_input_close(&in);
	gbpf_registry_free(reg);
	return ret;
}

static int do_help(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr,
		"Usage: %s prog show FILE\n"
		"       %s prog run [--backend B] [--threads N] [--block N] [--data FILE]\n"
		"                   [--prog NAME] [--shared-data] [--unverified] FILE\n"
		"       %s prog codegen [--target ptx|spirv|amdgcn] [--arch A] [--prog NAME]\n"
		"                   [--kernel] [-o OUT] FILE\n"
		"       %s prog inject OBJ --into FILE [-o DIR] [--backend B]\n"
		"FILE is a BPF object, a conformance .data file, assembler text (.s) or raw\n"
		"instructions. --unverified is allowed only on sandboxed backends (cpu).\n",
		cli.argv0, cli.argv0, cli.argv0, cli.argv0);
	return 0;
}

int cmd_prog(int argc, char **argv)
{
	static const struct cli_cmd cmds[] = {
		{"show", do_show},
		{"run", do_run},
		{"codegen", do_codegen},
		{"inject", cmd_inject},
		{"help", do_help},
		{NULL, NULL},
	};

	return cli_dispatch(cmds, argc - 1, argv + 1, do_help);
}
