// SPDX-License-Identifier: MIT
/*
 * The first half of examples/mem_trace alone: accesses per (kind, space,
 * size) in a per-SM hash, no per-thread state. bench/cuda/run.sh runs it
 * beside mem_trace and mem_stride to say which half costs what, and
 * compares it with the same counter written by hand in CUDA
 * (vecadd_bench.cu -DHAND_MEMTRACE=2).
 */
#define MEM_TRACE_COUNTS
#include "../../../examples/mem_trace/mem_trace.h"

SEC("gpu/mem/*")
int mem_count(struct gbpf_gpu_ctx *ctx)
{
	mem_trace_count(ctx);
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
