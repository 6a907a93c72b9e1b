// SPDX-License-Identifier: MIT
/*
 * launchlate: latency from the host's launch call to the kernel's start on
 * the GPU, as a log2 histogram in microseconds. A host probe on the launch
 * and a GPU probe at kernel entry share the map `launch_time`, keyed by the
 * launch id both sides see.
 *   gbpf run launchlate.bpf.o -- ./vec_add
 */
#include <gbpf/probe.h>

#define SLOTS 32

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);   /* launch id */
	__type(value, __u64); /* host time of the launch call, ns */
} launch_time SEC(".maps");

/* log2 histogram of latencies in microseconds: bcc's `usecs` layout. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SLOTS);
	__type(key, __u32);
	__type(value, __u64);
} usecs SEC(".maps") GBPF_PRINT_LOG2_HIST;

SEC("host/launch")
int on_launch(struct gbpf_host_launch_ctx *ctx)
{
	__u64 id = ctx->launch_id, t = ctx->time_ns;

	bpf_map_update_elem(&launch_time, &id, &t, BPF_ANY);
	return 0;
}

SEC("gpu/entry/*")
int on_start(struct gbpf_gpu_ctx *ctx)
{
	__u64 id = ctx->launch_id, *t0, now, x, y, z;
	__u32 slot;
	__u64 *count;

	/* Once per launch: thread (0,0,0) of block (0,0,0). */
	bpf_gpu_thread_idx(&x, &y, &z);
	if (x | y | z)
		return 0;
	bpf_gpu_block_idx(&x, &y, &z);
	if (x | y | z)
		return 0;
	t0 = bpf_map_lookup_elem(&launch_time, &id);
	if (!t0)
		return 0;
	/* Host CLOCK_MONOTONIC and the GPU timer are aligned by the agent. */
	now = bpf_ktime_get_ns();
	slot = gbpf_log2l(now > *t0 ? (now - *t0) / 1000 : 0);
	if (slot >= SLOTS)
		slot = SLOTS - 1;
	count = bpf_map_lookup_elem(&usecs, &slot);
	if (count)
		__sync_fetch_and_add(count, 1);
	bpf_map_delete_elem(&launch_time, &id);
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
