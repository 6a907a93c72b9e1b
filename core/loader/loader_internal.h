/* SPDX-License-Identifier: MIT */
/*
 * core/loader/loader_internal.h - state shared by the loader's files.
 *
 * The loader parses the ELF container itself (elf_parse.c) so that every
 * offset, size and index is checked before any byte is interpreted; libbpf
 * only ever sees the .BTF section, and only after that check (maps.c).
 */
#ifndef GBPF_LOADER_INTERNAL_H
#define GBPF_LOADER_INTERNAL_H

#include <elf.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <gbpf/object.h>

#ifndef EM_BPF
#define EM_BPF 247
#endif

/* Relocation types of the BPF ELF ABI (llvm BPFELFObjectWriter). */
#define LD_R_BPF_NONE 0
#define LD_R_BPF_64_64 1
#define LD_R_BPF_64_ABS64 2
#define LD_R_BPF_64_ABS32 3
#define LD_R_BPF_64_NODYLD32 4
#define LD_R_BPF_64_32 10

/* Offset of the fields of struct bpf_map_def in a legacy "maps" section. */
#define LD_LEGACY_MAP_DEF_MIN 20

/* Caps that keep hostile objects from making us allocate without bound. */
#define LD_MAX_MAPS 4096
#define LD_MAX_TOTAL_INSNS (16u << 20)

enum ld_sec_kind {
	LD_SEC_OTHER = 0,
	LD_SEC_PROG,        /* executable, not .text: holds entry programs */
	LD_SEC_TEXT,        /* .text: subprograms only */
	LD_SEC_MAPS_BTF,    /* .maps */
	LD_SEC_MAPS_LEGACY, /* maps */
	LD_SEC_DATA,        /* .data, .data.* */
	LD_SEC_RODATA,      /* .rodata, .rodata.* */
	LD_SEC_BSS,         /* .bss, .bss.* */
	LD_SEC_LICENSE,
	LD_SEC_SYMTAB,
	LD_SEC_STRTAB,
	LD_SEC_REL,
	LD_SEC_BTF,
};

/* A relocation attached to one instruction slot of an executable section. */
struct ld_reloc {
	uint32_t type;
	uint32_t sym;   /* symbol index */
	uint32_t index; /* position in its relocation section, for messages */
};

struct ld_sec {
	const char *name;
	Elf64_Shdr sh;
	const uint8_t *data; /* NULL for SHT_NOBITS */
	enum ld_sec_kind kind;
	int map_idx;         /* data sections: index of their map, else -1 */
	/* Executable sections: aligned copy of the code and one optional
	 * relocation per slot (type 0 and sym 0: none). */
	struct gbpf_insn *insns;
	size_t insn_cnt;
	struct ld_reloc *relocs;
};

/* Where a user map's definition lies: (section, offset) identify it for
 * ld_imm64 relocations. */
struct ld_map_extra {
	uint32_t shndx;
	uint64_t off;
	uint64_t size;
};

struct gbpf_object {
	char *name;
	uint8_t *buf; /* owned copy of the file; section data point into it */
	size_t size;
	Elf64_Ehdr eh;
	struct ld_sec *secs;
	size_t sec_cnt;
	Elf64_Sym *syms; /* aligned copy of .symtab */
	size_t sym_cnt;
	uint32_t symtab_idx;
	const char *strtab;
	size_t strtab_size;
	int text_idx;       /* .text section or -1 */
	int maps_btf_idx;   /* .maps or -1 */
	int maps_legacy_idx; /* maps or -1 */
	int btf_idx;        /* .BTF or -1 */
	int license_idx;

	struct gbpf_map_desc *maps;
	struct ld_map_extra *map_extra;
	size_t map_cnt;
	char **owned_strs; /* names built by the loader (freed at close) */
	size_t owned_cnt;

	struct gbpf_prog_desc *progs;
	size_t prog_cnt;
	size_t total_insns;

	const char *license;
	char msg[512]; /* first error, "<object>: section ...: what" */
};

/* Record the first error of an open as "<object>: <message>"; returns err. */
int ld_err(struct gbpf_object *obj, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Keep a loader-made string alive until close; returns it or NULL. */
char *ld_own(struct gbpf_object *obj, char *s);

/* Name of a symbol (validated to lie inside .strtab). */
const char *ld_sym_name(const struct gbpf_object *obj, const Elf64_Sym *sym);

/* elf_parse.c: validate the container, fill secs/syms and classify sections. */
int ld_elf_parse(struct gbpf_object *obj);

/* maps.c: BTF maps, legacy maps and global data maps. */
int ld_collect_maps(struct gbpf_object *obj);

/* link.c: programs, relocations, subprogram linking. */
int ld_collect_relocs(struct gbpf_object *obj);
int ld_collect_progs(struct gbpf_object *obj);

#endif /* GBPF_LOADER_INTERNAL_H */
