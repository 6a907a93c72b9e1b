/* SPDX-License-Identifier: MIT */
/*
 * The Compute Sanitizer engine without a GPU: the patch module's PTX
 * (callbacks per site kind, context fields, probe masks, placeholders),
 * ptxas --compile-as-tools-patch and the disk cache, the placeholder
 * replacement, the engine choice and the library loader's errors.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gbpf/cuda_inject.h>
#include <gbpf/insn.h>
#include <gbpf/plugin.h>
#include <gbpf/probe_ctx.h>

#include "plugins/cuda/ptx_codegen.h"
#include "plugins/cuda/sanitizer/san_api.h"
#include "plugins/cuda/sanitizer/san_engine.h"
#include "plugins/cuda/sanitizer/san_patch.h"
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
		       strstr(ptx, "__gbpf_pid_tgid = 0x67627066f1000eff;") && count(ptx, "__gbpf_maps[") == 1,
	       "module globals carry placeholders");
	free(ptx);

	o.ctx_unused = GBPF_CUDA_CTX_UNUSED_ALL;
	rc = gbpf_san_patch_ptx(&o, &ptx, NULL, why, sizeof(why));
	tap_ok(rc == 0 && !strstr(ptx, "[%x0+0]") && !strstr(ptx, "[__ptr]"),
	       "no context stores when no probe reads the context");
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
	o.fragment = ".visible .global .align 8 .u64 __gbpf_maps[999999];\n"
		     ".visible .global .align 8 .u64 __gbpf_pid_tgid;\n";
	tap_ok(gbpf_san_patch_ptx(&o, &ptx, NULL, why, sizeof(why)) == -EINVAL,
	       "map count over the limit refused: %s", why);
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
	tap_ok(gbpf_san_patch_set_globals(img, sizeof(img), maps, 2, 0x1234ull, why, sizeof(why)) == 0,
	       "placeholders replaced (%s)", why);
	memcpy(&v, img + 13, 8);
	tap_ok(v == maps[0], "map 0 address written at its placeholder (unaligned)");
	memcpy(&v, img + 21, 8);
	tap_ok(v == maps[1], "map 1 address written");
	memcpy(&v, img + 100, 8);
	tap_ok(v == 0x1234ull, "pid_tgid written");
	tap_ok(gbpf_san_patch_set_globals(img, sizeof(img), maps, 2, 1, why, sizeof(why)) == -ENOENT &&
		       strstr(why, "pid_tgid 0"),
	       "an image without placeholders refused: %s", why);
	v = GBPF_SAN_MAGIC_PID;
	memcpy(img + 40, &v, 8);
	memcpy(img + 60, &v, 8);
	tap_ok(gbpf_san_patch_set_globals(img, sizeof(img), NULL, 0, 1, why, sizeof(why)) == -ENOENT,
	       "a placeholder found twice refused: %s", why);
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

		rc = gbpf_san_patch_set_globals(a, as, maps, 1, 42, why, sizeof(why));
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
	test_compile(ptx);
	test_choice_and_loader();
	free(ptx);
	return tap_done();
}
