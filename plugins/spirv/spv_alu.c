/* SPDX-License-Identifier: MIT */
/*
 * plugins/spirv/spv_alu.c - ALU32/64, byte swaps, loads and stores
 * (sign-extending too), atomics and jump conditions in SPIR-V.
 *
 * Registers are Function variables of type ulong: every read is an OpLoad
 * and every write an OpStore, which the device compiler turns into SSA
 * (mem2reg). 32-bit operations work on the truncated value and zero-extend.
 */
#include <errno.h>

#include <gbpf/insn.h>

#include "spv_internal.h"

uint32_t spv_rd(struct spv_cg *cg, unsigned r)
{
	return spv_load(cg->m, cg->m->t_u64, cg->reg[r], 8);
}

void spv_wr(struct spv_cg *cg, unsigned r, uint32_t v)
{
	spv_store(cg->m, cg->reg[r], v, 8);
}

static uint32_t trunc32(struct spv_mod *m, uint32_t v)
{
	return spv_un(m, SpvOpUConvert, m->t_u32, v);
}

static uint32_t zext64(struct spv_mod *m, uint32_t v)
{
	return spv_un(m, SpvOpUConvert, m->t_u64, v);
}

/* Sign-extend the low @p bits of v (of type @p t, 32 or 64 wide) to t. */
static uint32_t sext_low(struct spv_mod *m, uint32_t t, uint32_t v, uint32_t bits)
{
	uint32_t nt = spv_type_int(m, bits);
	uint32_t lo = spv_un(m, SpvOpUConvert, nt, v);

	return spv_un(m, SpvOpSConvert, t, lo);
}

static uint32_t bswap(struct spv_mod *m, uint32_t v, uint32_t bits)
{
	uint32_t t = m->t_u64, r = 0;
	uint32_t i;

	/* byte i moves to byte bits/8-1-i: shift right, mask, shift left, or */
	for (i = 0; i < bits / 8; i++) {
		uint32_t b = spv_bin(m, SpvOpShiftRightLogical, t, v, spv_c64(m, 8 * i));

		b = spv_bin(m, SpvOpBitwiseAnd, t, b, spv_c64(m, 0xff));
		b = spv_bin(m, SpvOpShiftLeftLogical, t, b, spv_c64(m, bits - 8 - 8 * i));
		r = r ? spv_bin(m, SpvOpBitwiseOr, t, r, b) : b;
	}
	return r;
}

/* div/mod with eBPF's rules: x/0 = 0, x%0 = x, INT_MIN/-1 = INT_MIN, INT_MIN%-1 = 0. */
static uint32_t divmod(struct spv_mod *m, uint32_t t, uint8_t op, int is_signed, uint32_t a,
		       uint32_t b)
{
	uint32_t zero = spv_const(m, t, 0), one = spv_const(m, t, 1);
	uint32_t isz = spv_bin(m, SpvOpIEqual, m->t_bool, b, zero), safe, q;

	if (!is_signed) {
		safe = spv_select(m, t, isz, one, b);
		if (op == GBPF_DIV) {
			q = spv_bin(m, SpvOpUDiv, t, a, safe);
			return spv_select(m, t, isz, zero, q);
		}
		q = spv_bin(m, SpvOpUMod, t, a, safe);
		return spv_select(m, t, isz, a, q);
	} else {
		uint32_t m1 = spv_const(m, t, t == m->t_u64 ? ~0ull : 0xffffffffull);
		uint32_t ism1 = spv_bin(m, SpvOpIEqual, m->t_bool, b, m1);
		uint32_t bad = spv_bin(m, SpvOpLogicalOr, m->t_bool, isz, ism1);

		safe = spv_select(m, t, bad, one, b);
		if (op == GBPF_DIV) {
			q = spv_bin(m, SpvOpSDiv, t, a, safe);
			q = spv_select(m, t, ism1, spv_un(m, SpvOpSNegate, t, a), q);
			return spv_select(m, t, isz, zero, q);
		}
		q = spv_bin(m, SpvOpSRem, t, a, safe);
		q = spv_select(m, t, ism1, zero, q);
		return spv_select(m, t, isz, a, q);
	}
}

static int emit_alu(struct spv_cg *cg, size_t pc)
{
	const struct gbpf_insn *in = &cg->insns[pc];
	struct spv_mod *m = cg->m;
	int is64 = GBPF_CLASS(in->code) == GBPF_ALU64;
	uint8_t op = GBPF_OP(in->code);
	uint32_t t = is64 ? m->t_u64 : m->t_u32;
	uint32_t a, b, r = 0, mask;

	if (in->dst == 10)
		return spv_fail(cg, pc, -EINVAL, "write to r10");
	if (op == GBPF_END) {
		uint32_t v = spv_rd(cg, in->dst), bits = (uint32_t)in->imm;

		if (bits != 16 && bits != 32 && bits != 64)
			return spv_fail(cg, pc, -EINVAL, "byte swap width %d", in->imm);
		if (is64 || GBPF_SRC(in->code) == GBPF_TO_BE)
			v = bswap(m, v, bits);
		if (bits < 64)
			v = spv_bin(m, SpvOpBitwiseAnd, m->t_u64, v,
				    spv_c64(m, bits == 16 ? 0xffffull : 0xffffffffull));
		spv_wr(cg, in->dst, v);
		return 0;
	}
	a = spv_rd(cg, in->dst);
	if (GBPF_SRC(in->code) == GBPF_X)
		b = spv_rd(cg, in->src);
	else
		b = spv_c64(m, (uint64_t)(int64_t)in->imm);
	if (!is64) {
		a = trunc32(m, a);
		b = GBPF_SRC(in->code) == GBPF_X ? trunc32(m, b) : spv_c32(m, (uint32_t)in->imm);
	}
	mask = spv_const(m, t, is64 ? 63 : 31);
	switch (op) {
	case GBPF_ADD: r = spv_bin(m, SpvOpIAdd, t, a, b); break;
	case GBPF_SUB: r = spv_bin(m, SpvOpISub, t, a, b); break;
	case GBPF_MUL: r = spv_bin(m, SpvOpIMul, t, a, b); break;
	case GBPF_OR: r = spv_bin(m, SpvOpBitwiseOr, t, a, b); break;
	case GBPF_AND: r = spv_bin(m, SpvOpBitwiseAnd, t, a, b); break;
	case GBPF_XOR: r = spv_bin(m, SpvOpBitwiseXor, t, a, b); break;
	case GBPF_NEG: r = spv_un(m, SpvOpSNegate, t, a); break;
	/* shift counts are masked as on every eBPF implementation; SPIR-V leaves
	 * counts >= width undefined */
	case GBPF_LSH:
		r = spv_bin(m, SpvOpShiftLeftLogical, t, a, spv_bin(m, SpvOpBitwiseAnd, t, b, mask));
		break;
	case GBPF_RSH:
		r = spv_bin(m, SpvOpShiftRightLogical, t, a, spv_bin(m, SpvOpBitwiseAnd, t, b, mask));
		break;
	case GBPF_ARSH:
		r = spv_bin(m, SpvOpShiftRightArithmetic, t, a,
			    spv_bin(m, SpvOpBitwiseAnd, t, b, mask));
		break;
	case GBPF_DIV:
	case GBPF_MOD:
		if (in->off != 0 && in->off != 1)
			return spv_fail(cg, pc, -EINVAL, "bad offset %d of div/mod", in->off);
		r = divmod(m, t, op, in->off == 1, a, b);
		break;
	case GBPF_MOV:
		if (in->off == 0)
			r = b;
		else if (GBPF_SRC(in->code) == GBPF_X &&
			 (in->off == 8 || in->off == 16 || (is64 && in->off == 32)))
			r = sext_low(m, t, b, (uint32_t)in->off);
		else
			return spv_fail(cg, pc, -EINVAL, "bad sign-extending move offset %d", in->off);
		break;
	default:
		return spv_fail(cg, pc, -EINVAL, "unknown ALU opcode 0x%02x", in->code);
	}
	if (!is64)
		r = zext64(m, r);
	spv_wr(cg, in->dst, r);
	return 0;
}

static uint32_t size_bits(uint8_t code)
{
	switch (GBPF_SIZE(code)) {
	case GBPF_B: return 8;
	case GBPF_H: return 16;
	case GBPF_W: return 32;
	default: return 64;
	}
}

static uint32_t mem_addr(struct spv_cg *cg, unsigned base, int16_t off)
{
	return spv_addk(cg->m, spv_rd(cg, base), (uint64_t)(int64_t)off);
}

static int emit_atomic(struct spv_cg *cg, size_t pc)
{
	const struct gbpf_insn *in = &cg->insns[pc];
	struct spv_mod *m = cg->m;
	uint32_t bits = size_bits(in->code), t, addr, v, old = 0, op;
	int fetch = in->imm & GBPF_FETCH;

	if (bits != 32 && bits != 64)
		return spv_fail(cg, pc, -EINVAL, "atomic of %u bits", bits);
	t = bits == 64 ? m->t_u64 : m->t_u32;
	addr = mem_addr(cg, in->dst, in->off);
	v = spv_rd(cg, in->src);
	if (bits == 32)
		v = trunc32(m, v);
	switch (in->imm) {
	case GBPF_ATOMIC_ADD:
	case GBPF_ATOMIC_ADD | GBPF_FETCH: op = SpvOpAtomicIAdd; break;
	case GBPF_ATOMIC_OR:
	case GBPF_ATOMIC_OR | GBPF_FETCH: op = SpvOpAtomicOr; break;
	case GBPF_ATOMIC_AND:
	case GBPF_ATOMIC_AND | GBPF_FETCH: op = SpvOpAtomicAnd; break;
	case GBPF_ATOMIC_XOR:
	case GBPF_ATOMIC_XOR | GBPF_FETCH: op = SpvOpAtomicXor; break;
	case GBPF_ATOMIC_XCHG: op = SpvOpAtomicExchange; break;
	case GBPF_ATOMIC_CMPXCHG: {
		uint32_t cmp = spv_rd(cg, 0);

		if (bits == 32)
			cmp = trunc32(m, cmp);
		old = spv_atomic_cas(m, bits, addr, v, cmp);
		spv_wr(cg, 0, bits == 32 ? zext64(m, old) : old);
		return 0;
	}
	default:
		return spv_fail(cg, pc, -EINVAL, "unknown atomic operation 0x%x", in->imm);
	}
	(void)t;
	old = spv_atomic(m, op, bits, addr, v);
	if (fetch)
		spv_wr(cg, in->src, bits == 32 ? zext64(m, old) : old);
	return 0;
}

static int emit_lddw(struct spv_cg *cg, size_t pc)
{
	const struct gbpf_insn *in = &cg->insns[pc];
	struct spv_mod *m = cg->m;
	uint64_t imm = (uint32_t)in[0].imm | ((uint64_t)(uint32_t)in[1].imm << 32);
	uint32_t v;

	switch (in->src) {
	case 0:
		v = spv_c64(m, imm);
		break;
	case GBPF_PSEUDO_MAP_IDX:
	case GBPF_PSEUDO_MAP_IDX_VALUE: {
		uint32_t idx = (uint32_t)in[0].imm;

		if (idx >= cg->prog->map_cnt || idx >= GBPF_SPIRV_MAX_MAPS)
			return spv_fail(cg, pc, -EINVAL, "map index %u out of range (%zu maps, at most %u)",
					idx, cg->prog->map_cnt, GBPF_SPIRV_MAX_MAPS);
		/* map addresses come from the context table at run time */
		v = spv_ld64(m, spv_table(cg->g),
			     offsetof(struct gbpf_spirv_ctx_table, maps) + 8ull * idx);
		if (in->src == GBPF_PSEUDO_MAP_IDX_VALUE) {
			uint32_t data_off = spv_ld64(m, v, 56);

			v = spv_addk(m, spv_add64(m, v, data_off), (uint32_t)in[1].imm);
		}
		break;
	}
	case GBPF_PSEUDO_FUNC: {
		size_t t = (size_t)((long long)pc + 1 + in->imm), f;

		for (f = 1; f < cg->nfuncs; f++)
			if (cg->funcs[f].start == t)
				break;
		if (f >= cg->nfuncs)
			return spv_fail(cg, pc, -EINVAL, "function address %zu is not a subprogram", t);
		v = spv_c64(m, SPV_FUNC_TAG | f);
		break;
	}
	default:
		return spv_fail(cg, pc, -ENOTSUP, "wide load with source tag %u", in->src);
	}
	spv_wr(cg, in->dst, v);
	return 0;
}

int spv_emit_insn(struct spv_cg *cg, size_t pc)
{
	const struct gbpf_insn *in = &cg->insns[pc];
	struct spv_mod *m = cg->m;
	uint32_t bits = size_bits(in->code), t = spv_type_int(m, bits), v, addr;

	switch (GBPF_CLASS(in->code)) {
	case GBPF_ALU:
	case GBPF_ALU64:
		return emit_alu(cg, pc);
	case GBPF_LD:
		if (in->code != GBPF_OP_LDDW)
			return spv_fail(cg, pc, -ENOTSUP, "legacy packet load 0x%02x", in->code);
		if (in->dst == 10)
			return spv_fail(cg, pc, -EINVAL, "write to r10");
		return emit_lddw(cg, pc);
	case GBPF_LDX:
		if (in->dst == 10)
			return spv_fail(cg, pc, -EINVAL, "write to r10");
		if (GBPF_MODE(in->code) != GBPF_MEM && GBPF_MODE(in->code) != GBPF_MEMSX)
			return spv_fail(cg, pc, -EINVAL, "bad load mode 0x%02x", in->code);
		addr = mem_addr(cg, in->src, in->off);
		v = spv_load(m, t, spv_addr_ptr(m, t, addr), bits / 8);
		if (bits < 64)
			v = spv_un(m, GBPF_MODE(in->code) == GBPF_MEMSX ? SpvOpSConvert : SpvOpUConvert,
				   m->t_u64, v);
		else if (GBPF_MODE(in->code) == GBPF_MEMSX)
			return spv_fail(cg, pc, -EINVAL, "sign-extending 64-bit load");
		spv_wr(cg, in->dst, v);
		return 0;
	case GBPF_ST:
	case GBPF_STX:
		if (GBPF_CLASS(in->code) == GBPF_STX && GBPF_MODE(in->code) == GBPF_ATOMIC)
			return emit_atomic(cg, pc);
		if (GBPF_MODE(in->code) != GBPF_MEM)
			return spv_fail(cg, pc, -EINVAL, "bad store mode 0x%02x", in->code);
		addr = mem_addr(cg, in->dst, in->off);
		if (GBPF_CLASS(in->code) == GBPF_STX)
			v = spv_rd(cg, in->src);
		else
			v = spv_c64(m, (uint64_t)(int64_t)in->imm);
		if (bits < 64)
			v = spv_un(m, SpvOpUConvert, t, v);
		spv_store(m, spv_addr_ptr(m, t, addr), v, bits / 8);
		return 0;
	default:
		return spv_fail(cg, pc, -EINVAL, "unexpected opcode 0x%02x", in->code);
	}
}

uint32_t spv_jump_cond(struct spv_cg *cg, size_t pc)
{
	const struct gbpf_insn *in = &cg->insns[pc];
	struct spv_mod *m = cg->m;
	int is32 = GBPF_CLASS(in->code) == GBPF_JMP32;
	uint32_t t = is32 ? m->t_u32 : m->t_u64, a, b, op;

	a = spv_rd(cg, in->dst);
	if (GBPF_SRC(in->code) == GBPF_X)
		b = spv_rd(cg, in->src);
	else
		b = spv_c64(m, (uint64_t)(int64_t)in->imm);
	if (is32) {
		a = trunc32(m, a);
		b = GBPF_SRC(in->code) == GBPF_X ? trunc32(m, b) : spv_c32(m, (uint32_t)in->imm);
	}
	switch (GBPF_OP(in->code)) {
	case GBPF_JEQ: op = SpvOpIEqual; break;
	case GBPF_JNE: op = SpvOpINotEqual; break;
	case GBPF_JGT: op = SpvOpUGreaterThan; break;
	case GBPF_JGE: op = SpvOpUGreaterThanEqual; break;
	case GBPF_JLT: op = SpvOpULessThan; break;
	case GBPF_JLE: op = SpvOpULessThanEqual; break;
	case GBPF_JSGT: op = SpvOpSGreaterThan; break;
	case GBPF_JSGE: op = SpvOpSGreaterThanEqual; break;
	case GBPF_JSLT: op = SpvOpSLessThan; break;
	case GBPF_JSLE: op = SpvOpSLessThanEqual; break;
	case GBPF_JSET: {
		uint32_t x = spv_bin(m, SpvOpBitwiseAnd, t, a, b);

		return spv_bin(m, SpvOpINotEqual, m->t_bool, x, spv_const(m, t, 0));
	}
	default:
		return 0;
	}
	return spv_bin(m, op, m->t_bool, a, b);
}
