/* SPDX-License-Identifier: MIT */
/*
 * tests/spirv/test_spirv_inline_run.c - the differential test of probes
 * injected into an application's SPIR-V kernel (gbpf_spirv_inject), run on an
 * OpenCL device (PoCL's CPU device here and in CI), against the interpreter.
 * tests/cuda/test_inline_run.c is the same test for PTX on a CUDA GPU.
 *
 * Each random program of tests/reliability/difftest_gen.c is injected as a
 * gpu/entry, a gpu/exit and a gpu/mem probe (one module, one build) into
 * tests/spirv/data/vadd.cl's vadd, run by one work-item with the maps in
 * memory the device reaches: the probes run at the entry, at vadd's two loads
 * and its store, at the exit, in that order. The interpreter runs the program
 * as often (5 times) on host maps; every array value and hash entry must
 * agree. Each program first stores its r0 in arr[0]
 * (tests/reliability/dt_inline.h).
 *
 *   test_spirv_inline_run APPS.spv [FIRST [COUNT]]    seeds FIRST.. (default 1, 6)
 *
 * Skips (TAP) without an OpenCL device. PoCL compiles a kernel at its first
 * launch, and a vadd with three random probes takes it up to a minute (its
 * kernel cache then answers in milliseconds), so CI runs two seeds.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dt_inline.h"
#include "maps/map.h"
#include "plugins/spirv/spirv.h"
#include "spv_test_util.h"
#include "tests/tap.h"

/* the probes' runs for a work-item of vadd below n: the entry, a[i], b[i], c[i], the exit */
#define VADD_PROBE_RUNS 5

struct device {
	struct gbpf_spirv_cl *cl;
	struct gbpf_spirv_ctx_table *table;
	struct gbpf_map_instance maps[2]; /* their memory cl_alloc'ed: the device reaches it */
	int *a, *b, *c;
};

static int device_open(struct device *dv, char *why, size_t size)
{
	memset(dv, 0, sizeof(*dv));
	if (gbpf_spirv_cl_open(-1, &dv->cl, why, size))
		return -ENOENT;
	dv->table = gbpf_spirv_cl_alloc(dv->cl, sizeof(*dv->table));
	dv->a = gbpf_spirv_cl_alloc(dv->cl, 64);
	dv->b = gbpf_spirv_cl_alloc(dv->cl, 64);
	dv->c = gbpf_spirv_cl_alloc(dv->cl, 64);
	for (int i = 0; i < 2; i++) {
		dv->maps[i].desc = &dt_maps[i];
		dv->maps[i].mem_size = gbpf_map_mem_size(&dt_maps[i], 1);
		dv->maps[i].mem = gbpf_spirv_cl_alloc(dv->cl, dv->maps[i].mem_size);
		if (!dv->maps[i].mem)
			break;
		dv->table->maps[i] = (uint64_t)(uintptr_t)dv->maps[i].mem;
	}
	if (!dv->table || !dv->a || !dv->b || !dv->c || !dv->maps[0].mem || !dv->maps[1].mem) {
		snprintf(why, size, "cannot allocate memory the device reaches");
		return -ENOMEM;
	}
	dv->table->map_cnt = 2;
	dv->table->nr_slots = 1;
	return 0;
}

static void device_close(struct device *dv)
{
	if (!dv->cl)
		return;
	for (int i = 0; i < 2; i++)
		gbpf_spirv_cl_free(dv->cl, dv->maps[i].mem);
	gbpf_spirv_cl_free(dv->cl, dv->table);
	gbpf_spirv_cl_free(dv->cl, dv->a);
	gbpf_spirv_cl_free(dv->cl, dv->b);
	gbpf_spirv_cl_free(dv->cl, dv->c);
	gbpf_spirv_cl_close(dv->cl);
}

/* Inject @p progs into the app module, build it and run vadd on one work-item; the maps' state after. */
static int run_injected(struct device *dv, const uint32_t *app, size_t app_words,
			const struct gbpf_prog_desc *const *progs, size_t n_progs, struct dt_maps_state *st,
			char *why, size_t size)
{
	struct gbpf_spirv_inject_opts o = {.sz = sizeof(o), .ctx_table = (uint64_t)(uintptr_t)dv->table};
	struct gbpf_spirv_inject_result res;
	int n = 1, rc;
	struct gbpf_spirv_cl_arg args[4] = {{dv->a, 64, 1}, {dv->b, 64, 1}, {dv->c, 64, 1}, {&n, 4, 0}};
	void *prog = NULL;
	size_t k;

	rc = gbpf_spirv_inject(app, app_words, progs, n_progs, &o, &res, why, size);
	if (rc)
		return rc;
	for (k = 0; k < res.kernel_cnt && strcmp(res.kernels[k].name, "vadd"); k++)
		;
	if (k == res.kernel_cnt || !res.kernels[k].instrumented) {
		snprintf(why, size, "vadd not instrumented: %s",
			 k < res.kernel_cnt && res.kernels[k].reason ? res.kernels[k].reason : "absent");
		gbpf_spirv_inject_result_free(&res);
		return -ENOENT;
	}
	rc = gbpf_spirv_cl_build(dv->cl, res.words, res.word_count, &prog, why, size);
	gbpf_spirv_inject_result_free(&res);
	if (rc)
		return rc;
	for (int i = 0; i < 2; i++)
		if (gbpf_map_mem_init(dv->maps[i].mem, dv->maps[i].mem_size, &dt_maps[i], 1)) {
			snprintf(why, size, "map %s: cannot initialise", dt_maps[i].name);
			gbpf_spirv_cl_release(dv->cl, prog);
			return -EINVAL;
		}
	rc = gbpf_spirv_cl_run_kernel(dv->cl, prog, "vadd", 1, 1, args, 4, why, size);
	if (!rc)
		dt_maps_snapshot(dv->maps, st);
	gbpf_spirv_cl_release(dv->cl, prog);
	return rc;
}

int main(int argc, char **argv)
{
	static struct dt_prog prog;
	static const uint32_t kinds[] = {GBPF_ATTACH_GPU_ENTRY, GBPF_ATTACH_GPU_EXIT, GBPF_ATTACH_GPU_MEM};
	static const char *const sections[] = {"gpu/entry/vadd", "gpu/exit/vadd", "gpu/mem/vadd"};
	uint64_t first = argc > 2 ? strtoull(argv[2], NULL, 10) : 1;
	uint64_t count = argc > 3 ? strtoull(argv[3], NULL, 10) : 6;
	unsigned agree = 0, shown = 0;
	struct device dv;
	void *app = NULL;
	size_t app_size = 0;
	char why[1024] = "";

	if (argc < 2 || spv_read_file(argv[1], &app, &app_size)) {
		tap_ok(0, "usage: %s APPS.spv [FIRST [COUNT]]: cannot read the application module",
		       argv[0]);
		return tap_done();
	}
	if (device_open(&dv, why, sizeof(why))) {
		tap_skip("no OpenCL device: %s", why);
		device_close(&dv);
		free(app);
		return tap_done();
	}
	for (uint64_t s = first; s < first + count; s++) {
		struct gbpf_prog_desc d[3];
		const struct gbpf_prog_desc *progs[3];
		struct dt_maps_state want, got;

		dt_generate(&prog, s, 0);
		if (dt_store_r0(&prog)) {
			tap_ok(0, "seed %" PRIu64 ": the main program does not end in r0 = r6; exit", s);
			continue;
		}
		for (unsigned k = 0; k < 3; k++) {
			d[k] = (struct gbpf_prog_desc){.sz = sizeof(d[k]), .name = "random", .section = sections[k],
						       .insns = prog.insns, .insn_cnt = prog.n, .maps = dt_maps,
						       .map_cnt = 2, .source_file = "difftest_gen.c",
						       .attach = {.kind = kinds[k]}};
			progs[k] = &d[k];
		}
		why[0] = 0;
		if (dt_interp_runs(&d[0], VADD_PROBE_RUNS, &want, why, sizeof(why))) {
			tap_ok(0, "seed %" PRIu64 ": the interpreter fails: %s", s, why);
			continue;
		}
		if (run_injected(&dv, app, app_size / 4, progs, 3, &got, why, sizeof(why))) {
			tap_ok(0, "seed %" PRIu64 ": injected run failed: %.300s", s, why);
			continue;
		}
		dt_maps_diff(&want, &got, why, sizeof(why));
		if (!why[0])
			agree++;
		else if (shown++ < 20)
			tap_ok(0, "seed %" PRIu64 ": the device differs from the interpreter: %s (interpreter first)",
			       s, why);
	}
	tap_ok(agree == count, "entry, exit and memory probes injected into vadd on %s: %u of %" PRIu64
	       " programs (seeds %" PRIu64 "..%" PRIu64 ") leave the maps the interpreter leaves",
	       gbpf_spirv_cl_device_name(dv.cl), agree, count, first, first + count - 1);
	device_close(&dv);
	free(app);
	return tap_done();
}
