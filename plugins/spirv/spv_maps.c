/* SPDX-License-Identifier: MIT */
/*
 * plugins/spirv/spv_maps.c - support functions of a module: memcpy, the
 * timer and the map helpers on the docs/MAPS.md layouts (arrays here, hash
 * tables in spv_hash.c, ring buffers in spv_ring.c).
 *
 * Each support function is ulong f(ulong a, ulong b, ulong c, ulong d),
 * emitted once per module when a program needs it. Map operations
 * dispatch on the type word of the map's header at run time, so a program
 * needs no knowledge of the map's memory at generation time.
 */
#include <errno.h>

#include <gbpf/prog.h>

#include "maps/map_layout.h"
#include "spv_internal.h"

static const char *const rt_names[SPV_RT_COUNT] = {
	[SPV_RT_MEMCPY] = "__gbpf_memcpy",
	[SPV_RT_MAP_LOOKUP] = "__gbpf_map_lookup",
	[SPV_RT_MAP_UPDATE] = "__gbpf_map_update",
	[SPV_RT_MAP_DELETE] = "__gbpf_map_delete",
	[SPV_RT_RING_RESERVE] = "__gbpf_ring_reserve",
	[SPV_RT_RING_COMMIT] = "__gbpf_ring_commit",
	[SPV_RT_RING_OUTPUT] = "__gbpf_ring_output",
	[SPV_RT_PERF_OUTPUT] = "__gbpf_perf_output",
	[SPV_RT_HASH] = "__gbpf_hash",
	[SPV_RT_SLOT] = "__gbpf_slot",
	[SPV_RT_TIMER] = "__gbpf_timer",
};

uint32_t spv_rt_get(struct spv_gen *g, enum spv_rt which)
{
	if (!g->rt[which])
		g->rt[which] = spv_id(g->m);
	return g->rt[which];
}

uint32_t spv_rt_call(struct spv_gen *g, enum spv_rt which, uint32_t a, uint32_t b, uint32_t c,
		     uint32_t d)
{
	struct spv_mod *m = g->m;
	uint32_t f = spv_rt_get(g, which), id = spv_id(m);

	spv_op(m, SPV_SEC_FUNCS, SpvOpFunctionCall, 7, m->t_u64, id, f, a, b, c, d);
	return id;
}

static uint32_t c64(struct spv_mod *m, uint64_t v)
{
	return spv_c64(m, v);
}

uint32_t spv_u32_64(struct spv_mod *m, uint32_t v32)
{
	return spv_un(m, SpvOpUConvert, m->t_u64, v32);
}

/* Header field (u32) of a map as ulong. */
uint32_t spv_hdr32(struct spv_mod *m, uint32_t map, uint32_t off)
{
	return spv_u32_64(m, spv_ld32(m, map, off));
}

uint32_t spv_eq(struct spv_mod *m, uint32_t a, uint32_t b)
{
	return spv_bin(m, SpvOpIEqual, m->t_bool, a, b);
}

uint32_t spv_ret(struct spv_mod *m, uint32_t v)
{
	spv_op(m, SPV_SEC_FUNCS, SpvOpReturnValue, 1, v);
	return 0;
}

static void rt_begin(struct spv_gen *g, enum spv_rt which, uint32_t p[4])
{
	struct spv_mod *m = g->m;
	uint32_t params[4] = {m->t_u64, m->t_u64, m->t_u64, m->t_u64};
	uint32_t ft = spv_type_fn(m, m->t_u64, 4, params);
	unsigned i;

	spv_name(m, g->rt[which], rt_names[which]);
	spv_op(m, SPV_SEC_FUNCS, SpvOpFunction, 4, m->t_u64, g->rt[which],
	       SpvFunctionControlMaskNone, ft);
	for (i = 0; i < 4; i++) {
		p[i] = spv_id(m);
		spv_op(m, SPV_SEC_FUNCS, SpvOpFunctionParameter, 2, m->t_u64, p[i]);
	}
}

static void rt_end(struct spv_mod *m)
{
	spv_op(m, SPV_SEC_FUNCS, SpvOpFunctionEnd, 0);
}

/* memcpy(dst, src, n): byte loop (callers pass small sizes: keys, values, records) */
static void emit_memcpy(struct spv_gen *g)
{
	struct spv_mod *m = g->m;
	uint32_t p[4], i, head, body, done, iv, b;

	rt_begin(g, SPV_RT_MEMCPY, p);
	spv_label(m, 0);
	i = spv_var(m, m->t_u64);
	spv_store(m, i, c64(m, 0), 8);
	head = spv_id(m), body = spv_id(m), done = spv_id(m);
	spv_br(m, head);
	spv_label(m, head);
	iv = spv_load(m, m->t_u64, i, 8);
	spv_brc(m, spv_bin(m, SpvOpULessThan, m->t_bool, iv, p[2]), body, done);
	spv_label(m, body);
	b = spv_load(m, m->t_u8, spv_addr_ptr(m, m->t_u8, spv_add64(m, p[1], iv)), 1);
	spv_store(m, spv_addr_ptr(m, m->t_u8, spv_add64(m, p[0], iv)), b, 1);
	spv_store(m, i, spv_addk(m, iv, 1), 8);
	spv_br(m, head);
	spv_label(m, done);
	spv_ret(m, c64(m, 0));
	rt_end(m);
}

/*
 * The timer: either the imported per-backend function, or time_base_ns of
 * the context table plus a device-wide counter (strictly increasing, so
 * durations are positive; not nanoseconds: OpenCL has no device clock).
 */
static void emit_timer(struct spv_gen *g)
{
	struct spv_mod *m = g->m;
	uint32_t p[4], r;

	rt_begin(g, SPV_RT_TIMER, p);
	spv_label(m, 0);
	if (g->flags & GBPF_SPIRV_TIMER_IMPORT) {
		uint32_t fid = spv_id(m), ft = spv_type_fn(m, m->t_u64, 0, NULL), id = spv_id(m);
		uint32_t pre[2] = {fid, SpvDecorationLinkageAttributes}, lk = SpvLinkageTypeImport;

		/* an imported declaration: the backend links its clock in */
		spv_op(m, SPV_SEC_FUNCS, SpvOpFunctionCall, 3, m->t_u64, id, fid);
		spv_ret(m, id);
		rt_end(m);
		spv_cap(m, SpvCapabilityLinkage);
		spv_op_str(m, SPV_SEC_ANNOT, SpvOpDecorate, pre, 2, GBPF_SPIRV_TIMER_FN, &lk, 1);
		spv_name(m, fid, GBPF_SPIRV_TIMER_FN);
		g->timer_decl = fid;
		g->timer_decl_type = ft;
		spv_op(m, SPV_SEC_FUNCDECL, SpvOpFunction, 4, m->t_u64, fid, SpvFunctionControlMaskNone,
		       ft);
		spv_op(m, SPV_SEC_FUNCDECL, SpvOpFunctionEnd, 0);
		return;
	}
	{
		uint32_t tbl = spv_table(g);
		uint32_t base = spv_ld64(m, tbl, offsetof(struct gbpf_spirv_ctx_table, time_base_ns));
		uint32_t tk = spv_atomic(m, SpvOpAtomicIAdd, 64,
					 spv_addk(m, tbl, offsetof(struct gbpf_spirv_ctx_table, ticks)),
					 c64(m, 1));

		r = spv_add64(m, base, tk);
	}
	spv_ret(m, r);
	rt_end(m);
}

/* Address of element idx of an array map for this thread, or 0. */
static uint32_t array_elem(struct spv_gen *g, uint32_t map, uint32_t idx, uint32_t type)
{
	struct spv_mod *m = g->m;
	uint32_t t = m->t_u64, max = spv_hdr32(m, map, 24), stride = spv_hdr32(m, map, 32);
	uint32_t nr = spv_hdr32(m, map, 28), data = spv_ld64(m, map, 56), zero = c64(m, 0);
	uint32_t slot = spv_bin(m, SpvOpUMod, t, spv_slot_id(g),
				spv_select(m, t, spv_eq(m, nr, zero), c64(m, 1), nr));
	uint32_t thr = spv_global_id(m);
	uint32_t i_arr = idx;
	uint32_t i_thr = spv_bin(m, SpvOpIAdd, t, spv_bin(m, SpvOpIMul, t, idx, nr), thr);
	uint32_t is_pcpu = spv_eq(m, type, c64(m, GBPF_MAP_TYPE_PERCPU_ARRAY));
	uint32_t is_thr = spv_eq(m, type, c64(m, GBPF_MAP_TYPE_PERGPUTHREAD_ARRAY));
	uint32_t i = spv_select(m, t, is_thr, i_thr, i_arr);
	uint32_t ok = spv_bin(m, SpvOpULessThan, m->t_bool, idx, max);
	uint32_t thr_ok = spv_bin(m, SpvOpLogicalOr, m->t_bool,
				  spv_un(m, SpvOpLogicalNot, m->t_bool, is_thr),
				  spv_bin(m, SpvOpULessThan, m->t_bool, thr, nr));
	/* PERCPU_ARRAY: the slot's plane (padded, map_layout.h), then the element in it */
	uint32_t plane_off = spv_bin(m, SpvOpIMul, t, slot, spv_plane_size(m, max, stride));
	uint32_t off = spv_add64(m, spv_select(m, t, is_pcpu, plane_off, zero), spv_bin(m, SpvOpIMul, t, i, stride));
	uint32_t addr = spv_add64(m, spv_add64(m, map, data), off);

	ok = spv_bin(m, SpvOpLogicalAnd, m->t_bool, ok, thr_ok);
	return spv_select(m, t, ok, addr, zero);
}

uint32_t spv_is_array(struct spv_mod *m, uint32_t type)
{
	uint32_t a = spv_eq(m, type, c64(m, GBPF_MAP_TYPE_ARRAY));
	uint32_t b = spv_eq(m, type, c64(m, GBPF_MAP_TYPE_GPU_ARRAY));
	uint32_t c = spv_eq(m, type, c64(m, GBPF_MAP_TYPE_PERCPU_ARRAY));
	uint32_t d = spv_eq(m, type, c64(m, GBPF_MAP_TYPE_PERGPUTHREAD_ARRAY));

	a = spv_bin(m, SpvOpLogicalOr, m->t_bool, a, b);
	c = spv_bin(m, SpvOpLogicalOr, m->t_bool, c, d);
	return spv_bin(m, SpvOpLogicalOr, m->t_bool, a, c);
}

/* lookup(map, key): arrays here, hash maps in __gbpf_hash_lookup */
static void emit_lookup(struct spv_gen *g)
{
	struct spv_mod *m = g->m;
	uint32_t p[4], type, larr, lhash, idx;

	rt_begin(g, SPV_RT_MAP_LOOKUP, p);
	spv_label(m, 0);
	larr = spv_id(m), lhash = spv_id(m);
	type = spv_hdr32(m, p[0], 8);
	spv_brc(m, spv_is_array(m, type), larr, lhash);
	spv_label(m, larr);
	idx = spv_u32_64(m, spv_load(m, m->t_u32, spv_addr_ptr(m, m->t_u32, p[1]), 4));
	spv_ret(m, array_elem(g, p[0], idx, type));
	spv_label(m, lhash);
	spv_ret(m, spv_hash_lookup(g, p[0], p[1]));
	rt_end(m);
}

static uint32_t neg(struct spv_mod *m, int e)
{
	return c64(m, (uint64_t)-(int64_t)e);
}

/* update(map, key, value, flags) */
static void emit_update(struct spv_gen *g)
{
	struct spv_mod *m = g->m;
	uint32_t p[4], type, larr, lhash, idx, lbadf, lokf, lnoex, lcopy, lin, addr, vs;

	rt_begin(g, SPV_RT_MAP_UPDATE, p);
	spv_label(m, 0);
	larr = spv_id(m), lhash = spv_id(m), lbadf = spv_id(m), lokf = spv_id(m);
	lnoex = spv_id(m), lcopy = spv_id(m), lin = spv_id(m);
	spv_brc(m, spv_bin(m, SpvOpUGreaterThan, m->t_bool, p[3], c64(m, 2)), lbadf, lokf);
	spv_label(m, lbadf);
	spv_ret(m, neg(m, EINVAL));
	spv_label(m, lokf);
	type = spv_hdr32(m, p[0], 8);
	spv_brc(m, spv_is_array(m, type), larr, lhash);
	spv_label(m, larr);
	idx = spv_u32_64(m, spv_load(m, m->t_u32, spv_addr_ptr(m, m->t_u32, p[1]), 4));
	addr = array_elem(g, p[0], idx, type);
	{
		uint32_t lz = spv_id(m), lthr = spv_id(m), le2big = spv_id(m);

		spv_brc(m, spv_eq(m, addr, c64(m, 0)), lz, lin);
		spv_label(m, lz);
		/* As Linux: index past max_entries is E2BIG before NOEXIST's EEXIST; thread past the launch: EINVAL */
		spv_brc(m, spv_bin(m, SpvOpUGreaterThanEqual, m->t_bool, idx, spv_hdr32(m, p[0], 24)),
			le2big, lthr);
		spv_label(m, le2big);
		spv_ret(m, neg(m, E2BIG));
		spv_label(m, lthr);
		spv_ret(m, neg(m, EINVAL));
	}
	spv_label(m, lin);
	/* Every element of an array exists: NOEXIST fails. */
	spv_brc(m, spv_eq(m, p[3], c64(m, 1)), lnoex, lcopy);
	spv_label(m, lnoex);
	spv_ret(m, neg(m, EEXIST));
	spv_label(m, lcopy);
	vs = spv_hdr32(m, p[0], 20);
	spv_rt_call(g, SPV_RT_MEMCPY, addr, p[2], vs, c64(m, 0));
	spv_ret(m, c64(m, 0));
	spv_label(m, lhash);
	spv_ret(m, spv_hash_update(g, p[0], p[1], p[2], p[3]));
	rt_end(m);
}

static void emit_delete(struct spv_gen *g)
{
	struct spv_mod *m = g->m;
	uint32_t p[4], type, larr, lhash;

	rt_begin(g, SPV_RT_MAP_DELETE, p);
	spv_label(m, 0);
	larr = spv_id(m), lhash = spv_id(m);
	type = spv_hdr32(m, p[0], 8);
	spv_brc(m, spv_is_array(m, type), larr, lhash);
	spv_label(m, larr);
	spv_ret(m, neg(m, EINVAL));
	spv_label(m, lhash);
	spv_ret(m, spv_hash_delete(g, p[0], p[1]));
	rt_end(m);
}

int spv_rt_emit_all(struct spv_gen *g)
{
	uint8_t done[SPV_RT_COUNT] = {0};
	int progress = 1;
	unsigned i;

	/* a support function may request others: repeat until none is new */
	while (progress) {
		progress = 0;
		for (i = 0; i < SPV_RT_COUNT; i++) {
			if (!g->rt[i] || done[i])
				continue;
			done[i] = 1;
			progress = 1;
			switch (i) {
			case SPV_RT_MEMCPY: emit_memcpy(g); break;
			case SPV_RT_TIMER: emit_timer(g); break;
			case SPV_RT_MAP_LOOKUP: emit_lookup(g); break;
			case SPV_RT_MAP_UPDATE: emit_update(g); break;
			case SPV_RT_MAP_DELETE: emit_delete(g); break;
			default: spv_rt_emit_more(g, i); break;
			}
		}
	}
	return g->m->oom ? -ENOMEM : 0;
}
