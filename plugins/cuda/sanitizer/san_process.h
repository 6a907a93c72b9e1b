/* SPDX-License-Identifier: MIT */
/*
 * plugins/cuda/sanitizer/san_process.h - the process's one Compute
 * Sanitizer subscription (internal to the cuda plugin).
 *
 * The Sanitizer patches modules only in contexts created after it was
 * subscribed (measured on the H200; see docs/SANITIZER.md), and the agent
 * creates the primary context before the application's main. The cuda plugin therefore subscribes from its
 * constructor when it is loaded into an application an agent serves
 * (GBPF_AGENT_SOCK or GBPF_AGENT_LISTEN set) and GBPF_CUDA_ENGINE is not
 * "ptx". The subscription lives as long as the process (one subscriber per
 * process; the driver keeps callbacks into the library); engines come and
 * go with attach and detach and use it. It enables one callback
 * (MODULE_UNLOAD_STARTING), not the resource domain: that domain slows
 * every kernel of contexts created under it by ~3.5%, the single callback
 * by ~0.3% (docs/SANITIZER.md, "The cost of the subscription").
 *
 * GBPF_SAN_SUBSCRIBE chooses when: "load" (default), "attach" (the old
 * "early"), "lazy" (first launch a probe targets), "off" (never at load;
 * the engine still subscribes lazily). The later forms exist to show the
 * failure they cause (tests/cuda_sanitizer/device.sh).
 */
#ifndef GBPF_CUDA_SAN_PROCESS_H
#define GBPF_CUDA_SAN_PROCESS_H

#include <stddef.h>

#include "san_api.h"

/** When the subscription is made. */
enum gbpf_san_when {
	GBPF_SAN_WHEN_LOAD = 0, /**< plugin constructor, before the agent opens the backend (context) */
	GBPF_SAN_WHEN_ATTACH,   /**< agent_attach */
	GBPF_SAN_WHEN_LAZY,     /**< first launch a probe targets */
	GBPF_SAN_WHEN_OFF,      /**< not at load (lazy at the first launch) */
};

/** $GBPF_SAN_SUBSCRIBE as a gbpf_san_when (unknown values: load). */
enum gbpf_san_when gbpf_san_process_when(void);

/** Readable form of @p when, for reports. */
const char *gbpf_san_when_name(enum gbpf_san_when when);

/** Whether the constructor subscribes in this process (see the file comment). */
int gbpf_san_process_wanted(void);
/**
 * The environment entry compute-sanitizer sets in the processes it runs
 * (NV_SANITIZER_INJECTION_*), or NULL: its tool then holds the process's
 * one subscription, and gbpf's engine does not try to take it.
 */
const char *gbpf_san_process_foreign_tool(void);

/**
 * Load libsanitizer-public.so and subscribe (the module-unload callback),
 * once per process; thread-safe; a failure is final and answered again.
 * @param when  recorded for reports (which moment made the subscription)
 * @param api   out: the loaded entry points (valid for the process's life)
 * @return 0; -ENOENT / -ENOSYS without a usable library, -EBUSY when
 *         another subscriber exists, -EIO; @p why says why
 */
int gbpf_san_process_subscribe(enum gbpf_san_when when, const struct gbpf_san_api **api, char *why,
			       size_t why_size);

/**
 * @return 1 subscribed, -1 failed or given up (gbpf_san_process_yielded
 *         tells which), 0 not tried; @p when (optional) the moment it was
 *         made or tried
 */
int gbpf_san_process_state(enum gbpf_san_when *when);

/** Called (under the handler lock, never the subscription lock) when a module is about to be unloaded. */
typedef void (*gbpf_san_module_unload_fn)(void *arg, CUcontext ctx, CUmodule mod);

/** Route module-unload callbacks to @p fn (NULL: to nobody). */
void gbpf_san_process_on_unload(gbpf_san_module_unload_fn fn, void *arg);

/**
 * Called by gbpf_san_process_yield while the subscription still exists:
 * the engine restores what it patched and stops using the library. It
 * writes what it gave up into @p msg (one clause, no final period).
 */
typedef void (*gbpf_san_yield_fn)(void *arg, const char *call, char *msg, size_t msg_size);

/**
 * The engine to call before the subscription is given up. @p fn NULL
 * clears the registration of @p arg (and only of it). Waits for a yield in
 * progress: after it returns, a cleared @p arg is no longer used.
 */
void gbpf_san_process_on_yield(gbpf_san_yield_fn fn, void *arg);

/**
 * Give the process's subscription to another tool (a CUPTI profiler about
 * to make @p call): the registered engine restores what it patched, then
 * callbacks off, sanitizerUnsubscribe and the library unloaded (only that
 * frees the driver's tool subscription). Final: the subscription is never
 * made again in this process (gbpf_san_process_subscribe answers -EBUSY,
 * saying why). Thread-safe; concurrent calls give it up once.
 * @param msg  out: what was given up (on 0), why it is kept (on -EBUSY)
 * @return 0 given up now; -ENOENT nothing held (not subscribed, failed, or
 *         given up before; a subscription not made yet will not be made);
 *         -EBUSY kept: patches were loaded into a context (unloading the
 *         library then is unverified; GBPF_SAN_YIELD_UNLOAD=1 forces it)
 */
int gbpf_san_process_yield(const char *call, char *msg, size_t msg_size);

/** An engine loaded patches into a context (sanitizerAddPatches succeeded). */
void gbpf_san_process_note_patches(void);

/** 1 when the subscription was given to another tool (gbpf_san_process_yield). */
int gbpf_san_process_yielded(void);

#endif /* GBPF_CUDA_SAN_PROCESS_H */
