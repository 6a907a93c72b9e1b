// SPDX-License-Identifier: MIT
/*
 * mem_trace: memory access pattern statistics, aggregated on the device:
 * accesses per (kind, space, size) and a log2 histogram of the distance
 * between consecutive accesses of the same thread at the same site.
 *   gbpf run mem_trace.bpf.o -- ./vec_add
 *
 * Both counter maps are per-CPU, which on a GPU means one copy per SM:
 * every access of every thread bumps one of a handful of counters, and a
 * single copy for the whole GPU would serialise all the SMs' atomics on
 * two addresses. Per SM the warps of one SM share a copy (one warp-
 * aggregated atomic per warp and access), and `gbpf run` prints the sum
 * of the copies under each key, so the output is the same as with one
 * copy.
 */
#include <gbpf/probe.h>

#define SLOTS 48

struct access_key {
	__u32 kind;  /* GBPF_MEM_LOAD / STORE / ATOMIC */
	__u32 space; /* GBPF_SPACE_* */
	__u32 size;  /* bytes */
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 256);
	__type(key, struct access_key);
	__type(value, __u64);
} accesses SEC(".maps");

/* log2 histogram of |address - previous address| (bytes) per thread. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SLOTS);
	__type(key, __u32);
	__type(value, __u64);
} stride SEC(".maps") GBPF_PRINT_LOG2_HIST;

struct {
	__uint(type, BPF_MAP_TYPE_PERGPUTHREAD_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} last_addr SEC(".maps");

SEC("gpu/mem/*")
int mem_trace(struct gbpf_gpu_ctx *ctx)
{
	struct access_key key = {
		.kind = ctx->mem_kind,
		.space = ctx->mem_space,
		.size = ctx->mem_size,
	};
	__u64 one = 1, *count, *last, d, addr = ctx->mem_addr;
	__u32 zero = 0, slot;

	count = bpf_map_lookup_elem(&accesses, &key);
	if (count)
		__sync_fetch_and_add(count, 1);
	else if (bpf_map_update_elem(&accesses, &key, &one, BPF_NOEXIST))
		/* another thread inserted it first */
		if ((count = bpf_map_lookup_elem(&accesses, &key)))
			__sync_fetch_and_add(count, 1);

	last = bpf_map_lookup_elem(&last_addr, &zero);
	if (!last)
		return 0;
	if (*last) {
		d = addr > *last ? addr - *last : *last - addr;
		slot = gbpf_log2l(d);
		if (slot >= SLOTS)
			slot = SLOTS - 1;
		count = bpf_map_lookup_elem(&stride, &slot);
		if (count)
			__sync_fetch_and_add(count, 1);
	}
	*last = addr;
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
