// SPDX-License-Identifier: MIT
/*
 * mem_trace's distance histogram with the last address thread-local
 * (GPU_THREAD_LOCAL): on SPIR-V the work-item's value lives after the probe
 * context in the kernel's Function-storage array (plugins/spirv/spv_tls.c).
 */
#define MEM_TRACE_STRIDE
#define MEM_TRACE_LAST_THREAD_LOCAL
#include "../../../examples/mem_trace/mem_trace.h"

SEC("gpu/mem/*")
int tlstride(struct gbpf_gpu_ctx *ctx)
{
	mem_trace_stride(ctx);
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
