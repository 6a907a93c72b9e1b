/* SPDX-License-Identifier: MIT */
/*
 * tests/verifier/test_conformance.c - the verifier against the eBPF ISA
 * conformance suite (../shared/conformance):
 *  - every positive test is accepted, and the r0 it really computes (the
 *    suite's expected value, reproduced by an independent interpreter) lies
 *    inside the r0 bounds the verifier computed (soundness, as PREVAIL);
 *  - every negative case with a reserved field set is rejected.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "vtest_util.h"

#define CONF_DIR "../shared/conformance/bpf_conformance/"

/* Tests the verifier must reject on purpose: none so far (see the report). */
static const char *const unsafe_by_design[] = {NULL};

static bool is_unsafe(const char *name)
{
	for (int i = 0; unsafe_by_design[i]; i++)
		if (!strcmp(name, unsafe_by_design[i]))
			return true;
	return false;
}

static char *field(char **p)
{
	char *s = *p, *t;

	if (!s)
		return NULL;
	t = strchr(s, '\t');
	if (t) {
		*t = '\0';
		*p = t + 1;
	} else {
		t = s + strcspn(s, "\r\n");
		*t = '\0';
		*p = NULL;
	}
	return s;
}

static int r0_in(const struct gbpf_verify_result *r, uint64_t v)
{
	return (int64_t)v >= r->r0_smin && (int64_t)v <= r->r0_smax && v >= r->r0_umin &&
	       v <= r->r0_umax && (v & ~r->r0_known_mask) == r->r0_known_value;
}

static void run_file(const char *path, int negative)
{
	FILE *f = fopen(path, "r");
	char line[65536], log[8192];
	int first = 1;

	if (!f) {
		tap_skip("%s not found: conformance data absent (../shared/conformance)", path);
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		char *p = line, *name, *prog_hex, *mem_hex, *r0_hex, *error, *flags;
		uint8_t *prog = NULL, *mem = NULL;
		long plen, mlen;
		struct gbpf_verify_result res;
		int err;

		if (first) { /* header */
			first = 0;
			continue;
		}
		name = field(&p);
		prog_hex = field(&p);
		mem_hex = field(&p);
		r0_hex = field(&p);
		error = field(&p);
		flags = field(&p);
		if (!name || !prog_hex || !*prog_hex)
			continue; /* assembler-only negative cases have no program */
		plen = vt_unhex(prog_hex, strlen(prog_hex), &prog);
		mlen = mem_hex ? vt_unhex(mem_hex, strlen(mem_hex), &mem) : 0;
		if (plen <= 0 || plen % 8 || mlen < 0) {
			tap_ok(0, "%s: malformed line in %s", name, path);
			free(prog);
			free(mem);
			continue;
		}
		err = vt_verify((const struct gbpf_insn *)prog, (size_t)plen / 8, GBPF_ATTACH_NONE,
				NULL, 0, (uint64_t)mlen, &res, log, sizeof(log));
		if (negative) {
			/* negative/ cases with a program: reserved fields set, or a
			 * harness check (expected r0 / error text) on a valid program */
			int harness = (r0_hex && *r0_hex) || (error && *error && strcmp(error, ""));

			if (!strncmp(name, "negative/unused-", 16))
				tap_ok(err == -GBPF_ERRNO__VERIFY && res.error_insn >= 0,
				       "%s rejected at insn %" PRId64 ": %s", name, res.error_insn,
				       res.reason);
			else if (harness && !strcmp(name, "negative/error.data"))
				tap_ok(err == -GBPF_ERRNO__VERIFY,
				       "%s (reads r0 before writing it) rejected: %s",
				       name, res.reason);
			else
				tap_ok(err == 0, "%s is a valid program (harness case) accepted%s%s",
				       name, err ? ": " : "", err ? res.reason : "");
		} else if (is_unsafe(name)) {
			tap_ok(err == -GBPF_ERRNO__VERIFY, "%s unsafe by design, rejected: %s", name,
			       res.reason);
		} else {
			uint64_t want = r0_hex ? strtoull(r0_hex, NULL, 16) : 0;

			if (!tap_ok(err == 0, "%s accepted%s%s", name, err ? ": " : "",
				    err ? res.reason : ""))
				tap_diag("%s", log);
			else if (!tap_ok(r0_in(&res, want),
					 "%s: r0 0x%" PRIx64 " within [%" PRId64 ", %" PRId64
					 "] u[%" PRIu64 ", %" PRIu64 "]",
					 name, want, res.r0_smin, res.r0_smax, res.r0_umin,
					 res.r0_umax))
				tap_diag("tnum value 0x%" PRIx64 " mask 0x%" PRIx64,
					 res.r0_known_value, res.r0_known_mask);
			(void)flags;
		}
		free(prog);
		free(mem);
	}
	fclose(f);
}

int main(void)
{
	run_file(CONF_DIR "assembled_tests.tsv", 0);
	run_file(CONF_DIR "assembled_negative.tsv", 1);
	return tap_done();
}
