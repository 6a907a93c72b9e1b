/* SPDX-License-Identifier: MIT */
/*
 * plugins/spirv/spv_internal.h - the SPIR-V module builder and the code
 * generator's state, shared by the spv_*.c files (not part of spirv.h).
 */
#ifndef GBPF_PLUGINS_SPV_INTERNAL_H
#define GBPF_PLUGINS_SPV_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <spirv/unified1/spirv.h>

#include <gbpf/prog.h>

#include "spirv.h"

/* Logical sections of a module, in the order SPIR-V requires. */
enum spv_section {
	SPV_SEC_CAP,
	SPV_SEC_EXT,
	SPV_SEC_IMPORT,
	SPV_SEC_MEMMODEL,
	SPV_SEC_ENTRY,
	SPV_SEC_EXEC,
	SPV_SEC_DEBUG,
	SPV_SEC_ANNOT,
	SPV_SEC_TYPES,
	SPV_SEC_FUNCDECL, /* function declarations precede definitions */
	SPV_SEC_FUNCS,
	SPV_SEC_COUNT,
};

struct spv_words {
	uint32_t *w;
	size_t n, cap;
};

/* One cached type or constant: the instruction's opcode and operands without the result id. */
struct spv_cache_ent {
	uint32_t key[10];
	uint32_t klen;
	uint32_t id;
};

/** A module under construction. */
struct spv_mod {
	struct spv_words sec[SPV_SEC_COUNT];
	uint32_t bound;   /* next free id */
	int oom;          /* an allocation failed: the module is unusable */
	struct spv_cache_ent *cache;
	size_t ncache, capcache;
	uint32_t caps[16]; /* capabilities declared */
	size_t ncaps;
	uint32_t builtin_var[64]; /* Input variable per BuiltIn (0 = none yet) */
	uint32_t iface[64];       /* Input variables for entry point interfaces */
	size_t niface;
	/* frequent types */
	uint32_t t_void, t_bool, t_u8, t_u16, t_u32, t_u64, t_v3u64;
};

int spv_mod_init(struct spv_mod *m);
/** Find or create void, bool, u8..u64 and v3 ulong (after an app's types were cached). */
int spv_mod_std_types(struct spv_mod *m);
/** Find or create a type/constant: the result id goes after the first @p before operands. */
uint32_t spv_cached(struct spv_mod *m, uint32_t op, size_t before, size_t n, const uint32_t *ops);
/** Record an existing type/constant (op, operands without result id) as id. */
int spv_cache_add(struct spv_mod *m, uint32_t op, size_t n, const uint32_t *ops, uint32_t id);
void spv_mod_free(struct spv_mod *m);
/** Concatenate the sections behind a header into one malloc'ed module. */
int spv_mod_finish(struct spv_mod *m, uint32_t version, uint32_t **words, size_t *count);

uint32_t spv_id(struct spv_mod *m);
/** Append one instruction: opcode and @p n operand words. */
void spv_inst(struct spv_mod *m, enum spv_section s, uint32_t op, size_t n, const uint32_t *ops);
/** Append one instruction from variadic uint32_t operands. */
void spv_op(struct spv_mod *m, enum spv_section s, uint32_t op, size_t n, ...);
/** Append an instruction with a literal string operand after @p n leading words and before @p m trailing words. */
void spv_op_str(struct spv_mod *m, enum spv_section s, uint32_t op, const uint32_t *pre, size_t n,
		const char *str, const uint32_t *post, size_t npost);

void spv_cap(struct spv_mod *m, uint32_t cap);
void spv_name(struct spv_mod *m, uint32_t id, const char *name);

uint32_t spv_type_int(struct spv_mod *m, uint32_t width);
uint32_t spv_type_ptr(struct spv_mod *m, uint32_t storage, uint32_t pointee);
uint32_t spv_type_array(struct spv_mod *m, uint32_t elem, uint32_t len);
uint32_t spv_type_fn(struct spv_mod *m, uint32_t ret, size_t n, const uint32_t *params);
uint32_t spv_const(struct spv_mod *m, uint32_t type, uint64_t v);
uint32_t spv_c32(struct spv_mod *m, uint32_t v);
uint32_t spv_c64(struct spv_mod *m, uint64_t v);
uint32_t spv_cbool(struct spv_mod *m, int v);
/** The Input variable of a BuiltIn (v3 ulong or ulong), created once per module. */
uint32_t spv_builtin(struct spv_mod *m, uint32_t builtin, int vector);

/* Instructions inside a function (SPV_SEC_FUNCS); each returns the result id. */
uint32_t spv_bin(struct spv_mod *m, uint32_t op, uint32_t type, uint32_t a, uint32_t b);
uint32_t spv_un(struct spv_mod *m, uint32_t op, uint32_t type, uint32_t a);
uint32_t spv_select(struct spv_mod *m, uint32_t type, uint32_t c, uint32_t a, uint32_t b);
uint32_t spv_load(struct spv_mod *m, uint32_t type, uint32_t ptr, uint32_t align);
void spv_store(struct spv_mod *m, uint32_t ptr, uint32_t val, uint32_t align);
/** Generic pointer to @p type at integer address @p addr (u64). */
uint32_t spv_addr_ptr(struct spv_mod *m, uint32_t type, uint32_t addr);
uint32_t spv_label(struct spv_mod *m, uint32_t id);
void spv_br(struct spv_mod *m, uint32_t target);
void spv_brc(struct spv_mod *m, uint32_t cond, uint32_t t, uint32_t f);
/** Load a u64 / u32 at integer address base + off (Generic). */
uint32_t spv_ld64(struct spv_mod *m, uint32_t base, uint64_t off);
uint32_t spv_ld32(struct spv_mod *m, uint32_t base, uint64_t off);
uint32_t spv_add64(struct spv_mod *m, uint32_t a, uint32_t b);
uint32_t spv_addk(struct spv_mod *m, uint32_t a, uint64_t k);
/** Bytes of a per-slot plane: @p count values @p stride bytes apart, rounded up to GBPF_MAP_PLANE_ALIGN
 *  (gbpf_map_plane_size); both ids are u64. */
uint32_t spv_plane_size(struct spv_mod *m, uint32_t count, uint32_t stride);
/** Atomic on an integer address: op is OpAtomic*, width 32 or 64. */
uint32_t spv_atomic(struct spv_mod *m, uint32_t op, uint32_t width, uint32_t addr, uint32_t val);
uint32_t spv_atomic_cas(struct spv_mod *m, uint32_t width, uint32_t addr, uint32_t val,
			uint32_t cmp);
uint32_t spv_atomic_load(struct spv_mod *m, uint32_t width, uint32_t addr);
void spv_atomic_store(struct spv_mod *m, uint32_t width, uint32_t addr, uint32_t val);
void spv_fence(struct spv_mod *m, uint64_t word);
/** A Function-storage variable (must be emitted in the entry block). */
uint32_t spv_var(struct spv_mod *m, uint32_t pointee);

/* Memory semantics of device atomics: sequentially consistent on both memories. */
#define SPV_SEM_SC (SpvMemorySemanticsSequentiallyConsistentMask | \
		    SpvMemorySemanticsCrossWorkgroupMemoryMask | SpvMemorySemanticsWorkgroupMemoryMask)

/* ---- code generator ---- */

struct spv_func {
	size_t start, end; /* slots [start, end) */
	uint32_t id;       /* OpFunction id */
};

/* Support functions a module may need, emitted once on demand. */
enum spv_rt {
	SPV_RT_MEMCPY,
	SPV_RT_MAP_LOOKUP,
	SPV_RT_MAP_UPDATE,
	SPV_RT_MAP_DELETE,
	SPV_RT_RING_RESERVE,
	SPV_RT_RING_COMMIT,
	SPV_RT_RING_OUTPUT,
	SPV_RT_PERF_OUTPUT,
	SPV_RT_HASH,
	SPV_RT_SLOT,
	SPV_RT_TIMER,
	SPV_RT_MEMCMP,
	SPV_RT_ZERO,
	SPV_RT_HASH_LOOKUP,
	SPV_RT_HASH_LOCKED,
	SPV_RT_HASH_WRITE,
	SPV_RT_RING_RESERVE_ON,
	SPV_RT_PRINTQ_PUT,
	SPV_RT_LRU_EVICT,
	SPV_RT_COUNT,
};

/** Module-wide generator state. */
struct spv_gen {
	struct spv_mod *m;
	uint64_t ctx_table;
	uint32_t flags;
	uint32_t rt[SPV_RT_COUNT]; /* function ids (0 = not requested) */
	uint32_t t_fn5;            /* ulong(ulong x5, uint*) */
	uint32_t t_pu32;           /* Function pointer to uint (exit flag) */
	uint32_t tbl;              /* constant id of the table address */
	uint32_t timer_decl, timer_decl_type; /* imported timer (GBPF_SPIRV_TIMER_IMPORT) */
};

/** Per-program translation state. */
struct spv_cg {
	struct spv_gen *g;
	struct spv_mod *m;
	const struct gbpf_prog_desc *prog;
	size_t prog_idx;
	const struct gbpf_insn *insns;
	size_t n;
	struct spv_func *funcs;
	size_t nfuncs;
	uint8_t *leader;   /* slot starts a basic block */
	uint32_t *label;   /* label id per leader slot */
	int uses_exit;     /* helper 507 in the program */
	/* current function */
	size_t cur;
	uint32_t reg[11];  /* Function variables r0..r10 */
	uint32_t exit_flag; /* uint* parameter */
	uint32_t tls_base; /* main function: the work-item's GPU_THREAD_LOCAL values (u64 address), else 0 */
	char *err;
	size_t err_size;
};

/**
 * A map helper (lookup, update, delete) on a GPU_THREAD_LOCAL map, written in place
 * (spv_tls.c): 1 with its r0 in *@p r0, 0 when the call's map is not such a map, or a
 * negative errno (spv_fail) when it cannot be: a map not known at the call in a program
 * with such maps, or a subprogram.
 */
int spv_tls_emit_call(struct spv_cg *cg, size_t pc, uint32_t id, uint32_t *r0);

/** Internal flag of spv_gen_progs: probe functions without Linkage Export (injection). */
#define SPV_GEN_NO_EXPORT (1U << 30)
/**
 * Emit programs into module g->m (fresh or an application's): functions,
 * probe functions (their ids to probe_fids[i], may be NULL) or run kernels
 * with their entry points, and the support functions.
 */
int spv_gen_progs(struct spv_gen *g, const struct gbpf_prog_desc *const *progs, size_t n,
		  uint32_t flags, uint32_t *probe_fids, char *err, size_t err_size);

int spv_fail(struct spv_cg *cg, size_t pc, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

uint32_t spv_rd(struct spv_cg *cg, unsigned r);
void spv_wr(struct spv_cg *cg, unsigned r, uint32_t v);

/** ALU32/64, loads, stores, atomics, the wide load: append code for slot pc. */
int spv_emit_insn(struct spv_cg *cg, size_t pc);
/** Conditional jump condition (bool id) of slot pc. */
uint32_t spv_jump_cond(struct spv_cg *cg, size_t pc);
/** Helper call at slot pc (r1-r5 in, r0 out). Sets *terminated for the exit helper. */
int spv_emit_helper(struct spv_cg *cg, size_t pc, int *terminated);
/** As spv_emit_helper for helper @p id (indirect calls). */
int spv_emit_helper_id(struct spv_cg *cg, size_t pc, uint32_t id, int *terminated);
/** Value of a subprogram address (lddw PSEUDO_FUNC): a tag and the function index. */
#define SPV_FUNC_TAG 0x6762706600000000ull
/** Support function id (emitted at the end of the module). */
uint32_t spv_rt_get(struct spv_gen *g, enum spv_rt which);
/** Call support function @p which (ulong f(ulong x4)). */
uint32_t spv_rt_call(struct spv_gen *g, enum spv_rt which, uint32_t a, uint32_t b, uint32_t c,
		     uint32_t d);
/** Emit ring buffer and hash support functions (spv_hash.c, spv_ring.c). */
void spv_rt_emit_more(struct spv_gen *g, unsigned which);
/* Small value helpers of the support code. */
uint32_t spv_u32_64(struct spv_mod *m, uint32_t v32);
uint32_t spv_hdr32(struct spv_mod *m, uint32_t map, uint32_t off);
uint32_t spv_eq(struct spv_mod *m, uint32_t a, uint32_t b);
uint32_t spv_ret(struct spv_mod *m, uint32_t v);
uint32_t spv_is_array(struct spv_mod *m, uint32_t type);
/* Hash map operations, inlined into the map helpers' hash branch (spv_hash.c). */
uint32_t spv_hash_lookup(struct spv_gen *g, uint32_t map, uint32_t key);
uint32_t spv_hash_update(struct spv_gen *g, uint32_t map, uint32_t key, uint32_t val,
			 uint32_t flags);
uint32_t spv_hash_delete(struct spv_gen *g, uint32_t map, uint32_t key);
/** Emit LRU eviction (spv_lru.c); 0 when @p which is not it. */
int spv_lru_emit(struct spv_gen *g, unsigned which);
/** Emit the print queue's support function (spv_printq.c); 0 when @p which is not it. */
int spv_printq_emit(struct spv_gen *g, unsigned which);
/** Code of trace_printk (fmt, size, a1..a3) or puts (str): r0 of the call. */
uint32_t spv_printq_call(struct spv_cg *cg, uint32_t helper);
/** Emit hash support function @p which; 0 when it is not one of them. */
int spv_hash_emit(struct spv_gen *g, unsigned which);
/** Emit the bodies of every requested support function. */
int spv_rt_emit_all(struct spv_gen *g);
/** Address of the context table (u64 constant). */
uint32_t spv_table(struct spv_gen *g);
/** Linear global id, compute-unit substitute (u64 values). */
uint32_t spv_global_id(struct spv_mod *m);
uint32_t spv_slot_id(struct spv_gen *g);

#endif /* GBPF_PLUGINS_SPV_INTERNAL_H */
