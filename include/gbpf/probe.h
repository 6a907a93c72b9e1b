/* SPDX-License-Identifier: MIT */
/*
 * gbpf/probe.h - for authors of GPU probes in BPF C (clang -target bpf).
 *
 *   #include <gbpf/probe.h>
 *
 *   struct { __uint(type, BPF_MAP_TYPE_GPU_ARRAY); __uint(max_entries, 1);
 *            __type(key, __u32); __type(value, __u64); } calls SEC(".maps");
 *
 *   SEC("gpu/entry/vec_add*")
 *   int count(struct gbpf_gpu_ctx *ctx)
 *   {
 *           __u32 k = 0;
 *           __u64 *v = bpf_map_lookup_elem(&calls, &k);
 *           if (v)
 *                   __sync_fetch_and_add(v, 1);
 *           return 0;
 *   }
 *
 * Declares the GPU helpers (bpftime numbers 501-511, gbpf's 600-601) with
 * readable names, the GPU map type numbers, and pulls in libbpf's
 * <bpf/bpf_helpers.h> for SEC(), __uint/__type and the standard helpers
 * (bpf_map_lookup_elem, bpf_ringbuf_output, bpf_ktime_get_ns, ...).
 */
#ifndef GBPF_PROBE_H
#define GBPF_PROBE_H

/* The kernel's integer types, without <linux/types.h> (whose <asm/types.h>
 * needs the host's multiarch include path); C11 allows the identical
 * repeat when a probe includes it too. */
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
typedef __u64 __be64;
typedef __u32 __wsum;

#include <bpf/bpf_helpers.h>

#include <gbpf/helper_ids.h>
#include <gbpf/probe_ctx.h>

/* GPU map types (bpftime numbers; see gbpf/prog.h). */
#define BPF_MAP_TYPE_GPU_HASH 1501           /**< hash shared with the GPU */
#define BPF_MAP_TYPE_PERGPUTHREAD_ARRAY 1502 /**< one value per GPU thread of the launch */
#define BPF_MAP_TYPE_GPU_ARRAY 1503          /**< array shared by all GPU threads */
#define BPF_MAP_TYPE_GPU_RINGBUF 1527        /**< ring buffer written from the GPU */

/** Print a string through the host's print queues (asynchronous; -ENOSPC when dropped). */
static long (*bpf_gpu_puts)(const char *str) = (void *)GBPF_HELPER_GPU_PUTS;
/** GPU global timer in ns (%globaltimer). */
static __u64 (*bpf_gpu_globaltimer)(void) = (void *)GBPF_HELPER_GPU_GLOBALTIMER;
/** blockIdx into *x, *y, *z (NULL pointers are skipped); returns 0. */
static long (*bpf_gpu_block_idx)(__u64 *x, __u64 *y, __u64 *z) = (void *)GBPF_HELPER_GPU_BLOCK_IDX;
/** blockDim into *x, *y, *z; returns 0. */
static long (*bpf_gpu_block_dim)(__u64 *x, __u64 *y, __u64 *z) = (void *)GBPF_HELPER_GPU_BLOCK_DIM;
/** threadIdx into *x, *y, *z; returns 0. */
static long (*bpf_gpu_thread_idx)(__u64 *x, __u64 *y, __u64 *z) = (void *)GBPF_HELPER_GPU_THREAD_IDX;
/** System-scope memory fence; returns 0. */
static long (*bpf_gpu_membar)(void) = (void *)GBPF_HELPER_GPU_MEMBAR;
/** End this thread's probe now (the kernel itself continues). */
static void (*bpf_gpu_exit)(void) = (void *)GBPF_HELPER_GPU_EXIT;
/** gridDim into *x, *y, *z; returns 0. */
static long (*bpf_gpu_grid_dim)(__u64 *x, __u64 *y, __u64 *z) = (void *)GBPF_HELPER_GPU_GRID_DIM;
/** Id of the SM running the thread (%smid). */
static __u64 (*bpf_gpu_sm_id)(void) = (void *)GBPF_HELPER_GPU_SM_ID;
/** Warp id within the SM (%warpid). */
static __u64 (*bpf_gpu_warp_id)(void) = (void *)GBPF_HELPER_GPU_WARP_ID;
/** Lane within the warp (%laneid). */
static __u64 (*bpf_gpu_lane_id)(void) = (void *)GBPF_HELPER_GPU_LANE_ID;
/** Linear id of the thread in the grid. */
static __u64 (*bpf_gpu_global_thread_id)(void) = (void *)GBPF_HELPER_GPU_GLOBAL_THREAD_ID;
/** Threads in the grid. */
static __u64 (*bpf_gpu_thread_count)(void) = (void *)GBPF_HELPER_GPU_THREAD_COUNT;

#endif /* GBPF_PROBE_H */
