/* SPDX-License-Identifier: MIT */
/*
 * tests/verifier/test_c_corpus.c - the verifier corpus written in C
 * (the .bpf.c files of tests/verifier/progs, built with clang -target bpf and opened
 * with the loader). Each program's function is preceded in its source by
 *   EXPECT <function>: accept
 *   EXPECT <function>: accept max N    (and at most N instructions processed)
 *   EXPECT <function>: reject <text the reason must contain>
 * Arguments: pairs of OBJECT SOURCE.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gbpf/object.h>
#include <gbpf/verifier.h>

#include "tap.h"

/*
 * Find "EXPECT name: ..." in the source; returns 1 accept, 0 reject (text set), -1 missing.
 * "accept max N" also bounds the instructions processed (*max; 0 = no bound).
 */
static int expectation(const char *src, const char *name, char *text, size_t size,
		       uint64_t *max)
{
	FILE *f = fopen(src, "r");
	char line[512], key[160];
	int found = -1;

	if (!f)
		return -1;
	snprintf(key, sizeof(key), "EXPECT %s: ", name);
	while (fgets(line, sizeof(line), f)) {
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
		if (!strcmp(p, "accept")) {
			found = 1;
		} else if (!strncmp(p, "accept max ", 11)) {
			*max = strtoull(p + 11, NULL, 10);
			found = 1;
		} else if (!strncmp(p, "reject ", 7)) {
			snprintf(text, size, "%s", p + 7);
			found = 0;
		}
		break;
	}
	fclose(f);
	return found;
}

int main(int argc, char **argv)
{
	int programs = 0;

	if (argc < 3 || argc % 2 == 0) {
		tap_ok(0, "usage: test_c_corpus OBJECT SOURCE [OBJECT SOURCE...]");
		return tap_done();
	}
	for (int a = 1; a + 1 < argc; a += 2) {
		char errbuf[512], log[16384];
		GBPF_OPTS(gbpf_object_open_opts, oo, .errbuf = errbuf, .errbuf_size = sizeof(errbuf));
		struct gbpf_object *obj = gbpf_object__open_file(argv[a], &oo);
		const struct gbpf_prog_desc *p;

		if (!tap_ok(obj != NULL, "open %s", argv[a])) {
			tap_diag("%s", errbuf);
			continue;
		}
		for (p = gbpf_object__next_prog(obj, NULL); p; p = gbpf_object__next_prog(obj, p)) {
			struct gbpf_verify_result r = {.sz = sizeof(r)};
			GBPF_OPTS(gbpf_verify_opts, o, .log_buf = log, .log_size = sizeof(log),
				  .log_level = GBPF_VERIFY_LOG_STATE, .complexity_limit = 200000);
			char want[256] = "";
			uint64_t max = 0;
			int exp = expectation(argv[a + 1], p->name, want, sizeof(want), &max);
			int rc = gbpf_verify(p, &o, &r);

			programs++;
			if (exp < 0) {
				tap_ok(0, "%s: no EXPECT line for %s", argv[a + 1], p->name);
				continue;
			}
			if (exp == 1) {
				if (!tap_ok(rc == 0, "%s: %s (%s) accepted; worst-case %" PRIu64
						     " insns",
					    argv[a + 1], p->name, p->section, r.worst_case_insns))
					tap_diag("%s", log);
				else if (max)
					tap_ok(r.insns_processed <= max,
					       "%s: %s: %" PRIu64 " instructions processed (at most %" PRIu64
					       ")",
					       argv[a + 1], p->name, r.insns_processed, max);
			} else if (!tap_ok(rc == -GBPF_ERRNO__VERIFY && strstr(r.reason, want),
					   "%s: %s (%s) rejected at insn %" PRId64 ": %s", argv[a + 1],
					   p->name, p->section, r.error_insn, r.reason)) {
				tap_diag("expected: %s\n%s", want, log);
			}
		}
		gbpf_object__close(obj);
	}
	tap_ok(programs >= 20, "C corpus holds %d programs", programs);
	return tap_done();
}
