/* SPDX-License-Identifier: MIT */
/*
 * Register cap of an instrumented kernel: the probe's code must not cost the
 * application's kernel its occupancy. On a memory-bound kernel the warps an
 * SM keeps in flight hide the memory latency; a probe whose slow paths (map
 * updates, ring reservations: called functions whose registers count for
 * the kernel) need 74 registers cut vector add's 2,048 threads per SM to
 * 768 (H200). The agent JITs the instrumented module with the largest
 * register count that keeps the original's blocks per SM; ptxas then
 * spills where it must, in the probe's cold paths first.
 */
#ifndef GBPF_CUDA_OCCUPANCY_H
#define GBPF_CUDA_OCCUPANCY_H

/** What the device offers per SM and per block (cuDeviceGetAttribute). */
struct cuda_sm_limits {
	unsigned regs_per_sm;        /**< MAX_REGISTERS_PER_MULTIPROCESSOR (65,536 on sm_90) */
	unsigned regs_per_block;     /**< MAX_REGISTERS_PER_BLOCK */
	unsigned threads_per_sm;     /**< MAX_THREADS_PER_MULTIPROCESSOR */
	unsigned blocks_per_sm;      /**< MAX_BLOCKS_PER_MULTIPROCESSOR */
	unsigned smem_per_sm;        /**< MAX_SHARED_MEMORY_PER_MULTIPROCESSOR (bytes) */
};

/** The original kernel and the launch that first runs it instrumented. */
struct cuda_kernel_shape {
	unsigned regs;               /**< NUM_REGS of the original */
	unsigned max_block_threads;  /**< MAX_THREADS_PER_BLOCK of the original */
	unsigned block_threads;      /**< this launch's threads per block */
	unsigned smem_bytes;         /**< static + this launch's dynamic shared memory */
};

/**
 * The largest registers per thread (a multiple of 8, at most 255) with
 * which the kernel (1) still runs as many blocks of @p k->block_threads per
 * SM as the original does and (2) still launches with every block size the
 * original accepts (up to k->max_block_threads). Never below the
 * original's count rounded up to 8. Returns 0 when a limit is unknown (any
 * field 0): then the caller sets no cap.
 */
unsigned cuda_register_cap(const struct cuda_sm_limits *lim, const struct cuda_kernel_shape *k);

#endif
