/* SPDX-License-Identifier: MIT */
/*
 * gbpf/probe.h - everything a probe author includes.
 *
 *   #include <gbpf/probe.h>
 *
 *   struct { __uint(type, BPF_MAP_TYPE_HASH); __uint(max_entries, 1024);
 *            __type(key, __u64); __type(value, __u64); } calls SEC(".maps");
 *
 *   SEC("gpu/entry/vec_add*")
 *   int count(struct gbpf_gpu_ctx *ctx) { ... }
 *
 * Build with: clang -O2 -g -target bpf -I<gbpf>/include -c probe.bpf.c
 *
 * This header brings libbpf's <bpf/bpf_helpers.h> (SEC, __uint, __type,
 * bpf_map_lookup_elem, bpf_ringbuf_*, bpf_printk ...: the standard helpers
 * keep their Linux numbers on every gbpf backend), the probe contexts of
 * <gbpf/probe_ctx.h>, the GPU helpers with readable names, bpftime's
 * names for the same helpers (so its probes build unmodified), and the GPU
 * map types. Section names are documented in docs/ATTACH.md.
 */
#ifndef GBPF_PROBE_H
#define GBPF_PROBE_H

/* The kernel's integer names, without <linux/types.h> (whose <asm/types.h>
 * is not on the BPF target's default include path). Identical typedefs may
 * be repeated in C11, so including <linux/types.h> as well is fine. */
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

#include <gbpf/helper_ids.h>
#include <gbpf/probe_ctx.h>

/* Linux's map types and update flags, unless <linux/bpf.h> (which defines
 * them as enumerators) was included first. Include it before this header,
 * never after. */
#ifndef __LINUX_BPF_H__
#define BPF_MAP_TYPE_HASH 1
#define BPF_MAP_TYPE_ARRAY 2
#define BPF_MAP_TYPE_PERF_EVENT_ARRAY 4
#define BPF_MAP_TYPE_PERCPU_HASH 5
#define BPF_MAP_TYPE_PERCPU_ARRAY 6
#define BPF_MAP_TYPE_LRU_HASH 9
#define BPF_MAP_TYPE_RINGBUF 27
#define BPF_ANY 0
#define BPF_NOEXIST 1
#define BPF_EXIST 2
#define BPF_F_CURRENT_CPU 0xffffffffULL
#endif

/* Map types beyond Linux's (numbers shared with bpftime). */
#define BPF_MAP_TYPE_GPU_HASH 1501          /* hash map (same semantics as HASH) */
#define BPF_MAP_TYPE_PERGPUTHREAD_ARRAY 1502 /* one value per GPU thread of the launch */
#define BPF_MAP_TYPE_GPU_ARRAY 1503         /* array shared by all GPU threads */
#define BPF_MAP_TYPE_GPU_THREAD_LOCAL 1504  /* a GPU thread's own values for its run: zero at its start */
#define BPF_MAP_TYPE_GPU_RINGBUF 1527       /* ring buffer written from the GPU */

/*
 * How `gbpf run` prints a map: put one after the map's name.
 *   struct { __uint(type, BPF_MAP_TYPE_ARRAY); __uint(max_entries, 32);
 *            __type(key, __u32); __type(value, __u64); } usecs SEC(".maps") GBPF_PRINT_LOG2_HIST;
 * GBPF_PRINT_LOG2_HIST: a log2 histogram as bcc prints it (slot i counts
 * [2^i, 2^(i+1))): an array of u64, a hash from the slot to u64, or u64[n]
 * values (one histogram per key). GBPF_PRINT_TABLE: keys and values, even
 * when the name contains "hist" (untagged u64 maps named like "*hist*" are
 * histograms). They are BTF declaration tags (clang 14 or later, -g);
 * libbpf and the kernel ignore them.
 */
#define GBPF_PRINT_LOG2_HIST __attribute__((btf_decl_tag("gbpf:print=log2_hist")))
#define GBPF_PRINT_TABLE __attribute__((btf_decl_tag("gbpf:print=table")))

/* GPU helpers. Each returns 0 unless said otherwise. */

/** Print a NUL-terminated string (asynchronously, through the host). */
static long (*const bpf_gpu_puts)(const char *str) = (void *)GBPF_HELPER_GPU_PUTS;
/** GPU global timer, nanoseconds. */
static __u64 (*const bpf_gpu_globaltimer)(void) = (void *)GBPF_HELPER_GPU_GLOBALTIMER;
/** blockIdx.{x,y,z} into *x, *y, *z. */
static long (*const bpf_gpu_block_idx)(__u64 *x, __u64 *y, __u64 *z) =
	(void *)GBPF_HELPER_GPU_BLOCK_IDX;
/** blockDim.{x,y,z}. */
static long (*const bpf_gpu_block_dim)(__u64 *x, __u64 *y, __u64 *z) =
	(void *)GBPF_HELPER_GPU_BLOCK_DIM;
/** threadIdx.{x,y,z}. */
static long (*const bpf_gpu_thread_idx)(__u64 *x, __u64 *y, __u64 *z) =
	(void *)GBPF_HELPER_GPU_THREAD_IDX;
/** System-scope memory fence. */
static long (*const bpf_gpu_membar)(void) = (void *)GBPF_HELPER_GPU_MEMBAR;
/** End this thread's probe now (the application's kernel goes on). */
static long (*const bpf_gpu_exit)(void) = (void *)GBPF_HELPER_GPU_EXIT;
/** gridDim.{x,y,z}. */
static long (*const bpf_gpu_grid_dim)(__u64 *x, __u64 *y, __u64 *z) =
	(void *)GBPF_HELPER_GPU_GRID_DIM;
/** Id of the SM (compute unit) running the thread. */
static __u64 (*const bpf_gpu_sm_id)(void) = (void *)GBPF_HELPER_GPU_SM_ID;
/** Warp id within the SM. */
static __u64 (*const bpf_gpu_warp_id)(void) = (void *)GBPF_HELPER_GPU_WARP_ID;
/** Lane within the warp. */
static __u64 (*const bpf_gpu_lane_id)(void) = (void *)GBPF_HELPER_GPU_LANE_ID;
/** Linear id of the thread in the whole grid. */
static __u64 (*const bpf_gpu_global_thread_id)(void) = (void *)GBPF_HELPER_GPU_GLOBAL_THREAD_ID;
/** Threads in the whole grid. */
static __u64 (*const bpf_gpu_thread_count)(void) = (void *)GBPF_HELPER_GPU_THREAD_COUNT;

/* bpftime's names for the same helpers. */
#define bpf_cuda_puts bpf_gpu_puts
#define bpf_get_globaltimer bpf_gpu_globaltimer
#define bpf_get_block_idx bpf_gpu_block_idx
#define bpf_get_block_dim bpf_gpu_block_dim
#define bpf_get_thread_idx bpf_gpu_thread_idx
#define bpf_gpu_membar_sys bpf_gpu_membar
#define bpf_get_grid_dim bpf_gpu_grid_dim
#define bpf_get_sm_id bpf_gpu_sm_id
#define bpf_get_warp_id bpf_gpu_warp_id
#define bpf_get_lane_id bpf_gpu_lane_id

/**
 * floor(log2(v)), 0 for v = 0 (gbpf's helper 602): a count of leading
 * zeros on GPUs, where the same search in eBPF instructions costs about 45
 * instructions a call.
 */
static __u64 (*const bpf_log2)(__u64 v) = (void *)GBPF_HELPER_LOG2;

/** log2 bucket of a value, as bcc's histograms use (0 and 1 share bucket 0). */
static __inline __u32 gbpf_log2l(__u64 v)
{
	return (__u32)bpf_log2(v);
}

#endif /* GBPF_PROBE_H */
