/* SPDX-License-Identifier: MIT */
/*
 * Maps -> metrics (rules in metrics.h). Reads go through the host map
 * operations of libgbpf, which tolerate the agents writing concurrently;
 * every loop is bounded by the map's own size or GBPF_METRIC_MAX_ROWS.
 */
#include "core/export/metrics.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gbpf/maps.h>
#include <gbpf/object.h>

uint64_t gbpf_metric_slot_le(size_t i)
{
	return i >= 63 ? UINT64_MAX : (1ull << (i + 1)) - 1;
}

static int is_ring(uint32_t t)
{
	return t == GBPF_MAP_TYPE_RINGBUF || t == GBPF_MAP_TYPE_GPU_RINGBUF ||
	       t == GBPF_MAP_TYPE_PERF_EVENT_ARRAY;
}

static int is_array(uint32_t t)
{
	return t == GBPF_MAP_TYPE_ARRAY || t == GBPF_MAP_TYPE_GPU_ARRAY ||
	       t == GBPF_MAP_TYPE_PERCPU_ARRAY;
}

static int is_hash(uint32_t t)
{
	return t == GBPF_MAP_TYPE_HASH || t == GBPF_MAP_TYPE_LRU_HASH ||
	       t == GBPF_MAP_TYPE_GPU_HASH || t == GBPF_MAP_TYPE_PERCPU_HASH;
}

/* Prometheus metric names: [a-zA-Z_:][a-zA-Z0-9_:]*; anything else becomes '_'. */
static void metric_name(char *out, size_t cap, const char *map, const char *suffix)
{
	size_t o = 0;
	const char *p;

	o += (size_t)snprintf(out, cap, "gbpf_");
	for (p = map; *p && o + 1 < cap; p++)
		out[o++] = isalnum((unsigned char)*p) || *p == '_' ? *p : '_';
	out[o] = 0;
	if (suffix && o + strlen(suffix) + 1 < cap)
		strcat(out, suffix);
}

/* A key as a label value: NUL-padded string, number, or hex bytes (as `gbpf run` prints). */
static void key_label(char *out, size_t cap, const unsigned char *k, size_t n)
{
	size_t len = 0, i, o = 0;
	uint64_t v = 0;

	while (len < n && k[len] && isprint(k[len]))
		len++;
	if (len && len < cap) {
		for (i = len; i < n && !k[i]; i++)
			;
		if (i == n) {
			snprintf(out, cap, "%.*s", (int)len, (const char *)k);
			return;
		}
	}
	if (n == 1 || n == 2 || n == 4 || n == 8) {
		memcpy(&v, k, n);
		snprintf(out, cap, "%" PRIu64, v);
		return;
	}
	o = (size_t)snprintf(out, cap, "0x");
	for (i = 0; i < n && o + 3 <= cap; i++)
		o += (size_t)snprintf(out + o, cap - o, "%02x", k[i]);
}

/* Word @p w (u64, or u32 when the value is 4 bytes) of @p key summed over per-CPU copies. */
static uint64_t value_word(struct gbpf_map_instance *m, const void *key, size_t w, size_t vsize)
{
	uint32_t s, slots = gbpf_map__nr_slots(m);
	uint64_t sum = 0;

	for (s = 0; s < slots; s++) {
		const unsigned char *p = gbpf_map__lookup(m, key, s);
		uint64_t v = 0;

		if (!p)
			continue;
		if (vsize == 4) {
			uint32_t v32;

			memcpy(&v32, p, 4);
			v = v32;
		} else {
			memcpy(&v, p + w * 8, 8);
		}
		sum += v;
	}
	return sum;
}

static struct gbpf_metric *add_metric(struct gbpf_metric_set *set, const char *map,
				      enum gbpf_metric_type type, const char *help)
{
	struct gbpf_metric *p = realloc(set->metrics, (set->cnt + 1) * sizeof(*p)), *m;

	if (!p)
		return NULL;
	set->metrics = p;
	m = &set->metrics[set->cnt++];
	memset(m, 0, sizeof(*m));
	m->type = type;
	snprintf(m->map, sizeof(m->map), "%s", map);
	metric_name(m->name, sizeof(m->name), map,
		    type == GBPF_METRIC_COUNTER && !strstr(map, "_total") ? "_total" : NULL);
	snprintf(m->help, sizeof(m->help), "%s", help);
	snprintf(m->label, sizeof(m->label), "key");
	return m;
}

static struct gbpf_metric_sample *add_sample(struct gbpf_metric *m)
{
	struct gbpf_metric_sample *p = realloc(m->samples, (m->sample_cnt + 1) * sizeof(*p)), *s;

	if (!p)
		return NULL;
	m->samples = p;
	s = &m->samples[m->sample_cnt++];
	memset(s, 0, sizeof(*s));
	s->word = -1;
	return s;
}

static void hist_finish(struct gbpf_metric_sample *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		uint64_t lo = i ? 1ull << i : 0, hi = gbpf_metric_slot_le(i);

		s->count += s->slots[i];
		/* Values are unknown inside a slot: its midpoint approximates them. */
		s->sum += (double)s->slots[i] * ((double)lo + (double)hi) / 2.0;
	}
}

static int from_map(struct gbpf_metric_set *set, const struct gbpf_map_desc *d,
		    struct gbpf_map_instance *mi)
{
	enum gbpf_map_hist_shape shape = gbpf_map_desc__hist_shape(d);
	int hist = shape == GBPF_MAP_HIST_PER_KEY;
	size_t vs = d->value_size, words = vs / 8, n = 0, w;
	unsigned char *key = NULL, *next = NULL;
	struct gbpf_metric *m;
	char help[256];
	int have = 0, err = 0;

	if (is_ring(d->type)) {
		struct gbpf_metric_sample *s;
		size_t i;

		/* One family for every ring, the map as a label: names must be unique. */
		for (i = 0, m = NULL; i < set->cnt; i++)
			if (!strcmp(set->metrics[i].name, "gbpf_lost_events_total"))
				m = &set->metrics[i];
		if (!m) {
			m = add_metric(set, "lost_events", GBPF_METRIC_COUNTER,
				       "Records lost because a ring buffer map was full");
			if (!m)
				return -ENOMEM;
			snprintf(m->label, sizeof(m->label), "map");
		}
		s = add_sample(m);
		if (!s)
			return -ENOMEM;
		snprintf(s->key, sizeof(s->key), "%s", d->name);
		s->value = (double)gbpf_map__dropped(mi);
		return 0;
	}
	if (d->origin == GBPF_MAP_ORIGIN_RODATA || !d->key_size ||
	    !(is_array(d->type) || is_hash(d->type)))
		return 0;
	if (shape == GBPF_MAP_HIST_ARRAY || shape == GBPF_MAP_HIST_SLOT_KEY) {
		struct gbpf_metric_sample *s;
		uint32_t cnt;
		int n_slots;

		snprintf(help, sizeof(help), "log2 histogram of map %s (_sum approximate: slot midpoints)",
			 d->name);
		m = add_metric(set, d->name, GBPF_METRIC_HISTOGRAM, help);
		s = m ? add_sample(m) : NULL;
		if (!s)
			return -ENOMEM;
		n_slots = gbpf_map__log2_slots(mi, d, s->slots);
		if (n_slots < 0)
			return n_slots;
		/* a slot-keyed histogram: buckets up to its last counted slot, as the text form */
		cnt = n_slots > 0 ? (uint32_t)n_slots : 1;
		hist_finish(s, cnt);
		return 0;
	}
	if (hist) {
		snprintf(help, sizeof(help),
			 "log2 histograms of map %s per key (_sum approximate: slot midpoints)", d->name);
		m = add_metric(set, d->name, GBPF_METRIC_HISTOGRAM, help);
	} else if (vs == 4 || vs == 8 || (vs % 8 == 0 && vs <= 64)) {
		enum gbpf_metric_type t = strstr(d->name, "count") ||
						  (strlen(d->name) > 6 &&
						   !strcmp(d->name + strlen(d->name) - 6, "_total"))
					  ? GBPF_METRIC_COUNTER
					  : GBPF_METRIC_GAUGE;

		hist = 0;
		snprintf(help, sizeof(help), "values of map %s", d->name);
		m = add_metric(set, d->name, t, help);
	} else {
		return 0; /* values of other sizes have no numeric reading */
	}
	if (!m)
		return -ENOMEM;
	key = calloc(1, d->key_size);
	next = calloc(1, d->key_size);
	if (!key || !next) {
		err = -ENOMEM;
		goto out;
	}
	while (n < GBPF_METRIC_MAX_ROWS &&
	       gbpf_map__get_next_key(mi, have ? key : NULL, next) == 0) {
		char label[160];

		memcpy(key, next, d->key_size);
		have = 1;
		n++;
		key_label(label, sizeof(label), key, d->key_size);
		if (hist) {
			struct gbpf_metric_sample *s = add_sample(m);
			size_t cnt = words < GBPF_METRIC_HIST_SLOTS ? words : GBPF_METRIC_HIST_SLOTS;

			if (!s) {
				err = -ENOMEM;
				goto out;
			}
			snprintf(s->key, sizeof(s->key), "%s", label);
			for (w = 0; w < cnt; w++)
				s->slots[w] = value_word(mi, key, w, vs);
			hist_finish(s, cnt);
			continue;
		}
		/* Arrays list every index: export the non-zero ones only, as `gbpf run` prints. */
		for (w = 0; w < (vs <= 8 ? 1 : words); w++) {
			uint64_t v = value_word(mi, key, w, vs);
			struct gbpf_metric_sample *s;

			if (is_array(d->type) && !v)
				continue;
			s = add_sample(m);
			if (!s) {
				err = -ENOMEM;
				goto out;
			}
			snprintf(s->key, sizeof(s->key), "%s", label);
			s->word = vs <= 8 ? -1 : (int)w;
			s->value = (double)v;
		}
	}
out:
	free(key);
	free(next);
	return err;
}

int gbpf_metrics_from_maps(struct gbpf_metric_set *set, const struct gbpf_map_desc *descs,
			   struct gbpf_map_instance *maps, size_t cnt)
{
	size_t i;
	int err = 0;

	memset(set, 0, sizeof(*set));
	for (i = 0; i < cnt && !err; i++)
		err = from_map(set, &descs[i], &maps[i]);
	if (err)
		gbpf_metrics_free(set);
	return err;
}

void gbpf_metrics_free(struct gbpf_metric_set *set)
{
	size_t i;

	for (i = 0; i < set->cnt; i++)
		free(set->metrics[i].samples);
	free(set->metrics);
	memset(set, 0, sizeof(*set));
}
