/* SPDX-License-Identifier: MIT */
/*
 * core/isa/tables.c - names of operations and the per-instruction encoding
 * rules. The assembler, the disassembler and the checker all go through
 * here so that a name or a rule exists exactly once.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "isa_internal.h"

static const char *const alu_names[16] = {
	"add", "sub", "mul", "div", "or", "and", "lsh", "rsh",
	"neg", "mod", "xor", "mov", "arsh", NULL, NULL, NULL,
};

static const char *const jmp_names[16] = {
	"ja", "jeq", "jgt", "jge", "jset", "jne", "jsgt", "jsge",
	NULL, NULL, "jlt", "jle", "jslt", "jsle", NULL, NULL,
};

static const char *const size_names[4] = {"w", "h", "b", "dw"};
static const unsigned size_bytes[4] = {4, 2, 1, 8};

const char *gbpf_isa_alu_name(unsigned op_index)
{
	return op_index < 16 ? alu_names[op_index] : NULL;
}

const char *gbpf_isa_jmp_name(unsigned op_index)
{
	return op_index < 16 ? jmp_names[op_index] : NULL;
}

const char *gbpf_isa_size_name(unsigned size_index)
{
	return size_names[size_index & 3];
}

unsigned gbpf_isa_size_bytes(unsigned size_index)
{
	return size_bytes[size_index & 3];
}

const char *gbpf_isa_atomic_name(int32_t imm)
{
	switch (imm) {
	case GBPF_ATOMIC_ADD:
	case GBPF_ATOMIC_ADD | GBPF_FETCH:
		return "add";
	case GBPF_ATOMIC_OR:
	case GBPF_ATOMIC_OR | GBPF_FETCH:
		return "or";
	case GBPF_ATOMIC_AND:
	case GBPF_ATOMIC_AND | GBPF_FETCH:
		return "and";
	case GBPF_ATOMIC_XOR:
	case GBPF_ATOMIC_XOR | GBPF_FETCH:
		return "xor";
	case GBPF_ATOMIC_XCHG:
		return "xchg";
	case GBPF_ATOMIC_CMPXCHG:
		return "cmpxchg";
	default:
		return NULL;
	}
}

int gbpf_isa_atomic_valid(int32_t imm, unsigned size)
{
	if (size != GBPF_W && size != GBPF_DW)
		return 0;
	return gbpf_isa_atomic_name(imm) != NULL;
}

int gbpf_isa_appendf(char *buf, size_t size, size_t *pos, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*pos >= size)
		return -ENOSPC;
	va_start(ap, fmt);
	n = vsnprintf(buf + *pos, size - *pos, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -EINVAL;
	if ((size_t)n >= size - *pos) {
		*pos = size;
		return -ENOSPC;
	}
	*pos += (size_t)n;
	return 0;
}

static const char *alu_invalid(const struct gbpf_insn *in, int is64)
{
	unsigned op = GBPF_OP(in->code);
	int x = GBPF_SRC(in->code) == GBPF_X;

	if (op > GBPF_END)
		return "unknown ALU operation";
	if (in->dst > 10)
		return "invalid destination register";
	if (in->dst == 10)
		return "r10 is read-only and cannot be a destination";
	if (op == GBPF_NEG) {
		if (x)
			return "unknown opcode (neg has no register source form)";
		if (in->src)
			return "unused src field must be 0";
		if (in->off)
			return "unused offset field must be 0";
		if (in->imm)
			return "unused imm field must be 0";
		return NULL;
	}
	if (op == GBPF_END) {
		if (is64 && x)
			return "unknown opcode (ALU64 byte swap has no X form)";
		if (in->src)
			return "unused src field must be 0";
		if (in->off)
			return "unused offset field must be 0";
		if (in->imm != 16 && in->imm != 32 && in->imm != 64)
			return "byte swap width must be 16, 32 or 64";
		return NULL;
	}
	if (x) {
		if (in->src > 10)
			return "invalid source register";
		if (in->imm)
			return "unused imm field must be 0";
	} else if (in->src) {
		return "unused src field must be 0";
	}
	if (in->off == 0)
		return NULL;
	if ((op == GBPF_DIV || op == GBPF_MOD) && in->off == 1)
		return NULL;
	if (op == GBPF_MOV && x && (in->off == 8 || in->off == 16 || (is64 && in->off == 32)))
		return NULL;
	if (op == GBPF_MOV)
		return x ? "invalid sign-extension width in offset (8, 16 or 32 for 64-bit)"
			 : "unused offset field must be 0";
	if (op == GBPF_DIV || op == GBPF_MOD)
		return "offset of div/mod must be 0 (unsigned) or 1 (signed)";
	return "unused offset field must be 0";
}

static const char *jmp_invalid(const struct gbpf_insn *in, int is32)
{
	unsigned op = GBPF_OP(in->code);
	int x = GBPF_SRC(in->code) == GBPF_X;

	switch (op) {
	case GBPF_JA:
		if (x)
			return "unknown opcode (ja has no register form)";
		if (in->dst)
			return "unused dst field must be 0";
		if (in->src)
			return "unused src field must be 0";
		if (is32 && in->off)
			return "unused offset field of gotol must be 0";
		if (!is32 && in->imm)
			return "unused imm field must be 0";
		return NULL;
	case GBPF_CALL:
		if (is32)
			return "unknown opcode (call in JMP32 class)";
		if (in->off)
			return "unused offset field must be 0";
		if (x) {
			if (in->src)
				return "unused src field must be 0";
			if (in->imm)
				return "unused imm field must be 0";
			if (in->dst > 10)
				return "invalid register of callx";
			return NULL;
		}
		if (in->dst)
			return "unused dst field must be 0";
		if (in->src == GBPF_CALL_KFUNC)
			return "kfunc calls are kernel-only";
		if (in->src != GBPF_CALL_HELPER && in->src != GBPF_CALL_LOCAL)
			return "unknown call kind in src field";
		if (in->src == GBPF_CALL_HELPER && in->imm < 0)
			return "negative helper id";
		return NULL;
	case GBPF_EXIT:
		if (is32 || x)
			return "unknown opcode (exit exists only as JMP|K)";
		if (in->dst || in->src || in->off || in->imm)
			return "unused fields of exit must be 0";
		return NULL;
	case 0xe0:
	case 0xf0:
		return "unknown jump operation";
	default:
		if (in->dst > 10)
			return "invalid register";
		if (x) {
			if (in->src > 10)
				return "invalid source register";
			if (in->imm)
				return "unused imm field must be 0";
		} else if (in->src) {
			return "unused src field must be 0";
		}
		return NULL;
	}
}

static const char *ld_invalid(const struct gbpf_insn *in, size_t avail)
{
	const struct gbpf_insn *next = in + 1;

	if (GBPF_MODE(in->code) == GBPF_ABS || GBPF_MODE(in->code) == GBPF_IND)
		return "legacy packet access (ABS/IND) is not supported";
	if (in->code != GBPF_OP_LDDW)
		return "unknown opcode";
	if (avail < 2)
		return "wide load is missing its second slot";
	if (in->dst > 10)
		return "invalid destination register";
	if (in->dst == 10)
		return "r10 is read-only and cannot be a destination";
	if (in->off)
		return "unused offset field must be 0";
	switch (in->src) {
	case 0:
	case GBPF_PSEUDO_MAP_IDX_VALUE:
		break;
	case GBPF_PSEUDO_MAP_IDX:
	case GBPF_PSEUDO_FUNC:
		if (next->imm)
			return "second slot imm must be 0 for this wide load";
		break;
	case GBPF_PSEUDO_MAP_FD:
	case GBPF_PSEUDO_MAP_VALUE:
		return "map fd reference (Linux-only): maps must be referenced by index";
	case GBPF_PSEUDO_BTF_ID:
		return "kernel BTF variable reference is not supported";
	default:
		return "unknown pseudo source of wide load";
	}
	if (next->code || next->dst || next->src || next->off)
		return "malformed second slot of wide load (only imm may be set)";
	return NULL;
}

static const char *mem_invalid(const struct gbpf_insn *in)
{
	unsigned cls = GBPF_CLASS(in->code);
	unsigned mode = GBPF_MODE(in->code);
	unsigned size = GBPF_SIZE(in->code);

	if (in->dst > 10 || in->src > 10)
		return "invalid register";
	switch (cls) {
	case GBPF_LDX:
		if (mode != GBPF_MEM && !(mode == GBPF_MEMSX && size != GBPF_DW))
			return "unknown opcode (load mode)";
		if (in->dst == 10)
			return "r10 is read-only and cannot be a destination";
		if (in->imm)
			return "unused imm field must be 0";
		return NULL;
	case GBPF_ST:
		if (mode != GBPF_MEM)
			return "unknown opcode (store mode)";
		if (in->src)
			return "unused src field must be 0";
		return NULL;
	default: /* STX */
		if (mode == GBPF_MEM) {
			if (in->imm)
				return "unused imm field must be 0";
			return NULL;
		}
		if (mode != GBPF_ATOMIC)
			return "unknown opcode (store mode)";
		if (size != GBPF_W && size != GBPF_DW)
			return "atomic operations exist only for 32 and 64 bits";
		if (!gbpf_isa_atomic_valid(in->imm, size))
			return "unknown atomic operation in imm";
		if ((in->imm & GBPF_FETCH) && in->src == 10)
			return "r10 is read-only and cannot receive a fetched value";
		return NULL;
	}
}

const char *gbpf_isa_insn_invalid(const struct gbpf_insn *insn, size_t avail)
{
	if (avail == 0)
		return "missing instruction";
	switch (GBPF_CLASS(insn->code)) {
	case GBPF_ALU:
		return alu_invalid(insn, 0);
	case GBPF_ALU64:
		return alu_invalid(insn, 1);
	case GBPF_JMP:
		return jmp_invalid(insn, 0);
	case GBPF_JMP32:
		return jmp_invalid(insn, 1);
	case GBPF_LD:
		return ld_invalid(insn, avail);
	default:
		return mem_invalid(insn);
	}
}
