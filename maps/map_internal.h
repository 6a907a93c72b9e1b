/* SPDX-License-Identifier: MIT */
/*
 * maps/map_internal.h - private helpers shared by the map implementation
 * files. Not part of any API.
 */
#ifndef GBPF_MAPS_MAP_INTERNAL_H
#define GBPF_MAPS_MAP_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "maps/map.h"
#include "maps/map_layout.h"

/*
 * A validated snapshot of a map's header plus its base address. Every
 * operation works from the snapshot only, so that memory changed under our
 * feet by another process cannot make us index outside the block.
 */
struct map_view {
	struct gbpf_map_hdr h;
	uint8_t *base;
};

/*
 * Fill the derived fields of @p h (strides, buckets, offsets, total size)
 * from its type, key_size, value_size, max_entries, flags and nr_slots
 * (normalising nr_slots). Returns 0 or -EINVAL with a reason in why.
 */
int gbpf_mapi_layout_compute(struct gbpf_map_hdr *h, char *why, size_t why_size);

/* Validate map->mem and snapshot its header into v; 0 or negative errno. */
int gbpf_mapi_view_get(const struct gbpf_map_instance *map, struct map_view *v);

bool gbpf_mapi_is_array(uint32_t type);
bool gbpf_mapi_is_hash(uint32_t type);
bool gbpf_mapi_is_ring(uint32_t type);

/* Atomic access to plain layout fields (the layout is shared with devices,
 * so its fields cannot be declared _Atomic). */
static inline _Atomic uint32_t *at32(void *p)
{
	return (_Atomic uint32_t *)p;
}

static inline _Atomic uint64_t *at64(void *p)
{
	return (_Atomic uint64_t *)p;
}

static inline struct gbpf_map_hdr *view_hdr(const struct map_view *v)
{
	return (struct gbpf_map_hdr *)v->base;
}

/* Per-type operations (map_array.c, map_hash.c). */
void *gbpf_mapi_array_lookup(const struct map_view *v, const void *key, uint32_t slot);
int gbpf_mapi_array_update(const struct map_view *v, const void *key, const void *value,
			   uint64_t flags, uint32_t slot);
int gbpf_mapi_array_next_key(const struct map_view *v, const void *key, void *next_key);

void *gbpf_mapi_hash_lookup(const struct map_view *v, const void *key, uint32_t slot);
int gbpf_mapi_hash_update(const struct map_view *v, const void *key, const void *value,
			  uint64_t flags, uint32_t slot);
int gbpf_mapi_hash_delete(const struct map_view *v, const void *key);
int gbpf_mapi_hash_next_key(const struct map_view *v, const void *key, void *next_key);

#endif /* GBPF_MAPS_MAP_INTERNAL_H */
