/* SPDX-License-Identifier: MIT */
/*
 * plugins/hip/co_elf.h - ELF pieces of AMD code objects shared by the
 * instrumenter and the checker: symbols, the metadata note, processor
 * traits and register use of decoded code (internal to the hip backend).
 */
#ifndef GBPF_HIP_CO_ELF_H
#define GBPF_HIP_CO_ELF_H

#include <stddef.h>
#include <stdint.h>

#include "co_rewrite.h"

/** One symbol of .symtab (or .dynsym where .symtab is stripped). */
struct co_sym {
	const char *name;
	uint64_t value, size;
	unsigned char type, bind, vis;
	uint16_t shndx;
};

/**
 * Symbols with a name, bounds checked; *out malloc'ed.
 * @return 0, -EINVAL for a malformed table (reason in err), -ENOMEM
 */
int co_elf_syms(const uint8_t *elf, size_t size, struct co_sym **out, size_t *n, char *err, size_t err_size);
/** Symbol named @p name, or NULL. */
const struct co_sym *co_sym_find(const struct co_sym *s, size_t n, const char *name);
/**
 * The NT_AMDGPU_METADATA descriptor in .note (bounds checked), or NULL.
 * @param len out: descriptor bytes
 */
const uint8_t *co_elf_meta(const uint8_t *elf, size_t size, size_t *len);
/** 1 when @p arch has architected flat scratch (gfx940 and later). */
int co_arch_flat_scratch(const char *arch);

/** Highest register index named by code (-1 when none) and what it does. */
struct co_regs {
	int s, v, a;
	int calls; /**< s_swappc_b64 / s_setpc-based calls seen */
};

/** Registers named by one instruction's text (its mnemonic is skipped). */
void co_scan_text(const char *txt, struct co_regs *r);
/**
 * Registers named by the instructions of @p c in [from, to) (byte
 * offsets), from the LLVM disassembler's text.
 * @return 0 or -ENOTSUP when no disassembler exists for c->arch
 */
int co_scan_regs(const struct co_code *c, uint32_t from, uint32_t to, struct co_regs *r);

#endif /* GBPF_HIP_CO_ELF_H */
