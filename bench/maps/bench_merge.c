/* SPDX-License-Identifier: MIT */
/*
 * bench/maps/bench_merge.c - what a snapshot's delta merge costs the cuda
 * agent's forwarder per value: a per-GPU-thread array (one u64 a thread,
 * every value changed, as mem_trace's last address is after a launch) and
 * a per-CPU array of a few counters, merged into a host block the way
 * plugins/cuda/cuda_devmaps.c merges a device copy. Prints ns per value,
 * best of 5 runs.
 * Usage: bench_merge [THREAD_SLOTS] (default 16M, gbpf run --thread-slots)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <gbpf/prog.h>

#include "maps/map.h"

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Best of 5 merges of @p src (every value changed against @p base) into @p dst: seconds. */
static double best_merge(struct gbpf_map_instance *dst, struct gbpf_map_instance *src,
			 struct gbpf_map_instance *base)
{
	double best = 1e9;

	for (int r = 0; r < 5; r++) {
		uint64_t lost = 0;
		double t0 = now_s();

		double t;

		if (gbpf_map_merge_delta(dst, src, base, &lost))
			return -1;
		t = now_s() - t0;
		if (t < best)
			best = t;
	}
	return best;
}

static int bench(const char *what, uint32_t type, uint32_t entries, uint32_t slots)
{
	struct gbpf_map_desc d = {.sz = sizeof(d), .name = "m", .type = type, .key_size = 4, .value_size = 8,
				  .max_entries = entries};
	struct gbpf_map_instance dst, src, base;
	uint64_t values = (uint64_t)entries * slots;
	double t;

	if (gbpf_map_instance_create(&dst, &d, slots) || gbpf_map_instance_create(&src, &d, slots) ||
	    gbpf_map_instance_create(&base, &d, slots)) {
		fprintf(stderr, "%s: cannot create the maps\n", what);
		return 1;
	}
	for (uint32_t k = 0; k < entries; k++)
		for (uint32_t s = 0; s < slots; s++)
			*(uint64_t *)gbpf_map_lookup(&src, &k, s) = (uint64_t)s * 3 + k + 1;
	t = best_merge(&dst, &src, &base);
	if (t < 0) {
		fprintf(stderr, "%s: merge failed\n", what);
		return 1;
	}
	printf("%-44s %10llu values  %8.2f ms  %6.2f ns/value\n", what, (unsigned long long)values, t * 1e3,
	       t * 1e9 / (double)values);
	gbpf_map_instance_destroy(&dst);
	gbpf_map_instance_destroy(&src);
	gbpf_map_instance_destroy(&base);
	return 0;
}

int main(int argc, char **argv)
{
	uint32_t slots = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 0) : 16u << 20;

	return bench("per-GPU-thread array, one u64 a thread", GBPF_MAP_TYPE_PERGPUTHREAD_ARRAY, 1, slots) |
	       bench("per-CPU array of 4 counters, 132 slots (SMs)", GBPF_MAP_TYPE_PERCPU_ARRAY, 4, 132);
}
