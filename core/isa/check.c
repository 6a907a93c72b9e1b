/* SPDX-License-Identifier: MIT */
/*
 * core/isa/check.c - encoding checks over a whole program.
 *
 * Per-instruction rules live in tables.c; this file adds what needs the
 * whole array: wide-load second slots, jump and call targets, and the
 * last instruction.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <gbpf/asm.h>

#include "isa_internal.h"

static int fail(const struct gbpf_insn *insns, size_t cnt, size_t idx, char *err,
		size_t err_size, const char *why)
{
	char text[96];

	if (err && err_size) {
		gbpf_disasm_insn(insns + idx, cnt - idx, text, sizeof(text));
		snprintf(err, err_size, "instruction %zu (%s): %s", idx, text, why);
	}
	return -EINVAL;
}

/* Target of a pc-relative jump, call or function address, or -1 if none. */
static int insn_target(const struct gbpf_insn *in, long long pc, long long *target)
{
	unsigned cls = GBPF_CLASS(in->code), op = GBPF_OP(in->code);

	if (cls == GBPF_JMP || cls == GBPF_JMP32) {
		if (op == GBPF_EXIT)
			return 0;
		if (op == GBPF_CALL) {
			if (GBPF_SRC(in->code) == GBPF_K && in->src == GBPF_CALL_LOCAL) {
				*target = pc + 1 + in->imm;
				return 1;
			}
			return 0;
		}
		if (cls == GBPF_JMP32 && op == GBPF_JA)
			*target = pc + 1 + in->imm;
		else
			*target = pc + 1 + in->off;
		return 1;
	}
	if (in->code == GBPF_OP_LDDW && in->src == GBPF_PSEUDO_FUNC) {
		*target = pc + 1 + in->imm;
		return 1;
	}
	return 0;
}

int gbpf_insns_check(const struct gbpf_insn *insns, size_t insn_cnt, char *err, size_t err_size)
{
	unsigned char *second = NULL;
	size_t i, last = 0;
	int ret = 0;

	if (err && err_size)
		err[0] = '\0';
	if (!insns || insn_cnt == 0) {
		if (err && err_size)
			snprintf(err, err_size, "empty program");
		return -EINVAL;
	}
	second = calloc(insn_cnt, 1);
	if (!second)
		return -ENOMEM;
	for (i = 0; i < insn_cnt; i++) {
		const char *why = gbpf_isa_insn_invalid(insns + i, insn_cnt - i);

		if (why) {
			ret = fail(insns, insn_cnt, i, err, err_size, why);
			goto out;
		}
		last = i;
		if (gbpf_insn_is_wide(insns + i))
			second[++i] = 1;
	}
	for (i = 0; i < insn_cnt; i++) {
		char why[128];
		long long target;

		if (second[i])
			continue;
		if (!insn_target(insns + i, (long long)i, &target))
			continue;
		if (target < 0 || target >= (long long)insn_cnt) {
			snprintf(why, sizeof(why), "target %lld is outside the program (0..%zu)",
				 target, insn_cnt - 1);
			ret = fail(insns, insn_cnt, i, err, err_size, why);
			goto out;
		}
		if (second[target]) {
			snprintf(why, sizeof(why),
				 "target %lld is the second slot of the wide load at %lld", target,
				 target - 1);
			ret = fail(insns, insn_cnt, i, err, err_size, why);
			goto out;
		}
	}
	{
		const struct gbpf_insn *in = insns + last;

		if (in->code != GBPF_OP_EXIT && in->code != GBPF_OP_JA &&
		    in->code != GBPF_OP_GOTOL)
			ret = fail(insns, insn_cnt, last, err, err_size,
				   "last instruction can fall off the end of the program");
	}
out:
	free(second);
	return ret;
}
