/* SPDX-License-Identifier: MIT */
/*
 * gbpf/verifier.h - the static verifier every program passes before a
 * backend sees it.
 *
 * gbpf_verify() interprets the program abstractly over all of its paths
 * (with state pruning) and proves that it
 *  - only reads initialised registers and stack, and only dereferences
 *    pointers it was given or derived within bounds (context, stack, map
 *    values, ring buffer records, the `prog run` memory buffer);
 *  - never writes its context, read-only maps or application memory;
 *  - calls only helpers that exist for its attach kind, with arguments of
 *    the types each helper's prototype asks for; host-only helpers are
 *    refused in device programs (table in verifier/helpers.c);
 *  - terminates: loops must be bounded (an exactly repeated state on the
 *    current path is an infinite loop), and at most @c complexity_limit
 *    instructions are processed;
 *  - releases every ring buffer record it reserves.
 *
 * Messages follow the Linux verifier: "<idx>: (<opcode>) <instruction as
 * text>" then the reason, optionally preceded by the register state.
 */
#ifndef GBPF_VERIFIER_H
#define GBPF_VERIFIER_H

#include <stddef.h>
#include <stdint.h>

#include <gbpf/gbpf.h>
#include <gbpf/prog.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Log levels of struct gbpf_verify_opts.log_level. */
#define GBPF_VERIFY_LOG_ERROR 0   /**< only the rejecting instruction and reason */
#define GBPF_VERIFY_LOG_STATE 1   /**< plus the register state at the error and a summary */
#define GBPF_VERIFY_LOG_VERBOSE 2 /**< every processed instruction with its state */

/** Flags of struct gbpf_verify_opts.flags. */
/**
 * gpu/mem probes may replace the value the application stores: with this
 * flag they may write the context field mem_value (offset 32, 8 bytes),
 * and a backend that honours it stores the new value instead. Every other
 * context field stays read-only, and application memory itself can never be
 * dereferenced by a probe.
 */
#define GBPF_VERIFY_F_ALLOW_MEM_WRITE (1U << 0)
/**
 * GBPF_ATTACH_NONE: r1 may be NULL even when mem_size is not zero (the
 * program must test it before use). Default: r1 is a valid buffer of
 * mem_size bytes, as `prog run` and the conformance suite provide.
 */
#define GBPF_VERIFY_F_NULLABLE_MEM (1U << 1)

/**
 * Receives the log line by line (no trailing newline) when set; the log
 * buffer is filled as well when one is given.
 */
typedef void (*gbpf_verify_log_fn)(void *ctx, const char *line);

/** Options of gbpf_verify(); declare with GBPF_OPTS(gbpf_verify_opts, o, ...). */
struct gbpf_verify_opts {
	size_t sz;
	uint32_t log_level;          /**< GBPF_VERIFY_LOG_* */
	uint32_t flags;              /**< GBPF_VERIFY_F_* */
	char *log_buf;               /**< NUL-terminated log, truncated to log_size; may be NULL */
	size_t log_size;
	gbpf_verify_log_fn log_fn;   /**< optional line callback */
	void *log_ctx;
	uint64_t complexity_limit;   /**< instructions processed before giving up; 0 = 1,000,000 */
	/**
	 * GBPF_ATTACH_NONE only: bytes of the buffer r1 points to (r2 holds the
	 * same number). 0 means the program gets r1 = 0 and r2 = 0.
	 */
	uint64_t mem_size;
};

/** Verdicts. */
#define GBPF_VERDICT_ACCEPT 0
#define GBPF_VERDICT_REJECT 1

/** Outcome of gbpf_verify(); fields are valid for both verdicts unless noted. */
struct gbpf_verify_result {
	size_t sz;                 /**< caller sets sizeof(struct gbpf_verify_result) */
	uint32_t verdict;          /**< GBPF_VERDICT_* */
	int32_t error;             /**< 0, or the negative errno of the rejection */
	int64_t error_insn;        /**< index of the rejected instruction, -1 if none */
	char reason[160];          /**< the reason alone (no index), "" when accepted */
	/** Accepted programs: r0 at every exit of the entry function lies in these bounds. */
	int64_t r0_smin, r0_smax;
	uint64_t r0_umin, r0_umax;
	uint64_t r0_known_mask;    /**< bits of r0 that are unknown (tnum mask); others equal r0_known_value */
	uint64_t r0_known_value;
	uint64_t worst_case_insns; /**< longest path in executed instructions (the program's cost) */
	uint64_t insns_processed;  /**< abstract instructions stepped (complexity) */
	uint64_t states_stored;    /**< pruning checkpoints kept */
	uint64_t states_pruned;    /**< paths cut by pruning */
	uint32_t max_stack_depth;  /**< deepest stack byte used, over all frames of one path */
	uint32_t subprog_cnt;      /**< functions, the entry included */
	uint32_t insn_cnt;         /**< slots in the program */
	uint32_t pad;
	/**
	 * Accepted programs: bit i set when some path may read byte i of the
	 * context (i < 64); all ones when a helper is handed the context.
	 * A backend fills only the fields a program reads. All ones when
	 * rejected.
	 */
	uint64_t ctx_read_mask;
};

/**
 * Verify @p prog.
 * @param prog    linked program (see gbpf/prog.h)
 * @param opts    options, or NULL for defaults
 * @param result  filled when not NULL (set result->sz first)
 * @return 0 when the program is accepted; -GBPF_ERRNO__VERIFY when it is
 *         rejected (the reason is in the log and result); -EINVAL for bad
 *         arguments; -ENOMEM when out of memory.
 */
GBPF_API int gbpf_verify(const struct gbpf_prog_desc *prog, const struct gbpf_verify_opts *opts,
			 struct gbpf_verify_result *result);

/**
 * Whether helper @p id is allowed for attach kind @p attach_kind, and its
 * name. Returns 1 allowed, 0 known but not allowed for that kind, -ENOENT
 * unknown id. @p name (may be NULL) receives a static string or NULL.
 */
GBPF_API int gbpf_verify_helper_allowed(uint32_t id, uint32_t attach_kind, const char **name);

#ifdef __cplusplus
}
#endif

#endif /* GBPF_VERIFIER_H */
