/* SPDX-License-Identifier: MIT */
/*
 * tests/verifier/test_random.c - structured random programs against the
 * verifier and the bounds-checked interpreter.
 *
 * Programs are built from templates that real probes use (stack spills,
 * buffer walks, map lookups with and without null checks, pointer
 * arithmetic with masked indexes, forward branches, counted loops, loops
 * that branch on helper results and count, atomics, helper calls), with
 * random registers, sizes and offsets so that some are safe and some are
 * not. Checks:
 *  - the verifier returns (no crash under ASan/UBSan, no hang: every run is
 *    bounded by the complexity limit) for every program, and for fully
 *    random instruction words too;
 *  - every accepted program runs on the interpreter in bounds-checked mode
 *    without a memory fault and within its budget;
 *  - the r0 it returns lies within the bounds the verifier computed.
 */
#include <errno.h>
#include <stdbool.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gbpf/asm.h>
#include <gbpf/helper_ids.h>

#include "core/interp/interp.h"
#include "maps/map.h"
#include "tap.h"
#include "vtest_util.h"

#define MAX_INSNS 256
#define MEM_SIZE 64

struct gen {
	uint64_t s;
	struct gbpf_insn insns[MAX_INSNS];
	size_t n;
};

static uint64_t rnd(struct gen *g)
{
	/* xorshift64*: deterministic per seed so that failures reproduce */
	g->s ^= g->s >> 12;
	g->s ^= g->s << 25;
	g->s ^= g->s >> 27;
	return g->s * 0x2545F4914F6CDD1DULL;
}

static uint32_t pick(struct gen *g, uint32_t n)
{
	return (uint32_t)(rnd(g) % n);
}

static void emit(struct gen *g, uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm)
{
	if (g->n >= MAX_INSNS)
		return;
	g->insns[g->n].code = code;
	g->insns[g->n].dst = dst & 15;
	g->insns[g->n].src = src & 15;
	g->insns[g->n].off = off;
	g->insns[g->n].imm = imm;
	g->n++;
}

/* A scratch register: r0, r2-r7, r9 (r8 keeps the buffer pointer). */
static uint8_t scratch(struct gen *g)
{
	static const uint8_t regs[] = {0, 2, 3, 4, 5, 6, 7, 9};

	if (pick(g, 50) == 0)
		return (uint8_t)pick(g, 10); /* sometimes anything */
	return regs[pick(g, sizeof(regs))];
}

static int32_t some_imm(struct gen *g)
{
	switch (pick(g, 5)) {
	case 0: return (int32_t)pick(g, 8);
	case 1: return (int32_t)pick(g, 256) - 128;
	case 2: return (int32_t)rnd(g);
	case 3: return 1 << pick(g, 31);
	default: return (int32_t)pick(g, 64);
	}
}

static uint8_t size_code(struct gen *g, uint32_t *bytes)
{
	static const uint8_t codes[] = {GBPF_B, GBPF_H, GBPF_W, GBPF_DW};
	static const uint32_t sizes[] = {1, 2, 4, 8};
	uint32_t i = pick(g, 4);

	*bytes = sizes[i];
	return codes[i];
}

static void t_alu(struct gen *g)
{
	static const uint8_t ops[] = {GBPF_ADD, GBPF_SUB, GBPF_MUL, GBPF_DIV, GBPF_OR,  GBPF_AND,
				      GBPF_LSH, GBPF_RSH, GBPF_NEG, GBPF_MOD, GBPF_XOR, GBPF_MOV,
				      GBPF_ARSH};
	uint8_t op = ops[pick(g, sizeof(ops))], cls = pick(g, 3) ? GBPF_ALU64 : GBPF_ALU;
	uint8_t dst = scratch(g);
	int16_t off = 0;

	if ((op == GBPF_DIV || op == GBPF_MOD) && pick(g, 3) == 0)
		off = 1;
	if (op == GBPF_NEG) {
		emit(g, cls | op, dst, 0, 0, 0);
		return;
	}
	if (pick(g, 2))
		emit(g, cls | op | GBPF_K, dst, 0, off, some_imm(g));
	else
		emit(g, cls | op | GBPF_X, dst, scratch(g), off, 0);
}

static void t_stack(struct gen *g)
{
	uint32_t bytes;
	uint8_t sz = size_code(g, &bytes);
	int16_t off = (int16_t)-(int16_t)(bytes * (1 + pick(g, 64 / bytes * 8 + 1)));

	if (pick(g, 8) == 0)
		off = (int16_t)(-(int16_t)pick(g, 530));
	switch (pick(g, 4)) {
	case 0: emit(g, GBPF_ST | GBPF_MEM | sz, 10, 0, off, some_imm(g)); break;
	case 1: emit(g, GBPF_STX | GBPF_MEM | sz, 10, scratch(g), off, 0); break;
	case 2: emit(g, GBPF_LDX | GBPF_MEM | sz, scratch(g), 10, off, 0); break;
	default:
		emit(g, GBPF_STX | GBPF_MEM | GBPF_DW, 10, scratch(g), off & ~7, 0);
		emit(g, GBPF_LDX | GBPF_MEM | GBPF_DW, scratch(g), 10, off & ~7, 0);
	}
}

static void t_mem(struct gen *g)
{
	uint32_t bytes;
	uint8_t sz = size_code(g, &bytes);
	int16_t off = (int16_t)(pick(g, MEM_SIZE + 16) - 8);

	if (pick(g, 2))
		emit(g, GBPF_LDX | GBPF_MEM | sz, scratch(g), 8, off, 0);
	else
		emit(g, GBPF_ST | GBPF_MEM | sz, 8, 0, off, some_imm(g));
}

/* index = mem byte & mask; p = base + index; access p[k] */
static void t_index(struct gen *g)
{
	uint8_t idx = 6, p = 7;
	uint32_t bytes;
	uint8_t sz = size_code(g, &bytes);
	bool stack = pick(g, 2);

	emit(g, GBPF_LDX | GBPF_MEM | GBPF_B, idx, 8, (int16_t)pick(g, 8), 0);
	switch (pick(g, 4)) {
	case 0:
		emit(g, GBPF_JMP | GBPF_JGT | GBPF_K, idx, 0, 1, (int32_t)pick(g, 70));
		break;
	case 1: /* bound a linked copy, sometimes clobber it first */
		emit(g, GBPF_ALU64 | GBPF_MOV | GBPF_X, 5, idx, 0, 0);
		if (pick(g, 3) == 0)
			emit(g, GBPF_ALU64 | GBPF_ADD | GBPF_K, pick(g, 2) ? 5 : idx, 0, 0, 1);
		emit(g, GBPF_JMP | GBPF_JGT | GBPF_K, 5, 0, 1, (int32_t)pick(g, 70));
		break;
	default:
		emit(g, GBPF_ALU64 | GBPF_AND | GBPF_K, idx, 0, 0, (int32_t)(1u << pick(g, 7)) - 1);
	}
	if (pick(g, 4) == 0)
		emit(g, GBPF_OP_JA, 0, 0, 3, 0);
	emit(g, GBPF_ALU64 | GBPF_MOV | GBPF_X, p, stack ? 10 : 8, 0, 0);
	if (stack) {
		emit(g, GBPF_ALU64 | GBPF_ADD | GBPF_K, p, 0, 0, -(int32_t)(64 + 8 * pick(g, 4)));
		emit(g, GBPF_ST | GBPF_MEM | GBPF_DW, 10, 0, -8 * (int16_t)(1 + pick(g, 12)), 0);
	}
	emit(g, GBPF_ALU64 | GBPF_ADD | GBPF_X, p, idx, 0, 0);
	if (pick(g, 2))
		emit(g, GBPF_LDX | GBPF_MEM | sz, scratch(g), p, (int16_t)pick(g, 8), 0);
	else
		emit(g, GBPF_ST | GBPF_MEM | sz, p, 0, (int16_t)pick(g, 8), 1);
}

/* Helper calls clobber r1-r5: give the scratch ones values again. */
static void reinit_args(struct gen *g)
{
	for (uint8_t r = 2; r <= 5; r++)
		if (pick(g, 16))
			emit(g, GBPF_ALU64 | GBPF_MOV | GBPF_K, r, 0, 0, (int32_t)pick(g, 16));
}

static void t_lookup(struct gen *g)
{
	uint32_t bytes;
	uint8_t sz = size_code(g, &bytes);
	uint32_t map = pick(g, 2);

	emit(g, GBPF_ST | GBPF_MEM | GBPF_W, 10, 0, -4, (int32_t)pick(g, 3));
	emit(g, GBPF_OP_LDDW, 1, GBPF_PSEUDO_MAP_IDX, 0, (int32_t)map);
	emit(g, 0, 0, 0, 0, 0);
	emit(g, GBPF_ALU64 | GBPF_MOV | GBPF_X, 2, 10, 0, 0);
	emit(g, GBPF_ALU64 | GBPF_ADD | GBPF_K, 2, 0, 0, pick(g, 10) ? -4 : -2);
	emit(g, GBPF_OP_CALL, 0, 0, 0, GBPF_HELPER_MAP_LOOKUP_ELEM);
	reinit_args(g);
	if (pick(g, 5))
		emit(g, GBPF_JMP | GBPF_JEQ | GBPF_K, 0, 0, 1, 0);
	if (pick(g, 2))
		emit(g, GBPF_LDX | GBPF_MEM | sz, scratch(g), 0, (int16_t)pick(g, 20), 0);
	else
		emit(g, GBPF_STX | GBPF_ATOMIC | (bytes == 8 ? GBPF_DW : GBPF_W), 0, 2 + pick(g, 3),
		     (int16_t)(pick(g, 5) * 4), GBPF_ATOMIC_ADD);
	emit(g, GBPF_ALU64 | GBPF_MOV | GBPF_K, 0, 0, 0, 0);
}

static void t_branch(struct gen *g)
{
	static const uint8_t ops[] = {GBPF_JEQ, GBPF_JGT, GBPF_JGE, GBPF_JSET, GBPF_JNE, GBPF_JSGT,
				      GBPF_JSGE, GBPF_JLT, GBPF_JLE, GBPF_JSLT, GBPF_JSLE};
	uint8_t cls = pick(g, 3) ? GBPF_JMP : GBPF_JMP32;
	int16_t off = (int16_t)pick(g, 6);

	if (pick(g, 2))
		emit(g, cls | ops[pick(g, sizeof(ops))] | GBPF_K, scratch(g), 0, off, some_imm(g));
	else
		emit(g, cls | ops[pick(g, sizeof(ops))] | GBPF_X, scratch(g), scratch(g), off, 0);
}

static void t_loop(struct gen *g)
{
	size_t start;
	int32_t n = (int32_t)pick(g, 20);

	emit(g, GBPF_ALU64 | GBPF_MOV | GBPF_K, 9, 0, 0, 0);
	start = g->n;
	for (uint32_t k = pick(g, 3) + 1; k; k--) {
		if (pick(g, 2))
			emit(g, GBPF_ALU64 | GBPF_ADD | GBPF_X, 0, 9, 0, 0);
		else
			t_mem(g);
	}
	emit(g, GBPF_ALU64 | GBPF_ADD | GBPF_K, 9, 0, 0, pick(g, 8) ? 1 : 0);
	emit(g, GBPF_JMP | GBPF_JLT | GBPF_K, 9, 0, (int16_t)(start - g->n - 1), n);
}

/*
 * A counted loop whose body branches on a helper's result and counts one
 * outcome (the pattern pruning must handle without following every path):
 * the loop counter in r9 or as a u32 on the stack, the count in r6 or a
 * stack slot; after the loop the count is stored as data, used as an index
 * (bounded or not: a late iteration may go out of bounds) or returned.
 */
static void t_helper_loop(struct gen *g)
{
	int32_t n = 1 + (int32_t)pick(g, 40);
	bool stack_ctr = pick(g, 2), stack_cnt = pick(g, 3) == 0;
	size_t start, skip;

	emit(g, GBPF_ALU64 | GBPF_MOV | GBPF_K, 6, 0, 0, 0);
	if (stack_cnt)
		emit(g, GBPF_STX | GBPF_MEM | GBPF_DW, 10, 6, -24, 0);
	if (stack_ctr)
		emit(g, GBPF_ST | GBPF_MEM | GBPF_W, 10, 0, -28, 0);
	else
		emit(g, GBPF_ALU64 | GBPF_MOV | GBPF_K, 9, 0, 0, 0);
	start = g->n;
	emit(g, GBPF_OP_CALL, 0, 0, 0, GBPF_HELPER_GET_PRANDOM_U32);
	emit(g, GBPF_ALU64 | GBPF_AND | GBPF_K, 0, 0, 0, (int32_t)(1u << pick(g, 3)));
	skip = g->n;
	emit(g, GBPF_JMP | GBPF_JEQ | GBPF_K, 0, 0, 0, 0); /* offset patched below */
	if (stack_cnt) {
		emit(g, GBPF_LDX | GBPF_MEM | GBPF_DW, 6, 10, -24, 0);
		emit(g, GBPF_ALU64 | GBPF_ADD | GBPF_K, 6, 0, 0, 1);
		emit(g, GBPF_STX | GBPF_MEM | GBPF_DW, 10, 6, -24, 0);
	} else {
		emit(g, GBPF_ALU64 | GBPF_ADD | GBPF_K, 6, 0, 0, 1);
	}
	g->insns[skip].off = (int16_t)(g->n - skip - 1);
	if (stack_ctr) {
		emit(g, GBPF_LDX | GBPF_MEM | GBPF_W, 9, 10, -28, 0);
		emit(g, GBPF_ALU64 | GBPF_ADD | GBPF_K, 9, 0, 0, 1);
		emit(g, GBPF_STX | GBPF_MEM | GBPF_W, 10, 9, -28, 0);
	} else {
		emit(g, GBPF_ALU64 | GBPF_ADD | GBPF_K, 9, 0, 0, 1);
	}
	emit(g, GBPF_JMP | GBPF_JLT | GBPF_K, 9, 0, (int16_t)(start - g->n - 1), n);
	if (stack_cnt)
		emit(g, GBPF_LDX | GBPF_MEM | GBPF_DW, 6, 10, -24, 0);
	switch (pick(g, 4)) {
	case 0: /* data only */
		emit(g, GBPF_STX | GBPF_MEM | GBPF_B, 8, 6, (int16_t)pick(g, MEM_SIZE), 0);
		break;
	case 1: /* index into the data buffer: safe only while n < MEM_SIZE */
		emit(g, GBPF_ALU64 | GBPF_MOV | GBPF_X, 7, 8, 0, 0);
		emit(g, GBPF_ALU64 | GBPF_ADD | GBPF_X, 7, 6, 0, 0);
		emit(g, GBPF_ST | GBPF_MEM | GBPF_B, 7, 0, (int16_t)pick(g, 32), 1);
		break;
	case 2: /* bounded first, sometimes off by some */
		emit(g, GBPF_JMP | GBPF_JGT | GBPF_K, 6, 0, 3, (int32_t)(MEM_SIZE - 1 - pick(g, 3) + pick(g, 3)));
		emit(g, GBPF_ALU64 | GBPF_MOV | GBPF_X, 7, 8, 0, 0);
		emit(g, GBPF_ALU64 | GBPF_ADD | GBPF_X, 7, 6, 0, 0);
		emit(g, GBPF_LDX | GBPF_MEM | GBPF_B, 0, 7, 0, 0);
		break;
	default: /* returned: part of the result's range */
		emit(g, GBPF_ALU64 | GBPF_MOV | GBPF_X, 0, 6, 0, 0);
		emit(g, GBPF_OP_EXIT, 0, 0, 0, 0);
	}
}

static void t_misc(struct gen *g)
{
	switch (pick(g, 4)) {
	case 0:
		emit(g, GBPF_OP_CALL, 0, 0, 0, pick(g, 2) ? GBPF_HELPER_KTIME_GET_NS
							  : GBPF_HELPER_GET_PRANDOM_U32);
		reinit_args(g);
		break;
	case 1:
		emit(g, GBPF_ST | GBPF_MEM | GBPF_DW, 10, 0, -16, 1);
		emit(g, GBPF_STX | GBPF_ATOMIC | GBPF_DW, 10, scratch(g), -16,
		     pick(g, 2) ? GBPF_ATOMIC_ADD | GBPF_FETCH : GBPF_ATOMIC_XCHG);
		break;
	case 2:
		emit(g, GBPF_ALU64 | GBPF_MOV | GBPF_X, scratch(g), 10, 0, 0);
		break;
	default:
		emit(g, GBPF_OP_LDDW, scratch(g), 0, 0, (int32_t)rnd(g));
		emit(g, 0, 0, 0, 0, (int32_t)rnd(g));
	}
}

static void generate(struct gen *g)
{
	uint32_t blocks = 3 + pick(g, 12);

	g->n = 0;
	emit(g, GBPF_ALU64 | GBPF_MOV | GBPF_X, 8, 1, 0, 0);
	for (uint8_t r = 0; r <= 9; r++)
		if (r != 1 && r != 8 && pick(g, 16))
			emit(g, GBPF_ALU64 | GBPF_MOV | GBPF_K, r, 0, 0, some_imm(g));
	while (blocks-- && g->n < MAX_INSNS - 24) {
		switch (pick(g, 10)) {
		case 0: case 1: t_alu(g); break;
		case 2: t_stack(g); break;
		case 3: t_mem(g); break;
		case 4: t_index(g); break;
		case 5: t_lookup(g); break;
		case 6: t_branch(g); break;
		case 7: t_loop(g); break;
		case 8:
			if (g->n < MAX_INSNS - 48)
				t_helper_loop(g);
			break;
		default: t_misc(g); break;
		}
	}
	if (pick(g, 3))
		emit(g, GBPF_ALU64 | GBPF_MOV | GBPF_X, 0, scratch(g), 0, 0);
	for (int k = 0; k < 6; k++) /* landing pads for forward branches */
		emit(g, GBPF_ALU64 | GBPF_ADD | GBPF_K, 0, 0, 0, 1);
	emit(g, GBPF_OP_EXIT, 0, 0, 0, 0);
}

struct stats {
	unsigned accepted, rejected, ran, faults, r0_misses;
};

static void run_one(struct gen *g, struct gbpf_map_instance *inst,
		    const struct gbpf_map_desc *maps, struct stats *st, uint64_t seed, int raw)
{
	struct gbpf_verify_result res;
	char log[4096], err[256];
	struct gbpf_prog_desc p;
	struct gbpf_interp *ip = NULL;
	uint8_t mem[MEM_SIZE];
	int rc;

	rc = vt_verify(g->insns, g->n, GBPF_ATTACH_NONE, maps, 2, MEM_SIZE, &res, log, sizeof(log));
	if (rc) {
		st->rejected++;
		if (getenv("GBPF_VT_REASONS"))
			tap_diag("reject: %s", res.reason);
		if (rc != -GBPF_ERRNO__VERIFY)
			tap_ok(0, "seed %" PRIu64 ": verifier returned %d", seed, rc);
		return;
	}
	st->accepted++;
	memset(&p, 0, sizeof(p));
	p.sz = sizeof(p);
	p.name = "random";
	p.insns = g->insns;
	p.insn_cnt = g->n;
	p.maps = maps;
	p.map_cnt = 2;
	GBPF_OPTS(gbpf_interp_opts, io, .bounds_checked = 1, .max_insns = 10000000);
	if (gbpf_interp_create(&p, inst, 2, &io, &ip, err, sizeof(err))) {
		tap_ok(0, "seed %" PRIu64 "%s: interpreter refused a verified program: %s", seed,
		       raw ? " (raw)" : "", err);
		return;
	}
	for (int round = 0; round < 2; round++) {
		struct gbpf_exec_env env;
		struct gbpf_interp_region region = {mem, MEM_SIZE, 1, "data"};
		struct gbpf_interp_result out;
		uint64_t args[5] = {(uint64_t)(uintptr_t)mem, MEM_SIZE, 0, 0, 0};

		for (int i = 0; i < MEM_SIZE; i++)
			mem[i] = (uint8_t)(round ? rnd(g) : (uint64_t)i * 7);
		memset(&env, 0, sizeof(env));
		env.maps = inst;
		env.map_cnt = 2;
		env.thread_count = 1;
		env.prandom_state = seed | 1;
		rc = gbpf_interp_run(ip, &env, args, &region, 1, &out, err, sizeof(err));
		st->ran++;
		if (rc) {
			char *text = NULL;

			st->faults++;
			gbpf_disasm(g->insns, g->n, &text);
			tap_ok(0, "seed %" PRIu64 ": verified program faulted: %s", seed, err);
			tap_diag("program:\n%s", text ? text : "?");
			free(text);
			break;
		}
		if (!((int64_t)out.r0 >= res.r0_smin && (int64_t)out.r0 <= res.r0_smax &&
		      out.r0 >= res.r0_umin && out.r0 <= res.r0_umax &&
		      (out.r0 & ~res.r0_known_mask) == res.r0_known_value)) {
			char *text = NULL;

			st->r0_misses++;
			gbpf_disasm(g->insns, g->n, &text);
			tap_ok(0,
			       "seed %" PRIu64 ": r0 0x%" PRIx64 " outside verifier bounds [%" PRId64
			       ", %" PRId64 "] u[%" PRIu64 ", %" PRIu64 "] tnum(0x%" PRIx64
			       "; 0x%" PRIx64 ")",
			       seed, out.r0, res.r0_smin, res.r0_smax, res.r0_umin, res.r0_umax,
			       res.r0_known_value, res.r0_known_mask);
			tap_diag("program:\n%s", text ? text : "?");
			free(text);
			break;
		}
	}
	gbpf_interp_destroy(ip);
}

int main(int argc, char **argv)
{
	unsigned count = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 0) : 4000;
	struct gbpf_map_desc maps[2] = {
		{.sz = sizeof(struct gbpf_map_desc), .name = "arr", .type = GBPF_MAP_TYPE_ARRAY,
		 .key_size = 4, .value_size = 16, .max_entries = 4},
		{.sz = sizeof(struct gbpf_map_desc), .name = "hash", .type = GBPF_MAP_TYPE_HASH,
		 .key_size = 4, .value_size = 8, .max_entries = 8},
	};
	struct gbpf_map_instance inst[2];
	struct stats st = {0};
	struct gen g;

	for (int i = 0; i < 2; i++) {
		if (gbpf_map_instance_create(&inst[i], &maps[i], 1)) {
			tap_ok(0, "cannot create map %s", maps[i].name);
			return tap_done();
		}
	}
	{ /* one hash entry so that lookups sometimes succeed */
		uint32_t key = 1;
		uint64_t val = 5;

		gbpf_map_update(&inst[1], &key, &val, GBPF_ANY, 0);
	}
	for (unsigned i = 0; i < count; i++) {
		g.s = 0x9e3779b97f4a7c15ULL * (i + 1);
		generate(&g);
		run_one(&g, inst, maps, &st, i, 0);
	}
	tap_ok(st.faults == 0, "%u structured programs: %u accepted, %u rejected, %u runs, %u faults",
	       count, st.accepted, st.rejected, st.ran, st.faults);
	tap_ok(st.r0_misses == 0, "r0 of every run inside the verifier's bounds (%u misses)",
	       st.r0_misses);
	tap_ok(st.accepted >= count / 10 && st.rejected >= count / 10,
	       "the generator covers both verdicts (%u accepted, %u rejected)", st.accepted,
	       st.rejected);
	/* fully random words: only "returns and does not crash" */
	{
		struct stats raw = {0};

		for (unsigned i = 0; i < count; i++) {
			g.s = 0xda942042e4dd58b5ULL * (i + 7);
			g.n = 2 + pick(&g, 40);
			for (size_t k = 0; k < g.n; k++) {
				uint64_t w = rnd(&g);

				memcpy(&g.insns[k], &w, 8);
				if (pick(&g, 2)) /* bias towards valid opcodes */
					g.insns[k].code = (uint8_t)(g.insns[k].code & 0xf7);
			}
			g.insns[g.n - 1] = (struct gbpf_insn){.code = GBPF_OP_EXIT};
			run_one(&g, inst, maps, &raw, i, 1);
		}
		tap_ok(raw.faults == 0 && raw.r0_misses == 0,
		       "%u random instruction streams: %u accepted, none faulted", count,
		       raw.accepted);
	}
	for (int i = 0; i < 2; i++)
		gbpf_map_instance_destroy(&inst[i]);
	return tap_done();
}
