/* SPDX-License-Identifier: MIT */
/*
 * tests/loader/loader_test_util.h - helpers shared by the loader tests:
 * reading test objects, finding sections of a (trusted, good) object so a
 * test can corrupt them, and a tiny evaluator that runs a linked program
 * far enough to check that calls were linked right.
 */
#ifndef GBPF_TESTS_LOADER_UTIL_H
#define GBPF_TESTS_LOADER_UTIL_H

#include <elf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gbpf/insn.h>
#include <gbpf/object.h>

static inline uint8_t *read_whole(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0) {
		buf = malloc((size_t)n);
		if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
			free(buf);
			buf = NULL;
		}
		*size = (size_t)n;
	}
	fclose(f);
	return buf;
}

/* Only ever used on good objects built by the test, so no validation here. */
static inline Elf64_Ehdr *eh_of(uint8_t *buf)
{
	return (Elf64_Ehdr *)buf;
}

static inline Elf64_Shdr *shdr_at(uint8_t *buf, size_t idx)
{
	return (Elf64_Shdr *)(buf + eh_of(buf)->e_shoff) + idx;
}

static inline const char *sec_name(uint8_t *buf, size_t idx)
{
	Elf64_Shdr *str = shdr_at(buf, eh_of(buf)->e_shstrndx);

	return (const char *)buf + str->sh_offset + shdr_at(buf, idx)->sh_name;
}

static inline int find_sec(uint8_t *buf, const char *name)
{
	size_t i;

	for (i = 0; i < eh_of(buf)->e_shnum; i++)
		if (strcmp(sec_name(buf, i), name) == 0)
			return (int)i;
	return -1;
}

static inline Elf64_Shdr *find_shdr(uint8_t *buf, const char *name)
{
	int i = find_sec(buf, name);

	return i < 0 ? NULL : shdr_at(buf, (size_t)i);
}

/*
 * Evaluate a linked program with r1 = @p r1 as far as the ALU, stack,
 * local-call and exit instructions go; helpers return 0 and wide loads load
 * 0 (a NULL map value). Returns 0 and the result in *ret, or -1 on an
 * instruction it does not know or a bad jump/call target.
 */
static inline int mini_eval(const struct gbpf_prog_desc *p, uint64_t r1, uint64_t *ret)
{
	uint64_t r[GBPF_REG_COUNT] = {0}, saved[GBPF_MAX_CALL_DEPTH + 1][5];
	uint8_t stack[(GBPF_MAX_CALL_DEPTH + 1) * GBPF_STACK_SIZE];
	size_t pc = 0, ret_pc[GBPF_MAX_CALL_DEPTH + 1];
	int depth = 0, steps = 0;

	r[1] = r1;
	r[10] = (uint64_t)(uintptr_t)(stack + GBPF_STACK_SIZE);
	while (steps++ < 100000) {
		const struct gbpf_insn *i;
		uint64_t src, *dst;

		if (pc >= p->insn_cnt)
			return -1;
		i = &p->insns[pc];
		dst = &r[i->dst];
		src = GBPF_SRC(i->code) == GBPF_X ? r[i->src] : (uint64_t)(int64_t)i->imm;
		if (GBPF_CLASS(i->code) == GBPF_ALU64 || GBPF_CLASS(i->code) == GBPF_ALU) {
			int is32 = GBPF_CLASS(i->code) == GBPF_ALU;

			switch (GBPF_OP(i->code)) {
			case GBPF_ADD: *dst += src; break;
			case GBPF_SUB: *dst -= src; break;
			case GBPF_MUL: *dst *= src; break;
			case GBPF_OR: *dst |= src; break;
			case GBPF_AND: *dst &= src; break;
			case GBPF_XOR: *dst ^= src; break;
			case GBPF_MOV: *dst = src; break;
			case GBPF_LSH: *dst <<= (src & 63); break;
			case GBPF_RSH: *dst >>= (src & 63); break;
			case GBPF_ARSH: *dst = (uint64_t)((int64_t)*dst >> (src & 63)); break;
			default: return -1;
			}
			if (is32)
				*dst = (uint32_t)*dst;
			pc++;
		} else if (i->code == GBPF_OP_LDDW) {
			*dst = 0;
			pc += 2;
		} else if (GBPF_CLASS(i->code) == GBPF_STX && GBPF_MODE(i->code) == GBPF_MEM) {
			uint64_t v = r[i->src];
			size_t n = GBPF_SIZE(i->code) == GBPF_DW ? 8 : GBPF_SIZE(i->code) == GBPF_W ? 4
				   : GBPF_SIZE(i->code) == GBPF_H ? 2 : 1;
			uint8_t *a = (uint8_t *)(uintptr_t)(r[i->dst] + (uint64_t)(int64_t)i->off);

			if (a < stack || a + n > stack + sizeof(stack))
				return -1;
			memcpy(a, &v, n);
			pc++;
		} else if (i->code == GBPF_OP_CALL && i->src == GBPF_CALL_HELPER) {
			r[0] = 0;
			pc++;
		} else if (i->code == GBPF_OP_CALL && i->src == GBPF_CALL_LOCAL) {
			int64_t t = (int64_t)pc + i->imm + 1;

			if (t < 0 || (size_t)t >= p->insn_cnt || depth >= GBPF_MAX_CALL_DEPTH)
				return -1;
			memcpy(saved[depth], &r[6], sizeof(saved[depth]));
			ret_pc[depth++] = pc + 1;
			r[10] += GBPF_STACK_SIZE;
			pc = (size_t)t;
		} else if (i->code == GBPF_OP_EXIT) {
			if (depth == 0) {
				*ret = r[0];
				return 0;
			}
			pc = ret_pc[--depth];
			memcpy(&r[6], saved[depth], sizeof(saved[depth]));
			r[10] -= GBPF_STACK_SIZE;
		} else if (GBPF_CLASS(i->code) == GBPF_JMP && GBPF_OP(i->code) != GBPF_CALL) {
			int take;

			switch (GBPF_OP(i->code)) {
			case GBPF_JA: take = 1; break;
			case GBPF_JEQ: take = *dst == src; break;
			case GBPF_JNE: take = *dst != src; break;
			default: return -1;
			}
			pc += 1 + (take ? (size_t)(int64_t)i->off : 0);
		} else {
			return -1;
		}
	}
	return -1;
}

#endif
