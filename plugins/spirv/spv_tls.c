/* SPDX-License-Identifier: MIT */
/*
 * plugins/spirv/spv_tls.c - GPU_THREAD_LOCAL maps in SPIR-V (docs/MAPS.md):
 * a work-item's own values for its run, never in the map's block.
 *
 * The main function of each program gets the base of its work-item's
 * values as its third argument (a3, which no eBPF program may read at its
 * start): the probe wrapper passes the context plus 64, where the injector
 * keeps them after the context in the kernel's Function-storage array
 * (spv_inject.c, zeroed at the kernel's entry); the run kernel passes a
 * Function array of its own, zeroed before the program runs once. A map
 * helper on such a map is written in place from the map known at the call
 * (the generic routines read the block, which holds no work-item's values).
 * An atomic on a value goes through global-memory atomics, as on the stack:
 * right only on devices with one flat address space (spv_build.c, atomic_ptr).
 */
#include <errno.h>
#include <stdbool.h>

#include <gbpf/helper_ids.h>

#include "spv_internal.h"

static uint32_t tls_bytes_before(const struct gbpf_prog_desc *p, size_t map_index)
{
	return gbpf_thread_local_off(p->maps, p->map_cnt, map_index);
}

/* The map whose address the straight-line code before @p pc left in r1, or NULL. */
static const struct gbpf_map_desc *known_map(const struct spv_cg *cg, size_t pc)
{
	const struct spv_func *fn = &cg->funcs[cg->cur];

	for (size_t j = pc; j-- > fn->start;) {
		const struct gbpf_insn *in = &cg->insns[j];

		/* the second slot of a wide load belongs to the one before it */
		if (j > fn->start && cg->insns[j - 1].code == GBPF_OP_LDDW)
			continue;
		if (in->code == GBPF_OP_LDDW && in->dst == 1)
			return in->src == GBPF_PSEUDO_MAP_IDX && in->imm >= 0 && (size_t)in->imm < cg->prog->map_cnt
				       ? &cg->prog->maps[in->imm]
				       : NULL;
		if (in->code == GBPF_OP_CALL || in->code == GBPF_OP_CALLX || cg->leader[j])
			return NULL;
		if (in->dst == 1 && (GBPF_CLASS(in->code) == GBPF_ALU || GBPF_CLASS(in->code) == GBPF_ALU64 ||
				     GBPF_CLASS(in->code) == GBPF_LDX || GBPF_CLASS(in->code) == GBPF_LD))
			return NULL;
	}
	return NULL;
}

static bool has_thread_local(const struct gbpf_prog_desc *p)
{
	return tls_bytes_before(p, p->map_cnt) != 0;
}

int spv_tls_emit_call(struct spv_cg *cg, size_t pc, uint32_t id, uint32_t *r0)
{
	struct spv_mod *m = cg->m;
	const struct gbpf_map_desc *d;
	uint32_t stride, idx, ok, elem, zero = spv_c64(m, 0);

	if (id != GBPF_HELPER_MAP_LOOKUP_ELEM && id != GBPF_HELPER_MAP_UPDATE_ELEM &&
	    id != GBPF_HELPER_MAP_DELETE_ELEM)
		return 0;
	if (!has_thread_local(cg->prog))
		return 0;
	d = known_map(cg, pc);
	if (!d)
		return spv_fail(cg, pc, -ENOTSUP,
				"map helper %u on a map not known at the call, in a program with thread-local "
				"(GPU_THREAD_LOCAL) maps: pass the map directly", id);
	if (d->type != GBPF_MAP_TYPE_GPU_THREAD_LOCAL)
		return 0;
	if (cg->cur != 0 || !cg->tls_base)
		return spv_fail(cg, pc, -ENOTSUP,
				"thread-local map '%s' used in a BPF subprogram: use it in the program's own "
				"function (inline the subprogram)", d->name ? d->name : "?");
	if (id == GBPF_HELPER_MAP_DELETE_ELEM) {
		*r0 = spv_c64(m, (uint64_t)(int64_t)-EINVAL); /* as an array's: no element goes away */
		return 1;
	}
	stride = (d->value_size + 7u) & ~7u;
	idx = spv_un(m, SpvOpUConvert, m->t_u64, spv_ld32(m, spv_rd(cg, 2), 0));
	ok = spv_bin(m, SpvOpULessThan, m->t_bool, idx, spv_c64(m, d->max_entries));
	elem = spv_add64(m, spv_addk(m, cg->tls_base, tls_bytes_before(cg->prog, (size_t)(d - cg->prog->maps))),
			 spv_bin(m, SpvOpIMul, m->t_u64, idx, spv_c64(m, stride)));
	if (id == GBPF_HELPER_MAP_LOOKUP_ELEM) {
		*r0 = spv_select(m, m->t_u64, ok, elem, zero);
		return 1;
	}
	{
		/* update: flags above BPF_EXIST -EINVAL, out of range -E2BIG, BPF_NOEXIST -EEXIST, else copied */
		uint32_t flags = spv_rd(cg, 4), lcopy = spv_id(m), ldone = spv_id(m), src = spv_rd(cg, 3);
		uint32_t bad = spv_bin(m, SpvOpUGreaterThan, m->t_bool, flags, spv_c64(m, 2));
		uint32_t noexist = spv_bin(m, SpvOpIEqual, m->t_bool, flags, spv_c64(m, 1));
		uint32_t rc = spv_select(m, m->t_u64, bad, spv_c64(m, (uint64_t)(int64_t)-EINVAL),
					 spv_select(m, m->t_u64, ok,
						    spv_select(m, m->t_u64, noexist,
							       spv_c64(m, (uint64_t)(int64_t)-EEXIST), zero),
						    spv_c64(m, (uint64_t)(int64_t)-E2BIG)));

		spv_brc(m, spv_bin(m, SpvOpIEqual, m->t_bool, rc, zero), lcopy, ldone);
		spv_label(m, lcopy);
		/* byte by byte: the value may lie anywhere the verifier allows */
		for (uint32_t b = 0; b < d->value_size; b++)
			spv_store(m, spv_addr_ptr(m, m->t_u8, spv_addk(m, elem, b)),
				  spv_load(m, m->t_u8, spv_addr_ptr(m, m->t_u8, spv_addk(m, src, b)), 1), 1);
		spv_br(m, ldone);
		spv_label(m, ldone);
		*r0 = rc;
	}
	return 1;
}
