/* SPDX-License-Identifier: MIT */
/*
 * core/isa/disasm.c - instructions to the text gbpf_asm() reads.
 *
 * Only encodings the checker accepts get a text form: printing an invalid
 * instruction as its "intended" meaning would lose the reserved bits and
 * break the round trip asm(disasm(x)) == x.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <gbpf/asm.h>

#include "isa_internal.h"

static int disasm_alu(const struct gbpf_insn *in, char *buf, size_t size, size_t *pos)
{
	int is32 = GBPF_CLASS(in->code) == GBPF_ALU;
	unsigned op = GBPF_OP(in->code);
	const char *sfx = is32 ? "32" : "";
	const char *name;

	if (op == GBPF_END) {
		const char *kind = !is32 ? "bswap" : (GBPF_SRC(in->code) == GBPF_TO_BE ? "be" : "le");

		return gbpf_isa_appendf(buf, size, pos, "%s%d %%r%u", kind, (int)in->imm,
					(unsigned)in->dst);
	}
	if (op == GBPF_NEG)
		return gbpf_isa_appendf(buf, size, pos, "neg%s %%r%u", sfx, (unsigned)in->dst);
	if (op == GBPF_MOV && in->off)
		return gbpf_isa_appendf(buf, size, pos, "movsx%d%s %%r%u, %%r%u", in->off,
					is32 ? "32" : "64", (unsigned)in->dst, (unsigned)in->src);
	name = gbpf_isa_alu_name(op >> 4);
	if (op == GBPF_DIV && in->off == 1)
		name = "sdiv";
	else if (op == GBPF_MOD && in->off == 1)
		name = "smod";
	if (GBPF_SRC(in->code) == GBPF_X)
		return gbpf_isa_appendf(buf, size, pos, "%s%s %%r%u, %%r%u", name, sfx,
					(unsigned)in->dst, (unsigned)in->src);
	return gbpf_isa_appendf(buf, size, pos, "%s%s %%r%u, %d", name, sfx, (unsigned)in->dst,
				(int)in->imm);
}

static int disasm_jmp(const struct gbpf_insn *in, char *buf, size_t size, size_t *pos)
{
	int is32 = GBPF_CLASS(in->code) == GBPF_JMP32;
	unsigned op = GBPF_OP(in->code);
	const char *sfx = is32 ? "32" : "";

	switch (op) {
	case GBPF_JA:
		if (is32)
			return gbpf_isa_appendf(buf, size, pos, "ja32 %+d", (int)in->imm);
		return gbpf_isa_appendf(buf, size, pos, "ja %+d", (int)in->off);
	case GBPF_EXIT:
		return gbpf_isa_appendf(buf, size, pos, "exit");
	case GBPF_CALL:
		if (GBPF_SRC(in->code) == GBPF_X)
			return gbpf_isa_appendf(buf, size, pos, "call %%r%u", (unsigned)in->dst);
		if (in->src == GBPF_CALL_LOCAL)
			return gbpf_isa_appendf(buf, size, pos, "call local %+d", (int)in->imm);
		return gbpf_isa_appendf(buf, size, pos, "call %d", (int)in->imm);
	default:
		break;
	}
	if (GBPF_SRC(in->code) == GBPF_X)
		return gbpf_isa_appendf(buf, size, pos, "%s%s %%r%u, %%r%u, %+d",
					gbpf_isa_jmp_name(op >> 4), sfx, (unsigned)in->dst,
					(unsigned)in->src, (int)in->off);
	return gbpf_isa_appendf(buf, size, pos, "%s%s %%r%u, %d, %+d", gbpf_isa_jmp_name(op >> 4),
				sfx, (unsigned)in->dst, (int)in->imm, (int)in->off);
}

static int disasm_lddw(const struct gbpf_insn *in, char *buf, size_t size, size_t *pos)
{
	uint64_t v = (uint64_t)(uint32_t)in[0].imm | ((uint64_t)(uint32_t)in[1].imm << 32);

	switch (in->src) {
	case GBPF_PSEUDO_MAP_IDX:
		return gbpf_isa_appendf(buf, size, pos, "lddw %%r%u, map[%d]", (unsigned)in->dst,
					(int)in->imm);
	case GBPF_PSEUDO_MAP_IDX_VALUE:
		return gbpf_isa_appendf(buf, size, pos, "lddw %%r%u, map_value[%d]%+d",
					(unsigned)in->dst, (int)in[0].imm, (int)in[1].imm);
	case GBPF_PSEUDO_FUNC:
		return gbpf_isa_appendf(buf, size, pos, "lddw %%r%u, func %+d", (unsigned)in->dst,
					(int)in->imm);
	default:
		return gbpf_isa_appendf(buf, size, pos, "lddw %%r%u, 0x%llx", (unsigned)in->dst,
					(unsigned long long)v);
	}
}

static int disasm_mem(const struct gbpf_insn *in, char *buf, size_t size, size_t *pos)
{
	unsigned sz = GBPF_SIZE(in->code) >> 3;
	const char *sn = gbpf_isa_size_name(sz);
	unsigned d = in->dst, s = in->src;
	int off = in->off;

	switch (GBPF_CLASS(in->code)) {
	case GBPF_LDX:
		return gbpf_isa_appendf(buf, size, pos, "ldx%s%s %%r%u, [%%r%u%+d]",
					GBPF_MODE(in->code) == GBPF_MEMSX ? "s" : "", sn, d, s, off);
	case GBPF_ST:
		return gbpf_isa_appendf(buf, size, pos, "st%s [%%r%u%+d], %d", sn, d, off,
					(int)in->imm);
	default:
		break;
	}
	if (GBPF_MODE(in->code) == GBPF_MEM)
		return gbpf_isa_appendf(buf, size, pos, "stx%s [%%r%u%+d], %%r%u", sn, d, off, s);
	/* xchg and cmpxchg always fetch; their name says so already. */
	return gbpf_isa_appendf(buf, size, pos, "lock %s%s%s [%%r%u%+d], %%r%u",
				(in->imm & GBPF_FETCH) && in->imm != GBPF_ATOMIC_XCHG &&
						in->imm != GBPF_ATOMIC_CMPXCHG
					? "fetch "
					: "",
				gbpf_isa_atomic_name(in->imm),
				GBPF_SIZE(in->code) == GBPF_W ? "32" : "", d, off, s);
}

int gbpf_disasm_insn(const struct gbpf_insn *insn, size_t avail_slots, char *buf, size_t size)
{
	size_t pos = 0;
	int err;

	if (!insn || !buf || size == 0 || avail_slots == 0)
		return -EINVAL;
	buf[0] = '\0';
	if (gbpf_isa_insn_invalid(insn, avail_slots)) {
		const uint8_t *b = (const uint8_t *)insn;

		gbpf_isa_appendf(buf, size, &pos,
				 ".invalid %02x %02x %02x %02x %02x %02x %02x %02x", b[0], b[1],
				 b[2], b[3], b[4], b[5], b[6], b[7]);
		return -EINVAL;
	}
	switch (GBPF_CLASS(insn->code)) {
	case GBPF_ALU:
	case GBPF_ALU64:
		err = disasm_alu(insn, buf, size, &pos);
		break;
	case GBPF_JMP:
	case GBPF_JMP32:
		err = disasm_jmp(insn, buf, size, &pos);
		break;
	case GBPF_LD:
		err = disasm_lddw(insn, buf, size, &pos);
		if (!err)
			return 2;
		break;
	default:
		err = disasm_mem(insn, buf, size, &pos);
		break;
	}
	return err ? err : 1;
}

int gbpf_disasm(const struct gbpf_insn *insns, size_t insn_cnt, char **text)
{
	size_t cap = insn_cnt * 48 + 1, pos = 0, i = 0;
	char *out, line[96];
	int n;

	if (!insns || !text)
		return -EINVAL;
	if (insn_cnt > SIZE_MAX / 64)
		return -E2BIG;
	out = malloc(cap);
	if (!out)
		return -ENOMEM;
	out[0] = '\0';
	while (i < insn_cnt) {
		size_t len;

		n = gbpf_disasm_insn(insns + i, insn_cnt - i, line, sizeof(line));
		len = strlen(line);
		if (pos + len + 2 > cap) {
			char *grown;

			cap = (pos + len + 2) * 2;
			grown = realloc(out, cap);
			if (!grown) {
				free(out);
				return -ENOMEM;
			}
			out = grown;
		}
		memcpy(out + pos, line, len);
		pos += len;
		out[pos++] = '\n';
		out[pos] = '\0';
		if (n < 0) {
			*text = out;
			return n;
		}
		i += (size_t)n;
	}
	*text = out;
	return 0;
}
