/* SPDX-License-Identifier: MIT */
/*
 * --per-process: every process of the job gets its own map region (same
 * layout, same slots), so each process's counts stay apart. The aggregate
 * view is the sum: before every print, ctx->shm (which no agent ever sees
 * in this mode) is reset and every process region is added into it, word
 * by word for u64 values and key by key for hash maps. A process that
 * leaves keeps its region (its counts still belong to the job).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "maps/map.h"
#include "run_internal.h"

/* Most process regions one controller keeps (each is a full copy of the maps). */
#define RUN_MAX_PREGS (4 * RUN_MAX_AGENTS)

int run_agent_region(struct run_ctx *ctx, struct run_agent *ag)
{
	struct run_preg *p;
	char why[512] = "";
	void *grown;
	size_t i;
	int err;

	if (ag->preg >= 0)
		return 0;
	if (ctx->preg_cnt >= RUN_MAX_PREGS) {
		fprintf(stderr, "gbpf %s: pid %d: more than %d processes: no map region of its own\n",
			ctx->who, (int)ag->pid, RUN_MAX_PREGS);
		return -ENOSPC;
	}
	grown = realloc(ctx->pregs, (ctx->preg_cnt + 1) * sizeof(*ctx->pregs));
	if (!grown)
		return -ENOMEM;
	ctx->pregs = grown;
	p = &ctx->pregs[ctx->preg_cnt];
	memset(p, 0, sizeof(*p));
	p->pid = ag->pid;
	/* The base name, cut to the field (a name for the reader, not a path). */
	snprintf(p->exe, sizeof(p->exe), "%.63s",
		 strrchr(ag->exe, '/') ? strrchr(ag->exe, '/') + 1 : ag->exe);
	p->lost_seen = calloc(ctx->map_cnt ? ctx->map_cnt : 1, sizeof(*p->lost_seen));
	if (!p->lost_seen)
		return -ENOMEM;
	err = gbpf_shm_create(&p->shm, ctx->maps, ctx->slots, ctx->map_cnt, why, sizeof(why));
	if (err) {
		fprintf(stderr, "gbpf %s: pid %d: map memory of its own: %s\n", ctx->who, (int)ag->pid,
			why);
		free(p->lost_seen);
		return err;
	}
	/* The creation headers must match the aggregate's (run_map_intact compares them). */
	for (i = 0; i < ctx->map_cnt; i++)
		if (memcmp(p->shm.maps[i].mem, &ctx->hdr_copy[i],
			   offsetof(struct gbpf_map_hdr, count))) {
			fprintf(stderr, "gbpf %s: pid %d: map %s: region layout differs\n", ctx->who,
				(int)ag->pid, ctx->maps[i].name);
			gbpf_shm_destroy(&p->shm);
			free(p->lost_seen);
			return -EINVAL;
		}
	ag->preg = (long)ctx->preg_cnt++;
	return 0;
}

void run_agent_retire(struct run_ctx *ctx, struct run_agent *ag)
{
	(void)ctx;
	/* Its region stays in ctx->pregs: the job's totals include what it counted. */
	ag->preg = -1;
}

/* Run @p fn with ctx->shm (and the drop counts) being process region @p p. */
static void with_region(struct run_ctx *ctx, struct run_preg *p,
			void (*fn)(struct run_ctx *, bool), bool arg)
{
	struct gbpf_shm saved = ctx->shm;
	uint64_t *lost = ctx->lost_seen;

	ctx->shm = p->shm;
	ctx->lost_seen = p->lost_seen;
	ctx->in_preg = true;
	fn(ctx, arg);
	ctx->in_preg = false;
	ctx->shm = saved;
	ctx->lost_seen = lost;
}

static void drain_one(struct run_ctx *ctx, bool unused)
{
	(void)unused;
	run_drain_rings(ctx);
}

void run_procs_drain(struct run_ctx *ctx)
{
	size_t i;

	for (i = 0; i < ctx->preg_cnt; i++)
		with_region(ctx, &ctx->pregs[i], drain_one, false);
}

static bool is_ring(uint32_t t)
{
	return t == GBPF_MAP_TYPE_RINGBUF || t == GBPF_MAP_TYPE_PERF_EVENT_ARRAY;
}

void run_procs_aggregate(struct run_ctx *ctx)
{
	size_t i, k;

	for (k = 0; k < ctx->map_cnt; k++) {
		struct gbpf_map_instance *m = &ctx->shm.maps[k];

		if (is_ring(ctx->maps[k].type) || !run_map_intact(ctx, k))
			continue;
		/* Recount from zero: the aggregate is the sum of the regions now. */
		gbpf_map_mem_init(m->mem, m->mem_size, &ctx->maps[k], ctx->slots[k]);
		for (i = 0; i < ctx->preg_cnt; i++) {
			struct gbpf_map_instance *src = &ctx->pregs[i].shm.maps[k];

			if (memcmp(src->mem, &ctx->hdr_copy[k], offsetof(struct gbpf_map_hdr, count)))
				continue; /* overwritten by that process: reported when printed */
			/* Against an empty base: the aggregate is the plain sum. */
			gbpf_map_merge_delta(m, src, NULL, NULL);
		}
	}
}

static void print_one(struct run_ctx *ctx, bool unused)
{
	(void)unused;
	run_print_maps(ctx, false);
}

void run_procs_print(struct run_ctx *ctx, bool interval)
{
	size_t i;

	(void)interval;
	for (i = 0; i < ctx->preg_cnt; i++) {
		struct run_preg *p = &ctx->pregs[i];

		if (cli.json) {
			jw_start_object(&cli.jw);
			jw_kv_string(&cli.jw, "type", "process");
			jw_kv_int(&cli.jw, "pid", p->pid);
			jw_kv_string(&cli.jw, "exe", p->exe);
			jw_end_object(&cli.jw);
			jw_finish(&cli.jw);
		} else {
			printf("\npid %d (%s):\n", (int)p->pid, p->exe);
		}
		with_region(ctx, p, print_one, false);
	}
	fflush(stdout);
}

void run_procs_free(struct run_ctx *ctx)
{
	size_t i;

	for (i = 0; i < ctx->preg_cnt; i++) {
		gbpf_shm_destroy(&ctx->pregs[i].shm);
		free(ctx->pregs[i].lost_seen);
	}
	free(ctx->pregs);
	ctx->pregs = NULL;
	ctx->preg_cnt = 0;
}
