// SPDX-License-Identifier: MIT
/* Targets a kernel no application has: the agent is loaded, nothing is instrumented. */
#include <gbpf/probe.h>

SEC("gpu/entry/__gbpf_bench_no_such_kernel")
int never(struct gbpf_gpu_ctx *ctx)
{
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
