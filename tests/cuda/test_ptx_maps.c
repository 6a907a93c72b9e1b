/* SPDX-License-Identifier: MIT */
/*
 * The PTX of programs using every device map helper (hash lookup / update /
 * delete on every hash type, ring buffer output / reserve / submit /
 * discard, perf_event_output) is accepted by ptxas for sm_90 and for the
 * lowest architecture the installed ptxas takes (sm_70 or sm_75), both as
 * a run kernel and as a probe fragment; no stub is left in it.
 * Lookups in maps known at code generation are inlined: arrays, per-CPU
 * (per-SM) and per-GPU-thread arrays as address arithmetic, hashes with the
 * key's hash computed inline; the key comes from the register or constant
 * stored into the stack when nothing in between may have changed it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gbpf/prog.h>

#include "cuda_test_util.h"
#include "map_progs.h"
#include "plugins/cuda/ptx_codegen.h"
#include "tests/tap.h"

static void check(const char *what, const struct gbpf_insn *insns, size_t n,
		  const struct gbpf_map_desc *md)
{
	const char *archs[2] = {"sm_90", ptxas_arch_for_sm70()};
	struct gbpf_prog_desc p = {.sz = sizeof(p), .name = what, .section = "gpu/entry/k",
				   .insns = insns, .insn_cnt = n, .maps = md, .map_cnt = 1,
				   .source_file = "test_ptx_maps.c"};
	const struct gbpf_prog_desc *pp = &p;

	for (int a = 0; a < 2; a++) {
		for (int kernel = 0; kernel < 2; kernel++) {
			struct gbpf_ptx_opts o = {.sz = sizeof(o), .arch = archs[a],
						  .flags = kernel ? GBPF_PTX_KERNEL : 0};
			char err[512] = "", log[2048] = "", hdr[128], *ptx = NULL, *mod = NULL;
			int rc = gbpf_ptx_emit(&pp, 1, &o, &ptx, NULL, err, sizeof(err));

			if (!tap_ok(rc == 0 && ptx, "%s (%s, %s): PTX generated %s", what, archs[a],
				    kernel ? "kernel" : "fragment", err))
				continue;
			tap_ok(!strstr(ptx, "-95;") && strstr(ptx, "__gbpf_m_") != NULL,
			       "%s (%s): device map functions, no -EOPNOTSUPP stub", what, archs[a]);
			if (!ptxas_path()) {
				tap_skip("ptxas not found");
				free(ptx);
				continue;
			}
			if (kernel) {
				mod = ptx;
				ptx = NULL;
			} else {
				gbpf_ptx_header(hdr, sizeof(hdr), archs[a], 0);
				mod = malloc(strlen(hdr) + strlen(ptx) + 1);
				if (mod) {
					strcpy(mod, hdr);
					strcat(mod, ptx);
				}
			}
			tap_ok(mod && ptxas_check(mod, archs[a], log, sizeof(log)) == 0,
			       "%s (%s, %s): ptxas accepts %s", what, archs[a],
			       kernel ? "kernel" : "fragment", log);
			free(mod);
			free(ptx);
		}
	}
}

/* The probe fragment for sm_90 holds every string of @must and none of @must_not. */
static void check_text(const char *what, const struct gbpf_insn *insns, size_t n,
		       const struct gbpf_map_desc *md, const char *const *must, const char *const *must_not)
{
	struct gbpf_prog_desc p = {.sz = sizeof(p), .name = what, .section = "gpu/entry/k",
				   .insns = insns, .insn_cnt = n, .maps = md, .map_cnt = 1,
				   .source_file = "test_ptx_maps.c"};
	const struct gbpf_prog_desc *pp = &p;
	struct gbpf_ptx_opts o = {.sz = sizeof(o), .arch = "sm_90"};
	char err[512] = "", *ptx = NULL;
	int rc = gbpf_ptx_emit(&pp, 1, &o, &ptx, NULL, err, sizeof(err));

	if (!tap_ok(rc == 0 && ptx, "%s: PTX generated %s", what, err))
		return;
	for (; must && *must; must++)
		tap_ok(strstr(ptx, *must) != NULL, "%s: has '%s'", what, *must);
	for (; must_not && *must_not; must_not++)
		tap_ok(strstr(ptx, *must_not) == NULL, "%s: no '%s'", what, *must_not);
	free(ptx);
	check(what, insns, n, md);
}

#define I(c, d, s, o, i) ((struct gbpf_insn){.code = (c), .dst = (d), .src = (s), .off = (o), .imm = (i)})

static void test_inline_lookups(void)
{
	static const char *const no_call[] = {"call (__hr), __gbpf_h_map_lookup", NULL};
	struct gbpf_insn prog[MAP_PROG_MAX];
	size_t n = map_prog_array_count(prog, 16);
	struct gbpf_map_desc md = {.sz = sizeof(md), .name = "a", .type = GBPF_MAP_TYPE_PERCPU_ARRAY,
				   .key_size = 4, .value_size = 8, .max_entries = 16};
	/* the key, stored from r6 which nothing writes before the call, is r6 */
	static const char *const pcpu[] = {"%smid", "cvt.u32.u64 %w10, %r6;", "mul.wide.u32 %t10, %w11, 16;",
					   NULL};
	static const char *const thread[] = {"mov.u32 %w10, 0;", "%nctaid.z", "mul.wide.u32 %t12, %w15, %w12;",
					     NULL};
	static const char *const arr[] = {"cvt.u32.u64 %w10, %r6;", NULL};
	static const char *const hash[] = {"mov.b64 %t10, 0x9E3779B97F4A7C11;",
					   "call (__hr), __gbpf_m_hash_lookup_kh", NULL};
	/* no program deletes: the home bucket read inline, the value past the 4-byte key (24 + 8) */
	static const char *const hash_fast[] = {"ld.acquire.gpu.u32 %w14, [%t12];", "add.u64 %r0, %t12, 32;",
						"mul.wide.u32 %t11, %w14, 8;", NULL};
	static const char *const no_fast[] = {"ld.acquire.gpu.u32 %w14, [%t12];", NULL};
	/* lookup of key 7, then delete of the same key: buckets may change under a reader */
	const struct gbpf_insn del[] = {
		I(0xb7, 1, 0, 0, 7), I(0x63, 10, 1, -4, 0), I(0xbf, 2, 10, 0, 0), I(0x07, 2, 0, 0, -4),
		I(0x18, 1, GBPF_PSEUDO_MAP_IDX, 0, 0), I(0, 0, 0, 0, 0), I(0x85, 0, 0, 0, 1),
		I(0xbf, 2, 10, 0, 0), I(0x07, 2, 0, 0, -4), I(0x18, 1, GBPF_PSEUDO_MAP_IDX, 0, 0),
		I(0, 0, 0, 0, 0), I(0x85, 0, 0, 0, 3), I(0xb7, 0, 0, 0, 0), I(0x95, 0, 0, 0, 0)};
	static const char *const loaded[] = {"ld.local.u32 %w10, [__gbpf_stack+508];", NULL};
	/* r0 = lookup(map, &(u32)0) of a per-GPU-thread array; *r0 += 1 (threadhist) */
	const struct gbpf_insn th[] = {
		I(0xb7, 1, 0, 0, 0), I(0x63, 10, 1, -4, 0), I(0xbf, 2, 10, 0, 0), I(0x07, 2, 0, 0, -4),
		I(0x18, 1, GBPF_PSEUDO_MAP_IDX, 0, 0), I(0, 0, 0, 0, 0), I(0x85, 0, 0, 0, 1),
		I(0x15, 0, 0, 3, 0), I(0x79, 1, 0, 0, 0), I(0x07, 1, 0, 0, 1), I(0x7b, 0, 1, 0, 0),
		I(0xb7, 0, 0, 0, 0), I(0x95, 0, 0, 0, 0)};
	/* the key stored, then a store through a pointer loaded from memory (may alias the key) */
	const struct gbpf_insn alias[] = {
		I(0xb7, 1, 0, 0, 7), I(0x63, 10, 1, -4, 0), I(0x79, 4, 10, -16, 0), I(0x63, 4, 1, 0, 0),
		I(0xbf, 2, 10, 0, 0), I(0x07, 2, 0, 0, -4), I(0x18, 1, GBPF_PSEUDO_MAP_IDX, 0, 0),
		I(0, 0, 0, 0, 0), I(0x85, 0, 0, 0, 1), I(0xb7, 0, 0, 0, 0), I(0x95, 0, 0, 0, 0)};
	/* the key's slot overwritten through a copy of the stack pointer (r3 = r10 - 8, +4) */
	const struct gbpf_insn over[] = {
		I(0xb7, 1, 0, 0, 7), I(0x63, 10, 1, -4, 0), I(0xbf, 3, 10, 0, 0), I(0x07, 3, 0, 0, -8),
		I(0xb7, 4, 0, 0, 9), I(0x63, 3, 4, 4, 0), I(0xbf, 2, 10, 0, 0), I(0x07, 2, 0, 0, -4),
		I(0x18, 1, GBPF_PSEUDO_MAP_IDX, 0, 0), I(0, 0, 0, 0, 0), I(0x85, 0, 0, 0, 1),
		I(0xb7, 0, 0, 0, 0), I(0x95, 0, 0, 0, 0)};
	static const char *const nine[] = {"mov.u32 %w10, 9;", NULL};

	check_text("per-CPU array count (inline lookup, SM's copy)", prog, n, &md, pcpu, no_call);
	md.type = GBPF_MAP_TYPE_ARRAY;
	check_text("array count (inline lookup)", prog, n, &md, arr, no_call);
	md.type = GBPF_MAP_TYPE_PERGPUTHREAD_ARRAY;
	md.max_entries = 1;
	check_text("per-GPU-thread array (threadhist, constant key, 1-D grid fast path)", th,
		   sizeof(th) / sizeof(th[0]), &md, thread, no_call);
	md.type = GBPF_MAP_TYPE_ARRAY;
	md.max_entries = 16;
	check_text("array lookup, a store through an unknown pointer after the key's: key reloaded", alias,
		   sizeof(alias) / sizeof(alias[0]), &md, loaded, no_call);
	check_text("array lookup, key slot overwritten through a stack pointer copy: the new key", over,
		   sizeof(over) / sizeof(over[0]), &md, nine, no_call);
	n = map_prog_hash_count(prog, 100);
	md.type = GBPF_MAP_TYPE_PERCPU_HASH;
	md.max_entries = 1024;
	check_text("per-CPU hash count (key hashed inline)", prog, n, &md, hash, NULL);
	check_text("per-CPU hash count (home bucket read inline)", prog, n, &md, hash_fast, NULL);
	md.type = GBPF_MAP_TYPE_LRU_HASH;
	check_text("LRU hash count (evictions change buckets: full lookup)", prog, n, &md, hash, no_fast);
	md.type = GBPF_MAP_TYPE_HASH;
	check_text("hash lookup in a program that deletes: full lookup", del, sizeof(del) / sizeof(del[0]),
		   &md, hash, no_fast);
}

int main(void)
{
	static const uint32_t hash_types[] = {GBPF_MAP_TYPE_HASH, GBPF_MAP_TYPE_PERCPU_HASH,
					      GBPF_MAP_TYPE_LRU_HASH, GBPF_MAP_TYPE_GPU_HASH};
	static const uint32_t ring_types[] = {GBPF_MAP_TYPE_RINGBUF, GBPF_MAP_TYPE_GPU_RINGBUF};
	struct gbpf_insn prog[MAP_PROG_MAX];
	char what[96];
	size_t n;

	for (size_t t = 0; t < sizeof(hash_types) / sizeof(hash_types[0]); t++) {
		struct gbpf_map_desc md = {.sz = sizeof(md), .name = "h", .type = hash_types[t],
					   .key_size = 4, .value_size = 8, .max_entries = 1024};

		n = map_prog_hash_update(prog, 0, 0);
		snprintf(what, sizeof(what), "hash type %u update", hash_types[t]);
		check(what, prog, n, &md);
		n = map_prog_hash_count(prog, 100);
		snprintf(what, sizeof(what), "hash type %u lookup+insert+add", hash_types[t]);
		check(what, prog, n, &md);
		n = map_prog_hash_delete_even(prog);
		snprintf(what, sizeof(what), "hash type %u delete", hash_types[t]);
		check(what, prog, n, &md);
	}
	for (size_t t = 0; t < sizeof(ring_types) / sizeof(ring_types[0]); t++) {
		struct gbpf_map_desc md = {.sz = sizeof(md), .name = "rb", .type = ring_types[t],
					   .max_entries = 1 << 16};

		n = map_prog_ring_output(prog);
		snprintf(what, sizeof(what), "ring type %u output", ring_types[t]);
		check(what, prog, n, &md);
		n = map_prog_ring_reserve(prog);
		snprintf(what, sizeof(what), "ring type %u reserve/submit/discard", ring_types[t]);
		check(what, prog, n, &md);
	}
	{
		struct gbpf_map_desc md = {.sz = sizeof(md), .name = "ev",
					   .type = GBPF_MAP_TYPE_PERF_EVENT_ARRAY, .key_size = 4,
					   .value_size = 4};

		n = map_prog_perf_output(prog);
		check("perf_event_output", prog, n, &md);
	}
	test_inline_lookups();
	return tap_done();
}
