/* SPDX-License-Identifier: MIT */
/* gbpf verify FILE [-v] [--mem-size N]: run the verifier on every program. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gbpf/verifier.h>

#include "cli.h"
#include "prog_input.h"

static void verdict_json(const struct gbpf_prog_desc *p, const struct gbpf_verify_result *r,
			 const char *log)
{
	jw_start_object(&cli.jw);
	jw_kv_string(&cli.jw, "program", p->name);
	jw_kv_string(&cli.jw, "section", p->section);
	jw_kv_string(&cli.jw, "verdict", r->verdict == GBPF_VERDICT_ACCEPT ? "accept" : "reject");
	if (r->verdict != GBPF_VERDICT_ACCEPT) {
		jw_kv_int(&cli.jw, "error_insn", r->error_insn);
		jw_kv_string(&cli.jw, "reason", r->reason);
	} else {
		jw_key(&cli.jw, "r0");
		jw_start_object(&cli.jw);
		jw_kv_int(&cli.jw, "smin", r->r0_smin);
		jw_kv_int(&cli.jw, "smax", r->r0_smax);
		jw_kv_uint(&cli.jw, "umin", r->r0_umin);
		jw_kv_uint(&cli.jw, "umax", r->r0_umax);
		jw_end_object(&cli.jw);
	}
	jw_kv_uint(&cli.jw, "worst_case_insns", r->worst_case_insns);
	jw_kv_uint(&cli.jw, "insns_processed", r->insns_processed);
	jw_kv_uint(&cli.jw, "states_stored", r->states_stored);
	jw_kv_uint(&cli.jw, "max_stack_depth", r->max_stack_depth);
	jw_kv_uint(&cli.jw, "insn_cnt", r->insn_cnt);
	if (log && *log)
		jw_kv_string(&cli.jw, "log", log);
	jw_end_object(&cli.jw);
}

int cmd_verify(int argc, char **argv)
{
	static const struct option options[] = {
		{"verbose", no_argument, NULL, 'v'},
		{"mem-size", required_argument, NULL, 'm'},
		{"limit", required_argument, NULL, 'l'},
		{0},
	};
	unsigned long long mem_size = 0, limit = 0;
	size_t log_size = 1 << 20, i, n;
	int opt, verbose = 0, rejected = 0;
	struct prog_input in;
	char *log;

	while ((opt = getopt_long(argc, argv, "vm:l:", options, NULL)) >= 0) {
		switch (opt) {
		case 'v': verbose++; break;
		case 'm': mem_size = strtoull(optarg, NULL, 0); break;
		case 'l': limit = strtoull(optarg, NULL, 0); break;
		default: return cli_error("usage: verify [-v] [--mem-size N] [--limit N] FILE");
		}
	}
	if (optind != argc - 1)
		return cli_error("usage: verify [-v] [--mem-size N] [--limit N] FILE");
	if (prog_input_open(argv[optind], &in))
		return -1;
	if (in.has_tc && in.tc.has_mem && !mem_size)
		mem_size = in.tc.mem_size;
	log = malloc(log_size);
	if (!log) {
		prog_input_close(&in);
		return cli_error("out of memory");
	}
	if (cli.json)
		jw_start_array(&cli.jw);
	n = prog_input_count(&in);
	for (i = 0; i < n; i++) {
		const struct gbpf_prog_desc *p = prog_input_prog(&in, i);
		struct gbpf_verify_result r = {.sz = sizeof(r)};
		GBPF_OPTS(gbpf_verify_opts, opts,
			  .log_level = verbose > 1 ? GBPF_VERIFY_LOG_VERBOSE
				       : verbose  ? GBPF_VERIFY_LOG_STATE
						  : GBPF_VERIFY_LOG_ERROR,
			  .log_buf = log, .log_size = log_size, .complexity_limit = limit,
			  .mem_size = mem_size);

		log[0] = 0;
		gbpf_verify(p, &opts, &r);
		if (r.verdict != GBPF_VERDICT_ACCEPT)
			rejected++;
		if (cli.json) {
			verdict_json(p, &r, verbose ? log : NULL);
			continue;
		}
		if (r.verdict == GBPF_VERDICT_ACCEPT) {
			printf("%s: program '%s': accepted; worst-case path %llu instructions, "
			       "%llu processed, stack %u bytes\n",
			       in.path, p->name, (unsigned long long)r.worst_case_insns,
			       (unsigned long long)r.insns_processed, r.max_stack_depth);
			if (verbose)
				fputs(log, stdout);
		} else {
			printf("%s: program '%s' (section %s): REJECTED at instruction %lld: %s\n",
			       in.path, p->name, p->section ? p->section : "-",
			       (long long)r.error_insn, r.reason);
			fputs(log, stdout);
		}
	}
	if (cli.json) {
		jw_end_array(&cli.jw);
		jw_finish(&cli.jw);
	}
	free(log);
	prog_input_close(&in);
	return rejected ? 1 : 0;
}
