/* SPDX-License-Identifier: MIT */
/*
 * A memory probe that replaces the value every store writes: it changes
 * the application's memory, so it may only run where the user explicitly
 * allowed application writes. `gbpf run` has no such option: the
 * controller and the agent both reject it (test_faults, test_app_writes).
 */
#include <linux/bpf.h>
#include <linux/types.h>
#include <bpf/bpf_helpers.h>
#include <gbpf/probe_ctx.h>

SEC("gpu/mem/*")
int write_value(struct gbpf_gpu_ctx *ctx)
{
	if (ctx->mem_kind == GBPF_MEM_STORE)
		ctx->mem_value = 0;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
