/* SPDX-License-Identifier: MIT */
/* Test programs using the device map helpers (see map_progs.h). Jump offsets are
 * relative to the next instruction; labels are written as comments. */
#include <gbpf/helper_ids.h>
#include <gbpf/prog.h>

#include "map_progs.h"
#include "maps/map.h"

#define E(c, d, s, o, i)                                                                           \
	(out[n++] = (struct gbpf_insn){.code = (c), .dst = (d), .src = (s), .off = (o), .imm = (i)})
#define CALL(id) E(0x85, 0, 0, 0, (id))
#define MAP0(reg) (E(0x18, (reg), GBPF_PSEUDO_MAP_IDX, 0, 0), E(0, 0, 0, 0, 0))
#define FP(reg, off) (E(0xbf, (reg), 10, 0, 0), E(0x07, (reg), 0, 0, (off)))
/* {r7, r7 ^ MAGIC} as u64 words at r<rec>, stored in 4-byte halves (r1 = 0 the high ones) */
#define RECORD_HALVES(rec)                                                                         \
	(E(0x63, (rec), 7, 0, 0), E(0x63, (rec), 1, 4, 0), E(0xa7, 7, 0, 0, (int32_t)MAP_PROG_MAGIC), \
	 E(0x63, (rec), 7, 8, 0), E(0x63, (rec), 1, 12, 0))
/* r0 = bpf_ringbuf_reserve(map 0, 16, 0) */
#define RESERVE16() (MAP0(1), E(0xb7, 2, 0, 0, 16), E(0xb7, 3, 0, 0, 0), CALL(GBPF_HELPER_RINGBUF_RESERVE))

/* r6 = thread id; {tid, tid ^ MAGIC} at r10-16 */
static size_t tid_record(struct gbpf_insn *out, size_t n)
{
	CALL(GBPF_HELPER_GPU_GLOBAL_THREAD_ID);
	E(0xbf, 6, 0, 0, 0);
	E(0x7b, 10, 6, -16, 0);
	E(0xbf, 7, 6, 0, 0);
	E(0xa7, 7, 0, 0, (int32_t)MAP_PROG_MAGIC);
	E(0x7b, 10, 7, -8, 0);
	return n;
}

size_t map_prog_hash_update(struct gbpf_insn *out, uint32_t key_mod, uint32_t flags)
{
	size_t n = 0;

	CALL(GBPF_HELPER_GPU_GLOBAL_THREAD_ID);
	E(0xbf, 6, 0, 0, 0);
	E(0xbf, 8, 6, 0, 0);
	if (key_mod)
		E(0x97, 8, 0, 0, (int32_t)key_mod);
	E(0x63, 10, 8, -4, 0);
	E(0xbf, 7, 6, 0, 0);
	E(0x27, 7, 0, 0, 3);
	E(0x07, 7, 0, 0, 1);
	E(0x7b, 10, 7, -16, 0);
	MAP0(1);
	FP(2, -4);
	FP(3, -16);
	E(0xb7, 4, 0, 0, (int32_t)flags);
	CALL(GBPF_HELPER_MAP_UPDATE_ELEM);
	E(0x95, 0, 0, 0, 0);
	return n;
}

size_t map_prog_hash_count(struct gbpf_insn *out, uint32_t nkeys)
{
	size_t n = 0;

	CALL(GBPF_HELPER_GPU_GLOBAL_THREAD_ID); /* 0 */
	E(0xbf, 6, 0, 0, 0);
	E(0x97, 6, 0, 0, (int32_t)nkeys);
	E(0x63, 10, 6, -4, 0);
	E(0x7a, 10, 0, -16, 0);
	MAP0(1); /* 5 */
	FP(2, -4);
	CALL(GBPF_HELPER_MAP_LOOKUP_ELEM); /* 9 */
	E(0x55, 0, 0, 14, 0);              /* 10: if r0 != 0 goto add (25) */
	MAP0(1);
	FP(2, -4);
	FP(3, -16);
	E(0xb7, 4, 0, 0, GBPF_NOEXIST);
	CALL(GBPF_HELPER_MAP_UPDATE_ELEM); /* 18 */
	MAP0(1);
	FP(2, -4);
	CALL(GBPF_HELPER_MAP_LOOKUP_ELEM); /* 23 */
	E(0x15, 0, 0, 4, 0);               /* 24: if r0 == 0 goto fail (29) */
	E(0xb7, 1, 0, 0, 1);               /* 25: add */
	E(0xdb, 0, 1, 0, GBPF_ATOMIC_ADD);
	E(0xb7, 0, 0, 0, 0);
	E(0x95, 0, 0, 0, 0);
	E(0xb7, 0, 0, 0, 1); /* 29: fail */
	E(0x95, 0, 0, 0, 0);
	return n;
}

size_t map_prog_array_count(struct gbpf_insn *out, uint32_t nkeys)
{
	size_t n = 0;

	CALL(GBPF_HELPER_GPU_GLOBAL_THREAD_ID);
	E(0xbf, 6, 0, 0, 0);
	E(0x97, 6, 0, 0, (int32_t)nkeys);
	E(0x63, 10, 6, -4, 0);
	MAP0(1);
	FP(2, -4);
	CALL(GBPF_HELPER_MAP_LOOKUP_ELEM);
	E(0x15, 0, 0, 4, 0); /* if r0 == 0 goto fail */
	E(0xb7, 1, 0, 0, 1);
	E(0xdb, 0, 1, 0, GBPF_ATOMIC_ADD);
	E(0xb7, 0, 0, 0, 0);
	E(0x95, 0, 0, 0, 0);
	E(0xb7, 0, 0, 0, 1); /* fail */
	E(0x95, 0, 0, 0, 0);
	return n;
}

size_t map_prog_hash_delete_even(struct gbpf_insn *out)
{
	size_t n = 0;

	CALL(GBPF_HELPER_GPU_GLOBAL_THREAD_ID);
	E(0x63, 10, 0, -4, 0);
	E(0xbf, 6, 0, 0, 0);
	E(0xb7, 0, 0, 0, 0);
	E(0x45, 6, 0, 5, 1); /* if r6 & 1 goto out */
	MAP0(1);
	FP(2, -4);
	CALL(GBPF_HELPER_MAP_DELETE_ELEM);
	E(0x95, 0, 0, 0, 0); /* out */
	return n;
}

size_t map_prog_hash_lookup(struct gbpf_insn *out)
{
	size_t n = 0;

	CALL(GBPF_HELPER_GPU_GLOBAL_THREAD_ID);
	E(0x63, 10, 0, -4, 0);
	MAP0(1);
	FP(2, -4);
	CALL(GBPF_HELPER_MAP_LOOKUP_ELEM);
	E(0x15, 0, 0, 2, 0);
	E(0x79, 0, 0, 0, 0);
	E(0x95, 0, 0, 0, 0);
	E(0xb7, 0, 0, 0, -1);
	E(0x67, 0, 0, 0, 32);
	E(0x77, 0, 0, 0, 32);
	E(0x95, 0, 0, 0, 0);
	return n;
}

size_t map_prog_ring_output(struct gbpf_insn *out)
{
	size_t n = tid_record(out, 0);

	MAP0(1);
	FP(2, -16);
	E(0xb7, 3, 0, 0, 16);
	E(0xb7, 4, 0, 0, 0);
	CALL(GBPF_HELPER_RINGBUF_OUTPUT);
	E(0x95, 0, 0, 0, 0);
	return n;
}

/* the 7 words (tid << 8) + k at r10 - 56 + 8 k, the thread id in r6 */
static size_t sized_words(struct gbpf_insn *out, size_t n)
{
	CALL(GBPF_HELPER_GPU_GLOBAL_THREAD_ID);
	E(0xbf, 6, 0, 0, 0);
	E(0xbf, 7, 6, 0, 0);
	E(0x67, 7, 0, 0, 8);
	for (int k = 0; k < 7; k++) {
		E(0x7b, 10, 7, (int16_t)(-56 + 8 * k), 0);
		E(0x07, 7, 0, 0, 1);
	}
	return n;
}

size_t map_prog_ring_const(struct gbpf_insn *out, uint32_t bytes)
{
	size_t n = sized_words(out, 0);

	MAP0(1);
	FP(2, -56);
	E(0xb7, 3, 0, 0, (int32_t)bytes);
	E(0xb7, 4, 0, 0, 0);
	CALL(GBPF_HELPER_RINGBUF_OUTPUT);
	E(0x95, 0, 0, 0, 0);
	return n;
}

size_t map_prog_ring_divergent(struct gbpf_insn *out)
{
	size_t n = 0, top, delay;
	int16_t back;

	CALL(GBPF_HELPER_GPU_GLOBAL_THREAD_ID);
	E(0xbf, 6, 0, 0, 0);
	E(0xbf, 8, 6, 0, 0);
	E(0x97, 8, 0, 0, 5); /* r8 = the last record's number */
	E(0xb7, 9, 0, 0, 0);
	E(0x7a, 10, 0, -32, 0); /* failures = 0 */
	top = n;
	E(0xbf, 2, 6, 0, 0);
	E(0x27, 2, 0, 0, 7);
	E(0x0f, 2, 9, 0, 0);
	E(0x97, 2, 0, 0, 11);
	delay = n;
	E(0x15, 2, 0, 2, 0); /* if r2 == 0 goto words */
	E(0x07, 2, 0, 0, -1);
	back = (int16_t)(delay - (n + 1));
	E(0x05, 0, 0, back, 0);
	E(0xbf, 7, 6, 0, 0); /* words: */
	E(0x67, 7, 0, 0, 8);
	E(0xbf, 1, 9, 0, 0);
	E(0x67, 1, 0, 0, 4);
	E(0x0f, 7, 1, 0, 0);
	for (int k = 0; k < 3; k++) {
		E(0x7b, 10, 7, (int16_t)(-24 + 8 * k), 0);
		E(0x07, 7, 0, 0, 1);
	}
	MAP0(1);
	FP(2, -24);
	E(0xb7, 3, 0, 0, 24);
	E(0xb7, 4, 0, 0, 0);
	CALL(GBPF_HELPER_RINGBUF_OUTPUT);
	E(0x15, 0, 0, 3, 0); /* if r0 == 0 goto next */
	E(0x79, 1, 10, -32, 0);
	E(0x07, 1, 0, 0, 1);
	E(0x7b, 10, 1, -32, 0);
	E(0x07, 9, 0, 0, 1); /* next: */
	back = (int16_t)(top - (n + 1));
	E(0xbd, 9, 8, back, 0); /* if r9 <= r8 goto top */
	E(0x79, 0, 10, -32, 0);
	E(0x95, 0, 0, 0, 0);
	return n;
}

size_t map_prog_ring_sizes(struct gbpf_insn *out, int per_lane)
{
	size_t n = sized_words(out, 0);

	E(0xbf, 8, 6, 0, 0);
	if (!per_lane)
		E(0x77, 8, 0, 0, 5);
	E(0x97, 8, 0, 0, 7);
	E(0xbf, 3, 8, 0, 0);
	E(0x07, 3, 0, 0, 1);
	E(0x67, 3, 0, 0, 3); /* 8 .. 56 bytes, not known to the code generator */
	MAP0(1);
	FP(2, -56);
	E(0xb7, 4, 0, 0, 0);
	CALL(GBPF_HELPER_RINGBUF_OUTPUT);
	E(0x95, 0, 0, 0, 0);
	return n;
}

size_t map_prog_ring_reserve(struct gbpf_insn *out, enum map_prog_reserve_form form)
{
	size_t n = 0, top, skip;

	CALL(GBPF_HELPER_GPU_GLOBAL_THREAD_ID);
	E(0xbf, 6, 0, 0, 0);
	if (form == MAP_PROG_RSV_AFTER_LOOP) {
		E(0xb7, 9, 0, 0, 3); /* three turns of an empty loop */
		E(0x07, 9, 0, 0, -1);
		E(0x55, 9, 0, -2, 0);
	}
	top = n; /* MAP_PROG_RSV_IN_LOOP jumps back here */
	RESERVE16();
	E(0x55, 0, 0, 1, 0); /* if r0 != 0 goto got */
	E(0x95, 0, 0, 0, 0);
	E(0x7b, 0, 6, 0, 0); /* got: rec[0] = tid */
	E(0xbf, 7, 6, 0, 0);
	E(0xa7, 7, 0, 0, (int32_t)MAP_PROG_MAGIC);
	if (form == MAP_PROG_RSV_HELPER_WRITES) {
		E(0x7b, 10, 7, -8, 0); /* rec[1] = tid ^ MAGIC by probe_read(&rec[1], 8, r10 - 8) */
		E(0xbf, 8, 0, 0, 0);
		E(0xbf, 1, 0, 0, 0);
		E(0x07, 1, 0, 0, 8);
		E(0xb7, 2, 0, 0, 8);
		FP(3, -8);
		CALL(GBPF_HELPER_PROBE_READ_KERNEL);
		E(0xbf, 0, 8, 0, 0);
	} else {
		E(0x7b, 0, 7, 8, 0);
	}
	if (form == MAP_PROG_RSV_SPILLED) {
		E(0x7b, 10, 0, -8, 0); /* the pointer through the stack */
		E(0x79, 1, 10, -8, 0);
	} else {
		E(0xbf, 1, 0, 0, 0);
	}
	E(0xb7, 2, 0, 0, 0);
	skip = form == MAP_PROG_RSV_IN_LOOP ? 4 : 3;
	E(0x45, 6, 0, (int16_t)skip, 1); /* if tid & 1 goto discard */
	if (form == MAP_PROG_RSV_SUBMIT_IN_SUBPROG)
		E(0x85, 0, GBPF_CALL_LOCAL, 0, 5); /* call submit_sub (below the discard) */
	else
		CALL(GBPF_HELPER_RINGBUF_SUBMIT);
	E(0xb7, 0, 0, 0, 1);
	if (form == MAP_PROG_RSV_IN_LOOP) {
		int16_t back = (int16_t)((long)top - (long)n - 1);

		E(0xc5, 6, 0, back, 0); /* if tid s< 0 goto top: never taken */
	}
	E(0x95, 0, 0, 0, 0);
	CALL(GBPF_HELPER_RINGBUF_DISCARD); /* discard */
	E(0xb7, 0, 0, 0, 2);
	E(0x95, 0, 0, 0, 0);
	if (form == MAP_PROG_RSV_SUBMIT_IN_SUBPROG) {
		CALL(GBPF_HELPER_RINGBUF_SUBMIT); /* submit_sub: the record in r1 */
		E(0xb7, 0, 0, 0, 0);
		E(0x95, 0, 0, 0, 0);
	}
	return n;
}

size_t map_prog_ring_reserve_pair(struct gbpf_insn *out)
{
	size_t n = 0;

	CALL(GBPF_HELPER_GPU_GLOBAL_THREAD_ID);
	E(0xbf, 6, 0, 0, 0);
	E(0xb7, 0, 0, 0, 2);
	E(0x45, 6, 0, 1, 1); /* if tid & 1 goto out */
	E(0x05, 0, 0, 1, 0); /* goto even */
	E(0x95, 0, 0, 0, 0); /* out */
	RESERVE16();         /* even: the record of tid */
	E(0x55, 0, 0, 2, 0); /* if r0 != 0 goto got1 */
	E(0xb7, 0, 0, 0, 0);
	E(0x95, 0, 0, 0, 0);
	E(0xbf, 8, 0, 0, 0); /* got1 */
	RESERVE16();         /* the record of tid + 1 */
	E(0x55, 0, 0, 5, 0); /* if r0 != 0 goto got2 */
	E(0xbf, 1, 8, 0, 0);
	E(0xb7, 2, 0, 0, 0);
	CALL(GBPF_HELPER_RINGBUF_DISCARD);
	E(0xb7, 0, 0, 0, 0);
	E(0x95, 0, 0, 0, 0);
	E(0xbf, 9, 0, 0, 0); /* got2: both records in 4-byte halves */
	E(0xb7, 1, 0, 0, 0); /* the high halves: 0 */
	E(0xbf, 7, 6, 0, 0);
	RECORD_HALVES(8);
	E(0xbf, 7, 6, 0, 0);
	E(0x07, 7, 0, 0, 1);
	RECORD_HALVES(9);
	E(0xbf, 1, 9, 0, 0); /* submitted in the reverse order */
	E(0xb7, 2, 0, 0, 0);
	CALL(GBPF_HELPER_RINGBUF_SUBMIT);
	E(0xbf, 1, 8, 0, 0);
	E(0xb7, 2, 0, 0, 0);
	CALL(GBPF_HELPER_RINGBUF_SUBMIT);
	E(0xb7, 0, 0, 0, 1);
	E(0x95, 0, 0, 0, 0);
	return n;
}

size_t map_prog_perf_output(struct gbpf_insn *out)
{
	size_t n = tid_record(out, 0);

	E(0xb7, 1, 0, 0, 0);
	MAP0(2);
	E(0x18, 3, 0, 0, -1); /* r3 = 0xffffffff (BPF_F_CURRENT_CPU) */
	E(0, 0, 0, 0, 0);
	FP(4, -16);
	E(0xb7, 5, 0, 0, 16);
	CALL(GBPF_HELPER_PERF_EVENT_OUTPUT);
	E(0x95, 0, 0, 0, 0);
	return n;
}

size_t map_prog_printk(struct gbpf_insn *out, uint32_t nprint)
{
	size_t n = 0;

	CALL(GBPF_HELPER_GPU_GLOBAL_THREAD_ID);
	E(0xbf, 6, 0, 0, 0);
	E(0x35, 6, 0, 8, (int32_t)nprint);     /* if tid >= nprint goto out */
	E(0x18, 1, 0, 0, 0x20757067);          /* "gpu %d\n\0" */
	E(0, 0, 0, 0, 0x000a6425);
	E(0x7b, 10, 1, -8, 0);
	FP(1, -8);
	E(0xb7, 2, 0, 0, 8);
	E(0xbf, 3, 6, 0, 0);
	CALL(GBPF_HELPER_TRACE_PRINTK);
	E(0xb7, 0, 0, 0, 0); /* out */
	E(0x95, 0, 0, 0, 0);
	return n;
}
