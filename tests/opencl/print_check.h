/* SPDX-License-Identifier: MIT */
/*
 * tests/opencl/print_check.h - checks of device print output (trace_printk /
 * puts from SPIR-V device code) in the output of `gbpf run`, shared by the
 * opencl and levelzero run tests. The probe (tests/opencl/progs/printprobe)
 * prints "gbpf-print launch=L tid=T hex=X" at every work-item's exit and
 * "gbpf-puts first work-item" from work-item 0 of each launch.
 */
#ifndef GBPF_TESTS_PRINT_CHECK_H
#define GBPF_TESTS_PRINT_CHECK_H

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PRINT_CHECK_MAX_LAUNCHES 16

struct print_check {
	uint64_t lines;      /* well-formed print lines seen */
	uint64_t malformed;  /* lines whose hex= disagrees with tid= or tid out of range */
	uint64_t dups;       /* (launch, tid) seen more than once */
	uint64_t missing;    /* (launch, tid) never seen, over the launches seen */
	uint64_t puts;       /* puts lines */
	uint64_t lost;       /* lost lines the agent reported */
	unsigned launches;   /* distinct launch ids */
};

/*
 * Sum of the counts of every {"type":"lost_events","map":"MAP","count":N}
 * line of `gbpf -j run` output: each is what was lost since the previous one.
 */
static inline uint64_t lost_events_total(const char *out, const char *map)
{
	char key[128];
	uint64_t total = 0;

	snprintf(key, sizeof(key), "\"type\":\"lost_events\",\"map\":\"%s\",\"count\":", map);
	for (const char *p = out; (p = strstr(p, key)); p += strlen(key))
		total += strtoull(p + strlen(key), NULL, 10);
	return total;
}

/* Sum of every "N trace_printk/puts line(s) lost" the output reports. */
static inline uint64_t print_check_lost(const char *out)
{
	const char *key = " trace_printk/puts line";
	uint64_t total = 0;

	for (const char *p = out; (p = strstr(p, key)); p += strlen(key)) {
		const char *d = p;

		while (d > out && d[-1] >= '0' && d[-1] <= '9')
			d--;
		if (d < p)
			total += strtoull(d, NULL, 10);
	}
	return total;
}

/*
 * Count the print lines of @p out for launches of @p threads work-items each.
 * Returns 0, or -1 when the output holds more launches than the checker keeps.
 */
static inline int print_check(const char *out, uint64_t threads, struct print_check *pc)
{
	uint64_t ids[PRINT_CHECK_MAX_LAUNCHES];
	unsigned char *seen = calloc(PRINT_CHECK_MAX_LAUNCHES * threads, 1);
	const char *key = "gbpf-print launch=";
	int rc = 0;

	memset(pc, 0, sizeof(*pc));
	if (!seen)
		return -1;
	for (const char *p = out; (p = strstr(p, key)); p += strlen(key)) {
		unsigned long long launch, tid;
		unsigned hex;
		unsigned i;

		if (sscanf(p, "gbpf-print launch=%llu tid=%llu hex=%x", &launch, &tid, &hex) != 3 || tid >= threads ||
		    hex != (unsigned)tid) {
			pc->malformed++;
			continue;
		}
		for (i = 0; i < pc->launches && ids[i] != launch; i++)
			;
		if (i == pc->launches) {
			if (pc->launches == PRINT_CHECK_MAX_LAUNCHES) {
				rc = -1;
				continue;
			}
			ids[pc->launches++] = launch;
		}
		pc->lines++;
		if (seen[i * threads + tid]++)
			pc->dups++;
	}
	for (unsigned i = 0; i < pc->launches; i++)
		for (uint64_t t = 0; t < threads; t++)
			pc->missing += !seen[i * threads + t];
	for (const char *p = out; (p = strstr(p, "gbpf-puts first work-item")); p++)
		pc->puts++;
	pc->lost = print_check_lost(out);
	free(seen);
	return rc;
}

#endif
