/* SPDX-License-Identifier: MIT */
/*
 * Array maps: ARRAY, GPU_ARRAY, PERCPU_ARRAY (slot-major copies, a padded plane per slot) and
 * PERGPUTHREAD_ARRAY (index-major, one value per GPU thread).
 */
#include <errno.h>
#include <string.h>

#include "maps/map_internal.h"

static bool has_slots(uint32_t type)
{
	return type == GBPF_MAP_TYPE_PERCPU_ARRAY || type == GBPF_MAP_TYPE_PERGPUTHREAD_ARRAY;
}

void *gbpf_mapi_array_lookup(const struct map_view *v, const void *key, uint32_t slot)
{
	uint32_t idx;

	memcpy(&idx, key, sizeof(idx));
	if (!has_slots(v->h.type))
		slot = 0;
	if (idx >= v->h.max_entries || slot >= v->h.nr_slots) {
		errno = idx >= v->h.max_entries ? ENOENT : EINVAL;
		return NULL;
	}
	return v->base + gbpf_array_value_off(&v->h, idx, slot);
}

int gbpf_mapi_array_update(const struct map_view *v, const void *key, const void *value,
			   uint64_t flags, uint32_t slot)
{
	uint32_t idx;

	memcpy(&idx, key, sizeof(idx));
	if (!has_slots(v->h.type))
		slot = 0;
	if (slot >= v->h.nr_slots)
		return -EINVAL;
	if (idx >= v->h.max_entries)
		return -E2BIG;
	/* Every element of an array always exists (as in Linux). */
	if (flags == GBPF_NOEXIST)
		return -EEXIST;
	/* memmove: the value may be a pointer returned by a lookup of the same map. */
	memmove(v->base + gbpf_array_value_off(&v->h, idx, slot), value, v->h.value_size);
	return 0;
}

int gbpf_mapi_array_next_key(const struct map_view *v, const void *key, void *next_key)
{
	uint32_t idx, next;

	if (!key) {
		next = 0;
	} else {
		memcpy(&idx, key, sizeof(idx));
		/* An index past the end restarts the iteration, as in Linux. */
		next = idx >= v->h.max_entries ? 0 : idx + 1;
	}
	if (next >= v->h.max_entries)
		return -ENOENT;
	memcpy(next_key, &next, sizeof(next));
	return 0;
}
