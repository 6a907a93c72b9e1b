/* SPDX-License-Identifier: MIT */
/*
 * Ring buffer overflow: every launch writes 64 records of 64 bytes into a
 * 4 KiB ring, far more than it holds, and counts per outcome how many
 * outputs succeeded ("ok") and how many the full ring refused ("full"), so
 * that the controller's lost count can be checked exactly.
 */
#include <linux/bpf.h>
#include <linux/types.h>
#include <bpf/bpf_helpers.h>
#include <gbpf/probe_ctx.h>

struct name_key {
	char name[8];
};

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} flood SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4);
	__type(key, struct name_key);
	__type(value, __u64);
} outputs SEC(".maps");

struct rec {
	__u64 launch_id;
	__u64 i;
	__u8 pad[48];
};

static void count(const char *what, __u64 n)
{
	struct name_key k = {};
	__u64 *v;

	__builtin_memcpy(k.name, what, 5);
	v = bpf_map_lookup_elem(&outputs, &k);
	if (!v && bpf_map_update_elem(&outputs, &k, &n, BPF_NOEXIST) == 0)
		return;
	/* Another thread inserted it first: count on its entry. */
	if (!v)
		v = bpf_map_lookup_elem(&outputs, &k);
	if (v)
		__sync_fetch_and_add(v, n);
}

SEC("host/launch")
int flood_launch(struct gbpf_host_launch_ctx *ctx)
{
	struct rec r = {};
	__u64 ok, full = 0;
	int i;

	for (i = 0; i < 64; i++) {
		r.launch_id = ctx->launch_id;
		r.i = i;
		/* branch-free (a negative errno has the top bit set): one verifier state per iteration */
		full += (__u64)bpf_ringbuf_output(&flood, &r, sizeof(r), 0) >> 63;
	}
	ok = 64 - full;
	count("ok\0\0\0", ok);
	count("full\0", full);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
