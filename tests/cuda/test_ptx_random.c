/* SPDX-License-Identifier: MIT */
/*
 * Random verified programs (the differential test's generator,
 * tests/reliability/difftest_gen.c: ALU, stack, branches, loops, array and
 * hash lookups, updates, deletes and atomics on values) through the PTX
 * code generator and ptxas, as a run kernel and as probe fragments of two
 * attach kinds (gpu/mem, whose context fields decide which hash keys are
 * warp-uniform, and gpu/exit). The H200 runs the same programs and
 * compares results (tests/reliability/device_difftest.sh); here, without a
 * GPU, every form must at least be generated and assemble, so that a shape
 * the hand-written tests miss (a join, a key built across blocks) cannot
 * produce PTX that ptxas rejects. The gpu/mem fragment is also injected at
 * every memory access of a small kernel with a loop (the injector inlines
 * it and folds its context reads across the program's joins), the gpu/exit
 * fragment at its exits (inlined with the same stack forwarding and store
 * sinking), and the instrumented kernel must assemble too.
 *   test_ptx_random [FIRST_SEED [COUNT]]   (default 1 and 60)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gbpf/cuda_inject.h>

#include "cuda_test_util.h"
#include "difftest_gen.h"
#include "plugins/cuda/ptx/ptx.h"
#include "ptx_codegen.h"
#include "tap.h"

/* injections where the probe was inlined (and folded), not called: [0] memory sites, [1] exits */
static unsigned n_inlined[2];

/*
 * Inject fragment @mod (a complete module) at loop_app_ptx's memory accesses
 * (@exit 0) or its exits (1) and assemble the result.
 */
static int injected(const char *mod, int exit, uint64_t seed, char *log, size_t log_size)
{
	struct gbpf_ptx_module *m = gbpf_ptx_parse(loop_app_ptx, strlen(loop_app_ptx), "app.ptx", log, log_size);
	struct gbpf_ptx_module *f = m ? gbpf_ptx_parse(mod, strlen(mod), "random.ptx", log, log_size) : NULL;
	struct gbpf_ptx_inject_req req = {
		.plan = {.sites = exit ? GBPF_PTX_SITE_EXIT : GBPF_PTX_SITE_MEM, .mem_probe = 0, .exit_probe = 0}};
	char *out = NULL;
	int ok = 0;

	if (f && gbpf_ptx_inject(m, f, &req, log, log_size) == 1 && (out = gbpf_ptx_print(m, NULL))) {
		ok = ptxas_check(out, "sm_90", log, log_size) == 0;
		n_inlined[exit] += strstr(out, "__gbpf_inl_end") != NULL;
	}
	else if (!log[0])
		snprintf(log, log_size, "not injected");
	if (!ok)
		tap_ok(0, "seed %llu, gpu/%s fragment injected: %s", (unsigned long long)seed, exit ? "exit" : "mem",
		       log);
	free(out);
	gbpf_ptx_module_free(f);
	gbpf_ptx_module_free(m);
	return ok;
}

/* Emit @p p in one form and assemble it; 1 when both worked (a failure is one TAP line). */
static int one_form(const struct gbpf_prog_desc *p, int kernel, uint64_t seed, const char *form)
{
	struct gbpf_ptx_opts o = {.sz = sizeof(o), .arch = "sm_90", .flags = kernel ? GBPF_PTX_KERNEL : 0};
	char err[512] = "", log[2048] = "", hdr[128], *ptx = NULL, *mod = NULL;
	int rc = gbpf_ptx_emit(&p, 1, &o, &ptx, NULL, err, sizeof(err)), ok;

	if (rc || !ptx) {
		tap_ok(0, "seed %llu, %s: PTX generated: %s", (unsigned long long)seed, form, err);
		return 0;
	}
	if (kernel) {
		mod = ptx;
		ptx = NULL;
	} else {
		gbpf_ptx_header(hdr, sizeof(hdr), "sm_90", 0);
		mod = malloc(strlen(hdr) + strlen(ptx) + 1);
		if (mod) {
			strcpy(mod, hdr);
			strcat(mod, ptx);
		}
	}
	ok = mod && ptxas_check(mod, "sm_90", log, sizeof(log)) == 0;
	if (!ok)
		tap_ok(0, "seed %llu, %s: ptxas accepts: %s", (unsigned long long)seed, form, log);
	else if (p->attach.kind == GBPF_ATTACH_GPU_MEM || p->attach.kind == GBPF_ATTACH_GPU_EXIT)
		ok = injected(mod, p->attach.kind == GBPF_ATTACH_GPU_EXIT, seed, log, sizeof(log));
	free(mod);
	free(ptx);
	return ok;
}

int main(int argc, char **argv)
{
	static struct dt_prog prog;
	uint64_t first = argc > 1 ? strtoull(argv[1], NULL, 10) : 1;
	uint64_t count = argc > 2 ? strtoull(argv[2], NULL, 10) : 60;
	static const struct {
		const char *name;
		uint32_t kind;
		int kernel;
	} forms[] = {{"run kernel", GBPF_ATTACH_NONE, 1},
		     {"gpu/mem fragment (and injected)", GBPF_ATTACH_GPU_MEM, 0},
		     {"gpu/exit fragment (and injected)", GBPF_ATTACH_GPU_EXIT, 0}};
	unsigned good[3] = {0};

	if (!ptxas_path()) {
		tap_skip("ptxas not found");
		return tap_done();
	}
	for (uint64_t s = first; s < first + count; s++) {
		dt_generate(&prog, s, 0);
		for (unsigned f = 0; f < 3; f++) {
			struct gbpf_prog_desc d = {.sz = sizeof(d), .name = "random", .section = "gpu/exit/k",
						   .insns = prog.insns, .insn_cnt = prog.n, .maps = dt_maps,
						   .map_cnt = 2, .source_file = "difftest_gen.c",
						   .attach = {.kind = forms[f].kind}};

			good[f] += (unsigned)one_form(&d, forms[f].kernel, s, forms[f].name);
		}
	}
	tap_ok(n_inlined[0] > 0, "the injected probe was inlined at the memory sites for %u of %llu programs",
	       n_inlined[0], (unsigned long long)count);
	tap_ok(n_inlined[1] > 0, "the injected probe was inlined at the exits for %u of %llu programs", n_inlined[1],
	       (unsigned long long)count);
	for (unsigned f = 0; f < 3; f++)
		tap_ok(good[f] == count, "%s: %u of %llu random programs (seeds %llu..%llu) generated and assembled",
		       forms[f].name, good[f], (unsigned long long)count, (unsigned long long)first,
		       (unsigned long long)(first + count - 1));
	return tap_done();
}
