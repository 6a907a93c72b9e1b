/* SPDX-License-Identifier: MIT */
/*
 * A probe that is safe but too expensive to prove: a loop of 2^20
 * iterations with a data-dependent branch walks past the verifier's
 * complexity bound (1,000,000 instructions processed), so `gbpf run` must
 * reject it with a message and run the application uninstrumented.
 */
#include <linux/bpf.h>
#include <linux/types.h>
#include <bpf/bpf_helpers.h>
#include <gbpf/probe_ctx.h>

SEC("host/launch")
int too_complex(struct gbpf_host_launch_ctx *ctx)
{
	__u64 acc = ctx->grid[0];
	int i;

#pragma clang loop unroll(disable)
	for (i = 0; i < (1 << 20); i++) {
		acc = acc * 6364136223846793005ull + i;
		if (acc & 1)
			acc ^= ctx->block[0];
	}
	return (int)acc;
}

char LICENSE[] SEC("license") = "GPL";
