/* SPDX-License-Identifier: MIT */
/* Unit tests of the eBPF -> PTX translator: forms, naming, errors, ptxas acceptance. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gbpf/helper_ids.h>

#include "cuda_test_util.h"
#include "plugins/cuda/ptx_codegen.h"
#include "tests/tap.h"

#define INSN(c, d, s, o, i) ((struct gbpf_insn){.code = (c), .dst = (d), .src = (s), .off = (o), .imm = (i)})

static struct gbpf_prog_desc mkprog(const struct gbpf_insn *insns, size_t n,
				    const struct gbpf_map_desc *maps, size_t map_cnt)
{
	struct gbpf_prog_desc p = {
		.sz = sizeof(p), .name = "t", .section = "gpu/entry/k", .insns = insns,
		.insn_cnt = n, .maps = maps, .map_cnt = map_cnt, .source_file = "unit.o",
	};
	return p;
}

static int emit(const struct gbpf_prog_desc *p, uint32_t flags, char **ptx, char *err, size_t esz)
{
	struct gbpf_ptx_opts o = {.sz = sizeof(o), .flags = flags, .arch = "sm_90"};

	return gbpf_ptx_emit(&p, 1, &o, ptx, NULL, err, esz);
}

/* Every name declared at module scope (outside any { }) starts with __gbpf_. */
static int module_names_prefixed(const char *ptx, char *bad, size_t bad_size)
{
	int depth = 0;
	const char *line = ptx;

	while (line && *line) {
		const char *end = strchr(line, '\n'), *p;
		size_t len = end ? (size_t)(end - line) : strlen(line);

		if (depth == 0 && (strncmp(line, ".visible", 8) == 0 || strncmp(line, ".func", 5) == 0 ||
				   strncmp(line, ".global", 7) == 0 || strncmp(line, ".const", 6) == 0)) {
			/* the declared name: last identifier before '(' / '[' / ';' outside params */
			const char *stop = line + len, *name = NULL;

			int paren = 0;

			for (p = line; p < stop; p++) {
				if (*p == '(' && paren == 0 && name && p > name)
					break;
				/* skip a return parameter list: ".func (.param .b8 r[24]) name(" */
				if (*p == '(' || *p == ')') {
					paren += *p == '(' ? 1 : -1;
					name = p + 1;
					continue;
				}
				if (paren)
					continue;
				if (*p == ' ')
					name = p + 1;
				if (*p == '[' || *p == ';')
					break;
			}
			if (!name || strncmp(name, "__gbpf_", 7) != 0) {
				snprintf(bad, bad_size, "%.*s", (int)len, line);
				return 0;
			}
		}
		for (p = line; p < line + len; p++) {
			if (*p == '{')
				depth++;
			else if (*p == '}')
				depth--;
		}
		line = end ? end + 1 : NULL;
	}
	return 1;
}

static void assemble(const char *what, const char *ptx, int fragment)
{
	char log[2048], hdr[128], *mod;

	if (!ptxas_path()) {
		tap_skip("%s: ptxas not found", what);
		return;
	}
	if (fragment) {
		gbpf_ptx_header(hdr, sizeof(hdr), "sm_90", 0);
		mod = malloc(strlen(hdr) + strlen(ptx) + 1);
		if (!mod) {
			tap_ok(0, "oom");
			return;
		}
		strcpy(mod, hdr);
		strcat(mod, ptx);
	} else {
		mod = strdup(ptx);
	}
	tap_ok(mod && ptxas_check(mod, "sm_90", log, sizeof(log)) == 0, "%s assembles for sm_90 %s", what,
	       log);
	free(mod);
}

/* bpf_ktime_get_ns reads the host's CLOCK_MONOTONIC: %globaltimer less the module's __gbpf_clock_off. */
static void test_ktime(void)
{
	const struct gbpf_insn prog[] = {
		INSN(0x85, 0, 0, 0, GBPF_HELPER_KTIME_GET_NS),
		INSN(0x95, 0, 0, 0, 0),
	};
	struct gbpf_prog_desc p = mkprog(prog, 2, NULL, 0);
	char err[512], *ptx = NULL;
	int rc = emit(&p, 0, &ptx, err, sizeof(err));

	tap_ok(rc == 0 && ptx && strstr(ptx, ".visible .global .align 8 .u64 __gbpf_clock_off;") &&
		       strstr(ptx, "mov.u64 %r0, %globaltimer;\nld.global.u64 %t10, [__gbpf_clock_off];\n"
				   "sub.u64 %r0, %r0, %t10;"),
	       "bpf_ktime_get_ns: the GPU timer less the module's host clock offset (%s)", rc ? err : "ok");
	free(ptx);
}

/*
 * The context pointer as a register fact: kept by moves and met at joins, a
 * context load after a join goes through the entry's copy %rctx (which the
 * injector's fold resolves to the site's values); a register that is not
 * the pointer's start on every way in is loaded through as it is.
 */
static void ctx_fact_case(const char *what, const struct gbpf_insn *insns, size_t n, const char *must,
			  const char *must_not)
{
	struct gbpf_prog_desc p = mkprog(insns, n, NULL, 0);
	char err[512], *ptx = NULL;
	int rc;

	p.attach.kind = GBPF_ATTACH_GPU_MEM;
	rc = emit(&p, 0, &ptx, err, sizeof(err));
	tap_ok(rc == 0 && ptx && strstr(ptx, must) && !strstr(ptx, must_not), "%s: has '%s', no '%s' (%s)", what,
	       must, must_not, rc ? err : "ok");
	if (ptx)
		assemble(what, ptx, 1);
	free(ptx);
}

static void test_ctx_fact(void)
{
	/* r6 = ctx; r2 = ctx->[24]; if (r2 == 0) goto 4; r7 = 1; 4: r0 = *(u64 *)(r6 + 32) */
	const struct gbpf_insn kept[] = {INSN(0xbf, 6, 1, 0, 0), INSN(0x79, 2, 1, 24, 0), INSN(0x15, 2, 0, 1, 0),
					 INSN(0xb7, 7, 0, 0, 1), INSN(0x79, 0, 6, 32, 0), INSN(0x95, 0, 0, 0, 0)};
	/* the same with r6 += 8 on one way: not the pointer's start at the join */
	const struct gbpf_insn moved[] = {INSN(0xbf, 6, 1, 0, 0), INSN(0x79, 2, 1, 24, 0), INSN(0x15, 2, 0, 1, 0),
					  INSN(0x07, 6, 0, 0, 8), INSN(0x79, 0, 6, 32, 0), INSN(0x95, 0, 0, 0, 0)};

	ctx_fact_case("context pointer in r6 over a join: loaded through %rctx", kept, 6,
		      "ld.u64 %r0, [%rctx+32];", "[%r6+32]");
	ctx_fact_case("r6 moved inside the context on one way: loaded through r6", moved, 6,
		      "ld.u64 %r0, [%r6+32];", "[%rctx+32]");
}

/*
 * 32-bit add, sub, mul and neg are the 64-bit operation masked to the low
 * half, never the 32-bit instruction between a truncation and a zero
 * extension: the CUDA 13.0 JIT miscompiles that form of a subtraction in a
 * loop (emit_alu32_wide; seed 1779 of the differential test on the H200).
 */
static void test_alu32_wide(void)
{
	const struct gbpf_insn prog[] = {
		INSN(0xb7, 6, 0, 0, 0x7fffffff), /* r6 = 0x7fffffff */
		INSN(0xb7, 7, 0, 0, 5),          /* r7 = 5 */
		INSN(0x84, 6, 0, 0, 0),          /* w6 = -w6 */
		INSN(0x14, 6, 0, 0, 3),          /* w6 -= 3 */
		INSN(0x1c, 7, 6, 0, 0),          /* w7 -= w6 */
		INSN(0x04, 7, 0, 0, -9),         /* w7 += -9 */
		INSN(0x0c, 6, 7, 0, 0),          /* w6 += w7 */
		INSN(0x24, 6, 0, 0, -1),         /* w6 *= -1 */
		INSN(0x2c, 6, 7, 0, 0),          /* w6 *= w7 */
		INSN(0xbf, 0, 6, 0, 0),          /* r0 = r6 */
		INSN(0x95, 0, 0, 0, 0),
	};
	struct gbpf_prog_desc p = mkprog(prog, sizeof(prog) / sizeof(prog[0]), NULL, 0);
	char err[512], *ptx = NULL, *body;
	int rc = emit(&p, 0, &ptx, err, sizeof(err));

	tap_ok(rc == 0, "alu32: emitted (%s)", rc ? err : "ok");
	if (rc)
		return;
	body = strstr(ptx, "__gbpf_probe_0");
	tap_ok(body && !strstr(body, "neg.s32") && !strstr(body, "sub.s32") && !strstr(body, "add.s32") &&
		       !strstr(body, "mul.lo.s32") && !strstr(body, "cvt.u64.u32 %r6"),
	       "alu32: no 32-bit add / sub / mul / neg and no zero extension of their result");
	tap_ok(body && strstr(body, "sub.s64 %r6, 0, %r6;\nand.b64 %r6, %r6, 0xFFFFFFFF;\n") &&
		       strstr(body, "sub.s64 %r6, %r6, 0x0000000000000003;\nand.b64 %r6, %r6, 0xFFFFFFFF;\n") &&
		       strstr(body, "sub.s64 %r7, %r7, %r6;\nand.b64 %r7, %r7, 0xFFFFFFFF;\n") &&
		       strstr(body, "add.s64 %r7, %r7, 0xFFFFFFFFFFFFFFF7;\nand.b64 %r7, %r7, 0xFFFFFFFF;\n") &&
		       strstr(body, "add.s64 %r6, %r6, %r7;\nand.b64 %r6, %r6, 0xFFFFFFFF;\n") &&
		       strstr(body, "mul.lo.s64 %r6, %r6, 0xFFFFFFFFFFFFFFFF;\nand.b64 %r6, %r6, 0xFFFFFFFF;\n") &&
		       strstr(body, "mul.lo.s64 %r6, %r6, %r7;\nand.b64 %r6, %r6, 0xFFFFFFFF;\n"),
	       "alu32: each as the 64-bit operation masked to 32 bits");
	assemble("alu32 probe", ptx, 1);
	free(ptx);
}

int main(void)
{
	static const struct gbpf_map_desc maps[2] = {
		{.sz = sizeof(struct gbpf_map_desc), .name = "counts", .type = GBPF_MAP_TYPE_HASH,
		 .key_size = 4, .value_size = 8, .max_entries = 1024},
		{.sz = sizeof(struct gbpf_map_desc), .name = ".bss", .type = GBPF_MAP_TYPE_ARRAY,
		 .key_size = 4, .value_size = 16, .max_entries = 1, .origin = GBPF_MAP_ORIGIN_BSS},
	};
	test_ktime();
	test_ctx_fact();
	test_alu32_wide();
	/* A probe using most helper kinds, a local call, an array value and atomics. */
	const struct gbpf_insn probe[] = {
		INSN(0x85, 0, 0, 0, GBPF_HELPER_GPU_THREAD_IDX - 0), /* 0 r1..r3 junk: fine for codegen */
		INSN(0x85, 0, 0, 0, GBPF_HELPER_GPU_GLOBALTIMER),    /* 1 */
		INSN(0x7b, 10, 0, -8, 0),                             /* 2 *(u64 *)(r10-8) = r0 */
		INSN(0xbf, 2, 10, 0, 0),                              /* 3 r2 = r10 */
		INSN(0x07, 2, 0, 0, -8),                              /* 4 r2 += -8 */
		INSN(0x18, 1, 5, 0, 0), INSN(0, 0, 0, 0, 0),          /* 5 r1 = map[0] */
		INSN(0x85, 0, 0, 0, GBPF_HELPER_MAP_LOOKUP_ELEM),     /* 7 */
		INSN(0x15, 0, 0, 2, 0),                               /* 8 if r0 == 0 goto 11 */
		INSN(0xb7, 1, 0, 0, 1),                               /* 9 */
		INSN(0xdb, 0, 1, 0, GBPF_ATOMIC_ADD),                 /* 10 lock *(u64 *)(r0) += r1 */
		INSN(0x18, 6, 6, 0, 1), INSN(0, 0, 0, 0, 8),          /* 11 r6 = &.bss value + 8 */
		INSN(0x85, 0, 1, 0, 0),                               /* 13 call local 15 */
		INSN(0x95, 0, 0, 0, 0),                               /* 14 exit */
		INSN(0xb7, 0, 0, 0, 7),                               /* 15 subprogram: r0 = 7 */
		INSN(0x95, 0, 0, 0, 0),
	};
	struct gbpf_insn fixed[sizeof(probe) / sizeof(probe[0])];
	struct gbpf_prog_desc p;
	char err[512], bad[256] = "";
	char *ptx = NULL;
	int rc;

	memcpy(fixed, probe, sizeof(probe));
	fixed[13].imm = 1; /* pc 13 + 1 + 1 = 15 */
	p = mkprog(fixed, sizeof(fixed) / sizeof(fixed[0]), maps, 2);

	rc = emit(&p, 0, &ptx, err, sizeof(err));
	tap_ok(rc == 0, "probe fragment emitted (%s)", rc ? err : "ok");
	if (!rc) {
		tap_ok(strstr(ptx, ".visible .func (.param .b64 __ret) __gbpf_probe_0(.param .b64 __ctx)") != NULL,
		       "fragment declares __gbpf_probe_0 with the ctx parameter");
		tap_ok(strstr(ptx, ".visible .global .align 8 .u64 __gbpf_maps[2];") != NULL,
		       "map table is __gbpf_maps[2]");
		tap_ok(!strstr(ptx, ".version") && !strstr(ptx, ".entry"), "fragment has no header and no entry");
		tap_ok(module_names_prefixed(ptx, bad, sizeof(bad)), "every module-scope name starts with __gbpf_ %s", bad);
		tap_ok(strstr(ptx, "%globaltimer") && strstr(ptx, "%tid.x"), "timer and thread index inline");
		tap_ok(strstr(ptx, "mov.u64 %r0, %globaltimer;\n") && !strstr(ptx, "sub.u64 %r0, %r0, %t10;"),
		       "gbpf_gpu_globaltimer: the raw GPU timer");
		tap_ok(strstr(ptx, "[__gbpf_stack+504]") != NULL, "r10-8 addressed as .local frame");
		tap_ok(!strstr(ptx, "membar.sys") && !strstr(ptx, "fence.sc.sys"),
		       "no system-scope fence without a helper that needs one");
		tap_ok(strstr(ptx, "match.any.sync.b64") && strstr(ptx, "match.all.sync.b64") &&
			       strstr(ptx, "popc.b32") && strstr(ptx, "red.global.add.u64 [%t5], %t8;"),
		       "counter update aggregated within the warp (one atomic of value x peers)");
		/* the counter is the value an inlined hash lookup returned: global memory */
		tap_ok(strstr(ptx, "cvta.to.global.u64 %t5, %t5;") && !strstr(ptx, "isspacep.local"),
		       "atomic through a map value: .global, no .local check");
		assemble("probe fragment", ptx, 1);
		free(ptx);
	}
	rc = emit(&p, GBPF_PTX_KERNEL, &ptx, err, sizeof(err));
	tap_ok(rc == 0, "run kernel emitted (%s)", rc ? err : "ok");
	if (!rc) {
		tap_ok(strstr(ptx, ".version 7.8\n.target sm_90\n") && strstr(ptx, ".entry __gbpf_run("),
		       "run kernel is a full module with entry __gbpf_run");
		assemble("run kernel", ptx, 0);
		free(ptx);
	}

	/* Two programs of one object share one map table and one helper set. */
	{
		const struct gbpf_prog_desc *two[2] = {&p, &p};

		rc = gbpf_ptx_emit(two, 2, NULL, &ptx, NULL, err, sizeof(err));
		if (getenv("GBPF_TEST_DUMP") && !rc)
			fputs(ptx, stderr);
		tap_ok(rc == 0 && strstr(ptx, "__gbpf_probe_1(") && strstr(ptx, "__gbpf_p1_f1"),
		       "set of two programs: __gbpf_probe_0 and __gbpf_probe_1");
		if (!rc) {
			assemble("two-program fragment", ptx, 1);
			free(ptx);
		}
	}

	/* Errors say where. */
	{
		const struct gbpf_insn j[] = {INSN(0x05, 0, 0, 5, 0), INSN(0x95, 0, 0, 0, 0)};
		struct gbpf_prog_desc q = mkprog(j, 2, NULL, 0);

		rc = emit(&q, 0, &ptx, err, sizeof(err));
		tap_ok(rc == -EINVAL && strstr(err, "unit.o") && strstr(err, "gpu/entry/k") &&
			       strstr(err, "insn 0"),
		       "jump out of the program rejected with file, section, insn: %s", err);
	}
	{
		const struct gbpf_insn j[] = {INSN(0x18, 1, 5, 0, 3), INSN(0, 0, 0, 0, 0), INSN(0x95, 0, 0, 0, 0)};
		struct gbpf_prog_desc q = mkprog(j, 3, maps, 2);

		rc = emit(&q, 0, &ptx, err, sizeof(err));
		tap_ok(rc == -EINVAL && strstr(err, "insn 0") && strstr(err, "map index 3"),
		       "map index out of range rejected: %s", err);
	}
	{
		const struct gbpf_insn j[] = {INSN(0x85, 0, 0, 0, 9999), INSN(0x95, 0, 0, 0, 0)};
		struct gbpf_prog_desc q = mkprog(j, 2, NULL, 0);

		rc = emit(&q, 0, &ptx, err, sizeof(err));
		tap_ok(rc == -ENOTSUP && strstr(err, "helper 9999"), "unknown helper rejected: %s", err);
	}
	{
		const struct gbpf_insn j[] = {INSN(0xb7, 10, 0, 0, 1), INSN(0x95, 0, 0, 0, 0)};
		struct gbpf_prog_desc q = mkprog(j, 2, NULL, 0);

		rc = emit(&q, 0, &ptx, err, sizeof(err));
		tap_ok(rc == -EINVAL && strstr(err, "r10"), "write to r10 rejected: %s", err);
	}
	{
		const struct gbpf_insn j[] = {INSN(0x18, 1, 0, 0, 1)};
		struct gbpf_prog_desc q = mkprog(j, 1, NULL, 0);

		rc = emit(&q, 0, &ptx, err, sizeof(err));
		tap_ok(rc == -EINVAL && strstr(err, "second slot"), "truncated wide load rejected: %s", err);
	}
	{
		struct gbpf_ptx_opts o = {.sz = sizeof(o), .flags = GBPF_PTX_KERNEL, .arch = "sm_90", .ptx_version = 70};
		const struct gbpf_insn j[] = {INSN(0x95, 0, 0, 0, 0)};
		struct gbpf_prog_desc q = mkprog(j, 1, NULL, 0);
		const struct gbpf_prog_desc *qp = &q;

		rc = gbpf_ptx_emit(&qp, 1, &o, &ptx, NULL, err, sizeof(err));
		tap_ok(rc == -EINVAL, "PTX 7.0 for sm_90 refused: %s", err);
	}
	tap_ok(gbpf_ptx_helper_supported(GBPF_HELPER_GPU_LANE_ID) && gbpf_ptx_helper_supported(1) &&
		       !gbpf_ptx_helper_supported(GBPF_HELPER_GET_CURRENT_PID_TGID + 1000),
	       "helper support query");
	return tap_done();
}
