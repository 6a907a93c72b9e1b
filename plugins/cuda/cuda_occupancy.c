/* SPDX-License-Identifier: MIT */
/*
 * Blocks per SM as the CUDA occupancy rules count them: registers are
 * given to whole warps in units of 256 (8 per thread), a block takes whole
 * warps, and threads, blocks and shared memory per SM bound the count too.
 */
#include "cuda_occupancy.h"

#define WARP 32u
#define REG_UNIT 256u  /* registers per allocation, per warp */
#define MAX_REGS 255u

static unsigned round_up(unsigned v, unsigned unit)
{
	return (v + unit - 1) / unit * unit;
}

/* Blocks of @p warps warps, @p regs registers per thread, that fit an SM's register file. */
static unsigned blocks_by_regs(const struct cuda_sm_limits *lim, unsigned regs, unsigned warps)
{
	unsigned per_warp = round_up(regs * WARP, REG_UNIT);

	if (per_warp * warps > lim->regs_per_block)
		return 0;
	return lim->regs_per_sm / per_warp / warps;
}

unsigned cuda_register_cap(const struct cuda_sm_limits *lim, const struct cuda_kernel_shape *k)
{
	unsigned warps, max_warps, target, cap, floor_regs;

	if (!lim->regs_per_sm || !lim->regs_per_block || !lim->threads_per_sm || !lim->blocks_per_sm ||
	    !lim->smem_per_sm || !k->regs || !k->block_threads || !k->max_block_threads ||
	    k->regs > MAX_REGS || k->block_threads > k->max_block_threads)
		return 0;
	warps = round_up(k->block_threads, WARP) / WARP;
	max_warps = round_up(k->max_block_threads, WARP) / WARP;
	/* the original's blocks per SM at this block size */
	target = blocks_by_regs(lim, k->regs, warps);
	if (lim->threads_per_sm / WARP / warps < target)
		target = lim->threads_per_sm / WARP / warps;
	if (lim->blocks_per_sm < target)
		target = lim->blocks_per_sm;
	if (k->smem_bytes && lim->smem_per_sm / k->smem_bytes < target)
		target = lim->smem_per_sm / k->smem_bytes;
	if (!target)
		return 0; /* the original does not fit either: nothing to keep */
	floor_regs = round_up(k->regs, 8);
	if (floor_regs > MAX_REGS / 8 * 8)
		return MAX_REGS;
	for (cap = MAX_REGS / 8 * 8; cap > floor_regs; cap -= 8)
		if (blocks_by_regs(lim, cap, warps) >= target && blocks_by_regs(lim, cap, max_warps) >= 1)
			break;
	return cap;
}
