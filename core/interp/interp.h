/* SPDX-License-Identifier: MIT */
/*
 * core/interp/interp.h - the reference interpreter of the eBPF ISA
 * (RFC 9669, all conformance groups), used by the CPU backend, `prog run`
 * and as the semantics every code generator is tested against.
 *
 * Two modes over the same pre-decoded program:
 *  - fast: for verified programs; memory accesses are performed as is;
 *  - bounds-checked: every load, store and atomic is checked against the
 *    active stack frames, the caller's memory regions, map values reached
 *    through wide loads or returned by helpers, and live ring buffer
 *    records; pointer arguments of known helpers are checked the same way.
 *    An access outside them is reported (with the instruction index and
 *    the address) and never performed.
 *
 * An interpreter is immutable after creation: several threads may run the
 * same one at once, each with its own struct gbpf_exec_env.
 */
#ifndef GBPF_CORE_INTERP_H
#define GBPF_CORE_INTERP_H

#include <stddef.h>
#include <stdint.h>

#include <gbpf/gbpf.h>
#include <gbpf/prog.h>

#include "core/helpers/host_helpers.h"

#ifdef __cplusplus
extern "C" {
#endif

struct gbpf_interp;

/** Budget used when gbpf_interp_opts.max_insns is 0. */
#define GBPF_INTERP_DEFAULT_MAX_INSNS (1ull << 32)

/** Resolves a helper id to its implementation (NULL: not available). */
typedef gbpf_host_helper_fn (*gbpf_interp_helper_lookup_fn)(uint32_t id);

/** Options of gbpf_interp_create(); zero-initialise, set sz (GBPF_OPTS). */
struct gbpf_interp_opts {
	size_t sz;
	/** Non-zero: bounds-checked mode (every access checked, slower). */
	int bounds_checked;
	/** Instructions one run may execute; 0 = GBPF_INTERP_DEFAULT_MAX_INSNS. */
	uint64_t max_insns;
	/**
	 * Helper resolver tried first (tests, embedders); then
	 * gbpf_host_helper_get() (core/helpers, which also emulates the GPU
	 * helpers from the env). NULL: skip this step.
	 */
	gbpf_interp_helper_lookup_fn helper_lookup;
};

/** A block of memory a run may touch (checked mode), e.g. the context in r1. */
struct gbpf_interp_region {
	const void *addr;
	uint64_t size;
	int writable;     /**< 0: loads only */
	const char *name; /**< for messages ("ctx", "data"), may be NULL */
};

/** What a run produced. */
struct gbpf_interp_result {
	uint64_t r0;     /**< return value (meaningful when the run returned 0) */
	uint64_t insns;  /**< instructions executed */
	int exited;      /**< 1 when the GPU exit helper (507) ended the run */
};

/**
 * Build an interpreter for @p prog. The program must pass
 * gbpf_insns_check(); its wide loads are resolved now against @p maps
 * (GBPF_PSEUDO_MAP_IDX gives &maps[imm], GBPF_PSEUDO_MAP_IDX_VALUE the
 * address of the map's value 0 plus the offset), helpers are looked up
 * now (a missing helper only fails when called).
 * @param maps     map instances in the order of prog->maps (may be NULL if map_cnt is 0)
 * @param opts     may be NULL (fast mode, default budget)
 * @param out      receives the interpreter
 * @param err      on failure: what and where ("NAME: instruction N (TEXT): reason")
 * @return 0, -EINVAL (bad encoding, map index out of range), -ENOMEM.
 */
int gbpf_interp_create(const struct gbpf_prog_desc *prog, struct gbpf_map_instance *maps,
		       size_t map_cnt, const struct gbpf_interp_opts *opts,
		       struct gbpf_interp **out, char *err, size_t err_size);

/**
 * Run the program once.
 * @param env       helper environment (maps, thread id...); may be NULL for
 *                  programs that call no helper. In checked mode its
 *                  access_ok and user fields are replaced during the run.
 * @param args      r1..r5 (may be NULL: all zero)
 * @param regions   memory the program may touch besides its stack and
 *                  maps (checked mode; ignored in fast mode)
 * @param res       receives r0 and counters (may be NULL)
 * @param err       on failure: "instruction N (TEXT): reason at 0xADDR"
 * @return 0, -GBPF_ERRNO__FAULT (out-of-bounds or misaligned access in
 *         checked mode, call depth over GBPF_MAX_CALL_DEPTH, missing
 *         helper), -GBPF_ERRNO__BUDGET (max_insns executed), -EINVAL.
 */
int gbpf_interp_run(const struct gbpf_interp *ip, struct gbpf_exec_env *env,
		    const uint64_t args[5], const struct gbpf_interp_region *regions,
		    size_t region_cnt, struct gbpf_interp_result *res, char *err, size_t err_size);

/** Free an interpreter (NULL is fine). */
void gbpf_interp_destroy(struct gbpf_interp *ip);

/** 1 if @p ip was created in bounds-checked mode. */
int gbpf_interp_is_checked(const struct gbpf_interp *ip);


#ifdef __cplusplus
}
#endif

#endif /* GBPF_CORE_INTERP_H */
