// SPDX-License-Identifier: MIT
/* A gpu/block probe reading past struct gbpf_gpu_block_ctx (40 bytes): the verifier must refuse it. */
#include <gbpf/probe.h>

SEC("gpu/block/*")
int bb_ctx_oob(struct gbpf_gpu_block_ctx *ctx)
{
	return *(volatile __u32 *)((char *)ctx + sizeof(*ctx));
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
