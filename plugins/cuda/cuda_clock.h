/* SPDX-License-Identifier: MIT */
/* plugins/cuda/cuda_clock.h - the GPU's clock against the host's (both engines). */
#ifndef GBPF_CUDA_CLOCK_H
#define GBPF_CUDA_CLOCK_H

#include <stdint.h>
#include <time.h>

/**
 * CLOCK_REALTIME - CLOCK_MONOTONIC in nanoseconds, now: how far the GPU's
 * %globaltimer (Unix-epoch nanoseconds) is ahead of the host's monotonic
 * clock. Modules get it as __gbpf_clock_off, so that bpf_ktime_get_ns on the
 * GPU reads the clock host probes read. Inline: the PTX engine (cuda_driver.c's
 * users) and the Sanitizer engine's library (which links no driver code)
 * must compute the same quantity.
 */
static inline uint64_t cuda_clock_offset_ns(void)
{
	struct timespec rt, mono;

	clock_gettime(CLOCK_MONOTONIC, &mono);
	clock_gettime(CLOCK_REALTIME, &rt);
	return ((uint64_t)rt.tv_sec * 1000000000ULL + (uint64_t)rt.tv_nsec) -
	       ((uint64_t)mono.tv_sec * 1000000000ULL + (uint64_t)mono.tv_nsec);
}

#endif /* GBPF_CUDA_CLOCK_H */
