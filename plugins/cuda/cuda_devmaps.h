/* SPDX-License-Identifier: MIT */
/*
 * plugins/cuda/cuda_devmaps.h - where the maps of `gbpf run` live for the
 * GPU (internal to the cuda agent).
 *
 * Placement, decided per map when the agent attaches:
 *  - DEVICE: maps only device programs use. Their working copy is in
 *    device memory (GPU atomics at device-memory speed, no PCIe round trip
 *    per update), mirrored into the shared memory the controller reads
 *    (map_mirror.h): ring buffers continuously by a forwarder thread,
 *    other maps as snapshots every 100 ms, at the application's
 *    synchronisation points (within 1 ms, by the forwarder thread, at most
 *    every 5 ms) and, exactly, at exit.
 *  - HOST: maps that host programs (host/launch, host/memcpy ...) update
 *    too, so that both sides work on the very same bytes: the shared
 *    memory registered with cuMemHostRegister(DEVICEMAP); GPU atomics on
 *    it were measured exact on the H200 (docs/PROCESS_MODEL.md).
 * GBPF_CUDA_MAPS=host places every map on the host (for comparisons).
 *
 * Several contexts (GPUs, or several contexts on one GPU) and several
 * processes: device memory belongs to a context, so each context that
 * launches an instrumented kernel gets its own device copies, made at that
 * first launch from the host blocks. A snapshot adds what a copy changed
 * since its previous snapshot into the host block, word by word with
 * atomic adds (gbpf_map_merge_delta): the host block is the sum of every
 * context's and every process's work (counters exact; a value only one
 * copy changed is that copy's). Each context's ring buffers are forwarded
 * into the one host ring. A context the application destroys is flushed
 * first (its work waited for, its records forwarded, its counts added).
 * Host-placed maps are one registered region for every context.
 */
#ifndef GBPF_CUDA_DEVMAPS_H
#define GBPF_CUDA_DEVMAPS_H

#include <stddef.h>
#include <stdint.h>

#include <gbpf/plugin.h>

#include "plugins/cuda/intercept/cuda_types.h"

struct ca_devmaps;

/** How the map layer tells the user something (the agent's report service). */
typedef void (*ca_devmaps_report_fn)(void *ctx, int is_error, const char *kernel, const char *msg);

/**
 * Decide placements. @p host_used[i] is 1 when a host program uses map i.
 * Nothing touches the GPU yet. @return 0 or -ENOMEM
 */
int ca_devmaps_create(struct ca_devmaps **out, struct gbpf_map_instance *maps, size_t n,
		      const uint8_t *host_used, ca_devmaps_report_fn report, void *report_ctx);

/**
 * The device address of every map for modules of context @p ctx: sets the
 * maps up at the first call, and @p ctx's copies at its first call. Called
 * with the agent's lock held, on an application thread; the thread's
 * current context is left as it was.
 * @param table  out: n device addresses (the modules' __gbpf_maps)
 * @return 0; -EIO / -ENOSYS / -ENOMEM with a reason in @p why
 */
int ca_devmaps_table(struct ca_devmaps *d, CUcontext ctx, CUdeviceptr *table, char *why,
		     size_t why_size);

/**
 * The application is about to destroy context @p ctx (cuCtxDestroy, a
 * primary context reset): wait for its work, forward its rings, keep its
 * counts in the host view, free its copies. Unknown contexts are ignored.
 */
void ca_devmaps_context_destroyed(struct ca_devmaps *d, CUcontext ctx);

/** An instrumented launch of @p threads threads of @p kernel is about to run. */
void ca_devmaps_launch(struct ca_devmaps *d, uint64_t threads, const char *kernel);

/** The application synchronised (stream, context, event, synchronous copy). */
void ca_devmaps_sync_point(struct ca_devmaps *d);

/** Final mirror (also run at exit): wait for the GPU, forward and snapshot everything. */
void ca_devmaps_flush_final(struct ca_devmaps *d);

/** Final flush, then free the device copies and the state (no launch may use them any more). */
void ca_devmaps_destroy(struct ca_devmaps *d);

#endif /* GBPF_CUDA_DEVMAPS_H */
