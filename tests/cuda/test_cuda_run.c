/* SPDX-License-Identifier: MIT */
/*
 * The cuda plugin through its dispatch table, on a real GPU: conformance
 * programs with 1 thread and with many threads (GBPF_CUDA_THREADS, default
 * 10^6), and maps under 10^6 concurrent threads. Skips (TAP) when no CUDA
 * device or driver is present.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gbpf/helper_ids.h>
#include <gbpf/plugin.h>

#include "cuda_test_util.h"
#include "maps/map.h"
#include "tests/tap.h"

#define INSN(c, d, s, o, i) ((struct gbpf_insn){.code = (c), .dst = (d), .src = (s), .off = (o), .imm = (i)})

static struct gbpf_backend_ops ops;

static size_t run_conformance(struct gbpf_backend *be, struct conf_case *cases, size_t n,
			      uint64_t threads, char *first_bad, size_t fb_size)
{
	size_t i, pass = 0;

	for (i = 0; i < n; i++) {
		struct gbpf_backend_prog *bp = NULL;
		struct gbpf_run_opts ro = {.sz = sizeof(ro), .threads = threads, .data = cases[i].mem,
					   .data_size = cases[i].mem_size};
		struct gbpf_run_result res = {.sz = sizeof(res)};
		char log[1024] = "";
		int rc;

		if (!cases[i].has_expected)
			continue;
		rc = ops.prog_load(be, &cases[i].desc, NULL, 0, &bp, log, sizeof(log));
		if (!rc)
			rc = ops.prog_run(bp, &ro, &res, log, sizeof(log));
		if (!rc && res.r0_first == cases[i].expected && res.r0_distinct == 1)
			pass++;
		else if (!first_bad[0])
			snprintf(first_bad, fb_size, "%s: rc %d r0 0x%llx (want 0x%llx) uniform %llu %s",
				 cases[i].name, rc, (unsigned long long)res.r0_first,
				 (unsigned long long)cases[i].expected,
				 (unsigned long long)res.r0_distinct, log);
		ops.prog_unload(bp);
	}
	return pass;
}

/* 10^6 threads add 1 to value 0 of an array (atomic add on a map value). */
static void test_array_count(struct gbpf_backend *be, uint64_t threads)
{
	const struct gbpf_map_desc md = {.sz = sizeof(md), .name = "counts", .type = GBPF_MAP_TYPE_ARRAY,
					 .key_size = 4, .value_size = 8, .max_entries = 4};
	const struct gbpf_insn prog[] = {
		INSN(0x62, 10, 0, -4, 0),                       /* *(u32 *)(r10-4) = 0 */
		INSN(0xbf, 2, 10, 0, 0), INSN(0x07, 2, 0, 0, -4), /* r2 = r10 - 4 */
		INSN(0x18, 1, GBPF_PSEUDO_MAP_IDX, 0, 0), INSN(0, 0, 0, 0, 0),
		INSN(0x85, 0, 0, 0, GBPF_HELPER_MAP_LOOKUP_ELEM),
		INSN(0x15, 0, 0, 2, 0),                         /* if r0 == 0 goto out */
		INSN(0xb7, 1, 0, 0, 1),
		INSN(0xdb, 0, 1, 0, GBPF_ATOMIC_ADD),           /* lock *(u64 *)r0 += 1 */
		INSN(0xb7, 0, 0, 0, 0),
		INSN(0x95, 0, 0, 0, 0),
	};
	struct gbpf_prog_desc p = {.sz = sizeof(p), .name = "count", .section = "test", .insns = prog,
				   .insn_cnt = sizeof(prog) / sizeof(prog[0]), .maps = &md, .map_cnt = 1,
				   .source_file = "test_cuda_run.c"};
	struct gbpf_map_instance mi;
	struct gbpf_backend_prog *bp = NULL;
	struct gbpf_run_opts ro = {.sz = sizeof(ro), .threads = threads};
	struct gbpf_run_result res = {.sz = sizeof(res)};
	char log[1024] = "";
	uint32_t key = 0;
	uint64_t *v;
	int rc;

	rc = gbpf_map_instance_create(&mi, &md, 1);
	if (rc) {
		tap_ok(0, "array map created (%d)", rc);
		return;
	}
	rc = ops.prog_load(be, &p, &mi, 1, &bp, log, sizeof(log));
	if (!rc)
		rc = ops.prog_run(bp, &ro, &res, log, sizeof(log));
	v = gbpf_map_lookup(&mi, &key, 0);
	tap_ok(!rc && v && *v == threads, "%llu threads atomically add 1 to array[0]: %llu (%d %s)",
	       (unsigned long long)threads, v ? (unsigned long long)*v : 0ull, rc, log);
	tap_diag("array count: %llu threads in %.3f ms", (unsigned long long)threads, res.elapsed_ns / 1e6);
	ops.prog_unload(bp);
	gbpf_map_instance_destroy(&mi);
}

int main(void)
{
	const char *plugin = getenv("GBPF_CUDA_PLUGIN");
	const char *tsv = conf_tsv_path();
	gbpf_plugin_get_backend_table_fn entry;
	struct gbpf_backend_caps caps = {.sz = sizeof(caps)};
	struct gbpf_backend_open_opts oo = {.sz = sizeof(oo), .device_index = -1};
	struct gbpf_device_info dev[4];
	struct gbpf_backend *be = NULL;
	struct conf_case *cases = NULL;
	uint32_t count = 4;
	uint64_t big = 1000000;
	char why[512] = "", bad[1024];
	size_t n = 0, want = 0, i, pass;
	void *h;
	int rc;

	if (!plugin)
		plugin = GBPF_CUDA_PLUGIN_PATH;
	if (getenv("GBPF_CUDA_THREADS"))
		big = strtoull(getenv("GBPF_CUDA_THREADS"), NULL, 0);
	h = dlopen(plugin, RTLD_NOW | RTLD_LOCAL);
	if (!tap_ok(h != NULL, "dlopen %s", plugin))
		return tap_done();
	entry = (gbpf_plugin_get_backend_table_fn)dlsym(h, GBPF_PLUGIN_ENTRY_SYMBOL);
	ops.sz = sizeof(ops);
	tap_ok(entry && entry(GBPF_PLUGIN_ABI_VERSION, &ops, &caps) == 0 && !strcmp(ops.name, "cuda"),
	       "entry fills the table");
	tap_ok(entry && entry(GBPF_MAKE_VERSION(2, 0), &ops, &caps) == -EPROTONOSUPPORT,
	       "other major ABI version refused");
	rc = ops.query_devices(dev, &count, why, sizeof(why));
	if (rc) {
		tap_ok(rc == -ENODEV && why[0], "no device reported with a reason: %s", why);
		tap_skip("no CUDA device: %s", why);
		return tap_done();
	}
	tap_ok(count >= 1, "%u device(s): %s %s, %u SMs", count, dev[0].name, dev[0].arch,
	       dev[0].compute_units);
	rc = ops.open(&oo, &be);
	if (!tap_ok(rc == 0, "open backend (%d)", rc))
		return tap_done();

	if (!tsv) {
		tap_skip("conformance suite absent (../shared/conformance)");
	} else {
		n = conf_load(tsv, &cases);
		for (i = 0; i < n; i++)
			want += cases[i].has_expected;
		bad[0] = 0;
		pass = run_conformance(be, cases, n, 1, bad, sizeof(bad));
		tap_ok(pass == want && want >= 313, "conformance, 1 thread: %zu/%zu %s", pass, want, bad);
		bad[0] = 0;
		pass = run_conformance(be, cases, n, big, bad, sizeof(bad));
		tap_ok(pass == want && want >= 313, "conformance, %llu threads: %zu/%zu (all threads agree) %s",
		       (unsigned long long)big, pass, want, bad);
		conf_free(cases, n);
	}
	test_array_count(be, big);
	ops.close(be);
	dlclose(h);
	return tap_done();
}
