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
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gbpf/helper_ids.h>
#include <gbpf/prog.h>

#include "cuda_test_util.h"
#include "map_progs.h"
#include "maps/map.h"
#include "maps/map_layout.h"
#include "plugins/cuda/ptx_codegen.h"
#include "tests/tap.h"

/* ptxas_check of probe fragment @p frag made a module for @p arch (its header prefixed). */
static int ptxas_fragment(const char *frag, const char *arch, char *log, size_t log_size)
{
	char hdr[128], *mod;
	int rc;

	gbpf_ptx_header(hdr, sizeof(hdr), arch, 0);
	mod = malloc(strlen(hdr) + strlen(frag) + 1);
	if (!mod)
		return -ENOMEM;
	strcpy(mod, hdr);
	strcat(mod, frag);
	rc = ptxas_check(mod, arch, log, log_size);
	free(mod);
	return rc;
}

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
			char err[512] = "", log[2048] = "", *ptx = NULL;
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
			tap_ok((kernel ? ptxas_check(ptx, archs[a], log, sizeof(log))
				       : ptxas_fragment(ptx, archs[a], log, sizeof(log))) == 0,
			       "%s (%s, %s): ptxas accepts %s", what, archs[a],
			       kernel ? "kernel" : "fragment", log);
			free(ptx);
		}
	}
}

/* The probe fragment for sm_90 holds every string of @must and none of @must_not. */
/* check_text for a program attached as @p kind (enum gbpf_attach_kind; 0: none) */
static void check_text_as(const char *what, uint32_t kind, const struct gbpf_insn *insns, size_t n,
			  const struct gbpf_map_desc *md, const char *const *must, const char *const *must_not)
{
	struct gbpf_prog_desc p = {.sz = sizeof(p), .name = what, .section = "gpu/entry/k",
				   .insns = insns, .insn_cnt = n, .maps = md, .map_cnt = 1,
				   .source_file = "test_ptx_maps.c", .attach = {.kind = kind}};
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

static void check_text(const char *what, const struct gbpf_insn *insns, size_t n,
		       const struct gbpf_map_desc *md, const char *const *must, const char *const *must_not)
{
	check_text_as(what, GBPF_ATTACH_NONE, insns, n, md, must, must_not);
}

#define I(c, d, s, o, i) ((struct gbpf_insn){.code = (c), .dst = (d), .src = (s), .off = (o), .imm = (i)})

/* The thread id as a 4-byte key at r10-4 (each lane its own); if (r0) *r0 += 1 atomically. */
#define THREAD_KEY_COUNT                                                                                  \
	{I(0x85, 0, 0, 0, GBPF_HELPER_GPU_GLOBAL_THREAD_ID), I(0x63, 10, 0, -4, 0), I(0xbf, 2, 10, 0, 0),    \
	 I(0x07, 2, 0, 0, -4), I(0x18, 1, GBPF_PSEUDO_MAP_IDX, 0, 0), I(0, 0, 0, 0, 0), I(0x85, 0, 0, 0, 1), \
	 I(0x15, 0, 0, 2, 0), I(0xb7, 1, 0, 0, 1), I(0xdb, 0, 1, 0, GBPF_ATOMIC_ADD), I(0xb7, 0, 0, 0, 0),   \
	 I(0x95, 0, 0, 0, 0)}

/*
 * GPU_THREAD_LOCAL: `if (v = lookup(t, &0)) __sync_fetch_and_add(v, 1)` reaches the thread's own
 * value after the probe context (fragment for the injector) or in the run kernel's frame, with a
 * plain read-modify-write for the atomic (local memory has no atomics); a fragment for a caller
 * that keeps no values is refused by name.
 */
static void test_thread_local(void)
{
	struct gbpf_insn prog[] = THREAD_KEY_COUNT;
	struct gbpf_map_desc md = {.sz = sizeof(md), .name = "t", .type = GBPF_MAP_TYPE_GPU_THREAD_LOCAL,
				   .key_size = 4, .value_size = 8, .max_entries = 1};
	struct gbpf_prog_desc p = {.sz = sizeof(p), .name = "tls", .section = "gpu/mem/k", .insns = prog,
				   .insn_cnt = sizeof(prog) / sizeof(prog[0]), .maps = &md, .map_cnt = 1,
				   .source_file = "test_ptx_maps.c"};
	const struct gbpf_prog_desc *pp = &p;
	static const uint32_t modes[2] = {GBPF_PTX_THREAD_LOCAL_CTX, GBPF_PTX_KERNEL};
	static const char *const must[2][3] = {
		{"add.u64 %rtls, %rctx, 64;", "ld.u64 %t6, [%rtls+0];", ".reg .b64 " GBPF_PTX_TLS_REGS_MARK ";"},
		{".local .align 8 .b8 __gbpf_tls[8];", "st.local.u64 [__gbpf_tls+0], 0;", "add.u64 %r0, %rtls, 0;"}};
	char err[512] = "", log[2048] = "", *ptx = NULL;
	const char *body;
	int rc;

	prog[0] = I(0xb7, 0, 0, 0, 0); /* the key: 0, the same in every lane */
	tap_ok(gbpf_progs_thread_local_size(&pp, 1) == 8, "thread-local bytes of the program: 8");
	for (int k = 0; k < 2; k++) {
		struct gbpf_ptx_opts o = {.sz = sizeof(o), .arch = "sm_90", .flags = modes[k]};

		rc = gbpf_ptx_emit(&pp, 1, &o, &ptx, NULL, err, sizeof(err));
		if (!tap_ok(rc == 0 && ptx, "thread-local (%s): PTX generated %s", k ? "kernel" : "fragment", err))
			continue;
		for (int i = 0; i < 3; i++)
			tap_ok(strstr(ptx, must[k][i]) != NULL, "thread-local (%s): has '%s'",
			       k ? "kernel" : "fragment", must[k][i]);
		/* the program's own function (the module's map routines before it have their atomics) */
		body = strstr(ptx, k ? ".entry __gbpf_run" : "__gbpf_probe_0(");
		tap_ok(body && !strstr(body, "__gbpf_h_map_lookup") && !strstr(body, "atom."),
		       "thread-local (%s): no generic lookup, no atomic instruction", k ? "kernel" : "fragment");
		if (!ptxas_path()) {
			tap_skip("ptxas not found");
		} else {
			tap_ok((k ? ptxas_check(ptx, "sm_90", log, sizeof(log))
				  : ptxas_fragment(ptx, "sm_90", log, sizeof(log))) == 0,
			       "thread-local (%s): ptxas accepts %s", k ? "kernel" : "fragment", log);
		}
		free(ptx);
		ptx = NULL;
	}
	{
		/* the thread id as the index (a place not known): the values stay in memory, no mark */
		struct gbpf_insn byid[] = THREAD_KEY_COUNT;
		struct gbpf_map_desc m4 = md;
		struct gbpf_prog_desc q = p;
		const struct gbpf_prog_desc *qp = &q;
		struct gbpf_ptx_opts o = {.sz = sizeof(o), .arch = "sm_90", .flags = GBPF_PTX_THREAD_LOCAL_CTX};

		m4.max_entries = 4;
		q.insns = byid;
		q.maps = &m4;
		rc = gbpf_ptx_emit(&qp, 1, &o, &ptx, NULL, err, sizeof(err));
		tap_ok(rc == 0 && ptx && strstr(ptx, "setp.ge.u32 %p6, %w10, 4;") &&
			       !strstr(ptx, GBPF_PTX_TLS_REGS_MARK),
		       "thread-local at a place known only at run time: bounds checked, kept in memory (no mark) %s",
		       err);
		free(ptx);
		ptx = NULL;
	}
	{
		/* update(t, &0, &v, BPF_ANY) with v = 5 on the stack: written into the values' memory, no mark */
		struct gbpf_insn upd[] = {
			I(0x62, 10, 0, -4, 0), I(0x7a, 10, 0, -16, 5), I(0xbf, 2, 10, 0, 0), I(0x07, 2, 0, 0, -4),
			I(0xbf, 3, 10, 0, 0), I(0x07, 3, 0, 0, -16), I(0xb7, 4, 0, 0, 0),
			I(0x18, 1, GBPF_PSEUDO_MAP_IDX, 0, 0), I(0, 0, 0, 0, 0),
			I(0x85, 0, 0, 0, GBPF_HELPER_MAP_UPDATE_ELEM), I(0x95, 0, 0, 0, 0)};
		struct gbpf_prog_desc q = p;
		const struct gbpf_prog_desc *qp = &q;
		struct gbpf_ptx_opts o = {.sz = sizeof(o), .arch = "sm_90", .flags = GBPF_PTX_THREAD_LOCAL_CTX};

		q.insns = upd;
		q.insn_cnt = sizeof(upd) / sizeof(upd[0]);
		rc = gbpf_ptx_emit(&qp, 1, &o, &ptx, NULL, err, sizeof(err));
		tap_ok(rc == 0 && ptx && strstr(ptx, "st.u64 [%t11+0], %t12;") && !strstr(ptx, GBPF_PTX_TLS_REGS_MARK),
		       "thread-local update: the value copied into the values' memory, no mark %s", err);
		if (rc == 0 && ptx && ptxas_path())
			tap_ok(ptxas_fragment(ptx, "sm_90", log, sizeof(log)) == 0,
			       "thread-local update: ptxas accepts %s", log);
		free(ptx);
		ptx = NULL;
	}
	{
		struct gbpf_ptx_opts o = {.sz = sizeof(o), .arch = "sm_90"};

		rc = gbpf_ptx_emit(&pp, 1, &o, &ptx, NULL, err, sizeof(err));
		tap_ok(rc == -ENOTSUP && !ptx && strstr(err, "thread-local map 't'") && strstr(err, "test_ptx_maps.c"),
		       "a fragment for a caller that keeps no values: refused by name (%s)", err);
		free(ptx);
	}
}

/*
 * GBPF_PTX_CONST_MAP_TABLE: an inlined array lookup of map 1 of 2 reads the
 * map from __gbpf_maps_const[1] and, per-CPU, its nr_slots from
 * __gbpf_slots_const[1] instead of its header; a per-GPU-thread array still
 * reads nr_slots from the header (the host sets it at every launch); without
 * the flag the module has no constant-space variable.
 */
static void test_const_map_table(void)
{
	/* r0 = lookup(maps[1], &(u32)3); if (r0) *r0 += 1 atomically */
	const struct gbpf_insn prog[] = {
		I(0xb7, 1, 0, 0, 3), I(0x63, 10, 1, -4, 0), I(0xbf, 2, 10, 0, 0), I(0x07, 2, 0, 0, -4),
		I(0x18, 1, GBPF_PSEUDO_MAP_IDX, 0, 1), I(0, 0, 0, 0, 0), I(0x85, 0, 0, 0, 1),
		I(0x15, 0, 0, 2, 0), I(0xb7, 1, 0, 0, 1), I(0xdb, 0, 1, 0, GBPF_ATOMIC_ADD), I(0xb7, 0, 0, 0, 0),
		I(0x95, 0, 0, 0, 0)};
	static const uint32_t types[] = {GBPF_MAP_TYPE_PERCPU_ARRAY, GBPF_MAP_TYPE_ARRAY,
					 GBPF_MAP_TYPE_PERGPUTHREAD_ARRAY};
	struct gbpf_map_desc md[2] = {
		{.sz = sizeof(md[0]), .name = "h", .type = GBPF_MAP_TYPE_HASH, .key_size = 4, .value_size = 8,
		 .max_entries = 64},
		{.sz = sizeof(md[1]), .name = "a", .key_size = 4, .value_size = 8, .max_entries = 16}};
	struct gbpf_prog_desc p = {.sz = sizeof(p), .name = "const", .section = "gpu/mem/k", .insns = prog,
				   .insn_cnt = sizeof(prog) / sizeof(prog[0]), .maps = md, .map_cnt = 2,
				   .source_file = "test_ptx_maps.c"};
	const struct gbpf_prog_desc *pp = &p;

	for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
		struct gbpf_ptx_opts o = {.sz = sizeof(o), .arch = "sm_90", .flags = GBPF_PTX_CONST_MAP_TABLE};
		char err[512] = "", log[2048] = "", *ptx = NULL;
		int percpu = types[t] == GBPF_MAP_TYPE_PERCPU_ARRAY;
		int thread = types[t] == GBPF_MAP_TYPE_PERGPUTHREAD_ARRAY;
		int rc;

		md[1].type = types[t];
		rc = gbpf_ptx_emit(&pp, 1, &o, &ptx, NULL, err, sizeof(err));
		if (!tap_ok(rc == 0 && ptx, "constant map table, type %u: PTX generated %s", types[t], err))
			continue;
		tap_ok(strstr(ptx, ".visible .const .align 8 .u64 __gbpf_maps_const[2];") &&
		       strstr(ptx, ".visible .const .align 4 .u32 __gbpf_slots_const[2];") &&
		       strstr(ptx, "ld.const.u64 %r1, [__gbpf_maps_const+8];"),
		       "constant map table, type %u: declared for 2 maps, map 1 read from it", types[t]);
		tap_ok(!strstr(ptx, "[__gbpf_maps_const+0]") && !strstr(ptx, "[__gbpf_slots_const+0]"),
		       "constant map table, type %u: map 0 (no array lookup) not read from it", types[t]);
		if (percpu)
			tap_ok(strstr(ptx, "ld.const.u32 %w12, [__gbpf_slots_const+4];") && !strstr(ptx, "[%r1+28]") &&
				       strstr(ptx, "min.u32 %w11, %w11, %w12;"),
			       "constant map table, per-CPU: nr_slots from __gbpf_slots_const[1], not the header");
		else
			tap_ok(!strstr(ptx, "__gbpf_slots_const+") &&
				       (!thread || strstr(ptx, "ld.u32 %w11, [%r1+28];")),
			       "constant map table, type %u: no nr_slots from the constant bank%s", types[t],
			       thread ? " (per-GPU-thread: the header's, set per launch)" : "");
		if (ptxas_path())
			tap_ok(ptxas_fragment(ptx, "sm_90", log, sizeof(log)) == 0,
			       "constant map table, type %u: ptxas accepts %s", types[t], log);
		else
			tap_skip("ptxas not found");
		free(ptx);
		o.flags = 0;
		rc = gbpf_ptx_emit(&pp, 1, &o, &ptx, NULL, err, sizeof(err));
		tap_ok(rc == 0 && ptx && !strstr(ptx, ".const") && strstr(ptx, "ld.global.u64 %r1, [__gbpf_maps+8];"),
		       "without the flag, type %u: the global table only", types[t]);
		free(ptx);
	}
	{
		/* an object without maps: nothing in the constant space for the host to set */
		const struct gbpf_insn ret0[] = {I(0xb7, 0, 0, 0, 0), I(0x95, 0, 0, 0, 0)};
		struct gbpf_ptx_opts o = {.sz = sizeof(o), .arch = "sm_90", .flags = GBPF_PTX_CONST_MAP_TABLE};
		char err[512] = "", *ptx = NULL;
		int rc;

		p.insns = ret0;
		p.insn_cnt = 2;
		p.map_cnt = 0;
		p.maps = NULL;
		rc = gbpf_ptx_emit(&pp, 1, &o, &ptx, NULL, err, sizeof(err));
		tap_ok(rc == 0 && ptx && !strstr(ptx, ".const"), "constant map table, no maps: nothing declared %s",
		       err);
		free(ptx);
	}
	{
		/* more maps than the bank is given to: the global table only, the lookup as without the flag */
		static struct gbpf_map_desc many[GBPF_PTX_CONST_MAP_MAX + 1];
		struct gbpf_ptx_opts o = {.sz = sizeof(o), .arch = "sm_90", .flags = GBPF_PTX_CONST_MAP_TABLE};
		char err[512] = "", *ptx = NULL;
		int rc;

		for (size_t i = 0; i < sizeof(many) / sizeof(many[0]); i++)
			many[i] = (struct gbpf_map_desc){.sz = sizeof(many[i]), .name = "a",
							 .type = GBPF_MAP_TYPE_PERCPU_ARRAY, .key_size = 4,
							 .value_size = 8, .max_entries = 16};
		p.insns = prog;
		p.insn_cnt = sizeof(prog) / sizeof(prog[0]);
		p.maps = many;
		p.map_cnt = sizeof(many) / sizeof(many[0]);
		rc = gbpf_ptx_emit(&pp, 1, &o, &ptx, NULL, err, sizeof(err));
		tap_ok(rc == 0 && ptx && !strstr(ptx, ".const") && strstr(ptx, "ld.u32 %w12, [%r1+28];"),
		       "constant map table, %u maps: the global table only %s", GBPF_PTX_CONST_MAP_MAX + 1, err);
		free(ptx);
	}
}

/*
 * A key the program bounds itself (ptx_range.h): clang's clamp of a
 * histogram slot, `if (slot >= N) slot = N - 1`, on a zero-extended copy of
 * the register the key is stored from, then a per-CPU array lookup and an add.
 * Below max_entries on every path the lookup has no bounds check and the
 * 64-bit compare is a 32-bit one; a clamp to max_entries itself keeps the
 * check. With the constant map table the element's offset is taken in 32
 * bits while GBPF_PTX_CONST_SLOTS_MAX planes fit below 4 GB, else in 64.
 */
static void test_key_bounds(void)
{
	static const struct {
		int32_t clamp;
		uint32_t max_entries, value_size;
		int checked, offset32;
		uint8_t cmp;    /* the clamp's jump: JGT, or JSGT (signed: no bound) */
		int16_t bypass; /* a jump from before the clamp to the store (0: to the next instruction) */
	} cases[] = {
		{47, 48, 8, 0, 1, 0x2d, 0},        /* mem_trace's histogram */
		{48, 48, 8, 1, 1, 0x2d, 0},        /* the clamp lets 48 through: checked */
		{47, 48, 1u << 20, 0, 0, 0x2d, 0}, /* 48 planes of 1 MB: 1,024 of them do not fit 32 bits */
		{47, 48, 8, 1, 1, 0x6d, 0},        /* a signed clamp bounds nothing unsigned: checked */
		{47, 48, 8, 1, 1, 0x2d, 6},        /* a path around the clamp meets it at the store: checked */
	};

	/* what the host writes to __gbpf_slots_const: a count the 32-bit offsets and the clamp can take */
	tap_ok(gbpf_ptx_const_slots(0) == 1 && gbpf_ptx_const_slots(132) == 132 &&
		       gbpf_ptx_const_slots(GBPF_PTX_CONST_SLOTS_MAX + 1) == GBPF_PTX_CONST_SLOTS_MAX,
	       "the constant table's copy counts: 0 -> 1, 132 kept, above %u -> %u", GBPF_PTX_CONST_SLOTS_MAX,
	       GBPF_PTX_CONST_SLOTS_MAX);
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		/*
		 * r0 = thread id; if (r0 != 5) goto store (bypass); r1 = zext(r0);
		 * if (clamp > r1) goto store; r0 = clamp; store: key = r0
		 */
		const struct gbpf_insn prog[] = {
			I(0x85, 0, 0, 0, GBPF_HELPER_GPU_GLOBAL_THREAD_ID), I(0x55, 0, 0, cases[c].bypass, 5),
			I(0xbf, 1, 0, 0, 0), I(0x67, 1, 0, 0, 32),
			I(0x77, 1, 0, 0, 32), I(0xb7, 2, 0, 0, cases[c].clamp), I(cases[c].cmp, 2, 1, 1, 0),
			I(0xb7, 0, 0, 0, cases[c].clamp), I(0x63, 10, 0, -8, 0), I(0xbf, 2, 10, 0, 0),
			I(0x07, 2, 0, 0, -8), I(0x18, 1, GBPF_PSEUDO_MAP_IDX, 0, 0), I(0, 0, 0, 0, 0),
			I(0x85, 0, 0, 0, 1), I(0x15, 0, 0, 2, 0), I(0xb7, 1, 0, 0, 1),
			I(0xdb, 0, 1, 0, GBPF_ATOMIC_ADD), I(0xb7, 0, 0, 0, 0), I(0x95, 0, 0, 0, 0)};
		struct gbpf_map_desc md = {.sz = sizeof(md), .name = "hist", .type = GBPF_MAP_TYPE_PERCPU_ARRAY,
					   .key_size = 4, .value_size = cases[c].value_size,
					   .max_entries = cases[c].max_entries};
		struct gbpf_prog_desc p = {.sz = sizeof(p), .name = "clamp", .section = "gpu/mem/k", .insns = prog,
					   .insn_cnt = sizeof(prog) / sizeof(prog[0]), .maps = &md, .map_cnt = 1,
					   .source_file = "test_ptx_maps.c"};
		struct gbpf_ptx_opts o = {.sz = sizeof(o), .arch = "sm_90", .flags = GBPF_PTX_CONST_MAP_TABLE};
		const struct gbpf_prog_desc *pp = &p;
		char err[512] = "", log[2048] = "", check[64], *ptx = NULL;
		int rc;

		rc = gbpf_ptx_emit(&pp, 1, &o, &ptx, NULL, err, sizeof(err));
		if (!tap_ok(rc == 0 && ptx, "key clamped to %d, %u entries: PTX generated %s", cases[c].clamp,
			    cases[c].max_entries, err))
			continue;
		snprintf(check, sizeof(check), "setp.ge.u32 %%p6, %%w10, %u;", cases[c].max_entries);
		tap_ok(!strstr(ptx, check) == !cases[c].checked, "key clamped to %d, %u entries%s%s: %s", cases[c].clamp,
		       cases[c].max_entries, cases[c].cmp == 0x6d ? ", signed" : "",
		       cases[c].bypass ? ", a path around the clamp" : "",
		       cases[c].checked ? "the lookup checks the key" : "no check of the key");
		if (cases[c].cmp == 0x2d)
			tap_ok(strstr(ptx, "setp.gt.u32 %p0, %w4, %w5;") && !strstr(ptx, "setp.gt.u64"),
			       "key clamped to %d: the clamp's compare of two values below 2^32 is a 32-bit one",
			       cases[c].clamp);
		else
			tap_ok(strstr(ptx, "setp.gt.s64 %p0, %r2, %r1;") != NULL,
			       "a signed clamp's compare stays a 64-bit signed one");
		tap_ok(!strstr(ptx, "mad.lo.u32 %w13, %w11,") == !cases[c].offset32 &&
			       (!cases[c].offset32 ||
				(!strstr(ptx, "max.u32 %w12") && strstr(ptx, "add.u32 %w12, %w12, -1;"))),
		       "%u-byte values: the element's offset in %s bits%s", cases[c].value_size,
		       cases[c].offset32 ? "32" : "64",
		       cases[c].offset32 ? ", the copy count trusted to be 1 or more" : "");
		if (ptxas_path())
			tap_ok(ptxas_fragment(ptx, "sm_90", log, sizeof(log)) == 0,
			       "key clamped to %d, %u-byte values: ptxas accepts %s", cases[c].clamp,
			       cases[c].value_size, log);
		else
			tap_skip("ptxas not found");
		free(ptx);
	}
}

static void test_inline_lookups(void)
{
	static const char *const no_call[] = {"call (__hr), __gbpf_h_map_lookup", NULL};
	struct gbpf_insn prog[MAP_PROG_MAX];
	size_t n = map_prog_array_count(prog, 16);
	struct gbpf_map_desc md = {.sz = sizeof(md), .name = "a", .type = GBPF_MAP_TYPE_PERCPU_ARRAY,
				   .key_size = 4, .value_size = 8, .max_entries = 16};
	/* the key, stored from r6 which nothing writes before the call, is r6 */
	static const char *const pcpu[] = {"%smid", "min.u32 %w11, %w11, %w12;", "cvt.u32.u64 %w10, %r6;",
					   "mad.wide.u32 %r0, %w11, 128, %r0;", NULL};
	/* the SM's slot is clamped, branch free: no loop, no remainder, no helper call */
	static const char *const pcpu_no[] = {"call (__hr), __gbpf_h_map_lookup", "$Lsm", "rem.u32", NULL};
	static const char *const thread[] = {"mov.u32 %w10, 0;", "%nctaid.z", "mul.wide.u32 %t12, %w15, %w12;",
					     NULL};
	static const char *const arr[] = {"cvt.u32.u64 %w10, %r6;", NULL};
	static const char *const hash[] = {"mov.b64 %t10, 0x9E3779B97F4A7C11;",
					   "call (__hr), __gbpf_m_hash_lookup_kh", NULL};
	/* a map whose buckets keep their keys: the whole probe run inline, no call at all */
	static const char *const hash_inline[] = {"mov.b64 %t10, 0x9E3779B97F4A7C11;", NULL};
	static const char *const no_lookup_call[] = {"call (__hr), __gbpf_m_hash_lookup",
						     "call (__hr), __gbpf_h_map_lookup", NULL};
	/* no program deletes: the home bucket read inline (through L1 first, then ordered); per-CPU:
	 * the value in the SM's plane, slot * nr_buckets * 8 + bucket * 8 past aux_off, the plane in
	 * one wide multiply-add */
	static const char *const hash_fast[] = {"ld.v2.u64 {%t1, %t2}, [%t12];", "ld.acquire.gpu.u32 %w14, [%t12];",
						"mul.wide.u32 %t11, %w7, 8;",
						"mad.wide.u32 %r0, %w14, 16384, %r0;", NULL};
	static const char *const no_fast[] = {"ld.acquire.gpu.u32 %w14, [%t12];", NULL};
	/* the inline lookup reads no header field (nr_buckets, bucket_size, data_off, aux_off) */
	static const char *const no_hdr[] = {"[%r1+40]", "[%r1+44]", "[%r1+56]", "[%r1+72]", NULL};
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

	check_text("per-CPU array count (inline lookup, SM's copy)", prog, n, &md, pcpu, pcpu_no);
	{
		/* an SM's copy of 8 GiB: its offset needs a 64-bit product, no 32-bit multiply-add */
		static const char *const big[] = {"min.u32 %w11, %w11, %w12;", "mul.wide.u32 %t11, %w10, 8192;",
						  "cvt.u64.u32 %t10, %w11;", "mul.lo.u64 %t10, %t10, 8589934592;",
						  "add.u64 %t10, %t10, %t11;", NULL};
		static const char *const big_no[] = {"mad.wide.u32 %r0, %w11", NULL};

		md.value_size = 8192;
		md.max_entries = 1u << 20;
		check_text("per-CPU array of 8 GiB an SM (64-bit copy offset)", prog, n, &md, big, big_no);
		md.value_size = 8;
		md.max_entries = 16;
	}
	{
		/* one counter an SM: each SM's copy in a plane of its own line (GBPF_MAP_PLANE_ALIGN) */
		static const char *const one[] = {"min.u32 %w11, %w11, %w12;", "mad.wide.u32 %r0, %w11, 128, %r0;",
						  NULL};
		static const char *const one_no[] = {"mad.wide.u32 %r0, %w11, 8, %r0;", NULL};
		static const char *const six[] = {"min.u32 %w11, %w11, %w12;", "mad.wide.u32 %r0, %w11, 256, %r0;",
						  NULL};
		static const char *const six_no[] = {"mad.wide.u32 %r0, %w11, 144, %r0;", NULL};

		md.max_entries = 1;
		check_text("per-CPU array of one counter: 128-byte planes", prog, n, &md, one, one_no);
		md.value_size = 24;
		md.max_entries = 6;
		check_text("per-CPU array of 144 bytes an SM: 256-byte planes", prog, n, &md, six, six_no);
		md.value_size = 8;
		md.max_entries = 16;
	}
	md.type = GBPF_MAP_TYPE_ARRAY;
	check_text("array count (inline lookup)", prog, n, &md, arr, no_call);
	md.type = GBPF_MAP_TYPE_PERGPUTHREAD_ARRAY;
	md.max_entries = 1;
	check_text("per-GPU-thread array (threadhist, constant key, 1-D grid fast path)", th,
		   sizeof(th) / sizeof(th[0]), &md, thread, no_call);
	{
		/* *count += 1 through the lane's own slot, the value read by nothing after: one red */
		static const char *const red[] = {"mov.b64 %t7, 0x0000000000000001;\nred.global.add.u64 [%t5], %t7;", NULL};
		/* the store through the slot addresses .global (ptx_mem.c make_global: the fold sees past it) */
		static const char *const rmw[] = {"ld.u64 %r1, [%r0+0];",
						  "cvta.to.global.u64 %t4, %r0;\nst.global.u64 [%t4+0], %r1;", NULL};
		/* the same with the new value returned (r0 = r1): the load, add and store stay */
		struct gbpf_insn live[sizeof(th) / sizeof(th[0])];

		memcpy(live, th, sizeof(th));
		live[11] = I(0xbf, 0, 1, 0, 0);
		check_text("per-GPU-thread slot += 1, the value unused after: one red.global.add", th,
			   sizeof(th) / sizeof(th[0]), &md, red, rmw);
		check_text("per-GPU-thread slot += 1, the value returned: load, add, store", live,
			   sizeof(live) / sizeof(live[0]), &md, rmw, red);
		/* -= 1 (an add of -1): the 64-bit two's complement */
		static const char *const red_neg[] = {"mov.b64 %t7, 0xFFFFFFFFFFFFFFFF;\nred.global.add.u64 [%t5], %t7;",
						      NULL};
		struct gbpf_insn dec[sizeof(th) / sizeof(th[0])];

		memcpy(dec, th, sizeof(th));
		dec[9] = I(0x07, 1, 0, 0, -1);
		check_text("per-GPU-thread slot -= 1, the value unused after: one red.global.add of -1", dec,
			   sizeof(dec) / sizeof(dec[0]), &md, red_neg, rmw);
		md.type = GBPF_MAP_TYPE_ARRAY;
		check_text("array element += 1 (shared by the threads): load, add, store", th, sizeof(th) / sizeof(th[0]),
			   &md, rmw, red);
		md.type = GBPF_MAP_TYPE_PERGPUTHREAD_ARRAY;
	}
	md.type = GBPF_MAP_TYPE_ARRAY;
	md.max_entries = 16;
	check_text("array lookup, a store through an unknown pointer after the key's: key reloaded", alias,
		   sizeof(alias) / sizeof(alias[0]), &md, loaded, no_call);
	check_text("array lookup, key slot overwritten through a stack pointer copy: the new key", over,
		   sizeof(over) / sizeof(over[0]), &md, nine, no_call);
	n = map_prog_hash_count(prog, 100);
	md.type = GBPF_MAP_TYPE_PERCPU_HASH;
	md.max_entries = 1024;
	check_text("per-CPU hash count (key hashed inline, no call)", prog, n, &md, hash_inline, no_lookup_call);
	check_text("per-CPU hash count (home bucket read inline)", prog, n, &md, hash_fast, no_hdr);
	{
		/* buckets of this geometry are 16-byte aligned: no run-time check before the 16-byte load;
		 * the slow call gets the key's address computed in its scope, not from r2 */
		static const char *const sa[] = {"st.param.b64 [__h2], %__sa;", "cvta.local.u64 %__sa, %__sa;", NULL};
		static const char *const no_sa[] = {"and.b64 %t1, %t12, 15;", "st.param.b64 [__h2], %r2;", NULL};

		check_text("per-CPU hash count (no alignment check, key address in the call)", prog, n, &md, sa,
			   no_sa);
	}
	{
		/* the geometry built into the lookup is the one the map's memory has (132 SMs) */
		size_t size = gbpf_map_mem_size(&md, 132);
		struct gbpf_map_hdr *h = size ? calloc(1, size) : NULL;
		char nb[48], bs[48], data[48], aux[48];
		const char *geo[] = {nb, bs, data, aux, NULL};

		if (!tap_ok(h && gbpf_map_mem_init(h, size, &md, 132) == 0, "per-CPU hash memory laid out"))
			goto geo_done;
		snprintf(nb, sizeof(nb), "mov.u32 %%w4, %u;", h->nr_buckets - 1);
		snprintf(bs, sizeof(bs), "mov.u32 %%w5, %u;", h->bucket_size);
		snprintf(data, sizeof(data), "add.u64 %%t11, %%r1, %llu;", (unsigned long long)h->data_off);
		snprintf(aux, sizeof(aux), "add.u64 %%r0, %%r1, %llu;", (unsigned long long)h->aux_off);
		check_text("per-CPU hash lookup: buckets, bucket size, data and planes as the map's header", prog,
			   n, &md, geo, no_hdr);
		md.type = GBPF_MAP_TYPE_HASH;
		md.value_size = 24;
		md.max_entries = 3000;
		free(h);
		size = gbpf_map_mem_size(&md, 1);
		h = size ? calloc(1, size) : NULL;
		if (!tap_ok(h && gbpf_map_mem_init(h, size, &md, 1) == 0, "hash memory laid out"))
			goto geo_done;
		snprintf(nb, sizeof(nb), "mov.u32 %%w4, %u;", h->nr_buckets - 1);
		snprintf(bs, sizeof(bs), "mov.u32 %%w5, %u;", h->bucket_size);
		snprintf(data, sizeof(data), "add.u64 %%t11, %%r1, %llu;", (unsigned long long)h->data_off);
		geo[3] = NULL;
		check_text("hash lookup (values in the buckets): geometry as the map's header", prog, n, &md,
			   geo, no_hdr);
geo_done:
		free(h);
		md.type = GBPF_MAP_TYPE_PERCPU_HASH;
		md.value_size = 8;
		md.max_entries = 1024;
	}
	{
		/*
		 * The insert after a miss: a hash map known not to be LRU, with flags the update
		 * takes (a constant BPF_NOEXIST here), calls the update without LRU eviction, not
		 * the dispatch of every map type; LRU maps, flags that are not a known constant and
		 * invalid flags (-EINVAL from the dispatch) keep the generic call.
		 */
		static const char *const nl[] = {"call (__hr), __gbpf_m_hash_update_nl, (__h1, __h2, __h3, __h4);",
						 NULL};
		static const char *const generic[] = {"call (__hr), __gbpf_h_map_update, (__h1, __h2, __h3, __h4);",
						      NULL};
		struct gbpf_insn flags = prog[17];

		if (!tap_ok(prog[17].code == 0xb7 && prog[17].dst == 4 && prog[18].imm == GBPF_HELPER_MAP_UPDATE_ELEM,
			    "hash count program: r4 = flags right before the update"))
			return;
		check_text("per-CPU hash insert: the update without eviction", prog, n, &md, nl, generic);
		md.type = GBPF_MAP_TYPE_HASH;
		check_text("hash insert: the update without eviction", prog, n, &md, nl, generic);
		md.type = GBPF_MAP_TYPE_GPU_HASH;
		check_text("GPU hash insert: the update without eviction", prog, n, &md, nl, generic);
		md.type = GBPF_MAP_TYPE_LRU_HASH;
		check_text("LRU hash insert: the generic update (it may evict)", prog, n, &md, generic, nl);
		md.type = GBPF_MAP_TYPE_PERCPU_HASH;
		prog[17] = I(0xbf, 4, 6, 0, 0);
		check_text("hash insert, flags not a constant: the generic update", prog, n, &md, generic, nl);
		prog[17] = flags;
		prog[17].imm = 3;
		check_text("hash insert, invalid flags: the generic update (-EINVAL)", prog, n, &md, generic, nl);
		prog[17] = flags;
	}
	md.type = GBPF_MAP_TYPE_LRU_HASH;
	check_text("LRU hash count (evictions change buckets: full lookup)", prog, n, &md, hash, no_fast);
	md.type = GBPF_MAP_TYPE_HASH;
	check_text("hash lookup in a program that deletes: full lookup", del, sizeof(del) / sizeof(del[0]),
		   &md, hash, no_fast);
}

/* The call of a lookup in map 0 with the u32 key at r10-4 (r0 = the value pointer or NULL). */
#define LOOKUP_K4(v)                                                                               \
	I(0xb7, 1, 0, 0, (v)), I(0x63, 10, 1, -4, 0), I(0xbf, 2, 10, 0, 0), I(0x07, 2, 0, 0, -4),  \
		I(0x18, 1, GBPF_PSEUDO_MAP_IDX, 0, 0), I(0, 0, 0, 0, 0), I(0x85, 0, 0, 0, 1)

/*
 * Atomics through a pointer an inlined lookup returned: a map value is
 * global memory (no isspacep.local path, .global addressing) and a
 * per-GPU-thread slot is the lane's own (no match.all warp aggregation).
 * What the code generator cannot prove (a join, a reload from the stack,
 * a register clobbered by a call, an offset from a register) keeps both.
 */
static void test_atomic_provenance(void)
{
	struct gbpf_map_desc md = {.sz = sizeof(md), .name = "a", .type = GBPF_MAP_TYPE_PERGPUTHREAD_ARRAY,
				   .key_size = 4, .value_size = 16, .max_entries = 1};
	/* threadhist as clang emits it: if (count) __sync_fetch_and_add(count, 1) */
	const struct gbpf_insn th[] = {
		LOOKUP_K4(0), I(0x15, 0, 0, 2, 0), I(0xb7, 1, 0, 0, 1), I(0xdb, 0, 1, 0, GBPF_ATOMIC_ADD),
		I(0xb7, 0, 0, 0, 0), I(0x95, 0, 0, 0, 0)};
	/* the same, 32-bit, with fetch (the old value is used) */
	const struct gbpf_insn th_fetch[] = {
		LOOKUP_K4(0), I(0x15, 0, 0, 2, 0), I(0xb7, 1, 0, 0, 1),
		I(0xc3, 0, 1, 0, GBPF_ATOMIC_ADD | GBPF_FETCH), I(0xbf, 0, 1, 0, 0), I(0x95, 0, 0, 0, 0)};
	/* the pointer moved to r6, then a constant offset: still the lane's slot */
	const struct gbpf_insn moved[] = {
		LOOKUP_K4(0), I(0x15, 0, 0, 4, 0), I(0xbf, 6, 0, 0, 0), I(0x07, 6, 0, 0, 8),
		I(0xb7, 1, 0, 0, 1), I(0xdb, 6, 1, -8, GBPF_ATOMIC_ADD), I(0xb7, 0, 0, 0, 0),
		I(0x95, 0, 0, 0, 0)};
	/* the atomic is a jump target (ja +0 lands on it) whose only way in holds the slot */
	const struct gbpf_insn join_same[] = {
		LOOKUP_K4(0), I(0x15, 0, 0, 3, 0), I(0xb7, 1, 0, 0, 1), I(0x05, 0, 0, 0, 0),
		I(0xdb, 0, 1, 0, GBPF_ATOMIC_ADD), I(0xb7, 0, 0, 0, 0), I(0x95, 0, 0, 0, 0)};
	/* a join of the slot (jump from 9) and a pointer loaded from the stack (fall-through from 10) */
	const struct gbpf_insn join[] = {
		LOOKUP_K4(0), I(0x15, 0, 0, 4, 0), I(0xb7, 1, 0, 0, 1), I(0x15, 1, 0, 1, 1),
		I(0x79, 0, 10, -16, 0), I(0xdb, 0, 1, 0, GBPF_ATOMIC_ADD), I(0xb7, 0, 0, 0, 0),
		I(0x95, 0, 0, 0, 0)};
	/* a loop: the atomic's pc is also reached by a backward jump, whose facts are not known yet */
	const struct gbpf_insn loop[] = {
		LOOKUP_K4(0), I(0x15, 0, 0, 5, 0), I(0xb7, 1, 0, 0, 1), I(0xb7, 2, 0, 0, 2),
		I(0xdb, 0, 1, 0, GBPF_ATOMIC_ADD), I(0x07, 2, 0, 0, -1), I(0x55, 2, 0, -3, 0),
		I(0xb7, 0, 0, 0, 0), I(0x95, 0, 0, 0, 0)};
	/* spilled to the stack and reloaded */
	const struct gbpf_insn spill[] = {
		LOOKUP_K4(0), I(0x15, 0, 0, 4, 0), I(0x7b, 10, 0, -16, 0), I(0x79, 0, 10, -16, 0),
		I(0xb7, 1, 0, 0, 1), I(0xdb, 0, 1, 0, GBPF_ATOMIC_ADD), I(0xb7, 0, 0, 0, 0),
		I(0x95, 0, 0, 0, 0)};
	/* copied into r1, which a helper call clobbers */
	const struct gbpf_insn call[] = {
		LOOKUP_K4(0), I(0x15, 0, 0, 5, 0), I(0xbf, 6, 0, 0, 0), I(0xbf, 1, 0, 0, 0),
		I(0x85, 0, 0, 0, 5), I(0xb7, 2, 0, 0, 1), I(0xdb, 1, 2, 0, GBPF_ATOMIC_ADD),
		I(0xb7, 0, 0, 0, 0), I(0x95, 0, 0, 0, 0)};
	/* an offset from a register */
	const struct gbpf_insn regoff[] = {
		LOOKUP_K4(0), I(0x15, 0, 0, 4, 0), I(0xb7, 1, 0, 0, 8), I(0x0f, 0, 1, 0, 0),
		I(0xb7, 1, 0, 0, 1), I(0xdb, 0, 1, -8, GBPF_ATOMIC_ADD), I(0xb7, 0, 0, 0, 0),
		I(0x95, 0, 0, 0, 0)};
	static const char *const slot_fast[] = {"cvta.to.global.u64 %t5, %t5;", "red.global.add.u64 [%t5], %t7;",
						NULL};
	static const char *const slot_fetch[] = {"cvta.to.global.u64 %t5, %t5;",
						 "atom.global.add.u32 %w6, [%t5], %w7;", NULL};
	static const char *const no_checks[] = {"isspacep.local", "match.all.sync", NULL};
	/* key 0 in every lane: the element's pointer is the same in every lane, no match at all */
	static const char *const shared_fast[] = {"cvta.to.global.u64 %t5, %t5;", "activemask.b32 %ag0;",
						  "red.global.add.u64 [%t5], %t8;", NULL};
	static const char *const no_local[] = {"isspacep.local", "match.all.sync", NULL};
	static const char *const checked[] = {"isspacep.local %p5, %t5;", "match.all.sync.b64 %ag1|%agp0, %t5",
					      "red.add.u64 [%t5], %t8;", NULL};
	static const char *const no_global[] = {"cvta.to.global", "red.global", NULL};

	check_text("per-GPU-thread slot atomic add (threadhist): no .local check, no warp test", th,
		   sizeof(th) / sizeof(th[0]), &md, slot_fast, no_checks);
	check_text("per-GPU-thread slot fetch-add (32-bit): .global atom, no .local check", th_fetch,
		   sizeof(th_fetch) / sizeof(th_fetch[0]), &md, slot_fetch, no_checks);
	check_text("per-GPU-thread slot through a move and a constant offset", moved,
		   sizeof(moved) / sizeof(moved[0]), &md, slot_fast, no_checks);
	check_text("slot pointer at a join whose ways in all hold it: no checks", join_same,
		   sizeof(join_same) / sizeof(join_same[0]), &md, slot_fast, no_checks);
	check_text("slot pointer at a join with a loaded pointer: checks kept", join, sizeof(join) / sizeof(join[0]),
		   &md, checked, no_global);
	check_text("slot pointer at a loop head: checks kept", loop, sizeof(loop) / sizeof(loop[0]), &md, checked,
		   no_global);
	check_text("slot pointer reloaded from the stack: checks kept", spill, sizeof(spill) / sizeof(spill[0]),
		   &md, checked, no_global);
	check_text("slot pointer in a register a call clobbers: checks kept", call,
		   sizeof(call) / sizeof(call[0]), &md, checked, no_global);
	check_text("slot pointer plus a register: checks kept", regoff, sizeof(regoff) / sizeof(regoff[0]), &md,
		   checked, no_global);
	/* a counter every lane may share (array, per-SM array, hash value): warp test kept, .global */
	md.type = GBPF_MAP_TYPE_ARRAY;
	md.max_entries = 16;
	check_text("array value atomic add: warp aggregation on .global, no .local check", th,
		   sizeof(th) / sizeof(th[0]), &md, shared_fast, no_local);
	md.type = GBPF_MAP_TYPE_PERCPU_ARRAY;
	check_text("per-SM array value atomic add: warp aggregation on .global", th, sizeof(th) / sizeof(th[0]),
		   &md, shared_fast, no_local);
	md.type = GBPF_MAP_TYPE_HASH;
	md.max_entries = 1024;
	md.value_size = 8;
	check_text("hash value atomic add: warp aggregation on .global, no .local check", th,
		   sizeof(th) / sizeof(th[0]), &md, shared_fast, no_local);
}

/*
 * A counter's increment that the program set to a constant (clang's
 * `__sync_fetch_and_add(count, 1)`: r1 = 1 before the atomic) is the same in
 * every lane: the warp-aggregated add needs no match of the value. Known
 * through moves, a wide immediate, a helper call for r6..r9 and a join whose
 * ways in agree; a loaded value, a join of two constants and a register a
 * call clobbered keep the value's match. (Key 0 in every lane: the address
 * is never matched, test_atomic_address_uniform.)
 */
static void test_atomic_value_constant(void)
{
	struct gbpf_map_desc md = {.sz = sizeof(md), .name = "a", .type = GBPF_MAP_TYPE_ARRAY,
				   .key_size = 4, .value_size = 16, .max_entries = 16};
	const struct gbpf_insn konst[] = {
		LOOKUP_K4(0), I(0x15, 0, 0, 2, 0), I(0xb7, 1, 0, 0, 1), I(0xdb, 0, 1, 0, GBPF_ATOMIC_ADD),
		I(0xb7, 0, 0, 0, 0), I(0x95, 0, 0, 0, 0)};
	const struct gbpf_insn loaded[] = {
		LOOKUP_K4(0), I(0x15, 0, 0, 3, 0), I(0x79, 1, 10, -16, 0), I(0xdb, 0, 1, 0, GBPF_ATOMIC_ADD),
		I(0xb7, 0, 0, 0, 0), I(0x95, 0, 0, 0, 0)};
	/* r1 = 1, then 2 unless r0 == 8: the atomic at the join of the two */
	const struct gbpf_insn join_differs[] = {
		LOOKUP_K4(0), I(0x15, 0, 0, 5, 0), I(0xb7, 1, 0, 0, 1), I(0x15, 0, 0, 1, 8), I(0xb7, 1, 0, 0, 2),
		I(0xdb, 0, 1, 0, GBPF_ATOMIC_ADD), I(0xb7, 0, 0, 0, 0), I(0x95, 0, 0, 0, 0)};
	const struct gbpf_insn join_agrees[] = {
		LOOKUP_K4(0), I(0x15, 0, 0, 5, 0), I(0xb7, 1, 0, 0, 1), I(0x15, 0, 0, 1, 8), I(0xb7, 1, 0, 0, 1),
		I(0xdb, 0, 1, 0, GBPF_ATOMIC_ADD), I(0xb7, 0, 0, 0, 0), I(0x95, 0, 0, 0, 0)};
	/* r6 = 1 before the lookup's call (callee-saved), r3 = 1 (clobbered by it) */
	const struct gbpf_insn kept[] = {
		I(0xb7, 6, 0, 0, 1), LOOKUP_K4(0), I(0x15, 0, 0, 2, 0), I(0xdb, 0, 6, 0, GBPF_ATOMIC_ADD),
		I(0xb7, 0, 0, 0, 0), I(0x95, 0, 0, 0, 0)};
	const struct gbpf_insn clobbered[] = {
		I(0xb7, 3, 0, 0, 1), LOOKUP_K4(0), I(0x15, 0, 0, 2, 0), I(0xdb, 0, 3, 0, GBPF_ATOMIC_ADD),
		I(0xb7, 0, 0, 0, 0), I(0x95, 0, 0, 0, 0)};
	const struct gbpf_insn wide[] = {
		LOOKUP_K4(0), I(0x15, 0, 0, 4, 0), I(0x18, 1, 0, 0, 3), I(0, 0, 0, 0, 0),
		I(0xdb, 0, 1, 0, GBPF_ATOMIC_ADD), I(0xb7, 0, 0, 0, 0), I(0x95, 0, 0, 0, 0)};
	/* key 0 in every lane: the address is the same in every lane (struct ptx_uni_ptr), never matched */
	static const char *const address_only[] = {"activemask.b32 %ag0;", "red.global.add.u64 [%t5], %t8;", NULL};
	static const char *const no_value_match[] = {"match.all.sync", NULL};
	/* the lowest active lane adds; a constant's product is an immediate's (none for a counter's 1) */
	static const char *const one[] = {"activemask.b32 %ag0;",
					  "mov.u32 %ag3, %lanemask_lt;\nand.b32 %ag3, %ag3, %ag0;\n"
					  "setp.ne.u32 %agp1, %ag3, 0;",
					  "popc.b32 %ag4, %ag0;\ncvt.u64.u32 %t8, %ag4;\n"
					  "red.global.add.u64 [%t5], %t8;",
					  NULL};
	static const char *const one_no[] = {"match.all.sync", "bfind.u32 %ag3", "mul.lo.u64 %t8", "mul.wide.u32 %t8",
					     NULL};
	static const char *const three[] = {"activemask.b32 %ag0;",
					    "mul.wide.u32 %t8, %ag4, 3;\nred.global.add.u64 [%t5], %t8;", NULL};
	static const char *const three_no[] = {"match.all.sync", "mul.lo.u64 %t8", NULL};
	static const char *const both[] = {"match.all.sync.b64 %ag2|%agp0, %t7, %ag0;",
					   "cvt.u64.u32 %t8, %ag4;\nmul.lo.u64 %t8, %t8, %t7;", NULL};
	static const char *const none[] = {"match.all.sync.b64 %ag1", NULL};

	check_text("counter += 1: nothing matched, the count added as it is", konst, sizeof(konst) / sizeof(konst[0]),
		   &md, one, one_no);
	check_text("value loaded from the stack: the value matched too, the count times it", loaded,
		   sizeof(loaded) / sizeof(loaded[0]), &md, both, none);
	check_text("value 1 or 2 at a join: the value matched too", join_differs,
		   sizeof(join_differs) / sizeof(join_differs[0]), &md, both, none);
	check_text("value 1 on both ways into a join: nothing matched", join_agrees,
		   sizeof(join_agrees) / sizeof(join_agrees[0]), &md, address_only, no_value_match);
	check_text("value in r6 across the lookup's call: nothing matched", kept, sizeof(kept) / sizeof(kept[0]),
		   &md, address_only, no_value_match);
	check_text("value in r3, which the lookup's call clobbers: the value matched too", clobbered,
		   sizeof(clobbered) / sizeof(clobbered[0]), &md, both, none);
	check_text("value 3 from a wide immediate: nothing matched, the count times 3 in one wide multiply", wide,
		   sizeof(wide) / sizeof(wide[0]), &md, three, three_no);
}

/*
 * The address of a warp-aggregated add needs no match when every lane holds
 * the same element's pointer (struct ptx_uni_ptr in plugins/cuda/ptx_internal.h):
 * the lookup of a key every lane stores alike, also at a join with a second
 * lookup of the same key bytes (mem_count's insert race: lookup, update,
 * lookup); a key per lane, two different keys meeting at a join, or a hash
 * map some program deletes from, keep it.
 */
static void test_atomic_address_uniform(void)
{
	struct gbpf_map_desc md = {.sz = sizeof(md), .name = "h", .type = GBPF_MAP_TYPE_HASH,
				   .key_size = 4, .value_size = 8, .max_entries = 64};
	/* key 7; if r0 != 0 goto add (14); key 7 looked up again; if r0 == 0 goto out (16) */
	const struct gbpf_insn twice[] = {
		LOOKUP_K4(7), I(0x55, 0, 0, 6, 0), I(0xbf, 2, 10, 0, 0), I(0x07, 2, 0, 0, -4),
		I(0x18, 1, GBPF_PSEUDO_MAP_IDX, 0, 0), I(0, 0, 0, 0, 0), I(0x85, 0, 0, 0, 1),
		I(0x15, 0, 0, 2, 0), I(0xb7, 1, 0, 0, 1), I(0xdb, 0, 1, 0, GBPF_ATOMIC_ADD),
		I(0xb7, 0, 0, 0, 0), I(0x95, 0, 0, 0, 0)};
	/* r7 = thread id; key 7; if r7 & 1 goto join (17); key 9; join: if r0 == 0 goto out; add */
	const struct gbpf_insn two_keys[] = {
		I(0x85, 0, 0, 0, GBPF_HELPER_GPU_GLOBAL_THREAD_ID), I(0xbf, 7, 0, 0, 0), LOOKUP_K4(7),
		I(0x45, 7, 0, 7, 1), LOOKUP_K4(9), I(0x15, 0, 0, 2, 0), I(0xb7, 1, 0, 0, 1),
		I(0xdb, 0, 1, 0, GBPF_ATOMIC_ADD), I(0xb7, 0, 0, 0, 0), I(0x95, 0, 0, 0, 0)};
	/* the thread id as the key */
	const struct gbpf_insn per_lane[] = THREAD_KEY_COUNT;
	/* key 7 counted, then deleted: a bucket may be reused for another key between two lanes' lookups */
	const struct gbpf_insn deleting[] = {
		LOOKUP_K4(7), I(0x15, 0, 0, 2, 0), I(0xb7, 1, 0, 0, 1), I(0xdb, 0, 1, 0, GBPF_ATOMIC_ADD),
		I(0xbf, 2, 10, 0, 0), I(0x07, 2, 0, 0, -4), I(0x18, 1, GBPF_PSEUDO_MAP_IDX, 0, 0), I(0, 0, 0, 0, 0),
		I(0x85, 0, 0, 0, GBPF_HELPER_MAP_DELETE_ELEM), I(0xb7, 0, 0, 0, 0), I(0x95, 0, 0, 0, 0)};
	static const char *const no_match[] = {"activemask.b32 %ag0;", "red.global.add.u64 [%t5], %t8;", NULL};
	static const char *const no_match_not[] = {"match.all.sync", NULL};
	static const char *const matched[] = {"match.all.sync.b64 %ag1|%agp0, %t5, %ag0;", NULL};

	check_text("hash, the same key looked up twice, the add at the join: no match", twice,
		   sizeof(twice) / sizeof(twice[0]), &md, no_match, no_match_not);
	check_text("hash, keys 7 and 9 meeting at the add: the address matched", two_keys,
		   sizeof(two_keys) / sizeof(two_keys[0]), &md, matched, NULL);
	check_text("hash, a key per lane: the address matched", per_lane, sizeof(per_lane) / sizeof(per_lane[0]),
		   &md, matched, NULL);
	check_text("hash, key 7 of a program that deletes: the address matched", deleting,
		   sizeof(deleting) / sizeof(deleting[0]), &md, matched, NULL);
	md.type = GBPF_MAP_TYPE_PERCPU_ARRAY;
	check_text("per-SM array, the same key looked up twice: no match", twice, sizeof(twice) / sizeof(twice[0]),
		   &md, no_match, no_match_not);
}

/*
 * The inline hash lookup: lanes with equal keys grouped (match.any on the
 * whole key, only when some lane shares the first lane's hash), the
 * leader's probe run over the whole table with the map's state rules
 * (EMPTY: miss, READY and the key equal: hit, else the next bucket) and no
 * call, the answer shuffled to the group.
 */
static void test_hash_inline_run(void)
{
	struct gbpf_map_desc md = {.sz = sizeof(md), .name = "h", .type = GBPF_MAP_TYPE_HASH,
				   .key_size = 4, .value_size = 8, .max_entries = 1024};
	/* lookup of the thread id as a key of 4, 8, 12 or 16 bytes at r10-16 */
	const struct gbpf_insn wide[] = {
		I(0x85, 0, 0, 0, GBPF_HELPER_GPU_GLOBAL_THREAD_ID), I(0x7b, 10, 0, -16, 0), I(0x7b, 10, 0, -8, 0),
		I(0xbf, 2, 10, 0, 0), I(0x07, 2, 0, 0, -16), I(0x18, 1, GBPF_PSEUDO_MAP_IDX, 0, 0),
		I(0, 0, 0, 0, 0), I(0x85, 0, 0, 0, 1), I(0xb7, 0, 0, 0, 0), I(0x95, 0, 0, 0, 0)};
	struct gbpf_hash_geometry geo;
	char run_bound[80], weak_bound[80];

	gbpf_hash_geometry_of(md.type, md.key_size, md.value_size, md.max_entries, &geo);
	snprintf(run_bound, sizeof(run_bound), "add.u32 %%w6, %%w6, 1;\nsetp.lt.u32 %%p6, %%w6, %u;\n",
		 (unsigned)geo.nr_buckets);
	/* the weak probe goes as far as the ordered run: only a doubt sends it there */
	snprintf(weak_bound, sizeof(weak_bound), "setp.lt.u32 %%p6, %%w6, %u;\n@%%p6 bra $Lhw",
		 (unsigned)geo.nr_buckets);
	const char *const run4[] = {
		/* grouping: first lane's hash broadcast, ballot, match.any only if shared */
		"vote.sync.ballot.b32 %w4, %p1, %w0;", "setp.lt.u32 %p1, %w5, 2;",
		"match.any.sync.b32 %w1, %w10, %w0;",
		/* the probe run: bucket (h + i) & (nr_buckets - 1), EMPTY ends it, READY compares */
		"add.u32 %w7, %w15, %w6;\nand.b32 %w7, %w7, %w4;", "ld.acquire.gpu.u32 %w14, [%t12];",
		"setp.eq.u32 %p6, %w14, 0;\n@%p6 bra $Lhm", "setp.ne.u32 %p6, %w14, 2;\n@%p6 bra $Lhn",
		/* the value: bucket * value_stride past aux_off (values apart from the buckets) */
		"ld.u32 %w14, [%t12+16];\nsetp.ne.u32 %p6, %w14, %w10;", "mul.wide.u32 %t11, %w7, 8;\nadd.u64 %r0, %r1, ",
		run_bound, weak_bound,
		/* neither loop unrolled by ptxas (registers: ptx_maps.c, emit_hash_weak_probe) */
		"$Lhw", ".pragma \"nounroll\";",
		/* the run over the whole table, no call; a miss is NULL; the group gets the leader's answer */
		"@%p6 bra $Lhp", "mov.u64 %r0, 0;\n$Lhd",
		"shfl.sync.idx.b32 %w4, %w4, %w2, 31, %w1;\nshfl.sync.idx.b32 %w5, %w5, %w2, 31, %w1;", NULL};
	static const char *const run8[] = {"match.any.sync.b64 %w1, %t13, %w0;",
					   "ld.u64 %t0, [%t12+16];\nsetp.ne.u64 %p6, %t0, %t13;",
					   "mul.wide.u32 %t11, %w7, 8;\nadd.u64 %r0, %r1, ", NULL};
	static const char *const run12[] = {"match.any.sync.b64 %w4, %t14, %w0;\nand.b32 %w1, %w1, %w4;",
					    "ld.u32 %w14, [%t12+24];\nsetp.ne.u32 %p6, %w14, %w12;",
					    "ld.u64 %t3, [%t12+16];\nld.u32 %w13, [%t12+24];", "mul.wide.u32 %t11, %w7, 8;\nadd.u64 %r0, %r1, ", NULL};
	static const char *const run16[] = {"match.any.sync.b64 %w4, %t14, %w0;\nand.b32 %w1, %w1, %w4;",
					    "ld.u64 %t0, [%t12+24];\nsetp.ne.u64 %p6, %t0, %t14;",
					    /* the weak probe's key: one 16-byte load, 16 bytes into the bucket */
					    "ld.v2.u64 {%t3, %t4}, [%t12+16];", "mul.wide.u32 %t11, %w7, 8;\nadd.u64 %r0, %r1, ", NULL};
	static const char *const no_match8[] = {"match.any.sync.b32 %w1", "match.any.sync.b64 %w4, %t14", NULL};
	static const char *const no_match4[] = {"match.any.sync.b64 %w1", "call (__hr), __gbpf_m_hash_lookup", NULL};
	/* the thread id as a 4-byte key (each lane its own) */
	const struct gbpf_insn th[] = THREAD_KEY_COUNT;
	/* a constant key: the same in every lane */
	const struct gbpf_insn konst[] = {
		LOOKUP_K4(7), I(0x15, 0, 0, 2, 0), I(0xb7, 1, 0, 0, 1), I(0xdb, 0, 1, 0, GBPF_ATOMIC_ADD),
		I(0xb7, 0, 0, 0, 0), I(0x95, 0, 0, 0, 0)};
	/* gpu/mem: a key of the access's kind (a site constant) or of its address (per lane) */
	const struct gbpf_insn ctx_kind[] = {
		I(0x61, 3, 1, 44, 0), I(0x63, 10, 3, -4, 0), I(0xbf, 2, 10, 0, 0), I(0x07, 2, 0, 0, -4),
		I(0x18, 1, GBPF_PSEUDO_MAP_IDX, 0, 0), I(0, 0, 0, 0, 0), I(0x85, 0, 0, 0, 1), I(0xb7, 0, 0, 0, 0),
		I(0x95, 0, 0, 0, 0)};
	const struct gbpf_insn ctx_addr[] = {
		I(0x61, 3, 1, 24, 0), I(0x63, 10, 3, -4, 0), I(0xbf, 2, 10, 0, 0), I(0x07, 2, 0, 0, -4),
		I(0x18, 1, GBPF_PSEUDO_MAP_IDX, 0, 0), I(0, 0, 0, 0, 0), I(0x85, 0, 0, 0, 1), I(0xb7, 0, 0, 0, 0),
		I(0x95, 0, 0, 0, 0)};
	static const char *const uniform[] = {"ld.v2.u64 {%t1, %t2}, [%t12];", "ld.acquire.gpu.u32 %w14, [%t12];",
					      NULL};
	static const char *const no_group[] = {"match.any.sync.b32 %w1, %w10, %w0;", "vote.sync.ballot.b32 %w4, %p1, %w0;",
					       "shfl.sync.idx.b32 %w4, %w4, %w2, 31, %w1;",
					       "call (__hr), __gbpf_m_hash_lookup", NULL};
	static const char *const grouped[] = {"vote.sync.ballot.b32 %w4, %p1, %w0;",
					      "match.any.sync.b32 %w1, %w10, %w0;", NULL};

	check_text("hash 4-byte key: grouped lanes, inline probe run over the table", th, sizeof(th) / sizeof(th[0]),
		   &md, run4, no_match4);
	check_text("hash, constant key: no grouping, every lane looks up", konst, sizeof(konst) / sizeof(konst[0]),
		   &md, uniform, no_group);
	{
		/* a hit jumps past the null check: to the label after `if r0 == 0` (pc 7), or to
		 * the target of `if r0 != 0` (pc 10); not where the check is itself a jump target,
		 * nor for a key per lane (its answer is shared after the join) */
		static const char *const past_jeq[] = {"bra.uni $Lnn7_0;", "@%p0 bra $L10;\n$Lnn7_0:", NULL};
		static const char *const to_jne[] = {"bra.uni $L10;", NULL};
		static const char *const no_nn[] = {"$Lnn", NULL};
		const struct gbpf_insn jne[] = {
			LOOKUP_K4(7), I(0x55, 0, 0, 2, 0), I(0xb7, 0, 0, 0, 1), I(0x95, 0, 0, 0, 0),
			I(0xb7, 1, 0, 0, 1), I(0xdb, 0, 1, 0, GBPF_ATOMIC_ADD), I(0xb7, 0, 0, 0, 0),
			I(0x95, 0, 0, 0, 0)};
		const struct gbpf_insn landed[] = {
			I(0xb7, 0, 0, 0, 0), I(0x55, 0, 0, 7, 0), LOOKUP_K4(7), I(0x15, 0, 0, 2, 0),
			I(0xb7, 1, 0, 0, 1), I(0xdb, 0, 1, 0, GBPF_ATOMIC_ADD), I(0xb7, 0, 0, 0, 0),
			I(0x95, 0, 0, 0, 0)};

		check_text("hash, constant key, if r0 == 0: a hit skips the check", konst,
			   sizeof(konst) / sizeof(konst[0]), &md, past_jeq, NULL);
		check_text("hash, constant key, if r0 != 0: a hit jumps to its target", jne,
			   sizeof(jne) / sizeof(jne[0]), &md, to_jne, no_nn);
		/* r6 = r0; if r6 == 0 goto out (pc 8): the hit makes the copy, then skips the check */
		static const char *const past_copy[] = {"mov.b64 %r6, %r0;\nbra.uni $Lnn8_0;",
							"@%p0 bra $L11;\n$Lnn8_0:", NULL};
		const struct gbpf_insn copied[] = {
			LOOKUP_K4(7), I(0xbf, 6, 0, 0, 0), I(0x15, 6, 0, 2, 0), I(0xb7, 1, 0, 0, 1),
			I(0xdb, 6, 1, 0, GBPF_ATOMIC_ADD), I(0xb7, 0, 0, 0, 0), I(0x95, 0, 0, 0, 0)};

		check_text("hash, constant key, r6 = r0 then if r6 == 0: a hit copies and skips the check", copied,
			   sizeof(copied) / sizeof(copied[0]), &md, past_copy, NULL);
		check_text("hash, constant key, the check a jump target: kept", landed,
			   sizeof(landed) / sizeof(landed[0]), &md, NULL, no_nn);
		check_text("hash, a key per lane: the check kept", th, sizeof(th) / sizeof(th[0]), &md, NULL,
			   no_nn);
	}
	check_text_as("gpu/mem hash, key = ctx->mem_kind: no grouping", GBPF_ATTACH_GPU_MEM, ctx_kind,
		      sizeof(ctx_kind) / sizeof(ctx_kind[0]), &md, uniform, no_group);
	check_text_as("gpu/mem hash, key = low half of ctx->mem_addr: grouped", GBPF_ATTACH_GPU_MEM, ctx_addr,
		      sizeof(ctx_addr) / sizeof(ctx_addr[0]), &md, grouped, NULL);
	check_text_as("gpu/exit hash, key = ctx->mem_addr's offset (zero there): no grouping", GBPF_ATTACH_GPU_EXIT,
		      ctx_addr, sizeof(ctx_addr) / sizeof(ctx_addr[0]), &md, uniform, no_group);
	check_text("hash, key = ctx->mem_kind of a program with no attach point: grouped", ctx_kind,
		   sizeof(ctx_kind) / sizeof(ctx_kind[0]), &md, grouped, NULL);
	md.type = GBPF_MAP_TYPE_GPU_HASH;
	check_text("GPU hash 4-byte key: inline probe run", th, sizeof(th) / sizeof(th[0]), &md, run4, no_match4);
	md.type = GBPF_MAP_TYPE_HASH;
	md.key_size = 8;
	check_text("hash 8-byte key: inline probe run, one 64-bit match", wide, sizeof(wide) / sizeof(wide[0]),
		   &md, run8, no_match8);
	md.key_size = 12;
	check_text("hash 12-byte key: inline probe run, both halves matched", wide,
		   sizeof(wide) / sizeof(wide[0]), &md, run12, NULL);
	md.key_size = 16;
	check_text("hash 16-byte key: inline probe run, both halves matched", wide,
		   sizeof(wide) / sizeof(wide[0]), &md, run16, NULL);
}

/*
 * bpf_gpu_block_idx(&x, &y, &z) with x, y, z on the stack: the three stores
 * address the frame's .local array at constant offsets (as the probe's own
 * stack loads do) without a NULL test; pointers not known to be the frame
 * (one loaded from memory, one past a join) keep the NULL-tested generic
 * store.
 */
static void test_helper_stack_stores(void)
{
	struct gbpf_map_desc md = {.sz = sizeof(md), .name = "a", .type = GBPF_MAP_TYPE_ARRAY,
				   .key_size = 4, .value_size = 8, .max_entries = 4};
	/* r1 = r10 - 16, r2 = r10 - 24, r3 = r2 - 8 (r10 - 32), call, a lookup (key at r10 - 4), r0 = x */
	const struct gbpf_insn known[] = {
		I(0xbf, 1, 10, 0, 0), I(0x07, 1, 0, 0, -16), I(0xbf, 2, 10, 0, 0), I(0x07, 2, 0, 0, -24),
		I(0xbf, 3, 2, 0, 0), I(0x17, 3, 0, 0, 8), I(0x85, 0, 0, 0, GBPF_HELPER_GPU_BLOCK_IDX),
		LOOKUP_K4(0), I(0x79, 0, 10, -16, 0), I(0x95, 0, 0, 0, 0)};
	/* r1 loaded from the stack, r2 = r10 - 16 on one way into a join and loaded on the other, r3 = 0 */
	const struct gbpf_insn unknown[] = {
		I(0x79, 1, 10, -32, 0), I(0xbf, 2, 10, 0, 0), I(0x07, 2, 0, 0, -16), I(0x15, 1, 0, 1, 0),
		I(0x79, 2, 10, -40, 0), I(0xb7, 3, 0, 0, 0), I(0x85, 0, 0, 0, GBPF_HELPER_GPU_BLOCK_IDX),
		LOOKUP_K4(0), I(0xb7, 0, 0, 0, 0), I(0x95, 0, 0, 0, 0)};
	static const char *const local3[] = {"st.local.u64 [__gbpf_stack+496], %t10;",
					     "st.local.u64 [__gbpf_stack+488], %t10;",
					     "st.local.u64 [__gbpf_stack+480], %t10;", NULL};
	static const char *const no_generic[] = {"@%p6 st.u64", NULL};
	static const char *const generic3[] = {"@%p6 st.u64 [%r1], %t10;", "@%p6 st.u64 [%r2], %t10;",
					       "@%p6 st.u64 [%r3], %t10;", NULL};
	static const char *const no_local_store[] = {"st.local.u64 [__gbpf_stack+496]", NULL};

	check_text("bpf_gpu_block_idx into stack variables: .local stores at constant offsets", known,
		   sizeof(known) / sizeof(known[0]), &md, local3, no_generic);
	check_text("bpf_gpu_block_idx through pointers not known to be the frame: generic, NULL-tested", unknown,
		   sizeof(unknown) / sizeof(unknown[0]), &md, generic3, no_local_store);
}

/*
 * bpf_ringbuf_output (bpf_perf_event_output) of a record at a known place in the frame, of a
 * constant size, on a map known to be a ring (a perf event array): the words are read from the
 * frame in the probe (an injected probe's fold then takes them from registers) and written by
 * the ring protocol emitted inline (a perf array's are passed by value to its helper); a size not
 * known is read by the helper.
 */
static void test_ring_output_by_value(void)
{
	/* emitted inline (ptx_ring_emit_output_inline): header BUSY | 16, the words, the commit of 16 */
	static const char *const by_value[] = {"ld.local.u64 %t0, [__gbpf_stack+496];",
					       "ld.local.u64 %t1, [__gbpf_stack+504];",
					       "mov.b64 %a0, %r1;",
					       "activemask.b32 %b5;",
					       "mov.u32 %b2, 2147483664;\nmov.b64 %v0, {%b2, %b1};\nmov.b64 %v1, %t0;\n"
					       "mov.b64 %v2, %t1;\n",
					       "bar.warp.sync %b5;\nmov.u32 %b2, 16;\n@%q5 st.release.gpu.u32 [%a15], %b2;",
					       NULL};
	static const char *const no_generic[] = {"call (__hr), __gbpf_h_ringbuf_output,", "__gbpf_h_ringbuf_outv,",
						 NULL};
	static const char *const generic[] = {"call (__hr), __gbpf_h_ringbuf_output,", NULL};
	static const char *const no_value[] = {"call (__hr), __gbpf_h_ringbuf_outv", NULL};
	static const char *const perf_by_value[] = {"st.param.b64 [__h1], %r2;", "st.param.b64 [__h2], %r3;",
						    "st.param.b64 [__hn], 16;",
						    "call (__hr), __gbpf_h_perf_outv, (__h1, __h2, __hn, __hw0,", NULL};
	static const char *const perf_generic[] = {"call (__hr), __gbpf_h_perf_event_output,", NULL};
	static const char *const perf_no_value[] = {"call (__hr), __gbpf_h_perf_outv", NULL};
	struct gbpf_map_desc rb = {.sz = sizeof(rb), .name = "rb", .type = GBPF_MAP_TYPE_RINGBUF,
				   .max_entries = 1 << 16};
	struct gbpf_map_desc pe = {.sz = sizeof(pe), .name = "ev", .type = GBPF_MAP_TYPE_PERF_EVENT_ARRAY,
				   .key_size = 4, .value_size = 4};
	struct gbpf_insn prog[MAP_PROG_MAX];
	size_t n;

	n = map_prog_ring_output(prog);
	check_text("ringbuf_output of 16 stack bytes: by value", prog, n, &rb, by_value, no_generic);
	/*
	 * every size: in the probe's inline block, the block write of that size only (its words and
	 * the header: one store of 32 words each), no call; then assembled (check)
	 */
	for (uint32_t bytes = 8; bytes <= 56; bytes += 8) {
		struct gbpf_prog_desc p = {.sz = sizeof(p), .name = "rb_const", .section = "gpu/entry/k",
					   .maps = &rb, .map_cnt = 1, .source_file = "test_ptx_maps.c"};
		const struct gbpf_prog_desc *pp = &p;
		struct gbpf_ptx_opts o = {.sz = sizeof(o), .arch = "sm_90"};
		char err[512] = "", *ptx = NULL, what[64];
		const char *blk, *end;
		unsigned stores = 0;

		n = map_prog_ring_const(prog, bytes);
		p.insns = prog;
		p.insn_cnt = n;
		snprintf(what, sizeof(what), "ringbuf_output of %u stack bytes, written inline", bytes);
		if (!tap_ok(gbpf_ptx_emit(&pp, 1, &o, &ptx, NULL, err, sizeof(err)) == 0 && ptx, "%s: PTX %s", what, err))
			continue;
		blk = strstr(ptx, "mov.b64 %a0, %r1;");
		end = blk ? strstr(blk, "$Lox") : NULL;
		for (const char *q = blk; q && end && (q = strstr(q, "st.u64 [%a12+")) && q < end; q++)
			stores++;
		tap_ok(blk && end && stores == bytes / 8 + 1 && !strstr(ptx, "__gbpf_h_ringbuf_outv,"),
		       "%s: %u block stores (%u words a record), no call", what, stores, bytes / 8 + 1);
		free(ptx);
		check(what, prog, n, &rb);
	}
	{
		/* test_cuda_maps' lanes arriving at different times: inline too, in a loop, assembled */
		struct gbpf_prog_desc p = {.sz = sizeof(p), .name = "rb_divergent", .section = "gpu/entry/k",
					   .maps = &rb, .map_cnt = 1, .source_file = "test_ptx_maps.c"};
		const struct gbpf_prog_desc *pp = &p;
		struct gbpf_ptx_opts o = {.sz = sizeof(o), .arch = "sm_90"};
		char err[512] = "", *ptx = NULL;

		p.insns = prog;
		p.insn_cnt = n = map_prog_ring_divergent(prog);
		tap_ok(gbpf_ptx_emit(&pp, 1, &o, &ptx, NULL, err, sizeof(err)) == 0 && ptx &&
			       strstr(ptx, "activemask.b32 %b5;") && !strstr(ptx, "__gbpf_h_ringbuf_outv,"),
		       "ringbuf_output in a loop after a loop of each thread's own length: written inline %s", err);
		free(ptx);
		check("ringbuf_output from lanes arriving at different times", prog, n, &rb);
	}
	n = map_prog_ring_sizes(prog, 0);
	check_text("ringbuf_output of a size not known: from memory", prog, n, &rb, generic, no_value);
	/* a map not known to be a ring (the helper's own check answers -EINVAL) */
	n = map_prog_ring_output(prog);
	check_text("ringbuf_output on a perf event array: the generic helper", prog, n, &pe, generic, no_value);
	/* perf_event_output: the map in r2, the record in r4 / r5, the flags read at run time */
	n = map_prog_perf_output(prog);
	check_text("perf_event_output of 16 stack bytes: by value", prog, n, &pe, perf_by_value, perf_generic);
	check_text("perf_event_output on a ring buffer: the generic helper", prog, n, &rb, perf_generic, perf_no_value);
}

/*
 * Stores into a record reserved in the ring: 8-byte aligned, global memory (the fold keeps the
 * stack's values past them).
 */
static void test_ring_reserve_stores(void)
{
	static const char *const global[] = {"cvta.to.global.u64 %t4, %r0;\nst.global.u64 [%t4+0], %r6;",
					     "cvta.to.global.u64 %t4, %r0;\nst.global.u64 [%t4+8], %r7;", NULL};
	static const char *const generic[] = {"st.u64 [%r0+", "$Lu", NULL};
	struct gbpf_map_desc rb = {.sz = sizeof(rb), .name = "rb", .type = GBPF_MAP_TYPE_RINGBUF,
				   .max_entries = 1 << 16};
	struct gbpf_insn prog[MAP_PROG_MAX];
	size_t n = map_prog_ring_reserve(prog, MAP_PROG_RSV_SPILLED);

	check_text("ringbuf_reserve in the ring: stores into the record are aligned .global stores", prog, n, &rb,
		   global, generic);
}

/*
 * Records reserved in the frame (plugins/cuda/ptx_reserve.c): the area after the 512 bytes of
 * stack, stores to it .local, the null check decided, the submit an inline output, discard
 * nothing; a pointer spilled, a submit in a subprogram or a reserve in a loop keeps every record of
 * the program in the ring.
 */
static void test_ring_reserve_frame(void)
{
	static const char *const frame[] = {
		".local .align 8 .b8 __gbpf_stack[528];", "st.local.u64 [__gbpf_stack+512], %r6;",
		"st.local.u64 [__gbpf_stack+520], %r7;", "ld.local.u64 %t0, [__gbpf_stack+512];",
		"ld.global.u64 %t8, [__gbpf_maps+0];", "mov.b64 %a0, %t8;", "bar.warp.sync %b5;", NULL};
	/* the helper's destination: the area's second word, a generic address computed from the frame's */
	static const char *const frame_helper[] = {
		".local .align 8 .b8 __gbpf_stack[528];", "st.local.u64 [__gbpf_stack+512], %r6;",
		"call (__hr), __gbpf_h_probe_read,", "ld.local.u64 %t1, [__gbpf_stack+520];",
		"mov.b64 %a0, %t8;", NULL};
	static const char *const not_ring[] = {"call (__hr), __gbpf_h_ringbuf_reserve",
					       "call (__hr), __gbpf_h_ringbuf_submit",
					       "call (__hr), __gbpf_h_ringbuf_discard", "setp.ne.u64 %p0, %r0, 0x0", NULL};
	static const char *const ring[] = {"call (__hr), __gbpf_h_ringbuf_reserve",
					   "call (__hr), __gbpf_h_ringbuf_submit",
					   "call (__hr), __gbpf_h_ringbuf_discard", NULL};
	static const char *const not_frame[] = {"__gbpf_stack[528]", "mov.b64 %a0, %t8;", NULL};
	static const char *const pair[] = {".local .align 8 .b8 __gbpf_stack[544];",
					   "st.local.u32 [__gbpf_stack+512], %r7;",
					   "st.local.u32 [__gbpf_stack+528],", "ld.local.u64 %t1, [__gbpf_stack+536];", NULL};
	static const char *const names[MAP_PROG_RSV_FORMS] = {"in the frame", "after a loop: in the frame",
							      "a helper writes into it: in the frame",
							      "pointer spilled: in the ring",
							      "submitted by a subprogram: in the ring",
							      "in a loop: in the ring"};
	struct gbpf_map_desc rb = {.sz = sizeof(rb), .name = "rb", .type = GBPF_MAP_TYPE_RINGBUF,
				   .max_entries = 1 << 16};
	struct gbpf_insn prog[MAP_PROG_MAX];
	char what[96];
	size_t n;

	for (int f = 0; f < MAP_PROG_RSV_FORMS; f++) {
		bool in_frame = f < MAP_PROG_RSV_SPILLED;

		n = map_prog_ring_reserve(prog, (enum map_prog_reserve_form)f);
		snprintf(what, sizeof(what), "ringbuf_reserve, %s", names[f]);
		check_text(what, prog, n, &rb, !in_frame ? ring : f == MAP_PROG_RSV_HELPER_WRITES ? frame_helper : frame,
			   in_frame ? not_ring : not_frame);
	}
	n = map_prog_ring_reserve_pair(prog);
	check_text("ringbuf_reserve twice, 4-byte stores: two areas", prog, n, &rb, pair, not_ring);
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
		for (int f = 0; f < MAP_PROG_RSV_FORMS; f++) {
			n = map_prog_ring_reserve(prog, (enum map_prog_reserve_form)f);
			snprintf(what, sizeof(what), "ring type %u reserve/submit/discard, form %d", ring_types[t], f);
			check(what, prog, n, &md);
		}
		n = map_prog_ring_reserve_pair(prog);
		snprintf(what, sizeof(what), "ring type %u two records reserved at once", ring_types[t]);
		check(what, prog, n, &md);
		for (int per_lane = 0; per_lane < 2; per_lane++) {
			n = map_prog_ring_sizes(prog, per_lane);
			snprintf(what, sizeof(what), "ring type %u output of 8..56 bytes%s", ring_types[t],
				 per_lane ? ", sizes mixed in a warp" : "");
			check(what, prog, n, &md);
		}
	}
	{
		struct gbpf_map_desc md = {.sz = sizeof(md), .name = "ev",
					   .type = GBPF_MAP_TYPE_PERF_EVENT_ARRAY, .key_size = 4,
					   .value_size = 4};

		n = map_prog_perf_output(prog);
		check("perf_event_output", prog, n, &md);
	}
	test_inline_lookups();
	test_const_map_table();
	test_key_bounds();
	test_atomic_provenance();
	test_atomic_value_constant();
	test_atomic_address_uniform();
	test_helper_stack_stores();
	test_hash_inline_run();
	test_ring_output_by_value();
	test_ring_reserve_stores();
	test_ring_reserve_frame();
	test_thread_local();
	return tap_done();
}
