/* SPDX-License-Identifier: MIT */
/*
 * plugins/cuda/cuda_printq.h - asynchronous trace_printk / puts from the
 * GPU: per-SM queues of fixed-size records in pinned host memory, drained
 * by a host thread.
 *
 * Two blocks:
 *  - device block (device memory, address in the module global
 *    __gbpf_printq):
 *      0  u64 host       device address of the host block
 *      8  u32 nqueues    queues (power of two); a thread uses smid & (nqueues-1)
 *      12 u32 nslots     records per queue (power of two)
 *      64 + 16*q: u64 head (atomic, reservation count), u64 drops (atomic)
 *  - host block (pinned, device-mapped):
 *      0 + 8*q: u64 tail   records of queue q consumed (host stores, device reads)
 *      GBPF_PRINTQ_REC_OFF(nqueues) + (q * nslots + i) * GBPF_PRINTQ_REC_SIZE: record i
 * A record: u64 seq (pos + 1 once published), u32 kind, u32 len, u64 args[3],
 * then text (fmt of printk or the string of puts, not NUL-terminated).
 * Kind PRINTK_STR is a printk whose format has %s conversions: after the
 * len bytes of the format come, for each %s argument in order, the string's
 * bytes and a NUL, all within the GBPF_PRINTQ_TEXT_MAX + 1 text bytes (a
 * string is cut where the record ends; one that starts beyond it is empty).
 * The device reads a %s argument only where it points into the thread's
 * stack (.local window) or into a map's block (rodata and .data included,
 * bounds from __gbpf_maps[__gbpf_printq_nmaps] and each block's total_size); anything else,
 * NULL included, prints as an empty string, as on the interpreter.
 * A producer reserves with a bounded CAS on head (never waiting for the
 * host: a full queue or lost races count a drop), writes the record, then
 * fence.sc.sys and a release store of seq.
 */
#ifndef GBPF_CUDA_PRINTQ_H
#define GBPF_CUDA_PRINTQ_H

#include <stddef.h>
#include <stdint.h>

#include "ptx_buf.h"

#define GBPF_PRINTQ_REC_SIZE 256u
#define GBPF_PRINTQ_TEXT_OFF 40u
#define GBPF_PRINTQ_TEXT_MAX (GBPF_PRINTQ_REC_SIZE - GBPF_PRINTQ_TEXT_OFF - 1u)
#define GBPF_PRINTQ_DEV_HDR 64u
#define GBPF_PRINTQ_REC_OFF(nq) ((((uint64_t)(nq)) * 8u + 63u) & ~(uint64_t)63u)
#define GBPF_PRINTQ_KIND_PRINTK 1u
#define GBPF_PRINTQ_KIND_PUTS 2u
#define GBPF_PRINTQ_KIND_PRINTK_STR 3u

/**
 * Emit the device functions of trace_printk and/or puts, and the module
 * global __gbpf_printq_nmaps: the length of the module's __gbpf_maps (the
 * blocks a %s string may be in), stored by gbpf_printq_bind (0 until then:
 * only stack strings are read).
 */
void gbpf_printq_emit_ptx(struct ptx_buf *b, int printk, int puts);

#endif /* GBPF_CUDA_PRINTQ_H */
