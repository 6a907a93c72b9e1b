// SPDX-License-Identifier: MIT
/*
 * The first half of examples/mem_trace/mem_trace.bpf.c alone: accesses per
 * (kind, space, size) in a per-SM hash, no per-thread state. bench/cuda/run.sh
 * runs it beside mem_trace and mem_stride to say which half costs what, and
 * compares it with the same counter written by hand in CUDA
 * (vecadd_bench.cu -DHAND_MEMTRACE=2).
 */
#include <gbpf/probe.h>

struct access_key {
	__u32 kind;
	__u32 space;
	__u32 size;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 256);
	__type(key, struct access_key);
	__type(value, __u64);
} accesses SEC(".maps");

SEC("gpu/mem/*")
int mem_count(struct gbpf_gpu_ctx *ctx)
{
	struct access_key key = {
		.kind = ctx->mem_kind,
		.space = ctx->mem_space,
		.size = ctx->mem_size,
	};
	__u64 one = 1, *count;

	count = bpf_map_lookup_elem(&accesses, &key);
	if (count)
		__sync_fetch_and_add(count, 1);
	else if (bpf_map_update_elem(&accesses, &key, &one, BPF_NOEXIST))
		if ((count = bpf_map_lookup_elem(&accesses, &key)))
			__sync_fetch_and_add(count, 1);
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
