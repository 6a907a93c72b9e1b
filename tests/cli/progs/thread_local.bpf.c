// SPDX-License-Identifier: MIT
/*
 * A thread-local map run by `gbpf prog run` on the cpu backend: each
 * instance (an emulated GPU thread) starts with zeros, so every thread
 * returns 0 + 1 + 2 = 3 from its three bumps, however many threads ran
 * before it on the same host thread; `runs` counts the instances.
 */
#include <gbpf/probe.h>

struct {
	__uint(type, BPF_MAP_TYPE_GPU_THREAD_LOCAL);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} mine SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} runs SEC(".maps");

SEC("prog")
int thread_local(void *ctx)
{
	__u32 one = 1, zero = 0;
	__u64 *v = bpf_map_lookup_elem(&mine, &one), *n, sum = 0;

	if (!v)
		return -1;
	for (int i = 0; i < 3; i++)
		sum += (*v)++;
	n = bpf_map_lookup_elem(&runs, &zero);
	if (n)
		__sync_fetch_and_add(n, 1);
	return (int)sum;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
