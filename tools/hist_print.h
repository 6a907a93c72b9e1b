/* SPDX-License-Identifier: MIT */
/* tools/hist_print.h - log2 histograms as bcc / libbpf-tools print them. */
#ifndef GBPF_TOOLS_HIST_PRINT_H
#define GBPF_TOOLS_HIST_PRINT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "json_writer.h"

/** Width of the star bar, as bcc. */
#define HIST_STARS 40

/**
 * Print a log2 histogram in the bcc layout: slot i counts values in
 * [2^i, 2^(i+1) - 1] (slot 0: 0 -> 1); rows up to the last non-empty slot.
 * @param out       stream (stdout)
 * @param slots     counts
 * @param n         number of slots (at most 64)
 * @param val_type  column title ("usecs", "grid")
 */
void hist_print_log2(FILE *out, const uint64_t *slots, size_t n, const char *val_type);

/**
 * Write the same histogram as a JSON array of {"min", "max", "count"}
 * objects (bpftrace's -f json shape), non-empty slots only.
 */
void hist_json_log2(struct json_writer *w, const uint64_t *slots, size_t n);

/** Bounds of log2 slot @p i: [*lo, *hi]. */
void hist_log2_bounds(size_t i, uint64_t *lo, uint64_t *hi);

#endif
