/* SPDX-License-Identifier: MIT */
/*
 * gbpf/maps.h - creating a program's maps and reading them from the host.
 *
 * Map memory follows the self-describing layout of maps/map_layout.h
 * (docs/MAPS.md); these functions are libgbpf's exported entry points to the
 * host map operations of maps/. Conventions as the rest of libgbpf: int
 * functions return 0 (or a count) or a negative errno; pointer functions
 * return NULL and set errno.
 *
 * "slot" selects a per-CPU copy (PERCPU_ARRAY, PERCPU_HASH: a host CPU or a
 * GPU SM) or a GPU thread (PERGPUTHREAD_ARRAY); other maps ignore it.
 */
#ifndef GBPF_MAPS_H
#define GBPF_MAPS_H

#include <stddef.h>
#include <stdint.h>

#include <gbpf/gbpf.h>
#include <gbpf/plugin.h>
#include <gbpf/prog.h>

#ifdef __cplusplus
extern "C" {
#endif

struct gbpf_plugin;

/**
 * Create the maps of @p prog (prog->map_cnt instances, in the order of
 * prog->maps), sized for @p plugin's device (per-CPU copies: CPUs or SMs)
 * and @p threads GPU threads (per-thread arrays).
 * @param plugin   backend the maps are for, or NULL for the host
 * @param threads  threads of the run (0 means 1)
 * @param maps     receives a malloc'ed array; free with gbpf_maps__destroy()
 * @param log      receives a reason naming the map on failure
 * @return 0 or a negative errno
 */
GBPF_API int gbpf_plugin__maps_create(struct gbpf_plugin *plugin, const struct gbpf_prog_desc *prog,
				      uint64_t threads, struct gbpf_map_instance **maps, char *log,
				      size_t log_size);

/** Free @p count maps made by gbpf_plugin__maps_create() and the array itself. */
GBPF_API void gbpf_maps__destroy(struct gbpf_map_instance *maps, size_t count);

/** Per-CPU slots (or GPU threads) of a map; 1 for maps without copies. */
GBPF_API uint32_t gbpf_map__nr_slots(const struct gbpf_map_instance *map);

/** Value of @p key in @p slot, or NULL with errno ENOENT. */
GBPF_API void *gbpf_map__lookup(struct gbpf_map_instance *map, const void *key, uint32_t slot);

/**
 * Insert or replace @p key's value in @p slot.
 * @param flags 0 (any), 1 (create only: -EEXIST), 2 (replace only: -ENOENT)
 * @return 0, -EINVAL, -EEXIST, -ENOENT or -E2BIG (map full)
 */
GBPF_API int gbpf_map__update(struct gbpf_map_instance *map, const void *key, const void *value,
			      uint64_t flags, uint32_t slot);

/** Remove @p key: 0, -ENOENT if absent, -EINVAL for arrays. */
GBPF_API int gbpf_map__delete(struct gbpf_map_instance *map, const void *key);

/** Key after @p key (first when NULL) into @p next; -ENOENT after the last. */
GBPF_API int gbpf_map__get_next_key(struct gbpf_map_instance *map, const void *key, void *next);

/** Called once per ring buffer record; return non-zero to stop. */
typedef int (*gbpf_map_record_fn)(void *ctx, const void *data, size_t size);

/**
 * Consume every published record of a ring buffer or perf event array.
 * Returns the number of records passed to @p fn or a negative errno.
 */
GBPF_API int gbpf_map__consume(struct gbpf_map_instance *map, gbpf_map_record_fn fn, void *ctx);

/** Records dropped because a ring was full, since the map was created. */
GBPF_API uint64_t gbpf_map__dropped(const struct gbpf_map_instance *map);

/**
 * The slots of a map that is one log2 histogram (gbpf_map_desc__hist_shape()
 * of @p desc is GBPF_MAP_HIST_ARRAY or GBPF_MAP_HIST_SLOT_KEY), per-CPU
 * copies summed, into @p slots (slot i counts values in [2^i, 2^(i+1))).
 * Returns how many slots to show: an array's entries (at most 64), a
 * slot-keyed hash's last non-zero slot + 1 (0 when none); -EINVAL when the
 * map is not such a histogram.
 */
GBPF_API int gbpf_map__log2_slots(struct gbpf_map_instance *map, const struct gbpf_map_desc *desc,
				  uint64_t slots[64]);

#ifdef __cplusplus
}
#endif

#endif /* GBPF_MAPS_H */
