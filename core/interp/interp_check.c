/* SPDX-License-Identifier: MIT */
/*
 * core/interp/interp_check.c - what the bounds-checked mode allows a
 * program to touch, and the checks around helper calls.
 *
 * The verifier engineer proves "accepted programs never fault" by running
 * them here, so the rules are exact: an access is allowed only when all of
 * its bytes lie inside ONE known block (the active stack frames, a region
 * of the caller, a map value reached by a wide load, a value returned by
 * map_lookup_elem, a live ring buffer record); writes also need the block
 * to be writable.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <gbpf/helper_ids.h>

#include "interp_internal.h"

static int inside(uintptr_t start, uintptr_t end, uint64_t addr, uint64_t size)
{
	return addr >= start && addr <= end && size <= end - addr;
}

/* Bytes of the active frames: frame k is the 512 bytes below the r10 of depth k. */
static void stack_bounds(const struct interp_run *run, uintptr_t *lo, uintptr_t *hi)
{
	*hi = (uintptr_t)(run->stack + sizeof(run->stack));
	*lo = *hi - (uintptr_t)(run->depth + 1) * GBPF_STACK_SIZE;
}

int gbpf_interp_access_ok(struct interp_run *run, uint64_t addr, uint64_t size, int write)
{
	const struct gbpf_interp *ip = run->ip;
	uintptr_t lo, hi;
	size_t i;

	if (size == 0)
		return 1;
	if (addr + size < addr)
		return 0;
	stack_bounds(run, &lo, &hi);
	if (inside(lo, hi, addr, size))
		return 1;
	for (i = 0; i < run->region_cnt; i++) {
		const struct gbpf_interp_region *r = &run->regions[i];
		uintptr_t start = (uintptr_t)r->addr;

		if (inside(start, start + r->size, addr, size))
			return !write || r->writable;
	}
	for (i = 0; i < ip->value_cnt; i++)
		if (inside(ip->values[i].start, ip->values[i].end, addr, size))
			return !write || ip->values[i].writable;
	for (i = 0; i < run->dyn_cnt; i++)
		if (inside(run->dyn[i].start, run->dyn[i].end, addr, size))
			return !write || run->dyn[i].writable;
	return 0;
}

/* Name the block an address falls in, if any (read-only faults), for the message. */
static const char *block_name(struct interp_run *run, uint64_t addr)
{
	uintptr_t lo, hi;
	size_t i;

	stack_bounds(run, &lo, &hi);
	if (addr >= lo && addr < hi)
		return "stack";
	for (i = 0; i < run->region_cnt; i++) {
		uintptr_t start = (uintptr_t)run->regions[i].addr;

		if (addr >= start && addr - start < run->regions[i].size)
			return run->regions[i].name ? run->regions[i].name : "caller region";
	}
	for (i = 0; i < run->ip->value_cnt; i++)
		if (addr >= run->ip->values[i].start && addr < run->ip->values[i].end)
			return run->ip->values[i].name ? run->ip->values[i].name : "map value";
	for (i = 0; i < run->dyn_cnt; i++)
		if (addr >= run->dyn[i].start && addr < run->dyn[i].end)
			return run->dyn[i].record ? "ring buffer record" : "map value";
	return NULL;
}

int gbpf_interp_fault_access(struct interp_run *run, size_t pc, uint64_t addr, uint64_t size,
			     int write)
{
	const char *blk = block_name(run, addr);
	uintptr_t lo, hi;

	stack_bounds(run, &lo, &hi);
	if (write && blk && gbpf_interp_access_ok(run, addr, size, 0))
		return gbpf_interp_fault(run, pc, -GBPF_ERRNO__FAULT,
					 "write of %llu bytes to read-only %s at 0x%llx",
					 (unsigned long long)size, blk, (unsigned long long)addr);
	return gbpf_interp_fault(run, pc, -GBPF_ERRNO__FAULT,
				 "out-of-bounds %s of %llu bytes at 0x%llx%s%s (stack 0x%llx-0x%llx)",
				 write ? "write" : "read", (unsigned long long)size,
				 (unsigned long long)addr, blk ? ", crossing the end of " : "",
				 blk ? blk : "", (unsigned long long)lo, (unsigned long long)hi);
}

static struct gbpf_map_instance *arg_map(struct interp_run *run, uint64_t v)
{
	size_t i;

	for (i = 0; i < run->ip->map_cnt; i++)
		if (v == (uint64_t)(uintptr_t)&run->ip->maps[i])
			return &run->ip->maps[i];
	return NULL;
}

static int need_map(struct interp_run *run, size_t pc, uint32_t id, unsigned r,
		    struct gbpf_map_instance **map)
{
	*map = arg_map(run, run->reg[r]);
	if (!*map || !(*map)->desc)
		return gbpf_interp_fault(run, pc, -GBPF_ERRNO__FAULT,
					 "helper %u: r%u (0x%llx) is not a map of this program", id,
					 r, (unsigned long long)run->reg[r]);
	return 0;
}

static int need_mem(struct interp_run *run, size_t pc, uint32_t id, unsigned r, uint64_t size,
		    int write)
{
	uint64_t addr = run->reg[r];

	if (gbpf_interp_access_ok(run, addr, size, write))
		return 0;
	return gbpf_interp_fault(run, pc, -GBPF_ERRNO__FAULT,
				 "helper %u: r%u = 0x%llx is not %llu %s bytes", id, r,
				 (unsigned long long)addr, (unsigned long long)size,
				 write ? "writable" : "readable");
}

/* NUL-terminated string inside one readable block, scanned byte by byte. */
static int need_string(struct interp_run *run, size_t pc, uint32_t id, unsigned r)
{
	uint64_t addr = run->reg[r], n;

	for (n = 0; n < (1u << 20); n++) {
		if (!gbpf_interp_access_ok(run, addr + n, 1, 0))
			break;
		if (*(const char *)(uintptr_t)(addr + n) == '\0')
			return 0;
	}
	return gbpf_interp_fault(run, pc, -GBPF_ERRNO__FAULT,
				 "helper %u: r%u = 0x%llx is not a NUL-terminated string in bounds",
				 id, r, (unsigned long long)addr);
}

/* Optional u64 out-pointer (GPU index helpers): NULL or 8 writable bytes. */
static int need_opt_u64(struct interp_run *run, size_t pc, uint32_t id, unsigned r)
{
	return run->reg[r] ? need_mem(run, pc, id, r, 8, 1) : 0;
}

int gbpf_interp_helper_pre(struct interp_run *run, size_t pc, uint32_t id)
{
	struct gbpf_map_instance *map;
	int ret;

	switch (id) {
	case GBPF_HELPER_MAP_LOOKUP_ELEM:
	case GBPF_HELPER_MAP_DELETE_ELEM:
		if ((ret = need_map(run, pc, id, 1, &map)))
			return ret;
		return need_mem(run, pc, id, 2, map->desc->key_size, 0);
	case GBPF_HELPER_MAP_UPDATE_ELEM:
		if ((ret = need_map(run, pc, id, 1, &map)) ||
		    (ret = need_mem(run, pc, id, 2, map->desc->key_size, 0)))
			return ret;
		return need_mem(run, pc, id, 3, map->desc->value_size, 0);
	case GBPF_HELPER_PROBE_READ:
	case GBPF_HELPER_PROBE_READ_USER:
	case GBPF_HELPER_PROBE_READ_KERNEL:
		/* The source is probed by the helper itself through env->access_ok. */
		return need_mem(run, pc, id, 1, (uint32_t)run->reg[2], 1);
	case GBPF_HELPER_TRACE_PRINTK:
		return need_mem(run, pc, id, 1, (uint32_t)run->reg[2], 0);
	case GBPF_HELPER_PERF_EVENT_OUTPUT:
		if ((ret = need_map(run, pc, id, 2, &map)))
			return ret;
		return need_mem(run, pc, id, 4, run->reg[5], 0);
	case GBPF_HELPER_RINGBUF_OUTPUT:
		if ((ret = need_map(run, pc, id, 1, &map)))
			return ret;
		return need_mem(run, pc, id, 2, run->reg[3], 0);
	case GBPF_HELPER_RINGBUF_RESERVE:
		return need_map(run, pc, id, 1, &map);
	case GBPF_HELPER_RINGBUF_SUBMIT:
	case GBPF_HELPER_RINGBUF_DISCARD:
		for (size_t i = 0; i < run->dyn_cnt; i++)
			if (run->dyn[i].record && run->dyn[i].start == run->reg[1])
				return 0;
		return gbpf_interp_fault(run, pc, -GBPF_ERRNO__FAULT,
					 "helper %u: r1 = 0x%llx is not a live ring buffer record",
					 id, (unsigned long long)run->reg[1]);
	case GBPF_HELPER_GPU_PUTS:
		return need_string(run, pc, id, 1);
	case GBPF_HELPER_GPU_BLOCK_IDX:
	case GBPF_HELPER_GPU_BLOCK_DIM:
	case GBPF_HELPER_GPU_THREAD_IDX:
	case GBPF_HELPER_GPU_GRID_DIM:
		if ((ret = need_opt_u64(run, pc, id, 1)) || (ret = need_opt_u64(run, pc, id, 2)))
			return ret;
		return need_opt_u64(run, pc, id, 3);
	default:
		return 0;
	}
}

static int add_dyn(struct interp_run *run, size_t pc, uint64_t start, uint64_t size, int writable,
		   int record, struct gbpf_map_instance *map)
{
	struct interp_dyn_region *d;
	size_t i;

	for (i = 0; i < run->dyn_cnt; i++)
		if (run->dyn[i].start == start && run->dyn[i].end == start + size)
			return 0;
	if (run->dyn_cnt == INTERP_MAX_DYN_REGIONS)
		return gbpf_interp_fault(run, pc, -GBPF_ERRNO__FAULT,
					 "more than %d distinct map values or records live in one run",
					 INTERP_MAX_DYN_REGIONS);
	d = &run->dyn[run->dyn_cnt++];
	d->start = (uintptr_t)start;
	d->end = (uintptr_t)(start + size);
	d->writable = writable;
	d->record = record;
	d->map = map;
	return 0;
}

int gbpf_interp_helper_post(struct interp_run *run, size_t pc, uint32_t id, uint64_t r0)
{
	struct gbpf_map_instance *map;
	size_t i;

	switch (id) {
	case GBPF_HELPER_MAP_LOOKUP_ELEM:
		if (!r0)
			return 0;
		map = arg_map(run, run->reg[1]);
		return add_dyn(run, pc, r0, map->desc->value_size,
			       !(map->desc->origin == GBPF_MAP_ORIGIN_RODATA ||
				 (map->desc->map_flags & GBPF_F_RDONLY_PROG)),
			       0, map);
	case GBPF_HELPER_RINGBUF_RESERVE:
		if (!r0)
			return 0;
		return add_dyn(run, pc, r0, run->reg[2], 1, 1, arg_map(run, run->reg[1]));
	case GBPF_HELPER_RINGBUF_SUBMIT:
	case GBPF_HELPER_RINGBUF_DISCARD:
		for (i = 0; i < run->dyn_cnt; i++) {
			if (run->dyn[i].record && run->dyn[i].start == run->reg[1]) {
				run->dyn[i] = run->dyn[--run->dyn_cnt];
				break;
			}
		}
		return 0;
	default:
		return 0;
	}
}
