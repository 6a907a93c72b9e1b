/* SPDX-License-Identifier: MIT */
/*
 * plugins/cuda/cuda_ctx_fields.h - which fields of a probe's context
 * (struct gbpf_gpu_ctx) a device program reads, for the injector's
 * GBPF_CUDA_CTX_UNUSED_* bits: the agent and the offline `gbpf prog inject`
 * ask the same question, so that the tool shows the code the agent runs.
 */
#ifndef GBPF_CUDA_CTX_FIELDS_H
#define GBPF_CUDA_CTX_FIELDS_H

#include <stdint.h>

#include <gbpf/object.h>

/**
 * GBPF_CUDA_CTX_UNUSED_* bits of the context fields @p p never reads. A
 * field counts as read when a load overlaps its bytes (the verifier allows
 * the context only at constant offsets from the context pointer).
 * @param reads  the context bytes the verifier found @p p may read
 *               (gbpf_verify_result's ctx_read_mask: followed through
 *               copies and offsets of the context pointer, a helper handed
 *               the context reads all of it), or NULL: then every load at a
 *               field's offset, from any register, counts as reading it,
 *               and a helper handed the context (perf_event_output) makes
 *               every field read.
 */
unsigned gbpf_cuda_ctx_unused(const struct gbpf_prog_desc *p, const uint64_t *reads);

#endif
