/* SPDX-License-Identifier: MIT */
/*
 * tests/reliability/test_long_loops.c - loops of 10,000-20,000 iterations
 * that branch on a helper's result (progs/long_loops.bpf.c) verify with the
 * default complexity limit, in work linear in the iterations (each
 * program's "EXPECT name: accept max N" line bounds the instructions
 * processed), while the unsafe variants stay rejected for their real
 * reason ("EXPECT name: reject TEXT"; "reject" alone: any reason).
 * Args: OBJECT SOURCE.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gbpf/object.h>
#include <gbpf/verifier.h>

#include "tap.h"

/* "EXPECT name: ..." of @p src: 1 accept (*max, 0 = no bound), 0 reject (@p text), -1 missing. */
static int expectation(const char *src, const char *name, char *text, size_t size, uint64_t *max)
{
	FILE *f = fopen(src, "r");
	char line[512], key[160];
	int found = -1;

	if (!f)
		return -1;
	snprintf(key, sizeof(key), "EXPECT %s: ", name);
	while (found < 0 && fgets(line, sizeof(line), f)) {
		char *p = strstr(line, key), *end;

		if (!p)
			continue;
		p += strlen(key);
		end = strstr(p, "*/");
		if (end)
			*end = '\0';
		p[strcspn(p, "\r\n")] = '\0';
		while (*p && p[strlen(p) - 1] == ' ')
			p[strlen(p) - 1] = '\0';
		*max = 0;
		text[0] = '\0';
		if (!strncmp(p, "accept", 6)) {
			if (!strncmp(p, "accept max ", 11))
				*max = strtoull(p + 11, NULL, 10);
			found = 1;
		} else if (!strncmp(p, "reject", 6)) {
			snprintf(text, size, "%s", p[6] == ' ' ? p + 7 : "");
			found = 0;
		}
	}
	fclose(f);
	return found;
}

int main(int argc, char **argv)
{
	char errbuf[512], log[8192];
	GBPF_OPTS(gbpf_object_open_opts, oo, .errbuf = errbuf, .errbuf_size = sizeof(errbuf));
	struct gbpf_object *obj;
	int programs = 0, accepted = 0, rejected = 0;

	if (argc != 3) {
		tap_ok(0, "usage: test_long_loops OBJECT SOURCE");
		return tap_done();
	}
	obj = gbpf_object__open_file(argv[1], &oo);
	if (!tap_ok(obj != NULL, "open %s", argv[1])) {
		tap_diag("%s", errbuf);
		return tap_done();
	}
	for (const struct gbpf_prog_desc *p = gbpf_object__next_prog(obj, NULL); p;
	     p = gbpf_object__next_prog(obj, p)) {
		struct gbpf_verify_result r = {.sz = sizeof(r)};
		GBPF_OPTS(gbpf_verify_opts, o, .log_buf = log, .log_size = sizeof(log),
			  .log_level = GBPF_VERIFY_LOG_ERROR);
		char want[256];
		uint64_t max = 0;
		int exp = expectation(argv[2], p->name, want, sizeof(want), &max);
		int rc;

		programs++;
		if (!tap_ok(exp >= 0, "%s: EXPECT line for %s", argv[2], p->name))
			continue;
		rc = gbpf_verify(p, &o, &r);
		tap_diag("%s: %" PRIu64 " processed, %" PRIu64 " stored, %" PRIu64 " pruned, worst case %" PRIu64
			 ", rc %d",
			 p->name, r.insns_processed, r.states_stored, r.states_pruned, r.worst_case_insns, rc);
		if (exp == 1) {
			if (!tap_ok(rc == 0, "%s (%s) accepted", p->name, p->section)) {
				tap_diag("%s", log);
				continue;
			}
			accepted++;
			if (max)
				tap_ok(r.insns_processed <= max, "%s: %" PRIu64 " instructions processed (at most %" PRIu64 ")",
				       p->name, r.insns_processed, max);
			/* the worst case counts every iteration of the longest path */
			tap_ok(r.worst_case_insns >= (max ? 10000 : 40), "%s: worst case %" PRIu64 " instructions covers the loop",
			       p->name, r.worst_case_insns);
		} else {
			if (tap_ok(rc == -GBPF_ERRNO__VERIFY && strstr(r.reason, want), "%s (%s) rejected at insn %" PRId64 ": %s",
				   p->name, p->section, r.error_insn, r.reason))
				rejected++;
			else
				tap_diag("expected: %s", want);
		}
	}
	gbpf_object__close(obj);
	tap_ok(programs >= 7 && accepted >= 4 && rejected >= 3, "%d programs: %d accepted, %d rejected as expected",
	       programs, accepted, rejected);
	return tap_done();
}
