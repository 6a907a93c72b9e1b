/* SPDX-License-Identifier: MIT */
/* Log2 histograms in the layout bcc users read every day (user-conventions.md). */
#include "hist_print.h"

#include <inttypes.h>

void hist_log2_bounds(size_t i, uint64_t *lo, uint64_t *hi)
{
	if (i >= 63) {
		*lo = 1ull << 63;
		*hi = UINT64_MAX;
		return;
	}
	*hi = (1ull << (i + 1)) - 1;
	*lo = i ? 1ull << i : 0;
}

static void put_stars(FILE *out, uint64_t val, uint64_t max)
{
	uint64_t v = val < max ? val : max;
	size_t stars = max ? (size_t)(v * HIST_STARS / max) : 0, i;

	for (i = 0; i < HIST_STARS; i++)
		fputc(i < stars ? '*' : ' ', out);
	/* bcc marks a value cut at the maximum with '+'. */
	if (val > max)
		fputc('+', out);
}

void hist_print_log2(FILE *out, const uint64_t *slots, size_t n, const char *val_type)
{
	size_t i, last = 0;
	uint64_t max = 0;
	int found = 0;
	int wide;

	if (n > 64)
		n = 64;
	for (i = 0; i < n; i++) {
		if (slots[i]) {
			last = i;
			found = 1;
		}
		if (slots[i] > max)
			max = slots[i];
	}
	if (!found)
		return;
	/* Columns widen once the bounds need more than 10 digits, as in bcc. */
	wide = last > 32;
	fprintf(out, "%*s%-*s : count    distribution\n", wide ? 15 : 5, "", wide ? 29 : 19,
		val_type);
	for (i = 0; i <= last; i++) {
		uint64_t lo, hi;

		hist_log2_bounds(i, &lo, &hi);
		fprintf(out, "%*" PRIu64 " -> %-*" PRIu64 " : %-8" PRIu64 " |", wide ? 20 : 10, lo,
			wide ? 20 : 10, hi, slots[i]);
		put_stars(out, slots[i], max);
		fprintf(out, "|\n");
	}
}

void hist_json_log2(struct json_writer *w, const uint64_t *slots, size_t n)
{
	size_t i;

	if (n > 64)
		n = 64;
	jw_start_array(w);
	for (i = 0; i < n; i++) {
		uint64_t lo, hi;

		if (!slots[i])
			continue;
		hist_log2_bounds(i, &lo, &hi);
		jw_start_object(w);
		jw_kv_uint(w, "min", lo);
		jw_kv_uint(w, "max", hi);
		jw_kv_uint(w, "count", slots[i]);
		jw_end_object(w);
	}
	jw_end_array(w);
}
