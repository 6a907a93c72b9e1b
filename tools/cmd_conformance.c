/* SPDX-License-Identifier: MIT */
/*
 * gbpf conformance [--backend B] [--threads N] PATH...
 * Runs conformance-format .data files on a backend. Files under a folder
 * named "negative" must fail (assembler error, encoding check, or a result
 * that differs from the one written); every other file must produce its
 * "-- result" in every thread.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <gbpf/asm.h>
#include <gbpf/backend.h>

#include "cli.h"

struct conformance_run {
	struct gbpf_plugin *plugin;
	uint64_t threads;
	int verbose;
	unsigned passed, failed;
};

static void report(struct conformance_run *run, const char *path, int ok, const char *why)
{
	if (ok)
		run->passed++;
	else
		run->failed++;
	if (cli.json) {
		jw_start_object(&cli.jw);
		jw_kv_string(&cli.jw, "test", path);
		jw_kv_bool(&cli.jw, "passed", ok);
		if (why && *why)
			jw_kv_string(&cli.jw, "reason", why);
		jw_end_object(&cli.jw);
	} else if (!ok) {
		printf("FAIL %s: %s\n", path, why);
	} else if (run->verbose) {
		printf("PASS %s%s%s\n", path, why && *why ? ": " : "", why ? why : "");
	}
}

static int is_negative(const char *path)
{
	return strstr(path, "/negative/") != NULL || strncmp(path, "negative/", 9) == 0;
}

/* How a case ended; what counts as a pass depends on the folder. */
enum case_outcome {
	CASE_MATCH,     /* ran, and r0 equals "-- result" in every thread */
	CASE_MISMATCH,  /* ran, r0 differs (or there was no result to compare) */
	CASE_REJECTED,  /* assembler or encoding check refused the program */
	CASE_RUN_ERROR, /* the backend refused or faulted */
	CASE_BAD_FILE,  /* not a usable test file */
};

/* Run one case; *why explains every outcome but CASE_MATCH. */
static enum case_outcome run_case(struct conformance_run *run, const char *path,
				  struct gbpf_testcase *tc, char *why, size_t why_size)
{
	struct gbpf_insn *insns = NULL;
	uint64_t *r0 = NULL, t, wrong = 0;
	enum case_outcome outcome = CASE_RUN_ERROR;
	size_t cnt = 0;
	char log[1024] = "";
	int err;

	if (!tc->has_result && !tc->has_error) {
		snprintf(why, why_size, "no '-- result' or '-- error' section");
		return CASE_BAD_FILE;
	}
	err = gbpf_testcase_program(tc, &insns, &cnt, why, why_size);
	if (!err)
		err = gbpf_insns_check(insns, cnt, why, why_size);
	if (err) {
		free(insns);
		return CASE_REJECTED;
	}
	r0 = calloc(run->threads, sizeof(*r0));
	if (!r0) {
		snprintf(why, why_size, "out of memory for %" PRIu64 " threads", run->threads);
		goto out;
	}
	struct gbpf_prog_desc desc = {
		.sz = sizeof(desc),
		.name = "conformance",
		.insns = insns,
		.insn_cnt = cnt,
		.source_file = path,
	};
	const struct gbpf_backend_caps *caps = gbpf_plugin__caps(run->plugin);
	GBPF_OPTS(gbpf_prog_run_opts, opts, .threads = run->threads, .data = tc->mem,
		  .data_size = tc->mem_size, .r0 = r0, .log = log, .log_size = sizeof(log),
		  .unverified = caps && (caps->flags & GBPF_CAP_SANDBOXED));
	struct gbpf_prog_run_result res = {.sz = sizeof(res)};

	err = gbpf_plugin__run(run->plugin, &desc, &opts, &res);
	if (err) {
		char reason[128];

		gbpf_strerror(err, reason, sizeof(reason));
		snprintf(why, why_size, "%s%s%s", reason, log[0] ? ": " : "", log);
		goto out;
	}
	outcome = CASE_MISMATCH;
	if (!tc->has_result) {
		snprintf(why, why_size, "expected an error, but the program ran (r0 = 0x%" PRIx64 ")",
			 res.r0);
		goto out;
	}
	for (t = 0; t < run->threads; t++)
		wrong += r0[t] != tc->result;
	if (wrong) {
		for (t = 0; t < run->threads && r0[t] == tc->result; t++)
			;
		snprintf(why, why_size,
			 "r0 = 0x%" PRIx64 " in thread %" PRIu64 " (%" PRIu64 " of %" PRIu64
			 " threads wrong), expected 0x%" PRIx64,
			 r0[t], t, wrong, run->threads, tc->result);
		goto out;
	}
	why[0] = 0;
	outcome = CASE_MATCH;
out:
	free(r0);
	free(insns);
	return outcome;
}

static void run_path(struct conformance_run *run, const char *path);

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void run_dir(struct conformance_run *run, const char *dir)
{
	char **names = NULL;
	size_t n = 0, i;
	struct dirent *de;
	DIR *d = opendir(dir);

	if (!d) {
		report(run, dir, 0, strerror(errno));
		return;
	}
	while ((de = readdir(d))) {
		char **grown;

		if (de->d_name[0] == '.')
			continue;
		grown = realloc(names, (n + 1) * sizeof(*names));
		if (!grown)
			break;
		names = grown;
		if (asprintf(&names[n], "%s/%s", dir, de->d_name) < 0)
			break;
		n++;
	}
	closedir(d);
	if (names)
		qsort(names, n, sizeof(*names), cmp_names);
	for (i = 0; i < n; i++) {
		struct stat st;
		size_t len = strlen(names[i]);

		if (stat(names[i], &st) == 0 &&
		    (S_ISDIR(st.st_mode) || (len > 5 && strcmp(names[i] + len - 5, ".data") == 0)))
			run_path(run, names[i]);
		free(names[i]);
	}
	free(names);
}

static void run_path(struct conformance_run *run, const char *path)
{
	struct gbpf_testcase tc;
	enum case_outcome outcome;
	struct stat st;
	char why[1024] = "", how[1100];
	int ok;

	if (stat(path, &st) != 0) {
		snprintf(why, sizeof(why), "%s", strerror(errno));
		report(run, path, 0, why);
		return;
	}
	if (S_ISDIR(st.st_mode)) {
		run_dir(run, path);
		return;
	}
	if (gbpf_testcase_parse_file(path, &tc, why, sizeof(why))) {
		/* An unreadable negative case still counts as rejected. */
		report(run, path, is_negative(path), why);
		return;
	}
	outcome = run_case(run, path, &tc, why, sizeof(why));
	if (is_negative(path)) {
		/* Negative cases are built to fail: anything but a clean match passes. */
		snprintf(how, sizeof(how), "failed as it must: %s", why);
		report(run, path, outcome != CASE_MATCH,
		       outcome == CASE_MATCH ? "negative case produced its result" : how);
	} else if (tc.has_error) {
		ok = outcome == CASE_REJECTED || outcome == CASE_RUN_ERROR;
		report(run, path, ok, ok ? "" : "expected an error, but the program ran");
	} else {
		report(run, path, outcome == CASE_MATCH, why);
	}
	gbpf_testcase_free(&tc);
}

int cmd_conformance(int argc, char **argv)
{
	static const struct option options[] = {
		{"backend", required_argument, NULL, 'b'},
		{"threads", required_argument, NULL, 't'},
		{"verbose", no_argument, NULL, 'v'},
		{0},
	};
	struct conformance_run run = {.threads = 1};
	struct gbpf_registry *reg;
	const char *backend = "cpu";
	char why[512];
	int opt, i;

	while ((opt = getopt_long(argc, argv, "b:t:v", options, NULL)) >= 0) {
		switch (opt) {
		case 'b': backend = optarg; break;
		case 't': run.threads = strtoull(optarg, NULL, 0); break;
		case 'v': run.verbose = 1; break;
		default: return cli_error("usage: conformance [--backend B] [--threads N] [-v] PATH...");
		}
	}
	if (optind >= argc)
		return cli_error("usage: conformance [--backend B] [--threads N] [-v] PATH...");
	if (run.threads == 0 || run.threads > (1ULL << 31))
		return cli_error("--threads must be in 1..2^31");
	if (gbpf_registry_new(NULL, &reg))
		return cli_error("cannot scan for plugins");
	if (gbpf_registry_select(reg, backend, &run.plugin, why, sizeof(why))) {
		gbpf_registry_free(reg);
		return cli_error("%s", why);
	}
	if (cli.json) {
		jw_start_object(&cli.jw);
		jw_kv_string(&cli.jw, "backend", gbpf_plugin__name(run.plugin));
		jw_kv_uint(&cli.jw, "threads", run.threads);
		jw_key(&cli.jw, "results");
		jw_start_array(&cli.jw);
	}
	for (i = optind; i < argc; i++)
		run_path(&run, argv[i]);
	if (cli.json) {
		jw_end_array(&cli.jw);
		jw_kv_uint(&cli.jw, "passed", run.passed);
		jw_kv_uint(&cli.jw, "failed", run.failed);
		jw_end_object(&cli.jw);
		jw_finish(&cli.jw);
	} else {
		printf("%u passed, %u failed\n", run.passed, run.failed);
	}
	gbpf_registry_free(reg);
	return run.failed ? 1 : 0;
}
