// SPDX-License-Identifier: MIT
/*
 * Thread exits of every kernel in a map only the GPU uses (each context gets
 * its own device copy, merged into the host view), and launches per device
 * from the host launch probe (ctx->device: the launching context's GPU).
 */
#include <gbpf/probe.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} gpu_exits SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 16);
	__type(key, __u32);
	__type(value, __u64);
} launches_by_device SEC(".maps");

SEC("gpu/exit/*")
int count_exit(struct gbpf_gpu_ctx *ctx)
{
	__u32 k = 0;
	__u64 *v = bpf_map_lookup_elem(&gpu_exits, &k);

	if (v)
		__sync_fetch_and_add(v, 1);
	return 0;
}

SEC("host/launch")
int count_launch(struct gbpf_host_launch_ctx *ctx)
{
	__u32 k = ctx->device;
	__u64 *v = bpf_map_lookup_elem(&launches_by_device, &k);

	if (v)
		__sync_fetch_and_add(v, 1);
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
