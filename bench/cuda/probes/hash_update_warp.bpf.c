// SPDX-License-Identifier: MIT
/*
 * Every thread updates a device hash map at exit, keyed by its block
 * (block index mod 4096): the common shape of per-block, per-SM or
 * per-kernel counters, where a warp's lanes share a key. Compare with
 * hash_update.bpf.c, where the 32 lanes of a warp hit 32 different keys.
 */
#include <gbpf/probe.h>

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32);
	__type(value, __u64);
} counts SEC(".maps");

SEC("gpu/exit/*")
int on_exit(struct gbpf_gpu_ctx *ctx)
{
	__u64 bx, by, bz, one = 1, *v;
	__u32 key;

	bpf_gpu_block_idx(&bx, &by, &bz);
	key = (__u32)(bx & 4095);
	v = bpf_map_lookup_elem(&counts, &key);
	if (v) {
		__sync_fetch_and_add(v, 1);
		return 0;
	}
	if (bpf_map_update_elem(&counts, &key, &one, BPF_NOEXIST))
		if ((v = bpf_map_lookup_elem(&counts, &key)))
			__sync_fetch_and_add(v, 1);
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
