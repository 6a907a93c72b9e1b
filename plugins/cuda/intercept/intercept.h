/* SPDX-License-Identifier: MIT */
/*
 * plugins/cuda/intercept/intercept.h - hooks of the CUDA driver
 * interception layer (internal to the agent).
 *
 * The agent (the library `gbpf run` preloads) overrides dlsym and wraps
 * cuGetProcAddress so that every driver entry point an application reaches
 * (static or shared cudart, programs linked with -lcuda) goes through the
 * wrappers of this folder. The rest of the agent observes and changes what
 * happens through one struct gbpf_cu_hooks:
 *
 *  - image_loaded: a module, library or link input was loaded (bytes and
 *    kind: cubin, fatbin, fatbin wrapper, PTX, or a file path);
 *  - handle_created: a CUfunction or CUkernel was created (mangled name);
 *  - attribute_set: cuFuncSetAttribute and friends (also recorded here so
 *    that gbpf_cu_attr_replay() can apply them to a replacement);
 *  - launch_pre / launch_post: every launch and every graph kernel node;
 *    launch_pre may set launch->replacement to launch another CUfunction
 *    (the instrumented variant) with the same parameters;
 *  - call_pre / call_post: memcpy, memset, cuMemAlloc, synchronisation,
 *    for host probes.
 *
 * Guarantees to the application: a hook that returns an error leaves the
 * original call untouched; a replacement whose launch fails is retried
 * with the original function; nothing here adds a synchronisation or
 * changes a stream. Hooks run on the application's thread, inside the
 * driver call; driver calls that hooks make (through gbpf_cu_real_proc or
 * through wrapped entry points) are not hooked again on that thread.
 */
#ifndef GBPF_CUDA_INTERCEPT_H
#define GBPF_CUDA_INTERCEPT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "plugins/cuda/intercept/cuda_types.h"

/** What an image handed to the driver is. */
enum gbpf_cu_image_kind {
	GBPF_CU_IMAGE_UNKNOWN = 0,
	GBPF_CU_IMAGE_CUBIN,   /**< ELF cubin (0x7F 'E' 'L' 'F') */
	GBPF_CU_IMAGE_FATBIN,  /**< fatbinary container (0xBA55ED50) */
	GBPF_CU_IMAGE_WRAPPER, /**< fatbin wrapper (0x466243B1) pointing to a container */
	GBPF_CU_IMAGE_PTX,     /**< NUL-terminated PTX text */
	GBPF_CU_IMAGE_FILE,    /**< loaded from a file: see path */
};

/** Name of a kind ("cubin", "fatbin", "wrapper", "ptx", "file", "unknown"). */
const char *gbpf_cu_image_kind_name(enum gbpf_cu_image_kind kind);

/**
 * Classify the image bytes @p image as the driver would.
 * @param image  image pointer given to the driver (may be NULL)
 * @param size   if non-NULL, receives the image size in bytes when the
 *               format carries it (ELF headers, fatbin header, PTX length
 *               including the NUL, 24 for a wrapper), else 0
 * @return the kind; GBPF_CU_IMAGE_UNKNOWN for NULL or unrecognised bytes
 */
enum gbpf_cu_image_kind gbpf_cu_image_classify(const void *image, size_t *size);

/** A module, library or link input was loaded (after the driver call). */
struct gbpf_cu_image_event {
	const char *api;              /**< entry point, e.g. "cuLibraryLoadData" */
	enum gbpf_cu_image_kind kind;
	const void *image;            /**< the bytes the app passed (NULL for files) */
	size_t image_size;            /**< from gbpf_cu_image_classify, or the size argument */
	const void *fatbin;           /**< for a wrapper: the container it points to */
	size_t fatbin_size;           /**< size of that container */
	const char *path;             /**< file loads: the path */
	CUmodule module;              /**< result of cuModuleLoad*, else NULL */
	CUlibrary library;            /**< result of cuLibraryLoad*, else NULL */
	CUlinkState link;             /**< cuLinkAddData / cuLinkComplete, else NULL */
	CUresult result;              /**< what the driver returned */
};

/** Kinds of handles. */
enum gbpf_cu_handle_kind {
	GBPF_CU_HANDLE_FUNCTION = 1, /**< CUfunction */
	GBPF_CU_HANDLE_KERNEL = 2,   /**< CUkernel (context-independent) */
};

/** A CUfunction or CUkernel was created. */
struct gbpf_cu_handle_event {
	const char *api;               /**< "cuModuleGetFunction", "cuLibraryGetKernel", "cuKernelGetFunction" */
	enum gbpf_cu_handle_kind kind;
	const void *handle;            /**< the new handle */
	const char *name;              /**< mangled name (NULL if unknown) */
	CUmodule module;               /**< module it came from, if known */
	CUlibrary library;             /**< library it came from, if known */
	CUkernel kernel;               /**< cuKernelGetFunction: the kernel it came from */
};

/** An attribute or cache configuration was set on a function or kernel. */
struct gbpf_cu_attr_event {
	const char *api;       /**< "cuFuncSetAttribute", "cuKernelSetAttribute", ... */
	const void *handle;    /**< CUfunction or CUkernel */
	int cache_config;      /**< 1: a cache configuration (value holds it), 0: an attribute */
	int attrib;            /**< CUfunction_attribute (attributes only) */
	int value;
	CUdevice device;       /**< cuKernelSet*: the device, else -1 */
	CUresult result;       /**< what the driver returned (recorded only on success) */
};

/** Entry points that launch or describe a kernel launch. */
enum gbpf_cu_launch_api {
	GBPF_CU_LAUNCH_KERNEL = 1,            /**< cuLaunchKernel(_ptsz) */
	GBPF_CU_LAUNCH_KERNEL_EX,             /**< cuLaunchKernelEx(_ptsz) */
	GBPF_CU_LAUNCH_COOPERATIVE,           /**< cuLaunchCooperativeKernel(_ptsz) */
	GBPF_CU_GRAPH_ADD_KERNEL_NODE,        /**< cuGraphAddKernelNode(_v2) */
	GBPF_CU_GRAPH_KERNEL_NODE_SET_PARAMS, /**< cuGraphKernelNodeSetParams(_v2) */
	GBPF_CU_GRAPH_EXEC_KERNEL_NODE_SET_PARAMS, /**< cuGraphExecKernelNodeSetParams(_v2) */
	GBPF_CU_GRAPH_ADD_NODE,               /**< cuGraphAddNode(_v2) with a kernel node */
	GBPF_CU_GRAPH_NODE_SET_PARAMS,        /**< cuGraphNodeSetParams with a kernel node */
	GBPF_CU_GRAPH_EXEC_NODE_SET_PARAMS,   /**< cuGraphExecNodeSetParams with a kernel node */
};

/**
 * One launch (or graph kernel node) as the hooks see it. Everything but
 * @c replacement and @c hook_data is input: changing it has no effect.
 */
struct gbpf_cu_launch {
	enum gbpf_cu_launch_api api;
	const char *api_name;    /**< entry point name, e.g. "cuLaunchKernel_ptsz" */
	int ptds;                /**< 1: per-thread default stream variant */
	uint64_t launch_id;      /**< sequence number of launches in the process, from 1 */
	CUfunction func;         /**< as passed (may be a CUkernel cast to CUfunction) */
	const char *name;        /**< mangled name if the handle was seen, else NULL */
	CUmodule module;         /**< module of the function, if known */
	CUlibrary library;       /**< library of the kernel, if known */
	unsigned int grid[3];
	unsigned int block[3];
	unsigned int shared_mem_bytes;
	CUstream stream;         /**< NULL for graph nodes */
	void **kernel_params;
	void **extra;
	const CUlaunchConfig *config; /**< cuLaunchKernelEx only */
	CUgraph graph;           /**< graph calls: the graph, else NULL */
	CUgraphExec graph_exec;  /**< exec-node calls: the executable graph */
	CUgraphNode node;        /**< set-params calls: the node; add calls: the new node (post) */

	/** launch_pre may set this to launch another function instead. */
	CUfunction replacement;
	/** Free for the hooks, carried from launch_pre to launch_post. */
	void *hook_data;

	/* Filled for launch_post: */
	int replaced;            /**< 1 when the replacement was launched successfully */
	CUresult replacement_result; /**< driver result of the replacement (if tried) */
	CUresult result;         /**< what the application receives */

	/**
	 * launch_pre may set this with a replacement that takes one more
	 * trailing .u64 parameter than the original (the launch id): the
	 * wrapper passes @c value in it, appended to kernelParams (after the
	 * first @c n_params entries) or to an `extra` parameter buffer at byte
	 * @c offset, for launches and graph kernel nodes alike. If the app's
	 * parameters cannot be extended, the original is launched.
	 */
	struct {
		int on;
		unsigned n_params;  /**< the original's parameter count */
		unsigned offset;    /**< byte offset of the extra parameter */
		uint64_t value;
	} extra_param;
};

/** Host calls reported to call_pre / call_post. */
enum gbpf_cu_call_kind {
	GBPF_CU_CALL_MEMCPY = 1,
	GBPF_CU_CALL_MEMSET,
	GBPF_CU_CALL_MALLOC,
	GBPF_CU_CALL_SYNC,
	/** cuCtxDestroy (context), cuDevicePrimaryCtxReset (device): the context's memory goes */
	GBPF_CU_CALL_CTX_DESTROY,
	/** cuGraphLaunch(_ptsz): stream, graph_exec; what call_pre enqueues on the stream runs before the graph */
	GBPF_CU_CALL_GRAPH_LAUNCH,
	/**
	 * cuModuleUnload (module) and cuLibraryUnload (library): the handle
	 * names a module until the driver returns and may name a new one
	 * right after (the driver reuses addresses), so what was made from
	 * it is let go in call_pre, where the handle still means the old one.
	 */
	GBPF_CU_CALL_MODULE_UNLOAD,
};

/** Directions of copies (same values as GBPF_COPY_* in gbpf/probe_ctx.h); 0 = unknown. */
#define GBPF_CU_COPY_H2D 1
#define GBPF_CU_COPY_D2H 2
#define GBPF_CU_COPY_D2D 3

/** A host call, before (result = -1) and after the driver call. */
struct gbpf_cu_call_event {
	const char *api;      /**< entry point name, e.g. "cuMemcpyHtoDAsync_v2" */
	enum gbpf_cu_call_kind kind;
	uint64_t dst;         /**< destination; malloc: the new address (post) */
	uint64_t src;         /**< source of copies */
	uint64_t bytes;       /**< bytes copied, set or allocated */
	uint64_t value;       /**< memset value */
	CUstream stream;      /**< async calls and cuStreamSynchronize */
	CUevent event;        /**< cuEventSynchronize */
	uint32_t direction;   /**< GBPF_CU_COPY_*, 0 for unified cuMemcpy */
	uint32_t async;       /**< 1 for *Async calls */
	int ptds;             /**< per-thread default stream variant */
	CUresult result;      /**< -1 before the call, the driver result after */
	CUcontext context;    /**< CTX_DESTROY: the context (NULL for a primary context reset) */
	CUdevice device;      /**< CTX_DESTROY of a primary context: its device, else -1 */
	CUgraphExec graph_exec; /**< GRAPH_LAUNCH: the executable graph */
	CUmodule module;      /**< MODULE_UNLOAD: the module, or NULL */
	CUlibrary library;    /**< MODULE_UNLOAD: the library, or NULL */
	/** NULL before call_pre; what call_pre leaves here, call_post of the same call gets */
	void *hook_data;
};

/**
 * The hooks. Any member may be NULL. Callbacks may run concurrently on
 * several application threads.
 */
struct gbpf_cu_hooks {
	size_t sz;   /**< sizeof(struct gbpf_cu_hooks) */
	void *ctx;   /**< passed to every callback */
	/** cuGetProcAddress or dlsym handed out @p name; wrapped tells whether we wrap it. */
	void (*proc_query)(void *ctx, const char *name, int version, uint64_t flags, int wrapped);
	void (*image_loaded)(void *ctx, const struct gbpf_cu_image_event *ev);
	void (*handle_created)(void *ctx, const struct gbpf_cu_handle_event *ev);
	void (*attribute_set)(void *ctx, const struct gbpf_cu_attr_event *ev);
	/**
	 * Before a launch or graph kernel node call. Return 0 to proceed (with
	 * launch->replacement if set), a negative errno to have the original
	 * call made untouched.
	 */
	int (*launch_pre)(void *ctx, struct gbpf_cu_launch *launch);
	void (*launch_post)(void *ctx, const struct gbpf_cu_launch *launch);
	void (*call_pre)(void *ctx, struct gbpf_cu_call_event *ev);
	void (*call_post)(void *ctx, const struct gbpf_cu_call_event *ev);
};

/**
 * Install the hooks (NULL removes them). The struct is not copied: it must
 * stay valid until replaced and until calls in flight have returned.
 * @return 0, or -EINVAL when hooks->sz is smaller than the first member set
 */
int gbpf_cu_intercept_set_hooks(const struct gbpf_cu_hooks *hooks);

/** What is known about a function or kernel handle. */
struct gbpf_cu_handle_info {
	enum gbpf_cu_handle_kind kind;
	const char *name;   /**< mangled name; valid for the life of the process */
	CUmodule module;
	CUlibrary library;
	CUkernel kernel;    /**< for functions made by cuKernelGetFunction */
};

/**
 * Look up a handle seen by the wrappers.
 * @return 0 and fills *info, or -ENOENT when the handle was never seen
 */
int gbpf_cu_handle_lookup(const void *handle, struct gbpf_cu_handle_info *info);

/**
 * Apply to @p replacement every attribute and cache configuration the
 * application set on @p original (and, for a function made from a
 * CUkernel, on that kernel), in the order they were set, through the real
 * cuFuncSetAttribute / cuFuncSetCacheConfig.
 * @param log       receives the reason on failure (may be NULL)
 * @return number of settings applied (>= 0), or -EIO when the driver
 *         refused one (log says which), -ENOSYS when the driver entry
 *         points are unavailable
 */
int gbpf_cu_attr_replay(const void *original, CUfunction replacement, char *log,
			size_t log_size);

/**
 * The real driver's entry point for (name, version, flags), unwrapped: for
 * the agent's own driver calls. Uses the application's libcuda once it is
 * loaded (never loads it).
 * @return the function, or NULL (errno ENOENT) when unavailable
 */
void *gbpf_cu_real_proc(const char *name, int version, uint64_t flags);

/**
 * gbpf_cu_real_proc once: the entry point kept in @p slot after the first
 * successful lookup. For calls on every launch: a lookup asks the driver's
 * cuGetProcAddress, a name search each time.
 */
void *gbpf_cu_real_proc_once(_Atomic(void *) *slot, const char *name, int version, uint64_t flags);

/**
 * Put the calling thread (one of gbpf's own: forwarder, timeline) in
 * relaxed stream-capture mode, so that its copies and allocations are
 * allowed while an application thread captures a graph in global mode (in
 * global mode they would invalidate that capture). Per thread; once.
 * @return 0, or -ENOENT when the driver lacks the call (CUDA < 10.1)
 */
int gbpf_cu_thread_relaxed_capture(void);

/** Number of launches seen so far (the last launch_id handed out). */
uint64_t gbpf_cu_launch_count(void);

#endif /* GBPF_CUDA_INTERCEPT_H */
