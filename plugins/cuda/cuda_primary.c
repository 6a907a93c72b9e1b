/* SPDX-License-Identifier: MIT */
/* plugins/cuda/cuda_primary.c - the agent's references to primary contexts (cuda_primary.h). */
#include "cuda_primary.h"

#include "plugins/cuda/intercept/intercept.h"

typedef CUresult (*ca_ctx_push_fn)(CUcontext);
typedef CUresult (*ca_ctx_pop_fn)(CUcontext *);
typedef CUresult (*ca_ctx_device_fn)(CUdevice *);
typedef CUresult (*ca_retain_fn)(CUcontext *, CUdevice);
typedef CUresult (*ca_release_fn)(CUdevice);

/* The device of @p ctx (made current for the question, then given back), or -1. */
static CUdevice ca_ctx_device(CUcontext ctx)
{
	ca_ctx_push_fn push = (ca_ctx_push_fn)gbpf_cu_real_proc("cuCtxPushCurrent", 4000, 0);
	ca_ctx_pop_fn pop = (ca_ctx_pop_fn)gbpf_cu_real_proc("cuCtxPopCurrent", 4000, 0);
	ca_ctx_device_fn get = (ca_ctx_device_fn)gbpf_cu_real_proc("cuCtxGetDevice", 2000, 0);
	CUcontext popped = NULL;
	CUdevice dev = -1;

	if (!push || !pop || !get || push(ctx) != GBPF_CUDA_SUCCESS)
		return -1;
	if (get(&dev) != GBPF_CUDA_SUCCESS)
		dev = -1;
	pop(&popped);
	return dev;
}

void ca_primary_keep(struct ca_primary_refs *r, CUcontext ctx)
{
	ca_retain_fn retain = (ca_retain_fn)gbpf_cu_real_proc("cuDevicePrimaryCtxRetain", 7000, 0);
	ca_release_fn release = (ca_release_fn)gbpf_cu_real_proc("cuDevicePrimaryCtxRelease", 11000, 0);
	CUcontext primary = NULL;
	CUdevice dev;

	if (!ctx || r->n >= CA_PRIMARY_MAX)
		return;
	for (unsigned i = 0; i < r->n; i++)
		if (r->ctx[i] == ctx)
			return;
	dev = ca_ctx_device(ctx);
	if (dev < 0 || !retain || !release || retain(&primary, dev) != GBPF_CUDA_SUCCESS)
		return;
	if (primary != ctx) {
		/* Not the primary context (retaining merely asked which one it is). */
		release(dev);
		return;
	}
	r->ctx[r->n] = ctx;
	r->dev[r->n] = dev;
	r->n++;
}

void ca_primary_forget(struct ca_primary_refs *r, CUcontext ctx)
{
	for (unsigned i = 0; i < r->n; i++)
		if (r->ctx[i] == ctx) {
			r->n--;
			r->ctx[i] = r->ctx[r->n];
			r->dev[i] = r->dev[r->n];
			return;
		}
}

void ca_primary_release_all(struct ca_primary_refs *r)
{
	ca_release_fn release = (ca_release_fn)gbpf_cu_real_proc("cuDevicePrimaryCtxRelease", 11000, 0);

	for (unsigned i = 0; release && i < r->n; i++)
		release(r->dev[i]);
	r->n = 0;
}
