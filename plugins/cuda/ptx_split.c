/* SPDX-License-Identifier: MIT */
/*
 * Cutting a memory probe into a counter and the rest (ptx_split.h).
 *
 * Why the cut keeps the program's meaning: the head runs first on every
 * path and touches only its counter's map, which neither the rest nor any
 * other program names, so when the head's adds happen (at the site or
 * summed at the thread's exit) nobody can tell. The rest starts from what
 * the program held at the cut, as far as the rest can see: the context in
 * the registers it reads, and stack bytes it wrote itself before reading
 * them. Its runs are the program's runs from the cut on, which the
 * verifier already followed.
 *
 * The rest is checked by following it with an abstract state (what each
 * register holds: nothing known from the head, the context, the frame
 * pointer plus an offset, a map, another value; which stack bytes were
 * written on every path) to its fixed point; anything it cannot tell
 * (a stack pointer of unknown offset, one stored to memory or passed to a
 * helper that is not a map operation, a call of another program) gives
 * up the cut.
 */
#include "ptx_split.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <gbpf/helper_ids.h>

#define SPLIT_MAX_INSNS 4096 /* as ptx_counter_find */
#define SPLIT_MAX_TRIES 64   /* counter analyses one program may cost */
#define SPLIT_MAX_SWEEPS 64

static bool is_jump(const struct gbpf_insn *in)
{
	uint8_t cls = GBPF_CLASS(in->code), op = GBPF_OP(in->code);

	return (cls == GBPF_JMP || cls == GBPF_JMP32) && op != GBPF_CALL && op != GBPF_EXIT;
}

static long jump_target(size_t pc, const struct gbpf_insn *in)
{
	return (long)pc + 1 + (in->code == GBPF_OP_GOTOL ? in->imm : in->off);
}

static bool is_wide(const struct gbpf_insn *in)
{
	return in->code == GBPF_OP_LDDW;
}

/*
 * ok[s]: s may be the cut as far as the control flow goes: no jump crosses
 * it, no exit comes before it, it is not a wide load's second half; and a
 * counter can end there: a map lookup and an atomic come before it (the
 * counter analysis is not run where it cannot succeed).
 */
static uint8_t *cut_points(const struct gbpf_prog_desc *p)
{
	size_t n = p->insn_cnt;
	uint8_t *ok = calloc(n + 1, 1), *second = calloc(n + 1, 1);
	long *min_from = malloc((n + 1) * sizeof(*min_from)), max_to = -1;
	bool ended = false, looked_up = false, added = false;

	if (!ok || !second || !min_from) {
		free(ok);
		ok = NULL;
		goto out;
	}
	for (size_t pc = 0; pc + 1 < n; pc++)
		if (is_wide(&p->insns[pc]) && !second[pc])
			second[pc + 1] = 1;
	min_from[n] = (long)n;
	for (size_t pc = n; pc-- > 0;)
		min_from[pc] = !second[pc] && is_jump(&p->insns[pc]) && jump_target(pc, &p->insns[pc]) < min_from[pc + 1]
				       ? jump_target(pc, &p->insns[pc])
				       : min_from[pc + 1];
	for (size_t s = 1; s < n; s++) {
		const struct gbpf_insn *in = &p->insns[s - 1];

		if (!second[s - 1] && is_jump(in) && jump_target(s - 1, in) > max_to)
			max_to = jump_target(s - 1, in);
		ended |= !second[s - 1] && in->code == GBPF_OP_EXIT;
		looked_up |= in->code == GBPF_OP_CALL && in->imm == GBPF_HELPER_MAP_LOOKUP_ELEM;
		added |= GBPF_CLASS(in->code) == GBPF_STX && GBPF_MODE(in->code) == GBPF_ATOMIC;
		ok[s] = !second[s] && !ended && looked_up && added && max_to <= (long)s && min_from[s] >= (long)s;
	}
out:
	free(second);
	free(min_from);
	return ok;
}

/* Registers holding the context after @p in, given @p ctx before it. */
static uint16_t ctx_transfer(uint16_t ctx, const struct gbpf_insn *in)
{
	uint8_t cls = GBPF_CLASS(in->code);

	if (in->code == (GBPF_ALU64 | GBPF_MOV | GBPF_X) && !in->off) /* a plain move (off: movsx) */
		return (uint16_t)((ctx & ~(1u << in->dst)) | ((ctx >> in->src & 1u) << in->dst));
	if (cls == GBPF_ALU || cls == GBPF_ALU64 || cls == GBPF_LDX || is_wide(in))
		return (uint16_t)(ctx & ~(1u << in->dst));
	if (cls == GBPF_STX && GBPF_MODE(in->code) == GBPF_ATOMIC)
		return (uint16_t)(ctx & ~(1u << in->src) & ~1u); /* fetches into src, cmpxchg into r0 */
	if (in->code == GBPF_OP_CALL || in->code == GBPF_OP_CALLX)
		return (uint16_t)(ctx & ~0x3fu);
	return ctx;
}

/* The registers that hold the context at @p at on every path (the head's jumps all go forward). */
static int ctx_regs_at(const struct gbpf_prog_desc *p, uint32_t at, uint16_t *mask)
{
	uint16_t *in = calloc(at + 1, sizeof(*in));
	uint8_t *reach = calloc(at + 1, 1);

	if (!in || !reach) {
		free(in);
		free(reach);
		return -ENOMEM;
	}
	in[0] = 1u << 1;
	reach[0] = 1;
	for (uint32_t pc = 0; pc < at; pc++) {
		const struct gbpf_insn *in_pc = &p->insns[pc];
		uint32_t next = pc + (is_wide(in_pc) ? 2 : 1);
		uint16_t out;
		long to;

		if (!reach[pc])
			continue;
		out = ctx_transfer(in[pc], in_pc);
		if (next <= at && in_pc->code != GBPF_OP_JA && in_pc->code != GBPF_OP_GOTOL) {
			in[next] = reach[next] ? (uint16_t)(in[next] & out) : out;
			reach[next] = 1;
		}
		if (is_jump(in_pc) && (to = jump_target(pc, in_pc)) > (long)pc && to <= (long)at) {
			in[to] = reach[to] ? (uint16_t)(in[to] & out) : out;
			reach[to] = 1;
		}
	}
	*mask = reach[at] ? in[at] : 0;
	free(in);
	free(reach);
	return 0;
}

/* ---- the rest, followed from the cut ------------------------------------ */

enum skind { S_NONE, S_CTX, S_FP, S_MAP, S_VAL, S_BAD };

struct sreg {
	uint8_t k; /* S_NONE: what the head left (the rest may not read it); S_BAD: a stack pointer of unknown offset */
	int32_t off; /* S_FP: from the frame pointer; S_MAP: the map's index */
};

struct sstate {
	bool reached;
	struct sreg r[GBPF_REG_COUNT];
	uint64_t written[GBPF_STACK_SIZE / 64]; /* byte GBPF_STACK_SIZE + off, written on every path */
};

static struct sreg join_reg(struct sreg a, struct sreg b)
{
	if (a.k == b.k && a.off == b.off)
		return a;
	if (a.k == S_NONE || b.k == S_NONE)
		return (struct sreg){.k = S_NONE};
	if (a.k == S_FP || b.k == S_FP || a.k == S_BAD || b.k == S_BAD)
		return (struct sreg){.k = S_BAD};
	return (struct sreg){.k = S_VAL};
}

/* @p dst joined with @p src; whether @p dst changed. */
static bool join_into(struct sstate *dst, const struct sstate *src)
{
	struct sstate before = *dst;

	if (!dst->reached) {
		*dst = *src;
		return true;
	}
	for (unsigned r = 0; r < GBPF_REG_COUNT; r++)
		dst->r[r] = join_reg(dst->r[r], src->r[r]);
	for (unsigned w = 0; w < GBPF_STACK_SIZE / 64; w++)
		dst->written[w] &= src->written[w];
	return memcmp(&before, dst, sizeof(before)) != 0;
}

/* Stack bytes [off, off + size) relative to the frame pointer: in the frame? */
static bool frame_range(int64_t off, uint64_t size)
{
	return off >= -GBPF_STACK_SIZE && size <= GBPF_STACK_SIZE && off + (int64_t)size <= 0;
}

static bool stack_written(const struct sstate *st, int64_t off, uint64_t size)
{
	if (!frame_range(off, size))
		return false;
	for (int64_t b = GBPF_STACK_SIZE + off; b < GBPF_STACK_SIZE + off + (int64_t)size; b++)
		if (!(st->written[b / 64] >> (b % 64) & 1))
			return false;
	return true;
}

static bool stack_write(struct sstate *st, int64_t off, uint64_t size)
{
	if (!frame_range(off, size))
		return false;
	for (int64_t b = GBPF_STACK_SIZE + off; b < GBPF_STACK_SIZE + off + (int64_t)size; b++)
		st->written[b / 64] |= (uint64_t)1 << (b % 64);
	return true;
}

static unsigned access_size(uint8_t code)
{
	switch (GBPF_SIZE(code)) {
	case GBPF_B: return 1;
	case GBPF_H: return 2;
	case GBPF_W: return 4;
	default: return 8;
	}
}

/* Arguments a helper reads (r1..rN); 5 for one not listed. */
static unsigned helper_args(int32_t id)
{
	switch (id) {
	case GBPF_HELPER_KTIME_GET_NS:
	case GBPF_HELPER_KTIME_GET_BOOT_NS:
	case GBPF_HELPER_GET_PRANDOM_U32:
	case GBPF_HELPER_GET_SMP_PROCESSOR_ID:
	case GBPF_HELPER_GET_CURRENT_PID_TGID:
	case GBPF_HELPER_GPU_GLOBALTIMER:
	case GBPF_HELPER_GPU_MEMBAR:
	case GBPF_HELPER_GPU_EXIT:
	case GBPF_HELPER_GPU_SM_ID:
	case GBPF_HELPER_GPU_WARP_ID:
	case GBPF_HELPER_GPU_LANE_ID:
	case GBPF_HELPER_GPU_GLOBAL_THREAD_ID:
	case GBPF_HELPER_GPU_THREAD_COUNT:
		return 0;
	case GBPF_HELPER_LOG2:
	case GBPF_HELPER_GPU_PUTS:
		return 1;
	case GBPF_HELPER_MAP_LOOKUP_ELEM:
	case GBPF_HELPER_MAP_DELETE_ELEM:
	case GBPF_HELPER_RINGBUF_SUBMIT:
	case GBPF_HELPER_RINGBUF_DISCARD:
		return 2;
	case GBPF_HELPER_GPU_BLOCK_IDX:
	case GBPF_HELPER_GPU_BLOCK_DIM:
	case GBPF_HELPER_GPU_THREAD_IDX:
	case GBPF_HELPER_GPU_GRID_DIM:
	case GBPF_HELPER_RINGBUF_RESERVE:
		return 3;
	case GBPF_HELPER_MAP_UPDATE_ELEM:
	case GBPF_HELPER_RINGBUF_OUTPUT:
		return 4;
	default:
		return 5;
	}
}

/* A helper call on @p st: the stack bytes its pointer arguments read must be written. */
static bool split_call(const struct gbpf_prog_desc *p, struct sstate *st, int32_t id)
{
	unsigned nargs = helper_args(id);
	bool map_op = id == GBPF_HELPER_MAP_LOOKUP_ELEM || id == GBPF_HELPER_MAP_DELETE_ELEM ||
		      id == GBPF_HELPER_MAP_UPDATE_ELEM;
	bool xyz = id == GBPF_HELPER_GPU_BLOCK_IDX || id == GBPF_HELPER_GPU_BLOCK_DIM ||
		   id == GBPF_HELPER_GPU_THREAD_IDX || id == GBPF_HELPER_GPU_GRID_DIM;
	const struct gbpf_map_desc *m = NULL;

	if (map_op && st->r[1].k == S_MAP && st->r[1].off >= 0 && (size_t)st->r[1].off < p->map_cnt)
		m = &p->maps[st->r[1].off];
	for (unsigned a = 1; a <= nargs; a++) {
		const struct sreg *v = &st->r[a];

		if (v->k == S_NONE || v->k == S_BAD)
			return false;
		if (v->k != S_FP)
			continue;
		if (xyz) { /* written by the helper: 8 bytes each */
			if (!stack_write(st, v->off, 8))
				return false;
			continue;
		}
		/* a map operation reads its key (r2) and an update its value (r3); any other: not known */
		if (!m || (a != 2 && !(a == 3 && id == GBPF_HELPER_MAP_UPDATE_ELEM)) ||
		    !stack_written(st, v->off, a == 2 ? m->key_size : m->value_size))
			return false;
	}
	for (unsigned r = 1; r <= 5; r++)
		st->r[r] = (struct sreg){.k = S_NONE};
	st->r[0] = (struct sreg){.k = S_VAL};
	return true;
}

/* A load or store through @p base at @p off: a stack access must be known, a stack read written. */
static bool split_access(struct sstate *st, const struct sreg *base, int16_t off, unsigned size, bool read,
			 bool write)
{
	if (base->k == S_NONE || base->k == S_BAD)
		return false;
	if (base->k != S_FP)
		return true;
	if (read && !stack_written(st, (int64_t)base->off + off, size))
		return false;
	return !write || stack_write(st, (int64_t)base->off + off, size);
}

static bool split_alu(struct sstate *st, const struct gbpf_insn *in)
{
	uint8_t op = GBPF_OP(in->code);
	bool is64 = GBPF_CLASS(in->code) == GBPF_ALU64, x = GBPF_SRC(in->code) == GBPF_X;
	struct sreg *d = &st->r[in->dst];
	const struct sreg *s = &st->r[in->src];

	if (in->dst >= 10 || (x && in->src >= GBPF_REG_COUNT) || (x && op != GBPF_END && s->k == S_NONE))
		return false;
	if (op == GBPF_MOV) {
		*d = x && is64 && !in->off ? *s : (struct sreg){.k = x && (s->k == S_FP || s->k == S_BAD) ? S_BAD : S_VAL};
		return true;
	}
	if (d->k == S_NONE)
		return false;
	if (d->k == S_FP && is64 && !x && (op == GBPF_ADD || op == GBPF_SUB)) {
		d->off += op == GBPF_ADD ? in->imm : -in->imm;
		if (d->off < -(1 << 20) || d->off > (1 << 20))
			d->k = S_BAD;
		return true;
	}
	*d = (struct sreg){.k = d->k == S_FP || d->k == S_BAD || (x && (s->k == S_FP || s->k == S_BAD)) ? S_BAD : S_VAL};
	return true;
}

/* Instruction @p pc on @p st (successors are the caller's); false when the cut cannot be used. */
static bool split_step(const struct gbpf_prog_desc *p, struct sstate *st, size_t pc, uint32_t counter_map)
{
	const struct gbpf_insn *in = &p->insns[pc];
	uint8_t cls = GBPF_CLASS(in->code);

	if (in->dst >= GBPF_REG_COUNT || (cls != GBPF_LD && in->code != GBPF_OP_CALL && in->src >= GBPF_REG_COUNT))
		return false;
	switch (cls) {
	case GBPF_ALU:
	case GBPF_ALU64:
		return split_alu(st, in);
	case GBPF_LD:
		if (!is_wide(in) || in->dst >= 10 || pc + 1 >= p->insn_cnt)
			return false;
		if ((in->src == GBPF_PSEUDO_MAP_IDX || in->src == GBPF_PSEUDO_MAP_IDX_VALUE) &&
		    (uint32_t)in->imm == counter_map)
			return false; /* the rest names the counter's map */
		st->r[in->dst] = in->src == GBPF_PSEUDO_MAP_IDX ? (struct sreg){.k = S_MAP, .off = in->imm}
								: (struct sreg){.k = S_VAL};
		return true;
	case GBPF_LDX:
		if (in->dst >= 10 || !split_access(st, &st->r[in->src], in->off, access_size(in->code), true, false))
			return false;
		st->r[in->dst] = (struct sreg){.k = S_VAL};
		return true;
	case GBPF_ST:
		return split_access(st, &st->r[in->dst], in->off, access_size(in->code), false, true);
	case GBPF_STX: {
		const struct sreg *v = &st->r[in->src];
		bool atomic = GBPF_MODE(in->code) == GBPF_ATOMIC;

		if (v->k == S_NONE || v->k == S_FP || v->k == S_BAD)
			return false; /* an unknown value, or a stack address stored where it cannot be followed */
		if (atomic && in->imm == GBPF_ATOMIC_CMPXCHG && st->r[0].k == S_NONE)
			return false; /* compares with r0 */
		if (!split_access(st, &st->r[in->dst], in->off, access_size(in->code), atomic, true))
			return false;
		if (atomic && (in->imm & GBPF_FETCH))
			st->r[in->src] = (struct sreg){.k = S_VAL};
		if (atomic && in->imm == GBPF_ATOMIC_CMPXCHG)
			st->r[0] = (struct sreg){.k = S_VAL};
		return true;
	}
	case GBPF_JMP:
	case GBPF_JMP32:
		if (in->code == GBPF_OP_CALL)
			return in->src == GBPF_CALL_HELPER && split_call(p, st, in->imm);
		if (in->code == GBPF_OP_EXIT)
			return st->r[0].k != S_NONE;
		if (in->code == GBPF_OP_JA || in->code == GBPF_OP_GOTOL)
			return true;
		if (GBPF_OP(in->code) == GBPF_CALL || GBPF_OP(in->code) == GBPF_EXIT)
			return false; /* callx */
		return st->r[in->dst].k != S_NONE &&
		       (GBPF_SRC(in->code) != GBPF_X || (in->src < GBPF_REG_COUNT && st->r[in->src].k != S_NONE));
	default:
		return false;
	}
}

/* Whether the rest from @p at, with the context in @p ctx, reads only what it may (see the top). */
static int rest_self_contained(const struct gbpf_prog_desc *p, uint32_t at, uint16_t ctx, uint32_t counter_map)
{
	size_t n = p->insn_cnt;
	struct sstate *st = calloc(n - at, sizeof(*st)), cur;
	int ok = 0;

	if (!st)
		return -ENOMEM;
	st[0].reached = true;
	for (unsigned r = 0; r < 10; r++)
		st[0].r[r] = (struct sreg){.k = ctx >> r & 1 ? S_CTX : S_NONE};
	st[0].r[10] = (struct sreg){.k = S_FP, .off = 0};
	for (unsigned sweep = 0; sweep < SPLIT_MAX_SWEEPS; sweep++) {
		bool changed = false;

		for (size_t pc = at; pc < n; pc++) {
			const struct gbpf_insn *in = &p->insns[pc];
			size_t next = pc + (is_wide(in) ? 2 : 1);
			long to;

			if (!st[pc - at].reached)
				continue;
			cur = st[pc - at];
			if (!split_step(p, &cur, pc, counter_map))
				goto out;
			if (in->code == GBPF_OP_EXIT || (in->code == GBPF_OP_CALL && in->imm == GBPF_HELPER_GPU_EXIT))
				continue;
			if (is_jump(in)) {
				to = jump_target(pc, in);
				if (to < (long)at || to >= (long)n)
					goto out;
				changed |= join_into(&st[to - at], &cur);
			}
			if (in->code == GBPF_OP_JA || in->code == GBPF_OP_GOTOL)
				continue;
			if (next >= n)
				goto out; /* falls off the end */
			changed |= join_into(&st[next - at], &cur);
		}
		if (!changed) {
			ok = 1;
			break;
		}
	}
out:
	free(st);
	return ok;
}

/* @p head (room for insns_cnt + 2) as the head for a cut at @p at: insns[0, at), then r0 = 0; exit. */
static void head_at(const struct gbpf_prog_desc *p, uint32_t at, struct gbpf_insn *head)
{
	memcpy(head, p->insns, at * sizeof(*p->insns));
	head[at] = (struct gbpf_insn){.code = GBPF_ALU64 | GBPF_MOV | GBPF_K, .dst = 0};
	head[at + 1] = (struct gbpf_insn){.code = GBPF_OP_EXIT};
}

/* The rest as a program for the cut at @p at with the context in @p ctx, and @p s filled (its head made). */
static int build_rest(const struct gbpf_prog_desc *p, uint32_t at, uint16_t ctx, struct ptx_split *s)
{
	size_t n = p->insn_cnt, k = 0;

	if (!(s->rest_insns = calloc(10 + n - at, sizeof(*s->rest_insns)))) {
		ptx_split_free(s);
		return -ENOMEM;
	}
	for (uint8_t r = 0; r < 10; r++)
		if (r != 1 && (ctx >> r & 1))
			s->rest_insns[k++] = (struct gbpf_insn){.code = GBPF_ALU64 | GBPF_MOV | GBPF_X, .dst = r, .src = 1};
	memcpy(s->rest_insns + k, p->insns + at, (n - at) * sizeof(*p->insns));
	s->head = *p;
	s->head.insns = s->head_insns;
	s->head.insn_cnt = at + 2;
	s->rest = *p;
	s->rest.insns = s->rest_insns;
	s->rest.insn_cnt = k + n - at;
	s->at = at;
	return 1;
}

int ptx_split_find(const struct gbpf_prog_desc *p, struct ptx_split *s)
{
	struct ptx_counter c;
	uint8_t *ok;
	unsigned tries = 0;
	int rc = 0;

	memset(s, 0, sizeof(*s));
	if (!p || !p->insns || p->insn_cnt < 4 || p->insn_cnt > SPLIT_MAX_INSNS ||
	    p->attach.kind != GBPF_ATTACH_GPU_MEM)
		return 0;
	for (size_t pc = 0; pc < p->insn_cnt; pc++)
		if ((p->insns[pc].code == GBPF_OP_CALL && p->insns[pc].src != GBPF_CALL_HELPER) ||
		    p->insns[pc].code == GBPF_OP_CALLX)
			return 0; /* subprograms: not cut */
	ok = cut_points(p);
	s->head_insns = calloc(p->insn_cnt + 2, sizeof(*s->head_insns)); /* every try's head, kept for the cut */
	if (!ok || !s->head_insns) {
		free(ok);
		ptx_split_free(s);
		return -ENOMEM;
	}
	for (uint32_t at = 1; at < p->insn_cnt && !rc && tries < SPLIT_MAX_TRIES; at++) {
		struct gbpf_prog_desc hd = *p;
		uint16_t ctx;

		if (!ok[at])
			continue;
		head_at(p, at, s->head_insns);
		hd.insns = s->head_insns;
		hd.insn_cnt = at + 2;
		tries++;
		if (ptx_counter_find(&hd, &c) != 1)
			continue;
		if ((rc = ctx_regs_at(p, at, &ctx)) < 0)
			break;
		if ((rc = rest_self_contained(p, at, ctx, c.map)) != 1)
			continue; /* 0: look further; -ENOMEM ends the loop */
		s->counter = c;
		rc = build_rest(p, at, ctx, s);
	}
	free(ok);
	if (rc != 1)
		ptx_split_free(s);
	return rc;
}

void ptx_split_free(struct ptx_split *s)
{
	free(s->head_insns);
	free(s->rest_insns);
	s->head_insns = s->rest_insns = NULL;
}
