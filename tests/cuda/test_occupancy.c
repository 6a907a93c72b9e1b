/* SPDX-License-Identifier: MIT */
/*
 * The register cap of instrumented kernels (plugins/cuda/cuda_occupancy.c):
 * the cap keeps the original's blocks per SM and launchable block sizes,
 * against hand-computed occupancy on an H200's limits.
 */
#include "cuda_occupancy.h"
#include "tap.h"

static const struct cuda_sm_limits h200 = {
	.regs_per_sm = 65536, .regs_per_block = 65536, .threads_per_sm = 2048,
	.blocks_per_sm = 32, .smem_per_sm = 233472,
};

static unsigned cap(unsigned regs, unsigned max_threads, unsigned threads, unsigned smem)
{
	struct cuda_kernel_shape k = {regs, max_threads, threads, smem};

	return cuda_register_cap(&h200, &k);
}

int main(void)
{
	/* vector add: 12 registers, 256 threads: 8 blocks per SM (thread bound); 32 registers keep 8 */
	tap_ok(cap(12, 1024, 256, 0) == 32, "vecadd, 256 threads: cap 32 keeps 2,048 threads per SM (%u)",
	       cap(12, 1024, 256, 0));
	/* a warp per block: 32 blocks per SM (block bound) need 2,048 registers per warp */
	tap_ok(cap(12, 1024, 32, 0) == 64, "one-warp blocks: cap 64 (%u)", cap(12, 1024, 32, 0));
	/* GEMM-like: 128 registers and 512 threads at most: 2 blocks of 256 per SM, the cap is the original's */
	tap_ok(cap(128, 512, 256, 8192) == 128, "128-register kernel: cap 128, never below it (%u)",
	       cap(128, 512, 256, 8192));
	/* shared memory bound (48 KB a block: 4 blocks of 128 threads): registers may grow to 64
	 * (1,024-thread blocks must still launch: 64 x 1,024 = 65,536) */
	tap_ok(cap(16, 1024, 128, 49152) == 64, "shared-memory-bound kernel: cap 64 (%u)", cap(16, 1024, 128, 49152));
	/* odd counts round to the allocation unit: 40 registers, 1,024 threads: 1 block either way */
	tap_ok(cap(40, 1024, 1024, 0) == 64, "40 registers, 1,024 threads: cap 64 (%u)", cap(40, 1024, 1024, 0));
	/* 100 threads take 4 warps: 16 blocks (thread bound), 32 registers keep them */
	tap_ok(cap(20, 1024, 100, 0) == 32, "100-thread blocks count whole warps: cap 32 (%u)", cap(20, 1024, 100, 0));
	tap_ok(cap(255, 256, 256, 0) == 255, "255 registers: no lower cap (%u)", cap(255, 256, 256, 0));
	tap_ok(cap(0, 1024, 256, 0) == 0 && cap(12, 0, 256, 0) == 0 && cap(12, 1024, 0, 0) == 0,
	       "an unknown count: no cap");
	tap_ok(cap(12, 256, 512, 0) == 0, "a block larger than the original allows: no cap");
	{
		struct cuda_sm_limits none = h200;
		struct cuda_kernel_shape k = {12, 1024, 256, 0};

		none.regs_per_sm = 0;
		tap_ok(cuda_register_cap(&none, &k) == 0, "an unknown device limit: no cap");
	}
	return tap_done();
}
