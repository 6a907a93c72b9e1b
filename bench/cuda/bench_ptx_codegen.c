/* SPDX-License-Identifier: MIT */
/*
 * Time of eBPF -> PTX against program size: 100 to 100,000 instructions of
 * the same mix; the goal is <= 1 ms for 1,000 instructions.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <gbpf/helper_ids.h>
#include <gbpf/insn.h>

#include "plugins/cuda/ptx_codegen.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* A realistic mix of @n instructions: ALU64/ALU32, stack spills and reloads, forward
 * branches, a helper call, byte swaps and divisions, then exit. */
static void fill(struct gbpf_insn *insns, int n)
{
	for (int i = 0; i < n - 1; i++) {
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
	insns[n - 1] = (struct gbpf_insn){.code = 0x95};
}

int main(void)
{
	static const int sizes[] = {100, 1000, 10000, 100000};
	static struct gbpf_insn insns[100000];
	struct gbpf_ptx_opts o = {.sz = sizeof(o), .flags = GBPF_PTX_KERNEL, .arch = "sm_90"};
	char err[256];

	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		int n = sizes[s], runs = n >= 100000 ? 5 : n >= 10000 ? 20 : 200;
		struct gbpf_prog_desc p = {.sz = sizeof(p), .name = "bench", .section = "bench", .insns = insns,
					   .insn_cnt = (size_t)n, .source_file = "bench"};
		const struct gbpf_prog_desc *pp = &p;
		double best = 1e9;
		size_t len = 0;

		fill(insns, n);
		for (int it = 0; it < runs; it++) {
			char *ptx = NULL;
			double t0 = now(), dt;

			if (gbpf_ptx_emit(&pp, 1, &o, &ptx, &len, err, sizeof(err))) {
				fprintf(stderr, "bench_ptx_codegen: %d insns: %s\n", n, err);
				return 1;
			}
			dt = now() - t0;
			if (dt < best)
				best = dt;
			free(ptx);
		}
		printf("ptx_codegen: %d insns -> %zu bytes of PTX in %.3f ms (best of %d, %.0f ns/insn)", n, len,
		       best * 1e3, runs, best * 1e9 / n);
		if (n == 1000)
			printf("; goal 1 ms: ratio %.2f", best * 1e3 / 1.0);
		printf("\n");
	}
	return 0;
}
