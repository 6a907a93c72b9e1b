/* SPDX-License-Identifier: MIT */
/*
 * plugins/cuda/map_mirror.c - device working copies of maps, mirrored into
 * the host blocks the controller reads (see map_mirror.h for the protocol).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "maps/map.h"
#include "maps/map_layout.h"
#include "map_mirror.h"

static struct gbpf_map_hdr *host_hdr(const struct gbpf_map_mirror *m)
{
	return (struct gbpf_map_hdr *)m->host->mem;
}

static int is_ring_type(uint32_t type)
{
	return type == GBPF_MAP_TYPE_RINGBUF || type == GBPF_MAP_TYPE_GPU_RINGBUF ||
	       type == GBPF_MAP_TYPE_PERF_EVENT_ARRAY;
}

void *gbpf_stage_alloc(size_t size, size_t *bytes)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	void *p = NULL;

	*bytes = (size + page - 1) & ~(page - 1);
	if (!size || posix_memalign(&p, page, *bytes))
		return NULL;
	return p;
}

static int init_ring(struct gbpf_map_mirror *m, uint64_t ring_bytes, uint32_t ring_subs,
		     const struct gbpf_dev_mem_ops *ops, char *why, size_t why_size)
{
	const struct gbpf_map_hdr *h = host_hdr(m);
	struct gbpf_map_desc d = *m->host->desc;
	struct gbpf_map_hdr *dh;
	uint32_t subs = h->nr_slots;
	uint8_t *img;
	size_t size, stage_bytes = 0;

	if (h->type != GBPF_MAP_TYPE_PERF_EVENT_ARRAY) {
		/* Ring buffers: a larger device ring; perf arrays keep their slots (indices mean CPUs/SMs). */
		if (ring_bytes < h->max_entries)
			ring_bytes = h->max_entries;
		if (ring_bytes > GBPF_RING_MAX_SIZE)
			ring_bytes = GBPF_RING_MAX_SIZE;
		d.max_entries = (uint32_t)ring_bytes;
		subs = ring_subs ? ring_subs : 1;
	}
	size = gbpf_map_mem_size(&d, subs);
	/* calloc: the data area is never touched here, so its pages stay unallocated. */
	img = size ? calloc(1, size) : NULL;
	if (!img || gbpf_map_mem_init(img, size, &d, subs)) {
		free(img);
		snprintf(why, why_size, "map '%s': cannot lay out a device ring of %llu bytes",
			 d.name ? d.name : "?", (unsigned long long)ring_bytes);
		return -ENOMEM;
	}
	dh = (struct gbpf_map_hdr *)img;
	m->dev_rings = dh->nr_slots;
	m->dev_sub_size = dh->sub_size;
	m->dev_data_off = dh->data_off;
	m->dev_aux_off = dh->aux_off;
	m->dev_size = dh->total_size;
	m->fwd = calloc(m->dev_rings, sizeof(*m->fwd));
	m->stage = gbpf_stage_alloc(m->dev_sub_size, &stage_bytes);
	m->ctl = calloc(m->dev_rings, sizeof(struct gbpf_ring_ctl)); /* nothing copied yet: all zero */
	if (!m->fwd || !m->stage || !m->ctl || ops->alloc(ops->ctx, &m->dev, m->dev_size)) {
		free(img);
		snprintf(why, why_size, "map '%s': cannot allocate a device ring of %zu bytes",
			 d.name ? d.name : "?", m->dev_size);
		return -ENOMEM;
	}
	/* Header and ring controls from the image, the data area zeroed on the device. */
	if (ops->to_device(ops->ctx, m->dev, img, m->dev_aux_off) ||
	    ops->zero(ops->ctx, m->dev + m->dev_aux_off, m->dev_size - m->dev_aux_off)) {
		free(img);
		snprintf(why, why_size, "map '%s': cannot initialise the device ring", d.name ? d.name : "?");
		return -EIO;
	}
	free(img);
	/*
	 * Pinned where the driver lets us: the forwarder copies each sub-ring's new
	 * records into the stage while the application's kernels run, and a copy
	 * into pageable memory is staged again inside the driver.
	 */
	if (ops->pin_host && ops->unpin_host)
		m->stage_pinned = ops->pin_host(ops->ctx, m->stage, stage_bytes) == 0;
	m->ring = 1;
	return 0;
}

int gbpf_map_mirror_init(struct gbpf_map_mirror *m, struct gbpf_map_instance *host,
			 uint64_t ring_bytes, uint32_t ring_subs, const struct gbpf_dev_mem_ops *ops,
			 char *why, size_t why_size)
{
	const struct gbpf_map_hdr *h;
	int rc;

	memset(m, 0, sizeof(*m));
	m->host = host;
	if (!host || !host->mem || !host->desc || gbpf_map_mem_validate(host->mem, host->mem_size)) {
		snprintf(why, why_size, "map has no valid host block");
		return -EINVAL;
	}
	h = host_hdr(m);
	if (is_ring_type(h->type)) {
		rc = init_ring(m, ring_bytes, ring_subs, ops, why, why_size);
		if (rc)
			gbpf_map_mirror_fini(m, ops);
		return rc;
	}
	m->dev_size = h->total_size;
	if (ops->alloc(ops->ctx, &m->dev, m->dev_size)) {
		snprintf(why, why_size, "map '%s': cannot allocate %zu bytes of device memory",
			 host->desc->name ? host->desc->name : "?", m->dev_size);
		m->dev = 0;
		return -ENOMEM;
	}
	if (ops->to_device(ops->ctx, m->dev, host->mem, m->dev_size)) {
		snprintf(why, why_size, "map '%s': cannot copy its initial contents to the device",
			 host->desc->name ? host->desc->name : "?");
		gbpf_map_mirror_fini(m, ops);
		return -EIO;
	}
	return 0;
}

int gbpf_map_mirror_snapshot(struct gbpf_map_mirror *m, const struct gbpf_dev_mem_ops *ops)
{
	if (m->ring || !m->dev)
		return 0;
	return ops->to_host(ops->ctx, m->host->mem, m->dev, m->dev_size) ? -EIO : 0;
}

/* Copy device positions [from, to) of sub-ring @p s (at most one sub-ring) into the stage. */
static int stage_range(struct gbpf_map_mirror *m, const struct gbpf_dev_mem_ops *ops, uint32_t s,
		       uint64_t from, uint64_t to)
{
	uint64_t mask = m->dev_sub_size - 1, base = m->dev + m->dev_aux_off + s * m->dev_sub_size;
	uint64_t off = from & mask, len = to - from, first = len;

	if (off + len > m->dev_sub_size)
		first = m->dev_sub_size - off;
	if (ops->to_host(ops->ctx, m->stage, base + off, first))
		return -EIO;
	if (first < len && ops->to_host(ops->ctx, m->stage + first, base, len - first))
		return -EIO;
	return 0;
}

/* Zero device positions [from, to) of sub-ring @p s: consumed space reads 0 until rewritten. */
static int zero_range(struct gbpf_map_mirror *m, const struct gbpf_dev_mem_ops *ops, uint32_t s,
		      uint64_t from, uint64_t to)
{
	uint64_t mask = m->dev_sub_size - 1, base = m->dev + m->dev_aux_off + s * m->dev_sub_size;
	uint64_t off = from & mask, len = to - from, first = len;

	if (off + len > m->dev_sub_size)
		first = m->dev_sub_size - off;
	if (ops->zero(ops->ctx, base + off, first))
		return -EIO;
	if (first < len && ops->zero(ops->ctx, base, len - first))
		return -EIO;
	return 0;
}

/* End of the committed, well-formed prefix of the staged range [from, to). */
static int committed_end(const struct gbpf_map_mirror *m, uint64_t from, uint64_t to, uint64_t *end)
{
	uint64_t pos = from, mask = m->dev_sub_size - 1;

	while (pos < to) {
		const struct gbpf_ring_rec *r = (const void *)(m->stage + (pos - from));
		uint32_t w = __atomic_load_n(&r->len, __ATOMIC_RELAXED);
		uint64_t need = GBPF_MAP_ROUND8(8 + (uint64_t)(w & GBPF_RING_LEN_MASK));

		if (!w || (w & GBPF_RING_BUSY))
			break;
		if (pos + need > to || (pos & mask) + need > m->dev_sub_size) {
			*end = pos;
			return -EUCLEAN;
		}
		pos += need;
	}
	*end = pos;
	return 0;
}

/* Deliver staged records [from, to) to the host ring; *done = where delivery stopped. */
static void deliver(struct gbpf_map_mirror *m, uint32_t s, uint64_t from, uint64_t to, uint64_t *done,
		    uint64_t *moved)
{
	struct gbpf_map_hdr *hh = host_hdr(m);
	uint64_t pos = from;

	while (pos < to) {
		const struct gbpf_ring_rec *r = (const void *)(m->stage + (pos - from));
		uint32_t len = r->len & GBPF_RING_LEN_MASK;
		void *dst;

		if (!(r->len & GBPF_RING_DISCARD)) {
			dst = gbpf_ring_forward_reserve(m->host, s, len);
			if (!dst && errno == ENOSPC) {
				m->waits++;
				break; /* the controller is behind: the device ring keeps the rest */
			}
			if (dst) {
				memcpy(dst, r + 1, len);
				gbpf_ringbuf_submit(m->host, dst, 0);
				m->forwarded++;
			} else {
				/* Larger than a host sub-ring: it can never be delivered. */
				__atomic_fetch_add(&hh->drops, 1, __ATOMIC_RELAXED);
			}
		}
		if (moved)
			(*moved)++;
		pos += GBPF_MAP_ROUND8(8 + (uint64_t)len);
	}
	*done = pos;
}

int gbpf_map_mirror_forward(struct gbpf_map_mirror *m, const struct gbpf_dev_mem_ops *ops,
			    uint64_t *moved)
{
	const struct gbpf_ring_ctl *ctl = (const void *)m->ctl;
	struct gbpf_map_hdr *hh;
	uint64_t drops;
	int status = 0;

	if (moved)
		*moved = 0;
	if (!m->ring || !m->dev)
		return 0;
	hh = host_hdr(m);
	if (ops->to_host(ops->ctx, m->ctl, m->dev + m->dev_data_off,
			 (size_t)m->dev_rings * sizeof(struct gbpf_ring_ctl)))
		return -EIO;
	for (uint32_t s = 0; s < m->dev_rings; s++) {
		uint64_t prod = ctl[s].producer_pos, from = m->fwd[s], end, done;
		int rc;

		if (prod <= from)
			continue;
		if (prod - from > m->dev_sub_size) {
			status = -EUCLEAN; /* positions the layout forbids: leave this sub-ring alone */
			continue;
		}
		if (stage_range(m, ops, s, from, prod))
			return -EIO;
		rc = committed_end(m, from, prod, &end);
		if (rc)
			status = rc;
		if (end == from)
			continue;
		/* Second copy: the committed prefix, now complete (map_mirror.h). */
		if (stage_range(m, ops, s, from, end))
			return -EIO;
		deliver(m, s, from, end, &done, moved);
		if (done == from)
			continue;
		if (zero_range(m, ops, s, from, done) ||
		    ops->to_device(ops->ctx, m->dev + m->dev_data_off + (uint64_t)s * sizeof(struct gbpf_ring_ctl) +
					     offsetof(struct gbpf_ring_ctl, consumer_pos),
				   &done, sizeof(done)))
			return -EIO;
		m->fwd[s] = done;
	}
	/* Device drops (its ring was full) become the host's, exactly once. */
	if (ops->to_host(ops->ctx, &drops, m->dev + offsetof(struct gbpf_map_hdr, drops), sizeof(drops)))
		return -EIO;
	if (drops > m->drops_seen) {
		struct gbpf_ring_ctl *hctl = (struct gbpf_ring_ctl *)((uint8_t *)m->host->mem + hh->data_off);

		__atomic_fetch_add(&hh->drops, drops - m->drops_seen, __ATOMIC_RELAXED);
		__atomic_fetch_add(&hctl[0].drops, drops - m->drops_seen, __ATOMIC_RELAXED);
		m->drops_seen = drops;
	}
	return status;
}

uint64_t gbpf_map_mirror_abandon(struct gbpf_map_mirror *m, const struct gbpf_dev_mem_ops *ops)
{
	const struct gbpf_ring_ctl *ctl = (const void *)m->ctl;
	uint64_t lost = 0;

	if (!m->ring || !m->dev ||
	    ops->to_host(ops->ctx, m->ctl, m->dev + m->dev_data_off,
			 (size_t)m->dev_rings * sizeof(struct gbpf_ring_ctl)))
		return 0;
	for (uint32_t s = 0; s < m->dev_rings; s++) {
		uint64_t from = m->fwd[s], prod = ctl[s].producer_pos, end, pos;

		if (prod <= from || prod - from > m->dev_sub_size || stage_range(m, ops, s, from, prod))
			continue;
		committed_end(m, from, prod, &end);
		for (pos = from; pos < end;) {
			const struct gbpf_ring_rec *r = (const void *)(m->stage + (pos - from));

			lost += !(r->len & GBPF_RING_DISCARD);
			pos += GBPF_MAP_ROUND8(8 + (uint64_t)(r->len & GBPF_RING_LEN_MASK));
		}
		m->fwd[s] = prod;
	}
	__atomic_fetch_add(&host_hdr(m)->drops, lost, __ATOMIC_RELAXED);
	return lost;
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int gbpf_map_mirror_ring_stats(const struct gbpf_map_mirror *m, struct gbpf_map_mirror_ring_stats *st)
{
	const struct gbpf_ring_ctl *ctl = (const void *)m->ctl;
	uint64_t *used;

	memset(st, 0, sizeof(*st));
	if (!m->ring || !m->ctl)
		return -EINVAL;
	used = malloc((m->dev_rings ? m->dev_rings : 1) * sizeof(*used));
	if (!used)
		return -ENOMEM;
	st->subs = m->dev_rings;
	st->sub_size = m->dev_sub_size;
	for (uint32_t s = 0; s < m->dev_rings; s++) {
		uint64_t pos = __atomic_load_n(&ctl[s].producer_pos, __ATOMIC_RELAXED);
		uint64_t drops = __atomic_load_n(&ctl[s].drops, __ATOMIC_RELAXED);

		if (pos)
			used[st->subs_used++] = pos;
		if (pos > st->most_bytes)
			st->most_bytes = pos;
		st->drops += drops;
		st->subs_dropping += drops != 0;
		if (drops > st->most_drops) {
			st->most_drops = drops;
			st->most_drops_sub = s;
		}
	}
	if (st->subs_used) {
		qsort(used, st->subs_used, sizeof(*used), u64_cmp);
		st->median_bytes = used[st->subs_used / 2];
	}
	free(used);
	return 0;
}

void gbpf_map_mirror_fini(struct gbpf_map_mirror *m, const struct gbpf_dev_mem_ops *ops)
{
	if (m->dev && ops && ops->release)
		ops->release(ops->ctx, m->dev);
	m->dev = 0;
	if (m->stage_pinned && ops && ops->unpin_host)
		ops->unpin_host(ops->ctx, m->stage);
	m->stage_pinned = 0;
	free(m->fwd);
	free(m->stage);
	free(m->ctl);
	m->fwd = NULL;
	m->stage = NULL;
	m->ctl = NULL;
}
