/* SPDX-License-Identifier: MIT */
/*
 * plugins/spirv/spv_ring.c - ring buffer and perf event array producers
 * (docs/MAPS.md) in SPIR-V.
 */
#include <errno.h>

#include "spv_internal.h"

void spv_rt_emit_more(struct spv_gen *g, unsigned which)
{
	struct spv_mod *m = g->m;
	uint32_t params[4] = {m->t_u64, m->t_u64, m->t_u64, m->t_u64};
	uint32_t ft = spv_type_fn(m, m->t_u64, 4, params), i;

	if (spv_hash_emit(g, which))
		return;

	spv_op(m, SPV_SEC_FUNCS, SpvOpFunction, 4, m->t_u64, g->rt[which], SpvFunctionControlMaskNone,
	       ft);
	for (i = 0; i < 4; i++)
		spv_op(m, SPV_SEC_FUNCS, SpvOpFunctionParameter, 2, m->t_u64, spv_id(m));
	spv_label(m, 0);
	spv_ret(m, spv_c64(m, which == SPV_RT_RING_RESERVE ? 0 : (uint64_t)-(int64_t)ENOTSUP));
	spv_op(m, SPV_SEC_FUNCS, SpvOpFunctionEnd, 0);
}
