/* SPDX-License-Identifier: MIT */
/*
 * plugins/hip/amdgcn_codegen.h - eBPF to AMDGCN through the LLVM-C API
 * (internal to the hip backend and its tests).
 *
 * The generated module has the same two forms as the PTX backend
 * (plugins/cuda/ptx_codegen.h):
 *
 *  - PROBE FUNCTIONS (default): one externally visible device function
 *      i64 __gbpf_probe_<i>(i64 kernel_id, i64 params, i64 launch_id, i32 device)
 *    per program i: the fields of struct gbpf_gpu_ctx that the rewritten
 *    kernel's stub passes (co_instrument.h); the function builds the
 *    struct in its private frame and runs the program with r1 = its flat
 *    address. Fields the program does not read (opts.ctx_reads) are 0
 *    there, and so are device_pad and the gpu/mem fields. Module-scope
 *    globals (addrspace 1) that the host sets with hipModuleGetGlobal:
 *      __gbpf_maps[n]   u64  device address of each map's memory (map_layout.h)
 *      __gbpf_pid_tgid  u64  value of get_current_pid_tgid
 *      __gbpf_launch[2] u64  launch id and device of the launch (.bss;
 *                            GBPF_AMDGCN_LAUNCH_GLOBAL), read by the stubs
 *
 *  - RUN KERNEL (GBPF_AMDGCN_KERNEL): an amdgpu_kernel
 *      __gbpf_run(u64 data, u64 size, u64 stride, u64 r0_out, u64 n, u64 stats)
 *    with the contract of the PTX run kernel: program 0 runs once per work
 *    item t < n with r1 = data + t * stride (0 when data is 0), r2 = size;
 *    r0 goes to r0_out[t] when r0_out is not 0 and is folded into stats
 *    (struct gbpf_amdgcn_run_stats: min, max, first) when stats is not 0.
 *
 * Map helpers run the docs/MAPS.md algorithms on the same bytes as the host
 * through a device runtime written in C (device/amdgcn_rt.c), compiled to
 * LLVM bitcode for each architecture at build time and linked into every
 * module before optimisation. Atomics use the system scope (LLVM's default
 * sync scope on AMDGPU) because map blocks may live in host memory.
 */
#ifndef GBPF_HIP_AMDGCN_CODEGEN_H
#define GBPF_HIP_AMDGCN_CODEGEN_H

#include <stddef.h>
#include <stdint.h>

#include <gbpf/prog.h>

/** Emit the run kernel instead of the probe functions. */
#define GBPF_AMDGCN_KERNEL (1U << 0)

/** Name of the run kernel. */
#define GBPF_AMDGCN_RUN_ENTRY "__gbpf_run"
/** Prefix of the probe functions (followed by the program index). */
#define GBPF_AMDGCN_PROBE_PREFIX "__gbpf_probe_"

/**
 * Module global the stubs of rewritten kernels read the launch's id (u64
 * at 0) and device (u64 at 8: gbpf_gpu_ctx.device, zero-extended) from.
 * The host writes it in stream order before each launch of a kernel whose
 * probes read them (hipMemcpyToSymbolAsync / hipModuleGetGlobal).
 */
#define GBPF_AMDGCN_LAUNCH_GLOBAL "__gbpf_launch"

/** Tag of a subprogram address loaded by lddw (src GBPF_PSEUDO_FUNC), as the PTX backend. */
#define GBPF_AMDGCN_FUNC_TAG 0x6762706600000000ull

/** Output kinds of gbpf_amdgcn_emit(). */
enum gbpf_amdgcn_output {
	GBPF_AMDGCN_OUT_ASM = 0, /**< AMDGCN assembly text (NUL-terminated) */
	GBPF_AMDGCN_OUT_OBJ = 1, /**< relocatable ELF object (link with ld.lld -shared) */
	GBPF_AMDGCN_OUT_IR = 2,  /**< optimised LLVM IR text, for debugging */
};

/** Options of gbpf_amdgcn_emit(). Zero-initialise, set sz. */
struct gbpf_amdgcn_opts {
	size_t sz;
	const char *arch; /**< "gfx90a", "gfx940", "gfx941", "gfx942"; NULL = "gfx942" */
	uint32_t flags;   /**< GBPF_AMDGCN_* */
	uint32_t output;  /**< enum gbpf_amdgcn_output */
	int opt_level;    /**< 0: no LLVM passes (debug), else default<O2> */
	/** code object version 4 or 5 (0 = 5); an app's code object and the
	 *  probe module linked into it must agree (ld.lld rejects a mix) */
	uint32_t cov;
	/**
	 * Per program (n entries), or NULL: the context bytes it may read
	 * (gbpf_verify_result.ctx_read_mask). Probe functions store 0 for the
	 * fields a program does not read. Appended: read only when sz covers it.
	 */
	const uint64_t *ctx_reads;
};

/** Reduction of r0 written by the run kernel (min initialised to ~0 by the host). */
struct gbpf_amdgcn_run_stats {
	uint64_t r0_min;
	uint64_t r0_max;
	uint64_t r0_first;
	uint64_t reserved;
};

/**
 * Translate programs of one object into an AMDGCN module.
 * @param progs    programs (they share the map table of progs[0]); the run
 *                 kernel form uses progs[0] only
 * @param n        number of programs (>= 1)
 * @param opts     options, may be NULL
 * @param out      out: malloc'ed bytes (text is NUL-terminated); caller frees
 * @param out_len  out: bytes at *out without the terminating NUL
 * @param err      buffer for a reason naming file, section and instruction
 * @param err_size bytes at err
 * @return 0, -EINVAL for a malformed program or option, -ENOTSUP for an
 *         instruction, helper or architecture the generator cannot handle,
 *         -ENOMEM, -GBPF_ERRNO__JIT when LLVM fails
 */
int gbpf_amdgcn_emit(const struct gbpf_prog_desc *const *progs, size_t n,
		     const struct gbpf_amdgcn_opts *opts, char **out, size_t *out_len, char *err,
		     size_t err_size);

/** 1 when @p arch is an architecture the generator targets. */
int gbpf_amdgcn_arch_supported(const char *arch);

/** 1 when gbpf_amdgcn_emit() can translate calls to helper @p id. */
int gbpf_amdgcn_helper_supported(uint32_t id);

#endif /* GBPF_HIP_AMDGCN_CODEGEN_H */
