/* SPDX-License-Identifier: MIT */
/*
 * tests/cuda/map_progs.h - eBPF programs (built as instruction arrays) that
 * use every device map helper, shared by the ptxas test (CPU) and the GPU
 * map tests. Every builder writes at most MAP_PROG_MAX instructions into
 * @p out and returns the count; map 0 of the program is the map used.
 */
#ifndef GBPF_TESTS_CUDA_MAP_PROGS_H
#define GBPF_TESTS_CUDA_MAP_PROGS_H

#include <stddef.h>
#include <stdint.h>

#include <gbpf/insn.h>

#define MAP_PROG_MAX 64
/** Second word of every test ring record: first word (the thread id) ^ this. */
#define MAP_PROG_MAGIC 0x5a5a1234u

/** key = thread id % key_mod (thread id when key_mod is 0), value u64 = tid * 3 + 1;
 *  update with @p flags; r0 = the helper's result. */
size_t map_prog_hash_update(struct gbpf_insn *out, uint32_t key_mod, uint32_t flags);
/** key = tid % nkeys: lookup, insert 0 with NOEXIST when absent, lookup again,
 *  atomic add 1 to the value; r0 = 0, or 1 when the second lookup failed. */
size_t map_prog_hash_count(struct gbpf_insn *out, uint32_t nkeys);
/** key = tid % nkeys, kept in r6 from its store to the call (the code
 *  generator forwards it): lookup, atomic add 1 to the value; r0 = 0, or 1
 *  when the lookup failed. For arrays (and per-CPU arrays). */
size_t map_prog_array_count(struct gbpf_insn *out, uint32_t nkeys);
/** Even thread ids delete key tid; r0 = the helper's result (odd: 0). */
size_t map_prog_hash_delete_even(struct gbpf_insn *out);
/** r0 = the u64 value of key tid, or 0xffffffff when absent. */
size_t map_prog_hash_lookup(struct gbpf_insn *out);
/** ringbuf_output of {tid, tid ^ MAGIC} (two u64); r0 = the helper's result. */
size_t map_prog_ring_output(struct gbpf_insn *out);
/** ringbuf_output of a record of 1..7 u64 words, word k = (tid << 8) + k, of
 *  8 * ((tid >> 5) % 7 + 1) bytes (one size a warp: the whole-warp write), or of
 *  8 * (tid % 7 + 1) bytes with @p per_lane (sizes mixed in a warp); r0 = the result. */
size_t map_prog_ring_sizes(struct gbpf_insn *out, int per_lane);
/** The words of map_prog_ring_sizes in a record of a constant @p bytes (8..56): the code
 *  generator writes the ring's protocol into the program (by value); r0 = the result. */
size_t map_prog_ring_const(struct gbpf_insn *out, uint32_t bytes);
/** Lanes that reach one bpf_ringbuf_output (written inline) at different times: thread tid
 *  outputs tid % 5 + 1 records of 24 bytes, word k of record i being (tid << 8) + (i << 4) + k,
 *  each after an empty loop of (7 tid + i) % 11 turns; r0 = the outputs that failed. */
size_t map_prog_ring_divergent(struct gbpf_insn *out);
/**
 * Where map_prog_ring_reserve's record lives (plugins/cuda/ptx_reserve.c):
 * in the frame (the reserve runs once, the submit names the area), also
 * after a loop, and when a helper (probe_read) writes the second word
 * through a pointer into it; in the ring (the forms from
 * MAP_PROG_RSV_SPILLED on) when the pointer is spilled and reloaded, when
 * a subprogram submits it, or when the reserve lies in a loop (a backward
 * jump never taken).
 */
enum map_prog_reserve_form {
	MAP_PROG_RSV_FRAME,
	MAP_PROG_RSV_AFTER_LOOP,
	MAP_PROG_RSV_HELPER_WRITES,
	MAP_PROG_RSV_SPILLED,
	MAP_PROG_RSV_SUBMIT_IN_SUBPROG,
	MAP_PROG_RSV_IN_LOOP,
	MAP_PROG_RSV_FORMS
};
/** ringbuf_reserve 16 bytes, write {tid, tid ^ MAGIC}, submit (even tid, r0 = 1) or
 *  discard (odd tid, r0 = 2); r0 = 0 when the reservation failed. */
size_t map_prog_ring_reserve(struct gbpf_insn *out, enum map_prog_reserve_form form);
/** Even tids reserve two 16-byte records, write {tid, tid ^ MAGIC} and {tid + 1,
 *  (tid + 1) ^ MAGIC} in 4-byte stores, submit the second first (r0 = 1); odd
 *  tids r0 = 2; r0 = 0 when a reservation failed (the other one discarded). */
size_t map_prog_ring_reserve_pair(struct gbpf_insn *out);
/** perf_event_output(ctx, map, BPF_F_CURRENT_CPU, {tid, tid ^ MAGIC}, 16); r0 = its result. */
size_t map_prog_perf_output(struct gbpf_insn *out);

/** Threads with id < @p nprint call trace_printk("gpu %d\n", tid); r0 = 0. */
size_t map_prog_printk(struct gbpf_insn *out, uint32_t nprint);

#endif
