// SPDX-License-Identifier: MIT
/*
 * The second half of examples/mem_trace alone: a log2 histogram of the
 * distance between a thread's consecutive accesses (its last address in a
 * per-GPU-thread slot, the histogram per SM). bench/cuda/run.sh runs it
 * beside mem_trace and mem_count, and compares it with the same histogram
 * written by hand in CUDA (vecadd_bench.cu -DHAND_MEMTRACE=3). Built with
 * -DMEM_TRACE_LAST_THREAD_LOCAL (mem_stride_local.bpf.o) the last address is
 * thread-local instead (mem_trace.h), against -DHAND_MEMTRACE=11.
 */
#define MEM_TRACE_STRIDE
#include "../../../examples/mem_trace/mem_trace.h"

SEC("gpu/mem/*")
int mem_stride(struct gbpf_gpu_ctx *ctx)
{
	mem_trace_stride(ctx);
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
