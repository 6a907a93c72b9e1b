// SPDX-License-Identifier: MIT
/* Counts exits of target_k on the GPU and launches of every kernel on the host. */
#include <gbpf/probe.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} counts SEC(".maps");

SEC("gpu/exit/target_k")
int on_exit(struct gbpf_gpu_ctx *ctx)
{
	__u32 k = 0;
	__u64 *v;

	/* Reads the launch id, so the agent sets it per launch (it is never 0). */
	if (!ctx->launch_id)
		return 1;
	v = bpf_map_lookup_elem(&counts, &k);
	if (v)
		__sync_fetch_and_add(v, 1);
	return 0;
}

SEC("host/launch")
int on_launch(struct gbpf_host_launch_ctx *ctx)
{
	__u32 k = 1;
	__u64 *v = bpf_map_lookup_elem(&counts, &k);

	if (v)
		__sync_fetch_and_add(v, 1);
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
