/* SPDX-License-Identifier: MIT */
/*
 * Device runtime of the AMDGCN backend: the map algorithms of docs/MAPS.md
 * on the bytes of maps/map_layout.h, for device code. Compiled by clang for
 * amdgcn-amd-amdhsa to LLVM bitcode at build time (no processor, no
 * library) and linked into every generated module, where the calls of the
 * generated code inline it.
 *
 * Every argument and result is a u64 because eBPF registers are: pointers
 * are flat addresses. On AMDGPU the __atomic builtins without a scope use
 * LLVM's default (system) sync scope, which is what host-visible map blocks
 * need (MAPS.md, "Scope").
 */
#include "../../../maps/map_layout.h"

typedef unsigned long long u64;
typedef long long s64;
typedef unsigned int u32;
typedef unsigned char u8;

/* Linux errno values the helpers return (no libc on the device). */
#define RT_ENOENT 2
#define RT_E2BIG 7
#define RT_EBUSY 16
#define RT_EEXIST 17
#define RT_EINVAL 22
#define RT_ENOSPC 28

#define RT_ANY 0
#define RT_NOEXIST 1
#define RT_EXIST 2

#define RT_RING_BUSY (1u << 31)
#define RT_RING_DISCARD (1u << 30)

#define RT static __attribute__((always_inline)) inline

/* Prototypes of the entry points (the generated code calls them by name). */
u64 __gbpf_rt_map_lookup(u64 map, u64 key, u64 slot, u64 thread);
s64 __gbpf_rt_map_update(u64 map, u64 key, u64 value, u64 flags, u64 slot, u64 thread);
s64 __gbpf_rt_map_delete(u64 map, u64 key);
u64 __gbpf_rt_ringbuf_reserve(u64 map, u64 size, u64 flags, u64 slot);
void __gbpf_rt_ringbuf_commit(u64 data, u64 flags, u64 discard);
s64 __gbpf_rt_ringbuf_output(u64 map, u64 data, u64 size, u64 flags, u64 slot);
s64 __gbpf_rt_perf_output(u64 map, u64 flags, u64 data, u64 size, u64 slot);
u64 __gbpf_rt_hash(u64 key, u64 n);
s64 __gbpf_rt_memcpy(u64 dst, u64 src, u64 n);

RT const struct gbpf_map_hdr *hdr_of(u64 map)
{
	return (const struct gbpf_map_hdr *)map;
}

RT void copy_bytes(u64 dst, u64 src, u64 n)
{
	u8 *d = (u8 *)dst;
	const u8 *s = (const u8 *)src;

	for (u64 i = 0; i < n; i++)
		d[i] = s[i];
}

s64 __gbpf_rt_memcpy(u64 dst, u64 src, u64 n)
{
	copy_bytes(dst, src, n);
	return 0;
}

/* MAPS.md hash over key bytes, assembled byte by byte (alignment unknown). */
u64 __gbpf_rt_hash(u64 key, u64 n)
{
	const u8 *k = (const u8 *)key;
	u64 h = GBPF_HASH_INIT ^ n;

	for (u64 i = 0; i < n; i += 8) {
		u64 w = 0;

		for (u64 j = 0; j < 8 && i + j < n; j++)
			w |= (u64)k[i + j] << (8 * j);
		h ^= w;
		h *= GBPF_HASH_MUL1;
		h ^= h >> 32;
	}
	h ^= h >> 33;
	h *= GBPF_HASH_MUL2;
	h ^= h >> 33;
	return h;
}

RT int is_hash(u32 type)
{
	return type == 1 || type == 5 || type == 9 || type == 1501;
}

RT u64 bucket_at(const struct gbpf_map_hdr *h, u64 map, u64 b)
{
	return map + h->data_off + b * h->bucket_size;
}

RT int key_equal(u64 a, u64 b, u32 n)
{
	const u8 *x = (const u8 *)a, *y = (const u8 *)b;

	for (u32 i = 0; i < n; i++)
		if (x[i] != y[i])
			return 0;
	return 1;
}

RT u64 value_slot(const struct gbpf_map_hdr *h, u64 slot)
{
	return h->type == 5 ? slot % h->nr_slots : 0;
}

/* Address of the value of bucket @p idx for @p slot (map_layout.h: values in planes, apart from the buckets). */
RT u64 bucket_value(const struct gbpf_map_hdr *h, u64 map, u64 idx, u64 slot)
{
	return map + gbpf_hash_value_off(h, idx, value_slot(h, slot));
}

/* LRU_HASH: the last-use word of the bucket at @p b (map_layout.h: its last 8 bytes). */
RT u64 *bucket_last_use(const struct gbpf_map_hdr *h, u64 b)
{
	return (u64 *)(b + gbpf_hash_last_use_off(h->bucket_size));
}

/* Lock-free lookup of MAPS.md; returns the bucket address or 0, its index in *@p idx. */
RT u64 hash_find(const struct gbpf_map_hdr *h, u64 map, u64 key, u64 hv, u64 *idx)
{
	u64 mask = h->nr_buckets - 1;

	for (u64 i = 0; i < h->nr_buckets; i++) {
		u64 b = bucket_at(h, map, (hv + i) & mask);
		struct gbpf_hash_bucket *bk = (struct gbpf_hash_bucket *)b;
		u32 w = __atomic_load_n(&bk->state, __ATOMIC_ACQUIRE);

		if (GBPF_BUCKET_STATE(w) == GBPF_BUCKET_EMPTY)
			return 0;
		if (GBPF_BUCKET_STATE(w) != GBPF_BUCKET_READY ||
		    __atomic_load_n(&bk->hash, __ATOMIC_RELAXED) != hv ||
		    !key_equal(b + GBPF_HASH_BUCKET_HDR, key, h->key_size))
			continue;
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&bk->state, __ATOMIC_RELAXED) != w)
			continue;
		*idx = (hv + i) & mask;
		return b;
	}
	return 0;
}

u64 __gbpf_rt_map_lookup(u64 map, u64 key, u64 slot, u64 thread)
{
	const struct gbpf_map_hdr *h = hdr_of(map);
	u64 i, b, idx = 0;

	if (!map)
		return 0;
	switch (h->type) {
	case 2:
	case 1503:
	case 6:
	case 1502:
		i = *(const u32 *)key;
		if (i >= h->max_entries)
			return 0;
		if (h->type == 6)
			return map + gbpf_array_value_off(h, i, slot % h->nr_slots);
		if (h->type == 1502) {
			if (thread >= h->nr_slots)
				return 0;
			return map + gbpf_array_value_off(h, i, thread);
		}
		return map + gbpf_array_value_off(h, i, 0);
	default:
		if (!is_hash(h->type))
			return 0;
		b = hash_find(h, map, key, __gbpf_rt_hash(key, h->key_size), &idx);
		if (!b)
			return 0;
		if (h->type == 9)
			__atomic_store_n(bucket_last_use(h, b),
					 __atomic_load_n(&((struct gbpf_map_hdr *)map)->clock, __ATOMIC_RELAXED),
					 __ATOMIC_RELAXED);
		return bucket_value(h, map, idx, slot);
	}
}

RT int try_lock(u64 bucket)
{
	u32 expect = 0;

	return __atomic_compare_exchange_n(&((struct gbpf_hash_bucket *)bucket)->lock, &expect, 1, 0,
					   __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

RT void unlock(u64 bucket)
{
	__atomic_store_n(&((struct gbpf_hash_bucket *)bucket)->lock, 0, __ATOMIC_RELEASE);
}

/* LRU: evict the least recently used READY entry of the window at home. */
RT int lru_evict(const struct gbpf_map_hdr *h, u64 map, u64 home_idx)
{
	u64 mask = h->nr_buckets - 1, span = h->nr_buckets < GBPF_LRU_WINDOW ? h->nr_buckets : GBPF_LRU_WINDOW;

	for (int attempt = 0; attempt < 8; attempt++) {
		u64 best = 0, best_use = ~0ull;
		u32 best_w = 0;

		for (int pass = 0; pass < 2 && !best; pass++) {
			u64 cnt = pass ? h->nr_buckets : span;

			for (u64 i = 0; i < cnt; i++) {
				u64 b = bucket_at(h, map, (home_idx + i) & mask);
				struct gbpf_hash_bucket *bk = (struct gbpf_hash_bucket *)b;
				u32 w = __atomic_load_n(&bk->state, __ATOMIC_ACQUIRE);
				u64 use = __atomic_load_n(bucket_last_use(h, b), __ATOMIC_RELAXED);

				if (GBPF_BUCKET_STATE(w) == GBPF_BUCKET_READY && use < best_use) {
					best = b;
					best_use = use;
					best_w = w;
				}
			}
		}
		if (!best)
			return 0;
		{
			struct gbpf_hash_bucket *bk = (struct gbpf_hash_bucket *)best;
			u64 vh = bucket_at(h, map, __atomic_load_n(&bk->hash, __ATOMIC_RELAXED) & mask);
			u64 own = bucket_at(h, map, home_idx);
			int locked = vh == own ? 0 : try_lock(vh);
			u32 tomb = GBPF_BUCKET_WORD(GBPF_BUCKET_GEN(best_w), GBPF_BUCKET_TOMBSTONE);
			int ok = 0;

			if (vh != own && !locked)
				continue;
			/* its place in the count is not given back: it is the caller's reservation */
			if (__atomic_compare_exchange_n(&bk->state, &best_w, tomb, 0, __ATOMIC_ACQ_REL,
							__ATOMIC_RELAXED))
				ok = 1;
			if (locked)
				unlock(vh);
			if (ok)
				return 1;
		}
	}
	return 0;
}

/* Update with the home lock held (MAPS.md "Update"). */
RT s64 hash_update_locked(const struct gbpf_map_hdr *h, u64 map, u64 key, u64 value, u64 flags, u64 slot,
			  u64 hv)
{
	struct gbpf_map_hdr *mh = (struct gbpf_map_hdr *)map;
	u64 mask = h->nr_buckets - 1, home = hv & mask, found = 0, found_i = 0, free_i = ~0ull, i, b;
	u64 vals, copies = h->nr_slots; /* value planes: 1 but for PERCPU_HASH (map_layout.h) */
	int tries;

	for (i = 0; i < h->nr_buckets; i++) {
		struct gbpf_hash_bucket *bk;
		u32 w;

		b = bucket_at(h, map, (home + i) & mask);
		bk = (struct gbpf_hash_bucket *)b;
		w = __atomic_load_n(&bk->state, __ATOMIC_ACQUIRE);
		if (GBPF_BUCKET_STATE(w) == GBPF_BUCKET_EMPTY) {
			if (free_i == ~0ull)
				free_i = i;
			break;
		}
		if (GBPF_BUCKET_STATE(w) == GBPF_BUCKET_TOMBSTONE && free_i == ~0ull)
			free_i = i;
		if (GBPF_BUCKET_STATE(w) == GBPF_BUCKET_READY &&
		    __atomic_load_n(&bk->hash, __ATOMIC_RELAXED) == hv &&
		    key_equal(b + GBPF_HASH_BUCKET_HDR, key, h->key_size)) {
			found = b;
			found_i = (home + i) & mask;
			break;
		}
	}
	if (found) {
		if (flags == RT_NOEXIST)
			return -RT_EEXIST;
		copy_bytes(bucket_value(h, map, found_i, slot), value, h->value_size);
		if (h->type == 9)
			__atomic_store_n(bucket_last_use(h, found),
					 __atomic_fetch_add(&mh->clock, 1, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
		return 0;
	}
	if (flags == RT_EXIST)
		return -RT_ENOENT;
	/* reserve a count; LRU: an eviction is the reservation (maps/map_hash.c reserve_entry) */
	for (tries = 0;; tries++) {
		if (__atomic_fetch_add(&mh->count, 1, __ATOMIC_ACQ_REL) < h->max_entries)
			break;
		__atomic_fetch_sub(&mh->count, 1, __ATOMIC_ACQ_REL);
		if (h->type == 9 && tries < 8 && lru_evict(h, map, home))
			break;
		if (h->type != 9 || tries >= 8) {
			__atomic_fetch_add(&mh->drops, 1, __ATOMIC_RELAXED);
			return -RT_E2BIG;
		}
	}
	if (free_i == ~0ull)
		free_i = 0;
	for (i = free_i; i < free_i + h->nr_buckets; i++) {
		struct gbpf_hash_bucket *bk;
		u32 w, busy;

		b = bucket_at(h, map, (home + i) & mask);
		bk = (struct gbpf_hash_bucket *)b;
		w = __atomic_load_n(&bk->state, __ATOMIC_ACQUIRE);
		while (GBPF_BUCKET_STATE(w) == GBPF_BUCKET_EMPTY || GBPF_BUCKET_STATE(w) == GBPF_BUCKET_TOMBSTONE) {
			busy = GBPF_BUCKET_WORD((GBPF_BUCKET_GEN(w) + 1) & 0x3fffffffu, GBPF_BUCKET_BUSY);
			if (__atomic_compare_exchange_n(&bk->state, &w, busy, 0, __ATOMIC_ACQ_REL,
							__ATOMIC_ACQUIRE)) {
				__atomic_store_n(&bk->hash, hv, __ATOMIC_RELAXED);
				copy_bytes(b + GBPF_HASH_BUCKET_HDR, key, h->key_size);
				for (u64 z = h->key_size; z < h->key_stride; z++)
					((u8 *)(b + GBPF_HASH_BUCKET_HDR))[z] = 0;
				for (u64 c = 0; c < copies; c++) {
					vals = bucket_value(h, map, (home + i) & mask, c);
					for (u64 z = 0; z < h->value_stride; z++)
						((u8 *)vals)[z] = 0;
				}
				copy_bytes(bucket_value(h, map, (home + i) & mask, slot), value, h->value_size);
				if (h->type == 9)
					__atomic_store_n(bucket_last_use(h, b),
							 __atomic_fetch_add(&mh->clock, 1, __ATOMIC_RELAXED) + 1,
							 __ATOMIC_RELAXED);
				__atomic_store_n(&bk->state, GBPF_BUCKET_WORD(GBPF_BUCKET_GEN(busy), GBPF_BUCKET_READY),
						 __ATOMIC_RELEASE);
				return 0;
			}
		}
	}
	__atomic_fetch_sub(&mh->count, 1, __ATOMIC_ACQ_REL);
	return -RT_E2BIG;
}

s64 __gbpf_rt_map_update(u64 map, u64 key, u64 value, u64 flags, u64 slot, u64 thread)
{
	const struct gbpf_map_hdr *h = hdr_of(map);
	u64 hv, home, i, dst, idx;
	s64 rc = -RT_EBUSY;
	int done = 0;

	if (!map || flags > RT_EXIST)
		return -RT_EINVAL;
	switch (h->type) {
	case 2:
	case 1503:
	case 6:
	case 1502:
		i = *(const u32 *)key;
		if (i >= h->max_entries)
			return -RT_E2BIG;
		if (flags == RT_NOEXIST)
			return -RT_EEXIST;
		if (h->type == 6)
			dst = map + gbpf_array_value_off(h, i, slot % h->nr_slots);
		else if (h->type == 1502) {
			if (thread >= h->nr_slots)
				return -RT_EINVAL;
			dst = map + gbpf_array_value_off(h, i, thread);
		} else
			dst = map + gbpf_array_value_off(h, i, 0);
		copy_bytes(dst, value, h->value_size);
		return 0;
	default:
		if (!is_hash(h->type))
			return -RT_EINVAL;
	}
	hv = __gbpf_rt_hash(key, h->key_size);
	home = bucket_at(h, map, hv & (h->nr_buckets - 1));
	/* critical section inside the acquire loop: lanes of one wavefront
	 * make progress without independent scheduling (MAPS.md) */
	for (u32 spins = GBPF_HASH_LOCK_SPINS; !done && spins; spins--) {
		/* BPF_NOEXIST looks lock-free first: when every thread of a launch
		 * inserts the same key, taking the lock only to learn -EEXIST passes
		 * it from thread to thread (MAPS.md "Update") */
		if (flags == RT_NOEXIST && hash_find(h, map, key, hv, &idx)) {
			rc = -RT_EEXIST;
			break;
		}
		if (try_lock(home)) {
			rc = hash_update_locked(h, map, key, value, flags, slot, hv);
			unlock(home);
			done = 1;
		}
	}
	return rc;
}

s64 __gbpf_rt_map_delete(u64 map, u64 key)
{
	const struct gbpf_map_hdr *h = hdr_of(map);
	u64 hv, home, b, idx;
	s64 rc = -RT_EBUSY;
	int done = 0;

	if (!map || !is_hash(h->type))
		return -RT_EINVAL;
	hv = __gbpf_rt_hash(key, h->key_size);
	home = bucket_at(h, map, hv & (h->nr_buckets - 1));
	for (u32 spins = GBPF_HASH_LOCK_SPINS; !done && spins; spins--) {
		if (try_lock(home)) {
			b = hash_find(h, map, key, hv, &idx);
			rc = -RT_ENOENT;
			if (b) {
				struct gbpf_hash_bucket *bk = (struct gbpf_hash_bucket *)b;
				u32 w = __atomic_load_n(&bk->state, __ATOMIC_ACQUIRE);

				if (GBPF_BUCKET_STATE(w) == GBPF_BUCKET_READY &&
				    __atomic_compare_exchange_n(&bk->state, &w,
								GBPF_BUCKET_WORD(GBPF_BUCKET_GEN(w), GBPF_BUCKET_TOMBSTONE),
								0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
					__atomic_fetch_sub(&((struct gbpf_map_hdr *)map)->count, 1, __ATOMIC_ACQ_REL);
					rc = 0;
				}
			}
			unlock(home);
			done = 1;
		}
	}
	return rc;
}

/* Reserve len bytes in sub-ring sub (MAPS.md "Producer"); data pointer or 0. */
RT u64 ring_reserve(u64 map, u64 sub, u64 len, int *full)
{
	const struct gbpf_map_hdr *h = hdr_of(map);
	struct gbpf_ring_ctl *ctl = (struct gbpf_ring_ctl *)(map + h->data_off + sub * sizeof(struct gbpf_ring_ctl));
	u64 area = map + h->aux_off + sub * h->sub_size, mask = h->sub_size - 1;
	u64 need = GBPF_MAP_ROUND8(len + 8), pos, cons, pad;

	*full = 0;
	if (len > h->sub_size - 8)
		return 0;
	for (int tries = 0; tries < 1 << 20; tries++) {
		/* the consumer's position first (acquire orders the next load after it): it never
		 * passes the producer's, so pos + pad + need - cons cannot wrap into a false "full" */
		cons = __atomic_load_n(&ctl->consumer_pos, __ATOMIC_ACQUIRE);
		pos = __atomic_load_n(&ctl->producer_pos, __ATOMIC_RELAXED);
		pad = (pos & mask) + need > h->sub_size ? h->sub_size - (pos & mask) : 0;
		if (pos + pad + need - cons > h->sub_size) {
			__atomic_fetch_add(&ctl->drops, 1, __ATOMIC_RELAXED);
			__atomic_fetch_add(&((struct gbpf_map_hdr *)map)->drops, 1, __ATOMIC_RELAXED);
			*full = 1;
			return 0;
		}
		if (__atomic_compare_exchange_n(&ctl->producer_pos, &pos, pos + pad + need, 0, __ATOMIC_ACQ_REL,
						__ATOMIC_RELAXED)) {
			u32 *rec;

			if (pad) {
				rec = (u32 *)(area + (pos & mask));
				rec[1] = (u32)sub;
				__atomic_store_n(&rec[0], (u32)(pad - 8) | RT_RING_DISCARD, __ATOMIC_RELEASE);
			}
			rec = (u32 *)(area + ((pos + pad) & mask));
			rec[1] = (u32)sub;
			__atomic_store_n(&rec[0], (u32)len | RT_RING_BUSY, __ATOMIC_RELAXED);
			return (u64)(rec + 2);
		}
	}
	*full = 1;
	return 0;
}

RT int is_ring(u32 type)
{
	return type == 27 || type == 1527;
}

u64 __gbpf_rt_ringbuf_reserve(u64 map, u64 size, u64 flags, u64 slot)
{
	const struct gbpf_map_hdr *h = hdr_of(map);
	int full;

	if (!map || flags || !is_ring(h->type))
		return 0;
	return ring_reserve(map, slot & (h->nr_slots - 1), size, &full);
}

void __gbpf_rt_ringbuf_commit(u64 data, u64 flags, u64 discard)
{
	u32 *rec = (u32 *)(data - 8);
	u32 w = __atomic_load_n(&rec[0], __ATOMIC_RELAXED) & ~RT_RING_BUSY;

	(void)flags;
	if (discard)
		w |= RT_RING_DISCARD;
	/* the consumer is the host: system fence before clearing BUSY */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	__atomic_store_n(&rec[0], w, __ATOMIC_RELEASE);
}

s64 __gbpf_rt_ringbuf_output(u64 map, u64 data, u64 size, u64 flags, u64 slot)
{
	const struct gbpf_map_hdr *h = hdr_of(map);
	u64 p;
	int full;

	if (!map || !is_ring(h->type))
		return -RT_EINVAL;
	p = ring_reserve(map, slot & (h->nr_slots - 1), size, &full);
	if (!p)
		return full ? -RT_ENOSPC : -RT_E2BIG;
	copy_bytes(p, data, size);
	__gbpf_rt_ringbuf_commit(p, flags, 0);
	return 0;
}

s64 __gbpf_rt_perf_output(u64 map, u64 flags, u64 data, u64 size, u64 slot)
{
	const struct gbpf_map_hdr *h = hdr_of(map);
	u64 idx = flags & 0xffffffffull, p;
	int full;

	if (!map || h->type != 4)
		return -RT_EINVAL;
	if (idx == 0xffffffffull)
		idx = slot % h->nr_slots;
	if (idx >= h->nr_slots)
		return -RT_E2BIG;
	p = ring_reserve(map, idx, size, &full);
	if (!p)
		return full ? -RT_ENOSPC : -RT_E2BIG;
	copy_bytes(p, data, size);
	__gbpf_rt_ringbuf_commit(p, 0, 0);
	return 0;
}
