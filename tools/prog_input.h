/* SPDX-License-Identifier: MIT */
/*
 * tools/prog_input.h - one program (or several) from whatever file the
 * user names: a clang-built BPF object, a conformance .data file, assembler
 * text, or raw instruction bytes.
 */
#ifndef GBPF_TOOLS_PROG_INPUT_H
#define GBPF_TOOLS_PROG_INPUT_H

#include <stddef.h>
#include <stdint.h>

#include <gbpf/asm.h>
#include <gbpf/object.h>

enum prog_input_kind {
	PROG_INPUT_OBJECT,   /* ELF object: every program of it */
	PROG_INPUT_TESTCASE, /* conformance .data: one program, memory, expected result */
	PROG_INPUT_ASM,      /* assembler text */
	PROG_INPUT_RAW,      /* raw 8-byte instruction slots */
};

struct prog_input {
	enum prog_input_kind kind;
	const char *path;
	struct gbpf_object *obj;
	struct gbpf_testcase tc;
	int has_tc;
	struct gbpf_insn *insns; /* for TESTCASE / ASM / RAW */
	size_t insn_cnt;
	struct gbpf_prog_desc single; /* description of the one program of non-objects */
};

/** Open @p path; the reason of a failure is reported through cli_error. */
int prog_input_open(const char *path, struct prog_input *in);
void prog_input_close(struct prog_input *in);

/** Programs available. */
size_t prog_input_count(const struct prog_input *in);
const struct gbpf_prog_desc *prog_input_prog(const struct prog_input *in, size_t idx);
/** Program named @p name (or the first when NULL); reports an error when absent. */
const struct gbpf_prog_desc *prog_input_select(const struct prog_input *in, const char *name);

#endif
