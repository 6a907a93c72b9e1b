/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: SPIR-V injection on arbitrary words (the header and
 * structure checks, the validator, the module loader and the instrumenter).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <gbpf/helper_ids.h>

#include "plugins/spirv/spirv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* r0 = 0; exit, as an entry, an exit and a memory probe */
static const struct gbpf_insn ret0[2] = {
	{.code = GBPF_ALU64 | GBPF_MOV | GBPF_K},
	{.code = GBPF_JMP | GBPF_EXIT},
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gbpf_prog_desc pd[3];
	const struct gbpf_prog_desc *progs[3];
	struct gbpf_spirv_inject_result res;
	uint32_t *w;
	char err[512];
	int k;

	w = malloc(size / 4 * 4 + 4);
	if (!w)
		return 0;
	memcpy(w, data, size / 4 * 4);
	for (k = 0; k < 3; k++) {
		memset(&pd[k], 0, sizeof(pd[k]));
		pd[k].sz = sizeof(pd[k]);
		pd[k].name = "p";
		pd[k].insns = ret0;
		pd[k].insn_cnt = 2;
		pd[k].attach.kind = GBPF_ATTACH_GPU_ENTRY + (uint32_t)k;
		progs[k] = &pd[k];
	}
	if (gbpf_spirv_inject(w, size / 4, progs, 3, NULL, &res, err, sizeof(err)) == 0)
		gbpf_spirv_inject_result_free(&res);
	free(w);
	return 0;
}
