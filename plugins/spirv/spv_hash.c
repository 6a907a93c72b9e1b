/* SPDX-License-Identifier: MIT */
/*
 * plugins/spirv/spv_hash.c - hash map operations (docs/MAPS.md) in SPIR-V.
 */
#include <errno.h>

#include "spv_internal.h"

uint32_t spv_hash_lookup(struct spv_gen *g, uint32_t map, uint32_t key)
{
	(void)map, (void)key;
	return spv_c64(g->m, 0);
}

uint32_t spv_hash_update(struct spv_gen *g, uint32_t map, uint32_t key, uint32_t val,
			 uint32_t flags)
{
	(void)map, (void)key, (void)val, (void)flags;
	return spv_c64(g->m, (uint64_t)-(int64_t)ENOTSUP);
}

uint32_t spv_hash_delete(struct spv_gen *g, uint32_t map, uint32_t key)
{
	(void)map, (void)key;
	return spv_c64(g->m, (uint64_t)-(int64_t)ENOTSUP);
}
