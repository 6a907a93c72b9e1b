// SPDX-License-Identifier: MIT
/* Every GPU thread's exit of every kernel (atomic, one shared counter) and every launch. */
#include <gbpf/probe.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} exitcount SEC(".maps");

SEC("gpu/exit/*")
int count_exit(struct gbpf_gpu_ctx *ctx)
{
	__u32 k = 0;
	__u64 *v = bpf_map_lookup_elem(&exitcount, &k);

	if (v)
		__sync_fetch_and_add(v, 1);
	return 0;
}

SEC("host/launch")
int count_launch(struct gbpf_host_launch_ctx *ctx)
{
	__u32 k = 1;
	__u64 *v = bpf_map_lookup_elem(&exitcount, &k);

	if (v)
		__sync_fetch_and_add(v, 1);
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
