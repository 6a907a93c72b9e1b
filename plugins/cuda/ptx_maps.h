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

#endif /* GBPF_CUDA_PTX_MAPS_H */
