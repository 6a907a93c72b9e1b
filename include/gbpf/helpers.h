/* SPDX-License-Identifier: MIT */
/*
 * gbpf/helpers.h - names of the helpers gbpf knows (numbers: gbpf/helper_ids.h).
 */
#ifndef GBPF_HELPERS_H
#define GBPF_HELPERS_H

#include <stdint.h>

#include <gbpf/gbpf.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Readable name of helper @p id: Linux's name for standard helpers
 * ("bpf_map_lookup_elem"), "bpf_gpu_..." for GPU helpers ("bpf_gpu_thread_idx").
 * @return a static string, or NULL when gbpf has no helper @p id
 */
GBPF_API const char *gbpf_helper_name(uint32_t id);

#ifdef __cplusplus
}
#endif

#endif /* GBPF_HELPERS_H */
