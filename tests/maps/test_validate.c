/* SPDX-License-Identifier: MIT */
/* Header validation and operations on corrupted (hostile) map memory: errors, never crashes. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "tests/maps/maps_test_util.h"
#include "tests/xorshift.h"

static uint64_t rng = 88172645463325252ull;

static uint64_t rnd(void)
{
	return test_xorshift64(&rng);
}

static void test_random_memory(void)
{
	uint64_t *mem = malloc(4096);
	struct gbpf_map_instance m = {.mem = mem, .mem_size = 4096};
	int rejected = 0, calls_ok = 1;
	uint64_t key[8] = {0}, val[8] = {0};

	for (int iter = 0; iter < 2000; iter++) {
		struct gbpf_map_hdr *h = (struct gbpf_map_hdr *)mem;

		for (int i = 0; i < 512; i++)
			mem[i] = rnd();
		if (iter % 2) {
			/* plausible start, random rest */
			h->magic = GBPF_MAP_MAGIC;
			h->version = GBPF_MAP_LAYOUT_VERSION;
			h->hdr_size = GBPF_MAP_HDR_SIZE;
			h->ring_gpu_consumer = 0;
			h->reserved1 = 0;
			h->type = (uint32_t[]){
				1, 2, 4, 5, 6, 9, 27, 1501, 1502, 1503, 1527}[iter % 11];
		}
		rejected += gbpf_map_mem_validate(mem, 4096) != 0;
		calls_ok &= gbpf_map_lookup(&m, key, 0) == NULL;
		calls_ok &= gbpf_map_update(&m, key, val, 0, 0) == -EINVAL;
		calls_ok &= gbpf_map_delete(&m, key) == -EINVAL;
		calls_ok &= gbpf_map_get_next_key(&m, NULL, key) == -EINVAL;
		calls_ok &= gbpf_ringbuf_consume(&m, NULL, NULL) == -EINVAL;
		calls_ok &= gbpf_ringbuf_reserve(&m, 8, 0) == NULL;
		calls_ok &= gbpf_ringbuf_dropped(&m) == 0;
	}
	tap_ok(rejected == 2000, "2000 random headers rejected by validate (%d)", rejected);
	tap_ok(calls_ok, "every operation on random memory fails cleanly");
	tap_ok(gbpf_map_mem_validate(NULL, 4096) == -EINVAL, "NULL memory -> EINVAL");
	tap_ok(gbpf_map_mem_validate(mem, 100) == -EINVAL,
	       "memory smaller than a header -> EINVAL");
	m.mem = NULL;
	tap_ok(gbpf_map_lookup(&m, key, 0) == NULL && gbpf_map_nr_slots(&m) == 0 &&
		       gbpf_map_lookup(NULL, key, 0) == NULL,
	       "NULL map memory and NULL instance are rejected");
	free(mem);
}

/* Flip every header byte of a valid map: each field but the runtime counters is checked. */
static void test_flips(uint32_t type, uint32_t ks, uint32_t vs, uint32_t max, uint32_t slots,
		       const char *what)
{
	struct gbpf_map_desc d = mk_desc(what, type, ks, vs, max);
	struct gbpf_map_instance m;
	uint8_t saved[GBPF_MAP_HDR_SIZE];
	int missed = -1, counters_ok = 1;

	if (gbpf_map_instance_create(&m, &d, slots)) {
		tap_ok(0, "%s: create", what);
		return;
	}
	memcpy(saved, m.mem, sizeof(saved));
	for (int i = 0; i < (int)GBPF_MAP_HDR_SIZE; i++) {
		bool counter = i >= (int)offsetof(struct gbpf_map_hdr, count) &&
			       i < (int)offsetof(struct gbpf_map_hdr, hdr_size);

		((uint8_t *)m.mem)[i] ^= 0xff;
		if (counter)
			counters_ok &= gbpf_map_mem_validate(m.mem, m.mem_size) == 0;
		else if (gbpf_map_mem_validate(m.mem, m.mem_size) != -EBADMSG && missed < 0)
			missed = i;
		memcpy(m.mem, saved, sizeof(saved));
	}
	tap_ok(missed < 0, "%s: a flipped byte anywhere in the header is detected (first miss: %d)",
	       what, missed);
	tap_ok(counters_ok, "%s: runtime counters may hold any value", what);
	tap_ok(gbpf_map_mem_validate(m.mem, m.mem_size - 1) == -EBADMSG,
	       "%s: a block one byte short is rejected", what);
	gbpf_map_instance_destroy(&m);
}

static void test_hash_corrupt(void)
{
	struct gbpf_map_desc d = mk_desc("h", GBPF_MAP_TYPE_HASH, 8, 8, 64);
	struct gbpf_map_instance m;
	const struct gbpf_map_hdr *h;
	uint64_t k, v = 1, next;
	int n = 0;

	if (gbpf_map_instance_create(&m, &d, 1)) {
		tap_ok(0, "hash create");
		return;
	}
	h = hdr_of(&m);
	/* Random buckets, lock words free: all operations stay inside the block. */
	for (uint32_t b = 0; b < h->nr_buckets; b++) {
		uint8_t *bk = (uint8_t *)m.mem + h->data_off + (uint64_t)b * h->bucket_size;

		for (uint32_t i = 0; i < h->bucket_size; i += 8) {
			uint64_t r = rnd();

			memcpy(bk + i, &r, 8);
		}
		memset(bk + 4, 0, 4);
	}
	for (k = 0; k < 200; k++) {
		gbpf_map_lookup(&m, &k, 0);
		gbpf_map_update(&m, &k, &v, GBPF_ANY, 0);
		gbpf_map_delete(&m, &k);
	}
	while (gbpf_map_get_next_key(&m, n ? &k : NULL, &next) == 0 && n < 1000) {
		k = next;
		n++;
	}
	tap_ok(n < 1000,
	       "random buckets: 600 operations and a bounded iteration (%d keys), no crash", n);
	gbpf_map_instance_destroy(&m);

	if (gbpf_map_instance_create(&m, &d, 1)) {
		tap_ok(0, "hash create");
		return;
	}
	h = hdr_of(&m);
	k = 5;
	/* A home lock held forever (a dead writer): the update gives up with EBUSY. */
	memset((uint8_t *)m.mem + h->data_off +
		       (gbpf_map_hash(&k, 8) & (h->nr_buckets - 1)) * h->bucket_size + 4,
	       1, 1);
	tap_ok(gbpf_map_update(&m, &k, &v, GBPF_ANY, 0) == -EBUSY,
	       "a lock never released -> EBUSY");
	tap_ok(gbpf_map_lookup(&m, &k, 0) == NULL, "lookups never take the lock");
	gbpf_map_instance_destroy(&m);
}

static void test_ring_corrupt(void)
{
	struct gbpf_map_desc d = mk_desc("r", GBPF_MAP_TYPE_RINGBUF, 0, 0, 4096);
	struct gbpf_map_instance m;
	struct gbpf_ring_ctl *ctl;
	uint8_t *data;
	uint32_t v = 1;

	if (gbpf_map_instance_create(&m, &d, 1)) {
		tap_ok(0, "ring create");
		return;
	}
	ctl = (struct gbpf_ring_ctl *)((uint8_t *)m.mem + hdr_of(&m)->data_off);
	data = (uint8_t *)m.mem + hdr_of(&m)->aux_off;
	ctl->producer_pos = 10 * 4096;
	tap_ok(gbpf_ringbuf_consume(&m, NULL, NULL) == -EUCLEAN,
	       "producer far ahead of the consumer -> EUCLEAN");
	tap_ok(gbpf_ringbuf_output(&m, &v, 4, 0) == -EAGAIN, "producer refuses a corrupted ring");
	ctl->producer_pos = 0;
	ctl->consumer_pos = 0;
	tap_ok(gbpf_ringbuf_output(&m, &v, 4, 0) == 0, "after repair the ring works");
	((struct gbpf_ring_rec *)data)->len = 5000; /* committed, longer than the ring */
	tap_ok(gbpf_ringbuf_consume(&m, NULL, NULL) == -EUCLEAN,
	       "record longer than the ring -> EUCLEAN");
	((struct gbpf_ring_rec *)data)->len = 4;
	ctl->consumer_pos = 3;
	tap_ok(gbpf_ringbuf_consume(&m, NULL, NULL) == -EUCLEAN,
	       "misaligned consumer position -> EUCLEAN");
	gbpf_map_instance_destroy(&m);
}

int main(void)
{
	test_random_memory();
	test_flips(GBPF_MAP_TYPE_ARRAY, 4, 12, 10, 1, "array");
	test_flips(GBPF_MAP_TYPE_PERCPU_ARRAY, 4, 8, 10, 3, "percpu_array");
	test_flips(GBPF_MAP_TYPE_PERGPUTHREAD_ARRAY, 4, 8, 10, 300, "pergputhread");
	test_flips(GBPF_MAP_TYPE_HASH, 6, 8, 10, 1, "hash");
	test_flips(GBPF_MAP_TYPE_PERCPU_HASH, 6, 8, 10, 2, "percpu_hash");
	test_flips(GBPF_MAP_TYPE_RINGBUF, 0, 0, 8192, 2, "ringbuf");
	test_flips(GBPF_MAP_TYPE_PERF_EVENT_ARRAY, 4, 4, 2, 0, "perf");
	test_hash_corrupt();
	test_ring_corrupt();
	return tap_done();
}
