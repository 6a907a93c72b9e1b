// SPDX-License-Identifier: MIT
/*
 * threadhist with a plain increment: the same per-GPU-thread counter as
 * examples/threadhist/threadhist.bpf.c, but `*count += 1` instead of an
 * atomic add (each thread owns its slot; the CUDA code generator still
 * emits one red.global.add for it, since the value is not read after, so
 * concurrent launches count exactly too). bench/cuda/run.sh compares it with the same counter
 * written by hand in CUDA (vecadd_bench.cu -DHAND_THREADHIST), which is a
 * plain increment too; threadhist.bpf.c is compared with the hand-written
 * atomicAdd (-DHAND_THREADHIST_ATOMIC).
 */
#include <gbpf/probe.h>

struct {
	__uint(type, BPF_MAP_TYPE_PERGPUTHREAD_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} thread_exits SEC(".maps");

SEC("gpu/exit/*")
int threadhist_plain(struct gbpf_gpu_ctx *ctx)
{
	__u32 zero = 0;
	__u64 *count = bpf_map_lookup_elem(&thread_exits, &zero);

	if (count)
		*count += 1;
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
