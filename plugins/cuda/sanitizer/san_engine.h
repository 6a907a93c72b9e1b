/* SPDX-License-Identifier: MIT */
/*
 * plugins/cuda/sanitizer/san_engine.h - the second CUDA engine of `gbpf run`:
 * probes attached through NVIDIA's Compute Sanitizer patching API
 * (libsanitizer-public.so), which patches the SASS of any module, PTX or
 * not (internal to the cuda agent; docs/SANITIZER.md).
 *
 * The library is loaded and subscribed when the plugin is loaded (no
 * CUPTI; one Sanitizer subscriber per process: san_process.h). At the
 * first launch of a kernel a probe targets it: compiles the patch module
 * for the device's architecture (san_patch.h; disk cache), binds its placeholders to the
 * context's maps, the pid and the clock offset and loads it (sanitizerAddPatches, once per context),
 * patches the kernel's module at the probes' patch points
 * (sanitizerPatchInstructions + sanitizerPatchModule, once per module)
 * and gives the kernel its device record (sanitizerSetCallbackData; with
 * the ordinal of the context's device). The
 * application's own function is launched: the patch is in place, nothing
 * is replaced. Every failure is reported; the kernel then runs
 * uninstrumented.
 */
#ifndef GBPF_CUDA_SAN_ENGINE_H
#define GBPF_CUDA_SAN_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include <gbpf/plugin.h>

#include "plugins/cuda/intercept/intercept.h"

struct gbpf_san_engine;

/**
 * The device addresses of the maps for context @p ctx (the agent's
 * cuda_devmaps table). @return 0 or a negative errno with a reason.
 */
typedef int (*gbpf_san_maps_fn)(void *arg, CUcontext ctx, CUdeviceptr *table, char *why, size_t why_size);

/** Options of gbpf_san_engine_create(). Zero-initialise, set sz. */
struct gbpf_san_engine_opts {
	size_t sz;
	const struct gbpf_agent_services *svc;      /**< report, kernel_selected, next_launch_id */
	const struct gbpf_prog_desc *const *probes; /**< device programs: probe i of the fragment */
	const size_t *prog_index;                   /**< their index in the attach request */
	size_t probe_cnt;                           /**< 1 .. GBPF_SAN_MAX_PROBES */
	const char *fragment;                       /**< gbpf_ptx_emit() of the probes */
	size_t map_cnt;                             /**< entries of the maps table */
	unsigned ctx_unused;                        /**< GBPF_CUDA_CTX_UNUSED_* */
	gbpf_san_maps_fn maps_table;                /**< required when map_cnt > 0 */
	void *maps_arg;
};

/**
 * Create the engine: the patch module's text. The Sanitizer subscription
 * is the process's (san_process.h), normally made when the plugin was
 * loaded; without it the engine subscribes at the first launch a probe
 * targets (or here with GBPF_SAN_SUBSCRIBE=attach), which is too late for
 * the Sanitizer to patch in contexts created before (reported then).
 * @return 0; -EINVAL; -ENOMEM; when the load-time subscription failed:
 *         -ENOENT / -ENOSYS without a usable libsanitizer-public.so, -EBUSY
 *         when another Sanitizer subscriber exists (compute-sanitizer,
 *         another tool). @p log says why.
 */
int gbpf_san_engine_create(struct gbpf_san_engine **out, const struct gbpf_san_engine_opts *o, char *log,
			   size_t log_size);

/**
 * A launch is about to be made with the application's own function:
 * instrument its kernel at its first launch, then set the launch id
 * (when @p need_launch_id) on the launch's stream.
 * @param id  launch id; taken from next_launch_id when 0 and the kernel is probed
 * @return 0 when the launch runs with probes; -ENOENT when no probe targets
 *         the kernel or it could not be instrumented (reported once)
 */
int gbpf_san_engine_launch(struct gbpf_san_engine *e, const struct gbpf_cu_launch *l, uint64_t *id,
			   int need_launch_id);

/** Counters for reports and tests. */
struct gbpf_san_engine_stats {
	uint64_t kernels;     /**< kernels given a record */
	uint64_t modules;     /**< modules patched */
	uint64_t contexts;    /**< contexts the patch module was loaded into */
	uint64_t launches;    /**< launches that ran with probes */
	int cubin_cached;     /**< the last patch cubin came from the disk cache */
};
void gbpf_san_engine_stats(struct gbpf_san_engine *e, struct gbpf_san_engine_stats *st);

/**
 * Stop instrumenting and free the engine: the subscription stays (the
 * process's), patched modules stay patched and the records stay in device
 * memory (kernels in flight may still use them). Call when no launch can reach the engine.
 */
void gbpf_san_engine_destroy(struct gbpf_san_engine *e);

/** Engines of the cuda agent (GBPF_CUDA_ENGINE, or the attach flags). */
enum gbpf_san_engine_choice {
	GBPF_SAN_CHOICE_AUTO = 0,  /**< PTX injection where PTX exists, the Sanitizer engine elsewhere */
	GBPF_SAN_CHOICE_PTX,       /**< PTX injection only */
	GBPF_SAN_CHOICE_SANITIZER, /**< the Sanitizer engine only */
};

/**
 * The engine the user asked for: attach flags first
 * (GBPF_AGENT_F_ENGINE_PTX / _SANITIZER), else $GBPF_CUDA_ENGINE
 * ("ptx", "sanitizer", "auto").
 * @return the choice; -EINVAL for an unknown value (the reason in @p why)
 */
int gbpf_san_engine_choice(uint32_t attach_flags, char *why, size_t why_size);

#endif /* GBPF_CUDA_SAN_ENGINE_H */
