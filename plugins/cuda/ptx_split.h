/* SPDX-License-Identifier: MIT */
/*
 * plugins/cuda/ptx_split.h - a memory probe that counts, then does other
 * work: cut in two so that its counter is summed per thread like a probe
 * that only counts (ptx_counter.h) and the rest runs at every site.
 *
 * mem_trace is one: it adds 1 under (kind, space, size), then keeps a
 * log2 histogram of the distance from the thread's last address. Cut
 * where the counting ends, the head (the instructions before the cut,
 * then `r0 = 0; exit`) is a counter; the rest (the instructions from the
 * cut on, after moves of the context into the registers that held it
 * there) does what the program did after counting, with the same values.
 */
#ifndef GBPF_CUDA_PTX_SPLIT_H
#define GBPF_CUDA_PTX_SPLIT_H

#include <stdint.h>

#include <gbpf/insn.h>
#include <gbpf/prog.h>

#include "ptx_counter.h"

/** A program cut by ptx_split_find(). */
struct ptx_split {
	uint32_t at;                /**< the rest's first instruction in the program */
	struct ptx_counter counter; /**< what ptx_counter_find() found in the head */
	struct gbpf_prog_desc head; /**< insns[0, at), then r0 = 0; exit */
	struct gbpf_prog_desc rest; /**< rX = r1 for each register holding the context at `at`, then insns[at, n) */
	struct gbpf_insn *head_insns, *rest_insns; /**< owned: the two programs' instructions */
};

/**
 * Whether gpu/mem program @p p is a counter followed by other work that
 * can run apart from it, and where. The cut @p s->at is a point every path
 * from the start reaches, that no jump crosses (either way) and that
 * follows no exit; the head must be a counter; the rest must not name the
 * counter's map nor call another program, and may read, of what the head
 * left, only the context (in the registers that hold it at the cut): a
 * register the head wrote otherwise, or a stack byte the rest has not
 * written itself on every path before, makes the cut unusable.
 * @return 1 with @p s filled (free it with ptx_split_free()), 0 when the
 * program has no such cut, -ENOMEM
 */
int ptx_split_find(const struct gbpf_prog_desc *p, struct ptx_split *s);

/** Frees what ptx_split_find() allocated in @p s. */
void ptx_split_free(struct ptx_split *s);

#endif /* GBPF_CUDA_PTX_SPLIT_H */
