/* SPDX-License-Identifier: MIT */
/*
 * core/isa/isa_internal.h - mnemonic tables shared by the assembler, the
 * disassembler and the encoding checker, so that the three agree on every
 * name and opcode.
 */
#ifndef GBPF_CORE_ISA_INTERNAL_H
#define GBPF_CORE_ISA_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <gbpf/insn.h>

/** Name of ALU operation GBPF_OP(code) >> 4 (unsigned forms), NULL for END / invalid. */
const char *gbpf_isa_alu_name(unsigned op_index);
/** Name of jump operation GBPF_OP(code) >> 4, NULL for CALL/EXIT/invalid. */
const char *gbpf_isa_jmp_name(unsigned op_index);
/** Name of atomic operation imm (without GBPF_FETCH), NULL if unknown. */
const char *gbpf_isa_atomic_name(int32_t imm);
/** Suffix of load/store size GBPF_SIZE(code) >> 3: "w", "h", "b", "dw". */
const char *gbpf_isa_size_name(unsigned size_index);
/** Bytes of load/store size GBPF_SIZE(code) >> 3. */
unsigned gbpf_isa_size_bytes(unsigned size_index);

/** Is @p imm a valid STX|ATOMIC operation for @p size (GBPF_W or GBPF_DW)? */
int gbpf_isa_atomic_valid(int32_t imm, unsigned size);

/**
 * Describe why one instruction (with @p avail slots readable) has an
 * invalid encoding, or return NULL when it is valid in isolation. Targets
 * are not checked here (see gbpf_insns_check()).
 */
const char *gbpf_isa_insn_invalid(const struct gbpf_insn *insn, size_t avail);

/** snprintf into buf at *pos, advancing *pos; -ENOSPC on truncation. */
int gbpf_isa_appendf(char *buf, size_t size, size_t *pos, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif /* GBPF_CORE_ISA_INTERNAL_H */
