/* SPDX-License-Identifier: MIT */
/*
 * The timeline store and its summary. Names are interned so that a million
 * events cost ~100 MB at most; the store is bounded and counts what it
 * refuses, as every lossy path of gbpf does.
 */
#include "core/export/timeline.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

void gbpf_tl_init(struct gbpf_tl *tl, size_t max_events)
{
	memset(tl, 0, sizeof(*tl));
	tl->max = max_events ? max_events : GBPF_TL_DEFAULT_MAX_EVENTS;
}

void gbpf_tl_free(struct gbpf_tl *tl)
{
	size_t i;

	for (i = 0; i < tl->name_cnt; i++)
		free(tl->names[i]);
	free(tl->names);
	free(tl->name_hash);
	free(tl->recs);
	memset(tl, 0, sizeof(*tl));
}

static uint64_t fnv(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

/* Index of @p s in the name table, added if new; the table is bounded. */
static int intern(struct gbpf_tl *tl, const char *s, uint32_t *idx)
{
	size_t slots = 2 * GBPF_TL_MAX_NAMES, i;
	char *copy;

	if (!tl->name_hash) {
		tl->name_hash = calloc(slots, sizeof(*tl->name_hash));
		tl->names = calloc(GBPF_TL_MAX_NAMES + 1, sizeof(*tl->names));
		if (!tl->name_hash || !tl->names)
			return -ENOMEM;
	}
	for (i = fnv(s) % slots;; i = (i + 1) % slots) {
		uint32_t v = tl->name_hash[i];

		if (!v)
			break;
		if (!strcmp(tl->names[v - 1], s)) {
			*idx = v - 1;
			return 0;
		}
	}
	/* Full: one shared catch-all name keeps the table (and the hash) bounded. */
	if (tl->name_cnt == GBPF_TL_MAX_NAMES) {
		if (strcmp(s, "(other)"))
			return intern(tl, "(other)", idx);
		tl->names[tl->name_cnt] = strdup(s);
		if (!tl->names[tl->name_cnt])
			return -ENOMEM;
		*idx = (uint32_t)tl->name_cnt++;
		return 0;
	}
	copy = strdup(s);
	if (!copy)
		return -ENOMEM;
	tl->names[tl->name_cnt] = copy;
	tl->name_hash[i] = (uint32_t)tl->name_cnt + 1;
	*idx = (uint32_t)tl->name_cnt++;
	return 0;
}

int gbpf_tl_add(struct gbpf_tl *tl, uint32_t pid, const struct gbpf_timeline_event *ev)
{
	struct gbpf_tl_rec *r;
	char name[GBPF_TL_NAME_LEN];
	int err;

	if (tl->n == tl->max) {
		tl->dropped_store++;
		return -ENOSPC;
	}
	if (tl->n == tl->cap) {
		size_t cap = tl->cap ? tl->cap * 2 : 1024;
		struct gbpf_tl_rec *p;

		if (cap > tl->max)
			cap = tl->max;
		p = realloc(tl->recs, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		tl->recs = p;
		tl->cap = cap;
	}
	memcpy(name, ev->name, sizeof(name));
	name[sizeof(name) - 1] = 0;
	r = &tl->recs[tl->n];
	memset(r, 0, sizeof(*r));
	err = intern(tl, name[0] ? name : gbpf_tl_kind_label(ev->kind), &r->name);
	if (err)
		return err;
	r->pid = pid;
	r->kind = ev->kind;
	r->flags = ev->flags;
	r->device = ev->device;
	r->stream = ev->stream;
	r->corr = ev->correlation_id;
	r->tid = ev->host_tid;
	r->hb = ev->host_begin_ns;
	r->he = ev->host_end_ns;
	r->gb = ev->gpu_begin_ns;
	r->ge = ev->gpu_end_ns;
	r->bytes = ev->bytes;
	tl->n++;
	return 0;
}

const char *gbpf_tl_name(const struct gbpf_tl *tl, const struct gbpf_tl_rec *r)
{
	return r->name < tl->name_cnt ? tl->names[r->name] : "?";
}

const char *gbpf_tl_kind_label(uint32_t kind)
{
	static const char *const labels[] = {
		[GBPF_TL_LAUNCH] = "launch",     [GBPF_TL_KERNEL] = "kernel",
		[GBPF_TL_MEMCPY_H2D] = "H2D",    [GBPF_TL_MEMCPY_D2H] = "D2H",
		[GBPF_TL_MEMCPY_D2D] = "D2D",    [GBPF_TL_MEMSET] = "memset",
		[GBPF_TL_SYNC] = "sync",         [GBPF_TL_ALLOC] = "alloc",
		[GBPF_TL_FREE] = "free",         [GBPF_TL_MODULE_LOAD] = "module_load",
	};

	return kind < sizeof(labels) / sizeof(labels[0]) && labels[kind] ? labels[kind] : "?";
}

int gbpf_tl_kind_is_copy(uint32_t kind)
{
	return kind >= GBPF_TL_MEMCPY_H2D && kind <= GBPF_TL_MEMSET;
}

/* ---- GPU index --------------------------------------------------------------------- */

static int by_gpu_begin(const void *a, const void *b)
{
	const struct gbpf_tl_rec *x = *(const struct gbpf_tl_rec *const *)a;
	const struct gbpf_tl_rec *y = *(const struct gbpf_tl_rec *const *)b;

	return x->gb < y->gb ? -1 : x->gb > y->gb;
}

int gbpf_tl_gpu_index_build(const struct gbpf_tl *tl, struct gbpf_tl_gpu_index *ix)
{
	size_t i;

	memset(ix, 0, sizeof(*ix));
	ix->v = malloc((tl->n ? tl->n : 1) * sizeof(*ix->v));
	if (!ix->v)
		return -ENOMEM;
	for (i = 0; i < tl->n; i++) {
		const struct gbpf_tl_rec *r = &tl->recs[i];

		if (!(r->flags & GBPF_TL_F_GPU))
			continue;
		ix->v[ix->n++] = r;
		if (r->ge - r->gb > ix->max_dur)
			ix->max_dur = r->ge - r->gb;
	}
	qsort(ix->v, ix->n, sizeof(*ix->v), by_gpu_begin);
	return 0;
}

size_t gbpf_tl_gpu_index_from(const struct gbpf_tl_gpu_index *ix, uint64_t b)
{
	uint64_t t = b > ix->max_dur ? b - ix->max_dur : 0;
	size_t lo = 0, hi = ix->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ix->v[mid]->gb < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

void gbpf_tl_gpu_index_free(struct gbpf_tl_gpu_index *ix)
{
	free(ix->v);
	memset(ix, 0, sizeof(*ix));
}

/* ---- summary -------------------------------------------------------------------- */

struct ival {
	uint64_t b, e;
};

static int ival_cmp(const void *a, const void *b)
{
	const struct ival *x = a, *y = b;

	return x->b < y->b ? -1 : x->b > y->b;
}

/* Length of the union of @p n intervals (sorted in place). */
static uint64_t union_len(struct ival *v, size_t n)
{
	uint64_t total = 0, cb = 0, ce = 0;
	size_t i;

	qsort(v, n, sizeof(*v), ival_cmp);
	for (i = 0; i < n; i++) {
		if (i == 0 || v[i].b > ce) {
			total += ce - cb;
			cb = v[i].b;
			ce = v[i].e;
		} else if (v[i].e > ce) {
			ce = v[i].e;
		}
	}
	return n ? total + (ce - cb) : 0;
}

/* Overlap of [b, e) with the union of sorted, merged intervals. */
static uint64_t overlap(const struct ival *v, size_t n, uint64_t b, uint64_t e)
{
	uint64_t sum = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		uint64_t lo = v[i].b > b ? v[i].b : b, hi = v[i].e < e ? v[i].e : e;

		if (hi > lo)
			sum += hi - lo;
	}
	return sum;
}

/* Merge sorted intervals in place; returns the new count. */
static size_t merge(struct ival *v, size_t n)
{
	size_t i, o = 0;

	qsort(v, n, sizeof(*v), ival_cmp);
	for (i = 0; i < n; i++) {
		if (o && v[i].b <= v[o - 1].e) {
			if (v[i].e > v[o - 1].e)
				v[o - 1].e = v[i].e;
		} else {
			v[o++] = v[i];
		}
	}
	return o;
}

static int copy_slot(uint32_t kind)
{
	return (int)(kind - GBPF_TL_MEMCPY_H2D); /* H2D, D2H, D2D, memset */
}

/* The process's traced window: its first and last timestamp. */
static void window_of(const struct gbpf_tl *tl, uint32_t pid, uint64_t *lo, uint64_t *hi)
{
	size_t i;

	*lo = UINT64_MAX;
	*hi = 0;
	for (i = 0; i < tl->n; i++) {
		const struct gbpf_tl_rec *r = &tl->recs[i];

		if (r->pid != pid)
			continue;
		if (r->flags & GBPF_TL_F_HOST) {
			*lo = r->hb < *lo ? r->hb : *lo;
			*hi = r->he > *hi ? r->he : *hi;
		}
		if (r->flags & GBPF_TL_F_GPU) {
			*lo = r->gb < *lo ? r->gb : *lo;
			*hi = r->ge > *hi ? r->ge : *hi;
		}
	}
	if (*lo > *hi)
		*lo = *hi = 0;
}

static struct gbpf_tl_stream_sum *find_stream(struct gbpf_tl_summary *s, const struct gbpf_tl_rec *r)
{
	size_t i;

	for (i = 0; i < s->stream_cnt; i++)
		if (s->streams[i].pid == r->pid && s->streams[i].device == r->device &&
		    s->streams[i].stream == r->stream)
			return &s->streams[i];
	return NULL;
}

static int sum_streams(const struct gbpf_tl *tl, struct gbpf_tl_summary *s)
{
	struct ival *v = NULL;
	size_t i, j;
	int err = 0;

	for (i = 0; i < tl->n; i++) {
		const struct gbpf_tl_rec *r = &tl->recs[i];
		struct gbpf_tl_stream_sum *st;

		if (!(r->flags & GBPF_TL_F_GPU))
			continue;
		st = find_stream(s, r);
		if (!st) {
			/* Stream count is bounded by the events themselves. */
			struct gbpf_tl_stream_sum *p =
				realloc(s->streams, (s->stream_cnt + 1) * sizeof(*p));

			if (!p)
				return -ENOMEM;
			s->streams = p;
			st = &s->streams[s->stream_cnt++];
			memset(st, 0, sizeof(*st));
			st->pid = r->pid;
			st->device = r->device;
			st->stream = r->stream;
		}
		if (r->kind == GBPF_TL_KERNEL || r->kind == GBPF_TL_LAUNCH) {
			st->kernel_ns += r->ge - r->gb;
			st->kernel_cnt++;
		} else if (gbpf_tl_kind_is_copy(r->kind)) {
			int k = copy_slot(r->kind);

			st->copy_ns[k] += r->ge - r->gb;
			st->copy_cnt[k]++;
			st->copy_bytes[k] += r->bytes;
		}
	}
	v = malloc((tl->n ? tl->n : 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (j = 0; j < s->stream_cnt; j++) {
		struct gbpf_tl_stream_sum *st = &s->streams[j];
		uint64_t lo, hi;
		size_t n = 0;

		for (i = 0; i < tl->n; i++) {
			const struct gbpf_tl_rec *r = &tl->recs[i];

			if ((r->flags & GBPF_TL_F_GPU) && r->pid == st->pid &&
			    r->device == st->device && r->stream == st->stream)
				v[n++] = (struct ival){r->gb, r->ge};
		}
		st->busy_ns = union_len(v, n);
		window_of(tl, st->pid, &lo, &hi);
		st->window_ns = hi - lo;
		st->idle_ns = st->window_ns > st->busy_ns ? st->window_ns - st->busy_ns : 0;
	}
	free(v);
	return err;
}

static int sum_syncs(const struct gbpf_tl *tl, struct gbpf_tl_summary *s)
{
	struct ival *kern = malloc((tl->n ? tl->n : 1) * sizeof(*kern));
	struct ival *copy = malloc((tl->n ? tl->n : 1) * sizeof(*copy));
	struct gbpf_tl_gpu_index ix = {0};
	size_t i, j;
	int err = 0;

	if (!kern || !copy || gbpf_tl_gpu_index_build(tl, &ix)) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < tl->n && !err; i++) {
		const struct gbpf_tl_rec *r = &tl->recs[i];
		struct gbpf_tl_sync_sum *sy = NULL;
		size_t nk = 0, nc = 0;

		if (r->kind != GBPF_TL_SYNC || !(r->flags & GBPF_TL_F_HOST))
			continue;
		for (j = 0; j < s->sync_cnt; j++)
			if (s->syncs[j].pid == r->pid && s->syncs[j].name == r->name)
				sy = &s->syncs[j];
		if (!sy) {
			struct gbpf_tl_sync_sum *p = realloc(s->syncs, (s->sync_cnt + 1) * sizeof(*p));

			if (!p) {
				err = -ENOMEM;
				break;
			}
			s->syncs = p;
			sy = &s->syncs[s->sync_cnt++];
			memset(sy, 0, sizeof(*sy));
			sy->pid = r->pid;
			sy->name = r->name;
		}
		sy->calls++;
		sy->waited_ns += r->he - r->hb;
		if (r->he - r->hb > sy->max_ns)
			sy->max_ns = r->he - r->hb;
		/* The GPU work that ran while the host waited: what the wait was for. */
		for (j = gbpf_tl_gpu_index_from(&ix, r->hb); j < ix.n && ix.v[j]->gb < r->he; j++) {
			const struct gbpf_tl_rec *g = ix.v[j];

			if (g->pid != r->pid || g->device != r->device || g->ge <= r->hb)
				continue;
			if (!(r->flags & GBPF_TL_F_DEVICE_WIDE) && g->stream != r->stream)
				continue;
			if (g->kind == GBPF_TL_KERNEL || g->kind == GBPF_TL_LAUNCH)
				kern[nk++] = (struct ival){g->gb, g->ge};
			else if (gbpf_tl_kind_is_copy(g->kind))
				copy[nc++] = (struct ival){g->gb, g->ge};
		}
		nk = merge(kern, nk);
		nc = merge(copy, nc);
		sy->gpu_kernel_ns += overlap(kern, nk, r->hb, r->he);
		sy->gpu_copy_ns += overlap(copy, nc, r->hb, r->he);
	}
out:
	gbpf_tl_gpu_index_free(&ix);
	free(kern);
	free(copy);
	return err;
}

int gbpf_tl_summarize(const struct gbpf_tl *tl, struct gbpf_tl_summary *out)
{
	int err;

	memset(out, 0, sizeof(*out));
	out->events = tl->n;
	err = sum_streams(tl, out);
	if (!err)
		err = sum_syncs(tl, out);
	if (err)
		gbpf_tl_summary_free(out);
	return err;
}

void gbpf_tl_summary_free(struct gbpf_tl_summary *s)
{
	free(s->streams);
	free(s->syncs);
	memset(s, 0, sizeof(*s));
}

/* A duration as people read it: 850 ns, 455.0 us, 12.30 ms, 1.20 s. */
static const char *dur(char *buf, size_t cap, uint64_t ns)
{
	if (ns < 1000)
		snprintf(buf, cap, "%" PRIu64 " ns", ns);
	else if (ns < 1000000)
		snprintf(buf, cap, "%.1f us", (double)ns / 1e3);
	else if (ns < 1000000000)
		snprintf(buf, cap, "%.2f ms", (double)ns / 1e6);
	else
		snprintf(buf, cap, "%.2f s", (double)ns / 1e9);
	return buf;
}

void gbpf_tl_summary_print(const struct gbpf_tl *tl, const struct gbpf_tl_summary *s, FILE *out)
{
	static const char *const copy_names[4] = {"H2D", "D2H", "D2D", "memset"};
	char a[32], b[32], c[32];
	size_t i;
	int k;

	fprintf(out, "\nGPU timeline: %" PRIu64 " events", s->events);
	if (tl->dropped_agents || tl->dropped_store)
		fprintf(out, " (%" PRIu64 " lost: agent queues full %" PRIu64
			", store limit %" PRIu64 ")",
			tl->dropped_agents + tl->dropped_store, tl->dropped_agents,
			tl->dropped_store);
	fprintf(out, "\n");
	for (i = 0; i < s->stream_cnt; i++) {
		const struct gbpf_tl_stream_sum *st = &s->streams[i];

		fprintf(out, "  pid %u device %d stream %" PRIu64 ": kernels %s (%" PRIu64 ")",
			st->pid, st->device, st->stream, dur(a, sizeof(a), st->kernel_ns),
			st->kernel_cnt);
		for (k = 0; k < 4; k++)
			if (st->copy_cnt[k])
				fprintf(out, ", %s %s (%" PRIu64 ")", copy_names[k],
					dur(a, sizeof(a), st->copy_ns[k]), st->copy_cnt[k]);
		fprintf(out, ", idle %s of %s\n", dur(b, sizeof(b), st->idle_ns),
			dur(c, sizeof(c), st->window_ns));
	}
	for (i = 0; i < s->sync_cnt; i++) {
		const struct gbpf_tl_sync_sum *sy = &s->syncs[i];

		fprintf(out, "  pid %u %s x%" PRIu64 ": host waited %s (max %s)", sy->pid,
			sy->name < tl->name_cnt ? tl->names[sy->name] : "?", sy->calls,
			dur(a, sizeof(a), sy->waited_ns), dur(b, sizeof(b), sy->max_ns));
		fprintf(out, " while the GPU ran kernels %s", dur(a, sizeof(a), sy->gpu_kernel_ns));
		fprintf(out, ", copies %s\n", dur(c, sizeof(c), sy->gpu_copy_ns));
	}
}
