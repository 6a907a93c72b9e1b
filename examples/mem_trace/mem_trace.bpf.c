// SPDX-License-Identifier: MIT
/*
 * mem_trace: memory access pattern statistics, aggregated on the device:
 * accesses per (kind, space, size) and a log2 histogram of the distance
 * between consecutive accesses of the same thread.
 *   gbpf run mem_trace.bpf.o -- ./vec_add
 *
 * Both counter maps are per-CPU, which on a GPU means one copy per SM:
 * every access of every thread bumps one of a handful of counters, and a
 * single copy for the whole GPU would serialise all the SMs' atomics on
 * two addresses. Per SM the warps of one SM share a copy (one warp-
 * aggregated atomic per warp and access), and `gbpf run` prints the sum
 * of the copies under each key, so the output is the same as with one
 * copy. The two halves and their maps are in mem_trace.h, which the
 * benchmarks also use one at a time.
 */
#define MEM_TRACE_COUNTS
#define MEM_TRACE_STRIDE
#include "mem_trace.h"

SEC("gpu/mem/*")
int mem_trace(struct gbpf_gpu_ctx *ctx)
{
	mem_trace_count(ctx);
	mem_trace_stride(ctx);
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
