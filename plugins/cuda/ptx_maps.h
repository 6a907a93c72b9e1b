/* SPDX-License-Identifier: MIT */
/*
 * plugins/cuda/ptx_maps.h - device functions of the map helpers, in PTX,
 * implementing the layouts of maps/map_layout.h (no host round trip).
 */
#ifndef GBPF_CUDA_PTX_MAPS_H
#define GBPF_CUDA_PTX_MAPS_H

#include <stdint.h>

#include "ptx_buf.h"

/** Emit __gbpf_h_map_* / ringbuf / perf functions needed by @p used (indexed by helper id). */
void ptx_maps_emit(struct ptx_buf *b, const uint8_t *used);

/** Emit the hash map functions __gbpf_m_hash_{lookup,update,delete}. */
void ptx_hash_emit(struct ptx_buf *b);
/** Emit the ring buffer / perf event functions needed by @p used. */
void ptx_ring_emit(struct ptx_buf *b, const uint8_t *used);

/** Most 8-byte words (header included) of a record the warp-wide ring write handles. */
#define PTX_RING_WARP_MAX_WORDS 8

/**
 * How a whole warp exchanges its records of @c words 8-byte words each so that store i of
 * lane L writes block word 32 i + L (ptx_ring.c, ptx_ring_emit_warp_block): lane L first rotates
 * its words by L >> @c pre_shift (an amount below @c pre_rotate; none when that is 1); in
 * round j it reads word j of lane (32 pinv[(j - L) mod words] + L) / words; it rotates the
 * received words by L mod words, and store i writes the rotated word pi[i].
 */
struct ptx_ring_warp_plan {
	unsigned words;
	unsigned pre_rotate; /* rotation amounts stay below this (1: no pre-rotation) */
	unsigned pre_shift;
	unsigned pi[PTX_RING_WARP_MAX_WORDS];
	unsigned pinv[PTX_RING_WARP_MAX_WORDS];
};

/** The plan for records of @p words words (1..PTX_RING_WARP_MAX_WORDS). */
void ptx_ring_warp_plan(unsigned words, struct ptx_ring_warp_plan *plan);

/**
 * The stores of a whole warp's records of @p words words (its plan): the words in %v0.., the
 * lane id in %b18, the block's address in %a8; uses %y0..%y63, %b16..%b24, %q6 and %a12, which
 * the caller declares.
 */
void ptx_ring_emit_warp_block(struct ptx_buf *b, unsigned words);

/**
 * bpf_ringbuf_output emitted inline (no call) in a probe: ring map in @p map_reg (known to be a
 * ring buffer), @p words data words (1..PTX_RING_WARP_MAX_WORDS - 1) in %t0.., flags accepted;
 * %r0 = the helper's result. @p id and @p prog_idx make its labels unique in the function.
 */
void ptx_ring_emit_output_inline(struct ptx_buf *b, const char *map_reg, unsigned words, unsigned id,
				 size_t prog_idx);

#endif /* GBPF_CUDA_PTX_MAPS_H */
