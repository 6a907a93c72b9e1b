/* SPDX-License-Identifier: MIT */
/*
 * gbpf/helper_ids.h - helper numbers understood by every gbpf backend.
 *
 * Standard helpers keep their Linux numbers (enum bpf_func_id). GPU helpers
 * keep bpftime's numbers (501-511) and meaning so that its probes load
 * unmodified. Numbers from 600 are gbpf's own. This header is safe to
 * include from BPF C (clang -target bpf) and from host C.
 */
#ifndef GBPF_HELPER_IDS_H
#define GBPF_HELPER_IDS_H

/* Standard helpers (Linux numbers). */
#define GBPF_HELPER_MAP_LOOKUP_ELEM 1
#define GBPF_HELPER_MAP_UPDATE_ELEM 2
#define GBPF_HELPER_MAP_DELETE_ELEM 3
#define GBPF_HELPER_PROBE_READ 4
#define GBPF_HELPER_KTIME_GET_NS 5
#define GBPF_HELPER_TRACE_PRINTK 6
#define GBPF_HELPER_GET_PRANDOM_U32 7
#define GBPF_HELPER_GET_SMP_PROCESSOR_ID 8
#define GBPF_HELPER_GET_CURRENT_PID_TGID 14
#define GBPF_HELPER_PERF_EVENT_OUTPUT 25
#define GBPF_HELPER_PROBE_READ_USER 112
#define GBPF_HELPER_PROBE_READ_KERNEL 113
#define GBPF_HELPER_RINGBUF_OUTPUT 130
#define GBPF_HELPER_RINGBUF_RESERVE 131
#define GBPF_HELPER_RINGBUF_SUBMIT 132
#define GBPF_HELPER_RINGBUF_DISCARD 133
#define GBPF_HELPER_KTIME_GET_BOOT_NS 125

/* GPU helpers (bpftime numbers and meaning). */
#define GBPF_HELPER_GPU_PUTS 501           /* (const char *str) -> 0 or -errno */
#define GBPF_HELPER_GPU_GLOBALTIMER 502    /* () -> ns, GPU global timer */
#define GBPF_HELPER_GPU_BLOCK_IDX 503      /* (u64 *x, u64 *y, u64 *z) -> 0 */
#define GBPF_HELPER_GPU_BLOCK_DIM 504      /* (u64 *x, u64 *y, u64 *z) -> 0 */
#define GBPF_HELPER_GPU_THREAD_IDX 505     /* (u64 *x, u64 *y, u64 *z) -> 0 */
#define GBPF_HELPER_GPU_MEMBAR 506         /* () -> 0, system-scope fence */
#define GBPF_HELPER_GPU_EXIT 507           /* () -> does not return: ends the thread's probe */
#define GBPF_HELPER_GPU_GRID_DIM 508       /* (u64 *x, u64 *y, u64 *z) -> 0 */
#define GBPF_HELPER_GPU_SM_ID 509          /* () -> SM / compute unit id */
#define GBPF_HELPER_GPU_WARP_ID 510        /* () -> warp id within the SM */
#define GBPF_HELPER_GPU_LANE_ID 511        /* () -> lane within the warp */

/* gbpf's own helpers. */
#define GBPF_HELPER_GPU_GLOBAL_THREAD_ID 600 /* () -> linear thread id in the grid */
#define GBPF_HELPER_GPU_THREAD_COUNT 601     /* () -> threads in the grid */
#define GBPF_HELPER_LOG2 602                 /* (u64 v) -> floor(log2(v)), 0 for 0 and 1 */

#endif /* GBPF_HELPER_IDS_H */
