/* SPDX-License-Identifier: MIT */
/* Public entry points to the host map operations of maps/. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include <string.h>

#include <gbpf/maps.h>
#include <gbpf/object.h>

#include "core/registry_internal.h"
#include "core/run_internal.h"
#include "maps/map.h"

int gbpf_plugin__maps_create(struct gbpf_plugin *plugin, const struct gbpf_prog_desc *prog,
			     uint64_t threads, struct gbpf_map_instance **maps, char *log,
			     size_t log_size)
{
	if (!prog || !maps)
		return -(errno = EINVAL);
	return gbpf_core_maps_create(prog, plugin, threads ? threads : 1, maps, log, log_size);
}

void gbpf_maps__destroy(struct gbpf_map_instance *maps, size_t count)
{
	gbpf_core_maps_destroy(maps, count);
}

uint32_t gbpf_map__nr_slots(const struct gbpf_map_instance *map)
{
	return gbpf_map_nr_slots(map);
}

void *gbpf_map__lookup(struct gbpf_map_instance *map, const void *key, uint32_t slot)
{
	void *v = gbpf_map_lookup(map, key, slot);

	if (!v)
		errno = ENOENT;
	return v;
}

int gbpf_map__update(struct gbpf_map_instance *map, const void *key, const void *value,
		     uint64_t flags, uint32_t slot)
{
	return gbpf_map_update(map, key, value, flags, slot);
}

int gbpf_map__delete(struct gbpf_map_instance *map, const void *key)
{
	return gbpf_map_delete(map, key);
}

int gbpf_map__get_next_key(struct gbpf_map_instance *map, const void *key, void *next)
{
	return gbpf_map_get_next_key(map, key, next);
}

int gbpf_map__consume(struct gbpf_map_instance *map, gbpf_map_record_fn fn, void *ctx)
{
	return gbpf_ringbuf_consume(map, fn, ctx);
}

uint64_t gbpf_map__dropped(const struct gbpf_map_instance *map)
{
	return gbpf_ringbuf_dropped(map);
}

/* Word 0 (u64) of @p key's value, summed over the per-CPU copies. */
static uint64_t slot_sum(struct gbpf_map_instance *map, const void *key)
{
	uint32_t s, n = gbpf_map__nr_slots(map);
	uint64_t sum = 0, v;

	for (s = 0; s < n; s++) {
		const void *p = gbpf_map_lookup(map, key, s);

		if (p) {
			memcpy(&v, p, 8);
			sum += v;
		}
	}
	return sum;
}

int gbpf_map__log2_slots(struct gbpf_map_instance *map, const struct gbpf_map_desc *desc, uint64_t slots[64])
{
	enum gbpf_map_hist_shape shape = gbpf_map_desc__hist_shape(desc);
	unsigned char key[8] = {0}, next[8];
	uint32_t i, n;
	bool have = false;
	uint64_t k;

	if (!map || !slots || (shape != GBPF_MAP_HIST_ARRAY && shape != GBPF_MAP_HIST_SLOT_KEY))
		return -EINVAL;
	memset(slots, 0, 64 * sizeof(slots[0]));
	if (shape == GBPF_MAP_HIST_ARRAY) {
		n = desc->max_entries < 64 ? desc->max_entries : 64;
		for (i = 0; i < n; i++)
			slots[i] = slot_sum(map, &i);
		return (int)n;
	}
	/* bcc's BPF_HISTOGRAM: key i is slot i; absent keys count 0 */
	while (gbpf_map__get_next_key(map, have ? key : NULL, next) == 0) {
		memcpy(key, next, desc->key_size);
		have = true;
		k = 0;
		memcpy(&k, key, desc->key_size); /* little-endian: a u32 key lands in the low word */
		if (k < 64)
			slots[k] = slot_sum(map, key);
	}
	for (n = 64; n > 0 && !slots[n - 1]; n--)
		;
	return (int)n;
}
