/* SPDX-License-Identifier: MIT */
/* Public entry points to the host map operations of maps/. */
#include <errno.h>

#include <gbpf/maps.h>

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
