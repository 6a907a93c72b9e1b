/* SPDX-License-Identifier: MIT */
/* tests/maps/maps_test_util.h - shared by the map tests. */
#ifndef GBPF_TESTS_MAPS_UTIL_H
#define GBPF_TESTS_MAPS_UTIL_H

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <gbpf/prog.h>

#include "maps/map.h"
#include "maps/map_layout.h"
#include "tests/tap.h"

static inline struct gbpf_map_desc mk_desc(const char *name, uint32_t type, uint32_t key_size,
					   uint32_t value_size, uint32_t max_entries)
{
	struct gbpf_map_desc d;

	memset(&d, 0, sizeof(d));
	d.sz = sizeof(d);
	d.name = name;
	d.type = type;
	d.key_size = key_size;
	d.value_size = value_size;
	d.max_entries = max_entries;
	return d;
}

static inline const struct gbpf_map_hdr *hdr_of(const struct gbpf_map_instance *m)
{
	return (const struct gbpf_map_hdr *)m->mem;
}

#endif
