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

static void check_code_object_rw(const char *what, const uint8_t *co, size_t size, int *objects)
{
	struct co_code c, r;
	uint8_t *out = NULL, *text = NULL;
	size_t out_size = 0, tlen = 0, bad, moved = 0, nent, i, j;
	uint32_t entries[256];
	char err[512] = "", *asm_text = NULL;
	int rc;

	(*objects)++;
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
