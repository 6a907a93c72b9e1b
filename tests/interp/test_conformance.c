/* SPDX-License-Identifier: MIT */
/*
 * tests/interp/test_conformance.c - the eBPF conformance suite on the
 * interpreter, in fast and in bounds-checked mode: every test gives the
 * expected r0, every negative case is rejected by some stage (assembler,
 * encoding check, or the harness comparing the run with the expectation).
 */
#include <stdlib.h>
#include <string.h>

#include <gbpf/asm.h>

#include "conf_util.h"
#include "core/interp/interp.h"
#include "tests/tap.h"

/* The suite's helper 5 ("unwind" in its reference plugin) only has to return. */
static uint64_t conf_helper5(struct gbpf_exec_env *env, uint64_t r1, uint64_t r2, uint64_t r3,
			     uint64_t r4, uint64_t r5)
{
	(void)env;
	(void)r2;
	(void)r3;
	(void)r4;
	(void)r5;
	return r1;
}

static gbpf_host_helper_fn conf_lookup(uint32_t id)
{
	return id == 5 ? conf_helper5 : NULL;
}

enum outcome { OUT_PARSE, OUT_ASM, OUT_CHECK, OUT_CREATE, OUT_FAULT, OUT_RAN };

static const char *const outcome_name[] = {"parse", "program text (assembler)", "encoding check", "create",
					   "run fault", "ran"};

/* Run one test file end to end; *r0 valid when OUT_RAN. */
static enum outcome run_case(const char *path, int checked, struct gbpf_testcase *tc,
			     uint64_t *r0, char *err, size_t err_size)
{
	GBPF_OPTS(gbpf_interp_opts, opts, .bounds_checked = checked, .max_insns = 1000000,
		  .helper_lookup = conf_lookup);
	struct gbpf_prog_desc prog = {.sz = sizeof(prog), .name = path};
	struct gbpf_interp_result res = {0};
	struct gbpf_interp_region region;
	struct gbpf_interp *ip = NULL;
	struct gbpf_insn *insns = NULL;
	uint64_t args[5] = {0};
	uint8_t *mem = NULL;
	size_t cnt = 0;
	enum outcome out;

	if (gbpf_testcase_parse_file(path, tc, err, err_size))
		return OUT_PARSE;
	if (gbpf_testcase_program(tc, &insns, &cnt, err, err_size)) {
		out = OUT_ASM;
		goto done;
	}
	if (gbpf_insns_check(insns, cnt, err, err_size)) {
		out = OUT_CHECK;
		goto done;
	}
	prog.insns = insns;
	prog.insn_cnt = cnt;
	if (gbpf_interp_create(&prog, NULL, 0, &opts, &ip, err, err_size)) {
		out = OUT_CREATE;
		goto done;
	}
	/* A private copy: programs write into their memory. */
	if (tc->mem_size) {
		mem = malloc(tc->mem_size);
		memcpy(mem, tc->mem, tc->mem_size);
		args[0] = (uint64_t)(uintptr_t)mem;
		args[1] = tc->mem_size;
	}
	region = (struct gbpf_interp_region){mem, tc->mem_size, 1, "mem"};
	if (gbpf_interp_run(ip, NULL, args, mem ? &region : NULL, mem ? 1 : 0, &res, err,
			    err_size)) {
		out = OUT_FAULT;
		goto done;
	}
	*r0 = res.r0;
	out = OUT_RAN;
done:
	gbpf_interp_destroy(ip);
	free(insns);
	free(mem);
	return out;
}

static void positive(struct conf_row *rows, int n, int checked)
{
	const char *mode = checked ? "checked" : "fast";

	for (int i = 0; i < n; i++) {
		struct gbpf_testcase tc;
		char path[512], err[512] = "";
		uint64_t r0 = 0;
		enum outcome out;

		snprintf(path, sizeof(path), "%s/%s", CONF_DIR, rows[i].name);
		out = run_case(path, checked, &tc, &r0, err, sizeof(err));
		if (out != OUT_RAN)
			tap_ok(0, "%s [%s]: stopped at %s: %s", rows[i].name, mode, outcome_name[out],
			       err);
		else
			tap_ok(tc.has_result && r0 == tc.result && r0 == rows[i].result,
			       "%s [%s]: r0 = 0x%llx (expected 0x%llx)", rows[i].name, mode,
			       (unsigned long long)r0, (unsigned long long)tc.result);
		gbpf_testcase_free(&tc);
	}
}

static void negative(struct conf_row *rows, int n)
{
	for (int i = 0; i < n; i++) {
		struct gbpf_testcase tc;
		char path[512], err[512] = "";
		uint64_t r0 = 0;
		enum outcome out;
		int rejected;

		snprintf(path, sizeof(path), "%s/%s", CONF_DIR, rows[i].name);
		out = run_case(path, 1, &tc, &r0, err, sizeof(err));
		if (out == OUT_RAN && tc.has_error) {
			rejected = 1;
			snprintf(err, sizeof(err), "ran to r0 = 0x%llx where error \"%s\" was expected",
				 (unsigned long long)r0, tc.error);
		} else if (out == OUT_RAN) {
			rejected = !tc.has_result || r0 != tc.result;
			snprintf(err, sizeof(err), "ran to r0 = 0x%llx, file expects 0x%llx",
				 (unsigned long long)r0, (unsigned long long)tc.result);
		} else {
			rejected = 1;
		}
		tap_ok(rejected, "%s: rejected by %s (%s)", rows[i].name,
		       out == OUT_RAN ? "the harness" : outcome_name[out], err);
		gbpf_testcase_free(&tc);
	}
}

int main(void)
{
	struct conf_row *rows = NULL;
	int n = conf_read_tsv(CONF_DIR "/assembled_tests.tsv", &rows);

	if (n <= 0) {
		tap_skip("conformance suite not found at %s from the project root", CONF_DIR);
		return tap_done();
	}
	positive(rows, n, 0);
	positive(rows, n, 1);
	conf_free_rows(rows, n);
	n = conf_read_tsv(CONF_DIR "/assembled_negative.tsv", &rows);
	if (n <= 0) {
		tap_skip("negative cases not found at %s", CONF_DIR);
		return tap_done();
	}
	/* negative/ also holds invalid.sh, a stand-in plugin: 60 of its 61 files are cases. */
	tap_ok(n == 60, "60 negative .data cases listed (got %d)", n);
	negative(rows, n);
	conf_free_rows(rows, n);
	return tap_done();
}
