/* SPDX-License-Identifier: MIT */
/*
 * Probe insertion into real code objects (arguments: example BPF objects,
 * hipcc-built apps with gfx90a + gfx940 code, and clang-19 gfx942 v5 code
 * objects). The entry and exit programs of cuda_counter.bpf.o become an
 * AMDGCN probe module for each processor; every kernel of every code
 * object gets an entry stub and an exit stub before each s_endpgm; the
 * rewritten object is linked by ld.lld and must pass the static checker
 * (descriptors, user SGPRs, register granules covering the probe's
 * registers, metadata, branch targets), disassemble with llvm-objdump,
 * call the probes once per stub, keep every original instruction in order,
 * and carry one metadata note with the new register counts.
 */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gbpf/insn.h>
#include <gbpf/object.h>
#include <gbpf/plugin.h>

#include "hip_test_util.h"
#include "plugins/hip/amdgcn_codegen.h"
#include "plugins/hip/co_elf.h"
#include "plugins/hip/co_instrument.h"
#include "plugins/hip/co_meta.h"
#include "plugins/hip/co_rewrite.h"
#include "tests/tap.h"

static struct gbpf_object *probe_obj;
static const struct gbpf_prog_desc *probe_progs[16];
static size_t n_probe_progs;
static int entry_idx = -1, exit_idx = -1;

static int select_all(void *ctx, const char *name, struct co_kernel_probes *p)
{
	(void)ctx;
	(void)name;
	p->entry = entry_idx;
	p->exit = exit_idx;
	return 1;
}

static int select_none(void *ctx, const char *name, struct co_kernel_probes *p)
{
	(void)ctx;
	(void)name;
	(void)p;
	return 0;
}

/* Probe module assembly for one processor and code object version. */
static char *probe_asm(const char *arch, unsigned cov, struct co_probe_res *res)
{
	struct gbpf_amdgcn_opts o = {.sz = sizeof(o), .arch = arch, .output = GBPF_AMDGCN_OUT_ASM, .opt_level = 2,
				     .cov = cov};
	char *text = NULL, *prepared = NULL, err[512] = "";
	size_t len = 0;
	int rc = gbpf_amdgcn_emit(probe_progs, n_probe_progs, &o, &text, &len, err, sizeof(err));

	if (rc || co_probe_asm_prepare(text, arch, &prepared, res, err, sizeof(err)))
		tap_diag("probe module for %s v%u: %s", arch, cov, err);
	free(text);
	return prepared;
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* Every original non-branch instruction word of the kernel, in order, in the new code. */
static int original_kept(const struct co_code *oc, uint32_t from, uint32_t to, const struct co_code *nc,
			 uint32_t nfrom)
{
	size_t j = 0;

	while (j < nc->n && nc->insns[j].off < nfrom)
		j++;
	for (size_t i = 0; i < oc->n; i++) {
		const struct co_insn *in = &oc->insns[i];

		if (in->off < from || in->off >= to || in->kind == CO_INSN_BRANCH)
			continue;
		/* the literals of s_getpc_b64 address pairs change (checked by getpc_targets) */
		if ((i >= 1 && oc->insns[i - 1].kind == CO_INSN_GETPC) || (i >= 2 && oc->insns[i - 2].kind == CO_INSN_GETPC))
			continue;
		while (j < nc->n && (nc->insns[j].len != in->len ||
				     memcmp(nc->text + nc->insns[j].off, oc->text + in->off, in->len)))
			j++;
		if (j >= nc->n)
			return 0;
		j++;
	}
	return 1;
}

/* Bytes at the address each s_getpc_b64 / s_add_u32 / s_addc_u32 computes (first 8; file offsets via sections). */
static size_t getpc_targets(const uint8_t *elf, size_t size, const struct co_code *c, uint64_t *vals, size_t max)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)elf;
	const Elf64_Shdr *sh = (const Elf64_Shdr *)(elf + eh->e_shoff);
	size_t n = 0;

	for (size_t i = 0; i + 2 < c->n && n < max; i++) {
		uint32_t lo, hi;
		uint64_t t;

		if (c->insns[i].kind != CO_INSN_GETPC || c->insns[i + 1].len != 8 || c->insns[i + 2].len != 8)
			continue;
		memcpy(&lo, c->text + c->insns[i].off + 8, 4);
		memcpy(&hi, c->text + c->insns[i].off + 16, 4);
		t = c->text_addr + c->insns[i].off + 4 + (((uint64_t)hi << 32) | lo);
		vals[n] = 0;
		for (unsigned k = 1; k < eh->e_shnum; k++)
			if (sh[k].sh_type == SHT_PROGBITS && (sh[k].sh_flags & SHF_ALLOC) && t >= sh[k].sh_addr &&
			    t + 8 <= sh[k].sh_addr + sh[k].sh_size && sh[k].sh_offset + (t - sh[k].sh_addr) + 8 <= size)
				memcpy(&vals[n], elf + sh[k].sh_offset + (t - sh[k].sh_addr), 8);
		n++;
	}
	return n;
}


/*
 * What the probe function stores into context word @p word (byte offset) in
 * its O2 IR @p fn: the value name ("%1", "0", ...), or "" when no store is
 * found. The IR is what emit_probe_wrapper writes: word 0 through %ctx,
 * the others through "getelementptr inbounds i8, ptr addrspace(5) %ctx, i32 OFF".
 */
static void stored_word(const char *fn, unsigned word, char *val, size_t size)
{
	char gep[64] = "%ctx", pat[128];
	const char *p, *last = NULL;

	val[0] = 0;
	if (word) {
		snprintf(pat, sizeof(pat), "ptr addrspace(5) %%ctx, i32 %u\n", word);
		p = strstr(fn, pat);
		if (!p)
			return;
		while (p > fn && p[-1] != '\n')
			p--;
		if (sscanf(p, " %%%60[^ ] =", gep + 1) != 1)
			return;
	}
	/* the last "store i64 VAL, ptr addrspace(5) GEP, align 8" line */
	snprintf(pat, sizeof(pat), ", ptr addrspace(5) %s, align", gep);
	for (p = fn; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		const char *eol = strchr(p, '\n'), *hit = strstr(p, pat);

		if (!strncmp(p, "  store i64 ", 12) && hit && (!eol || hit < eol))
			last = p;
	}
	if (!last || sscanf(last, "  store i64 %60[^,]", val) != 1)
		val[0] = 0;
	(void)size;
}

/*
 * The probe function's context, in the generated IR: a program that reads
 * one context field gets, after O2, the probe argument the stub fills for
 * it (kernel_id %0, params %1, launch_id %2, device = zext of %3) at the
 * field's offset of the context the probe builds (or returned directly
 * when LLVM folds the load); with a ctx_reads mask that excludes the field
 * the word is 0; device_pad (upper half of the zext'ed device) and a
 * gpu/mem field are 0.
 */
static void ctx_ir_checks(void)
{
	static const struct {
		const char *what;
		int16_t off;
		uint8_t size;
		const char *arg; /* the argument stored in the field's word */
	} cases[] = {
		{"kernel_id", 0, GBPF_DW, "%0"},
		{"params", 8, GBPF_DW, "%1"},
		{"launch_id", 16, GBPF_DW, "%2"},
		{"device (u32)", 56, GBPF_W, "zext i32 %3"},
		{"device_pad", 60, GBPF_W, "zext i32 %3"},
		{"mem_addr", 24, GBPF_DW, "0"},
	};

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		for (int masked = 0; masked < 2; masked++) {
			struct gbpf_insn insns[2] = {
				{.code = GBPF_LDX | GBPF_MEM | cases[c].size, .dst = 0, .src = 1, .off = cases[c].off},
				{.code = GBPF_JMP | GBPF_EXIT},
			};
			struct gbpf_prog_desc d = {.sz = sizeof(d), .name = "ctxfield", .section = "gpu/entry/k",
						   .insns = insns, .insn_cnt = 2,
						   .attach = {.kind = GBPF_ATTACH_GPU_ENTRY}};
			const struct gbpf_prog_desc *dp = &d;
			unsigned word = (unsigned)cases[c].off & ~7u;
			/* masked: the program "reads" every byte except this field's word */
			uint64_t reads = masked ? ~(0xffULL << word) : ~0ULL;
			struct gbpf_amdgcn_opts o = {.sz = sizeof(o), .arch = "gfx90a", .output = GBPF_AMDGCN_OUT_IR,
						     .opt_level = 2, .cov = 5, .ctx_reads = &reads};
			char *ir = NULL, err[512] = "", *fn, *end, val[64], zext[96] = "";
			size_t len = 0;
			int rc = gbpf_amdgcn_emit(&dp, 1, &o, &ir, &len, err, sizeof(err)), ok = 0;
			const char *want = masked ? "0" : cases[c].arg;

			fn = ir ? strstr(ir, "@" GBPF_AMDGCN_PROBE_PREFIX "0(") : NULL;
			end = fn ? strstr(fn, "\n}") : NULL;
			if (end)
				end[1] = 0;
			if (!rc && fn) {
				stored_word(fn, word, val, sizeof(val));
				if (!strncmp(want, "zext", 4)) {
					/* the stored value is defined as "VAL = zext i32 %3 to i64" */
					snprintf(zext, sizeof(zext), "%s = zext i32 %%3 to i64", val);
					ok = val[0] == '%' && strstr(fn, zext) != NULL;
				} else {
					ok = !strcmp(val, want);
				}
				if (!ok && word == 0) {
					/* folded: the function returns the argument itself */
					snprintf(zext, sizeof(zext), "ret i64 %s\n", want);
					ok = strstr(fn, zext) != NULL;
				}
			}
			tap_ok(ok, "probe IR: ctx->%s%s: the context word at %u holds %s%s%s", cases[c].what,
			       masked ? " (ctx_reads without it)" : "", word, want, rc ? ": " : "", rc ? err : "");
			if (!ok && fn)
				tap_diag("stored '%s' in:\n%s", val, fn);
			free(ir);
		}
	}
}

/* Occurrences of @p a in @p dis (with @p b later on the same line when b is not NULL). */
static size_t lines_with(const char *dis, const char *a, const char *b)
{
	size_t n = 0;

	for (const char *p = dis; (p = strstr(p, a)); p += strlen(a)) {
		const char *eol = strchr(p, '\n');

		if (!b || (strstr(p, b) && (!eol || strstr(p, b) < eol)))
			n++;
	}
	return n;
}

/*
 * The stub fills the probe's argument registers per ctx_reads: the kernel id
 * literal (gbpf_kernel_id of the kernel's name) in v0/v1, the kernarg
 * pointer (the register the implicit-argument pointer s[8:9] is computed
 * from) in v2/v3, and launch id / device from the __gbpf_launch global in
 * v4/v5 and v6; nothing for fields no probe reads.
 */
static void ctx_stub_checks(const char *what, const uint8_t *co, size_t size, const char *arch, const char *probe_text,
			    const struct co_probe_res *res)
{
	static const struct {
		const char *name;
		uint64_t mask;
		unsigned fields; /* CO_CTX_* expected */
	} sets[] = {
		{"every field", ~0ULL, CO_CTX_KERNEL_ID | CO_CTX_PARAMS | CO_CTX_LAUNCH_ID | CO_CTX_DEVICE},
		{"none", 0, 0},
		{"kernel_id only", 0xffULL, CO_CTX_KERNEL_ID},
		{"params only", 0xff00ULL, CO_CTX_PARAMS},
		{"launch_id only", 0xff0000ULL, CO_CTX_LAUNCH_ID},
		{"device only", 0x0f00000000000000ULL, CO_CTX_DEVICE},
	};

	for (size_t t = 0; t < sizeof(sets) / sizeof(sets[0]); t++) {
		uint64_t reads[16];
		struct co_instr_opts o = {.mc = GBPF_MC, .lld = GBPF_LLD, .select = select_all, .probe_asm = probe_text,
					  .res = *res, .ctx_reads = reads, .n_ctx_reads = 16};
		struct co_instr_result r = {0};
		uint8_t *out = NULL;
		size_t out_size = 0, stubs = 0;
		char err[512] = "", *dir, *dis = NULL;
		int rc, good = 1;

		for (size_t i = 0; i < 16; i++)
			reads[i] = sets[t].mask;
		rc = co_instrument(co, size, &o, &out, &out_size, &r, err, sizeof(err));
		if (!tap_ok(rc == 0 && out, "%s: rewritten with probes reading %s%s%s", what, sets[t].name, rc ? ": " : "",
			    rc ? err : "")) {
			co_instr_result_free(&r);
			continue;
		}
		dir = tmp_dir("ctx");
		if (dir) {
			char path[512], cpu[64];
			char *argv[] = {(char *)GBPF_OBJDUMP, (char *)"-d", cpu, path, NULL};

			snprintf(cpu, sizeof(cpu), "--mcpu=%s", arch);
			write_file(dir, "out.co", out, out_size, path, sizeof(path));
			if (run_cmd(argv, &dis) != 0) {
				free(dis);
				dis = NULL;
			}
			rm_tree(dir);
			free(dir);
		}
		for (size_t i = 0; i < r.n; i++)
			stubs += r.k[i].n_entry + r.k[i].n_exit;
		good = dis != NULL && stubs > 0;
		/*
		 * The stubs' argument set-up, and nothing else: in the kernels'
		 * disassembly (not the probe functions'), from each stub's v31 move
		 * to its call (the test kernels make no calls of their own).
		 */
		if (good) {
			char *win = calloc(1, strlen(dis) + 1);
			size_t wl = 0, nwin = 0;

			for (size_t i = 0; win && i < r.n; i++) {
				char hdr[300];
				const char *kp, *kend;

				snprintf(hdr, sizeof(hdr), "<%s>:\n", r.k[i].name);
				kp = strstr(dis, hdr);
				kend = kp ? strstr(kp, "\n\n") : NULL;
				for (const char *p = kp; p && (p = strstr(p, "v_mov_b32_e32 v31, v")) && (!kend || p < kend);) {
					const char *call = strstr(p, "s_swappc_b64"), *ka;

					if (!call || (kend && call > kend))
						break;
					/* the kernarg pair s[8:9] is computed from, just before v31 */
					ka = p;
					while (ka > kp && strncmp(ka, "s_add_u32 s8, s", 15))
						ka--;
					memcpy(win + wl, ka, (size_t)(call - ka));
					wl += (size_t)(call - ka);
					win[wl++] = '|';
					nwin++;
					p = call;
				}
			}
			good = win && nwin == stubs;
			if (!good)
				tap_diag("%s: %zu stub windows for %zu stubs", what, nwin, stubs);
			if (good) {
				free(dis);
				dis = win;
				win = NULL;
			}
			free(win);
		}
		/* kernel ids: each kernel's stubs carry its own id's halves */
		for (size_t i = 0; good && i < r.n; i++) {
			uint64_t id = gbpf_kernel_id(r.k[i].name);
			char lo[64], hi[64];
			size_t nlo, nhi;

			snprintf(lo, sizeof(lo), "v_mov_b32_e32 v0, 0x%x ", (unsigned)(id & 0xffffffffu));
			snprintf(hi, sizeof(hi), "v_mov_b32_e32 v1, 0x%x ", (unsigned)(id >> 32));
			nlo = lines_with(dis, lo, NULL);
			nhi = lines_with(dis, hi, NULL);
			if (sets[t].fields & CO_CTX_KERNEL_ID)
				good &= nlo == r.k[i].n_entry + r.k[i].n_exit && nhi == nlo;
			else
				good &= nlo == 0 && lines_with(dis, "v_mov_b32_e32 v0,", NULL) == 0;
			if (!good)
				tap_diag("%s: kernel %s id 0x%llx: %zu/%zu v0/v1 moves for %u stubs", what, r.k[i].name,
					 (unsigned long long)id, nlo, nhi, r.k[i].n_entry + r.k[i].n_exit);
		}
		if (good) {
			/* params: v2/v3 from the register pair s[8:9] is computed from, in every stub */
			size_t n_v2 = lines_with(dis, "v_mov_b32_e32 v2,", NULL), n_match = 0;

			for (const char *p = dis; (p = strstr(p, "s_add_u32 s8, s")); p++) {
				unsigned ka = 0;
				char v2[64], v3[64];
				const char *bar = strchr(p, '|'), *q;

				if (sscanf(p, "s_add_u32 s8, s%u", &ka) != 1)
					continue;
				snprintf(v2, sizeof(v2), "v_mov_b32_e32 v2, s%u ", ka);
				snprintf(v3, sizeof(v3), "v_mov_b32_e32 v3, s%u ", ka + 1);
				q = strstr(p, v2);
				n_match += q && bar && q < bar && strstr(q, v3) && strstr(q, v3) < bar;
			}
			good &= (sets[t].fields & CO_CTX_PARAMS) ? n_v2 == stubs && n_match == stubs : n_v2 == 0;
			if (!good)
				tap_diag("%s: params: %zu v2 moves, %zu from the kernarg pair, %zu stubs", what, n_v2, n_match, stubs);
		}
		if (good) {
			size_t nload = lines_with(dis, "s_load_dwordx4 s[20:23], s[16:17], 0x0", NULL),
			       n4 = lines_with(dis, "v_mov_b32_e32 v4, s20", NULL),
			       n5 = lines_with(dis, "v_mov_b32_e32 v5, s21", NULL),
			       n6 = lines_with(dis, "v_mov_b32_e32 v6, s22", NULL);
			int need = !!(sets[t].fields & (CO_CTX_LAUNCH_ID | CO_CTX_DEVICE));

			good &= nload == (need ? stubs : 0);
			good &= (sets[t].fields & CO_CTX_LAUNCH_ID) ? n4 == stubs && n5 == stubs : n4 == 0 && n5 == 0;
			good &= (sets[t].fields & CO_CTX_DEVICE) ? n6 == stubs : n6 == 0;
			if (!good)
				tap_diag("%s: %zu launch-global loads, %zu/%zu/%zu v4/v5/v6 moves, %zu stubs", what, nload, n4,
					 n5, n6, stubs);
		}
		tap_ok(good, "%s: probes reading %s: the stubs fill exactly those argument registers (%zu stubs)", what,
		       sets[t].name, stubs);
		if (good && (sets[t].fields & CO_CTX_LAUNCH_ID)) {
			/* the s_getpc_b64 pair before each load computes the address of __gbpf_launch */
			struct co_code nc;
			struct co_sym *syms = NULL;
			size_t nsyms = 0, hits = 0;
			const struct co_sym *g;

			if (!co_decode(out, out_size, &nc, err, sizeof(err)) && !co_elf_syms(out, out_size, &syms, &nsyms, err, sizeof(err)) &&
			    (g = co_sym_find(syms, nsyms, GBPF_AMDGCN_LAUNCH_GLOBAL)) != NULL) {
				for (size_t i = 0; i + 3 < nc.n; i++) {
					uint32_t lo, hi;

					if (nc.insns[i].kind != CO_INSN_GETPC || nc.insns[i + 1].len != 8 || nc.insns[i + 2].len != 8 ||
					    strcmp(nc.insns[i + 3].mnem, "s_load_dwordx4"))
						continue;
					memcpy(&lo, nc.text + nc.insns[i].off + 8, 4);
					memcpy(&hi, nc.text + nc.insns[i].off + 16, 4);
					hits += nc.text_addr + nc.insns[i].off + 4 + (((uint64_t)hi << 32) | lo) == g->value;
				}
				co_code_free(&nc);
			}
			tap_ok(hits == stubs, "%s: every launch-global load addresses " GBPF_AMDGCN_LAUNCH_GLOBAL " (%zu of %zu)",
			       what, hits, stubs);
			free(syms);
		}
		free(dis);
		free(out);
		co_instr_result_free(&r);
	}
}

static int ctx_stub_checked;

static void instrument_one(const char *what, const uint8_t *co, size_t size)
{
	struct co_probe_res res;
	struct co_instr_opts o = {.mc = GBPF_MC, .lld = GBPF_LLD, .select = select_all};
	struct co_instr_result r = {0};
	struct co_code oc, nc;
	struct co_sym *osyms = NULL, *nsyms = NULL;
	size_t nos = 0, nns = 0, out_size = 0, nk0 = 0, nk1 = 0;
	uint8_t *out = NULL;
	char err[512] = "", *asm_text, *dir = NULL, *dis = NULL;
	const char *arch;
	unsigned cov = ((const Elf64_Ehdr *)co)->e_ident[EI_ABIVERSION] == 3 ? 5 : 4;
	int rc;

	if (co_decode(co, size, &oc, err, sizeof(err))) {
		tap_ok(0, "%s: decode: %s", what, err);
		return;
	}
	arch = oc.arch;
	rc = co_check_object(arch, co, size, &nk0, err, sizeof(err));
	tap_ok(rc == 0 && nk0 > 0, "%s: the original passes the checker (%zu kernels)%s%s", what, nk0, rc ? ": " : "",
	       rc ? err : "");
	asm_text = probe_asm(arch, cov, &res);
	if (!tap_ok(asm_text != NULL, "%s: probe module for %s (v%u): %u functions, %u SGPRs, %u VGPRs, %u scratch bytes",
		    what, arch, cov, asm_text ? res.n_funcs : 0, res.sgprs, res.vgprs, res.scratch)) {
		co_code_free(&oc);
		return;
	}
	o.probe_asm = asm_text;
	o.res = res;
	/* once per processor family: gfx90a (MUBUF scratch) and gfx94x (flat scratch) */
	if (!(ctx_stub_checked & (strcmp(arch, "gfx90a") ? 2 : 1))) {
		ctx_stub_checked |= strcmp(arch, "gfx90a") ? 2 : 1;
		ctx_stub_checks(what, co, size, arch, asm_text, &res);
	}
	o.select = select_none;
	rc = co_instrument(co, size, &o, &out, &out_size, &r, err, sizeof(err));
	tap_ok(rc == 0 && !out && r.n == nk0, "%s: no kernel selected: nothing rewritten", what);
	co_instr_result_free(&r);
	o.select = select_all;
	rc = co_instrument(co, size, &o, &out, &out_size, &r, err, sizeof(err));
	if (!tap_ok(rc == 0 && out, "%s: every kernel instrumented and relinked (%zu -> %zu bytes)%s%s", what, size,
		    out_size, rc ? ": " : "", rc ? err : "")) {
		for (size_t i = 0; i < r.n; i++)
			tap_diag("%s: %s: %s", what, r.k[i].name, r.k[i].reason);
		co_instr_result_free(&r);
		free(asm_text);
		co_code_free(&oc);
		return;
	}
	{
		int all = 1;
		unsigned exits = 0;

		for (size_t i = 0; i < r.n; i++) {
			all &= r.k[i].instrumented && r.k[i].n_entry == 1 && r.k[i].n_exit >= 1 && r.k[i].sgpr_base >= 34 &&
			       r.k[i].vgpr_save >= 40 && (r.k[i].vgpr_save - 40) % 16 < 8;
			exits += r.k[i].n_exit;
			if (!r.k[i].instrumented)
				tap_diag("%s: %s left alone: %s", what, r.k[i].name, r.k[i].reason);
		}
		tap_ok(all && r.n == nk0, "%s: %zu kernels with an entry stub and %u exit stubs; reserved SGPRs from s34 up, "
					  "a callee-saved VGPR", what, r.n, exits);
		rc = co_check_object(arch, out, out_size, &nk1, err, sizeof(err));
		tap_ok(rc == 0 && nk1 == nk0,
		       "%s: rewritten object passes descriptor, user SGPR, register, metadata and branch checks%s%s", what,
		       rc ? ": " : "", rc ? err : "");

		/* llvm-objdump disassembles it; one call per stub */
		dir = tmp_dir("instr");
		if (dir) {
			char path[512], cpu[64];
			char *argv[] = {(char *)GBPF_OBJDUMP, (char *)"-d", cpu, path, NULL};
			int st;

			snprintf(cpu, sizeof(cpu), "--mcpu=%s", arch);
			write_file(dir, "out.co", out, out_size, path, sizeof(path));
			st = run_cmd(argv, &dis);
			tap_ok(st == 0 && dis && count(dis, "s_swappc_b64") >= r.n + exits && !strstr(dis, "<unknown>"),
			       "%s: llvm-objdump disassembles the rewritten object (%zu s_swappc_b64 for %zu + %u stubs)", what,
			       dis ? count(dis, "s_swappc_b64") : 0, r.n, exits);
			free(dis);
			rm_tree(dir);
			free(dir);
		}
	}
	/* metadata: one note, new counts for each kernel */
	{
		struct co_meta_kernel mk[64];
		size_t ml = 0;
		const uint8_t *m = co_elf_meta(out, out_size, &ml);
		int n = m ? co_meta_read(m, ml, mk, 64) : -1, good = n == (int)r.n;

		for (int i = 0; good && i < n; i++)
			for (size_t k = 0; k < r.n; k++)
				if (!strcmp(r.k[k].name, mk[i].name))
					good = mk[i].sgpr == r.k[k].sgprs && mk[i].vgpr == r.k[k].vgprs &&
					       mk[i].priv == r.k[k].priv && mk[i].priv >= res.scratch;
		tap_ok(good, "%s: metadata carries each kernel's new SGPR/VGPR counts and private segment", what);
	}
	/* each kernel keeps its original instructions in order after its entry stub */
	if (!co_decode(out, out_size, &nc, err, sizeof(err)) && !co_elf_syms(co, size, &osyms, &nos, err, sizeof(err)) &&
	    !co_elf_syms(out, out_size, &nsyms, &nns, err, sizeof(err))) {
		int kept = 1;

		for (size_t i = 0; i < r.n; i++) {
			const struct co_sym *a = co_sym_find(osyms, nos, r.k[i].name), *b = co_sym_find(nsyms, nns, r.k[i].name);
			uint64_t end = oc.text_addr + oc.text_size;

			for (size_t s = 0; a && s < nos; s++)
				if (osyms[s].type == STT_FUNC && osyms[s].value > a->value && osyms[s].value < end)
					end = osyms[s].value;
			kept &= a && b &&
				original_kept(&oc, (uint32_t)(a->value - oc.text_addr), (uint32_t)(end - oc.text_addr), &nc,
					      (uint32_t)(b->value - nc.text_addr));
		}
		tap_ok(kept, "%s: every kernel keeps its original instructions, in order", what);
		{
			uint64_t ov[64], nv[256];
			size_t no = getpc_targets(co, size, &oc, ov, 64), nn = getpc_targets(out, out_size, &nc, nv, 256);
			int same = 1;

			for (size_t i = 0; i < no; i++) {
				int found = 0;

				for (size_t j = 0; j < nn; j++)
					found |= nv[j] == ov[i];
				same &= found && ov[i] != 0;
			}
			if (no)
				tap_ok(same, "%s: each of the %zu PC-relative address computations still reaches the same data", what,
				       no);
		}
		/* the checker is not a rubber stamp: a descriptor with too few VGPRs fails */
		{
			const Elf64_Shdr *ro;
			const struct co_sym *kd;
			char kdname[300];

			snprintf(kdname, sizeof(kdname), "%s.kd", r.k[0].name);
			kd = co_sym_find(nsyms, nns, kdname);
			if (kd && !co_find_section(out, out_size, ".rodata", &ro)) {
				uint8_t *bad = malloc(out_size);
				uint32_t rsrc1;

				memcpy(bad, out, out_size);
				memcpy(&rsrc1, bad + ro->sh_offset + (kd->value - ro->sh_addr) + CO_KD_RSRC1, 4);
				rsrc1 &= ~0x3fu;
				memcpy(bad + ro->sh_offset + (kd->value - ro->sh_addr) + CO_KD_RSRC1, &rsrc1, 4);
				tap_ok(co_check_object(arch, bad, out_size, NULL, err, sizeof(err)) != 0 && strstr(err, "VGPR"),
				       "%s: the checker rejects a descriptor granting 8 VGPRs (%s)", what, err);
				free(bad);
			} else {
				tap_ok(0, "%s: descriptor %s found", what, kdname);
			}
		}
		co_code_free(&nc);
	} else {
		tap_ok(0, "%s: rewritten object decodes: %s", what, err);
	}
	free(osyms);
	free(nsyms);
	co_instr_result_free(&r);
	free(out);
	free(asm_text);
	co_code_free(&oc);
}

static const uint8_t *host_section(const uint8_t *elf, size_t size, const char *name, size_t *len)
{
	const Elf64_Shdr *sh;

	if (co_find_section(elf, size, name, &sh))
		return NULL;
	*len = sh->sh_size;
	return elf + sh->sh_offset;
}

int main(int argc, char **argv)
{
	int objects = 0;

	for (int a = 1; a < argc; a++)
		if (strstr(argv[a], "cuda_counter.bpf.o"))
			probe_obj = gbpf_object__open_file(argv[a], NULL);
	if (!probe_obj) {
		tap_skip("cuda_counter.bpf.o or the test apps were not built");
		return tap_done();
	}
	for (size_t i = 0; i < gbpf_object__prog_cnt(probe_obj) && n_probe_progs < 16; i++) {
		const struct gbpf_prog_desc *p = gbpf_object__prog(probe_obj, i);

		if (p->attach.kind == GBPF_ATTACH_GPU_ENTRY && entry_idx < 0)
			entry_idx = (int)n_probe_progs;
		if (p->attach.kind == GBPF_ATTACH_GPU_EXIT && exit_idx < 0)
			exit_idx = (int)n_probe_progs;
		if (gbpf_attach_is_device(p->attach.kind))
			probe_progs[n_probe_progs++] = p;
	}
	tap_ok(entry_idx >= 0 && exit_idx >= 0, "cuda_counter.bpf.o has an entry and an exit program");
	ctx_ir_checks();
	for (int a = 1; a < argc; a++) {
		size_t size = 0, flen = 0;
		uint8_t *file;
		const uint8_t *fat;
		const char *base = strrchr(argv[a], '/') ? strrchr(argv[a], '/') + 1 : argv[a];
		struct co_bundle b;
		char err[512];

		if (strstr(argv[a], ".bpf.o"))
			continue;
		file = (uint8_t *)read_file(argv[a], &size);
		if (!tap_ok(file != NULL, "%s read", base))
			continue;
		if (size > 20 && file[18] == 224) {
			instrument_one(base, file, size);
			objects++;
		} else if ((fat = host_section(file, size, ".hip_fatbin", &flen)) &&
			   !co_bundle_parse(fat, flen, &b, err, sizeof(err))) {
			for (size_t i = 0; i < b.n; i++) {
				char what[300];

				if (!strstr(b.e[i].id, "amdgcn"))
					continue;
				snprintf(what, sizeof(what), "%s[%s]", base, strstr(b.e[i].id, "gfx"));
				instrument_one(what, b.e[i].data, b.e[i].size);
				objects++;
			}
			co_bundle_free(&b);
		} else {
			tap_ok(0, "%s: no .hip_fatbin bundle", base);
		}
		free(file);
	}
	tap_ok(objects >= 3, "%d code objects instrumented", objects);
	gbpf_object__close(probe_obj);
	return tap_done();
}
