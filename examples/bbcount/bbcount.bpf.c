// SPDX-License-Identifier: MIT
/*
 * bbcount: how many times each basic block of each GPU kernel ran
 * (summed over all threads), counted on the device.
 *   gbpf run bbcount.bpf.o -- ./vec_add
 *
 * The counters form one array: kernel slot (kernel id mod KERNEL_SLOTS)
 * times MAX_BLOCKS plus the block's index, so that at every block the key
 * is a constant (the injector folds block_index and kernel_id) and the
 * count is one warp-aggregated atomic add. The array is per-CPU, which on
 * a GPU means one copy per SM: every thread of the grid runs a kernel's
 * first block, and one counter for all of them would serialise the whole
 * GPU's atomics on one address (21x on vecadd); per SM they spread over
 * the SMs' copies, and the host sums them. The kernel_slots array says
 * which kernel id owns each slot.
 */
#include <gbpf/probe.h>

#define KERNEL_SLOTS 16
#define MAX_BLOCKS 1024

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, KERNEL_SLOTS * MAX_BLOCKS);
	__type(key, __u32);
	__type(value, __u64);
} bb_counts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_GPU_ARRAY);
	__uint(max_entries, KERNEL_SLOTS);
	__type(key, __u32);
	__type(value, __u64);
} kernel_slots SEC(".maps");

SEC("gpu/block/*")
int bbcount(struct gbpf_gpu_block_ctx *ctx)
{
	__u32 slot = (__u32)(ctx->kernel_id % KERNEL_SLOTS);
	__u32 key = slot * MAX_BLOCKS + ctx->block_index;
	__u64 *count, *owner;

	if (ctx->block_index >= MAX_BLOCKS)
		return 0;
	count = bpf_map_lookup_elem(&bb_counts, &key);
	if (count)
		__sync_fetch_and_add(count, 1);
	/*
	 * Record the slot's kernel once per launch: the first thread's entry
	 * block. The key is built here, not above, so that other blocks (where
	 * this branch folds away) store nothing for it.
	 */
	if (ctx->block_index == 0 && bpf_gpu_global_thread_id() == 0) {
		__u32 owner_key = (__u32)(ctx->kernel_id % KERNEL_SLOTS);

		owner = bpf_map_lookup_elem(&kernel_slots, &owner_key);
		if (owner)
			*owner = ctx->kernel_id;
	}
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
