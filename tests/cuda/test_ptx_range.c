// SPDX-License-Identifier: MIT
/*
 * The PTX emitter's value bounds (plugins/cuda/ptx_range.h) decide whether an
 * inlined array lookup checks its key, so a bound that does not hold is an
 * access out of the map on the GPU. Here:
 *  - clang's clamp of a histogram slot, and the ways the same code must not
 *    give a bound (the copy's source written again, a signed compare, the
 *    other edge, a call, a wide constant, a meet with an unbounded path);
 *  - random paths of ALU instructions and conditional jumps run on concrete
 *    values beside the facts: after every instruction of every path each
 *    register's value must lie within what is known of it. (The joins only
 *    weaken facts: ptx_range_meet is checked on its own.)
 * test_ptx_maps checks what the emitter makes of the facts (a lookup without
 * its check, a 32-bit compare); test_inline_run runs such a lookup on a GPU.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "plugins/cuda/ptx_range.h"
#include "tests/tap.h"
#include "tests/xorshift.h"

#define INSN(c, d, s, o, i) ((struct gbpf_insn){.code = (c), .dst = (d), .src = (s), .off = (o), .imm = (i)})
#define ALU64_K(op, d, i) INSN(GBPF_ALU64 | GBPF_K | (op), d, 0, 0, i)
#define ALU64_X(op, d, s) INSN(GBPF_ALU64 | GBPF_X | (op), d, s, 0, 0)
#define ALU32_X(op, d, s) INSN(GBPF_ALU | GBPF_X | (op), d, s, 0, 0)
#define JMP_X(op, d, s) INSN(GBPF_JMP | GBPF_X | (op), d, s, 0, 0)
#define JMP_K(op, d, i) INSN(GBPF_JMP | GBPF_K | (op), d, 0, 0, i)

/* The register facts of a straight path, with the constants the emitter tracks beside them. */
struct path {
	struct ptx_range r[GBPF_REG_COUNT];
	uint8_t imm_known[GBPF_REG_COUNT];
	uint64_t imm_val[GBPF_REG_COUNT];
};

static void path_start(struct path *p)
{
	ptx_range_forget(p->r, GBPF_REG_COUNT);
	memset(p->imm_known, 0, sizeof(p->imm_known));
}

/* An instruction that is not a jump: facts and constants (a move of an immediate, as imm_track_update). */
static void path_insn(struct path *p, const struct gbpf_insn *in)
{
	uint8_t cls = GBPF_CLASS(in->code);

	ptx_range_update(p->r, in);
	if (in->code == GBPF_OP_CALL) {
		memset(p->imm_known, 0, 6);
		return;
	}
	if ((cls != GBPF_ALU && cls != GBPF_ALU64 && cls != GBPF_LDX) || in->dst >= 10)
		return;
	p->imm_known[in->dst] = 0;
	if ((cls == GBPF_ALU || cls == GBPF_ALU64) && GBPF_OP(in->code) == GBPF_MOV && GBPF_SRC(in->code) == GBPF_K) {
		p->imm_known[in->dst] = 1;
		p->imm_val[in->dst] = cls == GBPF_ALU64 ? (uint64_t)(int64_t)in->imm : (uint32_t)in->imm;
	}
}

/*
 * clang -O2 for `if (slot >= 48) slot = 47;` on a 32-bit slot in r0 that it
 * then stores as a key: r1 = r0; r1 <<= 32; r1 >>= 32; r2 = 47;
 * if r2 > r1 goto L (taken: the slot is below 47) ; r0 = 47 (falls through).
 * Returns r0's low bound at L, the meet of both edges.
 */
static uint32_t clamp_bound(const struct gbpf_insn *between, size_t n_between, struct gbpf_insn cmp)
{
	struct gbpf_insn head[] = {
		ALU64_X(GBPF_MOV, 1, 0), ALU64_K(GBPF_LSH, 1, 32), ALU64_K(GBPF_RSH, 1, 32), ALU64_K(GBPF_MOV, 2, 47),
	};
	struct gbpf_insn clamp = ALU64_K(GBPF_MOV, 0, 47);
	struct path taken, fall;

	path_start(&taken);
	for (size_t i = 0; i < sizeof(head) / sizeof(head[0]); i++)
		path_insn(&taken, &head[i]);
	for (size_t i = 0; i < n_between; i++)
		path_insn(&taken, &between[i]);
	fall = taken;
	ptx_range_branch(taken.r, &cmp, 1, taken.imm_known, taken.imm_val);
	ptx_range_branch(fall.r, &cmp, 0, fall.imm_known, fall.imm_val);
	path_insn(&fall, &clamp);
	ptx_range_meet(taken.r, fall.r, GBPF_REG_COUNT);
	return taken.r[0].lo_max;
}

static void test_clang_clamp(void)
{
	struct gbpf_insn gt = JMP_X(GBPF_JGT, 2, 1), sgt = JMP_X(GBPF_JSGT, 2, 1), lt = JMP_X(GBPF_JLT, 2, 1);
	struct gbpf_insn r0_written[] = {ALU64_K(GBPF_ADD, 0, 1)};
	struct gbpf_insn r1_written[] = {ALU64_K(GBPF_ADD, 1, 1)};
	struct gbpf_insn call[] = {INSN(GBPF_OP_CALL, 0, 0, 0, 1)};
	struct gbpf_insn w_copy[] = {ALU32_X(GBPF_MOV, 1, 0)};
	struct ptx_range r[GBPF_REG_COUNT];
	struct gbpf_insn in;

	tap_ok(clamp_bound(NULL, 0, gt) == 47, "clang's clamp: the slot stored from r0 is at most 47 at the join");
	tap_ok(clamp_bound(w_copy, 1, gt) == 47, "the same through a 32-bit copy (w1 = w0)");
	tap_ok(clamp_bound(r0_written, 1, gt) == UINT32_MAX,
	       "r0 written after the copy was taken: the copy's bound is not r0's");
	tap_ok(clamp_bound(r1_written, 1, gt) == UINT32_MAX, "the copy itself written again: no bound for r0");
	tap_ok(clamp_bound(call, 1, gt) == UINT32_MAX, "a call between: r0 and the copy are the call's");
	tap_ok(clamp_bound(NULL, 0, sgt) == UINT32_MAX, "a signed compare gives no bound");
	tap_ok(clamp_bound(NULL, 0, lt) == UINT32_MAX, "47 < r1 taken: no upper bound, so none at the join");

	ptx_range_forget(r, GBPF_REG_COUNT);
	in = JMP_K(GBPF_JGT, 3, 100);
	ptx_range_branch(r, &in, 0, (uint8_t[GBPF_REG_COUNT]){0}, (uint64_t[GBPF_REG_COUNT]){0});
	tap_ok(r[3].lo_max == 100 && r[3].hi_zero, "if r3 > 100 falls through: r3 <= 100 in all 64 bits");
	in = INSN(GBPF_JMP32 | GBPF_K | GBPF_JLT, 4, 0, 0, 9);
	ptx_range_branch(r, &in, 1, (uint8_t[GBPF_REG_COUNT]){0}, (uint64_t[GBPF_REG_COUNT]){0});
	tap_ok(r[4].lo_max == 8 && !r[4].hi_zero, "if w4 < 9 taken: the low half <= 8, the high half unknown");
	in = JMP_K(GBPF_JLT, 5, -1);
	ptx_range_branch(r, &in, 1, (uint8_t[GBPF_REG_COUNT]){0}, (uint64_t[GBPF_REG_COUNT]){0});
	tap_ok(r[5].lo_max == UINT32_MAX && !r[5].hi_zero, "r5 < 0xffff...ff (a sign-extended -1) bounds nothing");
	in = JMP_K(GBPF_JLT, 5, 0);
	ptx_range_branch(r, &in, 1, (uint8_t[GBPF_REG_COUNT]){0}, (uint64_t[GBPF_REG_COUNT]){0});
	tap_ok(r[5].lo_max == UINT32_MAX, "r5 < 0 (never taken) is not turned into a bound");
	in = JMP_K(GBPF_JNE, 6, 5);
	ptx_range_branch(r, &in, 1, (uint8_t[GBPF_REG_COUNT]){0}, (uint64_t[GBPF_REG_COUNT]){0});
	tap_ok(r[6].lo_max == UINT32_MAX, "r6 != 5 taken: no bound");
	ptx_range_branch(r, &in, 0, (uint8_t[GBPF_REG_COUNT]){0}, (uint64_t[GBPF_REG_COUNT]){0});
	tap_ok(r[6].lo_max == 5 && r[6].hi_zero, "r6 != 5 falls through: r6 is 5");
}

static void test_meet(void)
{
	struct ptx_range a[2], b[2];

	ptx_range_forget(a, 2);
	ptx_range_forget(b, 2);
	a[0] = (struct ptx_range){.lo_max = 10, .hi_zero = 1, .rel = PTX_REL_ZEXT, .rel_src = 1};
	b[0] = (struct ptx_range){.lo_max = 30, .hi_zero = 0, .rel = PTX_REL_ZEXT, .rel_src = 1};
	a[1] = (struct ptx_range){.lo_max = 7, .hi_zero = 1, .rel = PTX_REL_COPY, .rel_src = 0};
	b[1] = (struct ptx_range){.lo_max = 7, .hi_zero = 1, .rel = PTX_REL_ZEXT, .rel_src = 0};
	ptx_range_meet(a, b, 2);
	tap_ok(a[0].lo_max == 30 && !a[0].hi_zero && a[0].rel == PTX_REL_ZEXT && a[0].rel_src == 1,
	       "meet: the larger bound, high half 0 only where both say so, the same copy kept");
	tap_ok(a[1].lo_max == 7 && a[1].hi_zero && a[1].rel == PTX_REL_NONE, "meet: copies of different kinds dropped");
}

/* ---- random paths on concrete values ------------------------------------- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	return test_xorshift64(&rng_state);
}

/* Values near the bounds that matter: small, around 2^31 and 2^32, anything. */
static uint64_t rnd_value(void)
{
	switch (rnd() % 6) {
	case 0: return rnd() % 64;
	case 1: return 0x7ffffff0ull + rnd() % 32;
	case 2: return 0xfffffff0ull + rnd() % 32;
	case 3: return (rnd() % 64) << 32 | (rnd() % 64);
	case 4: return (uint64_t)-(int64_t)(rnd() % 64);
	default: return rnd();
	}
}

static int32_t rnd_imm(void)
{
	static const int32_t k[] = {0, 1, 2, 7, 31, 32, 33, 47, 48, 63, 64, 255, 0x7fffffff, -1, -48, INT32_MIN};

	return rnd() % 4 ? k[rnd() % (sizeof(k) / sizeof(k[0]))] : (int32_t)rnd();
}

/* BPF semantics of the ALU subset the generator emits (unsigned ops; x % 0 is x). */
static uint64_t alu(uint8_t op, uint64_t a, uint64_t b, int is64)
{
	uint64_t v;

	if (!is64) {
		a = (uint32_t)a;
		b = (uint32_t)b;
	}
	switch (op) {
	case GBPF_MOV: v = b; break;
	case GBPF_ADD: v = a + b; break;
	case GBPF_SUB: v = a - b; break;
	case GBPF_MUL: v = a * b; break;
	case GBPF_OR: v = a | b; break;
	case GBPF_AND: v = a & b; break;
	case GBPF_XOR: v = a ^ b; break;
	case GBPF_LSH: v = a << (b & (is64 ? 63 : 31)); break;
	case GBPF_RSH: v = a >> (b & (is64 ? 63 : 31)); break;
	case GBPF_MOD: v = b ? a % b : a; break;
	default: v = 0; break;
	}
	return is64 ? v : (uint32_t)v;
}

static int jump_taken(uint8_t op, uint64_t a, uint64_t b, int is64)
{
	if (!is64) {
		a = (uint32_t)a;
		b = (uint32_t)b;
	}
	switch (op) {
	case GBPF_JEQ: return a == b;
	case GBPF_JNE: return a != b;
	case GBPF_JGT: return a > b;
	case GBPF_JGE: return a >= b;
	case GBPF_JLT: return a < b;
	case GBPF_JLE: return a <= b;
	case GBPF_JSET: return (a & b) != 0;
	case GBPF_JSGT: return is64 ? (int64_t)a > (int64_t)b : (int32_t)a > (int32_t)b;
	default: return (is64 ? (int64_t)a : (int32_t)a) < (is64 ? (int64_t)b : (int32_t)b); /* JSLT */
	}
}

/* The first register whose value lies outside its facts, or -1. */
static int path_violation(const struct path *p, const uint64_t *v)
{
	for (int r = 0; r < 10; r++)
		if ((uint32_t)v[r] > p->r[r].lo_max || (p->r[r].hi_zero && v[r] >> 32) ||
		    (p->imm_known[r] && p->imm_val[r] != v[r]))
			return r;
	return -1;
}

static void test_random_paths(void)
{
	static const uint8_t alu_ops[] = {GBPF_MOV, GBPF_MOV, GBPF_MOV, GBPF_ADD, GBPF_SUB, GBPF_MUL, GBPF_OR,
					  GBPF_AND, GBPF_AND, GBPF_XOR, GBPF_LSH, GBPF_RSH, GBPF_RSH, GBPF_MOD};
	static const uint8_t jmp_ops[] = {GBPF_JEQ, GBPF_JNE, GBPF_JGT, GBPF_JGE, GBPF_JLT,
					  GBPF_JLE, GBPF_JSET, GBPF_JSGT, GBPF_JSLT};
	unsigned long paths = 200000, steps = 0, bounded = 0, bad = 0;
	char first[200] = "";

	for (unsigned long t = 0; t < paths; t++) {
		uint64_t v[GBPF_REG_COUNT];
		struct path p;

		path_start(&p);
		for (int r = 0; r < GBPF_REG_COUNT; r++)
			v[r] = rnd_value();
		for (int step = 0; step < 16; step++, steps++) {
			int is64 = rnd() % 2, x = rnd() % 2, viol;
			unsigned d = rnd() % 4, s = rnd() % 4;
			struct gbpf_insn in;

			if (rnd() % 3) {
				uint8_t op = alu_ops[rnd() % sizeof(alu_ops)];

				/* the copy and shift pairs clang makes, often */
				if (op == GBPF_LSH || op == GBPF_RSH)
					x = 0, is64 = rnd() % 4 != 0;
				in = INSN((is64 ? GBPF_ALU64 : GBPF_ALU) | (x ? GBPF_X : GBPF_K) | op, d, x ? s : 0, 0,
					  op == GBPF_LSH || op == GBPF_RSH ? (rnd() % 2 ? 32 : (int32_t)(rnd() % 64))
									  : rnd_imm());
				v[d] = alu(op, v[d], x ? v[s] : (uint64_t)(int64_t)in.imm, is64);
				path_insn(&p, &in);
			} else {
				uint8_t op = jmp_ops[rnd() % sizeof(jmp_ops)];
				int taken;

				in = INSN((is64 ? GBPF_JMP : GBPF_JMP32) | (x ? GBPF_X : GBPF_K) | op, d, x ? s : 0, 0,
					  rnd_imm());
				taken = jump_taken(op, v[d], x ? v[s] : (uint64_t)(int64_t)in.imm, is64);
				ptx_range_branch(p.r, &in, taken, p.imm_known, p.imm_val);
			}
			viol = path_violation(&p, v);
			if (viol >= 0 && !bad++)
				snprintf(first, sizeof(first),
					 "path %lu step %d (code 0x%02x r%u r%u imm %d): "
					 "r%d = 0x%llx, lo_max 0x%x hi_zero %u",
					 t, step, in.code, in.dst, in.src, in.imm, viol, (unsigned long long)v[viol],
					 p.r[viol].lo_max, p.r[viol].hi_zero);
			if (viol >= 0)
				break;
			for (int r = 0; r < 4; r++)
				bounded += p.r[r].lo_max < 0xffffu;
		}
	}
	tap_diag("%lu instructions on %lu paths, %lu register facts below 0xffff", steps, paths, bounded);
	tap_ok(!bad, "every register within its facts after every instruction of every random path%s%s",
	       bad ? ": first " : "", first);
	tap_ok(bounded > steps / 4, "the random paths give bounds often enough to test them (%lu)", bounded);
}

int main(void)
{
	printf("TAP version 13\n");
	test_clang_clamp();
	test_meet();
	test_random_paths();
	return tap_done();
}
