// SPDX-License-Identifier: MIT
/*
 * The device a kernel runs on, seen from a gpu/exit probe (gbpf_gpu_ctx
 * device: the instrumented module's __gbpf_device, stored at kernel entry)
 * and from the host (host/launch ctx->device): thread exits per device
 * (every thread leaves its kernel once) and launches per device. On a
 * device d, both maps count under key d only; device_pad reads as 0.
 */
#include <gbpf/probe.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 16);
	__type(key, __u32);
	__type(value, __u64);
} gpu_device_exits SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 16);
	__type(key, __u32);
	__type(value, __u64);
} host_device_launches SEC(".maps");

SEC("gpu/exit/*")
int on_exit(struct gbpf_gpu_ctx *ctx)
{
	/* A non-zero pad lands under key 15: the check wants the host's device only. */
	__u32 k = ctx->device < 15 && ctx->device_pad == 0 ? ctx->device : 15;
	__u64 *v = bpf_map_lookup_elem(&gpu_device_exits, &k);

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
