/* SPDX-License-Identifier: MIT */
/*
 * verifier/disasm_shim.h - the instruction as text for messages, through
 * core/isa's disassembler (one disassembler in the project).
 */
#ifndef GBPF_VERIFIER_DISASM_SHIM_H
#define GBPF_VERIFIER_DISASM_SHIM_H

#include <stddef.h>
#include <stdint.h>

#include <gbpf/insn.h>

/* Text of instruction @p idx into buf; 0, or a negative errno when no text. */
int vdisasm(const struct gbpf_insn *insns, uint32_t cnt, uint32_t idx, char *buf, size_t size);

#endif
