/* SPDX-License-Identifier: MIT */
/*
 * ELF helpers of AMD code objects and the static checker of rewritten
 * ones. Without an AMD GPU the loader cannot tell us that a rewritten
 * object is acceptable, so the checker compares what the hardware is told
 * (kernel descriptor granules, user SGPR layout, private segment) with
 * what the code actually names (every register operand of every
 * instruction, read back from the disassembler's text).
 */
#include <ctype.h>
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Disassembler.h>

#include "co_elf.h"
#include "co_instrument.h"
#include "co_meta.h"

int co_elf_syms(const uint8_t *elf, size_t size, struct co_sym **out, size_t *n, char *err, size_t err_size)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)elf;
	const Elf64_Shdr *sh, *tab = NULL;
	struct co_sym *s;
	size_t cnt, k = 0;

	*out = NULL;
	*n = 0;
	if (size < sizeof(*eh) || eh->e_shoff > size || eh->e_shnum > (size - eh->e_shoff) / sizeof(Elf64_Shdr)) {
		snprintf(err, err_size, "code object: section header table out of range");
		return -EINVAL;
	}
	sh = (const Elf64_Shdr *)(elf + eh->e_shoff);
	for (unsigned i = 0; i < eh->e_shnum; i++)
		if (sh[i].sh_type == SHT_SYMTAB || (sh[i].sh_type == SHT_DYNSYM && !tab))
			tab = &sh[i];
	if (!tab)
		return 0;
	if (tab->sh_link >= eh->e_shnum || tab->sh_offset > size || tab->sh_size > size - tab->sh_offset ||
	    sh[tab->sh_link].sh_offset > size || sh[tab->sh_link].sh_size > size - sh[tab->sh_link].sh_offset) {
		snprintf(err, err_size, "code object: symbol table at offset 0x%llx out of range",
			 (unsigned long long)tab->sh_offset);
		return -EINVAL;
	}
	cnt = tab->sh_size / sizeof(Elf64_Sym);
	s = calloc(cnt ? cnt : 1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i < cnt; i++) {
		const Elf64_Sym *y = (const Elf64_Sym *)(elf + tab->sh_offset) + i;
		const Elf64_Shdr *str = &sh[tab->sh_link];

		if (!y->st_name)
			continue;
		if (y->st_name >= str->sh_size || !memchr(elf + str->sh_offset + y->st_name, 0, str->sh_size - y->st_name)) {
			free(s);
			snprintf(err, err_size, "code object: symbol %zu has a name outside its string table", i);
			return -EINVAL;
		}
		s[k].name = (const char *)elf + str->sh_offset + y->st_name;
		s[k].value = y->st_value;
		s[k].size = y->st_size;
		s[k].type = ELF64_ST_TYPE(y->st_info);
		s[k].bind = ELF64_ST_BIND(y->st_info);
		s[k].vis = ELF64_ST_VISIBILITY(y->st_other);
		s[k].shndx = y->st_shndx;
		k++;
	}
	*out = s;
	*n = k;
	return 0;
}

const struct co_sym *co_sym_find(const struct co_sym *s, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(s[i].name, name))
			return &s[i];
	return NULL;
}

const uint8_t *co_elf_meta(const uint8_t *elf, size_t size, size_t *len)
{
	const Elf64_Shdr *sh;
	size_t off = 0;

	if (co_find_section(elf, size, ".note", &sh) || sh->sh_type != SHT_NOTE)
		return NULL;
	while (off + 12 <= sh->sh_size) {
		uint32_t nsz, dsz, type;
		size_t d;

		memcpy(&nsz, elf + sh->sh_offset + off, 4);
		memcpy(&dsz, elf + sh->sh_offset + off + 4, 4);
		memcpy(&type, elf + sh->sh_offset + off + 8, 4);
		d = off + 12 + (((size_t)nsz + 3) & ~(size_t)3);
		if (d > sh->sh_size || dsz > sh->sh_size - d)
			return NULL;
		if (type == 32 /* NT_AMDGPU_METADATA */) {
			*len = dsz;
			return elf + sh->sh_offset + d;
		}
		off = d + (((size_t)dsz + 3) & ~(size_t)3);
	}
	return NULL;
}

int co_arch_flat_scratch(const char *arch)
{
	return !strcmp(arch, "gfx940") || !strcmp(arch, "gfx941") || !strcmp(arch, "gfx942");
}

void co_scan_text(const char *txt, struct co_regs *r)
{
	const char *p = txt;

	while (*p == ' ' || *p == '\t')
		p++;
	if (!strncmp(p, "s_swappc_b64", 12))
		r->calls = 1;
	p += strcspn(p, " \t");
	for (; *p; p++) {
		int *slot = *p == 's' ? &r->s : *p == 'v' ? &r->v : *p == 'a' ? &r->a : NULL;
		long hi;
		char *e;

		if (!slot || (p > txt && (isalnum((unsigned char)p[-1]) || p[-1] == '_')))
			continue;
		if (isdigit((unsigned char)p[1])) {
			hi = strtol(p + 1, &e, 10);
		} else if (p[1] == '[' && isdigit((unsigned char)p[2])) {
			hi = strtol(p + 2, &e, 10);
			if (*e == ':')
				hi = strtol(e + 1, &e, 10);
			if (*e != ']')
				continue;
		} else {
			continue;
		}
		if (isalnum((unsigned char)*e) || *e == '_')
			continue;
		if (hi > *slot)
			*slot = (int)hi;
		p = e - 1;
	}
}

int co_scan_regs(const struct co_code *c, uint32_t from, uint32_t to, struct co_regs *r)
{
	LLVMDisasmContextRef dc;

	co_llvm_ready();
	dc = LLVMCreateDisasmCPU("amdgcn-amd-amdhsa", c->arch, NULL, 0, NULL, NULL);
	if (!dc)
		return -ENOTSUP;
	for (size_t i = 0; i < c->n; i++) {
		const struct co_insn *in = &c->insns[i];
		char txt[256] = "";

		if (in->off < from || in->off >= to)
			continue;
		if (LLVMDisasmInstruction(dc, (uint8_t *)c->text + in->off, c->text_size - in->off, c->text_addr + in->off,
					  txt, sizeof(txt)))
			co_scan_text(txt, r);
	}
	LLVMDisasmDispose(dc);
	return 0;
}

static int sym_cmp(const void *a, const void *b)
{
	const struct co_sym *x = a, *y = b;

	return x->value < y->value ? -1 : x->value > y->value;
}

/* Size of the user SGPRs a descriptor enables (kernel_code_properties). */
static unsigned user_sgprs(uint16_t props, uint16_t preload)
{
	static const unsigned sz[7] = {4, 2, 2, 2, 2, 2, 1};
	unsigned n = 0;

	for (unsigned b = 0; b < 7; b++)
		if (props & (1u << b))
			n += sz[b];
	return n + (preload & 0x7f);
}

/* Check one kernel; 0 or -EINVAL with the reason in err. */
static int check_kernel(const uint8_t *elf, size_t size, const struct co_code *c, const struct co_sym *syms,
			size_t nsyms, const struct co_meta_kernel *mk, const struct co_regs *callee, char *err,
			size_t err_size)
{
	const struct co_sym *fn = co_sym_find(syms, nsyms, mk->name), *kd = co_sym_find(syms, nsyms, mk->symbol);
	const Elf64_Shdr *ro;
	const uint8_t *d;
	uint32_t rsrc1, rsrc2, rsrc3, priv;
	uint16_t props, preload;
	int64_t entry;
	uint64_t end = c->text_addr + c->text_size;
	struct co_regs r = {-1, -1, -1, 0};
	unsigned vg, sg, accum, user;
	int gfx90a_like = 1;

	if (!fn || !kd || fn->type != STT_FUNC || kd->size != CO_KD_SIZE) {
		snprintf(err, err_size, "kernel %s: %s missing or not a 64-byte descriptor / function", mk->name,
			 !fn ? mk->name : mk->symbol);
		return -EINVAL;
	}
	if (co_find_section(elf, size, ".rodata", &ro) || kd->value < ro->sh_addr ||
	    kd->value + CO_KD_SIZE > ro->sh_addr + ro->sh_size) {
		snprintf(err, err_size, "kernel %s: descriptor %s at 0x%llx is not inside .rodata", mk->name, mk->symbol,
			 (unsigned long long)kd->value);
		return -EINVAL;
	}
	d = elf + ro->sh_offset + (kd->value - ro->sh_addr);
	memcpy(&entry, d + CO_KD_ENTRY, 8);
	memcpy(&rsrc3, d + CO_KD_RSRC3, 4);
	memcpy(&rsrc1, d + CO_KD_RSRC1, 4);
	memcpy(&rsrc2, d + CO_KD_RSRC2, 4);
	memcpy(&props, d + CO_KD_PROPS, 2);
	memcpy(&preload, d + CO_KD_PRELOAD, 2);
	memcpy(&priv, d + CO_KD_PRIVATE, 4);
	if ((uint64_t)((int64_t)kd->value + entry) != fn->value || fn->value % 256 || fn->value < c->text_addr ||
	    fn->value >= end) {
		snprintf(err, err_size, "kernel %s: descriptor entry offset %lld leads to 0x%llx, the function is at 0x%llx",
			 mk->name, (long long)entry, (unsigned long long)((int64_t)kd->value + entry),
			 (unsigned long long)fn->value);
		return -EINVAL;
	}
	user = (rsrc2 >> 1) & 0x1f;
	if (user != user_sgprs(props, preload)) {
		snprintf(err, err_size, "kernel %s: rsrc2 USER_SGPR_COUNT %u, the enabled user SGPRs make %u", mk->name,
			 user, user_sgprs(props, preload));
		return -EINVAL;
	}
	/* the kernel's code: up to the next function symbol */
	for (size_t i = 0; i < nsyms; i++)
		if (syms[i].type == STT_FUNC && syms[i].value > fn->value && syms[i].value < end)
			end = syms[i].value;
	co_scan_regs(c, (uint32_t)(fn->value - c->text_addr), (uint32_t)(end - c->text_addr), &r);
	if (r.calls) {
		if (callee->s > r.s)
			r.s = callee->s;
		if (callee->v > r.v)
			r.v = callee->v;
		if (callee->a > r.a)
			r.a = callee->a;
	}
	(void)gfx90a_like;
	vg = ((rsrc1 & 0x3f) + 1) * 8;
	sg = (((rsrc1 >> 6) & 0xf) + 1) * 8;
	accum = ((rsrc3 & 0x3f) + 1) * 4;
	if ((int)accum < r.v + 1 || (int)vg < r.v + 1 || (r.a >= 0 && (int)vg < (int)accum + r.a + 1)) {
		snprintf(err, err_size,
			 "kernel %s: code names v%d / a%d, the descriptor grants %u VGPRs with accum_offset %u", mk->name,
			 r.v, r.a, vg, accum);
		return -EINVAL;
	}
	if ((int)sg < r.s + 1 || mk->sgpr > sg) {
		snprintf(err, err_size, "kernel %s: code names s%d, metadata .sgpr_count %llu, the descriptor grants %u",
			 mk->name, r.s, (unsigned long long)mk->sgpr, sg);
		return -EINVAL;
	}
	if (mk->vgpr > vg) {
		snprintf(err, err_size, "kernel %s: metadata .vgpr_count %llu, the descriptor grants %u", mk->name,
			 (unsigned long long)mk->vgpr, vg);
		return -EINVAL;
	}
	if (mk->priv != priv || (priv && !(rsrc2 & 1))) {
		snprintf(err, err_size,
			 "kernel %s: private segment %u bytes in the descriptor (enabled %u), %llu in the metadata",
			 mk->name, priv, rsrc2 & 1, (unsigned long long)mk->priv);
		return -EINVAL;
	}
	return 0;
}

int co_check_object(const char *arch_hint, const uint8_t *elf, size_t size, size_t *n_kernels, char *err,
		    size_t err_size)
{
	struct co_meta_kernel *mk = NULL;
	struct co_code c;
	struct co_sym *syms = NULL;
	struct co_regs callee = {-1, -1, -1, 0};
	const uint8_t *meta;
	size_t nsyms = 0, mlen = 0;
	int nk, rc;

	(void)arch_hint;
	if (n_kernels)
		*n_kernels = 0;
	rc = co_decode(elf, size, &c, err, err_size);
	if (rc)
		return rc;
	if (co_check_branches(&c, err, err_size)) {
		rc = -EINVAL;
		goto out;
	}
	rc = co_elf_syms(elf, size, &syms, &nsyms, err, err_size);
	if (rc)
		goto out;
	qsort(syms, nsyms, sizeof(*syms), sym_cmp);
	meta = co_elf_meta(elf, size, &mlen);
	mk = calloc(256, sizeof(*mk));
	if (!mk) {
		rc = -ENOMEM;
		goto out;
	}
	nk = meta ? co_meta_read(meta, mlen, mk, 256) : -EINVAL;
	if (nk < 0) {
		snprintf(err, err_size, "code object: no readable NT_AMDGPU_METADATA note in .note");
		rc = -EINVAL;
		goto out;
	}
	/* registers of every function that is not a kernel: what a call may use */
	for (size_t i = 0; i < nsyms; i++) {
		int kernel = 0;
		uint64_t end = c.text_addr + c.text_size;

		if (syms[i].type != STT_FUNC || syms[i].value < c.text_addr || syms[i].value >= end)
			continue;
		for (int k = 0; k < nk; k++)
			kernel |= !strcmp(mk[k].name, syms[i].name);
		if (kernel)
			continue;
		for (size_t j = i + 1; j < nsyms; j++)
			if (syms[j].type == STT_FUNC && syms[j].value > syms[i].value) {
				end = syms[j].value < end ? syms[j].value : end;
				break;
			}
		co_scan_regs(&c, (uint32_t)(syms[i].value - c.text_addr), (uint32_t)(end - c.text_addr), &callee);
	}
	for (int k = 0; k < nk; k++) {
		rc = check_kernel(elf, size, &c, syms, nsyms, &mk[k], &callee, err, err_size);
		if (rc)
			goto out;
	}
	if (n_kernels)
		*n_kernels = (size_t)nk;
	rc = 0;
out:
	free(mk);
	free(syms);
	co_code_free(&c);
	return rc;
}
