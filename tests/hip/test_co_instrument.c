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

#include <gbpf/object.h>

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
