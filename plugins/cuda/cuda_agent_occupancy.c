/* SPDX-License-Identifier: MIT */
/* Register caps that keep an instrumented kernel's blocks per SM (cuda_agent_occupancy.h). */
#include "cuda_agent_occupancy.h"

unsigned ca_occ_blocks(int regs, unsigned threads)
{
	unsigned warps = (threads + 31) / 32, per_thread, by_regs, by_threads;

	if (!threads || threads > 1024 || regs < 0)
		return 0;
	/* a warp's registers are granted 256 at a time: 8 a thread */
	per_thread = (unsigned)((regs + 7) & ~7);
	by_regs = per_thread ? CA_OCC_SM_REGISTERS / (per_thread * warps * 32) : CA_OCC_SM_BLOCKS;
	by_threads = CA_OCC_SM_THREADS / (warps * 32);
	if (by_regs > by_threads)
		by_regs = by_threads;
	return by_regs < CA_OCC_SM_BLOCKS ? by_regs : CA_OCC_SM_BLOCKS;
}

int ca_occ_cap(int orig_regs, int regs, unsigned threads)
{
	unsigned want = ca_occ_blocks(orig_regs, threads), warps = (threads + 31) / 32;
	int cap;

	if (!want || ca_occ_blocks(regs, threads) >= want)
		return 0;
	cap = (int)(CA_OCC_SM_REGISTERS / (want * warps * 32)) & ~7;
	if (cap > 255)
		cap = 255;
	if (cap < 16 || cap >= regs || regs - cap > CA_OCC_CAP_SLACK)
		return 0;
	return cap;
}
