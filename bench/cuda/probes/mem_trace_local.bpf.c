// SPDX-License-Identifier: MIT
/*
 * examples/mem_trace with the thread's last address in a GPU_THREAD_LOCAL
 * map (the thread's frame, zero at its start) instead of a per-GPU-thread
 * slot in global memory. bench/cuda/run.sh runs it beside mem_trace and
 * compares it with the same statistics written by hand in CUDA, the last
 * address in a register (vecadd_bench.cu -DHAND_MEMTRACE=10).
 */
#define MEM_TRACE_COUNTS
#define MEM_TRACE_STRIDE
#define MEM_TRACE_LAST_THREAD_LOCAL
#include "../../../examples/mem_trace/mem_trace.h"

SEC("gpu/mem/*")
int mem_trace_local(struct gbpf_gpu_ctx *ctx)
{
	mem_trace_count(ctx);
	mem_trace_stride(ctx);
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
