/* SPDX-License-Identifier: MIT */
/*
 * plugins/cuda/cuda_agent_regcap.h - the driver side of keeping an
 * instrumented kernel's occupancy (internal to the cuda agent; the
 * arithmetic and why: cuda_agent_occupancy.h).
 */
#ifndef GBPF_CUDA_AGENT_REGCAP_H
#define GBPF_CUDA_AGENT_REGCAP_H

#include <stddef.h>

#include "plugins/cuda/intercept/cuda_types.h"

/* CUfunction_attribute values used (cuda.h is not available at build time). */
#define CA_FUNC_ATTR_LOCAL_SIZE 3 /* CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES */
#define CA_FUNC_ATTR_NUM_REGS 4   /* CU_FUNC_ATTRIBUTE_NUM_REGS */

/** CUfunction_attribute @p attrib of @p fn, a CUfunction or a CUkernel handle; 0 or -ENOENT. */
int ca_func_attr(const void *fn, int attrib, int *v);

/**
 * Kernel @p name of the instrumented module *@p mod (function *@p fn, built
 * from @p ptx, *@p regs registers) kept at the blocks per SM of the
 * application's kernel (@p orig_regs) at @p threads a block, where a small
 * register cap does it without a spill: JIT again with the cap and take
 * that module (*@p mod, *@p fn, *@p regs replaced, the first unloaded)
 * when its thread's local memory did not grow. @p note receives what was
 * done (empty: nothing to do). GBPF_CUDA_NO_REG_CAP turns it off
 * (comparisons).
 */
void ca_keep_occupancy(CUmodule *mod, CUfunction *fn, const char *name, unsigned threads, const char *ptx,
		       int orig_regs, int *regs, char *note, size_t note_size);

#endif /* GBPF_CUDA_AGENT_REGCAP_H */
