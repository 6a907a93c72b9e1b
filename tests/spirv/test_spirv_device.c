/* SPDX-License-Identifier: MIT */
/*
 * gbpf_gpu_ctx.device on SPIR-V (OpenCL on PoCL): a gpu/entry probe records
 * ctx->device and ctx->device_pad (32-bit reads), a gpu/exit probe the
 * whole 64-bit word at offset 56, per work-item into an array map, for a
 * real application kernel (vadd). Without gbpf_spirv_inject_opts.device
 * (an options struct that ends before it: what PoCL's single device gets)
 * every work-item sees device 0; with device = 5, device 5; the padding is
 * 0 in both.
 */
#include <stddef.h>
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

/* slot[id] = device + 1, slot[N + id] = device_pad + 1 (unwritten slots stay 0). */
static const char entry_fmt[] =
	"mov %%r6, %%r1\n call 600\n mov %%r7, %%r0\n ldxw %%r8, [%%r6+56]\n ldxw %%r9, [%%r6+60]\n"
	"stxw [%%r10-4], %%r7\n lddw %%r1, map[0]\n mov %%r2, %%r10\n add %%r2, -4\n call 1\n"
	"jeq %%r0, 0, out\n add %%r8, 1\n stxdw [%%r0+0], %%r8\n"
	"mov %%r1, %%r7\n add %%r1, %d\n stxw [%%r10-4], %%r1\n lddw %%r1, map[0]\n mov %%r2, %%r10\n"
	"add %%r2, -4\n call 1\n jeq %%r0, 0, out\n add %%r9, 1\n stxdw [%%r0+0], %%r9\n"
	"out:\n mov %%r0, 0\n exit\n";

/* slot[2N + id] = (device | pad << 32) + 1 */
static const char exit_fmt[] =
	"mov %%r6, %%r1\n call 600\n mov %%r7, %%r0\n ldxdw %%r8, [%%r6+56]\n add %%r7, %d\n"
	"stxw [%%r10-4], %%r7\n lddw %%r1, map[0]\n mov %%r2, %%r10\n add %%r2, -4\n call 1\n"
	"jeq %%r0, 0, out\n add %%r8, 1\n stxdw [%%r0+0], %%r8\n"
	"out:\n mov %%r0, 0\n exit\n";

struct fx {
	struct gbpf_spirv_cl *cl;
	struct gbpf_map_desc desc;
	struct gbpf_map_instance map;
	struct gbpf_spirv_ctx_table *table;
	struct gbpf_insn *insns[2];
	struct gbpf_prog_desc pd[2];
};

static uint64_t slot(struct fx *f, uint32_t idx)
{
	uint64_t *v = gbpf_map_lookup(&f->map, &idx, 0);

	return v ? *v : ~0ull;
}

/* Inject both probes into vadd with @opts, run it, check every slot. */
static void run_vadd(struct fx *f, const struct gbpf_spirv_inject_opts *opts, uint32_t device,
		     const char *what)
{
	const struct gbpf_prog_desc *p[2] = {&f->pd[0], &f->pd[1]};
	struct gbpf_spirv_inject_result res = {0};
	int *a = gbpf_spirv_cl_alloc(f->cl, N * 4), *b = gbpf_spirv_cl_alloc(f->cl, N * 4);
	int *c = gbpf_spirv_cl_alloc(f->cl, N * 4), n = N, bad_dev = 0, bad_pad = 0, bad_exit = 0;
	void *buf = NULL, *prog = NULL;
	char err[2048] = "";
	size_t size = 0;
	int rc;

	if (spv_read_file(GBPF_TEST_APPS_SPV, &buf, &size)) {
		tap_ok(0, "%s: cannot read %s", what, GBPF_TEST_APPS_SPV);
		goto out;
	}
	rc = gbpf_spirv_inject(buf, size / 4, p, 2, opts, &res, err, sizeof(err));
	if (!rc)
		rc = gbpf_spirv_cl_build(f->cl, res.words, res.word_count, &prog, err, sizeof(err));
	tap_ok(rc == 0, "%s: entry and exit probes injected, validated and built%s%s", what, rc ? ": " : "", err);
	if (rc || !a || !b || !c)
		goto out;
	for (int i = 0; i < N; i++)
		a[i] = i, b[i] = 2 * i, c[i] = -1;
	gbpf_map_mem_init(f->map.mem, f->map.mem_size, &f->desc, 1);
	{
		struct gbpf_spirv_cl_arg args[4] = {{a, N * 4, 1}, {b, N * 4, 1}, {c, N * 4, 1}, {&n, 4, 0}};

		tap_ok(gbpf_spirv_cl_run_kernel(f->cl, prog, "vadd", N, LOCAL, args, 4, err, sizeof(err)) == 0,
		       "%s: instrumented vadd ran %s", what, err);
	}
	for (uint32_t i = 0; i < N; i++) {
		bad_dev += slot(f, i) != device + 1ull;
		bad_pad += slot(f, N + i) != 1;
		bad_exit += slot(f, 2 * N + i) != device + 1ull;
	}
	tap_ok(!bad_dev, "%s: gpu/entry ctx->device == %u in every work-item (%d wrong, slot 0 = %llu)", what,
	       device, bad_dev, (unsigned long long)slot(f, 0));
	tap_ok(!bad_pad, "%s: gpu/entry ctx->device_pad == 0 (%d wrong)", what, bad_pad);
	tap_ok(!bad_exit, "%s: gpu/exit 64-bit read at offset 56 == %u (%d wrong, slot = %llu)", what, device,
	       bad_exit, (unsigned long long)slot(f, 2 * N));
out:
	free(buf);
	gbpf_spirv_inject_result_free(&res);
	gbpf_spirv_cl_release(f->cl, prog);
	gbpf_spirv_cl_free(f->cl, a);
	gbpf_spirv_cl_free(f->cl, b);
	gbpf_spirv_cl_free(f->cl, c);
}

int main(void)
{
	static const char *const names[2] = {"entry_device", "exit_device"};
	static const char *const sections[2] = {"gpu/entry/vadd", "gpu/exit/vadd"};
	static const uint32_t kinds[2] = {GBPF_ATTACH_GPU_ENTRY, GBPF_ATTACH_GPU_EXIT};
	struct gbpf_spirv_inject_opts o = {.sz = sizeof(o)};
	struct fx f;
	char err[1024], text[2048];

	memset(&f, 0, sizeof(f));
	if (gbpf_spirv_cl_open(-1, &f.cl, err, sizeof(err))) {
		tap_skip("no OpenCL device: %s", err);
		return tap_done();
	}
	f.desc = (struct gbpf_map_desc){.sz = sizeof(f.desc), .name = "devs", .type = GBPF_MAP_TYPE_ARRAY,
					.key_size = 4, .value_size = 8, .max_entries = 3 * N};
	f.map.desc = &f.desc;
	f.map.mem_size = gbpf_map_mem_size(&f.desc, 1);
	f.map.mem = gbpf_spirv_cl_alloc(f.cl, f.map.mem_size);
	f.table = gbpf_spirv_cl_alloc(f.cl, sizeof(*f.table));
	if (!f.map.mem || !f.table) {
		tap_ok(0, "setup: OpenCL allocations");
		return tap_done();
	}
	f.table->maps[0] = (uint64_t)(uintptr_t)f.map.mem;
	f.table->map_cnt = 1;
	f.table->nr_slots = gbpf_spirv_cl_compute_units(f.cl);
	for (int i = 0; i < 2; i++) {
		size_t cnt = 0;

		snprintf(text, sizeof(text), i ? exit_fmt : entry_fmt, i ? 2 * N : N);
		if (gbpf_asm(text, &f.insns[i], &cnt, err, sizeof(err))) {
			tap_ok(0, "setup: %s: %s", names[i], err);
			return tap_done();
		}
		f.pd[i] = (struct gbpf_prog_desc){.sz = sizeof(f.pd[i]), .name = names[i], .section = sections[i],
						  .insns = f.insns[i], .insn_cnt = cnt, .maps = &f.desc,
						  .map_cnt = 1, .attach = {.kind = kinds[i]},
						  .source_file = "test_spirv_device.c"};
	}
	o.ctx_table = (uint64_t)(uintptr_t)f.table;
	/* An options struct of a caller built before device existed: device 0. */
	o.sz = offsetof(struct gbpf_spirv_inject_opts, device);
	o.device = 7; /* past sz: must not be read */
	run_vadd(&f, &o, 0, "opts without device");
	o.sz = sizeof(o);
	o.device = 5;
	run_vadd(&f, &o, 5, "device 5");
	for (int i = 0; i < 2; i++)
		free(f.insns[i]);
	gbpf_spirv_cl_free(f.cl, f.map.mem);
	gbpf_spirv_cl_free(f.cl, f.table);
	gbpf_spirv_cl_close(f.cl);
	return tap_done();
}
