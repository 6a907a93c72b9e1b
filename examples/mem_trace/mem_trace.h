// SPDX-License-Identifier: MIT
/*
 * mem_trace's two halves, for mem_trace.bpf.c (both) and the benchmarks
 * that measure each alone (bench/cuda/probes/mem_count.bpf.c and
 * mem_stride.bpf.c): define MEM_TRACE_COUNTS and/or MEM_TRACE_STRIDE before
 * including it. Each half declares only its own maps, so an object that
 * uses one half does not allocate the other's (the per-thread last
 * address is 8 bytes for every GPU thread).
 *
 * MEM_TRACE_LAST_THREAD_LOCAL keeps the thread's last address in a
 * GPU_THREAD_LOCAL map instead: in the thread's frame for its run (zero at
 * its start), so the first access of each launch starts afresh rather than
 * measuring from the thread of the same index in the previous launch, and
 * no access reads or writes global memory for it. The CUDA and SPIR-V
 * backends keep such maps (bench/cuda/meson.build builds mem_trace.bpf.c
 * with it as mem_trace_local.bpf.o); the HIP backend and the Compute
 * Sanitizer engine refuse them.
 */
#ifndef GBPF_EXAMPLES_MEM_TRACE_H
#define GBPF_EXAMPLES_MEM_TRACE_H

#include <gbpf/probe.h>

#ifdef MEM_TRACE_COUNTS
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

/* accesses[(kind, space, size)] += 1 */
static __always_inline void mem_trace_count(struct gbpf_gpu_ctx *ctx)
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
		/* another thread inserted it first */
		if ((count = bpf_map_lookup_elem(&accesses, &key)))
			__sync_fetch_and_add(count, 1);
}
#endif

#ifdef MEM_TRACE_STRIDE
#define MEM_TRACE_SLOTS 48

/* log2 histogram of |address - previous address| (bytes) per thread. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, MEM_TRACE_SLOTS);
	__type(key, __u32);
	__type(value, __u64);
} stride SEC(".maps") GBPF_PRINT_LOG2_HIST;

struct {
#ifdef MEM_TRACE_LAST_THREAD_LOCAL
	__uint(type, BPF_MAP_TYPE_GPU_THREAD_LOCAL);
#else
	__uint(type, BPF_MAP_TYPE_PERGPUTHREAD_ARRAY);
#endif
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} last_addr SEC(".maps");

/* stride[log2 |addr - this thread's last address|] += 1; last address = addr */
static __always_inline void mem_trace_stride(struct gbpf_gpu_ctx *ctx)
{
	__u64 *count, *last, d, addr = ctx->mem_addr;
	__u32 zero = 0, slot;

	last = bpf_map_lookup_elem(&last_addr, &zero);
	if (!last)
		return;
	if (*last) {
		d = addr > *last ? addr - *last : *last - addr;
		slot = gbpf_log2l(d);
		if (slot >= MEM_TRACE_SLOTS)
			slot = MEM_TRACE_SLOTS - 1;
		count = bpf_map_lookup_elem(&stride, &slot);
		if (count)
			__sync_fetch_and_add(count, 1);
	}
	*last = addr;
}
#endif

#endif
