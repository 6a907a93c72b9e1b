// SPDX-License-Identifier: MIT
/*
 * mem_stride (the distance histogram alone) with the thread's last address
 * in a GPU_THREAD_LOCAL map; compared with vecadd_bench.cu -DHAND_MEMTRACE=11.
 */
#define MEM_TRACE_STRIDE
#define MEM_TRACE_LAST_THREAD_LOCAL
#include "../../../examples/mem_trace/mem_trace.h"

SEC("gpu/mem/*")
int mem_stride_local(struct gbpf_gpu_ctx *ctx)
{
	mem_trace_stride(ctx);
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
