// SPDX-License-Identifier: MIT
/*
 * GPU -> user printk latency: the one-thread kernel `tick` prints the GPU's
 * globaltimer as it exits (bench/cuda/apps/printk_bench.cu says how the
 * latency is computed from it).
 */
#include <gbpf/probe.h>

SEC("gpu/exit/tick")
int tick_exit(struct gbpf_gpu_ctx *ctx)
{
	bpf_printk("gt=%llu", bpf_gpu_globaltimer());
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
