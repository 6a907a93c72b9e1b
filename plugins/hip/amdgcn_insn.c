/* SPDX-License-Identifier: MIT */
/*
 * eBPF instructions to LLVM IR for the AMDGPU target: ALU, jumps, loads,
 * stores, atomics, wide loads and calls. Registers live in private allocas
 * that mem2reg promotes; r10-based accesses address the frame alloca
 * directly so that LLVM keeps them in scratch with known alignment.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <gbpf/helper_ids.h>

#include "amdgcn_codegen.h"
#include "amdgcn_internal.h"

LLVMValueRef amd_const64(struct amd_cg *cg, uint64_t v)
{
	return LLVMConstInt(cg->i64, v, 0);
}

LLVMValueRef amd_const32(struct amd_cg *cg, uint32_t v)
{
	return LLVMConstInt(cg->i32, v, 0);
}

LLVMValueRef amd_reg(struct amd_cg *cg, unsigned r)
{
	return LLVMBuildLoad2(cg->b, cg->i64, cg->regs[r], "");
}

void amd_set_reg(struct amd_cg *cg, unsigned r, LLVMValueRef v)
{
	LLVMBuildStore(cg->b, v, cg->regs[r]);
}

LLVMValueRef amd_flat_ptr(struct amd_cg *cg, LLVMValueRef addr64)
{
	return LLVMBuildIntToPtr(cg->b, addr64, cg->ptr, "");
}

LLVMBasicBlockRef amd_new_bb(struct amd_cg *cg, const char *name)
{
	return LLVMAppendBasicBlockInContext(cg->ctx, cg->fn, name);
}

long amd_func_at(const struct amd_cg *cg, size_t pc)
{
	for (size_t f = 0; f < cg->nfuncs; f++)
		if (cg->funcs[f].start == pc)
			return (long)f;
	return -1;
}

/* Return from the function being emitted with r0. */
void amd_ret_from_func(struct amd_cg *cg)
{
	LLVMBuildBr(cg->b, cg->exit_bb);
}

/* Alignment known from a constant offset off an 8-byte aligned base. */
static unsigned off_align(int64_t off, unsigned size)
{
	unsigned a = 8;

	while (a > 1 && (off & (a - 1)))
		a >>= 1;
	return a < size ? a : size;
}

/*
 * Address of base register + off: the frame alloca itself for r10 (so
 * that LLVM sees a private access), a flat pointer otherwise.
 */
static LLVMValueRef mem_ptr(struct amd_cg *cg, unsigned base, int16_t off, unsigned size,
			    unsigned *align)
{
	if (base == 10) {
		LLVMValueRef idx = amd_const64(cg, (uint64_t)(GBPF_STACK_SIZE + (int64_t)off));

		*align = off_align(off, size);
		return LLVMBuildGEP2(cg->b, cg->i8, cg->stack, &idx, 1, "");
	}
	*align = 1;
	return amd_flat_ptr(cg, LLVMBuildAdd(cg->b, amd_reg(cg, base),
					     amd_const64(cg, (uint64_t)(int64_t)off), ""));
}

static LLVMTypeRef size_type(struct amd_cg *cg, uint8_t sz, unsigned *bytes)
{
	switch (sz) {
	case GBPF_B:
		*bytes = 1;
		return cg->i8;
	case GBPF_H:
		*bytes = 2;
		return cg->i16;
	case GBPF_W:
		*bytes = 4;
		return cg->i32;
	default:
		*bytes = 8;
		return cg->i64;
	}
}

static int emit_ldx(struct amd_cg *cg, size_t pc, const struct gbpf_insn *in)
{
	unsigned bytes, align;
	LLVMTypeRef ty = size_type(cg, GBPF_SIZE(in->code), &bytes);
	LLVMValueRef p = mem_ptr(cg, in->src, in->off, bytes, &align);
	LLVMValueRef v = LLVMBuildLoad2(cg->b, ty, p, "");

	(void)pc;
	LLVMSetAlignment(v, align);
	if (bytes < 8)
		v = GBPF_MODE(in->code) == GBPF_MEMSX ? LLVMBuildSExt(cg->b, v, cg->i64, "")
						      : LLVMBuildZExt(cg->b, v, cg->i64, "");
	amd_set_reg(cg, in->dst, v);
	return 0;
}

static int emit_store(struct amd_cg *cg, const struct gbpf_insn *in, LLVMValueRef v64)
{
	unsigned bytes, align;
	LLVMTypeRef ty = size_type(cg, GBPF_SIZE(in->code), &bytes);
	LLVMValueRef p = mem_ptr(cg, in->dst, in->off, bytes, &align);
	LLVMValueRef v = bytes < 8 ? LLVMBuildTrunc(cg->b, v64, ty, "") : v64;

	LLVMSetAlignment(LLVMBuildStore(cg->b, v, p), align);
	return 0;
}

static int emit_atomic(struct amd_cg *cg, size_t pc, const struct gbpf_insn *in)
{
	int is64 = GBPF_SIZE(in->code) == GBPF_DW;
	unsigned align;
	LLVMValueRef p, v, old;
	LLVMAtomicRMWBinOp op;
	int fetch = in->imm & GBPF_FETCH;

	if (!is64 && GBPF_SIZE(in->code) != GBPF_W)
		return amd_fail(cg, pc, -EINVAL, "atomic of size other than 32 or 64 bits");
	p = mem_ptr(cg, in->dst, in->off, is64 ? 8 : 4, &align);
	v = amd_reg(cg, in->src);
	if (!is64)
		v = LLVMBuildTrunc(cg->b, v, cg->i32, "");
	switch (in->imm) {
	case GBPF_ATOMIC_CMPXCHG: {
		LLVMValueRef cmp = amd_reg(cg, 0), pair;

		if (!is64)
			cmp = LLVMBuildTrunc(cg->b, cmp, cg->i32, "");
		/* default (system) sync scope: the word may be host memory */
		pair = LLVMBuildAtomicCmpXchg(cg->b, p, cmp, v, LLVMAtomicOrderingSequentiallyConsistent,
					      LLVMAtomicOrderingSequentiallyConsistent, 0);
		LLVMSetAlignment(pair, is64 ? 8 : 4);
		old = LLVMBuildExtractValue(cg->b, pair, 0, "");
		amd_set_reg(cg, 0, is64 ? old : LLVMBuildZExt(cg->b, old, cg->i64, ""));
		return 0;
	}
	case GBPF_ATOMIC_XCHG:
		op = LLVMAtomicRMWBinOpXchg;
		break;
	case GBPF_ATOMIC_ADD:
	case GBPF_ATOMIC_ADD | GBPF_FETCH:
		op = LLVMAtomicRMWBinOpAdd;
		break;
	case GBPF_ATOMIC_OR:
	case GBPF_ATOMIC_OR | GBPF_FETCH:
		op = LLVMAtomicRMWBinOpOr;
		break;
	case GBPF_ATOMIC_AND:
	case GBPF_ATOMIC_AND | GBPF_FETCH:
		op = LLVMAtomicRMWBinOpAnd;
		break;
	case GBPF_ATOMIC_XOR:
	case GBPF_ATOMIC_XOR | GBPF_FETCH:
		op = LLVMAtomicRMWBinOpXor;
		break;
	default:
		return amd_fail(cg, pc, -EINVAL, "unknown atomic operation 0x%x", (unsigned)in->imm);
	}
	old = LLVMBuildAtomicRMW(cg->b, op, p, v, LLVMAtomicOrderingSequentiallyConsistent, 0);
	LLVMSetAlignment(old, is64 ? 8 : 4);
	if (fetch)
		amd_set_reg(cg, in->src, is64 ? old : LLVMBuildZExt(cg->b, old, cg->i64, ""));
	return 0;
}

static int emit_lddw(struct amd_cg *cg, size_t pc, const struct gbpf_insn *in)
{
	const struct gbpf_insn *hi = in + 1;
	LLVMValueRef v, gep, idx[2];
	long f;

	switch (in->src) {
	case 0:
		v = amd_const64(cg, (uint64_t)(uint32_t)in->imm | ((uint64_t)(uint32_t)hi->imm << 32));
		break;
	case GBPF_PSEUDO_MAP_IDX:
	case GBPF_PSEUDO_MAP_IDX_VALUE:
		if (in->imm < 0 || (size_t)in->imm >= cg->prog->map_cnt)
			return amd_fail(cg, pc, -EINVAL, "map index %d out of range (%zu maps)", in->imm,
					cg->prog->map_cnt);
		idx[0] = amd_const64(cg, 0);
		idx[1] = amd_const64(cg, (uint64_t)in->imm);
		gep = LLVMBuildGEP2(cg->b, LLVMGlobalGetValueType(cg->g_maps), cg->g_maps, idx, 2, "");
		v = LLVMBuildLoad2(cg->b, cg->i64, gep, "map");
		LLVMSetAlignment(v, 8);
		if (in->src == GBPF_PSEUDO_MAP_IDX_VALUE) {
			/* value 0 of an array lies at the header's data_off */
			LLVMValueRef off = LLVMBuildLoad2(
				cg->b, cg->i64,
				amd_flat_ptr(cg, LLVMBuildAdd(cg->b, v, amd_const64(cg, 56), "")), "");

			LLVMSetAlignment(off, 8);
			v = LLVMBuildAdd(cg->b, LLVMBuildAdd(cg->b, v, off, ""),
					 amd_const64(cg, (uint64_t)(uint32_t)hi->imm), "");
		}
		break;
	case GBPF_PSEUDO_FUNC:
		f = amd_func_at(cg, (size_t)((long long)pc + 1 + in->imm));
		if (f < 0)
			return amd_fail(cg, pc, -EINVAL, "function address does not start a subprogram");
		v = amd_const64(cg, GBPF_AMDGCN_FUNC_TAG | (uint64_t)f);
		break;
	default:
		return amd_fail(cg, pc, -ENOTSUP, "wide load with source tag %u", in->src);
	}
	amd_set_reg(cg, in->dst, v);
	return 0;
}

/* dst op= src (or imm) for ALU (32-bit) and ALU64. */
static int emit_alu(struct amd_cg *cg, size_t pc, const struct gbpf_insn *in)
{
	int is64 = GBPF_CLASS(in->code) == GBPF_ALU64;
	LLVMTypeRef ty = is64 ? cg->i64 : cg->i32;
	uint8_t op = GBPF_OP(in->code);
	LLVMValueRef d, s, r, zero, is0;
	LLVMBuilderRef b = cg->b;

	d = amd_reg(cg, in->dst);
	if (!is64)
		d = LLVMBuildTrunc(b, d, cg->i32, "");
	if (GBPF_SRC(in->code) == GBPF_X) {
		s = amd_reg(cg, in->src);
		if (!is64)
			s = LLVMBuildTrunc(b, s, cg->i32, "");
	} else {
		s = LLVMConstInt(ty, (uint64_t)(int64_t)in->imm, 1);
	}
	zero = LLVMConstInt(ty, 0, 0);
	if (in->off && op != GBPF_DIV && op != GBPF_MOD && op != GBPF_MOV)
		return amd_fail(cg, pc, -EINVAL, "nonzero offset %d on ALU operation 0x%02x", in->off,
				in->code);
	switch (op) {
	case GBPF_ADD:
		r = LLVMBuildAdd(b, d, s, "");
		break;
	case GBPF_SUB:
		r = LLVMBuildSub(b, d, s, "");
		break;
	case GBPF_MUL:
		r = LLVMBuildMul(b, d, s, "");
		break;
	case GBPF_OR:
		r = LLVMBuildOr(b, d, s, "");
		break;
	case GBPF_AND:
		r = LLVMBuildAnd(b, d, s, "");
		break;
	case GBPF_XOR:
		r = LLVMBuildXor(b, d, s, "");
		break;
	case GBPF_LSH:
	case GBPF_RSH:
	case GBPF_ARSH: {
		/* the RFC masks shift counts; LLVM makes larger counts poison */
		LLVMValueRef m = LLVMBuildAnd(b, s, LLVMConstInt(ty, is64 ? 63 : 31, 0), "");

		r = op == GBPF_LSH ? LLVMBuildShl(b, d, m, "")
		    : op == GBPF_RSH ? LLVMBuildLShr(b, d, m, "")
				     : LLVMBuildAShr(b, d, m, "");
		break;
	}
	case GBPF_NEG:
		r = LLVMBuildNeg(b, d, "");
		break;
	case GBPF_MOV:
		if (in->off == 0) {
			r = s;
		} else if (in->off == 8 || in->off == 16 || (in->off == 32 && is64)) {
			LLVMTypeRef nt = in->off == 8 ? cg->i8 : in->off == 16 ? cg->i16 : cg->i32;

			if (GBPF_SRC(in->code) != GBPF_X)
				return amd_fail(cg, pc, -EINVAL, "sign-extending move from an immediate");
			r = LLVMBuildSExt(b, LLVMBuildTrunc(b, s, nt, ""), ty, "");
		} else {
			return amd_fail(cg, pc, -EINVAL, "bad offset %d of mov", in->off);
		}
		break;
	case GBPF_DIV:
	case GBPF_MOD: {
		/* Divisor 0 (and -1 when signed) get the RFC's exact results
		 * (0 / dst unchanged, -dst / 0), which LLVM leaves undefined. */
		LLVMValueRef safe, q, ism1 = NULL;

		if (in->off != 0 && in->off != 1)
			return amd_fail(cg, pc, -EINVAL, "bad offset %d of div/mod", in->off);
		is0 = LLVMBuildICmp(b, LLVMIntEQ, s, zero, "");
		if (in->off == 1) {
			LLVMValueRef m1 = LLVMConstInt(ty, (uint64_t)-1, 1);

			ism1 = LLVMBuildICmp(b, LLVMIntEQ, s, m1, "");
			safe = LLVMBuildSelect(b, LLVMBuildOr(b, is0, ism1, ""), LLVMConstInt(ty, 1, 0),
					       s, "");
			q = op == GBPF_DIV ? LLVMBuildSDiv(b, d, safe, "") : LLVMBuildSRem(b, d, safe, "");
			if (op == GBPF_DIV)
				q = LLVMBuildSelect(b, ism1, LLVMBuildNeg(b, d, ""), q, "");
			else
				q = LLVMBuildSelect(b, ism1, zero, q, "");
		} else {
			safe = LLVMBuildSelect(b, is0, LLVMConstInt(ty, 1, 0), s, "");
			q = op == GBPF_DIV ? LLVMBuildUDiv(b, d, safe, "") : LLVMBuildURem(b, d, safe, "");
		}
		r = LLVMBuildSelect(b, is0, op == GBPF_DIV ? zero : d, q, "");
		break;
	}
	case GBPF_END: {
		LLVMTypeRef nt;
		int swap = is64 || GBPF_SRC(in->code) == GBPF_TO_BE;

		if (in->imm != 16 && in->imm != 32 && in->imm != 64)
			return amd_fail(cg, pc, -EINVAL, "byte swap width %d", in->imm);
		nt = in->imm == 16 ? cg->i16 : in->imm == 32 ? cg->i32 : cg->i64;
		d = amd_reg(cg, in->dst);
		r = in->imm == 64 ? d : LLVMBuildTrunc(b, d, nt, "");
		if (swap) {
			LLVMTypeRef pt[1] = {nt};
			char name[32];

			snprintf(name, sizeof(name), "llvm.bswap.i%d", in->imm);
			r = amd_intrinsic(cg, name, nt, pt, 1, &r);
		}
		if (in->imm != 64)
			r = LLVMBuildZExt(b, r, cg->i64, "");
		amd_set_reg(cg, in->dst, r);
		return 0;
	}
	default:
		return amd_fail(cg, pc, -EINVAL, "unknown ALU operation 0x%02x", in->code);
	}
	if (!is64)
		r = LLVMBuildZExt(b, r, cg->i64, "");
	amd_set_reg(cg, in->dst, r);
	return 0;
}

static int emit_jump(struct amd_cg *cg, size_t pc, const struct gbpf_insn *in)
{
	int is32 = GBPF_CLASS(in->code) == GBPF_JMP32;
	uint8_t op = GBPF_OP(in->code);
	LLVMTypeRef ty = is32 ? cg->i32 : cg->i64;
	long long t;
	LLVMValueRef d, s, c;
	LLVMIntPredicate p;
	LLVMBasicBlockRef fall;

	if (op == GBPF_JA) {
		t = (long long)pc + 1 + (is32 ? in->imm : in->off);
		LLVMBuildBr(cg->b, cg->bbs[t]);
		return 0;
	}
	t = (long long)pc + 1 + in->off;
	d = amd_reg(cg, in->dst);
	if (is32)
		d = LLVMBuildTrunc(cg->b, d, cg->i32, "");
	if (GBPF_SRC(in->code) == GBPF_X) {
		s = amd_reg(cg, in->src);
		if (is32)
			s = LLVMBuildTrunc(cg->b, s, cg->i32, "");
	} else {
		s = LLVMConstInt(ty, (uint64_t)(int64_t)in->imm, 1);
	}
	switch (op) {
	case GBPF_JEQ: p = LLVMIntEQ; break;
	case GBPF_JNE: p = LLVMIntNE; break;
	case GBPF_JGT: p = LLVMIntUGT; break;
	case GBPF_JGE: p = LLVMIntUGE; break;
	case GBPF_JLT: p = LLVMIntULT; break;
	case GBPF_JLE: p = LLVMIntULE; break;
	case GBPF_JSGT: p = LLVMIntSGT; break;
	case GBPF_JSGE: p = LLVMIntSGE; break;
	case GBPF_JSLT: p = LLVMIntSLT; break;
	case GBPF_JSLE: p = LLVMIntSLE; break;
	case GBPF_JSET:
		d = LLVMBuildAnd(cg->b, d, s, "");
		s = LLVMConstInt(ty, 0, 0);
		p = LLVMIntNE;
		break;
	default:
		return amd_fail(cg, pc, -EINVAL, "unknown jump operation 0x%02x", in->code);
	}
	c = LLVMBuildICmp(cg->b, p, d, s, "");
	fall = cg->bbs[pc + 1];
	LLVMBuildCondBr(cg->b, c, cg->bbs[t], fall);
	return 0;
}

/* Call subprogram f with r1..r5; propagate a gpu exit helper call from it. */
LLVMValueRef amd_call_local(struct amd_cg *cg, size_t f)
{
	LLVMValueRef args[6], r0, flag, c;
	LLVMBasicBlockRef cont, out;
	unsigned i;

	for (i = 0; i < 5; i++)
		args[i] = amd_reg(cg, i + 1);
	args[5] = cg->exited;
	r0 = LLVMBuildCall2(cg->b, cg->sub_ty, cg->funcs[f].fn, args, 6, "");
	amd_set_reg(cg, 0, r0);
	flag = LLVMBuildLoad2(cg->b, cg->i8, cg->exited, "");
	c = LLVMBuildICmp(cg->b, LLVMIntNE, flag, LLVMConstInt(cg->i8, 0, 0), "");
	cont = amd_new_bb(cg, "after_call");
	out = amd_new_bb(cg, "unwind");
	LLVMBuildCondBr(cg->b, c, out, cont);
	LLVMPositionBuilderAtEnd(cg->b, out);
	amd_set_reg(cg, 0, amd_const64(cg, 0));
	amd_ret_from_func(cg);
	LLVMPositionBuilderAtEnd(cg->b, cont);
	return r0;
}

static int emit_call(struct amd_cg *cg, size_t pc, const struct gbpf_insn *in)
{
	if (in->code == GBPF_OP_CALLX)
		return amd_emit_callx(cg, pc, in->dst);
	if (in->src == GBPF_CALL_LOCAL) {
		long f = amd_func_at(cg, (size_t)((long long)pc + 1 + in->imm));

		if (f < 0)
			return amd_fail(cg, pc, -EINVAL, "local call does not reach a subprogram");
		amd_call_local(cg, (size_t)f);
		return 0;
	}
	if (in->src != GBPF_CALL_HELPER)
		return amd_fail(cg, pc, -ENOTSUP, "call with source tag %u (kfunc) is not supported",
				in->src);
	return amd_emit_helper(cg, pc, (uint32_t)in->imm);
}

static int emit_one(struct amd_cg *cg, size_t pc, const struct gbpf_insn *in)
{
	switch (GBPF_CLASS(in->code)) {
	case GBPF_LD:
		if (in->code != GBPF_OP_LDDW)
			return amd_fail(cg, pc, -ENOTSUP, "legacy packet load 0x%02x", in->code);
		return emit_lddw(cg, pc, in);
	case GBPF_LDX:
		if (GBPF_MODE(in->code) != GBPF_MEM && GBPF_MODE(in->code) != GBPF_MEMSX)
			return amd_fail(cg, pc, -EINVAL, "bad load mode 0x%02x", in->code);
		return emit_ldx(cg, pc, in);
	case GBPF_ST:
		if (GBPF_MODE(in->code) != GBPF_MEM)
			return amd_fail(cg, pc, -EINVAL, "bad store mode 0x%02x", in->code);
		return emit_store(cg, in, amd_const64(cg, (uint64_t)(int64_t)in->imm));
	case GBPF_STX:
		if (GBPF_MODE(in->code) == GBPF_ATOMIC)
			return emit_atomic(cg, pc, in);
		if (GBPF_MODE(in->code) != GBPF_MEM)
			return amd_fail(cg, pc, -EINVAL, "bad store mode 0x%02x", in->code);
		return emit_store(cg, in, amd_reg(cg, in->src));
	case GBPF_ALU:
	case GBPF_ALU64:
		return emit_alu(cg, pc, in);
	default: /* JMP, JMP32 */
		if (in->code == GBPF_OP_EXIT) {
			amd_ret_from_func(cg);
			return 0;
		}
		if (GBPF_OP(in->code) == GBPF_CALL && GBPF_CLASS(in->code) == GBPF_JMP)
			return emit_call(cg, pc, in);
		return emit_jump(cg, pc, in);
	}
}

/* True when control cannot fall from pc into pc + 1. */
static int ends_block(const struct gbpf_insn *in)
{
	uint8_t cls = GBPF_CLASS(in->code);

	if (cls != GBPF_JMP && cls != GBPF_JMP32)
		return 0;
	if (GBPF_OP(in->code) == GBPF_CALL && cls == GBPF_JMP)
		return 0;
	return 1; /* exit, ja, conditional (both edges are explicit) */
}

int amd_emit_body(struct amd_cg *cg, const struct amd_func *fn)
{
	size_t pc;
	int rc, open = 1;

	for (pc = fn->start; pc < fn->end; pc++) {
		const struct gbpf_insn *in = &cg->insns[pc];

		if (cg->bbs[pc]) {
			if (open)
				LLVMBuildBr(cg->b, cg->bbs[pc]);
			LLVMPositionBuilderAtEnd(cg->b, cg->bbs[pc]);
			open = 1;
		} else if (!open) {
			/* unreachable code after a terminator: give it a block of its own */
			LLVMPositionBuilderAtEnd(cg->b, amd_new_bb(cg, "dead"));
			open = 1;
		}
		rc = emit_one(cg, pc, in);
		if (rc)
			return rc;
		if (ends_block(in))
			open = 0;
		if (gbpf_insn_is_wide(in))
			pc++;
	}
	if (open) /* falling off the end: the verifier rejects it; make it a return */
		amd_ret_from_func(cg);
	return 0;
}
