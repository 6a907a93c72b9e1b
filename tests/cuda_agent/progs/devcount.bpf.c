// SPDX-License-Identifier: MIT
/*
 * Counts exits of target_k in a map only the GPU uses: the agent gives each
 * context its own device copy and merges them into the host view.
 */
#include <gbpf/probe.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} exits SEC(".maps");

SEC("gpu/exit/target_k")
int on_exit(struct gbpf_gpu_ctx *ctx)
{
	__u32 k = 0;
	__u64 *v = bpf_map_lookup_elem(&exits, &k);

	if (v)
		__sync_fetch_and_add(v, 1);
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
