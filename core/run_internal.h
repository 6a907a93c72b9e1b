/* SPDX-License-Identifier: MIT */
/* core/run_internal.h - pieces of running programs shared inside libgbpf. */
#ifndef GBPF_CORE_RUN_INTERNAL_H
#define GBPF_CORE_RUN_INTERNAL_H

#include <gbpf/backend.h>

/** Per-CPU / per-thread slots a map gets on a plugin's device for a run. */
uint32_t gbpf_core_slots_for(const struct gbpf_map_desc *desc, const struct gbpf_plugin *p,
			     uint64_t threads);
/** Create fresh instances of every map of @p prog (NULL when it has none). */
int gbpf_core_maps_create(const struct gbpf_prog_desc *prog, struct gbpf_plugin *p,
			  uint64_t threads, struct gbpf_map_instance **out, char *log,
			  size_t log_size);
void gbpf_core_maps_destroy(struct gbpf_map_instance *maps, size_t count);
/**
 * Run the verifier on a program about to be executed with a memory buffer
 * of @p data_size bytes; the reason goes to log.
 */
int gbpf_core_verify(const struct gbpf_prog_desc *prog, size_t data_size, char *log,
		     size_t log_size);

#endif
