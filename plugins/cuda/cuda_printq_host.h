/* SPDX-License-Identifier: MIT */
/*
 * plugins/cuda/cuda_printq_host.h - host side of the trace_printk / puts
 * queues (layout in cuda_printq.h): pinned host records, a drain thread
 * printing them to stdout while a kernel runs, drops counted on the device.
 */
#ifndef GBPF_CUDA_PRINTQ_HOST_H
#define GBPF_CUDA_PRINTQ_HOST_H

#include <stddef.h>
#include <stdint.h>

#include "cuda_driver.h"

struct gbpf_printq;
struct gbpf_prog_desc;

/** 1 when @p prog calls trace_printk or puts (it needs print queues and a drain thread). */
int gbpf_printq_prog_prints(const struct gbpf_prog_desc *prog);

/**
 * Allocate the queues (@p nqueues and @p nslots powers of two) in the
 * current context. Lines go to stdout until gbpf_printq_set_sink().
 * Returns 0 or a negative errno.
 */
int gbpf_printq_create(struct cuda_driver *d, uint32_t nqueues, uint32_t nslots,
		       struct gbpf_printq **out);
/** Point module @p mod's __gbpf_printq at the queues (same context). 0 or -EIO. */
int gbpf_printq_bind(struct gbpf_printq *q, CUmodule mod);
/**
 * Receives one formatted line (no newline). Returns 0, or -EAGAIN to keep
 * the record queued and be called again later. Called from the drain thread.
 */
typedef int (*gbpf_printq_sink_fn)(void *ctx, const char *line, size_t len);
/** Send lines to @p fn (NULL: back to stdout). Call before gbpf_printq_start(). */
void gbpf_printq_set_sink(struct gbpf_printq *q, gbpf_printq_sink_fn fn, void *ctx);
/** A kernel that prints was launched: poll fast for a while (see drain_thread). */
void gbpf_printq_kick(struct gbpf_printq *q);
/** Start the drain thread (before a launch). 0 or -EAGAIN. */
int gbpf_printq_start(struct gbpf_printq *q);
/** Stop the drain thread and print what is left; returns records printed so far. */
uint64_t gbpf_printq_stop(struct gbpf_printq *q);
/** Records dropped by the device (queue full or contended) since creation. */
uint64_t gbpf_printq_drops(struct gbpf_printq *q);
/**
 * Format one published record (layout in cuda_printq.h) as the line the
 * drain thread passes to its sink, without a newline: the interpreter's
 * printk / puts formatting on the copied text, %s strings included.
 * @p line gets a NUL-terminated line (empty for a bad format), @p cap >= 2.
 * @return the line's length
 */
size_t gbpf_printq_format_record(const uint8_t *rec, char *line, size_t cap);
/** Stop, free both blocks and @p q (NULL is ignored). */
void gbpf_printq_destroy(struct gbpf_printq *q);

#endif
