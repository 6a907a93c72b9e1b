/* SPDX-License-Identifier: MIT */
/*
 * gbpf/asm.h - eBPF assembler, disassembler, encoding checks and the
 * reader of conformance test files.
 *
 * The text syntax is the one of the eBPF ISA conformance suite
 * (bpf_conformance `.data` files), one instruction per line:
 *
 *   mov %r0, 1                 add32 %r1, %r2          neg %r3
 *   ldxdw %r0, [%r1+2]         stw [%r10-4], 7         stxb [%r1+0], %r2
 *   ldxsh %r0, [%r10-2]        lddw %r0, 0x1122334455667788
 *   lock add [%r10-8], %r1     lock fetch xor32 [%r10-4], %r3
 *   lock xchg [%r10-8], %r1    lock cmpxchg [%r10-8], %r1
 *   be16 %r0   le32 %r0   bswap64 %r0 (alias swap64)
 *   movsx832 %r0, %r1          movsx3264 %r0, %r1      sdiv %r0, 3   smod32 %r0, %r1
 *   ja +1   ja LABEL   ja32 LABEL (alias gotol)   jeq %r1, 5, LABEL   jsgt32 %r1, %r2, -3
 *   call 5 (helper)   call local LABEL   call %r2 (callx)   exit
 *   LABEL:   # comment   // comment
 *
 * gbpf extensions for wide loads with a pseudo source (what the loader emits):
 *   lddw %r1, map[3]           GBPF_PSEUDO_MAP_IDX, map index 3
 *   lddw %r1, map_value[3]+8   GBPF_PSEUDO_MAP_IDX_VALUE, offset 8 into value 0
 *   lddw %r1, func LABEL       GBPF_PSEUDO_FUNC (pc-relative, also +N / -N)
 *
 * Register names may be written with or without '%'. Immediates are
 * decimal (-2147483648 .. 2147483647) or hexadecimal (0 .. 0xffffffff, or
 * negated); lddw takes any 64-bit value. Offsets are signed 16-bit.
 */
#ifndef GBPF_ASM_H
#define GBPF_ASM_H

#include <stddef.h>
#include <stdint.h>

#include <gbpf/gbpf.h>
#include <gbpf/insn.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Assemble @p text into instructions.
 * @param text      NUL-terminated program text
 * @param insns     receives a malloc'ed array (caller frees) on success
 * @param insn_cnt  receives the number of slots (a wide load counts 2)
 * @param err       on failure receives "line N: what is wrong" (may be NULL)
 * @param err_size  bytes at err
 * @return 0, -GBPF_ERRNO__ASM for a syntax error (also for an empty
 *         program), -EINVAL for NULL arguments, -ENOMEM, -E2BIG when the
 *         program exceeds 1,000,000 slots.
 */
GBPF_API int gbpf_asm(const char *text, struct gbpf_insn **insns, size_t *insn_cnt, char *err,
		      size_t err_size);

/**
 * Disassemble one instruction into the syntax gbpf_asm() reads. Jump and
 * local-call targets are printed as relative offsets (+N / -N), so that
 * assembling the output gives back the same bytes.
 * @param insn         the instruction (first slot of a wide load)
 * @param avail_slots  slots readable at insn (2 needed for a wide load)
 * @param buf          output buffer, always NUL-terminated when size > 0
 * @param size         bytes at buf (64 is always enough)
 * @return slots used (1, or 2 for a wide load), -EINVAL for an encoding that
 *         has no text form (buf then holds ".invalid 0x.." with the raw
 *         slot), -ENOSPC when buf is too small.
 */
GBPF_API int gbpf_disasm_insn(const struct gbpf_insn *insn, size_t avail_slots, char *buf,
			      size_t size);

/**
 * Disassemble a whole program, one instruction per line.
 * @param insns     instructions
 * @param insn_cnt  slots
 * @param text      receives a malloc'ed NUL-terminated string (caller frees)
 * @return 0, -EINVAL for an invalid encoding (text then names the
 *         instruction), -ENOMEM.
 */
GBPF_API int gbpf_disasm(const struct gbpf_insn *insns, size_t insn_cnt, char **text);

/**
 * Check the encoding of a program: known opcodes only, unused fields zero,
 * valid registers (r10 never written), well-formed wide loads, jump and
 * call targets inside the program and never into the second slot of a
 * wide load, no legacy ABS/IND packet loads, no kernel-only pseudo sources
 * (map fds, BTF ids, kfuncs), and a last instruction that cannot fall off
 * the end. This is not the verifier: it says nothing about values.
 * @param err  on failure "instruction N (TEXT): reason" (may be NULL)
 * @return 0, -EINVAL for a bad encoding (first problem found), -EINVAL for
 *         an empty program or NULL insns.
 */
GBPF_API int gbpf_insns_check(const struct gbpf_insn *insns, size_t insn_cnt, char *err,
			      size_t err_size);

/** A section of a test file that gbpf has no field for ("-- name"). */
struct gbpf_testcase_section {
	char *name; /**< text after "-- " */
	char *body; /**< lines of the section, '\n'-terminated */
	size_t line; /**< line of the "-- name" header (1-based) */
};

/**
 * One conformance test file (`.data`), as parsed. Every has_* flag says
 * whether the section was present; bodies are NUL-terminated copies.
 */
struct gbpf_testcase {
	char *path;            /**< file path (or the name given to the parser) */
	int has_asm;
	char *asm_text;        /**< "-- asm" body */
	size_t asm_line;       /**< line of the first asm line in the file */
	int has_raw;
	struct gbpf_insn *raw; /**< "-- raw": bytes or 0x<16 hex> words */
	size_t raw_cnt;        /**< slots in raw */
	int has_mem;
	uint8_t *mem;          /**< "-- mem": hex bytes */
	size_t mem_size;
	int has_result;
	uint64_t result;       /**< "-- result": expected r0 */
	int has_error;
	char *error;           /**< "-- error": expected error text (may be empty) */
	int has_c;
	char *c_source;        /**< "-- c": the C the program came from */
	int no_register_offset; /**< "-- no register offset" present */
	char *no_register_offset_text; /**< its body (why), may be empty */
	struct gbpf_testcase_section *other; /**< sections not listed above */
	size_t other_cnt;
};

/**
 * Parse a test file held in memory.
 * @param text   file contents (need not be NUL-terminated)
 * @param len    bytes at text
 * @param name   name for messages and tc->path
 * @param tc     zeroed on entry, filled on success; free with gbpf_testcase_free()
 * @param err    on failure "NAME:LINE: section -- what" (may be NULL)
 * @return 0, -EINVAL for malformed mem/raw/result contents or a repeated
 *         section, -E2BIG for a file over 16 MiB, -ENOMEM.
 */
GBPF_API int gbpf_testcase_parse(const char *text, size_t len, const char *name,
				 struct gbpf_testcase *tc, char *err, size_t err_size);

/** As gbpf_testcase_parse() for the file at @p path (-errno if unreadable). */
GBPF_API int gbpf_testcase_parse_file(const char *path, struct gbpf_testcase *tc, char *err,
				      size_t err_size);

/**
 * The program of a test: assembled from "-- asm" when present, else a copy
 * of "-- raw".
 * @param insns  receives a malloc'ed array (caller frees)
 * @return 0, -ENOENT when the file has neither section, or gbpf_asm()'s
 *         error (message prefixed with the file and section).
 */
GBPF_API int gbpf_testcase_program(const struct gbpf_testcase *tc, struct gbpf_insn **insns,
				   size_t *insn_cnt, char *err, size_t err_size);

/** Free everything gbpf_testcase_parse() allocated and zero @p tc. */
GBPF_API void gbpf_testcase_free(struct gbpf_testcase *tc);

#ifdef __cplusplus
}
#endif

#endif /* GBPF_ASM_H */
