/* SPDX-License-Identifier: MIT */
/*
 * plugins/spirv/spv_ring.c - ring buffer and perf event array producers
 * (docs/MAPS.md) in SPIR-V: a CAS on the sub-ring's producer position
 * reserves the record (and a DISCARD padding record instead of wrapping),
 * a full sub-ring counts one drop in the sub-ring and in the header, and
 * commit publishes the header word after a fence. The sub-ring of a
 * work-item is its compute-unit substitute (spv_slot_id), so producers
 * contend per work-group slot, not device-wide.
 */
#include <errno.h>

#include "maps/map_layout.h"
#include "spv_internal.h"

/* Bounded retries of the producer CAS (a hung device is worse than a drop). */
#define SPV_RING_CAS_TRIES (1u << 20)

struct rb {
	struct spv_gen *g;
	struct spv_mod *m;
	uint32_t p[4];
};

static uint32_t k(struct rb *f, uint64_t v)
{
	return spv_c64(f->m, v);
}

static uint32_t op2(struct rb *f, uint32_t op, uint32_t a, uint32_t b)
{
	return spv_bin(f->m, op, f->m->t_u64, a, b);
}

static uint32_t cmp(struct rb *f, uint32_t op, uint32_t a, uint32_t b)
{
	return spv_bin(f->m, op, f->m->t_bool, a, b);
}

static void begin(struct rb *f, struct spv_gen *g, unsigned which, const char *name)
{
	struct spv_mod *m = g->m;
	uint32_t params[4] = {m->t_u64, m->t_u64, m->t_u64, m->t_u64};
	uint32_t ft = spv_type_fn(m, m->t_u64, 4, params);
	unsigned i;

	f->g = g;
	f->m = m;
	spv_name(m, g->rt[which], name);
	spv_op(m, SPV_SEC_FUNCS, SpvOpFunction, 4, m->t_u64, g->rt[which],
	       SpvFunctionControlMaskNone, ft);
	for (i = 0; i < 4; i++) {
		f->p[i] = spv_id(m);
		spv_op(m, SPV_SEC_FUNCS, SpvOpFunctionParameter, 2, m->t_u64, f->p[i]);
	}
	spv_label(m, 0);
}

static void end(struct rb *f)
{
	spv_op(f->m, SPV_SEC_FUNCS, SpvOpFunctionEnd, 0);
}

static uint32_t u32v(struct rb *f, uint32_t v64)
{
	return spv_un(f->m, SpvOpUConvert, f->m->t_u32, v64);
}

static void fence(struct rb *f)
{
	spv_fence(f->m, f->g->ctx_table ? f->g->ctx_table +
					      offsetof(struct gbpf_spirv_ctx_table, reserved)
					: 0);
}

/*
 * reserve_on(map, size, sub) -> record data address, or 0 (full: drop
 * counted; too large: 1 << 63 marker so callers can tell E2BIG).
 */
static void emit_reserve_on(struct spv_gen *g)
{
	struct rb f;
	struct spv_mod *m = g->m;
	uint32_t map, size, sub, ns, ctl, ssz, mask, need, tries, head, body, lfull, lcas, lgot, lbig;
	uint32_t lpad, lnopad, lfail, tv, pos, cons, off, pad, total, got, data, rec, p_pos, p_pad;
	uint32_t pv, pdv;

	begin(&f, g, SPV_RT_RING_RESERVE_ON, "__gbpf_ring_reserve_on");
	map = f.p[0], size = f.p[1];
	tries = spv_var(m, m->t_u64);
	p_pos = spv_var(m, m->t_u64);
	p_pad = spv_var(m, m->t_u64);
	ns = spv_hdr32(m, map, 28);
	sub = op2(&f, SpvOpBitwiseAnd, f.p[2], op2(&f, SpvOpISub, ns, k(&f, 1)));
	ctl = spv_add64(m, spv_add64(m, map, spv_ld64(m, map, 56)),
			op2(&f, SpvOpIMul, sub, k(&f, sizeof(struct gbpf_ring_ctl))));
	ssz = spv_ld64(m, map, 80);
	mask = op2(&f, SpvOpISub, ssz, k(&f, 1));
	need = op2(&f, SpvOpBitwiseAnd, spv_addk(m, size, 15), k(&f, ~7ull));
	lbig = spv_id(m), head = spv_id(m), body = spv_id(m), lfull = spv_id(m), lcas = spv_id(m);
	lgot = spv_id(m), lfail = spv_id(m), lpad = spv_id(m), lnopad = spv_id(m);
	{
		uint32_t ok = spv_id(m);

		spv_brc(m, cmp(&f, SpvOpUGreaterThan, size, op2(&f, SpvOpISub, ssz, k(&f, 8))), lbig, ok);
		spv_label(m, ok);
	}
	spv_store(m, tries, k(&f, 0), 8);
	spv_br(m, head);
	spv_label(m, head);
	tv = spv_load(m, m->t_u64, tries, 8);
	spv_brc(m, cmp(&f, SpvOpULessThan, tv, k(&f, SPV_RING_CAS_TRIES)), body, lfail);
	spv_label(m, body);
	spv_store(m, tries, spv_addk(m, tv, 1), 8);
	/* the consumer's position first: it never passes the producer's, so total - cons cannot wrap */
	cons = spv_atomic_load(m, 64, spv_addk(m, ctl, 64));
	pos = spv_atomic_load(m, 64, ctl);
	off = op2(&f, SpvOpBitwiseAnd, pos, mask);
	pad = spv_select(m, m->t_u64, cmp(&f, SpvOpUGreaterThan, spv_add64(m, off, need), ssz),
			 op2(&f, SpvOpISub, ssz, off), k(&f, 0));
	total = spv_add64(m, spv_add64(m, pos, pad), need);
	spv_brc(m, cmp(&f, SpvOpUGreaterThan, op2(&f, SpvOpISub, total, cons), ssz), lfull, lcas);
	spv_label(m, lfull);
	spv_atomic(m, SpvOpAtomicIAdd, 64, spv_addk(m, ctl, 72), k(&f, 1));
	spv_atomic(m, SpvOpAtomicIAdd, 64, spv_addk(m, map, 96), k(&f, 1));
	spv_ret(m, k(&f, 0));
	spv_label(m, lcas);
	got = spv_atomic_cas(m, 64, ctl, total, pos);
	spv_store(m, p_pos, pos, 8);
	spv_store(m, p_pad, pad, 8);
	spv_brc(m, cmp(&f, SpvOpIEqual, got, pos), lgot, head);
	spv_label(m, lgot);
	pv = spv_load(m, m->t_u64, p_pos, 8);
	pdv = spv_load(m, m->t_u64, p_pad, 8);
	data = spv_add64(m, spv_add64(m, map, spv_ld64(m, map, 72)), op2(&f, SpvOpIMul, sub, ssz));
	spv_brc(m, cmp(&f, SpvOpINotEqual, pdv, k(&f, 0)), lpad, lnopad);
	spv_label(m, lpad);
	{
		uint32_t ph = spv_add64(m, data, op2(&f, SpvOpBitwiseAnd, pv, mask));

		spv_store(m, spv_addr_ptr(m, m->t_u32, spv_addk(m, ph, 4)), u32v(&f, sub), 4);
		spv_atomic_store(m, 32, ph,
				 u32v(&f, op2(&f, SpvOpBitwiseOr, op2(&f, SpvOpISub, pdv, k(&f, 8)),
					      k(&f, GBPF_RING_DISCARD))));
		spv_br(m, lnopad);
	}
	spv_label(m, lnopad);
	rec = spv_add64(m, data, op2(&f, SpvOpBitwiseAnd, spv_add64(m, pv, pdv), mask));
	spv_store(m, spv_addr_ptr(m, m->t_u32, spv_addk(m, rec, 4)), u32v(&f, sub), 4);
	spv_atomic_store(m, 32, rec, u32v(&f, op2(&f, SpvOpBitwiseOr, size, k(&f, GBPF_RING_BUSY))));
	spv_ret(m, spv_addk(m, rec, 8));
	spv_label(m, lbig);
	spv_ret(m, k(&f, 1ull << 63));
	spv_label(m, lfail);
	/* never won the CAS: count it as a drop so produced == consumed + dropped holds */
	spv_atomic(m, SpvOpAtomicIAdd, 64, spv_addk(m, ctl, 72), k(&f, 1));
	spv_atomic(m, SpvOpAtomicIAdd, 64, spv_addk(m, map, 96), k(&f, 1));
	spv_ret(m, k(&f, 0));
	end(&f);
}

/* reserve(map, size, flags): the caller's sub-ring; NULL for flags or too large */
static void emit_reserve(struct spv_gen *g)
{
	struct rb f;
	struct spv_mod *m = g->m;
	uint32_t r, lok, lbad;

	begin(&f, g, SPV_RT_RING_RESERVE, "__gbpf_ring_reserve");
	lok = spv_id(m), lbad = spv_id(m);
	spv_brc(m, cmp(&f, SpvOpIEqual, f.p[2], k(&f, 0)), lok, lbad);
	spv_label(m, lok);
	r = spv_rt_call(g, SPV_RT_RING_RESERVE_ON, f.p[0], f.p[1], spv_slot_id(g), k(&f, 0));
	spv_ret(m, spv_select(m, m->t_u64, cmp(&f, SpvOpIEqual, r, k(&f, 1ull << 63)), k(&f, 0), r));
	spv_label(m, lbad);
	spv_ret(m, k(&f, 0));
	end(&f);
}

/* commit(data, discard): publish with BUSY cleared, after a fence */
static void emit_commit(struct spv_gen *g)
{
	struct rb f;
	struct spv_mod *m = g->m;
	uint32_t hdr, w, len, nw;

	begin(&f, g, SPV_RT_RING_COMMIT, "__gbpf_ring_commit");
	hdr = spv_addk(m, f.p[0], (uint64_t)-8);
	w = spv_un(m, SpvOpUConvert, m->t_u64, spv_atomic_load(m, 32, hdr));
	len = op2(&f, SpvOpBitwiseAnd, w, k(&f, GBPF_RING_LEN_MASK));
	nw = spv_select(m, m->t_u64, cmp(&f, SpvOpINotEqual, f.p[1], k(&f, 0)),
			op2(&f, SpvOpBitwiseOr, len, k(&f, GBPF_RING_DISCARD)), len);
	fence(&f);
	spv_atomic_store(m, 32, hdr, u32v(&f, nw));
	spv_ret(m, k(&f, 0));
	end(&f);
}

/* output(map, data, size, flags) -> 0, -E2BIG, -EAGAIN (drop counted) */
static void emit_output(struct spv_gen *g)
{
	struct rb f;
	struct spv_mod *m = g->m;
	uint32_t r, lnull, lbig, lfull, lok;

	begin(&f, g, SPV_RT_RING_OUTPUT, "__gbpf_ring_output");
	r = spv_rt_call(g, SPV_RT_RING_RESERVE_ON, f.p[0], f.p[2], spv_slot_id(g), k(&f, 0));
	lnull = spv_id(m), lbig = spv_id(m), lfull = spv_id(m), lok = spv_id(m);
	spv_brc(m, cmp(&f, SpvOpIEqual, r, k(&f, 1ull << 63)), lbig, lnull);
	spv_label(m, lbig);
	spv_ret(m, k(&f, (uint64_t)-(int64_t)E2BIG));
	spv_label(m, lnull);
	spv_brc(m, cmp(&f, SpvOpIEqual, r, k(&f, 0)), lfull, lok);
	spv_label(m, lfull);
	spv_ret(m, k(&f, (uint64_t)-(int64_t)EAGAIN));
	spv_label(m, lok);
	spv_rt_call(g, SPV_RT_MEMCPY, r, f.p[1], f.p[2], k(&f, 0));
	spv_rt_call(g, SPV_RT_RING_COMMIT, r, k(&f, 0), k(&f, 0), k(&f, 0));
	spv_ret(m, k(&f, 0));
	end(&f);
}

/* perf_output(map, flags, data, size): ring = flags index or the caller's slot */
static void emit_perf(struct spv_gen *g)
{
	struct rb f;
	struct spv_mod *m = g->m;
	uint32_t idx, ns, cur, ring, r, lrange, lin, lbig, lfull, lok, lnull;

	begin(&f, g, SPV_RT_PERF_OUTPUT, "__gbpf_perf_output");
	idx = op2(&f, SpvOpBitwiseAnd, f.p[1], k(&f, 0xffffffffull));
	ns = spv_hdr32(m, f.p[0], 28);
	cur = cmp(&f, SpvOpIEqual, idx, k(&f, GBPF_F_CURRENT_CPU));
	ring = spv_select(m, m->t_u64, cur, op2(&f, SpvOpUMod, spv_slot_id(g), ns), idx);
	lrange = spv_id(m), lin = spv_id(m), lbig = spv_id(m), lfull = spv_id(m), lok = spv_id(m);
	lnull = spv_id(m);
	spv_brc(m, cmp(&f, SpvOpUGreaterThanEqual, ring, ns), lrange, lin);
	spv_label(m, lrange);
	spv_ret(m, k(&f, (uint64_t)-(int64_t)E2BIG));
	spv_label(m, lin);
	r = spv_rt_call(g, SPV_RT_RING_RESERVE_ON, f.p[0], f.p[3], ring, k(&f, 0));
	spv_brc(m, cmp(&f, SpvOpIEqual, r, k(&f, 1ull << 63)), lbig, lnull);
	spv_label(m, lbig);
	spv_ret(m, k(&f, (uint64_t)-(int64_t)E2BIG));
	spv_label(m, lnull);
	spv_brc(m, cmp(&f, SpvOpIEqual, r, k(&f, 0)), lfull, lok);
	spv_label(m, lfull);
	spv_ret(m, k(&f, (uint64_t)-(int64_t)ENOSPC));
	spv_label(m, lok);
	spv_rt_call(g, SPV_RT_MEMCPY, r, f.p[2], f.p[3], k(&f, 0));
	spv_rt_call(g, SPV_RT_RING_COMMIT, r, k(&f, 0), k(&f, 0), k(&f, 0));
	spv_ret(m, k(&f, 0));
	end(&f);
}

void spv_rt_emit_more(struct spv_gen *g, unsigned which)
{
	if (spv_hash_emit(g, which) || spv_printq_emit(g, which) || spv_lru_emit(g, which))
		return;
	switch (which) {
	case SPV_RT_RING_RESERVE_ON: emit_reserve_on(g); break;
	case SPV_RT_RING_RESERVE: emit_reserve(g); break;
	case SPV_RT_RING_COMMIT: emit_commit(g); break;
	case SPV_RT_RING_OUTPUT: emit_output(g); break;
	case SPV_RT_PERF_OUTPUT: emit_perf(g); break;
	default: break;
	}
}
