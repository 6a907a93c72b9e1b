// SPDX-License-Identifier: MIT
/* Empty entry and exit probes on every kernel: the cost of the injection itself. */
#include <gbpf/probe.h>

SEC("gpu/entry/*")
int on_entry(struct gbpf_gpu_ctx *ctx)
{
	return 0;
}

SEC("gpu/exit/*")
int on_exit(struct gbpf_gpu_ctx *ctx)
{
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
