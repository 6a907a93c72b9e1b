// SPDX-License-Identifier: MIT
/*
 * sanlaunch: the host's view of every kernel launch, one ring buffer record
 * per launch (launch id, kernel id, grid, block), run beside an example
 * probe in one `gbpf run` (tests/cuda_sanitizer/device.sh) so that
 * check_events.py can check the example's GPU-side results against the
 * threads the host launched: threadhist's per-thread counts,
 * kernelretsnoop's (launch, block, thread) events. Its map names clash
 * with none of threadhist, kernelretsnoop, mem_trace or santhreads.
 */
#include <gbpf/probe.h>

struct san_launch {
	__u64 launch_id;
	__u64 kernel_id;
	__u32 grid[3];
	__u32 block[3];
};

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} san_launches SEC(".maps");

SEC("host/launch")
int san_launch_rec(struct gbpf_host_launch_ctx *ctx)
{
	struct san_launch l = {
		.launch_id = ctx->launch_id,
		.kernel_id = ctx->kernel_id,
		.grid = {ctx->grid[0], ctx->grid[1], ctx->grid[2]},
		.block = {ctx->block[0], ctx->block[1], ctx->block[2]},
	};

	bpf_ringbuf_output(&san_launches, &l, sizeof(l), 0);
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
