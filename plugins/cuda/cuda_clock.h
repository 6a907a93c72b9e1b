/* SPDX-License-Identifier: MIT */
/* plugins/cuda/cuda_clock.h - the GPU's clock against the host's (defined in cuda_driver.c). */
#ifndef GBPF_CUDA_CLOCK_H
#define GBPF_CUDA_CLOCK_H

#include <stdint.h>

/**
 * CLOCK_REALTIME - CLOCK_MONOTONIC in nanoseconds, now: how far the GPU's
 * %globaltimer (Unix-epoch nanoseconds) is ahead of the host's monotonic
 * clock. Modules get it as __gbpf_clock_off, so that bpf_ktime_get_ns on the
 * GPU reads the clock host probes read.
 */
uint64_t cuda_clock_offset_ns(void);

#endif /* GBPF_CUDA_CLOCK_H */
