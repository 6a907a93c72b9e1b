/* SPDX-License-Identifier: MIT */
/* A probe the verifier must reject: it reads far beyond its context. */
#include <linux/bpf.h>
#include <linux/types.h>
#include <bpf/bpf_helpers.h>
#include <gbpf/probe_ctx.h>

SEC("host/launch")
int bad_probe(struct gbpf_host_launch_ctx *ctx)
{
	volatile __u64 *p = (volatile __u64 *)ctx;

	return (int)p[100];
}

char LICENSE[] SEC("license") = "GPL";
