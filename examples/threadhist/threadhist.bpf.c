// SPDX-License-Identifier: MIT
/*
 * threadhist: how many times each GPU thread finished a kernel.
 * One counter per GPU thread of the launch (a per-GPU-thread array sized
 * from the real launch), incremented at every exit of the kernel.
 *   gbpf run threadhist.bpf.o -- ./vec_add
 */
#include <gbpf/probe.h>

struct {
	__uint(type, BPF_MAP_TYPE_PERGPUTHREAD_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} thread_exits SEC(".maps");

SEC("gpu/exit/*")
int threadhist(struct gbpf_gpu_ctx *ctx)
{
	__u32 zero = 0;
	__u64 *count = bpf_map_lookup_elem(&thread_exits, &zero);

	if (count)
		__sync_fetch_and_add(count, 1); /* atomic: two launches of a kernel on two streams share the slots */
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
