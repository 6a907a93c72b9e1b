// SPDX-License-Identifier: MIT
/*
 * Probe of the hip interception tests: entry and exit of grid2d (the
 * multi_kernel app) and the entry of reduce_loop (a C kernel of the
 * module app's code object), plus a host/launch counter (launches and their
 * device). Only these
 * kernels get rewritten: vector_add of both apps is left alone.
 */
#include <gbpf/probe.h>

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, __u64); /* kernel id */
	__type(value, __u64);
} hits SEC(".maps");

static __inline void count(__u64 id)
{
	__u64 one = 1, *v = bpf_map_lookup_elem(&hits, &id);

	if (v)
		__sync_fetch_and_add(v, 1);
	else
		bpf_map_update_elem(&hits, &id, &one, BPF_NOEXIST);
}

SEC("gpu/entry/_Z6grid2dPiii")
int grid2d_entry(struct gbpf_gpu_ctx *ctx)
{
	count(ctx->kernel_id);
	return 0;
}

SEC("gpu/exit/_Z6grid2dPiii")
int grid2d_exit(struct gbpf_gpu_ctx *ctx)
{
	count(ctx->kernel_id + 1);
	return 0;
}

SEC("gpu/entry/reduce_loop")
int reduce_loop_entry(struct gbpf_gpu_ctx *ctx)
{
	count(ctx->kernel_id);
	return 0;
}

SEC("host/launch")
int launches(struct gbpf_host_launch_ctx *ctx)
{
	count(0);
	count(1000 + ctx->device); /* the launch's device (the fake runtime's current device is 2) */
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
