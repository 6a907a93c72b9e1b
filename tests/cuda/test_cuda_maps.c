/* SPDX-License-Identifier: MIT */
/*
 * Device maps under many concurrent GPU threads (GBPF_CUDA_THREADS, default
 * 10^6), checked with the host implementation (maps/) on the map memory the
 * plugin copies back after each run: exact hash counts and contents, no
 * duplicates under concurrent inserts of the same keys, NOEXIST / EXIST,
 * delete, E2BIG when full, LRU keeping exactly max_entries, ring buffer and
 * perf event records with records + drops == threads. Skips (TAP) without
 * a CUDA driver or device.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gbpf/helper_ids.h>
#include <gbpf/plugin.h>

#include "map_progs.h"
#include "maps/map.h"
#include "maps/map_layout.h"
#include "tests/tap.h"

static struct gbpf_backend_ops ops;
static struct gbpf_backend *be;
static uint64_t nthreads = 1000000;
static uint32_t nsms = 1;

/* Run @p insns once with @p threads threads on map @p mi; r0 of every thread into @p r0. */
static int run(const char *name, const struct gbpf_insn *insns, size_t n,
	       struct gbpf_map_instance *mi, uint64_t threads, uint64_t *r0, uint64_t *ns)
{
	struct gbpf_prog_desc p = {.sz = sizeof(p), .name = name, .section = "test", .insns = insns,
				   .insn_cnt = n, .maps = mi->desc, .map_cnt = 1,
				   .source_file = "test_cuda_maps.c"};
	struct gbpf_run_opts ro = {.sz = sizeof(ro), .threads = threads};
	struct gbpf_run_result res = {.sz = sizeof(res), .r0 = r0};
	struct gbpf_backend_prog *bp = NULL;
	char log[2048] = "";
	int rc;

	rc = ops.prog_load(be, &p, mi, 1, &bp, log, sizeof(log));
	if (!rc)
		rc = ops.prog_run(bp, &ro, &res, log, sizeof(log));
	if (rc)
		tap_diag("%s: rc %d: %s", name, rc, log);
	if (ns)
		*ns = res.elapsed_ns;
	ops.prog_unload(bp);
	return rc;
}

static uint64_t count_r0(const uint64_t *r0, uint64_t n, int64_t want)
{
	uint64_t c = 0;

	for (uint64_t i = 0; i < n; i++)
		c += r0[i] == (uint64_t)want;
	return c;
}

static struct gbpf_map_hdr *hdr_of(struct gbpf_map_instance *mi)
{
	return (struct gbpf_map_hdr *)mi->mem;
}

static uint64_t iterate_keys(struct gbpf_map_instance *mi)
{
	uint32_t k, next;
	uint64_t c = 0;
	void *prev = NULL;

	while (gbpf_map_get_next_key(mi, prev, &next) == 0 && c <= (uint64_t)mi->desc->max_entries) {
		k = next;
		prev = &k;
		c++;
	}
	return c;
}

static void test_hash_insert(uint32_t type, uint64_t *r0)
{
	int rc;
	struct gbpf_map_desc md = {.sz = sizeof(md), .name = "h", .type = type, .key_size = 4,
				   .value_size = 8, .max_entries = (uint32_t)nthreads};
	struct gbpf_insn prog[MAP_PROG_MAX], base[MAP_PROG_MAX];
	struct gbpf_map_instance mi;
	uint64_t bad = 0, ns = 0, ns0 = 0, i;
	size_t n;

	if (gbpf_map_instance_create(&mi, &md, 1)) {
		tap_ok(0, "hash type %u created", type);
		return;
	}
	n = map_prog_hash_update(prog, 0, GBPF_ANY);
	rc = run("insert", prog, n, &mi, nthreads, r0, &ns);
	tap_ok(rc == 0 &&
		       count_r0(r0, nthreads, 0) == nthreads,
	       "type %u: %llu threads insert distinct keys, all return 0", type,
	       (unsigned long long)nthreads);
	for (i = 0; i < nthreads; i++) {
		uint32_t k = (uint32_t)i;
		uint64_t *v = gbpf_map_lookup(&mi, &k, 0);

		bad += !v || *v != i * 3 + 1;
	}
	tap_ok(bad == 0 && hdr_of(&mi)->count == nthreads && iterate_keys(&mi) == nthreads,
	       "type %u: host finds all %llu keys with their values (%llu bad), count %llu",
	       type, (unsigned long long)nthreads, (unsigned long long)bad,
	       (unsigned long long)hdr_of(&mi)->count);
	/* the same program with the helper call replaced by r0 = 0: the cost of the update */
	memcpy(base, prog, n * sizeof(prog[0]));
	base[n - 2] = (struct gbpf_insn){.code = 0xb7};
	if (run("noupdate", base, n, &mi, nthreads, r0, &ns0) == 0 && ns0)
		tap_diag("type %u: hash insert from %llu threads %.3f ms, same kernel without the "
			 "update %.3f ms, ratio %.2f", type, (unsigned long long)nthreads, ns / 1e6,
			 ns0 / 1e6, (double)ns / (double)ns0);
	n = map_prog_hash_update(prog, 0, GBPF_NOEXIST);
	rc = run("noexist", prog, n, &mi, nthreads, r0, NULL);
	tap_ok(rc == 0 &&
		       count_r0(r0, nthreads, -EEXIST) == nthreads && hdr_of(&mi)->count == nthreads,
	       "type %u: NOEXIST on present keys: -EEXIST from every thread", type);
	/*
	 * Again with every bucket's lock held by someone else: NOEXIST of a present key answers
	 * -EEXIST from its lock-free look, where it used to wait out the spins for the lock and
	 * give -EBUSY (the first launch of a counter probe queued on one lock).
	 */
	{
		struct gbpf_hash_geometry geo;
		unsigned char *mem = mi.mem;

		gbpf_hash_geometry_of(md.type, md.key_size, md.value_size, md.max_entries, &geo);
		for (i = 0; i < geo.nr_buckets; i++)
			*(uint32_t *)(mem + geo.data_off + i * geo.bucket_size + 4) = 1;
		rc = run("noexist_locked", prog, n, &mi, nthreads, r0, NULL);
		for (i = 0; i < geo.nr_buckets; i++)
			*(uint32_t *)(mem + geo.data_off + i * geo.bucket_size + 4) = 0;
		tap_ok(rc == 0 && count_r0(r0, nthreads, -EEXIST) == nthreads &&
			       hdr_of(&mi)->count == nthreads,
		       "type %u: locks held: NOEXIST on present keys -EEXIST from every thread (%llu)", type,
		       (unsigned long long)count_r0(r0, nthreads, -EEXIST));
	}
	n = map_prog_hash_update(prog, 0, GBPF_ANY);
	rc = run("update", prog, n, &mi, nthreads, r0, &ns);
	tap_ok(rc == 0 &&
		       count_r0(r0, nthreads, 0) == nthreads && hdr_of(&mi)->count == nthreads,
	       "type %u: ANY on present keys updates in place (%.3f ms), count unchanged", type,
	       ns / 1e6);
	n = map_prog_hash_delete_even(prog);
	rc = run("delete", prog, n, &mi, nthreads, r0, NULL);
	tap_ok(rc == 0 &&
		       count_r0(r0, nthreads, 0) == nthreads,
	       "type %u: even threads delete their key, all return 0", type);
	bad = 0;
	for (i = 0; i < nthreads; i++) {
		uint32_t k = (uint32_t)i;
		uint64_t *v = gbpf_map_lookup(&mi, &k, 0);

		bad += (i & 1) ? (!v || *v != i * 3 + 1) : v != NULL;
	}
	tap_ok(bad == 0 && hdr_of(&mi)->count == nthreads - (nthreads + 1) / 2,
	       "type %u: after delete: even keys gone, odd keys intact (%llu bad), count %llu", type,
	       (unsigned long long)bad, (unsigned long long)hdr_of(&mi)->count);
	n = map_prog_hash_delete_even(prog);
	rc = run("delete2", prog, n, &mi, nthreads, r0, NULL);
	tap_ok(rc == 0 &&
		       count_r0(r0, nthreads, -ENOENT) == (nthreads + 1) / 2,
	       "type %u: deleting again: -ENOENT from every even thread", type);
	gbpf_map_instance_destroy(&mi);

	md.max_entries = 1000;
	if (gbpf_map_instance_create(&mi, &md, 1))
		return;
	n = map_prog_hash_update(prog, 0, GBPF_EXIST);
	rc = run("exist", prog, n, &mi, nthreads, r0, NULL);
	tap_ok(rc == 0 &&
		       count_r0(r0, nthreads, -ENOENT) == nthreads && hdr_of(&mi)->count == 0,
	       "type %u: EXIST on absent keys: -ENOENT, nothing inserted", type);
	n = map_prog_hash_update(prog, 0, GBPF_ANY);
	rc = run("full", prog, n, &mi, nthreads, r0, NULL);
	tap_ok(rc == 0 && count_r0(r0, nthreads, 0) == 1000 &&
		       count_r0(r0, nthreads, -E2BIG) == nthreads - 1000 &&
		       hdr_of(&mi)->count == 1000 && hdr_of(&mi)->drops == nthreads - 1000 &&
		       iterate_keys(&mi) == 1000,
	       "type %u: 1000 entries: 1000 inserted, %llu -E2BIG, drops %llu", type,
	       (unsigned long long)count_r0(r0, nthreads, -E2BIG),
	       (unsigned long long)hdr_of(&mi)->drops);
	gbpf_map_instance_destroy(&mi);
}

/* Sum of the per-CPU (per-SM) copies of key @k's u64 value; 0 and *missing set when absent. */
static uint64_t slot_sum(struct gbpf_map_instance *mi, const void *k, uint32_t slots, int *missing)
{
	uint64_t sum = 0;

	for (uint32_t s = 0; s < slots; s++) {
		uint64_t *v = gbpf_map_lookup(mi, k, s);

		if (!v) {
			*missing = 1;
			return 0;
		}
		sum += *v;
	}
	return sum;
}

static void test_hash_count(uint32_t type, uint32_t nkeys, uint64_t *r0)
{
	int rc;
	struct gbpf_map_desc md = {.sz = sizeof(md), .name = "c", .type = type, .key_size = 4,
				   .value_size = 8, .max_entries = nkeys};
	struct gbpf_insn prog[MAP_PROG_MAX];
	struct gbpf_map_instance mi;
	uint64_t bad = 0, ns = 0;
	size_t n = map_prog_hash_count(prog, nkeys);
	/* per-CPU: one copy per SM, the counts are the sums of the copies */
	uint32_t slots = type == GBPF_MAP_TYPE_PERCPU_HASH ? nsms : 1;

	if (gbpf_map_instance_create(&mi, &md, slots))
		return;
	rc = run("count", prog, n, &mi, nthreads, r0, &ns);
	tap_ok(rc == 0 && count_r0(r0, nthreads, 0) == nthreads,
	       "type %u: %llu threads insert-or-increment %u shared keys (%.3f ms)", type,
	       (unsigned long long)nthreads, nkeys, ns / 1e6);
	for (uint32_t k = 0; k < nkeys; k++) {
		uint64_t want = nthreads / nkeys + (k < nthreads % nkeys);
		int missing = 0;

		bad += slot_sum(&mi, &k, slots, &missing) != want || missing;
	}
	tap_ok(bad == 0 && hdr_of(&mi)->count == nkeys && iterate_keys(&mi) == nkeys,
	       "type %u: exact counts for all %u keys (%llu bad), no duplicates (count %llu)", type,
	       nkeys, (unsigned long long)bad, (unsigned long long)hdr_of(&mi)->count);
	gbpf_map_instance_destroy(&mi);
}

/*
 * Arrays counted from every thread (the lookups the code generator inlines:
 * ARRAY and PERCPU_ARRAY, the latter into the SM's copy): exact per key,
 * and the per-SM copies really are used (more than one holds counts).
 */
static void test_array_count(uint32_t type, uint32_t nkeys, uint64_t *r0)
{
	struct gbpf_map_desc md = {.sz = sizeof(md), .name = "a", .type = type, .key_size = 4,
				   .value_size = 8, .max_entries = nkeys};
	struct gbpf_insn prog[MAP_PROG_MAX];
	struct gbpf_map_instance mi;
	uint32_t slots = type == GBPF_MAP_TYPE_PERCPU_ARRAY ? nsms : 1, used = 0;
	uint64_t bad = 0;
	size_t n = map_prog_array_count(prog, nkeys);
	int rc, missing = 0;

	if (gbpf_map_instance_create(&mi, &md, slots)) {
		tap_ok(0, "array type %u created", type);
		return;
	}
	rc = run("array count", prog, n, &mi, nthreads, r0, NULL);
	tap_ok(rc == 0 && count_r0(r0, nthreads, 0) == nthreads,
	       "type %u: %llu threads count into %u array keys, every lookup succeeds", type,
	       (unsigned long long)nthreads, nkeys);
	for (uint32_t k = 0; k < nkeys; k++)
		bad += slot_sum(&mi, &k, slots, &missing) != nthreads / nkeys + (k < nthreads % nkeys);
	for (uint32_t s = 0; s < slots; s++) {
		uint32_t k0 = 0;
		uint64_t *v = gbpf_map_lookup(&mi, &k0, s);

		used += v && *v;
	}
	tap_ok(bad == 0 && !missing && (slots == 1 || used > 1),
	       "type %u: exact counts for all %u keys (%llu bad), summed over %u slots (%u used)",
	       type, nkeys, (unsigned long long)bad, slots, used);
	gbpf_map_instance_destroy(&mi);
}

static void test_lru(uint64_t *r0)
{
	int rc;
	struct gbpf_map_desc md = {.sz = sizeof(md), .name = "lru", .type = GBPF_MAP_TYPE_LRU_HASH,
				   .key_size = 4, .value_size = 8, .max_entries = 4096};
	struct gbpf_insn prog[MAP_PROG_MAX];
	struct gbpf_map_instance mi;
	size_t n = map_prog_hash_update(prog, 0, GBPF_ANY);

	/* at least 4 inserts per entry, so that the map overflows and evicts */
	if (md.max_entries > nthreads / 4)
		md.max_entries = (uint32_t)(nthreads / 4);

	if (gbpf_map_instance_create(&mi, &md, 1))
		return;
	rc = run("lru", prog, n, &mi, nthreads, r0, NULL);
	tap_ok(rc == 0 && hdr_of(&mi)->count == md.max_entries &&
		       iterate_keys(&mi) == md.max_entries,
	       "LRU %u entries, %llu threads insert: exactly that many kept (count %llu), %llu inserts "
	       "ok, %llu -E2BIG (eviction lost races), %llu -EBUSY",
	       md.max_entries, (unsigned long long)nthreads, (unsigned long long)hdr_of(&mi)->count,
	       (unsigned long long)count_r0(r0, nthreads, 0),
	       (unsigned long long)count_r0(r0, nthreads, -E2BIG),
	       (unsigned long long)count_r0(r0, nthreads, -EBUSY));
	gbpf_map_instance_destroy(&mi);
}

/* Bucket distance of @p key from its home (the host's layout), or -1 when absent. */
static int64_t home_distance(struct gbpf_map_instance *mi, uint32_t key)
{
	struct gbpf_map_hdr *h = hdr_of(mi);
	uint32_t nb = h->nr_buckets, home = (uint32_t)gbpf_map_hash(&key, 4) & (nb - 1);

	for (uint32_t i = 0; i < nb; i++) {
		const uint8_t *bk = (const uint8_t *)mi->mem + h->data_off + (uint64_t)((home + i) & (nb - 1)) * h->bucket_size;
		uint32_t st, k;

		memcpy(&st, bk, 4);
		memcpy(&k, bk + GBPF_HASH_BUCKET_HDR, 4);
		if (GBPF_BUCKET_STATE(st) == GBPF_BUCKET_READY && k == key)
			return i;
	}
	return -1;
}

/*
 * Lookups of keys placed by the host along long probe runs (the inline
 * lookup reads 4 buckets from home and calls the full lookup after): key 1
 * two buckets past its home, key 3 at least five past it with a tombstone
 * on the way, misses that end at an EMPTY bucket inline or past 4 buckets,
 * in four key patterns per warp: all different, all equal, groups of 4,
 * and 5 keys spread over the lanes. Every thread's answer (the value, or
 * 0xFFFFFFFF for absent) is compared with the host's lookup.
 */
static void test_hash_runs(uint64_t *r0)
{
	static const struct { uint32_t div, mod, mul; const char *what; } pat[] = {
		{1, 1024, 1, "a key per lane"}, {32, 1024, 1, "one key per warp"},
		{4, 1024, 1, "groups of 4 lanes"}, {1, 5, 1, "5 keys spread over the lanes"},
		{1, 3, 3, "keys 0, 3, 6"}};
	struct gbpf_map_desc md = {.sz = sizeof(md), .name = "runs", .type = GBPF_MAP_TYPE_HASH,
				   .key_size = 4, .value_size = 8, .max_entries = 64};
	struct gbpf_insn prog[24];
	struct gbpf_map_instance mi;
	uint32_t first_other = UINT32_MAX, c1 = 0, c3 = 0, nb;
	uint64_t threads = nthreads < (1u << 20) ? nthreads : (1u << 20);
	int64_t d1, d3;

	if (gbpf_map_instance_create(&mi, &md, 1)) {
		tap_ok(0, "hash for probe runs created");
		return;
	}
	nb = hdr_of(&mi)->nr_buckets;
#define HOME(k) ((uint32_t)gbpf_map_hash(&(k), 4) & (nb - 1))
#define PUT(k)                                                                                     \
	do {                                                                                       \
		uint64_t v_ = (uint64_t)(k) * 1000 + 7;                                            \
		gbpf_map_update(&mi, &(k), &v_, GBPF_ANY, 0);                                      \
	} while (0)
	{
		uint32_t one = 1, three = 3;

		for (uint32_t k = 1024; k < (1u << 24) && c1 < 2; k++)
			if (HOME(k) == HOME(one)) {
				PUT(k);
				c1++;
			}
		PUT(one);
		for (uint32_t k = 1024; k < (1u << 24) && c3 < 5; k++)
			if (HOME(k) == HOME(three) && HOME(k) != HOME(one)) {
				PUT(k);
				if (first_other == UINT32_MAX)
					first_other = k;
				c3++;
			}
		PUT(three);
		if (first_other != UINT32_MAX)
			gbpf_map_delete(&mi, &first_other);
		for (uint32_t k = 100, n = 0; k < 1024 && n < 40; k += 23, n++)
			if (!gbpf_map_lookup(&mi, &k, 0))
				PUT(k);
		d1 = home_distance(&mi, one);
		d3 = home_distance(&mi, three);
	}
#undef PUT
#undef HOME
	tap_ok(d1 >= 2 && d3 >= 5 && first_other != UINT32_MAX,
	       "probe runs set up: key 1 %lld and key 3 %lld buckets from home (past a tombstone; run keys from 1024 up), %llu keys",
	       (long long)d1, (long long)d3, (unsigned long long)hdr_of(&mi)->count);
	for (size_t p = 0; p < sizeof(pat) / sizeof(pat[0]); p++) {
		size_t n = 0;
		uint64_t bad = 0, hits = 0;
		int rc;

#define E(c, d, s, o, i) (prog[n++] = (struct gbpf_insn){.code = (c), .dst = (d), .src = (s), .off = (o), .imm = (i)})
		E(0x85, 0, 0, 0, GBPF_HELPER_GPU_GLOBAL_THREAD_ID);
		E(0x37, 0, 0, 0, (int32_t)pat[p].div);
		E(0x97, 0, 0, 0, (int32_t)pat[p].mod);
		E(0x27, 0, 0, 0, (int32_t)pat[p].mul);
		E(0x57, 0, 0, 0, 1023);
		E(0x63, 10, 0, -4, 0);
		E(0x18, 1, GBPF_PSEUDO_MAP_IDX, 0, 0);
		E(0, 0, 0, 0, 0);
		E(0xbf, 2, 10, 0, 0);
		E(0x07, 2, 0, 0, -4);
		E(0x85, 0, 0, 0, GBPF_HELPER_MAP_LOOKUP_ELEM);
		E(0x15, 0, 0, 2, 0); /* if r0 == 0 goto miss */
		E(0x79, 0, 0, 0, 0);
		E(0x95, 0, 0, 0, 0);
		E(0xb4, 0, 0, 0, -1); /* miss: 0xFFFFFFFF */
		E(0x95, 0, 0, 0, 0);
#undef E
		rc = run("hash runs", prog, n, &mi, threads, r0, NULL);
		for (uint64_t t = 0; t < threads && !rc; t++) {
			uint32_t key = (uint32_t)(((t / pat[p].div) % pat[p].mod) * pat[p].mul & 1023);
			const uint64_t *v = gbpf_map_lookup(&mi, &key, 0);
			uint64_t want = v ? *v : 0xFFFFFFFFull;

			bad += r0[t] != want;
			hits += v != NULL;
		}
		tap_ok(rc == 0 && bad == 0 && hits > 0 && hits < threads,
		       "hash lookups along probe runs, %s: %llu threads, %llu hits, %llu wrong", pat[p].what,
		       (unsigned long long)threads, (unsigned long long)hits, (unsigned long long)bad);
	}
	gbpf_map_instance_destroy(&mi);
}

struct consumed {
	uint8_t *seen;
	uint64_t records, bad, dup, odd;
};

static int on_record(void *ctx, const void *data, size_t size)
{
	struct consumed *c = ctx;
	uint64_t w[2];

	c->records++;
	if (size != 16) {
		c->bad++;
		return 0;
	}
	memcpy(w, data, 16);
	if (w[0] >= nthreads || w[1] != (w[0] ^ MAP_PROG_MAGIC)) {
		c->bad++;
		return 0;
	}
	c->dup += c->seen[w[0]];
	c->seen[w[0]] = 1;
	c->odd += w[0] & 1;
	return 0;
}

static void consume(struct gbpf_map_instance *mi, struct consumed *c)
{
	int rc;

	memset(c->seen, 0, nthreads);
	c->records = c->bad = c->dup = c->odd = 0;
	rc = gbpf_ringbuf_consume(mi, on_record, c);
	if (rc < 0)
		tap_diag("consume: %d", rc);
}

static void test_rings(uint64_t *r0)
{
	int rc;
	struct gbpf_map_desc rb = {.sz = sizeof(rb), .name = "rb", .type = GBPF_MAP_TYPE_RINGBUF,
				   .max_entries = 1u << 22};
	struct gbpf_map_desc pe = {.sz = sizeof(pe), .name = "ev",
				   .type = GBPF_MAP_TYPE_PERF_EVENT_ARRAY, .key_size = 4,
				   .value_size = 4};
	struct gbpf_insn prog[MAP_PROG_MAX];
	struct gbpf_map_instance mi;
	struct consumed c = {.seen = calloc(nthreads, 1)};
	uint64_t drops, ns = 0;
	size_t n;

	if (!c.seen || gbpf_map_instance_create(&mi, &rb, nsms)) {
		tap_ok(0, "ring buffer created");
		free(c.seen);
		return;
	}
	n = map_prog_ring_output(prog);
	rc = run("rb_output", prog, n, &mi, nthreads, r0, &ns);
	tap_ok(rc == 0, "ringbuf_output from %llu threads "
	       "(%u sub-rings, %.3f ms)", (unsigned long long)nthreads, hdr_of(&mi)->nr_slots, ns / 1e6);
	consume(&mi, &c);
	drops = gbpf_ringbuf_dropped(&mi);
	tap_ok(c.records + drops == nthreads && c.bad == 0 && c.dup == 0 &&
		       c.records == count_r0(r0, nthreads, 0) && drops == count_r0(r0, nthreads, -EAGAIN),
	       "ringbuf_output: %llu records + %llu dropped == %llu, intact, no duplicates",
	       (unsigned long long)c.records, (unsigned long long)drops, (unsigned long long)nthreads);
	/*
	 * Reserve / submit / discard in each form (map_progs.h): a record in the frame is never
	 * refused at reserve (r0 is not 0), a full ring drops it at submit, counted.
	 */
	for (int f = 0; f < MAP_PROG_RSV_FORMS; f++) {
		bool in_frame = f < MAP_PROG_RSV_SPILLED;
		uint64_t before = gbpf_ringbuf_dropped(&mi), dropped, failed, submitted;

		n = map_prog_ring_reserve(prog, (enum map_prog_reserve_form)f);
		rc = run("rb_reserve", prog, n, &mi, nthreads, r0, NULL);
		tap_ok(rc == 0, "ringbuf_reserve/submit/discard, form %d", f);
		consume(&mi, &c);
		dropped = gbpf_ringbuf_dropped(&mi) - before;
		failed = count_r0(r0, nthreads, 0);
		submitted = count_r0(r0, nthreads, 1);
		tap_ok(c.odd == 0 && c.bad == 0 && c.dup == 0 && failed + submitted + count_r0(r0, nthreads, 2) == nthreads &&
			       (in_frame ? failed == 0 && c.records + dropped == submitted
					 : c.records == submitted && dropped == failed),
		       "reserve, form %d (%s): %llu submitted records delivered, %llu discarded skipped, %llu dropped "
		       "(%llu at reserve)", f, in_frame ? "frame" : "ring", (unsigned long long)c.records,
		       (unsigned long long)count_r0(r0, nthreads, 2), (unsigned long long)dropped,
		       (unsigned long long)failed);
	}
	if (nthreads % 2) {
		tap_skip("two records at once: the thread count is odd (the last one would write an id past it)");
	} else {
		uint64_t before = gbpf_ringbuf_dropped(&mi), pairs = nthreads / 2;

		n = map_prog_ring_reserve_pair(prog);
		rc = run("rb_reserve_pair", prog, n, &mi, nthreads, r0, NULL);
		consume(&mi, &c);
		/* even threads submit the records of tid and tid + 1: every id below the even count once */
		tap_ok(rc == 0 && count_r0(r0, nthreads, 1) == pairs && c.bad == 0 && c.dup == 0 &&
			       c.records + gbpf_ringbuf_dropped(&mi) - before == 2 * pairs,
		       "two records reserved at once, 4-byte stores, submitted in reverse: %llu delivered "
		       "(%llu odd), %llu dropped", (unsigned long long)c.records, (unsigned long long)c.odd,
		       (unsigned long long)(gbpf_ringbuf_dropped(&mi) - before));
	}
	gbpf_map_instance_destroy(&mi);

	if (gbpf_map_instance_create(&mi, &pe, nsms)) {
		tap_ok(0, "perf event array created");
		free(c.seen);
		return;
	}
	n = map_prog_perf_output(prog);
	rc = run("perf", prog, n, &mi, nthreads, r0, NULL);
	tap_ok(rc == 0, "perf_event_output from %llu threads "
	       "(%u rings)", (unsigned long long)nthreads, hdr_of(&mi)->nr_slots);
	consume(&mi, &c);
	drops = gbpf_ringbuf_dropped(&mi);
	tap_ok(c.records + drops == nthreads && c.bad == 0 && c.dup == 0 &&
		       c.records == count_r0(r0, nthreads, 0) && drops == count_r0(r0, nthreads, -ENOSPC),
	       "perf_event_output: %llu records + %llu dropped == %llu, intact",
	       (unsigned long long)c.records, (unsigned long long)drops, (unsigned long long)nthreads);
	gbpf_map_instance_destroy(&mi);
	free(c.seen);
}

struct sized {
	uint8_t *seen;
	int per_lane;
	uint32_t fixed; /* every record this many bytes (map_prog_ring_const), else 0 */
	uint64_t threads, records, bad, dup, words;
};

/* a record of map_prog_ring_sizes: its size follows from its thread, word k = (tid << 8) + k */
static int on_sized(void *ctx, const void *data, size_t size)
{
	struct sized *c = ctx;
	uint64_t w[7], tid;

	c->records++;
	if (size < 8 || size > 56 || size % 8) {
		c->bad++;
		return 0;
	}
	memcpy(w, data, size);
	tid = w[0] >> 8;
	if (tid >= c->threads || size != (c->fixed ? c->fixed : 8 * ((c->per_lane ? tid : tid >> 5) % 7 + 1))) {
		c->bad++;
		return 0;
	}
	for (size_t k = 0; k < size / 8; k++)
		if (w[k] != (tid << 8) + k) {
			c->bad++;
			return 0;
		}
	c->words += size / 8;
	c->dup += c->seen[tid];
	c->seen[tid] = 1;
	return 0;
}

/* Threads of the sized ring tests: whole warps but the last, half full, where there are several. */
static uint64_t sized_threads(void)
{
	return (nthreads & ~31ull) > 32 ? (nthreads & ~31ull) - 16 : nthreads;
}

/*
 * bpf_ringbuf_output of a constant size, 8..56 bytes, from the frame: the ring's protocol written
 * into the program (ptx_ring_emit_output_inline), whole warps through the block write of that
 * size and the half-full last warp lane by lane. One ring, consumed after each size.
 */
static void test_ring_const(uint64_t *r0)
{
	uint64_t threads = sized_threads();
	struct gbpf_map_desc rb = {.sz = sizeof(rb), .name = "rb", .type = GBPF_MAP_TYPE_RINGBUF,
				   .max_entries = 1u << 28};
	struct gbpf_insn prog[MAP_PROG_MAX];
	struct gbpf_map_instance mi;

	if (gbpf_map_instance_create(&mi, &rb, nsms)) {
		tap_ok(0, "ring buffer of 256 MiB created");
		return;
	}
	for (uint32_t bytes = 8; bytes <= 56; bytes += 8) {
		struct sized c = {.seen = calloc(threads, 1), .fixed = bytes, .threads = threads};
		uint64_t before = gbpf_ringbuf_dropped(&mi), drops;
		size_t n = map_prog_ring_const(prog, bytes);
		int rc = c.seen ? run("rb_const", prog, n, &mi, threads, r0, NULL) : -ENOMEM;

		if (!rc)
			rc = gbpf_ringbuf_consume(&mi, on_sized, &c);
		drops = gbpf_ringbuf_dropped(&mi) - before;
		tap_ok(rc >= 0 && c.records + drops == threads && c.bad == 0 && c.dup == 0 &&
			       c.records == count_r0(r0, threads, 0) && drops == count_r0(r0, threads, -EAGAIN) &&
			       c.records > threads / 2,
		       "ringbuf_output of %u-byte records by value, written inline: %llu records + %llu dropped == "
		       "%llu, every word right (%llu wrong), no duplicates",
		       bytes, (unsigned long long)c.records, (unsigned long long)drops, (unsigned long long)threads,
		       (unsigned long long)c.bad);
		free(c.seen);
	}
	gbpf_map_instance_destroy(&mi);
}

struct divergent {
	uint8_t *seen; /* per thread, bit i: record i arrived */
	uint64_t threads, records, bad, dup;
};

/* a record of map_prog_ring_divergent: 3 words (tid << 8) + (i << 4) + k, i <= tid % 5 */
static int on_divergent(void *ctx, const void *data, size_t size)
{
	struct divergent *c = ctx;
	uint64_t w[3], tid, i;

	c->records++;
	if (size != sizeof(w)) {
		c->bad++;
		return 0;
	}
	memcpy(w, data, sizeof(w));
	tid = w[0] >> 8;
	i = (w[0] & 0xff) >> 4;
	if (tid >= c->threads || i > tid % 5 || w[0] != (tid << 8) + (i << 4) || w[1] != w[0] + 1 ||
	    w[2] != w[0] + 2) {
		c->bad++;
		return 0;
	}
	c->dup += (c->seen[tid] >> i) & 1;
	c->seen[tid] |= (uint8_t)(1u << i);
	return 0;
}

/*
 * The inline ring output where the lanes of a warp arrive at different times, in groups that
 * change from record to record (map_prog_ring_divergent): every record once and intact, the
 * failures each thread counted are the ring's drops. The group is the lanes that arrive together
 * (activemask): two groups of one warp must never take each other's place or outcome.
 */
static void test_ring_divergent(uint64_t *r0)
{
	uint64_t threads = sized_threads(), want = 0, failed = 0, missing = 0, drops;
	struct gbpf_map_desc rb = {.sz = sizeof(rb), .name = "rb", .type = GBPF_MAP_TYPE_RINGBUF,
				   .max_entries = 1u << 28};
	struct divergent c = {.seen = calloc(threads, 1), .threads = threads};
	struct gbpf_insn prog[MAP_PROG_MAX];
	struct gbpf_map_instance mi;
	size_t n = map_prog_ring_divergent(prog);
	int rc;

	if (!c.seen || gbpf_map_instance_create(&mi, &rb, nsms)) {
		tap_ok(0, "ring buffer of 256 MiB created");
		free(c.seen);
		return;
	}
	rc = run("rb_divergent", prog, n, &mi, threads, r0, NULL);
	if (!rc)
		rc = gbpf_ringbuf_consume(&mi, on_divergent, &c);
	drops = gbpf_ringbuf_dropped(&mi);
	for (uint64_t t = 0; t < threads; t++) {
		uint8_t all = (uint8_t)((1u << (t % 5 + 1)) - 1);

		want += t % 5 + 1;
		failed += r0[t];
		missing += c.seen[t] != all;
	}
	tap_ok(rc >= 0 && c.records + drops == want && c.bad == 0 && c.dup == 0 && failed == drops &&
		       (drops || missing == 0) && c.records > want / 2,
	       "ringbuf_output inline from lanes arriving at different times: %llu records + %llu dropped == "
	       "%llu (1 to 5 a thread), every word right (%llu wrong), no duplicates (%llu), the threads "
	       "counted %llu failures",
	       (unsigned long long)c.records, (unsigned long long)drops, (unsigned long long)want,
	       (unsigned long long)c.bad, (unsigned long long)c.dup, (unsigned long long)failed);
	gbpf_map_instance_destroy(&mi);
	free(c.seen);
}

/*
 * bpf_ringbuf_output of records of every size the warp-wide write takes (1..7 data words plus
 * the header): one size a warp goes through the whole-warp exchange (ptx_ring.c,
 * emit_ring_wput_warp), sizes mixed in a warp through the general one; the last warp is half
 * full (one size: the general path's contiguous block, whose code lies before the whole warp's).
 * Every word checked.
 */
static void test_ring_sizes(uint64_t *r0)
{
	struct gbpf_map_desc rb = {.sz = sizeof(rb), .name = "rb", .type = GBPF_MAP_TYPE_RINGBUF,
				   .max_entries = 1u << 28};
	struct gbpf_insn prog[MAP_PROG_MAX];
	struct gbpf_map_instance mi;
	uint64_t threads = sized_threads();

	for (int per_lane = 0; per_lane < 2; per_lane++) {
		struct sized c = {.seen = calloc(threads, 1), .per_lane = per_lane, .threads = threads};
		uint64_t drops;
		size_t n = map_prog_ring_sizes(prog, per_lane);
		int rc;

		if (!c.seen || gbpf_map_instance_create(&mi, &rb, nsms)) {
			tap_ok(0, "ring buffer of 256 MiB created");
			free(c.seen);
			return;
		}
		rc = run("rb_sizes", prog, n, &mi, threads, r0, NULL);
		if (!rc)
			rc = gbpf_ringbuf_consume(&mi, on_sized, &c);
		drops = gbpf_ringbuf_dropped(&mi);
		tap_ok(rc >= 0 && c.records + drops == threads && c.bad == 0 && c.dup == 0 &&
			       c.records == count_r0(r0, threads, 0) && c.records > threads / 2,
		       "ringbuf_output of 8..56-byte records, %s: %llu records (%llu words) + %llu dropped == %llu, "
		       "every word right (%llu wrong), no duplicates",
		       per_lane ? "sizes mixed in a warp" : "one size a warp", (unsigned long long)c.records,
		       (unsigned long long)c.words, (unsigned long long)drops, (unsigned long long)threads,
		       (unsigned long long)c.bad);
		if (c.records + drops != threads) {
			/* which threads' records are missing, and what they returned */
			int shown = 0;

			for (uint64_t t = 0; t < threads && shown < 8; t++)
				if (!c.seen[t] && (!t || c.seen[t - 1])) {
					tap_diag("missing from thread %llu (warp %llu, %llu bytes), r0 %lld",
						 (unsigned long long)t, (unsigned long long)t / 32,
						 (unsigned long long)(8 * ((per_lane ? t : t >> 5) % 7 + 1)),
						 (long long)r0[t]);
					shown++;
				}
			/* where each sub-ring's consumption stopped: the record there */
			shown = 0;
			for (uint32_t sr = 0; sr < hdr_of(&mi)->nr_slots && shown < 6; sr++) {
				const struct gbpf_ring_ctl *ctl =
					(const struct gbpf_ring_ctl *)((uint8_t *)mi.mem + hdr_of(&mi)->data_off) + sr;
				uint64_t mask = hdr_of(&mi)->sub_size - 1, at = ctl->consumer_pos & mask;
				const uint32_t *w = (const void *)((uint8_t *)mi.mem + hdr_of(&mi)->aux_off +
								   sr * hdr_of(&mi)->sub_size + at);

				if (ctl->consumer_pos == ctl->producer_pos)
					continue;
				tap_diag("sub-ring %u stopped at %llu of %llu: words %08x %08x %08x %08x %08x %08x", sr,
					 (unsigned long long)ctl->consumer_pos, (unsigned long long)ctl->producer_pos,
					 w[0], w[1], w[2], w[3], w[4], w[5]);
				shown++;
			}
		}
		gbpf_map_instance_destroy(&mi);
		free(c.seen);
	}
}

/* trace_printk from 64 GPU threads reaches the host's stdout (captured into a file). */
static void test_printk(uint64_t *r0)
{
	static const struct gbpf_map_desc md = {.sz = sizeof(md), .name = "unused",
						.type = GBPF_MAP_TYPE_ARRAY, .key_size = 4,
						.value_size = 8, .max_entries = 1};
	struct gbpf_insn prog[MAP_PROG_MAX];
	struct gbpf_map_instance mi;
	uint8_t seen[64] = {0};
	char line[128];
	FILE *cap = tmpfile();
	int saved, rc, lines = 0, distinct = 0;
	size_t n = map_prog_printk(prog, 64);

	if (!cap || gbpf_map_instance_create(&mi, &md, 1)) {
		tap_ok(0, "printk capture set up");
		if (cap)
			fclose(cap);
		return;
	}
	fflush(stdout);
	saved = dup(1);
	dup2(fileno(cap), 1);
	rc = run("printk", prog, n, &mi, nthreads, r0, NULL); /* r0 holds nthreads */
	fflush(stdout);
	dup2(saved, 1);
	close(saved);
	rewind(cap);
	while (fgets(line, sizeof(line), cap)) {
		unsigned t;

		if (sscanf(line, "gpu %u", &t) == 1 && t < 64) {
			lines++;
			distinct += !seen[t];
			seen[t] = 1;
		}
	}
	fclose(cap);
	tap_ok(rc == 0 && lines == 64 && distinct == 64,
	       "trace_printk from 64 GPU threads printed on the host: %d lines, %d distinct (rc %d)",
	       lines, distinct, rc);
	gbpf_map_instance_destroy(&mi);
}

int main(void)
{
	const char *plugin = getenv("GBPF_CUDA_PLUGIN");
	gbpf_plugin_get_backend_table_fn entry;
	struct gbpf_backend_caps caps = {.sz = sizeof(caps)};
	struct gbpf_backend_open_opts oo = {.sz = sizeof(oo), .device_index = -1};
	struct gbpf_device_info dev[4];
	uint32_t count = 4;
	char why[512] = "";
	uint64_t *r0;
	void *h;

	if (!plugin)
		plugin = GBPF_CUDA_PLUGIN_PATH;
	if (getenv("GBPF_CUDA_THREADS"))
		nthreads = strtoull(getenv("GBPF_CUDA_THREADS"), NULL, 0);
	if (nthreads < 2000 || nthreads > (1u << 26))
		nthreads = 1000000;
	h = dlopen(plugin, RTLD_NOW | RTLD_LOCAL);
	if (!tap_ok(h != NULL, "dlopen %s", plugin))
		return tap_done();
	entry = (gbpf_plugin_get_backend_table_fn)dlsym(h, GBPF_PLUGIN_ENTRY_SYMBOL);
	ops.sz = sizeof(ops);
	if (!tap_ok(entry && entry(GBPF_PLUGIN_ABI_VERSION, &ops, &caps) == 0, "plugin table"))
		return tap_done();
	if (ops.query_devices(dev, &count, why, sizeof(why)) || count == 0) {
		tap_skip("no CUDA device: %s", why);
		dlclose(h);
		return tap_done();
	}
	nsms = dev[0].compute_units ? dev[0].compute_units : 1;
	if (!tap_ok(ops.open(&oo, &be) == 0, "open backend on %s (%u SMs)", dev[0].name, nsms))
		return tap_done();
	r0 = calloc(nthreads, sizeof(*r0));
	if (r0) {
		test_hash_insert(GBPF_MAP_TYPE_HASH, r0);
		test_hash_insert(GBPF_MAP_TYPE_GPU_HASH, r0);
		test_hash_count(GBPF_MAP_TYPE_HASH, 1000, r0);
		test_hash_count(GBPF_MAP_TYPE_GPU_HASH, 7, r0);
		test_hash_count(GBPF_MAP_TYPE_PERCPU_HASH, 1000, r0);
		test_array_count(GBPF_MAP_TYPE_ARRAY, 16, r0);
		test_array_count(GBPF_MAP_TYPE_PERCPU_ARRAY, 16, r0);
		/* planes smaller than a line: each SM's copy padded to 128 bytes (map_layout.h) */
		test_array_count(GBPF_MAP_TYPE_PERCPU_ARRAY, 3, r0);
		test_hash_count(GBPF_MAP_TYPE_PERCPU_HASH, 3, r0);
		test_hash_runs(r0);
		test_lru(r0);
		test_rings(r0);
		test_ring_sizes(r0);
		test_ring_const(r0);
		test_ring_divergent(r0);
		test_printk(r0);
	}
	free(r0);
	ops.close(be);
	dlclose(h);
	return tap_done();
}
