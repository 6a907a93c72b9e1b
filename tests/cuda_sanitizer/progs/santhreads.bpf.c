// SPDX-License-Identifier: MIT
/*
 * santhreads: the exact check of the Compute Sanitizer engine on apps whose
 * kernels we did not write (cuBLAS, PyTorch): every GPU thread enters and
 * exits once, so entries == exits == the threads the host launched.
 *   key 0: thread exits (gpu/exit)     key 1: host launches (host/launch)
 *   key 2: threads launched (sum of grid x block over host launches)
 *   key 3: thread entries (gpu/entry)
 */
#include <gbpf/probe.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u64);
} santhreads SEC(".maps");

static __always_inline void bump(__u32 k, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&santhreads, &k);

	if (v)
		__sync_fetch_and_add(v, n);
}

SEC("gpu/exit/*")
int san_exit(struct gbpf_gpu_ctx *ctx)
{
	bump(0, 1);
	return 0;
}

SEC("gpu/entry/*")
int san_entry(struct gbpf_gpu_ctx *ctx)
{
	bump(3, 1);
	return 0;
}

SEC("host/launch")
int san_launch(struct gbpf_host_launch_ctx *ctx)
{
	bump(1, 1);
	bump(2, (__u64)ctx->grid[0] * ctx->grid[1] * ctx->grid[2] * ctx->block[0] * ctx->block[1] * ctx->block[2]);
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
