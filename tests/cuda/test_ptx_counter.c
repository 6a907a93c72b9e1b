/* SPDX-License-Identifier: MIT */
/*
 * tests/cuda/test_ptx_counter.c - which memory probes only count
 * (plugins/cuda/ptx_counter.c), and the flush variant and mark the code
 * generator emits for them (the injector sums their sites in registers:
 * tests/cuda/test_inline_run.c runs that on the GPU, the tools matrix
 * checks mem_count's totals in `gbpf run`).
 *
 * The programs are mem_trace's counter (examples/mem_trace/mem_trace.h) as
 * clang -O2 compiles it, and variants of it one instruction apart, each
 * accepted or refused for a stated reason. Then mem_trace itself (the
 * counter, then a log2 histogram of strides), cut into its counter and
 * the rest (plugins/cuda/ptx_split.c), and variants the cut must refuse.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gbpf/helper_ids.h>
#include <gbpf/insn.h>
#include <gbpf/probe_ctx.h>

#include "core/helpers/host_helpers.h"
#include "core/interp/interp.h"
#include "cuda_test_util.h"
#include "dt_inline.h"
#include "maps/map.h"
#include "plugins/cuda/ptx/ptx.h"
#include "ptx_codegen.h"
#include "ptx_counter.h"
#include "ptx_split.h"
#include "tap.h"

#define I(c, d, s, o, i) ((struct gbpf_insn){.code = (c), .dst = (d), .src = (s), .off = (o), .imm = (i)})
#define LDDW_MAP(d, m) I(GBPF_OP_LDDW, d, GBPF_PSEUDO_MAP_IDX, 0, m), I(0, 0, 0, 0, 0)

enum { N_COUNT = 34 };

/* mem_count.bpf.o's program (llvm-objdump of the benchmark's object). */
static const struct gbpf_insn counter[N_COUNT] = {
	I(GBPF_LDX | GBPF_MEM | GBPF_W, 2, 1, 44, 0),   /* kind */
	I(GBPF_STX | GBPF_MEM | GBPF_W, 10, 2, -16, 0),
	I(GBPF_LDX | GBPF_MEM | GBPF_W, 2, 1, 48, 0),   /* space */
	I(GBPF_STX | GBPF_MEM | GBPF_W, 10, 2, -12, 0),
	I(GBPF_LDX | GBPF_MEM | GBPF_W, 1, 1, 40, 0),   /* size */
	I(GBPF_ALU64 | GBPF_MOV | GBPF_K, 2, 0, 0, 0),
	I(GBPF_STX | GBPF_MEM | GBPF_W, 10, 2, -4, 0),  /* pad */
	I(GBPF_STX | GBPF_MEM | GBPF_W, 10, 1, -8, 0),
	I(GBPF_ALU64 | GBPF_MOV | GBPF_K, 6, 0, 0, 1),  /* 8: one = 1 */
	I(GBPF_STX | GBPF_MEM | GBPF_DW, 10, 6, -24, 0),
	I(GBPF_ALU64 | GBPF_MOV | GBPF_X, 2, 10, 0, 0),
	I(GBPF_ALU64 | GBPF_ADD | GBPF_K, 2, 0, 0, -16),
	LDDW_MAP(1, 0),
	I(GBPF_OP_CALL, 0, 0, 0, GBPF_HELPER_MAP_LOOKUP_ELEM), /* 14 */
	I(GBPF_JMP | GBPF_JNE | GBPF_K, 0, 0, 15, 0),          /* 15: hit -> 31 */
	I(GBPF_ALU64 | GBPF_MOV | GBPF_X, 2, 10, 0, 0),
	I(GBPF_ALU64 | GBPF_ADD | GBPF_K, 2, 0, 0, -16),
	I(GBPF_ALU64 | GBPF_MOV | GBPF_X, 3, 10, 0, 0),
	I(GBPF_ALU64 | GBPF_ADD | GBPF_K, 3, 0, 0, -24),
	LDDW_MAP(1, 0),
	I(GBPF_ALU64 | GBPF_MOV | GBPF_K, 4, 0, 0, 1),         /* 22: BPF_NOEXIST */
	I(GBPF_OP_CALL, 0, 0, 0, GBPF_HELPER_MAP_UPDATE_ELEM), /* 23 */
	I(GBPF_JMP | GBPF_JEQ | GBPF_K, 0, 0, 7, 0),           /* 24: inserted -> 32 */
	I(GBPF_ALU64 | GBPF_MOV | GBPF_X, 2, 10, 0, 0),
	I(GBPF_ALU64 | GBPF_ADD | GBPF_K, 2, 0, 0, -16),
	LDDW_MAP(1, 0),
	I(GBPF_OP_CALL, 0, 0, 0, GBPF_HELPER_MAP_LOOKUP_ELEM),
	I(GBPF_JMP | GBPF_JEQ | GBPF_K, 0, 0, 1, 0),           /* 30 */
	I(GBPF_STX | GBPF_ATOMIC | GBPF_DW, 0, 6, 0, GBPF_ATOMIC_ADD), /* 31: *count += one */
	I(GBPF_ALU64 | GBPF_MOV | GBPF_K, 0, 0, 0, 0),         /* 32 */
	I(GBPF_JMP | GBPF_EXIT, 0, 0, 0, 0),
};

/* arr[3] += 5 into an array: no insert, the key a constant (no site field). */
static const struct gbpf_insn array_counter[] = {
	I(GBPF_ALU64 | GBPF_MOV | GBPF_K, 1, 0, 0, 3),
	I(GBPF_STX | GBPF_MEM | GBPF_W, 10, 1, -4, 0),
	I(GBPF_ALU64 | GBPF_MOV | GBPF_X, 2, 10, 0, 0),
	I(GBPF_ALU64 | GBPF_ADD | GBPF_K, 2, 0, 0, -4),
	LDDW_MAP(1, 1),
	I(GBPF_OP_CALL, 0, 0, 0, GBPF_HELPER_MAP_LOOKUP_ELEM),
	I(GBPF_JMP | GBPF_JEQ | GBPF_K, 0, 0, 2, 0),
	I(GBPF_ALU64 | GBPF_MOV | GBPF_K, 1, 0, 0, 5),
	I(GBPF_STX | GBPF_ATOMIC | GBPF_DW, 0, 1, 0, GBPF_ATOMIC_ADD),
	I(GBPF_ALU64 | GBPF_MOV | GBPF_K, 0, 0, 0, 0),
	I(GBPF_JMP | GBPF_EXIT, 0, 0, 0, 0),
};

static struct gbpf_map_desc maps[3] = {
	{.sz = sizeof(struct gbpf_map_desc), .name = "accesses", .type = GBPF_MAP_TYPE_PERCPU_HASH,
	 .key_size = 16, .value_size = 8, .max_entries = 256},
	{.sz = sizeof(struct gbpf_map_desc), .name = "arr", .type = GBPF_MAP_TYPE_ARRAY, .key_size = 4,
	 .value_size = 8, .max_entries = 8},
	{.sz = sizeof(struct gbpf_map_desc), .name = "other", .type = GBPF_MAP_TYPE_HASH, .key_size = 4,
	 .value_size = 8, .max_entries = 8},
};

static struct gbpf_prog_desc desc(const struct gbpf_insn *insns, size_t n, uint32_t kind)
{
	return (struct gbpf_prog_desc){.sz = sizeof(struct gbpf_prog_desc), .name = "count", .section = "gpu/mem/*",
				       .insns = insns, .insn_cnt = n, .maps = maps, .map_cnt = 3,
				       .attach = {.kind = kind}, .source_file = "test_ptx_counter.c"};
}

/* The counter with instruction @p pc replaced by @p in: a counter or not, as @p want says. */
static void variant(size_t pc, struct gbpf_insn in, int want, const char *what)
{
	struct gbpf_insn v[N_COUNT];
	struct gbpf_prog_desc d;
	struct ptx_counter c;

	memcpy(v, counter, sizeof(v));
	v[pc] = in;
	d = desc(v, N_COUNT, GBPF_ATTACH_GPU_MEM);
	tap_ok(ptx_counter_find(&d, &c) == want, "%s: %s", what, want ? "a counter" : "not a counter");
}

static void test_find(void)
{
	struct gbpf_prog_desc d = desc(counter, N_COUNT, GBPF_ATTACH_GPU_MEM);
	struct ptx_counter c;

	memset(&c, 0xff, sizeof(c));
	tap_ok(ptx_counter_find(&d, &c) == 1 && c.map == 0 && c.add == 1 && c.n_movs == 1 && c.mov_pc[0] == 8 &&
		       c.site_fields == (PTX_COUNTER_FIELD_SIZE | PTX_COUNTER_FIELD_KIND | PTX_COUNTER_FIELD_SPACE),
	       "mem_count: a counter of map 0, increment 1 (the move at 8), key of size, kind and space "
	       "(map %u, add %u, moves %u, first %u, fields 0x%x)",
	       c.map, c.add, c.n_movs, c.mov_pc[0], c.site_fields);
	d = desc(array_counter, sizeof(array_counter) / sizeof(array_counter[0]), GBPF_ATTACH_GPU_MEM);
	tap_ok(ptx_counter_find(&d, &c) == 1 && c.map == 1 && c.add == 5 && c.site_fields == 0 && c.n_movs == 1 &&
		       c.mov_pc[0] == 8,
	       "arr[3] += 5: a counter of the array, increment 5, a key of no site field");
	d = desc(counter, N_COUNT, GBPF_ATTACH_GPU_EXIT);
	tap_ok(ptx_counter_find(&d, &c) == 0, "the same program at gpu/exit: not summed (only memory sites are)");

	variant(8, I(GBPF_ALU64 | GBPF_MOV | GBPF_K, 6, 0, 0, 3), 1, "an increment of 3");
	variant(8, I(GBPF_ALU64 | GBPF_MOV | GBPF_K, 6, 0, 0, 70000), 0, "an increment over the largest summed");
	variant(31, I(GBPF_STX | GBPF_ATOMIC | GBPF_DW, 0, 6, 0, GBPF_ATOMIC_ADD | GBPF_FETCH), 0,
		"a fetching add (the old value read)");
	variant(31, I(GBPF_STX | GBPF_MEM | GBPF_DW, 0, 6, 0, 0), 0, "a plain store into the value");
	variant(31, I(GBPF_ALU64 | GBPF_MOV | GBPF_K, 7, 0, 0, 0), 0, "a hit not counted (the insert would count)");
	variant(0, I(GBPF_LDX | GBPF_MEM | GBPF_W, 2, 1, 24, 0), 0, "a key byte from the access's address");
	variant(5, I(GBPF_LDX | GBPF_MEM | GBPF_DW, 2, 1, 32, 0), 0, "a key byte from the stored value");
	variant(0, I(GBPF_LDX | GBPF_MEM | GBPF_W, 2, 1, 52, 0), 1, "a key of the site's index");
	variant(22, I(GBPF_ALU64 | GBPF_MOV | GBPF_X, 4, 6, 0, 0), 0,
		"the increment's register also the update's flags");
	variant(22, I(GBPF_ALU64 | GBPF_MOV | GBPF_K, 4, 0, 0, 2), 0, "an update with BPF_EXIST");
	variant(9, I(GBPF_ST | GBPF_MEM | GBPF_DW, 10, 0, -24, 1), 0,
		"the inserted value stored as an immediate (not a move the sum can replace)");
	variant(24, I(GBPF_JMP | GBPF_JNE | GBPF_K, 0, 0, 7, 0), 0,
		"a lookup and add after a successful insert (the first access counts twice)");
	variant(23, I(GBPF_OP_CALL, 0, 0, 0, GBPF_HELPER_TRACE_PRINTK), 0, "another helper");
	variant(32, I(GBPF_JMP | GBPF_JA, 0, 0, -2, 0), 0, "a loop");
	variant(30, I(GBPF_JMP | GBPF_JEQ | GBPF_K, 6, 0, 1, 1), 0, "a branch on the increment's register");
	variant(3, I(GBPF_STX | GBPF_MEM | GBPF_W, 10, 2, -20, 0), 0, "a key byte never written");

	maps[0].type = GBPF_MAP_TYPE_LRU_HASH;
	d = desc(counter, N_COUNT, GBPF_ATTACH_GPU_MEM);
	tap_ok(ptx_counter_find(&d, &c) == 0, "an LRU map: not summed (fewer lookups would change evictions)");
	maps[0].type = GBPF_MAP_TYPE_PERCPU_HASH;
	maps[0].value_size = 16;
	tap_ok(ptx_counter_find(&d, &c) == 0, "a 16-byte value: not summed");
	maps[0].value_size = 8;
}

/* The fragment @p ptx, behind the module header, through ptxas. */
static void check_fragment(const char *ptx, const char *what)
{
	char log[1024] = "", hdr[128], *mod = NULL;

	if (!ptx || !ptxas_path()) {
		tap_skip("ptxas: %s", ptx ? "not found" : "no fragment");
		return;
	}
	gbpf_ptx_header(hdr, sizeof(hdr), "sm_90", 0);
	if (asprintf(&mod, "%s%s", hdr, ptx) > 0)
		tap_ok(!ptxas_check(mod, "sm_90", log, sizeof(log)), "ptxas accepts the fragment with %s %s", what, log);
	free(mod);
}

/* The fragment of the programs @p progs (sm_90), or NULL with @p err set. */
static char *emit_fragment(const struct gbpf_prog_desc *const *progs, size_t n, char *err, size_t size)
{
	struct gbpf_ptx_opts opts = {.sz = sizeof(opts), .arch = "sm_90"};
	char *ptx = NULL;

	if (gbpf_ptx_emit(progs, n, &opts, &ptx, NULL, err, size)) {
		free(ptx);
		return NULL;
	}
	return ptx;
}

static void test_emit(void)
{
	const struct gbpf_prog_desc d = desc(counter, N_COUNT, GBPF_ATTACH_GPU_MEM);
	struct gbpf_insn other[sizeof(array_counter) / sizeof(array_counter[0])];
	struct gbpf_prog_desc o;
	const struct gbpf_prog_desc *progs[2] = {&d, NULL};
	char err[256] = "", *variant_at, *ptx = emit_fragment(progs, 1, err, sizeof(err));

	tap_ok(ptx && strstr(ptx, ".global .align 4 .u32 " PTX_COUNTER_MARK_PREFIX "0_1_1_7;"),
	       "the fragment marks probe 0 a counter: flush variant 1, increment 1, fields 7 (%s)", err);
	variant_at = ptx ? strstr(ptx, "__gbpf_probe_1(") : NULL;
	tap_ok(variant_at && strstr(variant_at, "ld.u64 %r6, [%rctx+32];") && !strstr(variant_at, "mov.b64 %r6, 0x1;"),
	       "the flush variant loads the count from ctx->mem_value where the program moves 1");
	check_fragment(ptx, "the variant");
	free(ptx);

	/* another program reading the counted map (here an exit probe that looks it up) */
	memcpy(other, array_counter, sizeof(array_counter));
	other[4].imm = 0;
	o = desc(other, sizeof(other) / sizeof(other[0]), GBPF_ATTACH_GPU_EXIT);
	progs[1] = &o;
	ptx = emit_fragment(progs, 2, err, sizeof(err));
	tap_ok(ptx && !strstr(ptx, PTX_COUNTER_MARK_PREFIX) && !strstr(ptx, "__gbpf_probe_2("),
	       "a map another program names: no variant, the probe runs at every site (%s)", err);
	free(ptx);
}

/* ---- a counter, then other work: cut in two (ptx_split.h) ------------- */

enum { N_TRACE = 69, TRACE_CUT = 33 };

/* examples/mem_trace/mem_trace.bpf.c as clang -O2 builds it (map 0: the counts, 1: the histogram, 2: last address) */
static const struct gbpf_insn trace[N_TRACE] = {
	I(GBPF_ALU64 | GBPF_MOV | GBPF_X, 6, 1, 0, 0),
	I(GBPF_LDX | GBPF_MEM | GBPF_W, 1, 6, 44, 0),
	I(GBPF_STX | GBPF_MEM | GBPF_W, 10, 1, -16, 0),
	I(GBPF_LDX | GBPF_MEM | GBPF_W, 1, 6, 48, 0),
	I(GBPF_STX | GBPF_MEM | GBPF_W, 10, 1, -12, 0),
	I(GBPF_LDX | GBPF_MEM | GBPF_W, 1, 6, 40, 0),
	I(GBPF_ALU64 | GBPF_MOV | GBPF_K, 2, 0, 0, 0),
	I(GBPF_STX | GBPF_MEM | GBPF_W, 10, 2, -4, 0),
	I(GBPF_STX | GBPF_MEM | GBPF_W, 10, 1, -8, 0),
	I(GBPF_ALU64 | GBPF_MOV | GBPF_K, 7, 0, 0, 1), /* 9: the increment */
	I(GBPF_STX | GBPF_MEM | GBPF_DW, 10, 7, -24, 0),
	I(GBPF_ALU64 | GBPF_MOV | GBPF_X, 2, 10, 0, 0),
	I(GBPF_ALU64 | GBPF_ADD | GBPF_K, 2, 0, 0, -16),
	LDDW_MAP(1, 0),
	I(GBPF_OP_CALL, 0, 0, 0, GBPF_HELPER_MAP_LOOKUP_ELEM),
	I(GBPF_JMP | GBPF_JNE | GBPF_K, 0, 0, 15, 0), /* 16: hit -> 32 */
	I(GBPF_ALU64 | GBPF_MOV | GBPF_X, 2, 10, 0, 0),
	I(GBPF_ALU64 | GBPF_ADD | GBPF_K, 2, 0, 0, -16),
	I(GBPF_ALU64 | GBPF_MOV | GBPF_X, 3, 10, 0, 0),
	I(GBPF_ALU64 | GBPF_ADD | GBPF_K, 3, 0, 0, -24),
	LDDW_MAP(1, 0),
	I(GBPF_ALU64 | GBPF_MOV | GBPF_K, 4, 0, 0, 1),
	I(GBPF_OP_CALL, 0, 0, 0, GBPF_HELPER_MAP_UPDATE_ELEM),
	I(GBPF_JMP | GBPF_JEQ | GBPF_K, 0, 0, 7, 0), /* 25: inserted -> 33 */
	I(GBPF_ALU64 | GBPF_MOV | GBPF_X, 2, 10, 0, 0),
	I(GBPF_ALU64 | GBPF_ADD | GBPF_K, 2, 0, 0, -16),
	LDDW_MAP(1, 0),
	I(GBPF_OP_CALL, 0, 0, 0, GBPF_HELPER_MAP_LOOKUP_ELEM),
	I(GBPF_JMP | GBPF_JEQ | GBPF_K, 0, 0, 1, 0),
	I(GBPF_STX | GBPF_ATOMIC | GBPF_DW, 0, 7, 0, GBPF_ATOMIC_ADD), /* 32 */
	I(GBPF_LDX | GBPF_MEM | GBPF_DW, 7, 6, 24, 0),                 /* 33: the cut; r7 = mem_addr */
	I(GBPF_ALU64 | GBPF_MOV | GBPF_K, 1, 0, 0, 0),
	I(GBPF_STX | GBPF_MEM | GBPF_W, 10, 1, -16, 0), /* 35: the rest's own key, over the head's */
	I(GBPF_ALU64 | GBPF_MOV | GBPF_X, 2, 10, 0, 0),
	I(GBPF_ALU64 | GBPF_ADD | GBPF_K, 2, 0, 0, -16),
	LDDW_MAP(1, 2), /* 38 */
	I(GBPF_OP_CALL, 0, 0, 0, GBPF_HELPER_MAP_LOOKUP_ELEM),
	I(GBPF_ALU64 | GBPF_MOV | GBPF_X, 6, 0, 0, 0),
	I(GBPF_JMP | GBPF_JEQ | GBPF_K, 6, 0, 24, 0),
	I(GBPF_LDX | GBPF_MEM | GBPF_DW, 2, 6, 0, 0),
	I(GBPF_JMP | GBPF_JEQ | GBPF_K, 2, 0, 21, 0),
	I(GBPF_ALU64 | GBPF_MOV | GBPF_X, 1, 7, 0, 0),
	I(GBPF_ALU64 | GBPF_SUB | GBPF_X, 1, 2, 0, 0),
	I(GBPF_JMP | GBPF_JGT | GBPF_X, 7, 2, 2, 0),
	I(GBPF_ALU64 | GBPF_SUB | GBPF_X, 2, 7, 0, 0),
	I(GBPF_ALU64 | GBPF_MOV | GBPF_X, 1, 2, 0, 0),
	I(GBPF_OP_CALL, 0, 0, 0, GBPF_HELPER_LOG2), /* 50 */
	I(GBPF_ALU64 | GBPF_MOV | GBPF_X, 1, 0, 0, 0),
	I(GBPF_ALU64 | GBPF_LSH | GBPF_K, 1, 0, 0, 32),
	I(GBPF_ALU64 | GBPF_RSH | GBPF_K, 1, 0, 0, 32),
	I(GBPF_ALU64 | GBPF_MOV | GBPF_K, 2, 0, 0, 47),
	I(GBPF_JMP | GBPF_JGT | GBPF_X, 2, 1, 1, 0),
	I(GBPF_ALU64 | GBPF_MOV | GBPF_K, 0, 0, 0, 47),
	I(GBPF_STX | GBPF_MEM | GBPF_W, 10, 0, -24, 0),
	I(GBPF_ALU64 | GBPF_MOV | GBPF_X, 2, 10, 0, 0),
	I(GBPF_ALU64 | GBPF_ADD | GBPF_K, 2, 0, 0, -24),
	LDDW_MAP(1, 1),
	I(GBPF_OP_CALL, 0, 0, 0, GBPF_HELPER_MAP_LOOKUP_ELEM),
	I(GBPF_JMP | GBPF_JEQ | GBPF_K, 0, 0, 2, 0),
	I(GBPF_ALU64 | GBPF_MOV | GBPF_K, 1, 0, 0, 1),
	I(GBPF_STX | GBPF_ATOMIC | GBPF_DW, 0, 1, 0, GBPF_ATOMIC_ADD),
	I(GBPF_STX | GBPF_MEM | GBPF_DW, 6, 7, 0, 0), /* 66: last = addr */
	I(GBPF_ALU64 | GBPF_MOV | GBPF_K, 0, 0, 0, 0),
	I(GBPF_JMP | GBPF_EXIT, 0, 0, 0, 0),
};

/* mem_trace with instruction @p pc replaced by @p in: cut or not, as @p want says. */
static void split_variant(size_t pc, struct gbpf_insn in, int want, const char *what)
{
	struct gbpf_insn v[N_TRACE];
	struct gbpf_prog_desc d;
	struct ptx_split s;
	int rc;

	memcpy(v, trace, sizeof(v));
	v[pc] = in;
	d = desc(v, N_TRACE, GBPF_ATTACH_GPU_MEM);
	rc = ptx_split_find(&d, &s);
	tap_ok(rc == want, "%s: %s", what, want ? "cut" : "not cut");
	if (rc == 1)
		ptx_split_free(&s);
}

static void test_split(void)
{
	const struct gbpf_insn nop8 = I(GBPF_ALU64 | GBPF_MOV | GBPF_K, 8, 0, 0, 0);
	struct gbpf_prog_desc d = desc(trace, N_TRACE, GBPF_ATTACH_GPU_MEM);
	struct ptx_counter c;
	struct ptx_split s;

	tap_ok(ptx_counter_find(&d, &c) == 0, "mem_trace as a whole is no counter (it also keeps a histogram)");
	if (tap_ok(ptx_split_find(&d, &s) == 1, "mem_trace is cut")) {
		tap_ok(s.at == TRACE_CUT && s.counter.map == 0 && s.counter.add == 1 && s.counter.n_movs == 1 &&
			       s.counter.mov_pc[0] == 9,
		       "where the counting ends (%u): a counter of map 0, increment 1 moved at 9", s.at);
		tap_ok(s.head.insn_cnt == TRACE_CUT + 2 && s.head.insns[TRACE_CUT].code == (GBPF_ALU64 | GBPF_MOV | GBPF_K) &&
			       s.head.insns[TRACE_CUT + 1].code == GBPF_OP_EXIT,
		       "the head: the instructions before the cut, then r0 = 0; exit");
		tap_ok(s.rest.insn_cnt == 1 + N_TRACE - TRACE_CUT &&
			       s.rest.insns[0].code == (GBPF_ALU64 | GBPF_MOV | GBPF_X) && s.rest.insns[0].dst == 6 &&
			       s.rest.insns[0].src == 1 && !memcmp(&s.rest.insns[1], &trace[TRACE_CUT], sizeof(trace[0])),
		       "the rest: r6 = r1 (the context, as at the cut), then the instructions from the cut on");
		ptx_split_free(&s);
	}
	split_variant(TRACE_CUT, nop8, 0, "the rest reads r7, which the head set to the increment");
	split_variant(35, nop8, 0, "the rest's lookup reads a key only the head wrote");
	split_variant(38, I(GBPF_OP_LDDW, 1, GBPF_PSEUDO_MAP_IDX, 0, 0), 0, "the rest names the counter's map");
	split_variant(32, I(GBPF_JMP | GBPF_EXIT, 0, 0, 0, 0), 0, "the head may end the program");
	split_variant(16, I(GBPF_JMP | GBPF_JNE | GBPF_K, 0, 0, 26, 0), 0, "a jump from the head into the rest");
	split_variant(66, I(GBPF_STX | GBPF_MEM | GBPF_DW, 6, 10, 0, 0), 0,
		      "the rest stores a stack address to memory");
	split_variant(35, I(GBPF_ST | GBPF_MEM | GBPF_W, 10, 0, -16, 0), 1,
		      "the rest's key written by an immediate store: still cut");
}

/* mem_trace's maps as the interpreter runs them (one thread: the per-thread slot an array of one) */
static const struct gbpf_map_desc trace_maps[3] = {
	{.sz = sizeof(struct gbpf_map_desc), .name = "accesses", .type = GBPF_MAP_TYPE_PERCPU_HASH,
	 .key_size = 16, .value_size = 8, .max_entries = 256},
	{.sz = sizeof(struct gbpf_map_desc), .name = "stride", .type = GBPF_MAP_TYPE_ARRAY, .key_size = 4,
	 .value_size = 8, .max_entries = 48},
	{.sz = sizeof(struct gbpf_map_desc), .name = "last_addr", .type = GBPF_MAP_TYPE_ARRAY, .key_size = 4,
	 .value_size = 8, .max_entries = 1},
};

/* What mem_trace's maps hold: the counts of the kinds and sizes used below, the histogram, the last address. */
struct trace_state {
	uint64_t count[3][4], stride[48], last;
};

static void trace_snapshot(struct gbpf_map_instance *inst, struct trace_state *o)
{
	static const uint32_t sizes[4] = {1, 2, 4, 8};

	memset(o, 0, sizeof(*o));
	for (uint32_t kind = 0; kind < 3; kind++)
		for (uint32_t z = 0; z < 4; z++) {
			uint32_t key[4] = {kind, GBPF_SPACE_GLOBAL, sizes[z], 0};
			uint64_t *v = gbpf_map_lookup(&inst[0], key, 0);

			o->count[kind][z] = v ? *v : 0;
		}
	for (uint32_t k = 0; k < 48; k++)
		o->stride[k] = *(uint64_t *)gbpf_map_lookup(&inst[1], &k, 0);
	o->last = *(uint64_t *)gbpf_map_lookup(&inst[2], &(uint32_t){0}, 0);
}

/*
 * @p n_progs programs run one after the other at each of 200 accesses (kinds, sizes and addresses
 * from a fixed sequence) on fresh maps; their contents into @p o. 0, or -1 with a diagnostic.
 */
static int trace_runs(const struct gbpf_prog_desc *const *progs, size_t n_progs, struct trace_state *o)
{
	struct gbpf_map_instance inst[3];
	struct gbpf_interp *ip[2] = {NULL, NULL};
	GBPF_OPTS(gbpf_interp_opts, io, .bounds_checked = 1);
	struct gbpf_gpu_ctx ctx = {0};
	struct gbpf_interp_region region = {.addr = &ctx, .size = sizeof(ctx), .name = "ctx"};
	uint64_t x = 0x9e3779b97f4a7c15ull;
	char err[256] = "";
	int rc = 0, made = 0;

	for (; made < 3; made++)
		if (gbpf_map_instance_create(&inst[made], &trace_maps[made], 1)) {
			rc = -1;
			break;
		}
	for (size_t i = 0; !rc && i < n_progs; i++)
		rc = gbpf_interp_create(progs[i], inst, 3, &io, &ip[i], err, sizeof(err));
	for (unsigned a = 0; !rc && a < 200; a++) {
		uint64_t args[5] = {(uint64_t)(uintptr_t)&ctx};

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		ctx.mem_kind = (uint32_t)(x % 3);
		ctx.mem_size = 1u << (x >> 8) % 4;
		ctx.mem_space = GBPF_SPACE_GLOBAL;
		ctx.mem_addr = 0x7f0000000000ull + (x >> 20) % (1ull << (a % 40 + 1));
		for (size_t i = 0; !rc && i < n_progs; i++) {
			struct gbpf_exec_env env = {.maps = inst, .map_cnt = 3, .thread_count = 1};

			rc = gbpf_interp_run(ip[i], &env, args, &region, 1, NULL, err, sizeof(err));
		}
	}
	if (rc)
		tap_diag("interpreter: %s", err);
	else
		trace_snapshot(inst, o);
	for (size_t i = 0; i < n_progs; i++)
		gbpf_interp_destroy(ip[i]);
	while (made--)
		gbpf_map_instance_destroy(&inst[made]);
	return rc ? -1 : 0;
}

/* The cut keeps the program's meaning: the head then the rest at every access leave the maps as the program does. */
static void test_split_runs(void)
{
	struct gbpf_prog_desc d = desc(trace, N_TRACE, GBPF_ATTACH_GPU_MEM);
	const struct gbpf_prog_desc *whole[1] = {&d};
	struct trace_state want, got;
	struct ptx_split s;
	uint64_t hist = 0;

	d.maps = trace_maps;
	if (!tap_ok(ptx_split_find(&d, &s) == 1, "mem_trace with its own maps is cut"))
		return;
	{
		const struct gbpf_prog_desc *cut[2] = {&s.head, &s.rest};

		if (!trace_runs(whole, 1, &want) && !trace_runs(cut, 2, &got)) {
			for (unsigned k = 0; k < 48; k++)
				hist += want.stride[k];
			tap_ok(hist == 199 && want.count[0][0] + want.count[1][0] + want.count[2][0] > 0 &&
				       !memcmp(&want, &got, sizeof(want)),
			       "the interpreter: head then rest at 200 accesses leave the counts, the histogram "
			       "(%" PRIu64 " distances) and the last address as the whole program does", hist);
		} else {
			tap_ok(0, "the interpreter ran both forms");
		}
	}
	ptx_split_free(&s);
}

/*
 * Random rests: mem_count's counter, its exits made a fall into a random
 * program of the differential generator (tests/reliability/difftest_gen.c,
 * maps 1 and 2). Where the cut is taken, the interpreter must find the
 * head then the rest the same as the whole program: r0 of each run, the
 * counter, both of the random program's maps.
 */
/* most random programs call a subprogram somewhere, which the cut refuses: one in ten or so is cut */
enum { RANDOM_RESTS = 600, RANDOM_RUNS = 3 };

static const struct gbpf_map_desc *random_maps(void)
{
	static struct gbpf_map_desc m[3];

	m[0] = maps[0];
	m[1] = dt_maps[0];
	m[2] = dt_maps[1];
	return m;
}

/* The counter (its last two instructions, r0 = 0; exit, left out) then @p dt's instructions; their count. */
static size_t compose(struct gbpf_insn *out, const struct dt_prog *dt)
{
	const size_t head = N_COUNT - 2;

	memcpy(out, counter, head * sizeof(*out));
	for (size_t i = 0; i < dt->n; i++) {
		out[head + i] = dt->insns[i];
		if (dt->insns[i].code == GBPF_OP_LDDW &&
		    (dt->insns[i].src == GBPF_PSEUDO_MAP_IDX || dt->insns[i].src == GBPF_PSEUDO_MAP_IDX_VALUE))
			out[head + i].imm += 1; /* map 0 is the counter's */
	}
	return head + dt->n;
}

struct random_state {
	uint64_t count, r0[RANDOM_RUNS];
	struct dt_maps_state dt;
};

/* @p n_progs programs in turn, RANDOM_RUNS times, on fresh maps: what they leave in @p o; 0, or -1 (a fault). */
static int random_runs(const struct gbpf_prog_desc *const *progs, size_t n_progs, struct random_state *o)
{
	const struct gbpf_map_desc *md = random_maps();
	struct gbpf_map_instance inst[3];
	struct gbpf_interp *ip[2] = {NULL, NULL};
	GBPF_OPTS(gbpf_interp_opts, io, .bounds_checked = 1, .max_insns = 1000000);
	struct gbpf_gpu_ctx ctx = {.mem_size = 4, .mem_kind = 1, .mem_space = GBPF_SPACE_GLOBAL};
	struct gbpf_interp_region region = {.addr = &ctx, .size = sizeof(ctx), .name = "ctx"};
	uint32_t key[4] = {1, GBPF_SPACE_GLOBAL, 4, 0};
	char err[256];
	int rc = 0, made = 0;

	memset(o, 0, sizeof(*o));
	for (; made < 3; made++)
		if (gbpf_map_instance_create(&inst[made], &md[made], 1)) {
			rc = -1;
			break;
		}
	for (size_t i = 0; !rc && i < n_progs; i++)
		rc = gbpf_interp_create(progs[i], inst, 3, &io, &ip[i], err, sizeof(err));
	for (unsigned r = 0; !rc && r < RANDOM_RUNS; r++)
		for (size_t i = 0; !rc && i < n_progs; i++) {
			uint64_t args[5] = {(uint64_t)(uintptr_t)&ctx};
			struct gbpf_exec_env env = {.maps = inst, .map_cnt = 3, .thread_count = 1};
			struct gbpf_interp_result res;

			rc = gbpf_interp_run(ip[i], &env, args, &region, 1, &res, err, sizeof(err));
			o->r0[r] = res.r0; /* the last program's: the rest's, or the whole one's */
		}
	if (!rc) {
		uint64_t *v = gbpf_map_lookup(&inst[0], key, 0);

		o->count = v ? *v : 0;
		dt_maps_snapshot(&inst[1], &o->dt);
	}
	for (size_t i = 0; i < n_progs; i++)
		gbpf_interp_destroy(ip[i]);
	while (made--)
		gbpf_map_instance_destroy(&inst[made]);
	return rc ? -1 : 0;
}

static void test_split_random(void)
{
	static struct dt_prog dt;
	static struct gbpf_insn insns[N_COUNT + DT_MAX_INSNS];
	unsigned cut = 0, same = 0, faulted = 0, misread = 0;
	char first[160] = "";

	for (uint64_t seed = 1; seed <= RANDOM_RESTS; seed++) {
		struct gbpf_prog_desc d = desc(insns, 0, GBPF_ATTACH_GPU_MEM);
		const struct gbpf_prog_desc *whole[1] = {&d};
		struct random_state want, got;
		struct ptx_split s;

		dt_generate(&dt, seed, 0);
		d.insn_cnt = compose(insns, &dt);
		d.maps = random_maps();
		/*
		 * Every other seed: the random program's first move into r6 made a no-op, so that it may read
		 * the r6 the head left (the increment): cut only where it writes r6 before any read.
		 */
		if (seed % 2)
			for (unsigned k = 0; k < (insns[N_COUNT - 2].code == GBPF_OP_LDDW ? 2u : 1u); k++)
				insns[N_COUNT - 2 + k] = I(GBPF_OP_JA, 0, 0, 0, 0);
		if (ptx_split_find(&d, &s) != 1)
			continue;
		cut++;
		misread += seed % 2;
		{
			const struct gbpf_prog_desc *two[2] = {&s.head, &s.rest};

			if (s.at != N_COUNT - 2 || random_runs(whole, 1, &want) || random_runs(two, 2, &got))
				faulted++;
			else if (want.count == RANDOM_RUNS && !memcmp(&want, &got, sizeof(want)))
				same++;
			else if (!first[0])
				snprintf(first, sizeof(first), "seed %" PRIu64 ": count %" PRIu64 " vs %" PRIu64, seed,
					 want.count, got.count);
		}
		ptx_split_free(&s);
	}
	tap_ok(cut >= RANDOM_RESTS / 20 && same == cut,
	       "random rests after mem_count's counter: %u of %u cut where the counting ends (%u of them without "
	       "their own first r6), all %u the same in the interpreter whole and cut (%u faulted) %s", cut,
	       RANDOM_RESTS, misread, same, faulted, first);
}

/* mem_trace's fragment: the mark names the rest, and the three probes assemble. */
static void test_split_emit(void)
{
	const struct gbpf_prog_desc d = desc(trace, N_TRACE, GBPF_ATTACH_GPU_MEM);
	const struct gbpf_prog_desc *progs[1] = {&d};
	char err[256] = "", *rest, *ptx = emit_fragment(progs, 1, err, sizeof(err));

	tap_ok(ptx && strstr(ptx, ".global .align 4 .u32 " PTX_COUNTER_MARK_PREFIX "0_1_1_7_2;"),
	       "the fragment marks probe 0 a cut counter: flush variant 1, rest 2 (%s)", err);
	rest = ptx ? strstr(ptx, "__gbpf_probe_2(") : NULL;
	tap_ok(rest && strstr(rest, "clz.b64") && !strstr(rest, "[__gbpf_maps+0]"),
	       "the rest keeps the histogram (log2) and never touches the counter's map");
	check_fragment(ptx, "the cut");
	free(ptx);
}

/*
 * A kernel of @p loads 4-byte global loads (unrolled, no loop), then a
 * store, and, when @p exit_func, a device function that ends the thread.
 */
static char *app_ptx(unsigned loads, bool exit_func, const char *target)
{
	char *text = NULL, body[8192] = "";
	size_t o = 0;

	for (unsigned i = 0; i < loads && o < sizeof(body) - 64; i++)
		o += (size_t)snprintf(body + o, sizeof(body) - o, "ld.global.u32 %%r1, [%%rd1+%u];\n", 4 * i);
	if (asprintf(&text,
		     ".version 7.8\n.target %s\n.address_size 64\n"
		     "%s"
		     ".visible .entry app(.param .u64 p)\n{\n.reg .pred %%p<2>;\n.reg .b32 %%r<3>;\n.reg .b64 %%rd<2>;\n"
		     "ld.param.u64 %%rd1, [p];\ncvta.to.global.u64 %%rd1, %%rd1;\nmov.u32 %%r2, %%tid.x;\n"
		     "setp.gt.u32 %%p1, %%r2, 63;\n@%%p1 ret;\n%s"
		     "st.global.u32 [%%rd1], %%r2;\n%sret;\n}\n",
		     target, exit_func ? ".func quit()\n{\nexit;\n}\n" : "", body,
		     exit_func ? "{\ncall quit, ();\n}\n" : "") < 0)
		return NULL;
	return text;
}

static void report_reason(const struct gbpf_ptx_kernel_report *r, void *arg)
{
	if (r->instrumented)
		snprintf(arg, 512, "%s", r->reason);
}

/*
 * @p prog injected at the memory sites of @p app (a module's text; freed
 * here) for a GPU of sm_@p device_sm (0: unknown): the module's text and
 * the kernel's note.
 */
static char *inject_on(const struct gbpf_prog_desc *prog, char *app, unsigned device_sm, char *note)
{
	struct gbpf_ptx_opts o = {.sz = sizeof(o), .arch = "sm_90"};
	struct gbpf_ptx_inject_req req = {.plan = {.sites = GBPF_PTX_SITE_MEM},
					  .report = report_reason, .report_arg = note, .device_sm = device_sm};
	struct gbpf_ptx_module *m = NULL, *f = NULL;
	char err[512] = "", hdr[128], *frag = NULL, *mod = NULL, *out = NULL;

	note[0] = 0;
	if (app && !gbpf_ptx_emit(&prog, 1, &o, &frag, NULL, err, sizeof(err))) {
		gbpf_ptx_header(hdr, sizeof(hdr), "sm_90", 0);
		if (asprintf(&mod, "%s%s", hdr, frag) > 0 &&
		    (m = gbpf_ptx_parse(app, strlen(app), "app.ptx", err, sizeof(err))) &&
		    (f = gbpf_ptx_parse(mod, strlen(mod), "probe.ptx", err, sizeof(err))) &&
		    gbpf_ptx_inject(m, f, &req, err, sizeof(err)) == 1)
			out = gbpf_ptx_print(m, NULL);
	}
	if (!out)
		tap_diag("injection failed: %s", err);
	gbpf_ptx_module_free(f);
	gbpf_ptx_module_free(m);
	free(mod);
	free(frag);
	free(app);
	return out;
}

static char *inject_into(const struct gbpf_prog_desc *prog, char *app, char *note)
{
	return inject_on(prog, app, 0, note);
}

/* @p prog injected at the memory sites of app_ptx(@p loads, @p exit_func, @p target). */
/* app_ptx(2, false, "sm_90") with @p decl before its kernel and @p insn before its last ret; NULL if no memory. */
static char *app_with(const char *decl, const char *insn)
{
	char *app = app_ptx(2, false, "sm_90"), *out = NULL;
	char *entry = app ? strstr(app, ".visible .entry") : NULL, *last = app ? strstr(app, "\nret;\n}") : NULL;

	if (entry && last && asprintf(&out, "%.*s%s%.*s\n%s%s", (int)(entry - app), app, decl, (int)(last - entry),
				      entry, insn, last) < 0)
		out = NULL;
	free(app);
	return out;
}

static char *inject_for(const struct gbpf_prog_desc *prog, unsigned loads, bool exit_func, const char *target,
			char *note)
{
	return inject_into(prog, app_ptx(loads, exit_func, target), note);
}

static char *inject(const struct gbpf_prog_desc *prog, unsigned loads, bool exit_func, char *note)
{
	return inject_for(prog, loads, exit_func, "sm_90", note);
}

static void check_assembles(const char *ptx, const char *what)
{
	char log[1024] = "";

	if (!ptx || !ptxas_path())
		tap_skip("%s: ptxas: %s", what, ptx ? "not found" : "no module");
	else
		tap_ok(!ptxas_check(ptx, "sm_90", log, sizeof(log)), "%s: ptxas accepts the module %s", what, log);
}

static unsigned count_of(const char *text, const char *what)
{
	unsigned n = 0;

	for (const char *p = text; p && (p = strstr(p, what)); p++)
		n++;
	return n;
}

static void test_inject(void)
{
	struct gbpf_insn per_site[N_COUNT];
	struct gbpf_prog_desc d = desc(counter, N_COUNT, GBPF_ATTACH_GPU_MEM);
	char note[512];
	char *ptx = inject(&d, 2, false, note);

	tap_ok(ptx && count_of(ptx, "add.u32 \t%__gbpf_sum0, %__gbpf_sum0, 1;") == 2 &&
		       count_of(ptx, "add.u32 \t%__gbpf_sum1, %__gbpf_sum1, 1;") == 1 &&
		       count_of(ptx, "bra \t__gbpf_sum_exit;") == 2 && strstr(ptx, "__gbpf_sum_exit:"),
	       "two loads and a store: two registers, both rets (the early one predicated) to the flush");
	tap_ok(strstr(note, "3 memory sites summed per thread in 2 registers") != NULL, "the kernel's note: %s", note);
	check_assembles(ptx, "summed");
	/*
	 * At the exit the warp's lanes add each sum; the lowest lane there adds to each key's shared
	 * word the total shifted past the count bits plus its lanes, by a reduction; the block's first
	 * thread waits (a sleep between reads) until each word's count is the block's size and flushes
	 * its sum. The block's first thread zeroes the words at the entry.
	 */
	tap_ok(ptx && count_of(ptx, "activemask.b32 \t%__gbpf_summ0;") == 1 &&
		       count_of(ptx, "redux.sync.add.u32 \t%__gbpf_sum0, %__gbpf_sum0, %__gbpf_summ0;") == 1 &&
		       count_of(ptx, "redux.sync.add.u32 \t%__gbpf_sum1, %__gbpf_sum1, %__gbpf_summ0;") == 1 &&
		       count_of(ptx, "shl.b32 \t%__gbpf_sum1, %__gbpf_sum1, 11;") == 1 &&
		       count_of(ptx, "red.shared.add.u32 \t[__gbpf_sumsh+4], %__gbpf_sum1;") == 1 &&
		       count_of(ptx, "ld.volatile.shared.u32 \t%__gbpf_sum1, [__gbpf_sumsh+4];") == 1 &&
		       count_of(ptx, "and.b32 \t%__gbpf_summ2, %__gbpf_sum1, 2047;") == 1 &&
		       count_of(ptx, "nanosleep.u32 \t64;") == 2 && count_of(ptx, "shr.u32 \t%__gbpf_sum1, %__gbpf_sum1, 11;") == 1 &&
		       !strstr(ptx, "atom.shared") && !strstr(ptx, ".cta.shared") && !strstr(ptx, "%__gbpf_sumw") &&
		       !strstr(ptx, "__gbpf_sumx") && /* the warp mode's local pass costs this mode 4% (counter.c) */
		       count_of(ptx, "bar.sync \t0;") == 1 && strstr(ptx, ".shared .align 16 .b32 __gbpf_sumsh[8];") &&
		       strstr(ptx, "@!%__gbpf_sump st.shared.v4.u32 \t[__gbpf_sumsh+16], {%__gbpf_summ0, %__gbpf_summ0, "
				   "%__gbpf_summ0, %__gbpf_summ0};") &&
		       strstr(note, "added across the block, its first thread flushes"),
	       "the exit adds each key's sum and count in one word, the block's first thread waits for them and flushes");
	{
		const char *wait = ptx ? strstr(ptx, "ld.volatile.shared") : NULL;
		const char *red = ptx ? strstr(ptx, "red.shared.add.u32 \t[__gbpf_sumsh+4]") : NULL;
		/* the exit's test (the entry's zeroing made the same before) */
		const char *first = red ? strstr(red, "mov.u32 \t%__gbpf_summ2, %tid.x;") : NULL;

		tap_ok(red && first && wait && red < first && first < wait,
		       "every warp's lowest lane adds its words before any but the first thread leaves");
	}
	check_assembles(ptx, "summed, the block's first thread flushes");
	free(ptx);

	/* GBPF_PTX_COUNTER_SUM_EXIT=block: the last add to a word flushes it, no one waits */
	setenv("GBPF_PTX_COUNTER_SUM_EXIT", "block", 1);
	ptx = inject(&d, 2, false, note);
	unsetenv("GBPF_PTX_COUNTER_SUM_EXIT");
	tap_ok(ptx && count_of(ptx, "redux.sync.add.u32 \t%__gbpf_sum1, %__gbpf_sum1, %__gbpf_summ0;") == 1 &&
		       count_of(ptx, "shl.b32 \t%__gbpf_sumw1, %__gbpf_sum1, 11;") == 1 &&
		       count_of(ptx, "atom.shared.add.u32 \t%__gbpf_sumw1, [__gbpf_sumsh+4], %__gbpf_sumw1;") == 1 &&
		       count_of(ptx, "and.b32 \t%__gbpf_summ2, %__gbpf_sumw1, 2047;") == 1 &&
		       count_of(ptx, "selp.b32 \t%__gbpf_sum1, %__gbpf_sumw1, 0, %__gbpf_sump;") == 1 &&
		       !strstr(ptx, ".cta.shared") && !strstr(ptx, "ld.shared") && !strstr(ptx, "ld.volatile.shared") &&
		       !strstr(ptx, "nanosleep") && count_of(ptx, "bar.sync \t0;") == 1 &&
		       strstr(ptx, ".shared .align 16 .b32 __gbpf_sumsh[8];") &&
		       strstr(note, "added across the block)"),
	       "GBPF_PTX_COUNTER_SUM_EXIT=block: each key's sum and count in one word, the last add to a word "
	       "flushes it (%s)", note);
	check_assembles(ptx, "summed, the last thread flushes");
	free(ptx);

	/*
	 * Where a thread may wait at a barrier for the first one, none waits at the exit: a kernel
	 * with bar.sync, one that calls a function of another module (it may have one); not for
	 * bar.warp.sync (the lanes of one warp) nor a call of vprintf.
	 */
	{
		static const struct {
			const char *decl, *insn, *what;
			bool first;
		} cases[] = {
			{"", "bar.sync 0;", "bar.sync", false},
			{"", "bar.warp.sync -1;", "bar.warp.sync only", true},
			{".extern .func elsewhere();\n", "call elsewhere, ();", "a call of another module's function", false},
			{".extern .func (.param .b32 r) vprintf(.param .b64 f, .param .b64 a);\n",
			 "{\n.param .b32 r;\n.param .b64 f;\n.param .b64 a;\nst.param.b64 [f], 0;\n"
			 "st.param.b64 [a], 0;\ncall (r), vprintf, (f, a);\n}", "a call of vprintf", true},
		};

		for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
			ptx = inject_into(&d, app_with(cases[c].decl, cases[c].insn), note);
			if (cases[c].first)
				tap_ok(ptx && strstr(ptx, "nanosleep") && strstr(note, "its first thread flushes"),
				       "a kernel with %s: the first thread waits (%s)", cases[c].what, note);
			else
				tap_ok(ptx && !strstr(ptx, "nanosleep") && strstr(ptx, "atom.shared.add.u32") &&
					       strstr(note, "added across the block)"),
				       "a kernel with %s: the last thread flushes, none waits (%s)", cases[c].what, note);
			if (c != 2) /* another module's function needs that module to link */
				check_assembles(ptx, cases[c].what);
			free(ptx);
		}
	}

	setenv("GBPF_PTX_COUNTER_SUM_EXIT", "warp", 1);
	ptx = inject(&d, 2, false, note);
	tap_ok(ptx && count_of(ptx, "redux.sync.add.u32 \t%__gbpf_sum1, %__gbpf_sum1, %__gbpf_summ0;") == 1 &&
		       count_of(ptx, "setp.eq.or.u32 \t%__gbpf_sump, %__gbpf_sum1, 0, %__gbpf_sumnl;") == 1 &&
		       !strstr(ptx, "__gbpf_sumsh") && !strstr(ptx, "bar.sync") && strstr(note, "added across the warp"),
	       "GBPF_PTX_COUNTER_SUM_EXIT=warp: the lowest lane at the exit flushes the warp's sums (%s)", note);
	check_assembles(ptx, "summed per warp");
	{
		/* the reduced sums come back from local memory before the flushes (counter.c, tx_sums_opaque) */
		const char *red = ptx ? strstr(ptx, "redux.sync.add.u32 \t%__gbpf_sum1") : NULL;
		const char *back = red ? strstr(red, "@!%__gbpf_sumnl ld.local.u32 \t%__gbpf_sum1, [%__gbpf_rd2+4];")
				       : NULL;
		const char *flush = back ? strstr(back, "setp.eq.or.u32 \t%__gbpf_sump, %__gbpf_sum0") : NULL;

		tap_ok(back && flush &&
			       count_of(ptx, "@!%__gbpf_sumnl st.local.u32 \t[__gbpf_sumx+4], %__gbpf_sum1;") == 1 &&
			       count_of(ptx, "mul.wide.u32 \t%__gbpf_rd1, %__gbpf_summ1, 4;") == 1,
		       "GBPF_PTX_COUNTER_SUM_EXIT=warp: the lowest lane's reduced sums pass through local memory at an "
		       "address ptxas cannot resolve, between the reduction and the flushes");
	}
	free(ptx);

	setenv("GBPF_PTX_COUNTER_SUM_EXIT", "grid", 1);
	ptx = inject(&d, 2, false, note);
	tap_ok(ptx && strstr(ptx, "__gbpf_sumsh") &&
		       strstr(note, "its first thread flushes); GBPF_PTX_COUNTER_SUM_EXIT is not lane, warp, block or first: ignored"),
	       "GBPF_PTX_COUNTER_SUM_EXIT=grid: the block's sums, and the note says the value was ignored (%s)", note);
	free(ptx);

	setenv("GBPF_PTX_COUNTER_SUM_EXIT", "lane", 1);
	ptx = inject(&d, 2, false, note);
	unsetenv("GBPF_PTX_COUNTER_SUM_EXIT");
	tap_ok(ptx && !strstr(ptx, "redux.sync") && !strstr(ptx, "%__gbpf_summ") &&
		       count_of(ptx, "setp.eq.u32 \t%__gbpf_sump, %__gbpf_sum1, 0;") == 1 &&
		       !strstr(note, "added across"),
	       "GBPF_PTX_COUNTER_SUM_EXIT=lane: each lane flushes its own sums (%s)", note);
	check_assembles(ptx, "summed per lane");
	free(ptx);

	/*
	 * A kernel that branches back to its first instruction: the block's words are zeroed, and
	 * its threads wait at the barrier, once, before the label (else a thread going round would
	 * zero what others added and wait where the others do not).
	 */
	ptx = inject_into(&d, strdup(".version 7.8\n.target sm_90\n.address_size 64\n"
				     ".visible .entry app(.param .u64 p)\n{\n.reg .b32 %r<3>;\n.reg .b64 %rd<2>;\n"
				     ".reg .pred %p<2>;\n$L_top:\nld.param.u64 %rd1, [p];\n"
				     "cvta.to.global.u64 %rd1, %rd1;\nld.global.u32 %r1, [%rd1];\nadd.u32 %r1, %r1, 1;\n"
				     "st.global.u32 [%rd1], %r1;\nsetp.lt.u32 %p1, %r1, 9;\n@%p1 bra $L_top;\nret;\n}\n"),
			  note);
	{
		const char *bar = ptx ? strstr(ptx, "bar.sync") : NULL, *top = ptx ? strstr(ptx, "$L_top:") : NULL;
		const char *zero = ptx ? strstr(ptx, "st.shared.v4.u32 \t[__gbpf_sumsh+16]") : NULL;

		tap_ok(bar && top && zero && zero < bar && bar < top && count_of(ptx, "bar.sync") == 1,
		       "a loop back to the kernel's first instruction: the zeroing and the barrier before its label");
		check_assembles(ptx, "a loop back to the first instruction");
	}
	free(ptx);

	/* redux.sync is sm_80's: a module for sm_75 flushes lane by lane, on a GPU not known */
	ptx = inject_for(&d, 2, false, "sm_75", note);
	tap_ok(ptx && !strstr(ptx, "redux.sync") && !strstr(ptx, "__gbpf_sumsh") && strstr(ptx, ".target sm_75") &&
		       count_of(ptx, "bra \t__gbpf_sum_exit;") == 2 && !strstr(note, "added across"),
	       "a module for sm_75, the GPU not known: summed, each lane flushes its own sums (%s)", note);
	free(ptx);
	/* ... and on an sm_90 GPU its target is raised to sm_80: the block's sums */
	ptx = inject_on(&d, app_ptx(2, false, "sm_75"), 90, note);
	tap_ok(ptx && strstr(ptx, ".target sm_80\n") && !strstr(ptx, "sm_75") && strstr(ptx, "redux.sync") &&
		       strstr(note, "added across the block"),
	       "a module for sm_75 on an sm_90 GPU: .target raised to sm_80, the block's sums (%s)", note);
	check_assembles(ptx, "sm_75 raised to sm_80");
	free(ptx);
	/* one for sm_86 is not lowered, one for sm_90 not touched */
	ptx = inject_on(&d, app_ptx(2, false, "sm_86"), 90, note);
	tap_ok(ptx && strstr(ptx, ".target sm_86\n") && strstr(note, "added across the block"),
	       "a module for sm_86 on an sm_90 GPU: .target stays, the block's sums");
	free(ptx);

	ptx = inject(&d, 2, true, note);
	tap_ok(ptx && !strstr(ptx, "%__gbpf_sum") && strstr(note, "may end the thread (exit)"),
	       "a device function that may end the thread: no sums, and the note says why (%s)", note);
	free(ptx);

	/* a key of the site's index: a register per site, 8 at most */
	memcpy(per_site, counter, sizeof(per_site));
	per_site[0] = I(GBPF_LDX | GBPF_MEM | GBPF_W, 2, 1, 52, 0);
	d = desc(per_site, N_COUNT, GBPF_ATTACH_GPU_MEM);
	ptx = inject(&d, 11, false, note);
	tap_ok(ptx && count_of(ptx, "\tadd.u32 \t%__gbpf_sum7,") == 1 && !strstr(ptx, "%__gbpf_sum8") &&
		       strstr(note, "8 memory sites summed per thread in 8 registers") &&
		       strstr(note, "4 memory sites of keys past the first 8 run the counter"),
	       "a key per site, 12 sites: 8 summed, 4 run the probe (%s)", note);
	check_assembles(ptx, "a key per site");
	free(ptx);

	/* mem_trace: summed, and its rest inlined at every site */
	d = desc(trace, N_TRACE, GBPF_ATTACH_GPU_MEM);
	ptx = inject(&d, 2, false, note);
	{
		const char *k = ptx ? strstr(ptx, ".entry app(") : NULL, *end = k ? strstr(k, "\n}\n") : NULL;
		unsigned clz = 0;

		for (const char *p = k; p && p < end && (p = strstr(p, "clz.b64")) && p < end; p++)
			clz++;
		tap_ok(ptx && count_of(ptx, "add.u32 \t%__gbpf_sum0, %__gbpf_sum0, 1;") == 2 && clz == 3 &&
			       strstr(note, "what the probe does after counting runs at each site"),
		       "mem_trace: three sites summed in two registers, the histogram's rest at each (%u) (%s)", clz,
		       note);
		check_assembles(ptx, "mem_trace cut");
	}
	free(ptx);

	/*
	 * A sum flushed at its site (here every 8th access: GBPF_PTX_COUNTER_SUM_FLUSH) passes no
	 * address to the head's flush; the rest, after it, must get the access's address again.
	 */
	setenv("GBPF_PTX_COUNTER_SUM_FLUSH", "8", 1);
	ptx = inject(&d, 2, false, note);
	unsetenv("GBPF_PTX_COUNTER_SUM_FLUSH");
	{
		unsigned flushes = 0, readdressed = 0;

		/* each site's check of its sum, then its flush, then the label after it */
		for (const char *p = ptx; p && (p = strstr(p, "setp.lt.u32 \t%__gbpf_sump")); p++) {
			const char *label = strstr(p, "\n__gbpf_L"), *scope = label ? strstr(label, "{") : NULL;
			const char *cvta = label ? strstr(label, "cvta.global.u64 \t%__gbpf_rd1, %__gbpf_rd1;") : NULL;

			flushes++;
			readdressed += cvta && scope && cvta < scope;
		}
		tap_ok(ptx && count_of(ptx, "setp.lt.u32 \t%__gbpf_sump, %__gbpf_sum0, 8;") == 2 && flushes == 3 &&
			       readdressed == 3,
		       "mem_trace flushed at its sites every 8 accesses: after each of the %u flushes the rest gets "
		       "the access's address again (%u)", flushes, readdressed);
		check_assembles(ptx, "mem_trace flushed every 8");
	}
	free(ptx);
}

int main(void)
{
	test_find();
	test_emit();
	test_split();
	test_split_runs();
	test_split_random();
	test_split_emit();
	test_inject();
	return tap_done();
}
