/* SPDX-License-Identifier: MIT */
/*
 * plugins/cuda/cuda_primary.h - the agent's own reference to each primary
 * context it instruments in.
 *
 * The device copies of a context's maps hold counts the host view has not
 * merged yet; they are merged at sync points and, last, when the agent
 * detaches or the process exits. An application that releases the primary
 * context (cuDevicePrimaryCtxRelease) as its last reference destroys it,
 * and its copies with it, before that: the nvrtc app of the tools matrix
 * lost every count of its last launch so (H200, CUDA 13.0). The agent
 * therefore keeps one reference of its own to every primary context an
 * instrumented kernel ran in, from the first such launch until detach or
 * exit. A reset (cuDevicePrimaryCtxReset) still destroys it: the agent
 * flushes before (ca_context_gone) and forgets its reference.
 */
#ifndef GBPF_CUDA_PRIMARY_H
#define GBPF_CUDA_PRIMARY_H

#include "plugins/cuda/intercept/cuda_types.h"

/** Devices whose primary context can be kept. */
#define CA_PRIMARY_MAX 64

/** The primary contexts kept (guarded by the caller's lock). */
struct ca_primary_refs {
	CUcontext ctx[CA_PRIMARY_MAX];
	CUdevice dev[CA_PRIMARY_MAX];
	unsigned n;
};

/**
 * An instrumented kernel runs in @p ctx: when it is a device's primary
 * context not kept yet, take a reference to it. Other contexts (cuCtxCreate)
 * belong to the application alone: it destroys them with cuCtxDestroy,
 * which the agent sees.
 */
void ca_primary_keep(struct ca_primary_refs *r, CUcontext ctx);

/** @p ctx was destroyed (a reset): forget it without releasing. */
void ca_primary_forget(struct ca_primary_refs *r, CUcontext ctx);

/** Release every reference kept (detach: after the maps were flushed). */
void ca_primary_release_all(struct ca_primary_refs *r);

#endif /* GBPF_CUDA_PRIMARY_H */
