/* SPDX-License-Identifier: MIT */
/*
 * plugins/cuda/cuda_agent_occupancy.h - keeping an instrumented kernel's
 * occupancy: the register cap under which it fits as many blocks of a
 * launch's size on an SM as the application's own kernel.
 *
 * A probe adds registers; when the kernel crosses a step (registers are
 * granted 8 at a time, an SM has 64K), it loses blocks per SM, and a
 * memory-bound kernel loses that much of its latency hiding: mem_trace with
 * its last address thread-local went from 34 registers (6 blocks of 256
 * threads) to 32 (8 blocks, no spill) and from 165 to 133 us on the H200's
 * vector add (docs/BENCHMARKS.md, session 28). A cap far below what ptxas
 * wants spills in the hot path instead (session 8's CU_JIT_MAX_REGISTERS
 * table), so only a small trim is tried, and the agent keeps the capped JIT
 * only if the thread's local memory did not grow.
 */
#ifndef GBPF_CUDA_AGENT_OCCUPANCY_H
#define GBPF_CUDA_AGENT_OCCUPANCY_H

/** Registers an SM holds (sm_70 to sm_90). */
#define CA_OCC_SM_REGISTERS 65536
/** Threads an SM runs at once (sm_80, sm_90; sm_75 has 1024: fewer blocks either way). */
#define CA_OCC_SM_THREADS 2048
/** Blocks an SM runs at once (sm_80 and later). */
#define CA_OCC_SM_BLOCKS 32
/** Most registers a cap may take from what ptxas chose on its own. */
#define CA_OCC_CAP_SLACK 8

/**
 * Blocks of @p threads threads (a launch's block size) an SM fits when each
 * thread takes @p regs registers, counting registers, threads and blocks
 * (not shared memory, which instrumentation barely changes).
 */
unsigned ca_occ_blocks(int regs, unsigned threads);

/**
 * The register cap to JIT the instrumented kernel with so that it fits as
 * many blocks as the original (@p orig_regs) at @p threads a block, or 0:
 * it fits them already (@p regs), the cap would take more than
 * CA_OCC_CAP_SLACK registers from what ptxas chose, or no cap of 16 or more
 * would do.
 */
int ca_occ_cap(int orig_regs, int regs, unsigned threads);

#endif
