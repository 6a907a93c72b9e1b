// SPDX-License-Identifier: MIT
/*
 * The register cap that keeps an instrumented kernel's blocks per SM
 * (plugins/cuda/cuda_agent_occupancy.h): counted as the H200 grants them,
 * and tried only for a small trim.
 */
#include "plugins/cuda/cuda_agent_occupancy.h"
#include "tests/tap.h"

int main(void)
{
	/* registers 8 at a time, 64K an SM, 2048 threads, 32 blocks */
	tap_ok(ca_occ_blocks(12, 256) == 8 && ca_occ_blocks(32, 256) == 8 && ca_occ_blocks(33, 256) == 6 &&
		       ca_occ_blocks(40, 256) == 6 && ca_occ_blocks(41, 256) == 5,
	       "256-thread blocks: 8 up to 32 registers, 6 up to 40, 5 at 41");
	tap_ok(ca_occ_blocks(16, 32) == 32 && ca_occ_blocks(255, 1024) == 0 && ca_occ_blocks(64, 1024) == 1 &&
		       ca_occ_blocks(10, 0) == 0 && ca_occ_blocks(10, 1025) == 0,
	       "the block limit (32), a block that does not fit at all, no threads or too many");
	tap_ok(ca_occ_blocks(20, 100) == 16, "a block of 100 threads takes 4 warps: 2048 / 128 = 16");
	/* mem_trace with its last address thread-local into vector add: 34 -> 32 keeps 8 blocks */
	tap_ok(ca_occ_cap(12, 34, 256) == 32, "12 uninstrumented, 34 instrumented, 256 threads: cap 32");
	tap_ok(ca_occ_cap(12, 32, 256) == 0, "32 keep 8 blocks already: no cap");
	tap_ok(ca_occ_cap(12, 41, 256) == 0, "41 is 9 above 32: a cap that deep would spill, none");
	tap_ok(ca_occ_cap(12, 40, 256) == 32, "40 is 8 above: the slack's end, cap 32");
	tap_ok(ca_occ_cap(36, 44, 256) == 40, "36 uninstrumented (6 blocks), 44 instrumented (5): cap 40");
	tap_ok(ca_occ_cap(12, 34, 1024) == 32, "1024-thread blocks: 2 an SM up to 32 registers, cap 32");
	tap_ok(ca_occ_cap(12, 20, 256) == 0 && ca_occ_cap(12, 34, 0) == 0, "under the step, or an unknown block: none");
	tap_ok(ca_occ_cap(200, 240, 1024) == 0,
	       "1024 threads of 200 registers fit no SM (the original could not run so): no cap");
	return tap_done();
}
