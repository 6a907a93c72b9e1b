/* SPDX-License-Identifier: MIT */
/*
 * core/interp/interp_internal.h - state shared by the interpreter's files:
 * the decoded program, the per-run context and the handler list that both
 * execution loops (fast and bounds-checked) are generated from.
 */
#ifndef GBPF_CORE_INTERP_INTERNAL_H
#define GBPF_CORE_INTERP_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "core/interp/interp.h"

/* Binary ALU operations: 64/32 bit x immediate/register. */
#define INTERP_ALU4(X, op) X(op##64_K) X(op##64_X) X(op##32_K) X(op##32_X)
/* Conditional jumps: 64/32 bit x immediate/register. */
#define INTERP_JMP4(X, op) INTERP_ALU4(X, op)

/* Every handler of the decoded form; the enum and both label tables come from here. */
#define INTERP_HANDLERS(X)                                                                         \
	X(INVALID)                                                                                 \
	INTERP_ALU4(X, ADD) INTERP_ALU4(X, SUB) INTERP_ALU4(X, MUL) INTERP_ALU4(X, DIV)            \
	INTERP_ALU4(X, SDIV) INTERP_ALU4(X, OR) INTERP_ALU4(X, AND) INTERP_ALU4(X, LSH)            \
	INTERP_ALU4(X, RSH) INTERP_ALU4(X, MOD) INTERP_ALU4(X, SMOD) INTERP_ALU4(X, XOR)           \
	INTERP_ALU4(X, MOV) INTERP_ALU4(X, ARSH)                                                   \
	X(NEG64) X(NEG32) X(MOVSX8_64) X(MOVSX16_64) X(MOVSX32_64) X(MOVSX8_32) X(MOVSX16_32)     \
	X(LE16) X(LE32) X(LE64) X(BE16) X(BE32) X(BE64)                                            \
	INTERP_JMP4(X, JEQ) INTERP_JMP4(X, JGT) INTERP_JMP4(X, JGE) INTERP_JMP4(X, JSET)           \
	INTERP_JMP4(X, JNE) INTERP_JMP4(X, JSGT) INTERP_JMP4(X, JSGE) INTERP_JMP4(X, JLT)          \
	INTERP_JMP4(X, JLE) INTERP_JMP4(X, JSLT) INTERP_JMP4(X, JSLE)                              \
	X(JA) X(GOTOL) X(CALL_HELPER) X(CALL_LOCAL) X(CALLX) X(EXIT) X(LDDW)                       \
	X(LDXB) X(LDXH) X(LDXW) X(LDXDW) X(LDXSB) X(LDXSH) X(LDXSW)                                \
	X(STB) X(STH) X(STW) X(STDW) X(STXB) X(STXH) X(STXW) X(STXDW)                              \
	X(AADD32) X(AADD64) X(AOR32) X(AOR64) X(AAND32) X(AAND64) X(AXOR32) X(AXOR64)             \
	X(FADD32) X(FADD64) X(FOR32) X(FOR64) X(FAND32) X(FAND64) X(FXOR32) X(FXOR64)             \
	X(XCHG32) X(XCHG64) X(CMPXCHG32) X(CMPXCHG64)

#define INTERP_ENUM(name) H_##name,
enum interp_handler { INTERP_HANDLERS(INTERP_ENUM) H__COUNT };
#undef INTERP_ENUM

/**
 * One decoded slot: the handler's label address, then the fields. The
 * second slot of a wide load holds the resolved 64-bit value in k64.
 */
struct xinsn {
	const void *op;
	union {
		struct {
			uint8_t dst;
			uint8_t src;
			int16_t off;
			int32_t imm;
		};
		uint64_t k64;
	};
};

/** Memory a checked run may touch that exists for the interpreter's lifetime. */
struct interp_static_region {
	uintptr_t start, end;
	int writable;
	const char *name;
};

struct gbpf_interp {
	struct gbpf_insn *insns; /* copy of the program, for messages */
	size_t cnt;
	struct xinsn *code;       /* decoded for the mode below */
	gbpf_host_helper_fn *helpers; /* per slot: resolved helper of CALL_HELPER, else NULL */
	gbpf_interp_helper_lookup_fn lookup;
	struct gbpf_map_instance *maps;
	size_t map_cnt;
	struct interp_static_region *values; /* map values reached by MAP_IDX_VALUE */
	size_t value_cnt;
	uint64_t max_insns;
	int checked;
	char name[64];
};

/* Live pointers handed out by helpers (map values, ring buffer records) one checked run tracks. */
#define INTERP_MAX_DYN_REGIONS 1024

struct interp_dyn_region {
	uintptr_t start, end;
	int writable;
	int record; /* ring buffer record: dies at submit/discard */
	struct gbpf_map_instance *map;
};

struct interp_frame {
	const struct xinsn *ret;
	uint64_t saved[5]; /* r6..r10 */
};

#define INTERP_STACK_BYTES (GBPF_STACK_SIZE * GBPF_MAX_CALL_DEPTH)

/** State of one run. */
struct interp_run {
	const struct gbpf_interp *ip;
	struct gbpf_exec_env *env;
	uint64_t reg[GBPF_REG_COUNT];
	unsigned depth;
	struct interp_frame frames[GBPF_MAX_CALL_DEPTH];
	uint64_t budget; /* instructions left */
	const struct gbpf_interp_region *regions;
	size_t region_cnt;
	struct interp_dyn_region dyn[INTERP_MAX_DYN_REGIONS];
	size_t dyn_cnt;
	int exited;
	char *err;
	size_t err_size;
	_Alignas(16) uint8_t stack[INTERP_STACK_BYTES];
};

/**
 * The two execution loops. Called with table != NULL they only hand out
 * their label table (indexed by enum interp_handler) so that decoding can
 * store label addresses; otherwise they run from slot 0 and return 0 (r0
 * in run->reg[0]) or a negative error with run->err filled.
 */
int gbpf_interp_exec_fast(struct interp_run *run, const void *const **table);
int gbpf_interp_exec_checked(struct interp_run *run, const void *const **table);

/* Checked-mode services (interp_check.c). */
int gbpf_interp_access_ok(struct interp_run *run, uint64_t addr, uint64_t size, int write);
int gbpf_interp_fault_access(struct interp_run *run, size_t pc, uint64_t addr, uint64_t size,
			     int write);
int gbpf_interp_helper_pre(struct interp_run *run, size_t pc, uint32_t id);
int gbpf_interp_helper_post(struct interp_run *run, size_t pc, uint32_t id, uint64_t r0);

/* Messages (interp.c). */
int gbpf_interp_fault(struct interp_run *run, size_t pc, int ret, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
gbpf_host_helper_fn gbpf_interp_resolve(const struct gbpf_interp *ip, uint32_t id);

#endif /* GBPF_CORE_INTERP_INTERNAL_H */
