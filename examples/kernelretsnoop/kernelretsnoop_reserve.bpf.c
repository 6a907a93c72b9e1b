// SPDX-License-Identifier: MIT
/*
 * kernelretsnoop: one event per GPU thread as it leaves a kernel, with the
 * thread's coordinates and the GPU timestamp, through a ring buffer, written
 * with bpf_ringbuf_reserve / submit (kernelretsnoop.bpf.c builds it on the
 * stack and copies it with bpf_ringbuf_output). On a GPU both cost the same:
 * the code generator keeps this record in the probe's frame until the submit,
 * which writes it a warp at a time (docs/MAPS.md).
 *   gbpf run kernelretsnoop_reserve.bpf.o -- ./vec_add
 */
#include <gbpf/probe.h>

struct exit_event {
	__u64 kernel_id;
	__u64 launch_id;
	__u64 time_ns;
	__u32 block[3];
	__u32 thread[3];
};

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 24);
} events SEC(".maps");

SEC("gpu/exit/*")
int kernelretsnoop_reserve(struct gbpf_gpu_ctx *ctx)
{
	struct exit_event *e;
	__u64 x, y, z;

	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e)
		return 0; /* full: the drop is counted and reported */
	e->kernel_id = ctx->kernel_id;
	e->launch_id = ctx->launch_id;
	e->time_ns = bpf_gpu_globaltimer();
	bpf_gpu_block_idx(&x, &y, &z);
	e->block[0] = x;
	e->block[1] = y;
	e->block[2] = z;
	bpf_gpu_thread_idx(&x, &y, &z);
	e->thread[0] = x;
	e->thread[1] = y;
	e->thread[2] = z;
	bpf_ringbuf_submit(e, 0);
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
