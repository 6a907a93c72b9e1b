/* SPDX-License-Identifier: MIT */
/*
 * Every conformance program (../shared/conformance) translated to SPIR-V in
 * both forms (probe functions of one module, and a run kernel each), each
 * module validated, and every program EXECUTED on the OpenCL device (PoCL
 * on the CPU) on several work-items with the expected r0 checked for each.
 * Programs are built in batches (one run kernel per program in a module)
 * to keep the device compile time of the suite short.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugins/spirv/spirv.h"
#include "spv_test_util.h"
#include "tests/tap.h"

#define BATCH 48
#define THREADS 4

static void check_probe_module(struct spv_case *cases, size_t n)
{
	const struct gbpf_prog_desc **progs = calloc(n, sizeof(*progs));
	uint32_t *w = NULL;
	size_t wc = 0, i;
	char err[1024];
	int rc;

	for (i = 0; progs && i < n; i++)
		progs[i] = &cases[i].desc;
	rc = progs ? gbpf_spirv_emit(progs, n, NULL, &w, &wc, err, sizeof(err)) : -1;
	tap_ok(rc == 0, "probe module of %zu programs emitted and validated%s%s", n, rc ? ": " : "",
	       rc ? err : "");
	if (!rc) {
		char *text = NULL;

		rc = gbpf_spirv_disassemble(w, wc, &text);
		tap_ok(rc == 0 && strstr(text, "__gbpf_probe_0") && strstr(text, "OpCapability Kernel"),
		       "probe module disassembles (%zu words) with __gbpf_probe_0 exported", wc);
		free(text);
	}
	free(w);
	free(progs);
}

static void check_kernels(struct spv_case *cases, size_t n)
{
	size_t i, ok = 0;
	char err[1024], first[1200] = "";

	for (i = 0; i < n; i++) {
		const struct gbpf_prog_desc *p = &cases[i].desc;
		struct gbpf_spirv_opts o = {.sz = sizeof(o), .flags = GBPF_SPIRV_KERNEL};
		uint32_t *w = NULL;
		size_t wc = 0;

		if (!gbpf_spirv_emit(&p, 1, &o, &w, &wc, err, sizeof(err)))
			ok++;
		else if (!first[0])
			snprintf(first, sizeof(first), "%s: %s", cases[i].name, err);
		free(w);
	}
	tap_ok(ok == n, "run kernel of each of %zu programs emitted and validated (%zu ok)%s%s", n, ok,
	       first[0] ? "; first failure " : "", first);
}

static void run_batch(struct gbpf_spirv_cl *cl, struct spv_case *cases, size_t n, size_t *passed,
		      void *table)
{
	const struct gbpf_prog_desc *progs[BATCH];
	struct gbpf_spirv_opts o = {.sz = sizeof(o),
				    .flags = GBPF_SPIRV_KERNEL | GBPF_SPIRV_KERNEL_EACH,
				    .ctx_table = (uint64_t)(uintptr_t)table};
	uint32_t *w = NULL;
	size_t wc = 0, i;
	void *prog = NULL;
	char err[2048];
	int rc;

	for (i = 0; i < n; i++)
		progs[i] = &cases[i].desc;
	rc = gbpf_spirv_emit(progs, n, &o, &w, &wc, err, sizeof(err));
	if (!rc)
		rc = gbpf_spirv_cl_build(cl, w, wc, &prog, err, sizeof(err));
	free(w);
	if (rc) {
		for (i = 0; i < n; i++)
			tap_ok(0, "%s: batch build failed: %s", cases[i].name, err);
		return;
	}
	for (i = 0; i < n; i++) {
		struct spv_case *c = &cases[i];
		size_t stride = c->mem_size ? (c->mem_size + 7) & ~(size_t)7 : 0, t;
		uint8_t *data = stride ? gbpf_spirv_cl_alloc(cl, stride * THREADS) : NULL;
		uint64_t *r0 = gbpf_spirv_cl_alloc(cl, sizeof(uint64_t) * THREADS);
		struct gbpf_spirv_run_stats *st = gbpf_spirv_cl_alloc(cl, sizeof(*st));
		char kname[64];
		int good;

		if (!r0 || !st || (stride && !data)) {
			tap_ok(0, "%s: out of memory", c->name);
			goto next;
		}
		for (t = 0; stride && t < THREADS; t++)
			memcpy(data + t * stride, c->mem, c->mem_size);
		st->r0_min = ~0ull;
		snprintf(kname, sizeof(kname), GBPF_SPIRV_RUN_ENTRY "_%zu", i);
		{
			struct gbpf_spirv_cl_run_opts ro = {
				.sz = sizeof(ro),
				.kernel = kname,
				.threads = THREADS,
				.data = (uint64_t)(uintptr_t)data,
				.size = c->mem_size,
				.stride = stride,
				.r0 = r0,
				.stats = st,
			};

			rc = gbpf_spirv_cl_run(cl, prog, &ro, err, sizeof(err));
		}
		good = !rc && st->r0_min == c->expected && st->r0_max == c->expected &&
		       st->r0_first == c->expected;
		for (t = 0; t < THREADS; t++)
			good = good && r0[t] == c->expected;
		if (good)
			(*passed)++;
		tap_ok(good, "%s on the device: r0 0x%llx on %d work-items (expected 0x%llx)%s%s",
		       c->name, (unsigned long long)r0[0], THREADS, (unsigned long long)c->expected,
		       rc ? ": " : "", rc ? err : "");
next:
		gbpf_spirv_cl_free(cl, data);
		gbpf_spirv_cl_free(cl, r0);
		gbpf_spirv_cl_free(cl, st);
	}
	gbpf_spirv_cl_release(cl, prog);
}

int main(void)
{
	const char *tsv = spv_conf_path();
	struct spv_case *cases;
	struct gbpf_spirv_cl *cl = NULL;
	size_t n, i, passed = 0;
	char err[1024];
	void *table;

	if (!tsv) {
		tap_skip("conformance suite absent (../shared/conformance): nothing to translate");
		return tap_done();
	}
	n = spv_conf_load(tsv, &cases);
	tap_ok(n >= 313, "read %zu conformance programs from %s", n, tsv);
	check_probe_module(cases, n);
	check_kernels(cases, n);
	if (gbpf_spirv_cl_open(-1, &cl, err, sizeof(err))) {
		tap_skip("no OpenCL device to execute on: %s", err);
		spv_conf_free(cases, n);
		return tap_done();
	}
	tap_diag("executing on %s", gbpf_spirv_cl_device_name(cl));
	/* programs calling helpers (callx of ktime) read the context table */
	table = gbpf_spirv_cl_alloc(cl, sizeof(struct gbpf_spirv_ctx_table));
	for (i = 0; table && i < n; i += BATCH)
		run_batch(cl, cases + i, n - i < BATCH ? n - i : BATCH, &passed, table);
	gbpf_spirv_cl_free(cl, table);
	tap_ok(passed == n, "%zu of %zu conformance programs gave the expected r0 on the device",
	       passed, n);
	gbpf_spirv_cl_close(cl);
	spv_conf_free(cases, n);
	return tap_done();
}
