/* SPDX-License-Identifier: MIT */
/* Time of eBPF -> PTX for a 1,000-instruction program (goal: <= 1 ms). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <gbpf/helper_ids.h>
#include <gbpf/insn.h>

#include "plugins/cuda/ptx_codegen.h"

#define N 1000

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(void)
{
	static struct gbpf_insn insns[N];
	struct gbpf_prog_desc p = {.sz = sizeof(p), .name = "bench", .section = "bench", .insns = insns,
				   .insn_cnt = N, .source_file = "bench"};
	const struct gbpf_prog_desc *pp = &p;
	struct gbpf_ptx_opts o = {.sz = sizeof(o), .flags = GBPF_PTX_KERNEL, .arch = "sm_90"};
	double t0, best = 1e9;
	char err[256];
	size_t len = 0;
	int i, it;

	/* A realistic mix: ALU64/ALU32, stack spills and reloads, forward
	 * branches, a helper call, byte swaps, and divisions. */
	for (i = 0; i < N - 1; i++) {
		struct gbpf_insn *in = &insns[i];

		switch (i % 10) {
		case 0: *in = (struct gbpf_insn){.code = 0xb7, .dst = 1 + i % 5, .imm = i}; break;
		case 1: *in = (struct gbpf_insn){.code = 0x0f, .dst = 0, .src = 1 + i % 5}; break;
		case 2: *in = (struct gbpf_insn){.code = 0x7b, .dst = 10, .src = 0, .off = -8 * (1 + i % 8)}; break;
		case 3: *in = (struct gbpf_insn){.code = 0x79, .dst = 6, .src = 10, .off = -8 * (1 + i % 8)}; break;
		case 4: *in = (struct gbpf_insn){.code = 0x2d, .dst = 6, .src = 0, .off = 1}; break;
		case 5: *in = (struct gbpf_insn){.code = 0x34, .dst = 6, .imm = 3}; break;
		case 6: *in = (struct gbpf_insn){.code = 0xdc, .dst = 6, .imm = 32}; break;
		case 7: *in = (struct gbpf_insn){.code = 0xcf, .dst = 0, .src = 6}; break;
		case 8: *in = (struct gbpf_insn){.code = 0x85, .imm = GBPF_HELPER_KTIME_GET_NS}; break;
		default: *in = (struct gbpf_insn){.code = 0xa7, .dst = 0, .imm = 0x5555}; break;
		}
	}
	insns[N - 1] = (struct gbpf_insn){.code = 0x95};
	for (it = 0; it < 200; it++) {
		char *ptx = NULL;
		double dt;

		t0 = now();
		if (gbpf_ptx_emit(&pp, 1, &o, &ptx, &len, err, sizeof(err))) {
			fprintf(stderr, "bench_ptx_codegen: %s\n", err);
			return 1;
		}
		dt = now() - t0;
		if (dt < best)
			best = dt;
		free(ptx);
	}
	printf("ptx_codegen: %d insns -> %zu bytes of PTX in %.3f ms (best of 200); goal 1 ms: ratio %.2f\n",
	       N, len, best * 1e3, best * 1e3 / 1.0);
	return 0;
}
