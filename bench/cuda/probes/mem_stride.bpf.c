// SPDX-License-Identifier: MIT
/*
 * The second half of examples/mem_trace/mem_trace.bpf.c alone: a log2
 * histogram of the distance between a thread's consecutive accesses (its
 * last address in a per-GPU-thread slot, the histogram per SM).
 * bench/cuda/run.sh runs it beside mem_trace and mem_count, and compares it
 * with the same histogram written by hand in CUDA (vecadd_bench.cu
 * -DHAND_MEMTRACE=3).
 */
#include <gbpf/probe.h>

#define SLOTS 48

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
int mem_stride(struct gbpf_gpu_ctx *ctx)
{
	__u64 *count, *last, d, addr = ctx->mem_addr;
	__u32 zero = 0, slot;

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
