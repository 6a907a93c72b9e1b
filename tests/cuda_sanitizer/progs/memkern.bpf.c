// SPDX-License-Identifier: MIT
/*
 * memkern: memory accesses per (kernel, kind, space), the diagnostic twin of
 * examples/mem_trace for tests/cuda_sanitizer/device.sh: where mem_trace's
 * totals differ from Nsight Compute's, check_events.py mem-ncu lists the
 * kernels whose counts differ.
 */
#include <gbpf/probe.h>

struct memkern_key {
	__u64 kernel_id;
	__u32 kind;
	__u32 space;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1000);
	__type(key, struct memkern_key);
	__type(value, __u64);
} memkern SEC(".maps");

SEC("gpu/mem/*")
int memkern_count(struct gbpf_gpu_ctx *ctx)
{
	struct memkern_key key = {
		.kernel_id = ctx->kernel_id,
		.kind = ctx->mem_kind,
		.space = ctx->mem_space,
	};
	__u64 one = 1, *count;

	count = bpf_map_lookup_elem(&memkern, &key);
	if (count)
		__sync_fetch_and_add(count, 1);
	else if (bpf_map_update_elem(&memkern, &key, &one, BPF_NOEXIST))
		/* another thread inserted it first */
		if ((count = bpf_map_lookup_elem(&memkern, &key)))
			__sync_fetch_and_add(count, 1);
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
