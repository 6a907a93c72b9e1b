/* SPDX-License-Identifier: MIT */
/*
 * BPF-to-BPF calls (static and global .text functions, a chain, a callback
 * address for bpf_loop), several programs in one section, and every section
 * name of gbpf's own scheme.
 */
#include "progs.h"

struct {
	__uint(type, T_GPU_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

__u64 g_sum;

static __noinline int leaf(int x)
{
	return x * 3 + 1;
}

static __noinline int middle(int x)
{
	return leaf(x) + leaf(x + 1);
}

__noinline int global_helper(int x)
{
	return middle(x) ^ 5;
}

static long loop_cb(__u32 i, void *ctx)
{
	g_sum += i;
	return 0;
}

/* Two programs in one section. */
SEC("gpu/entry/vec_add*")
int first_in_section(void *ctx)
{
	return leaf(1);
}

SEC("gpu/entry/vec_add*")
int second_in_section(void *ctx)
{
	__u32 k = 2;
	__u64 *v = bpf_map_lookup_elem(&counters, &k);

	if (v)
		*v = global_helper(4);
	return middle(2);
}

SEC("gpu/exit/ns::kernel<float>")
int with_callback(void *ctx)
{
	bpf_loop(8, loop_cb, 0, 0);
	return (int)g_sum;
}

SEC("gpu/mem/*")
int mem_all(void *ctx)
{
	return 0;
}

SEC("gpu/barrier/reduce")
int on_barrier(void *ctx)
{
	return 0;
}

SEC("host/launch")
int launch_all(void *ctx)
{
	return 0;
}

SEC("host/launch/gemm_*")
int launch_gemm(void *ctx)
{
	return 0;
}

SEC("host/memcpy")
int on_memcpy(void *ctx)
{
	return 0;
}

SEC("host/malloc")
int on_malloc(void *ctx)
{
	return 0;
}

SEC("host/sync")
int on_sync(void *ctx)
{
	return 0;
}

SEC("host/module_load")
int on_module_load(void *ctx)
{
	return 0;
}

SEC("gpu/entry")
int entry_every_kernel(void *ctx)
{
	return 0;
}

SEC("xdp")
int plain_runnable(void *ctx)
{
	return global_helper(1);
}

char LICENSE[] SEC("license") = "GPL";
