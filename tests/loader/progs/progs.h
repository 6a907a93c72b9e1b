/* SPDX-License-Identifier: MIT */
/*
 * tests/loader/progs/progs.h - common prelude of the loader's BPF test
 * programs: gbpf/probe.h plus the map types by number.
 */
#ifndef GBPF_TEST_PROGS_H
#define GBPF_TEST_PROGS_H

/* Kernel integer types and libbpf's helper declarations, as probe authors get them. */
#include <gbpf/probe.h>

/* Map types by number, as the loader must accept them. */
#define T_HASH 1
#define T_ARRAY 2
#define T_PERF_EVENT_ARRAY 4
#define T_PERCPU_ARRAY 6
#define T_LRU_HASH 9
#define T_RINGBUF 27
#define T_GPU_HASH 1501
#define T_PERGPUTHREAD_ARRAY 1502
#define T_GPU_ARRAY 1503
#define T_GPU_RINGBUF 1527

#endif
