/* SPDX-License-Identifier: MIT */
/*
 * bench/interp/bench_interp.c - nanoseconds per instruction of the
 * interpreter, fast and bounds-checked mode, on two loop-heavy programs:
 * an ALU loop (10^7 iterations) and a loop that loads and stores on the
 * stack and in a caller's buffer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gbpf/asm.h>

#include "core/interp/interp.h"

static const char alu_loop[] = "mov %r0, 0\n"
			       "mov %r1, 10000000\n"
			       "mov %r2, 7\n"
			       "loop:\n"
			       "add %r0, %r1\n"
			       "xor %r0, %r2\n"
			       "lsh %r2, 1\n"
			       "or %r2, 3\n"
			       "and %r2, 0xffff\n"
			       "mul %r0, 3\n"
			       "sub %r1, 1\n"
			       "jne %r1, 0, loop\n"
			       "exit\n";

/* r1 = buffer of 4096 bytes, r2 = its size. */
static const char mem_loop[] = "mov %r0, 0\n"
			       "mov %r3, 2000000\n"
			       "loop:\n"
			       "mov %r4, %r3\n"
			       "and %r4, 511\n"
			       "lsh %r4, 3\n"
			       "mov %r5, %r1\n"
			       "add %r5, %r4\n"
			       "ldxdw %r6, [%r5+0]\n"
			       "add %r6, %r3\n"
			       "stxdw [%r5+0], %r6\n"
			       "stxdw [%r10-8], %r6\n"
			       "ldxdw %r7, [%r10-8]\n"
			       "add %r0, %r7\n"
			       "sub %r3, 1\n"
			       "jne %r3, 0, loop\n"
			       "exit\n";

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int bench(const char *name, const char *text, int checked)
{
	GBPF_OPTS(gbpf_interp_opts, opts, .bounds_checked = checked, .max_insns = 1ull << 40);
	struct gbpf_prog_desc prog = {.sz = sizeof(prog), .name = name};
	static uint64_t buf[512];
	struct gbpf_interp_region region = {buf, sizeof(buf), 1, "buf"};
	uint64_t args[5] = {(uint64_t)(uintptr_t)buf, sizeof(buf)};
	struct gbpf_interp_result res;
	struct gbpf_interp *ip = NULL;
	struct gbpf_insn *insns = NULL;
	char err[512];
	double t0, t1, best = 0;
	size_t cnt;
	int ret;

	ret = gbpf_asm(text, &insns, &cnt, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "%s: %s\n", name, err);
		return ret;
	}
	prog.insns = insns;
	prog.insn_cnt = cnt;
	ret = gbpf_interp_create(&prog, NULL, 0, &opts, &ip, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "%s: %s\n", name, err);
		free(insns);
		return ret;
	}
	for (int rep = 0; rep < 3; rep++) {
		memset(buf, 0, sizeof(buf));
		t0 = now_ns();
		ret = gbpf_interp_run(ip, NULL, args, &region, 1, &res, err, sizeof(err));
		t1 = now_ns();
		if (ret) {
			fprintf(stderr, "%s: %s\n", name, err);
			break;
		}
		if (rep == 0 || (t1 - t0) / (double)res.insns < best)
			best = (t1 - t0) / (double)res.insns;
	}
	if (!ret)
		printf("%-9s %-8s %12llu insns  %6.2f ns/insn  (r0 0x%llx)\n", name,
		       checked ? "checked" : "fast", (unsigned long long)res.insns, best,
		       (unsigned long long)res.r0);
	gbpf_interp_destroy(ip);
	free(insns);
	return ret;
}

int main(void)
{
	int ret = 0;

	ret |= bench("alu-loop", alu_loop, 0);
	ret |= bench("alu-loop", alu_loop, 1);
	ret |= bench("mem-loop", mem_loop, 0);
	ret |= bench("mem-loop", mem_loop, 1);
	return ret ? 1 : 0;
}
