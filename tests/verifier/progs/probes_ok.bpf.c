// SPDX-License-Identifier: MIT
/*
 * Verifier corpus in C: programs the verifier must accept. Each function is
 * preceded by "EXPECT <function>: accept" for tests/verifier/test_c_corpus.c.
 */
#include <gbpf/probe.h>

struct stats {
	__u64 calls;
	__u64 ns;
	__u64 hist[16];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256);
	__type(key, __u64);
	__type(value, struct stats);
} per_kernel SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_GPU_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_GPU_RINGBUF);
	__uint(max_entries, 1 << 16);
} events SEC(".maps");

struct event {
	__u64 kernel_id;
	__u64 addr;
	__u32 size;
	__u32 kind;
};

static __noinline __u64 bucket(__u64 v)
{
	__u64 b = 0;

	for (int i = 0; i < 15; i++)
		if (v >> (i + 1))
			b = i + 1;
	return b;
}

/* EXPECT count_launches: accept */
SEC("gpu/entry/*")
int count_launches(struct gbpf_gpu_ctx *ctx)
{
	__u32 k = 0;
	__u64 *v = bpf_map_lookup_elem(&counters, &k);

	if (v)
		__sync_fetch_and_add(v, 1);
	return 0;
}

/* EXPECT per_kernel_stats: accept */
SEC("gpu/exit/*")
int per_kernel_stats(struct gbpf_gpu_ctx *ctx)
{
	__u64 id = ctx->kernel_id, now = bpf_gpu_globaltimer();
	struct stats init = {}, *s;

	s = bpf_map_lookup_elem(&per_kernel, &id);
	if (!s) {
		bpf_map_update_elem(&per_kernel, &id, &init, BPF_NOEXIST);
		s = bpf_map_lookup_elem(&per_kernel, &id);
		if (!s)
			return 0;
	}
	__sync_fetch_and_add(&s->calls, 1);
	__sync_fetch_and_add(&s->hist[bucket(now & 0xffff)], 1);
	return 0;
}

/* EXPECT trace_stores: accept */
SEC("gpu/mem/*")
int trace_stores(struct gbpf_gpu_ctx *ctx)
{
	struct event *e;

	if (ctx->mem_kind != GBPF_MEM_STORE)
		return 0;
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e)
		return 0;
	e->kernel_id = ctx->kernel_id;
	e->addr = ctx->mem_addr;
	e->size = ctx->mem_size;
	e->kind = ctx->mem_kind;
	bpf_ringbuf_submit(e, 0);
	return 0;
}

/* EXPECT first_thread_only: accept */
SEC("gpu/entry/*")
int first_thread_only(struct gbpf_gpu_ctx *ctx)
{
	__u64 x, y, z;

	bpf_gpu_thread_idx(&x, &y, &z);
	if (x | y | z)
		return 0;
	bpf_printk("kernel %llx launch %llu", ctx->kernel_id, ctx->launch_id);
	return 0;
}

/* EXPECT exits_per_device: accept */
SEC("gpu/exit/*")
int exits_per_device(struct gbpf_gpu_ctx *ctx)
{
	__u32 dev = ctx->device & 3;
	__u64 *v = bpf_map_lookup_elem(&counters, &dev);

	if (v)
		__sync_fetch_and_add(v, 1);
	return 0;
}

/* EXPECT lane_histogram: accept */
SEC("gpu/barrier/*")
int lane_histogram(struct gbpf_gpu_ctx *ctx)
{
	__u32 lane = bpf_gpu_lane_id() & 3;
	__u64 *v = bpf_map_lookup_elem(&counters, &lane);

	if (v)
		__sync_fetch_and_add(v, 1);
	return 0;
}

/* EXPECT launch_names: accept */
SEC("host/launch")
int launch_names(struct gbpf_host_launch_ctx *ctx)
{
	struct event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

	if (!e)
		return 0;
	e->kernel_id = ctx->kernel_id;
	e->addr = ctx->grid[0] * ctx->block[0];
	e->size = ctx->shared_mem_bytes;
	e->kind = ctx->kernel_name[0];
	bpf_ringbuf_submit(e, 0);
	return 0;
}

/* EXPECT copy_sizes: accept */
SEC("host/memcpy")
int copy_sizes(struct gbpf_host_call_ctx *ctx)
{
	__u32 k = ctx->direction & 3;
	__u64 *v = bpf_map_lookup_elem(&counters, &k);

	if (v)
		__sync_fetch_and_add(v, ctx->bytes);
	return 0;
}

/* EXPECT bounded_loop: accept */
SEC("gpu/entry/*")
int bounded_loop(struct gbpf_gpu_ctx *ctx)
{
	__u64 sum = 0;

	for (int i = 0; i < 64; i++)
		sum += (ctx->launch_id >> i) & 1;
	return sum;
}

/* EXPECT discard_odd: accept */
SEC("gpu/entry/*")
int discard_odd(struct gbpf_gpu_ctx *ctx)
{
	struct event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

	if (!e)
		return 0;
	e->kernel_id = ctx->kernel_id;
	if (ctx->launch_id & 1)
		bpf_ringbuf_discard(e, 0);
	else
		bpf_ringbuf_submit(e, 0);
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
