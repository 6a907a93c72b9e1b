/* SPDX-License-Identifier: MIT */
/*
 * eBPF to AMDGCN: program analysis, module layout (functions, globals,
 * probe functions, run kernel), linking of the device map runtime and
 * code emission through an LLVM target machine.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/BitReader.h>
#include <llvm-c/Linker.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include <gbpf/gbpf.h>

#include <gbpf/probe_ctx.h>

#include "amdgcn_codegen.h"
#include "amdgcn_internal.h"
#include "amdgcn_rt_blob.h"

int amd_fail(struct amd_cg *cg, size_t pc, int code, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (cg->err && cg->err_size && !cg->err[0])
		snprintf(cg->err, cg->err_size, "%s: section %s: %s: insn %zu: %s",
			 cg->prog->source_file ? cg->prog->source_file : "<memory>",
			 cg->prog->section ? cg->prog->section : "?",
			 cg->prog->name ? cg->prog->name : "?", pc, msg);
	return code;
}

static const char *const amd_archs[] = {"gfx90a", "gfx940", "gfx941", "gfx942"};

int gbpf_amdgcn_arch_supported(const char *arch)
{
	for (size_t i = 0; arch && i < sizeof(amd_archs) / sizeof(amd_archs[0]); i++)
		if (!strcmp(arch, amd_archs[i]))
			return 1;
	return 0;
}

static int cmp_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return x < y ? -1 : x > y;
}

static int is_jump(uint8_t code)
{
	uint8_t cls = GBPF_CLASS(code), op = GBPF_OP(code);

	if (cls != GBPF_JMP && cls != GBPF_JMP32)
		return 0;
	return op != GBPF_CALL && op != GBPF_EXIT;
}

/* Split the program into functions, mark block starts, check ranges. */
static int analyse(struct amd_cg *cg)
{
	size_t *starts, ns = 0, i, f;

	if (!cg->n)
		return amd_fail(cg, 0, -EINVAL, "empty program");
	starts = calloc(cg->n + 1, sizeof(*starts));
	cg->label = calloc(cg->n + 1, 1);
	if (!starts || !cg->label) {
		free(starts);
		return amd_fail(cg, 0, -ENOMEM, "out of memory");
	}
	starts[ns++] = 0;
	for (i = 0; i < cg->n; i++) {
		const struct gbpf_insn *in = &cg->insns[i];
		long long t = -1;

		if (gbpf_insn_is_wide(in)) {
			if (i + 1 >= cg->n) {
				free(starts);
				return amd_fail(cg, i, -EINVAL, "wide load without its second slot");
			}
			if (in->src != GBPF_PSEUDO_FUNC) {
				i++;
				continue;
			}
			t = (long long)i + 1 + in->imm;
			i++;
		} else if (in->code == GBPF_OP_CALL && in->src == GBPF_CALL_LOCAL) {
			t = (long long)i + 1 + in->imm;
		} else {
			continue;
		}
		if (t < 0 || (size_t)t >= cg->n) {
			free(starts);
			return amd_fail(cg, i, -EINVAL, "function target %lld out of range", t);
		}
		starts[ns++] = (size_t)t;
	}
	qsort(starts, ns, sizeof(*starts), cmp_size);
	cg->funcs = calloc(ns, sizeof(*cg->funcs));
	if (!cg->funcs) {
		free(starts);
		return amd_fail(cg, 0, -ENOMEM, "out of memory");
	}
	for (i = 0; i < ns; i++)
		if (!cg->nfuncs || cg->funcs[cg->nfuncs - 1].start != starts[i])
			cg->funcs[cg->nfuncs++].start = starts[i];
	free(starts);
	for (f = 0; f < cg->nfuncs; f++)
		cg->funcs[f].end = f + 1 < cg->nfuncs ? cg->funcs[f + 1].start : cg->n;

	for (f = 0; f < cg->nfuncs; f++) {
		const struct amd_func *fn = &cg->funcs[f];

		for (i = fn->start; i < fn->end; i++) {
			const struct gbpf_insn *in = &cg->insns[i];
			uint8_t cls = GBPF_CLASS(in->code);

			if (in->dst > 10 || in->src > 10)
				return amd_fail(cg, i, -EINVAL, "bad register r%u",
						in->dst > 10 ? in->dst : in->src);
			if (gbpf_insn_is_wide(in)) {
				if (i + 1 >= fn->end)
					return amd_fail(cg, i, -EINVAL, "wide load split across functions");
				if (in->dst == 10)
					return amd_fail(cg, i, -EINVAL, "write to r10");
				i++;
				continue;
			}
			if ((cls == GBPF_LDX || cls == GBPF_ALU || cls == GBPF_ALU64) && in->dst == 10)
				return amd_fail(cg, i, -EINVAL, "write to r10");
			if (is_jump(in->code)) {
				long long t = (long long)i + 1 +
					      (in->code == GBPF_OP_GOTOL ? in->imm : in->off);

				if (t < (long long)fn->start || t >= (long long)fn->end)
					return amd_fail(cg, i, -EINVAL,
							"jump target %lld outside function [%zu, %zu)", t,
							fn->start, fn->end);
				cg->label[t] = 1;
				if (GBPF_OP(in->code) != GBPF_JA) {
					if (i + 1 >= fn->end)
						return amd_fail(cg, i, -EINVAL,
								"conditional jump falls off the function");
					cg->label[i + 1] = 1;
				}
			}
		}
	}
	return 0;
}

/* Function f: i64 (i64 r1..r5, ptr exited) with its own 512-byte frame. */
static int emit_function(struct amd_cg *cg, size_t f)
{
	const struct amd_func *fn = &cg->funcs[f];
	LLVMBasicBlockRef entry;
	LLVMValueRef fp;
	size_t i;
	unsigned r;
	int rc;

	cg->cur = f;
	cg->fn = fn->fn;
	entry = LLVMAppendBasicBlockInContext(cg->ctx, cg->fn, "entry");
	LLVMPositionBuilderAtEnd(cg->b, entry);
	for (r = 0; r < GBPF_REG_COUNT; r++)
		cg->regs[r] = LLVMBuildAlloca(cg->b, cg->i64, "");
	cg->stack = LLVMBuildAlloca(cg->b, LLVMArrayType2(cg->i8, GBPF_STACK_SIZE), "frame");
	LLVMSetAlignment(cg->stack, 8);
	amd_set_reg(cg, 0, amd_const64(cg, 0));
	for (r = 1; r <= 5; r++)
		amd_set_reg(cg, r, LLVMGetParam(cg->fn, r - 1));
	for (r = 6; r <= 9; r++)
		amd_set_reg(cg, r, amd_const64(cg, 0));
	fp = LLVMBuildPtrToInt(cg->b, LLVMBuildAddrSpaceCast(cg->b, cg->stack, cg->ptr, ""), cg->i64, "");
	amd_set_reg(cg, 10, LLVMBuildAdd(cg->b, fp, amd_const64(cg, GBPF_STACK_SIZE), "fp"));
	cg->exited = LLVMGetParam(cg->fn, 5);

	memset(cg->bbs, 0, sizeof(*cg->bbs) * (cg->n + 1));
	for (i = fn->start; i < fn->end; i++)
		if (cg->label[i]) {
			char name[32];

			snprintf(name, sizeof(name), "L%zu", i);
			cg->bbs[i] = amd_new_bb(cg, name);
		}
	cg->exit_bb = amd_new_bb(cg, "exit");
	rc = amd_emit_body(cg, fn);
	if (rc)
		return rc;
	LLVMPositionBuilderAtEnd(cg->b, cg->exit_bb);
	LLVMBuildRet(cg->b, amd_reg(cg, 0));
	return 0;
}

static void add_attr(struct amd_cg *cg, LLVMValueRef fn, const char *k, const char *v)
{
	LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
				LLVMCreateStringAttribute(cg->ctx, k, (unsigned)strlen(k), v, (unsigned)strlen(v)));
}

static void add_enum_attr(struct amd_cg *cg, LLVMValueRef fn, const char *k)
{
	unsigned kind = LLVMGetEnumAttributeKindForName(k, strlen(k));

	LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(cg->ctx, kind, 0));
}

/* Declare the functions of one program (so that calls can reference them). */
static void declare_functions(struct amd_cg *cg)
{
	for (size_t f = 0; f < cg->nfuncs; f++) {
		char name[96];

		snprintf(name, sizeof(name), "__gbpf_p%zu_f%zu", cg->prog_idx, f);
		cg->funcs[f].fn = LLVMAddFunction(cg->mod, name, cg->sub_ty);
		LLVMSetLinkage(cg->funcs[f].fn, LLVMInternalLinkage);
		/* probes are small: inline everything into the probe function */
		if (f == 0)
			add_enum_attr(cg, cg->funcs[f].fn, "alwaysinline");
	}
}

/* Call program entry with r1, r2 and a fresh "exited" flag; returns r0. */
static LLVMValueRef call_entry(struct amd_cg *cg, LLVMValueRef r1, LLVMValueRef r2, LLVMValueRef flag)
{
	LLVMValueRef args[6];

	args[0] = r1;
	args[1] = r2;
	args[2] = args[3] = args[4] = amd_const64(cg, 0);
	LLVMBuildStore(cg->b, LLVMConstInt(cg->i8, 0, 0), flag);
	args[5] = LLVMBuildAddrSpaceCast(cg->b, flag, cg->ptr, "");
	return LLVMBuildCall2(cg->b, cg->sub_ty, cg->funcs[0].fn, args, 6, "r0");
}

/*
 * i64 __gbpf_probe_<i>(i64 kernel_id, i64 params, i64 launch_id, i32 device):
 * the rewritten kernel's stub passes the context fields by value (it has
 * them in registers) and the probe builds struct gbpf_gpu_ctx in its own
 * private frame, so that LLVM handles the private address space and the
 * stub stores nothing. Fields the program never reads (ctx_reads) are
 * stored as 0 and the stub does not set their registers.
 */
static void emit_probe_wrapper(struct amd_cg *cg)
{
	LLVMTypeRef pt[4] = {cg->i64, cg->i64, cg->i64, cg->i32};
	LLVMTypeRef ty = LLVMFunctionType(cg->i64, pt, 4, 0);
	LLVMTypeRef cty = LLVMArrayType2(cg->i64, sizeof(struct gbpf_gpu_ctx) / 8);
	const uint64_t reads = cg->ctx_reads ? cg->ctx_reads[cg->prog_idx] : ~0ULL;
	static const unsigned field_off[4] = {offsetof(struct gbpf_gpu_ctx, kernel_id),
					      offsetof(struct gbpf_gpu_ctx, params),
					      offsetof(struct gbpf_gpu_ctx, launch_id),
					      offsetof(struct gbpf_gpu_ctx, device)};
	char name[64];
	LLVMValueRef fn, flag, r0, ctx;

	snprintf(name, sizeof(name), GBPF_AMDGCN_PROBE_PREFIX "%zu", cg->prog_idx);
	fn = LLVMAddFunction(cg->mod, name, ty);
	cg->fn = fn;
	LLVMPositionBuilderAtEnd(cg->b, LLVMAppendBasicBlockInContext(cg->ctx, fn, "entry"));
	flag = LLVMBuildAlloca(cg->b, cg->i8, "exited");
	ctx = LLVMBuildAlloca(cg->b, cty, "ctx");
	LLVMSetAlignment(ctx, 8);
	/* every word first (mem_* fields, device_pad and unread fields read as 0) */
	LLVMBuildStore(cg->b, LLVMConstNull(cty), ctx);
	for (unsigned f = 0; f < 4; f++) {
		LLVMValueRef v = LLVMGetParam(fn, f), idx = LLVMConstInt(cg->i64, field_off[f] / 8, 0);

		if (!(reads & (0xffULL << field_off[f])))
			continue;
		if (f == 3)
			v = LLVMBuildZExt(cg->b, v, cg->i64, "");
		LLVMSetAlignment(LLVMBuildStore(cg->b, v, LLVMBuildGEP2(cg->b, cty, ctx, (LLVMValueRef[]){
			amd_const64(cg, 0), idx}, 2, "")), 8);
	}
	r0 = call_entry(cg, LLVMBuildPtrToInt(cg->b, LLVMBuildAddrSpaceCast(cg->b, ctx, cg->ptr, ""), cg->i64, "r1"),
			amd_const64(cg, 0), flag);
	LLVMBuildRet(cg->b, r0);
}

/* Load a u16 of the HSA dispatch packet (workgroup sizes at 4, 6, 8). */
static LLVMValueRef dispatch_u16(struct amd_cg *cg, unsigned off)
{
	LLVMTypeRef cptr = LLVMPointerTypeInContext(cg->ctx, AMD_AS_CONST);
	LLVMValueRef dp = amd_intrinsic(cg, "llvm.amdgcn.dispatch.ptr", cptr, NULL, 0, NULL);
	LLVMValueRef idx = amd_const64(cg, off);
	LLVMValueRef v = LLVMBuildLoad2(cg->b, cg->i16, LLVMBuildGEP2(cg->b, cg->i8, dp, &idx, 1, ""), "");

	LLVMSetAlignment(v, 2);
	return LLVMBuildZExt(cg->b, v, cg->i64, "");
}

static void emit_run_kernel(struct amd_cg *cg)
{
	LLVMTypeRef pt[6] = {cg->i64, cg->i64, cg->i64, cg->i64, cg->i64, cg->i64};
	LLVMTypeRef ty = LLVMFunctionType(cg->void_t, pt, 6, 0);
	LLVMValueRef fn, gtid, wg, wi, flag, r1, r0, c, out, stats, p;
	LLVMBasicBlockRef body, done, st_out, no_out, st_stats, first, fold;
	LLVMBuilderRef b = cg->b;
	LLVMValueRef idx;

	fn = LLVMAddFunction(cg->mod, GBPF_AMDGCN_RUN_ENTRY, ty);
	LLVMSetFunctionCallConv(fn, AMD_CC_KERNEL);
	add_attr(cg, fn, "amdgpu-flat-work-group-size", "1,1024");
	cg->fn = fn;
	LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(cg->ctx, fn, "entry"));
	flag = LLVMBuildAlloca(b, cg->i8, "exited");
	wg = LLVMBuildZExt(b, amd_intrinsic(cg, "llvm.amdgcn.workgroup.id.x", cg->i32, NULL, 0, NULL), cg->i64, "");
	wi = LLVMBuildZExt(b, amd_intrinsic(cg, "llvm.amdgcn.workitem.id.x", cg->i32, NULL, 0, NULL), cg->i64, "");
	gtid = LLVMBuildAdd(b, LLVMBuildMul(b, wg, dispatch_u16(cg, 4), ""), wi, "gtid");
	body = amd_new_bb(cg, "body");
	done = amd_new_bb(cg, "done");
	LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntUGE, gtid, LLVMGetParam(fn, 4), ""), done, body);

	LLVMPositionBuilderAtEnd(b, body);
	r1 = LLVMBuildAdd(b, LLVMGetParam(fn, 0), LLVMBuildMul(b, gtid, LLVMGetParam(fn, 2), ""), "");
	c = LLVMBuildICmp(b, LLVMIntEQ, LLVMGetParam(fn, 0), amd_const64(cg, 0), "");
	r1 = LLVMBuildSelect(b, c, amd_const64(cg, 0), r1, "r1");
	r0 = call_entry(cg, r1, LLVMGetParam(fn, 1), flag);
	st_out = amd_new_bb(cg, "store_r0");
	no_out = amd_new_bb(cg, "stats");
	out = LLVMGetParam(fn, 3);
	LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntEQ, out, amd_const64(cg, 0), ""), no_out, st_out);
	LLVMPositionBuilderAtEnd(b, st_out);
	p = LLVMBuildIntToPtr(b, LLVMBuildAdd(b, out, LLVMBuildShl(b, gtid, amd_const64(cg, 3), ""), ""),
			      cg->pptr, "");
	LLVMSetAlignment(LLVMBuildStore(b, r0, p), 8);
	LLVMBuildBr(b, no_out);

	LLVMPositionBuilderAtEnd(b, no_out);
	stats = LLVMGetParam(fn, 5);
	st_stats = amd_new_bb(cg, "fold");
	LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntEQ, stats, amd_const64(cg, 0), ""), done, st_stats);
	LLVMPositionBuilderAtEnd(b, st_stats);
	first = amd_new_bb(cg, "first");
	fold = amd_new_bb(cg, "minmax");
	LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntEQ, gtid, amd_const64(cg, 0), ""), first, fold);
	LLVMPositionBuilderAtEnd(b, first);
	idx = amd_const64(cg, 2);
	p = LLVMBuildIntToPtr(b, stats, cg->pptr, "");
	LLVMSetAlignment(LLVMBuildStore(b, r0, LLVMBuildGEP2(b, cg->i64, p, &idx, 1, "")), 8);
	LLVMBuildBr(b, fold);
	LLVMPositionBuilderAtEnd(b, fold);
	p = LLVMBuildIntToPtr(b, stats, cg->pptr, "");
	LLVMSetAlignment(LLVMBuildAtomicRMW(b, LLVMAtomicRMWBinOpUMin, p, r0,
					    LLVMAtomicOrderingMonotonic, 0), 8);
	idx = amd_const64(cg, 1);
	LLVMSetAlignment(LLVMBuildAtomicRMW(b, LLVMAtomicRMWBinOpUMax, LLVMBuildGEP2(b, cg->i64, p, &idx, 1, ""),
					    r0, LLVMAtomicOrderingMonotonic, 0), 8);
	LLVMBuildBr(b, done);
	LLVMPositionBuilderAtEnd(b, done);
	LLVMBuildRetVoid(b);
}

static int check_prog(const struct gbpf_prog_desc *p, char *err, size_t err_size)
{
	if (!p || p->sz < offsetof(struct gbpf_prog_desc, source_file) || !p->insns || !p->insn_cnt) {
		snprintf(err, err_size, "amdgcn: malformed program description");
		return -EINVAL;
	}
	if (p->map_cnt && !p->maps) {
		snprintf(err, err_size, "%s: %zu maps without descriptions",
			 p->source_file ? p->source_file : "<memory>", p->map_cnt);
		return -EINVAL;
	}
	for (size_t i = 0; i < p->map_cnt; i++)
		if (p->maps[i].type == GBPF_MAP_TYPE_GPU_THREAD_LOCAL) {
			snprintf(err, err_size, "%s: section %s: map '%s' is thread-local (GPU_THREAD_LOCAL), which "
				 "the AMDGCN code generator does not keep (the CUDA and SPIR-V ones do)",
				 p->source_file ? p->source_file : "<memory>", p->section ? p->section : "-",
				 p->maps[i].name ? p->maps[i].name : "?");
			return -ENOTSUP;
		}
	return 0;
}

static int emit_program(struct amd_cg *cg, const struct gbpf_prog_desc *p, size_t idx, int kernel)
{
	size_t f;
	int rc;

	cg->prog = p;
	cg->insns = p->insns;
	cg->n = p->insn_cnt;
	cg->prog_idx = idx;
	cg->funcs = NULL;
	cg->nfuncs = 0;
	cg->label = NULL;
	cg->bbs = calloc(cg->n + 1, sizeof(*cg->bbs));
	if (!cg->bbs)
		return -ENOMEM;
	rc = analyse(cg);
	if (!rc) {
		declare_functions(cg);
		for (f = 0; f < cg->nfuncs && !rc; f++)
			rc = emit_function(cg, f);
	}
	if (!rc) {
		if (kernel)
			emit_run_kernel(cg);
		else
			emit_probe_wrapper(cg);
	}
	free(cg->bbs);
	free(cg->funcs);
	free(cg->label);
	cg->bbs = NULL;
	cg->funcs = NULL;
	cg->label = NULL;
	return rc;
}

/* LLVM's target registry is process-wide: initialise it once. */
static pthread_once_t amd_llvm_once = PTHREAD_ONCE_INIT;

static void amd_llvm_init(void)
{
	LLVMInitializeAMDGPUTargetInfo();
	LLVMInitializeAMDGPUTarget();
	LLVMInitializeAMDGPUTargetMC();
	LLVMInitializeAMDGPUAsmPrinter();
	LLVMInitializeAMDGPUAsmParser();
	LLVMInitializeAMDGPUDisassembler();
}

/* Link the device runtime (map helpers) into the module. */
static int link_runtime(struct amd_cg *cg)
{
	LLVMMemoryBufferRef buf;
	LLVMModuleRef rt = NULL;
	LLVMValueRef fn;

	if (!gbpf_amdgcn_rt_bc_len) {
		snprintf(cg->err, cg->err_size, "amdgcn: the device map runtime was not built");
		return -ENOTSUP;
	}
	buf = LLVMCreateMemoryBufferWithMemoryRange((const char *)gbpf_amdgcn_rt_bc, gbpf_amdgcn_rt_bc_len,
						    "amdgcn_rt.bc", 0);
	if (LLVMParseBitcodeInContext2(cg->ctx, buf, &rt)) {
		LLVMDisposeMemoryBuffer(buf);
		snprintf(cg->err, cg->err_size, "amdgcn: cannot parse the device map runtime bitcode");
		return -GBPF_ERRNO__JIT;
	}
	LLVMDisposeMemoryBuffer(buf);
	LLVMSetDataLayout(rt, LLVMGetDataLayoutStr(cg->mod));
	if (LLVMLinkModules2(cg->mod, rt)) {
		snprintf(cg->err, cg->err_size, "amdgcn: linking the device map runtime failed");
		return -GBPF_ERRNO__JIT;
	}
	for (fn = LLVMGetFirstFunction(cg->mod); fn; fn = LLVMGetNextFunction(fn)) {
		size_t len;
		const char *name = LLVMGetValueName2(fn, &len);

		if (!LLVMIsDeclaration(fn) && !strncmp(name, "__gbpf_rt_", 10))
			LLVMSetLinkage(fn, LLVMInternalLinkage);
	}
	return 0;
}

/* Every function gets the module's processor, so the runtime (built for no
 * particular processor) inlines into the generated code. */
static void set_cpu(struct amd_cg *cg, const char *arch)
{
	for (LLVMValueRef fn = LLVMGetFirstFunction(cg->mod); fn; fn = LLVMGetNextFunction(fn)) {
		if (LLVMIsDeclaration(fn))
			continue;
		LLVMRemoveStringAttributeAtIndex(fn, LLVMAttributeFunctionIndex, "target-cpu", 10);
		LLVMRemoveStringAttributeAtIndex(fn, LLVMAttributeFunctionIndex, "target-features", 15);
		add_attr(cg, fn, "target-cpu", arch);
	}
}

static LLVMValueRef add_global(struct amd_cg *cg, const char *name, LLVMTypeRef ty)
{
	LLVMValueRef g = LLVMAddGlobalInAddressSpace(cg->mod, ty, name, AMD_AS_GLOBAL);

	LLVMSetInitializer(g, LLVMConstNull(ty));
	LLVMSetAlignment(g, 8);
	/* exported for hipModuleGetGlobal, but never preempted: pc-relative
	 * addressing instead of a GOT load */
	LLVMSetVisibility(g, LLVMProtectedVisibility);
	return g;
}

static int emit_module(struct amd_cg *cg, const struct gbpf_prog_desc *const *progs, size_t n, int kernel,
		       const char *arch, LLVMTargetMachineRef tm, unsigned cov)
{
	LLVMTargetDataRef dl = LLVMCreateTargetDataLayout(tm);
	char *dls = LLVMCopyStringRepOfTargetData(dl);
	LLVMTypeRef pt[6];
	size_t i, maps = 1;
	int rc = 0;

	LLVMSetDataLayout(cg->mod, dls);
	LLVMDisposeMessage(dls);
	LLVMDisposeTargetData(dl);
	LLVMSetTarget(cg->mod, "amdgcn-amd-amdhsa");
	LLVMAddModuleFlag(cg->mod, LLVMModuleFlagBehaviorError, "amdhsa_code_object_version", 26,
			  LLVMValueAsMetadata(LLVMConstInt(cg->i32, cov * 100, 0)));
	for (i = 0; i < n; i++)
		if (progs[i]->map_cnt > maps)
			maps = progs[i]->map_cnt;
	cg->g_maps = add_global(cg, "__gbpf_maps", LLVMArrayType2(cg->i64, maps));
	cg->g_pid = add_global(cg, "__gbpf_pid_tgid", cg->i64);
	/* launch id and device of the current launch (GBPF_AMDGCN_LAUNCH_GLOBAL) */
	add_global(cg, GBPF_AMDGCN_LAUNCH_GLOBAL, LLVMArrayType2(cg->i64, 2));
	for (i = 0; i < 5; i++)
		pt[i] = cg->i64;
	pt[5] = cg->ptr;
	cg->sub_ty = LLVMFunctionType(cg->i64, pt, 6, 0);
	for (i = 0; i < (kernel ? 1 : n) && !rc; i++)
		rc = emit_program(cg, progs[i], i, kernel);
	if (rc)
		return rc;
	rc = link_runtime(cg);
	if (rc)
		return rc;
	set_cpu(cg, arch);
	return 0;
}

int gbpf_amdgcn_emit(const struct gbpf_prog_desc *const *progs, size_t n,
		     const struct gbpf_amdgcn_opts *opts, char **out, size_t *out_len, char *err,
		     size_t err_size)
{
	struct amd_cg cg = {0};
	const char *arch = opts && opts->arch ? opts->arch : "gfx942";
	uint32_t flags = opts ? opts->flags : 0, kind = opts ? opts->output : GBPF_AMDGCN_OUT_ASM;
	int opt = opts ? opts->opt_level : 2;
	unsigned cov = opts && opts->sz >= offsetof(struct gbpf_amdgcn_opts, cov) + sizeof(uint32_t) && opts->cov
			       ? opts->cov
			       : 5;
	char dummy[8], *msg = NULL;
	LLVMTargetRef target;
	LLVMTargetMachineRef tm = NULL;
	LLVMMemoryBufferRef mb = NULL;
	size_t i, len;
	int rc;

	if (!err || !err_size) {
		err = dummy;
		err_size = sizeof(dummy);
	}
	err[0] = 0;
	if (!progs || !n || !out) {
		snprintf(err, err_size, "amdgcn: no program to translate");
		return -EINVAL;
	}
	if (opts && opts->sz < offsetof(struct gbpf_amdgcn_opts, opt_level) + sizeof(int)) {
		snprintf(err, err_size, "amdgcn: options struct of %zu bytes is too small", opts->sz);
		return -EINVAL;
	}
	if (!gbpf_amdgcn_arch_supported(arch)) {
		snprintf(err, err_size, "amdgcn: architecture %s is not supported (gfx90a, gfx940-gfx942)", arch);
		return -ENOTSUP;
	}
	if (cov != 4 && cov != 5) {
		snprintf(err, err_size, "amdgcn: code object version %u is not supported (4, 5)", cov);
		return -ENOTSUP;
	}
	if (kind > GBPF_AMDGCN_OUT_IR) {
		snprintf(err, err_size, "amdgcn: unknown output kind %u", kind);
		return -EINVAL;
	}
	for (i = 0; i < n; i++) {
		rc = check_prog(progs[i], err, err_size);
		if (rc)
			return rc;
	}
	pthread_once(&amd_llvm_once, amd_llvm_init);
	if (LLVMGetTargetFromTriple("amdgcn-amd-amdhsa", &target, &msg)) {
		snprintf(err, err_size, "amdgcn: LLVM has no AMDGPU target: %s", msg ? msg : "?");
		LLVMDisposeMessage(msg);
		return -ENOTSUP;
	}
	tm = LLVMCreateTargetMachine(target, "amdgcn-amd-amdhsa", arch, "", LLVMCodeGenLevelDefault,
				     LLVMRelocPIC, LLVMCodeModelDefault);
	if (!tm) {
		snprintf(err, err_size, "amdgcn: no target machine for %s", arch);
		return -GBPF_ERRNO__JIT;
	}
	cg.ctx = LLVMContextCreate();
	cg.mod = LLVMModuleCreateWithNameInContext("gbpf", cg.ctx);
	cg.b = LLVMCreateBuilderInContext(cg.ctx);
	cg.err = err;
	cg.err_size = err_size;
	cg.i1 = LLVMInt1TypeInContext(cg.ctx);
	cg.i8 = LLVMInt8TypeInContext(cg.ctx);
	cg.i16 = LLVMInt16TypeInContext(cg.ctx);
	cg.i32 = LLVMInt32TypeInContext(cg.ctx);
	cg.i64 = LLVMInt64TypeInContext(cg.ctx);
	cg.void_t = LLVMVoidTypeInContext(cg.ctx);
	cg.ptr = LLVMPointerTypeInContext(cg.ctx, AMD_AS_FLAT);
	cg.pptr = LLVMPointerTypeInContext(cg.ctx, AMD_AS_FLAT);
	cg.ctx_reads = opts && opts->sz >= offsetof(struct gbpf_amdgcn_opts, ctx_reads) + sizeof(opts->ctx_reads)
			       ? opts->ctx_reads
			       : NULL;
	rc = emit_module(&cg, progs, n, flags & GBPF_AMDGCN_KERNEL, arch, tm, cov);
	if (rc)
		goto out;
	if (LLVMVerifyModule(cg.mod, LLVMReturnStatusAction, &msg)) {
		snprintf(err, err_size, "amdgcn: %s: generated IR is invalid: %.200s",
			 progs[0]->source_file ? progs[0]->source_file : "<memory>", msg ? msg : "?");
		rc = -GBPF_ERRNO__JIT;
		goto out;
	}
	LLVMDisposeMessage(msg);
	msg = NULL;
	if (opt) {
		LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
		LLVMErrorRef e = LLVMRunPasses(cg.mod, "default<O2>", tm, po);

		LLVMDisposePassBuilderOptions(po);
		if (e) {
			char *em = LLVMGetErrorMessage(e);

			snprintf(err, err_size, "amdgcn: LLVM passes failed: %s", em);
			LLVMDisposeErrorMessage(em);
			rc = -GBPF_ERRNO__JIT;
			goto out;
		}
	}
	if (kind == GBPF_AMDGCN_OUT_IR) {
		char *s = LLVMPrintModuleToString(cg.mod);

		len = strlen(s);
		*out = malloc(len + 1);
		if (*out)
			memcpy(*out, s, len + 1);
		LLVMDisposeMessage(s);
		rc = *out ? 0 : -ENOMEM;
		goto done;
	}
	if (LLVMTargetMachineEmitToMemoryBuffer(tm, cg.mod,
						kind == GBPF_AMDGCN_OUT_OBJ ? LLVMObjectFile : LLVMAssemblyFile,
						&msg, &mb)) {
		snprintf(err, err_size, "amdgcn: %s: code generation for %s failed: %.200s",
			 progs[0]->source_file ? progs[0]->source_file : "<memory>", arch, msg ? msg : "?");
		rc = -GBPF_ERRNO__JIT;
		goto out;
	}
	len = LLVMGetBufferSize(mb);
	*out = malloc(len + 1);
	if (!*out) {
		rc = -ENOMEM;
		goto out;
	}
	memcpy(*out, LLVMGetBufferStart(mb), len);
	(*out)[len] = 0;
	rc = 0;
done:
	if (!rc && out_len)
		*out_len = len;
out:
	LLVMDisposeMessage(msg);
	if (mb)
		LLVMDisposeMemoryBuffer(mb);
	LLVMDisposeBuilder(cg.b);
	LLVMDisposeModule(cg.mod);
	LLVMContextDispose(cg.ctx);
	LLVMDisposeTargetMachine(tm);
	return rc;
}
