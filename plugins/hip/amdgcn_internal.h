/* SPDX-License-Identifier: MIT */
/*
 * plugins/hip/amdgcn_internal.h - state shared by the files of the eBPF to
 * AMDGCN translator (amdgcn_cg.c, amdgcn_insn.c, amdgcn_helpers.c).
 */
#ifndef GBPF_HIP_AMDGCN_INTERNAL_H
#define GBPF_HIP_AMDGCN_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <llvm-c/Core.h>

#include <gbpf/insn.h>
#include <gbpf/prog.h>

/* LLVM address spaces of the AMDGPU target. */
#define AMD_AS_FLAT 0
#define AMD_AS_GLOBAL 1
#define AMD_AS_CONST 4
#define AMD_AS_PRIVATE 5

/** Calling convention number of amdgpu_kernel in LLVM. */
#define AMD_CC_KERNEL 91

/** One eBPF function (entry or subprogram) of a program. */
struct amd_func {
	size_t start, end;  /* instruction range [start, end) */
	LLVMValueRef fn;    /* LLVM function */
};

/** Translation state of one program. */
struct amd_cg {
	LLVMContextRef ctx;
	LLVMModuleRef mod;
	LLVMBuilderRef b;
	const struct gbpf_prog_desc *prog;
	const struct gbpf_insn *insns;
	size_t n;
	size_t prog_idx;
	const uint64_t *ctx_reads; /* gbpf_amdgcn_opts.ctx_reads, or NULL (every field read) */
	char *err;
	size_t err_size;

	struct amd_func *funcs;
	size_t nfuncs;
	uint8_t *label; /* 1 where an instruction starts a basic block */

	/* per function being emitted */
	size_t cur;                /* index into funcs */
	LLVMValueRef fn;
	LLVMValueRef regs[GBPF_REG_COUNT]; /* allocas of r0..r10 (i64, private) */
	LLVMValueRef stack;        /* [512 x i8] alloca */
	LLVMValueRef exited;       /* flat ptr to the i8 "gpu exit called" flag */
	LLVMBasicBlockRef *bbs;    /* block per instruction index (where label) */
	LLVMBasicBlockRef exit_bb; /* return r0 */

	/* module-level */
	LLVMValueRef g_maps;    /* [map_cnt x i64] addrspace(1) */
	LLVMValueRef g_pid;     /* i64 addrspace(1) */
	LLVMTypeRef i1, i8, i16, i32, i64, ptr, pptr, void_t;
	LLVMTypeRef sub_ty;     /* i64 (i64 x5, ptr) of subprograms */
	unsigned uniq;
};

int amd_fail(struct amd_cg *cg, size_t pc, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* amdgcn_insn.c */
int amd_emit_body(struct amd_cg *cg, const struct amd_func *fn);
LLVMValueRef amd_reg(struct amd_cg *cg, unsigned r);
void amd_set_reg(struct amd_cg *cg, unsigned r, LLVMValueRef v);
LLVMValueRef amd_flat_ptr(struct amd_cg *cg, LLVMValueRef addr64);
LLVMValueRef amd_const64(struct amd_cg *cg, uint64_t v);
LLVMValueRef amd_const32(struct amd_cg *cg, uint32_t v);
LLVMValueRef amd_call_local(struct amd_cg *cg, size_t f);
void amd_ret_from_func(struct amd_cg *cg);
LLVMBasicBlockRef amd_new_bb(struct amd_cg *cg, const char *name);
long amd_func_at(const struct amd_cg *cg, size_t pc);

/* amdgcn_helpers.c */
int amd_emit_helper(struct amd_cg *cg, size_t pc, uint32_t id);
int amd_emit_callx(struct amd_cg *cg, size_t pc, unsigned reg);
LLVMValueRef amd_intrinsic(struct amd_cg *cg, const char *name, LLVMTypeRef ret,
			   LLVMTypeRef *params, unsigned np, LLVMValueRef *args);
LLVMValueRef amd_rt_fn(struct amd_cg *cg, const char *name);
int amd_helper_known(uint32_t id);

#endif /* GBPF_HIP_AMDGCN_INTERNAL_H */
