/* SPDX-License-Identifier: MIT */
/*
 * plugins/cuda/cuda_agent_printq.h - the agent's trace_printk / puts queues,
 * one set per context (device memory is per context), made at the first
 * instrumented kernel of the context that prints and closed when the
 * context goes or the agent detaches (internal to the cuda agent; the
 * queues themselves: cuda_printq_host.h).
 */
#ifndef GBPF_CUDA_AGENT_PRINTQ_H
#define GBPF_CUDA_AGENT_PRINTQ_H

#include <stddef.h>

#include "cuda_printq_host.h"

/** Told once a context's queues close, when the GPU dropped lines (a full queue). */
typedef void (*ca_printq_lost_fn)(void *ctx, unsigned long long lines);

struct ca_printq;

/** Every context's queues; zero-initialise, then set the callbacks. */
struct ca_printqs {
	gbpf_printq_sink_fn sink;  /**< where the lines go (the drain threads call it) */
	ca_printq_lost_fn lost;    /**< drops, reported at close */
	void *ctx;                 /**< for both */
	struct cuda_driver drv;    /**< real driver entry points, resolved at the first queue */
	struct ca_printq *list;
};

/**
 * The queues of context @p ctx (the current one), made at the first call:
 * one queue per SM (@p sms rounded up to a power of two, at most 1024;
 * threads use smid & (n - 1)) of 256 records, and a drain thread.
 * @return the queues, or NULL with a reason in @p why
 */
struct gbpf_printq *ca_printqs_for(struct ca_printqs *p, CUcontext ctx, int sms, char *why, size_t why_size);

/** Drain, report and free context @p ctx's queues (none: nothing happens). */
void ca_printqs_close(struct ca_printqs *p, CUcontext ctx);

/** At detach: every context's queues. */
void ca_printqs_close_all(struct ca_printqs *p);

#endif /* GBPF_CUDA_AGENT_PRINTQ_H */
