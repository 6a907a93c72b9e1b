/* SPDX-License-Identifier: MIT */
/*
 * tests/verifier/test_api.c - the verifier's API: arguments, options of
 * older (smaller) sizes, the result fields (r0 bounds, worst-case path,
 * counters), log levels, the line callback, truncation, and the helper
 * table query.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gbpf/asm.h>
#include <gbpf/helper_ids.h>

#include "tap.h"
#include "vtest_util.h"

static struct gbpf_insn *assemble(const char *text, size_t *cnt)
{
	struct gbpf_insn *insns = NULL;
	char err[256];

	if (gbpf_asm(text, &insns, cnt, err, sizeof(err))) {
		tap_diag("asm: %s", err);
		return NULL;
	}
	return insns;
}

static int lines;

static void count_line(void *ctx, const char *line)
{
	(void)ctx;
	if (strchr(line, '\n'))
		lines = -1000; /* a callback line must not hold a newline */
	lines++;
}

int main(void)
{
	struct gbpf_verify_result r;
	char log[8192];
	size_t n;
	struct gbpf_insn *p;
	struct gbpf_prog_desc prog = {.sz = sizeof(prog), .name = "t"};

	/* arguments */
	tap_ok(gbpf_verify(NULL, NULL, NULL) == -EINVAL, "NULL program: -EINVAL");
	prog.insn_cnt = 3;
	tap_ok(gbpf_verify(&prog, NULL, NULL) == -EINVAL, "NULL insns with a count: -EINVAL");
	prog.insn_cnt = 0;
	memset(&r, 0, sizeof(r));
	r.sz = sizeof(r);
	tap_ok(gbpf_verify(&prog, NULL, &r) == -GBPF_ERRNO__VERIFY && r.verdict == GBPF_VERDICT_REJECT &&
		       strstr(r.reason, "no instructions"),
	       "empty program rejected: %s", r.reason);

	/* r0 bounds over all exits: 3 or 10 */
	p = assemble("ldxdw %r2, [%r1+0]\nmov %r0, 3\njeq %r2, 0, +1\nmov %r0, 10\nexit\n", &n);
	tap_ok(p && vt_verify(p, n, GBPF_ATTACH_GPU_ENTRY, NULL, 0, 0, &r, log, sizeof(log)) == 0,
	       "two-exit-value program accepted");
	tap_ok(r.r0_umin == 3 && r.r0_umax == 10 && r.r0_smin == 3 && r.r0_smax == 10,
	       "r0 bounds [3, 10] (got u[%" PRIu64 ", %" PRIu64 "])", r.r0_umin, r.r0_umax);
	tap_ok((3 & ~r.r0_known_mask) == r.r0_known_value &&
		       (10 & ~r.r0_known_mask) == r.r0_known_value,
	       "known bits hold for 3 and 10 (value 0x%" PRIx64 " mask 0x%" PRIx64 ")",
	       r.r0_known_value, r.r0_known_mask);
	tap_ok(r.worst_case_insns == 5, "worst-case path is 5 instructions (got %" PRIu64 ")",
	       r.worst_case_insns);
	tap_ok(r.ctx_read_mask == 0xffULL, "context bytes read: 0..7 (mask 0x%" PRIx64 ")", r.ctx_read_mask);
	tap_ok(r.error_insn == -1 && r.reason[0] == '\0' && r.error == 0,
	       "accepted: no error index or reason");
	tap_ok(r.insn_cnt == 5 && r.subprog_cnt == 1, "insn_cnt 5, one function");
	free(p);

	/* Context bytes read, followed through a copy and an offset, over every path. */
	p = assemble("mov %r2, %r1\nadd %r2, 48\nldxw %r0, [%r2+8]\nexit\n", &n);
	tap_ok(p && vt_verify(p, n, GBPF_ATTACH_GPU_EXIT, NULL, 0, 0, &r, log, sizeof(log)) == 0 &&
		       r.ctx_read_mask == 0x0f00000000000000ULL,
	       "ctx + 48, then +8: bytes 56..59 read (mask 0x%" PRIx64 ")", r.ctx_read_mask);
	free(p);
	p = assemble("ldxdw %r2, [%r1+16]\nmov %r0, 0\njeq %r2, 0, +1\nldxw %r0, [%r1+60]\nexit\n", &n);
	tap_ok(p && vt_verify(p, n, GBPF_ATTACH_GPU_ENTRY, NULL, 0, 0, &r, log, sizeof(log)) == 0 &&
		       r.ctx_read_mask == (0xff0000ULL | 0xf000000000000000ULL),
	       "bytes 16..23 and, on one path, 60..63 (mask 0x%" PRIx64 ")", r.ctx_read_mask);
	free(p);
	p = assemble("mov %r0, 0\nexit\n", &n);
	tap_ok(p && vt_verify(p, n, GBPF_ATTACH_GPU_ENTRY, NULL, 0, 0, &r, log, sizeof(log)) == 0 &&
		       r.ctx_read_mask == 0,
	       "a program that reads no context: mask 0 (got 0x%" PRIx64 ")", r.ctx_read_mask);
	free(p);
	p = assemble("ldxdw %r0, [%r1+24]\nexit\n", &n);
	tap_ok(p && vt_verify(p, n, GBPF_ATTACH_GPU_ENTRY, NULL, 0, 0, &r, log, sizeof(log)) != 0 &&
		       r.ctx_read_mask == ~0ULL,
	       "rejected (mem_addr on gpu/entry): mask all ones (got 0x%" PRIx64 ")", r.ctx_read_mask);
	free(p);

	/* worst case counts loop iterations */
	p = assemble("mov %r0, 0\nmov %r1, 0\nadd %r1, 1\njlt %r1, 10, -2\nexit\n", &n);
	tap_ok(p && vt_verify(p, n, GBPF_ATTACH_NONE, NULL, 0, 0, &r, log, sizeof(log)) == 0 &&
		       r.worst_case_insns == 2 + 10 * 2 + 1,
	       "loop of 10: worst-case path 23 instructions (got %" PRIu64 ")",
	       r.worst_case_insns);
	tap_ok(r.insns_processed >= r.worst_case_insns, "processed %" PRIu64 " >= worst case",
	       r.insns_processed);
	free(p);

	/* the longer branch is the worst case, also when the shorter one is pruned */
	p = assemble("ldxdw %r2, [%r1+0]\nmov %r0, 0\njeq %r2, 0, +4\nadd %r0, 1\nadd %r0, 1\n"
		     "add %r0, 1\nadd %r0, 1\nmov %r0, 0\nexit\n",
		     &n);
	tap_ok(p && vt_verify(p, n, GBPF_ATTACH_GPU_ENTRY, NULL, 0, 0, &r, log, sizeof(log)) == 0 &&
		       r.worst_case_insns == 9,
	       "branchy program: worst-case 9 (got %" PRIu64 ", pruned %" PRIu64 ")",
	       r.worst_case_insns, r.states_pruned);
	tap_ok(r.max_stack_depth == 0, "no stack used");
	free(p);

	/*
	 * A loop that counts helper failures and returns the count: pruning
	 * ignores counters that decide nothing, but r0 at exit decides the
	 * reported range, so it must still cover every count 0..8, and the
	 * worst case is the longest path (8 full iterations).
	 */
	p = assemble("mov %r6, 0\nmov %r7, 0\nloop:\ncall 7\njset %r0, 1, skip\nadd %r6, 1\n"
		     "skip:\nadd %r7, 1\njlt %r7, 8, loop\nmov %r0, %r6\nexit\n",
		     &n);
	tap_ok(p && vt_verify(p, n, GBPF_ATTACH_NONE, NULL, 0, 0, &r, log, sizeof(log)) == 0 &&
		       r.r0_umin == 0 && r.r0_umax == 8 && r.r0_smin == 0 && r.r0_smax == 8,
	       "counted helper failures returned: r0 in [0, 8] (got u[%" PRIu64 ", %" PRIu64 "])",
	       r.r0_umin, r.r0_umax);
	tap_ok(r.worst_case_insns == 2 + 8 * 5 + 2,
	       "its worst case is 8 iterations through the increment: 44 (got %" PRIu64 ")",
	       r.worst_case_insns);
	free(p);

	/* The same count, stored as data only: one state per iteration, not 2^8 paths. */
	p = assemble("mov %r6, 0\nmov %r7, 0\nloop:\ncall 7\njset %r0, 1, skip\nadd %r6, 1\n"
		     "skip:\nadd %r7, 1\njlt %r7, 8, loop\nstxdw [%r10-8], %r6\nmov %r0, 0\nexit\n",
		     &n);
	tap_ok(p && vt_verify(p, n, GBPF_ATTACH_NONE, NULL, 0, 0, &r, log, sizeof(log)) == 0 &&
		       r.insns_processed <= 100 && r.states_pruned >= 8 && r.worst_case_insns == 45,
	       "the count stored as data: %" PRIu64 " instructions processed (at most 100), %" PRIu64
	       " pruned, worst case %" PRIu64 " (45)",
	       r.insns_processed, r.states_pruned, r.worst_case_insns);
	free(p);

	/* stack depth, over frames */
	p = assemble("stdw [%r10-16], 0\ncall local f\nexit\nf:\nstdw [%r10-8], 1\nmov %r0, 0\nexit\n",
		     &n);
	tap_ok(p && vt_verify(p, n, GBPF_ATTACH_NONE, NULL, 0, 0, &r, log, sizeof(log)) == 0 &&
		       r.max_stack_depth == 24 && r.subprog_cnt == 2,
	       "stack depth 16 + 8 over two frames (got %u, %u functions)", r.max_stack_depth,
	       r.subprog_cnt);
	free(p);

	/* rejection: index, reason, log shape */
	p = assemble("mov %r0, 0\nldxdw %r0, [%r10-8]\nexit\n", &n);
	{
		GBPF_OPTS(gbpf_verify_opts, o, .log_buf = log, .log_size = sizeof(log));
		struct gbpf_prog_desc d = {.sz = sizeof(d), .name = "uninit", .section = "gpu/entry/k",
					   .source_file = "probe.o", .insns = p, .insn_cnt = n,
					   .attach = {.kind = GBPF_ATTACH_GPU_ENTRY}};

		memset(&r, 0, sizeof(r));
		r.sz = sizeof(r);
		tap_ok(gbpf_verify(&d, &o, &r) == -GBPF_ERRNO__VERIFY && r.error_insn == 1 &&
			       r.error == -GBPF_ERRNO__VERIFY,
		       "uninitialised stack read rejected at insn 1");
		tap_ok(strstr(log, "1: (79) ldxdw %r0, [%r10-8]") != NULL,
		       "log shows index, opcode and the instruction as text");
		tap_ok(strstr(log, "probe.o: section gpu/entry/k: insn 1: invalid read from stack") !=
			       NULL,
		       "log names file, section, instruction and reason");
		tap_ok(strstr(log, "frame0:") == NULL, "log level 0: no register state");
		o.log_level = GBPF_VERIFY_LOG_STATE;
		gbpf_verify(&d, &o, &r);
		tap_ok(strstr(log, "frame0: R0=0 R1=ctx(off=0) R10=fp0(off=0)") != NULL,
		       "log level 1: register state at the error");
		o.log_level = GBPF_VERIFY_LOG_VERBOSE;
		gbpf_verify(&d, &o, &r);
		tap_ok(strstr(log, "0: (b7) mov %r0, 0") != NULL,
		       "log level 2: every processed instruction");
		/* truncation */
		o.log_size = 16;
		gbpf_verify(&d, &o, &r);
		tap_ok(strlen(log) == 15, "log truncated to its size, NUL-terminated");
		/* callback */
		o.log_buf = NULL;
		o.log_size = 0;
		o.log_fn = count_line;
		o.log_level = GBPF_VERIFY_LOG_ERROR;
		lines = 0;
		gbpf_verify(&d, &o, &r);
		tap_ok(lines == 2, "callback got 2 lines, without newlines (got %d)", lines);
		/* an older, smaller options struct: only sz and log_level known */
		{
			struct gbpf_verify_opts small = {.sz = offsetof(struct gbpf_verify_opts, flags),
							 .log_level = 2};

			tap_ok(gbpf_verify(&d, &small, &r) == -GBPF_ERRNO__VERIFY,
			       "options of an older size are read up to their size");
		}
		/* an older, smaller result struct is filled up to its size */
		{
			struct {
				struct gbpf_verify_result r;
				uint64_t canary;
			} s;

			memset(&s, 0xab, sizeof(s));
			s.r.sz = offsetof(struct gbpf_verify_result, reason);
			gbpf_verify(&d, NULL, &s.r);
			tap_ok(s.r.error_insn == 1 && (unsigned char)s.r.reason[0] == 0xab,
			       "result filled up to the caller's size only");
		}
	}
	free(p);

	/* complexity limit from the options */
	p = assemble("mov %r0, 0\nmov %r1, 0\nadd %r1, 1\njlt %r1, 100, -2\nexit\n", &n);
	{
		GBPF_OPTS(gbpf_verify_opts, o, .complexity_limit = 50);
		struct gbpf_prog_desc d = {.sz = sizeof(d), .name = "loop", .insns = p, .insn_cnt = n};

		memset(&r, 0, sizeof(r));
		r.sz = sizeof(r);
		tap_ok(gbpf_verify(&d, &o, &r) == -GBPF_ERRNO__VERIFY &&
			       strstr(r.reason, "more than 50 instructions"),
		       "complexity limit 50 stops a 100-iteration loop: %s", r.reason);
		o.complexity_limit = 0;
		tap_ok(gbpf_verify(&d, &o, &r) == 0, "default limit lets it through");
	}
	free(p);

	/* nullable memory for prog run */
	p = assemble("ldxb %r0, [%r1+0]\nexit\n", &n);
	{
		GBPF_OPTS(gbpf_verify_opts, o, .mem_size = 4, .flags = GBPF_VERIFY_F_NULLABLE_MEM);
		struct gbpf_prog_desc d = {.sz = sizeof(d), .name = "mem", .insns = p, .insn_cnt = n};

		memset(&r, 0, sizeof(r));
		r.sz = sizeof(r);
		tap_ok(gbpf_verify(&d, &o, &r) == -GBPF_ERRNO__VERIFY &&
			       strstr(r.reason, "mem_or_null"),
		       "nullable buffer must be checked: %s", r.reason);
		o.flags = 0;
		tap_ok(gbpf_verify(&d, &o, &r) == 0, "non-nullable buffer may be read directly");
	}
	free(p);
	p = assemble("mov %r0, 0\njeq %r1, 0, +1\nldxb %r0, [%r1+3]\nexit\n", &n);
	{
		GBPF_OPTS(gbpf_verify_opts, o, .mem_size = 4, .flags = GBPF_VERIFY_F_NULLABLE_MEM);
		struct gbpf_prog_desc d = {.sz = sizeof(d), .name = "mem", .insns = p, .insn_cnt = n};

		tap_ok(gbpf_verify(&d, &o, &r) == 0, "nullable buffer read after a null check");
	}
	free(p);

	/* memory probes replacing the stored value */
	{
		struct {
			const char *text;
			uint32_t kind, flags;
			int ok;
			const char *why;
		} cases[] = {
			{"stdw [%r1+32], 7\nmov %r0, 0\nexit\n", GBPF_ATTACH_GPU_MEM, 0, 0,
			 "cannot write into ctx"},
			{"stdw [%r1+32], 7\nmov %r0, 0\nexit\n", GBPF_ATTACH_GPU_MEM,
			 GBPF_VERIFY_F_ALLOW_MEM_WRITE, 1, ""},
			{"stdw [%r1+24], 7\nmov %r0, 0\nexit\n", GBPF_ATTACH_GPU_MEM,
			 GBPF_VERIFY_F_ALLOW_MEM_WRITE, 0, "invalid access to ctx"},
			{"ldxdw %r2, [%r1+24]\nstdw [%r2+0], 7\nmov %r0, 0\nexit\n",
			 GBPF_ATTACH_GPU_MEM, GBPF_VERIFY_F_ALLOW_MEM_WRITE, 0,
			 "invalid mem access 'scalar'"},
			{"stdw [%r1+16], 7\nmov %r0, 0\nexit\n", GBPF_ATTACH_GPU_ENTRY,
			 GBPF_VERIFY_F_ALLOW_MEM_WRITE, 0, "cannot write into ctx"},
		};

		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			GBPF_OPTS(gbpf_verify_opts, o, .flags = cases[i].flags);
			struct gbpf_prog_desc d = {.sz = sizeof(d), .name = "memw",
						   .attach = {.kind = cases[i].kind}};
			int rc;

			p = assemble(cases[i].text, &n);
			d.insns = p;
			d.insn_cnt = n;
			memset(&r, 0, sizeof(r));
			r.sz = sizeof(r);
			rc = gbpf_verify(&d, &o, &r);
			tap_ok(cases[i].ok ? rc == 0
					   : rc == -GBPF_ERRNO__VERIFY && strstr(r.reason, cases[i].why),
			       "mem write case %zu (flags %u): %s", i, cases[i].flags,
			       rc ? r.reason : "accepted");
			free(p);
		}
	}

	/* helper table */
	{
		const char *name = NULL;

		tap_ok(gbpf_verify_helper_allowed(GBPF_HELPER_PROBE_READ, GBPF_ATTACH_GPU_ENTRY,
						  &name) == 0 &&
			       name && !strcmp(name, "bpf_probe_read"),
		       "probe_read is not allowed on the GPU");
		tap_ok(gbpf_verify_helper_allowed(GBPF_HELPER_PROBE_READ, GBPF_ATTACH_UPROBE, NULL) ==
			       1,
		       "probe_read is allowed in uprobes");
		tap_ok(gbpf_verify_helper_allowed(GBPF_HELPER_TRACE_PRINTK, GBPF_ATTACH_GPU_MEM,
						  NULL) == 1,
		       "trace_printk is allowed on the GPU (asynchronous queue)");
		tap_ok(gbpf_verify_helper_allowed(GBPF_HELPER_GPU_LANE_ID, GBPF_ATTACH_HOST_LAUNCH,
						  NULL) == 0,
		       "lane id is not allowed on the host");
		tap_ok(gbpf_verify_helper_allowed(GBPF_HELPER_LOG2, GBPF_ATTACH_HOST_LAUNCH, NULL) == 1 &&
			       gbpf_verify_helper_allowed(GBPF_HELPER_LOG2, GBPF_ATTACH_GPU_MEM, NULL) == 1,
		       "log2 is allowed on the host and on the GPU");
		tap_ok(gbpf_verify_helper_allowed(GBPF_HELPER_GPU_LANE_ID, GBPF_ATTACH_NONE, NULL) ==
			       1,
		       "every helper is allowed under prog run");
		tap_ok(gbpf_verify_helper_allowed(4242, GBPF_ATTACH_NONE, &name) == -ENOENT &&
			       name == NULL,
		       "unknown helper: -ENOENT");
	}
	return tap_done();
}
