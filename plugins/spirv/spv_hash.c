/* SPDX-License-Identifier: MIT */
/*
 * plugins/spirv/spv_hash.c - hash maps (HASH, PERCPU_HASH, LRU_HASH,
 * GPU_HASH) on the device, as docs/MAPS.md states them: the same hash
 * function, lock-free lookups validated by the state word, writers
 * serialised per home bucket by a bounded spin lock whose critical section
 * lies inside the acquire loop (sub-groups make progress without
 * independent thread scheduling), insertion by CAS on the bucket state,
 * exact E2BIG through the entry counter.
 *
 * LRU_HASH: a full map evicts (spv_lru.c), the eviction being the
 * reservation, else retries the reservation, 8 times, as maps/map_hash.c
 * does; lookups refresh last_use.
 */
#include <errno.h>

#include "maps/map_layout.h"
#include "spv_internal.h"

struct fb {
	struct spv_gen *g;
	struct spv_mod *m;
	uint32_t p[4];
};

static uint32_t k64(struct fb *f, uint64_t v)
{
	return spv_c64(f->m, v);
}

static uint32_t bin(struct fb *f, uint32_t op, uint32_t a, uint32_t b)
{
	return spv_bin(f->m, op, f->m->t_u64, a, b);
}

static uint32_t cmp(struct fb *f, uint32_t op, uint32_t a, uint32_t b)
{
	return spv_bin(f->m, op, f->m->t_bool, a, b);
}

static uint32_t vld(struct fb *f, uint32_t var)
{
	return spv_load(f->m, f->m->t_u64, var, 8);
}

static void vst(struct fb *f, uint32_t var, uint32_t v)
{
	spv_store(f->m, var, v, 8);
}

static void begin(struct fb *f, struct spv_gen *g, enum spv_rt which, const char *name)
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

static void end(struct fb *f)
{
	spv_op(f->m, SPV_SEC_FUNCS, SpvOpFunctionEnd, 0);
}

static uint32_t neg(struct fb *f, int e)
{
	return k64(f, (uint64_t)-(int64_t)e);
}

static uint32_t aload32(struct fb *f, uint32_t addr)
{
	return spv_u32_64(f->m, spv_atomic_load(f->m, 32, addr));
}

static uint32_t cas32(struct fb *f, uint32_t addr, uint32_t cmpv, uint32_t val)
{
	struct spv_mod *m = f->m;
	uint32_t c = spv_un(m, SpvOpUConvert, m->t_u32, cmpv), v = spv_un(m, SpvOpUConvert, m->t_u32, val);

	return spv_u32_64(m, spv_atomic_cas(m, 32, addr, v, c));
}

static void astore32(struct fb *f, uint32_t addr, uint32_t v)
{
	spv_atomic_store(f->m, 32, addr, spv_un(f->m, SpvOpUConvert, f->m->t_u32, v));
}

/* hash(key, n): the MAPS.md function, key bytes assembled one by one (alignment unknown) */
static void emit_hash(struct spv_gen *g)
{
	struct fb f;
	struct spv_mod *m = g->m;
	uint32_t h, w, k, head, body, fin, hv, wv, kv, b, sh, is7, mixed, n, tail, lmix, lend;

	begin(&f, g, SPV_RT_HASH, "__gbpf_hash");
	h = spv_var(m, m->t_u64), w = spv_var(m, m->t_u64), k = spv_var(m, m->t_u64);
	n = f.p[1];
	vst(&f, h, bin(&f, SpvOpBitwiseXor, k64(&f, GBPF_HASH_INIT), n));
	vst(&f, w, k64(&f, 0));
	vst(&f, k, k64(&f, 0));
	head = spv_id(m), body = spv_id(m), fin = spv_id(m), lmix = spv_id(m), lend = spv_id(m);
	spv_br(m, head);
	spv_label(m, head);
	kv = vld(&f, k);
	spv_brc(m, cmp(&f, SpvOpULessThan, kv, n), body, fin);
	spv_label(m, body);
	b = spv_un(m, SpvOpUConvert, m->t_u64,
		   spv_load(m, m->t_u8, spv_addr_ptr(m, m->t_u8, spv_add64(m, f.p[0], kv)), 1));
	sh = bin(&f, SpvOpShiftLeftLogical, bin(&f, SpvOpBitwiseAnd, kv, k64(&f, 7)), k64(&f, 3));
	wv = bin(&f, SpvOpBitwiseOr, vld(&f, w), bin(&f, SpvOpShiftLeftLogical, b, sh));
	hv = vld(&f, h);
	mixed = bin(&f, SpvOpIMul, bin(&f, SpvOpBitwiseXor, hv, wv), k64(&f, GBPF_HASH_MUL1));
	mixed = bin(&f, SpvOpBitwiseXor, mixed, bin(&f, SpvOpShiftRightLogical, mixed, k64(&f, 32)));
	is7 = cmp(&f, SpvOpIEqual, bin(&f, SpvOpBitwiseAnd, kv, k64(&f, 7)), k64(&f, 7));
	vst(&f, h, spv_select(m, m->t_u64, is7, mixed, hv));
	vst(&f, w, spv_select(m, m->t_u64, is7, k64(&f, 0), wv));
	vst(&f, k, spv_addk(m, kv, 1));
	spv_br(m, head);
	spv_label(m, fin);
	tail = cmp(&f, SpvOpINotEqual, bin(&f, SpvOpBitwiseAnd, n, k64(&f, 7)), k64(&f, 0));
	spv_brc(m, tail, lmix, lend);
	spv_label(m, lmix);
	hv = vld(&f, h);
	mixed = bin(&f, SpvOpIMul, bin(&f, SpvOpBitwiseXor, hv, vld(&f, w)), k64(&f, GBPF_HASH_MUL1));
	mixed = bin(&f, SpvOpBitwiseXor, mixed, bin(&f, SpvOpShiftRightLogical, mixed, k64(&f, 32)));
	vst(&f, h, mixed);
	spv_br(m, lend);
	spv_label(m, lend);
	hv = vld(&f, h);
	hv = bin(&f, SpvOpBitwiseXor, hv, bin(&f, SpvOpShiftRightLogical, hv, k64(&f, 33)));
	hv = bin(&f, SpvOpIMul, hv, k64(&f, GBPF_HASH_MUL2));
	hv = bin(&f, SpvOpBitwiseXor, hv, bin(&f, SpvOpShiftRightLogical, hv, k64(&f, 33)));
	spv_ret(m, hv);
	end(&f);
}

/* memcmp(a, b, n) != 0 */
static void emit_memcmp(struct spv_gen *g)
{
	struct fb f;
	struct spv_mod *m = g->m;
	uint32_t i, head, body, diff, same, next, iv, x, y;

	begin(&f, g, SPV_RT_MEMCMP, "__gbpf_memcmp");
	i = spv_var(m, m->t_u64);
	vst(&f, i, k64(&f, 0));
	head = spv_id(m), body = spv_id(m), diff = spv_id(m), same = spv_id(m), next = spv_id(m);
	spv_br(m, head);
	spv_label(m, head);
	iv = vld(&f, i);
	spv_brc(m, cmp(&f, SpvOpULessThan, iv, f.p[2]), body, same);
	spv_label(m, body);
	x = spv_load(m, m->t_u8, spv_addr_ptr(m, m->t_u8, spv_add64(m, f.p[0], iv)), 1);
	y = spv_load(m, m->t_u8, spv_addr_ptr(m, m->t_u8, spv_add64(m, f.p[1], iv)), 1);
	spv_brc(m, spv_bin(m, SpvOpINotEqual, m->t_bool, x, y), diff, next);
	spv_label(m, next);
	vst(&f, i, spv_addk(m, iv, 1));
	spv_br(m, head);
	spv_label(m, diff);
	spv_ret(m, k64(&f, 1));
	spv_label(m, same);
	spv_ret(m, k64(&f, 0));
	end(&f);
}

/* memset(dst + c * stride, 0, n) for c < copies (0 copies: one) */
static void emit_zero(struct spv_gen *g)
{
	struct fb f;
	struct spv_mod *m = g->m;
	uint32_t i, c, ohead, obody, onext, head, body, done, iv, cv, base, ncop;

	begin(&f, g, SPV_RT_ZERO, "__gbpf_zero");
	i = spv_var(m, m->t_u64), c = spv_var(m, m->t_u64);
	ncop = spv_select(m, m->t_u64, cmp(&f, SpvOpIEqual, f.p[2], k64(&f, 0)), k64(&f, 1), f.p[2]);
	vst(&f, c, k64(&f, 0));
	ohead = spv_id(m), obody = spv_id(m), onext = spv_id(m);
	head = spv_id(m), body = spv_id(m), done = spv_id(m);
	spv_br(m, ohead);
	spv_label(m, ohead);
	cv = vld(&f, c);
	spv_brc(m, cmp(&f, SpvOpULessThan, cv, ncop), obody, done);
	spv_label(m, obody);
	base = spv_add64(m, f.p[0], bin(&f, SpvOpIMul, cv, f.p[3]));
	vst(&f, i, k64(&f, 0));
	spv_br(m, head);
	spv_label(m, head);
	iv = vld(&f, i);
	spv_brc(m, cmp(&f, SpvOpULessThan, iv, f.p[1]), body, onext);
	spv_label(m, body);
	spv_store(m, spv_addr_ptr(m, m->t_u8, spv_add64(m, base, iv)), spv_const(m, m->t_u8, 0), 1);
	vst(&f, i, spv_addk(m, iv, 1));
	spv_br(m, head);
	spv_label(m, onext);
	vst(&f, c, spv_addk(m, cv, 1));
	spv_br(m, ohead);
	spv_label(m, done);
	spv_ret(m, k64(&f, 0));
	end(&f);
}

/* Header fields every operation reads. */
struct hhdr {
	uint32_t ks, nb, mask, bs, data, aux, kstride, vstride, type, nslots, vs, max;
	uint32_t plane; /* PERCPU_HASH: bytes from one slot's value plane to the next */
};

static void read_hdr(struct fb *f, uint32_t map, struct hhdr *h)
{
	struct spv_mod *m = f->m;

	h->type = spv_hdr32(m, map, 8);
	h->ks = spv_hdr32(m, map, 16);
	h->vs = spv_hdr32(m, map, 20);
	h->max = spv_hdr32(m, map, 24);
	h->nslots = spv_hdr32(m, map, 28);
	h->vstride = spv_hdr32(m, map, 32);
	h->kstride = spv_hdr32(m, map, 36);
	h->nb = spv_hdr32(m, map, 40);
	h->bs = spv_hdr32(m, map, 44);
	h->data = spv_ld64(m, map, 56);
	h->aux = spv_ld64(m, map, 72);
	h->mask = bin(f, SpvOpISub, h->nb, k64(f, 1));
	h->plane = spv_plane_size(m, h->nb, h->vstride);
}

static uint32_t bucket(struct fb *f, uint32_t map, const struct hhdr *h, uint32_t b)
{
	return spv_add64(f->m, spv_add64(f->m, map, h->data), bin(f, SpvOpIMul, b, h->bs));
}

/* LRU_HASH: the last-use word of the bucket at @p baddr (map_layout.h: its last 8 bytes) */
static uint32_t last_use_addr(struct fb *f, const struct hhdr *h, uint32_t baddr)
{
	return spv_add64(f->m, baddr, bin(f, SpvOpISub, h->bs, k64(f, 8)));
}

static uint32_t is_percpu(struct fb *f, const struct hhdr *h)
{
	return cmp(f, SpvOpIEqual, h->type, k64(f, GBPF_MAP_TYPE_PERCPU_HASH));
}

/* value slot of the caller: SM substitute for PERCPU_HASH, else 0 */
static uint32_t value_slot(struct fb *f, const struct hhdr *h)
{
	struct spv_mod *m = f->m;
	uint32_t pc = is_percpu(f, h);
	uint32_t ns = spv_select(m, m->t_u64, cmp(f, SpvOpIEqual, h->nslots, k64(f, 0)), k64(f, 1),
				 h->nslots);
	uint32_t s = bin(f, SpvOpUMod, spv_slot_id(f->g), ns);

	return spv_select(m, m->t_u64, pc, s, k64(f, 0));
}

/*
 * Address of the value of bucket @p bidx in @p map for @p slot (map_layout.h:
 * values in planes at aux_off, apart from the buckets; @p slot is 0 but for
 * PERCPU_HASH).
 */
static uint32_t value_addr_of(struct fb *f, const struct hhdr *h, uint32_t map, uint32_t bidx, uint32_t slot)
{
	struct spv_mod *m = f->m;
	uint32_t off = spv_add64(m, bin(f, SpvOpIMul, slot, h->plane), bin(f, SpvOpIMul, bidx, h->vstride));

	return spv_add64(m, spv_add64(m, map, h->aux), off);
}

/* the caller's value of bucket @p bidx (the map is the function's first parameter) */
static uint32_t value_addr(struct fb *f, const struct hhdr *h, uint32_t bidx)
{
	return value_addr_of(f, h, f->p[0], bidx, value_slot(f, h));
}

static uint32_t is_lru(struct fb *f, const struct hhdr *h)
{
	return cmp(f, SpvOpIEqual, h->type, k64(f, GBPF_MAP_TYPE_LRU_HASH));
}

/* lookup(map, key, peek) -> value address or 0; peek != 0: an LRU entry found is not marked used */
static void emit_lookup(struct spv_gen *g)
{
	struct fb f;
	struct spv_mod *m = g->m;
	struct hhdr h;
	uint32_t hash, bv, iv, i, b, head, body, notempty, cand, keyok, valid, next, miss, baddr, w, st;
	uint32_t lru, llru, lret;

	begin(&f, g, SPV_RT_HASH_LOOKUP, "__gbpf_hash_lookup");
	b = spv_var(m, m->t_u64), i = spv_var(m, m->t_u64);
	read_hdr(&f, f.p[0], &h);
	hash = spv_rt_call(g, SPV_RT_HASH, f.p[1], h.ks, k64(&f, 0), k64(&f, 0));
	vst(&f, b, bin(&f, SpvOpBitwiseAnd, hash, h.mask));
	vst(&f, i, k64(&f, 0));
	head = spv_id(m), body = spv_id(m), notempty = spv_id(m), cand = spv_id(m);
	keyok = spv_id(m), valid = spv_id(m), next = spv_id(m), miss = spv_id(m);
	llru = spv_id(m), lret = spv_id(m);
	spv_br(m, head);
	spv_label(m, head);
	iv = vld(&f, i);
	spv_brc(m, cmp(&f, SpvOpULessThan, iv, h.nb), body, miss);
	spv_label(m, body);
	bv = vld(&f, b);
	baddr = bucket(&f, f.p[0], &h, bv);
	w = aload32(&f, baddr);
	st = bin(&f, SpvOpBitwiseAnd, w, k64(&f, 3));
	spv_brc(m, cmp(&f, SpvOpIEqual, st, k64(&f, GBPF_BUCKET_EMPTY)), miss, notempty);
	spv_label(m, notempty);
	spv_brc(m, spv_bin(m, SpvOpLogicalAnd, m->t_bool,
			   cmp(&f, SpvOpIEqual, st, k64(&f, GBPF_BUCKET_READY)),
			   cmp(&f, SpvOpIEqual, spv_ld64(m, baddr, 8), hash)),
		cand, next);
	spv_label(m, cand);
	spv_brc(m, cmp(&f, SpvOpIEqual,
		       spv_rt_call(g, SPV_RT_MEMCMP, spv_addk(m, baddr, GBPF_HASH_BUCKET_HDR), f.p[1],
				   h.ks, k64(&f, 0)),
		       k64(&f, 0)),
		keyok, next);
	spv_label(m, keyok);
	/* recycled while comparing? */
	spv_brc(m, cmp(&f, SpvOpIEqual, aload32(&f, baddr), w), valid, next);
	spv_label(m, valid);
	lru = spv_bin(m, SpvOpLogicalAnd, m->t_bool, is_lru(&f, &h), cmp(&f, SpvOpIEqual, f.p[2], k64(&f, 0)));
	spv_brc(m, lru, llru, lret);
	spv_label(m, llru);
	spv_atomic_store(m, 64, last_use_addr(&f, &h, baddr), spv_atomic_load(m, 64, spv_addk(m, f.p[0], 104)));
	spv_br(m, lret);
	spv_label(m, lret);
	spv_ret(m, value_addr(&f, &h, bv));
	spv_label(m, next);
	vst(&f, b, bin(&f, SpvOpBitwiseAnd, spv_addk(m, bv, 1), h.mask));
	vst(&f, i, spv_addk(m, iv, 1));
	spv_br(m, head);
	spv_label(m, miss);
	spv_ret(m, k64(&f, 0));
	end(&f);
}

/*
 * Under the home lock: update(map, key, val, flags) for flags 0..2, delete
 * for flags 3. Scans the probe run for the key and the first free bucket.
 */
static void emit_locked(struct spv_gen *g)
{
	struct fb f;
	struct spv_mod *m = g->m;
	struct hhdr h;
	uint32_t hash, b, i, found, found_idx, freeb, bv, iv, baddr, w, st;
	uint32_t head, body, lempty, lnotempty, ltomb, lready, lkey, lfound, lnext, ldone;
	uint32_t isdel, ldel, lupd, lnoex, lcopy, labs, lexist, lres, lfull, lclaim;
	uint32_t chead, cbody, cfree, cbusy, cwon, cfail, fv, none = 0, att;

	begin(&f, g, SPV_RT_HASH_LOCKED, "__gbpf_hash_locked");
	b = spv_var(m, m->t_u64), i = spv_var(m, m->t_u64);
	found = spv_var(m, m->t_u64), found_idx = spv_var(m, m->t_u64), freeb = spv_var(m, m->t_u64);
	att = spv_var(m, m->t_u64);
	read_hdr(&f, f.p[0], &h);
	vst(&f, att, k64(&f, 0));
	none = k64(&f, ~0ull);
	hash = spv_rt_call(g, SPV_RT_HASH, f.p[1], h.ks, k64(&f, 0), k64(&f, 0));
	vst(&f, b, bin(&f, SpvOpBitwiseAnd, hash, h.mask));
	vst(&f, i, k64(&f, 0));
	vst(&f, found, k64(&f, 0));
	vst(&f, freeb, none);
	head = spv_id(m), body = spv_id(m), lempty = spv_id(m), lnotempty = spv_id(m);
	ltomb = spv_id(m), lready = spv_id(m), lkey = spv_id(m), lfound = spv_id(m);
	lnext = spv_id(m), ldone = spv_id(m);
	spv_br(m, head);
	spv_label(m, head);
	iv = vld(&f, i);
	spv_brc(m, cmp(&f, SpvOpULessThan, iv, h.nb), body, ldone);
	spv_label(m, body);
	bv = vld(&f, b);
	baddr = bucket(&f, f.p[0], &h, bv);
	w = aload32(&f, baddr);
	st = bin(&f, SpvOpBitwiseAnd, w, k64(&f, 3));
	fv = vld(&f, freeb);
	spv_brc(m, cmp(&f, SpvOpIEqual, st, k64(&f, GBPF_BUCKET_EMPTY)), lempty, lnotempty);
	spv_label(m, lempty);
	vst(&f, freeb, spv_select(m, m->t_u64, cmp(&f, SpvOpIEqual, fv, none), bv, fv));
	spv_br(m, ldone);
	spv_label(m, lnotempty);
	spv_brc(m, cmp(&f, SpvOpIEqual, st, k64(&f, GBPF_BUCKET_TOMBSTONE)), ltomb, lready);
	spv_label(m, ltomb);
	vst(&f, freeb, spv_select(m, m->t_u64, cmp(&f, SpvOpIEqual, fv, none), bv, fv));
	spv_br(m, lnext);
	spv_label(m, lready);
	spv_brc(m, spv_bin(m, SpvOpLogicalAnd, m->t_bool,
			   cmp(&f, SpvOpIEqual, st, k64(&f, GBPF_BUCKET_READY)),
			   cmp(&f, SpvOpIEqual, spv_ld64(m, baddr, 8), hash)),
		lkey, lnext);
	spv_label(m, lkey);
	spv_brc(m, cmp(&f, SpvOpIEqual,
		       spv_rt_call(g, SPV_RT_MEMCMP, spv_addk(m, baddr, GBPF_HASH_BUCKET_HDR), f.p[1],
				   h.ks, k64(&f, 0)),
		       k64(&f, 0)),
		lfound, lnext);
	spv_label(m, lfound);
	vst(&f, found, baddr);
	vst(&f, found_idx, bv);
	spv_br(m, ldone);
	spv_label(m, lnext);
	vst(&f, b, bin(&f, SpvOpBitwiseAnd, spv_addk(m, bv, 1), h.mask));
	vst(&f, i, spv_addk(m, iv, 1));
	spv_br(m, head);

	spv_label(m, ldone);
	isdel = cmp(&f, SpvOpIEqual, f.p[3], k64(&f, 3));
	ldel = spv_id(m), lupd = spv_id(m), lnoex = spv_id(m), lcopy = spv_id(m), labs = spv_id(m);
	lexist = spv_id(m), lres = spv_id(m), lfull = spv_id(m), lclaim = spv_id(m);
	spv_brc(m, isdel, ldel, lupd);

	/* delete */
	spv_label(m, ldel);
	{
		uint32_t fa = vld(&f, found), lhave = spv_id(m), lno = spv_id(m), lok = spv_id(m);
		uint32_t wv, nw;

		spv_brc(m, cmp(&f, SpvOpIEqual, fa, k64(&f, 0)), lno, lhave);
		spv_label(m, lhave);
		wv = aload32(&f, fa);
		nw = bin(&f, SpvOpBitwiseOr, bin(&f, SpvOpBitwiseAnd, wv, k64(&f, ~3ull & 0xffffffffull)),
			 k64(&f, GBPF_BUCKET_TOMBSTONE));
		spv_brc(m, spv_bin(m, SpvOpLogicalAnd, m->t_bool,
				   cmp(&f, SpvOpIEqual, bin(&f, SpvOpBitwiseAnd, wv, k64(&f, 3)),
				       k64(&f, GBPF_BUCKET_READY)),
				   cmp(&f, SpvOpIEqual, cas32(&f, fa, wv, nw), wv)),
			lok, lno);
		spv_label(m, lok);
		spv_atomic(m, SpvOpAtomicISub, 64, spv_addk(m, f.p[0], 88), k64(&f, 1));
		spv_ret(m, k64(&f, 0));
		spv_label(m, lno);
		spv_ret(m, neg(&f, ENOENT));
	}

	/* update */
	spv_label(m, lupd);
	spv_brc(m, cmp(&f, SpvOpINotEqual, vld(&f, found), k64(&f, 0)), lexist, labs);
	spv_label(m, lexist);
	spv_brc(m, cmp(&f, SpvOpIEqual, f.p[3], k64(&f, 1)), lnoex, lcopy);
	spv_label(m, lnoex);
	spv_ret(m, neg(&f, EEXIST));
	spv_label(m, lcopy);
	{
		uint32_t fa = vld(&f, found), lsetlru = spv_id(m), lout = spv_id(m);

		spv_rt_call(g, SPV_RT_MEMCPY, value_addr(&f, &h, vld(&f, found_idx)), f.p[2], h.vs, k64(&f, 0));
		spv_brc(m, is_lru(&f, &h), lsetlru, lout);
		spv_label(m, lsetlru);
		spv_atomic_store(m, 64, last_use_addr(&f, &h, fa),
				 spv_addk(m, spv_atomic(m, SpvOpAtomicIAdd, 64, spv_addk(m, f.p[0], 104),
							k64(&f, 1)), 1));
		spv_br(m, lout);
		spv_label(m, lout);
		spv_ret(m, k64(&f, 0));
	}
	spv_label(m, labs);
	{
		uint32_t lnoent = spv_id(m);

		spv_brc(m, cmp(&f, SpvOpIEqual, f.p[3], k64(&f, 2)), lnoent, lres);
		spv_label(m, lnoent);
		spv_ret(m, neg(&f, ENOENT));
	}
	/* reserve an entry: count is exact, E2BIG counted in drops */
	spv_label(m, lres);
	{
		uint32_t c = spv_atomic(m, SpvOpAtomicIAdd, 64, spv_addk(m, f.p[0], 88), k64(&f, 1));

		spv_brc(m, cmp(&f, SpvOpUGreaterThanEqual, c, h.max), lfull, lclaim);
	}
	spv_label(m, lfull);
	spv_atomic(m, SpvOpAtomicISub, 64, spv_addk(m, f.p[0], 88), k64(&f, 1));
	{
		/* LRU: evict one and retry, 8 times (maps/map_hash.c reserve_entry) */
		uint32_t av = vld(&f, att), levict = spv_id(m), le2big = spv_id(m);

		spv_brc(m, spv_bin(m, SpvOpLogicalAnd, m->t_bool, is_lru(&f, &h),
				   cmp(&f, SpvOpULessThan, av, k64(&f, 8))),
			levict, le2big);
		spv_label(m, levict);
		vst(&f, att, spv_addk(m, av, 1));
		/* an eviction is the reservation (its count passes to this insert) */
		spv_brc(m, cmp(&f, SpvOpIEqual,
			       spv_rt_call(g, SPV_RT_LRU_EVICT, f.p[0], bin(&f, SpvOpBitwiseAnd, hash, h.mask),
					   k64(&f, 0), k64(&f, 0)),
			       k64(&f, 0)),
			lclaim, lres);
		spv_label(m, le2big);
	}
	spv_atomic(m, SpvOpAtomicIAdd, 64, spv_addk(m, f.p[0], 96), k64(&f, 1));
	spv_ret(m, neg(&f, E2BIG));

	/* claim: from the first free bucket on, CAS an EMPTY/TOMBSTONE state to BUSY */
	spv_label(m, lclaim);
	{
		uint32_t fv0 = vld(&f, freeb);

		vst(&f, b, spv_select(m, m->t_u64, cmp(&f, SpvOpIEqual, fv0, none),
				      bin(&f, SpvOpBitwiseAnd, hash, h.mask), fv0));
	}
	vst(&f, i, k64(&f, 0));
	chead = spv_id(m), cbody = spv_id(m), cfree = spv_id(m), cbusy = spv_id(m);
	cwon = spv_id(m), cfail = spv_id(m);
	spv_br(m, chead);
	spv_label(m, chead);
	iv = vld(&f, i);
	/* bounded: 4 passes over the table at most (CAS failures re-read a bucket) */
	spv_brc(m, cmp(&f, SpvOpULessThan, iv, bin(&f, SpvOpShiftLeftLogical, h.nb, k64(&f, 2))),
		cbody, cfail);
	spv_label(m, cbody);
	bv = vld(&f, b);
	baddr = bucket(&f, f.p[0], &h, bv);
	w = aload32(&f, baddr);
	st = bin(&f, SpvOpBitwiseAnd, w, k64(&f, 3));
	vst(&f, i, spv_addk(m, iv, 1));
	spv_brc(m, spv_bin(m, SpvOpLogicalOr, m->t_bool,
			   cmp(&f, SpvOpIEqual, st, k64(&f, GBPF_BUCKET_EMPTY)),
			   cmp(&f, SpvOpIEqual, st, k64(&f, GBPF_BUCKET_TOMBSTONE))),
		cfree, cbusy);
	spv_label(m, cbusy);
	vst(&f, b, bin(&f, SpvOpBitwiseAnd, spv_addk(m, bv, 1), h.mask));
	spv_br(m, chead);
	spv_label(m, cfree);
	{
		uint32_t gen = bin(&f, SpvOpBitwiseAnd, spv_addk(m, bin(&f, SpvOpShiftRightLogical, w,
									 k64(&f, 2)), 1),
				   k64(&f, 0x3fffffff));
		uint32_t busy = bin(&f, SpvOpBitwiseOr, bin(&f, SpvOpShiftLeftLogical, gen, k64(&f, 2)),
				    k64(&f, GBPF_BUCKET_BUSY));
		uint32_t ready = bin(&f, SpvOpBitwiseOr, bin(&f, SpvOpShiftLeftLogical, gen, k64(&f, 2)),
				     k64(&f, GBPF_BUCKET_READY));
		uint32_t lsetlru, lpub;

		/* a lost CAS re-reads the same bucket */
		spv_brc(m, cmp(&f, SpvOpIEqual, cas32(&f, baddr, w, busy), w), cwon, chead);
		spv_label(m, cwon);
		spv_atomic_store(m, 64, spv_addk(m, baddr, 8), hash);
		spv_rt_call(g, SPV_RT_ZERO, spv_addk(m, baddr, GBPF_HASH_BUCKET_HDR), h.kstride,
			    k64(&f, 0), k64(&f, 0));
		spv_rt_call(g, SPV_RT_MEMCPY, spv_addk(m, baddr, GBPF_HASH_BUCKET_HDR), f.p[1], h.ks,
			    k64(&f, 0));
		/* every slot's copy: value_stride bytes, one per plane (nr_slots is 1 but for PERCPU_HASH) */
		spv_rt_call(g, SPV_RT_ZERO, value_addr_of(&f, &h, f.p[0], bv, k64(&f, 0)), h.vstride, h.nslots,
			    h.plane);
		spv_rt_call(g, SPV_RT_MEMCPY, value_addr(&f, &h, bv), f.p[2], h.vs, k64(&f, 0));
		lsetlru = spv_id(m), lpub = spv_id(m);
		spv_brc(m, is_lru(&f, &h), lsetlru, lpub);
		spv_label(m, lsetlru);
		spv_atomic_store(m, 64, last_use_addr(&f, &h, baddr),
				 spv_addk(m, spv_atomic(m, SpvOpAtomicIAdd, 64, spv_addk(m, f.p[0], 104),
							k64(&f, 1)), 1));
		spv_br(m, lpub);
		spv_label(m, lpub);
		/* publishes hash, key and value (sequentially consistent store) */
		astore32(&f, baddr, ready);
		spv_ret(m, k64(&f, 0));
	}
	spv_label(m, cfail);
	spv_atomic(m, SpvOpAtomicISub, 64, spv_addk(m, f.p[0], 88), k64(&f, 1));
	spv_ret(m, neg(&f, E2BIG));
	end(&f);
}

/*
 * write(map, key, val, op): take the home lock (bounded), run the locked
 * operation inside the acquire loop, release. -EBUSY when never acquired.
 */
static void emit_write(struct spv_gen *g)
{
	struct fb f;
	struct spv_mod *m = g->m;
	struct hhdr h;
	uint32_t hash, home, lock, s, rc, head, body, got, notgot, out, sv;

	begin(&f, g, SPV_RT_HASH_WRITE, "__gbpf_hash_write");
	s = spv_var(m, m->t_u64), rc = spv_var(m, m->t_u64);
	read_hdr(&f, f.p[0], &h);
	hash = spv_rt_call(g, SPV_RT_HASH, f.p[1], h.ks, k64(&f, 0), k64(&f, 0));
	home = bucket(&f, f.p[0], &h, bin(&f, SpvOpBitwiseAnd, hash, h.mask));
	lock = spv_addk(m, home, 4);
	vst(&f, s, k64(&f, 0));
	vst(&f, rc, neg(&f, EBUSY));
	head = spv_id(m), body = spv_id(m), got = spv_id(m), notgot = spv_id(m), out = spv_id(m);
	spv_br(m, head);
	spv_label(m, head);
	sv = vld(&f, s);
	spv_brc(m, cmp(&f, SpvOpULessThan, sv, k64(&f, GBPF_HASH_LOCK_SPINS)), body, out);
	spv_label(m, body);
	vst(&f, s, spv_addk(m, sv, 1));
	/*
	 * BPF_NOEXIST looks lock-free before each try (a peek: an LRU entry found is not marked
	 * used, as a failed update does not use it): when every work-item inserts the same key,
	 * taking the lock only to learn -EEXIST passes it from one to the next (MAPS.md "Update").
	 */
	{
		uint32_t lchk = spv_id(m), lhave = spv_id(m), ltry = spv_id(m);

		spv_brc(m, cmp(&f, SpvOpIEqual, f.p[3], k64(&f, 1)), lchk, ltry);
		spv_label(m, lchk);
		spv_brc(m, cmp(&f, SpvOpINotEqual, spv_rt_call(g, SPV_RT_HASH_LOOKUP, f.p[0], f.p[1], k64(&f, 1),
							       k64(&f, 0)),
			       k64(&f, 0)),
			lhave, ltry);
		spv_label(m, lhave);
		vst(&f, rc, neg(&f, EEXIST));
		spv_br(m, out);
		spv_label(m, ltry);
	}
	spv_brc(m, cmp(&f, SpvOpIEqual, cas32(&f, lock, k64(&f, 0), k64(&f, 1)), k64(&f, 0)), got,
		notgot);
	spv_label(m, notgot);
	spv_br(m, head);
	spv_label(m, got);
	vst(&f, rc, spv_rt_call(g, SPV_RT_HASH_LOCKED, f.p[0], f.p[1], f.p[2], f.p[3]));
	astore32(&f, lock, k64(&f, 0));
	spv_br(m, out);
	spv_label(m, out);
	spv_ret(m, vld(&f, rc));
	end(&f);
}

uint32_t spv_hash_lookup(struct spv_gen *g, uint32_t map, uint32_t key)
{
	struct spv_mod *m = g->m;

	return spv_rt_call(g, SPV_RT_HASH_LOOKUP, map, key, spv_c64(m, 0), spv_c64(m, 0));
}

uint32_t spv_hash_update(struct spv_gen *g, uint32_t map, uint32_t key, uint32_t val,
			 uint32_t flags)
{
	return spv_rt_call(g, SPV_RT_HASH_WRITE, map, key, val, flags);
}

uint32_t spv_hash_delete(struct spv_gen *g, uint32_t map, uint32_t key)
{
	struct spv_mod *m = g->m;

	return spv_rt_call(g, SPV_RT_HASH_WRITE, map, key, spv_c64(m, 0), spv_c64(m, 3));
}

int spv_hash_emit(struct spv_gen *g, unsigned which)
{
	switch (which) {
	case SPV_RT_HASH: emit_hash(g); return 1;
	case SPV_RT_MEMCMP: emit_memcmp(g); return 1;
	case SPV_RT_ZERO: emit_zero(g); return 1;
	case SPV_RT_HASH_LOOKUP: emit_lookup(g); return 1;
	case SPV_RT_HASH_LOCKED: emit_locked(g); return 1;
	case SPV_RT_HASH_WRITE: emit_write(g); return 1;
	default: return 0;
	}
}
