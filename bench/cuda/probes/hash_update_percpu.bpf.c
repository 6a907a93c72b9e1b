// SPDX-License-Identifier: MIT
/*
 * hash_update with a per-CPU (per-SM) hash: the same keys and counts, each
 * SM counting into its own copy of the value (the host sums the copies), so
 * that the counters of one key are not one address for the whole GPU.
 * Every thread updates a device hash map at exit: key = global thread id
 * mod 4096 (so 4096 keys, each hit by many threads), value = count.
 */
#include <gbpf/probe.h>

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32);
	__type(value, __u64);
} counts SEC(".maps");

SEC("gpu/exit/*")
int on_exit(struct gbpf_gpu_ctx *ctx)
{
	__u64 bx, by, bz, tx, ty, tz, dx, dy, dz;
	__u64 one = 1, *v;
	__u32 key;

	bpf_gpu_block_idx(&bx, &by, &bz);
	bpf_gpu_block_dim(&dx, &dy, &dz);
	bpf_gpu_thread_idx(&tx, &ty, &tz);
	key = (__u32)((bx * dx + tx) & 4095);
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
