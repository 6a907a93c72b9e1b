/* SPDX-License-Identifier: MIT */
/*
 * plugins/cuda/sanitizer/san_patch.h - the patch module of the Compute
 * Sanitizer engine (internal to the cuda plugin).
 *
 * The probe fragment of gbpf_ptx_emit() (one __gbpf_probe_<i> per device
 * program) is completed into a module whose functions have the signatures
 * of the Sanitizer patch callbacks:
 *
 *   __gbpf_san_enter   (void *ud, u64 pc)                         BLOCK_ENTER
 *   __gbpf_san_exit    (void *ud, u64 pc)                         BLOCK_EXIT
 *   __gbpf_san_gmem    (void *ud, u64 pc, void *ptr, u32 size,
 *                       u32 flags, const void *value)            GLOBAL_MEMORY_ACCESS
 *   __gbpf_san_smem    (same)                                     SHARED_MEMORY_ACCESS
 *   __gbpf_san_barrier (void *ud, u64 pc, u32 bar, u32 count, u32 flags)  BARRIER
 *
 * each returning SANITIZER_PATCH_SUCCESS (0). ud is the device address of
 * the kernel's struct gbpf_san_record (sanitizerSetCallbackData); NULL (a
 * kernel no probe targets) returns at once. Otherwise the callback fills a
 * struct gbpf_gpu_ctx on its stack from the record and its arguments and
 * calls every probe of its kind whose bit is set in record.probes.
 *
 * Module globals: __gbpf_maps[], __gbpf_pid_tgid and __gbpf_clock_off get
 * initialisers with placeholder values, so that one compiled cubin (cached
 * on disk) serves every process and context: gbpf_san_patch_set_globals()
 * writes the real values into a copy before sanitizerAddPatches().
 * __gbpf_clock_off is what bpf_ktime_get_ns subtracts from %globaltimer
 * (ptx_helpers.c), as in the PTX engine's modules: without it the GPU's
 * timestamps would be Unix-epoch ones, not the host probes' CLOCK_MONOTONIC.
 */
#ifndef GBPF_CUDA_SAN_PATCH_H
#define GBPF_CUDA_SAN_PATCH_H

#include <stddef.h>
#include <stdint.h>

/** Most device programs one patch module serves (bits of record.probes). */
#define GBPF_SAN_MAX_PROBES 64

/** Most maps (entries of __gbpf_maps). */
#define GBPF_SAN_MAX_MAPS 4096

/** Largest cubin read back from ptxas or the cache. */
#define GBPF_SAN_CUBIN_MAX ((size_t)64 << 20)

/** Callback names, one per site kind. */
#define GBPF_SAN_CB_ENTER "__gbpf_san_enter"
#define GBPF_SAN_CB_EXIT "__gbpf_san_exit"
#define GBPF_SAN_CB_GMEM "__gbpf_san_gmem"
#define GBPF_SAN_CB_SMEM "__gbpf_san_smem"
#define GBPF_SAN_CB_BARRIER "__gbpf_san_barrier"

/**
 * Per-kernel record in device memory; its address is the callbacks'
 * userdata. The generated callbacks read it at offsetof() of these fields
 * (san_patch.c); launch_id is written on the launch's stream (san_engine.c).
 *
 *   0 kernel_id   8 params   16 launch_id   24 probes   32 device   36 device_pad   (40 bytes)
 */
struct gbpf_san_record {
	uint64_t kernel_id;  /**< gbpf_kernel_id() of the mangled name */
	uint64_t params;     /**< 0: the patch points do not give the parameter address */
	uint64_t launch_id;  /**< set on the launch's stream before each launch */
	uint64_t probes;     /**< bit i: probe i runs in this kernel */
	uint32_t device;     /**< ordinal of the device of the kernel's context (cuCtxGetDevice) */
	uint32_t device_pad; /**< 0: copied with device as gbpf_gpu_ctx.device_pad, one 8-byte load */
};

/** Placeholder of __gbpf_maps[i] (i < GBPF_SAN_MAX_MAPS) in the compiled module. */
#define GBPF_SAN_MAGIC_MAP(i) (0x67627066f0000d00ull + ((uint64_t)(i) << 12))
/** Placeholder of __gbpf_pid_tgid. */
#define GBPF_SAN_MAGIC_PID 0x67627066f1000effull
/** Placeholder of __gbpf_clock_off (always in the module, read or not). */
#define GBPF_SAN_MAGIC_CLOCK 0x67627066f2000c1full

/** Options of gbpf_san_patch_ptx(). Zero-initialise, set sz. */
struct gbpf_san_patch_opts {
	size_t sz;
	const char *fragment;       /**< gbpf_ptx_emit() probe fragment */
	const uint32_t *probe_kind; /**< attach kind (GBPF_ATTACH_GPU_*) of probe i */
	size_t probe_cnt;           /**< 1 .. GBPF_SAN_MAX_PROBES */
	size_t map_cnt;             /**< entries of __gbpf_maps (0: none) */
	unsigned ctx_unused;        /**< GBPF_CUDA_CTX_UNUSED_*: ctx fields no probe reads */
	const char *arch;           /**< "sm_90" ...; NULL = "sm_90" */
	uint32_t flags;             /**< GBPF_SAN_PATCH_* */
};

/** Give every function of the fragment external linkage (.visible). */
#define GBPF_SAN_PATCH_VISIBLE_FUNCS (1U << 0)

/**
 * Build the patch module's PTX.
 * @param ptx   out: malloc'ed NUL-terminated text
 * @param len   out: its length (may be NULL)
 * @return 0; -EINVAL for bad options or a fragment without the expected
 *         declarations (reason in @p why); -ENOMEM
 */
int gbpf_san_patch_ptx(const struct gbpf_san_patch_opts *o, char **ptx, size_t *len, char *why,
		       size_t why_size);

/**
 * The callback the patch module has for @p instruction_id
 * (GBPF_SAN_INSTRUCTION_*) given the probes' kinds, or NULL when no probe
 * serves that patch point.
 */
const char *gbpf_san_patch_callback(const uint32_t *probe_kind, size_t probe_cnt, int instruction_id);

/**
 * Compile @p ptx into a patch cubin (ptxas --compile-as-tools-patch) or
 * take it from the disk cache. ptxas: $GBPF_PTXAS, $CUDA_HOME/bin/ptxas,
 * /usr/local/cuda/bin/ptxas, then PATH. Cache: $GBPF_CACHE_DIR, else
 * $XDG_CACHE_HOME/gbpf, else $HOME/.cache/gbpf, sub-folder sanitizer/;
 * GBPF_SANITIZER_CACHE=0 turns it off.
 * @param cubin   out: malloc'ed image
 * @param size    out: its size
 * @param cached  out (may be NULL): 1 when it came from the cache
 * @return 0; -ENOENT no ptxas; -EIO ptxas failed (its messages in @p why);
 *         -ENOMEM; -EFBIG output over GBPF_SAN_CUBIN_MAX
 */
int gbpf_san_patch_compile(const char *ptx, size_t len, const char *arch, void **cubin, size_t *size,
			   int *cached, char *why, size_t why_size);

/**
 * Replace the placeholders of a compiled patch module (in place) by the
 * device addresses of the maps, the pid_tgid value and the clock offset
 * (cuda_clock_offset_ns() of plugins/cuda/cuda_clock.h, taken when the copy
 * is bound to a context).
 * @return 0; -ENOENT when a placeholder is missing or appears twice
 *         (reason in @p why); -EINVAL for bad arguments
 */
int gbpf_san_patch_set_globals(void *cubin, size_t size, const uint64_t *maps, size_t map_cnt,
			       uint64_t pid_tgid, uint64_t clock_off, char *why, size_t why_size);

#endif /* GBPF_CUDA_SAN_PATCH_H */
