/* SPDX-License-Identifier: MIT */
/*
 * tests/loader/test_loader_bad.c - every class of bad input, made by
 * corrupting a good object in memory, must be refused with a message that
 * names the object and the section (or the ELF header), never crash.
 */
#include <errno.h>
#include <string.h>

#include "loader_test_util.h"
#include "tap.h"

typedef int (*mutate_fn)(uint8_t *buf, size_t *size);

static char printed[512];

static __attribute__((format(printf, 2, 0))) int capture_print(enum gbpf_log_level level, const char *fmt,
								  va_list ap)
{
	if (level == GBPF_LOG_WARN)
		vsnprintf(printed, sizeof(printed), fmt, ap);
	return 0;
}

static Elf64_Sym *find_sym(uint8_t *buf, const char *name)
{
	Elf64_Shdr *st = find_shdr(buf, ".symtab");
	Elf64_Shdr *str = st ? shdr_at(buf, st->sh_link) : NULL;
	size_t i;

	for (i = 0; st && i < st->sh_size / sizeof(Elf64_Sym); i++) {
		Elf64_Sym *s = (Elf64_Sym *)(buf + st->sh_offset) + i;

		if (strcmp((const char *)buf + str->sh_offset + s->st_name, name) == 0)
			return s;
	}
	return NULL;
}

static Elf64_Rel *first_rel(uint8_t *buf, const char *code_sec)
{
	char name[128];
	Elf64_Shdr *sh;

	snprintf(name, sizeof(name), ".rel%s", code_sec);
	sh = find_shdr(buf, name);
	return sh && sh->sh_size ? (Elf64_Rel *)(buf + sh->sh_offset) : NULL;
}

/* The first local call of .text that has no relocation (resolved by clang). */
static struct gbpf_insn *text_local_call(uint8_t *buf)
{
	Elf64_Shdr *t = find_shdr(buf, ".text");
	size_t i;

	for (i = 0; t && i < t->sh_size / 8; i++) {
		struct gbpf_insn *in = (struct gbpf_insn *)(buf + t->sh_offset) + i;

		if (in->code == GBPF_OP_CALL && in->src == GBPF_CALL_LOCAL)
			return in;
	}
	return NULL;
}

#define PROG_SEC "gpu/entry/vec_add*"

static int m_trunc_header(uint8_t *b, size_t *size) { *size = 10; return 0; }
static int m_trunc_half(uint8_t *b, size_t *size) { *size /= 2; return 0; }
static int m_machine(uint8_t *b, size_t *size) { eh_of(b)->e_machine = 62; return 0; }
static int m_endian(uint8_t *b, size_t *size) { b[EI_DATA] = ELFDATA2MSB; return 0; }
static int m_class(uint8_t *b, size_t *size) { b[EI_CLASS] = ELFCLASS32; return 0; }
static int m_magic(uint8_t *b, size_t *size) { b[1] = 'X'; return 0; }
static int m_shnum(uint8_t *b, size_t *size) { eh_of(b)->e_shnum = 65535; return 0; }
static int m_shstrndx(uint8_t *b, size_t *size) { eh_of(b)->e_shstrndx = eh_of(b)->e_shnum + 3; return 0; }
static int m_shoff(uint8_t *b, size_t *size) { eh_of(b)->e_shoff = ~0ULL - 10; return 0; }

static int m_sec_offset(uint8_t *b, size_t *size)
{
	Elf64_Shdr *sh = find_shdr(b, PROG_SEC);

	if (!sh)
		return -1;
	sh->sh_offset = *size + 100;
	return 0;
}

static int m_sec_size(uint8_t *b, size_t *size)
{
	Elf64_Shdr *sh = find_shdr(b, ".maps");

	if (!sh)
		return -1;
	sh->sh_size = 1ULL << 40;
	return 0;
}

static int m_bss_size(uint8_t *b, size_t *size)
{
	Elf64_Shdr *sh = find_shdr(b, ".bss");

	if (!sh)
		return -1;
	sh->sh_size = 1ULL << 40;
	return 0;
}

static int m_name_off(uint8_t *b, size_t *size)
{
	Elf64_Shdr *sh = find_shdr(b, PROG_SEC);

	if (!sh)
		return -1;
	sh->sh_name = 0x7fffffff;
	return 0;
}

static int m_reloc_type(uint8_t *b, size_t *size)
{
	Elf64_Rel *r = first_rel(b, PROG_SEC);

	if (!r)
		return -1;
	r->r_info = ELF64_R_INFO(ELF64_R_SYM(r->r_info), 7);
	return 0;
}

static int m_reloc_sym(uint8_t *b, size_t *size)
{
	Elf64_Rel *r = first_rel(b, PROG_SEC);

	if (!r)
		return -1;
	r->r_info = ELF64_R_INFO(100000, ELF64_R_TYPE(r->r_info));
	return 0;
}

static int m_reloc_offset(uint8_t *b, size_t *size)
{
	Elf64_Rel *r = first_rel(b, PROG_SEC);

	if (!r)
		return -1;
	r->r_offset = 1 << 20;
	return 0;
}

static int m_reloc_second_slot(uint8_t *b, size_t *size)
{
	Elf64_Rel *r = first_rel(b, PROG_SEC);
	Elf64_Rel *end;

	if (!r)
		return -1;
	end = r + find_shdr(b, ".rel" PROG_SEC)->sh_size / sizeof(*r);
	for (; r < end && ELF64_R_TYPE(r->r_info) != 1; r++)
		;
	if (r == end)
		return -1;
	r->r_offset += 8;
	return 0;
}

static int m_reloc_bad_target(uint8_t *b, size_t *size)
{
	Elf64_Rel *r = first_rel(b, PROG_SEC);
	Elf64_Shdr *st = find_shdr(b, ".symtab");
	Elf64_Sym *lic = find_sym(b, "LICENSE");
	Elf64_Rel *end;

	if (!r || !st || !lic)
		return -1;
	end = r + find_shdr(b, ".rel" PROG_SEC)->sh_size / sizeof(*r);
	/* retarget the map load (R_BPF_64_64) at the license string */
	for (; r < end && ELF64_R_TYPE(r->r_info) != 1; r++)
		;
	if (r == end)
		return -1;
	r->r_info = ELF64_R_INFO((uint64_t)(lic - (Elf64_Sym *)(b + st->sh_offset)), 1);
	return 0;
}

static int m_undef_sym(uint8_t *b, size_t *size)
{
	Elf64_Sym *s = find_sym(b, "g_sum");

	if (!s)
		return -1;
	s->st_shndx = SHN_UNDEF;
	return 0;
}

static int m_sym_shndx(uint8_t *b, size_t *size)
{
	Elf64_Sym *s = find_sym(b, "leaf");

	if (!s)
		return -1;
	s->st_shndx = 5000;
	return 0;
}

/* a data symbol's value near 2^63: its offset plus the instruction's addend would overflow (fuzz_loader) */
static int m_sym_value_huge(uint8_t *b, size_t *size)
{
	Elf64_Sym *s = find_sym(b, "g_sum");

	if (!s)
		return -1;
	s->st_value = 0x8000000000000000ull;
	return 0;
}

static int m_insn_size(uint8_t *b, size_t *size)
{
	Elf64_Shdr *sh = find_shdr(b, ".text");

	if (!sh)
		return -1;
	sh->sh_size -= 4;
	return 0;
}

static int m_call_nowhere(uint8_t *b, size_t *size)
{
	struct gbpf_insn *in = text_local_call(b);

	if (!in)
		return -1;
	in->imm = 100000;
	return 0;
}

static int m_call_mid(uint8_t *b, size_t *size)
{
	struct gbpf_insn *in = text_local_call(b);

	if (!in)
		return -1;
	in->imm += 1; /* second instruction of the callee */
	return 0;
}

static int m_no_btf(uint8_t *b, size_t *size)
{
	Elf64_Shdr *sh = find_shdr(b, ".BTF");

	if (!sh)
		return -1;
	sh->sh_name += 1; /* ".BTF" -> "BTF": no longer the BTF section */
	return 0;
}

static int m_btf_magic(uint8_t *b, size_t *size)
{
	Elf64_Shdr *sh = find_shdr(b, ".BTF");

	if (!sh)
		return -1;
	memset(b + sh->sh_offset, 0, 4);
	return 0;
}

static int m_strtab_unterminated(uint8_t *b, size_t *size)
{
	Elf64_Shdr *sh = find_shdr(b, ".strtab");

	if (!sh)
		return -1;
	b[sh->sh_offset + sh->sh_size - 1] = 'x';
	return 0;
}

static int m_symtab_entsize(uint8_t *b, size_t *size)
{
	Elf64_Shdr *sh = find_shdr(b, ".symtab");

	if (!sh)
		return -1;
	sh->sh_entsize = 7;
	return 0;
}

static int m_legacy_size(uint8_t *b, size_t *size)
{
	Elf64_Sym *s = find_sym(b, "events");

	if (!s)
		return -1;
	s->st_size = 8;
	return 0;
}

static int m_license(uint8_t *b, size_t *size)
{
	Elf64_Shdr *sh = find_shdr(b, "license");

	if (!sh)
		return -1;
	memset(b + sh->sh_offset, 'A', sh->sh_size);
	return 0;
}

static int m_map_member(uint8_t *b, size_t *size)
{
	/* rename the BTF member "max_entries" of the map definitions */
	Elf64_Shdr *sh = find_shdr(b, ".BTF");
	uint8_t *p;

	if (!sh)
		return -1;
	p = memmem(b + sh->sh_offset, sh->sh_size, "max_entries", 12);
	if (!p)
		return -1;
	memcpy(p, "max_entriez", 11);
	return 0;
}

/* Replace the first @p from in .BTF by @p to (same length). */
static int btf_rename(uint8_t *b, const char *from, const char *to)
{
	Elf64_Shdr *sh = find_shdr(b, ".BTF");
	uint8_t *p;

	if (!sh || strlen(from) != strlen(to))
		return -1;
	p = memmem(b + sh->sh_offset, sh->sh_size, from, strlen(from) + 1);
	if (!p)
		return -1;
	memcpy(p, to, strlen(to));
	return 0;
}

static int m_print_tag_unknown(uint8_t *b, size_t *size)
{
	return btf_rename(b, "gbpf:print=table", "gbpf:print=tablf");
}

static int m_print_tag_shape(uint8_t *b, size_t *size)
{
	/* the ring's foreign tag becomes a gbpf histogram tag a ring cannot take */
	return btf_rename(b, "ebpf:print=log2_hist", "gbpf:print=log2_hist");
}

struct bad_case {
	const char *obj;  /* object base name prefix */
	const char *what;
	mutate_fn fn;
	const char *where; /* must appear in the message: section or header */
	const char *why;   /* must appear too */
	int err;           /* expected errno */
};

static const struct bad_case cases[] = {
	{"subprogs", "truncated below the ELF header", m_trunc_header, "ELF header", "shorter", GBPF_ERRNO__FORMAT},
	{"subprogs", "truncated to half", m_trunc_half, "ELF header", "outside", GBPF_ERRNO__FORMAT},
	{"subprogs", "bad magic", m_magic, "ELF header", "not an ELF", GBPF_ERRNO__FORMAT},
	{"subprogs", "e_machine x86-64", m_machine, "ELF header", "wrong machine 62", GBPF_ERRNO__FORMAT},
	{"subprogs", "big endian", m_endian, "ELF header", "little endian", GBPF_ERRNO__FORMAT},
	{"subprogs", "ELFCLASS32", m_class, "ELF header", "wrong class", GBPF_ERRNO__FORMAT},
	{"subprogs", "absurd section count", m_shnum, "ELF header", "outside", GBPF_ERRNO__FORMAT},
	{"subprogs", "section name table index", m_shstrndx, "ELF header", "out of range", GBPF_ERRNO__FORMAT},
	{"subprogs", "section header offset", m_shoff, "ELF header", "outside", GBPF_ERRNO__FORMAT},
	{"subprogs", "section data offset", m_sec_offset, "section '" PROG_SEC "'", "outside", GBPF_ERRNO__FORMAT},
	{"subprogs", "absurd section size", m_sec_size, "section '.maps'", "outside", GBPF_ERRNO__FORMAT},
	{"subprogs", "absurd .bss size", m_bss_size, "section '.bss'", "exceeds", E2BIG},
	{"subprogs", "section name offset", m_name_off, "section #", "name offset", GBPF_ERRNO__FORMAT},
	{"subprogs", "relocation type", m_reloc_type, "section '.rel" PROG_SEC "'", "unknown relocation type 7", GBPF_ERRNO__RELOC},
	{"subprogs", "relocation symbol index", m_reloc_sym, "section '.rel" PROG_SEC "'", "symbol index 100000", GBPF_ERRNO__RELOC},
	{"subprogs", "relocation offset", m_reloc_offset, "section '.rel" PROG_SEC "'", "not an instruction", GBPF_ERRNO__RELOC},
	{"subprogs", "relocation inside a wide load", m_reloc_second_slot, "section '" PROG_SEC "'", "second slot of a wide load", GBPF_ERRNO__RELOC},
	{"subprogs", "relocation against the license", m_reloc_bad_target, "section '" PROG_SEC "'", "neither code, a map nor global data", GBPF_ERRNO__RELOC},
	{"subprogs", "relocation against an undefined symbol", m_undef_sym, "section 'gpu/exit/ns::kernel<float>'", "undefined symbol 'g_sum'", GBPF_ERRNO__RELOC},
	{"subprogs", "symbol value near 2^63", m_sym_value_huge, "section 'gpu/exit/ns::kernel<float>'", "out of range", GBPF_ERRNO__RELOC},
	{"subprogs", "symbol section index", m_sym_shndx, "section '.symtab'", "section #5000", GBPF_ERRNO__FORMAT},
	{"subprogs", "code size not a multiple of 8", m_insn_size, "section '.text'", "multiple of", GBPF_ERRNO__FORMAT},
	{"subprogs", "call into nowhere", m_call_nowhere, "section '.text'", "call into nowhere", GBPF_ERRNO__RELOC},
	{"subprogs", "call into a function's middle", m_call_mid, "section '.text'", "not the start of a function", GBPF_ERRNO__RELOC},
	{"subprogs", "unterminated string table", m_strtab_unterminated, "(section name table)", "NUL-terminated", GBPF_ERRNO__FORMAT},
	{"subprogs", "symbol entry size", m_symtab_entsize, "section '.symtab'", "entry size", GBPF_ERRNO__FORMAT},
	{"subprogs", "license not terminated", m_license, "section 'license'", "NUL-terminated", GBPF_ERRNO__FORMAT},
	{"maps_btf", "BTF maps without BTF", m_no_btf, "section '.maps'", "need a .BTF", GBPF_ERRNO__FORMAT},
	{"maps_btf", "corrupt BTF", m_btf_magic, "section '.BTF'", "cannot parse", GBPF_ERRNO__FORMAT},
	{"maps_btf", "unknown BTF map member", m_map_member, "section '.maps'", "unknown member 'max_entriez'", GBPF_ERRNO__FORMAT},
	{"print_tags", "unknown print tag", m_print_tag_unknown, "map 'history'", "unknown tag 'gbpf:print=tablf'", GBPF_ERRNO__FORMAT},
	{"print_tags", "histogram tag on a ring", m_print_tag_shape, "map 'events'", "gbpf:print=log2_hist needs u64 slots", GBPF_ERRNO__FORMAT},
	{"legacy_maps", "legacy map definition too small", m_legacy_size, "section 'maps'", "struct bpf_map_def", GBPF_ERRNO__FORMAT},
};

static void run_case(const struct bad_case *c, const char *path, const uint8_t *good, size_t size)
{
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	uint8_t *b = malloc(size);
	char err[512] = "", name[160];
	struct gbpf_object *obj;
	size_t n = size;

	if (!b)
		return;
	memcpy(b, good, size);
	if (c->fn(b, &n)) {
		tap_ok(0, "%s: %s: the good object lacks what the mutation needs", base, c->what);
		free(b);
		return;
	}
	snprintf(name, sizeof(name), "bad-%s", base);
	{
		GBPF_OPTS(gbpf_object_open_opts, opts, .object_name = name, .errbuf = err,
			  .errbuf_size = sizeof(err));

		errno = 0;
		obj = gbpf_object__open_mem(b, n, &opts);
	}
	tap_ok(!obj && errno == c->err && strncmp(err, name, strlen(name)) == 0 && strstr(err, c->where) &&
		       strstr(err, c->why),
	       "%s: %s -> errno %d, message names '%s' and says '%s' (errno %d: %s)", base, c->what, c->err,
	       c->where, c->why, errno, err);
	gbpf_object__close(obj);
	free(b);
}

/* Random byte corruption with a fixed seed: open must never crash and must explain failures. */
static void random_corruption(const char *path, const uint8_t *good, size_t size)
{
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	uint32_t seed = 12345;
	int iter, opened = 0, explained = 0, failed = 0;
	uint8_t *b = malloc(size);

	if (!b)
		return;
	for (iter = 0; iter < 400; iter++) {
		char err[256] = "";
		GBPF_OPTS(gbpf_object_open_opts, opts, .object_name = "rnd.o", .errbuf = err,
			  .errbuf_size = sizeof(err));
		struct gbpf_object *obj;
		int k, flips = 1 + iter % 8;

		memcpy(b, good, size);
		for (k = 0; k < flips; k++) {
			seed = seed * 1103515245u + 12345u;
			b[(seed >> 8) % size] ^= (uint8_t)(1u << ((seed >> 4) & 7));
		}
		obj = gbpf_object__open_mem(b, size, &opts);
		if (obj) {
			opened++;
		} else {
			failed++;
			explained += strncmp(err, "rnd.o: ", 7) == 0 && strlen(err) > 10;
		}
		gbpf_object__close(obj);
	}
	free(b);
	tap_ok(failed == explained, "%s: 400 random corruptions: %d opened, %d refused, all refusals explained",
	       base, opened, failed);
}

int main(int argc, char **argv)
{
	size_t i;
	int a, runs = 0;

	for (a = 1; a < argc; a++) {
		const char *path = argv[a], *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
		size_t size = 0;
		uint8_t *good = read_whole(path, &size);

		if (!tap_ok(good != NULL, "read %s", path))
			continue;
		for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			if (strncmp(base, cases[i].obj, strlen(cases[i].obj)) == 0 && base[strlen(cases[i].obj)] == '.') {
				run_case(&cases[i], path, good, size);
				runs++;
			}
		}
		random_corruption(path, good, size);
		free(good);
	}
	tap_ok(runs > 0, "ran %d bad-input cases", runs);
	{
		/* Without an error buffer the message goes to the print callback. */
		static const uint8_t junk[64] = {0x7f, 'E', 'L', 'F', 1};
		GBPF_OPTS(gbpf_object_open_opts, opts, .object_name = "nobuf.o");
		gbpf_print_fn_t old = gbpf_set_print(capture_print);

		printed[0] = '\0';
		tap_ok(!gbpf_object__open_mem(junk, sizeof(junk), &opts) &&
			       strncmp(printed, "nobuf.o: ELF header", 19) == 0 && strstr(printed, "wrong class"),
		       "without errbuf the message reaches the print callback (%s)", printed);
		gbpf_set_print(old);
	}
	{
		/* An options struct from a newer caller with unknown non-zero fields is refused. */
		struct {
			struct gbpf_object_open_opts o;
			long extra;
		} big = {{.sz = sizeof(big)}, 1};
		static const uint8_t junk2[8];

		errno = 0;
		tap_ok(!gbpf_object__open_mem(junk2, sizeof(junk2), &big.o) && errno == EINVAL,
		       "unknown non-zero option bytes give EINVAL");
	}
	{
		char err[128] = "";
		GBPF_OPTS(gbpf_object_open_opts, opts, .errbuf = err, .errbuf_size = sizeof(err));

		errno = 0;
		tap_ok(!gbpf_object__open_file("/nonexistent/x.bpf.o", &opts) && errno == ENOENT &&
			       strstr(err, "/nonexistent/x.bpf.o"),
		       "missing file: ENOENT with the path in the message (%s)", err);
		errno = 0;
		tap_ok(!gbpf_object__open_file("/", &opts) && errno == EINVAL && strstr(err, "/"),
		       "a directory is refused (%s)", err);
	}
	return tap_done();
}
