/* SPDX-License-Identifier: MIT */
/* tools/names.h - readable names of map types, attach kinds and map origins. */
#ifndef GBPF_TOOLS_NAMES_H
#define GBPF_TOOLS_NAMES_H

#include <stdint.h>

const char *map_type_name(uint32_t type);
const char *attach_kind_name(uint32_t kind);
const char *map_origin_name(uint32_t origin);

#endif
