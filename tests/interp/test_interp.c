/* SPDX-License-Identifier: MIT */
/*
 * tests/interp/test_interp.c - interpreter behaviour beyond the
 * conformance suite: faults in checked mode (named instruction and
 * address, access not performed), budget, call depth and frames, division
 * corners, atomics, callx, helpers and maps.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <gbpf/asm.h>
#include <gbpf/helper_ids.h>

#include "core/interp/interp.h"
#include "maps/map.h"
#include "tests/tap.h"

static uint64_t h_add(struct gbpf_exec_env *env, uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
		      uint64_t r5)
{
	(void)env;
	(void)r3;
	(void)r4;
	(void)r5;
	return r1 + r2;
}

static gbpf_host_helper_fn test_lookup(uint32_t id)
{
	return id == 77 ? h_add : NULL;
}

struct run_out {
	int ret;
	struct gbpf_interp_result res;
	char err[512];
};

/* Assemble, create and run once; ret is the first failing step's code. */
static struct run_out run_text(const char *text, int checked, uint64_t max_insns,
			       struct gbpf_map_instance *maps, size_t map_cnt,
			       const uint64_t args[5], const struct gbpf_interp_region *regions,
			       size_t region_cnt)
{
	GBPF_OPTS(gbpf_interp_opts, opts, .bounds_checked = checked, .max_insns = max_insns,
		  .helper_lookup = test_lookup);
	struct gbpf_prog_desc prog = {.sz = sizeof(prog), .name = "t"};
	struct run_out o;
	struct gbpf_interp *ip = NULL;
	struct gbpf_insn *insns = NULL;
	struct gbpf_exec_env env;
	size_t cnt;

	memset(&o, 0, sizeof(o));
	memset(&env, 0, sizeof(env));
	env.maps = maps;
	env.map_cnt = map_cnt;
	env.thread_count = 1;
	o.ret = gbpf_asm(text, &insns, &cnt, o.err, sizeof(o.err));
	if (o.ret)
		return o;
	prog.insns = insns;
	prog.insn_cnt = cnt;
	o.ret = gbpf_interp_create(&prog, maps, map_cnt, &opts, &ip, o.err, sizeof(o.err));
	if (!o.ret)
		o.ret = gbpf_interp_run(ip, &env, args, regions, region_cnt, &o.res, o.err,
					sizeof(o.err));
	gbpf_interp_destroy(ip);
	free(insns);
	return o;
}

static void expect_r0(const char *what, const char *text, uint64_t want)
{
	for (int checked = 0; checked < 2; checked++) {
		struct run_out o = run_text(text, checked, 0, NULL, 0, NULL, NULL, 0);

		tap_ok(o.ret == 0 && o.res.r0 == want, "%s [%s]: r0 = 0x%llx, want 0x%llx %s", what,
		       checked ? "checked" : "fast", (unsigned long long)o.res.r0,
		       (unsigned long long)want, o.err);
	}
}

static void division_corners(void)
{
	expect_r0("div by 0 register = 0", "mov %r0, 7\nmov %r1, 0\ndiv %r0, %r1\nexit", 0);
	expect_r0("div32 by 0 imm = 0", "mov %r0, 7\ndiv32 %r0, 0\nexit", 0);
	expect_r0("mod by 0 keeps dst", "mov %r0, 7\nmov %r1, 0\nmod %r0, %r1\nexit", 7);
	expect_r0("mod32 by 0 keeps low 32 bits", "lddw %r0, 0x100000007\nmod32 %r0, 0\nexit", 7);
	expect_r0("sdiv INT64_MIN / -1 wraps",
		  "lddw %r0, 0x8000000000000000\nsdiv %r0, -1\nexit", 0x8000000000000000ull);
	expect_r0("smod INT64_MIN % -1 = 0", "lddw %r0, 0x8000000000000000\nsmod %r0, -1\nexit", 0);
	expect_r0("sdiv32 INT32_MIN / -1 wraps",
		  "mov32 %r0, 0x80000000\nsdiv32 %r0, -1\nexit", 0x80000000ull);
	expect_r0("sdiv truncates toward zero", "mov %r0, -7\nsdiv %r0, 2\nexit", (uint64_t)-3);
	expect_r0("smod sign follows dividend", "mov %r0, -7\nsmod %r0, 2\nexit", (uint64_t)-1);
	expect_r0("smod by 0 keeps dst", "mov %r0, -7\nsmod %r0, 0\nexit", (uint64_t)-7);
	expect_r0("lsh count masked to 6 bits", "mov %r0, 1\nmov %r1, 65\nlsh %r0, %r1\nexit", 2);
	expect_r0("rsh32 count masked to 5 bits", "mov32 %r0, 8\nrsh32 %r0, 33\nexit", 4);
	expect_r0("arsh32 zero-extends its result",
		  "mov32 %r0, 0x80000000\narsh32 %r0, 4\nexit", 0xf8000000ull);
}

static void atomics(void)
{
	expect_r0("fetch add returns old, adds",
		  "stdw [%r10-8], 5\nmov %r1, 3\nlock fetch add [%r10-8], %r1\n"
		  "ldxdw %r0, [%r10-8]\nlsh %r0, 8\nor %r0, %r1\nexit",
		  (8 << 8) | 5);
	expect_r0("xchg32 zero-extends the old value",
		  "stw [%r10-4], -1\nmov %r1, 1\nlock xchg32 [%r10-4], %r1\nmov %r0, %r1\nexit",
		  0xffffffffull);
	expect_r0("cmpxchg success stores and returns old",
		  "stdw [%r10-8], 9\nmov %r0, 9\nmov %r1, 4\nlock cmpxchg [%r10-8], %r1\n"
		  "ldxdw %r2, [%r10-8]\nlsh %r0, 8\nor %r0, %r2\nexit",
		  (9 << 8) | 4);
	expect_r0("cmpxchg failure leaves memory, returns current",
		  "stdw [%r10-8], 9\nmov %r0, 1\nmov %r1, 4\nlock cmpxchg [%r10-8], %r1\n"
		  "ldxdw %r2, [%r10-8]\nlsh %r0, 8\nor %r0, %r2\nexit",
		  (9 << 8) | 9);
	expect_r0("and/or/xor32 without fetch",
		  "stw [%r10-4], 0xf0\nmov %r1, 0x3c\nlock and32 [%r10-4], %r1\n"
		  "lock xor32 [%r10-4], %r1\nlock or32 [%r10-4], %r1\nldxw %r0, [%r10-4]\nexit",
		  0x3c);
	{
		struct run_out o = run_text("mov %r1, 1\nlock add [%r10-12], %r1\nmov %r0, 0\nexit", 1,
					    0, NULL, 0, NULL, NULL, 0);

		tap_ok(o.ret == -GBPF_ERRNO__FAULT && strstr(o.err, "misaligned 8-byte atomic"),
		       "checked mode: misaligned atomic faults (%s)", o.err);
	}
}

static void faults(void)
{
	uint8_t buf[32];
	struct gbpf_interp_region ro = {buf, 16, 0, "ctx"}, rw = {buf, 16, 1, "data"};
	uint64_t args[5] = {(uint64_t)(uintptr_t)buf, 16};
	char want[160];
	struct run_out o;

	memset(buf, 0xab, sizeof(buf));
	o = run_text("mov %r0, 0\nldxdw %r0, [%r1+8]\nldxdw %r0, [%r1+9]\nexit", 1, 0, NULL, 0,
		     args, &rw, 1);
	snprintf(want, sizeof(want), "out-of-bounds read of 8 bytes at 0x%llx",
		 (unsigned long long)(uintptr_t)(buf + 9));
	tap_ok(o.ret == -GBPF_ERRNO__FAULT &&
		       strstr(o.err, "instruction 2 (ldxdw %r0, [%r1+9])") && strstr(o.err, want),
	       "read crossing the region end names instruction and address (%s)", o.err);
	tap_ok(o.res.r0 == 0xabababababababab, "the in-bounds load before it ran");
	o = run_text("stb [%r1+16], 1\nmov %r0, 0\nexit", 1, 0, NULL, 0, args, &rw, 1);
	tap_ok(o.ret == -GBPF_ERRNO__FAULT && buf[16] == 0xab,
	       "out-of-bounds store reported and not performed (%s)", o.err);
	o = run_text("stb [%r1+0], 1\nmov %r0, 0\nexit", 1, 0, NULL, 0, args, &ro, 1);
	tap_ok(o.ret == -GBPF_ERRNO__FAULT && strstr(o.err, "read-only ctx") && buf[0] == 0xab,
	       "store into read-only region refused (%s)", o.err);
	o = run_text("stb [%r1+0], 1\nmov %r0, 0\nexit", 0, 0, NULL, 0, args, NULL, 0);
	tap_ok(o.ret == 0 && buf[0] == 1, "fast mode performs accesses unchecked");
	o = run_text("ldxdw %r0, [%r10+0]\nexit", 1, 0, NULL, 0, NULL, NULL, 0);
	tap_ok(o.ret == -GBPF_ERRNO__FAULT && strstr(o.err, "instruction 0"),
	       "load above the stack top faults (%s)", o.err);
	o = run_text("ldxb %r0, [%r10-513]\nexit", 1, 0, NULL, 0, NULL, NULL, 0);
	tap_ok(o.ret == -GBPF_ERRNO__FAULT, "load below frame 0 faults (%s)", o.err);
	o = run_text("ldxb %r0, [%r10-512]\nexit", 1, 0, NULL, 0, NULL, NULL, 0);
	tap_ok(o.ret == 0 && o.res.r0 == 0, "lowest byte of frame 0 is readable and zeroed");
	o = run_text("mov %r1, 0\nldxw %r0, [%r1+0]\nexit", 1, 0, NULL, 0, NULL, NULL, 0);
	tap_ok(o.ret == -GBPF_ERRNO__FAULT && strstr(o.err, "at 0x0"), "NULL load faults (%s)",
	       o.err);
}

static void budget_and_calls(void)
{
	struct run_out o;

	for (int checked = 0; checked < 2; checked++) {
		o = run_text("mov %r0, 0\nloop: add %r0, 1\nja loop\n", checked, 1000, NULL, 0, NULL,
			     NULL, 0);
		tap_ok(o.ret == -GBPF_ERRNO__BUDGET && o.res.insns == 1000 &&
			       strstr(o.err, "budget of 1000"),
		       "[%s] endless loop stops after 1000 instructions (%s)",
		       checked ? "checked" : "fast", o.err);
		o = run_text("mov %r0, 0\nloop: add %r0, 1\njlt %r0, 10, loop\nexit", checked, 22,
			     NULL, 0, NULL, NULL, 0);
		tap_ok(o.ret == 0 && o.res.r0 == 10 && o.res.insns == 22,
		       "[%s] budget exactly sufficient (22 instructions)",
		       checked ? "checked" : "fast");
		o = run_text("mov %r0, 0\nloop: add %r0, 1\njlt %r0, 10, loop\nexit", checked, 21,
			     NULL, 0, NULL, NULL, 0);
		tap_ok(o.ret == -GBPF_ERRNO__BUDGET && strstr(o.err, "instruction 3 (exit)"),
		       "[%s] one instruction short: the exit is refused (%s)",
		       checked ? "checked" : "fast", o.err);
		o = run_text("call local f\nexit\nf: call local f\nexit", checked, 0, NULL, 0, NULL,
			     NULL, 0);
		tap_ok(o.ret == -GBPF_ERRNO__FAULT && strstr(o.err, "call depth limit") &&
			       strstr(o.err, "instruction 2 (call local -1)"),
		       "[%s] endless recursion hits the depth limit (%s)",
		       checked ? "checked" : "fast", o.err);
		/* main + 7 nested frames = 8: allowed; each frame writes its own stack. */
		o = run_text("mov %r6, 0\ncall local f1\nadd %r0, %r6\nexit\n"
			     "f1: stdw [%r10-8], 1\ncall local f2\nldxdw %r1, [%r10-8]\nadd %r0, %r1\nexit\n"
			     "f2: stdw [%r10-8], 2\ncall local f3\nldxdw %r1, [%r10-8]\nadd %r0, %r1\nexit\n"
			     "f3: stdw [%r10-8], 3\ncall local f4\nldxdw %r1, [%r10-8]\nadd %r0, %r1\nexit\n"
			     "f4: stdw [%r10-8], 4\ncall local f5\nldxdw %r1, [%r10-8]\nadd %r0, %r1\nexit\n"
			     "f5: stdw [%r10-8], 5\ncall local f6\nldxdw %r1, [%r10-8]\nadd %r0, %r1\nexit\n"
			     "f6: stdw [%r10-8], 6\ncall local f7\nldxdw %r1, [%r10-8]\nadd %r0, %r1\nexit\n"
			     "f7: mov %r6, 99\nmov %r0, 100\nexit\n",
			     checked, 0, NULL, 0, NULL, NULL, 0);
		tap_ok(o.ret == 0 && o.res.r0 == 121,
		       "[%s] 8 frames allowed, own stacks, r6 restored (ret %d r0 %llu %s)",
		       checked ? "checked" : "fast", o.ret, (unsigned long long)o.res.r0, o.err);
		o = run_text("stdw [%r10-8], 41\nmov %r1, %r10\nsub %r1, 8\ncall local f\nexit\n"
			     "f: ldxdw %r0, [%r1+0]\nadd %r0, 1\nexit",
			     checked, 0, NULL, 0, NULL, NULL, 0);
		tap_ok(o.ret == 0 && o.res.r0 == 42, "[%s] callee reads caller's stack by pointer",
		       checked ? "checked" : "fast");
		o = run_text("mov %r1, 40\nmov %r2, 2\nmov %r3, 77\ncall %r3\nexit", checked, 0,
			     NULL, 0, NULL, NULL, 0);
		tap_ok(o.ret == 0 && o.res.r0 == 42, "[%s] callx calls the helper in the register",
		       checked ? "checked" : "fast");
		o = run_text("mov %r3, 123456\ncall %r3\nexit", checked, 0, NULL, 0, NULL, NULL, 0);
		tap_ok(o.ret == -GBPF_ERRNO__FAULT && strstr(o.err, "helper 123456"),
		       "[%s] callx to an unknown helper faults (%s)", checked ? "checked" : "fast",
		       o.err);
		o = run_text("call 99999\nexit", checked, 0, NULL, 0, NULL, NULL, 0);
		tap_ok(o.ret == -GBPF_ERRNO__FAULT && strstr(o.err, "instruction 0 (call 99999)"),
		       "[%s] missing helper is a clean run-time fault (%s)",
		       checked ? "checked" : "fast", o.err);
	}
	o = run_text("mov %r0, 0\nldxdw %r0, [%r10-8]\ncall local f\nexit\n"
		     "f: ldxdw %r0, [%r10+8]\nexit",
		     1, 0, NULL, 0, NULL, NULL, 0);
	tap_ok(o.ret == 0, "checked: callee may read the caller's active frame (%s)", o.err);
}

static void maps_and_helpers(void)
{
	struct gbpf_map_desc desc = {.sz = sizeof(desc), .name = "arr", .type = GBPF_MAP_TYPE_ARRAY,
				     .key_size = 4, .value_size = 16, .max_entries = 4};
	struct gbpf_map_instance map;
	uint32_t key = 0;
	uint64_t *val;
	struct run_out o;
	int ret;

	ret = gbpf_map_instance_create(&map, &desc, 1);
	if (!tap_ok(ret == 0, "array map created (%d)", ret))
		return;
	for (int checked = 0; checked < 2; checked++) {
		o = run_text("lddw %r1, map_value[0]+8\nstdw [%r1+0], 7\nmov %r0, 0\nexit", checked,
			     0, &map, 1, NULL, NULL, 0);
		val = gbpf_map_lookup(&map, &key, 0);
		tap_ok(o.ret == 0 && val && val[1] == 7,
		       "[%s] map_value[0]+8 points into value 0 (%s)", checked ? "checked" : "fast",
		       o.err);
		o = run_text("stw [%r10-4], 2\nlddw %r1, map[0]\nmov %r2, %r10\nsub %r2, 4\n"
			     "call 1\njeq %r0, 0, out\nstdw [%r0+0], 42\nmov %r0, 1\nout: exit",
			     checked, 0, &map, 1, NULL, NULL, 0);
		key = 2;
		val = gbpf_map_lookup(&map, &key, 0);
		key = 0;
		tap_ok(o.ret == 0 && o.res.r0 == 1 && val && val[0] == 42,
		       "[%s] map_lookup_elem value written (%s)", checked ? "checked" : "fast",
		       o.err);
	}
	o = run_text("lddw %r1, map_value[0]+8\nstdw [%r1+8], 7\nmov %r0, 0\nexit", 1, 0, &map, 1,
		     NULL, NULL, 0);
	tap_ok(o.ret == -GBPF_ERRNO__FAULT && strstr(o.err, "instruction 2"),
	       "checked: store past the end of map value 0 faults (%s)", o.err);
	o = run_text("stw [%r10-4], 1\nlddw %r1, map[0]\nmov %r2, %r10\nsub %r2, 4\n"
		     "call 1\njeq %r0, 0, out\nldxdw %r0, [%r0+16]\nout: exit",
		     1, 0, &map, 1, NULL, NULL, 0);
	tap_ok(o.ret == -GBPF_ERRNO__FAULT && strstr(o.err, "instruction 7 (ldxdw %r0, [%r0+16])"),
	       "checked: read past a looked-up value faults (%s)", o.err);
	o = run_text("lddw %r1, map[0]\nmov %r2, %r10\nsub %r2, 600\ncall 1\nexit", 1, 0, &map, 1,
		     NULL, NULL, 0);
	tap_ok(o.ret == -GBPF_ERRNO__FAULT && strstr(o.err, "r2 = ") && strstr(o.err, "readable"),
	       "checked: helper key pointer outside the stack refused (%s)", o.err);
	o = run_text("mov %r1, 8\nmov %r2, %r10\ncall 1\nexit", 1, 0, &map, 1, NULL, NULL, 0);
	tap_ok(o.ret == -GBPF_ERRNO__FAULT && strstr(o.err, "not a map"),
	       "checked: map helper with a non-map r1 refused (%s)", o.err);
	o = run_text("lddw %r1, map[3]\nexit", 0, 0, &map, 1, NULL, NULL, 0);
	tap_ok(o.ret == -EINVAL && strstr(o.err, "map index 3 out of range"),
	       "create: map index out of range named (%s)", o.err);
	gbpf_map_instance_destroy(&map);

	o = run_text("mov %r0, 5\ncall 507\nmov %r0, 9\nexit", 0, 0, NULL, 0, NULL, NULL, 0);
	tap_ok((o.ret == 0 && o.res.exited == 1 && o.res.r0 != 9) ||
		       (o.ret == -GBPF_ERRNO__FAULT && strstr(o.err, "507")),
	       "GPU exit helper ends the run (ret %d exited %d %s)", o.ret, o.res.exited, o.err);
}

int main(void)
{
	division_corners();
	atomics();
	faults();
	budget_and_calls();
	maps_and_helpers();
	return tap_done();
}
