// SPDX-License-Identifier: MIT
/*
 * A line at every entry of target_k: the agent makes the context's print
 * queues at the kernel's instrumentation, binds them to its module and
 * closes them at exit (test_cuda_agent, on the fake driver, which runs no
 * probe: no line comes out there).
 */
#include <gbpf/probe.h>

SEC("gpu/entry/target_k")
int print_entry(struct gbpf_gpu_ctx *ctx)
{
	bpf_printk("target_k launch %llu", ctx->launch_id);
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
