/* SPDX-License-Identifier: MIT */
/*
 * The device-map mirror protocol of `gbpf run` on CUDA (plugins/cuda/
 * map_mirror.c) on the CPU: "device memory" is host memory and the copies
 * are memcpy, so concurrent producers on the device ring, the forwarder and
 * the controller's consumer run as threads. Checks that every record is
 * delivered once, in order per producer, intact, that a slow consumer makes
 * the forwarder wait instead of dropping, that device drops reach the host
 * counters exactly, and that snapshots copy array and hash maps back.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "maps/map.h"
#include "maps/map_layout.h"
#include "plugins/cuda/map_mirror.h"
#include "tap.h"

static int h_alloc(void *ctx, uint64_t *p, size_t n)
{
	(void)ctx;
	*p = (uint64_t)(uintptr_t)calloc(1, n);
	return *p ? 0 : -1;
}
static void h_release(void *ctx, uint64_t p)
{
	(void)ctx;
	free((void *)(uintptr_t)p);
}
/* Word-wise atomic copies: producers write the "device" memory concurrently. */
static void copy_words(void *dst, const void *src, size_t n)
{
	for (size_t i = 0; i + 8 <= n; i += 8)
		__atomic_store_n((uint64_t *)((char *)dst + i),
				 __atomic_load_n((const uint64_t *)((const char *)src + i), __ATOMIC_ACQUIRE),
				 __ATOMIC_RELEASE);
}
static int h_to_host(void *ctx, void *d, uint64_t s, size_t n)
{
	(void)ctx;
	copy_words(d, (void *)(uintptr_t)s, n);
	return 0;
}
static int h_to_device(void *ctx, uint64_t d, const void *s, size_t n)
{
	(void)ctx;
	copy_words((void *)(uintptr_t)d, s, n);
	return 0;
}
static int h_zero(void *ctx, uint64_t d, size_t n)
{
	(void)ctx;
	for (size_t i = 0; i + 8 <= n; i += 8)
		__atomic_store_n((uint64_t *)(uintptr_t)(d + i), 0, __ATOMIC_RELEASE);
	return 0;
}
static const struct gbpf_dev_mem_ops ops = {
	.alloc = h_alloc, .release = h_release, .to_host = h_to_host, .to_device = h_to_device, .zero = h_zero,
};

#define PRODUCERS 4
#define PER_PRODUCER 20000

struct rec {
	uint32_t producer, seq;
	uint64_t check;
};

struct run {
	struct gbpf_map_mirror mirror;
	struct gbpf_map_instance host, dev;
	struct gbpf_map_desc dev_desc;
	atomic_int producers_done, stop;
	atomic_ullong produced_ok, produced_dropped;
	uint32_t next_seq[PRODUCERS];
	uint64_t received, bad, out_of_order;
	int slow_consumer;
};

static void *producer(void *arg)
{
	struct run *r = arg;
	static atomic_uint ids;
	uint32_t id = atomic_fetch_add(&ids, 1) % PRODUCERS;

	for (uint32_t i = 0; i < PER_PRODUCER; i++) {
		struct rec x = {.producer = id, .seq = i, .check = ((uint64_t)id << 32 | i) * 0x9e3779b97f4a7c15ull};

		/*
		 * One sub-ring per producer keeps per-producer order observable. Odd producers
		 * write as the GPU's reserve does on a ring in device memory: the header carries
		 * GBPF_RING_GPU_SCOPE, which the forwarder must neither count as length nor pass on.
		 */
		if (id & 1) {
			struct gbpf_ring_rec *h;
			void *d = gbpf_ringbuf_reserve_on(&r->dev, id, sizeof(x), 0);

			if (!d) {
				atomic_fetch_add(&r->produced_dropped, 1);
				continue;
			}
			h = (struct gbpf_ring_rec *)d - 1;
			__atomic_fetch_or(&h->len, GBPF_RING_GPU_SCOPE, __ATOMIC_RELAXED);
			memcpy(d, &x, sizeof(x));
			gbpf_ringbuf_submit(&r->dev, d, 0);
			atomic_fetch_add(&r->produced_ok, 1);
		} else if (gbpf_ringbuf_output_on(&r->dev, id, &x, sizeof(x), 0) == 0)
			atomic_fetch_add(&r->produced_ok, 1);
		else
			atomic_fetch_add(&r->produced_dropped, 1);
	}
	atomic_fetch_add(&r->producers_done, 1);
	return NULL;
}

static void *forwarder(void *arg)
{
	struct run *r = arg;

	while (!atomic_load(&r->stop))
		gbpf_map_mirror_forward(&r->mirror, &ops, NULL);
	return NULL;
}

static int on_record(void *ctx, const void *data, size_t size)
{
	struct run *r = ctx;
	const struct rec *x = data;

	if (size != sizeof(*x) || x->producer >= PRODUCERS ||
	    x->check != (((uint64_t)x->producer << 32 | x->seq) * 0x9e3779b97f4a7c15ull)) {
		r->bad++;
		return 0;
	}
	/* Records may be lost (device drops) but never reordered within a producer. */
	if (x->seq < r->next_seq[x->producer])
		r->out_of_order++;
	r->next_seq[x->producer] = x->seq + 1;
	r->received++;
	return 0;
}

static void ring_run(uint32_t dev_ring_bytes, uint32_t host_ring_bytes, int slow, const char *what)
{
	struct gbpf_map_desc hd = {.sz = sizeof(hd), .name = "events", .type = GBPF_MAP_TYPE_RINGBUF, .max_entries = host_ring_bytes};
	struct run r = {.slow_consumer = slow};
	pthread_t p[PRODUCERS], f;
	char why[256] = "";
	uint64_t drops;
	int rc;

	if (gbpf_map_instance_create(&r.host, &hd, 1)) {
		tap_ok(0, "%s: host ring created", what);
		return;
	}
	rc = gbpf_map_mirror_init(&r.mirror, &r.host, dev_ring_bytes, PRODUCERS, &ops, why, sizeof(why));
	tap_ok(rc == 0 && r.mirror.ring && r.mirror.dev_rings == PRODUCERS, "%s: device ring of %u bytes, %u sub-rings (%s)",
	       what, dev_ring_bytes, r.mirror.dev_rings, why);
	if (rc) {
		gbpf_map_instance_destroy(&r.host);
		return;
	}
	r.dev_desc = hd;
	r.dev_desc.max_entries = dev_ring_bytes;
	r.dev.desc = &r.dev_desc;
	r.dev.mem = (void *)(uintptr_t)r.mirror.dev;
	r.dev.mem_size = r.mirror.dev_size;
	pthread_create(&f, NULL, forwarder, &r);
	for (int i = 0; i < PRODUCERS; i++)
		pthread_create(&p[i], NULL, producer, &r);
	/* The controller: drains until producers are done and both rings are empty. */
	for (int idle = 0; idle < 200;) {
		uint64_t before = r.received;

		if (slow)
			usleep(2000);
		gbpf_ringbuf_consume(&r.host, on_record, &r);
		if (atomic_load(&r.producers_done) == PRODUCERS && r.received == before) {
			idle++;
			usleep(500);
		} else {
			idle = 0;
		}
	}
	atomic_store(&r.stop, 1);
	pthread_join(f, NULL);
	for (int i = 0; i < PRODUCERS; i++)
		pthread_join(p[i], NULL);
	gbpf_map_mirror_forward(&r.mirror, &ops, NULL);
	gbpf_ringbuf_consume(&r.host, on_record, &r);
	drops = gbpf_ringbuf_dropped(&r.host);
	tap_ok(r.bad == 0 && r.out_of_order == 0, "%s: every record intact and in order (%llu bad, %llu reordered)",
	       what, (unsigned long long)r.bad, (unsigned long long)r.out_of_order);
	tap_ok(r.received == atomic_load(&r.produced_ok),
	       "%s: every record the device ring accepted reached the host (%llu of %llu)", what,
	       (unsigned long long)r.received, (unsigned long long)atomic_load(&r.produced_ok));
	tap_ok(drops == atomic_load(&r.produced_dropped) &&
		       r.received + drops == (uint64_t)PRODUCERS * PER_PRODUCER,
	       "%s: host drops == device drops exactly (%llu), received + drops == produced", what,
	       (unsigned long long)drops);
	if (slow)
		tap_ok(r.mirror.waits > 0, "%s: a slow consumer made the forwarder wait (%llu waits), not drop", what,
		       (unsigned long long)r.mirror.waits);
	gbpf_map_mirror_fini(&r.mirror, &ops);
	gbpf_map_instance_destroy(&r.host);
}

static void snapshot_maps(void)
{
	struct gbpf_map_desc ad = {.sz = sizeof(ad), .name = "counts", .type = GBPF_MAP_TYPE_ARRAY, .key_size = 4, .value_size = 8, .max_entries = 16};
	struct gbpf_map_desc hd = {.sz = sizeof(hd), .name = "h", .type = GBPF_MAP_TYPE_HASH, .key_size = 8, .value_size = 8, .max_entries = 64};
	struct gbpf_map_instance a, h, da, dh;
	struct gbpf_map_mirror ma, mh;
	char why[256] = "";
	uint64_t v = 77, k = 12345, *got;
	uint32_t i = 3;

	if (gbpf_map_instance_create(&a, &ad, 1) || gbpf_map_instance_create(&h, &hd, 1)) {
		tap_ok(0, "snapshot maps created");
		return;
	}
	tap_ok(!gbpf_map_mirror_init(&ma, &a, 0, 0, &ops, why, sizeof(why)) && !ma.ring &&
		       !gbpf_map_mirror_init(&mh, &h, 0, 0, &ops, why, sizeof(why)),
	       "array and hash maps get device copies (%s)", why);
	da = a;
	da.mem = (void *)(uintptr_t)ma.dev;
	dh = h;
	dh.mem = (void *)(uintptr_t)mh.dev;
	gbpf_map_update(&da, &i, &v, GBPF_ANY, 0);
	gbpf_map_update(&dh, &k, &v, GBPF_ANY, 0);
	tap_ok(!gbpf_map_lookup(&h, &k, 0), "a device update is not visible before a snapshot");
	tap_ok(!gbpf_map_mirror_snapshot(&ma, &ops) && !gbpf_map_mirror_snapshot(&mh, &ops), "snapshots copied");
	got = gbpf_map_lookup(&a, &i, 0);
	tap_ok(got && *got == 77, "array value reached the host block");
	got = gbpf_map_lookup(&h, &k, 0);
	tap_ok(got && *got == 77, "hash entry reached the host block");
	gbpf_map_mirror_fini(&ma, &ops);
	gbpf_map_mirror_fini(&mh, &ops);
	gbpf_map_instance_destroy(&a);
	gbpf_map_instance_destroy(&h);
}

/*
 * The spread of a ring's records over its device sub-rings: one sub-ring flooded past its size
 * (drops), two others lightly used, one unused.
 */
static void ring_stats(void)
{
	struct gbpf_map_desc hd = {.sz = sizeof(hd), .name = "events", .type = GBPF_MAP_TYPE_RINGBUF,
				   .max_entries = 1u << 14};
	struct gbpf_map_desc dd = hd;
	struct gbpf_map_instance host, dev;
	struct gbpf_map_mirror m;
	struct gbpf_map_mirror_ring_stats st;
	static const uint32_t per_sub[4] = {10, 20, 1000, 0};
	struct rec x = {0};
	uint64_t dropped = 0;
	char why[256] = "";

	if (gbpf_map_instance_create(&host, &hd, 1) ||
	    gbpf_map_mirror_init(&m, &host, 1u << 14, 4, &ops, why, sizeof(why))) {
		tap_ok(0, "ring stats: mirror created (%s)", why);
		return;
	}
	tap_ok(gbpf_map_mirror_ring_stats(&m, &st) == 0 && st.subs == 4 && st.subs_used == 0 && st.drops == 0,
	       "ring stats before any record: %u sub-rings, none used", st.subs);
	dev = host;
	dev.desc = &dd;
	dev.mem = (void *)(uintptr_t)m.dev;
	dev.mem_size = m.dev_size;
	for (uint32_t s = 0; s < 4; s++)
		for (uint32_t i = 0; i < per_sub[s]; i++)
			dropped += gbpf_ringbuf_output_on(&dev, s, &x, sizeof(x), 0) != 0;
	/* the controls are read by a forward (the host ring takes what it can, the rest waits) */
	gbpf_map_mirror_forward(&m, &ops, NULL);
	tap_ok(gbpf_map_mirror_ring_stats(&m, &st) == 0 && st.subs == 4 && st.subs_used == 3 &&
		       st.subs_dropping == 1 && st.most_drops_sub == 2 && st.drops == dropped && dropped > 0 &&
		       st.most_drops == dropped && st.most_bytes + 8 + sizeof(x) > st.sub_size &&
		       st.median_bytes == 20 * (8 + sizeof(x)) && st.sub_size == (1u << 14) / 4,
	       "ring stats: %u of %u sub-rings used, %u dropping (sub-ring %u, %llu of %llu), busiest %llu bytes, "
	       "median %llu, of %llu", st.subs_used, st.subs, st.subs_dropping, st.most_drops_sub,
	       (unsigned long long)st.most_drops, (unsigned long long)dropped, (unsigned long long)st.most_bytes,
	       (unsigned long long)st.median_bytes, (unsigned long long)st.sub_size);
	gbpf_map_mirror_fini(&m, &ops);
	gbpf_map_instance_destroy(&host);
	tap_ok(gbpf_map_mirror_ring_stats(&(struct gbpf_map_mirror){0}, &st) == -EINVAL,
	       "ring stats of a mirror that is no ring: -EINVAL");
}

/* pin_host / unpin_host that record what they were asked; pin_fails makes the pin refuse. */
static struct {
	int pins, unpins, pin_fails;
	void *ptr;
	size_t size;
} pinning;

static int h_pin_host(void *ctx, void *p, size_t n)
{
	(void)ctx;
	pinning.pins++;
	pinning.ptr = p;
	pinning.size = n;
	return pinning.pin_fails ? -EIO : 0;
}
static void h_unpin_host(void *ctx, void *p)
{
	(void)ctx;
	pinning.unpins += p == pinning.ptr;
}
/* The one record stage_pinning() writes: producer 7, sequence 9. */
static int is_record_7_9(void *ctx, const void *data, size_t size)
{
	const struct rec *x = data;

	*(int *)ctx += size == sizeof(*x) && x->producer == 7 && x->seq == 9;
	return 0;
}

/*
 * A ring's stage, which the forwarder's device copies write, is pinned when
 * the operations can pin (whole pages at a page boundary) and unpinned at
 * fini; a refused pin leaves the ring working on pageable memory.
 */
static void stage_pinning(void)
{
	struct gbpf_map_desc hd = {.sz = sizeof(hd), .name = "pinned", .type = GBPF_MAP_TYPE_RINGBUF,
				   .max_entries = 1u << 14};
	struct gbpf_dev_mem_ops pin_ops = ops;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct gbpf_map_instance host;
	struct gbpf_map_mirror m;
	char why[256] = "";

	pin_ops.pin_host = h_pin_host;
	pin_ops.unpin_host = h_unpin_host;
	for (int fail = 0; fail < 2; fail++) {
		struct gbpf_map_instance dev;
		struct gbpf_map_desc dd = hd;
		struct rec x = {.producer = 7, .seq = 9};
		uint64_t moved = 0;
		int seen = 0;

		memset(&pinning, 0, sizeof(pinning));
		pinning.pin_fails = fail;
		if (gbpf_map_instance_create(&host, &hd, 1) ||
		    gbpf_map_mirror_init(&m, &host, 1u << 16, 2, &pin_ops, why, sizeof(why))) {
			tap_ok(0, "stage pinning: mirror created (%s)", why);
			return;
		}
		tap_ok(pinning.pins == 1 && pinning.ptr == m.stage && (uintptr_t)m.stage % page == 0 &&
			       pinning.size % page == 0 && pinning.size >= m.dev_sub_size &&
			       m.stage_pinned == !fail,
		       "%s: the stage (%llu bytes a sub-ring) asked to be pinned once, %zu bytes at a page boundary",
		       fail ? "pin refused" : "pinned", (unsigned long long)m.dev_sub_size, pinning.size);
		dev = host;
		dev.desc = &dd;
		dev.mem = (void *)(uintptr_t)m.dev;
		dev.mem_size = m.dev_size;
		tap_ok(gbpf_ringbuf_output_on(&dev, 1, &x, sizeof(x), 0) == 0 &&
			       gbpf_map_mirror_forward(&m, &pin_ops, &moved) == 0 && moved == 1 &&
			       gbpf_ringbuf_consume(&host, is_record_7_9, &seen) == 1 && seen == 1,
		       "%s: a record is forwarded through the stage intact (%llu moved, %d seen)",
		       fail ? "pin refused" : "pinned", (unsigned long long)moved, seen);
		gbpf_map_mirror_fini(&m, &pin_ops);
		tap_ok(pinning.unpins == !fail && !m.stage_pinned,
		       "%s: fini unpins the stage only if it was pinned (%d unpins)", fail ? "pin refused" : "pinned",
		       pinning.unpins);
		gbpf_map_instance_destroy(&host);
	}
}

int main(void)
{
	char why[128];
	struct gbpf_map_instance none = {0};
	struct gbpf_map_mirror m;

	tap_ok(gbpf_map_mirror_init(&m, &none, 0, 0, &ops, why, sizeof(why)) == -EINVAL,
	       "a map without a host block is refused: %s", why);
	/* Device ring large enough: nothing dropped; host ring small: the forwarder waits. */
	ring_run(1u << 22, 1u << 14, 0, "large device ring");
	ring_run(1u << 22, 1u << 12, 1, "slow controller");
	/* Device ring too small for the burst: drops, counted exactly. */
	ring_run(1u << 14, 1u << 12, 1, "small device ring");
	snapshot_maps();
	ring_stats();
	stage_pinning();
	return tap_done();
}
