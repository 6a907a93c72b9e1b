/* SPDX-License-Identifier: MIT */
/*
 * gbpf/plugin.h - the one versioned ABI between libgbpf and backend plugins.
 *
 * A backend (cpu, cuda, hip, levelzero, opencl, or a vendor's own) is a
 * shared library that exports exactly one symbol, GBPF_PLUGIN_ENTRY_SYMBOL,
 * of type gbpf_plugin_get_backend_table_fn. The core calls it with the ABI
 * version it was built for; the plugin fills a dispatch table and a
 * capability struct.
 *
 * Versioning (modelled on Level Zero's zeGet*ProcAddrTable):
 *  - the major version must match exactly, otherwise the plugin returns
 *    -EPROTONOSUPPORT and fills nothing;
 *  - a plugin built for a newer minor fills only the fields that exist in
 *    the requested minor and sets @c sz of each struct to the size it
 *    filled; a plugin built for an older minor fills what it knows and
 *    leaves the rest zero;
 *  - a NULL entry means "not supported"; the core checks before calling.
 * Fields are only ever appended; none is reordered or removed.
 *
 * All functions return 0 or a negative errno; functions taking a log
 * buffer write a human-readable reason there on failure (NUL-terminated,
 * truncated to the given size).
 */
#ifndef GBPF_PLUGIN_H
#define GBPF_PLUGIN_H

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <gbpf/prog.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Pack a version: major in the high 16 bits, minor in the low 16. */
#define GBPF_MAKE_VERSION(major, minor) ((uint32_t)(((major) << 16) | ((minor)&0xffff)))
#define GBPF_VERSION_MAJOR(v) ((uint32_t)(v) >> 16)
#define GBPF_VERSION_MINOR(v) ((uint32_t)(v)&0xffff)

/** The plugin ABI this header describes. */
#define GBPF_PLUGIN_ABI_VERSION_1_0 GBPF_MAKE_VERSION(1, 0)
/**
 * 1.1: appended gbpf_agent_services.timeline, struct gbpf_timeline_event and
 * GBPF_AGENT_F_GPU_TIMELINE. Minor versions only append (sz-checked), so a
 * plugin built for 1.0 still loads.
 */
#define GBPF_PLUGIN_ABI_VERSION_1_1 GBPF_MAKE_VERSION(1, 1)
/** 1.2: appended gbpf_agent_services.print (probe output from device code). */
#define GBPF_PLUGIN_ABI_VERSION_1_2 GBPF_MAKE_VERSION(1, 2)
/**
 * 1.3: struct gbpf_inject_kernel gained n_block (gpu/block sites), so the
 * element size of gbpf_inject_result.kernels changed: the result says it
 * in kernel_size (appended). Read elements with gbpf_inject_result_kernel,
 * fill results with gbpf_inject_result_set_kernels.
 */
#define GBPF_PLUGIN_ABI_VERSION_1_3 GBPF_MAKE_VERSION(1, 3)
/**
 * 1.4: appended gbpf_backend_ops.agent_yield_tool (give the driver's one
 * tool subscription to a profiler, e.g. CUPTI). Absent (a 1.3 plugin, or
 * sz too small): the agent does not ask.
 */
#define GBPF_PLUGIN_ABI_VERSION_1_4 GBPF_MAKE_VERSION(1, 4)
/**
 * 1.5: appended gbpf_inject_opts.prog_ctx_reads (the verifier's context
 * reads for offline injection). Absent (sz too small): the plugin finds
 * the context fields from the programs' loads alone.
 */
#define GBPF_PLUGIN_ABI_VERSION_1_5 GBPF_MAKE_VERSION(1, 5)
#define GBPF_PLUGIN_ABI_VERSION GBPF_PLUGIN_ABI_VERSION_1_5

/** Name of the single symbol a plugin exports. */
#define GBPF_PLUGIN_ENTRY_SYMBOL "gbpf_plugin_get_backend_table"

struct gbpf_backend;      /* a plugin's open backend (opaque to the core) */
struct gbpf_backend_prog; /* a program loaded on a backend (opaque) */

/** Log levels, as libbpf_print_level. */
enum gbpf_log_level {
	GBPF_LOG_WARN = 0,
	GBPF_LOG_INFO = 1,
	GBPF_LOG_DEBUG = 2,
};

/**
 * Services the core offers a plugin, passed to open(). A plugin must not
 * call into libgbpf by any other route, so that it can be loaded by a
 * different build of the core.
 */
struct gbpf_host_services {
	size_t sz;
	/** Print a message through the core's logger (may be NULL). */
	void (*vlog)(void *log_ctx, enum gbpf_log_level level, const char *fmt, va_list ap);
	void *log_ctx;
};

/** One device a backend can run programs on. */
struct gbpf_device_info {
	size_t sz;
	char name[128];         /**< "NVIDIA H200", "host CPU (interpreter)" */
	char arch[32];          /**< "sm_90", "gfx942", "x86_64" */
	uint64_t memory_bytes;  /**< device memory, 0 if shared with host */
	uint32_t compute_units; /**< SMs, CUs, EUs or CPU cores */
	uint32_t warp_size;     /**< SIMT width, 1 for CPUs */
};

/** Capability bits of struct gbpf_backend_caps.flags. */
#define GBPF_CAP_PROG_RUN (1ULL << 0)  /**< prog_run executes programs */
#define GBPF_CAP_CODEGEN (1ULL << 1)   /**< codegen emits device code as text */
#define GBPF_CAP_INJECT (1ULL << 2)    /**< can inject probes into app kernels */
#define GBPF_CAP_INTERCEPT (1ULL << 3) /**< intercepts a GPU runtime in `gbpf run` */
/**
 * Every memory access of a running program is checked by the backend
 * itself (a bounds-checked interpreter), so the core may run programs the
 * verifier has not accepted there (conformance, debugging).
 */
#define GBPF_CAP_SANDBOXED (1ULL << 4)

/** What a plugin can do, filled once by the entry function. */
struct gbpf_backend_caps {
	size_t sz;
	uint64_t flags;              /**< GBPF_CAP_* */
	const char *codegen_targets; /**< comma-separated: "ptx", "spirv", "amdgcn"; NULL if none */
};

/** Options of open(). */
struct gbpf_backend_open_opts {
	size_t sz;
	const struct gbpf_host_services *services;
	int device_index; /**< device to use, -1 for the default */
	unsigned int flags; /**< GBPF_BACKEND_OPEN_* (appended in 1.3; absent = 0) */
};

/**
 * open() is called by the agent inside an application (gbpf run, an idle
 * agent): initialise no runtime and create no device context there. The
 * application does that itself, if it ever uses the GPU, and agent_attach's
 * interposers follow it. Without this, every process of a job (shells,
 * launchers, a tool's helper processes) would get a GPU context it never
 * asked for, and a tool that starts the application in a helper process
 * (compute-sanitizer) would see CUDA initialised in the wrong process.
 */
#define GBPF_BACKEND_OPEN_AGENT (1u << 0)

/**
 * A map's memory as handed to a backend. @c mem holds the map in the
 * layout of maps/map_layout.h, owned by the core (possibly shared memory
 * visible to other processes); a backend may mirror it on a device but
 * must write its final state back before prog_run returns.
 */
struct gbpf_map_instance {
	const struct gbpf_map_desc *desc;
	void *mem;
	size_t mem_size;
};

/** Options of prog_run(). */
struct gbpf_run_opts {
	size_t sz;
	uint64_t threads;  /**< program instances to run (GPU threads); 0 means 1 */
	void *data;        /**< memory passed in r1 (length in r2), may be NULL */
	size_t data_size;
	uint32_t flags;    /**< GBPF_RUN_* */
	uint32_t block_size; /**< threads per block on GPUs; 0 = backend's choice */
	uint64_t max_insns;  /**< per-thread instruction budget (interpreters), 0 = default */
};
/** Every thread works on one shared copy of data (default: a private copy each). */
#define GBPF_RUN_SHARED_DATA (1U << 0)

/** Results of prog_run(). */
struct gbpf_run_result {
	size_t sz;
	uint64_t *r0;         /**< caller-provided array of `threads` r0 values, or NULL */
	uint64_t r0_first;    /**< r0 of thread 0 */
	uint64_t r0_distinct; /**< 1 when every thread returned r0_first */
	uint64_t elapsed_ns;  /**< time of the run itself (kernel time on GPUs) */
	void *data_out;       /**< if non-NULL: thread 0's data after the run (data_size bytes) */
};

/** Options of codegen(). */
struct gbpf_codegen_opts {
	size_t sz;
	const char *target; /**< "ptx", "spirv", "amdgcn" */
	const char *arch;   /**< "sm_90", "gfx942", ...; NULL = default */
	uint32_t flags;     /**< GBPF_CODEGEN_* */
	/**
	 * Optional: generate ONE module holding all these programs of one
	 * object (they share its map table), as injection does; the prog
	 * argument of codegen() is then ignored. prog_cnt 0: prog alone.
	 */
	const struct gbpf_prog_desc *const *progs;
	size_t prog_cnt;
};
/** Emit a stand-alone kernel that runs the program (prog run) rather than a probe function. */
#define GBPF_CODEGEN_KERNEL (1U << 0)

/** Kinds of event an agent reports to the user (struct gbpf_agent_services.report). */
enum gbpf_agent_event {
	GBPF_AGENT_EVENT_INFO = 0,           /**< e.g. "kernel K instrumented (entry, exit)" */
	GBPF_AGENT_EVENT_NOT_INSTRUMENTED = 1, /**< a targeted kernel runs uninstrumented; msg says why */
	GBPF_AGENT_EVENT_ERROR = 2,          /**< something failed; the app runs on uninstrumented */
};

struct gbpf_timeline_event; /* defined at the end of this header */

/**
 * What the agent core (the library preloaded into the application) offers
 * a backend that instruments the application. Every callback may be
 * called from any application thread.
 */
struct gbpf_agent_services {
	size_t sz;
	void *ctx; /**< first argument of every callback */
	/** Tell the user (through the controller) about a kernel or a failure. */
	void (*report)(void *ctx, enum gbpf_agent_event event, const char *kernel, const char *msg);
	/**
	 * Run host program @p prog_index (an index into the attach request's
	 * programs, e.g. a host/launch probe) on the host with @p probe_ctx as
	 * r1. Returns 0 or -errno; the program's r0 goes to *r0 when non-NULL.
	 */
	int (*run_host_prog)(void *ctx, size_t prog_index, void *probe_ctx, size_t ctx_size,
			     uint64_t *r0);
	/** Monotonic sequence number for launches, shared by host and device probes. */
	uint64_t (*next_launch_id)(void *ctx);
	/**
	 * 1 when program @p prog_index (a GPU program or a host/launch probe)
	 * targets the kernel of this mangled name: its attach target matched as
	 * docs/ATTACH.md says (mangled, demangled or bare name, exact or glob;
	 * NULL target = every kernel). 0 for programs of other kinds.
	 */
	int (*kernel_selected)(void *ctx, size_t prog_index, const char *mangled_name);
	/**
	 * Record one timeline event (struct gbpf_timeline_event) for `gbpf run
	 * --trace` and the exit summary. Copies @p ev into a bounded queue and
	 * returns at once: it never blocks on I/O and may be called from any
	 * thread, including a plugin's own completion threads. The agent sends
	 * queued events to the controller in batches; events that do not fit
	 * are dropped, counted and reported to the user.
	 * @return 0; -EAGAIN when the event was dropped (queue full);
	 *         -ESHUTDOWN when nobody listens (controller gone, fork child);
	 *         -EINVAL for a malformed event (unknown kind, sz too small).
	 * Added after ABI 1.0 was first filled: check sz before calling.
	 */
	int (*timeline)(void *ctx, const struct gbpf_timeline_event *ev);
	/**
	 * Pass one line of probe output (bpf_trace_printk or puts run by device
	 * code, already formatted; a trailing newline is optional) to the
	 * controller, which prints it as the interpreter's trace_printk lines
	 * are printed. Never blocks; callable from any thread.
	 * @return 0; -EAGAIN when the agent's queue is full and nothing was
	 *         queued (keep the line and retry later: the agent counts
	 *         nothing, so a plugin that gives up counts its own drop);
	 *         -ESHUTDOWN when nobody listens; -EINVAL for NULL text.
	 * Added in ABI 1.2: check sz before calling.
	 */
	int (*print)(void *ctx, const char *text, size_t len);
};

/**
 * A request to instrument the application the agent runs in. Programs are
 * verified; maps live in memory shared with the controller (layout of
 * maps/map_layout.h) and stay mapped until agent_detach returns.
 */
struct gbpf_agent_attach_opts {
	size_t sz;
	const struct gbpf_prog_desc *progs; /**< device and host programs of every object */
	size_t prog_cnt;
	struct gbpf_map_instance *maps;     /**< maps of all programs: prog->maps index into this */
	size_t map_cnt;
	const struct gbpf_agent_services *services;
	const char *cache_dir;              /**< on-disk JIT cache, NULL = none */
	uint32_t flags;                     /**< GBPF_AGENT_F_* */
	/**
	 * Per program (prog_cnt entries), or NULL: the context bytes it may
	 * read, as the agent's verifier found them (gbpf_verify_result's
	 * ctx_read_mask). A context field no program reads need not be filled.
	 */
	const uint64_t *prog_ctx_reads;
};
/** Let memory probes write application memory (the user asked for it explicitly). */
#define GBPF_AGENT_F_ALLOW_APP_WRITES (1U << 0)
/**
 * The controller shows GPU work on a timeline (summary, --trace, OTLP
 * spans): the plugin times launches and copies on the GPU (it costs a few
 * microseconds per operation, so it is only done when asked).
 */
#define GBPF_AGENT_F_GPU_TIMELINE (1U << 1)
/** cuda: PTX injection only, never the Compute Sanitizer engine (`gbpf run --engine ptx`). */
#define GBPF_AGENT_F_ENGINE_PTX (1U << 2)
/** cuda: the Compute Sanitizer patching engine only (`gbpf run --engine sanitizer`). */
#define GBPF_AGENT_F_ENGINE_SANITIZER (1U << 3)

/** Options of inject(): instrument an application file offline. */
struct gbpf_inject_opts {
	size_t sz;
	/** Verified programs of one object; those with device attach kinds are injected. */
	const struct gbpf_prog_desc *const *progs;
	size_t prog_cnt;
	const void *image;      /**< the application file: PTX, fatbin, cubin, executable, ... */
	size_t image_size;
	const char *image_name; /**< for messages */
	/** 1 when progs[prog_index] targets this kernel (the core's name matcher). */
	int (*kernel_selected)(void *ctx, size_t prog_index, const char *mangled_name);
	void *select_ctx;
	/**
	 * Per program (prog_cnt entries), or NULL: the context bytes it may
	 * read (gbpf_verify_result's ctx_read_mask), as the agent is given them
	 * (gbpf_agent_attach_opts.prog_ctx_reads), so that the code shown is
	 * the code the agent would run. ABI 1.5: a plugin reads it only when
	 * sz covers it.
	 */
	const uint64_t *prog_ctx_reads;
};

/** One kernel found by inject(). */
struct gbpf_inject_kernel {
	const char *name;   /**< mangled name */
	const char *module; /**< where in the file it was found */
	int instrumented;
	const char *reason; /**< why it was not instrumented, or a note; may be NULL */
	uint32_t n_entry, n_exit, n_mem, n_barrier; /**< probe calls inserted */
	uint32_t n_block;   /**< gpu/block sites (the kernel's basic blocks); ABI 1.3 */
};

/** One instrumented module produced by inject(). */
struct gbpf_inject_module {
	const char *module; /**< where it came from */
	const char *text;   /**< device code as text (PTX, SPIR-V disassembly ...) */
	size_t text_len;
};

/** What inject() produced; release with inject_free(). */
struct gbpf_inject_result {
	size_t sz;
	const struct gbpf_inject_kernel *kernels;
	size_t kernel_cnt;
	const struct gbpf_inject_module *modules;
	size_t module_cnt;
	void *priv; /**< the plugin's */
	/**
	 * Bytes of each kernels[] element (ABI 1.3; set only when the caller's
	 * sz covers this field). 0 or absent: a plugin before 1.3, whose
	 * elements end before n_block.
	 */
	size_t kernel_size;
};

/** Plugins: publish @p kernels, telling a caller that knows kernel_size their size. */
static inline void gbpf_inject_result_set_kernels(struct gbpf_inject_result *r,
						  const struct gbpf_inject_kernel *kernels, size_t cnt)
{
	r->kernels = kernels;
	r->kernel_cnt = cnt;
	if (r->sz >= offsetof(struct gbpf_inject_result, kernel_size) + sizeof(r->kernel_size))
		r->kernel_size = sizeof(*kernels);
}

/**
 * Callers: element @p i of @p r->kernels copied into @p out, whatever ABI
 * the plugin was built with (fields it lacks read as zero).
 */
static inline void gbpf_inject_result_kernel(const struct gbpf_inject_result *r, size_t i,
					     struct gbpf_inject_kernel *out)
{
	size_t size = offsetof(struct gbpf_inject_kernel, n_block);

	if (r->sz >= offsetof(struct gbpf_inject_result, kernel_size) + sizeof(r->kernel_size) &&
	    r->kernel_size)
		size = r->kernel_size;
	memset(out, 0, sizeof(*out));
	memcpy(out, (const char *)r->kernels + i * size, size < sizeof(*out) ? size : sizeof(*out));
}

/**
 * The dispatch table, version 1.0. Entries may be NULL (unsupported).
 */
struct gbpf_backend_ops {
	size_t sz;                /**< bytes the plugin filled */
	const char *name;         /**< "cpu", "cuda", ... (matches GBPF_BACKEND) */
	const char *description;  /**< one line for `gbpf backends` */
	uint32_t plugin_version;  /**< GBPF_MAKE_VERSION of the plugin itself */
	/** Detection rank when GBPF_BACKEND is unset: higher wins among usable backends. */
	int32_t priority;

	/**
	 * List usable devices without opening the backend. Writes up to *count
	 * entries into devs (which may be NULL to only count) and sets *count
	 * to the number available. Returns -ENODEV with a reason in why when the
	 * runtime or device is missing.
	 */
	int (*query_devices)(struct gbpf_device_info *devs, uint32_t *count, char *why, size_t why_size);

	/** Open the backend on a device. */
	int (*open)(const struct gbpf_backend_open_opts *opts, struct gbpf_backend **out);
	/** Release everything open() and prog_load() made. */
	void (*close)(struct gbpf_backend *backend);

	/**
	 * Prepare a verified program for execution (JIT, module load). @p maps
	 * has prog->map_cnt entries, in the order of prog->maps.
	 */
	int (*prog_load)(struct gbpf_backend *backend, const struct gbpf_prog_desc *prog,
			 struct gbpf_map_instance *maps, size_t map_cnt,
			 struct gbpf_backend_prog **out, char *log, size_t log_size);
	/** Run a loaded program directly (like BPF_PROG_TEST_RUN). */
	int (*prog_run)(struct gbpf_backend_prog *prog, const struct gbpf_run_opts *opts,
			struct gbpf_run_result *result, char *log, size_t log_size);
	/** Free a loaded program. */
	void (*prog_unload)(struct gbpf_backend_prog *prog);

	/**
	 * Generate device code for a program as text (PTX, SPIR-V
	 * disassembly, AMDGCN assembly). *text is malloc'ed; caller frees.
	 */
	int (*codegen)(const struct gbpf_prog_desc *prog, const struct gbpf_codegen_opts *opts,
		       char **text, size_t *text_len, char *log, size_t log_size);

	/**
	 * In the agent, inside the application: start instrumenting it. The
	 * plugin's own interposers (e.g. a dlsym / cuGetProcAddress override)
	 * work only when the plugin file is in LD_PRELOAD, which `gbpf run`
	 * arranges for backends with GBPF_CAP_INTERCEPT. Must not block the
	 * application; on failure the application runs on uninstrumented.
	 */
	int (*agent_attach)(struct gbpf_backend *backend, const struct gbpf_agent_attach_opts *opts,
			    char *log, size_t log_size);
	/** Stop instrumenting: kernels launch uninstrumented from the next launch on. */
	void (*agent_detach)(struct gbpf_backend *backend);

	/**
	 * Offline: the instrumented device code of every kernel of an
	 * application file that the programs target (`gbpf prog inject`),
	 * and every kernel found, with reasons for those left alone.
	 */
	int (*inject)(const struct gbpf_inject_opts *opts, struct gbpf_inject_result *result,
		      char *log, size_t log_size);
	/** Free what inject() allocated in @p result. */
	void (*inject_free)(struct gbpf_inject_result *result);

	/**
	 * In the agent (ABI 1.4; check sz before calling): a profiler in the
	 * application (a CUPTI client such as the PyTorch profiler) is about to
	 * take the driver's tool subscription, of which a process has one. A
	 * plugin that holds it (the cuda plugin's Compute Sanitizer engine)
	 * gives it up unless the user chose the engine that needs it: it
	 * restores what it patched, unsubscribes, and from then on instruments
	 * only what it can without the subscription. Once given up it is never
	 * taken back in this process. Callable from any application thread,
	 * concurrently with launches.
	 * @param backend  the open backend (the subscription is the process's; may be NULL)
	 * @param flags    GBPF_AGENT_F_ENGINE_* the user chose (the attach's, else the
	 *                 start's); 0 when none
	 * @param call     the profiler's call about to be made (e.g. "cuptiSubscribe"), for reports
	 * @param log      out: what was given up (on 0), or why it is kept (on -EBUSY)
	 * @return 0 given up now; -ENOENT nothing held (never was, or given up
	 *         before); -EBUSY kept (the chosen engine needs it); another
	 *         negative errno on failure
	 */
	int (*agent_yield_tool)(struct gbpf_backend *backend, uint32_t flags, const char *call, char *log,
				size_t log_size);
};

/**
 * The plugin's entry point.
 * @param abi_version  GBPF_PLUGIN_ABI_VERSION of the caller
 * @param ops          table to fill; the caller zeroes it and sets ops->sz to its size
 * @param caps         capabilities to fill; caller zeroes it and sets caps->sz
 * @return 0, or -EPROTONOSUPPORT when the major version differs
 */
typedef int (*gbpf_plugin_get_backend_table_fn)(uint32_t abi_version, struct gbpf_backend_ops *ops,
						 struct gbpf_backend_caps *caps);

/* ---- timeline of asynchronous GPU work (struct gbpf_agent_services.timeline) ---- */

/**
 * What a timeline event describes. An event carries the host API call
 * (GBPF_TL_F_HOST: host_begin/host_end), the GPU work (GBPF_TL_F_GPU:
 * gpu_begin/gpu_end), or both. A plugin that learns the GPU times later
 * (events, completion callbacks) sends the API call at once and the GPU
 * work as a second event with the same correlation_id.
 */
enum gbpf_timeline_kind {
	GBPF_TL_LAUNCH = 1,       /**< kernel launch API call (host) */
	GBPF_TL_KERNEL = 2,       /**< kernel execution (GPU); name = demangled kernel name */
	GBPF_TL_MEMCPY_H2D = 3,   /**< host to device copy: the call and/or the copy itself */
	GBPF_TL_MEMCPY_D2H = 4,   /**< device to host copy */
	GBPF_TL_MEMCPY_D2D = 5,   /**< device to device copy */
	GBPF_TL_MEMSET = 6,       /**< memset: the call and/or the fill */
	GBPF_TL_SYNC = 7,         /**< a host call that waits for the GPU (stream/device/event sync) */
	GBPF_TL_ALLOC = 8,        /**< device memory allocation call; bytes = size */
	GBPF_TL_FREE = 9,         /**< device memory release call */
	GBPF_TL_MODULE_LOAD = 10, /**< module / library load; bytes = image size */
};
/** Highest known gbpf_timeline_kind (decoders reject others). */
#define GBPF_TL_KIND_MAX GBPF_TL_MODULE_LOAD

/** host_begin_ns / host_end_ns are valid. */
#define GBPF_TL_F_HOST (1U << 0)
/** gpu_begin_ns / gpu_end_ns are valid. */
#define GBPF_TL_F_GPU (1U << 1)
/** The API call returns before the work is done (cudaMemcpyAsync, every launch). */
#define GBPF_TL_F_ASYNC (1U << 2)
/** SYNC only: waits for the whole device (cudaDeviceSynchronize), not one stream. */
#define GBPF_TL_F_DEVICE_WIDE (1U << 3)
/** Every flag a decoder accepts. */
#define GBPF_TL_F_ALL (GBPF_TL_F_HOST | GBPF_TL_F_GPU | GBPF_TL_F_ASYNC | GBPF_TL_F_DEVICE_WIDE)

/** Bytes of gbpf_timeline_event.name, NUL included (longer names are truncated). */
#define GBPF_TL_NAME_LEN 256

/**
 * One event of the timeline. Every time is CLOCK_MONOTONIC in
 * nanoseconds, GPU times included: the plugin converts its GPU clock
 * (globaltimer, event timestamps) to the host clock before calling
 * services->timeline, so that host and GPU intervals line up. Fill
 * @c sz with sizeof(struct gbpf_timeline_event) (fields are only appended).
 */
struct gbpf_timeline_event {
	uint32_t sz;             /**< sizeof the struct the plugin was built with */
	uint32_t kind;           /**< enum gbpf_timeline_kind */
	uint32_t flags;          /**< GBPF_TL_F_* */
	int32_t device;          /**< device index; -1 for host-only calls not tied to a device */
	uint64_t stream;         /**< stream / queue id (runtime handle); 0 = the default stream */
	/**
	 * Links the API call to the GPU work it caused (launch -> kernel,
	 * memcpy call -> copy). Unique per process; 0 = unlinked.
	 */
	uint64_t correlation_id;
	/** OS thread id (gettid) of the API call; 0 = the calling thread (the agent fills it in). */
	uint64_t host_tid;
	uint64_t host_begin_ns;  /**< API call entered (GBPF_TL_F_HOST) */
	uint64_t host_end_ns;    /**< API call returned */
	uint64_t gpu_begin_ns;   /**< GPU work started, host clock (GBPF_TL_F_GPU) */
	uint64_t gpu_end_ns;     /**< GPU work finished, host clock */
	uint64_t bytes;          /**< copy / memset / allocation size, 0 otherwise */
	char name[GBPF_TL_NAME_LEN]; /**< kernel (demangled) or API name ("cudaMemcpyAsync"); NUL-terminated */
};

#if defined(__GNUC__)
#define GBPF_PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#define GBPF_PLUGIN_EXPORT
#endif

/**
 * gbpf_gpu_ctx.kernel_id and gbpf_host_launch_ctx.kernel_id of a kernel:
 * FNV-1a 64 of its mangled name (NULL hashes as ""). Every backend and the
 * controller must compute it this way so that ids agree.
 */
static inline uint64_t gbpf_kernel_id(const char *mangled_name)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (; mangled_name && *mangled_name; mangled_name++)
		h = (h ^ (unsigned char)*mangled_name) * 0x100000001b3ull;
	return h;
}

/**
 * The body of every plugin's gbpf_plugin_get_backend_table(): copy as much
 * of @p ops and @p caps as the caller's (possibly older) structs hold, set
 * their sz to it; NULL outputs are skipped.
 * @return 0, or -EPROTONOSUPPORT when @p abi_version's major differs
 */
static inline int gbpf_plugin_tables_out(uint32_t abi_version, const struct gbpf_backend_ops *ops,
					 const struct gbpf_backend_caps *caps,
					 struct gbpf_backend_ops *ops_out,
					 struct gbpf_backend_caps *caps_out)
{
	size_t n;

	if (GBPF_VERSION_MAJOR(abi_version) != GBPF_VERSION_MAJOR(GBPF_PLUGIN_ABI_VERSION))
		return -EPROTONOSUPPORT;
	if (ops_out) {
		n = ops_out->sz < sizeof(*ops) ? ops_out->sz : sizeof(*ops);
		memcpy(ops_out, ops, n);
		ops_out->sz = n;
	}
	if (caps_out) {
		n = caps_out->sz < sizeof(*caps) ? caps_out->sz : sizeof(*caps);
		memcpy(caps_out, caps, n);
		caps_out->sz = n;
	}
	return 0;
}

/** services->report with a printf-style message (at most 1023 bytes); no-op without report. */
static inline __attribute__((format(printf, 4, 0))) void
gbpf_agent_vreportf(const struct gbpf_agent_services *svc, enum gbpf_agent_event event,
		    const char *kernel, const char *fmt, va_list ap)
{
	char msg[1024];

	if (!svc || !svc->report)
		return;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	svc->report(svc->ctx, event, kernel, msg);
}

/** As gbpf_agent_vreportf, with the arguments inline. */
static inline __attribute__((format(printf, 4, 5))) void
gbpf_agent_reportf(const struct gbpf_agent_services *svc, enum gbpf_agent_event event,
		   const char *kernel, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	gbpf_agent_vreportf(svc, event, kernel, fmt, ap);
	va_end(ap);
}

#ifdef __cplusplus
}
#endif

#endif /* GBPF_PLUGIN_H */
