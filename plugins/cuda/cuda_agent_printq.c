// SPDX-License-Identifier: MIT
/* plugins/cuda/cuda_agent_printq.c - see cuda_agent_printq.h */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "cuda_agent_printq.h"
#include "plugins/cuda/intercept/intercept.h"

/** The queues of one context. */
struct ca_printq {
	CUcontext ctx;
	struct gbpf_printq *q;
	struct ca_printq *next;
};

typedef CUresult (*ca_ctx_get_fn)(CUcontext *);
typedef CUresult (*ca_ctx_set_fn)(CUcontext);

static int ca_printq_driver(struct cuda_driver *d)
{
	if (!d->cuMemAlloc) {
		d->cuMemAlloc = (CUresult(*)(CUdeviceptr *, size_t))gbpf_cu_real_proc("cuMemAlloc", 3020, 0);
		d->cuMemFree = (CUresult(*)(CUdeviceptr))gbpf_cu_real_proc("cuMemFree", 3020, 0);
		d->cuMemcpyHtoD = (CUresult(*)(CUdeviceptr, const void *, size_t))gbpf_cu_real_proc(
			"cuMemcpyHtoD", 3020, 0);
		d->cuMemcpyDtoH = (CUresult(*)(void *, CUdeviceptr, size_t))gbpf_cu_real_proc("cuMemcpyDtoH",
											   3020, 0);
		d->cuModuleGetGlobal = (CUresult(*)(CUdeviceptr *, size_t *, CUmodule, const char *))
			gbpf_cu_real_proc("cuModuleGetGlobal", 3020, 0);
	}
	return d->cuMemAlloc && d->cuMemFree && d->cuMemcpyHtoD && d->cuMemcpyDtoH && d->cuModuleGetGlobal;
}

struct gbpf_printq *ca_printqs_for(struct ca_printqs *p, CUcontext ctx, int sms, char *why, size_t why_size)
{
	struct ca_printq *e;
	uint32_t nq = 1;
	int rc;

	for (e = p->list; e; e = e->next)
		if (e->ctx == ctx)
			return e->q;
	if (!ca_printq_driver(&p->drv)) {
		snprintf(why, why_size, "driver entry points unavailable");
		return NULL;
	}
	while (nq < (uint32_t)(sms > 1 ? sms : 1) && nq < 1024)
		nq <<= 1;
	e = calloc(1, sizeof(*e));
	if (!e) {
		snprintf(why, why_size, "out of memory");
		return NULL;
	}
	rc = gbpf_printq_create(&p->drv, nq, 256, &e->q);
	if (!rc) {
		gbpf_printq_set_sink(e->q, p->sink, p->ctx);
		rc = gbpf_printq_start(e->q);
	}
	if (rc) {
		snprintf(why, why_size, "cannot create them (%d)", rc);
		gbpf_printq_destroy(e->q);
		free(e);
		return NULL;
	}
	e->ctx = ctx;
	e->next = p->list;
	p->list = e;
	return e->q;
}

/*
 * Stop a context's drain thread after a last pass, say how many lines the
 * GPU dropped, free the queues: in their own context (the caller's thread
 * may have another current, or none), the caller's restored afterwards.
 */
static void ca_printq_free(struct ca_printqs *p, struct ca_printq *e)
{
	ca_ctx_get_fn get = (ca_ctx_get_fn)gbpf_cu_real_proc("cuCtxGetCurrent", 4000, 0);
	ca_ctx_set_fn set = (ca_ctx_set_fn)gbpf_cu_real_proc("cuCtxSetCurrent", 4000, 0);
	CUcontext prev = NULL;
	uint64_t lost;

	if (get && set && get(&prev) == GBPF_CUDA_SUCCESS && prev != e->ctx)
		set(e->ctx);
	gbpf_printq_stop(e->q);
	lost = gbpf_printq_drops(e->q);
	if (lost && p->lost)
		p->lost(p->ctx, (unsigned long long)lost);
	gbpf_printq_destroy(e->q);
	if (get && set && prev != e->ctx)
		set(prev);
	free(e);
}

void ca_printqs_close(struct ca_printqs *p, CUcontext ctx)
{
	struct ca_printq **pq;

	for (pq = &p->list; *pq;) {
		struct ca_printq *e = *pq;

		if (e->ctx != ctx) {
			pq = &e->next;
			continue;
		}
		*pq = e->next;
		ca_printq_free(p, e);
	}
}

void ca_printqs_close_all(struct ca_printqs *p)
{
	while (p->list) {
		struct ca_printq *e = p->list;

		p->list = e->next;
		ca_printq_free(p, e);
	}
}
