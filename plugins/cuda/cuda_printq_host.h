/* SPDX-License-Identifier: MIT */
/*
 * plugins/cuda/cuda_printq_host.h - host side of the trace_printk / puts
 * queues (layout in cuda_printq.h): pinned host records, a drain thread
 * printing them to stdout while a kernel runs, drops counted on the device.
 */
#ifndef GBPF_CUDA_PRINTQ_HOST_H
#define GBPF_CUDA_PRINTQ_HOST_H

#include <stdint.h>

#include "cuda_driver.h"

struct gbpf_printq;

/**
 * Allocate the queues (@p nqueues and @p nslots powers of two) and point
 * the module's __gbpf_printq at them. Returns 0 or a negative errno.
 */
int gbpf_printq_create(struct cuda_driver *d, CUmodule mod, uint32_t nqueues, uint32_t nslots,
		       struct gbpf_printq **out);
/** Start the drain thread (before a launch). 0 or -EAGAIN. */
int gbpf_printq_start(struct gbpf_printq *q);
/** Stop the drain thread and print what is left; returns records printed so far. */
uint64_t gbpf_printq_stop(struct gbpf_printq *q);
/** Records dropped by the device (queue full or contended) since creation. */
uint64_t gbpf_printq_drops(struct gbpf_printq *q);
/** Stop, free both blocks and @p q (NULL is ignored). */
void gbpf_printq_destroy(struct gbpf_printq *q);

#endif
