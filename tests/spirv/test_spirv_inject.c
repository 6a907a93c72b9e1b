/* SPDX-License-Identifier: MIT */
/*
 * Injection into real application modules (tests/spirv/data, built at
 * build time with clang-15 + llvm-spirv-15 --spirv-max-version=1.0, and a
 * hand-written kernel with two returns): every instrumented module is
 * validated, turned into PoCL bitcode and RUN with an entry probe, an exit
 * probe and a memory probe that count per work-item in an array map; the
 * app's output must be unchanged and the counts exact. Bad modules are
 * rejected with word offsets.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gbpf/helper_ids.h>
#include <gbpf/probe_ctx.h>

#include "maps/map.h"
#include "plugins/spirv/spirv.h"
#include "spv_test_util.h"
#include "tests/tap.h"

#define N 256
#define LOCAL 64

#define INSN(c, d, s, o, i) ((struct gbpf_insn){.code = (c), .dst = (d), .src = (s), .off = (o), .imm = (i)})

/* counter[kind * N + global id] += 1 (u64 array map 0); mem probes also add
 * their access size to counter[3 * N + id] */
static size_t counter_prog(struct gbpf_insn *p, int kind)
{
	size_t n = 0;

	p[n++] = INSN(GBPF_JMP | GBPF_CALL, 0, 0, 0, GBPF_HELPER_GPU_GLOBAL_THREAD_ID);
	p[n++] = INSN(GBPF_ALU64 | GBPF_MOV | GBPF_X, 6, 0, 0, 0);
	p[n++] = INSN(GBPF_ALU64 | GBPF_MOV | GBPF_X, 7, 1, 0, 0);
	p[n++] = INSN(GBPF_ALU64 | GBPF_ADD | GBPF_K, 0, 0, 0, kind * N);
	p[n++] = INSN(GBPF_STX | GBPF_MEM | GBPF_W, 10, 0, -4, 0);
	p[n++] = INSN(GBPF_OP_LDDW, 1, GBPF_PSEUDO_MAP_IDX, 0, 0);
	p[n++] = INSN(0, 0, 0, 0, 0);
	p[n++] = INSN(GBPF_ALU64 | GBPF_MOV | GBPF_X, 2, 10, 0, 0);
	p[n++] = INSN(GBPF_ALU64 | GBPF_ADD | GBPF_K, 2, 0, 0, -4);
	p[n++] = INSN(GBPF_JMP | GBPF_CALL, 0, 0, 0, GBPF_HELPER_MAP_LOOKUP_ELEM);
	p[n++] = INSN(GBPF_JMP | GBPF_JEQ | GBPF_K, 0, 0, kind == 2 ? 11 : 2, 0);
	p[n++] = INSN(GBPF_ALU64 | GBPF_MOV | GBPF_K, 1, 0, 0, 1);
	p[n++] = INSN(GBPF_STX | GBPF_ATOMIC | GBPF_DW, 0, 1, 0, GBPF_ATOMIC_ADD);
	if (kind == 2) {
		/* size of the access: ctx->mem_size, into counter[3N + id] */
		p[n++] = INSN(GBPF_ALU64 | GBPF_ADD | GBPF_K, 6, 0, 0, 3 * N);
		p[n++] = INSN(GBPF_STX | GBPF_MEM | GBPF_W, 10, 6, -4, 0);
		p[n++] = INSN(GBPF_OP_LDDW, 1, GBPF_PSEUDO_MAP_IDX, 0, 0);
		p[n++] = INSN(0, 0, 0, 0, 0);
		p[n++] = INSN(GBPF_ALU64 | GBPF_MOV | GBPF_X, 2, 10, 0, 0);
		p[n++] = INSN(GBPF_ALU64 | GBPF_ADD | GBPF_K, 2, 0, 0, -4);
		p[n++] = INSN(GBPF_JMP | GBPF_CALL, 0, 0, 0, GBPF_HELPER_MAP_LOOKUP_ELEM);
		p[n++] = INSN(GBPF_JMP | GBPF_JEQ | GBPF_K, 0, 0, 2, 0);
		p[n++] = INSN(GBPF_LDX | GBPF_MEM | GBPF_W, 1, 7, 40, 0);
		p[n++] = INSN(GBPF_STX | GBPF_ATOMIC | GBPF_DW, 0, 1, 0, GBPF_ATOMIC_ADD);
	}
	p[n++] = INSN(GBPF_ALU64 | GBPF_MOV | GBPF_K, 0, 0, 0, 0);
	p[n++] = INSN(GBPF_JMP | GBPF_EXIT, 0, 0, 0, 0);
	return n;
}

struct fixture {
	struct gbpf_spirv_cl *cl;
	struct gbpf_map_desc desc;
	struct gbpf_map_instance map;
	struct gbpf_spirv_ctx_table *table;
	struct gbpf_insn code[3][32];
	struct gbpf_prog_desc pd[3];
	const struct gbpf_prog_desc *progs[3];
};

static int fixture_init(struct fixture *f)
{
	static const char *const secs[3] = {"gpu/entry/*", "gpu/exit/*", "gpu/mem/*"};
	static const uint32_t kinds[3] = {GBPF_ATTACH_GPU_ENTRY, GBPF_ATTACH_GPU_EXIT,
					  GBPF_ATTACH_GPU_MEM};
	int k;

	f->desc = (struct gbpf_map_desc){.sz = sizeof(f->desc), .name = "counters",
					 .type = GBPF_MAP_TYPE_ARRAY, .key_size = 4,
					 .value_size = 8, .max_entries = 4 * N};
	f->map.desc = &f->desc;
	f->map.mem_size = gbpf_map_mem_size(&f->desc, 1);
	f->map.mem = gbpf_spirv_cl_alloc(f->cl, f->map.mem_size);
	f->table = gbpf_spirv_cl_alloc(f->cl, sizeof(*f->table));
	if (!f->map.mem || !f->table || gbpf_map_mem_init(f->map.mem, f->map.mem_size, &f->desc, 1))
		return -1;
	f->table->maps[0] = (uint64_t)(uintptr_t)f->map.mem;
	f->table->map_cnt = 1;
	f->table->nr_slots = gbpf_spirv_cl_compute_units(f->cl);
	for (k = 0; k < 3; k++) {
		f->pd[k] = (struct gbpf_prog_desc){.sz = sizeof(f->pd[k]), .name = secs[k] + 4,
						   .section = secs[k], .insns = f->code[k],
						   .insn_cnt = counter_prog(f->code[k], k),
						   .maps = &f->desc, .map_cnt = 1,
						   .attach = {.kind = kinds[k]},
						   .source_file = "test_spirv_inject.c"};
		f->progs[k] = &f->pd[k];
	}
	return 0;
}

static uint64_t counter(struct fixture *f, uint32_t idx)
{
	uint64_t *v = gbpf_map_lookup(&f->map, &idx, 0);

	return v ? *v : ~0ull;
}

static void reset(struct fixture *f)
{
	gbpf_map_mem_init(f->map.mem, f->map.mem_size, &f->desc, 1);
}

/* Inject, build on the device; returns the program or NULL. */
static void *inject_build(struct fixture *f, const char *path, const char *kernel, uint32_t min_exit)
{
	struct gbpf_spirv_inject_opts o = {.sz = sizeof(o),
					   .ctx_table = (uint64_t)(uintptr_t)f->table};
	struct gbpf_spirv_inject_result res;
	void *buf = NULL, *prog = NULL;
	size_t size = 0, k;
	char err[2048];
	int rc, found = 0;

	if (spv_read_file(path, &buf, &size)) {
		tap_ok(0, "%s: cannot read %s", kernel, path);
		return NULL;
	}
	rc = gbpf_spirv_inject(buf, size / 4, f->progs, 3, &o, &res, err, sizeof(err));
	free(buf);
	tap_ok(rc == 0, "%s: injected and validated (%s)%s%s", kernel, path, rc ? ": " : "",
	       rc ? err : "");
	if (rc)
		return NULL;
	for (k = 0; k < res.kernel_cnt; k++) {
		if (strcmp(res.kernels[k].name, kernel))
			continue;
		found = 1;
		tap_ok(res.kernels[k].instrumented && res.kernels[k].n_entry == 1 &&
			       res.kernels[k].n_exit >= min_exit && res.kernels[k].n_mem >= 1,
		       "%s: instrumented with %u entry, %u exit, %u memory probe calls%s%s", kernel,
		       res.kernels[k].n_entry, res.kernels[k].n_exit, res.kernels[k].n_mem,
		       res.kernels[k].reason ? "; " : "",
		       res.kernels[k].reason ? res.kernels[k].reason : "");
	}
	tap_ok(found, "%s: reported among %zu kernels", kernel, res.kernel_cnt);
	rc = gbpf_spirv_cl_build(f->cl, res.words, res.word_count, &prog, err, sizeof(err));
	tap_ok(rc == 0, "%s: instrumented module builds on the device%s%s", kernel, rc ? ": " : "",
	       rc ? err : "");
	gbpf_spirv_inject_result_free(&res);
	return rc ? NULL : prog;
}

/* entry == 1, exit == 1, mem == per-item accesses (and bytes), for every work-item */
static void check_counts(struct fixture *f, const char *kernel, int (*mem_of)(int), int bytes_per)
{
	int i, bad_e = 0, bad_x = 0, bad_m = 0, bad_b = 0;

	for (i = 0; i < N; i++) {
		bad_e += counter(f, i) != 1;
		bad_x += counter(f, N + i) != 1;
		bad_m += counter(f, 2 * N + i) != (uint64_t)mem_of(i);
		bad_b += counter(f, 3 * N + i) != (uint64_t)(mem_of(i) * bytes_per);
	}
	tap_ok(!bad_e && !bad_x, "%s: one entry and one exit per work-item (%d/%d wrong)", kernel,
	       bad_e, bad_x);
	tap_ok(!bad_m && !bad_b, "%s: memory accesses counted exactly per work-item (item 0: %llu "
	       "accesses, %llu bytes; %d wrong)", kernel, (unsigned long long)counter(f, 2 * N),
	       (unsigned long long)counter(f, 3 * N), bad_m + bad_b);
}

static int n_vadd;
static int mem_vadd(int i)
{
	return i < n_vadd ? 3 : 0;
}

static int mem_two(int i)
{
	(void)i;
	return 2;
}

static int mem_one(int i)
{
	(void)i;
	return 1;
}

static int mem_four(int i)
{
	(void)i;
	return 4;
}

static void test_vadd(struct fixture *f)
{
	void *prog = inject_build(f, GBPF_TEST_APPS_SPV, "vadd", 1);
	int *a = gbpf_spirv_cl_alloc(f->cl, N * 4), *b = gbpf_spirv_cl_alloc(f->cl, N * 4);
	int *c = gbpf_spirv_cl_alloc(f->cl, N * 4), i, bad = 0, rc;
	char err[1024];

	n_vadd = N - 10;
	if (prog && a && b && c) {
		struct gbpf_spirv_cl_arg args[4] = {
			{a, N * 4, 1}, {b, N * 4, 1}, {c, N * 4, 1}, {&n_vadd, 4, 0}};

		for (i = 0; i < N; i++) {
			a[i] = i;
			b[i] = 1000 * i;
			c[i] = -1;
		}
		reset(f);
		rc = gbpf_spirv_cl_run_kernel(f->cl, prog, "vadd", N, LOCAL, args, 4, err, sizeof(err));
		tap_ok(rc == 0, "vadd: instrumented kernel ran on %d work-items%s%s", N, rc ? ": " : "",
		       rc ? err : "");
		for (i = 0; i < N; i++)
			bad += c[i] != (i < n_vadd ? 1001 * i : -1);
		tap_ok(!bad, "vadd: the app's output is unchanged (%d wrong)", bad);
		check_counts(f, "vadd", mem_vadd, 4);
	}
	gbpf_spirv_cl_release(f->cl, prog);
	gbpf_spirv_cl_free(f->cl, a);
	gbpf_spirv_cl_free(f->cl, b);
	gbpf_spirv_cl_free(f->cl, c);
}

static void test_histo(struct fixture *f)
{
	void *prog = inject_build(f, GBPF_TEST_APPS_SPV, "histo", 1);
	int *x = gbpf_spirv_cl_alloc(f->cl, N * 4), *bins = gbpf_spirv_cl_alloc(f->cl, 8 * 4);
	int i, bad = 0, rc;
	char err[1024];

	if (prog && x && bins) {
		struct gbpf_spirv_cl_arg args[2] = {{x, N * 4, 1}, {bins, 8 * 4, 1}};

		for (i = 0; i < N; i++)
			x[i] = i * 3;
		reset(f);
		rc = gbpf_spirv_cl_run_kernel(f->cl, prog, "histo", N, LOCAL, args, 2, err, sizeof(err));
		tap_ok(rc == 0, "histo: instrumented kernel ran%s%s", rc ? ": " : "", rc ? err : "");
		for (i = 0; i < 8; i++)
			bad += bins[i] != N / 8;
		tap_ok(!bad, "histo: atomics of the app still exact (%d bins wrong)", bad);
		check_counts(f, "histo", mem_two, 4);
	}
	gbpf_spirv_cl_release(f->cl, prog);
	gbpf_spirv_cl_free(f->cl, x);
	gbpf_spirv_cl_free(f->cl, bins);
}

static void test_revlocal(struct fixture *f)
{
	void *prog = inject_build(f, GBPF_TEST_APPS_SPV, "revlocal", 1);
	int *x = gbpf_spirv_cl_alloc(f->cl, N * 4), i, bad = 0, rc;
	char err[1024];

	if (prog && x) {
		struct gbpf_spirv_cl_arg args[2] = {{x, N * 4, 1}, {NULL, LOCAL * 4, 0}};

		for (i = 0; i < N; i++)
			x[i] = i;
		reset(f);
		rc = gbpf_spirv_cl_run_kernel(f->cl, prog, "revlocal", N, LOCAL, args, 2, err,
					      sizeof(err));
		tap_ok(rc == 0, "revlocal: instrumented kernel with local memory ran%s%s",
		       rc ? ": " : "", rc ? err : "");
		for (i = 0; i < N; i++)
			bad += x[i] != (i / LOCAL) * LOCAL + (LOCAL - 1 - i % LOCAL);
		tap_ok(!bad, "revlocal: the app's output is unchanged (%d wrong)", bad);
		check_counts(f, "revlocal", mem_four, 4);
	}
	gbpf_spirv_cl_release(f->cl, prog);
	gbpf_spirv_cl_free(f->cl, x);
}

static void test_loopk(struct fixture *f)
{
	void *prog = inject_build(f, GBPF_TEST_APPS_SPV, "loopk", 1);
	int *out = gbpf_spirv_cl_alloc(f->cl, N * 4), i, k, bad = 0, rc, n = 50;
	char err[1024];

	if (prog && out) {
		struct gbpf_spirv_cl_arg args[2] = {{out, N * 4, 1}, {&n, 4, 0}};

		reset(f);
		rc = gbpf_spirv_cl_run_kernel(f->cl, prog, "loopk", N, LOCAL, args, 2, err, sizeof(err));
		tap_ok(rc == 0, "loopk: instrumented kernel with a loop ran%s%s", rc ? ": " : "",
		       rc ? err : "");
		for (i = 0; i < N; i++) {
			unsigned s = 1;

			for (k = 0; k <= i && k < n; k++)
				s = s * 3 + (unsigned)(k ^ i);
			bad += (unsigned)out[i] != s;
		}
		tap_ok(!bad, "loopk: the app's output is unchanged (%d wrong)", bad);
		check_counts(f, "loopk", mem_one, 4);
	}
	gbpf_spirv_cl_release(f->cl, prog);
	gbpf_spirv_cl_free(f->cl, out);
}

static void test_multiret(struct fixture *f)
{
	void *prog = inject_build(f, GBPF_TEST_MULTIRET_SPV, "multiret", 2);
	int *out = gbpf_spirv_cl_alloc(f->cl, N * 4), i, bad = 0, rc, n = N / 2;
	char err[1024];

	if (prog && out) {
		struct gbpf_spirv_cl_arg args[2] = {{out, N * 4, 1}, {&n, 4, 0}};

		reset(f);
		rc = gbpf_spirv_cl_run_kernel(f->cl, prog, "multiret", N, LOCAL, args, 2, err,
					      sizeof(err));
		tap_ok(rc == 0, "multiret: instrumented kernel with two returns ran%s%s",
		       rc ? ": " : "", rc ? err : "");
		for (i = 0; i < N; i++)
			bad += out[i] != (i < n ? 2 * i : 7);
		tap_ok(!bad, "multiret: the app's output is unchanged (%d wrong)", bad);
		check_counts(f, "multiret", mem_one, 4);
	}
	gbpf_spirv_cl_release(f->cl, prog);
	gbpf_spirv_cl_free(f->cl, out);
}

static void test_bad_modules(struct fixture *f)
{
	struct gbpf_spirv_inject_result res;
	uint32_t w[16] = {0x07230203, 0x00010000, 0, 10, 0, (2u << 16) | 17, 11, 0, 0, 0};
	char err[512];
	int rc;

	w[0] = 0x12345678;
	rc = gbpf_spirv_inject(w, 10, f->progs, 3, NULL, &res, err, sizeof(err));
	tap_ok(rc < 0 && strstr(err, "word 0") && strstr(err, "magic"), "bad magic rejected: %s", err);
	w[0] = 0x07230203;
	rc = gbpf_spirv_inject(w, 3, f->progs, 3, NULL, &res, err, sizeof(err));
	tap_ok(rc < 0 && strstr(err, "word 0"), "truncated header rejected: %s", err);
	w[5] = (9u << 16) | 17;
	rc = gbpf_spirv_inject(w, 10, f->progs, 3, NULL, &res, err, sizeof(err));
	tap_ok(rc < 0 && strstr(err, "word 5"), "instruction past the end rejected: %s", err);
	w[5] = 0;
	rc = gbpf_spirv_inject(w, 10, f->progs, 3, NULL, &res, err, sizeof(err));
	tap_ok(rc < 0 && strstr(err, "word 5"), "zero-length instruction rejected: %s", err);
	w[5] = (2u << 16) | 0xfff0;
	rc = gbpf_spirv_inject(w, 7, f->progs, 3, NULL, &res, err, sizeof(err));
	tap_ok(rc < 0 && strstr(err, "word"), "unknown opcode rejected: %s", err);
}

int main(void)
{
	struct fixture f;
	char err[1024];

	memset(&f, 0, sizeof(f));
	if (gbpf_spirv_cl_open(-1, &f.cl, err, sizeof(err))) {
		tap_skip("no OpenCL device: %s", err);
		return tap_done();
	}
	if (fixture_init(&f)) {
		tap_ok(0, "fixture: out of memory");
		return tap_done();
	}
	test_bad_modules(&f);
	test_vadd(&f);
	test_histo(&f);
	test_revlocal(&f);
	test_loopk(&f);
	test_multiret(&f);
	gbpf_spirv_cl_free(f.cl, f.map.mem);
	gbpf_spirv_cl_free(f.cl, f.table);
	gbpf_spirv_cl_close(f.cl);
	return tap_done();
}
