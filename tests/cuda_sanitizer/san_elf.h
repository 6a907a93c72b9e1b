/* SPDX-License-Identifier: MIT */
/*
 * tests/cuda_sanitizer/san_elf.h - read a global's bytes in an ELF cubin
 * (the patch module ptxas built), to check what the placeholder
 * replacement wrote at each module global's symbol.
 */
#ifndef GBPF_TESTS_SAN_ELF_H
#define GBPF_TESTS_SAN_ELF_H

#include <elf.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Bytes an ELF image spans (its section headers and every section with contents), 0 if not ELF64. */
static inline size_t elf_image_size(const void *img)
{
	const unsigned char *b = img;
	const Elf64_Ehdr *eh = img;
	const Elf64_Shdr *sh;
	uint64_t end;

	if (!img || memcmp(b, ELFMAG, SELFMAG) || b[EI_CLASS] != ELFCLASS64)
		return 0;
	end = eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(*sh);
	sh = (const Elf64_Shdr *)(b + eh->e_shoff);
	for (unsigned i = 0; i < eh->e_shnum; i++)
		if (sh[i].sh_type != SHT_NOBITS && sh[i].sh_offset + sh[i].sh_size > end)
			end = sh[i].sh_offset + sh[i].sh_size;
	return (size_t)end;
}

/*
 * The 8 bytes of global @p sym in an ELF cubin image (its section's file
 * offset + the symbol's value), or NULL.
 */
static inline const unsigned char *elf_global(const void *img, size_t size, const char *sym)
{
	const unsigned char *b = img;
	const Elf64_Ehdr *eh = img;
	const Elf64_Shdr *sh;

	if (size < sizeof(*eh) || memcmp(b, ELFMAG, SELFMAG) || b[EI_CLASS] != ELFCLASS64 ||
	    eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(*sh) > size)
		return NULL;
	sh = (const Elf64_Shdr *)(b + eh->e_shoff);
	for (unsigned i = 0; i < eh->e_shnum; i++) {
		const Elf64_Shdr *strs;

		if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= eh->e_shnum)
			continue;
		strs = &sh[sh[i].sh_link];
		for (uint64_t off = 0; off + sizeof(Elf64_Sym) <= sh[i].sh_size; off += sizeof(Elf64_Sym)) {
			const Elf64_Sym *s = (const Elf64_Sym *)(b + sh[i].sh_offset + off);
			const Elf64_Shdr *home;

			if (s->st_name >= strs->sh_size || strcmp((const char *)b + strs->sh_offset + s->st_name, sym))
				continue;
			if (s->st_shndx == SHN_UNDEF || s->st_shndx >= eh->e_shnum)
				return NULL;
			home = &sh[s->st_shndx];
			if (home->sh_type == SHT_NOBITS || s->st_value + 8 > home->sh_size ||
			    home->sh_offset + s->st_value + 8 > size)
				return NULL;
			return b + home->sh_offset + s->st_value;
		}
	}
	return NULL;
}

#endif /* GBPF_TESTS_SAN_ELF_H */
