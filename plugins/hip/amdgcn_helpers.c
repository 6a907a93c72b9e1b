/* SPDX-License-Identifier: MIT */
/*
 * Helper calls of eBPF programs on AMDGCN: GPU ids and dimensions from the
 * workgroup/workitem intrinsics and the HSA dispatch packet, time from
 * s_memrealtime (constant 100 MHz clock), hardware ids from s_getreg
 * HW_ID, maps through the device runtime (device/amdgcn_rt.c).
 */
#include <errno.h>
#include <string.h>

#include <gbpf/helper_ids.h>

#include "amdgcn_codegen.h"
#include "amdgcn_internal.h"

/* s_memrealtime ticks at 100 MHz on gfx90a / gfx94x (hipDeviceAttributeWallClockRate). */
#define AMD_REALTIME_NS_PER_TICK 10

/* hwreg(HW_REG_HW_ID, 0, 32) immediate of s_getreg_b32 on GFX9. */
#define AMD_HWREG_HW_ID (4 | (0 << 6) | (31 << 11))

LLVMValueRef amd_intrinsic(struct amd_cg *cg, const char *name, LLVMTypeRef ret, LLVMTypeRef *params,
			   unsigned np, LLVMValueRef *args)
{
	LLVMTypeRef ty = LLVMFunctionType(ret, params, np, 0);
	LLVMValueRef fn = LLVMGetNamedFunction(cg->mod, name);

	if (!fn)
		fn = LLVMAddFunction(cg->mod, name, ty);
	return LLVMBuildCall2(cg->b, ty, fn, args, np, "");
}

/* Call runtime function name(u64 ...) -> u64 (void for commit). */
static LLVMValueRef rt_call(struct amd_cg *cg, const char *name, LLVMValueRef *args, unsigned n, int is_void)
{
	LLVMTypeRef pt[8];
	LLVMTypeRef ty;
	LLVMValueRef fn;

	for (unsigned i = 0; i < n; i++)
		pt[i] = cg->i64;
	ty = LLVMFunctionType(is_void ? cg->void_t : cg->i64, pt, n, 0);
	fn = LLVMGetNamedFunction(cg->mod, name);
	if (!fn)
		fn = LLVMAddFunction(cg->mod, name, ty);
	return LLVMBuildCall2(cg->b, ty, fn, args, n, "");
}

static LLVMValueRef id32(struct amd_cg *cg, const char *name)
{
	return LLVMBuildZExt(cg->b, amd_intrinsic(cg, name, cg->i32, NULL, 0, NULL), cg->i64, "");
}

static LLVMValueRef dispatch_field(struct amd_cg *cg, unsigned off, int is16)
{
	LLVMTypeRef cptr = LLVMPointerTypeInContext(cg->ctx, AMD_AS_CONST);
	LLVMValueRef dp = amd_intrinsic(cg, "llvm.amdgcn.dispatch.ptr", cptr, NULL, 0, NULL);
	LLVMValueRef idx = amd_const64(cg, off);
	LLVMValueRef v = LLVMBuildLoad2(cg->b, is16 ? cg->i16 : cg->i32,
					LLVMBuildGEP2(cg->b, cg->i8, dp, &idx, 1, ""), "");

	LLVMSetAlignment(v, is16 ? 2 : 4);
	return LLVMBuildZExt(cg->b, v, cg->i64, "");
}

static LLVMValueRef block_dim(struct amd_cg *cg, unsigned d)
{
	return dispatch_field(cg, 4 + 2 * d, 1);
}

static LLVMValueRef grid_size(struct amd_cg *cg, unsigned d)
{
	return dispatch_field(cg, 12 + 4 * d, 0);
}

/* Blocks in dimension d: ceil(grid work-items / workgroup size). */
static LLVMValueRef grid_dim(struct amd_cg *cg, unsigned d)
{
	LLVMValueRef bs = block_dim(cg, d);
	LLVMValueRef g = LLVMBuildAdd(cg->b, grid_size(cg, d), LLVMBuildSub(cg->b, bs, amd_const64(cg, 1), ""), "");

	return LLVMBuildUDiv(cg->b, g, LLVMBuildSelect(cg->b, LLVMBuildICmp(cg->b, LLVMIntEQ, bs,
									  amd_const64(cg, 0), ""),
						     amd_const64(cg, 1), bs, ""), "");
}

static LLVMValueRef realtime_ns(struct amd_cg *cg)
{
	LLVMValueRef t = amd_intrinsic(cg, "llvm.amdgcn.s.memrealtime", cg->i64, NULL, 0, NULL);

	return LLVMBuildMul(cg->b, t, amd_const64(cg, AMD_REALTIME_NS_PER_TICK), "");
}

static LLVMValueRef hw_id(struct amd_cg *cg)
{
	LLVMTypeRef pt[1] = {cg->i32};
	LLVMValueRef a = amd_const32(cg, AMD_HWREG_HW_ID);

	return LLVMBuildZExt(cg->b, amd_intrinsic(cg, "llvm.amdgcn.s.getreg", cg->i32, pt, 1, &a), cg->i64, "");
}

/* Compute unit: CU_ID [11:8], SH_ID [12], SE_ID [15:13] of HW_ID. */
static LLVMValueRef cu_id(struct amd_cg *cg)
{
	return LLVMBuildAnd(cg->b, LLVMBuildLShr(cg->b, hw_id(cg), amd_const64(cg, 8), ""), amd_const64(cg, 0xff),
			    "");
}

/* Wave slot on its CU: WAVE_ID [3:0], SIMD_ID [5:4]. */
static LLVMValueRef wave_id(struct amd_cg *cg)
{
	return LLVMBuildAnd(cg->b, hw_id(cg), amd_const64(cg, 0x3f), "");
}

static LLVMValueRef lane_id(struct amd_cg *cg)
{
	LLVMTypeRef pt[2] = {cg->i32, cg->i32};
	LLVMValueRef a[2] = {amd_const32(cg, 0xffffffffu), amd_const32(cg, 0)};
	LLVMValueRef lo = amd_intrinsic(cg, "llvm.amdgcn.mbcnt.lo", cg->i32, pt, 2, a);

	a[1] = lo;
	return LLVMBuildZExt(cg->b, amd_intrinsic(cg, "llvm.amdgcn.mbcnt.hi", cg->i32, pt, 2, a), cg->i64, "");
}

/* Linear id of the work-item in the grid (x fastest), as the PTX backend. */
static LLVMValueRef global_thread_id(struct amd_cg *cg)
{
	LLVMBuilderRef b = cg->b;
	LLVMValueRef bx = block_dim(cg, 0), by = block_dim(cg, 1), bz = block_dim(cg, 2);
	LLVMValueRef gx = grid_dim(cg, 0), gy = grid_dim(cg, 1);
	LLVMValueRef blk = LLVMBuildAdd(b, LLVMBuildMul(b, LLVMBuildAdd(b, LLVMBuildMul(b, id32(cg, "llvm.amdgcn.workgroup.id.z"), gy, ""),
								      id32(cg, "llvm.amdgcn.workgroup.id.y"), ""), gx, ""),
					id32(cg, "llvm.amdgcn.workgroup.id.x"), "");
	LLVMValueRef tid = LLVMBuildAdd(b, LLVMBuildMul(b, LLVMBuildAdd(b, LLVMBuildMul(b, id32(cg, "llvm.amdgcn.workitem.id.z"), by, ""),
								      id32(cg, "llvm.amdgcn.workitem.id.y"), ""), bx, ""),
					id32(cg, "llvm.amdgcn.workitem.id.x"), "");

	return LLVMBuildAdd(b, LLVMBuildMul(b, blk, LLVMBuildMul(b, LLVMBuildMul(b, bx, by, ""), bz, ""), ""), tid, "");
}

static void store3(struct amd_cg *cg, LLVMValueRef v[3])
{
	for (unsigned i = 0; i < 3; i++) {
		LLVMValueRef p = amd_flat_ptr(cg, amd_reg(cg, i + 1));

		LLVMSetAlignment(LLVMBuildStore(cg->b, v[i], p), 1);
	}
}

static const uint32_t amd_helpers[] = {
	GBPF_HELPER_MAP_LOOKUP_ELEM, GBPF_HELPER_MAP_UPDATE_ELEM, GBPF_HELPER_MAP_DELETE_ELEM,
	GBPF_HELPER_PROBE_READ, GBPF_HELPER_KTIME_GET_NS, GBPF_HELPER_TRACE_PRINTK,
	GBPF_HELPER_GET_PRANDOM_U32, GBPF_HELPER_GET_SMP_PROCESSOR_ID, GBPF_HELPER_GET_CURRENT_PID_TGID,
	GBPF_HELPER_PERF_EVENT_OUTPUT, GBPF_HELPER_PROBE_READ_USER, GBPF_HELPER_PROBE_READ_KERNEL,
	GBPF_HELPER_RINGBUF_OUTPUT, GBPF_HELPER_RINGBUF_RESERVE, GBPF_HELPER_RINGBUF_SUBMIT,
	GBPF_HELPER_RINGBUF_DISCARD, GBPF_HELPER_KTIME_GET_BOOT_NS, GBPF_HELPER_GPU_PUTS,
	GBPF_HELPER_GPU_GLOBALTIMER, GBPF_HELPER_GPU_BLOCK_IDX, GBPF_HELPER_GPU_BLOCK_DIM,
	GBPF_HELPER_GPU_THREAD_IDX, GBPF_HELPER_GPU_MEMBAR, GBPF_HELPER_GPU_EXIT,
	GBPF_HELPER_GPU_GRID_DIM, GBPF_HELPER_GPU_SM_ID, GBPF_HELPER_GPU_WARP_ID, GBPF_HELPER_GPU_LANE_ID,
	GBPF_HELPER_GPU_GLOBAL_THREAD_ID, GBPF_HELPER_GPU_THREAD_COUNT, GBPF_HELPER_LOG2,
};

int amd_helper_known(uint32_t id)
{
	for (size_t i = 0; i < sizeof(amd_helpers) / sizeof(amd_helpers[0]); i++)
		if (amd_helpers[i] == id)
			return 1;
	return 0;
}

int gbpf_amdgcn_helper_supported(uint32_t id)
{
	return amd_helper_known(id);
}

int amd_emit_helper(struct amd_cg *cg, size_t pc, uint32_t id)
{
	LLVMBuilderRef b = cg->b;
	LLVMValueRef a[6], v[3], r0 = NULL;
	unsigned i;

	for (i = 0; i < 5; i++)
		a[i] = NULL;
	switch (id) {
	case GBPF_HELPER_MAP_LOOKUP_ELEM:
		a[0] = amd_reg(cg, 1);
		a[1] = amd_reg(cg, 2);
		a[2] = cu_id(cg);
		a[3] = global_thread_id(cg);
		r0 = rt_call(cg, "__gbpf_rt_map_lookup", a, 4, 0);
		break;
	case GBPF_HELPER_MAP_UPDATE_ELEM:
		for (i = 0; i < 4; i++)
			a[i] = amd_reg(cg, i + 1);
		a[4] = cu_id(cg);
		a[5] = global_thread_id(cg);
		r0 = rt_call(cg, "__gbpf_rt_map_update", a, 6, 0);
		break;
	case GBPF_HELPER_MAP_DELETE_ELEM:
		a[0] = amd_reg(cg, 1);
		a[1] = amd_reg(cg, 2);
		r0 = rt_call(cg, "__gbpf_rt_map_delete", a, 2, 0);
		break;
	case GBPF_HELPER_PROBE_READ:
	case GBPF_HELPER_PROBE_READ_USER:
	case GBPF_HELPER_PROBE_READ_KERNEL:
		/* (dst, size, src): device memory is flat; the verifier bounds dst */
		a[0] = amd_reg(cg, 1);
		a[1] = amd_reg(cg, 3);
		a[2] = amd_reg(cg, 2);
		r0 = rt_call(cg, "__gbpf_rt_memcpy", a, 3, 0);
		break;
	case GBPF_HELPER_KTIME_GET_NS:
	case GBPF_HELPER_KTIME_GET_BOOT_NS:
	case GBPF_HELPER_GPU_GLOBALTIMER:
		r0 = realtime_ns(cg);
		break;
	case GBPF_HELPER_TRACE_PRINTK:
	case GBPF_HELPER_GPU_PUTS:
		/* No host drain of device text on HIP yet: the call is a no-op
		 * that reports it (the README says so). */
		r0 = amd_const64(cg, (uint64_t)(int64_t)-EOPNOTSUPP);
		break;
	case GBPF_HELPER_GET_PRANDOM_U32: {
		/* xorshift-multiply of the clock and the thread id: not
		 * cryptographic, as the Linux helper */
		LLVMValueRef x = LLVMBuildXor(b, LLVMBuildAdd(b, amd_intrinsic(cg, "llvm.amdgcn.s.memrealtime", cg->i64, NULL, 0, NULL),
							     amd_intrinsic(cg, "llvm.amdgcn.s.memtime", cg->i64, NULL, 0, NULL), ""),
					      LLVMBuildMul(b, global_thread_id(cg), amd_const64(cg, 0x9e3779b97f4a7c15ull), ""), "");

		x = LLVMBuildXor(b, x, LLVMBuildLShr(b, x, amd_const64(cg, 33), ""), "");
		x = LLVMBuildMul(b, x, amd_const64(cg, 0xff51afd7ed558ccdull), "");
		x = LLVMBuildXor(b, x, LLVMBuildLShr(b, x, amd_const64(cg, 33), ""), "");
		r0 = LLVMBuildAnd(b, x, amd_const64(cg, 0xffffffffull), "");
		break;
	}
	case GBPF_HELPER_GET_SMP_PROCESSOR_ID:
	case GBPF_HELPER_GPU_SM_ID:
		r0 = cu_id(cg);
		break;
	case GBPF_HELPER_GET_CURRENT_PID_TGID:
		r0 = LLVMBuildLoad2(b, cg->i64, cg->g_pid, "");
		LLVMSetAlignment(r0, 8);
		break;
	case GBPF_HELPER_PERF_EVENT_OUTPUT:
		a[0] = amd_reg(cg, 2);
		a[1] = amd_reg(cg, 3);
		a[2] = amd_reg(cg, 4);
		a[3] = amd_reg(cg, 5);
		a[4] = cu_id(cg);
		r0 = rt_call(cg, "__gbpf_rt_perf_output", a, 5, 0);
		break;
	case GBPF_HELPER_RINGBUF_OUTPUT:
		for (i = 0; i < 4; i++)
			a[i] = amd_reg(cg, i + 1);
		a[4] = cu_id(cg);
		r0 = rt_call(cg, "__gbpf_rt_ringbuf_output", a, 5, 0);
		break;
	case GBPF_HELPER_RINGBUF_RESERVE:
		for (i = 0; i < 3; i++)
			a[i] = amd_reg(cg, i + 1);
		a[3] = cu_id(cg);
		r0 = rt_call(cg, "__gbpf_rt_ringbuf_reserve", a, 4, 0);
		break;
	case GBPF_HELPER_RINGBUF_SUBMIT:
	case GBPF_HELPER_RINGBUF_DISCARD:
		a[0] = amd_reg(cg, 1);
		a[1] = amd_reg(cg, 2);
		a[2] = amd_const64(cg, id == GBPF_HELPER_RINGBUF_DISCARD);
		rt_call(cg, "__gbpf_rt_ringbuf_commit", a, 3, 1);
		r0 = amd_const64(cg, 0);
		break;
	case GBPF_HELPER_GPU_BLOCK_IDX:
		v[0] = id32(cg, "llvm.amdgcn.workgroup.id.x");
		v[1] = id32(cg, "llvm.amdgcn.workgroup.id.y");
		v[2] = id32(cg, "llvm.amdgcn.workgroup.id.z");
		store3(cg, v);
		r0 = amd_const64(cg, 0);
		break;
	case GBPF_HELPER_GPU_THREAD_IDX:
		v[0] = id32(cg, "llvm.amdgcn.workitem.id.x");
		v[1] = id32(cg, "llvm.amdgcn.workitem.id.y");
		v[2] = id32(cg, "llvm.amdgcn.workitem.id.z");
		store3(cg, v);
		r0 = amd_const64(cg, 0);
		break;
	case GBPF_HELPER_GPU_BLOCK_DIM:
	case GBPF_HELPER_GPU_GRID_DIM:
		for (i = 0; i < 3; i++)
			v[i] = id == GBPF_HELPER_GPU_BLOCK_DIM ? block_dim(cg, i) : grid_dim(cg, i);
		store3(cg, v);
		r0 = amd_const64(cg, 0);
		break;
	case GBPF_HELPER_GPU_MEMBAR:
		LLVMBuildFence(b, LLVMAtomicOrderingSequentiallyConsistent, 0, "");
		r0 = amd_const64(cg, 0);
		break;
	case GBPF_HELPER_GPU_EXIT:
		/* ends the probe: flag the unwinding and return 0 from here */
		LLVMBuildStore(b, LLVMConstInt(cg->i8, 1, 0), cg->exited);
		amd_set_reg(cg, 0, amd_const64(cg, 0));
		amd_ret_from_func(cg);
		LLVMPositionBuilderAtEnd(b, amd_new_bb(cg, "after_exit"));
		return 0;
	case GBPF_HELPER_GPU_WARP_ID:
		r0 = wave_id(cg);
		break;
	case GBPF_HELPER_GPU_LANE_ID:
		r0 = lane_id(cg);
		break;
	case GBPF_HELPER_GPU_GLOBAL_THREAD_ID:
		r0 = global_thread_id(cg);
		break;
	case GBPF_HELPER_GPU_THREAD_COUNT:
		r0 = LLVMBuildMul(b, LLVMBuildMul(b, grid_size(cg, 0), grid_size(cg, 1), ""), grid_size(cg, 2), "");
		break;
	case GBPF_HELPER_LOG2: {
		/* 63 - ctlz(v) (s_flbit / v_ffbh), 0 for 0 as for 1 */
		LLVMTypeRef pt[2] = {cg->i64, cg->i1};
		LLVMValueRef x = amd_reg(cg, 1), args[2] = {x, LLVMConstInt(cg->i1, 0, 0)};
		LLVMValueRef lz = amd_intrinsic(cg, "llvm.ctlz.i64", cg->i64, pt, 2, args);

		r0 = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntEQ, x, amd_const64(cg, 0), ""), amd_const64(cg, 0),
				     LLVMBuildSub(b, amd_const64(cg, 63), lz, ""), "");
		break;
	}
	default:
		return amd_fail(cg, pc, -ENOTSUP, "helper %u is not available on AMD GPUs", id);
	}
	amd_set_reg(cg, 0, r0);
	return 0;
}

/* callx: a dispatch over every helper and every subprogram whose address
 * the program can take (tagged values from lddw), as the PTX backend. */
int amd_emit_callx(struct amd_cg *cg, size_t pc, unsigned reg)
{
	LLVMValueRef target = amd_reg(cg, reg), sw;
	LLVMBasicBlockRef done = amd_new_bb(cg, "callx_done"), bad = amd_new_bb(cg, "callx_bad");
	size_t i, cases = sizeof(amd_helpers) / sizeof(amd_helpers[0]) + cg->nfuncs;
	int rc;

	sw = LLVMBuildSwitch(cg->b, target, bad, (unsigned)cases);
	for (i = 0; i < sizeof(amd_helpers) / sizeof(amd_helpers[0]); i++) {
		LLVMBasicBlockRef bb = amd_new_bb(cg, "callx_helper");

		LLVMAddCase(sw, amd_const64(cg, amd_helpers[i]), bb);
		LLVMPositionBuilderAtEnd(cg->b, bb);
		rc = amd_emit_helper(cg, pc, amd_helpers[i]);
		if (rc)
			return rc;
		LLVMBuildBr(cg->b, done);
	}
	for (i = 1; i < cg->nfuncs; i++) {
		LLVMBasicBlockRef bb = amd_new_bb(cg, "callx_func");

		LLVMAddCase(sw, amd_const64(cg, GBPF_AMDGCN_FUNC_TAG | i), bb);
		LLVMPositionBuilderAtEnd(cg->b, bb);
		amd_call_local(cg, i);
		LLVMBuildBr(cg->b, done);
	}
	LLVMPositionBuilderAtEnd(cg->b, bad);
	amd_set_reg(cg, 0, amd_const64(cg, (uint64_t)(int64_t)-EINVAL));
	LLVMBuildBr(cg->b, done);
	LLVMPositionBuilderAtEnd(cg->b, done);
	return 0;
}
