// SPDX-License-Identifier: MIT
/*
 * Verifier corpus in C: programs the verifier must reject, each preceded by
 * "EXPECT <function>: reject <text of the reason>".
 */
#include <gbpf/probe.h>

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, __u64);
} counts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 16);
} events SEC(".maps");

/* EXPECT no_null_check: reject invalid mem access 'map_value_or_null' */
SEC("gpu/entry/*")
int no_null_check(struct gbpf_gpu_ctx *ctx)
{
	__u32 k = 1;
	__u64 *v = bpf_map_lookup_elem(&counts, &k);

	return *v;
}

/* EXPECT write_context: reject cannot write into ctx */
SEC("gpu/exit/*")
int write_context(struct gbpf_gpu_ctx *ctx)
{
	ctx->launch_id = 0;
	return 0;
}

/* EXPECT read_mem_field_at_entry: reject invalid access to ctx */
SEC("gpu/entry/*")
int read_mem_field_at_entry(struct gbpf_gpu_ctx *ctx)
{
	return ctx->mem_addr;
}

/* EXPECT read_mem_value_at_barrier: reject reads mem_value, a gpu/mem field a gpu/barrier probe does not have */
SEC("gpu/barrier/*")
int read_mem_value_at_barrier(struct gbpf_gpu_ctx *ctx)
{
	return ctx->device + ctx->mem_value;
}

/* EXPECT deref_app_memory: reject invalid mem access 'scalar' */
SEC("gpu/mem/*")
int deref_app_memory(struct gbpf_gpu_ctx *ctx)
{
	return *(volatile __u64 *)ctx->mem_addr;
}

/* EXPECT write_app_memory: reject invalid mem access 'scalar' */
SEC("gpu/mem/*")
int write_app_memory(struct gbpf_gpu_ctx *ctx)
{
	*(volatile __u32 *)ctx->mem_addr = 0;
	return 0;
}

/* EXPECT host_read_on_gpu: reject is host-only */
SEC("gpu/entry/*")
int host_read_on_gpu(struct gbpf_gpu_ctx *ctx)
{
	__u64 v = 0;

	bpf_probe_read_user(&v, sizeof(v), (void *)ctx->params);
	return v;
}

/* EXPECT gpu_helper_on_host: reject is GPU-only */
SEC("host/launch")
int gpu_helper_on_host(struct gbpf_host_launch_ctx *ctx)
{
	return bpf_gpu_globaltimer();
}

/* EXPECT leak_record: reject unreleased reference */
SEC("gpu/entry/*")
int leak_record(struct gbpf_gpu_ctx *ctx)
{
	__u64 *e = bpf_ringbuf_reserve(&events, 8, 0);

	if (!e)
		return 0;
	*e = ctx->kernel_id;
	if (ctx->launch_id & 1)
		bpf_ringbuf_submit(e, 0);
	return 0;
}

/* EXPECT unbounded_index: reject math between map_value pointer and register with unbounded */
SEC("gpu/entry/*")
int unbounded_index(struct gbpf_gpu_ctx *ctx)
{
	__u32 k = 1;
	__u8 *v = bpf_map_lookup_elem(&counts, &k);

	if (!v)
		return 0;
	return v[ctx->launch_id];
}

/* EXPECT off_by_one_index: reject invalid access to map_value */
SEC("gpu/entry/*")
int off_by_one_index(struct gbpf_gpu_ctx *ctx)
{
	__u32 k = 1;
	__u8 *v = bpf_map_lookup_elem(&counts, &k);
	__u64 i = ctx->launch_id;

	if (!v || i > 8)
		return 0;
	return v[i];
}

/* EXPECT endless: reject infinite loop detected */
SEC("gpu/entry/*")
int endless(struct gbpf_gpu_ctx *ctx)
{
	volatile __u64 x = ctx->launch_id;

	while (x != 1)
		x = x / 2 + 0;
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
