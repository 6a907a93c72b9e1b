/* SPDX-License-Identifier: MIT */
/*
 * Ring buffers (RINGBUF, GPU_RINGBUF) and perf event arrays: lock-free
 * multi-producer reserve/commit/discard on sub-rings, one consumer.
 * docs/MAPS.md gives the protocol and the fences device code must use.
 */
#include <errno.h>
#include <sched.h>
#include <string.h>

#include "maps/map_internal.h"

/* CAS attempts of one reservation before it counts as a drop (never spin forever). */
#define RESERVE_ATTEMPTS (1u << 20)

struct ring {
	struct gbpf_ring_ctl *ctl;
	uint8_t *data;
	uint64_t size; /* power of two */
	uint32_t sub;
};

static void ring_get(const struct map_view *v, uint32_t sub, struct ring *r)
{
	r->ctl = (struct gbpf_ring_ctl *)(v->base + v->h.data_off) + sub;
	r->data = v->base + v->h.aux_off + (uint64_t)sub * v->h.sub_size;
	r->size = v->h.sub_size;
	r->sub = sub;
}

static _Atomic uint32_t *rec_len(uint8_t *rec)
{
	return at32(rec + offsetof(struct gbpf_ring_rec, len));
}

static void count_drop(const struct map_view *v, struct ring *r)
{
	atomic_fetch_add_explicit(at64(&r->ctl->drops), 1, memory_order_relaxed);
	atomic_fetch_add_explicit(at64(&view_hdr(v)->drops), 1, memory_order_relaxed);
}

static void *ring_reserve(const struct map_view *v, uint32_t sub, uint64_t size, bool count_drops)
{
	_Atomic uint64_t *prod_pos, *cons_pos;
	uint64_t need, pos, pad = 0;
	struct ring r;
	uint8_t *rec;

	ring_get(v, sub, &r);
	if (size > GBPF_RING_LEN_MASK || GBPF_MAP_ROUND8(size + 8) > r.size) {
		errno = E2BIG;
		return NULL;
	}
	need = GBPF_MAP_ROUND8(size + 8);
	prod_pos = at64(&r.ctl->producer_pos);
	cons_pos = at64(&r.ctl->consumer_pos);
	for (uint32_t i = 0;; i++) {
		uint64_t cons, off;

		if (i == RESERVE_ATTEMPTS) {
			count_drop(v, &r);
			errno = EBUSY;
			return NULL;
		}
		pos = atomic_load_explicit(prod_pos, memory_order_relaxed);
		/* Acquire: the consumer zeroed everything before this position. */
		cons = atomic_load_explicit(cons_pos, memory_order_acquire);
		off = pos & (r.size - 1);
		/* A record never wraps: pad to the end of the data area first. */
		pad = off + need > r.size ? r.size - off : 0;
		if (pos - cons > r.size || pos + pad + need - cons > r.size) {
			if (count_drops)
				count_drop(v, &r);
			errno = ENOSPC;
			return NULL;
		}
		if (atomic_compare_exchange_weak_explicit(prod_pos, &pos, pos + pad + need,
							  memory_order_acq_rel,
							  memory_order_relaxed))
			break;
	}
	if (pad) {
		rec = r.data + (pos & (r.size - 1));
		((struct gbpf_ring_rec *)rec)->sub = sub;
		atomic_store_explicit(rec_len(rec), (uint32_t)(pad - 8) | GBPF_RING_DISCARD,
				      memory_order_release);
	}
	rec = r.data + ((pos + pad) & (r.size - 1));
	((struct gbpf_ring_rec *)rec)->sub = sub;
	atomic_store_explicit(rec_len(rec), (uint32_t)size | GBPF_RING_BUSY, memory_order_relaxed);
	return rec + sizeof(struct gbpf_ring_rec);
}

/* Clear BUSY (setting DISCARD if asked) of a record this map reserved. */
static void ring_commit(struct gbpf_map_instance *map, void *record, bool discard)
{
	struct map_view v;
	uint8_t *rec = record;
	uint64_t off, sub, in_sub;
	uint32_t w;

	if (!rec || gbpf_mapi_view_get(map, &v) || !gbpf_mapi_is_ring(v.h.type))
		return;
	rec -= sizeof(struct gbpf_ring_rec);
	if (rec < v.base + v.h.aux_off || rec >= v.base + v.h.total_size)
		return;
	off = (uint64_t)(rec - (v.base + v.h.aux_off));
	sub = off / v.h.sub_size;
	in_sub = off % v.h.sub_size;
	if ((off & 7) || in_sub + sizeof(struct gbpf_ring_rec) > v.h.sub_size ||
	    ((struct gbpf_ring_rec *)rec)->sub != sub)
		return;
	w = atomic_load_explicit(rec_len(rec), memory_order_relaxed);
	if (!(w & GBPF_RING_BUSY))
		return;
	w &= ~GBPF_RING_BUSY;
	if (discard)
		w |= GBPF_RING_DISCARD;
	/* Release: the record's data is visible before its header says so. */
	atomic_store_explicit(rec_len(rec), w, memory_order_release);
}

static bool is_ringbuf(const struct map_view *v)
{
	return v->h.type == GBPF_MAP_TYPE_RINGBUF || v->h.type == GBPF_MAP_TYPE_GPU_RINGBUF;
}

void *gbpf_ringbuf_reserve_on(struct gbpf_map_instance *map, uint32_t slot, uint64_t size,
			      uint64_t flags)
{
	struct map_view v;

	if (flags || gbpf_mapi_view_get(map, &v) || !is_ringbuf(&v)) {
		errno = EINVAL;
		return NULL;
	}
	return ring_reserve(&v, slot & (v.h.nr_slots - 1), size, true);
}

void *gbpf_ringbuf_reserve(struct gbpf_map_instance *map, uint64_t size, uint64_t flags)
{
	int cpu = sched_getcpu();

	return gbpf_ringbuf_reserve_on(map, cpu < 0 ? 0 : (uint32_t)cpu, size, flags);
}

void gbpf_ringbuf_submit(struct gbpf_map_instance *map, void *record, uint64_t flags)
{
	ring_commit(map, record, false);
}

void gbpf_ringbuf_discard(struct gbpf_map_instance *map, void *record, uint64_t flags)
{
	ring_commit(map, record, true);
}

/* BPF_RB_NO_WAKEUP and BPF_RB_FORCE_WAKEUP: accepted, meaningless here. */
#define RB_WAKEUP_FLAGS 3u

int gbpf_ringbuf_output_on(struct gbpf_map_instance *map, uint32_t slot, const void *data,
			   uint64_t size, uint64_t flags)
{
	struct map_view v;
	void *rec;

	if ((!data && size) || (flags & ~(uint64_t)RB_WAKEUP_FLAGS) ||
	    gbpf_mapi_view_get(map, &v) || !is_ringbuf(&v))
		return -EINVAL;
	rec = ring_reserve(&v, slot & (v.h.nr_slots - 1), size, true);
	if (!rec)
		return errno == E2BIG ? -E2BIG : -EAGAIN;
	if (size)
		memcpy(rec, data, size);
	ring_commit(map, rec, false);
	return 0;
}

int gbpf_ringbuf_output(struct gbpf_map_instance *map, const void *data, uint64_t size,
			uint64_t flags)
{
	int cpu = sched_getcpu();

	return gbpf_ringbuf_output_on(map, cpu < 0 ? 0 : (uint32_t)cpu, data, size, flags);
}

int gbpf_perf_event_output(struct gbpf_map_instance *map, uint32_t slot, const void *data,
			   uint64_t size)
{
	struct map_view v;
	void *rec;

	if ((!data && size) || gbpf_mapi_view_get(map, &v) ||
	    v.h.type != GBPF_MAP_TYPE_PERF_EVENT_ARRAY)
		return -EINVAL;
	if (slot >= v.h.nr_slots)
		return -E2BIG;
	rec = ring_reserve(&v, slot, size, true);
	if (!rec)
		return errno == E2BIG ? -E2BIG : -ENOSPC;
	if (size)
		memcpy(rec, data, size);
	ring_commit(map, rec, false);
	return 0;
}

/* Consume one sub-ring; *stop set when fn asked to stop. Returns records or -EUCLEAN. */
static int ring_consume(struct ring *r, gbpf_record_fn fn, void *ctx, bool *stop)
{
	_Atomic uint64_t *cons_pos = at64(&r->ctl->consumer_pos);
	uint64_t cons = atomic_load_explicit(cons_pos, memory_order_relaxed);
	int n = 0;

	while (!*stop) {
		uint64_t prod =
			atomic_load_explicit(at64(&r->ctl->producer_pos), memory_order_acquire);
		uint64_t off = cons & (r->size - 1), need;
		uint8_t *rec = r->data + off;
		uint32_t w, len;

		if (cons == prod)
			break;
		if (prod - cons > r->size || (off & 7))
			return -EUCLEAN;
		/* Acquire pairs with the producer's release of the header. */
		w = atomic_load_explicit(rec_len(rec), memory_order_acquire);
		if (w == 0 || (w & GBPF_RING_BUSY))
			break; /* reserved, not yet committed: later records wait */
		len = w & GBPF_RING_LEN_MASK;
		need = GBPF_MAP_ROUND8((uint64_t)len + 8);
		if (off + need > r->size || need > prod - cons)
			return -EUCLEAN;
		if (!(w & GBPF_RING_DISCARD)) {
			n++;
			if (fn && fn(ctx, rec + sizeof(struct gbpf_ring_rec), len))
				*stop = true;
		}
		/* Zero the space so that a future record header reads 0 until written. */
		memset(rec, 0, need);
		cons += need;
		atomic_store_explicit(cons_pos, cons, memory_order_release);
	}
	return n;
}

int gbpf_ringbuf_consume(struct gbpf_map_instance *map, gbpf_record_fn fn, void *ctx)
{
	struct map_view v;
	bool stop = false;
	int total = 0;

	if (gbpf_mapi_view_get(map, &v) || !gbpf_mapi_is_ring(v.h.type))
		return -EINVAL;
	for (uint32_t s = 0; s < v.h.nr_slots && !stop; s++) {
		struct ring r;
		int n;

		ring_get(&v, s, &r);
		n = ring_consume(&r, fn, ctx, &stop);
		if (n < 0)
			return n;
		if (total > INT32_MAX - n)
			return total;
		total += n;
	}
	return total;
}

uint64_t gbpf_ringbuf_dropped(const struct gbpf_map_instance *map)
{
	struct map_view v;

	if (gbpf_mapi_view_get(map, &v) || !gbpf_mapi_is_ring(v.h.type))
		return 0;
	return atomic_load_explicit(at64(&view_hdr(&v)->drops), memory_order_relaxed);
}

void *gbpf_ring_forward_reserve(struct gbpf_map_instance *map, uint32_t slot, uint64_t size)
{
	struct map_view v;

	if (gbpf_mapi_view_get(map, &v) || !gbpf_mapi_is_ring(v.h.type)) {
		errno = EINVAL;
		return NULL;
	}
	/* A full ring is the forwarder's cue to wait, not a lost record. */
	return ring_reserve(&v, slot & (v.h.nr_slots - 1), size, false);
}
