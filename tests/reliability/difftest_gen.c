/* SPDX-License-Identifier: MIT */
/*
 * tests/reliability/difftest_gen.c - random verified, deterministic
 * programs for the differential test (see difftest_gen.h).
 *
 * Every construct is chosen so that the verifier can prove it safe without
 * help: scalars only in r6-r9, the stack zeroed up front (so every load
 * reads initialised bytes), aligned stack slots, map values reached through
 * a null-checked lookup, loops with a constant trip count, forward
 * branches only. The values themselves are unconstrained (division by a
 * register that may be zero, shifts by any register amount, INT_MIN / -1,
 * sign extension of every width): those are what backends get wrong.
 */
#include <string.h>

#include <gbpf/helper_ids.h>

#include "difftest_gen.h"

const struct gbpf_map_desc dt_maps[2] = {
	{.sz = sizeof(struct gbpf_map_desc), .name = "arr", .type = GBPF_MAP_TYPE_ARRAY,
	 .key_size = 4, .value_size = 8, .max_entries = DT_ARRAY_ENTRIES},
	{.sz = sizeof(struct gbpf_map_desc), .name = "hash", .type = GBPF_MAP_TYPE_HASH,
	 .key_size = 4, .value_size = 8, .max_entries = DT_HASH_ENTRIES},
};

/* Stack: 8 scratch slots at -8..-64, the key at -72, a value at -80. */
#define SLOT_LOW -64
#define KEY_OFF -72
#define VAL_OFF -80

/*
 * Room for the subprograms' bodies and calls; a body takes at most about 100
 * instructions (its blocks are not nested), the main program leaves room.
 */
#define SUB_MAX_INSNS 192
#define SUB_MAX_CALLS 8

struct gen {
	uint64_t s;
	struct dt_prog *p;
	int muted; /* current block is left out: consume randomness, emit nothing */
	int in_sub; /* generating a subprogram's body: no calls from there */
	size_t planned; /* emit() calls so far, muted or not (budgets must not depend on muting) */
	/* subprograms: their bodies set aside, appended after the main program's exit */
	struct gbpf_insn sub[SUB_MAX_INSNS];
	size_t sub_n, sub_planned;
	struct {
		size_t pc, body; /* the call instruction; its callee's offset in sub[] */
	} calls[SUB_MAX_CALLS];
	unsigned n_calls, calls_planned;
};

static uint64_t rnd(struct gen *g)
{
	/* xorshift64*: a seed always gives the same program */
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
	struct dt_prog *p = g->p;

	g->planned++;
	if (g->muted || p->n >= DT_MAX_INSNS)
		return;
	p->insns[p->n] = (struct gbpf_insn){.code = code, .dst = dst & 15, .src = src & 15,
					    .off = off, .imm = imm};
	p->n++;
}

static void emit_lddw(struct gen *g, uint8_t dst, uint8_t src, uint64_t v)
{
	emit(g, GBPF_OP_LDDW, dst, src, 0, (int32_t)(uint32_t)v);
	emit(g, 0, 0, 0, 0, (int32_t)(uint32_t)(v >> 32));
}

/* Position of the next instruction; jumps are patched against it. */
static size_t here(const struct gen *g)
{
	return g->p->n;
}

static void patch_off(struct gen *g, size_t at, size_t target)
{
	if (!g->muted && at < g->p->n)
		g->p->insns[at].off = (int16_t)(target - at - 1);
}

static uint8_t reg(struct gen *g)
{
	return (uint8_t)(6 + pick(g, 4));
}

static int32_t some_imm(struct gen *g)
{
	switch (pick(g, 8)) {
	case 0: return (int32_t)pick(g, 8);
	case 1: return (int32_t)pick(g, 256) - 128;
	case 2: return (int32_t)rnd(g);
	case 3: return (int32_t)(1u << pick(g, 32));
	case 4: return -1;
	case 5: return INT32_MIN;
	case 6: return INT32_MAX;
	default: return (int32_t)pick(g, 64);
	}
}

static uint64_t some_u64(struct gen *g)
{
	static const uint64_t special[] = {0, 1, ~0ull, 0x8000000000000000ull, 0x7fffffffffffffffull,
					   0x80000000ull, 0xffffffffull, 0xffffffff80000000ull,
					   0x8000ull, 0x80ull};

	if (pick(g, 3) == 0)
		return special[pick(g, sizeof(special) / sizeof(special[0]))];
	return rnd(g) >> pick(g, 64);
}

/* A non-zero immediate (division by a zero constant is rejected). */
static int32_t nonzero_imm(struct gen *g)
{
	int32_t v = some_imm(g);

	return v ? v : 3;
}

static void b_alu(struct gen *g)
{
	uint8_t cls = pick(g, 2) ? GBPF_ALU64 : GBPF_ALU, dst = reg(g), src = reg(g);
	int32_t width = cls == GBPF_ALU64 ? 64 : 32;
	int x = (int)pick(g, 2);
	static const uint8_t plain[] = {GBPF_ADD, GBPF_SUB, GBPF_MUL, GBPF_OR,
					GBPF_AND, GBPF_XOR, GBPF_MOV};

	switch (pick(g, 9)) {
	case 0: case 1: case 2: {
		uint8_t op = plain[pick(g, sizeof(plain))];

		if (x)
			emit(g, cls | op | GBPF_X, dst, src, 0, 0);
		else
			emit(g, cls | op | GBPF_K, dst, 0, 0, some_imm(g));
		break;
	}
	case 3: { /* shifts: by a constant in range, a masked register, or any register */
		static const uint8_t sh[] = {GBPF_LSH, GBPF_RSH, GBPF_ARSH};
		uint8_t op = sh[pick(g, 3)];

		switch (pick(g, 3)) {
		case 0:
			emit(g, cls | op | GBPF_K, dst, 0, 0, (int32_t)pick(g, (uint32_t)width));
			break;
		case 1:
			emit(g, GBPF_ALU64 | GBPF_MOV | GBPF_X, 1, src, 0, 0);
			emit(g, GBPF_ALU64 | GBPF_AND | GBPF_K, 1, 0, 0, width - 1);
			emit(g, cls | op | GBPF_X, dst, 1, 0, 0);
			break;
		default:
			emit(g, cls | op | GBPF_X, dst, src, 0, 0);
		}
		break;
	}
	case 4: case 5: { /* div / mod, unsigned (off 0) and signed (off 1) */
		uint8_t op = pick(g, 2) ? GBPF_DIV : GBPF_MOD;
		int16_t s = (int16_t)pick(g, 2);

		if (x)
			emit(g, cls | op | GBPF_X, dst, src, s, 0);
		else
			emit(g, cls | op | GBPF_K, dst, 0, s, nonzero_imm(g));
		break;
	}
	case 6:
		emit(g, cls | GBPF_NEG | GBPF_K, dst, 0, 0, 0);
		break;
	case 7: { /* byte order: le/be on ALU, bswap on ALU64 */
		static const int32_t w[] = {16, 32, 64};

		emit(g, cls | GBPF_END | (cls == GBPF_ALU && x ? GBPF_X : GBPF_K), dst, 0, 0,
		     w[pick(g, 3)]);
		break;
	}
	default: { /* sign-extending moves */
		static const int16_t w64[] = {8, 16, 32}, w32[] = {8, 16};
		int16_t off = cls == GBPF_ALU64 ? w64[pick(g, 3)] : w32[pick(g, 2)];

		emit(g, cls | GBPF_MOV | GBPF_X, dst, src, off, 0);
	}
	}
}

static void b_stack(struct gen *g)
{
	static const uint8_t szc[] = {GBPF_B, GBPF_H, GBPF_W, GBPF_DW};
	static const int16_t bytes[] = {1, 2, 4, 8};
	uint32_t si = pick(g, 4);
	int16_t off = (int16_t)(SLOT_LOW + 8 * (int16_t)pick(g, 8) +
				bytes[si] * (int16_t)pick(g, (uint32_t)(8 / bytes[si])));

	switch (pick(g, 4)) {
	case 0:
		emit(g, GBPF_ST | GBPF_MEM | szc[si], 10, 0, off, some_imm(g));
		break;
	case 1:
		emit(g, GBPF_STX | GBPF_MEM | szc[si], 10, reg(g), off, 0);
		break;
	case 2:
		emit(g, GBPF_LDX | GBPF_MEM | szc[si], reg(g), 10, off, 0);
		break;
	default: /* sign-extending load (no 8-byte form) */
		if (si == 3)
			si = 2, off = (int16_t)(off & ~3);
		emit(g, GBPF_LDX | GBPF_MEMSX | szc[si], reg(g), 10, off, 0);
	}
}

static void b_atomic(struct gen *g)
{
	static const int32_t ops[] = {GBPF_ATOMIC_ADD, GBPF_ATOMIC_OR, GBPF_ATOMIC_AND,
				      GBPF_ATOMIC_XOR};
	int dw = (int)pick(g, 2);
	int16_t off = (int16_t)(SLOT_LOW + 8 * (int16_t)pick(g, 8) + (dw ? 0 : 4 * (int16_t)pick(g, 2)));
	uint8_t sz = dw ? GBPF_DW : GBPF_W, src = reg(g);

	switch (pick(g, 4)) {
	case 0: case 1:
		emit(g, GBPF_STX | GBPF_ATOMIC | sz, 10, src, off,
		     ops[pick(g, 4)] | (pick(g, 2) ? GBPF_FETCH : 0));
		break;
	case 2:
		emit(g, GBPF_STX | GBPF_ATOMIC | sz, 10, src, off, GBPF_ATOMIC_XCHG);
		break;
	default:
		/* r0 is the expected value: sometimes the slot itself, so the swap happens */
		if (pick(g, 2))
			emit(g, GBPF_LDX | GBPF_MEM | sz, 0, 10, off, 0);
		else
			emit(g, GBPF_ALU64 | GBPF_MOV | GBPF_X, 0, reg(g), 0, 0);
		emit(g, GBPF_STX | GBPF_ATOMIC | sz, 10, src, off, GBPF_ATOMIC_CMPXCHG);
		emit(g, GBPF_ALU64 | GBPF_XOR | GBPF_X, 7, 0, 0, 0);
	}
}

/* Straight-line code: what loops and branch arms contain. */
static void b_simple(struct gen *g)
{
	switch (pick(g, 4)) {
	case 0: case 1: b_alu(g); break;
	case 2: b_stack(g); break;
	default: b_atomic(g);
	}
}

static void jcond(struct gen *g)
{
	static const uint8_t ops[] = {GBPF_JEQ, GBPF_JGT, GBPF_JGE, GBPF_JSET, GBPF_JNE, GBPF_JSGT,
				      GBPF_JSGE, GBPF_JLT, GBPF_JLE, GBPF_JSLT, GBPF_JSLE};
	uint8_t cls = pick(g, 2) ? GBPF_JMP : GBPF_JMP32, op = ops[pick(g, sizeof(ops))];

	if (pick(g, 2))
		emit(g, cls | op | GBPF_X, reg(g), reg(g), 0, 0);
	else
		emit(g, cls | op | GBPF_K, reg(g), 0, 0, some_imm(g));
}

static void b_branch(struct gen *g)
{
	size_t j = here(g), ja;
	uint32_t k;

	jcond(g);
	for (k = 1 + pick(g, 4); k; k--)
		b_simple(g);
	if (pick(g, 2)) { /* if / else */
		ja = here(g);
		emit(g, GBPF_OP_JA, 0, 0, 0, 0);
		patch_off(g, j, here(g));
		for (k = 1 + pick(g, 3); k; k--)
			b_simple(g);
		patch_off(g, ja, here(g));
	} else {
		patch_off(g, j, here(g));
	}
}

static void b_loop(struct gen *g)
{
	int32_t n = 1 + (int32_t)pick(g, 8);
	size_t start;
	uint32_t k;

	emit(g, GBPF_ALU64 | GBPF_MOV | GBPF_K, 4, 0, 0, 0);
	start = here(g);
	for (k = 1 + pick(g, 3); k; k--)
		b_simple(g);
	emit(g, GBPF_ALU64 | GBPF_ADD | GBPF_K, 4, 0, 0, 1);
	switch (pick(g, 3)) {
	case 0:
		emit(g, GBPF_JMP | GBPF_JLT | GBPF_K, 4, 0, (int16_t)(start - here(g) - 1), n);
		break;
	case 1:
		emit(g, GBPF_JMP32 | GBPF_JNE | GBPF_K, 4, 0, (int16_t)(start - here(g) - 1), n);
		break;
	default:
		emit(g, GBPF_JMP | GBPF_JSLT | GBPF_K, 4, 0, (int16_t)(start - here(g) - 1), n);
	}
}

/*
 * The key at KEY_OFF: reg & (DT_KEY_SPAN - 1), or half the time a register
 * clamped to a constant below DT_KEY_SPAN the ways clang clamps a histogram's
 * slot (`if (k >= K) k = K`): on a zero-extended copy of the register it then
 * stores, or with a 32-bit compare. A backend that follows value bounds
 * drops an array lookup's own check where the constant is below the array's
 * entries (plugins/cuda/ptx_range.h) and must keep it where it is not.
 */
static void set_key(struct gen *g)
{
	int32_t k = (int32_t)pick(g, DT_KEY_SPAN);

	switch (pick(g, 4)) {
	case 0: /* r3 = reg; r1 = zext(r3); r2 = k; if (r2 > r1) goto +1; r3 = k */
		emit(g, GBPF_ALU64 | GBPF_MOV | GBPF_X, 3, reg(g), 0, 0);
		emit(g, GBPF_ALU64 | GBPF_MOV | GBPF_X, 1, 3, 0, 0);
		emit(g, GBPF_ALU64 | GBPF_LSH | GBPF_K, 1, 0, 0, 32);
		emit(g, GBPF_ALU64 | GBPF_RSH | GBPF_K, 1, 0, 0, 32);
		emit(g, GBPF_ALU64 | GBPF_MOV | GBPF_K, 2, 0, 0, k);
		emit(g, GBPF_JMP | GBPF_JGT | GBPF_X, 2, 1, 1, 0);
		emit(g, GBPF_ALU64 | GBPF_MOV | GBPF_K, 3, 0, 0, k);
		emit(g, GBPF_STX | GBPF_MEM | GBPF_W, 10, 3, KEY_OFF, 0);
		break;
	case 1: /* w3 = reg; if (w3 < k) goto +1; w3 = k */
		emit(g, GBPF_ALU | GBPF_MOV | GBPF_X, 3, reg(g), 0, 0);
		emit(g, GBPF_JMP32 | GBPF_JLT | GBPF_K, 3, 0, 1, k);
		emit(g, GBPF_ALU | GBPF_MOV | GBPF_K, 3, 0, 0, k);
		emit(g, GBPF_STX | GBPF_MEM | GBPF_W, 10, 3, KEY_OFF, 0);
		break;
	default:
		emit(g, GBPF_ALU64 | GBPF_MOV | GBPF_X, 1, reg(g), 0, 0);
		emit(g, GBPF_ALU64 | GBPF_AND | GBPF_K, 1, 0, 0, DT_KEY_SPAN - 1);
		emit(g, GBPF_STX | GBPF_MEM | GBPF_W, 10, 1, KEY_OFF, 0);
	}
}

static void call_setup(struct gen *g, uint32_t map)
{
	emit_lddw(g, 1, GBPF_PSEUDO_MAP_IDX, map);
	emit(g, GBPF_ALU64 | GBPF_MOV | GBPF_X, 2, 10, 0, 0);
	emit(g, GBPF_ALU64 | GBPF_ADD | GBPF_K, 2, 0, 0, KEY_OFF);
}

static void b_map(struct gen *g)
{
	uint32_t map = pick(g, 2);

	set_key(g);
	switch (pick(g, 4)) {
	case 0: case 1: /* update: its return value (0, -E2BIG, -EEXIST, -ENOENT) is folded */
		emit(g, GBPF_STX | GBPF_MEM | GBPF_DW, 10, reg(g), VAL_OFF, 0);
		call_setup(g, map);
		emit(g, GBPF_ALU64 | GBPF_MOV | GBPF_X, 3, 10, 0, 0);
		emit(g, GBPF_ALU64 | GBPF_ADD | GBPF_K, 3, 0, 0, VAL_OFF);
		emit(g, GBPF_ALU64 | GBPF_MOV | GBPF_K, 4, 0, 0, (int32_t)pick(g, 3));
		emit(g, GBPF_OP_CALL, 0, 0, 0, GBPF_HELPER_MAP_UPDATE_ELEM);
		emit(g, GBPF_ALU64 | GBPF_ADD | GBPF_X, 7, 0, 0, 0);
		break;
	case 2: /* delete (-EINVAL on the array, -ENOENT when absent) */
		call_setup(g, map);
		emit(g, GBPF_OP_CALL, 0, 0, 0, GBPF_HELPER_MAP_DELETE_ELEM);
		emit(g, GBPF_ALU64 | GBPF_XOR | GBPF_X, 8, 0, 0, 0);
		break;
	default: { /* lookup, then read or write the value */
		size_t j;
		uint8_t r = reg(g);

		call_setup(g, map);
		emit(g, GBPF_OP_CALL, 0, 0, 0, GBPF_HELPER_MAP_LOOKUP_ELEM);
		j = here(g);
		emit(g, GBPF_JMP | GBPF_JEQ | GBPF_K, 0, 0, 0, 0);
		switch (pick(g, 8)) {
		case 0:
			emit(g, GBPF_LDX | GBPF_MEM | GBPF_DW, 1, 0, 0, 0);
			emit(g, GBPF_ALU64 | GBPF_XOR | GBPF_X, r, 1, 0, 0);
			break;
		case 1:
			emit(g, GBPF_STX | GBPF_MEM | GBPF_DW, 0, r, 0, 0);
			break;
		case 2:
			emit(g, GBPF_STX | GBPF_ATOMIC | GBPF_DW, 0, r, 0, GBPF_ATOMIC_ADD);
			break;
		case 3:
			emit(g, GBPF_STX | GBPF_ATOMIC | GBPF_DW, 0, r, 0,
			     pick(g, 2) ? GBPF_ATOMIC_XCHG : (GBPF_ATOMIC_XOR | GBPF_FETCH));
			break;
		case 4:
			emit(g, GBPF_LDX | GBPF_MEMSX | GBPF_W, 1, 0, 4, 0);
			emit(g, GBPF_ALU64 | GBPF_ADD | GBPF_X, r, 1, 0, 0);
			break;
		case 5: { /* 32-bit atomics on either half of the value */
			static const int32_t ops[] = {GBPF_ATOMIC_ADD, GBPF_ATOMIC_OR, GBPF_ATOMIC_AND,
						      GBPF_ATOMIC_XOR};

			emit(g, GBPF_STX | GBPF_ATOMIC | GBPF_W, 0, r, (int16_t)(4 * pick(g, 2)),
			     ops[pick(g, 4)] | (pick(g, 2) ? GBPF_FETCH : 0));
			break;
		}
		case 6: { /* compare-and-exchange: r0 is the expected value, so the pointer moves to r1 */
			uint8_t sz = pick(g, 2) ? GBPF_DW : GBPF_W;
			int16_t off = sz == GBPF_W ? (int16_t)(4 * pick(g, 2)) : 0;

			emit(g, GBPF_ALU64 | GBPF_MOV | GBPF_X, 1, 0, 0, 0);
			if (pick(g, 2)) /* the current value: the exchange happens */
				emit(g, GBPF_LDX | GBPF_MEM | sz, 0, 1, off, 0);
			else
				emit(g, GBPF_ALU64 | GBPF_MOV | GBPF_X, 0, reg(g), 0, 0);
			emit(g, GBPF_STX | GBPF_ATOMIC | sz, 1, r, off, GBPF_ATOMIC_CMPXCHG);
			emit(g, GBPF_ALU64 | GBPF_XOR | GBPF_X, 7, 0, 0, 0);
			break;
		}
		default:
			emit(g, GBPF_STX | GBPF_MEM | GBPF_W, 0, r, 4, 0);
		}
		patch_off(g, j, here(g));
	}
	}
}

/* r = log2(a register) ^ r: gbpf's helper 602 on values across the whole range (0, 1, powers, -1). */
static void b_log2(struct gen *g)
{
	uint8_t r = reg(g);

	if (pick(g, 2))
		emit(g, GBPF_ALU64 | GBPF_MOV | GBPF_X, 1, reg(g), 0, 0);
	else
		emit_lddw(g, 1, 0, (uint64_t)(int64_t)some_imm(g) << pick(g, 33));
	emit(g, GBPF_OP_CALL, 0, 0, 0, GBPF_HELPER_LOG2);
	emit(g, GBPF_ALU64 | GBPF_XOR | GBPF_X, r, 0, 0, 0);
}

static void b_call(struct gen *g);

static void block(struct gen *g)
{
	switch (pick(g, 12)) {
	case 0: case 1: case 2: b_alu(g); break;
	case 3: b_stack(g); break;
	case 4: b_atomic(g); break;
	case 5: b_branch(g); break;
	case 6: b_loop(g); break;
	case 7: /* no calls from a subprogram: a map block there */
		if (g->in_sub)
			b_map(g);
		else
			b_call(g);
		break;
	case 8: b_log2(g); break;
	default: b_map(g);
	}
}

/*
 * A subprogram's body: a frame of its own (r6-r9 from the arguments and
 * constants, the stack zeroed), a few blocks (map calls included, no
 * further calls), then everything folded into r0.
 */
static void callee(struct gen *g)
{
	uint32_t k;

	emit(g, GBPF_ALU64 | GBPF_MOV | GBPF_X, 6, 1, 0, 0);
	emit(g, GBPF_ALU64 | GBPF_MOV | GBPF_X, 7, 2, 0, 0);
	emit(g, GBPF_ALU64 | GBPF_MOV | GBPF_X, 8, 3, 0, 0);
	if (pick(g, 2))
		emit(g, GBPF_ALU64 | GBPF_MOV | GBPF_X, 9, 5, 0, 0);
	else
		emit(g, GBPF_ALU64 | GBPF_MOV | GBPF_K, 9, 0, 0, some_imm(g));
	for (int16_t off = -8; off >= VAL_OFF; off -= 8)
		emit(g, GBPF_ST | GBPF_MEM | GBPF_DW, 10, 0, off, 0);
	for (k = 1 + pick(g, 3); k; k--)
		block(g);
	emit(g, GBPF_ALU64 | GBPF_XOR | GBPF_X, 6, 7, 0, 0);
	emit(g, GBPF_ALU64 | GBPF_MUL | GBPF_K, 6, 0, 0, 0x1000193);
	emit(g, GBPF_ALU64 | GBPF_ADD | GBPF_X, 6, 8, 0, 0);
	emit(g, GBPF_ALU64 | GBPF_XOR | GBPF_X, 6, 9, 0, 0);
	emit(g, GBPF_LDX | GBPF_MEM | GBPF_DW, 1, 10, (int16_t)(SLOT_LOW + 8 * (int16_t)pick(g, 8)), 0);
	emit(g, GBPF_ALU64 | GBPF_ADD | GBPF_X, 6, 1, 0, 0);
	emit(g, GBPF_ALU64 | GBPF_MOV | GBPF_X, 0, 6, 0, 0);
	emit(g, GBPF_OP_EXIT, 0, 0, 0, 0);
}

/*
 * A call of a new subprogram (bpf-to-bpf) with r1-r5 set from the scalars
 * and constants; its r0 is folded in. The caller's r6-r9 and stack must
 * come back untouched whatever the callee did to its own. The body is
 * generated right after the call and moved aside; dt_generate appends it
 * after the main program and points the call at it. When the subprograms'
 * room is spent (counted whether or not blocks are left out, so that
 * leaving blocks out keeps the others' random stream), a map block instead.
 */
static void b_call(struct gen *g)
{
	size_t call_pc, body, start;
	uint8_t fold = reg(g);

	if (g->calls_planned >= SUB_MAX_CALLS || g->sub_planned + 100 > SUB_MAX_INSNS) {
		b_map(g);
		return;
	}
	g->calls_planned++;
	emit(g, GBPF_ALU64 | GBPF_MOV | GBPF_X, 1, reg(g), 0, 0);
	emit(g, GBPF_ALU64 | GBPF_MOV | GBPF_X, 2, reg(g), 0, 0);
	emit(g, GBPF_ALU64 | GBPF_MOV | GBPF_X, 3, reg(g), 0, 0);
	emit(g, GBPF_ALU64 | GBPF_MOV | GBPF_K, 4, 0, 0, some_imm(g));
	emit_lddw(g, 5, 0, some_u64(g));
	call_pc = here(g);
	emit(g, GBPF_OP_CALL, 0, GBPF_CALL_LOCAL, 0, 0);
	emit(g, GBPF_ALU64 | (pick(g, 2) ? GBPF_XOR : GBPF_ADD) | GBPF_X, fold, 0, 0, 0);
	body = here(g);
	start = g->planned;
	g->in_sub = 1;
	callee(g);
	g->in_sub = 0;
	g->sub_planned += g->planned - start;
	if (g->muted)
		return;
	if (here(g) - body > SUB_MAX_INSNS - g->sub_n) {
		/* cannot happen with the planned room; a call without a callee would not verify */
		g->p->n = call_pc;
		return;
	}
	memcpy(&g->sub[g->sub_n], &g->p->insns[body], (here(g) - body) * sizeof(g->sub[0]));
	g->calls[g->n_calls].pc = call_pc;
	g->calls[g->n_calls].body = g->sub_n;
	g->n_calls++;
	g->sub_n += here(g) - body;
	g->p->n = body;
}

static void prologue(struct gen *g)
{
	for (uint8_t r = 6; r <= 9; r++) {
		if (pick(g, 2))
			emit_lddw(g, r, 0, some_u64(g));
		else
			emit(g, GBPF_ALU64 | GBPF_MOV | GBPF_K, r, 0, 0, some_imm(g));
	}
	for (int16_t off = -8; off >= VAL_OFF; off -= 8)
		emit(g, GBPF_ST | GBPF_MEM | GBPF_DW, 10, 0, off, 0);
}

/* Everything observable folds into r0: registers, stack, array values. */
static void epilogue(struct gen *g)
{
	size_t loop, j;

	emit(g, GBPF_ALU64 | GBPF_XOR | GBPF_X, 6, 7, 0, 0);
	emit(g, GBPF_ALU64 | GBPF_MUL | GBPF_K, 6, 0, 0, 0x1000193);
	emit(g, GBPF_ALU64 | GBPF_ADD | GBPF_X, 6, 8, 0, 0);
	emit(g, GBPF_ALU64 | GBPF_XOR | GBPF_X, 6, 9, 0, 0);
	for (int16_t off = -8; off >= VAL_OFF; off -= 8) {
		emit(g, GBPF_LDX | GBPF_MEM | GBPF_DW, 1, 10, off, 0);
		emit(g, GBPF_ALU64 | GBPF_MUL | GBPF_K, 6, 0, 0, 0x1000193);
		emit(g, GBPF_ALU64 | GBPF_XOR | GBPF_X, 6, 1, 0, 0);
	}
	emit(g, GBPF_ALU64 | GBPF_MOV | GBPF_K, 9, 0, 0, 0);
	loop = here(g);
	emit(g, GBPF_STX | GBPF_MEM | GBPF_W, 10, 9, KEY_OFF, 0);
	call_setup(g, DT_MAP_ARRAY);
	emit(g, GBPF_OP_CALL, 0, 0, 0, GBPF_HELPER_MAP_LOOKUP_ELEM);
	j = here(g);
	emit(g, GBPF_JMP | GBPF_JEQ | GBPF_K, 0, 0, 0, 0);
	emit(g, GBPF_LDX | GBPF_MEM | GBPF_DW, 1, 0, 0, 0);
	emit(g, GBPF_ALU64 | GBPF_MUL | GBPF_K, 6, 0, 0, 31);
	emit(g, GBPF_ALU64 | GBPF_ADD | GBPF_X, 6, 1, 0, 0);
	patch_off(g, j, here(g));
	emit(g, GBPF_ALU64 | GBPF_ADD | GBPF_K, 9, 0, 0, 1);
	emit(g, GBPF_JMP | GBPF_JLT | GBPF_K, 9, 0, (int16_t)(loop - here(g) - 1), DT_ARRAY_ENTRIES);
	emit(g, GBPF_ALU64 | GBPF_MOV | GBPF_X, 0, 6, 0, 0);
	emit(g, GBPF_OP_EXIT, 0, 0, 0, 0);
}

void dt_generate(struct dt_prog *p, uint64_t seed, uint64_t skip_mask)
{
	struct gen g = {.s = seed * 0x9e3779b97f4a7c15ULL + 0x632be59bd9b4e019ULL, .p = p};
	unsigned b, blocks;

	memset(p, 0, sizeof(*p));
	p->skip_mask = skip_mask;
	rnd(&g);
	prologue(&g);
	blocks = 4 + pick(&g, DT_MAX_BLOCKS - 4);
	for (b = 0; b < blocks && p->n < DT_MAX_INSNS - 256 - SUB_MAX_INSNS; b++) {
		g.muted = (int)((skip_mask >> b) & 1);
		block(&g);
	}
	g.muted = 0;
	p->blocks = b;
	epilogue(&g);
	/* the subprograms after the main program's exit, each call pointed at its own */
	p->main_n = p->n;
	memcpy(&p->insns[p->n], g.sub, g.sub_n * sizeof(g.sub[0]));
	for (unsigned c = 0; c < g.n_calls; c++)
		p->insns[g.calls[c].pc].imm = (int32_t)(p->n + g.calls[c].body - g.calls[c].pc - 1);
	p->n += g.sub_n;
}
