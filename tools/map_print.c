/* SPDX-License-Identifier: MIT */
#include "map_print.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gbpf/maps.h>

#include "cli.h"
#include "names.h"

/* Cap on entries shown per map so a 10^6-thread run stays readable. */
#define MAX_SHOWN 64

static int is_ringbuf(uint32_t type)
{
	return type == GBPF_MAP_TYPE_RINGBUF || type == GBPF_MAP_TYPE_GPU_RINGBUF ||
	       type == GBPF_MAP_TYPE_PERF_EVENT_ARRAY;
}

static int is_array(uint32_t type)
{
	return type == GBPF_MAP_TYPE_ARRAY || type == GBPF_MAP_TYPE_PERCPU_ARRAY ||
	       type == GBPF_MAP_TYPE_GPU_ARRAY || type == GBPF_MAP_TYPE_PERGPUTHREAD_ARRAY;
}

static int all_zero(const void *p, size_t n)
{
	const unsigned char *b = p;
	size_t i;

	for (i = 0; i < n; i++)
		if (b[i])
			return 0;
	return 1;
}

/* Integers of 1/2/4/8 bytes as numbers, anything else as hex bytes. */
static void put_bytes_text(const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t v = 0;
	size_t i;

	if (n == 1 || n == 2 || n == 4 || n == 8) {
		memcpy(&v, p, n);
		printf("%" PRIu64, v);
		return;
	}
	for (i = 0; i < n; i++)
		printf("%s%02x", i ? " " : "", b[i]);
}

static void put_bytes_json(const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t v = 0;
	size_t i;

	if (n == 1 || n == 2 || n == 4 || n == 8) {
		memcpy(&v, p, n);
		jw_uint(&cli.jw, v);
		return;
	}
	jw_start_array(&cli.jw);
	for (i = 0; i < n; i++)
		jw_uint(&cli.jw, b[i]);
	jw_end_array(&cli.jw);
}

static void put_entry(const void *key, size_t key_size, uint32_t slot, int per_slot,
		      const void *value, size_t value_size)
{
	if (cli.json) {
		jw_start_object(&cli.jw);
		jw_key(&cli.jw, "key");
		put_bytes_json(key, key_size);
		if (per_slot)
			jw_kv_uint(&cli.jw, "slot", slot);
		jw_key(&cli.jw, "value");
		put_bytes_json(value, value_size);
		jw_end_object(&cli.jw);
		return;
	}
	printf("    key ");
	put_bytes_text(key, key_size);
	if (per_slot)
		printf(" slot %u", slot);
	printf(": ");
	put_bytes_text(value, value_size);
	printf("\n");
}

struct record_ctx {
	size_t shown, total;
};

static int print_record(void *ctx, const void *data, size_t size)
{
	struct record_ctx *rc = ctx;

	rc->total++;
	if (rc->shown >= MAX_SHOWN)
		return 0;
	rc->shown++;
	if (cli.json) {
		jw_start_object(&cli.jw);
		jw_key(&cli.jw, "record");
		put_bytes_json(data, size);
		jw_end_object(&cli.jw);
	} else {
		printf("    record (%zu bytes): ", size);
		put_bytes_text(data, size);
		printf("\n");
	}
	return 0;
}

/* The u64 value of @p key summed over every per-CPU slot. */
static uint64_t slot_sum(struct gbpf_map_instance *m, const void *key, uint32_t slots)
{
	uint64_t sum = 0, v;

	for (uint32_t s = 0; s < slots; s++) {
		const void *p = gbpf_map__lookup(m, key, s);

		if (p) {
			memcpy(&v, p, sizeof(v));
			sum += v;
		}
	}
	return sum;
}

/* Walk the entries of one map; returns how many non-empty ones exist. */
static size_t walk_entries(struct gbpf_map_instance *m, int print)
{
	const struct gbpf_map_desc *d = m->desc;
	uint32_t slots = gbpf_map__nr_slots(m), s;
	size_t found = 0, shown = 0;
	unsigned char *key = calloc(1, d->key_size ? d->key_size : 1);
	unsigned char *next = calloc(1, d->key_size ? d->key_size : 1);
	int per_slot = slots > 1, have = 0;
	/*
	 * Per-CPU counters (one u64, e.g. per SM on a GPU) print as one sum per
	 * key: the per-slot split of a 132-SM GPU buries the counts. Per-GPU-
	 * thread slots are threads, each its own entry.
	 */
	int sum_slots = per_slot && d->value_size == 8 &&
			(d->type == GBPF_MAP_TYPE_PERCPU_ARRAY || d->type == GBPF_MAP_TYPE_PERCPU_HASH);

	if (!key || !next)
		goto out;
	if (is_array(d->type)) {
		uint32_t i;

		for (i = 0; i < d->max_entries; i++) {
			if (sum_slots) {
				uint64_t sum = slot_sum(m, &i, slots);

				if (!sum)
					continue;
				found++;
				if (print && shown++ < MAX_SHOWN)
					put_entry(&i, sizeof(i), 0, 0, &sum, sizeof(sum));
				continue;
			}
			for (s = 0; s < slots; s++) {
				void *v = gbpf_map__lookup(m, &i, s);

				if (!v || all_zero(v, d->value_size))
					continue;
				found++;
				if (print && shown++ < MAX_SHOWN)
					put_entry(&i, sizeof(i), s, per_slot, v, d->value_size);
			}
		}
		goto out;
	}
	while (gbpf_map__get_next_key(m, have ? key : NULL, next) == 0) {
		memcpy(key, next, d->key_size);
		have = 1;
		if (sum_slots) {
			uint64_t sum = slot_sum(m, key, slots);

			found++;
			if (print && shown++ < MAX_SHOWN)
				put_entry(key, d->key_size, 0, 0, &sum, sizeof(sum));
			continue;
		}
		for (s = 0; s < slots; s++) {
			void *v = gbpf_map__lookup(m, key, s);

			if (!v)
				continue;
			found++;
			if (print && shown++ < MAX_SHOWN)
				put_entry(key, d->key_size, s, per_slot, v, d->value_size);
		}
	}
out:
	free(key);
	free(next);
	return found;
}

void map_print_all(struct gbpf_map_instance *maps, size_t count)
{
	size_t i;

	if (cli.json) {
		jw_key(&cli.jw, "maps");
		jw_start_array(&cli.jw);
	}
	for (i = 0; i < count; i++) {
		struct gbpf_map_instance *m = &maps[i];
		const struct gbpf_map_desc *d = m->desc;

		if (d->origin == GBPF_MAP_ORIGIN_RODATA)
			continue;
		if (is_ringbuf(d->type)) {
			struct record_ctx rc = {0};

			if (cli.json) {
				jw_start_object(&cli.jw);
				jw_kv_string(&cli.jw, "name", d->name);
				jw_kv_string(&cli.jw, "type", map_type_name(d->type));
				jw_key(&cli.jw, "records");
				jw_start_array(&cli.jw);
			} else {
				printf("map %s (%s):\n", d->name, map_type_name(d->type));
			}
			gbpf_map__consume(m, print_record, &rc);
			if (cli.json) {
				jw_end_array(&cli.jw);
				jw_kv_uint(&cli.jw, "record_count", rc.total);
				jw_kv_uint(&cli.jw, "dropped", gbpf_map__dropped(m));
				jw_end_object(&cli.jw);
			} else {
				if (rc.total > rc.shown)
					printf("    ... %zu more records\n", rc.total - rc.shown);
				printf("    %zu records, %" PRIu64 " dropped\n", rc.total,
				       gbpf_map__dropped(m));
			}
			continue;
		}
		size_t found = walk_entries(m, 0);

		if (!found)
			continue;
		if (cli.json) {
			jw_start_object(&cli.jw);
			jw_kv_string(&cli.jw, "name", d->name);
			jw_kv_string(&cli.jw, "type", map_type_name(d->type));
			jw_kv_uint(&cli.jw, "entries", found);
			jw_key(&cli.jw, "data");
			jw_start_array(&cli.jw);
			walk_entries(m, 1);
			jw_end_array(&cli.jw);
			jw_end_object(&cli.jw);
		} else {
			printf("map %s (%s, key %u B, value %u B): %zu non-empty entries\n", d->name,
			       map_type_name(d->type), d->key_size, d->value_size, found);
			walk_entries(m, 1);
			if (found > MAX_SHOWN)
				printf("    ... %zu more\n", found - MAX_SHOWN);
		}
	}
	if (cli.json)
		jw_end_array(&cli.jw);
}
