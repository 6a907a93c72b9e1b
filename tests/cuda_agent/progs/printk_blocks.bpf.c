// SPDX-License-Identifier: MIT
/*
 * One bpf_trace_printk line per block of vec_add: thread (0,0,0) of each
 * block prints its blockIdx.x at kernel entry, so a launch of G blocks
 * gives exactly the lines "vec_add block 0" .. "vec_add block G-1", once
 * each (tests/cuda_agent/device_run.sh checks that none is lost or doubled).
 */
#include <gbpf/probe.h>

SEC("gpu/entry/vec_add")
int print_block(struct gbpf_gpu_ctx *ctx)
{
	__u64 tx = 0, ty = 0, tz = 0, bx = 0, by = 0, bz = 0;

	bpf_gpu_thread_idx(&tx, &ty, &tz);
	if (tx || ty || tz)
		return 0;
	bpf_gpu_block_idx(&bx, &by, &bz);
	bpf_printk("vec_add block %llu", bx);
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
