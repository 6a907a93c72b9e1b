/* SPDX-License-Identifier: MIT */
/*
 * tests/reliability/difftest_gen.h - generator of random programs that the
 * verifier accepts and whose result is deterministic on every backend, for
 * differential testing (tests/reliability/difftest.c).
 *
 * A program is a sequence of "blocks" (ALU of every width and op, stack
 * loads/stores/atomics, forward branches over blocks, bounded loops, array
 * and hash map updates / lookups / deletes, calls of subprograms with a
 * frame and blocks of their own), then a fold of every register, stack
 * slot and array element into r0. The subprograms follow the main
 * program's exit. Scalars live in r6-r9 (they survive
 * helper calls); r0-r5 are temporaries. Only deterministic helpers are
 * called (map operations), so r0 and the map contents must be identical on
 * the interpreter and on every backend.
 *
 * Blocks can be switched off one by one without changing the random stream
 * of the others: that is how a mismatch is shrunk to a small reproducer.
 */
#ifndef GBPF_TESTS_RELIABILITY_DIFFTEST_GEN_H
#define GBPF_TESTS_RELIABILITY_DIFFTEST_GEN_H

#include <stddef.h>
#include <stdint.h>

#include <gbpf/insn.h>
#include <gbpf/prog.h>

/** Most instruction slots of a generated program. */
#define DT_MAX_INSNS 2048
/** Most top-level blocks of a generated program (shrinking granularity). */
#define DT_MAX_BLOCKS 64

/** Map indexes of every generated program. */
#define DT_MAP_ARRAY 0 /**< ARRAY, key u32, value u64, DT_ARRAY_ENTRIES entries */
#define DT_MAP_HASH 1  /**< HASH, key u32, value u64, DT_HASH_ENTRIES entries */
#define DT_ARRAY_ENTRIES 8
#define DT_HASH_ENTRIES 16
/** Keys the programs use: 0..DT_KEY_SPAN-1 (some beyond both maps' capacity). */
#define DT_KEY_SPAN 32

struct dt_prog {
	struct gbpf_insn insns[DT_MAX_INSNS];
	size_t n;
	size_t main_n;       /**< instructions of the main program (its exit last); subprograms follow */
	unsigned blocks;     /**< top-level blocks generated */
	uint64_t skip_mask;  /**< blocks left out (bit i: block i) */
};

/** The two map descriptions every generated program uses. */
extern const struct gbpf_map_desc dt_maps[2];

/**
 * Generate the program of @p seed into @p p, leaving out the blocks whose
 * bit is set in @p skip_mask. Same seed and mask: same program.
 */
void dt_generate(struct dt_prog *p, uint64_t seed, uint64_t skip_mask);

#endif
