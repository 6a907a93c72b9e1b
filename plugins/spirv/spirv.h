/* SPDX-License-Identifier: MIT */
/*
 * plugins/spirv/spirv.h - eBPF to SPIR-V, SPIR-V injection and a small
 * OpenCL runner, shared by the opencl and levelzero backends (internal:
 * these symbols are hidden inside each plugin).
 *
 * SPIR-V flavour: OpenCL environment, capabilities Addresses, Kernel, Int64
 * (Int8, Int16 and Linkage when needed), Physical64 addressing, OpenCL
 * memory model. Emitted modules are SPIR-V 1.0 unless asked otherwise.
 *
 * Two forms, as the PTX backend (plugins/cuda/ptx_codegen.h):
 *
 *  - PROBE FUNCTIONS (default): one function per program i,
 *      ulong __gbpf_probe_<i>(ulong ctx)
 *    (OpFunction of type ulong(ulong); ctx is the generic address of a
 *    struct gbpf_gpu_ctx, the result is the program's r0). Exported with
 *    LinkageAttributes "__gbpf_probe_<i>" Export so that the module can be
 *    linked or merged by gbpf_spirv_inject().
 *
 *  - RUN KERNEL (GBPF_SPIRV_KERNEL): a module with the Kernel entry point
 *      __kernel void __gbpf_run(ulong data, ulong size, ulong stride,
 *                               ulong r0_out, ulong n, ulong stats)
 *    with the contract of the PTX run kernel: program 0 runs once per
 *    work-item t < n (t = global linear id) with r1 = data + t * stride
 *    (0 when data is 0), r2 = size; r0 goes to ((ulong *)r0_out)[t] when
 *    r0_out != 0 and is folded into stats (struct gbpf_spirv_run_stats)
 *    when stats != 0. Every argument is a 64-bit integer holding a device
 *    address (SVM / USM / host pointer on PoCL's CPU device), so the
 *    kernel needs no cl_mem objects.
 *
 * HOW MAP ADDRESSES REACH THE DEVICE: the context table (struct
 * gbpf_spirv_ctx_table) lives in memory the device can address with the
 * same pointer as the host (OpenCL fine-grained SVM, Level Zero shared USM,
 * or any host memory on PoCL's CPU device). Its address is BAKED into the
 * module as a 64-bit constant (gbpf_spirv_opts.ctx_table) when the module
 * is generated or injected: no kernel argument is added to application
 * kernels, so the interceptors do not touch clSetKernelArg indices. The
 * run kernel reads it the same way. A ctx_table of 0 generates code that
 * is valid but must not call map helpers or read the table when run (for
 * `gbpf prog codegen` listings and validation-only tests).
 *
 * The host fills the table before launching: maps[i] = device address of
 * map i's block (maps/map_layout.h, the same bytes the host library reads:
 * device code implements docs/MAPS.md on them, no host round trip),
 * pid_tgid, launch_id (written before each launch of an instrumented
 * kernel), time_base_ns. Every field is 64-bit; the layout is fixed.
 *
 * Device notes (what differs from PTX):
 *  - eBPF pointers are Generic (GenericPointer capability): such modules
 *    validate under the OpenCL 2.0 environment. 64-bit atomics need
 *    Int64Atomics (cl_khr_int64_base_atomics), which SPIRV-Tools' OpenCL
 *    environments do not model: gbpf_spirv_validate() then checks the
 *    universal environment and the OpenCL one without that capability.
 *  - atomics address CrossWorkgroup memory (PoCL 3.1 has no generic
 *    atomics): maps, the context table and app buffers; eBPF atomics on the
 *    stack work only on devices with a flat address space (CPUs).
 *  - SM id (509, 8) = linear work-group id % ctx->nr_slots; warp id / lane
 *    id (510, 511) = linear local id / 32, % 32.
 *  - GPU probes (gpu/entry, exit, mem) see gbpf_gpu_ctx.params = 0 (SPIR-V kernels have no raw
 *    parameter block); kernel_id is FNV-1a 64 of the entry point name.
 *  - trace_printk (6) and puts (501) write a record into the print queue
 *    of the context table (struct gbpf_spirv_printq_hdr; -ENOTSUP when the
 *    table has none); the host formats it with the interpreter's own
 *    helper (gbpf_spirv_printq_format). A full queue counts a drop and
 *    the call returns -ENOSPC, as on PTX; never waits for the host.
 *  - LRU hash maps evict as the host does (docs/MAPS.md, spv_lru.c).
 */
#ifndef GBPF_PLUGINS_SPIRV_H
#define GBPF_PLUGINS_SPIRV_H

#include <stddef.h>
#include <stdint.h>

#include <gbpf/prog.h>

/** Emit the run kernel instead of probe functions. */
#define GBPF_SPIRV_KERNEL (1U << 0)
/**
 * ktime_get_ns / globaltimer call an imported function
 *   ulong __gbpf_timer_ns(void)   (LinkageAttributes Import)
 * that the backend links in (Level Zero drivers with a device clock).
 * Without this flag the timer is a device counter (see
 * gbpf_spirv_ctx_table.time_base_ns): OpenCL SPIR-V has no standard clock.
 */
#define GBPF_SPIRV_TIMER_IMPORT (1U << 1)

/**
 * With GBPF_SPIRV_KERNEL: one run kernel per program, "__gbpf_run_<i>" for
 * progs[i] (all sharing the map table), besides "__gbpf_run" for progs[0].
 * Lets tests and batch runs build many programs with one device compile.
 */
#define GBPF_SPIRV_KERNEL_EACH (1U << 2)

/**
 * gbpf_spirv_inject(): gbpf_gpu_ctx.device is loaded at each work-item's
 * entry from gbpf_spirv_ctx_table.device, which the backend writes before
 * each launch, instead of the module constant gbpf_spirv_inject_opts.device.
 * For backends whose one instrumented module serves several devices (an
 * OpenCL program built for several devices of its context); needs
 * ctx_table.
 */
#define GBPF_SPIRV_DEVICE_TABLE (1U << 3)

/** Name of the run kernel's entry point. */
#define GBPF_SPIRV_RUN_ENTRY "__gbpf_run"
/** Name of the imported timer function (GBPF_SPIRV_TIMER_IMPORT). */
#define GBPF_SPIRV_TIMER_FN "__gbpf_timer_ns"
/** Prefix of probe function names: "__gbpf_probe_<i>". */
#define GBPF_SPIRV_PROBE_PREFIX "__gbpf_probe_"

/** SPIR-V version word for 1.0 .. 1.6. */
#define GBPF_SPIRV_VERSION(major, minor) ((uint32_t)(((major) << 16) | ((minor) << 8)))

/** Most maps one module may reference (entries of the context table). */
#define GBPF_SPIRV_MAX_MAPS 64u

/**
 * The context table (device-visible memory; address baked into modules).
 * Offsets are fixed: device code reads them as 64-bit words.
 */
struct gbpf_spirv_ctx_table {
	uint64_t pid_tgid;     /**< 0: value of get_current_pid_tgid */
	uint64_t launch_id;    /**< 8: launch sequence number, written before each launch */
	uint64_t printq;       /**< 16: device address of the print queue, 0 = off */
	uint64_t time_base_ns; /**< 24: CLOCK_MONOTONIC at launch (counter timer adds ticks) */
	uint64_t ticks;        /**< 32: atomic: counter timer, +1 per timer read */
	uint64_t nr_slots;     /**< 40: compute units (percpu slots); 0 reads as 1 */
	uint64_t map_cnt;      /**< 48: entries used in maps[] */
	uint64_t reserved;     /**< 56: zero; fences are atomic ORs of 0 on this word */
	uint64_t maps[GBPF_SPIRV_MAX_MAPS]; /**< 64: device address of each map block */
	/**
	 * 576: gbpf_gpu_ctx.device of the next launch, for modules injected with
	 * GBPF_SPIRV_DEVICE_TABLE (written with launch_id, before the launch).
	 * Appended after maps[] so that no older offset moved.
	 */
	uint64_t device;
	/** zero; keeps the size a multiple of 64 (callers use aligned_alloc(64, sizeof)) */
	uint64_t reserved2[7];
};

/** Reduction of r0 over all work-items of a run (as struct gbpf_ptx_run_stats). */
struct gbpf_spirv_run_stats {
	uint64_t r0_min;   /**< smallest r0 (host initialises to ~0) */
	uint64_t r0_max;   /**< largest r0 */
	uint64_t r0_first; /**< r0 of work-item 0 */
	uint64_t reserved; /**< zero */
};

/** Options of gbpf_spirv_emit(). Zero-initialise, set sz. */
struct gbpf_spirv_opts {
	size_t sz;
	uint32_t flags;     /**< GBPF_SPIRV_* */
	uint32_t version;   /**< SPIR-V version word (GBPF_SPIRV_VERSION); 0 = 1.0 */
	uint64_t ctx_table; /**< device address of struct gbpf_spirv_ctx_table, 0 = none */
};

/**
 * Translate programs into a SPIR-V module.
 * @param progs      programs of one object (they share its maps); the run
 *                   kernel runs progs[0]
 * @param n          number of programs (>= 1)
 * @param opts       options, may be NULL
 * @param words      out: malloc'ed module; caller frees
 * @param word_count out: words in *words
 * @param err        reason naming file, section and instruction index
 * @param err_size   bytes at err
 * @return 0, -EINVAL for a malformed program, -ENOTSUP for an instruction or
 *         helper not supported, -ENOMEM; the module is validated before it
 *         is returned (-EPROTO with the validator's message otherwise)
 */
int gbpf_spirv_emit(const struct gbpf_prog_desc *const *progs, size_t n,
		    const struct gbpf_spirv_opts *opts, uint32_t **words, size_t *word_count,
		    char *err, size_t err_size);

/** 1 when gbpf_spirv_emit() translates calls to helper @p id. */
int gbpf_spirv_helper_supported(uint32_t id);

/** Validation environments of gbpf_spirv_validate(). */
enum gbpf_spirv_env {
	GBPF_SPIRV_ENV_AUTO = 0,     /**< OpenCL env matching the module's version word */
	GBPF_SPIRV_ENV_OPENCL_1_2 = 1,
	GBPF_SPIRV_ENV_OPENCL_2_0 = 2,
	GBPF_SPIRV_ENV_OPENCL_2_1 = 3,
	GBPF_SPIRV_ENV_OPENCL_2_2 = 4,
	GBPF_SPIRV_ENV_UNIVERSAL_1_5 = 5,
};

/**
 * Validate a module with SPIRV-Tools (spvValidateWithOptions).
 * @return 0, -EPROTO with the validator's message (and word/instruction
 *         position) in err, -EINVAL for bad arguments
 */
int gbpf_spirv_validate(const uint32_t *words, size_t count, enum gbpf_spirv_env env, char *err,
			size_t err_size);

/**
 * Disassemble a module (spvBinaryToText), e.g. for `gbpf prog codegen
 * --target spirv`.
 * @param text out: malloc'ed NUL-terminated text; caller frees
 * @return 0, -EPROTO when the binary cannot be parsed, -ENOMEM
 */
int gbpf_spirv_disassemble(const uint32_t *words, size_t count, char **text);

/** Options of gbpf_spirv_inject(). Zero-initialise, set sz. */
struct gbpf_spirv_inject_opts {
	size_t sz;
	/** 1 when progs[prog_index] targets the kernel @p name; NULL = every kernel. */
	int (*kernel_selected)(void *ctx, size_t prog_index, const char *name);
	void *select_ctx;
	uint64_t ctx_table; /**< as gbpf_spirv_opts.ctx_table */
	uint32_t flags;     /**< GBPF_SPIRV_TIMER_IMPORT, GBPF_SPIRV_DEVICE_TABLE */
	/** Memory probes may replace the stored value (GBPF_AGENT_F_ALLOW_APP_WRITES). */
	uint32_t allow_writes;
	/**
	 * gbpf_gpu_ctx.device of every GPU probe of the module: the index of
	 * the device the backend builds it for, as its host/launch probes see
	 * it (a module is built per device). 0 when sz does not reach it.
	 * Ignored with GBPF_SPIRV_DEVICE_TABLE (the value is read at run time).
	 */
	uint32_t device;
};

/** Per-kernel outcome of gbpf_spirv_inject(). */
struct gbpf_spirv_inject_kernel {
	char *name;       /**< entry point name */
	int instrumented; /**< 1 if probes were inserted */
	char *reason;     /**< why not, or a note; may be NULL */
	uint32_t n_entry, n_exit, n_mem; /**< probe calls inserted */
};

/** Result of gbpf_spirv_inject(); release with gbpf_spirv_inject_result_free(). */
struct gbpf_spirv_inject_result {
	uint32_t *words; /**< the instrumented module (validated) */
	size_t word_count;
	struct gbpf_spirv_inject_kernel *kernels;
	size_t kernel_cnt;
};

/**
 * Instrument an application's SPIR-V module: for every Kernel entry point
 * that some device program selects, call gpu/entry probes after the entry
 * block's OpVariables, gpu/exit probes before every OpReturn, gpu/mem
 * probes at OpLoad/OpStore/OpAtomic* on CrossWorkgroup, Workgroup and
 * Generic pointers. The probe code is merged into the module's id space;
 * the app's SPIR-V version is kept; the result is validated.
 * @return 0 (even if no kernel was instrumented: see res->kernels),
 *         -EINVAL / -EPROTO for a module that is not valid SPIR-V (err
 *         gives the word offset), -ENOTSUP, -ENOMEM
 */
int gbpf_spirv_inject(const uint32_t *app_words, size_t app_count,
		      const struct gbpf_prog_desc *const *progs, size_t n,
		      const struct gbpf_spirv_inject_opts *opts, struct gbpf_spirv_inject_result *res,
		      char *err, size_t err_size);

/**
 * Why the SPIR-V backends cannot attach a device program of this kind, or
 * NULL when they can (gpu/entry, gpu/exit, gpu/mem). The agents report the
 * reason and leave the program out, so that the user learns why a
 * gpu/barrier or gpu/block probe counts nothing instead of reading zeros.
 */
const char *gbpf_spirv_site_unsupported(uint32_t attach_kind);

/** Free what gbpf_spirv_inject() put in @p res (res itself is the caller's). */
void gbpf_spirv_inject_result_free(struct gbpf_spirv_inject_result *res);

/**
 * Turn SPIR-V into LLVM bitcode for PoCL (which rejects
 * clCreateProgramWithIL) with `llvm-spirv-15 -r`, found through the
 * GBPF_LLVM_SPIRV environment variable, then PATH (llvm-spirv-15,
 * llvm-spirv). Temporary files live in a private directory, removed.
 * @param bitcode out: malloc'ed bitcode; caller frees
 * @return 0, -ENOENT when no translator is installed, -EPROTO when it
 *         fails (its message in err), -ENOMEM, -EIO
 */
int gbpf_spirv_to_pocl(const uint32_t *words, size_t count, void **bitcode, size_t *size,
		       char *err, size_t err_size);

/* ---- the OpenCL runner (libOpenCL.so.1 is dlopen'ed, never linked) ---- */

struct gbpf_spirv_cl; /* an open OpenCL device + context + queue */

/**
 * Open the OpenCL runtime and pick a device (@p device_index, -1 = the
 * first GPU or CPU device found, PoCL on a machine without a GPU).
 * @return 0, -ENOENT when libOpenCL.so.1 or a device is missing (why in err)
 */
int gbpf_spirv_cl_open(int device_index, struct gbpf_spirv_cl **out, char *err, size_t err_size);
/** Release everything gbpf_spirv_cl_open() and the calls below made. */
void gbpf_spirv_cl_close(struct gbpf_spirv_cl *cl);
/** Device name (static storage of @p cl). */
const char *gbpf_spirv_cl_device_name(const struct gbpf_spirv_cl *cl);
/** Compute units of the device (nr_slots of per-CPU maps). */
uint32_t gbpf_spirv_cl_compute_units(const struct gbpf_spirv_cl *cl);

/**
 * Allocate @p size bytes the device reaches at the same address as the host
 * (fine-grained SVM when offered, else host memory on a device that shares
 * the host address space, such as PoCL's CPU device; other devices need
 * SVM). Zeroed. Free with gbpf_spirv_cl_free().
 */
void *gbpf_spirv_cl_alloc(struct gbpf_spirv_cl *cl, size_t size);
void gbpf_spirv_cl_free(struct gbpf_spirv_cl *cl, void *mem);

/** Options of gbpf_spirv_cl_run(). Zero-initialise, set sz. */
struct gbpf_spirv_cl_run_opts {
	size_t sz;
	const char *kernel;  /**< entry point, NULL = GBPF_SPIRV_RUN_ENTRY */
	uint64_t threads;    /**< work-items (n); 0 = 1 */
	uint32_t local_size; /**< work-group size; 0 = runtime's choice */
	uint64_t data;       /**< device address of r1 memory (cl_alloc'ed) or 0 */
	uint64_t size;       /**< r2 */
	uint64_t stride;     /**< bytes between work-items' data, 0 = shared */
	uint64_t *r0;        /**< cl_alloc'ed array of threads r0 values, or NULL */
	struct gbpf_spirv_run_stats *stats; /**< cl_alloc'ed, or NULL */
};

/**
 * Build a module (IL when the device reports an IL version, else the PoCL
 * bitcode path) and keep it for runs. @p prog_out is an opaque cl_program.
 * @return 0, -EPROTO with the build log in err, -ENOENT, -ENOMEM
 */
int gbpf_spirv_cl_build(struct gbpf_spirv_cl *cl, const uint32_t *words, size_t count,
			void **prog_out, char *err, size_t err_size);
/** Release a program of gbpf_spirv_cl_build(). */
void gbpf_spirv_cl_release(struct gbpf_spirv_cl *cl, void *prog);

/**
 * Run a run-kernel program (contract above) on opts->threads work-items
 * and wait for it.
 * @return 0, -EIO with the OpenCL error in err
 */
int gbpf_spirv_cl_run(struct gbpf_spirv_cl *cl, void *prog, const struct gbpf_spirv_cl_run_opts *opts,
		      char *err, size_t err_size);

/** One argument of gbpf_spirv_cl_run_kernel(). */
struct gbpf_spirv_cl_arg {
	const void *value; /**< bytes of a by-value argument, or the cl_alloc'ed memory of a pointer */
	size_t size;       /**< bytes of the value; for a pointer: bytes of the memory */
	int is_pointer;    /**< 1: a __global pointer to value (passed as SVM or a host-ptr buffer) */
};

/**
 * Run any kernel of a built program (application kernels in tests and in
 * the opencl plugin's own checks) over a 1-D range and wait for it.
 * @return 0, -EIO with the OpenCL error in err, -EINVAL
 */
int gbpf_spirv_cl_run_kernel(struct gbpf_spirv_cl *cl, void *prog, const char *kernel,
			     size_t global_size, size_t local_size,
			     const struct gbpf_spirv_cl_arg *args, size_t nargs, char *err,
			     size_t err_size);


/* ---- device print queue (trace_printk / puts) ---- */

/**
 * The print queue: device-visible memory (same address on host and device)
 * whose address the host puts in gbpf_spirv_ctx_table.printq. A header of
 * GBPF_SPIRV_PRINTQ_HDR bytes, then nslots records of
 * GBPF_SPIRV_PRINTQ_REC_SIZE bytes:
 *   0  u64 seq   position + 1 once published (device atomic store, last)
 *   8  u32 kind  GBPF_SPIRV_PRINTQ_PRINTK or GBPF_SPIRV_PRINTQ_PUTS
 *   12 u32 len   bytes of text (printk's format or puts' string, no NUL)
 *   16 u64 args[3] printk's arguments
 *   48 text
 * A producer reserves position h with a CAS on head while h - tail <
 * nslots (bounded retries; a full queue or lost races add 1 to drops and
 * the helper returns -ENOSPC), writes the record, fences and publishes
 * seq. The host consumes in position order and stores tail.
 */
struct gbpf_spirv_printq_hdr {
	uint64_t head;     /**< 0: atomic: positions reserved by the device */
	uint64_t drops;    /**< 8: atomic: records the device could not queue */
	uint64_t tail;     /**< 16: positions consumed by the host (host stores) */
	uint32_t nslots;   /**< 24: records (power of two) */
	uint32_t rec_size; /**< 28: GBPF_SPIRV_PRINTQ_REC_SIZE */
	uint64_t reserved[4];
};
#define GBPF_SPIRV_PRINTQ_HDR 64u
#define GBPF_SPIRV_PRINTQ_REC_SIZE 256u
#define GBPF_SPIRV_PRINTQ_TEXT_OFF 48u
/** Longest text a record holds (longer formats / strings are cut). */
#define GBPF_SPIRV_PRINTQ_TEXT_MAX (GBPF_SPIRV_PRINTQ_REC_SIZE - GBPF_SPIRV_PRINTQ_TEXT_OFF - 1u)
#define GBPF_SPIRV_PRINTQ_PRINTK 1u
#define GBPF_SPIRV_PRINTQ_PUTS 2u
/** Most records a queue may have. */
#define GBPF_SPIRV_PRINTQ_MAX_SLOTS (1u << 20)

/**
 * Records of a queue: GBPF_PRINTQ_SLOTS from the environment when it is a
 * power of two in 1..GBPF_SPIRV_PRINTQ_MAX_SLOTS (tests use tiny queues to
 * check drop counts), else @p dflt.
 */
uint32_t gbpf_spirv_printq_slots(uint32_t dflt);

/** 1 when @p prog calls trace_printk or puts (it needs a print queue). */
int gbpf_spirv_prog_prints(const struct gbpf_prog_desc *prog);

/** Bytes of a queue of @p nslots records (0 if nslots is not a power of two in range). */
size_t gbpf_spirv_printq_size(uint32_t nslots);

/**
 * Initialise a queue in @p mem (@p size bytes, 8-aligned, device-visible).
 * @return 0, -EINVAL for a bad nslots or a size too small
 */
int gbpf_spirv_printq_init(void *mem, size_t size, uint32_t nslots);

/**
 * Format one record as the interpreter's bpf_trace_printk / puts helpers
 * do (core/helpers: the same code runs; %s can only read the record itself,
 * device strings print empty, as an unreadable string does there).
 * @return length of the text in @p out (NUL-terminated), -EINVAL for a
 *         format the helper refuses or a bad record
 */
int gbpf_spirv_printq_format(const void *rec, char *out, size_t out_size);

/** Receives a formatted line: 0, or -EAGAIN to be called again later with it. */
typedef int (*gbpf_spirv_print_fn)(void *ctx, const char *text, size_t len);

struct gbpf_spirv_printer; /* a host thread draining one queue */

/**
 * Start a thread that drains the queue at @p mem (initialised) to @p fn
 * while kernels run (polls, naps 1 ms when idle).
 * @return 0, -ENOMEM, -EAGAIN when no thread can be created
 */
int gbpf_spirv_printer_start(void *mem, gbpf_spirv_print_fn fn, void *ctx,
			     struct gbpf_spirv_printer **out);

/**
 * Deliver every published record now (after a kernel completed). A line
 * that @p fn refuses for now (-EAGAIN) is waited for at most @p wait_ms,
 * then left to the printer thread, which delivers it when @p fn takes it.
 * @return lines lost since the last call: device drops (queue full) plus
 *         lines the sink refused for good (an error other than -EAGAIN) and
 *         records that could not be formatted; the caller reports them
 */
uint64_t gbpf_spirv_printer_flush(struct gbpf_spirv_printer *p, int wait_ms);

/** Lines delivered so far. */
uint64_t gbpf_spirv_printer_delivered(struct gbpf_spirv_printer *p);

/** Stop the thread (after a last flush of @p wait_ms) and free @p p; NULL is ignored. */
void gbpf_spirv_printer_stop(struct gbpf_spirv_printer *p, int wait_ms);

/* ---- the agents' use of a printer (opencl and levelzero) ---- */

struct gbpf_agent_services;

/**
 * Start a printer on the queue at @p mem (initialised, device-visible) that
 * passes lines to services->print (plugin ABI 1.2).
 * @return 0; -ENOTSUP (why in @p why) when the core's services have no
 *         print (a core older than ABI 1.2); what gbpf_spirv_printer_start returns
 */
int gbpf_spirv_agent_printer_start(void *mem, const struct gbpf_agent_services *svc,
				   struct gbpf_spirv_printer **out, char *why, size_t why_size);

/**
 * After a kernel completed: deliver its lines, then report lost lines (with
 * their count) through services->report for @p kernel (may be NULL).
 */
void gbpf_spirv_agent_printer_flush(struct gbpf_spirv_printer *p, const struct gbpf_agent_services *svc,
				    const char *kernel, int wait_ms);

#endif /* GBPF_PLUGINS_SPIRV_H */
