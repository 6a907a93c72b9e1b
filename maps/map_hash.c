/* SPDX-License-Identifier: MIT */
/*
 * Hash maps (HASH, PERCPU_HASH, LRU_HASH, GPU_HASH): open addressing with
 * linear probing over a fixed power-of-two table, per-bucket state words
 * claimed with CAS, writers of one home bucket serialised by that bucket's
 * lock word, lock-free readers. docs/MAPS.md gives the algorithm and why
 * it cannot produce duplicates; device code implements the same steps.
 */
#include <errno.h>
#include <sched.h>
#include <string.h>

#include "maps/map_internal.h"

#define LRU_EVICT_ATTEMPTS 8

static uint8_t *bucket_at(const struct map_view *v, uint32_t b)
{
	return v->base + v->h.data_off + (uint64_t)b * v->h.bucket_size;
}

static _Atomic uint32_t *bucket_state(uint8_t *bk)
{
	return at32(bk + offsetof(struct gbpf_hash_bucket, state));
}

/* LRU_HASH: the bucket's last-use word (map_layout.h: its last 8 bytes). */
static _Atomic uint64_t *bucket_last_use(const struct map_view *v, uint8_t *bk)
{
	return at64(bk + gbpf_hash_last_use_off(v->h.bucket_size));
}

static uint8_t *bucket_key(uint8_t *bk)
{
	return bk + GBPF_HASH_BUCKET_HDR;
}

/* Value of bucket @p b for @p slot (map_layout.h: PERCPU_HASH values live in per-slot planes). */
static uint8_t *bucket_value(const struct map_view *v, uint32_t b, uint32_t slot)
{
	return v->base + gbpf_hash_value_off(&v->h, b, slot);
}

static uint32_t value_copies(const struct map_view *v)
{
	return v->h.type == GBPF_MAP_TYPE_PERCPU_HASH ? v->h.nr_slots : 1;
}

static bool is_lru(const struct map_view *v)
{
	return v->h.type == GBPF_MAP_TYPE_LRU_HASH;
}

static int home_lock(const struct map_view *v, uint32_t home)
{
	_Atomic uint32_t *l = at32(bucket_at(v, home) + offsetof(struct gbpf_hash_bucket, lock));

	for (uint32_t i = 0; i < GBPF_HASH_LOCK_SPINS; i++) {
		uint32_t expect = 0;

		if (atomic_load_explicit(l, memory_order_relaxed) == 0 &&
		    atomic_compare_exchange_weak_explicit(l, &expect, 1, memory_order_acquire,
							  memory_order_relaxed))
			return 0;
		/* The holder may be a preempted host thread: let it run. */
		if ((i & 63) == 63)
			sched_yield();
	}
	return -EBUSY;
}

static bool home_trylock(const struct map_view *v, uint32_t home)
{
	_Atomic uint32_t *l = at32(bucket_at(v, home) + offsetof(struct gbpf_hash_bucket, lock));
	uint32_t expect = 0;

	return atomic_compare_exchange_strong_explicit(l, &expect, 1, memory_order_acquire,
						       memory_order_relaxed);
}

static void home_unlock(const struct map_view *v, uint32_t home)
{
	_Atomic uint32_t *l = at32(bucket_at(v, home) + offsetof(struct gbpf_hash_bucket, lock));

	atomic_store_explicit(l, 0, memory_order_release);
}

/*
 * Walk the probe run of @p key from its home bucket to the first EMPTY
 * bucket. Returns the index of the READY bucket holding the key (its state
 * word in *word) or -1; *free_idx receives the first TOMBSTONE or EMPTY
 * bucket seen (-1 if none) when free_idx is not NULL.
 */
static int64_t probe(const struct map_view *v, const void *key, uint64_t hash, uint32_t *word,
		     int64_t *free_idx)
{
	uint32_t mask = v->h.nr_buckets - 1;

	if (free_idx)
		*free_idx = -1;
	for (uint32_t i = 0; i < v->h.nr_buckets; i++) {
		uint32_t b = (uint32_t)(hash + i) & mask;
		uint8_t *bk = bucket_at(v, b);
		uint32_t w = atomic_load_explicit(bucket_state(bk), memory_order_acquire);
		uint32_t st = GBPF_BUCKET_STATE(w);

		if (st == GBPF_BUCKET_EMPTY || st == GBPF_BUCKET_TOMBSTONE) {
			if (free_idx && *free_idx < 0)
				*free_idx = b;
			if (st == GBPF_BUCKET_EMPTY)
				return -1;
			continue;
		}
		if (st != GBPF_BUCKET_READY ||
		    atomic_load_explicit(at64(bk + offsetof(struct gbpf_hash_bucket, hash)),
					 memory_order_relaxed) != hash ||
		    memcmp(bucket_key(bk), key, v->h.key_size) != 0)
			continue;
		/* Seqlock-style check: the entry was not recycled while we compared. */
		atomic_thread_fence(memory_order_acquire);
		if (atomic_load_explicit(bucket_state(bk), memory_order_relaxed) != w)
			continue;
		*word = w;
		return b;
	}
	return -1;
}

static void touch(const struct map_view *v, uint8_t *bk, bool tick)
{
	struct gbpf_map_hdr *h = view_hdr(v);
	uint64_t now;

	if (!is_lru(v))
		return;
	if (tick)
		now = atomic_fetch_add_explicit(at64(&h->clock), 1, memory_order_relaxed) + 1;
	else
		now = atomic_load_explicit(at64(&h->clock), memory_order_relaxed);
	atomic_store_explicit(bucket_last_use(v, bk), now, memory_order_relaxed);
}

void *gbpf_mapi_hash_lookup(const struct map_view *v, const void *key, uint32_t slot)
{
	uint64_t hash = gbpf_map_hash(key, v->h.key_size);
	uint32_t w;
	int64_t b;

	if (slot >= value_copies(v)) {
		if (v->h.type == GBPF_MAP_TYPE_PERCPU_HASH) {
			errno = EINVAL;
			return NULL;
		}
		slot = 0;
	}
	b = probe(v, key, hash, &w, NULL);
	if (b < 0) {
		errno = ENOENT;
		return NULL;
	}
	touch(v, bucket_at(v, (uint32_t)b), false);
	return bucket_value(v, (uint32_t)b, slot);
}

/*
 * LRU: make room by deleting the least recently used READY entry among
 * GBPF_LRU_WINDOW buckets from @p home (the whole table if that window has
 * none). The victim's own home lock is only tried, never waited for, so
 * that two evicting writers cannot deadlock. Returns 0 if one was evicted.
 * The victim's place in the entry count is NOT given back: it passes
 * straight to the caller's insert, so that another writer cannot take it
 * between the eviction and the caller's reservation (under contention that
 * race could starve a writer through every attempt and fail its insert).
 */
static int lru_evict(const struct map_view *v, uint32_t home)
{
	uint32_t mask = v->h.nr_buckets - 1;
	int64_t skip[LRU_EVICT_ATTEMPTS];
	int nskip = 0;

	while (nskip < LRU_EVICT_ATTEMPTS) {
		uint32_t window =
			v->h.nr_buckets < GBPF_LRU_WINDOW ? v->h.nr_buckets : GBPF_LRU_WINDOW;
		uint64_t best_use = UINT64_MAX;
		int64_t best = -1;
		uint32_t best_w = 0;

		for (int pass = 0; pass < 2 && best < 0; pass++) {
			uint32_t n = pass ? v->h.nr_buckets : window;

			for (uint32_t i = 0; i < n; i++) {
				uint32_t b = (home + i) & mask;
				uint8_t *bk = bucket_at(v, b);
				uint32_t w = atomic_load_explicit(bucket_state(bk),
								  memory_order_acquire);
				uint64_t use;
				bool skipped = false;

				if (GBPF_BUCKET_STATE(w) != GBPF_BUCKET_READY)
					continue;
				for (int k = 0; k < nskip; k++)
					skipped |= skip[k] == b;
				if (skipped)
					continue;
				use = atomic_load_explicit(bucket_last_use(v, bk), memory_order_relaxed);
				if (use < best_use) {
					best_use = use;
					best = b;
					best_w = w;
				}
			}
		}
		if (best < 0)
			return -ENOENT;

		uint8_t *bk = bucket_at(v, (uint32_t)best);
		uint32_t vhome = (uint32_t)atomic_load_explicit(
					 at64(bk + offsetof(struct gbpf_hash_bucket, hash)),
					 memory_order_relaxed) &
				 mask;
		bool own = vhome == home;
		uint32_t expect = best_w;

		if (!own && !home_trylock(v, vhome)) {
			skip[nskip++] = best;
			continue;
		}
		bool done = atomic_compare_exchange_strong_explicit(
			bucket_state(bk), &expect,
			GBPF_BUCKET_WORD(GBPF_BUCKET_GEN(best_w), GBPF_BUCKET_TOMBSTONE),
			memory_order_acq_rel, memory_order_relaxed);
		if (!own)
			home_unlock(v, vhome);
		if (done)
			return 0;
		skip[nskip++] = best;
	}
	return -EBUSY;
}

/*
 * Count one more entry; -E2BIG when full. An LRU map evicts instead, and a
 * successful eviction is the reservation itself (see lru_evict).
 */
static int reserve_entry(const struct map_view *v, uint32_t home)
{
	struct gbpf_map_hdr *h = view_hdr(v);

	for (int attempt = 0;; attempt++) {
		uint64_t old = atomic_fetch_add_explicit(at64(&h->count), 1, memory_order_acq_rel);

		if (old < v->h.max_entries)
			return 0;
		atomic_fetch_sub_explicit(at64(&h->count), 1, memory_order_relaxed);
		if (is_lru(v) && attempt < LRU_EVICT_ATTEMPTS && lru_evict(v, home) == 0)
			return 0;
		if (!is_lru(v) || attempt >= LRU_EVICT_ATTEMPTS) {
			atomic_fetch_add_explicit(at64(&h->drops), 1, memory_order_relaxed);
			return -E2BIG;
		}
	}
}

/* Claim the first free bucket at or after @p from in the probe run. */
static int64_t claim(const struct map_view *v, uint32_t from, uint32_t *word)
{
	uint32_t mask = v->h.nr_buckets - 1;
	uint32_t b = from;

	for (uint32_t i = 0; i < v->h.nr_buckets;) {
		uint8_t *bk = bucket_at(v, b);
		uint32_t w = atomic_load_explicit(bucket_state(bk), memory_order_acquire);
		uint32_t st = GBPF_BUCKET_STATE(w);

		if (st == GBPF_BUCKET_EMPTY || st == GBPF_BUCKET_TOMBSTONE) {
			uint32_t busy = GBPF_BUCKET_WORD(GBPF_BUCKET_GEN(w) + 1, GBPF_BUCKET_BUSY);

			if (atomic_compare_exchange_strong_explicit(bucket_state(bk), &w, busy,
								    memory_order_acq_rel,
								    memory_order_relaxed)) {
				*word = busy;
				return b;
			}
			/* Lost the race to a writer of another home: look again at b. */
			continue;
		}
		b = (b + 1) & mask;
		i++;
	}
	return -1;
}

int gbpf_mapi_hash_update(const struct map_view *v, const void *key, const void *value,
			  uint64_t flags, uint32_t slot)
{
	uint64_t hash = gbpf_map_hash(key, v->h.key_size);
	uint32_t home = (uint32_t)hash & (v->h.nr_buckets - 1);
	int64_t b, free_idx;
	uint8_t *bk;
	uint32_t w;
	int err;

	if (slot >= value_copies(v)) {
		if (v->h.type == GBPF_MAP_TYPE_PERCPU_HASH)
			return -EINVAL;
		slot = 0;
	}
	err = home_lock(v, home);
	if (err)
		return err;
	b = probe(v, key, hash, &w, &free_idx);
	if (b >= 0) {
		if (flags == GBPF_NOEXIST) {
			err = -EEXIST;
			goto out;
		}
		bk = bucket_at(v, (uint32_t)b);
		memmove(bucket_value(v, (uint32_t)b, slot), value, v->h.value_size);
		touch(v, bk, true);
		goto out;
	}
	if (flags == GBPF_EXIST) {
		err = -ENOENT;
		goto out;
	}
	err = reserve_entry(v, home);
	if (err)
		goto out;
	b = claim(v, free_idx >= 0 ? (uint32_t)free_idx : home, &w);
	if (b < 0) {
		/* Only possible on memory corrupted by someone else. */
		atomic_fetch_sub_explicit(at64(&view_hdr(v)->count), 1, memory_order_relaxed);
		err = -E2BIG;
		goto out;
	}
	bk = bucket_at(v, (uint32_t)b);
	atomic_store_explicit(at64(bk + offsetof(struct gbpf_hash_bucket, hash)), hash,
			      memory_order_relaxed);
	memset(bucket_key(bk), 0, v->h.key_stride);
	memcpy(bucket_key(bk), key, v->h.key_size);
	for (uint32_t s = 0; s < value_copies(v); s++)
		memset(bucket_value(v, (uint32_t)b, s), 0, v->h.value_stride);
	memcpy(bucket_value(v, (uint32_t)b, slot), value, v->h.value_size);
	touch(v, bk, true);
	/* Publish: key, hash and value become visible with the READY state. */
	atomic_store_explicit(bucket_state(bk),
			      GBPF_BUCKET_WORD(GBPF_BUCKET_GEN(w), GBPF_BUCKET_READY),
			      memory_order_release);
out:
	home_unlock(v, home);
	return err;
}

int gbpf_mapi_hash_delete(const struct map_view *v, const void *key)
{
	uint64_t hash = gbpf_map_hash(key, v->h.key_size);
	uint32_t home = (uint32_t)hash & (v->h.nr_buckets - 1);
	uint32_t w;
	int64_t b;
	int err;

	err = home_lock(v, home);
	if (err)
		return err;
	b = probe(v, key, hash, &w, NULL);
	if (b < 0) {
		err = -ENOENT;
	} else if (atomic_compare_exchange_strong_explicit(
			   bucket_state(bucket_at(v, (uint32_t)b)), &w,
			   GBPF_BUCKET_WORD(GBPF_BUCKET_GEN(w), GBPF_BUCKET_TOMBSTONE),
			   memory_order_acq_rel, memory_order_relaxed)) {
		atomic_fetch_sub_explicit(at64(&view_hdr(v)->count), 1, memory_order_relaxed);
	} else {
		err = -ENOENT; /* evicted under us */
	}
	home_unlock(v, home);
	return err;
}

int gbpf_mapi_hash_next_key(const struct map_view *v, const void *key, void *next_key)
{
	uint32_t start = 0, w;

	if (key) {
		int64_t b = probe(v, key, gbpf_map_hash(key, v->h.key_size), &w, NULL);

		/*
		 * A key not found by probing (stored hash corrupted) is searched
		 * by its bytes so that iteration still ends; an absent key
		 * restarts the iteration, as in Linux.
		 */
		for (uint32_t i = 0; b < 0 && i < v->h.nr_buckets; i++) {
			uint8_t *bk = bucket_at(v, i);

			w = atomic_load_explicit(bucket_state(bk), memory_order_acquire);
			if (GBPF_BUCKET_STATE(w) == GBPF_BUCKET_READY &&
			    memcmp(bucket_key(bk), key, v->h.key_size) == 0)
				b = i;
		}
		if (b >= 0)
			start = (uint32_t)b + 1;
	}
	for (uint32_t b = start; b < v->h.nr_buckets; b++) {
		uint8_t *bk = bucket_at(v, b);

		w = atomic_load_explicit(bucket_state(bk), memory_order_acquire);
		if (GBPF_BUCKET_STATE(w) != GBPF_BUCKET_READY)
			continue;
		memcpy(next_key, bucket_key(bk), v->h.key_size);
		atomic_thread_fence(memory_order_acquire);
		if (atomic_load_explicit(bucket_state(bk), memory_order_relaxed) != w)
			continue;
		return 0;
	}
	return -ENOENT;
}
