/* SPDX-License-Identifier: MIT */
/*
 * gpu/mem probes see what a store or an atomic writes (gbpf_gpu_ctx
 * mem_value, as on PTX) and atomics have kind GBPF_MEM_ATOMIC: a memory
 * probe injected into real application kernels (vadd: one store per
 * work-item; histo: one atomic_add of 1 per work-item) sums mem_value per
 * work-item and kind into an array map, checked against what the kernels
 * wrote, on PoCL.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gbpf/asm.h>
#include <gbpf/probe_ctx.h>

#include "maps/map.h"
#include "plugins/spirv/spirv.h"
#include "spv_test_util.h"
#include "tests/tap.h"

#define N 256
#define LOCAL 64

/*
 * counter[kind_slot * N + id] += mem_value, kind_slot 0 = STORE, 1 = ATOMIC,
 * and counter[2N + id] += 1 for each atomic (ctx: value at 32, kind at 44).
 */
static const char probe_fmt[] =
	"mov %%r6, %%r1\n call 600\n mov %%r7, %%r0\n ldxw %%r8, [%%r6+44]\n ldxdw %%r9, [%%r6+32]\n"
	"mov %%r1, %%r7\n jeq %%r8, %d, add\n jne %%r8, %d, out\n add %%r1, %d\n"
	"stxw [%%r10-8], %%r1\n lddw %%r1, map[0]\n mov %%r2, %%r10\n add %%r2, -8\n call 1\n"
	"jeq %%r0, 0, out\n mov %%r1, 1\n lock add [%%r0+0], %%r1\n mov %%r1, %%r7\n add %%r1, %d\n"
	"add:\n stxw [%%r10-4], %%r1\n lddw %%r1, map[0]\n mov %%r2, %%r10\n add %%r2, -4\n call 1\n"
	"jeq %%r0, 0, out\n lock add [%%r0+0], %%r9\nout:\n mov %%r0, 0\n exit\n";

struct fx {
	struct gbpf_spirv_cl *cl;
	struct gbpf_map_desc desc;
	struct gbpf_map_instance map;
	struct gbpf_spirv_ctx_table *table;
	struct gbpf_insn *insns;
	struct gbpf_prog_desc pd;
};

static uint64_t counter(struct fx *f, uint32_t idx)
{
	uint64_t *v = gbpf_map_lookup(&f->map, &idx, 0);

	return v ? *v : ~0ull;
}

static void *inject(struct fx *f, const char *kernel)
{
	struct gbpf_spirv_inject_opts o = {.sz = sizeof(o), .ctx_table = (uint64_t)(uintptr_t)f->table};
	struct gbpf_spirv_inject_result res = {0};
	const struct gbpf_prog_desc *p = &f->pd;
	void *buf = NULL, *prog = NULL;
	size_t size = 0;
	char err[2048] = "";
	int rc;

	if (spv_read_file(GBPF_TEST_APPS_SPV, &buf, &size)) {
		tap_ok(0, "%s: cannot read %s", kernel, GBPF_TEST_APPS_SPV);
		return NULL;
	}
	rc = gbpf_spirv_inject(buf, size / 4, &p, 1, &o, &res, err, sizeof(err));
	free(buf);
	if (!rc)
		rc = gbpf_spirv_cl_build(f->cl, res.words, res.word_count, &prog, err, sizeof(err));
	tap_ok(rc == 0, "%s: memory probe injected, validated and built%s%s", kernel, rc ? ": " : "", err);
	gbpf_spirv_inject_result_free(&res);
	return rc ? NULL : prog;
}

static void test_vadd(struct fx *f)
{
	void *prog = inject(f, "vadd");
	int *a = gbpf_spirv_cl_alloc(f->cl, N * 4), *b = gbpf_spirv_cl_alloc(f->cl, N * 4);
	int *c = gbpf_spirv_cl_alloc(f->cl, N * 4), n = N - 10, bad = 0;
	char err[1024] = "";

	if (prog && a && b && c) {
		struct gbpf_spirv_cl_arg args[4] = {{a, N * 4, 1}, {b, N * 4, 1}, {c, N * 4, 1}, {&n, 4, 0}};

		for (int i = 0; i < N; i++) {
			a[i] = i;
			b[i] = 1000 * i;
			c[i] = -1;
		}
		gbpf_map_mem_init(f->map.mem, f->map.mem_size, &f->desc, 1);
		tap_ok(gbpf_spirv_cl_run_kernel(f->cl, prog, "vadd", N, LOCAL, args, 4, err, sizeof(err)) == 0,
		       "vadd: instrumented kernel ran %s", err);
		for (int i = 0; i < N; i++)
			bad += c[i] != (i < n ? 1001 * i : -1);
		tap_ok(!bad, "vadd: the app's output is unchanged (%d wrong)", bad);
		bad = 0;
		for (uint32_t i = 0; i < N; i++)
			bad += counter(f, i) != (i < (uint32_t)n ? 1001ull * i : 0) || counter(f, N + i) ||
			       counter(f, 2 * N + i);
		tap_ok(!bad, "vadd: each work-item's store reported mem_value == the stored a[i] + b[i], kind STORE "
		       "(%d wrong)", bad);
	}
	gbpf_spirv_cl_release(f->cl, prog);
	gbpf_spirv_cl_free(f->cl, a);
	gbpf_spirv_cl_free(f->cl, b);
	gbpf_spirv_cl_free(f->cl, c);
}

static void test_histo(struct fx *f)
{
	void *prog = inject(f, "histo");
	int *x = gbpf_spirv_cl_alloc(f->cl, N * 4), *bins = gbpf_spirv_cl_alloc(f->cl, 8 * 4), bad = 0;
	char err[1024] = "";

	if (prog && x && bins) {
		struct gbpf_spirv_cl_arg args[2] = {{x, N * 4, 1}, {bins, 8 * 4, 1}};

		for (int i = 0; i < N; i++)
			x[i] = i * 5;
		memset(bins, 0, 8 * 4);
		gbpf_map_mem_init(f->map.mem, f->map.mem_size, &f->desc, 1);
		tap_ok(gbpf_spirv_cl_run_kernel(f->cl, prog, "histo", N, LOCAL, args, 2, err, sizeof(err)) == 0,
		       "histo: instrumented kernel ran %s", err);
		for (int i = 0; i < 8; i++)
			bad += bins[i] != N / 8;
		tap_ok(!bad, "histo: the app's bins are unchanged (%d wrong)", bad);
		bad = 0;
		for (uint32_t i = 0; i < N; i++)
			bad += counter(f, i) != 0 || counter(f, N + i) != 1 || counter(f, 2 * N + i) != 1;
		tap_ok(!bad, "histo: each work-item's atomic_add reported kind ATOMIC once with mem_value 1, no "
		       "store (%d wrong)", bad);
	}
	gbpf_spirv_cl_release(f->cl, prog);
	gbpf_spirv_cl_free(f->cl, x);
	gbpf_spirv_cl_free(f->cl, bins);
}

int main(void)
{
	struct fx f;
	char err[1024], text[2048];
	size_t cnt = 0;

	memset(&f, 0, sizeof(f));
	if (gbpf_spirv_cl_open(-1, &f.cl, err, sizeof(err))) {
		tap_skip("no OpenCL device: %s", err);
		return tap_done();
	}
	f.desc = (struct gbpf_map_desc){.sz = sizeof(f.desc), .name = "values", .type = GBPF_MAP_TYPE_ARRAY,
					.key_size = 4, .value_size = 8, .max_entries = 3 * N};
	f.map.desc = &f.desc;
	f.map.mem_size = gbpf_map_mem_size(&f.desc, 1);
	f.map.mem = gbpf_spirv_cl_alloc(f.cl, f.map.mem_size);
	f.table = gbpf_spirv_cl_alloc(f.cl, sizeof(*f.table));
	snprintf(text, sizeof(text), probe_fmt, GBPF_MEM_STORE, GBPF_MEM_ATOMIC, 2 * N, N);
	if (!f.map.mem || !f.table || gbpf_asm(text, &f.insns, &cnt, err, sizeof(err))) {
		tap_ok(0, "setup: %s", err);
		return tap_done();
	}
	f.table->maps[0] = (uint64_t)(uintptr_t)f.map.mem;
	f.table->map_cnt = 1;
	f.table->nr_slots = gbpf_spirv_cl_compute_units(f.cl);
	f.pd = (struct gbpf_prog_desc){.sz = sizeof(f.pd), .name = "memvalue", .section = "gpu/mem/*",
				       .insns = f.insns, .insn_cnt = cnt, .maps = &f.desc, .map_cnt = 1,
				       .attach = {.kind = GBPF_ATTACH_GPU_MEM},
				       .source_file = "test_spirv_memvalue.c"};
	test_vadd(&f);
	test_histo(&f);
	free(f.insns);
	gbpf_spirv_cl_free(f.cl, f.map.mem);
	gbpf_spirv_cl_free(f.cl, f.table);
	gbpf_spirv_cl_close(f.cl);
	return tap_done();
}
