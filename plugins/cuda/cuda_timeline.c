/* SPDX-License-Identifier: MIT */
/*
 * plugins/cuda/cuda_timeline.c - timeline events of CUDA launches, copies,
 * memsets and synchronisation (cuda_timeline.h says how and why).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cuda_timeline.h"

#define TL_PENDING 8192u
#define TL_RECALIBRATE_NS 1000000000ull
#define TL_EVENT_DEFAULT 0u
#define TL_STREAM_NON_BLOCKING 1u
#define TL_ERROR_NOT_READY 600

typedef CUresult (*tl_event_create_fn)(CUevent *, unsigned int);
typedef CUresult (*tl_event_destroy_fn)(CUevent);
typedef CUresult (*tl_event_record_fn)(CUevent, CUstream);
typedef CUresult (*tl_event_query_fn)(CUevent);
typedef CUresult (*tl_event_sync_fn)(CUevent);
typedef CUresult (*tl_event_elapsed_fn)(float *, CUevent, CUevent);
typedef CUresult (*tl_ctx_get_fn)(CUcontext *);
typedef CUresult (*tl_ctx_set_fn)(CUcontext);
typedef CUresult (*tl_stream_create_fn)(CUstream *, unsigned int);

/** GPU work whose end event has not completed yet. */
struct tl_pending {
	CUcontext ctx;
	CUevent begin, end;
	struct gbpf_timeline_event ev;
};

/** Reference point of one context: GPU event ref happened at host time ref_ns. */
struct tl_clock {
	CUcontext ctx;
	CUstream stream;
	CUevent ref;
	uint64_t ref_ns, taken_ns;
};

struct ca_timeline {
	struct gbpf_agent_services svc;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	struct tl_pending *q; /* ring of TL_PENDING */
	uint32_t head, tail;
	struct tl_clock clk;  /* the context seen first; others are calibrated on change */
	pthread_t thread;
	int running;
	atomic_int stop;
	atomic_ullong delivered, dropped;
	atomic_ullong next_corr; /* correlation ids: API call <-> GPU work */
	struct {
		tl_event_create_fn create;
		tl_event_destroy_fn destroy;
		tl_event_record_fn record;
		tl_event_query_fn query;
		tl_event_sync_fn sync;
		tl_event_elapsed_fn elapsed;
		tl_ctx_get_fn ctx_get;
		tl_ctx_set_fn ctx_set;
		tl_stream_create_fn stream_create;
	} cu;
};

/* A host call between call_pre and call_post on this thread (calls do not nest). */
struct tl_call {
	uint64_t begin_ns;
	CUevent begin;
	CUcontext ctx;
};
static _Thread_local struct tl_call ca_timeline_open_call;

static uint64_t tl_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void tl_send(struct ca_timeline *t, const struct gbpf_timeline_event *ev)
{
	if (t->svc.timeline(t->svc.ctx, ev) == 0)
		atomic_fetch_add(&t->delivered, 1);
	else
		atomic_fetch_add(&t->dropped, 1);
}

static CUevent tl_event(struct ca_timeline *t)
{
	CUevent e = NULL;

	return t->cu.create(&e, TL_EVENT_DEFAULT) == GBPF_CUDA_SUCCESS ? e : NULL;
}

/* Record the reference event of the current context; called on the completion thread. */
static int tl_calibrate(struct ca_timeline *t, CUcontext ctx)
{
	struct tl_clock *c = &t->clk;
	uint64_t before, after;

	if (c->ctx != ctx) {
		if (c->ref)
			t->cu.destroy(c->ref);
		memset(c, 0, sizeof(*c));
		c->ctx = ctx;
		if (t->cu.stream_create(&c->stream, TL_STREAM_NON_BLOCKING) != GBPF_CUDA_SUCCESS)
			return -EIO;
		c->ref = tl_event(t);
		if (!c->ref)
			return -EIO;
	}
	/* The event is stamped between the two host reads: take the midpoint. */
	before = tl_now();
	if (t->cu.record(c->ref, c->stream) != GBPF_CUDA_SUCCESS || t->cu.sync(c->ref) != GBPF_CUDA_SUCCESS)
		return -EIO;
	after = tl_now();
	c->ref_ns = before + (after - before) / 2;
	c->taken_ns = after;
	return 0;
}

/* Host time of a completed event, or 0. */
static uint64_t tl_host_time(struct ca_timeline *t, CUevent e)
{
	float ms = 0;

	if (t->cu.elapsed(&ms, t->clk.ref, e) != GBPF_CUDA_SUCCESS)
		return 0;
	return (uint64_t)((int64_t)t->clk.ref_ns + (int64_t)((double)ms * 1e6));
}

static void *tl_completion(void *arg)
{
	struct ca_timeline *t = arg;

	gbpf_cu_thread_relaxed_capture(); /* event waits must not invalidate an app's capture */
	pthread_mutex_lock(&t->lock);
	while (!atomic_load(&t->stop) || t->head != t->tail) {
		struct tl_pending *p;
		CUresult r;

		if (t->head == t->tail) {
			struct timespec until;

			clock_gettime(CLOCK_REALTIME, &until);
			until.tv_nsec += 2000000;
			if (until.tv_nsec >= 1000000000) {
				until.tv_sec++;
				until.tv_nsec -= 1000000000;
			}
			pthread_cond_timedwait(&t->wake, &t->lock, &until);
			continue;
		}
		p = &t->q[t->head % TL_PENDING];
		pthread_mutex_unlock(&t->lock);
		if (p->ctx != t->clk.ctx || tl_now() - t->clk.taken_ns > TL_RECALIBRATE_NS) {
			t->cu.ctx_set(p->ctx);
			tl_calibrate(t, p->ctx);
		}
		r = t->cu.query(p->end);
		if (r == TL_ERROR_NOT_READY && !atomic_load(&t->stop)) {
			usleep(50);
			pthread_mutex_lock(&t->lock);
			continue;
		}
		if (r == TL_ERROR_NOT_READY)
			t->cu.sync(p->end); /* stopping: wait for the last work */
		p->ev.gpu_begin_ns = tl_host_time(t, p->begin);
		p->ev.gpu_end_ns = tl_host_time(t, p->end);
		if (p->ev.gpu_begin_ns && p->ev.gpu_end_ns >= p->ev.gpu_begin_ns)
			tl_send(t, &p->ev);
		else
			atomic_fetch_add(&t->dropped, 1);
		t->cu.destroy(p->begin);
		t->cu.destroy(p->end);
		pthread_mutex_lock(&t->lock);
		t->head++;
	}
	pthread_mutex_unlock(&t->lock);
	return NULL;
}

int ca_timeline_create(struct ca_timeline **out, const struct gbpf_agent_services *svc)
{
	struct ca_timeline *t;

	*out = NULL;
	if (!svc || svc->sz < offsetof(struct gbpf_agent_services, timeline) + sizeof(svc->timeline) ||
	    !svc->timeline)
		return -ENOSYS;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->svc = *svc;
	t->cu.create = (tl_event_create_fn)gbpf_cu_real_proc("cuEventCreate", 2000, 0);
	t->cu.destroy = (tl_event_destroy_fn)gbpf_cu_real_proc("cuEventDestroy", 4000, 0);
	t->cu.record = (tl_event_record_fn)gbpf_cu_real_proc("cuEventRecord", 2000, 0);
	t->cu.query = (tl_event_query_fn)gbpf_cu_real_proc("cuEventQuery", 2000, 0);
	t->cu.sync = (tl_event_sync_fn)gbpf_cu_real_proc("cuEventSynchronize", 2000, 0);
	t->cu.elapsed = (tl_event_elapsed_fn)gbpf_cu_real_proc("cuEventElapsedTime", 2000, 0);
	t->cu.ctx_get = (tl_ctx_get_fn)gbpf_cu_real_proc("cuCtxGetCurrent", 4000, 0);
	t->cu.ctx_set = (tl_ctx_set_fn)gbpf_cu_real_proc("cuCtxSetCurrent", 4000, 0);
	t->cu.stream_create = (tl_stream_create_fn)gbpf_cu_real_proc("cuStreamCreate", 2000, 0);
	t->q = calloc(TL_PENDING, sizeof(*t->q));
	if (!t->q || !t->cu.create || !t->cu.destroy || !t->cu.record || !t->cu.query || !t->cu.sync ||
	    !t->cu.elapsed || !t->cu.ctx_get || !t->cu.ctx_set || !t->cu.stream_create) {
		int rc = t->q ? -ENOSYS : -ENOMEM;

		free(t->q);
		free(t);
		return rc;
	}
	pthread_mutex_init(&t->lock, NULL);
	pthread_cond_init(&t->wake, NULL);
	*out = t;
	return 0;
}

/* Queue GPU work for the completion thread (starting it at first use). */
static void tl_pend(struct ca_timeline *t, CUcontext ctx, CUevent begin, CUevent end,
		    const struct gbpf_timeline_event *ev)
{
	pthread_mutex_lock(&t->lock);
	if (!t->running) {
		if (pthread_create(&t->thread, NULL, tl_completion, t) == 0)
			t->running = 1;
	}
	if (!t->running || t->tail - t->head >= TL_PENDING) {
		pthread_mutex_unlock(&t->lock);
		t->cu.destroy(begin);
		t->cu.destroy(end);
		atomic_fetch_add(&t->dropped, 1);
		return;
	}
	t->q[t->tail % TL_PENDING] = (struct tl_pending){.ctx = ctx, .begin = begin, .end = end, .ev = *ev};
	t->tail++;
	pthread_cond_signal(&t->wake);
	pthread_mutex_unlock(&t->lock);
}

static void tl_base(struct gbpf_timeline_event *ev, uint32_t kind, uint64_t stream, uint64_t corr)
{
	memset(ev, 0, sizeof(*ev));
	ev->sz = sizeof(*ev);
	ev->kind = kind;
	ev->device = 0;
	ev->stream = stream;
	ev->correlation_id = corr;
}

void ca_timeline_launch_pre(struct ca_timeline *t, struct gbpf_cu_launch *l, uint64_t called_ns)
{
	struct tl_call *c;

	if (!t || (!l->stream && l->graph)) /* graph node edits launch nothing now */
		return;
	c = calloc(1, sizeof(*c));
	if (!c)
		return;
	c->begin_ns = called_ns ? called_ns : tl_now();
	t->cu.ctx_get(&c->ctx);
	c->begin = tl_event(t);
	if (c->begin && t->cu.record(c->begin, l->stream) != GBPF_CUDA_SUCCESS) {
		t->cu.destroy(c->begin);
		c->begin = NULL;
	}
	l->hook_data = c;
}

void ca_timeline_launch_post(struct ca_timeline *t, const struct gbpf_cu_launch *l)
{
	struct tl_call *c = l->hook_data;
	struct gbpf_timeline_event ev;
	uint64_t corr;
	CUevent end;

	if (!t || !c)
		return;
	corr = atomic_fetch_add(&t->next_corr, 1) + 1;
	tl_base(&ev, GBPF_TL_LAUNCH, (uint64_t)(uintptr_t)l->stream, corr);
	ev.flags = GBPF_TL_F_HOST | GBPF_TL_F_ASYNC;
	ev.host_begin_ns = c->begin_ns;
	ev.host_end_ns = tl_now();
	snprintf(ev.name, sizeof(ev.name), "%s", l->api_name ? l->api_name : "cuLaunchKernel");
	tl_send(t, &ev);
	if (c->begin && l->result == GBPF_CUDA_SUCCESS && (end = tl_event(t))) {
		if (t->cu.record(end, l->stream) == GBPF_CUDA_SUCCESS) {
			ev.kind = GBPF_TL_KERNEL;
			ev.flags = GBPF_TL_F_GPU;
			ev.host_begin_ns = ev.host_end_ns = 0;
			snprintf(ev.name, sizeof(ev.name), "%s", l->name ? l->name : "(unknown kernel)");
			tl_pend(t, c->ctx, c->begin, end, &ev);
			c->begin = NULL;
		} else {
			t->cu.destroy(end);
		}
	}
	if (c->begin)
		t->cu.destroy(c->begin);
	free(c);
}

static uint32_t tl_copy_kind(const struct gbpf_cu_call_event *ev)
{
	switch (ev->direction) {
	case GBPF_CU_COPY_H2D: return GBPF_TL_MEMCPY_H2D;
	case GBPF_CU_COPY_D2H: return GBPF_TL_MEMCPY_D2H;
	default: return GBPF_TL_MEMCPY_D2D;
	}
}

void ca_timeline_call_pre(struct ca_timeline *t, const struct gbpf_cu_call_event *ev)
{
	struct tl_call *c = &ca_timeline_open_call;

	if (!t)
		return;
	memset(c, 0, sizeof(*c));
	c->begin_ns = tl_now();
	if (ev->kind == GBPF_CU_CALL_MEMCPY || ev->kind == GBPF_CU_CALL_MEMSET) {
		t->cu.ctx_get(&c->ctx);
		c->begin = tl_event(t);
		if (c->begin && t->cu.record(c->begin, ev->stream) != GBPF_CUDA_SUCCESS) {
			t->cu.destroy(c->begin);
			c->begin = NULL;
		}
	}
}

void ca_timeline_call_post(struct ca_timeline *t, const struct gbpf_cu_call_event *ev)
{
	struct tl_call *c = &ca_timeline_open_call;
	struct gbpf_timeline_event te;
	uint64_t corr = 0;
	CUevent end;

	if (!t || !c->begin_ns)
		return;
	switch (ev->kind) {
	case GBPF_CU_CALL_MEMCPY:
	case GBPF_CU_CALL_MEMSET:
		corr = atomic_fetch_add(&t->next_corr, 1) + 1;
		tl_base(&te, ev->kind == GBPF_CU_CALL_MEMSET ? GBPF_TL_MEMSET : tl_copy_kind(ev),
			(uint64_t)(uintptr_t)ev->stream, corr);
		te.flags = GBPF_TL_F_HOST | (ev->async ? GBPF_TL_F_ASYNC : 0);
		te.bytes = ev->bytes;
		break;
	case GBPF_CU_CALL_SYNC:
		tl_base(&te, GBPF_TL_SYNC, (uint64_t)(uintptr_t)ev->stream, 0);
		te.flags = GBPF_TL_F_HOST;
		if (ev->api && strstr(ev->api, "CtxSynchronize"))
			te.flags |= GBPF_TL_F_DEVICE_WIDE;
		break;
	case GBPF_CU_CALL_MALLOC:
		tl_base(&te, GBPF_TL_ALLOC, 0, 0);
		te.flags = GBPF_TL_F_HOST;
		te.bytes = ev->bytes;
		break;
	default:
		c->begin_ns = 0;
		return;
	}
	te.host_begin_ns = c->begin_ns;
	te.host_end_ns = tl_now();
	snprintf(te.name, sizeof(te.name), "%s", ev->api ? ev->api : "?");
	tl_send(t, &te);
	if (c->begin && ev->result == GBPF_CUDA_SUCCESS && (end = tl_event(t))) {
		if (t->cu.record(end, ev->stream) == GBPF_CUDA_SUCCESS) {
			te.flags = GBPF_TL_F_GPU;
			te.host_begin_ns = te.host_end_ns = 0;
			tl_pend(t, c->ctx, c->begin, end, &te);
			c->begin = NULL;
		} else {
			t->cu.destroy(end);
		}
	}
	if (c->begin)
		t->cu.destroy(c->begin);
	c->begin = NULL;
	c->begin_ns = 0;
}

void ca_timeline_counts(struct ca_timeline *t, uint64_t *delivered, uint64_t *dropped)
{
	*delivered = t ? atomic_load(&t->delivered) : 0;
	*dropped = t ? atomic_load(&t->dropped) : 0;
}

void ca_timeline_destroy(struct ca_timeline *t)
{
	if (!t)
		return;
	atomic_store(&t->stop, 1);
	pthread_mutex_lock(&t->lock);
	pthread_cond_signal(&t->wake);
	pthread_mutex_unlock(&t->lock);
	if (t->running)
		pthread_join(t->thread, NULL);
	if (t->clk.ref)
		t->cu.destroy(t->clk.ref);
	pthread_mutex_destroy(&t->lock);
	pthread_cond_destroy(&t->wake);
	free(t->q);
	free(t);
}
