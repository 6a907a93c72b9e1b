/* SPDX-License-Identifier: MIT */
/*
 * plugins/cuda/cuda_const_maps.h - setting GBPF_PTX_CONST_MAP_TABLE's copies
 * in a loaded module through a struct cuda_driver (`gbpf prog run`, and the
 * tests that load instrumented modules as the agent does; the agent sets
 * them through its interposed driver, cuda_agent.c).
 */
#ifndef GBPF_CUDA_CONST_MAPS_H
#define GBPF_CUDA_CONST_MAPS_H

#include <errno.h>
#include <stdlib.h>

#include "cuda_driver.h"
#include "maps/map.h"
#include "ptx_codegen.h"

/*
 * __gbpf_maps_const = @p dmaps (the maps' device addresses, as __gbpf_maps)
 * and __gbpf_slots_const = each map's copy count (gbpf_ptx_const_slots of its
 * header's nr_slots) in @p mod. 0, -ENOMEM, or -EIO when the module lacks
 * them or a copy fails.
 */
static inline int cuda_set_const_map_table(const struct cuda_driver *d, CUmodule mod, const CUdeviceptr *dmaps,
					   const struct gbpf_map_instance *maps, size_t map_cnt)
{
	uint32_t *slots = calloc(map_cnt ? map_cnt : 1, sizeof(*slots));
	CUdeviceptr sym;
	size_t sym_size, i;
	int rc = -EIO;

	if (!slots)
		return -ENOMEM;
	for (i = 0; i < map_cnt; i++)
		slots[i] = gbpf_ptx_const_slots(gbpf_map_nr_slots(&maps[i]));
	if (d->cuModuleGetGlobal(&sym, &sym_size, mod, "__gbpf_maps_const") == CUDA_SUCCESS &&
	    sym_size >= map_cnt * sizeof(*dmaps) &&
	    d->cuMemcpyHtoD(sym, dmaps, map_cnt * sizeof(*dmaps)) == CUDA_SUCCESS &&
	    d->cuModuleGetGlobal(&sym, &sym_size, mod, "__gbpf_slots_const") == CUDA_SUCCESS &&
	    sym_size >= map_cnt * sizeof(*slots) &&
	    d->cuMemcpyHtoD(sym, slots, map_cnt * sizeof(*slots)) == CUDA_SUCCESS)
		rc = 0;
	free(slots);
	return rc;
}

#endif
