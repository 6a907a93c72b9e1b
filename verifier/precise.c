/* SPDX-License-Identifier: MIT */
/*
 * verifier/precise.c - which scalar values can still decide anything.
 *
 * Pruning compares a new state with an explored one register by register.
 * A counter such as `lost` in
 *     for (i = 0; i < 64; i++) if (bpf_ringbuf_output(...) < 0) lost++;
 * differs on every path, so without more knowledge the states multiply
 * (2^64 paths) although `lost` never reaches a check. This pass computes,
 * before the abstract interpretation, for every instruction the registers
 * and the current frame's stack slots whose value as a SCALAR may still
 * influence a verdict: a memory access (pointer arithmetic with it), a
 * helper's size argument, a branch condition, or r0 at exit (the reported
 * r0 range). A scalar outside that set may differ freely between a new
 * state and an explored one (state.c), as the Linux verifier's precision
 * marks allow, but computed statically, so it is conservative:
 *  - pointers are always compared in full (their offsets are checked at
 *    every access); only scalars are relaxed;
 *  - pointer arithmetic is checked at the add itself, so both operands of
 *    a 64-bit add/sub of registers are needed where either may be a
 *    pointer (a forward pass computes which registers may hold one);
 *  - a value stored through a pointer other than r10 may land in any stack
 *    slot, of any frame in a called function: it stays needed when any
 *    slot is, or always in a called function; loads through such pointers
 *    need every slot;
 *  - a local call needs r1-r5 and every slot (the callee may read the
 *    caller's stack); caller frames are always compared in full.
 * Both passes are bounded fixpoints; when one does not settle, everything
 * is needed (the previous, exact behaviour).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "verifier/vstate.h"

#define ALL_REGS 0x7ffu
#define ALL_SLOTS UINT64_MAX
#define MAX_ROUNDS 64

static uint16_t bit(unsigned r)
{
	return (uint16_t)(1u << (r & 15));
}

static bool is_jmp_class(uint8_t cls)
{
	return cls == GBPF_JMP || cls == GBPF_JMP32;
}

/* Successors of k (up to 2); returns how many. */
static int successors(const struct venv *env, uint32_t k, uint32_t succ[2])
{
	const struct gbpf_insn *in = &env->insns[k];
	uint8_t cls = GBPF_CLASS(in->code), op = GBPF_OP(in->code);
	int n = 0;
	int64_t t;

	if (is_jmp_class(cls)) {
		if (op == GBPF_EXIT && cls == GBPF_JMP)
			return 0;
		if (op == GBPF_JA) {
			t = (int64_t)k + 1 + (cls == GBPF_JMP32 ? in->imm : in->off);
			if (t >= 0 && t < env->insn_cnt)
				succ[n++] = (uint32_t)t;
			return n;
		}
		if (op != GBPF_CALL) {
			t = (int64_t)k + 1 + in->off;
			if (t >= 0 && t < env->insn_cnt)
				succ[n++] = (uint32_t)t;
		}
	}
	t = (int64_t)k + (gbpf_insn_is_wide(in) ? 2 : 1);
	if (t < env->insn_cnt)
		succ[n++] = (uint32_t)t;
	return n;
}

static bool is_local_call(const struct gbpf_insn *in)
{
	return in->code == GBPF_OP_CALL && in->src == GBPF_CALL_LOCAL;
}

/* Registers that may hold a pointer after k, given those before it. */
static uint16_t ptr_transfer(const struct venv *env, uint32_t k, uint16_t p, bool spilled_ptr)
{
	const struct gbpf_insn *in = &env->insns[k];
	uint8_t cls = GBPF_CLASS(in->code), op = GBPF_OP(in->code), mode = GBPF_MODE(in->code);
	uint16_t d = bit(in->dst), s = bit(in->src);
	bool x = GBPF_SRC(in->code) == GBPF_X;

	switch (cls) {
	case GBPF_ALU64:
		if (op == GBPF_MOV && x && !in->off)
			return (uint16_t)((p & ~d) | ((p & s) ? d : 0));
		if ((op == GBPF_ADD || op == GBPF_SUB) && x)
			return (uint16_t)(p | ((p & s) ? d : 0));
		if ((op == GBPF_ADD || op == GBPF_SUB) && !x)
			return p;
		return (uint16_t)(p & ~d);
	case GBPF_ALU:
		return (uint16_t)(p & ~d);
	case GBPF_LD:
		return in->src ? (uint16_t)(p | d) : (uint16_t)(p & ~d);
	case GBPF_LDX:
		/* only an 8-byte fill can restore a spilled pointer */
		if (GBPF_SIZE(in->code) == GBPF_DW && spilled_ptr)
			return (uint16_t)(p | d);
		return (uint16_t)(p & ~d);
	case GBPF_STX:
		if (mode == GBPF_ATOMIC && in->imm == GBPF_ATOMIC_CMPXCHG)
			return (uint16_t)(p & ~1u);
		if (mode == GBPF_ATOMIC && (in->imm & GBPF_FETCH))
			return (uint16_t)(p & ~s);
		return p;
	case GBPF_ST:
		return p;
	default:
		if (op != GBPF_CALL)
			return p;
		p &= (uint16_t)~0x3fu;
		if (is_local_call(in) || x || verifier_helper_returns_ptr(in->imm))
			p |= 1;
		return p;
	}
}

/*
 * Successors of every instruction, computed once for both passes (UINT32_MAX
 * = none); returns whether any jump goes backwards (without one, a single
 * pass in order is exact).
 */
static bool all_successors(const struct venv *env, uint32_t (*succ)[2])
{
	bool back = false;

	for (uint32_t k = 0; k < env->insn_cnt; k++) {
		int ns = 0;

		if (!(env->insn_flags[k] & INSN_SECOND))
			ns = successors(env, k, succ[k]);
		for (int j = 0; j < 2; j++) {
			if (j >= ns)
				succ[k][j] = UINT32_MAX;
			else if (succ[k][j] <= k)
				back = true;
		}
	}
	return back;
}

/* Forward pass: ptr[k] = registers that may hold a pointer before k. */
static int may_ptr(struct venv *env, uint16_t *ptr, uint32_t (*succ)[2], bool loops)
{
	uint32_t n = env->insn_cnt;
	bool spilled = false, changed = true;
	int rounds = 0;

	memset(ptr, 0, n * sizeof(*ptr));
	for (uint32_t i = 0; i < env->subprog_cnt; i++)
		ptr[env->subprogs[i].start] = (uint16_t)(i ? 0x43e : 0x402); /* r10, r1 (+r2-r5) */
	while (changed && rounds++ < MAX_ROUNDS) {
		changed = false;
		for (uint32_t k = 0; k < n; k++) {
			const struct gbpf_insn *in = &env->insns[k];
			uint16_t out;

			if (env->insn_flags[k] & INSN_SECOND)
				continue;
			if (GBPF_CLASS(in->code) == GBPF_STX && GBPF_MODE(in->code) == GBPF_MEM &&
			    GBPF_SIZE(in->code) == GBPF_DW && (ptr[k] & bit(in->src)) && !spilled) {
				/* earlier fills may restore it: another round (below) */
				spilled = true;
				loops = true;
				changed = true;
			}
			out = (uint16_t)(ptr_transfer(env, k, ptr[k], spilled) | 0x400);
			for (int j = 0; j < 2 && succ[k][j] != UINT32_MAX; j++) {
				uint32_t t = succ[k][j];

				if ((ptr[t] | out) != ptr[t]) {
					ptr[t] |= out;
					changed = true;
				}
			}
		}
		if (!loops)
			return 0;
	}
	if (changed)
		for (uint32_t k = 0; k < n; k++)
			ptr[k] = ALL_REGS;
	return 0;
}

/* Stack slot of an aligned 8-byte access at r10 + off, or -1. */
static int fp_slot(int16_t off)
{
	if (off >= 0 || off < -GBPF_STACK_SIZE || (off & 7))
		return -1;
	return -off / 8 - 1;
}

/* Slots touched by a narrower access at r10 + off, or 0 outside the stack. */
static uint64_t fp_slots_narrow(int16_t off, unsigned size)
{
	int32_t last = off + (int32_t)size - 1;

	if (off < -GBPF_STACK_SIZE || last >= 0)
		return 0;
	return (1ull << ((-off - 1) / 8)) | (1ull << ((-last - 1) / 8));
}

static unsigned access_size(uint8_t code)
{
	static const unsigned sizes[4] = {4, 2, 1, 8};

	return sizes[GBPF_SIZE(code) >> 3];
}

/* Backward transfer: needed registers and slots before k from those after it. */
static void need_transfer(const struct venv *env, uint32_t k, uint16_t p, bool callee,
			  uint16_t *r, uint64_t *sl)
{
	const struct gbpf_insn *in = &env->insns[k];
	uint8_t cls = GBPF_CLASS(in->code), op = GBPF_OP(in->code), mode = GBPF_MODE(in->code);
	uint16_t d = bit(in->dst), s = bit(in->src), ro = *r;
	bool x = GBPF_SRC(in->code) == GBPF_X, dw = GBPF_SIZE(in->code) == GBPF_DW;
	int slot;

	switch (cls) {
	case GBPF_ALU64:
	case GBPF_ALU:
		if (op == GBPF_MOV) {
			*r = (uint16_t)((ro & ~d) | ((x && (ro & d)) ? s : 0));
		} else if (op == GBPF_NEG || op == GBPF_END || !x) {
			/* d keeps its need; a constant operand needs nothing */
		} else if ((op == GBPF_ADD || op == GBPF_SUB) && cls == GBPF_ALU64) {
			/* pointer +/- scalar: the scalar's range is checked here */
			if (ro & d)
				*r |= s;
			if (p & d)
				*r |= s;
			if (p & s)
				*r |= d;
		} else if (ro & d) {
			*r |= s;
		}
		return;
	case GBPF_LD:
		*r = (uint16_t)(ro & ~d);
		return;
	case GBPF_LDX:
		*r = (uint16_t)((ro & ~d) | s);
		if (!(ro & d) || mode == GBPF_MEMSX)
			return; /* sign-extending fills never restore a spilled value */
		if (in->src == 10 && !dw)
			*sl |= fp_slots_narrow(in->off, access_size(in->code));
		else if (in->src == 10 && fp_slot(in->off) >= 0)
			*sl |= 1ull << fp_slot(in->off);
		else if (in->src == 10 || (p & s))
			*sl = ALL_SLOTS;
		return;
	case GBPF_ST:
		*r |= d;
		slot = in->dst == 10 && dw ? fp_slot(in->off) : -1;
		if (slot >= 0)
			*sl &= ~(1ull << slot); /* a constant spill replaces the slot */
		return;
	case GBPF_STX:
		if (mode == GBPF_ATOMIC) {
			if (in->imm == GBPF_ATOMIC_CMPXCHG)
				*r &= (uint16_t)~1u;
			else if (in->imm & GBPF_FETCH)
				*r &= (uint16_t)~s;
			*r |= d;
			return; /* the slot becomes data of unknown value */
		}
		*r |= d;
		if (in->dst == 10 && !dw) {
			/* a narrow spill keeps the value; it replaces nothing whole */
			if (*sl & fp_slots_narrow(in->off, access_size(in->code)))
				*r |= s;
			return;
		}
		if (in->dst == 10) {
			slot = fp_slot(in->off);
			if (slot < 0) {
				*r |= s;
				return;
			}
			if (*sl & (1ull << slot))
				*r |= s;
			*sl &= ~(1ull << slot);
			return;
		}
		if ((p & d) && (callee || *sl))
			*r |= s;
		return;
	default:
		break;
	}
	if (op == GBPF_EXIT && cls == GBPF_JMP) {
		*r = 1;
		*sl = 0;
		return;
	}
	if (op == GBPF_JA)
		return;
	if (op == GBPF_CALL && cls == GBPF_JMP) {
		*r &= (uint16_t)~0x3fu;
		if (is_local_call(in)) {
			*r |= 0x3e;
			*sl = ALL_SLOTS;
		} else if (x) {
			*r |= (uint16_t)(0x3e | d);
		} else {
			*r |= verifier_helper_value_args(in->imm);
		}
		return;
	}
	*r |= d;
	if (x)
		*r |= s;
}

int precise_check(struct venv *env)
{
	uint32_t n = env->insn_cnt;
	/* one block: successors, may-pointer registers, called-function marks */
	char *block = malloc(n * (sizeof(uint32_t[2]) + sizeof(uint16_t) + 1));
	uint32_t (*succ)[2] = (uint32_t (*)[2])block;
	uint16_t *ptr = (uint16_t *)(block + n * sizeof(uint32_t[2]));
	uint8_t *callee = (uint8_t *)(ptr + n);
	bool changed = true, loops;
	int rounds = 0, err;

	if (!block)
		return -ENOMEM;
	memset(callee, 0, n);
	loops = all_successors(env, succ);
	err = may_ptr(env, ptr, succ, loops);
	if (err)
		goto out;
	for (uint32_t i = 1; i < env->subprog_cnt; i++)
		memset(callee + env->subprogs[i].start, 1,
		       env->subprogs[i].end - env->subprogs[i].start);
	while (changed && rounds++ < MAX_ROUNDS) {
		changed = false;
		for (uint32_t k = n; k-- > 0;) {
			uint16_t r = 0;
			uint64_t sl = 0;

			if (env->insn_flags[k] & INSN_SECOND)
				continue;
			for (int j = 0; j < 2 && succ[k][j] != UINT32_MAX; j++) {
				r |= env->prec_in[succ[k][j]];
				sl |= env->sprec_in[succ[k][j]];
			}
			need_transfer(env, k, ptr[k], callee[k], &r, &sl);
			r &= 0x3ff;
			if ((r | env->prec_in[k]) != env->prec_in[k] ||
			    (sl | env->sprec_in[k]) != env->sprec_in[k]) {
				env->prec_in[k] |= r;
				env->sprec_in[k] |= sl;
				changed = true;
			}
		}
		if (!loops)
			changed = false; /* every successor came later: one pass is exact */
	}
	if (changed) {
		for (uint32_t k = 0; k < n; k++) {
			env->prec_in[k] = ALL_REGS;
			env->sprec_in[k] = ALL_SLOTS;
		}
	}
out:
	free(block);
	return err;
}
