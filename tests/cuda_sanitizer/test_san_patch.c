/* SPDX-License-Identifier: MIT */
/*
 * The Compute Sanitizer engine without a GPU: the patch module's PTX
 * (callbacks per site kind, context fields, probe masks, placeholders),
 * ptxas --compile-as-tools-patch and the disk cache, the placeholder
 * replacement (checked at the globals' ELF symbols of a real cubin), the
 * engine choice and the library loader's errors.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <gbpf/cuda_inject.h>
#include <gbpf/helper_ids.h>
#include <gbpf/insn.h>
#include <gbpf/plugin.h>
#include <gbpf/probe_ctx.h>

#include "plugins/cuda/ptx_codegen.h"
#include "plugins/cuda/cuda_clock.h"
#include "plugins/cuda/sanitizer/san_api.h"
#include "plugins/cuda/sanitizer/san_engine.h"
#include "plugins/cuda/sanitizer/san_patch.h"
#include "tests/cuda_sanitizer/san_elf.h"
#include "tests/tap.h"

#define INSN(c, d, s, o, i) ((struct gbpf_insn){.code = (c), .dst = (d), .src = (s), .off = (o), .imm = (i)})

/* r0 = 0; exit */
static const struct gbpf_insn prog_ret0[] = {
	INSN(GBPF_ALU64 | GBPF_MOV | GBPF_K, 0, 0, 0, 0),
	INSN(GBPF_JMP | GBPF_EXIT, 0, 0, 0, 0),
};

/* r0 = ctx->mem_addr + ctx->kernel_id; exit */
static const struct gbpf_insn prog_mem[] = {
	INSN(GBPF_LDX | GBPF_MEM | GBPF_DW, 0, 1, 24, 0),
	INSN(GBPF_LDX | GBPF_MEM | GBPF_DW, 2, 1, 0, 0),
	INSN(GBPF_ALU64 | GBPF_ADD | GBPF_X, 0, 2, 0, 0),
	INSN(GBPF_JMP | GBPF_EXIT, 0, 0, 0, 0),
};

/* r0 = ctx->device + (ctx->device_pad << 32); exit: reads offsets 56..63 */
static const struct gbpf_insn prog_device[] = {
	INSN(GBPF_LDX | GBPF_MEM | GBPF_W, 0, 1, 56, 0),
	INSN(GBPF_LDX | GBPF_MEM | GBPF_W, 2, 1, 60, 0),
	INSN(GBPF_ALU64 | GBPF_LSH | GBPF_K, 2, 0, 0, 32),
	INSN(GBPF_ALU64 | GBPF_ADD | GBPF_X, 0, 2, 0, 0),
	INSN(GBPF_JMP | GBPF_EXIT, 0, 0, 0, 0),
};

/* r0 = bpf_ktime_get_ns(); exit */
static const struct gbpf_insn prog_ktime[] = {
	INSN(GBPF_JMP | GBPF_CALL, 0, GBPF_CALL_HELPER, 0, GBPF_HELPER_KTIME_GET_NS),
	INSN(GBPF_JMP | GBPF_EXIT, 0, 0, 0, 0),
};

static struct gbpf_prog_desc mkprog(const char *name, const struct gbpf_insn *insns, size_t n, uint32_t kind)
{
	struct gbpf_prog_desc p = {
		.sz = sizeof(p), .name = name, .section = "gpu/x/k", .insns = insns,
		.insn_cnt = n, .source_file = "unit.o",
	};
	p.attach.kind = kind;
	return p;
}

static int count(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

static char *fragment_of(const struct gbpf_prog_desc *const *progs, size_t n)
{
	struct gbpf_ptx_opts o = {.sz = sizeof(o), .arch = "sm_90"};
	char err[512] = "", *ptx = NULL;

	if (gbpf_ptx_emit(progs, n, &o, &ptx, NULL, err, sizeof(err))) {
		tap_diag("gbpf_ptx_emit: %s", err);
		return NULL;
	}
	return ptx;
}

static void test_ptx_text(char **out_ptx)
{
	struct gbpf_prog_desc exitp = mkprog("on_exit", prog_ret0, 2, GBPF_ATTACH_GPU_EXIT);
	struct gbpf_prog_desc memp = mkprog("on_mem", prog_mem, 4, GBPF_ATTACH_GPU_MEM);
	struct gbpf_prog_desc exit2 = mkprog("on_exit2", prog_ret0, 2, GBPF_ATTACH_GPU_EXIT);
	const struct gbpf_prog_desc *progs[] = {&exitp, &memp, &exit2};
	uint32_t kinds[] = {GBPF_ATTACH_GPU_EXIT, GBPF_ATTACH_GPU_MEM, GBPF_ATTACH_GPU_EXIT};
	struct gbpf_san_patch_opts o = {.sz = sizeof(o), .probe_kind = kinds, .probe_cnt = 3, .map_cnt = 0,
					.ctx_unused = GBPF_CUDA_CTX_UNUSED_PARAMS | GBPF_CUDA_CTX_UNUSED_LAUNCH_ID,
					.arch = "sm_90"};
	char why[512] = "", *ptx = NULL, *frag = fragment_of(progs, 3);
	size_t len = 0;
	int rc;

	tap_ok(frag != NULL, "probe fragment of exit, mem, exit programs");
	if (!frag)
		return;
	o.fragment = frag;
	rc = gbpf_san_patch_ptx(&o, &ptx, &len, why, sizeof(why));
	tap_ok(rc == 0 && ptx && len == strlen(ptx), "patch PTX built (%d: %s)", rc, why);
	if (rc) {
		free(frag);
		return;
	}
	tap_ok(!strncmp(ptx, ".version 7.8", 12) && strstr(ptx, ".target sm_90"), "module header for sm_90");
	tap_ok(count(ptx, ".visible .func (.param .b32 __r) " GBPF_SAN_CB_EXIT "(.param .b64 __ud, .param .b64 __pc)") == 1,
	       "one block-exit callback with the (userdata, pc) signature");
	tap_ok(count(ptx, GBPF_SAN_CB_GMEM "(.param .b64 __ud, .param .b64 __pc, .param .b64 __ptr, .param .b32 "
				     "__size, .param .b32 __flags, .param .b64 __value)") == 1 &&
		       count(ptx, GBPF_SAN_CB_SMEM "(") == 1,
	       "global and shared memory callbacks with the memory-access signature");
	tap_ok(!strstr(ptx, GBPF_SAN_CB_ENTER) && !strstr(ptx, GBPF_SAN_CB_BARRIER),
	       "no callback for site kinds no probe serves");
	/* exit serves probes 0 and 2 (mask 0x5), each call guarded by its own bit. */
	tap_ok(strstr(ptx, "and.b64 %x6, %x7, 0x0000000000000005;") && strstr(ptx, "call (__rr), __gbpf_probe_0, (__a);") &&
		       strstr(ptx, "call (__rr), __gbpf_probe_2, (__a);") &&
		       count(ptx, "and.b64 %x6, %x7, 0x0000000000000004;") == 1,
	       "exit callback: both exit probes, each behind its bit of record.probes");
	tap_ok(count(ptx, "call (__rr), __gbpf_probe_1, (__a);") == 2, "mem probe called from both memory callbacks");
	tap_ok(count(ptx, "ld.global.u64 %x1, [%x0+0];\nst.local.u64 [__c+0], %x1;") == 3 &&
		       !strstr(ptx, "[%x0+8]") && !strstr(ptx, "[%x0+16]"),
	       "only the context fields a probe reads are copied (kernel_id; not params, launch_id)");
	tap_ok(count(ptx, "mov.u32 %y4, 1;\nst.local.u32 [__c+48], %y4;") == 1 &&
		       count(ptx, "mov.u32 %y4, 2;\nst.local.u32 [__c+48], %y4;") == 1,
	       "mem_space: global in the global callback, shared in the shared one");
	tap_ok(strstr(ptx, "__gbpf_maps[1] = {0x67627066f0000d00};") &&
		       strstr(ptx, "__gbpf_pid_tgid = 0x67627066f1000eff;") && count(ptx, "__gbpf_maps[") == 1 &&
		       count(ptx, ".visible .global .align 8 .u64 __gbpf_clock_off = 0x67627066f2000c1f;") == 1 &&
		       !strstr(ptx, "__gbpf_clock_off;"),
	       "module globals carry placeholders (maps, pid_tgid, clock_off; the clock declared once)");
	/* ctx->device: the record's device word (device, pad) at 32 into the context's 56, in each callback. */
	tap_ok(offsetof(struct gbpf_san_record, device) == 32 && offsetof(struct gbpf_san_record, device_pad) == 36 &&
		       sizeof(struct gbpf_san_record) == 40 && offsetof(struct gbpf_gpu_ctx, device) == 56,
	       "record layout as documented: device at 32, pad at 36, 40 bytes; gbpf_gpu_ctx.device at 56");
	tap_ok(count(ptx, "ld.global.u64 %x1, [%x0+32];\nst.local.u64 [__c+56], %x1;") == 3 &&
		       !strstr(ptx, "mov.u64 %x1, 0;\nst.local.u64 [__c+56]"),
	       "ctx->device loaded from the record's device word in all 3 callbacks (not a constant 0)");
	free(ptx);

	o.ctx_unused = GBPF_CUDA_CTX_UNUSED_ALL;
	rc = gbpf_san_patch_ptx(&o, &ptx, NULL, why, sizeof(why));
	tap_ok(rc == 0 && !strstr(ptx, "[%x0+0]") && !strstr(ptx, "[__ptr]") && !strstr(ptx, "[%x0+32]") &&
		       !strstr(ptx, "[__c+56]"),
	       "no context stores when no probe reads the context");
	free(ptx);
	o.ctx_unused = GBPF_CUDA_CTX_UNUSED_DEVICE;
	rc = gbpf_san_patch_ptx(&o, &ptx, NULL, why, sizeof(why));
	tap_ok(rc == 0 && !strstr(ptx, "[%x0+32]") && !strstr(ptx, "[__c+56]") && strstr(ptx, "[%x0+16]"),
	       "device not read: neither loaded nor stored (the other fields are)");
	free(ptx);
	o.ctx_unused = 0;
	rc = gbpf_san_patch_ptx(&o, &ptx, NULL, why, sizeof(why));
	tap_ok(rc == 0 && strstr(ptx, "[%x0+8]") && strstr(ptx, "[%x0+16]") && count(ptx, "[__ptr]") == 2,
	       "every field copied when every field is read");
	*out_ptx = ptx;

	o.probe_cnt = GBPF_SAN_MAX_PROBES + 1;
	tap_ok(gbpf_san_patch_ptx(&o, &ptx, NULL, why, sizeof(why)) == -EINVAL && strstr(why, "64"),
	       "more than 64 probes refused: %s", why);
	o.probe_cnt = 3;
	o.fragment = "// no declarations\n";
	tap_ok(gbpf_san_patch_ptx(&o, &ptx, NULL, why, sizeof(why)) == -EINVAL && strstr(why, "__gbpf_maps"),
	       "fragment without the module globals refused: %s", why);
	o.fragment = ".visible .global .align 8 .u64 __gbpf_maps[1];\n"
		     ".visible .const .align 8 .u64 __gbpf_maps_const[1];\n"
		     ".visible .global .align 8 .u64 __gbpf_pid_tgid;\n";
	tap_ok(gbpf_san_patch_ptx(&o, &ptx, NULL, why, sizeof(why)) == -EINVAL && strstr(why, "constant"),
	       "fragment with the constant-bank map table refused: %s", why);
	o.fragment = ".visible .global .align 8 .u64 __gbpf_maps[999999];\n"
		     ".visible .global .align 8 .u64 __gbpf_pid_tgid;\n";
	tap_ok(gbpf_san_patch_ptx(&o, &ptx, NULL, why, sizeof(why)) == -EINVAL,
	       "map count over the limit refused: %s", why);
	/* A fragment that declares no __gbpf_clock_off still gets the placeholder, once, before its helpers. */
	o.fragment = ".visible .global .align 8 .u64 __gbpf_maps[1];\n"
		     ".visible .global .align 8 .u64 __gbpf_pid_tgid;\n"
		     ".func (.param .b64 r) __gbpf_probe_0(.param .b64 c)\n{\nst.param.b64 [r], 0;\nret;\n}\n";
	o.flags = GBPF_SAN_PATCH_VISIBLE_FUNCS;
	rc = gbpf_san_patch_ptx(&o, &ptx, NULL, why, sizeof(why));
	tap_ok(rc == 0 && count(ptx, "__gbpf_clock_off = 0x67627066f2000c1f;") == 1 &&
		       strstr(ptx, "__gbpf_clock_off") < strstr(ptx, "__gbpf_probe_0") &&
		       strstr(ptx, ".visible .func (.param .b64 r) __gbpf_probe_0"),
	       "fragment without a clock declaration: placeholder added once, helpers still made visible (%s)", why);
	free(ptx);
	o.fragment = ".visible .global .align 8 .u64 __gbpf_clock_off;\n"
		     ".visible .global .align 8 .u64 __gbpf_maps[1];\n"
		     ".visible .global .align 8 .u64 __gbpf_pid_tgid;\n";
	o.flags = 0;
	tap_ok(gbpf_san_patch_ptx(&o, &ptx, NULL, why, sizeof(why)) == -EINVAL && strstr(why, "__gbpf_clock_off"),
	       "clock declared before pid_tgid refused (the text would keep a bare declaration): %s", why);
	tap_ok(gbpf_san_patch_callback(kinds, 3, GBPF_SAN_INSTRUCTION_BLOCK_EXIT) &&
		       !strcmp(gbpf_san_patch_callback(kinds, 3, GBPF_SAN_INSTRUCTION_SHARED_MEMORY_ACCESS),
			       GBPF_SAN_CB_SMEM) &&
		       !gbpf_san_patch_callback(kinds, 3, GBPF_SAN_INSTRUCTION_BLOCK_ENTER) &&
		       !gbpf_san_patch_callback(kinds, 3, GBPF_SAN_INSTRUCTION_LOCAL_MEMORY_ACCESS),
	       "patch points served: exit, global, shared; not enter, local");
	free(frag);
}

static void test_globals(void)
{
	unsigned char img[200];
	uint64_t v, maps[2] = {0x7f0000001000ull, 0x7f0000002000ull};
	char why[256] = "";

	memset(img, 0xab, sizeof(img));
	v = GBPF_SAN_MAGIC_MAP(0);
	memcpy(img + 13, &v, 8);
	v = GBPF_SAN_MAGIC_MAP(1);
	memcpy(img + 21, &v, 8);
	v = GBPF_SAN_MAGIC_PID;
	memcpy(img + 100, &v, 8);
	v = GBPF_SAN_MAGIC_CLOCK;
	memcpy(img + 131, &v, 8);
	tap_ok(gbpf_san_patch_set_globals(img, sizeof(img), maps, 2, 0x1234ull, 0x17d0000000000005ull, why,
					  sizeof(why)) == 0,
	       "placeholders replaced (%s)", why);
	memcpy(&v, img + 13, 8);
	tap_ok(v == maps[0], "map 0 address written at its placeholder (unaligned)");
	memcpy(&v, img + 21, 8);
	tap_ok(v == maps[1], "map 1 address written");
	memcpy(&v, img + 100, 8);
	tap_ok(v == 0x1234ull, "pid_tgid written");
	memcpy(&v, img + 131, 8);
	tap_ok(v == 0x17d0000000000005ull, "clock offset written (unaligned)");
	tap_ok(gbpf_san_patch_set_globals(img, sizeof(img), maps, 2, 1, 2, why, sizeof(why)) == -ENOENT &&
		       strstr(why, "pid_tgid 0") && strstr(why, "clock_off 0"),
	       "an image without placeholders refused: %s", why);
	v = GBPF_SAN_MAGIC_PID;
	memcpy(img + 40, &v, 8);
	memcpy(img + 60, &v, 8);
	v = GBPF_SAN_MAGIC_CLOCK;
	memcpy(img + 80, &v, 8);
	tap_ok(gbpf_san_patch_set_globals(img, sizeof(img), NULL, 0, 1, 2, why, sizeof(why)) == -ENOENT,
	       "a placeholder found twice refused: %s", why);
	memset(img, 0xab, sizeof(img));
	v = GBPF_SAN_MAGIC_PID;
	memcpy(img + 8, &v, 8);
	tap_ok(gbpf_san_patch_set_globals(img, sizeof(img), NULL, 0, 1, 2, why, sizeof(why)) == -ENOENT &&
		       strstr(why, "clock_off 0 (want 1)"),
	       "an image without the clock placeholder refused (a cubin of before could not be bound): %s", why);
}

/* CLOCK_REALTIME - CLOCK_MONOTONIC, read here, brackets the engine's value. */
static void test_clock_offset(void)
{
	struct timespec rt0, mo0, rt1, mo1;
	uint64_t got, lo, hi;

	clock_gettime(CLOCK_REALTIME, &rt0);
	clock_gettime(CLOCK_MONOTONIC, &mo0);
	got = cuda_clock_offset_ns();
	clock_gettime(CLOCK_MONOTONIC, &mo1);
	clock_gettime(CLOCK_REALTIME, &rt1);
	lo = ((uint64_t)rt0.tv_sec * 1000000000ull + (uint64_t)rt0.tv_nsec) -
	     ((uint64_t)mo1.tv_sec * 1000000000ull + (uint64_t)mo1.tv_nsec);
	hi = ((uint64_t)rt1.tv_sec * 1000000000ull + (uint64_t)rt1.tv_nsec) -
	     ((uint64_t)mo0.tv_sec * 1000000000ull + (uint64_t)mo0.tv_nsec);
	tap_ok(got >= lo && got <= hi && got != 0, "clock offset = CLOCK_REALTIME - CLOCK_MONOTONIC (%llu in [%llu, %llu])",
	       (unsigned long long)got, (unsigned long long)lo, (unsigned long long)hi);
}

static void test_compile(const char *ptx)
{
	char dir[] = "/tmp/gbpf-san-test-XXXXXX", why[2048] = "";
	void *a = NULL, *b = NULL;
	size_t as = 0, bs = 0;
	int cached = -1, rc;

	if (!ptx) {
		tap_skip("no patch PTX");
		return;
	}
	if (access("/usr/local/cuda/bin/ptxas", X_OK) && !getenv("CUDA_HOME") && !getenv("GBPF_PTXAS")) {
		tap_skip("ptxas not installed: patch cubin compilation not checked");
		return;
	}
	if (!mkdtemp(dir)) {
		tap_ok(0, "temporary cache folder");
		return;
	}
	setenv("GBPF_CACHE_DIR", dir, 1);
	rc = gbpf_san_patch_compile(ptx, strlen(ptx), "sm_90", &a, &as, &cached, why, sizeof(why));
	tap_ok(rc == 0 && as > 64 && !memcmp(a, "\x7f" "ELF", 4) && cached == 0,
	       "ptxas --compile-as-tools-patch: %zu-byte ELF (%d: %.300s)", as, rc, why);
	rc = gbpf_san_patch_compile(ptx, strlen(ptx), "sm_90", &b, &bs, &cached, why, sizeof(why));
	tap_ok(rc == 0 && cached == 1 && bs == as && !memcmp(a, b, as), "second compile comes from the disk cache");
	if (a) {
		uint64_t maps[1] = {0xdead000ull};

		rc = gbpf_san_patch_set_globals(a, as, maps, 1, 42, 0x17d0123456789abcull, why, sizeof(why));
		tap_ok(rc == 0, "placeholders found once each in the compiled cubin (%s)", why);
	}
	free(a);
	free(b);
	a = b = NULL;
	setenv("GBPF_SANITIZER_CACHE", "0", 1);
	rc = gbpf_san_patch_compile("bad ptx", 7, "sm_90", &a, &as, &cached, why, sizeof(why));
	tap_ok(rc == -EIO && strstr(why, "ptxas") && strstr(why, "failed"), "bad PTX: ptxas' messages reported");
	setenv("GBPF_PTXAS", "/nonexistent/ptxas", 1);
	rc = gbpf_san_patch_compile(ptx, strlen(ptx), "sm_90", &a, &as, &cached, why, sizeof(why));
	tap_ok(rc == -ENOENT && strstr(why, "/nonexistent/ptxas"), "missing ptxas reported: %s", why);
	unsetenv("GBPF_PTXAS");
	unsetenv("GBPF_SANITIZER_CACHE");
	unsetenv("GBPF_CACHE_DIR");
	free(a);
	{
		char cmd[600];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd))
			tap_diag("cannot remove %s", dir);
	}
}

static int have_ptxas(void)
{
	return !access("/usr/local/cuda/bin/ptxas", X_OK) || getenv("CUDA_HOME") || getenv("GBPF_PTXAS");
}

static uint64_t u64_at(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

/*
 * A gpu/entry probe calling bpf_ktime_get_ns and a gpu/exit probe reading
 * ctx->device: the patch PTX subtracts __gbpf_clock_off from %globaltimer
 * and loads the device from the record; compiled by ptxas as a tools patch,
 * the cached cubin keeps the clock placeholder at __gbpf_clock_off's
 * symbol, and each binding (two "processes" with two offsets) writes its own
 * offset there, the map address and pid_tgid at theirs.
 */
static void test_ktime_device_cubin(void)
{
	struct gbpf_prog_desc kt = mkprog("on_entry_ktime", prog_ktime, 2, GBPF_ATTACH_GPU_ENTRY);
	struct gbpf_prog_desc dv = mkprog("on_exit_device", prog_device, 5, GBPF_ATTACH_GPU_EXIT);
	const struct gbpf_prog_desc *progs[] = {&kt, &dv};
	uint32_t kinds[] = {GBPF_ATTACH_GPU_ENTRY, GBPF_ATTACH_GPU_EXIT};
	struct gbpf_san_patch_opts o = {.sz = sizeof(o), .probe_kind = kinds, .probe_cnt = 2,
					.ctx_unused = GBPF_CUDA_CTX_UNUSED_KERNEL_ID | GBPF_CUDA_CTX_UNUSED_PARAMS |
						      GBPF_CUDA_CTX_UNUSED_LAUNCH_ID | GBPF_CUDA_CTX_UNUSED_MEM,
					.arch = "sm_90"};
	char dir[] = "/tmp/gbpf-san-clock-XXXXXX", why[2048] = "", *ptx = NULL, *frag = fragment_of(progs, 2);
	const char *enter, *exitcb;
	void *a = NULL, *b = NULL;
	size_t as = 0, bs = 0;
	uint64_t maps[1] = {0x7f00beef0000ull};
	const uint64_t off1 = 0x17d4f00ba5000001ull, off2 = 0x17d4f00ba5000002ull;
	int cached = -1, rc;

	tap_ok(frag != NULL, "fragment of a ktime entry probe and a ctx->device exit probe");
	if (!frag)
		return;
	o.fragment = frag;
	rc = gbpf_san_patch_ptx(&o, &ptx, NULL, why, sizeof(why));
	tap_ok(rc == 0, "patch PTX built (%s)", why);
	if (rc) {
		free(frag);
		return;
	}
	tap_ok(strstr(ptx, "mov.u64 %r0, %globaltimer;\nld.global.u64 %t10, [__gbpf_clock_off];\n"
			   "sub.u64 %r0, %r0, %t10;") != NULL &&
		       count(ptx, "__gbpf_clock_off = 0x67627066f2000c1f;") == 1,
	       "bpf_ktime_get_ns: %%globaltimer less __gbpf_clock_off, whose initialiser is the placeholder");
	enter = strstr(ptx, GBPF_SAN_CB_ENTER "(");
	exitcb = strstr(ptx, GBPF_SAN_CB_EXIT "(");
	tap_ok(enter && exitcb && strstr(enter, "ld.global.u64 %x1, [%x0+32];\nst.local.u64 [__c+56], %x1;") &&
		       strstr(exitcb, "ld.global.u64 %x1, [%x0+32];\nst.local.u64 [__c+56], %x1;") &&
		       !strstr(ptx, "[%x0+0]"),
	       "both callbacks copy the record's device word (offset 32) into ctx->device (56), nothing else");
	if (!have_ptxas()) {
		tap_skip("ptxas not installed: the clock placeholder of a real cubin not checked");
		goto out;
	}
	if (!mkdtemp(dir)) {
		tap_ok(0, "temporary cache folder");
		goto out;
	}
	setenv("GBPF_CACHE_DIR", dir, 1);
	rc = gbpf_san_patch_compile(ptx, strlen(ptx), "sm_90", &a, &as, &cached, why, sizeof(why));
	tap_ok(rc == 0 && cached == 0, "ptxas --compile-as-tools-patch of the ktime/device module (%d: %.300s)", rc, why);
	if (rc)
		goto clean;
	tap_ok(elf_global(a, as, "__gbpf_clock_off") && u64_at(elf_global(a, as, "__gbpf_clock_off")) == GBPF_SAN_MAGIC_CLOCK,
	       "the cubin holds the clock placeholder at __gbpf_clock_off's symbol");
	rc = gbpf_san_patch_set_globals(a, as, maps, 1, 0x1111000022ull, off1, why, sizeof(why));
	tap_ok(rc == 0 && elf_global(a, as, "__gbpf_clock_off") && u64_at(elf_global(a, as, "__gbpf_clock_off")) == off1 &&
		       u64_at(elf_global(a, as, "__gbpf_pid_tgid")) == 0x1111000022ull &&
		       u64_at(elf_global(a, as, "__gbpf_maps")) == maps[0],
	       "bound: __gbpf_clock_off, __gbpf_pid_tgid and __gbpf_maps[0] hold this binding's values (%s)", why);
	rc = gbpf_san_patch_compile(ptx, strlen(ptx), "sm_90", &b, &bs, &cached, why, sizeof(why));
	tap_ok(rc == 0 && cached == 1 && elf_global(b, bs, "__gbpf_clock_off") &&
		       u64_at(elf_global(b, bs, "__gbpf_clock_off")) == GBPF_SAN_MAGIC_CLOCK,
	       "the disk cache kept the placeholder, not the first binding's offset");
	rc = b ? gbpf_san_patch_set_globals(b, bs, maps, 1, 0x3333000044ull, off2, why, sizeof(why)) : -1;
	tap_ok(rc == 0 && u64_at(elf_global(b, bs, "__gbpf_clock_off")) == off2,
	       "a second binding of the cached cubin gets its own offset");
clean:
	unsetenv("GBPF_CACHE_DIR");
	{
		char cmd[600];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd))
			tap_diag("cannot remove %s", dir);
	}
out:
	free(a);
	free(b);
	free(ptx);
	free(frag);
}

/* A real library where the loader looks after GBPF_SANITIZER_LIB: the not-found path cannot be shown. */
static int san_lib_installed(void)
{
	const char *home = getenv("CUDA_HOME");
	char path[512];

	if (!access("/usr/local/cuda/compute-sanitizer/libsanitizer-public.so", R_OK))
		return 1;
	if (!home || !*home)
		return 0;
	snprintf(path, sizeof(path), "%s/compute-sanitizer/libsanitizer-public.so", home);
	return !access(path, R_OK);
}

static void test_choice_and_loader(void)
{
	struct gbpf_san_api api;
	char why[1024] = "";

	unsetenv("GBPF_CUDA_ENGINE");
	tap_ok(gbpf_san_engine_choice(0, why, sizeof(why)) == GBPF_SAN_CHOICE_AUTO, "default engine: auto");
	tap_ok(gbpf_san_engine_choice(GBPF_AGENT_F_ENGINE_PTX, why, sizeof(why)) == GBPF_SAN_CHOICE_PTX &&
		       gbpf_san_engine_choice(GBPF_AGENT_F_ENGINE_SANITIZER, why, sizeof(why)) == GBPF_SAN_CHOICE_SANITIZER,
	       "attach flags choose the engine");
	tap_ok(gbpf_san_engine_choice(GBPF_AGENT_F_ENGINE_PTX | GBPF_AGENT_F_ENGINE_SANITIZER, why, sizeof(why)) ==
		       -EINVAL,
	       "both flags refused: %s", why);
	setenv("GBPF_CUDA_ENGINE", "sanitizer", 1);
	tap_ok(gbpf_san_engine_choice(0, why, sizeof(why)) == GBPF_SAN_CHOICE_SANITIZER &&
		       gbpf_san_engine_choice(GBPF_AGENT_F_ENGINE_PTX, why, sizeof(why)) == GBPF_SAN_CHOICE_PTX,
	       "GBPF_CUDA_ENGINE=sanitizer, flags take precedence");
	setenv("GBPF_CUDA_ENGINE", "nvbit", 1);
	tap_ok(gbpf_san_engine_choice(0, why, sizeof(why)) == -EINVAL && strstr(why, "nvbit"),
	       "unknown engine refused: %s", why);
	unsetenv("GBPF_CUDA_ENGINE");

	setenv("GBPF_SANITIZER_LIB", "/nonexistent/libsanitizer-public.so", 1);
	if (san_lib_installed()) {
		tap_skip("a real libsanitizer-public.so is installed: the not-found path is not checked");
	} else {
		int rc = gbpf_san_api_load(&api, why, sizeof(why));

		tap_ok(rc == -ENOENT && strstr(why, "/nonexistent/libsanitizer-public.so") &&
			       strstr(why, "/usr/local/cuda/compute-sanitizer/"),
		       "no library: every path tried is named: %.200s", why);
	}
	unsetenv("GBPF_SANITIZER_LIB");
	tap_ok(!strcmp(gbpf_san_api_strerror(NULL, 0), "success"), "result string without a library");
}

int main(void)
{
	char *ptx = NULL;

	test_ptx_text(&ptx);
	test_globals();
	test_clock_offset();
	test_compile(ptx);
	test_ktime_device_cubin();
	test_choice_and_loader();
	free(ptx);
	return tap_done();
}
