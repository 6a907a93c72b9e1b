/* SPDX-License-Identifier: MIT */
/* One hash key per launch (its launch id): more keys than a screen, all of them printed. */
#include <linux/bpf.h>
#include <linux/types.h>
#include <bpf/bpf_helpers.h>
#include <gbpf/probe_ctx.h>

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, __u64);
} per_launch SEC(".maps");

SEC("host/launch")
int per_launch_count(struct gbpf_host_launch_ctx *ctx)
{
	__u64 key = ctx->launch_id, one = 1;

	bpf_map_update_elem(&per_launch, &key, &one, BPF_NOEXIST);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
