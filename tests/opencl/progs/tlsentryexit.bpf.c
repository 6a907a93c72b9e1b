// SPDX-License-Identifier: MIT
/*
 * One thread-local map shared by two programs of one object: the entry
 * probe leaves a value derived from the work-item's id, the exit probe of
 * the same work-item must find exactly it (`matched`), and a work-item
 * never sees another's (each starts at zero: `fresh`).
 */
#include <gbpf/probe.h>

struct {
	__uint(type, BPF_MAP_TYPE_GPU_THREAD_LOCAL);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} mark SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} seen SEC(".maps") GBPF_PRINT_TABLE;

static __always_inline void count(__u32 k)
{
	__u64 *n = bpf_map_lookup_elem(&seen, &k);

	if (n)
		__sync_fetch_and_add(n, 1);
}

SEC("gpu/entry/*")
int tls_entry(struct gbpf_gpu_ctx *ctx)
{
	__u32 zero = 0;
	__u64 *v = bpf_map_lookup_elem(&mark, &zero);

	if (!v)
		return 0;
	if (*v == 0)
		count(1); /* fresh: key 1 */
	*v = 7 + bpf_gpu_global_thread_id();
	return 0;
}

SEC("gpu/exit/*")
int tls_exit(struct gbpf_gpu_ctx *ctx)
{
	__u32 zero = 0;
	__u64 *v = bpf_map_lookup_elem(&mark, &zero);

	if (v && *v == 7 + bpf_gpu_global_thread_id())
		count(0); /* matched: key 0 */
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
