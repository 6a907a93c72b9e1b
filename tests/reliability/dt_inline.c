/* SPDX-License-Identifier: MIT */
/* tests/reliability/dt_inline.c - see dt_inline.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <gbpf/helper_ids.h>

#include "core/interp/interp.h"
#include "dt_inline.h"
#include "maps/map.h"

/*
 * Store r6 in arr[0] before the main program's final "r0 = r6; exit". The
 * epilogue's loop over the array is done by then, so r9 and the key slot
 * are free. The subprograms after it move down: the calls into them (all
 * in the main program, before the insertion) reach as much further.
 */
int dt_store_r0(struct dt_prog *p)
{
	const struct gbpf_insn tail[] = {
		{.code = GBPF_ALU64 | GBPF_MOV | GBPF_K, .dst = 9},
		{.code = GBPF_STX | GBPF_MEM | GBPF_W, .dst = 10, .src = 9, .off = -72},
		{.code = GBPF_LD | GBPF_IMM | GBPF_DW, .dst = 1, .src = GBPF_PSEUDO_MAP_IDX, .imm = DT_MAP_ARRAY},
		{0},
		{.code = GBPF_ALU64 | GBPF_MOV | GBPF_X, .dst = 2, .src = 10},
		{.code = GBPF_ALU64 | GBPF_ADD | GBPF_K, .dst = 2, .imm = -72},
		{.code = GBPF_OP_CALL, .imm = GBPF_HELPER_MAP_LOOKUP_ELEM},
		{.code = GBPF_JMP | GBPF_JEQ | GBPF_K, .dst = 0, .off = 1},
		{.code = GBPF_STX | GBPF_MEM | GBPF_DW, .dst = 0, .src = 6},
	};
	size_t add = sizeof(tail) / sizeof(tail[0]), at = p->main_n - 2;

	if (p->main_n < 2 || p->insns[p->main_n - 1].code != GBPF_OP_EXIT || p->n + add > DT_MAX_INSNS)
		return -EINVAL;
	memmove(&p->insns[at + add], &p->insns[at], (p->n - at) * sizeof(p->insns[0]));
	memcpy(&p->insns[at], tail, sizeof(tail));
	for (size_t i = 0; i < at; i++)
		if (p->insns[i].code == GBPF_OP_CALL && p->insns[i].src == GBPF_CALL_LOCAL)
			p->insns[i].imm += (int32_t)add;
	p->n += add;
	p->main_n += add;
	return 0;
}

void dt_maps_snapshot(struct gbpf_map_instance *maps, struct dt_maps_state *o)
{
	memset(o, 0, sizeof(*o));
	for (uint32_t k = 0; k < DT_ARRAY_ENTRIES; k++) {
		uint64_t *v = gbpf_map_lookup(&maps[DT_MAP_ARRAY], &k, 0);

		o->arr[k] = v ? *v : 0xdeadull;
	}
	for (uint32_t k = 0; k < DT_KEY_SPAN; k++) {
		uint64_t *v = gbpf_map_lookup(&maps[DT_MAP_HASH], &k, 0);

		o->present[k] = v != NULL;
		o->hash[k] = v ? *v : 0;
	}
}

void dt_maps_diff(const struct dt_maps_state *want, const struct dt_maps_state *got, char *buf, size_t size)
{
	buf[0] = 0;
	for (int k = 0; k < DT_ARRAY_ENTRIES; k++)
		if (want->arr[k] != got->arr[k]) {
			snprintf(buf, size, "arr[%d]%s 0x%" PRIx64 " vs 0x%" PRIx64, k, k ? "" : " (r0)",
				 want->arr[k], got->arr[k]);
			return;
		}
	for (int k = 0; k < DT_KEY_SPAN; k++)
		if (want->present[k] != got->present[k] || want->hash[k] != got->hash[k]) {
			snprintf(buf, size, "hash[%d] %s0x%" PRIx64 " vs %s0x%" PRIx64, k,
				 want->present[k] ? "" : "absent ", want->hash[k],
				 got->present[k] ? "" : "absent ", got->hash[k]);
			return;
		}
}

int dt_maps_create(struct gbpf_map_instance maps[2], char *why, size_t size)
{
	for (int i = 0; i < 2; i++)
		if (gbpf_map_instance_create(&maps[i], &dt_maps[i], 1)) {
			snprintf(why, size, "map %s: cannot create", dt_maps[i].name);
			if (i)
				gbpf_map_instance_destroy(&maps[0]);
			return -ENOMEM;
		}
	return 0;
}

void dt_maps_destroy(struct gbpf_map_instance maps[2])
{
	gbpf_map_instance_destroy(&maps[0]);
	gbpf_map_instance_destroy(&maps[1]);
}

int dt_interp_runs(const struct gbpf_prog_desc *d, unsigned runs, struct dt_maps_state *o, char *why,
		   size_t size)
{
	struct gbpf_map_instance maps[2];
	struct gbpf_interp *ip = NULL;
	GBPF_OPTS(gbpf_interp_opts, io, .bounds_checked = 1, .max_insns = 10000000);
	int err = dt_maps_create(maps, why, size);

	if (err)
		return err;
	err = gbpf_interp_create(d, maps, 2, &io, &ip, why, size);
	for (unsigned r = 0; !err && r < runs; r++) {
		struct gbpf_exec_env env = {.maps = maps, .map_cnt = 2, .thread_count = 1};

		err = gbpf_interp_run(ip, &env, NULL, NULL, 0, NULL, why, size);
	}
	if (!err)
		dt_maps_snapshot(maps, o);
	gbpf_interp_destroy(ip);
	dt_maps_destroy(maps);
	return err;
}
