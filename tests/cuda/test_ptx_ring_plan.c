// SPDX-License-Identifier: MIT
/*
 * The whole-warp record exchange of bpf_ringbuf_output (ptx_ring.c,
 * emit_ring_wput_warp) follows ptx_ring_warp_plan. Here the plan is run
 * lane by lane on the CPU, as the emitted PTX runs it on the GPU (pre-
 * rotation, one shuffle a round, post-rotation, stores), for every record
 * size the exchange takes: every block word must be stored exactly once,
 * with the word the block layout puts there (word k mod W of lane k / W),
 * and every store instruction must write 32 consecutive words. The emitted
 * PTX itself runs in test_cuda_maps (records of every size, on the GPU).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "plugins/cuda/ptx_maps.h"
#include "tests/tap.h"

#define LANES 32

/* out[x] = in[(x + r) mod w], as emit_rotate's barrel of selects computes it */
static void rotate(uint32_t *v, unsigned w, unsigned r)
{
	uint32_t t[PTX_RING_WARP_MAX_WORDS];

	for (unsigned x = 0; x < w; x++)
		t[x] = v[(x + r) % w];
	memcpy(v, t, w * sizeof(*v));
}

/* 1 when the plan for @w words writes the block right; @why says where it does not */
static int plan_writes_block(unsigned w, char *why, size_t why_size)
{
	struct ptx_ring_warp_plan plan;
	uint32_t lane[LANES][PTX_RING_WARP_MAX_WORDS], recv[LANES][PTX_RING_WARP_MAX_WORDS];
	uint32_t block[LANES * PTX_RING_WARP_MAX_WORDS];
	uint8_t written[LANES * PTX_RING_WARP_MAX_WORDS] = {0};

	ptx_ring_warp_plan(w, &plan);
	if (plan.words != w || plan.pre_rotate < 1 || plan.pre_rotate > w) {
		snprintf(why, why_size, "plan for %u words: words %u, pre_rotate %u", w, plan.words, plan.pre_rotate);
		return 0;
	}
	/* word x of lane L is block word L * w + x: its value names where it belongs */
	for (unsigned l = 0; l < LANES; l++) {
		for (unsigned x = 0; x < w; x++)
			lane[l][x] = l * w + x;
		if ((l >> plan.pre_shift) >= plan.pre_rotate) {
			snprintf(why, why_size, "lane %u: pre-rotation %u not below %u", l, l >> plan.pre_shift,
				 plan.pre_rotate);
			return 0;
		}
		rotate(lane[l], w, l >> plan.pre_shift);
	}
	for (unsigned j = 0; j < w; j++)
		for (unsigned l = 0; l < LANES; l++) {
			unsigned src = (32 * plan.pinv[(j + w - l % w) % w] + l) / w;

			if (src >= LANES) {
				snprintf(why, why_size, "round %u, lane %u reads lane %u", j, l, src);
				return 0;
			}
			recv[l][j] = lane[src][j];
		}
	for (unsigned l = 0; l < LANES; l++) {
		rotate(recv[l], w, l % w);
		for (unsigned i = 0; i < w; i++) {
			unsigned k = 32 * i + l; /* store i of lane l: 32 consecutive words per store */

			if (plan.pi[i] >= w || written[k]) {
				snprintf(why, why_size, "store %u of lane %u: pi %u, block word %u written twice", i, l,
					 plan.pi[i], k);
				return 0;
			}
			written[k] = 1;
			block[k] = recv[l][plan.pi[i]];
		}
	}
	for (unsigned k = 0; k < LANES * w; k++)
		if (!written[k] || block[k] != k) {
			snprintf(why, why_size, "block word %u holds word %u of lane %u", k, block[k] % w, block[k] / w);
			return 0;
		}
	return 1;
}

int main(void)
{
	for (unsigned w = 1; w <= PTX_RING_WARP_MAX_WORDS; w++) {
		char why[160] = "";
		int ok = plan_writes_block(w, why, sizeof(why));

		tap_ok(ok, "whole-warp ring write, records of %u words: every block word stored once, in place%s%s", w,
		       ok ? "" : ": ", why);
	}
	return tap_done();
}
