/* SPDX-License-Identifier: MIT */
/*
 * plugins/cuda/map_mirror.h - a map whose working copy lives in device
 * memory, mirrored into its host block (the shared memory the controller
 * reads). Internal to the cuda backend; written against a table of memory
 * operations so that the protocol is tested on the CPU with memcpy.
 *
 * Two kinds of mirror:
 *  - SNAPSHOT (arrays, hash maps, per-GPU-thread arrays): the device block
 *    has the host block's exact layout. gbpf_map_mirror_snapshot copies it
 *    back whole (one copy, one writer); the agent instead adds each copy's
 *    changes into the shared host block (cuda_devmaps.c: several contexts
 *    and processes share it). Copies taken while kernels run may be torn
 *    (a counter between two updates, a hash bucket being claimed); the one
 *    taken after the application synchronised is exact.
 *  - RING (RINGBUF, GPU_RINGBUF, PERF_EVENT_ARRAY): the device ring has its
 *    own, larger geometry (bursts are absorbed at device-memory speed);
 *    the forwarder copies COMMITTED records into the host ring with
 *    gbpf_ring_forward_reserve, then zeroes the forwarded device bytes and
 *    advances the device consumer position. A full host ring makes the
 *    forwarder wait (the device ring keeps buffering); only the device ring
 *    drops, and its drops are added to the host's counters exactly.
 *
 * Why forwarding copies a range twice: a copy engine reads a range in no
 * defined order, so a header read as committed does not prove that the
 * record's data was read after the producer wrote it. The first copy finds
 * the committed prefix; a second copy, issued after the first completed,
 * reads that prefix again, now guaranteed complete (the producer published
 * the header with a system-scope release after writing the data).
 */
#ifndef GBPF_CUDA_MAP_MIRROR_H
#define GBPF_CUDA_MAP_MIRROR_H

#include <stddef.h>
#include <stdint.h>

#include <gbpf/plugin.h>

/** Device memory operations; every call completes before it returns. */
struct gbpf_dev_mem_ops {
	void *ctx; /**< first argument of every operation */
	int (*alloc)(void *ctx, uint64_t *dptr, size_t size);
	void (*release)(void *ctx, uint64_t dptr);
	int (*to_host)(void *ctx, void *dst, uint64_t src, size_t size);
	int (*to_device)(void *ctx, uint64_t dst, const void *src, size_t size);
	int (*zero)(void *ctx, uint64_t dst, size_t size);
	/**
	 * Optional (may be NULL): make @p size bytes of host memory at @p ptr
	 * (page-aligned) a target the device copies into directly. 0 when done;
	 * any error leaves the memory as it was (copies stay correct, slower).
	 */
	int (*pin_host)(void *ctx, void *ptr, size_t size);
	/** Undo a successful pin_host (NULL when pin_host is). */
	void (*unpin_host)(void *ctx, void *ptr);
};

/**
 * A host buffer the device copies into, page-aligned and rounded up to whole
 * pages (in *@p bytes), so that it can be pinned (pin_host above): a ring
 * mirror's stage, the agent's snapshot buffer. NULL when @p size is 0 or
 * memory is short; free() it.
 */
void *gbpf_stage_alloc(size_t size, size_t *bytes);

/** One mirrored map. Zero-initialise, then gbpf_map_mirror_init(). */
struct gbpf_map_mirror {
	struct gbpf_map_instance *host; /**< the host block (shared memory) */
	uint64_t dev;                   /**< device block */
	size_t dev_size;                /**< bytes of the device block */
	int ring;                       /**< 1: records forwarded; 0: snapshots */
	/* ring state */
	uint32_t dev_rings;             /**< device sub-rings */
	uint64_t dev_sub_size;          /**< bytes of each device sub-ring */
	uint64_t dev_data_off;          /**< device ring controls */
	uint64_t dev_aux_off;           /**< device ring data */
	uint64_t *fwd;                  /**< per device sub-ring: forwarded up to */
	uint64_t drops_seen;            /**< device drops already added to the host */
	uint8_t *stage;                 /**< one sub-ring of staging (two copies), page-aligned */
	int stage_pinned;               /**< stage pinned by ops->pin_host */
	uint8_t *ctl;                   /**< copy of the device ring controls */
	uint64_t forwarded;             /**< records delivered to the host ring */
	uint64_t waits;                 /**< times the host ring was full */
};

/**
 * Allocate and fill the device block of @p host.
 * @param ring_bytes  ring maps: data bytes of the device ring (a power of
 *                    two, at least the host ring's); 0 = the host's size
 * @param ring_subs   ring maps: device sub-rings wanted (e.g. SM count)
 * @return 0, -EINVAL (not a map this mirror handles), -ENOMEM, -EIO
 */
int gbpf_map_mirror_init(struct gbpf_map_mirror *m, struct gbpf_map_instance *host,
			 uint64_t ring_bytes, uint32_t ring_subs, const struct gbpf_dev_mem_ops *ops,
			 char *why, size_t why_size);

/** Copy a snapshot map's device block into its host block. @return 0 or -EIO */
int gbpf_map_mirror_snapshot(struct gbpf_map_mirror *m, const struct gbpf_dev_mem_ops *ops);

/**
 * Forward the committed records of a ring map's device sub-rings to the
 * host ring and release their device space.
 * @param moved  out (may be NULL): records (incl. discarded ones) moved
 * @return 0, -EIO (a copy failed), -EUCLEAN (a device record is malformed:
 *         that sub-ring stops being forwarded)
 */
int gbpf_map_mirror_forward(struct gbpf_map_mirror *m, const struct gbpf_dev_mem_ops *ops,
			    uint64_t *moved);

/**
 * Give up on the records still on a ring map's device sub-rings (the
 * controller stopped taking them): count the committed ones as drops of
 * the host map, so that nothing is lost silently.
 * @return the records counted
 */
uint64_t gbpf_map_mirror_abandon(struct gbpf_map_mirror *m, const struct gbpf_dev_mem_ops *ops);

/**
 * How a ring map's records spread over its device sub-rings, from the last
 * copy of the ring controls (gbpf_map_mirror_forward's): to tell a ring too
 * small from records crowding a few sub-rings when the device drops some.
 */
struct gbpf_map_mirror_ring_stats {
	uint32_t subs;           /**< device sub-rings */
	uint32_t subs_used;      /**< sub-rings that reserved anything */
	uint32_t subs_dropping;  /**< sub-rings that dropped records */
	uint32_t most_drops_sub; /**< the sub-ring that dropped most */
	uint64_t most_drops;     /**< its drops */
	uint64_t drops;          /**< drops of all sub-rings */
	uint64_t most_bytes;     /**< bytes reserved (since the start) by the busiest sub-ring */
	uint64_t median_bytes;   /**< ... by the median one of those used (the upper one of two) */
	uint64_t sub_size;       /**< bytes of each sub-ring */
};

/**
 * Fill @p st for a ring map's mirror. @return 0, -EINVAL (not a ring),
 * -ENOMEM
 */
int gbpf_map_mirror_ring_stats(const struct gbpf_map_mirror *m, struct gbpf_map_mirror_ring_stats *st);

/** Free the device block and the mirror's buffers. */
void gbpf_map_mirror_fini(struct gbpf_map_mirror *m, const struct gbpf_dev_mem_ops *ops);

#endif /* GBPF_CUDA_MAP_MIRROR_H */
