/* SPDX-License-Identifier: MIT */
/* Counts launches per kernel, a log2 histogram of grid sizes, one ring record per launch. */
#include <linux/bpf.h>
#include <linux/types.h>
#include <bpf/bpf_helpers.h>
#include <gbpf/probe_ctx.h>

struct name_key {
	char name[32];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, struct name_key);
	__type(value, __u64);
} launches SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 32);
	__type(key, __u32);
	__type(value, __u64);
} grid_hist SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} events SEC(".maps");

struct event {
	__u64 launch_id;
	__u32 grid;
	__u32 block;
	char name[16];
};

SEC("host/launch")
int count_launch(struct gbpf_host_launch_ctx *ctx)
{
	struct name_key k = {};
	struct event e = {};
	__u64 one = 1, *v;
	__u32 g = ctx->grid[0], slot = 0;
	int i;

	__builtin_memcpy(k.name, ctx->kernel_name, sizeof(k.name));
	v = bpf_map_lookup_elem(&launches, &k);
	if (!v && bpf_map_update_elem(&launches, &k, &one, BPF_NOEXIST) == 0)
		goto counted;
	/* Another thread inserted it first: count on its entry. */
	if (!v)
		v = bpf_map_lookup_elem(&launches, &k);
	if (v)
		__sync_fetch_and_add(v, 1);
counted:
	for (i = 0; i < 31; i++) {
		if (g > 1) {
			g >>= 1;
			slot++;
		}
	}
	v = bpf_map_lookup_elem(&grid_hist, &slot);
	if (v)
		__sync_fetch_and_add(v, 1);
	e.launch_id = ctx->launch_id;
	e.grid = ctx->grid[0];
	e.block = ctx->block[0];
	__builtin_memcpy(e.name, ctx->kernel_name, sizeof(e.name));
	bpf_ringbuf_output(&events, &e, sizeof(e), 0);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
