// SPDX-License-Identifier: MIT
/*
 * sanclock: the GPU's bpf_ktime_get_ns against the host's, as launchlate
 * compares them, for tests/cuda_sanitizer/device.sh under the Compute
 * Sanitizer engine. The host/launch probe keeps the launch call's time
 * (CLOCK_MONOTONIC); thread (0,0,0) of block (0,0,0) at kernel entry
 * subtracts it from bpf_ktime_get_ns. Aligned clocks give a small positive
 * latency; a raw %globaltimer (Unix-epoch ns) gives ~1.7e18.
 *   san_clock[0]  launches seen at entry
 *   san_clock[1]  latencies within [0, 10 s]
 *   san_clock[2]  latencies outside (negative or later than 10 s)
 *   san_clock[3]  the last latency, ns (two's complement when negative)
 */
#include <gbpf/probe.h>

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);   /* launch id */
	__type(value, __u64); /* host CLOCK_MONOTONIC of the launch call, ns */
} san_clock_t0 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u64);
} san_clock SEC(".maps");

SEC("host/launch")
int san_clock_launch(struct gbpf_host_launch_ctx *ctx)
{
	__u64 id = ctx->launch_id, t = ctx->time_ns;

	bpf_map_update_elem(&san_clock_t0, &id, &t, BPF_ANY);
	return 0;
}

static void san_clock_add(__u32 k, __u64 v)
{
	__u64 *p = bpf_map_lookup_elem(&san_clock, &k);

	if (p)
		__sync_fetch_and_add(p, v);
}

SEC("gpu/entry/*")
int san_clock_entry(struct gbpf_gpu_ctx *ctx)
{
	__u64 id = ctx->launch_id, *t0, now, x, y, z, d;
	__u32 k = 3;
	__u64 *last;

	bpf_gpu_thread_idx(&x, &y, &z);
	if (x | y | z)
		return 0;
	bpf_gpu_block_idx(&x, &y, &z);
	if (x | y | z)
		return 0;
	t0 = bpf_map_lookup_elem(&san_clock_t0, &id);
	if (!t0)
		return 0;
	now = bpf_ktime_get_ns();
	d = now - *t0;
	san_clock_add(0, 1);
	san_clock_add((__s64)d >= 0 && d <= 10000000000ull ? 1 : 2, 1);
	last = bpf_map_lookup_elem(&san_clock, &k);
	if (last)
		*last = d;
	bpf_map_delete_elem(&san_clock_t0, &id);
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
