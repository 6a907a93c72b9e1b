/* SPDX-License-Identifier: MIT */
/*
 * gbpf_map_merge_delta: what one copy of a map changed, added into another
 * (device copies of several GPU contexts merged into the host view).
 */
#include <stdio.h>
#include <stdlib.h>

#include "tests/maps/maps_test_util.h"

/* Three copies that start equal: base, a and b. */
struct trio {
	struct gbpf_map_instance base, a, b;
};

static int trio_make(struct trio *t, const struct gbpf_map_desc *d, uint32_t slots)
{
	memset(t, 0, sizeof(*t));
	if (gbpf_map_instance_create(&t->base, d, slots) || gbpf_map_instance_create(&t->a, d, slots) ||
	    gbpf_map_instance_create(&t->b, d, slots))
		return -1;
	return 0;
}

static void trio_copy_base(struct trio *t)
{
	memcpy(t->a.mem, t->base.mem, t->base.mem_size);
	memcpy(t->b.mem, t->base.mem, t->base.mem_size);
}

static void trio_free(struct trio *t)
{
	gbpf_map_instance_destroy(&t->base);
	gbpf_map_instance_destroy(&t->a);
	gbpf_map_instance_destroy(&t->b);
}

static uint64_t get64(struct gbpf_map_instance *m, uint32_t key, uint32_t slot)
{
	uint64_t v = 0;
	void *p = gbpf_map_lookup(m, &key, slot);

	if (p)
		memcpy(&v, p, sizeof(v));
	return p ? v : UINT64_MAX;
}

static void put64(struct gbpf_map_instance *m, uint32_t key, uint32_t slot, uint64_t v)
{
	gbpf_map_update(m, &key, &v, GBPF_ANY, slot);
}

static void test_array_counters(void)
{
	struct gbpf_map_desc d = mk_desc("counts", GBPF_MAP_TYPE_ARRAY, 4, 8, 4);
	struct trio t;

	if (trio_make(&t, &d, 1)) {
		tap_ok(0, "array: create");
		return;
	}
	put64(&t.base, 0, 0, 100); /* an initial value both copies start from */
	put64(&t.base, 3, 0, 7);   /* a config word nobody changes */
	trio_copy_base(&t);
	put64(&t.a, 0, 0, 100 + 5);
	put64(&t.b, 0, 0, 100 + 11);
	put64(&t.a, 1, 0, 40);         /* changed in a only */
	put64(&t.b, 2, 0, UINT64_MAX); /* a "max" value changed in b only */
	tap_ok(gbpf_map_merge_delta(&t.a, &t.b, &t.base, NULL) == 0, "array: merge b into a");
	tap_ok(get64(&t.a, 0, 0) == 116, "array: counter both changed = base + 5 + 11 (%llu)",
	       (unsigned long long)get64(&t.a, 0, 0));
	tap_ok(get64(&t.a, 1, 0) == 40, "array: value only a changed stays a's");
	tap_ok(get64(&t.a, 2, 0) == UINT64_MAX, "array: value only b changed becomes b's");
	tap_ok(get64(&t.a, 3, 0) == 7, "array: value nobody changed stays the base's");
	trio_free(&t);
}

static void test_u32_values(void)
{
	/* Value of 12 bytes: one u64 word then a u32 counter, whose carry must stay inside it. */
	struct gbpf_map_desc d = mk_desc("mixed", GBPF_MAP_TYPE_ARRAY, 4, 12, 2);
	struct trio t;
	uint32_t k = 1, c;
	uint8_t v[12];

	if (trio_make(&t, &d, 1)) {
		tap_ok(0, "u32: create");
		return;
	}
	memset(v, 0, sizeof(v));
	c = 0xfffffff0u;
	memcpy(v + 8, &c, 4);
	gbpf_map_update(&t.base, &k, v, GBPF_ANY, 0);
	trio_copy_base(&t);
	c = 0xfffffff0u + 0x20u; /* wraps in a: +0x20 */
	memcpy(v + 8, &c, 4);
	gbpf_map_update(&t.a, &k, v, GBPF_ANY, 0);
	c = 0xfffffff0u + 3u;
	memcpy(v + 8, &c, 4);
	gbpf_map_update(&t.b, &k, v, GBPF_ANY, 0);
	gbpf_map_merge_delta(&t.a, &t.b, &t.base, NULL);
	memcpy(v, gbpf_map_lookup(&t.a, &k, 0), sizeof(v));
	memcpy(&c, v + 8, 4);
	tap_ok(c == 0xfffffff0u + 0x23u, "u32 tail: merged as a u32 (0x%x)", c);
	tap_ok(v[0] == 0 && v[7] == 0, "u32 tail: the u64 word before it untouched");
	trio_free(&t);
}

static void test_per_thread_and_percpu(void)
{
	struct gbpf_map_desc d = mk_desc("slots", GBPF_MAP_TYPE_PERGPUTHREAD_ARRAY, 4, 8, 2);
	struct gbpf_map_desc p = mk_desc("pc", GBPF_MAP_TYPE_PERCPU_ARRAY, 4, 8, 3);
	struct trio t;
	int ok = 1;

	if (trio_make(&t, &d, 64)) {
		tap_ok(0, "per-thread: create");
		return;
	}
	for (uint32_t s = 0; s < 64; s++) {
		put64(&t.a, 1, s, s);
		put64(&t.b, 1, s, 2 * s);
	}
	gbpf_map_merge_delta(&t.a, &t.b, NULL, NULL);
	for (uint32_t s = 0; s < 64; s++)
		ok &= get64(&t.a, 1, s) == 3 * s && get64(&t.a, 0, s) == 0;
	tap_ok(ok, "per-GPU-thread array: every (index, thread) slot summed, others zero");
	trio_free(&t);
	if (trio_make(&t, &p, 5)) {
		tap_ok(0, "percpu: create");
		return;
	}
	put64(&t.a, 2, 4, 9);
	put64(&t.b, 2, 4, 1);
	put64(&t.b, 0, 0, 6);
	gbpf_map_merge_delta(&t.a, &t.b, NULL, NULL);
	tap_ok(get64(&t.a, 2, 4) == 10 && get64(&t.a, 0, 0) == 6 && get64(&t.a, 1, 1) == 0,
	       "percpu array: slots merged slot by slot");
	trio_free(&t);
}

static void test_hash(uint32_t type, const char *what, uint32_t slots)
{
	struct gbpf_map_desc d = mk_desc(what, type, 4, 8, 8);
	struct trio t;
	uint64_t lost = 99;
	int ok = 1;

	if (trio_make(&t, &d, slots)) {
		tap_ok(0, "%s: create", what);
		return;
	}
	put64(&t.a, 10, 0, 1);
	put64(&t.a, 11, 0, 2);
	put64(&t.b, 11, 0, 30);
	put64(&t.b, 12, slots - 1, 4);
	tap_ok(gbpf_map_merge_delta(&t.a, &t.b, NULL, &lost) == 0 && lost == 0, "%s: merge", what);
	tap_ok(get64(&t.a, 10, 0) == 1, "%s: key only in dst kept", what);
	tap_ok(get64(&t.a, 11, 0) == 32, "%s: key in both summed (%llu)", what,
	       (unsigned long long)get64(&t.a, 11, 0));
	tap_ok(get64(&t.a, 12, slots - 1) == 4, "%s: key only in src inserted (its last slot)", what);
	if (slots > 1)
		tap_ok(get64(&t.a, 12, 0) == 0, "%s: the inserted key's other slots are zero", what);
	/* dst full: the keys that find no room are counted, none invented. */
	for (uint32_t k = 100; k < 120; k++)
		put64(&t.b, k, 0, 1);
	gbpf_map_merge_delta(&t.a, &t.b, NULL, &lost);
	for (uint32_t k = 100; k < 120; k++)
		ok &= get64(&t.a, k, 0) == 1 || get64(&t.a, k, 0) == UINT64_MAX;
	if (type == GBPF_MAP_TYPE_LRU_HASH)
		tap_ok(ok && lost == 0, "%s: a full destination evicts (nothing counted lost)", what);
	else
		tap_ok(ok && lost > 0, "%s: a full destination counts %llu keys lost", what,
		       (unsigned long long)lost);
	trio_free(&t);
}

static void test_refusals(void)
{
	struct gbpf_map_desc a = mk_desc("a", GBPF_MAP_TYPE_ARRAY, 4, 8, 4);
	struct gbpf_map_desc b = mk_desc("b", GBPF_MAP_TYPE_ARRAY, 4, 8, 5);
	struct gbpf_map_desc r = mk_desc("r", GBPF_MAP_TYPE_RINGBUF, 0, 0, 4096);
	struct gbpf_map_instance x, y, z;

	if (gbpf_map_instance_create(&x, &a, 1) || gbpf_map_instance_create(&y, &b, 1) ||
	    gbpf_map_instance_create(&z, &r, 1)) {
		tap_ok(0, "refusals: create");
		return;
	}
	tap_ok(gbpf_map_merge_delta(&x, &y, NULL, NULL) == -EINVAL, "maps of other shapes refused");
	tap_ok(gbpf_map_merge_delta(&z, &z, NULL, NULL) == -EINVAL, "ring buffers refused");
	((struct gbpf_map_hdr *)y.mem)->magic ^= 1;
	tap_ok(gbpf_map_merge_delta(&x, &y, NULL, NULL) == -EINVAL, "a corrupted block refused");
	gbpf_map_instance_destroy(&x);
	gbpf_map_instance_destroy(&y);
	gbpf_map_instance_destroy(&z);
}

int main(void)
{
	test_array_counters();
	test_u32_values();
	test_per_thread_and_percpu();
	test_hash(GBPF_MAP_TYPE_HASH, "hash", 1);
	test_hash(GBPF_MAP_TYPE_PERCPU_HASH, "percpu hash", 4);
	test_hash(GBPF_MAP_TYPE_LRU_HASH, "lru hash", 1);
	test_refusals();
	return tap_done();
}
