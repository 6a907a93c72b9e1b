/* SPDX-License-Identifier: MIT */
/*
 * A gpu/mem probe that replaces every value the application stores with 0
 * (ctx->mem_value): refused unless the user runs gbpf with
 * --allow-app-writes, on the controller and on the agent alike. A
 * host/launch probe next to it counts launches, so the run still shows
 * that the other programs work.
 */
#include <gbpf/probe.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} launch_count SEC(".maps");

SEC("gpu/mem/*")
int zero_stores(struct gbpf_gpu_ctx *ctx)
{
	if (ctx->mem_kind == GBPF_MEM_STORE)
		ctx->mem_value = 0;
	return 0;
}

SEC("host/launch")
int count_all(struct gbpf_host_launch_ctx *ctx)
{
	__u32 k = 0;
	__u64 *v = bpf_map_lookup_elem(&launch_count, &k);

	if (v)
		__sync_fetch_and_add(v, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
