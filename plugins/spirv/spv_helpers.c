/* SPDX-License-Identifier: MIT */
/*
 * plugins/spirv/spv_helpers.c - helper calls in SPIR-V (same numbers and
 * meaning as the other backends, include/gbpf/helper_ids.h).
 *
 * GPU helpers map to OpenCL built-ins: block = work-group (WorkgroupId),
 * block dim = WorkgroupSize, thread = LocalInvocationId, grid =
 * NumWorkgroups. OpenCL has no SM id, so "SM id" is the linear work-group
 * id modulo the compute units (ctx table nr_slots): work-groups run whole
 * on one compute unit, so this keeps per-SM maps' contention property.
 * Warp id and lane id use a SIMT width of 32 over the linear local id
 * (sub-group built-ins need cl_khr_subgroups, which PoCL 3.1 through
 * llvm-spirv does not offer for every device).
 */
#include <errno.h>

#include <gbpf/helper_ids.h>
#include <gbpf/insn.h>

#include "spv_internal.h"

/* Component @p c of a v3 builtin, as ulong. */
static uint32_t builtin3(struct spv_mod *m, uint32_t builtin, uint32_t c)
{
	uint32_t v = spv_load(m, m->t_v3u64, spv_builtin(m, builtin, 1), 0), id = spv_id(m);

	spv_op(m, SPV_SEC_FUNCS, SpvOpCompositeExtract, 4, m->t_u64, id, v, c);
	return id;
}

/* x + y * X + z * X * Y of a builtin with sizes @p size_builtin. */
static uint32_t linear3(struct spv_mod *m, uint32_t idx_bi, uint32_t size_bi)
{
	uint32_t x = builtin3(m, idx_bi, 0), y = builtin3(m, idx_bi, 1), z = builtin3(m, idx_bi, 2);
	uint32_t sx = builtin3(m, size_bi, 0), sy = builtin3(m, size_bi, 1);
	uint32_t t = m->t_u64;

	z = spv_bin(m, SpvOpIMul, t, z, sy);
	z = spv_bin(m, SpvOpIAdd, t, z, y);
	z = spv_bin(m, SpvOpIMul, t, z, sx);
	return spv_bin(m, SpvOpIAdd, t, z, x);
}

uint32_t spv_global_id(struct spv_mod *m)
{
	return linear3(m, SpvBuiltInGlobalInvocationId, SpvBuiltInGlobalSize);
}

static uint32_t local_linear(struct spv_mod *m)
{
	return linear3(m, SpvBuiltInLocalInvocationId, SpvBuiltInWorkgroupSize);
}

uint32_t spv_slot_id(struct spv_gen *g)
{
	struct spv_mod *m = g->m;
	uint32_t grp = linear3(m, SpvBuiltInWorkgroupId, SpvBuiltInNumWorkgroups);
	uint32_t ns = g->ctx_table ? spv_ld64(m, spv_table(g),
					      offsetof(struct gbpf_spirv_ctx_table, nr_slots))
				   : spv_c64(m, 1);
	uint32_t z = spv_bin(m, SpvOpIEqual, m->t_bool, ns, spv_c64(m, 0));

	ns = spv_select(m, m->t_u64, z, spv_c64(m, 1), ns);
	return spv_bin(m, SpvOpUMod, m->t_u64, grp, ns);
}

static void store3(struct spv_cg *cg, uint32_t builtin)
{
	struct spv_mod *m = cg->m;
	unsigned i;

	for (i = 0; i < 3; i++) {
		uint32_t p = spv_rd(cg, i + 1);

		spv_store(m, spv_addr_ptr(m, m->t_u64, p), builtin3(m, builtin, i), 8);
	}
}

int gbpf_spirv_helper_supported(uint32_t id)
{
	switch (id) {
	case GBPF_HELPER_MAP_LOOKUP_ELEM:
	case GBPF_HELPER_MAP_UPDATE_ELEM:
	case GBPF_HELPER_MAP_DELETE_ELEM:
	case GBPF_HELPER_PROBE_READ:
	case GBPF_HELPER_PROBE_READ_USER:
	case GBPF_HELPER_PROBE_READ_KERNEL:
	case GBPF_HELPER_KTIME_GET_NS:
	case GBPF_HELPER_KTIME_GET_BOOT_NS:
	case GBPF_HELPER_TRACE_PRINTK:
	case GBPF_HELPER_GET_PRANDOM_U32:
	case GBPF_HELPER_GET_SMP_PROCESSOR_ID:
	case GBPF_HELPER_GET_CURRENT_PID_TGID:
	case GBPF_HELPER_PERF_EVENT_OUTPUT:
	case GBPF_HELPER_RINGBUF_OUTPUT:
	case GBPF_HELPER_RINGBUF_RESERVE:
	case GBPF_HELPER_RINGBUF_SUBMIT:
	case GBPF_HELPER_RINGBUF_DISCARD:
	case GBPF_HELPER_GPU_PUTS:
	case GBPF_HELPER_GPU_GLOBALTIMER:
	case GBPF_HELPER_GPU_BLOCK_IDX:
	case GBPF_HELPER_GPU_BLOCK_DIM:
	case GBPF_HELPER_GPU_THREAD_IDX:
	case GBPF_HELPER_GPU_MEMBAR:
	case GBPF_HELPER_GPU_EXIT:
	case GBPF_HELPER_GPU_GRID_DIM:
	case GBPF_HELPER_GPU_SM_ID:
	case GBPF_HELPER_GPU_WARP_ID:
	case GBPF_HELPER_GPU_LANE_ID:
	case GBPF_HELPER_GPU_GLOBAL_THREAD_ID:
	case GBPF_HELPER_GPU_THREAD_COUNT:
	case GBPF_HELPER_LOG2:
		return 1;
	default:
		return 0;
	}
}

static uint32_t call_rt(struct spv_cg *cg, enum spv_rt which, uint32_t a, uint32_t b, uint32_t c,
			uint32_t d)
{
	struct spv_mod *m = cg->m;
	uint32_t f = spv_rt_get(cg->g, which), id = spv_id(m);

	spv_op(m, SPV_SEC_FUNCS, SpvOpFunctionCall, 7, m->t_u64, id, f, a, b, c, d);
	return id;
}

/*
 * floor(log2(v)), 0 for 0: a binary search of selects (core SPIR-V has no
 * count of leading zeros; OpenCL.std's clz would tie the module to one
 * extended instruction set), six steps without a branch.
 */
static uint32_t spv_log2(struct spv_mod *m, uint32_t v)
{
	uint32_t r = spv_c64(m, 0);

	for (unsigned k = 32; k; k >>= 1) {
		uint32_t hi = spv_bin(m, SpvOpShiftRightLogical, m->t_u64, v, spv_c64(m, k));
		uint32_t set = spv_bin(m, SpvOpINotEqual, m->t_bool, hi, spv_c64(m, 0));

		v = spv_select(m, m->t_u64, set, hi, v);
		r = spv_select(m, m->t_u64, set, spv_bin(m, SpvOpIAdd, m->t_u64, r, spv_c64(m, k)), r);
	}
	return r;
}

/* splitmix64 finaliser: spreads a counter into 32 random-looking bits */
static uint32_t mix64(struct spv_mod *m, uint32_t x)
{
	uint32_t t = m->t_u64;

	x = spv_bin(m, SpvOpBitwiseXor, t, x, spv_bin(m, SpvOpShiftRightLogical, t, x, spv_c64(m, 30)));
	x = spv_bin(m, SpvOpIMul, t, x, spv_c64(m, 0xbf58476d1ce4e5b9ull));
	x = spv_bin(m, SpvOpBitwiseXor, t, x, spv_bin(m, SpvOpShiftRightLogical, t, x, spv_c64(m, 27)));
	x = spv_bin(m, SpvOpIMul, t, x, spv_c64(m, 0x94d049bb133111ebull));
	return spv_bin(m, SpvOpBitwiseXor, t, x,
		       spv_bin(m, SpvOpShiftRightLogical, t, x, spv_c64(m, 31)));
}

int spv_emit_helper(struct spv_cg *cg, size_t pc, int *terminated)
{
	return spv_emit_helper_id(cg, pc, (uint32_t)cg->insns[pc].imm, terminated);
}

int spv_emit_helper_id(struct spv_cg *cg, size_t pc, uint32_t id, int *terminated)
{
	struct spv_mod *m = cg->m;
	uint32_t r = 0, a[5], z = spv_c64(m, 0);
	unsigned i;

	*terminated = 0;
	if (!gbpf_spirv_helper_supported(id))
		return spv_fail(cg, pc, -ENOTSUP, "helper %u is not supported on SPIR-V", id);
	/* a work-item's own values (GPU_THREAD_LOCAL): in its frame, never through the map's block */
	{
		int tl = spv_tls_emit_call(cg, pc, id, &r);

		if (tl < 0)
			return tl;
		if (tl) {
			spv_wr(cg, 0, r);
			return 0;
		}
	}
	for (i = 0; i < 5; i++)
		a[i] = 0;
	switch (id) {
	case GBPF_HELPER_MAP_LOOKUP_ELEM:
		r = call_rt(cg, SPV_RT_MAP_LOOKUP, spv_rd(cg, 1), spv_rd(cg, 2), z, z);
		break;
	case GBPF_HELPER_MAP_UPDATE_ELEM:
		r = call_rt(cg, SPV_RT_MAP_UPDATE, spv_rd(cg, 1), spv_rd(cg, 2), spv_rd(cg, 3),
			    spv_rd(cg, 4));
		break;
	case GBPF_HELPER_MAP_DELETE_ELEM:
		r = call_rt(cg, SPV_RT_MAP_DELETE, spv_rd(cg, 1), spv_rd(cg, 2), z, z);
		break;
	case GBPF_HELPER_RINGBUF_OUTPUT:
		r = call_rt(cg, SPV_RT_RING_OUTPUT, spv_rd(cg, 1), spv_rd(cg, 2), spv_rd(cg, 3),
			    spv_rd(cg, 4));
		break;
	case GBPF_HELPER_RINGBUF_RESERVE:
		r = call_rt(cg, SPV_RT_RING_RESERVE, spv_rd(cg, 1), spv_rd(cg, 2), spv_rd(cg, 3), z);
		break;
	case GBPF_HELPER_RINGBUF_SUBMIT:
	case GBPF_HELPER_RINGBUF_DISCARD:
		call_rt(cg, SPV_RT_RING_COMMIT, spv_rd(cg, 1),
			spv_c64(m, id == GBPF_HELPER_RINGBUF_DISCARD), z, z);
		r = z;
		break;
	case GBPF_HELPER_PERF_EVENT_OUTPUT:
		/* (ctx, map, flags, data, size) */
		r = call_rt(cg, SPV_RT_PERF_OUTPUT, spv_rd(cg, 2), spv_rd(cg, 3), spv_rd(cg, 4),
			    spv_rd(cg, 5));
		break;
	case GBPF_HELPER_PROBE_READ:
	case GBPF_HELPER_PROBE_READ_USER:
	case GBPF_HELPER_PROBE_READ_KERNEL:
		/* (dst, size, src): device memory needs no fault handling here */
		r = call_rt(cg, SPV_RT_MEMCPY, spv_rd(cg, 1), spv_rd(cg, 3), spv_rd(cg, 2), z);
		break;
	case GBPF_HELPER_KTIME_GET_NS:
	case GBPF_HELPER_KTIME_GET_BOOT_NS:
	case GBPF_HELPER_GPU_GLOBALTIMER:
		r = call_rt(cg, SPV_RT_TIMER, z, z, z, z);
		break;
	case GBPF_HELPER_GET_PRANDOM_U32: {
		uint32_t tk = spv_atomic(m, SpvOpAtomicIAdd, 64,
					 spv_addk(m, spv_table(cg->g),
						  offsetof(struct gbpf_spirv_ctx_table, ticks)),
					 spv_c64(m, 1));

		r = mix64(m, spv_bin(m, SpvOpBitwiseXor, m->t_u64, tk,
				     spv_bin(m, SpvOpShiftLeftLogical, m->t_u64, spv_global_id(m),
					     spv_c64(m, 32))));
		r = spv_bin(m, SpvOpBitwiseAnd, m->t_u64, r, spv_c64(m, 0xffffffffull));
		break;
	}
	case GBPF_HELPER_GET_CURRENT_PID_TGID:
		r = spv_ld64(m, spv_table(cg->g), offsetof(struct gbpf_spirv_ctx_table, pid_tgid));
		break;
	case GBPF_HELPER_TRACE_PRINTK:
	case GBPF_HELPER_GPU_PUTS:
		r = spv_printq_call(cg, id);
		break;
	case GBPF_HELPER_GPU_BLOCK_IDX:
		store3(cg, SpvBuiltInWorkgroupId);
		r = z;
		break;
	case GBPF_HELPER_GPU_BLOCK_DIM:
		store3(cg, SpvBuiltInWorkgroupSize);
		r = z;
		break;
	case GBPF_HELPER_GPU_THREAD_IDX:
		store3(cg, SpvBuiltInLocalInvocationId);
		r = z;
		break;
	case GBPF_HELPER_GPU_GRID_DIM:
		store3(cg, SpvBuiltInNumWorkgroups);
		r = z;
		break;
	case GBPF_HELPER_GPU_MEMBAR:
		spv_fence(m, cg->g->ctx_table ? cg->g->ctx_table + offsetof(struct gbpf_spirv_ctx_table, reserved) : 0);
		r = z;
		break;
	case GBPF_HELPER_GPU_EXIT:
		spv_store(m, cg->exit_flag, spv_c32(m, 1), 4);
		spv_op(m, SPV_SEC_FUNCS, SpvOpReturnValue, 1, spv_rd(cg, 0));
		*terminated = 1;
		return 0;
	case GBPF_HELPER_GET_SMP_PROCESSOR_ID:
	case GBPF_HELPER_GPU_SM_ID:
		r = spv_slot_id(cg->g);
		break;
	case GBPF_HELPER_GPU_WARP_ID:
		r = spv_bin(m, SpvOpShiftRightLogical, m->t_u64, local_linear(m), spv_c64(m, 5));
		break;
	case GBPF_HELPER_GPU_LANE_ID:
		r = spv_bin(m, SpvOpBitwiseAnd, m->t_u64, local_linear(m), spv_c64(m, 31));
		break;
	case GBPF_HELPER_GPU_GLOBAL_THREAD_ID:
		r = spv_global_id(m);
		break;
	case GBPF_HELPER_GPU_THREAD_COUNT: {
		uint32_t x = builtin3(m, SpvBuiltInGlobalSize, 0), y = builtin3(m, SpvBuiltInGlobalSize, 1);

		r = spv_bin(m, SpvOpIMul, m->t_u64, spv_bin(m, SpvOpIMul, m->t_u64, x, y),
			    builtin3(m, SpvBuiltInGlobalSize, 2));
		break;
	}
	case GBPF_HELPER_LOG2:
		r = spv_log2(m, spv_rd(cg, 1));
		break;
	default:
		return spv_fail(cg, pc, -ENOTSUP, "helper %u is not supported on SPIR-V", id);
	}
	(void)a;
	spv_wr(cg, 0, r);
	return 0;
}
