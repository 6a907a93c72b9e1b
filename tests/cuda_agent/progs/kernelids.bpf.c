// SPDX-License-Identifier: MIT
/*
 * Which kernels an app launched: host launches counted per kernel id
 * (FNV-1a 64 of the mangled name, the id gbpf_kernel_id computes), the
 * first 63 bytes of each kernel's name by id (reports cut long names, so
 * an id alone cannot always be matched), and, so that every kernel is
 * targeted by a GPU program and gets a report from the agent (instrumented,
 * or not and why), the exits of every instrumented thread.
 * tests/cuda_agent/apps/check_reports.py checks that each launched kernel
 * has a report.
 */
#include <gbpf/probe.h>

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u64);
	__type(value, __u64);
} launches SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u64);
	__type(value, char[64]);
} names SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} exits SEC(".maps");

SEC("gpu/exit/*")
int count_exit(struct gbpf_gpu_ctx *ctx)
{
	__u32 k = 0;
	__u64 *v = bpf_map_lookup_elem(&exits, &k);

	if (v)
		__sync_fetch_and_add(v, 1);
	return 0;
}

SEC("host/launch")
int count_launch(struct gbpf_host_launch_ctx *ctx)
{
	__u64 id = ctx->kernel_id, one = 1, *v;
	char name[64];

	v = bpf_map_lookup_elem(&launches, &id);
	if (v) {
		__sync_fetch_and_add(v, 1);
		return 0;
	}
	bpf_map_update_elem(&launches, &id, &one, BPF_NOEXIST);
	__builtin_memcpy(name, ctx->kernel_name, sizeof(name));
	bpf_map_update_elem(&names, &id, name, BPF_ANY);
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
