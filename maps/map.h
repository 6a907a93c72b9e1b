/* SPDX-License-Identifier: MIT */
/*
 * maps/map.h - host-side map operations on the shared map memory layout.
 *
 * Every map lives in one contiguous block of memory whose layout is
 * described in maps/map_layout.h. The block is self-describing (it starts
 * with a header carrying type, sizes and slot count) so that a second
 * process, or a device, can operate on it from the memory alone. The same
 * algorithms run on the host (these functions), in the interpreter's
 * helpers, and in device code emitted by each code generator.
 *
 * "Slots" are the per-CPU copies of percpu maps: on the host one per CPU,
 * on a GPU one per SM (see maps/map_layout.h for the GPU meaning).
 *
 * Functions return 0 or a negative errno; lookups return NULL when the key
 * is absent or invalid.
 */
#ifndef GBPF_MAPS_MAP_H
#define GBPF_MAPS_MAP_H

#include <stddef.h>
#include <stdint.h>

#include <gbpf/plugin.h>
#include <gbpf/prog.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Update flags (Linux values). */
#define GBPF_ANY 0
#define GBPF_NOEXIST 1
#define GBPF_EXIST 2

/**
 * Check that a map description is one gbpf can build; on error write a
 * reason naming the map into why.
 */
int gbpf_map_desc_check(const struct gbpf_map_desc *desc, char *why, size_t why_size);

/**
 * Bytes of memory the map needs with @p nr_slots per-CPU slots (ignored by
 * non-percpu maps; per-GPU-thread arrays take the thread count here).
 * Returns 0 for an invalid description or a size that would overflow.
 */
size_t gbpf_map_mem_size(const struct gbpf_map_desc *desc, uint32_t nr_slots);

/** Initialise @p mem (of @p size bytes) as an empty map, copying init_data. */
int gbpf_map_mem_init(void *mem, size_t size, const struct gbpf_map_desc *desc, uint32_t nr_slots);

/** Check that @p mem holds a well-formed map header of at most @p size bytes. */
int gbpf_map_mem_validate(const void *mem, size_t size);

/** Create a map instance in malloc'ed memory (tests, `prog run`). */
int gbpf_map_instance_create(struct gbpf_map_instance *inst, const struct gbpf_map_desc *desc,
			     uint32_t nr_slots);
/** Free memory allocated by gbpf_map_instance_create. */
void gbpf_map_instance_destroy(struct gbpf_map_instance *inst);

/** Per-CPU slots in the map's memory (1 for maps that are not per-CPU). */
uint32_t gbpf_map_nr_slots(const struct gbpf_map_instance *map);

/** Value of @p key in @p slot (slot ignored unless per-CPU), or NULL. */
void *gbpf_map_lookup(struct gbpf_map_instance *map, const void *key, uint32_t slot);
/** Insert or replace, in @p slot for per-CPU maps (GBPF_ANY/NOEXIST/EXIST). */
int gbpf_map_update(struct gbpf_map_instance *map, const void *key, const void *value,
		    uint64_t flags, uint32_t slot);
/** Remove @p key (-ENOENT if absent, -EINVAL for arrays). */
int gbpf_map_delete(struct gbpf_map_instance *map, const void *key);
/** Key after @p key in iteration order (first key when key is NULL); -ENOENT at the end. */
int gbpf_map_get_next_key(struct gbpf_map_instance *map, const void *key, void *next_key);

/**
 * value += src - base, as unsigned words of 8, 4, 2 and 1 bytes (the widest
 * that fits, wrapping), each changed word with one atomic add (@p value
 * 8-aligned); @p base NULL means zeros. See gbpf_map_merge_delta.
 */
void gbpf_map_value_add_delta(void *value, const void *src, const void *base, size_t size);

/**
 * Add what copy @p src of a map changed since @p base (what src held at
 * its last merge; NULL = empty) into @p dst: for arrays every value, for
 * hash maps every key of src (inserted into dst when absent) and every
 * per-CPU slot. Changed words are added atomically, so several writers
 * (and the map's own users) may work on dst meanwhile. Values changed in
 * several copies are summed (counters stay exact); a value changed in one
 * copy only ends as that copy's. Keys deleted in src are not deleted.
 * All three must have the same type, sizes and slots; rings are refused.
 * @param lost  out (may be NULL): keys dst had no room for
 * @return 0, -EINVAL (shapes differ, a ring, a bad block), -ENOMEM
 */
int gbpf_map_merge_delta(struct gbpf_map_instance *dst, struct gbpf_map_instance *src,
			 struct gbpf_map_instance *base, uint64_t *lost);

/** Reserve @p size bytes in a ring buffer; NULL (and a counted drop) if full. */
void *gbpf_ringbuf_reserve(struct gbpf_map_instance *map, uint64_t size, uint64_t flags);
/** Publish a reserved record. */
void gbpf_ringbuf_submit(struct gbpf_map_instance *map, void *record, uint64_t flags);
/** Drop a reserved record without publishing it. */
void gbpf_ringbuf_discard(struct gbpf_map_instance *map, void *record, uint64_t flags);
/** Copy @p size bytes into the ring buffer as one record. */
int gbpf_ringbuf_output(struct gbpf_map_instance *map, const void *data, uint64_t size,
			uint64_t flags);

/** Called once per record by the consumers; return non-zero to stop. */
typedef int (*gbpf_record_fn)(void *ctx, const void *data, size_t size);
/**
 * Consume every published record of a ring buffer (or every slot of a
 * perf event array) in order; returns the number consumed or -errno.
 */
int gbpf_ringbuf_consume(struct gbpf_map_instance *map, gbpf_record_fn fn, void *ctx);
/** Records dropped because the buffer was full, since creation. */
uint64_t gbpf_ringbuf_dropped(const struct gbpf_map_instance *map);

/** Append a record to slot @p slot of a perf event array (-ENOSPC and a counted drop if full). */
int gbpf_perf_event_output(struct gbpf_map_instance *map, uint32_t slot, const void *data,
			   uint64_t size);

/* Appended by the maps part. */
/** The map hash of @p size key bytes (maps/map_layout.h; test vector for device code). */
uint64_t gbpf_map_hash(const void *key, size_t size);
/** As gbpf_ringbuf_reserve, on sub-ring (@p slot mod number of sub-rings). */
void *gbpf_ringbuf_reserve_on(struct gbpf_map_instance *map, uint32_t slot, uint64_t size,
			      uint64_t flags);
/** As gbpf_ringbuf_output, on sub-ring (@p slot mod number of sub-rings). */
int gbpf_ringbuf_output_on(struct gbpf_map_instance *map, uint32_t slot, const void *data,
			   uint64_t size, uint64_t flags);
/**
 * Reserve a record on sub-ring (@p slot mod number of rings) of a ring
 * buffer or perf event array for a FORWARDER (records copied from a
 * device-side ring): a full ring fails with errno ENOSPC WITHOUT counting a
 * drop, so the forwarder can retry later. Commit with gbpf_ringbuf_submit.
 */
void *gbpf_ring_forward_reserve(struct gbpf_map_instance *map, uint32_t slot, uint64_t size);

#ifdef __cplusplus
}
#endif

#endif /* GBPF_MAPS_MAP_H */
