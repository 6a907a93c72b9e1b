/* SPDX-License-Identifier: MIT */
/* Hash maps: HASH, GPU_HASH, PERCPU_HASH, LRU_HASH; the hash function's test vectors. */
#include <stdio.h>
#include <stdlib.h>

#include "tests/maps/maps_test_util.h"

struct key {
	uint32_t a;
	uint16_t b;
	uint8_t c;
}; /* 7 bytes of key + 1 of padding: key_size 7 tests the zero-padded last word */

static void test_vectors(void)
{
	/* Computed independently from the definition in MAPS.md (Python). */
	static const uint8_t k13[13] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
	static const uint8_t k16[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
	uint32_t one = 1;

	tap_ok(gbpf_map_hash("", 0) == 0x877e2011d918dd23ull, "hash of no bytes");
	tap_ok(gbpf_map_hash(&one, 4) == 0xa6378439dbea31adull, "hash of u32 1");
	tap_ok(gbpf_map_hash("abc", 3) == 0xcea1ab5255ca3387ull, "hash of \"abc\"");
	tap_ok(gbpf_map_hash(k16, 16) == 0x4df443536b63d6c7ull, "hash of 00..0f");
	tap_ok(gbpf_map_hash(k13, 13) == 0xa804b2443cd3ff8full, "hash of 00..0c (partial word)");
}

static void test_basic(uint32_t type, const char *what)
{
	struct gbpf_map_desc d = mk_desc(what, type, 7, 16, 100);
	struct gbpf_map_instance m;
	uint8_t val[16], *p;
	struct key k = {0};
	int ok = 1, n, err;
	uint8_t seen[100] = {0};

	if (gbpf_map_instance_create(&m, &d, 1)) {
		tap_ok(0, "%s: create", what);
		return;
	}
	/* 16 header + 8 key, rounded to 16 (the values are apart) */
	tap_ok(hdr_of(&m)->nr_buckets == 256 && hdr_of(&m)->bucket_size == 32 &&
		       hdr_of(&m)->aux_off == 128 + 256 * 32 && hdr_of(&m)->total_size == hdr_of(&m)->aux_off + 256 * 16,
	       "%s: 256 buckets of 32 bytes for 100 entries, then 256 values of 16 bytes", what);
	for (uint32_t i = 0; i < 100; i++) {
		k.a = i * 7919;
		k.b = (uint16_t)i;
		memset(val, (int)i, sizeof(val));
		ok &= gbpf_map_update(&m, &k, val, GBPF_NOEXIST, 0) == 0;
	}
	tap_ok(ok, "%s: 100 NOEXIST inserts", what);
	tap_ok(hdr_of(&m)->count == 100, "%s: header count is 100", what);
	k.a = 12345678;
	tap_ok(gbpf_map_update(&m, &k, val, GBPF_ANY, 0) == -E2BIG, "%s: 101st key -> E2BIG", what);
	tap_ok(gbpf_map_update(&m, &k, val, GBPF_EXIST, 0) == -ENOENT,
	       "%s: EXIST on absent -> ENOENT", what);
	ok = 1;
	for (uint32_t i = 0; i < 100; i++) {
		k.a = i * 7919;
		k.b = (uint16_t)i;
		p = gbpf_map_lookup(&m, &k, 0);
		ok &= p && p[0] == i && p[15] == i;
	}
	tap_ok(ok, "%s: every key found with its value", what);
	k.a = 7919 * 5;
	k.b = 5;
	memset(val, 0xee, sizeof(val));
	tap_ok(gbpf_map_update(&m, &k, val, GBPF_NOEXIST, 0) == -EEXIST,
	       "%s: NOEXIST on present -> EEXIST", what);
	tap_ok(gbpf_map_update(&m, &k, val, GBPF_EXIST, 0) == 0 &&
		       ((uint8_t *)gbpf_map_lookup(&m, &k, 0))[3] == 0xee,
	       "%s: EXIST replaces the value", what);
	tap_ok(gbpf_map_delete(&m, &k) == 0 && gbpf_map_lookup(&m, &k, 0) == NULL,
	       "%s: delete then lookup is NULL", what);
	tap_ok(gbpf_map_delete(&m, &k) == -ENOENT, "%s: second delete -> ENOENT", what);
	tap_ok(hdr_of(&m)->count == 99, "%s: count is 99 after a delete", what);
	k.a = 12345678;
	k.b = 0;
	tap_ok(gbpf_map_update(&m, &k, val, GBPF_ANY, 0) == 0, "%s: a new key fits after a delete",
	       what);

	/* Iteration: every key exactly once. */
	n = 0;
	err = gbpf_map_get_next_key(&m, NULL, &k);
	ok = 1;
	while (err == 0 && n < 1000) {
		struct key cur = k;

		if (k.a == 12345678) {
			ok &= !seen[5]; /* reuse slot 5's flag for the new key */
			seen[5] = 1;
		} else if (k.a % 7919 == 0 && k.a / 7919 < 100) {
			ok &= !seen[k.a / 7919] && k.a / 7919 != 5;
			seen[k.a / 7919] = 1;
		} else {
			ok = 0;
		}
		n++;
		err = gbpf_map_get_next_key(&m, &cur, &k);
	}
	tap_ok(ok && n == 100 && err == -ENOENT, "%s: iteration visits each of 100 keys once (%d)",
	       what, n);
	k.a = 7919 * 9;
	k.b = 9;
	tap_ok(gbpf_map_lookup(&m, &k, 7) != NULL &&
		       gbpf_map_lookup(&m, &k, 7) == gbpf_map_lookup(&m, &k, 0),
	       "%s: slot ignored by non-percpu lookups", what);
	gbpf_map_instance_destroy(&m);
}

static void test_tombstone_reuse(void)
{
	struct gbpf_map_desc d = mk_desc("churn", GBPF_MAP_TYPE_HASH, 4, 4, 8);
	struct gbpf_map_instance m;
	int ok = 1;

	if (gbpf_map_instance_create(&m, &d, 1)) {
		tap_ok(0, "churn create");
		return;
	}
	/* Many distinct keys through a small table: tombstones must be reused. */
	for (uint32_t i = 0; i < 20000 && ok; i++) {
		ok &= gbpf_map_update(&m, &i, &i, GBPF_NOEXIST, 0) == 0;
		if (i >= 7) {
			uint32_t old = i - 7;

			ok &= gbpf_map_delete(&m, &old) == 0;
		}
	}
	tap_ok(ok, "20000 distinct keys through an 8-entry hash (insert/delete churn)");
	ok = 1;
	for (uint32_t i = 19993; i < 20000; i++) {
		uint32_t *p = gbpf_map_lookup(&m, &i, 0);

		ok &= p && *p == i;
	}
	tap_ok(ok && hdr_of(&m)->count == 7, "the last 7 keys remain, count 7");
	gbpf_map_instance_destroy(&m);
}

static void test_percpu_hash(void)
{
	struct gbpf_map_desc d = mk_desc("pch", GBPF_MAP_TYPE_PERCPU_HASH, 4, 8, 16);
	struct gbpf_map_instance m;
	uint32_t k = 42;
	uint64_t v = 7, *p;
	int ok = 1;

	if (gbpf_map_instance_create(&m, &d, 4)) {
		tap_ok(0, "percpu hash create");
		return;
	}
	tap_ok(gbpf_map_update(&m, &k, &v, GBPF_ANY, 2) == 0, "percpu hash: insert in slot 2");
	for (uint32_t s = 0; s < 4; s++) {
		p = gbpf_map_lookup(&m, &k, s);
		ok &= p && *p == (s == 2 ? 7u : 0u);
	}
	tap_ok(ok, "percpu hash: other slots of a new key are zero");
	v = 9;
	tap_ok(gbpf_map_update(&m, &k, &v, GBPF_EXIST, 0) == 0 &&
		       *(uint64_t *)gbpf_map_lookup(&m, &k, 0) == 9 &&
		       *(uint64_t *)gbpf_map_lookup(&m, &k, 2) == 7,
	       "percpu hash: update of slot 0 leaves slot 2");
	tap_ok(gbpf_map_lookup(&m, &k, 4) == NULL &&
		       gbpf_map_update(&m, &k, &v, GBPF_ANY, 4) == -EINVAL,
	       "percpu hash: slot 4 of 4 rejected");
	gbpf_map_instance_destroy(&m);
}

/* A small PERCPU_HASH: each slot's plane of values padded to its own cache lines. */
static void test_percpu_hash_planes(void)
{
	struct gbpf_map_desc d = mk_desc("pch2", GBPF_MAP_TYPE_PERCPU_HASH, 4, 8, 2);
	struct gbpf_map_instance m;
	uint32_t k = 5;
	uint64_t v = 1;
	uint8_t *p0, *p1, *p2;

	if (gbpf_map_instance_create(&m, &d, 3)) {
		tap_ok(0, "small percpu hash create");
		return;
	}
	gbpf_map_update(&m, &k, &v, GBPF_ANY, 0);
	p0 = gbpf_map_lookup(&m, &k, 0);
	p1 = gbpf_map_lookup(&m, &k, 1);
	p2 = gbpf_map_lookup(&m, &k, 2);
	/* 4 buckets of 8-byte values: 32 bytes of values a slot, planes 128 bytes apart */
	tap_ok(p0 && p1 && p2 && p1 - p0 == 128 && p2 - p1 == 128 && ((uintptr_t)p0 - (uintptr_t)m.mem) % 8 == 0,
	       "small percpu hash: the slots' copies of a value 128 bytes apart");
	tap_ok(hdr_of(&m)->total_size == hdr_of(&m)->aux_off + 3 * 128,
	       "small percpu hash: the block ends after 3 planes of 128 bytes");
	gbpf_map_instance_destroy(&m);
}

static void test_lru(void)
{
	struct gbpf_map_desc d = mk_desc("lru", GBPF_MAP_TYPE_LRU_HASH, 4, 4, 32);
	struct gbpf_map_instance m;
	uint32_t k, v;
	int ok = 1, hot = 0, cold = 0;

	if (gbpf_map_instance_create(&m, &d, 1)) {
		tap_ok(0, "lru create");
		return;
	}
	for (k = 0; k < 32; k++)
		ok &= gbpf_map_update(&m, &k, &k, GBPF_ANY, 0) == 0;
	tap_ok(ok && hdr_of(&m)->count == 32, "lru: 32 entries fill it");
	/* Make keys 0..7 hot, then insert 8 new keys: cold keys go, hot ones stay. */
	for (int round = 0; round < 3; round++)
		for (k = 0; k < 8; k++) {
			v = k + 100;
			ok &= gbpf_map_update(&m, &k, &v, GBPF_EXIST, 0) == 0;
		}
	for (k = 1000; k < 1008; k++)
		ok &= gbpf_map_update(&m, &k, &k, GBPF_ANY, 0) == 0;
	tap_ok(ok, "lru: inserts into a full LRU map succeed (eviction)");
	tap_ok(hdr_of(&m)->count == 32, "lru: still exactly 32 entries");
	for (k = 0; k < 8; k++)
		hot += gbpf_map_lookup(&m, &k, 0) != NULL;
	for (k = 8; k < 32; k++)
		cold += gbpf_map_lookup(&m, &k, 0) != NULL;
	tap_ok(hot == 8 && cold == 16,
	       "lru: the 8 recently used keys survive, 8 cold ones evicted (%d/%d)", hot, cold);
	ok = 1;
	for (k = 1000; k < 1008; k++)
		ok &= gbpf_map_lookup(&m, &k, 0) != NULL;
	tap_ok(ok, "lru: the new keys are present");
	gbpf_map_instance_destroy(&m);
}

/*
 * Layout version 4: a 16-byte bucket header, then the key; LRU_HASH adds its
 * last-use word in the bucket's last 8 bytes; the values are in planes after
 * the buckets (one plane, or one per slot for PERCPU_HASH), so no lookup's
 * load shares a sector with the atomics on the values.
 */
static void test_bucket_sizes(void)
{
	static const struct {
		uint32_t type, key, value, bucket;
		const char *what;
	} c[] = {
		{GBPF_MAP_TYPE_HASH, 4, 8, 32, "hash u32 -> u64"},
		{GBPF_MAP_TYPE_GPU_HASH, 8, 8, 32, "gpu_hash u64 -> u64"},
		{GBPF_MAP_TYPE_PERCPU_HASH, 16, 8, 32, "percpu_hash 16-byte key"},
		{GBPF_MAP_TYPE_HASH, 24, 4, 48, "hash 24-byte key -> u32"},
		{GBPF_MAP_TYPE_LRU_HASH, 4, 8, 32, "lru_hash u32 -> u64 (+ last use)"},
		{GBPF_MAP_TYPE_LRU_HASH, 12, 4, 48, "lru_hash 12-byte key -> u32 (+ last use)"},
	};

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct gbpf_map_desc d = mk_desc(c[i].what, c[i].type, c[i].key, c[i].value, 64);
		struct gbpf_map_instance m;
		uint64_t key = 0x1122334455667788ull, v = 0xa5a5a5a5a5a5a5a5ull, *p;
		uint8_t key_long[24] = {1, 2, 3};
		const void *k = c[i].key > 8 ? (const void *)key_long : (const void *)&key;
		const uint8_t *bk = NULL;
		uint32_t b;

		if (gbpf_map_instance_create(&m, &d, 2)) {
			tap_ok(0, "%s: create", c[i].what);
			continue;
		}
		p = gbpf_map_update(&m, k, &v, GBPF_ANY, 0) == 0 ? gbpf_map_lookup(&m, k, 0) : NULL;
		/* the one entry's bucket: the key sits 16 bytes in (GBPF_HASH_BUCKET_HDR) */
		for (b = 0; b < hdr_of(&m)->nr_buckets && !bk; b++) {
			const uint8_t *x = (const uint8_t *)m.mem + hdr_of(&m)->data_off + (uint64_t)b * hdr_of(&m)->bucket_size;

			if (GBPF_BUCKET_STATE(*(const uint32_t *)x) == GBPF_BUCKET_READY)
				bk = x;
		}
		b--;
		/* slot 0's value: bucket b's in the first plane, 128-byte aligned after the buckets */
		tap_ok(hdr_of(&m)->bucket_size == c[i].bucket && bk && !memcmp(bk + 16, k, c[i].key) && p &&
			       !memcmp(p, &v, c[i].value) && hdr_of(&m)->aux_off % 128 == 0 &&
			       hdr_of(&m)->aux_off >= hdr_of(&m)->data_off + hdr_of(&m)->nr_buckets * c[i].bucket &&
			       (const uint8_t *)p == (const uint8_t *)m.mem + hdr_of(&m)->aux_off +
							      b * GBPF_MAP_ROUND8(c[i].value),
		       "%s: %u-byte buckets, the key at +16, the value in the plane after the buckets", c[i].what,
		       c[i].bucket);
		if (c[i].type == GBPF_MAP_TYPE_LRU_HASH && bk) {
			uint64_t use;

			memcpy(&use, bk + c[i].bucket - 8, 8);
			tap_ok(use == hdr_of(&m)->clock && use > 0,
			       "%s: the last use (%llu) is the bucket's last 8 bytes", c[i].what, (unsigned long long)use);
		}
		gbpf_map_instance_destroy(&m);
	}
}

int main(void)
{
	test_vectors();
	test_basic(GBPF_MAP_TYPE_HASH, "hash");
	test_basic(GBPF_MAP_TYPE_GPU_HASH, "gpu_hash");
	test_tombstone_reuse();
	test_percpu_hash();
	test_percpu_hash_planes();
	test_lru();
	test_bucket_sizes();
	return tap_done();
}
