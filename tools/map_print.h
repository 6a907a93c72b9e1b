/* SPDX-License-Identifier: MIT */
/* tools/map_print.h - showing map contents as text or JSON. */
#ifndef GBPF_TOOLS_MAP_PRINT_H
#define GBPF_TOOLS_MAP_PRINT_H

#include <stddef.h>

#include <gbpf/plugin.h>

/**
 * Print every map that holds something: array elements that are not all
 * zero, every hash entry, ring buffer records (consumed) and drops.
 * In JSON mode writes a "maps" member into the current object.
 */
void map_print_all(struct gbpf_map_instance *maps, size_t count);

#endif
