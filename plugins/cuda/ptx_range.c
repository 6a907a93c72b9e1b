// SPDX-License-Identifier: MIT
/*
 * plugins/cuda/ptx_range.c - upper bounds of register values for the PTX
 * emitter (ptx_range.h).
 */
#include <stdbool.h>

#include "ptx_range.h"

static const struct ptx_range range_unknown = {.lo_max = UINT32_MAX};

void ptx_range_forget(struct ptx_range *r, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		r[i] = range_unknown;
}

/* Register @p d is written: no other register is a copy of it any more. */
static void range_written(struct ptx_range r[GBPF_REG_COUNT], unsigned d)
{
	for (unsigned i = 0; i < GBPF_REG_COUNT; i++)
		if (r[i].rel != PTX_REL_NONE && r[i].rel_src == d)
			r[i].rel = PTX_REL_NONE;
}

/* An ALU instruction's result, from what the registers held before it (@p r). */
static struct ptx_range range_alu(const struct ptx_range r[GBPF_REG_COUNT], const struct gbpf_insn *in)
{
	bool alu64 = GBPF_CLASS(in->code) == GBPF_ALU64, x = GBPF_SRC(in->code) == GBPF_X;
	struct ptx_range old = r[in->dst], src = x && in->src < 10 ? r[in->src] : range_unknown, v = range_unknown;
	uint64_t k64 = (uint64_t)(int64_t)in->imm;
	uint32_t k32 = (uint32_t)in->imm, b;
	unsigned k;

	switch (GBPF_OP(in->code)) {
	case GBPF_MOV:
		if (in->off) /* a sign-extending move */
			break;
		if (!x) {
			v.lo_max = k32;
			v.hi_zero = !alu64 || !(k64 >> 32);
		} else if (in->src < 10) {
			v = src;
			v.hi_zero = src.hi_zero || !alu64;
			v.rel = alu64 ? PTX_REL_COPY : PTX_REL_ZEXT;
			v.rel_src = in->src;
		}
		break;
	case GBPF_AND: /* x & y is at most either */
		b = x ? src.lo_max : k32;
		v.lo_max = old.lo_max < b ? old.lo_max : b;
		v.hi_zero = old.hi_zero || (x ? src.hi_zero : !(k64 >> 32));
		break;
	case GBPF_RSH:
		if (x)
			break;
		k = (unsigned)in->imm & (alu64 ? 63u : 31u);
		if (!alu64 || old.hi_zero)
			v.lo_max = k >= 32 ? 0 : old.lo_max >> k;
		else if (k >= 32)
			v.lo_max = UINT32_MAX >> (k - 32);
		v.hi_zero = !alu64 || old.hi_zero || k >= 32;
		if (alu64 && k == 32 && old.rel == PTX_REL_SHL32) {
			v.rel = PTX_REL_ZEXT;
			v.rel_src = old.rel_src;
		}
		break;
	case GBPF_LSH:
		if (!alu64 || x || ((unsigned)in->imm & 63u) < 32)
			break;
		v.lo_max = 0;
		if ((unsigned)in->imm == 32 && old.rel == PTX_REL_COPY) {
			v.rel = PTX_REL_SHL32;
			v.rel_src = old.rel_src;
		}
		break;
	case GBPF_MOD: /* unsigned, by a constant that is not 0 (x % 0 is x): below it */
		if (x || in->off || (alu64 ? (int64_t)k64 <= 0 : !k32))
			break;
		v.lo_max = k32 - 1;
		v.hi_zero = 1;
		break;
	case GBPF_END: /* a 32-bit class swap of 64 bits keeps them */
		return v;
	default:
		break;
	}
	if (!alu64)
		v.hi_zero = 1; /* 32-bit results are zero-extended */
	return v;
}

void ptx_range_update(struct ptx_range r[GBPF_REG_COUNT], const struct gbpf_insn *in)
{
	uint8_t cls = GBPF_CLASS(in->code);
	struct ptx_range v = range_unknown;
	unsigned d = in->dst;

	if (in->code == GBPF_OP_CALL || in->code == GBPF_OP_CALLX) {
		for (unsigned i = 0; i <= 5; i++) {
			range_written(r, i);
			r[i] = range_unknown;
		}
		return;
	}
	if (cls == GBPF_STX && GBPF_MODE(in->code) == GBPF_ATOMIC)
		d = in->imm == GBPF_ATOMIC_CMPXCHG ? 0 : (in->imm & GBPF_FETCH) ? in->src : 10;
	else if (cls == GBPF_LDX && GBPF_MODE(in->code) == GBPF_MEM && GBPF_SIZE(in->code) != GBPF_DW) {
		v.hi_zero = 1;
		v.lo_max = GBPF_SIZE(in->code) == GBPF_B ? 0xffu : GBPF_SIZE(in->code) == GBPF_H ? 0xffffu : UINT32_MAX;
	} else if (cls == GBPF_LD && gbpf_insn_is_wide(in) && in->src == 0) {
		v.lo_max = (uint32_t)in->imm;
		v.hi_zero = !in[1].imm;
	} else if (cls == GBPF_ALU || cls == GBPF_ALU64) {
		if (d < 10)
			v = range_alu(r, in);
	} else if (cls != GBPF_LDX && cls != GBPF_LD) {
		return; /* stores and jumps write no register */
	}
	if (d >= 10)
		return;
	range_written(r, d);
	if (v.rel != PTX_REL_NONE && v.rel_src == d)
		v.rel = PTX_REL_NONE; /* of its own old value */
	r[d] = v;
}

static void range_bound(struct ptx_range *x, uint64_t most, bool whole)
{
	if (most < x->lo_max)
		x->lo_max = (uint32_t)most;
	if (whole)
		x->hi_zero = 1;
}

void ptx_range_branch(struct ptx_range r[GBPF_REG_COUNT], const struct gbpf_insn *in, int taken,
		      const uint8_t *imm_known, const uint64_t *imm_val)
{
	bool is64 = GBPF_CLASS(in->code) == GBPF_JMP, x = GBPF_SRC(in->code) == GBPF_X;
	uint8_t op = GBPF_OP(in->code);
	unsigned reg = in->dst;
	uint64_t c, most;

	if (in->dst >= 10 || (x && in->src >= 10))
		return;
	if (!x) {
		c = (uint64_t)(int64_t)in->imm;
	} else if (imm_known[in->src]) {
		c = imm_val[in->src];
	} else if (imm_known[in->dst]) {
		/* the constant on the left: c > reg is reg < c */
		reg = in->src;
		c = imm_val[in->dst];
		op = op == GBPF_JGT ? GBPF_JLT : op == GBPF_JGE ? GBPF_JLE : op == GBPF_JLT ? GBPF_JGT
		     : op == GBPF_JLE ? GBPF_JGE : op;
	} else {
		return;
	}
	if (!is64)
		c = (uint32_t)c;
	if (!taken) /* where it falls through, the opposite holds */
		op = op == GBPF_JGT ? GBPF_JLE : op == GBPF_JGE ? GBPF_JLT : op == GBPF_JLT ? GBPF_JGE
		     : op == GBPF_JLE ? GBPF_JGT : op == GBPF_JEQ ? GBPF_JNE : op == GBPF_JNE ? GBPF_JEQ : GBPF_JSET;
	if (op == GBPF_JLT && c)
		most = c - 1;
	else if (op == GBPF_JLE || op == GBPF_JEQ)
		most = c;
	else
		return; /* no upper bound (signed compares are not followed) */
	if (most > UINT32_MAX)
		return;
	range_bound(&r[reg], most, is64);
	if (r[reg].rel == PTX_REL_COPY)
		range_bound(&r[r[reg].rel_src], most, is64);
	else if (r[reg].rel == PTX_REL_ZEXT) /* its low 32 bits are the other's */
		range_bound(&r[r[reg].rel_src], most, false);
}

void ptx_range_meet(struct ptx_range *into, const struct ptx_range *from, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		if (from[i].lo_max > into[i].lo_max)
			into[i].lo_max = from[i].lo_max;
		into[i].hi_zero = into[i].hi_zero && from[i].hi_zero;
		if (into[i].rel != from[i].rel || into[i].rel_src != from[i].rel_src)
			into[i].rel = PTX_REL_NONE;
	}
}
