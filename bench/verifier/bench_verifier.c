/* SPDX-License-Identifier: MIT */
/*
 * bench/verifier/bench_verifier.c - time of gbpf_verify() against program
 * size (100 / 1k / 2k / 10k / 100k instructions of probe-like code) and on
 * loop-heavy programs. Goal: at most 1 ms for 2,000 instructions
 * (bpftime's GPU rules alone take 1.28 ms at 2,048).
 *
 * Probe-like code: blocks that read the context, compute, spill and fill
 * the stack, look a map value up and branch on data, as a gpu/entry probe.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gbpf/helper_ids.h>
#include <gbpf/verifier.h>

struct buf {
	struct gbpf_insn *insns;
	size_t n, cap;
};

static void emit(struct buf *b, uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm)
{
	if (b->n == b->cap) {
		b->cap = b->cap ? b->cap * 2 : 256;
		b->insns = realloc(b->insns, b->cap * sizeof(*b->insns));
		if (!b->insns)
			exit(1);
	}
	b->insns[b->n++] = (struct gbpf_insn){.code = code, .dst = dst, .src = src, .off = off,
					      .imm = imm};
}

/* One block of 20 slots: ctx read, arithmetic, branch, stack, map update. */
static void probe_block(struct buf *b, int k)
{
	emit(b, GBPF_LDX | GBPF_MEM | GBPF_DW, 2, 6, (int16_t)(8 * (k % 3)), 0);
	emit(b, GBPF_ALU64 | GBPF_AND | GBPF_K, 2, 0, 0, 0xff);
	emit(b, GBPF_ALU64 | GBPF_MUL | GBPF_K, 2, 0, 0, 3);
	emit(b, GBPF_JMP | GBPF_JGT | GBPF_K, 2, 0, 2, 400);
	emit(b, GBPF_ALU64 | GBPF_ADD | GBPF_X, 7, 2, 0, 0);
	emit(b, GBPF_ALU64 | GBPF_XOR | GBPF_K, 7, 0, 0, k);
	emit(b, GBPF_STX | GBPF_MEM | GBPF_DW, 10, 7, -16, 0);
	emit(b, GBPF_ST | GBPF_MEM | GBPF_W, 10, 0, -4, k & 3);
	emit(b, GBPF_OP_LDDW, 1, GBPF_PSEUDO_MAP_IDX, 0, 0);
	emit(b, 0, 0, 0, 0, 0);
	emit(b, GBPF_ALU64 | GBPF_MOV | GBPF_X, 2, 10, 0, 0);
	emit(b, GBPF_ALU64 | GBPF_ADD | GBPF_K, 2, 0, 0, -4);
	emit(b, GBPF_OP_CALL, 0, 0, 0, GBPF_HELPER_MAP_LOOKUP_ELEM);
	emit(b, GBPF_JMP | GBPF_JEQ | GBPF_K, 0, 0, 3, 0);
	emit(b, GBPF_LDX | GBPF_MEM | GBPF_DW, 3, 10, -16, 0);
	emit(b, GBPF_STX | GBPF_ATOMIC | GBPF_DW, 0, 3, 0, GBPF_ATOMIC_ADD);
	emit(b, GBPF_LDX | GBPF_MEM | GBPF_DW, 8, 0, 8, 0);
	emit(b, GBPF_ALU64 | GBPF_RSH | GBPF_K, 7, 0, 0, 1);
	emit(b, GBPF_ALU64 | GBPF_MOV | GBPF_K, 8, 0, 0, 0);
	emit(b, GBPF_ALU64 | GBPF_ADD | GBPF_K, 7, 0, 0, 1);
}

static void probe_prog(struct buf *b, size_t target)
{
	b->n = 0;
	emit(b, GBPF_ALU64 | GBPF_MOV | GBPF_X, 6, 1, 0, 0);
	emit(b, GBPF_ALU64 | GBPF_MOV | GBPF_K, 7, 0, 0, 0);
	for (int k = 0; b->n + 22 <= target; k++)
		probe_block(b, k);
	while (b->n + 2 < target)
		emit(b, GBPF_ALU64 | GBPF_ADD | GBPF_K, 7, 0, 0, 1);
	emit(b, GBPF_ALU64 | GBPF_MOV | GBPF_X, 0, 7, 0, 0);
	emit(b, GBPF_OP_EXIT, 0, 0, 0, 0);
}

/* for (i = 0; i < iters; i++) { for (j = 0; j < inner; j++) sum += ctx[i&1]; } */
static void loop_prog(struct buf *b, int iters, int inner)
{
	b->n = 0;
	emit(b, GBPF_ALU64 | GBPF_MOV | GBPF_K, 0, 0, 0, 0);
	emit(b, GBPF_ALU64 | GBPF_MOV | GBPF_K, 8, 0, 0, 0);
	/* outer: */
	emit(b, GBPF_ALU64 | GBPF_MOV | GBPF_K, 9, 0, 0, 0);
	/* inner: */
	emit(b, GBPF_LDX | GBPF_MEM | GBPF_DW, 2, 1, 0, 0);
	emit(b, GBPF_ALU64 | GBPF_AND | GBPF_K, 2, 0, 0, 7);
	emit(b, GBPF_ALU64 | GBPF_ADD | GBPF_X, 0, 2, 0, 0);
	emit(b, GBPF_ALU64 | GBPF_ADD | GBPF_K, 9, 0, 0, 1);
	emit(b, GBPF_JMP | GBPF_JLT | GBPF_K, 9, 0, -5, inner);
	emit(b, GBPF_ALU64 | GBPF_ADD | GBPF_K, 8, 0, 0, 1);
	emit(b, GBPF_JMP | GBPF_JLT | GBPF_K, 8, 0, -8, iters);
	emit(b, GBPF_OP_EXIT, 0, 0, 0, 0);
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int measure(const char *label, const struct buf *b, uint32_t kind, double goal_us)
{
	struct gbpf_map_desc map = {.sz = sizeof(map), .name = "counts",
				    .type = GBPF_MAP_TYPE_ARRAY, .key_size = 4,
				    .value_size = 16, .max_entries = 4};
	struct gbpf_prog_desc p = {.sz = sizeof(p), .name = label, .insns = b->insns,
				   .insn_cnt = b->n, .maps = &map, .map_cnt = 1,
				   .attach = {.kind = kind}};
	struct gbpf_verify_result r = {.sz = sizeof(r)};
	GBPF_OPTS(gbpf_verify_opts, o, .complexity_limit = 5000000);
	double best = 1e30, t;
	int reps = b->n > 20000 ? 3 : 20, err = 0;

	for (int i = 0; i < reps; i++) {
		t = now_us();
		err = gbpf_verify(&p, &o, &r);
		t = now_us() - t;
		if (t < best)
			best = t;
	}
	printf("%-28s %8zu insns %10.1f us  %s  processed %8llu  states %6llu  worst path %8llu%s\n",
	       label, b->n, best, err ? "REJECTED" : "accepted",
	       (unsigned long long)r.insns_processed, (unsigned long long)r.states_stored,
	       (unsigned long long)r.worst_case_insns,
	       goal_us > 0 ? (best <= goal_us ? "  (goal <= 1000 us: met)"
					      : "  (goal <= 1000 us: MISSED)")
			   : "");
	if (err) {
		fprintf(stderr, "%s: %s at insn %lld\n", label, r.reason, (long long)r.error_insn);
		return 1;
	}
	return goal_us > 0 && best > goal_us;
}

int main(void)
{
	static const size_t sizes[] = {100, 1000, 2000, 10000, 100000};
	struct buf b = {0};
	int bad = 0;

	printf("gbpf verifier: best of N runs, gpu/entry probe-like code\n");
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		char label[32];

		snprintf(label, sizeof(label), "probe %zu", sizes[i]);
		probe_prog(&b, sizes[i]);
		bad |= measure(label, &b, GBPF_ATTACH_GPU_ENTRY, sizes[i] == 2000 ? 1000 : 0);
	}
	loop_prog(&b, 100, 1);
	bad |= measure("loop 100", &b, GBPF_ATTACH_GPU_ENTRY, 0);
	loop_prog(&b, 1000, 1);
	bad |= measure("loop 1000", &b, GBPF_ATTACH_GPU_ENTRY, 0);
	loop_prog(&b, 10000, 1);
	bad |= measure("loop 10000", &b, GBPF_ATTACH_GPU_ENTRY, 0);
	loop_prog(&b, 32, 32);
	bad |= measure("nested loops 32x32", &b, GBPF_ATTACH_GPU_ENTRY, 0);
	free(b.insns);
	return bad;
}
