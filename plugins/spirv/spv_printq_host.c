/* SPDX-License-Identifier: MIT */
/*
 * plugins/spirv/spv_printq_host.c - the host side of the SPIR-V print
 * queue (layout in spirv.h): formatting through the interpreter's own
 * trace_printk / puts helpers, in-order draining, and a drain thread.
 *
 * The host only loads records and stores tail (never a read-modify-write on
 * memory the device writes). A record is copied out before tail moves past
 * it, since the device may then reuse its slot. A line the sink refuses
 * (-EAGAIN: the agent's queue is full) stays at the head of the queue and
 * is offered again; the device meanwhile counts its own drops exactly.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gbpf/helper_ids.h>
#include <gbpf/insn.h>
#include <gbpf/plugin.h>

#include "core/helpers/host_helpers.h"
#include "spirv.h"

int gbpf_spirv_prog_prints(const struct gbpf_prog_desc *prog)
{
	for (size_t i = 0; prog && i < prog->insn_cnt; i++) {
		const struct gbpf_insn *in = &prog->insns[i];

		if (in->code == (GBPF_JMP | GBPF_CALL) && in->src == 0 &&
		    (in->imm == GBPF_HELPER_TRACE_PRINTK || in->imm == GBPF_HELPER_GPU_PUTS))
			return 1;
	}
	return 0;
}

uint32_t gbpf_spirv_printq_slots(uint32_t dflt)
{
	const char *e = getenv("GBPF_PRINTQ_SLOTS");
	char *end = NULL;
	unsigned long v;

	if (!e || !*e)
		return dflt;
	v = strtoul(e, &end, 0);
	if (*end || !v || (v & (v - 1)) || v > GBPF_SPIRV_PRINTQ_MAX_SLOTS)
		return dflt;
	return (uint32_t)v;
}

size_t gbpf_spirv_printq_size(uint32_t nslots)
{
	if (!nslots || (nslots & (nslots - 1)) || nslots > GBPF_SPIRV_PRINTQ_MAX_SLOTS)
		return 0;
	return GBPF_SPIRV_PRINTQ_HDR + (size_t)nslots * GBPF_SPIRV_PRINTQ_REC_SIZE;
}

int gbpf_spirv_printq_init(void *mem, size_t size, uint32_t nslots)
{
	size_t need = gbpf_spirv_printq_size(nslots);
	struct gbpf_spirv_printq_hdr *h = mem;

	if (!mem || !need || size < need || ((uintptr_t)mem & 7))
		return -EINVAL;
	memset(mem, 0, need);
	h->nslots = nslots;
	h->rec_size = GBPF_SPIRV_PRINTQ_REC_SIZE;
	return 0;
}

/* ---- formatting: the interpreter's helpers, reading only the record's copy ---- */

int gbpf_spirv_printq_format(const void *rec, char *out, size_t out_size)
{
	const unsigned char *r = rec;
	uint32_t kind, len;
	uint64_t args[3];

	if (!rec || !out || out_size < 2)
		return -EINVAL;
	out[0] = 0;
	memcpy(&kind, r + 8, 4);
	memcpy(&len, r + 12, 4);
	memcpy(args, r + 16, sizeof(args));
	if (len > GBPF_SPIRV_PRINTQ_TEXT_MAX)
		return -EINVAL;
	if (kind != GBPF_SPIRV_PRINTQ_PRINTK && kind != GBPF_SPIRV_PRINTQ_PUTS)
		return -EINVAL;
	return gbpf_format_device_print(kind == GBPF_SPIRV_PRINTQ_PRINTK ? GBPF_HELPER_TRACE_PRINTK
									 : GBPF_HELPER_GPU_PUTS,
					(const char *)r + GBPF_SPIRV_PRINTQ_TEXT_OFF, len, args, out, out_size);
}

/* ---- draining ---- */

struct gbpf_spirv_printer {
	struct gbpf_spirv_printq_hdr *q;
	gbpf_spirv_print_fn fn;
	void *ctx;
	pthread_mutex_t lock; /* one consumer at a time: the thread or a flush */
	pthread_t thread;
	int started;
	atomic_int stop;
	uint64_t tail;        /* host's copy of q->tail */
	uint64_t delivered;
	uint64_t refused;     /* lines the sink refused for good (lost) */
	int refused_rc;       /* the sink's answer to the last of them */
	uint64_t bad;         /* records the helper could not format (lost) */
	uint64_t reported;    /* lost lines already returned by a flush */
	char pending[1024];   /* a formatted line the sink refused */
	size_t pending_len;
	int has_pending;
};

static uint64_t ms_since(const struct timespec *t)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (uint64_t)(now.tv_sec - t->tv_sec) * 1000u + (uint64_t)((now.tv_nsec - t->tv_nsec) / 1000000);
}

/*
 * Deliver records in order (under p->lock). A line the sink refuses for
 * now (-EAGAIN) stays pending, in front of the rest. Returns the lines
 * delivered.
 */
static uint64_t drain_locked(struct gbpf_spirv_printer *p)
{
	uint64_t n = 0;
	uint32_t nslots = p->q->nslots;

	for (;;) {
		if (p->has_pending) {
			int rc = p->fn(p->ctx, p->pending, p->pending_len);

			if (rc == -EAGAIN)
				return n;
			if (rc == 0) {
				p->delivered++;
				n++;
			} else {
				p->refused++;
				p->refused_rc = rc;
			}
			p->has_pending = 0;
		}
		{
			const unsigned char *rec = (const unsigned char *)p->q + GBPF_SPIRV_PRINTQ_HDR +
						   (p->tail & (nslots - 1)) * (uint64_t)GBPF_SPIRV_PRINTQ_REC_SIZE;
			unsigned char copy[GBPF_SPIRV_PRINTQ_REC_SIZE];
			uint64_t seq = atomic_load_explicit((_Atomic uint64_t *)(uintptr_t)rec, memory_order_acquire);
			int len;

			if (seq != p->tail + 1)
				return n;
			memcpy(copy, rec, sizeof(copy));
			p->tail++;
			atomic_store_explicit((_Atomic uint64_t *)&p->q->tail, p->tail, memory_order_release);
			len = gbpf_spirv_printq_format(copy, p->pending, sizeof(p->pending));
			if (len < 0) {
				p->bad++;
				continue;
			}
			p->pending_len = (size_t)len;
			p->has_pending = 1;
		}
	}
}

static void *printer_main(void *arg)
{
	struct gbpf_spirv_printer *p = arg;
	const struct timespec nap = {0, 1000000};

	while (!atomic_load(&p->stop)) {
		uint64_t n;

		pthread_mutex_lock(&p->lock);
		/* while running, a refused line waits as long as it must */
		n = drain_locked(p);
		pthread_mutex_unlock(&p->lock);
		if (!n)
			nanosleep(&nap, NULL);
	}
	return NULL;
}

int gbpf_spirv_printer_start(void *mem, gbpf_spirv_print_fn fn, void *ctx,
			     struct gbpf_spirv_printer **out)
{
	struct gbpf_spirv_printer *p;
	sigset_t all, old;
	int err;

	if (!mem || !fn || !out || !gbpf_spirv_printq_size(((struct gbpf_spirv_printq_hdr *)mem)->nslots))
		return -EINVAL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->q = mem;
	p->fn = fn;
	p->ctx = ctx;
	p->tail = p->q->tail;
	pthread_mutex_init(&p->lock, NULL);
	/* the application's signals belong to its own threads */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&p->thread, NULL, printer_main, p);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		pthread_mutex_destroy(&p->lock);
		free(p);
		return -EAGAIN;
	}
	p->started = 1;
	*out = p;
	return 0;
}

uint64_t gbpf_spirv_printer_flush(struct gbpf_spirv_printer *p, int wait_ms)
{
	const struct timespec nap = {0, 200000};
	struct timespec start;
	uint64_t lost;

	if (!p)
		return 0;
	clock_gettime(CLOCK_MONOTONIC, &start);
	pthread_mutex_lock(&p->lock);
	/*
	 * A line the sink refuses for now (-EAGAIN: the agent's channel to the
	 * controller is full) stays pending and the thread delivers it when the
	 * sink takes lines again; the flush waits for it at most @wait_ms, then
	 * returns without it. Giving it up here lost lines whenever the
	 * controller fell behind for a moment on a loaded host (levelzero_run and
	 * opencl_run lost 1 of 7168 lines in loaded runs, session 13).
	 */
	drain_locked(p);
	while (p->has_pending && ms_since(&start) < (uint64_t)wait_ms) {
		pthread_mutex_unlock(&p->lock);
		nanosleep(&nap, NULL);
		pthread_mutex_lock(&p->lock);
		drain_locked(p);
	}
	lost = atomic_load_explicit((_Atomic uint64_t *)&p->q->drops, memory_order_relaxed) + p->refused + p->bad;
	lost -= p->reported;
	p->reported += lost;
	pthread_mutex_unlock(&p->lock);
	return lost;
}

uint64_t gbpf_spirv_printer_delivered(struct gbpf_spirv_printer *p)
{
	uint64_t n;

	if (!p)
		return 0;
	pthread_mutex_lock(&p->lock);
	n = p->delivered;
	pthread_mutex_unlock(&p->lock);
	return n;
}

void gbpf_spirv_printer_stop(struct gbpf_spirv_printer *p, int wait_ms)
{
	if (!p)
		return;
	atomic_store(&p->stop, 1);
	if (p->started)
		pthread_join(p->thread, NULL);
	gbpf_spirv_printer_flush(p, wait_ms);
	/* nothing delivers a line still refused after this */
	if (p->has_pending)
		p->refused++;
	pthread_mutex_destroy(&p->lock);
	free(p);
}

/* ---- the agents' printer ---- */

int gbpf_spirv_agent_printer_start(void *mem, const struct gbpf_agent_services *svc,
				   struct gbpf_spirv_printer **out, char *why, size_t why_size)
{
	if (!svc || svc->sz < offsetof(struct gbpf_agent_services, print) + sizeof(svc->print) ||
	    !svc->print) {
		snprintf(why, why_size,
			 "the core offers no print service (plugin ABI older than 1.2): trace_printk and "
			 "puts return -ENOTSUP on the device");
		return -ENOTSUP;
	}
	return gbpf_spirv_printer_start(mem, svc->print, svc->ctx, out);
}

void gbpf_spirv_agent_printer_flush(struct gbpf_spirv_printer *p, const struct gbpf_agent_services *svc,
				    const char *kernel, int wait_ms)
{
	uint64_t lost = gbpf_spirv_printer_flush(p, wait_ms), drops, refused, bad;
	int rc;

	if (!lost || !svc)
		return;
	/* which way they were lost, counted since the start: the remedy differs */
	pthread_mutex_lock(&p->lock);
	drops = atomic_load_explicit((_Atomic uint64_t *)&p->q->drops, memory_order_relaxed);
	refused = p->refused;
	rc = p->refused_rc;
	bad = p->bad;
	pthread_mutex_unlock(&p->lock);
	gbpf_agent_reportf(svc, GBPF_AGENT_EVENT_ERROR, kernel,
			   "%llu trace_printk/puts line%s lost (so far: %llu dropped on the device, its print "
			   "queue of %u records full; %llu refused by the agent, last with error %d; %llu "
			   "unformattable)",
			   (unsigned long long)lost, lost == 1 ? "" : "s", (unsigned long long)drops, p->q->nslots,
			   (unsigned long long)refused, rc, (unsigned long long)bad);
}
