/* SPDX-License-Identifier: MIT */
/*
 * core/helpers/host_helpers.h - helpers as the host (interpreter, host
 * probes in the agent) implements them.
 *
 * The interpreter calls a helper with the five argument registers and the
 * execution environment of the running program instance. Map arguments
 * arrive as the value the interpreter loaded for a GBPF_PSEUDO_MAP_IDX wide
 * load: a pointer to the struct gbpf_map_instance.
 */
#ifndef GBPF_CORE_HOST_HELPERS_H
#define GBPF_CORE_HOST_HELPERS_H

#include <stddef.h>
#include <stdint.h>

#include <gbpf/plugin.h>

#ifdef __cplusplus
extern "C" {
#endif

struct gbpf_exec_env;

/**
 * Ask whether [addr, addr+size) may be read (write = 0) or written
 * (write = 1) by the running program; returns 1 if allowed. Set by the
 * interpreter so that probe_read and friends honour its bounds checks.
 */
typedef int (*gbpf_access_check_fn)(struct gbpf_exec_env *env, uint64_t addr, uint64_t size,
				    int write);

/** Receives text written by trace_printk / puts. */
typedef void (*gbpf_text_sink_fn)(void *ctx, const char *text, size_t len);

/** Per-instance state a helper may use. Zero-initialise, then set fields. */
struct gbpf_exec_env {
	struct gbpf_map_instance *maps; /**< maps of the program, by index */
	size_t map_cnt;
	uint32_t slot;             /**< per-CPU slot this instance uses */
	uint64_t thread_id;        /**< linear id of this instance (emulated GPU thread) */
	uint64_t thread_count;     /**< instances in this run */
	uint32_t block_dim;        /**< emulated threads per block (0 = thread_count) */
	uint64_t prandom_state;    /**< xorshift state for get_prandom_u32 */
	gbpf_access_check_fn access_ok; /**< NULL: probe_read trusts the address */
	gbpf_text_sink_fn print;   /**< NULL: trace_printk output goes to stderr */
	void *print_ctx;
	int exit_requested;        /**< set by the GPU exit helper (507) */
	void *user;                /**< owner's pointer (interpreter state) */
	/**
	 * The instance's GPU_THREAD_LOCAL values (gbpf_thread_local_size()
	 * bytes), which its runner zeroes when the instance (an emulated GPU
	 * thread) starts; NULL outside a GPU thread's run (host probes), where
	 * a lookup of such a map finds nothing.
	 */
	unsigned char *thread_local;
	size_t thread_local_size;
};

/**
 * Bytes of GPU_THREAD_LOCAL values one instance of a program with these
 * maps holds: each such map's max_entries x value_size rounded up to 8, in
 * map order (at most GBPF_MAP_THREAD_LOCAL_MAX a map).
 */
size_t gbpf_thread_local_size(const struct gbpf_map_instance *maps, size_t map_cnt);

typedef uint64_t (*gbpf_host_helper_fn)(struct gbpf_exec_env *env, uint64_t r1, uint64_t r2,
					uint64_t r3, uint64_t r4, uint64_t r5);

/** Host implementation of helper @p id, or NULL if the host has none. */
gbpf_host_helper_fn gbpf_host_helper_get(uint32_t id);

/** Longest format or string gbpf_format_device_print() takes (bytes, without a NUL). */
#define GBPF_DEVICE_PRINT_MAX 1023u

/**
 * Format a trace_printk or puts that device code queued, exactly as the
 * host helper @p helper_id (GBPF_HELPER_TRACE_PRINTK or GBPF_HELPER_GPU_PUTS)
 * prints it: @p text is the copied format (or string), @p len bytes without
 * a NUL, @p args the three printk arguments (ignored by puts). %s arguments
 * point into GPU memory and are not read.
 * @return the length written to @p out (NUL-terminated, cut to out_size - 1),
 *         or -EINVAL (bad arguments, len above GBPF_DEVICE_PRINT_MAX) or the
 *         helper's own negative error
 */
int gbpf_format_device_print(uint32_t helper_id, const char *text, size_t len, const uint64_t args[3],
			     char *out, size_t out_size);

/** Readable name of helper @p id ("bpf_map_lookup_elem"), or NULL if unknown. */
const char *gbpf_helper_name(uint32_t id);

#ifdef __cplusplus
}
#endif

#endif /* GBPF_CORE_HOST_HELPERS_H */
