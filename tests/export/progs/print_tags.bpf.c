// SPDX-License-Identifier: MIT
/*
 * The print tags end to end (test_run_export.py): at each launch, log2 of the
 * grid's x size counted three ways - an array tagged GBPF_PRINT_LOG2_HIST, a
 * hash keyed by the slot tagged the same (bcc's BPF_HISTOGRAM), and an array
 * named like a histogram but tagged GBPF_PRINT_TABLE - and one histogram per
 * kernel (u64[16] values keyed by the kernel's first 8 name bytes).
 */
#include <gbpf/probe.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 16);
	__type(key, __u32);
	__type(value, __u64);
} grid_log2 SEC(".maps") GBPF_PRINT_LOG2_HIST;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, __u64);
} grid_slots SEC(".maps") GBPF_PRINT_LOG2_HIST;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 16);
	__type(key, __u32);
	__type(value, __u64);
} grid_hist_raw SEC(".maps") GBPF_PRINT_TABLE;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16);
	__type(key, __u64);
	__type(value, __u64[16]);
} per_kernel SEC(".maps") GBPF_PRINT_LOG2_HIST;

static __always_inline void count(void *map, __u32 slot)
{
	__u64 one = 1, *v = bpf_map_lookup_elem(map, &slot);

	if (v)
		__sync_fetch_and_add(v, 1);
	else
		bpf_map_update_elem(map, &slot, &one, BPF_NOEXIST);
}

SEC("host/launch")
int on_launch(struct gbpf_host_launch_ctx *ctx)
{
	__u32 g = ctx->grid[0], slot = 0;
	__u64 name = 0, *h;
	int i;

	for (i = 0; i < 15; i++) {
		if (g > 1) {
			g >>= 1;
			slot++;
		}
	}
	count(&grid_log2, slot);
	count(&grid_slots, slot);
	count(&grid_hist_raw, slot);
	__builtin_memcpy(&name, ctx->kernel_name, sizeof(name));
	h = bpf_map_lookup_elem(&per_kernel, &name);
	if (!h) {
		__u64 zero[16] = {};

		bpf_map_update_elem(&per_kernel, &name, zero, BPF_NOEXIST);
		h = bpf_map_lookup_elem(&per_kernel, &name);
	}
	if (h)
		__sync_fetch_and_add(&h[slot & 15], 1);
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
