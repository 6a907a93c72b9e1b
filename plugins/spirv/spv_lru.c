/* SPDX-License-Identifier: MIT */
/*
 * plugins/spirv/spv_lru.c - LRU_HASH eviction on the device, the algorithm
 * of docs/MAPS.md (section LRU) and maps/map_hash.c on the same bytes:
 * among GBPF_LRU_WINDOW buckets from the new key's home (the whole table
 * when that window holds no READY entry) pick the READY bucket with the
 * smallest last_use, TRY its home lock once (never wait: two evicting
 * writers cannot deadlock; the writer's own home is already held) and CAS
 * its state READY -> TOMBSTONE keeping the generation. Its place in the
 * entry count is not given back: it is the caller's reservation (given
 * back, another writer's failed reservation, counted for a moment, could
 * make the caller give up and leave the map short of full; map_hash.c).
 * A failed try or CAS skips that candidate, 8 at most.
 *
 * ulong __gbpf_lru_evict(map, home, 0, 0) -> 0 when one entry was
 * evicted, -ENOENT (no READY entry), -EBUSY (8 candidates skipped).
 */
#include <errno.h>

#include "maps/map_layout.h"
#include "spv_internal.h"

#define SPV_LRU_SKIPS 8u

struct lru {
	struct spv_mod *m;
	uint32_t skip[SPV_LRU_SKIPS]; /* Function variables: skipped bucket indices */
	uint32_t nskip;
};

static uint32_t k64(struct spv_mod *m, uint64_t v)
{
	return spv_c64(m, v);
}

static uint32_t op2(struct spv_mod *m, uint32_t op, uint32_t a, uint32_t b)
{
	return spv_bin(m, op, m->t_u64, a, b);
}

static uint32_t cmp(struct spv_mod *m, uint32_t op, uint32_t a, uint32_t b)
{
	return spv_bin(m, op, m->t_bool, a, b);
}

static uint32_t vld(struct spv_mod *m, uint32_t var)
{
	return spv_load(m, m->t_u64, var, 8);
}

static void vst(struct spv_mod *m, uint32_t var, uint32_t v)
{
	spv_store(m, var, v, 8);
}

static uint32_t neg(struct spv_mod *m, int e)
{
	return k64(m, (uint64_t)-(int64_t)e);
}

/* 32-bit atomics on a u64 address, values as u64 */
static uint32_t aload32(struct spv_mod *m, uint32_t addr)
{
	return spv_u32_64(m, spv_atomic_load(m, 32, addr));
}

static uint32_t cas32(struct spv_mod *m, uint32_t addr, uint32_t expect, uint32_t val)
{
	return spv_u32_64(m, spv_atomic_cas(m, 32, addr, spv_un(m, SpvOpUConvert, m->t_u32, val),
					    spv_un(m, SpvOpUConvert, m->t_u32, expect)));
}

/* 1 (bool) when bucket index @p b is among the skipped ones */
static uint32_t skipped(struct lru *l, uint32_t b)
{
	struct spv_mod *m = l->m;
	uint32_t n = vld(m, l->nskip), r = spv_cbool(m, 0);

	for (unsigned i = 0; i < SPV_LRU_SKIPS; i++) {
		uint32_t hit = spv_bin(m, SpvOpLogicalAnd, m->t_bool, cmp(m, SpvOpULessThan, k64(m, i), n),
				       spv_eq(m, vld(m, l->skip[i]), b));

		r = spv_bin(m, SpvOpLogicalOr, m->t_bool, r, hit);
	}
	return r;
}

static void skip_add(struct lru *l, uint32_t b)
{
	struct spv_mod *m = l->m;
	uint32_t n = vld(m, l->nskip);

	for (unsigned i = 0; i < SPV_LRU_SKIPS; i++)
		vst(m, l->skip[i], spv_select(m, m->t_u64, spv_eq(m, n, k64(m, i)), b, vld(m, l->skip[i])));
	vst(m, l->nskip, spv_addk(m, n, 1));
}

static void emit_evict(struct spv_gen *g)
{
	struct spv_mod *m = g->m;
	uint32_t params[4] = {m->t_u64, m->t_u64, m->t_u64, m->t_u64};
	uint32_t ft = spv_type_fn(m, m->t_u64, 4, params), fid = g->rt[SPV_RT_LRU_EVICT];
	uint32_t p[4], nb, mask, bs, data, window, best, best_use, best_w, pass, i;
	uint32_t louter, lround, lscan, lsbody, lready, lcand, lnext, lsdone, lnone, lpick, lfail;
	uint32_t ltry, lskip, lcas, ldone, lunl, lret, lnotdone, lrescan, lok;
	struct lru l = {.m = m};
	unsigned j;

	spv_name(m, fid, "__gbpf_lru_evict");
	spv_op(m, SPV_SEC_FUNCS, SpvOpFunction, 4, m->t_u64, fid, SpvFunctionControlMaskNone, ft);
	for (j = 0; j < 4; j++) {
		p[j] = spv_id(m);
		spv_op(m, SPV_SEC_FUNCS, SpvOpFunctionParameter, 2, m->t_u64, p[j]);
	}
	spv_label(m, 0);
	for (j = 0; j < SPV_LRU_SKIPS; j++)
		l.skip[j] = spv_var(m, m->t_u64);
	l.nskip = spv_var(m, m->t_u64);
	best = spv_var(m, m->t_u64);
	best_use = spv_var(m, m->t_u64);
	best_w = spv_var(m, m->t_u64);
	pass = spv_var(m, m->t_u64);
	i = spv_var(m, m->t_u64);
	nb = spv_hdr32(m, p[0], 40);
	bs = spv_hdr32(m, p[0], 44);
	data = spv_add64(m, p[0], spv_ld64(m, p[0], 56));
	mask = op2(m, SpvOpISub, nb, k64(m, 1));
	window = spv_select(m, m->t_u64, cmp(m, SpvOpULessThan, nb, k64(m, GBPF_LRU_WINDOW)), nb,
			    k64(m, GBPF_LRU_WINDOW));
	for (j = 0; j < SPV_LRU_SKIPS; j++)
		vst(m, l.skip[j], k64(m, ~0ull));
	vst(m, l.nskip, k64(m, 0));
	louter = spv_id(m), lround = spv_id(m), lscan = spv_id(m), lsbody = spv_id(m);
	lready = spv_id(m), lcand = spv_id(m), lnext = spv_id(m), lsdone = spv_id(m);
	lnone = spv_id(m), lpick = spv_id(m), lfail = spv_id(m), ltry = spv_id(m), lskip = spv_id(m);
	lcas = spv_id(m), ldone = spv_id(m), lunl = spv_id(m), lret = spv_id(m), lnotdone = spv_id(m);
	lrescan = spv_id(m), lok = spv_id(m);
	spv_br(m, louter);

	/* one attempt per candidate, SPV_LRU_SKIPS at most */
	spv_label(m, louter);
	spv_brc(m, cmp(m, SpvOpULessThan, vld(m, l.nskip), k64(m, SPV_LRU_SKIPS)), lround, lfail);
	spv_label(m, lround);
	vst(m, best, k64(m, ~0ull));
	vst(m, best_use, k64(m, ~0ull));
	vst(m, pass, k64(m, 0));
	vst(m, i, k64(m, 0));
	spv_br(m, lscan);

	/* scan the window (pass 0), then the whole table (pass 1) if it had no candidate */
	spv_label(m, lscan);
	{
		uint32_t iv = vld(m, i), n = spv_select(m, m->t_u64, spv_eq(m, vld(m, pass), k64(m, 0)), window, nb);

		spv_brc(m, cmp(m, SpvOpULessThan, iv, n), lsbody, lsdone);
	}
	spv_label(m, lsbody);
	{
		uint32_t iv = vld(m, i), b = op2(m, SpvOpBitwiseAnd, spv_add64(m, p[1], iv), mask);
		uint32_t bk = spv_add64(m, data, op2(m, SpvOpIMul, b, bs)), w = aload32(m, bk);
		uint32_t use;

		spv_brc(m, spv_bin(m, SpvOpLogicalAnd, m->t_bool,
				   spv_eq(m, op2(m, SpvOpBitwiseAnd, w, k64(m, 3)), k64(m, GBPF_BUCKET_READY)),
				   spv_un(m, SpvOpLogicalNot, m->t_bool, skipped(&l, b))),
			lready, lnext);
		spv_label(m, lready);
		/* the bucket's last 8 bytes (map_layout.h, gbpf_hash_last_use_off) */
		use = spv_atomic_load(m, 64, spv_add64(m, bk, op2(m, SpvOpISub, bs, k64(m, 8))));
		spv_brc(m, cmp(m, SpvOpULessThan, use, vld(m, best_use)), lcand, lnext);
		spv_label(m, lcand);
		vst(m, best_use, use);
		vst(m, best, b);
		vst(m, best_w, w);
		spv_br(m, lnext);
	}
	spv_label(m, lnext);
	vst(m, i, spv_addk(m, vld(m, i), 1));
	spv_br(m, lscan);
	spv_label(m, lsdone);
	spv_brc(m, spv_eq(m, vld(m, best), k64(m, ~0ull)), lnone, lpick);
	spv_label(m, lnone);
	spv_brc(m, spv_eq(m, vld(m, pass), k64(m, 0)), lrescan, lret);
	spv_label(m, lrescan);
	vst(m, pass, k64(m, 1));
	vst(m, i, k64(m, 0));
	spv_br(m, lscan);
	spv_label(m, lret);
	spv_ret(m, neg(m, ENOENT));

	/* the victim: try its home lock (unless it is ours), tombstone it */
	spv_label(m, lpick);
	{
		uint32_t b = vld(m, best), w = vld(m, best_w);
		uint32_t bk = spv_add64(m, data, op2(m, SpvOpIMul, b, bs));
		uint32_t vhome = op2(m, SpvOpBitwiseAnd, spv_ld64(m, bk, 8), mask);
		uint32_t own = spv_eq(m, vhome, p[1]);
		uint32_t vlock = spv_addk(m, spv_add64(m, data, op2(m, SpvOpIMul, vhome, bs)), 4);
		uint32_t tomb = op2(m, SpvOpBitwiseOr, op2(m, SpvOpBitwiseAnd, w, k64(m, 0xfffffffcull)),
				    k64(m, GBPF_BUCKET_TOMBSTONE));
		uint32_t done;

		spv_brc(m, own, lcas, ltry);
		spv_label(m, ltry);
		spv_brc(m, spv_eq(m, cas32(m, vlock, k64(m, 0), k64(m, 1)), k64(m, 0)), lcas, lskip);
		spv_label(m, lskip);
		skip_add(&l, b);
		spv_br(m, louter);
		spv_label(m, lcas);
		/* the victim's place in the count passes to the caller's insert (not given back) */
		done = spv_eq(m, cas32(m, bk, w, tomb), w);
		spv_brc(m, own, ldone, lunl);
		spv_label(m, lunl);
		spv_atomic_store(m, 32, vlock, spv_c32(m, 0));
		spv_br(m, ldone);
		spv_label(m, ldone);
		spv_brc(m, done, lok, lnotdone);
	}
	spv_label(m, lok);
	spv_ret(m, k64(m, 0));
	spv_label(m, lnotdone);
	skip_add(&l, vld(m, best));
	spv_br(m, louter);
	spv_label(m, lfail);
	spv_ret(m, neg(m, EBUSY));
	spv_op(m, SPV_SEC_FUNCS, SpvOpFunctionEnd, 0);
}

int spv_lru_emit(struct spv_gen *g, unsigned which)
{
	if (which != SPV_RT_LRU_EVICT)
		return 0;
	emit_evict(g);
	return 1;
}
