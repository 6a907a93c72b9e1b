/* SPDX-License-Identifier: MIT */
/*
 * Concurrency: many threads on one hash map (exact final contents), LRU
 * eviction under contention, and ring buffers with concurrent producers
 * and one consumer (every record consumed once or counted as dropped).
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "tests/maps/maps_test_util.h"
#include "tests/xorshift.h"

#define NTHREADS 8
#define SHARED_KEYS 10000u
#define OPS 100000u
#define PRIVATE_KEYS 512u

struct hash_arg {
	struct gbpf_map_instance *m;
	uint32_t t;
	uint32_t inserted_shared;
	int errors;
	/* model of this thread's private keys: 0 = absent, else value */
	uint64_t model[PRIVATE_KEYS];
	pthread_barrier_t *bar;
};

static void *hash_worker(void *p)
{
	struct hash_arg *a = p;
	uint64_t seed = 0x1234567ull * (a->t + 1);

	/* Phase 1: every thread races to create the same keys. */
	pthread_barrier_wait(a->bar);
	for (uint32_t i = 0; i < SHARED_KEYS; i++) {
		uint32_t k = (i * 7 + a->t * 1231) % SHARED_KEYS;
		uint64_t v = k;
		int err = gbpf_map_update(a->m, &k, &v, GBPF_NOEXIST, 0);

		if (err == 0)
			a->inserted_shared++;
		else if (err != -EEXIST)
			a->errors++;
	}
	pthread_barrier_wait(a->bar);
	/* Phase 2: churn on private keys, lookups of shared ones. */
	for (uint32_t i = 0; i < OPS; i++) {
		uint32_t slot = (uint32_t)(test_xorshift64(&seed) % PRIVATE_KEYS);
		uint32_t k = 100000 + a->t * PRIVATE_KEYS + slot;
		uint64_t v = ((uint64_t)a->t << 32) | (i + 1);
		int err;

		switch (test_xorshift64(&seed) % 4) {
		case 0:
		case 1:
			err = gbpf_map_update(a->m, &k, &v, GBPF_ANY, 0);
			if (err)
				a->errors++;
			else
				a->model[slot] = v;
			break;
		case 2:
			err = gbpf_map_delete(a->m, &k);
			if (err != (a->model[slot] ? 0 : -ENOENT))
				a->errors++;
			a->model[slot] = 0;
			break;
		default: {
			uint32_t sk = (uint32_t)(test_xorshift64(&seed) % SHARED_KEYS);
			uint64_t *pv = gbpf_map_lookup(a->m, &sk, 0);

			if (!pv || *pv != sk)
				a->errors++;
			err = gbpf_map_update(a->m, &k, &v, GBPF_EXIST, 0);
			if (err != (a->model[slot] ? 0 : -ENOENT))
				a->errors++;
			if (!err)
				a->model[slot] = v;
		}
		}
	}
	return NULL;
}

static void test_hash_stress(void)
{
	struct gbpf_map_desc d = mk_desc("stress", GBPF_MAP_TYPE_GPU_HASH, 4, 8,
					 SHARED_KEYS + NTHREADS * PRIVATE_KEYS);
	static struct hash_arg args[NTHREADS];
	pthread_t th[NTHREADS];
	pthread_barrier_t bar;
	struct gbpf_map_instance m;
	uint32_t shared = 0, expect_private = 0, found = 0, k, prev;
	int errors = 0, ok = 1, err;
	uint8_t *seen;

	if (gbpf_map_instance_create(&m, &d, 1)) {
		tap_ok(0, "stress hash create");
		return;
	}
	pthread_barrier_init(&bar, NULL, NTHREADS);
	for (uint32_t t = 0; t < NTHREADS; t++) {
		memset(&args[t], 0, sizeof(args[t]));
		args[t].m = &m;
		args[t].t = t;
		args[t].bar = &bar;
		pthread_create(&th[t], NULL, hash_worker, &args[t]);
	}
	for (uint32_t t = 0; t < NTHREADS; t++) {
		pthread_join(th[t], NULL);
		shared += args[t].inserted_shared;
		errors += args[t].errors;
		for (uint32_t s = 0; s < PRIVATE_KEYS; s++) {
			uint64_t *pv;

			k = 100000 + t * PRIVATE_KEYS + s;
			pv = gbpf_map_lookup(&m, &k, 0);
			expect_private += args[t].model[s] != 0;
			if (args[t].model[s] ? (!pv || *pv != args[t].model[s]) : pv != NULL)
				ok = 0;
		}
	}
	pthread_barrier_destroy(&bar);
	tap_ok(shared == SHARED_KEYS,
	       "8 threads racing NOEXIST on 10000 keys: exactly 10000 wins (%u)", shared);
	tap_ok(errors == 0, "no unexpected result in %u operations per thread (%d)", OPS, errors);
	tap_ok(ok, "every private key matches the thread's model after 800k mixed operations");
	tap_ok(hdr_of(&m)->count == SHARED_KEYS + expect_private,
	       "header count is exact (%llu == %u)", (unsigned long long)hdr_of(&m)->count,
	       SHARED_KEYS + expect_private);
	/* Iteration: no key twice (duplicates would show here). */
	seen = calloc(100000 + NTHREADS * PRIVATE_KEYS, 1);
	ok = seen != NULL;
	err = gbpf_map_get_next_key(&m, NULL, &k);
	while (ok && err == 0) {
		if (k >= 100000 + NTHREADS * PRIVATE_KEYS || seen[k]++)
			ok = 0;
		found++;
		prev = k;
		err = gbpf_map_get_next_key(&m, &prev, &k);
	}
	tap_ok(ok && found == SHARED_KEYS + expect_private,
	       "iteration: %u distinct keys, no duplicate", found);
	free(seen);
	gbpf_map_instance_destroy(&m);
}

struct lru_arg {
	struct gbpf_map_instance *m;
	uint32_t t;
	int errors;
};

static void *lru_worker(void *p)
{
	struct lru_arg *a = p;

	for (uint32_t i = 0; i < 20000; i++) {
		uint32_t k = a->t * 1000000 + i;

		if (gbpf_map_update(a->m, &k, &k, GBPF_ANY, 0))
			a->errors++;
	}
	return NULL;
}

static void test_lru_stress(void)
{
	struct gbpf_map_desc d = mk_desc("lru", GBPF_MAP_TYPE_LRU_HASH, 4, 4, 1000);
	struct lru_arg args[4];
	pthread_t th[4];
	struct gbpf_map_instance m;
	uint32_t k, prev, n = 0;
	int errors = 0, ok = 1, err;

	if (gbpf_map_instance_create(&m, &d, 1)) {
		tap_ok(0, "lru stress create");
		return;
	}
	for (uint32_t t = 0; t < 4; t++) {
		args[t] = (struct lru_arg){.m = &m, .t = t};
		pthread_create(&th[t], NULL, lru_worker, &args[t]);
	}
	for (uint32_t t = 0; t < 4; t++) {
		pthread_join(th[t], NULL);
		errors += args[t].errors;
	}
	err = gbpf_map_get_next_key(&m, NULL, &k);
	while (err == 0) {
		uint32_t *v = gbpf_map_lookup(&m, &k, 0);

		ok &= v && *v == k;
		n++;
		prev = k;
		err = gbpf_map_get_next_key(&m, &prev, &k);
	}
	tap_ok(errors == 0,
	       "4 threads x 20000 inserts into a 1000-entry LRU: all succeed (%d failed)", errors);
	tap_ok(n == 1000 && hdr_of(&m)->count == 1000 && ok,
	       "LRU holds exactly 1000 consistent entries (%u, count %llu)", n,
	       (unsigned long long)hdr_of(&m)->count);
	gbpf_map_instance_destroy(&m);
}

#define PRODUCERS 4
#define RECORDS 200000u

struct ring_arg {
	struct gbpf_map_instance *m;
	uint32_t t;
	uint64_t ok, dropped, discarded;
};

static atomic_int producers_left;

static void *producer(void *p)
{
	struct ring_arg *a = p;

	for (uint32_t i = 0; i < RECORDS; i++) {
		uint64_t rec[2] = {((uint64_t)a->t << 32) | i, ~(((uint64_t)a->t << 32) | i)};
		uint32_t len = 8 + (i % 3) * 4;

		if (a->t % 2 == 0) {
			if (gbpf_ringbuf_output_on(a->m, a->t, rec, len, 0) == 0)
				a->ok++;
			else
				a->dropped++;
		} else {
			uint64_t *r = gbpf_ringbuf_reserve_on(a->m, a->t, len, 0);

			if (!r) {
				a->dropped++;
				continue;
			}
			memcpy(r, rec, len);
			if (i % 10 == 9) {
				gbpf_ringbuf_discard(a->m, r, 0);
				a->discarded++;
			} else {
				gbpf_ringbuf_submit(a->m, r, 0);
				a->ok++;
			}
		}
	}
	atomic_fetch_sub(&producers_left, 1);
	return NULL;
}

struct consumer_state {
	uint64_t consumed;
	int64_t last[PRODUCERS];
	int bad;
};

static int consume_one(void *ctx, const void *data, size_t size)
{
	struct consumer_state *c = ctx;
	uint64_t v, check = 0;
	uint32_t t, i;

	c->consumed++;
	if (size < 8 || size > 16) {
		c->bad++;
		return 0;
	}
	memcpy(&v, data, 8);
	if (size >= 12)
		memcpy(&check, (const uint8_t *)data + 8, size - 8);
	t = (uint32_t)(v >> 32);
	i = (uint32_t)v;
	/* Each producer's records arrive once, in order, with intact contents. */
	if (t >= PRODUCERS || (int64_t)i <= c->last[t] || size != 8 + (i % 3) * 4)
		c->bad++;
	else if (size == 16 && check != ~v)
		c->bad++;
	else
		c->last[t] = i;
	return 0;
}

static void ring_stress(uint32_t nr_sub, const char *what)
{
	struct gbpf_map_desc d = mk_desc(what, GBPF_MAP_TYPE_GPU_RINGBUF, 0, 0, 1u << 15);
	struct ring_arg args[PRODUCERS];
	struct consumer_state c;
	pthread_t th[PRODUCERS];
	struct gbpf_map_instance m;
	uint64_t ok = 0, dropped = 0, discarded = 0;
	int n;

	if (gbpf_map_instance_create(&m, &d, nr_sub)) {
		tap_ok(0, "%s: create", what);
		return;
	}
	memset(&c, 0, sizeof(c));
	for (int t = 0; t < PRODUCERS; t++)
		c.last[t] = -1;
	atomic_store(&producers_left, PRODUCERS);
	for (uint32_t t = 0; t < PRODUCERS; t++) {
		args[t] = (struct ring_arg){.m = &m, .t = t};
		pthread_create(&th[t], NULL, producer, &args[t]);
	}
	while (atomic_load(&producers_left) > 0) {
		n = gbpf_ringbuf_consume(&m, consume_one, &c);
		if (n < 0) {
			c.bad++;
			break;
		}
		if (n == 0)
			sched_yield();
	}
	for (uint32_t t = 0; t < PRODUCERS; t++) {
		pthread_join(th[t], NULL);
		ok += args[t].ok;
		dropped += args[t].dropped;
		discarded += args[t].discarded;
	}
	n = gbpf_ringbuf_consume(&m, consume_one, &c);
	tap_ok(n >= 0 && c.bad == 0, "%s: every record intact, once, in producer order (%d bad)",
	       what, c.bad);
	tap_ok(c.consumed == ok, "%s: consumed %llu == submitted %llu", what,
	       (unsigned long long)c.consumed, (unsigned long long)ok);
	tap_ok(gbpf_ringbuf_dropped(&m) == dropped,
	       "%s: drops counted exactly (%llu header, %llu seen by producers)", what,
	       (unsigned long long)gbpf_ringbuf_dropped(&m), (unsigned long long)dropped);
	tap_ok(c.consumed + dropped + discarded == (uint64_t)PRODUCERS * RECORDS,
	       "%s: produced %u == consumed + dropped + discarded", what, PRODUCERS * RECORDS);
	tap_diag("%s: consumed %llu, dropped %llu, discarded %llu", what,
		 (unsigned long long)c.consumed, (unsigned long long)dropped,
		 (unsigned long long)discarded);
	gbpf_map_instance_destroy(&m);
}

int main(void)
{
	test_hash_stress();
	test_lru_stress();
	ring_stress(1, "ring 1 sub-ring");
	ring_stress(4, "ring 4 sub-rings");
	return tap_done();
}
