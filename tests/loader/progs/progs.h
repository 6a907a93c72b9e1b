/* SPDX-License-Identifier: MIT */
/*
 * tests/loader/progs/progs.h - common prelude of the loader's BPF test
 * programs: the kernel integer types (without <linux/types.h>, whose
 * <asm/types.h> is not on the BPF target's include path) and libbpf's
 * helper declarations.
 */
#ifndef GBPF_TEST_PROGS_H
#define GBPF_TEST_PROGS_H

typedef unsigned char __u8;
typedef unsigned short __u16;
typedef unsigned int __u32;
typedef unsigned long long __u64;
typedef signed char __s8;
typedef short __s16;
typedef int __s32;
typedef long long __s64;
typedef __u16 __be16;
typedef __u32 __be32;
typedef __u32 __wsum;

#include <bpf/bpf_helpers.h>

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
