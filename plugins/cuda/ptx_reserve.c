/* SPDX-License-Identifier: MIT */
/*
 * bpf_ringbuf_reserve / submit / discard with the record held in the probe's
 * frame until its submit.
 *
 * Why: a record reserved in the ring is written by the probe's own stores,
 * lane by lane at the record stride (with 56-byte records every store is a
 * partial 32-byte sector, 32 of them an instruction), and committed lane by
 * lane. bpf_ringbuf_output of a record on the stack takes the warp-wide
 * write instead (ptx_ring.c __gbpf_m_ring_wput: the warp's block written in
 * whole sectors, one commit pass). H200, vec_add of 2^20 threads with one
 * 56-byte event each: reserve/submit 132 us over the kernel, output 49 us.
 * So where it is safe, reserve hands out an area of the entry function's
 * frame, after the eBPF stack's 512 bytes, and the submit that names the
 * area is bpf_ringbuf_output of it by value (ptx_emit_ringbuf_output_inline); discard
 * writes nothing.
 *
 * Safe where: the call is in the entry function and on no cycle of its
 * control flow (it runs at most once a run of the program, so one area a
 * call is enough), the map is a ring buffer known at the call, the size a
 * constant multiple of 8 of at most PTX_RSV_SIZE_MAX bytes (a ring's
 * smallest sub-ring, GBPF_RING_MIN_SIZE, takes it with its header) and the
 * flags a constant 0. Each submit and discard must then name its area
 * through a register known to hold r10 plus the area's offset
 * (ptx_cg.stk_known). Where one does not (the pointer was spilled and
 * reloaded, or handed to a subprogram), the whole program is emitted again
 * without areas (ptx_codegen.c emit_program), so a record is never half in
 * the frame and half in the ring.
 *
 * What the program sees change: the reservation does not fail (the result is
 * never NULL, so the null check is decided when emitting, ptx_codegen.c
 * emit_jump); a full ring refuses the record at its submit instead, where
 * the drop is counted in the sub-ring and the header as a failed
 * reservation's is. An area is not cleared (as in Linux, bytes of a record
 * the program does not write are unspecified): zeroing it first would make
 * the injector's fold write back words the probe then overwrites in halves.
 */
#include <gbpf/helper_ids.h>

#include "ptx_codegen.h"
#include "ptx_internal.h"
#include "ptx_maps.h"

_Static_assert(PTX_RSV_SIZE_MAX == 8 * (PTX_RING_WARP_MAX_WORDS - 1), "an area is one warp-wide record");
_Static_assert(GBPF_PTX_FRAME_MAX == GBPF_STACK_SIZE + PTX_RSV_MAX * PTX_RSV_SIZE_MAX,
	       "the injector accepts every frame the areas make");

/* @p reg holds a constant at the call at @p pc, set in the same straight-line code: *@p v. */
static bool known_imm_in(const struct ptx_cg *cg, size_t pc, unsigned reg, uint64_t *v)
{
	const struct gbpf_insn *in = ptx_straight_def(cg, pc, reg);

	if (!in || GBPF_OP(in->code) != GBPF_MOV || GBPF_SRC(in->code) != GBPF_K || in->off)
		return false;
	if (GBPF_CLASS(in->code) == GBPF_ALU64)
		*v = (uint64_t)(int64_t)in->imm;
	else if (GBPF_CLASS(in->code) == GBPF_ALU)
		*v = (uint32_t)in->imm;
	else
		return false;
	return true;
}

void ptx_rsv_find(struct ptx_cg *cg, const uint8_t *in_loop)
{
	const struct ptx_func *entry = &cg->funcs[0];
	unsigned off = GBPF_STACK_SIZE;

	cg->n_rsv = 0;
	if (cg->rsv_off || !in_loop)
		return;
	for (size_t pc = entry->start; pc < entry->end && cg->n_rsv < PTX_RSV_MAX; pc++) {
		const struct gbpf_insn *in = &cg->insns[pc];
		const struct gbpf_map_desc *m;
		uint64_t size, flags;

		if (gbpf_insn_is_wide(in)) {
			pc++;
			continue;
		}
		if (in->code != GBPF_OP_CALL || in->src != GBPF_CALL_HELPER ||
		    in->imm != GBPF_HELPER_RINGBUF_RESERVE || in_loop[pc])
			continue;
		m = ptx_known_map_in(cg, pc, 1);
		if (!m || (m->type != GBPF_MAP_TYPE_RINGBUF && m->type != GBPF_MAP_TYPE_GPU_RINGBUF) ||
		    !known_imm_in(cg, pc, 2, &size) || !known_imm_in(cg, pc, 3, &flags) || flags || !size ||
		    size % 8 || size > PTX_RSV_SIZE_MAX)
			continue;
		cg->rsv[cg->n_rsv++] = (struct ptx_rsv_area){
			.pc = pc, .frame_off = off, .size = (unsigned)size, .map = (unsigned)(m - cg->prog->maps)};
		off += (unsigned)size;
	}
}

int ptx_rsv_emit_reserve(struct ptx_cg *cg, size_t pc)
{
	const struct ptx_rsv_area *a = NULL;

	for (unsigned i = 0; i < cg->n_rsv && cg->cur == 0; i++)
		if (cg->rsv[i].pc == pc)
			a = &cg->rsv[i];
	if (!a)
		return 0;
	ptx_buf_printf(cg->b, "mov.u64 %%r0, __gbpf_stack;\ncvta.local.u64 %%r0, %%r0;\nadd.u64 %%r0, %%r0, %u;\n",
		       a->frame_off);
	cg->call_r0_stk = 1;
	cg->call_r0_stk_off = (long long)a->frame_off - GBPF_STACK_SIZE;
	cg->call_r0_align = 3;
	return 1;
}

int ptx_rsv_emit_commit(struct ptx_cg *cg, uint32_t id)
{
	const struct ptx_rsv_area *a = NULL;

	if (!cg->n_rsv)
		return 0;
	/* the areas are the entry function's: in a subprogram r1 cannot be known to point there */
	for (unsigned i = 0; i < cg->n_rsv && cg->cur == 0 && cg->stk_known[1]; i++)
		if ((long long)GBPF_STACK_SIZE + cg->stk_off[1] == (long long)cg->rsv[i].frame_off)
			a = &cg->rsv[i];
	if (!a) {
		cg->rsv_unmatched = 1;
		return 0;
	}
	if (id == GBPF_HELPER_RINGBUF_SUBMIT) {
		ptx_buf_printf(cg->b, "ld.global.u64 %%t8, [__gbpf_maps+%u];\n", a->map * 8);
		ptx_emit_ringbuf_output_inline(cg, "%t8", a->frame_off, a->size / 8);
	}
	/* submit and discard return nothing (r0 is not the program's to read after them) */
	ptx_buf_puts(cg->b, "mov.u64 %r0, 0;\n");
	return 1;
}
