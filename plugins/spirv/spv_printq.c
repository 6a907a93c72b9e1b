/* SPDX-License-Identifier: MIT */
/*
 * plugins/spirv/spv_printq.c - trace_printk (6) and puts (501) in SPIR-V:
 * the producer side of the print queue (layout in spirv.h). The device
 * never formats: it copies the format (or the string) and the three
 * arguments into a fixed-size record, and the host formats with the
 * interpreter's helper, so the text is the same on every backend.
 *
 * One support function, ulong __gbpf_printq_put(kind, src, limit, a1, a2,
 * a3): reserve a position with a bounded CAS on head (never waiting for
 * the host: a full queue or a contention streak counts a drop), copy at
 * most limit bytes of src up to its NUL, write kind and length, fence,
 * then publish seq = position + 1 with an atomic store.
 */
#include <errno.h>

#include <gbpf/helper_ids.h>

#include "spv_internal.h"

/*
 * CAS attempts before a record counts as dropped. A failed CAS means another
 * work-item reserved, so the queue makes progress; the bound only keeps a
 * pathological streak from hanging a work-item.
 */
#define SPV_PRINTQ_CAS_TRIES 4096u

static uint32_t k64(struct spv_mod *m, uint64_t v)
{
	return spv_c64(m, v);
}

static uint32_t neg(struct spv_mod *m, int e)
{
	return spv_c64(m, (uint64_t)-(int64_t)e);
}

static uint32_t cmp(struct spv_mod *m, uint32_t op, uint32_t a, uint32_t b)
{
	return spv_bin(m, op, m->t_bool, a, b);
}

static void emit_put(struct spv_gen *g)
{
	struct spv_mod *m = g->m;
	uint32_t params[6], p[6], ft, fid = g->rt[SPV_RT_PRINTQ_PUT];
	uint32_t tries, posv, iv, q, ns, lnone, lhave, head, body, lcas, ldrop, lgot;
	uint32_t chead, cbody, cst, cdone, tv, h, t, got, pos, rec, i, b, n;
	unsigned j;

	for (j = 0; j < 6; j++)
		params[j] = m->t_u64;
	ft = spv_type_fn(m, m->t_u64, 6, params);
	spv_name(m, fid, "__gbpf_printq_put");
	spv_op(m, SPV_SEC_FUNCS, SpvOpFunction, 4, m->t_u64, fid, SpvFunctionControlMaskNone, ft);
	for (j = 0; j < 6; j++) {
		p[j] = spv_id(m);
		spv_op(m, SPV_SEC_FUNCS, SpvOpFunctionParameter, 2, m->t_u64, p[j]);
	}
	spv_label(m, 0);
	tries = spv_var(m, m->t_u64);
	posv = spv_var(m, m->t_u64);
	iv = spv_var(m, m->t_u64);
	if (!g->ctx_table) {
		/* a listing-only module: no table, so no queue */
		spv_ret(m, neg(m, ENOTSUP));
		spv_op(m, SPV_SEC_FUNCS, SpvOpFunctionEnd, 0);
		return;
	}
	q = spv_ld64(m, spv_table(g), offsetof(struct gbpf_spirv_ctx_table, printq));
	lnone = spv_id(m), lhave = spv_id(m), head = spv_id(m), body = spv_id(m), lcas = spv_id(m);
	ldrop = spv_id(m), lgot = spv_id(m), chead = spv_id(m), cbody = spv_id(m), cst = spv_id(m);
	cdone = spv_id(m);
	spv_brc(m, spv_eq(m, q, k64(m, 0)), lnone, lhave);
	spv_label(m, lnone);
	spv_ret(m, neg(m, ENOTSUP));

	spv_label(m, lhave);
	ns = spv_hdr32(m, q, offsetof(struct gbpf_spirv_printq_hdr, nslots));
	spv_store(m, tries, k64(m, 0), 8);
	spv_br(m, head);

	spv_label(m, head);
	tv = spv_load(m, m->t_u64, tries, 8);
	spv_brc(m, cmp(m, SpvOpULessThan, tv, k64(m, SPV_PRINTQ_CAS_TRIES)), body, ldrop);
	spv_label(m, body);
	spv_store(m, tries, spv_addk(m, tv, 1), 8);
	/*
	 * tail before head (both sequentially consistent: in this order): tail
	 * never passes head, so head - tail cannot wrap. Read the other way, a
	 * work-item held up between the two loads (a preempted CPU thread under
	 * PoCL) could see the host's tail past the head it read, and the wrapped
	 * difference counted its line as a drop (loaded test runs lost 1 line).
	 */
	t = spv_atomic_load(m, 64, spv_addk(m, q, offsetof(struct gbpf_spirv_printq_hdr, tail)));
	h = spv_atomic_load(m, 64, q);
	spv_brc(m, cmp(m, SpvOpUGreaterThanEqual, spv_bin(m, SpvOpISub, m->t_u64, h, t), ns), ldrop,
		lcas);
	spv_label(m, lcas);
	got = spv_atomic_cas(m, 64, q, spv_addk(m, h, 1), h);
	spv_store(m, posv, h, 8);
	spv_brc(m, spv_eq(m, got, h), lgot, head);

	spv_label(m, ldrop);
	spv_atomic(m, SpvOpAtomicIAdd, 64, spv_addk(m, q, offsetof(struct gbpf_spirv_printq_hdr, drops)),
		   k64(m, 1));
	spv_ret(m, neg(m, ENOSPC));

	spv_label(m, lgot);
	pos = spv_load(m, m->t_u64, posv, 8);
	rec = spv_bin(m, SpvOpIMul, m->t_u64,
		      spv_bin(m, SpvOpBitwiseAnd, m->t_u64, pos,
			      spv_bin(m, SpvOpISub, m->t_u64, ns, k64(m, 1))),
		      k64(m, GBPF_SPIRV_PRINTQ_REC_SIZE));
	rec = spv_add64(m, spv_addk(m, q, GBPF_SPIRV_PRINTQ_HDR), rec);
	for (j = 0; j < 3; j++)
		spv_store(m, spv_addr_ptr(m, m->t_u64, spv_addk(m, rec, 16 + 8 * j)), p[3 + j], 8);
	spv_store(m, iv, k64(m, 0), 8);
	spv_br(m, chead);

	/* copy up to the NUL: puts' string length is unknown, reading past it could fault */
	spv_label(m, chead);
	i = spv_load(m, m->t_u64, iv, 8);
	spv_brc(m, cmp(m, SpvOpULessThan, i, p[2]), cbody, cdone);
	spv_label(m, cbody);
	b = spv_load(m, m->t_u8, spv_addr_ptr(m, m->t_u8, spv_add64(m, p[1], i)), 1);
	spv_brc(m, cmp(m, SpvOpIEqual, b, spv_const(m, m->t_u8, 0)), cdone, cst);
	spv_label(m, cst);
	spv_store(m, spv_addr_ptr(m, m->t_u8, spv_add64(m, spv_addk(m, rec, GBPF_SPIRV_PRINTQ_TEXT_OFF), i)),
		  b, 1);
	spv_store(m, iv, spv_addk(m, i, 1), 8);
	spv_br(m, chead);

	spv_label(m, cdone);
	n = spv_load(m, m->t_u64, iv, 8);
	spv_store(m, spv_addr_ptr(m, m->t_u32, spv_addk(m, rec, 8)), spv_un(m, SpvOpUConvert, m->t_u32, p[0]),
		  4);
	spv_store(m, spv_addr_ptr(m, m->t_u32, spv_addk(m, rec, 12)), spv_un(m, SpvOpUConvert, m->t_u32, n), 4);
	spv_fence(m, g->ctx_table + offsetof(struct gbpf_spirv_ctx_table, reserved));
	spv_atomic_store(m, 64, rec, spv_addk(m, pos, 1));
	/* as the PTX queue: printk returns the bytes of format queued, puts 0 */
	spv_ret(m, spv_select(m, m->t_u64, spv_eq(m, p[0], k64(m, GBPF_SPIRV_PRINTQ_PRINTK)), n,
			      k64(m, 0)));
	spv_op(m, SPV_SEC_FUNCS, SpvOpFunctionEnd, 0);
}

int spv_printq_emit(struct spv_gen *g, unsigned which)
{
	if (which != SPV_RT_PRINTQ_PUT)
		return 0;
	emit_put(g);
	return 1;
}

uint32_t spv_printq_call(struct spv_cg *cg, uint32_t helper)
{
	struct spv_mod *m = cg->m;
	uint32_t f = spv_rt_get(cg->g, SPV_RT_PRINTQ_PUT), id = spv_id(m), z = k64(m, 0);
	uint32_t max = k64(m, GBPF_SPIRV_PRINTQ_TEXT_MAX);

	if (helper == GBPF_HELPER_TRACE_PRINTK) {
		uint32_t size = spv_rd(cg, 2);
		uint32_t lim = spv_select(m, m->t_u64, cmp(m, SpvOpULessThan, size, max), size, max);

		spv_op(m, SPV_SEC_FUNCS, SpvOpFunctionCall, 9, m->t_u64, id, f,
		       k64(m, GBPF_SPIRV_PRINTQ_PRINTK), spv_rd(cg, 1), lim, spv_rd(cg, 3), spv_rd(cg, 4),
		       spv_rd(cg, 5));
	} else {
		spv_op(m, SPV_SEC_FUNCS, SpvOpFunctionCall, 9, m->t_u64, id, f,
		       k64(m, GBPF_SPIRV_PRINTQ_PUTS), spv_rd(cg, 1), max, z, z, z);
	}
	return id;
}
