/* SPDX-License-Identifier: MIT */
/*
 * tests/intercept/unit_real.c - the "real driver" of test_unit.c. It lives
 * in its own shared object because the interception layer never wraps
 * functions of its own object (its exports).
 */
#include <stdint.h>
#include <string.h>

#include "tests/intercept/unit_real.h"


struct unit_launch got_launch, got_launch_ptsz;
CUDA_KERNEL_NODE_PARAMS_v2 got_node;
int attr_calls[16], attr_values[16], n_attr_calls;
static const CUfunction rejected_fn = (CUfunction)(uintptr_t)0xdead;

CUresult real_launch(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
			    unsigned int bx, unsigned int by, unsigned int bz, unsigned int sh,
			    CUstream st, void **p, void **e)
{
	if (f == rejected_fn)
		return 701;
	got_launch.f = f;
	got_launch.gx = gx;
	got_launch.bx = bx;
	got_launch.calls++;
	return 0;
}

CUresult real_launch_ptsz(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
				 unsigned int bx, unsigned int by, unsigned int bz,
				 unsigned int sh, CUstream st, void **p, void **e)
{
	__atomic_fetch_add(&got_launch_ptsz.calls, 1, __ATOMIC_RELAXED);
	return 0;
}

static CUresult real_get_kernel(CUkernel *k, CUlibrary lib, const char *name)
{
	static char kernels[4];

	*k = (CUkernel)&kernels[strlen(name) % 4];
	return 0;
}

static CUresult real_set_attr(CUfunction f, CUfunction_attribute a, int v)
{
	if (n_attr_calls < 16) {
		attr_calls[n_attr_calls] = a;
		attr_values[n_attr_calls++] = v;
	}
	return 0;
}

static CUresult real_set_cache(CUfunction f, CUfunc_cache c)
{
	return real_set_attr(f, 1000 + c, c);
}

static CUresult real_add_node(CUgraphNode *o, CUgraph g, const CUgraphNode *d, size_t n,
			      const CUDA_KERNEL_NODE_PARAMS_v2 *p)
{
	got_node = *p;
	*o = (CUgraphNode)(uintptr_t)0x77;
	return 0;
}

CUresult real_alloc(CUdeviceptr *d, size_t n)
{
	*d = 0x1000;
	return 0;
}

CUresult real_gpa(const char *sym, void **pfn, int version, cuuint64_t flags,
			 CUdriverProcAddressQueryResult *st)
{
	void *p = NULL;

	if (!strcmp(sym, "cuLaunchKernel"))
		p = (flags & 2) ? (void *)real_launch_ptsz : (void *)real_launch;
	else if (!strcmp(sym, "cuLibraryGetKernel"))
		p = (void *)real_get_kernel;
	else if (!strcmp(sym, "cuFuncSetAttribute") || !strcmp(sym, "cuKernelSetAttribute"))
		p = (void *)real_set_attr;
	else if (!strcmp(sym, "cuFuncSetCacheConfig"))
		p = (void *)real_set_cache;
	else if (!strcmp(sym, "cuGraphAddKernelNode"))
		p = (void *)real_add_node;
	else if (!strcmp(sym, "cuMemAlloc"))
		p = (void *)real_alloc;
	else if (!strcmp(sym, "cuGetProcAddress"))
		p = (void *)real_gpa;
	*pfn = p;
	return p ? 0 : GBPF_CUDA_ERROR_NOT_FOUND;
}

