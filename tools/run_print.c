/* SPDX-License-Identifier: MIT */
/*
 * What `gbpf run` prints: ring buffer records as they arrive, lost events
 * exactly (bcc's "Lost N events"), and maps in the bcc style: a map named
 * like a histogram ("*hist*") holding u64 slots is a log2 histogram; a hash
 * of u64 values is a table of counters; anything else goes through the
 * generic map printer. -j gives one JSON object per line (bpftrace shapes).
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gbpf/maps.h>

#include "cli.h"
#include "hist_print.h"
#include "map_print.h"
#include "run_internal.h"

static bool is_ring(uint32_t t)
{
	return t == GBPF_MAP_TYPE_RINGBUF || t == GBPF_MAP_TYPE_GPU_RINGBUF ||
	       t == GBPF_MAP_TYPE_PERF_EVENT_ARRAY;
}

static bool is_hash(uint32_t t)
{
	return t == GBPF_MAP_TYPE_HASH || t == GBPF_MAP_TYPE_LRU_HASH ||
	       t == GBPF_MAP_TYPE_GPU_HASH || t == GBPF_MAP_TYPE_PERCPU_HASH;
}

static void hex(char *out, size_t cap, const unsigned char *p, size_t n)
{
	size_t i, o = 0;

	for (i = 0; i < n && o + 3 <= cap; i++)
		o += (size_t)snprintf(out + o, cap - o, "%02x", p[i]);
	if (o < cap)
		out[o] = 0;
}

/* A key as text: a NUL-padded string, a number, or hex bytes. */
static void key_text(char *out, size_t cap, const unsigned char *k, size_t n)
{
	size_t len = 0, i;
	uint64_t v = 0;

	while (len < n && k[len] && isprint(k[len]))
		len++;
	if (len && len < cap) {
		for (i = len; i < n && !k[i]; i++)
			;
		if (i == n) {
			snprintf(out, cap, "%.*s", (int)len, (const char *)k);
			return;
		}
	}
	if (n == 1 || n == 2 || n == 4 || n == 8) {
		memcpy(&v, k, n);
		snprintf(out, cap, "%" PRIu64, v);
		return;
	}
	hex(out, cap, k, n);
}

/* ---- ring buffers ------------------------------------------------------------------ */

struct rec_ctx {
	struct run_ctx *run;
	const char *map;
	struct jw_record_fmt fmt; /* the fast path's line start (fast only) */
	bool fast;
};

/*
 * Lines of ring buffer records, made by the controller's thread (the only
 * one that drains rings) in blocks of 1 MiB that a writer thread writes to
 * stdout while the next block fills: one write(2) per block instead of
 * stdio calls and a flush per record (kernelretsnoop sends millions of
 * records; #8). Each drain ends with the block written (jwb_flush waits),
 * so stdio lines printed after it come after its records.
 */
#define RUN_REC_BLOCK (1u << 20)
static struct jw_block run_rec_block;
static bool run_rec_block_ready;

/* The line as the jw_* calls make it: also the fallback of the block path (pretty JSON). */
static void record_slow(struct rec_ctx *rc, const void *data, size_t size)
{
	char text[2 * JW_RECORD_DATA_MAX + 1];
	size_t shown = size < JW_RECORD_DATA_MAX ? size : JW_RECORD_DATA_MAX;

	*jw_hex(text, data, shown) = 0;
	if (cli.json) {
		jw_start_object(&cli.jw);
		jw_kv_string(&cli.jw, "type", "event");
		jw_kv_string(&cli.jw, "map", rc->map);
		jw_kv_uint(&cli.jw, "size", size);
		jw_kv_string(&cli.jw, "data", text);
		jw_end_object(&cli.jw);
		jw_finish(&cli.jw);
	} else {
		printf("%s: %s%s\n", rc->map, text, size > JW_RECORD_DATA_MAX ? "..." : "");
	}
}

static int on_record(void *c, const void *data, size_t size)
{
	struct rec_ctx *rc = c;
	char *p;

	rc->run->records++;
	if (rc->fast && (p = jwb_room(&run_rec_block, jw_record_line_max(&rc->fmt)))) {
		jwb_commit(&run_rec_block, p + jw_record_line(&rc->fmt, p, data, size));
		return 0;
	}
	record_slow(rc, data, size);
	return 0;
}

/* The block path for this map's records, when the output is not pretty JSON and memory allows. */
static bool record_fast_init(struct rec_ctx *rc)
{
	if (cli.pretty)
		return false;
	if (!run_rec_block_ready) {
		if (jwb_init(&run_rec_block, fileno(stdout), stdout, RUN_REC_BLOCK))
			return false;
		/* Blocks are written by a thread while the next fills (stays synchronous if it cannot start). */
		jwb_start_writer(&run_rec_block);
		run_rec_block_ready = true;
	}
	return jw_record_fmt_init(&rc->fmt, rc->map, cli.json) == 0;
}

void run_drain_rings(struct run_ctx *ctx)
{
	size_t i;
	bool any = false;

	/* Records live in each process's own rings: drain those (each comes back here). */
	if (ctx->per_process && !ctx->in_preg) {
		run_procs_drain(ctx);
		return;
	}
	for (i = 0; i < ctx->map_cnt; i++) {
		struct gbpf_map_instance *m = &ctx->shm.maps[i];
		struct rec_ctx rc = {.run = ctx, .map = ctx->maps[i].name};
		uint64_t dropped;

		if (!is_ring(ctx->maps[i].type))
			continue;
		if (!run_map_intact(ctx, i)) {
			if (ctx->lost_seen[i] != UINT64_MAX)
				fprintf(stderr, "gbpf %s: map %s: header overwritten by the "
					"application; no longer read\n", ctx->who, rc.map);
			ctx->lost_seen[i] = UINT64_MAX;
			continue;
		}
		rc.fast = record_fast_init(&rc);
		if (gbpf_map__consume(m, on_record, &rc) > 0)
			any = true;
		if (rc.fast)
			jw_record_fmt_free(&rc.fmt);
		/* The records' block goes out before anything stdio prints after it. */
		if (run_rec_block_ready)
			jwb_flush(&run_rec_block);
		dropped = gbpf_map__dropped(m);
		if (dropped > ctx->lost_seen[i]) {
			uint64_t lost = dropped - ctx->lost_seen[i];

			ctx->lost_seen[i] = dropped;
			if (cli.json) {
				jw_start_object(&cli.jw);
				jw_kv_string(&cli.jw, "type", "lost_events");
				jw_kv_string(&cli.jw, "map", rc.map);
				jw_kv_uint(&cli.jw, "count", lost);
				jw_end_object(&cli.jw);
				jw_finish(&cli.jw);
			} else {
				fprintf(stderr, "Lost %" PRIu64 " events\n", lost);
			}
			any = true;
		}
	}
	if (any)
		fflush(stdout);
}

/* ---- maps ----------------------------------------------------------------------- */

/* Sum of the per-CPU copies of a u64 value (or the value itself). */
static uint64_t value_sum(struct gbpf_map_instance *m, const void *key, size_t word)
{
	uint32_t s, slots = gbpf_map__nr_slots(m);
	uint64_t sum = 0, v;

	for (s = 0; s < slots; s++) {
		const unsigned char *p = gbpf_map__lookup(m, key, s);

		if (!p)
			continue;
		memcpy(&v, p + word * 8, 8);
		sum += v;
	}
	return sum;
}

/*
 * One log2 histogram: an ARRAY of u64 (slot i is element i) or a hash keyed
 * by the slot (bcc's BPF_HISTOGRAM: slot i is key i, absent keys count 0).
 */
static bool print_slot_hist(struct gbpf_map_instance *m, const struct gbpf_map_desc *d)
{
	uint64_t slots[64];
	int i, n = gbpf_map__log2_slots(m, d, slots);
	bool any = false;

	for (i = 0; i < n; i++)
		any |= slots[i] != 0;
	if (!any)
		return true;
	if (cli.json) {
		jw_start_object(&cli.jw);
		jw_kv_string(&cli.jw, "type", "hist");
		jw_key(&cli.jw, "data");
		jw_start_object(&cli.jw);
		jw_key(&cli.jw, d->name);
		hist_json_log2(&cli.jw, slots, n);
		jw_end_object(&cli.jw);
		jw_end_object(&cli.jw);
		jw_finish(&cli.jw);
	} else {
		printf("%s:\n", d->name);
		hist_print_log2(stdout, slots, n, "value");
	}
	return true;
}

struct row {
	char key[160];
	uint64_t val;
	uint64_t *slots; /* histograms per key */
};

static int row_cmp(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->val != y->val)
		return x->val < y->val ? 1 : -1;
	return strcmp(x->key, y->key);
}

/*
 * Hash of u64 counters (value 8 bytes): a table sorted by count; or, for a
 * map named like a histogram with u64-slot values, one histogram per key.
 */
static bool print_keyed(struct gbpf_map_instance *m, const struct gbpf_map_desc *d, bool hist)
{
	size_t words = d->value_size / 8, n = 0, i, w;
	unsigned char *key = calloc(1, d->key_size), *next = calloc(1, d->key_size);
	size_t cap = 256;
	struct row *rows = calloc(cap, sizeof(*rows));
	bool have = false;

	if (!key || !next || !rows)
		goto out;
	/*
	 * Every key: a table that shows only some would misreport the map. At most
	 * max_entries of them: a key deleted while the kernel runs makes the walk
	 * start again from the first (as Linux), which must not go on for ever.
	 */
	while (n < d->max_entries && gbpf_map__get_next_key(m, have ? key : NULL, next) == 0) {
		if (n == cap) {
			struct row *more = realloc(rows, 2 * cap * sizeof(*rows));

			if (!more) {
				fprintf(stderr, "gbpf run: map %s: out of memory after %zu keys; "
					"the rest not printed\n", d->name, n);
				break;
			}
			memset(more + cap, 0, cap * sizeof(*rows));
			rows = more;
			cap *= 2;
		}
		memcpy(key, next, d->key_size);
		have = true;
		key_text(rows[n].key, sizeof(rows[n].key), key, d->key_size);
		if (hist) {
			rows[n].slots = calloc(words > 64 ? 64 : words, sizeof(uint64_t));
			if (!rows[n].slots)
				break;
			for (w = 0; w < words && w < 64; w++) {
				rows[n].slots[w] = value_sum(m, key, w);
				rows[n].val += rows[n].slots[w];
			}
		} else {
			rows[n].val = value_sum(m, key, 0);
		}
		n++;
	}
	if (!n)
		goto out;
	qsort(rows, n, sizeof(*rows), row_cmp);
	if (cli.json) {
		jw_start_object(&cli.jw);
		jw_kv_string(&cli.jw, "type", hist ? "hist" : "map");
		jw_key(&cli.jw, "data");
		jw_start_object(&cli.jw);
		jw_key(&cli.jw, d->name);
		jw_start_object(&cli.jw);
		for (i = 0; i < n; i++) {
			jw_key(&cli.jw, rows[i].key);
			if (hist)
				hist_json_log2(&cli.jw, rows[i].slots, words > 64 ? 64 : words);
			else
				jw_uint(&cli.jw, rows[i].val);
		}
		jw_end_object(&cli.jw);
		jw_end_object(&cli.jw);
		jw_end_object(&cli.jw);
		jw_finish(&cli.jw);
	} else if (hist) {
		for (i = 0; i < n; i++) {
			printf("\n%s = %s\n", d->name, rows[i].key);
			hist_print_log2(stdout, rows[i].slots, words > 64 ? 64 : words, "value");
		}
	} else {
		printf("%s:\n%-32s %12s\n", d->name, "KEY", "COUNT");
		for (i = 0; i < n; i++)
			printf("%-32s %12" PRIu64 "\n", rows[i].key, rows[i].val);
	}
out:
	if (rows)
		for (i = 0; i < n; i++)
			free(rows[i].slots);
	free(rows);
	free(key);
	free(next);
	return true;
}

void run_print_maps(struct run_ctx *ctx, bool interval)
{
	size_t i;

	/* The aggregate first (the sum of every process), then each process. */
	if (ctx->per_process && !ctx->in_preg)
		run_procs_aggregate(ctx);
	if (interval) {
		char stamp[16];
		time_t t = time(NULL);
		struct tm tm;

		localtime_r(&t, &tm);
		strftime(stamp, sizeof(stamp), "%H:%M:%S", &tm);
		if (cli.json) {
			jw_start_object(&cli.jw);
			jw_kv_string(&cli.jw, "type", "time");
			jw_kv_string(&cli.jw, "data", stamp);
			jw_end_object(&cli.jw);
			jw_finish(&cli.jw);
		} else {
			printf("\n%s\n", stamp);
		}
	}
	for (i = 0; i < ctx->map_cnt; i++) {
		const struct gbpf_map_desc *d = &ctx->maps[i];
		struct gbpf_map_instance *m = &ctx->shm.maps[i];
		enum gbpf_map_hist_shape shape;

		if (is_ring(d->type) || d->origin == GBPF_MAP_ORIGIN_RODATA)
			continue;
		if (!run_map_intact(ctx, i)) {
			fprintf(stderr, "gbpf %s: map %s: header overwritten by the application; "
				"not printed\n", ctx->who, d->name);
			continue;
		}
		shape = gbpf_map_desc__hist_shape(d);
		if (shape == GBPF_MAP_HIST_ARRAY || shape == GBPF_MAP_HIST_SLOT_KEY) {
			print_slot_hist(m, d);
			continue;
		}
		if (shape == GBPF_MAP_HIST_PER_KEY) {
			print_keyed(m, d, true);
			continue;
		}
		if (is_hash(d->type) && d->value_size == 8 && d->key_size) {
			print_keyed(m, d, false);
			continue;
		}
		/* Anything else: the generic printer, one JSON line per map. */
		if (cli.json) {
			jw_start_object(&cli.jw);
			jw_kv_string(&cli.jw, "type", "maps");
			map_print_all(m, 1);
			jw_end_object(&cli.jw);
			jw_finish(&cli.jw);
		} else {
			map_print_all(m, 1);
		}
	}
	fflush(stdout);
	if (ctx->per_process && !ctx->in_preg)
		run_procs_print(ctx, interval);
}

/* ---- the GPU timeline ---------------------------------------------------------------- */

static const char *proc_exe(void *c, uint32_t pid)
{
	struct run_ctx *ctx = c;
	size_t i;

	for (i = 0; i < ctx->proc_cnt; i++)
		if ((uint32_t)ctx->procs[i].pid == pid) {
			const char *slash = strrchr(ctx->procs[i].exe, '/');

			return slash ? slash + 1 : ctx->procs[i].exe;
		}
	return NULL;
}

static void summary_json(struct run_ctx *ctx, const struct gbpf_tl_summary *s)
{
	static const char *const copy_keys[4] = {"h2d", "d2h", "d2d", "memset"};
	size_t i;
	int k;

	jw_start_object(&cli.jw);
	jw_kv_string(&cli.jw, "type", "timeline_summary");
	jw_key(&cli.jw, "data");
	jw_start_object(&cli.jw);
	jw_kv_uint(&cli.jw, "events", s->events);
	jw_kv_uint(&cli.jw, "lost_events", ctx->tl.dropped_agents + ctx->tl.dropped_store);
	jw_key(&cli.jw, "streams");
	jw_start_array(&cli.jw);
	for (i = 0; i < s->stream_cnt; i++) {
		const struct gbpf_tl_stream_sum *st = &s->streams[i];

		jw_start_object(&cli.jw);
		jw_kv_uint(&cli.jw, "pid", st->pid);
		jw_kv_int(&cli.jw, "device", st->device);
		jw_kv_uint(&cli.jw, "stream", st->stream);
		jw_kv_uint(&cli.jw, "kernel_ns", st->kernel_ns);
		jw_kv_uint(&cli.jw, "kernels", st->kernel_cnt);
		for (k = 0; k < 4; k++) {
			char key[32];

			snprintf(key, sizeof(key), "%s_ns", copy_keys[k]);
			jw_kv_uint(&cli.jw, key, st->copy_ns[k]);
			snprintf(key, sizeof(key), "%s_count", copy_keys[k]);
			jw_kv_uint(&cli.jw, key, st->copy_cnt[k]);
			snprintf(key, sizeof(key), "%s_bytes", copy_keys[k]);
			jw_kv_uint(&cli.jw, key, st->copy_bytes[k]);
		}
		jw_kv_uint(&cli.jw, "busy_ns", st->busy_ns);
		jw_kv_uint(&cli.jw, "idle_ns", st->idle_ns);
		jw_kv_uint(&cli.jw, "window_ns", st->window_ns);
		jw_end_object(&cli.jw);
	}
	jw_end_array(&cli.jw);
	jw_key(&cli.jw, "syncs");
	jw_start_array(&cli.jw);
	for (i = 0; i < s->sync_cnt; i++) {
		const struct gbpf_tl_sync_sum *sy = &s->syncs[i];

		jw_start_object(&cli.jw);
		jw_kv_uint(&cli.jw, "pid", sy->pid);
		jw_kv_string(&cli.jw, "name", sy->name < ctx->tl.name_cnt ? ctx->tl.names[sy->name]
									    : "?");
		jw_kv_uint(&cli.jw, "calls", sy->calls);
		jw_kv_uint(&cli.jw, "waited_ns", sy->waited_ns);
		jw_kv_uint(&cli.jw, "max_ns", sy->max_ns);
		jw_kv_uint(&cli.jw, "gpu_kernel_ns", sy->gpu_kernel_ns);
		jw_kv_uint(&cli.jw, "gpu_copy_ns", sy->gpu_copy_ns);
		jw_end_object(&cli.jw);
	}
	jw_end_array(&cli.jw);
	jw_end_object(&cli.jw);
	jw_end_object(&cli.jw);
	jw_finish(&cli.jw);
}

static uint64_t clock_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The timeline as OTLP spans, GBPF_TL_OTLP_BATCH events per request; stops at the first failure. */
static void send_spans(struct run_ctx *ctx)
{
	struct gbpf_otlp_opts o = {.service_name = "gbpf", .start_time_ns = ctx->start_unix_ns};
	int64_t to_unix = (int64_t)(clock_ns(CLOCK_REALTIME) - clock_ns(CLOCK_MONOTONIC));
	char why[512] = "";
	size_t from;

	for (from = 0; from < ctx->tl.n; from += GBPF_TL_OTLP_BATCH) {
		char *body = NULL;
		size_t len = 0;
		int err = gbpf_otlp_render_spans(&ctx->tl, from, GBPF_TL_OTLP_BATCH, &o, to_unix,
						 &body, &len);

		if (err) {
			fprintf(stderr, "gbpf %s: OTLP spans: %s\n", ctx->who, strerror(-err));
			return;
		}
		err = gbpf_otlp_post(ctx->otlp_traces_url, body, len, 2000, why, sizeof(why));
		free(body);
		if (err) {
			fprintf(stderr, "gbpf %s: %s\n", ctx->who, why);
			return;
		}
	}
}

void run_finish_timeline(struct run_ctx *ctx)
{
	struct gbpf_tl_summary s;
	char why[512] = "";

	if (!ctx->tl.n && !ctx->tl.dropped_agents && !ctx->tl.dropped_store)
		return;
	if (ctx->tl.dropped_agents + ctx->tl.dropped_store) {
		if (cli.json) {
			jw_start_object(&cli.jw);
			jw_kv_string(&cli.jw, "type", "lost_events");
			jw_kv_string(&cli.jw, "map", "timeline");
			jw_kv_uint(&cli.jw, "count", ctx->tl.dropped_agents + ctx->tl.dropped_store);
			jw_end_object(&cli.jw);
			jw_finish(&cli.jw);
		} else {
			fprintf(stderr, "Lost %" PRIu64 " timeline events\n",
				ctx->tl.dropped_agents + ctx->tl.dropped_store);
		}
	}
	if (!ctx->no_summary) {
		if (gbpf_tl_summarize(&ctx->tl, &s))
			fprintf(stderr, "gbpf %s: timeline summary: out of memory\n", ctx->who);
		else if (cli.json)
			summary_json(ctx, &s);
		else
			gbpf_tl_summary_print(&ctx->tl, &s, stdout);
		gbpf_tl_summary_free(&s);
	}
	if (ctx->trace_path &&
	    gbpf_tl_write_trace(&ctx->tl, ctx->trace_path, proc_exe, ctx, why, sizeof(why)))
		fprintf(stderr, "gbpf %s: %s\n", ctx->who, why);
	if (ctx->otlp_traces_url)
		send_spans(ctx);
	fflush(stdout);
}

/* ---- Prometheus and OTLP ------------------------------------------------------------- */

/* Metrics of every map whose header is intact (a scribbled map is never read). */
static int collect(struct run_ctx *ctx, struct gbpf_metric_set *set)
{
	struct gbpf_map_desc *d = calloc(ctx->map_cnt ? ctx->map_cnt : 1, sizeof(*d));
	struct gbpf_map_instance *m = calloc(ctx->map_cnt ? ctx->map_cnt : 1, sizeof(*m));
	size_t i, n = 0;
	int err;

	if (!d || !m) {
		free(d);
		free(m);
		return -ENOMEM;
	}
	for (i = 0; i < ctx->map_cnt; i++) {
		if (!run_map_intact(ctx, i))
			continue;
		d[n] = ctx->maps[i];
		m[n++] = ctx->shm.maps[i];
	}
	err = gbpf_metrics_from_maps(set, d, m, n);
	free(d);
	free(m);
	return err;
}

/* The endpoint's thread renders each scrape itself: map reads are safe beside the agents. */
static int prom_render_cb(void *c, char **text, size_t *len)
{
	struct gbpf_metric_set set;
	int err = collect(c, &set);

	if (err)
		return err;
	err = gbpf_prom_render(&set, text, len);
	gbpf_metrics_free(&set);
	return err;
}

static uint64_t unix_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int run_export_start(struct run_ctx *ctx)
{
	char why[512] = "";

	ctx->start_unix_ns = unix_ns();
	if (!ctx->prom_addr)
		return 0;
	if (gbpf_prom_server_start(ctx->prom_addr, prom_render_cb, ctx, &ctx->prom, why,
				   sizeof(why)))
		return cli_error("%s", why);
	if (!cli.json)
		fprintf(stderr, "gbpf %s: serving Prometheus metrics on http://%s/metrics (port %d)\n", ctx->who,
			ctx->prom_addr, gbpf_prom_server_port(ctx->prom));
	return 0;
}

void run_export_now(struct run_ctx *ctx)
{
	struct gbpf_metric_set set;
	char why[512] = "";

	if (!ctx->prom_file && !ctx->otlp_url)
		return;
	if (collect(ctx, &set)) {
		fprintf(stderr, "gbpf %s: metrics: out of memory\n", ctx->who);
		return;
	}
	if (ctx->prom_file && gbpf_prom_write_file(&set, ctx->prom_file, why, sizeof(why)))
		fprintf(stderr, "gbpf %s: %s\n", ctx->who, why);
	if (ctx->otlp_url) {
		struct gbpf_otlp_opts o = {.service_name = "gbpf",
					   .start_time_ns = ctx->start_unix_ns,
					   .time_ns = unix_ns()};
		char *body = NULL;
		size_t len = 0;

		if (gbpf_otlp_render_metrics(&set, &o, &body, &len))
			fprintf(stderr, "gbpf %s: OTLP: out of memory\n", ctx->who);
		else if (gbpf_otlp_post(ctx->otlp_url, body, len, 2000, why, sizeof(why)))
			fprintf(stderr, "gbpf %s: %s\n", ctx->who, why);
		free(body);
	}
	gbpf_metrics_free(&set);
}

void run_export_stop(struct run_ctx *ctx)
{
	gbpf_prom_server_stop(ctx->prom);
	ctx->prom = NULL;
}
