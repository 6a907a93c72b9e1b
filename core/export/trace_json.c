/* SPDX-License-Identifier: MIT */
/*
 * The timeline as Chrome Trace Event JSON, the format ui.perfetto.dev and
 * chrome://tracing open (and PyTorch / Nsight exports use):
 *  - host API calls: pid = the application process, tid = its thread,
 *    cat "api" ("sync" for synchronising calls);
 *  - GPU work: one process per device (pid GBPF_TRACE_GPU_PID_BASE + device,
 *    named "GPU N"), one thread per stream (tid numbered in order of
 *    appearance, named "stream S (pid P)"), cat "kernel", "memcpy", "memset";
 *  - a flow (ph s/f) from each API call to the GPU work it caused (same
 *    correlation id);
 *  - each synchronising call is a slice with a child "wait" slice, and a
 *    flow from the last GPU work of every stream it waited for to the wait.
 * Times are microseconds with nanosecond fractions (CLOCK_MONOTONIC).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/export/timeline.h"
#include "core/export/export_util.h"

/* GPU "processes" live far above real pids (pid_max is at most 2^22). */
#define GBPF_TRACE_GPU_PID_BASE 100000000u

struct track {
	uint32_t pid;
	int32_t device;
	uint64_t stream;
	uint32_t tid;
};

struct trace_w {
	FILE *f;
	int first;
	uint64_t flow_id;
	struct track *tracks;
	size_t track_cnt;
};

static void ts_us(FILE *f, uint64_t ns)
{
	fprintf(f, "%" PRIu64 ".%03" PRIu64, ns / 1000, ns % 1000);
}

static void ev_begin(struct trace_w *w)
{
	fputs(w->first ? "\n" : ",\n", w->f);
	w->first = 0;
}

static uint32_t gpu_pid(int32_t device)
{
	return GBPF_TRACE_GPU_PID_BASE + (uint32_t)(device < 0 ? 0 : device);
}

/* Track (GPU tid) of a stream; -ENOMEM when it cannot be recorded. */
static int track_of(struct trace_w *w, const struct gbpf_tl_rec *r, uint32_t *tid, int *is_new)
{
	size_t i;
	uint32_t next = 1;
	struct track *p;

	*is_new = 0;
	for (i = 0; i < w->track_cnt; i++) {
		if (w->tracks[i].pid == r->pid && w->tracks[i].device == r->device &&
		    w->tracks[i].stream == r->stream) {
			*tid = w->tracks[i].tid;
			return 0;
		}
		if (w->tracks[i].device == r->device)
			next++;
	}
	p = realloc(w->tracks, (w->track_cnt + 1) * sizeof(*p));
	if (!p)
		return -ENOMEM;
	w->tracks = p;
	w->tracks[w->track_cnt++] = (struct track){r->pid, r->device, r->stream, next};
	*tid = next;
	*is_new = 1;
	return 0;
}

static void meta(struct trace_w *w, const char *what, uint32_t pid, uint64_t tid, const char *name)
{
	ev_begin(w);
	fprintf(w->f, "{\"name\":\"%s\",\"ph\":\"M\",\"ts\":0,\"pid\":%u,\"tid\":%" PRIu64
		",\"args\":{\"name\":", what, pid, tid);
	gbpf_json_str(w->f, name);
	fputs("}}", w->f);
}

static void slice(struct trace_w *w, const char *name, const char *cat, uint32_t pid, uint64_t tid,
		  uint64_t b, uint64_t e, const struct gbpf_tl_rec *r)
{
	ev_begin(w);
	fputs("{\"name\":", w->f);
	gbpf_json_str(w->f, name);
	fprintf(w->f, ",\"cat\":\"%s\",\"ph\":\"X\",\"ts\":", cat);
	ts_us(w->f, b);
	fputs(",\"dur\":", w->f);
	ts_us(w->f, e - b);
	fprintf(w->f, ",\"pid\":%u,\"tid\":%" PRIu64, pid, tid);
	if (r) {
		fprintf(w->f, ",\"args\":{\"kind\":\"%s\",\"correlation\":%" PRIu64
			",\"stream\":%" PRIu64 ",\"device\":%d",
			gbpf_tl_kind_label(r->kind), r->corr, r->stream, r->device);
		if (r->bytes)
			fprintf(w->f, ",\"bytes\":%" PRIu64, r->bytes);
		fputs("}", w->f);
	}
	fputs("}", w->f);
}

/* One end of a flow: 's' inside the source slice, 'f' bound to the enclosing slice. */
static void flow(struct trace_w *w, char ph, const char *cat, uint64_t id, uint32_t pid,
		 uint64_t tid, uint64_t ts)
{
	ev_begin(w);
	fprintf(w->f, "{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"%c\",\"id\":%" PRIu64 ",\"ts\":",
		cat, cat, ph, id);
	ts_us(w->f, ts);
	fprintf(w->f, ",\"pid\":%u,\"tid\":%" PRIu64 "%s}", pid, tid, ph == 'f' ? ",\"bp\":\"e\"" : "");
}

static const char *cat_of(uint32_t kind)
{
	if (kind == GBPF_TL_KERNEL || kind == GBPF_TL_LAUNCH)
		return "kernel";
	if (kind == GBPF_TL_MEMSET)
		return "memset";
	if (gbpf_tl_kind_is_copy(kind))
		return "memcpy";
	return "api";
}

/* Host slices of one process's thread must nest: sort host calls per (pid, tid) by begin. */
static int host_cmp(const void *a, const void *b)
{
	const struct gbpf_tl_rec *x = *(const struct gbpf_tl_rec *const *)a;
	const struct gbpf_tl_rec *y = *(const struct gbpf_tl_rec *const *)b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->hb != y->hb)
		return x->hb < y->hb ? -1 : 1;
	return x->he > y->he ? -1 : x->he < y->he; /* the longer (parent) first */
}

/* Host calls with a correlation id, sorted by (pid, id): a GPU item finds its call by bsearch. */
static int by_pid_corr(const void *a, const void *b)
{
	const struct gbpf_tl_rec *x = *(const struct gbpf_tl_rec *const *)a;
	const struct gbpf_tl_rec *y = *(const struct gbpf_tl_rec *const *)b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->corr < y->corr ? -1 : x->corr > y->corr;
}

static const struct gbpf_tl_rec *find_call(const struct gbpf_tl_rec **calls, size_t n,
					   const struct gbpf_tl_rec *g)
{
	const struct gbpf_tl_rec *const *hit = bsearch(&g, calls, n, sizeof(*calls), by_pid_corr);

	return hit ? *hit : NULL;
}

/* The GPU work a sync waited for: per stream, the last work ending inside the wait. */
static int sync_flows(struct trace_w *w, const struct gbpf_tl_gpu_index *ix,
		      const struct gbpf_tl_rec *s)
{
	const struct gbpf_tl_rec **last = calloc(w->track_cnt ? w->track_cnt : 1, sizeof(*last));
	size_t i, t;

	if (!last)
		return -ENOMEM;
	for (i = gbpf_tl_gpu_index_from(ix, s->hb); i < ix->n && ix->v[i]->gb < s->he; i++) {
		const struct gbpf_tl_rec *g = ix->v[i];

		if (g->pid != s->pid || g->device != s->device || g->ge <= s->hb || g->ge > s->he ||
		    (!(s->flags & GBPF_TL_F_DEVICE_WIDE) && g->stream != s->stream))
			continue;
		for (t = 0; t < w->track_cnt; t++)
			if (w->tracks[t].pid == g->pid && w->tracks[t].device == g->device &&
			    w->tracks[t].stream == g->stream)
				break;
		if (t < w->track_cnt && (!last[t] || g->ge > last[t]->ge))
			last[t] = g;
	}
	for (t = 0; t < w->track_cnt; t++) {
		const struct gbpf_tl_rec *g = last[t];

		if (!g)
			continue;
		w->flow_id++;
		/* Start inside the GPU slice (its last ns), end inside the wait slice. */
		flow(w, 's', "wait", w->flow_id, gpu_pid(g->device), w->tracks[t].tid,
		     g->ge > g->gb ? g->ge - 1 : g->gb);
		flow(w, 'f', "wait", w->flow_id, s->pid, s->tid, g->ge > s->hb ? g->ge : s->hb);
	}
	free(last);
	return 0;
}

/* Name each process and each GPU once (small tables: pids and devices are few). */
static int name_processes(struct trace_w *w, const struct gbpf_tl *tl,
			  const char *(*proc_name)(void *ctx, uint32_t pid), void *ctx)
{
	uint32_t *pids = NULL;
	int32_t *devs = NULL;
	size_t np = 0, nd = 0, i, j;
	int err = 0;

	for (i = 0; i < tl->n && !err; i++) {
		const struct gbpf_tl_rec *r = &tl->recs[i];

		for (j = 0; j < np && pids[j] != r->pid; j++)
			;
		if (j == np) {
			char name[300];
			const char *pn = proc_name ? proc_name(ctx, r->pid) : NULL;
			uint32_t *p = realloc(pids, (np + 1) * sizeof(*p));

			if (!p) {
				err = -ENOMEM;
				break;
			}
			pids = p;
			pids[np++] = r->pid;
			snprintf(name, sizeof(name), "%s (pid %u)", pn && pn[0] ? pn : "process",
				 r->pid);
			meta(w, "process_name", r->pid, 0, name);
		}
		if (!(r->flags & GBPF_TL_F_GPU))
			continue;
		for (j = 0; j < nd && devs[j] != r->device; j++)
			;
		if (j == nd) {
			char name[32];
			int32_t *p = realloc(devs, (nd + 1) * sizeof(*p));

			if (!p) {
				err = -ENOMEM;
				break;
			}
			devs = p;
			devs[nd++] = r->device;
			snprintf(name, sizeof(name), "GPU %d", r->device);
			meta(w, "process_name", gpu_pid(r->device), 0, name);
		}
	}
	free(pids);
	free(devs);
	return err;
}

static int write_body(struct trace_w *w, const struct gbpf_tl *tl,
		      const char *(*proc_name)(void *ctx, uint32_t pid), void *ctx)
{
	const struct gbpf_tl_rec **host = NULL, **calls = NULL;
	struct gbpf_tl_gpu_index ix = {0};
	size_t i, nh = 0, nc = 0;
	int err;

	err = name_processes(w, tl, proc_name, ctx);
	if (err)
		return err;
	host = malloc((tl->n ? tl->n : 1) * sizeof(*host));
	calls = malloc((tl->n ? tl->n : 1) * sizeof(*calls));
	if (!host || !calls || gbpf_tl_gpu_index_build(tl, &ix)) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < tl->n; i++) {
		const struct gbpf_tl_rec *r = &tl->recs[i];

		if (!(r->flags & GBPF_TL_F_HOST))
			continue;
		host[nh++] = r;
		if (r->corr)
			calls[nc++] = r;
	}
	qsort(calls, nc, sizeof(*calls), by_pid_corr);
	/* GPU work, one track per stream, with the flow from its API call. */
	for (i = 0; i < tl->n; i++) {
		const struct gbpf_tl_rec *r = &tl->recs[i], *h;
		uint32_t tid;
		int is_new;

		if (!(r->flags & GBPF_TL_F_GPU))
			continue;
		err = track_of(w, r, &tid, &is_new);
		if (err)
			goto out;
		if (is_new) {
			char name[96];

			snprintf(name, sizeof(name), "stream %" PRIu64 " (pid %u)", r->stream, r->pid);
			meta(w, "thread_name", gpu_pid(r->device), tid, name);
		}
		slice(w, gbpf_tl_name(tl, r), cat_of(r->kind), gpu_pid(r->device), tid, r->gb, r->ge,
		      r);
		/* The API call that caused it: same process, same correlation id. */
		h = r->corr ? find_call(calls, nc, r) : NULL;
		if (!h)
			continue;
		w->flow_id++;
		flow(w, 's', "launch", w->flow_id, h->pid, h->tid, h->hb);
		flow(w, 'f', "launch", w->flow_id, gpu_pid(r->device), tid, r->gb);
	}
	/* Host calls, per thread in begin order so that slices nest. */
	qsort(host, nh, sizeof(*host), host_cmp);
	for (i = 0; i < nh && !err; i++) {
		const struct gbpf_tl_rec *r = host[i];

		if (i == 0 || r->tid != host[i - 1]->tid || r->pid != host[i - 1]->pid) {
			char name[48];

			snprintf(name, sizeof(name), "thread %" PRIu64, r->tid);
			meta(w, "thread_name", r->pid, r->tid, name);
		}
		slice(w, gbpf_tl_name(tl, r), r->kind == GBPF_TL_SYNC ? "sync" : "api", r->pid,
		      r->tid, r->hb, r->he, r);
		if (r->kind == GBPF_TL_SYNC) {
			/* The wait the call absorbed, made obvious as a child slice. */
			slice(w, "wait for GPU", "wait", r->pid, r->tid, r->hb, r->he, NULL);
			err = sync_flows(w, &ix, r);
		}
	}
out:
	gbpf_tl_gpu_index_free(&ix);
	free(host);
	free(calls);
	return err;
}

int gbpf_tl_write_trace(const struct gbpf_tl *tl, const char *path,
			const char *(*proc_name)(void *ctx, uint32_t pid), void *ctx, char *why,
			size_t why_size)
{
	struct trace_w w = {.first = 1};
	char tmp[4096];
	int err;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp)) {
		snprintf(why, why_size, "trace file %s: path too long", path);
		return -ENAMETOOLONG;
	}
	w.f = fopen(tmp, "w");
	if (!w.f) {
		err = -errno;
		snprintf(why, why_size, "trace file %s: %s", tmp, strerror(errno));
		return err;
	}
	fputs("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":\"gbpf\","
	      "\"clock\":\"CLOCK_MONOTONIC\"", w.f);
	fprintf(w.f, ",\"dropped_events\":%" PRIu64 "},\"traceEvents\":[",
		tl->dropped_agents + tl->dropped_store);
	err = write_body(&w, tl, proc_name, ctx);
	fputs("\n]}\n", w.f);
	free(w.tracks);
	if (ferror(w.f) && !err)
		err = -EIO;
	if (fclose(w.f) && !err)
		err = -errno;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err) {
		snprintf(why, why_size, "trace file %s: %s", path, strerror(-err));
		unlink(tmp);
	}
	return err;
}
