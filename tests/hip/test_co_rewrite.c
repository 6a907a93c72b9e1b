/* SPDX-License-Identifier: MIT */
/*
 * Code-object rewriting on real code objects (arguments: hipcc-built
 * executables with gfx90a + gfx940 code, and clang-19 gfx942 v5 code
 * objects): the offload bundle in .hip_fatbin unbundles and re-bundles
 * byte for byte (and through a zstd CCOB wrapper), every AMDGCN code
 * object round-trips byte-identically through decode, re-emission and
 * llvm-mc with no probe, and with probe snippets inserted at every kernel
 * entry and before every s_endpgm the re-assembled code keeps every branch
 * on an instruction boundary and pointing at the same instruction.
 */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zstd.h>

#include "hip_test_util.h"
#include "plugins/hip/co_meta.h"
#include "plugins/hip/co_rewrite.h"
#include "tests/tap.h"

/* Bytes of section @p name of a host ELF, or NULL. */
static const uint8_t *host_section(const uint8_t *elf, size_t size, const char *name, size_t *len)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)elf;
	const Elf64_Shdr *sh = (const Elf64_Shdr *)(elf + eh->e_shoff);
	const char *str = (const char *)elf + sh[eh->e_shstrndx].sh_offset;

	for (unsigned i = 0; i < eh->e_shnum; i++)
		if (!strcmp(str + sh[i].sh_name, name) && sh[i].sh_offset + sh[i].sh_size <= size) {
			*len = sh[i].sh_size;
			return elf + sh[i].sh_offset;
		}
	return NULL;
}

/* Kernel entry offsets: STT_FUNC symbols of .text with a matching .kd. */
static size_t kernel_entries(const uint8_t *elf, const struct co_code *c, uint32_t *out, size_t max)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)elf;
	const Elf64_Shdr *sh = (const Elf64_Shdr *)(elf + eh->e_shoff);
	size_t n = 0;

	for (unsigned i = 0; i < eh->e_shnum; i++) {
		const Elf64_Sym *sym;
		const char *str;

		if (sh[i].sh_type != SHT_SYMTAB)
			continue;
		sym = (const Elf64_Sym *)(elf + sh[i].sh_offset);
		str = (const char *)elf + sh[sh[i].sh_link].sh_offset;
		for (size_t k = 0; k < sh[i].sh_size / sizeof(*sym) && n < max; k++)
			if (ELF64_ST_TYPE(sym[k].st_info) == STT_FUNC && sym[k].st_value >= c->text_addr &&
			    sym[k].st_value < c->text_addr + c->text_size && strstr(str + sym[k].st_name, "") &&
			    ELF64_ST_BIND(sym[k].st_info) == STB_GLOBAL)
				out[n++] = (uint32_t)(sym[k].st_value - c->text_addr);
	}
	return n;
}

/* NT_AMDGPU_METADATA descriptor of a code object's .note, or NULL. */
static const uint8_t *meta_note(const uint8_t *co, size_t size, size_t *len)
{
	const Elf64_Shdr *sh;
	size_t off = 0;

	if (co_find_section(co, size, ".note", &sh))
		return NULL;
	while (off + 12 <= sh->sh_size) {
		uint32_t nsz, dsz, type;
		size_t d;

		memcpy(&nsz, co + sh->sh_offset + off, 4);
		memcpy(&dsz, co + sh->sh_offset + off + 4, 4);
		memcpy(&type, co + sh->sh_offset + off + 8, 4);
		d = off + 12 + ((nsz + 3) & ~3u);
		if (d + dsz > sh->sh_size)
			return NULL;
		if (type == 32 /* NT_AMDGPU_METADATA */) {
			*len = dsz;
			return co + sh->sh_offset + d;
		}
		off = d + ((dsz + 3) & ~3u);
	}
	return NULL;
}

/*
 * Metadata: every kernel entry names NAME.kd as its symbol and has register
 * counts; re-encoding with no patch is byte-identical; a patch changes
 * exactly the patched kernel's counts.
 */
static void check_meta(const char *what, const uint8_t *co, size_t size)
{
	struct co_meta_kernel k[64], k2[64];
	struct co_meta_patch pt;
	uint8_t *out = NULL;
	size_t len = 0, out_n = 0;
	const uint8_t *m = meta_note(co, size, &len);
	int n, n2, good = 1;
	char sym[300];

	if (!m) {
		tap_ok(0, "%s: metadata note found", what);
		return;
	}
	n = co_meta_read(m, len, k, 64);
	for (int i = 0; i < n; i++) {
		good &= (size_t)snprintf(sym, sizeof(sym), "%s.kd", k[i].name) < sizeof(sym) &&
			!strcmp(sym, k[i].symbol) && k[i].sgpr > 0 && k[i].vgpr > 0;
	}
	tap_ok(n > 0 && good, "%s: metadata has %d kernels, each with NAME.kd and register counts", what, n);
	tap_ok(n > 0 && !co_meta_patch(m, len, NULL, 0, &out, &out_n) && out_n == len && !memcmp(out, m, len),
	       "%s: metadata re-encodes byte for byte", what);
	free(out);
	out = NULL;
	if (n <= 0)
		return;
	pt.name = k[0].name;
	pt.sgpr = 300;
	pt.vgpr = k[0].vgpr + 8;
	pt.priv = 70000;
	n2 = co_meta_patch(m, len, &pt, 1, &out, &out_n) ? -1 : co_meta_read(out, out_n, k2, 64);
	good = n2 == n && k2[0].sgpr == 300 && k2[0].vgpr == k[0].vgpr + 8 && k2[0].priv == 70000 &&
	       k2[0].group == k[0].group && k2[0].kernarg == k[0].kernarg;
	for (int i = 1; i < n2 && good; i++)
		good = k2[i].sgpr == k[i].sgpr && k2[i].vgpr == k[i].vgpr && k2[i].priv == k[i].priv;
	tap_ok(good, "%s: patching %s changes its counts (wider integers) and nothing else", what, k[0].name);
	free(out);
	tap_ok(co_meta_read(m, len > 8 ? len - 8 : 0, k2, 64) < 0, "%s: truncated metadata is rejected", what);
}

static void check_code_object_rw(const char *what, const uint8_t *co, size_t size, int *objects)
{
	struct co_code c, r;
	uint8_t *out = NULL, *text = NULL;
	size_t out_size = 0, tlen = 0, bad, moved = 0, nent, i, j;
	uint32_t entries[256];
	char err[512] = "", *asm_text = NULL;
	int rc;

	(*objects)++;
	check_meta(what, co, size);
	rc = co_roundtrip(GBPF_MC, co, size, &out, &out_size, err, sizeof(err));
	tap_ok(rc == 0 && out_size == size && !memcmp(out, co, size),
	       "%s: no-probe round trip is byte-identical (%zu bytes)%s%s", what, size, rc ? ": " : "", err);
	free(out);

	if (co_decode(co, size, &c, err, sizeof(err))) {
		tap_ok(0, "%s: decode: %s", what, err);
		return;
	}
	bad = co_check_branches(&c, err, sizeof(err));
	tap_ok(bad == 0, "%s (%s): %zu instructions decoded, every branch of the original lands on an instruction%s%s",
	       what, c.arch, c.n, bad ? ": " : "", bad ? err : "");
	nent = kernel_entries(co, &c, entries, 256);
	rc = co_emit_asm(&c, entries, nent, "\ts_nop 0\n\ts_nop 1\n\ts_nop 2", "\ts_nop 3", &asm_text);
	if (!rc)
		rc = co_assemble_text(GBPF_MC, c.arch, asm_text, &text, &tlen, err, sizeof(err));
	free(asm_text);
	if (!tap_ok(rc == 0, "%s: %zu kernels, probes inserted and re-assembled (%zu -> %zu bytes)%s%s", what, nent,
		    c.text_size, tlen, rc ? ": " : "", rc ? err : "")) {
		co_code_free(&c);
		return;
	}
	/* the new code: branches land on instruction starts, and each branch
	 * still reaches the instruction (same words) it reached before */
	memset(&r, 0, sizeof(r));
	memcpy(r.arch, c.arch, sizeof(r.arch));
	r.text = text;
	r.text_size = tlen;
	rc = co_decode_raw(&r, err, sizeof(err));
	bad = rc ? 1 : co_check_branches(&r, err, sizeof(err));
	for (i = 0, j = 0; !rc && i < c.n; i++) {
		const struct co_insn *o = &c.insns[i];

		if (o->kind != CO_INSN_BRANCH)
			continue;
		while (j < r.n && !(r.insns[j].kind == CO_INSN_BRANCH && !strcmp(r.insns[j].mnem, o->mnem)))
			j++;
		if (j >= r.n || o->target >= c.text_size || r.insns[j].target >= tlen ||
		    memcmp(c.text + o->target, r.text + r.insns[j].target, 4)) {
			/* a probe snippet may sit at the target: skip inserted nops */
			uint32_t t = j < r.n ? r.insns[j].target : 0;

			while (j < r.n && t + 4 <= tlen && (r.text[t + 3] == 0xbf && r.text[t + 2] == 0x80))
				t += 4;
			if (j >= r.n || o->target >= c.text_size || t + 4 > tlen || memcmp(c.text + o->target, r.text + t, 4))
				moved++;
		}
		j++;
	}
	tap_ok(rc == 0 && bad == 0 && moved == 0,
	       "%s: with probes, %zu instructions, branches on instruction starts (%zu bad) reaching the same code (%zu moved)%s%s",
	       what, r.n, bad, moved, bad ? ": " : "", bad ? err : "");
	co_code_free(&r);
	co_code_free(&c);
	free(text);
}

int main(int argc, char **argv)
{
	int objects = 0;

	if (argc < 2) {
		tap_skip("no test applications were built (hipcc / clang-19 missing)");
		return tap_done();
	}
	for (int a = 1; a < argc; a++) {
		size_t size = 0, flen = 0;
		uint8_t *file = (uint8_t *)read_file(argv[a], &size);
		const char *base = strrchr(argv[a], '/') ? strrchr(argv[a], '/') + 1 : argv[a];
		const uint8_t *fat;
		struct co_bundle b;
		char err[512];

		if (!tap_ok(file != NULL, "%s read", base))
			continue;
		if (size > 4 && file[18] == 224) { /* e_machine EM_AMDGPU: a bare code object */
			check_code_object_rw(base, file, size, &objects);
			free(file);
			continue;
		}
		fat = host_section(file, size, ".hip_fatbin", &flen);
		if (!tap_ok(fat != NULL, "%s has a .hip_fatbin section", base)) {
			free(file);
			continue;
		}
		if (tap_ok(co_bundle_parse(fat, flen, &b, err, sizeof(err)) == 0, "%s: bundle parsed (%zu entries)%s", base,
			   b.n, err[0] ? err : "")) {
			uint8_t *re = NULL, *z;
			size_t re_size = 0, zc;
			int amd = 0;

			co_bundle_write(b.e, b.n, &re, &re_size);
			tap_ok(re && re_size <= flen && !memcmp(re, fat, re_size) &&
				       !memcmp(fat + re_size, (uint8_t[4096]){0}, flen - re_size < 4096 ? flen - re_size : 0),
			       "%s: re-bundled bytes equal the original bundle (%zu of %zu bytes, rest padding)", base,
			       re_size, flen);
			/* a zstd CCOB (v2) wrapper of the same bundle unbundles to the same entries */
			zc = ZSTD_compressBound(re_size);
			z = malloc(24 + zc);
			if (z && re) {
				size_t got = ZSTD_compress(z + 24, zc, re, re_size, 3);
				uint32_t total = (uint32_t)(24 + got), raw = (uint32_t)re_size;
				struct co_bundle cb;

				memcpy(z, "CCOB", 4);
				memcpy(z + 4, &(uint16_t){2}, 2);
				memcpy(z + 6, &(uint16_t){1}, 2);
				memcpy(z + 8, &total, 4);
				memcpy(z + 12, &raw, 4);
				memset(z + 16, 0, 8);
				if (co_bundle_parse(z, 24 + got, &cb, err, sizeof(err)) == 0) {
					int same = cb.n == b.n && cb.compressed;

					for (size_t i = 0; same && i < b.n; i++)
						same = !strcmp(cb.e[i].id, b.e[i].id) && cb.e[i].size == b.e[i].size &&
						       !memcmp(cb.e[i].data, b.e[i].data, b.e[i].size);
					tap_ok(same, "%s: zstd CCOB bundle unbundles to the same %zu entries", base, b.n);
					co_bundle_free(&cb);
				} else {
					tap_ok(0, "%s: CCOB parse: %s", base, err);
				}
			}
			free(z);
			free(re);
			for (size_t i = 0; i < b.n; i++) {
				char what[256];

				if (!strstr(b.e[i].id, "amdgcn"))
					continue;
				amd++;
				snprintf(what, sizeof(what), "%s[%s]", base, b.e[i].id);
				check_code_object_rw(what, b.e[i].data, b.e[i].size, &objects);
			}
			tap_ok(amd == 2, "%s: two AMDGCN code objects (gfx90a, gfx940) in the bundle (%d)", base, amd);
			co_bundle_free(&b);
		}
		free(file);
	}
	tap_ok(objects >= 3, "%d code objects checked", objects);
	return tap_done();
}
