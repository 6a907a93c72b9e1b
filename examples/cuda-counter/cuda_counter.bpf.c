// SPDX-License-Identifier: MIT
/*
 * cuda-counter: calls and total GPU time per kernel. Thread (0,0,0) of each
 * block records its entry and exit times; the per-kernel totals sum the
 * block durations (an upper bound of busy time across SMs).
 *   gbpf run -i 1 cuda_counter.bpf.o -- ./app
 */
#include <gbpf/probe.h>

struct kernel_stats {
	__u64 calls;      /* launches (counted by block (0,0,0)) */
	__u64 blocks;     /* blocks that ran */
	__u64 block_ns;   /* sum of block durations */
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u64); /* kernel id */
	__type(value, struct kernel_stats);
} stats SEC(".maps");

/* Entry time of each block of the current launch, indexed by SM (one block per SM at a time is an approximation). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} block_start SEC(".maps");

static __inline int first_thread(void)
{
	__u64 x, y, z;

	bpf_gpu_thread_idx(&x, &y, &z);
	return (x | y | z) == 0;
}

SEC("gpu/entry/*")
int kernel_entry(struct gbpf_gpu_ctx *ctx)
{
	__u32 zero = 0;
	__u64 *t;

	if (!first_thread())
		return 0;
	t = bpf_map_lookup_elem(&block_start, &zero);
	if (t)
		*t = bpf_gpu_globaltimer();
	return 0;
}

SEC("gpu/exit/*")
int kernel_exit(struct gbpf_gpu_ctx *ctx)
{
	struct kernel_stats init = {}, *s;
	__u64 id = ctx->kernel_id, *t, x, y, z;
	__u32 zero = 0;

	if (!first_thread())
		return 0;
	s = bpf_map_lookup_elem(&stats, &id);
	if (!s) {
		bpf_map_update_elem(&stats, &id, &init, BPF_NOEXIST);
		s = bpf_map_lookup_elem(&stats, &id);
		if (!s)
			return 0;
	}
	bpf_gpu_block_idx(&x, &y, &z);
	if ((x | y | z) == 0)
		__sync_fetch_and_add(&s->calls, 1);
	__sync_fetch_and_add(&s->blocks, 1);
	t = bpf_map_lookup_elem(&block_start, &zero);
	if (t && *t)
		__sync_fetch_and_add(&s->block_ns, bpf_gpu_globaltimer() - *t);
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
