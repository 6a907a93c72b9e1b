/* SPDX-License-Identifier: MIT */
/*
 * plugins/cuda/ptx_range.h - upper bounds of register values for the PTX
 * emitter, from the same forward pass as its other register facts (saved at
 * jumps, met at labels, forgotten at loop headers), refined on each edge of a
 * conditional jump against a constant.
 *
 * The verifier proves every access safe but hands the backends no per-
 * instruction facts; these are the few the emitter uses itself:
 *  - an inlined array lookup whose key is below max_entries on every path
 *    skips its bounds check (clang clamps a histogram's slot before it
 *    stores it as the key: `if (slot >= 48) slot = 47`);
 *  - a 64-bit unsigned compare of two values whose high halves are 0 is
 *    emitted as a 32-bit one (ptxas keeps a second compare of the high
 *    halves otherwise, on sm_90).
 * Clang clamps a zero-extended copy of the register it then stores
 * (`r1 = r0; r1 <<= 32; r1 >>= 32; if 47 > r1 ...; r0 = 47`), so a bound
 * learnt of a copy also applies to the register it was copied from while
 * neither is written again.
 */
#ifndef GBPF_CUDA_PTX_RANGE_H
#define GBPF_CUDA_PTX_RANGE_H

#include <stdint.h>

#include <gbpf/insn.h>

/** What a register is, exactly, of another one (struct ptx_range.rel). */
enum {
	PTX_REL_NONE,
	PTX_REL_COPY,  /* the same 64 bits */
	PTX_REL_SHL32, /* its low 32 bits shifted up by 32 */
	PTX_REL_ZEXT,  /* its low 32 bits, zero-extended */
};

/** What is known of one register's value. */
struct ptx_range {
	uint32_t lo_max; /**< its low 32 bits are at most this */
	uint8_t hi_zero; /**< its high 32 bits are 0 */
	uint8_t rel;     /**< PTX_REL_*: of register rel_src, unchanged since */
	uint8_t rel_src;
};

/** Nothing known of any of the @p n registers. */
void ptx_range_forget(struct ptx_range *r, unsigned n);

/**
 * The facts after @p in (a call writes r0..r5; @p in may be the first half
 * of a wide load). Only ALU, loads, atomics that fetch and calls change them.
 */
void ptx_range_update(struct ptx_range r[GBPF_REG_COUNT], const struct gbpf_insn *in);

/**
 * Refine @p r by the conditional jump @p in: as it is where the jump is
 * taken (@p taken) or where it falls through. A register compared with a
 * constant, an immediate or a register known to hold @p imm_val (when
 * @p imm_known), may get an upper bound; unsigned and equality compares only.
 */
void ptx_range_branch(struct ptx_range r[GBPF_REG_COUNT], const struct gbpf_insn *in, int taken,
		      const uint8_t *imm_known, const uint64_t *imm_val);

/** Meet @p from into @p into (facts true on both paths). */
void ptx_range_meet(struct ptx_range *into, const struct ptx_range *from, unsigned n);

#endif
