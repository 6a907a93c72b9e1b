/* SPDX-License-Identifier: MIT */
/*
 * Random verified programs (tests/reliability/difftest_gen.c: every ALU op
 * and width, stack and map-value atomics, branches, loops, map calls,
 * bpf-to-bpf calls) through the AMDGCN code generator: each must become a
 * gfx942 run kernel that links into a code object with its kernel metadata,
 * and a gfx90a probe module (the injection form, as a gpu/exit program) that
 * links too. What the conformance suite's fixed programs do not reach: the
 * generator's combinations, at the rate tests/cuda/test_ptx_random.c puts
 * them through ptxas. No AMD GPU runs them here.
 *
 *   test_amdgcn_random [FIRST [COUNT]]    seeds FIRST.. (default 1, 30)
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "difftest_gen.h"
#include "hip_test_util.h"
#include "plugins/hip/amdgcn_codegen.h"
#include "tests/tap.h"

/* One form of @p d as an object linked into a code object; 0, or the reason in @p why. */
static int one_form(const char *dir, const struct gbpf_prog_desc *d, int kernel, uint64_t seed, char *why,
		    size_t size)
{
	struct gbpf_amdgcn_opts o = {.sz = sizeof(o), .arch = kernel ? "gfx942" : "gfx90a",
				     .flags = kernel ? GBPF_AMDGCN_KERNEL : 0, .output = GBPF_AMDGCN_OUT_OBJ,
				     .opt_level = 2};
	char *obj = NULL, err[512] = "", base[64];
	size_t len = 0;
	int rc = gbpf_amdgcn_emit(&d, 1, &o, &obj, &len, err, sizeof(err));

	if (rc) {
		snprintf(why, size, "emit: %s", err);
		return rc;
	}
	snprintf(base, sizeof(base), "s%" PRIu64 "%s", seed, kernel ? "k" : "p");
	rc = check_code_object(dir, base, obj, len, kernel ? "__gbpf_run" : NULL, why, size);
	free(obj);
	return rc;
}

int main(int argc, char **argv)
{
	static struct dt_prog prog;
	uint64_t first = argc > 1 ? strtoull(argv[1], NULL, 10) : 1;
	uint64_t count = argc > 2 ? strtoull(argv[2], NULL, 10) : 30;
	unsigned good[2] = {0, 0}, shown = 0;
	char *dir = tmp_dir("random"), why[700];

	if (!dir) {
		tap_ok(0, "temporary directory");
		return tap_done();
	}
	for (uint64_t s = first; s < first + count; s++) {
		dt_generate(&prog, s, 0);
		for (int kernel = 1; kernel >= 0; kernel--) {
			struct gbpf_prog_desc d = {.sz = sizeof(d), .name = "random",
						   .section = kernel ? "gpu/run" : "gpu/exit/k", .insns = prog.insns,
						   .insn_cnt = prog.n, .maps = dt_maps, .map_cnt = 2,
						   .source_file = "difftest_gen.c",
						   .attach = {.kind = kernel ? GBPF_ATTACH_NONE : GBPF_ATTACH_GPU_EXIT}};

			why[0] = 0;
			if (!one_form(dir, &d, kernel, s, why, sizeof(why)))
				good[kernel]++;
			else if (shown++ < 10)
				tap_ok(0, "seed %" PRIu64 ", %s: %s", s, kernel ? "run kernel" : "probe module", why);
		}
	}
	tap_ok(good[1] == count, "%u of %" PRIu64 " random programs (seeds %" PRIu64 "..%" PRIu64
	       ") are gfx942 run kernels with kernel metadata", good[1], count, first, first + count - 1);
	tap_ok(good[0] == count, "%u of %" PRIu64 " random programs link as gfx90a probe modules", good[0],
	       count);
	rm_tree(dir);
	free(dir);
	return tap_done();
}
