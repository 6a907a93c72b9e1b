/* SPDX-License-Identifier: MIT */
/*
 * plugins/cuda/ptx_codegen.h - eBPF to PTX translator (internal to the cuda
 * backend and the PTX injector).
 *
 * Two output forms:
 *
 *  - PROBE FRAGMENT (default): PTX text without .version/.target/
 *    .address_size, to be spliced into an application module. It holds
 *    module-scope declarations (all named __gbpf_*) and one
 *      .visible .func (.param .b64 ret) __gbpf_probe_<i>(.param .b64 ctx)
 *    per program i, where ctx is the generic address of a struct
 *    gbpf_gpu_ctx. Module-scope state the host sets with cuModuleGetGlobal:
 *      __gbpf_maps[n]   .u64  device address of each map's memory (map_layout.h)
 *      __gbpf_maps_const, __gbpf_slots_const  with GBPF_PTX_CONST_MAP_TABLE
 *      __gbpf_pid_tgid  .u64  value of get_current_pid_tgid
 *      __gbpf_printq    .u64  device address of the print queues (cuda_printq.h), 0 = off
 *    Prefix it with gbpf_ptx_header() to assemble it alone.
 *
 *  - RUN KERNEL (GBPF_PTX_KERNEL): a complete module whose entry
 *      .visible .entry __gbpf_run(.param .u64 data, .param .u64 size,
 *          .param .u64 stride, .param .u64 r0_out, .param .u64 n,
 *          .param .u64 stats)
 *    runs program 0 once per thread t < n with r1 = data + t * stride
 *    (0 when data is 0), r2 = size; stores r0 into r0_out[t] when r0_out is
 *    not 0, and folds r0 into stats (struct gbpf_ptx_run_stats) when stats
 *    is not 0.
 */
#ifndef GBPF_CUDA_PTX_CODEGEN_H
#define GBPF_CUDA_PTX_CODEGEN_H

#include <stddef.h>
#include <stdint.h>

#include <gbpf/prog.h>

/** Emit the run kernel instead of the probe fragment. */
#define GBPF_PTX_KERNEL (1U << 0)

/**
 * The probe fragment's caller keeps each GPU thread's GPU_THREAD_LOCAL
 * values after the probe context, at ctx + GBPF_PTX_THREAD_LOCAL_CTX_OFF:
 * gbpf_progs_thread_local_size() bytes, zero when the thread starts, the same
 * memory at every probe the thread runs (the injector: its context's .local
 * array, zeroed at the kernel's entry). Without it a probe fragment cannot
 * use such maps (the Compute Sanitizer engine's callbacks have no frame that
 * lasts the thread's run); the run kernel keeps them in its own frame.
 */
#define GBPF_PTX_THREAD_LOCAL_CTX (1U << 1)
#define GBPF_PTX_THREAD_LOCAL_CTX_OFF 64u
/**
 * The module also has, in the constant space, a copy of the map table and
 * each map's nr_slots, which the host sets beside __gbpf_maps when it loads
 * the module:
 *   .const .u64 __gbpf_maps_const[n]   the same addresses as __gbpf_maps
 *   .const .u32 __gbpf_slots_const[n]  each map's nr_slots (per-CPU maps:
 *                                      fixed when the map is made)
 * The inlined array lookups read both from there: operands of the constant
 * bank rather than two dependent loads (the table, then the map's header)
 * before the address of an element is known, at every lookup. Only the
 * lookups use it; the rest of the probe keeps the global table, which ptxas
 * would otherwise hold in registers across the kernel (the whole table in
 * .const cost a vector add 34 -> 40 registers). Not for Compute Sanitizer
 * patch modules, which may not allocate constants. An object without maps
 * declares neither, nor one of more than GBPF_PTX_CONST_MAP_MAX maps (the
 * flag is ignored then): the tables share the 64 KB bank with the
 * application's own constants.
 */
#define GBPF_PTX_CONST_MAP_TABLE (1U << 2)
#define GBPF_PTX_CONST_MAP_MAX 1024u

/** 1 when an object of @p map_cnt maps gets the constant-bank map table under GBPF_PTX_CONST_MAP_TABLE. */
static inline int gbpf_ptx_const_map_table(size_t map_cnt)
{
	return map_cnt && map_cnt <= GBPF_PTX_CONST_MAP_MAX;
}
/**
 * The per-CPU (per-SM) copies the constant table's __gbpf_slots_const says a
 * map has: its nr_slots, at least 1 and at most GBPF_PTX_CONST_SLOTS_MAX.
 * Each SM takes copy min(%smid, n - 1), so a smaller n only makes the last
 * SMs share a copy (the host sums the copies); with the bound, the code
 * generator takes an element's offset in 32 bits (a plane of up to 4 MB) and
 * never checks n against 0.
 */
#define GBPF_PTX_CONST_SLOTS_MAX 1024u
static inline uint32_t gbpf_ptx_const_slots(uint32_t nr_slots)
{
	return nr_slots < 1 ? 1 : nr_slots > GBPF_PTX_CONST_SLOTS_MAX ? GBPF_PTX_CONST_SLOTS_MAX : nr_slots;
}

/**
 * Declared (".reg .b64 %rtls_in_regs;") in a probe function that reaches its
 * thread-local values only by 64-bit loads and stores "[%rtls+N]" (N a
 * multiple of 8): where the injector inlines it, each 8 bytes may live in a
 * register of the kernel instead of memory.
 */
#define GBPF_PTX_TLS_REGS_MARK "%rtls_in_regs"

/** Name of the run kernel's entry. */
#define GBPF_PTX_RUN_ENTRY "__gbpf_run"

/**
 * Largest frame (the .local array __gbpf_stack) of a generated function: the
 * eBPF stack's 512 bytes, then up to 4 ring buffer records of up to 56 bytes
 * that bpf_ringbuf_reserve placed there (their submit writes them to the
 * ring by value). The injector accepts frames of 512 to this many bytes.
 */
#define GBPF_PTX_FRAME_MAX 736u

/** Default PTX ISA version (x10): 7.8 is the oldest that targets sm_90. */
#define GBPF_PTX_DEFAULT_VERSION 78u

/** Options of gbpf_ptx_emit(). Zero-initialise, set sz. */
struct gbpf_ptx_opts {
	size_t sz;
	const char *arch;     /**< "sm_70" .. "sm_90" for the module header; NULL = "sm_70" */
	uint32_t flags;       /**< GBPF_PTX_* */
	uint32_t ptx_version; /**< ISA version x10 (78 = 7.8), <= 90; 0 = default */
};

/**
 * Reduction of r0 over all threads of a run, written by the run kernel
 * (device memory; the host initialises min to ~0, the rest to 0). Every
 * thread t < n reaches the fold, so min == max means all threads agreed.
 */
struct gbpf_ptx_run_stats {
	uint64_t r0_min;     /**< smallest r0 */
	uint64_t r0_max;     /**< largest r0 */
	uint64_t r0_first;   /**< r0 of thread 0 */
	uint64_t reserved;   /**< zero */
};

/**
 * Translate programs into PTX.
 * @param progs     programs of one object (they share its maps); the run
 *                  kernel uses progs[0] only
 * @param n         number of programs (>= 1)
 * @param opts      options, may be NULL
 * @param ptx       out: malloc'ed NUL-terminated text; caller frees
 * @param len       out: strlen of *ptx (may be NULL)
 * @param err       buffer for a reason naming file, section and instruction
 * @param err_size  bytes at err
 * @return 0, -EINVAL for a malformed program or option, -ENOTSUP for an
 *         instruction or helper the device cannot run, -ENOMEM
 */
int gbpf_ptx_emit(const struct gbpf_prog_desc *const *progs, size_t n,
		  const struct gbpf_ptx_opts *opts, char **ptx, size_t *len, char *err,
		  size_t err_size);

/**
 * Write the module header (.version/.target/.address_size) that makes a
 * probe fragment a complete module.
 * @return the number of characters written (as snprintf), or -EINVAL
 */
int gbpf_ptx_header(char *buf, size_t size, const char *arch, uint32_t ptx_version);

/** 1 when gbpf_ptx_emit() can translate calls to helper @p id. */
int gbpf_ptx_helper_supported(uint32_t id);

#endif /* GBPF_CUDA_PTX_CODEGEN_H */
