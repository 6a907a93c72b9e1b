/* SPDX-License-Identifier: MIT */
/*
 * plugins/hip/co_instrument.h - entry and exit probes in AMD code objects
 * (internal to the hip backend and its tests).
 *
 * co_instrument() rebuilds a linked AMDGPU code object (ELF ET_DYN, code
 * object v4/v5, gfx90a / gfx940 / gfx941 / gfx942, wave64) as one assembly
 * file: the original .text as raw words (branches as labels), a call stub
 * at the entry of each selected kernel and before each of its s_endpgm,
 * the kernel descriptors as bytes with the patched fields, the metadata
 * note re-encoded with the new register counts and private segment size,
 * and the probe module (gbpf_amdgcn_emit() assembly of the probe-function
 * form, its own metadata removed). llvm-mc assembles it and ld.lld links
 * it into a new shared code object.
 *
 * The stub follows the AMDGPU function-call ABI of LLVM: at the kernel
 * entry the descriptor is changed so that the hardware also provides the
 * dispatch pointer, kernarg pointer, all three workgroup ids, all three
 * workitem ids and (gfx90a) the private segment buffer, flat scratch init
 * and scratch wave offset; the stub copies these inputs and EXEC into
 * reserved callee-saved registers (SGPRs from s34 up, one VGPR of the
 * callee-saved set v40-v47, v56-v63, ...), rebuilds the ABI inputs of a
 * call (s[0:3] scratch resource, s[4:5] dispatch ptr, s[8:9] implicit
 * argument ptr, s12-s14 workgroup ids, v31 packed workitem ids, s32 stack
 * pointer above the kernel's own private segment), puts the context fields
 * the probe reads in its argument registers (v[0:1] the kernel id, a
 * literal: gbpf_kernel_id() of the kernel's name; v[2:3] the kernarg
 * segment pointer; v[4:5] the launch id and v6 the device, loaded from the
 * module global GBPF_AMDGCN_LAUNCH_GLOBAL), calls
 * __gbpf_probe_<i> with s_swappc_b64, and then restores the register
 * layout the original kernel expects. The exit stub restores the entry
 * EXEC from its reserved pair and makes the same call.
 */
#ifndef GBPF_HIP_CO_INSTRUMENT_H
#define GBPF_HIP_CO_INSTRUMENT_H

#include <stddef.h>
#include <stdint.h>

/** Resource use of a probe module: the maximum over its functions. */
struct co_probe_res {
	uint32_t sgprs;   /**< SGPRs including VCC / flat scratch extras */
	uint32_t vgprs;   /**< architectural VGPRs */
	uint32_t agprs;   /**< accumulation VGPRs (spills of callee-saved VGPRs) */
	uint32_t scratch; /**< private bytes per work item, callees included */
	uint32_t n_funcs; /**< functions seen */
};

/**
 * Prepare the assembly of a probe module for linking into a rewritten
 * code object: drop its .amdgpu_metadata block (the rewritten object keeps
 * the application's note) and bound its resources from the code itself
 * (LLVM-C prints no resource comments): the highest register each
 * instruction names, and the sum of every stack-pointer (s32) increment of
 * every function, which bounds the deepest call chain.
 * @param in       gbpf_amdgcn_emit() output (GBPF_AMDGCN_OUT_ASM)
 * @param arch     its processor (gfx90a counts s32 in bytes of the whole wave)
 * @param out      out: malloc'ed, NUL-terminated assembly
 * @param res      out: resource maxima
 * @return 0, -EINVAL when no probe function is found
 *         (reason in err), -ENOMEM
 */
int co_probe_asm_prepare(const char *in, const char *arch, char **out, struct co_probe_res *res, char *err, size_t err_size);

/** Which probes a kernel gets: probe function indices, -1 for none. */
struct co_kernel_probes {
	int entry; /**< __gbpf_probe_<entry> at the kernel entry */
	int exit;  /**< __gbpf_probe_<exit> before every s_endpgm */
};

/**
 * Kernel selection callback: fill @p p for kernel @p name (mangled).
 * @return 1 to instrument, 0 to leave it alone
 */
typedef int (*co_select_fn)(void *ctx, const char *name, struct co_kernel_probes *p);

/** Options of co_instrument(). */
struct co_instr_opts {
	const char *mc;        /**< llvm-mc (path or name in PATH) */
	const char *lld;       /**< ld.lld */
	const char *probe_asm; /**< co_probe_asm_prepare() output, same processor and code object version */
	struct co_probe_res res;
	co_select_fn select;
	void *select_ctx;
	/**
	 * Per probe function (n_ctx_reads entries), or NULL: the context bytes
	 * it may read (gbpf_verify_result.ctx_read_mask). The stubs set only
	 * the argument registers of fields some path reads, and load the
	 * launch global only when launch id or device is read.
	 */
	const uint64_t *ctx_reads;
	size_t n_ctx_reads;
};

/** Context fields a stub passes (co_instrument.c's reading of ctx_reads). */
#define CO_CTX_KERNEL_ID (1u << 0)
#define CO_CTX_PARAMS (1u << 1)
#define CO_CTX_LAUNCH_ID (1u << 2)
#define CO_CTX_DEVICE (1u << 3)

/** What happened to one kernel of the code object. */
struct co_instr_kernel {
	char name[256];
	int instrumented;
	struct co_kernel_probes probes;
	uint32_t n_entry, n_exit;   /**< stubs inserted */
	uint32_t sgpr_base;         /**< first reserved SGPR */
	uint32_t vgpr_save;         /**< reserved VGPR (packed workitem ids) */
	uint32_t sgprs, vgprs, priv; /**< new metadata values */
	char reason[200];           /**< why it was left alone, else empty */
};

/** Per-kernel results of co_instrument(). */
struct co_instr_result {
	struct co_instr_kernel *k;
	size_t n;
};

/**
 * Instrument the selected kernels of one code object.
 * @param elf      the application's code object (one bundle entry)
 * @param out      out: malloc'ed new code object (NULL when no kernel was
 *                 selected or instrumentable: the original is used)
 * @param res      out: one entry per kernel of the metadata (free with
 *                 co_instr_result_free)
 * @return 0 (also when nothing was instrumented), -EINVAL for a malformed
 *         code object (reason with section and offset in err), -ENOTSUP
 *         for a code object the rewriter cannot handle (PC-relative
 *         address computations, dynamic relocations), -ENOENT when
 *         llvm-mc / ld.lld are missing, -ENOMEM
 */
int co_instrument(const uint8_t *elf, size_t size, const struct co_instr_opts *o, uint8_t **out,
		  size_t *out_size, struct co_instr_result *res, char *err, size_t err_size);
/** Free co_instrument()'s result. */
void co_instr_result_free(struct co_instr_result *res);

/**
 * Static checks of a (rewritten) code object, each failure reported with
 * the kernel and offset in err:
 *  - every kernel of the metadata has NAME.kd (64 bytes, .rodata) and NAME
 *    (a function at a 256-byte aligned .text address) in the symbol table,
 *    and the descriptor's entry offset points at NAME;
 *  - the user SGPR count of compute_pgm_rsrc2 equals the enabled user SGPRs;
 *  - the descriptor's SGPR / VGPR granules and accum_offset cover every
 *    register the kernel's code names, and, where the kernel calls
 *    (s_swappc_b64), every register of the object's other functions;
 *  - a private segment is enabled when the kernel or a callee uses scratch;
 *  - metadata .sgpr_count/.vgpr_count fit in the granules and
 *    .private_segment_fixed_size equals the descriptor's;
 *  - every branch of .text lands on an instruction start.
 * @param n_kernels  out (may be NULL): kernels checked
 * @return 0, -EINVAL at the first failure
 */
int co_check_object(const char *arch_hint, const uint8_t *elf, size_t size, size_t *n_kernels, char *err,
		    size_t err_size);

/** Offsets and bits of the AMDHSA kernel descriptor (64 bytes). */
enum {
	CO_KD_GROUP = 0,
	CO_KD_PRIVATE = 4,
	CO_KD_KERNARG = 8,
	CO_KD_ENTRY = 16,
	CO_KD_RSRC3 = 44,
	CO_KD_RSRC1 = 48,
	CO_KD_RSRC2 = 52,
	CO_KD_PROPS = 56,
	CO_KD_PRELOAD = 58,
	CO_KD_SIZE = 64,
};

#endif /* GBPF_HIP_CO_INSTRUMENT_H */
