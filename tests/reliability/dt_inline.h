/* SPDX-License-Identifier: MIT */
/*
 * tests/reliability/dt_inline.h - the host half of the differential tests of
 * injected probes (tests/cuda/test_inline_run.c on CUDA,
 * tests/spirv/test_spirv_inline_run.c on OpenCL): a generated program
 * (difftest_gen.h) made to leave its r0 in the array map, the interpreter
 * running it as often as the instrumented kernel runs the probe, and the maps
 * compared.
 */
#ifndef GBPF_TESTS_RELIABILITY_DT_INLINE_H
#define GBPF_TESTS_RELIABILITY_DT_INLINE_H

#include <stddef.h>
#include <stdint.h>

#include <gbpf/plugin.h>

#include "difftest_gen.h"

/** What a run leaves in the two maps, as their lookups see it. */
struct dt_maps_state {
	uint64_t arr[DT_ARRAY_ENTRIES];
	uint64_t hash[DT_KEY_SPAN];
	uint8_t present[DT_KEY_SPAN];
};

/**
 * Store r6 (the fold of everything, the program's r0) in arr[0] before the
 * main program's final "r0 = r6; exit": an injected probe's r0 goes nowhere.
 * Returns 0, or -EINVAL when the program does not end that way.
 */
int dt_store_r0(struct dt_prog *p);

/** Create the two maps in host memory (gbpf_map_instance_create). */
int dt_maps_create(struct gbpf_map_instance maps[2], char *why, size_t size);
/** Free what dt_maps_create() made. */
void dt_maps_destroy(struct gbpf_map_instance maps[2]);

/** Read both maps through their lookups. */
void dt_maps_snapshot(struct gbpf_map_instance *maps, struct dt_maps_state *st);

/** The first differing entry, as text ("" when equal); @p want first. */
void dt_maps_diff(const struct dt_maps_state *want, const struct dt_maps_state *got, char *buf, size_t size);

/**
 * The reference: the bounds-checked interpreter runs @p d @p runs times in a
 * row on fresh host maps, which @p st then holds. Returns 0 or the
 * interpreter's error (why in @p why).
 */
int dt_interp_runs(const struct gbpf_prog_desc *d, unsigned runs, struct dt_maps_state *st, char *why,
		   size_t size);

#endif
