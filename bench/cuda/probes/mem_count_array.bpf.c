// SPDX-License-Identifier: MIT
/*
 * Diagnostic beside mem_count: the same per-SM count of accesses at every
 * memory access, keyed by the access kind only, in a per-CPU (per-SM)
 * array instead of mem_count's per-SM hash of (kind, space, size). What
 * is left is the cost of an inlined probe with a map counter and no hash
 * lookup (a 4-byte key on the stack, a bounds check, the SM's slot, the
 * warp-aggregated add): bench/cuda/run.sh sets it between mem_count and
 * the same counters written by hand in CUDA.
 */
#include <gbpf/probe.h>

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u64);
} kinds SEC(".maps");

SEC("gpu/mem/*")
int mem_count_array(struct gbpf_gpu_ctx *ctx)
{
	__u32 kind = ctx->mem_kind;
	__u64 *count = bpf_map_lookup_elem(&kinds, &kind);

	if (count)
		__sync_fetch_and_add(count, 1);
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
