/* SPDX-License-Identifier: MIT */
/*
 * core/loader/link.c - relocations and BPF-to-BPF linking.
 *
 * Each program is linked on its own: its entry function first, then every
 * function it reaches (transitively) through local calls or function
 * address loads, each copied once. Calls are then rewritten pc-relative to
 * the copies, which is what the kernel's verifier and every gbpf consumer
 * expect (gbpf/prog.h).
 *
 * How clang encodes code references (llvm BPF backend):
 *  - call with R_BPF_64_32: target slot = st_value / 8 + imm + 1 in the
 *    symbol's section (imm is -1 for a function symbol, the slot offset
 *    for a section symbol);
 *  - call without relocation: target inside the same section, pc-relative;
 *  - ld_imm64 with R_BPF_64_64 against code: target byte = st_value + imm;
 *  - ld_imm64 with R_BPF_64_64 against data: offset = st_value + imm.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loader_internal.h"

struct ld_func {
	uint32_t sec;
	size_t start, len; /* slots */
	size_t out;        /* first slot in the linked program */
};

struct ld_link {
	struct ld_func *funcs;
	size_t cnt, cap;
};

static int is_code(const struct ld_sec *s)
{
	return s->kind == LD_SEC_PROG || s->kind == LD_SEC_TEXT;
}

static int rel_err(struct gbpf_object *obj, int err, uint32_t sec, size_t slot, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/* "section 'x' (#n): instruction #k (offset 0x..): <what>" */
static int rel_err(struct gbpf_object *obj, int err, uint32_t sec, size_t slot, const char *fmt, ...)
{
	char what[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return ld_err(obj, err, "section '%s' (#%u): instruction #%zu (offset 0x%zx): %s",
		      obj->secs[sec].name, sec, slot, slot * sizeof(struct gbpf_insn), what);
}

/*
 * *@p off = the symbol's value plus the instruction's addend, for a
 * relocation at instruction @p j of section @p sec; a hostile value that
 * would overflow it is an error (the callers then compare the offset).
 */
static int sym_plus_addend(struct gbpf_object *obj, uint32_t sec, size_t j, const Elf64_Sym *sym, int32_t imm,
			   int64_t *off)
{
	*off = 0;
	if (sym->st_value > (uint64_t)INT64_MAX || __builtin_add_overflow((int64_t)sym->st_value, (int64_t)imm, off))
		return rel_err(obj, -GBPF_ERRNO__RELOC, sec, j,
			       "relocation against '%s'%+d: symbol value 0x%llx out of range", ld_sym_name(obj, sym),
			       imm, (unsigned long long)sym->st_value);
	return 0;
}

int ld_collect_relocs(struct gbpf_object *obj)
{
	size_t i, k;

	for (i = 1; i < obj->sec_cnt; i++) {
		const struct ld_sec *rs = &obj->secs[i];
		struct ld_sec *ts;
		size_t n;

		if (rs->sh.sh_type == SHT_RELA) {
			if (rs->sh.sh_info < obj->sec_cnt && is_code(&obj->secs[rs->sh.sh_info]))
				return ld_err(obj, -GBPF_ERRNO__RELOC,
					      "section '%s' (#%zu): RELA relocations of code are not produced by "
					      "clang for BPF and are not supported",
					      rs->name, i);
			continue;
		}
		if (rs->sh.sh_type != SHT_REL)
			continue;
		if (rs->sh.sh_info == 0 || rs->sh.sh_info >= obj->sec_cnt)
			return ld_err(obj, -GBPF_ERRNO__FORMAT,
				      "section '%s' (#%zu): relocated section index %u out of range", rs->name,
				      i, rs->sh.sh_info);
		ts = &obj->secs[rs->sh.sh_info];
		if (!is_code(ts))
			continue; /* debug info, BTF: nothing gbpf consumes */
		if (rs->sh.sh_link != obj->symtab_idx)
			return ld_err(obj, -GBPF_ERRNO__FORMAT,
				      "section '%s' (#%zu): symbol table link %u is not the symbol table (#%u)",
				      rs->name, i, rs->sh.sh_link, obj->symtab_idx);
		if (rs->sh.sh_entsize != sizeof(Elf64_Rel) || rs->sh.sh_size % sizeof(Elf64_Rel) != 0)
			return ld_err(obj, -GBPF_ERRNO__FORMAT,
				      "section '%s' (#%zu): entry size %llu / size %llu do not describe ELF64 "
				      "relocations",
				      rs->name, i, (unsigned long long)rs->sh.sh_entsize,
				      (unsigned long long)rs->sh.sh_size);
		n = rs->sh.sh_size / sizeof(Elf64_Rel);
		for (k = 0; k < n; k++) {
			Elf64_Rel rel;
			uint32_t type, sym;
			size_t slot;

			memcpy(&rel, rs->data + k * sizeof(rel), sizeof(rel));
			type = ELF64_R_TYPE(rel.r_info);
			sym = ELF64_R_SYM(rel.r_info);
			if (rel.r_offset % sizeof(struct gbpf_insn) != 0 ||
			    rel.r_offset / sizeof(struct gbpf_insn) >= ts->insn_cnt)
				return ld_err(obj, -GBPF_ERRNO__RELOC,
					      "section '%s' (#%zu): relocation #%zu: offset 0x%llx is not an "
					      "instruction of section '%s' (%zu instructions)",
					      rs->name, i, k, (unsigned long long)rel.r_offset, ts->name,
					      ts->insn_cnt);
			slot = rel.r_offset / sizeof(struct gbpf_insn);
			if (sym == 0 || sym >= obj->sym_cnt)
				return ld_err(obj, -GBPF_ERRNO__RELOC,
					      "section '%s' (#%zu): relocation #%zu at offset 0x%llx: symbol index "
					      "%u out of range (%zu symbols)",
					      rs->name, i, k, (unsigned long long)rel.r_offset, sym, obj->sym_cnt);
			if (type != LD_R_BPF_64_64 && type != LD_R_BPF_64_32)
				return ld_err(obj, -GBPF_ERRNO__RELOC,
					      "section '%s' (#%zu): relocation #%zu at offset 0x%llx: unknown "
					      "relocation type %u for code",
					      rs->name, i, k, (unsigned long long)rel.r_offset, type);
			if (ts->relocs[slot].type != 0)
				return ld_err(obj, -GBPF_ERRNO__RELOC,
					      "section '%s' (#%zu): relocation #%zu at offset 0x%llx: instruction "
					      "already relocated",
					      rs->name, i, k, (unsigned long long)rel.r_offset);
			ts->relocs[slot] = (struct ld_reloc){type, sym, (uint32_t)k};
		}
	}
	return 0;
}

/* The function (STT_FUNC symbol) of section @p sec starting at slot @p slot. */
static const Elf64_Sym *func_at(const struct gbpf_object *obj, uint32_t sec, size_t slot)
{
	size_t i;

	for (i = 1; i < obj->sym_cnt; i++) {
		const Elf64_Sym *s = &obj->syms[i];

		if (s->st_shndx == sec && ELF64_ST_TYPE(s->st_info) == STT_FUNC &&
		    s->st_value == slot * sizeof(struct gbpf_insn))
			return s;
	}
	return NULL;
}

/*
 * Does slot @p j of section @p sec refer to code? Returns 1 with the target
 * in *tsec / *tslot, 0 when it does not, or a negative error.
 */
static int code_target(struct gbpf_object *obj, uint32_t sec, size_t j, uint32_t *tsec, size_t *tslot)
{
	const struct ld_sec *s = &obj->secs[sec];
	const struct gbpf_insn *insn = &s->insns[j];
	const struct ld_reloc *r = &s->relocs[j];
	int64_t t;

	if (r->type == LD_R_BPF_64_32) {
		const Elf64_Sym *sym = &obj->syms[r->sym];

		if (insn->code != GBPF_OP_CALL)
			return rel_err(obj, -GBPF_ERRNO__RELOC, sec, j,
				       "call relocation (R_BPF_64_32) on opcode 0x%02x, not a call",
				       insn->code);
		if (sym->st_shndx == SHN_UNDEF || sym->st_shndx >= obj->sec_cnt ||
		    !is_code(&obj->secs[sym->st_shndx]))
			return rel_err(obj, -GBPF_ERRNO__RELOC, sec, j,
				       "call to symbol '%s', which is not a function of this object "
				       "(extern functions and kfuncs are not supported)",
				       ld_sym_name(obj, sym));
		if (sym->st_value % sizeof(struct gbpf_insn))
			return rel_err(obj, -GBPF_ERRNO__RELOC, sec, j,
				       "call to symbol '%s' at misaligned offset 0x%llx", ld_sym_name(obj, sym),
				       (unsigned long long)sym->st_value);
		*tsec = sym->st_shndx;
		t = (int64_t)(sym->st_value / sizeof(struct gbpf_insn)) + insn->imm + 1;
	} else if (r->type == LD_R_BPF_64_64) {
		const Elf64_Sym *sym = &obj->syms[r->sym];
		int64_t byte;

		if (insn->code != GBPF_OP_LDDW)
			return rel_err(obj, -GBPF_ERRNO__RELOC, sec, j,
				       "64-bit relocation (R_BPF_64_64) on opcode 0x%02x, not a wide load",
				       insn->code);
		if (sym->st_shndx == SHN_UNDEF || sym->st_shndx >= obj->sec_cnt ||
		    !is_code(&obj->secs[sym->st_shndx]))
			return 0;
		if (sym_plus_addend(obj, sec, j, sym, insn->imm, &byte))
			return -GBPF_ERRNO__RELOC;
		if (byte % (int64_t)sizeof(struct gbpf_insn))
			return rel_err(obj, -GBPF_ERRNO__RELOC, sec, j,
				       "address of '%s'%+d is not an instruction boundary",
				       ld_sym_name(obj, sym), insn->imm);
		*tsec = sym->st_shndx;
		t = byte / (int64_t)sizeof(struct gbpf_insn);
	} else if (insn->code == GBPF_OP_CALL && insn->src == GBPF_CALL_LOCAL) {
		*tsec = sec;
		t = (int64_t)j + insn->imm + 1;
	} else if (insn->code == GBPF_OP_LDDW && insn->src == GBPF_PSEUDO_FUNC) {
		*tsec = sec;
		t = (int64_t)j + insn->imm + 1;
	} else {
		return 0;
	}
	if (t < 0 || (uint64_t)t >= obj->secs[*tsec].insn_cnt)
		return rel_err(obj, -GBPF_ERRNO__RELOC, sec, j,
			       "call into nowhere: target instruction %lld is outside section '%s' (%zu "
			       "instructions)",
			       (long long)t, obj->secs[*tsec].name, obj->secs[*tsec].insn_cnt);
	*tslot = (size_t)t;
	return 1;
}

static int check_func_sym(struct gbpf_object *obj, uint32_t sec, const Elf64_Sym *sym)
{
	const struct ld_sec *s = &obj->secs[sec];

	if (sym->st_value % sizeof(struct gbpf_insn) || sym->st_size % sizeof(struct gbpf_insn) ||
	    sym->st_size == 0 || sym->st_value > s->sh.sh_size ||
	    sym->st_size > s->sh.sh_size - sym->st_value)
		return ld_err(obj, -GBPF_ERRNO__FORMAT,
			      "section '%s' (#%u): function '%s' at offset 0x%llx size %llu is not a "
			      "whole number of instructions inside the %llu-byte section",
			      s->name, sec, ld_sym_name(obj, sym), (unsigned long long)sym->st_value,
			      (unsigned long long)sym->st_size, (unsigned long long)s->sh.sh_size);
	return 0;
}

static int add_func(struct gbpf_object *obj, struct ld_link *lk, uint32_t sec, const Elf64_Sym *sym)
{
	size_t i, start = sym->st_value / sizeof(struct gbpf_insn);
	int err;

	for (i = 0; i < lk->cnt; i++)
		if (lk->funcs[i].sec == sec && lk->funcs[i].start == start)
			return 0;
	err = check_func_sym(obj, sec, sym);
	if (err)
		return err;
	if (lk->cnt == lk->cap) {
		size_t cap = lk->cap ? lk->cap * 2 : 8;
		struct ld_func *f = realloc(lk->funcs, cap * sizeof(*f));

		if (!f)
			return ld_err(obj, -ENOMEM, "section '%s': out of memory linking", obj->secs[sec].name);
		lk->funcs = f;
		lk->cap = cap;
	}
	lk->funcs[lk->cnt++] = (struct ld_func){sec, start, sym->st_size / sizeof(struct gbpf_insn), 0};
	return 0;
}

static int find_out(const struct ld_link *lk, uint32_t sec, size_t slot, size_t *out)
{
	size_t i;

	for (i = 0; i < lk->cnt; i++) {
		if (lk->funcs[i].sec == sec && lk->funcs[i].start == slot) {
			*out = lk->funcs[i].out;
			return 0;
		}
	}
	return -ENOENT;
}

/* ld_imm64 relocated against a map definition or global data. */
static int reloc_data(struct gbpf_object *obj, uint32_t sec, size_t j, struct gbpf_insn *dst)
{
	const struct ld_sec *s = &obj->secs[sec];
	const Elf64_Sym *sym = &obj->syms[s->relocs[j].sym];
	const struct ld_sec *ts;
	int64_t off;
	size_t m;

	if (sym->st_shndx == SHN_UNDEF)
		return rel_err(obj, -GBPF_ERRNO__RELOC, sec, j,
			       "relocation against undefined symbol '%s' (extern variables are not "
			       "supported)",
			       ld_sym_name(obj, sym));
	if (sym->st_shndx >= obj->sec_cnt)
		return rel_err(obj, -GBPF_ERRNO__RELOC, sec, j,
			       "relocation against symbol '%s' in special section 0x%x", ld_sym_name(obj, sym),
			       sym->st_shndx);
	ts = &obj->secs[sym->st_shndx];
	if (sym_plus_addend(obj, sec, j, sym, dst[0].imm, &off))
		return -GBPF_ERRNO__RELOC;
	switch (ts->kind) {
	case LD_SEC_MAPS_BTF:
	case LD_SEC_MAPS_LEGACY:
		for (m = 0; m < obj->map_cnt; m++) {
			const struct ld_map_extra *x = &obj->map_extra[m];

			if (x->shndx == sym->st_shndx && (int64_t)x->off == off)
				break;
		}
		if (m == obj->map_cnt)
			return rel_err(obj, -GBPF_ERRNO__RELOC, sec, j,
				       "relocation against '%s'%+d: no map at offset 0x%llx of section '%s'",
				       ld_sym_name(obj, sym), dst[0].imm, (long long)off, ts->name);
		dst[0].src = GBPF_PSEUDO_MAP_IDX;
		dst[0].imm = (int32_t)m;
		dst[1].imm = 0;
		return 0;
	case LD_SEC_DATA:
	case LD_SEC_RODATA:
	case LD_SEC_BSS:
		if (ts->map_idx < 0 || off < 0 || (uint64_t)off > ts->sh.sh_size)
			return rel_err(obj, -GBPF_ERRNO__RELOC, sec, j,
				       "relocation against '%s'%+d: offset %lld outside section '%s' (%llu bytes)",
				       ld_sym_name(obj, sym), dst[0].imm, (long long)off, ts->name,
				       (unsigned long long)ts->sh.sh_size);
		dst[0].src = GBPF_PSEUDO_MAP_IDX_VALUE;
		dst[0].imm = ts->map_idx;
		dst[1].imm = (int32_t)off;
		return 0;
	default:
		return rel_err(obj, -GBPF_ERRNO__RELOC, sec, j,
			       "relocation against symbol '%s' in section '%s', which is neither code, a map "
			       "nor global data",
			       ld_sym_name(obj, sym), ts->name);
	}
}

/* Copy function @p f into @p out and resolve its references. */
static int emit_func(struct gbpf_object *obj, const struct ld_link *lk, const struct ld_func *f,
		     struct gbpf_insn *out)
{
	const struct ld_sec *s = &obj->secs[f->sec];
	size_t j;
	int ret;

	memcpy(out + f->out, s->insns + f->start, f->len * sizeof(*out));
	for (j = f->start; j < f->start + f->len; j++) {
		struct gbpf_insn *dst = out + f->out + (j - f->start);
		uint32_t tsec = 0;
		size_t tslot = 0, tout = 0;

		if (dst->code == GBPF_OP_LDDW && j + 1 >= f->start + f->len)
			return rel_err(obj, -GBPF_ERRNO__FORMAT, f->sec, j,
				       "wide load is cut off by the end of its function");
		if (dst->code == GBPF_OP_LDDW && s->relocs[j + 1].type)
			return rel_err(obj, -GBPF_ERRNO__RELOC, f->sec, j + 1,
				       "relocation #%u points into the second slot of a wide load",
				       s->relocs[j + 1].index);
		ret = code_target(obj, f->sec, j, &tsec, &tslot);
		if (ret < 0)
			return ret;
		if (ret > 0) {
			if (find_out(lk, tsec, tslot, &tout))
				return rel_err(obj, -GBPF_ERRNO__RELOC, f->sec, j, "internal: unlinked target");
			dst->imm = (int32_t)((int64_t)tout - (int64_t)(f->out + (j - f->start)) - 1);
			if (dst->code == GBPF_OP_CALL) {
				dst->src = GBPF_CALL_LOCAL;
			} else {
				dst->src = GBPF_PSEUDO_FUNC;
				dst[1].imm = 0;
			}
		} else if (s->relocs[j].type == LD_R_BPF_64_64) {
			ret = reloc_data(obj, f->sec, j, dst);
			if (ret)
				return ret;
		}
		if (dst->code == GBPF_OP_LDDW)
			j++;
	}
	return 0;
}

static int link_prog(struct gbpf_object *obj, uint32_t sec, const Elf64_Sym *entry,
		     struct gbpf_prog_desc *p)
{
	struct ld_link lk = {0};
	struct gbpf_insn *out = NULL;
	size_t i, j, total = 0;
	int err;

	err = add_func(obj, &lk, sec, entry);
	for (i = 0; !err && i < lk.cnt; i++) {
		const struct ld_func f = lk.funcs[i];

		for (j = f.start; !err && j < f.start + f.len; j++) {
			uint32_t tsec = 0;
			size_t tslot = 0;
			const Elf64_Sym *tsym;
			int ret = code_target(obj, f.sec, j, &tsec, &tslot);

			if (ret < 0) {
				err = ret;
			} else if (ret > 0) {
				tsym = func_at(obj, tsec, tslot);
				if (!tsym)
					err = rel_err(obj, -GBPF_ERRNO__RELOC, f.sec, j,
						      "call into nowhere: instruction %zu of section '%s' is "
						      "not the start of a function",
						      tslot, obj->secs[tsec].name);
				else
					err = add_func(obj, &lk, tsec, tsym);
			}
			if (obj->secs[f.sec].insns[j].code == GBPF_OP_LDDW)
				j++;
		}
	}
	if (err)
		goto out;
	for (i = 0; i < lk.cnt; i++) {
		lk.funcs[i].out = total;
		total += lk.funcs[i].len;
	}
	if (total > GBPF_OBJECT_MAX_PROG_INSNS || obj->total_insns + total > LD_MAX_TOTAL_INSNS) {
		err = ld_err(obj, -E2BIG,
			     "section '%s': program '%s' links to %zu instructions, more than the limit "
			     "(%u per program, %u per object)",
			     obj->secs[sec].name, ld_sym_name(obj, entry), total, GBPF_OBJECT_MAX_PROG_INSNS,
			     LD_MAX_TOTAL_INSNS);
		goto out;
	}
	out = calloc(total, sizeof(*out));
	if (!out) {
		err = ld_err(obj, -ENOMEM, "section '%s': out of memory for program '%s'",
			     obj->secs[sec].name, ld_sym_name(obj, entry));
		goto out;
	}
	for (i = 0; !err && i < lk.cnt; i++)
		err = emit_func(obj, &lk, &lk.funcs[i], out);
	if (err) {
		free(out);
		goto out;
	}
	obj->total_insns += total;
	p->insns = out;
	p->insn_cnt = total;
out:
	free(lk.funcs);
	return err;
}

static int cmp_sym_ptr(const void *a, const void *b)
{
	const Elf64_Sym *x = *(const Elf64_Sym *const *)a, *y = *(const Elf64_Sym *const *)b;

	return x->st_value < y->st_value ? -1 : x->st_value > y->st_value;
}

int ld_collect_progs(struct gbpf_object *obj)
{
	const Elf64_Sym **entries;
	size_t i, k, n = 0;
	int err = 0;

	entries = calloc(obj->sym_cnt, sizeof(*entries));
	obj->progs = calloc(obj->sym_cnt, sizeof(*obj->progs));
	if (!entries || !obj->progs) {
		free(entries);
		return ld_err(obj, -ENOMEM, "out of memory for programs");
	}
	for (i = 1; !err && i < obj->sec_cnt; i++) {
		const struct ld_sec *s = &obj->secs[i];
		size_t first = n;
		char *storage;

		if (s->kind != LD_SEC_PROG)
			continue;
		for (k = 1; k < obj->sym_cnt; k++) {
			const Elf64_Sym *sym = &obj->syms[k];

			if (sym->st_shndx == i && ELF64_ST_TYPE(sym->st_info) == STT_FUNC)
				entries[n++] = sym;
		}
		qsort(entries + first, n - first, sizeof(*entries), cmp_sym_ptr);
		for (k = first; !err && k < n; k++) {
			struct gbpf_prog_desc *p = &obj->progs[obj->prog_cnt];

			p->sz = sizeof(*p);
			p->name = ld_sym_name(obj, entries[k]);
			p->section = s->name;
			p->license = obj->license;
			p->source_file = obj->name;
			storage = ld_own(obj, strdup(s->name));
			if (!storage) {
				err = ld_err(obj, -ENOMEM, "section '%s': out of memory", s->name);
				break;
			}
			err = gbpf_attach_parse(s->name, &p->attach, storage, strlen(s->name) + 1);
			if (err) {
				err = ld_err(obj, -GBPF_ERRNO__FORMAT,
					     "section '%s' (#%zu): malformed attach point (see docs/ATTACH.md)",
					     s->name, i);
				break;
			}
			err = link_prog(obj, (uint32_t)i, entries[k], p);
			if (!err)
				obj->prog_cnt++;
		}
	}
	free(entries);
	for (i = 0; i < obj->prog_cnt; i++) {
		obj->progs[i].maps = obj->maps;
		obj->progs[i].map_cnt = obj->map_cnt;
	}
	return err;
}
