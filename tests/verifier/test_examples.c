/* SPDX-License-Identifier: MIT */
/*
 * tests/verifier/test_examples.c - every program of the example probes
 * (examples/, built at build time) passes the verifier: real probes, as
 * users write them, must not be rejected. Arguments: the objects.
 */
#include <inttypes.h>
#include <stdio.h>

#include <gbpf/object.h>
#include <gbpf/verifier.h>

#include "tap.h"

int main(int argc, char **argv)
{
	int programs = 0;

	for (int a = 1; a < argc; a++) {
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
				  .log_level = GBPF_VERIFY_LOG_STATE, .mem_size = 4096);

			programs++;
			if (!tap_ok(gbpf_verify(p, &o, &r) == 0,
				    "%s: %s (%s) accepted; worst-case path %" PRIu64 " insns", argv[a],
				    p->name, p->section ? p->section : "-", r.worst_case_insns))
				tap_diag("%s", log);
		}
		gbpf_object__close(obj);
	}
	if (argc < 2)
		tap_skip("no example objects were built");
	else
		tap_ok(programs > 0, "%d example programs verified", programs);
	return tap_done();
}
