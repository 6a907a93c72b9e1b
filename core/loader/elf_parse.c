/* SPDX-License-Identifier: MIT */
/*
 * core/loader/elf_parse.c - check the ELF container before trusting it.
 *
 * Everything is read with memcpy into aligned host structs: the input may
 * come from memory at any alignment, and UBSan rightly rejects misaligned
 * loads. Only little-endian ELF64 relocatable objects for EM_BPF are
 * accepted; gbpf's instruction encoding is little endian.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loader_internal.h"

static int check_header(struct gbpf_object *obj)
{
	const uint8_t *id = obj->buf;

	if (obj->size < sizeof(Elf64_Ehdr))
		return ld_err(obj, -GBPF_ERRNO__FORMAT,
			      "ELF header: file is %zu bytes, shorter than an ELF64 header (%zu)",
			      obj->size, sizeof(Elf64_Ehdr));
	if (memcmp(id, ELFMAG, SELFMAG) != 0)
		return ld_err(obj, -GBPF_ERRNO__FORMAT, "ELF header at offset 0: not an ELF file (bad magic)");
	if (id[EI_CLASS] != ELFCLASS64)
		return ld_err(obj, -GBPF_ERRNO__FORMAT,
			      "ELF header at offset %d: wrong class %u, BPF objects are ELFCLASS64",
			      EI_CLASS, id[EI_CLASS]);
	if (id[EI_DATA] != ELFDATA2LSB)
		return ld_err(obj, -GBPF_ERRNO__FORMAT,
			      "ELF header at offset %d: byte order %u is not little endian "
			      "(build with -target bpfel or bpf on a little-endian host)",
			      EI_DATA, id[EI_DATA]);
	if (id[EI_VERSION] != EV_CURRENT)
		return ld_err(obj, -GBPF_ERRNO__FORMAT, "ELF header at offset %d: bad ELF version %u",
			      EI_VERSION, id[EI_VERSION]);
	memcpy(&obj->eh, obj->buf, sizeof(obj->eh));
	if (obj->eh.e_machine != EM_BPF)
		return ld_err(obj, -GBPF_ERRNO__FORMAT,
			      "ELF header at offset 0x12: wrong machine %u, expected EM_BPF (%d)",
			      obj->eh.e_machine, EM_BPF);
	if (obj->eh.e_type != ET_REL)
		return ld_err(obj, -GBPF_ERRNO__FORMAT,
			      "ELF header at offset 0x10: type %u is not a relocatable object (ET_REL)",
			      obj->eh.e_type);
	if (obj->eh.e_shentsize != sizeof(Elf64_Shdr))
		return ld_err(obj, -GBPF_ERRNO__FORMAT,
			      "ELF header at offset 0x3a: section header size %u, expected %zu",
			      obj->eh.e_shentsize, sizeof(Elf64_Shdr));
	if (obj->eh.e_shnum == 0 || obj->eh.e_shstrndx == SHN_UNDEF)
		return ld_err(obj, -GBPF_ERRNO__FORMAT,
			      "ELF header at offset 0x3c: no section headers (e_shnum %u, e_shstrndx %u)",
			      obj->eh.e_shnum, obj->eh.e_shstrndx);
	if (obj->eh.e_shstrndx >= obj->eh.e_shnum)
		return ld_err(obj, -GBPF_ERRNO__FORMAT,
			      "ELF header at offset 0x3e: section name table index %u out of range (%u sections)",
			      obj->eh.e_shstrndx, obj->eh.e_shnum);
	if (obj->eh.e_shoff > obj->size ||
	    (uint64_t)obj->eh.e_shnum * sizeof(Elf64_Shdr) > obj->size - obj->eh.e_shoff)
		return ld_err(obj, -GBPF_ERRNO__FORMAT,
			      "ELF header at offset 0x28: section header table at 0x%llx (%u entries) "
			      "lies outside the %zu-byte file",
			      (unsigned long long)obj->eh.e_shoff, obj->eh.e_shnum, obj->size);
	return 0;
}

/* A string table must end in NUL so that any in-range offset names a C string. */
static int check_strtab(struct gbpf_object *obj, size_t idx, const char *what)
{
	const struct ld_sec *s = &obj->secs[idx];

	char label[160];

	/* The section name table cannot name itself before it is checked. */
	if (s->name)
		snprintf(label, sizeof(label), "section '%s' (#%zu, %s)", s->name, idx, what);
	else
		snprintf(label, sizeof(label), "section #%zu (%s)", idx, what);
	if (s->sh.sh_type != SHT_STRTAB)
		return ld_err(obj, -GBPF_ERRNO__FORMAT, "%s: type %u is not SHT_STRTAB", label,
			      s->sh.sh_type);
	if (s->sh.sh_size == 0 || s->data[s->sh.sh_size - 1] != '\0')
		return ld_err(obj, -GBPF_ERRNO__FORMAT,
			      "%s at offset 0x%llx: string table is empty or not NUL-terminated", label,
			      (unsigned long long)s->sh.sh_offset);
	return 0;
}

static int read_sections(struct gbpf_object *obj)
{
	size_t i, n = obj->eh.e_shnum;
	struct ld_sec *shstr;
	int err;

	obj->secs = calloc(n, sizeof(*obj->secs));
	if (!obj->secs)
		return ld_err(obj, -ENOMEM, "out of memory for %zu section headers", n);
	obj->sec_cnt = n;
	for (i = 0; i < n; i++) {
		memcpy(&obj->secs[i].sh, obj->buf + obj->eh.e_shoff + i * sizeof(Elf64_Shdr),
		       sizeof(obj->secs[i].sh));
		obj->secs[i].map_idx = -1;
	}
	/* Names first, so that every later message can name its section. */
	shstr = &obj->secs[obj->eh.e_shstrndx];
	if (shstr->sh.sh_offset > obj->size || shstr->sh.sh_size > obj->size - shstr->sh.sh_offset)
		return ld_err(obj, -GBPF_ERRNO__FORMAT,
			      "section #%u (section name table): data at offset 0x%llx size 0x%llx lies "
			      "outside the %zu-byte file",
			      obj->eh.e_shstrndx, (unsigned long long)shstr->sh.sh_offset,
			      (unsigned long long)shstr->sh.sh_size, obj->size);
	shstr->data = obj->buf + shstr->sh.sh_offset;
	err = check_strtab(obj, obj->eh.e_shstrndx, "section name table");
	if (err)
		return err;
	for (i = 0; i < n; i++) {
		struct ld_sec *s = &obj->secs[i];

		if (s->sh.sh_name >= shstr->sh.sh_size)
			return ld_err(obj, -GBPF_ERRNO__FORMAT,
				      "section #%zu: name offset %u outside the section name table (%llu bytes)",
				      i, s->sh.sh_name, (unsigned long long)shstr->sh.sh_size);
		s->name = (const char *)shstr->data + s->sh.sh_name;
		if (s->sh.sh_type == SHT_NOBITS || s->sh.sh_type == SHT_NULL)
			continue;
		if (s->sh.sh_offset > obj->size || s->sh.sh_size > obj->size - s->sh.sh_offset)
			return ld_err(obj, -GBPF_ERRNO__FORMAT,
				      "section '%s' (#%zu): data at offset 0x%llx size 0x%llx lies outside the "
				      "%zu-byte file",
				      s->name, i, (unsigned long long)s->sh.sh_offset,
				      (unsigned long long)s->sh.sh_size, obj->size);
		s->data = obj->buf + s->sh.sh_offset;
	}
	return 0;
}

static int read_symbols(struct gbpf_object *obj)
{
	size_t i, idx = 0, found = 0;
	const struct ld_sec *st;
	int err;

	for (i = 1; i < obj->sec_cnt; i++) {
		if (obj->secs[i].sh.sh_type == SHT_SYMTAB) {
			idx = i;
			found++;
		}
	}
	if (found != 1)
		return ld_err(obj, -GBPF_ERRNO__FORMAT, "object has %zu symbol tables (SHT_SYMTAB), expected one",
			      found);
	st = &obj->secs[idx];
	obj->symtab_idx = idx;
	if (st->sh.sh_entsize != sizeof(Elf64_Sym) || st->sh.sh_size % sizeof(Elf64_Sym) != 0)
		return ld_err(obj, -GBPF_ERRNO__FORMAT,
			      "section '%s' (#%zu): entry size %llu / size %llu do not describe ELF64 symbols",
			      st->name, idx, (unsigned long long)st->sh.sh_entsize,
			      (unsigned long long)st->sh.sh_size);
	if (st->sh.sh_link == 0 || st->sh.sh_link >= obj->sec_cnt)
		return ld_err(obj, -GBPF_ERRNO__FORMAT,
			      "section '%s' (#%zu): string table link %u out of range", st->name, idx,
			      st->sh.sh_link);
	err = check_strtab(obj, st->sh.sh_link, "symbol name table");
	if (err)
		return err;
	obj->strtab = (const char *)obj->secs[st->sh.sh_link].data;
	obj->strtab_size = obj->secs[st->sh.sh_link].sh.sh_size;
	obj->sym_cnt = st->sh.sh_size / sizeof(Elf64_Sym);
	if (obj->sym_cnt == 0)
		return ld_err(obj, -GBPF_ERRNO__FORMAT, "section '%s' (#%zu): empty symbol table", st->name, idx);
	/* Size is bounded by the file size, checked above. */
	obj->syms = malloc(st->sh.sh_size);
	if (!obj->syms)
		return ld_err(obj, -ENOMEM, "section '%s': out of memory for %zu symbols", st->name,
			      obj->sym_cnt);
	memcpy(obj->syms, st->data, st->sh.sh_size);
	for (i = 0; i < obj->sym_cnt; i++) {
		const Elf64_Sym *sym = &obj->syms[i];

		if (sym->st_name >= obj->strtab_size)
			return ld_err(obj, -GBPF_ERRNO__FORMAT,
				      "section '%s': symbol #%zu has name offset %u outside the string table",
				      st->name, i, sym->st_name);
		if (sym->st_shndx != SHN_UNDEF && sym->st_shndx < SHN_LORESERVE &&
		    sym->st_shndx >= obj->sec_cnt)
			return ld_err(obj, -GBPF_ERRNO__FORMAT,
				      "section '%s': symbol #%zu '%s' refers to section #%u of %zu",
				      st->name, i, obj->strtab + sym->st_name, sym->st_shndx,
				      obj->sec_cnt);
		if (sym->st_shndx == SHN_XINDEX)
			return ld_err(obj, -GBPF_ERRNO__FORMAT,
				      "section '%s': symbol #%zu '%s' uses extended section indexes (unsupported)",
				      st->name, i, obj->strtab + sym->st_name);
	}
	return 0;
}

static int is_prefixed(const char *name, const char *base)
{
	size_t n = strlen(base);

	return strncmp(name, base, n) == 0 && (name[n] == '\0' || name[n] == '.');
}

static int classify(struct gbpf_object *obj)
{
	size_t i;

	obj->text_idx = obj->maps_btf_idx = obj->maps_legacy_idx = -1;
	obj->btf_idx = obj->license_idx = -1;
	for (i = 1; i < obj->sec_cnt; i++) {
		struct ld_sec *s = &obj->secs[i];
		const Elf64_Shdr *sh = &s->sh;

		if (sh->sh_type == SHT_SYMTAB) {
			s->kind = LD_SEC_SYMTAB;
		} else if (sh->sh_type == SHT_STRTAB) {
			s->kind = LD_SEC_STRTAB;
		} else if (sh->sh_type == SHT_REL) {
			s->kind = LD_SEC_REL;
		} else if (sh->sh_type == SHT_PROGBITS && (sh->sh_flags & SHF_EXECINSTR)) {
			if (sh->sh_size % sizeof(struct gbpf_insn) != 0)
				return ld_err(obj, -GBPF_ERRNO__FORMAT,
					      "section '%s' (#%zu): size %llu is not a multiple of the "
					      "8-byte instruction size",
					      s->name, i, (unsigned long long)sh->sh_size);
			s->kind = strcmp(s->name, ".text") == 0 ? LD_SEC_TEXT : LD_SEC_PROG;
			if (s->kind == LD_SEC_TEXT)
				obj->text_idx = (int)i;
			s->insn_cnt = sh->sh_size / sizeof(struct gbpf_insn);
			if (s->insn_cnt) {
				s->insns = malloc(sh->sh_size);
				s->relocs = calloc(s->insn_cnt, sizeof(*s->relocs));
				if (!s->insns || !s->relocs)
					return ld_err(obj, -ENOMEM, "section '%s': out of memory for %zu instructions",
						      s->name, s->insn_cnt);
				memcpy(s->insns, s->data, sh->sh_size);
			}
		} else if (strcmp(s->name, ".maps") == 0) {
			s->kind = LD_SEC_MAPS_BTF;
			obj->maps_btf_idx = (int)i;
		} else if (strcmp(s->name, "maps") == 0) {
			s->kind = LD_SEC_MAPS_LEGACY;
			obj->maps_legacy_idx = (int)i;
		} else if (strcmp(s->name, "license") == 0) {
			s->kind = LD_SEC_LICENSE;
			obj->license_idx = (int)i;
		} else if (strcmp(s->name, ".BTF") == 0) {
			s->kind = LD_SEC_BTF;
			obj->btf_idx = (int)i;
		} else if (!(sh->sh_flags & SHF_ALLOC)) {
			s->kind = LD_SEC_OTHER;
		} else if (is_prefixed(s->name, ".rodata")) {
			s->kind = LD_SEC_RODATA;
		} else if (is_prefixed(s->name, ".data")) {
			s->kind = LD_SEC_DATA;
		} else if (is_prefixed(s->name, ".bss")) {
			s->kind = LD_SEC_BSS;
		}
		if ((s->kind == LD_SEC_MAPS_BTF || s->kind == LD_SEC_MAPS_LEGACY || s->kind == LD_SEC_LICENSE ||
		     s->kind == LD_SEC_BTF) &&
		    !s->data)
			return ld_err(obj, -GBPF_ERRNO__FORMAT,
				      "section '%s' (#%zu): has no data (section type %u)", s->name, i,
				      sh->sh_type);
	}
	return 0;
}

static int read_license(struct gbpf_object *obj)
{
	const struct ld_sec *s;

	if (obj->license_idx < 0)
		return 0;
	s = &obj->secs[obj->license_idx];
	if (s->sh.sh_size == 0 || !memchr(s->data, '\0', s->sh.sh_size))
		return ld_err(obj, -GBPF_ERRNO__FORMAT,
			      "section 'license' (#%d) at offset 0x%llx: license string is not NUL-terminated",
			      obj->license_idx, (unsigned long long)s->sh.sh_offset);
	obj->license = (const char *)s->data;
	return 0;
}

int ld_elf_parse(struct gbpf_object *obj)
{
	int err;

	err = check_header(obj);
	if (!err)
		err = read_sections(obj);
	if (!err)
		err = read_symbols(obj);
	if (!err)
		err = classify(obj);
	if (!err)
		err = read_license(obj);
	return err;
}
