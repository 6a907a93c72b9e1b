/* SPDX-License-Identifier: MIT */
/*
 * plugins/cuda/ptx_internal.h - state shared by the files of the PTX
 * emitter (ptx_codegen.c: control flow and ALU, ptx_mem.c: loads, stores
 * and atomics, ptx_helpers.c: helper calls and device helper functions).
 */
#ifndef GBPF_CUDA_PTX_INTERNAL_H
#define GBPF_CUDA_PTX_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <gbpf/insn.h>
#include <gbpf/prog.h>

#include "ptx_buf.h"
#include "ptx_range.h"

/** Helper ids below this bound are tracked in the "used" set. */
#define PTX_HELPER_ID_MAX 1024u

/** One eBPF function (entry or subprogram) of a program: [start, end). */
struct ptx_func {
	size_t start;
	size_t end;
	int needs_fp;   /**< r10's value is used as a register, not only as a base */
	int uses_stack; /**< the frame's 512 bytes are referenced */
};

/**
 * A map value pointer (or NULL) that every active lane holds alike: r0 of an
 * inlined lookup of a warp-uniform key (ptx_maps.c) in an array or hash map,
 * named by the map, the key's frame offset and the frame's generation at the
 * lookup (ptx_cg.stk_gen). Two lookups with the same name read the same key
 * bytes, so lanes that reach a join from either hold the same element's
 * pointer: a counter's warp-aggregated add through it needs no match of the
 * address. Hash maps only where no program deletes (ptx_cg.hash_stable): a
 * key deleted and inserted again between two lanes' lookups would give two
 * buckets, and the first could hold another key by then.
 */
struct ptx_uni_ptr {
	uint8_t valid;
	uint16_t map;
	int32_t key_off;
	uint32_t gen;
};

/**
 * A ring buffer record reserved in the probe's frame (ptx_reserve.c): the
 * bpf_ringbuf_reserve call at @c pc returns the frame's bytes
 * [frame_off, frame_off + size) and the submit that names them writes the
 * record to ring map @c map by value.
 */
struct ptx_rsv_area {
	size_t pc;
	unsigned frame_off;
	unsigned size;
	unsigned map;
};

/** Reserve calls whose records the entry function's frame holds at most. */
#define PTX_RSV_MAX 4
/** Largest record a frame area holds (the warp-wide write's data words). */
#define PTX_RSV_SIZE_MAX 56

/** Translation state of one program. */
struct ptx_cg {
	struct ptx_buf *b;
	const struct gbpf_prog_desc *prog;
	size_t prog_idx;
	const struct gbpf_insn *insns;
	size_t n;
	uint8_t *label;          /**< per pc: PTX_LABEL_* bits when some jump lands there */
	/** Register facts where a label's forward jumps left them, one per label
	 *  (join_at: per pc, its index + 1, 0 for no label): the facts at a label
	 *  are the meet of its jumps' and the fall-through's, unless a backward
	 *  jump lands there. NULL (no memory): labels forget everything. */
	struct ptx_track *join;
	uint32_t *join_at;
	struct ptx_func *funcs;  /**< sorted by start; funcs[0] is the entry */
	size_t nfuncs;
	size_t cur;              /**< function being emitted */
	int kernel;              /**< emitting the run kernel */
	/** GBPF_PTX_THREAD_LOCAL_CTX: the probe's caller keeps the thread's
	 *  GPU_THREAD_LOCAL values after the context (%rtls in the entry function) */
	int tls_ctx;
	/** GBPF_PTX_CONST_MAP_TABLE: inlined array lookups read the map and its
	 *  nr_slots from __gbpf_maps_const / __gbpf_slots_const */
	int const_maps;
	int exit_struct;         /**< subprograms return {r0, exited} (helper 507 used) */
	/** No program of the object deletes from a map: a hash bucket that is
	 *  READY keeps its key for the whole kernel (LRU maps evict: excluded
	 *  where it matters), so a lookup needs no seqlock re-check. */
	int hash_stable;
	unsigned uniq;           /**< counter for unique local labels */
	/** pc + 1 of a `if r0 == 0 goto` whose inlined lookup jumps past it on a
	 *  hit: emit_body places $Lnn<pc>_<prog> after that jump (0: none). */
	size_t nonnull_label_pc;
	/** What the inlined lookup being emitted runs on a hit (r0 the value):
	 *  the program's copy of r0 if any, then a jump past its null check;
	 *  empty: it goes to its join label. */
	char lookup_hit[80];
	/** Known trailing zero bits (0..3) of each register at the current
	 *  instruction, from ptx_track.c's forward pass (met at labels,
	 *  forgotten at a loop's header); lets provably aligned generic
	 *  accesses skip the run-time check. */
	uint8_t align[GBPF_REG_COUNT];
	/** Known trailing zero bits of r0 after the helper call being emitted
	 *  (set by the helper's emitter, consumed and reset by the alignment
	 *  pass): an inlined array lookup returns an 8-byte aligned pointer. */
	uint8_t call_r0_align;
	/** What each register is known to point to at the current instruction
	 *  (PTX_PTR_*), from the same pass as align (forgotten for every
	 *  call's r0..r5 and every write that is not a move or a constant
	 *  offset): an atomic through map memory needs no .local
	 *  check and addresses .global directly; one through a per-GPU-thread
	 *  slot no warp aggregation (the lanes' slots differ). */
	uint8_t ptr[GBPF_REG_COUNT];
	/** PTX_PTR_* of r0 after the helper call being emitted (as call_r0_align). */
	uint8_t call_r0_ptr;
	/** Registers known to hold %rtls + tls_off[i] (a GPU_THREAD_LOCAL value
	 *  at a constant place), tracked like stk_known; call_r0_tls / _off: r0's
	 *  after the call being emitted (a lookup with a constant key). */
	uint8_t tls_known[GBPF_REG_COUNT];
	long long tls_off[GBPF_REG_COUNT];
	uint8_t call_r0_tls;
	long long call_r0_tls_off;
	/** The program reaches a thread-local value some way other than a
	 *  64-bit access at a known place (ptx_tls_access): the injector must
	 *  keep the values in memory around it, not in the kernel's registers. */
	int tls_mem;
	/** Registers known to hold r10 + stk_off[i] (the frame pointer plus a
	 *  constant), from the same pass (ptx_track.c): a helper that writes through
	 *  such a pointer stores to the frame's .local array at a constant
	 *  offset, which ptxas can forward to the probe's later loads. */
	uint8_t stk_known[GBPF_REG_COUNT];
	long long stk_off[GBPF_REG_COUNT];
	/** Registers known to hold the constant imm_val[i] on every path to the
	 *  current instruction (moves of immediates and of such registers;
	 *  saved at jumps and met at labels like the rest): a counter's
	 *  increment is the same in every lane, so the warp-aggregated add
	 *  needs no match of the value. */
	uint8_t imm_known[GBPF_REG_COUNT];
	uint64_t imm_val[GBPF_REG_COUNT];
	/** Upper bounds of the registers' values (ptx_range.h), tracked like
	 *  imm_known and refined on each edge of a conditional jump. */
	struct ptx_range range[GBPF_REG_COUNT];
	/** Registers holding a warp-uniform map value pointer (struct ptx_uni_ptr):
	 *  copied by 64-bit moves, forgotten by any other write and by calls
	 *  (r0..r5), met at joins; call_r0_uni is r0's after the call being
	 *  emitted (set by the inlined lookup). */
	struct ptx_uni_ptr uni[GBPF_REG_COUNT];
	struct ptx_uni_ptr call_r0_uni;
	/** The frame's generation: a new one at every label and at every write
	 *  that may reach the frame (a store or atomic not through a map value,
	 *  a call other than a map lookup, update or delete). */
	uint32_t stk_gen;
	/** Records reserved in the entry function's frame (struct ptx_rsv_area),
	 *  found before emitting; rsv_off: none (the program is emitted again
	 *  that way when a submit or discard could not be matched to its area,
	 *  rsv_unmatched). frame_bytes: the current function's frame. */
	struct ptx_rsv_area rsv[PTX_RSV_MAX];
	unsigned n_rsv;
	int rsv_off;
	int rsv_unmatched;
	/** Emitting a counter's flush variant (ptx_counter.h): these moves of the
	 *  increment load ctx->mem_value (the thread's sum) instead; NULL: none. */
	const struct ptx_counter *count;
	unsigned frame_bytes;
	/** r0 after the call being emitted holds r10 + call_r0_stk_off (a record
	 *  reserved in the frame; consumed like call_r0_ptr). */
	uint8_t call_r0_stk;
	long long call_r0_stk_off;
	char *err;
	size_t err_size;
};

/**
 * Register facts (ptx_cg.ptr): unknown; a value in a map block (global
 * memory: device memory or host memory registered for the device) or NULL;
 * a per-GPU-thread array slot (a map value too) or NULL; the probe's
 * context pointer itself (the entry function's r1, kept by 64-bit moves:
 * its loads are emitted through %rctx, the function's own copy of it, so
 * that the injector's fold can still resolve them after a join where the
 * register it came in was written again on some path). Each is a fact
 * about every lane's own register, so it holds at a join of lanes that
 * came different ways when it holds on each way.
 */
enum {
	PTX_PTR_UNKNOWN,
	PTX_PTR_MAP,         /* a map value (global memory) */
	PTX_PTR_THREAD_SLOT, /* the lane's own slot of a per-GPU-thread array (global memory) */
	PTX_PTR_CTX,         /* the probe context (local memory) */
	PTX_PTR_RING,        /* a reserved ring record's data (global memory) */
	PTX_PTR_THREAD_LOCAL, /* a value of a GPU_THREAD_LOCAL map: the thread's own frame (local memory) */
};

/** ptx_cg.label bits: some jump lands at the pc; one of them from the pc or later (a loop). */
#define PTX_LABEL 1u
#define PTX_LABEL_BACK 2u

/** The register facts of ptx_cg at one point (saved at jumps, met at labels). */
struct ptx_track {
	uint8_t set;             /**< some predecessor was recorded */
	uint8_t align[GBPF_REG_COUNT];
	uint8_t ptr[GBPF_REG_COUNT];
	uint8_t stk_known[GBPF_REG_COUNT];
	long long stk_off[GBPF_REG_COUNT];
	uint8_t tls_known[GBPF_REG_COUNT];
	long long tls_off[GBPF_REG_COUNT];
	uint8_t imm_known[GBPF_REG_COUNT];
	uint64_t imm_val[GBPF_REG_COUNT];
	struct ptx_range range[GBPF_REG_COUNT];
	struct ptx_uni_ptr uni[GBPF_REG_COUNT];
};

/** Record an error naming file, section and instruction; returns @p code. */
int ptx_fail(struct ptx_cg *cg, size_t pc, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/** Index of the function starting at @p pc, or -1. */
long ptx_func_at(const struct ptx_cg *cg, size_t pc);

/**
 * A map helper (lookup, update, delete) on a GPU_THREAD_LOCAL map, written
 * in place on the thread's own values (ptx_maps.c): 1 when emitted, 0 when
 * the call's map is not such a map, or a negative errno (ptx_fail) when it
 * cannot be: a map not known at the call in a program that has such maps,
 * a subprogram, or a probe fragment for a caller that keeps no values.
 */
int ptx_emit_thread_local_call(struct ptx_cg *cg, size_t pc, uint32_t id);

/**
 * A load, store or atomic of @p size bytes at @p base + @p off: when base
 * holds a thread-local value at a known place and the access is 64-bit and
 * 8-byte aligned, writes its operand "[%rtls+N]" (the form the injector
 * turns into a register of the kernel) into @p as and returns 1; else 0,
 * noting in tls_mem when the access may reach a thread-local value.
 */
int ptx_tls_access(struct ptx_cg *cg, unsigned base, long long off, int size, char *as, size_t as_size);

/** 1 when the program's instructions name a GPU_THREAD_LOCAL map (it needs %rtls). */
int ptx_thread_local_used(const struct gbpf_prog_desc *prog);

/** Bytes of the program's GPU_THREAD_LOCAL values before map @p map_index (all of them: map_cnt). */
uint32_t ptx_thread_local_off(const struct gbpf_prog_desc *prog, size_t map_index);

/* ptx_track.c: the register facts between instructions */

/** 1 when @p in is a call that writes no memory the frame could be in: a map lookup, update or delete. */
int ptx_call_keeps_frame(const struct gbpf_insn *in);
/** A function's start: no register facts, no pending call result. */
void ptx_track_function_start(struct ptx_cg *cg);
/** The facts after @p in (the first half of a wide load included). */
void ptx_track_insn(struct ptx_cg *cg, const struct gbpf_insn *in);
/** Jump @p in hands the facts to its target's @p t (a conditional one's as where it is taken). */
void ptx_track_jump_into(struct ptx_cg *cg, const struct gbpf_insn *in, struct ptx_track *t);
/** The facts at label @p pc: every jump's to it and, when @p falls, the fall-through's, met. */
void ptx_track_enter_label(struct ptx_cg *cg, size_t pc, int falls);

/* ptx_codegen.c */

/** Emit the exit path of the current function with r0 already set. */
void ptx_emit_exit(struct ptx_cg *cg);
/** Emit "the program ended through helper 507": unwind to the probe's return. */
void ptx_emit_gpu_exit(struct ptx_cg *cg);

/* ptx_mem.c */
/** Translate LDX, ST, STX (incl. atomics) at @p pc. */
int ptx_emit_mem(struct ptx_cg *cg, size_t pc);
/** Translate a wide load (lddw) at @p pc. */
int ptx_emit_lddw(struct ptx_cg *cg, size_t pc);

/* ptx_helpers.c */
/**
 * Emit a call of output helper @p fn with a record of @p words 8-byte words
 * at @p frame_off in the frame passed by value, after the @p n_lead
 * registers (PTX names) @p lead; r0 gets its result.
 */
void ptx_emit_output_by_value(struct ptx_cg *cg, const char *fn, const char *const *lead, unsigned n_lead,
			      long long frame_off, unsigned words);
/** 1 when the emitter implements helper @p id. */
int ptx_helper_known(uint32_t id);
/** Emit a call to helper @p id (args in r1..r5, result in r0). */
int ptx_emit_helper_call(struct ptx_cg *cg, size_t pc, uint32_t id);
/*
 * In a call's { } scope: "st.param.b64 [__h<arg>], <eBPF register reg>". A
 * register known to hold r10 + an offset has the address computed there
 * (in %__sa, which the scope declares with PTX_STACK_ARG_DECL) rather than
 * read: the call is usually a slow path, and the register's own
 * computation on the fast path is then left without a reader (ptxas drops
 * it).
 */
void ptx_emit_call_arg(struct ptx_cg *cg, unsigned arg, unsigned reg);
#define PTX_STACK_ARG_DECL ".reg .b64 %__sa;\n"
/*
 * The first declaration of the scope in which a probe computes the calling
 * thread's linear id in the grid into %t12: the injector replaces the scope,
 * where it inlines the probe at memory and block sites, with a move from a
 * register the kernel computes once at its entry (plugins/cuda/ptx/sites.c,
 * GTID_SCOPE_MARK there).
 */
#define PTX_GTID_SCOPE_MARK "__gbpf_gtid_scope" /* a .pred register: %__gbpf_gtid_scope */
/** Emit callx through register @p reg: helpers by id, subprograms by tag. */
int ptx_emit_callx(struct ptx_cg *cg, size_t pc, unsigned reg);
/** Emit a local call to function @p fidx. */
void ptx_emit_local_call(struct ptx_cg *cg, size_t fidx);
/** Emit module-scope globals and the device functions of the used helpers. */
void ptx_emit_module_helpers(struct ptx_buf *b, const uint8_t *used, size_t map_cnt, bool const_maps);
/** Mark in @p used what helper @p id needs (itself and the helpers it calls). */
void ptx_helper_mark(uint8_t *used, uint32_t id);

/** Tag of a subprogram address (lddw src=GBPF_PSEUDO_FUNC) as seen by callx. */
#define PTX_FUNC_TAG 0x6762706600000000ull /* "gbpf" << 32 | function index */

/* ptx_maps.c */
/**
 * Emit bpf_map_lookup_elem at @p pc inline when the map in r1 is known
 * there (an array, per-CPU, per-GPU-thread array: address arithmetic; a
 * hash with a word-sized key: the key's hash computed inline). Returns 1
 * when emitted, 0 when the generic call must be used.
 */
int ptx_emit_known_lookup(struct ptx_cg *cg, size_t pc);

/**
 * bpf_map_update_elem at @p pc may call the hash update without LRU
 * eviction (__gbpf_m_hash_update_nl) rather than the dispatch over map
 * types: the map in r1 is known there to be a hash map that is not LRU and
 * the flags in r4 a constant the update accepts.
 */
bool ptx_update_is_plain_hash(const struct ptx_cg *cg, size_t pc);

/**
 * bpf_ringbuf_output at @p pc may pass its record by value
 * (ptx_ring_emit_output_inline, ptx_ring.c): the map in r1 is known there to be
 * a ring buffer, r2 a known 8-aligned place in the frame, r3 a constant
 * multiple of 8 the warp-wide write takes and r4 constant flags the
 * helper accepts. Then *@p frame_off is the record's offset in the
 * frame (__gbpf_stack) and *@p words its 8-byte words.
 */
bool ptx_ringbuf_output_by_value(const struct ptx_cg *cg, size_t pc, long long *frame_off, unsigned *words);
/**
 * bpf_ringbuf_output of the @p words words at @p frame_off in the frame on ring map @p map_reg,
 * emitted inline (ptx_ring_emit_output_inline): what ptx_ringbuf_output_by_value allows.
 */
void ptx_emit_ringbuf_output_inline(struct ptx_cg *cg, const char *map_reg, long long frame_off, unsigned words);

/**
 * bpf_perf_event_output at @p pc may pass its record by value
 * (__gbpf_h_perf_outv): the map in r2 is known to be a perf event array,
 * r4 a known 8-aligned place in the frame and r5 a constant multiple of 8
 * the warp-wide write takes (the flags in r3 are read at run time).
 */
bool ptx_perf_output_by_value(const struct ptx_cg *cg, size_t pc, long long *frame_off, unsigned *words);

/**
 * The instruction that last wrote @p reg before the instruction at @p pc in
 * the same straight-line code (no label between, no call or jump): NULL when
 * there is none or it is not certain.
 */
const struct gbpf_insn *ptx_straight_def(const struct ptx_cg *cg, size_t pc, unsigned reg);
/** The map in @p reg at the call at @p pc (a wide load of a map index, ptx_straight_def), else NULL. */
const struct gbpf_map_desc *ptx_known_map_in(const struct ptx_cg *cg, size_t pc, unsigned reg);

/* ptx_reserve.c */
/**
 * Find the reserve calls of the entry function whose records the frame
 * holds (ptx_cg.rsv; emit_decls sizes the frame from them); @p in_loop[pc]
 * says the instruction may run more than once in one run of the program.
 */
void ptx_rsv_find(struct ptx_cg *cg, const uint8_t *in_loop);
/** Emit bpf_ringbuf_reserve at @p pc as its frame area, when it has one: 1 when emitted. */
int ptx_rsv_emit_reserve(struct ptx_cg *cg, size_t pc);
/**
 * Emit bpf_ringbuf_submit / discard (@p id) of a record in a frame area
 * (r1 names it): 1 when emitted; 0 for the generic call (then, where areas
 * exist, ptx_cg.rsv_unmatched is set: the program is emitted again without
 * them).
 */
int ptx_rsv_emit_commit(struct ptx_cg *cg, uint32_t id);

/* Byte offset of an array map's value 0 inside the map memory (map_layout.h). */
uint64_t ptx_map_value_base(const struct gbpf_map_desc *desc);

#endif /* GBPF_CUDA_PTX_INTERNAL_H */
