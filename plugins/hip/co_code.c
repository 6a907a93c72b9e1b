/* SPDX-License-Identifier: MIT */
/*
 * AMDGPU code objects: .text decoding with the LLVM disassembler,
 * re-emission as assembly, re-assembly with llvm-mc and the branch check.
 * Untouched instructions are re-emitted as raw words because re-assembling
 * the disassembler's text can change their meaning (gfx90a buffer_wbl2
 * loses its cache-scope bits); only branches become text with labels, so
 * that the assembler recomputes their offsets after insertions.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <llvm-c/Disassembler.h>
#include <llvm-c/Target.h>

#include "co_rewrite.h"

#ifndef EM_AMDGPU
#define EM_AMDGPU 224
#endif

extern char **environ;

static const struct {
	uint32_t mach;
	const char *name;
} co_machs[] = {
	{0x02c, "gfx900"}, {0x02f, "gfx906"}, {0x030, "gfx908"}, {0x03f, "gfx90a"},
	{0x040, "gfx940"}, {0x04b, "gfx941"}, {0x04c, "gfx942"},
};

/* LLVM's target registry is process-wide: initialise it once. */
static pthread_once_t co_llvm_once = PTHREAD_ONCE_INIT;

static void co_llvm_init(void)
{
	LLVMInitializeAMDGPUTargetInfo();
	LLVMInitializeAMDGPUTargetMC();
	LLVMInitializeAMDGPUDisassembler();
}

/* Find section @p want in an ELF64 image; 0 or -EINVAL. */
int co_find_section(const uint8_t *elf, size_t size, const char *want, const Elf64_Shdr **out)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)elf;
	const Elf64_Shdr *sh, *str;

	if (eh->e_shoff > size || eh->e_shnum > (size - eh->e_shoff) / sizeof(Elf64_Shdr) ||
	    eh->e_shentsize != sizeof(Elf64_Shdr) || eh->e_shstrndx >= eh->e_shnum)
		return -EINVAL;
	sh = (const Elf64_Shdr *)(elf + eh->e_shoff);
	str = &sh[eh->e_shstrndx];
	if (str->sh_offset > size || str->sh_size > size - str->sh_offset)
		return -EINVAL;
	for (unsigned i = 0; i < eh->e_shnum; i++) {
		if (sh[i].sh_name >= str->sh_size)
			return -EINVAL;
		if (!strncmp((const char *)elf + str->sh_offset + sh[i].sh_name, want,
			     str->sh_size - sh[i].sh_name)) {
			if (sh[i].sh_type != SHT_NOBITS &&
			    (sh[i].sh_offset > size || sh[i].sh_size > size - sh[i].sh_offset))
				return -EINVAL;
			*out = &sh[i];
			return 0;
		}
	}
	return -ENOENT;
}

static int check_elf(const uint8_t *elf, size_t size, char *err, size_t err_size)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)elf;

	if (size < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_machine != EM_AMDGPU) {
		snprintf(err, err_size, "code object: not an AMDGPU ELF64 file (header at offset 0)");
		return -EINVAL;
	}
	return 0;
}

/* SOPP branches of GFX9 (opcode in bits 22:16): target in simm16 words. */
static int sopp_branch(uint32_t w)
{
	uint32_t op = (w >> 16) & 0x7f;

	if ((w >> 23) != 0x17f)
		return 0;
	return op == 2 || (op >= 4 && op <= 9) || (op >= 23 && op <= 26);
}

int co_decode(const uint8_t *elf, size_t size, struct co_code *c, char *err, size_t err_size)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)elf;
	const Elf64_Shdr *text;
	int rc;

	memset(c, 0, sizeof(*c));
	rc = check_elf(elf, size, err, err_size);
	if (rc)
		return rc;
	for (size_t i = 0; i < sizeof(co_machs) / sizeof(co_machs[0]); i++)
		if ((eh->e_flags & 0xff) == co_machs[i].mach)
			snprintf(c->arch, sizeof(c->arch), "%s", co_machs[i].name);
	if (!c->arch[0]) {
		snprintf(err, err_size, "code object: unknown processor 0x%x in e_flags", eh->e_flags & 0xff);
		return -ENOTSUP;
	}
	if (co_find_section(elf, size, ".text", &text) || text->sh_type != SHT_PROGBITS || text->sh_size % 4) {
		snprintf(err, err_size, "code object: no usable .text section");
		return -EINVAL;
	}
	c->text = elf + text->sh_offset;
	c->text_size = text->sh_size;
	c->text_addr = text->sh_addr;
	c->text_file_off = text->sh_offset;
	return co_decode_raw(c, err, err_size);
}

void co_llvm_ready(void)
{
	pthread_once(&co_llvm_once, co_llvm_init);
}

int co_decode_raw(struct co_code *c, char *err, size_t err_size)
{
	LLVMDisasmContextRef dc;
	size_t off, cap;

	pthread_once(&co_llvm_once, co_llvm_init);
	dc = LLVMCreateDisasmCPU("amdgcn-amd-amdhsa", c->arch, NULL, 0, NULL, NULL);
	if (!dc) {
		snprintf(err, err_size, "code object: no LLVM disassembler for %s", c->arch);
		return -ENOTSUP;
	}
	cap = c->text_size / 4 + 1;
	c->insns = calloc(cap, sizeof(*c->insns));
	if (!c->insns) {
		LLVMDisasmDispose(dc);
		return -ENOMEM;
	}
	for (off = 0; off < c->text_size;) {
		struct co_insn *in = &c->insns[c->n++];
		char txt[256] = "", *sp;
		size_t len = LLVMDisasmInstruction(dc, (uint8_t *)c->text + off, c->text_size - off,
						   c->text_addr + off, txt, sizeof(txt));
		uint32_t w;

		memcpy(&w, c->text + off, 4);
		in->off = (uint32_t)off;
		/* an undecodable word (padding, data) stays a raw word */
		in->len = len ? (uint32_t)len : 4;
		sp = txt;
		while (*sp == ' ' || *sp == '\t')
			sp++;
		snprintf(in->mnem, sizeof(in->mnem), "%.*s", (int)strcspn(sp, " \t"), sp);
		if (len == 4 && sopp_branch(w)) {
			int64_t t = (int64_t)off + 4 + 4 * (int64_t)(int16_t)(w & 0xffff);

			in->kind = CO_INSN_BRANCH;
			in->target = t < 0 || t > (int64_t)c->text_size ? UINT32_MAX : (uint32_t)t;
		} else if (!strcmp(in->mnem, "s_endpgm")) {
			in->kind = CO_INSN_ENDPGM;
		} else if (!strcmp(in->mnem, "s_getpc_b64")) {
			in->kind = CO_INSN_GETPC;
		}
		off += in->len;
	}
	LLVMDisasmDispose(dc);
	return 0;
}

void co_code_free(struct co_code *c)
{
	free(c->insns);
	c->insns = NULL;
	c->n = 0;
}

void co_sb_printf(struct co_sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->oom)
		return;
	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? b->cap - b->len : 0, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->oom = 1;
			return;
		}
		if (b->p && b->len + (size_t)n < b->cap) {
			b->len += (size_t)n;
			return;
		}
		{
			size_t nc = (b->cap ? b->cap * 2 : 4096) + (size_t)n;
			char *np = realloc(b->p, nc);

			if (!np) {
				b->oom = 1;
				return;
			}
			b->p = np;
			b->cap = nc;
		}
	}
}

static int is_entry(const uint32_t *entries, size_t n, uint32_t off)
{
	for (size_t i = 0; i < n; i++)
		if (entries[i] == off)
			return 1;
	return 0;
}

int co_emit_asm(const struct co_code *c, const uint32_t *entries, size_t n_entries, const char *probe_entry,
		const char *probe_exit, char **out)
{
	struct co_sbuf b = {0};
	uint8_t *lab = calloc(c->text_size + 1, 1);
	size_t i;

	if (!lab)
		return -ENOMEM;
	for (i = 0; i < c->n; i++)
		if (c->insns[i].kind == CO_INSN_BRANCH && c->insns[i].target <= c->text_size)
			lab[c->insns[i].target] = 1;
	co_sb_printf(&b, "\t.text\n");
	for (i = 0; i < c->n; i++) {
		const struct co_insn *in = &c->insns[i];

		if (lab[in->off])
			co_sb_printf(&b, ".Lgbpf_%x:\n", in->off);
		if (probe_entry && is_entry(entries, n_entries, in->off))
			co_sb_printf(&b, "%s\n", probe_entry);
		if (probe_exit && in->kind == CO_INSN_ENDPGM)
			co_sb_printf(&b, "%s\n", probe_exit);
		if (in->kind == CO_INSN_BRANCH && in->target <= c->text_size) {
			co_sb_printf(&b, "\t%s .Lgbpf_%x\n", in->mnem, in->target);
			continue;
		}
		co_sb_printf(&b, "\t.long ");
		for (uint32_t k = 0; k < in->len; k += 4) {
			uint32_t w;

			memcpy(&w, c->text + in->off + k, 4);
			co_sb_printf(&b, "%s0x%08x", k ? ", " : "", w);
		}
		co_sb_printf(&b, "\t// %s\n", in->mnem);
	}
	if (lab[c->text_size])
		co_sb_printf(&b, ".Lgbpf_%zx:\n", c->text_size);
	free(lab);
	if (b.oom) {
		free(b.p);
		return -ENOMEM;
	}
	*out = b.p;
	return 0;
}

/* Most environment entries passed to a tool; the rest are dropped. */
#define CO_TOOL_MAX_ENV 1024

int co_run_tool(char *const argv[], const char *log_path)
{
	posix_spawn_file_actions_t fa;
	char *env[CO_TOOL_MAX_ENV + 1];
	size_t n = 0;
	pid_t pid;
	int st = 0, rc;

	/* Inside an application under `gbpf run` (the agent rewrites code
	 * objects at registration) the tools would inherit the agent's
	 * preload and socket and connect as agents of their own: drop them. */
	for (char **e = environ; e && *e && n < CO_TOOL_MAX_ENV; e++)
		if (strncmp(*e, "LD_PRELOAD=", 11) && strncmp(*e, "GBPF_AGENT_", 11))
			env[n++] = *e;
	env[n] = NULL;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, log_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	posix_spawn_file_actions_adddup2(&fa, 1, 2);
	rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, env);
	posix_spawn_file_actions_destroy(&fa);
	if (rc)
		return -ENOENT;
	if (waitpid(pid, &st, 0) < 0)
		return -ECHILD;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -EINVAL;
}

char *co_slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long sz;

	if (!f)
		return NULL;
	if (!fseek(f, 0, SEEK_END) && (sz = ftell(f)) >= 0 && !fseek(f, 0, SEEK_SET) &&
	    (buf = malloc((size_t)sz + 1)) && fread(buf, 1, (size_t)sz, f) == (size_t)sz) {
		buf[sz] = 0;
		*len = (size_t)sz;
	} else {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

int co_assemble_text(const char *mc, const char *arch, const char *asm_text, uint8_t **text, size_t *len,
		     char *err, size_t err_size)
{
	char dir[] = "/tmp/gbpf-hip-mc-XXXXXX", s[64], o[64], l[64], cpu[32];
	const Elf64_Shdr *sh;
	char *obj = NULL;
	size_t olen = 0;
	FILE *f;
	int rc;

	if (!mkdtemp(dir))
		return -errno;
	snprintf(s, sizeof(s), "%s/in.s", dir);
	snprintf(o, sizeof(o), "%s/out.o", dir);
	snprintf(l, sizeof(l), "%s/log", dir);
	snprintf(cpu, sizeof(cpu), "-mcpu=%s", arch);
	f = fopen(s, "w");
	if (!f || fputs(asm_text, f) < 0 || fclose(f)) {
		rc = -EIO;
		goto out;
	}
	{
		char *argv[] = {(char *)mc, (char *)"-triple=amdgcn-amd-amdhsa", cpu, (char *)"-filetype=obj",
				(char *)"-o", o, s, NULL};

		rc = co_run_tool(argv, l);
	}
	if (rc) {
		char *log = co_slurp(l, &olen);

		snprintf(err, err_size, "llvm-mc (%s) failed: %.300s", arch, log ? log : "not found");
		free(log);
		goto out;
	}
	obj = co_slurp(o, &olen);
	if (!obj || check_elf((uint8_t *)obj, olen, err, err_size) ||
	    co_find_section((uint8_t *)obj, olen, ".text", &sh)) {
		snprintf(err, err_size, "llvm-mc output has no .text");
		rc = -EINVAL;
		goto out;
	}
	*text = malloc(sh->sh_size ? sh->sh_size : 1);
	if (!*text) {
		rc = -ENOMEM;
		goto out;
	}
	memcpy(*text, obj + sh->sh_offset, sh->sh_size);
	*len = sh->sh_size;
	rc = 0;
out:
	free(obj);
	unlink(s);
	unlink(o);
	unlink(l);
	rmdir(dir);
	return rc;
}

int co_roundtrip(const char *mc, const uint8_t *elf, size_t size, uint8_t **out, size_t *out_size, char *err,
		 size_t err_size)
{
	struct co_code c;
	char *asm_text = NULL;
	uint8_t *text = NULL;
	size_t tlen = 0;
	int rc;

	rc = co_decode(elf, size, &c, err, err_size);
	if (rc)
		return rc;
	rc = co_emit_asm(&c, NULL, 0, NULL, NULL, &asm_text);
	if (!rc)
		rc = co_assemble_text(mc, c.arch, asm_text, &text, &tlen, err, err_size);
	if (!rc && tlen != c.text_size) {
		snprintf(err, err_size, "re-assembled .text is %zu bytes, original %zu", tlen, c.text_size);
		rc = -EINVAL;
	}
	if (!rc) {
		*out = malloc(size);
		if (!*out) {
			rc = -ENOMEM;
		} else {
			memcpy(*out, elf, size);
			memcpy(*out + c.text_file_off, text, tlen);
			*out_size = size;
		}
	}
	free(text);
	free(asm_text);
	co_code_free(&c);
	return rc;
}

size_t co_check_branches(const struct co_code *c, char *err, size_t err_size)
{
	size_t bad = 0, i, lo, hi;

	for (i = 0; i < c->n; i++) {
		const struct co_insn *in = &c->insns[i];
		int found = 0;

		if (in->kind != CO_INSN_BRANCH)
			continue;
		/* binary search for an instruction starting at the target */
		lo = 0;
		hi = c->n;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;

			if (c->insns[mid].off < in->target)
				lo = mid + 1;
			else
				hi = mid;
		}
		found = (lo < c->n && c->insns[lo].off == in->target) || in->target == c->text_size;
		if (!found) {
			if (!bad && err && err_size)
				snprintf(err, err_size, "branch %s at .text+0x%x targets 0x%x, not an instruction start",
					 in->mnem, in->off, in->target);
			bad++;
		}
	}
	return bad;
}
