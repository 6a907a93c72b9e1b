// SPDX-License-Identifier: MIT
/*
 * Attach windows of tests/cuda_agent/coexist_device.py: per kernel id, the
 * GPU threads that ran a probe site (gpu/exit, or gpu/entry when built with
 * -DTW_ENTRY: the replacement set), and, from the host launch probe of the
 * same set, the threads each launch asked for (grid x block) and the
 * launches. Within one attach window, a kernel instrumented from its first
 * launch in the window has exits (entries) == threads.
 *
 * An insert that loses a race to another thread's insert of the same key
 * counts into the winner's entry (NOEXIST, then look up again): every
 * count lands, so the counts are exact.
 */
#include <gbpf/probe.h>

#define COUNTER_MAP(name)                         \
	struct {                                  \
		__uint(type, BPF_MAP_TYPE_HASH);  \
		__uint(max_entries, 1024);        \
		__type(key, __u64);               \
		__type(value, __u64);             \
	} name SEC(".maps")

#ifdef TW_ENTRY
COUNTER_MAP(entries);
#define SITE_MAP entries
#define SITE "gpu/entry/*"
#else
COUNTER_MAP(exits);
#define SITE_MAP exits
#define SITE "gpu/exit/*"
#endif
COUNTER_MAP(threads);
COUNTER_MAP(launches);

#define COUNT_INTO(map, key, n)                                         \
	do {                                                            \
		__u64 zero_ = 0, *v_ = bpf_map_lookup_elem(&(map), &(key)); \
		if (!v_) {                                              \
			bpf_map_update_elem(&(map), &(key), &zero_, BPF_NOEXIST); \
			v_ = bpf_map_lookup_elem(&(map), &(key));       \
		}                                                       \
		if (v_)                                                 \
			__sync_fetch_and_add(v_, (n));                  \
	} while (0)

SEC(SITE)
int on_site(struct gbpf_gpu_ctx *ctx)
{
	__u64 id = ctx->kernel_id;

	COUNT_INTO(SITE_MAP, id, 1);
	return 0;
}

SEC("host/launch")
int on_launch(struct gbpf_host_launch_ctx *ctx)
{
	__u64 id = ctx->kernel_id;
	__u64 n = (__u64)ctx->grid[0] * ctx->grid[1] * ctx->grid[2] * ctx->block[0] * ctx->block[1] *
		  ctx->block[2];

	COUNT_INTO(threads, id, n);
	COUNT_INTO(launches, id, 1);
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
