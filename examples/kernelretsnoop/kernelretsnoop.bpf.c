// SPDX-License-Identifier: MIT
/*
 * kernelretsnoop: one event per GPU thread as it leaves a kernel, with the
 * thread's coordinates and the GPU timestamp, through a ring buffer.
 *   gbpf run kernelretsnoop.bpf.o -- ./vec_add
 *
 * The event is built on the stack and copied with bpf_ringbuf_output: on a
 * GPU that copy is done by the whole warp at once (one store per 8-byte word
 * of 32 consecutive words), several times cheaper than each thread writing
 * a record field by field into the ring. kernelretsnoop_reserve.bpf.c is the
 * same probe with bpf_ringbuf_reserve / submit, which the code generator
 * turns into the same warp-wide write (docs/benchmarks/sessions-18-22.md, session 19).
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
int kernelretsnoop(struct gbpf_gpu_ctx *ctx)
{
	struct exit_event ev, *e = &ev;
	__u64 x, y, z;

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
	/* full: the drop is counted and reported */
	bpf_ringbuf_output(&events, e, sizeof(*e), 0);
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
