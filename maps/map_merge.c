/* SPDX-License-Identifier: MIT */
/*
 * maps/map_merge.c - adding what one copy of a map changed into another
 * copy: the device copies of each GPU context (and of each process of a
 * job) into the one host block the controller reads.
 *
 * Why deltas: every copy starts as a copy of the host block (a .data
 * array with initial values, a config word the probe only reads, counts
 * other copies already added). Adding raw values would count those once
 * per copy; adding what a copy changed since its last merge (src - base)
 * counts only its own work, so a value one copy changed ends as that
 * copy's and one nobody changed stays as it was. Values several copies
 * changed are summed: counters, the common case, come out exact.
 *
 * Why atomic adds: several processes (each with its own device copies)
 * merge into the same shared host block while host probes update it; an
 * atomic add per changed word keeps every contribution.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "maps/map.h"
#include "maps/map_internal.h"
#include "maps/map_layout.h"

#define MERGE_WORD(T)                                                                              \
	do {                                                                                       \
		T b, c = 0;                                                                        \
		memcpy(&b, src + off, sizeof(T));                                                  \
		if (base)                                                                          \
			memcpy(&c, base + off, sizeof(T));                                         \
		if (b != c)                                                                        \
			__atomic_fetch_add((T *)(void *)(dst + off), (T)(b - c), __ATOMIC_RELAXED); \
		off += sizeof(T);                                                                  \
	} while (0)

void gbpf_map_value_add_delta(void *dstv, const void *srcv, const void *basev, size_t size)
{
	unsigned char *dst = dstv;
	const unsigned char *src = srcv, *base = basev;
	size_t off = 0;

	/*
	 * The widest word that fits: a u32 or u16 counter keeps its carries.
	 * Values start 8-aligned (map_layout.h), so each word is aligned.
	 */
	while (off < size) {
		if (size - off >= 8)
			MERGE_WORD(uint64_t);
		else if (size - off >= 4)
			MERGE_WORD(uint32_t);
		else if (size - off >= 2)
			MERGE_WORD(uint16_t);
		else
			MERGE_WORD(uint8_t);
	}
}

/*
 * gbpf_map_value_add_delta over a run of whole u64 values (8-aligned): the
 * per-value call and the word-size choice cost more than the add itself on
 * a per-GPU-thread array of millions of values (16M changed values: 123 -> 86 ms on the
 * development machine; the atomic adds are the rest).
 */
static void merge_u64_run(unsigned char *dst, const unsigned char *src, const unsigned char *base, uint64_t words)
{
	uint64_t *d = (uint64_t *)(void *)dst;
	const uint64_t *s = (const uint64_t *)(const void *)src, *b = (const uint64_t *)(const void *)base;

	for (uint64_t i = 0; i < words; i++) {
		uint64_t delta = s[i] - (b ? b[i] : 0);

		if (delta)
			__atomic_fetch_add(&d[i], delta, __ATOMIC_RELAXED);
	}
}

static int merge_same_shape(const struct gbpf_map_hdr *a, const struct gbpf_map_hdr *b)
{
	return a->type == b->type && a->key_size == b->key_size && a->value_size == b->value_size &&
	       a->max_entries == b->max_entries && a->nr_slots == b->nr_slots &&
	       a->value_stride == b->value_stride && a->data_off == b->data_off &&
	       a->total_size == b->total_size;
}

int gbpf_map_merge_delta(struct gbpf_map_instance *dst, struct gbpf_map_instance *src,
			 struct gbpf_map_instance *base, uint64_t *lost)
{
	const struct gbpf_map_hdr *dh, *sh;
	unsigned char key[GBPF_MAP_MAX_KEY_SIZE], next[GBPF_MAP_MAX_KEY_SIZE];
	const void *prev = NULL;
	unsigned char *zero = NULL;
	uint32_t slots;
	int rc = 0;

	if (lost)
		*lost = 0;
	if (!dst || !src || !dst->mem || !src->mem || gbpf_map_mem_validate(dst->mem, dst->mem_size) ||
	    gbpf_map_mem_validate(src->mem, src->mem_size) ||
	    (base && (!base->mem || gbpf_map_mem_validate(base->mem, base->mem_size))))
		return -EINVAL;
	dh = dst->mem;
	sh = src->mem;
	if (!merge_same_shape(dh, sh) || (base && !merge_same_shape(dh, base->mem)) ||
	    gbpf_mapi_is_ring(dh->type))
		return -EINVAL;
	if (gbpf_mapi_is_array(dh->type)) {
		/*
		 * Every element of every slot (map_layout.h places them), in the order they
		 * lie in memory: a per-GPU-thread array is index-major (its millions of
		 * threads' values of one index side by side), a per-CPU one slot-major.
		 */
		int index_major = dh->type == GBPF_MAP_TYPE_PERGPUTHREAD_ARRAY;
		uint64_t copies = dh->type == GBPF_MAP_TYPE_PERCPU_ARRAY || index_major ? dh->nr_slots : 1;
		uint64_t outer = index_major ? dh->max_entries : copies;
		uint64_t inner = index_major ? copies : dh->max_entries;
		unsigned char *d = dst->mem;
		const unsigned char *s = src->mem;
		const unsigned char *b = base ? base->mem : NULL;

		if (dh->value_size % 8 == 0) {
			/* whole u64 values: each slot's plane (or the one plane) is a dense run */
			uint64_t planes = dh->type == GBPF_MAP_TYPE_PERCPU_ARRAY ? copies : 1;
			uint64_t words = (uint64_t)dh->max_entries * (index_major ? copies : 1) * dh->value_stride / 8;

			for (uint64_t p = 0; p < planes; p++) {
				uint64_t off = gbpf_array_value_off(dh, 0, p);

				merge_u64_run(d + off, s + off, b ? b + off : NULL, words);
			}
			return 0;
		}
		for (uint64_t o = 0; o < outer; o++) {
			for (uint64_t n = 0; n < inner; n++) {
				uint64_t off = index_major ? gbpf_array_value_off(dh, o, n)
							   : gbpf_array_value_off(dh, n, o);

				gbpf_map_value_add_delta(d + off, s + off, b ? b + off : NULL,
							 dh->value_size);
			}
		}
		return 0;
	}
	slots = gbpf_map_nr_slots(src);
	while (!gbpf_map_get_next_key(src, prev, next)) {
		memcpy(key, next, dh->key_size);
		prev = key;
		for (uint32_t slot = 0; slot < slots; slot++) {
			const void *sv = gbpf_map_lookup(src, key, slot);
			const void *bv = base ? gbpf_map_lookup(base, key, slot) : NULL;
			void *dv;

			if (!sv)
				break;
			dv = gbpf_map_lookup(dst, key, slot);
			if (!dv) {
				/* A key dst lacks: insert it as zeros, then add. */
				if (!zero && !(zero = calloc(1, dh->value_size))) {
					rc = -ENOMEM;
					goto out;
				}
				int urc = gbpf_map_update(dst, key, zero, GBPF_NOEXIST, slot);

				/* -EEXIST: another writer inserted it meanwhile; add to theirs. */
				if ((urc && urc != -EEXIST) || !(dv = gbpf_map_lookup(dst, key, slot))) {
					if (lost)
						(*lost)++;
					break;
				}
			}
			gbpf_map_value_add_delta(dv, sv, bv, dh->value_size);
		}
	}
out:
	free(zero);
	return rc;
}
