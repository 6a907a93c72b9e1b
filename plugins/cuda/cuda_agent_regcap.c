// SPDX-License-Identifier: MIT
/* plugins/cuda/cuda_agent_regcap.c - see cuda_agent_regcap.h */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "cuda_agent_occupancy.h"
#include "cuda_agent_regcap.h"
#include "plugins/cuda/intercept/intercept.h"

/* CUjit_option: the cap on registers a thread */
#define CA_JIT_MAX_REGISTERS 0

int ca_func_attr(const void *fn, int attrib, int *v)
{
	typedef CUresult (*func_attr_fn)(int *v, int attrib, const void *fn);
	typedef CUresult (*kernel_attr_fn)(int *v, int attrib, const void *kernel, CUdevice dev);
	typedef CUresult (*ctx_dev_fn)(CUdevice *dev);
	func_attr_fn fattr = (func_attr_fn)gbpf_cu_real_proc("cuFuncGetAttribute", 2020, 0);
	kernel_attr_fn kattr = (kernel_attr_fn)gbpf_cu_real_proc("cuKernelGetAttribute", 12000, 0);
	ctx_dev_fn ctx_dev = (ctx_dev_fn)gbpf_cu_real_proc("cuCtxGetDevice", 2000, 0);
	CUdevice dev;

	if (fattr && fattr(v, attrib, fn) == GBPF_CUDA_SUCCESS)
		return 0;
	if (kattr && ctx_dev && ctx_dev(&dev) == GBPF_CUDA_SUCCESS && kattr(v, attrib, fn, dev) == GBPF_CUDA_SUCCESS)
		return 0;
	return -ENOENT;
}

/*
 * The blocks per SM: see cuda_agent_regcap.h. A cap far below what ptxas
 * wants spills (cuda_agent_occupancy.h), so only the small trim
 * ca_occ_cap allows is tried, and kept only without a spill.
 */
void ca_keep_occupancy(CUmodule *mod, CUfunction *fn, const char *name, unsigned threads, const char *ptx,
		       int orig_regs, int *regs, char *note, size_t note_size)
{
	typedef CUresult (*load_fn)(CUmodule *, const void *, unsigned int, int *, void **);
	typedef CUresult (*get_function_fn)(CUfunction *, CUmodule, const char *);
	typedef CUresult (*unload_fn)(CUmodule);
	load_fn load = (load_fn)gbpf_cu_real_proc("cuModuleLoadDataEx", 2010, 0);
	get_function_fn getf = (get_function_fn)gbpf_cu_real_proc("cuModuleGetFunction", 2000, 0);
	unload_fn unload = (unload_fn)gbpf_cu_real_proc("cuModuleUnload", 2000, 0);
	int cap = getenv("GBPF_CUDA_NO_REG_CAP") ? 0 : ca_occ_cap(orig_regs, *regs, threads);
	int jo[1] = {CA_JIT_MAX_REGISTERS}, capped = 0, local = 0, capped_local = 0;
	void *jv[1] = {(void *)(uintptr_t)cap};
	CUmodule capped_mod = NULL;
	CUfunction capped_fn = NULL;

	if (!cap || !load || !getf || !unload)
		return;
	if (load(&capped_mod, ptx, 1, jo, jv) != GBPF_CUDA_SUCCESS) {
		snprintf(note, note_size, "; capping its %d registers at %d failed to JIT: kept", *regs, cap);
		return;
	}
	if (getf(&capped_fn, capped_mod, name) != GBPF_CUDA_SUCCESS ||
	    ca_func_attr(capped_fn, CA_FUNC_ATTR_NUM_REGS, &capped) ||
	    ca_func_attr(*fn, CA_FUNC_ATTR_LOCAL_SIZE, &local) ||
	    ca_func_attr(capped_fn, CA_FUNC_ATTR_LOCAL_SIZE, &capped_local) || capped > cap || capped_local > local) {
		unload(capped_mod);
		snprintf(note, note_size, "; capped at %d registers it spilled (local memory %d -> %d bytes): kept %d",
			 cap, local, capped_local, *regs);
		return;
	}
	unload(*mod);
	*mod = capped_mod;
	*fn = capped_fn;
	snprintf(note, note_size, "; %d registers capped at %d without a spill: %u blocks of %u threads an SM, as "
		 "uninstrumented (%u at %d)", *regs, cap, ca_occ_blocks(capped, threads), threads,
		 ca_occ_blocks(*regs, threads), *regs);
	*regs = capped;
}
