/* SPDX-License-Identifier: MIT */
/*
 * Random verified programs (tests/reliability/difftest_gen.c: every ALU op
 * and width, stack and map-value atomics, branches, loops, map calls,
 * bpf-to-bpf calls) through the SPIR-V generator: each must become a run
 * kernel and, injected into the application module's kernels as an entry,
 * an exit and a memory probe, an instrumented module; both pass SPIRV-Tools'
 * validator (gbpf_spirv_emit and gbpf_spirv_inject validate what they
 * return). Many more programs than the runs on PoCL can afford
 * (difftest_opencl, spirv_inline_run), at the rate tests/cuda/test_ptx_random.c
 * puts them through ptxas.
 *
 *   test_spirv_random APPS.spv [FIRST [COUNT]]    seeds FIRST.. (default 1, 200)
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "difftest_gen.h"
#include "plugins/spirv/spirv.h"
#include "spv_test_util.h"
#include "tests/tap.h"

int main(int argc, char **argv)
{
	static struct dt_prog prog;
	static const uint32_t kinds[] = {GBPF_ATTACH_GPU_ENTRY, GBPF_ATTACH_GPU_EXIT, GBPF_ATTACH_GPU_MEM};
	static const char *const sections[] = {"gpu/entry/*", "gpu/exit/*", "gpu/mem/*"};
	uint64_t first = argc > 2 ? strtoull(argv[2], NULL, 10) : 1;
	uint64_t count = argc > 3 ? strtoull(argv[3], NULL, 10) : 200;
	unsigned kernels = 0, injected = 0, shown = 0;
	void *app = NULL;
	size_t app_size = 0;
	char err[1024];

	if (argc < 2 || spv_read_file(argv[1], &app, &app_size)) {
		tap_ok(0, "usage: %s APPS.spv [FIRST [COUNT]]: cannot read the application module", argv[0]);
		return tap_done();
	}
	for (uint64_t s = first; s < first + count; s++) {
		struct gbpf_prog_desc d[3];
		const struct gbpf_prog_desc *progs[3];
		struct gbpf_spirv_opts ko = {.sz = sizeof(ko), .flags = GBPF_SPIRV_KERNEL};
		struct gbpf_spirv_inject_opts io = {.sz = sizeof(io)};
		struct gbpf_spirv_inject_result res;
		uint32_t *words = NULL;
		size_t nwords = 0, k, instrumented = 0;

		dt_generate(&prog, s, 0);
		for (k = 0; k < 3; k++) {
			d[k] = (struct gbpf_prog_desc){.sz = sizeof(d[k]), .name = "random", .section = sections[k],
						       .insns = prog.insns, .insn_cnt = prog.n, .maps = dt_maps,
						       .map_cnt = 2, .source_file = "difftest_gen.c",
						       .attach = {.kind = kinds[k]}};
			progs[k] = &d[k];
		}
		err[0] = 0;
		if (!gbpf_spirv_emit(progs, 1, &ko, &words, &nwords, err, sizeof(err)))
			kernels++;
		else if (shown++ < 10)
			tap_ok(0, "seed %" PRIu64 ": run kernel: %.500s", s, err);
		free(words);
		err[0] = 0;
		if (gbpf_spirv_inject(app, app_size / 4, progs, 3, &io, &res, err, sizeof(err))) {
			if (shown++ < 10)
				tap_ok(0, "seed %" PRIu64 ": injection: %.500s", s, err);
			continue;
		}
		for (k = 0; k < res.kernel_cnt; k++)
			instrumented += res.kernels[k].instrumented != 0;
		if (instrumented == res.kernel_cnt && instrumented > 0)
			injected++;
		else if (shown++ < 10)
			tap_ok(0, "seed %" PRIu64 ": %zu of %zu kernels instrumented", s, instrumented, res.kernel_cnt);
		gbpf_spirv_inject_result_free(&res);
	}
	tap_ok(kernels == count, "%u of %" PRIu64 " random programs (seeds %" PRIu64 "..%" PRIu64
	       ") are valid SPIR-V run kernels", kernels, count, first, first + count - 1);
	tap_ok(injected == count, "%u of %" PRIu64 " random programs injected as entry, exit and memory probes "
	       "into every kernel of %s, valid", injected, count, argv[1]);
	free(app);
	return tap_done();
}
