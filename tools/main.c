/* SPDX-License-Identifier: MIT */
/*
 * gbpf - command line of gbpf, shaped like bpftool:
 *   gbpf [OPTIONS] OBJECT COMMAND ...
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gbpf/gbpf.h>

#include "cli.h"

struct gbpf_cli cli;

static __attribute__((format(printf, 2, 0))) int print_to_cli(enum gbpf_log_level level, const char *fmt,
								 va_list ap)
{
	if (level == GBPF_LOG_DEBUG && !cli.debug)
		return 0;
	if (cli.json) {
		/* Keep stdout valid JSON: collect, report with the error. */
		int n = vsnprintf(cli.diag + cli.diag_len, sizeof(cli.diag) - cli.diag_len, fmt, ap);

		if (n > 0)
			cli.diag_len += (size_t)n;
		if (cli.diag_len >= sizeof(cli.diag))
			cli.diag_len = sizeof(cli.diag) - 1;
		return n;
	}
	return vfprintf(stderr, fmt, ap);
}

static __attribute__((format(printf, 1, 0))) int verror(const char *fmt, va_list ap)
{
	char msg[2048];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (cli.json) {
		jw_start_object(&cli.jw);
		jw_kv_string(&cli.jw, "error", msg);
		if (cli.diag_len)
			jw_kv_string(&cli.jw, "log", cli.diag);
		jw_end_object(&cli.jw);
		jw_finish(&cli.jw);
	} else {
		fprintf(stderr, "Error: %s\n", msg);
	}
	return -1;
}

int cli_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verror(fmt, ap);
	va_end(ap);
	return -1;
}

int cli_error_code(int err, const char *fmt, ...)
{
	char what[1024], reason[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	gbpf_strerror(err, reason, sizeof(reason));
	return cli_error("%s: %s", what, reason);
}

char *cli_read_file(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long len;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET))
		goto fail;
	buf = malloc((size_t)len + 1);
	if (!buf)
		goto fail;
	if (fread(buf, 1, (size_t)len, f) != (size_t)len) {
		errno = EIO;
		goto fail;
	}
	buf[len] = 0;
	fclose(f);
	if (size)
		*size = (size_t)len;
	return buf;
fail:
	free(buf);
	fclose(f);
	return NULL;
}

int cli_dispatch(const struct cli_cmd *cmds, int argc, char **argv, int (*help)(int, char **))
{
	const struct cli_cmd *match = NULL;
	size_t len;
	int i;

	if (argc < 1)
		return help(argc, argv);
	len = strlen(argv[0]);
	for (i = 0; cmds[i].name; i++) {
		if (strcmp(cmds[i].name, argv[0]) == 0) {
			match = &cmds[i];
			break;
		}
		if (strncmp(cmds[i].name, argv[0], len) == 0) {
			if (match)
				return cli_error("'%s' is ambiguous: %s or %s?", argv[0], match->name,
						 cmds[i].name);
			match = &cmds[i];
		}
	}
	if (!match)
		return cli_error("unknown command '%s' (try '%s help')", argv[0], cli.argv0);
	/* Handlers see their own name in argv[0] and parse the rest with getopt. */
	optind = 0;
	return match->fn(argc, argv);
}

static int do_help(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	if (cli.json)
		return 0;
	fprintf(stderr,
		"Usage: %s [OPTIONS] OBJECT { COMMAND | help }\n"
		"       %s backends\n"
		"       %s prog { show | run | codegen | inject } ...\n"
		"       %s asm FILE.s [-o FILE.o]     assemble conformance-syntax text\n"
		"       %s disasm FILE                disassemble an object or raw program\n"
		"       %s verify OBJ [-v]            run the verifier on every program\n"
		"       %s conformance [--backend B] [--threads N] PATH...\n"
		"       %s run [-i SECONDS] [-c COUNT] [--backend B] OBJ... -- CMD [ARGS]\n"
		"       %s run --idle [--backend B] -- CMD [ARGS]   start CMD attachable\n"
		"       %s attach [-i SECONDS] [-c COUNT] [--per-process] PID... OBJ...\n"
		"       %s detach PID...\n"
		"OPTIONS := { -j|--json [-p|--pretty] | -d|--debug | -V|--version }\n"
		"Environment: GBPF_BACKEND selects a backend, GBPF_PLUGIN_PATH adds plugin\n"
		"directories or files, GBPF_LOG_LEVEL=debug prints debug messages.\n",
		cli.argv0, cli.argv0, cli.argv0, cli.argv0, cli.argv0, cli.argv0, cli.argv0,
		cli.argv0, cli.argv0, cli.argv0, cli.argv0);
	return 0;
}

static int do_version(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	if (cli.json) {
		jw_start_object(&cli.jw);
		jw_kv_string(&cli.jw, "version", gbpf_version());
		jw_kv_uint(&cli.jw, "plugin_abi_major", GBPF_VERSION_MAJOR(GBPF_PLUGIN_ABI_VERSION));
		jw_kv_uint(&cli.jw, "plugin_abi_minor", GBPF_VERSION_MINOR(GBPF_PLUGIN_ABI_VERSION));
		jw_end_object(&cli.jw);
		jw_finish(&cli.jw);
	} else {
		printf("gbpf %s (plugin ABI %u.%u)\n", gbpf_version(),
		       GBPF_VERSION_MAJOR(GBPF_PLUGIN_ABI_VERSION),
		       GBPF_VERSION_MINOR(GBPF_PLUGIN_ABI_VERSION));
	}
	return 0;
}

static const struct cli_cmd top_cmds[] = {
	{"help", do_help},
	{"version", do_version},
	{"backends", cmd_backends},
	{"prog", cmd_prog},
	{"asm", cmd_asm},
	{"disasm", cmd_disasm},
	{"verify", cmd_verify},
	{"conformance", cmd_conformance},
	{"run", cmd_run},
	{"attach", cmd_attach},
	{"detach", cmd_detach},
	{NULL, NULL},
};

/*
 * LeakSanitizer (the test command's builds): the OpenCL runtime (PoCL) and
 * the LLVM it compiles with keep allocations until exit; they are not ours.
 * Their frames lack frame pointers, so reports often stop in libstdc++'s
 * operator new or an unknown module. Unused outside sanitizer builds.
 */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "leak:libpocl\nleak:libLLVM\nleak:libOpenCL\nleak:libstdc++\nleak:<unknown module>\n";
}

int main(int argc, char **argv)
{
	static const struct option options[] = {
		{"json", no_argument, NULL, 'j'},
		{"pretty", no_argument, NULL, 'p'},
		{"debug", no_argument, NULL, 'd'},
		{"version", no_argument, NULL, 'V'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	int opt, ret;

	cli.argv0 = argv[0];
	/* '+': stop at the first non-option so subcommands parse their own. */
	while ((opt = getopt_long(argc, argv, "+jpdVh", options, NULL)) >= 0) {
		switch (opt) {
		case 'j': cli.json = true; break;
		case 'p': cli.json = true; cli.pretty = true; break;
		case 'd': cli.debug = true; break;
		case 'V': jw_init(&cli.jw, stdout, cli.pretty); return do_version(0, NULL);
		case 'h': return do_help(0, NULL);
		default: return 2;
		}
	}
	jw_init(&cli.jw, stdout, cli.pretty);
	gbpf_set_print(print_to_cli);
	argc -= optind;
	argv += optind;
	ret = cli_dispatch(top_cmds, argc, argv, do_help);
	return ret < 0 ? 1 : ret;
}
