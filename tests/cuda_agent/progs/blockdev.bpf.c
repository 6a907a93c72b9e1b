// SPDX-License-Identifier: MIT
/*
 * The device a kernel runs on, seen from the GPU (gpu/block ctx->device:
 * the instrumented module's __gbpf_device) and from the host (host/launch
 * ctx->device): entry blocks per device (every thread runs its kernel's
 * entry block once) and launches per device. On a device d, both maps
 * count under key d only.
 */
#include <gbpf/probe.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 16);
	__type(key, __u32);
	__type(value, __u64);
} gpu_device_threads SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 16);
	__type(key, __u32);
	__type(value, __u64);
} host_device_launches SEC(".maps");

SEC("gpu/block/*")
int on_block(struct gbpf_gpu_block_ctx *ctx)
{
	__u32 k = ctx->device < 15 ? ctx->device : 15;
	__u64 *v;

	if (ctx->block_index != 0)
		return 0;
	v = bpf_map_lookup_elem(&gpu_device_threads, &k);
	if (v)
		__sync_fetch_and_add(v, 1);
	return 0;
}

SEC("host/launch")
int on_launch(struct gbpf_host_launch_ctx *ctx)
{
	__u32 k = ctx->device < 15 ? ctx->device : 15;
	__u64 *v = bpf_map_lookup_elem(&host_device_launches, &k);

	if (v)
		__sync_fetch_and_add(v, 1);
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
