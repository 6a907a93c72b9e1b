/* SPDX-License-Identifier: MIT */
/*
 * gbpf/cuda_inject.h - offline probe injection into the kernels of a CUDA
 * application file (what `gbpf prog inject OBJ --into FILE` shows).
 *
 * The input is the bytes of a PTX text, a cubin, a fatbin container, or
 * an ELF executable / shared library / object with `.nv_fatbin` or
 * `__nv_relfatbin` sections. Every PTX module found (fatbin entries are
 * decompressed: zstd always, LZ4 when libgbpf was built with liblz4) is
 * parsed, the selected kernels are instrumented with calls to the probe
 * functions `__gbpf_probe_<i>` of a PTX fragment, and the instrumented
 * module text is returned, with a list of every kernel found and, for
 * those that cannot be instrumented, the reason (for example "no PTX in
 * fatbin, only sm_90 SASS").
 *
 * Probe ABI: `.visible .func (.param .b64 ret) __gbpf_probe_<i>(.param .b64 ctx)`
 * where ctx is the generic address of a struct gbpf_gpu_ctx
 * (gbpf/probe_ctx.h). The instrumented module declares
 * `.visible .global .u64 __gbpf_launch_id` (unless the fragment does),
 * which the host sets before each launch, or with launch_id_param a
 * hidden trailing kernel parameter `__gbpf_lid` that carries it per launch.
 * A fragment module variable `__gbpf_counter_<i>_<f>_<C>_<fields>` (the
 * code generator's mark of a memory probe that only adds C to one key,
 * docs/ATTACH.md) makes the memory sites add C to a register per key; at
 * the exit the sums are added across the block and one of its threads (the
 * first, or the last where a barrier could wait for the first) runs
 * `__gbpf_probe_<f>` once per key with the total as ctx.mem_value. A fifth
 * number, `..._<r>`, names the rest of a probe that counts first and then
 * does more: `__gbpf_probe_<r>` runs at each summed site.
 */
#ifndef GBPF_CUDA_INJECT_H
#define GBPF_CUDA_INJECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <gbpf/gbpf.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Injection sites (gbpf_cuda_inject_opts.sites). */
#define GBPF_CUDA_SITE_ENTRY (1u << 0)   /**< once, after the kernel's declarations */
#define GBPF_CUDA_SITE_EXIT (1u << 1)    /**< before every ret / exit (predicated too) */
#define GBPF_CUDA_SITE_MEM (1u << 2)     /**< before global/shared/local/generic ld, st, atom, red, cp.async */
#define GBPF_CUDA_SITE_BARRIER (1u << 3) /**< before bar / barrier */
/** At the first instruction of every basic block (gpu/block, docs/ATTACH.md) */
#define GBPF_CUDA_SITE_BLOCK (1u << 4)

struct gbpf_cuda_inject_opts {
	size_t sz;               /**< sizeof(struct gbpf_cuda_inject_opts); use GBPF_OPTS() */
	const char *fragment;    /**< probe PTX (NUL-terminated); may be NULL if sites == 0 */
	unsigned sites;          /**< GBPF_CUDA_SITE_* */
	unsigned entry_probe;    /**< i of __gbpf_probe_<i> called at entry */
	unsigned exit_probe;     /**< ... at exits */
	unsigned mem_probe;      /**< ... at memory accesses */
	unsigned barrier_probe;  /**< ... at barriers */
	/** Kernels to instrument, by mangled name; NULL selects every kernel. */
	bool (*select)(const char *mangled_name, void *arg);
	void *select_arg;
	uint64_t max_decompressed; /**< cap on one decompressed fatbin entry; 0: 512 MiB */
	/**
	 * Fields of struct gbpf_gpu_ctx that no probe reads (GBPF_CUDA_CTX_UNUSED_*):
	 * their per-thread stores are left out, and when no field is read the
	 * probes get a NULL context (no .local buffer at all). 0: fill all.
	 */
	unsigned ctx_unused;
	/**
	 * Newest PTX the device can JIT, as an SM number (90 for sm_90): PTX
	 * entries of a fatbin for a newer architecture are passed over (the
	 * driver cannot compile them for this device), and of the others the
	 * newest comes first in the result. 0: every entry, in fatbin order.
	 */
	unsigned max_ptx_arch;
	/**
	 * i of __gbpf_probe_<i> called at basic-block entries
	 * (GBPF_CUDA_SITE_BLOCK). Its context is a struct gbpf_gpu_block_ctx
	 * (gbpf/probe_ctx.h) whose block_index, block_count and kernel_id are
	 * folded into the inlined probe as constants.
	 */
	unsigned block_probe;
	/**
	 * Give each instrumented kernel one hidden trailing parameter
	 * `.param .u64 __gbpf_lid` that carries the launch id per launch (so
	 * that concurrent launches of one kernel never share it). A value with
	 * bit 63 set (GBPF_CUDA_LAUNCH_ID_FROM_GRID, graph nodes, whose
	 * parameters are fixed when the graph is built) makes the kernel use
	 * GBPF_CUDA_LAUNCH_ID_GRAPH | `__gbpf_launch_id` << 32 | the low half
	 * of %gridid instead (the module variable is set before each graph
	 * launch; %gridid tells apart nodes of graphs running at the same
	 * time). A kernel whose parameters
	 * leave no room for it is not instrumented (see its reason). Whoever
	 * launches the instrumented kernel must pass the parameter
	 * (gbpf_cuda_kernel_info.n_params, .launch_param_off).
	 */
	bool launch_id_param;
	/**
	 * Leave out of each instrumented module the kernels not selected and
	 * the device functions only they use, so that a module built for the
	 * launch of one kernel JIT-compiles that kernel alone (what `gbpf run`
	 * does at each kernel's first launch). false: the whole module.
	 */
	bool only_selected;
	/**
	 * Bytes of GPU_THREAD_LOCAL values each thread of an instrumented
	 * kernel keeps for its probes, right after the probe context (the
	 * fragment emitted with GBPF_PTX_THREAD_LOCAL_CTX; its
	 * gbpf_progs_thread_local_size()): zeroed at the kernel's entry. 0: none.
	 */
	unsigned thread_local_bytes;
};

/** Hidden launch-id parameter value that says "this launch is a graph node's" (see launch_id_param). */
#define GBPF_CUDA_LAUNCH_ID_FROM_GRID (1ULL << 63)
/** The same value under its earlier name (kept for source compatibility). */
#define GBPF_CUDA_LAUNCH_ID_FROM_GLOBAL GBPF_CUDA_LAUNCH_ID_FROM_GRID
/**
 * Bit set in the launch id of a graph node's launch, so that ids of graph
 * launches never equal ids of the host's counter (which host/launch probes
 * see; graph nodes run no host/launch probe).
 */
#define GBPF_CUDA_LAUNCH_ID_GRAPH (1ULL << 62)

#define GBPF_CUDA_CTX_UNUSED_KERNEL_ID (1U << 0) /**< kernel_id */
#define GBPF_CUDA_CTX_UNUSED_PARAMS (1U << 1)    /**< params (and its parameter copy) */
#define GBPF_CUDA_CTX_UNUSED_LAUNCH_ID (1U << 2) /**< launch_id */
#define GBPF_CUDA_CTX_UNUSED_MEM (1U << 3)       /**< every mem_* field */
#define GBPF_CUDA_CTX_UNUSED_DEVICE (1U << 4)    /**< device (gbpf_gpu_ctx.device, gbpf_gpu_block_ctx.device) */
#define GBPF_CUDA_CTX_UNUSED_ALL 0x1fU           /**< no field read: the probes get a NULL context */
/*
 * Finer than GBPF_CUDA_CTX_UNUSED_MEM, for probes that read some mem_* fields
 * but not these: a memory site that calls its probe stores only the fields
 * read. Not part of GBPF_CUDA_CTX_UNUSED_ALL (the groups above).
 */
#define GBPF_CUDA_CTX_UNUSED_MEM_ADDR (1U << 5)  /**< mem_addr */
#define GBPF_CUDA_CTX_UNUSED_MEM_VALUE (1U << 6) /**< mem_value */
#define GBPF_CUDA_CTX_UNUSED_MEM_SITE (1U << 7)  /**< mem_site */
#define GBPF_CUDA_CTX_UNUSED_MEM_FIELDS                                                                  \
	(GBPF_CUDA_CTX_UNUSED_MEM_ADDR | GBPF_CUDA_CTX_UNUSED_MEM_VALUE | GBPF_CUDA_CTX_UNUSED_MEM_SITE)

/** One kernel found in the file. */
struct gbpf_cuda_kernel_info {
	char *name;          /**< mangled name */
	char *module;        /**< where: "ptx", ".nv_fatbin container 1 entry 2 (compute_75)" */
	uint64_t kernel_id;  /**< FNV-1a 64 of the name, as the probe ctx sees it */
	bool instrumented;
	char *reason;        /**< why not instrumented (or a note); NULL if none */
	unsigned n_entry, n_exit, n_mem, n_barrier; /**< probe calls inserted */
	unsigned n_block;    /**< basic-block sites (the kernel's basic blocks) */
	unsigned n_params;   /**< the kernel's own parameters (a hidden one not counted) */
	/** launch_id_param: byte offset of the hidden parameter in the parameter buffer, else 0 */
	unsigned launch_param_off;
};

/** One instrumented PTX module (only modules with an instrumented kernel). */
struct gbpf_cuda_inject_module {
	char *module;        /**< where it came from, as gbpf_cuda_kernel_info.module */
	char *ptx;           /**< instrumented PTX text, NUL-terminated */
	size_t ptx_len;
};

struct gbpf_cuda_inject_result {
	struct gbpf_cuda_kernel_info *kernels;
	size_t n_kernels;
	struct gbpf_cuda_inject_module *modules;
	size_t n_modules;
};

/**
 * Instrument the kernels of a CUDA application file.
 * @data, @size: the file's bytes; @filename: for messages (may be NULL);
 * @opts: may be NULL (nothing injected: the kernels are only listed);
 * @result: receives a result to free with gbpf_cuda_inject_result__free().
 * @log, @log_size: reason of a failure (what and where), may be NULL.
 * Returns 0 (also when some kernels are not instrumentable: see their
 * reasons), -EINVAL on bad arguments, -GBPF_ERRNO__FORMAT when the file or
 * the fragment cannot be parsed, -GBPF_ERRNO__INJECT when the fragment
 * lacks a requested probe, -ENOMEM.
 */
GBPF_API int gbpf_cuda_inject_image(const void *data, size_t size, const char *filename,
				    const struct gbpf_cuda_inject_opts *opts,
				    struct gbpf_cuda_inject_result **result, char *log,
				    size_t log_size);

/** Free a result (NULL is allowed). */
GBPF_API void gbpf_cuda_inject_result__free(struct gbpf_cuda_inject_result *result);

#ifdef __cplusplus
}
#endif

#endif /* GBPF_CUDA_INJECT_H */
