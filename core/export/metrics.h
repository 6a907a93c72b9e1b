/* SPDX-License-Identifier: MIT */
/*
 * core/export/metrics.h - map contents as metrics, one model rendered two
 * ways: Prometheus text exposition (prom.c) and OTLP/HTTP JSON (otlp.c).
 *
 * How maps become metrics (docs/OUTPUT.md):
 *  - a map named like a histogram ("*hist*") holding u64 slots is a log2
 *    histogram: an ARRAY of u64 (one histogram, slot i = element i), or a
 *    HASH whose value is an array of u64 slots (one histogram per key);
 *    slot i counts values in [2^i, 2^(i+1) - 1] (slot 0: 0 and 1);
 *  - any other ARRAY / HASH with a u64 or u32 value: one sample per entry,
 *    a counter when the map's name contains "count" or ends in "_total", a
 *    gauge otherwise; values of 16..64 bytes export each u64 word with a
 *    "word" label;
 *  - per-CPU copies are summed; ring buffers export only their lost-event
 *    counter; .rodata is not exported;
 *  - keys become labels: the loader gives no BTF field names today, so the
 *    key is one label "key": a NUL-padded string, a number (1, 2, 4, 8
 *    bytes) or hex bytes.
 * Internal to the gbpf command.
 */
#ifndef GBPF_CORE_EXPORT_METRICS_H
#define GBPF_CORE_EXPORT_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include <gbpf/plugin.h>

enum gbpf_metric_type {
	GBPF_METRIC_GAUGE = 0,
	GBPF_METRIC_COUNTER = 1,
	GBPF_METRIC_HISTOGRAM = 2,
};

/** Log2 slots of a histogram sample (slot 63 ends at UINT64_MAX). */
#define GBPF_METRIC_HIST_SLOTS 64
/** Entries read per hash map (bounds the work of one scrape). */
#define GBPF_METRIC_MAX_ROWS 4096

struct gbpf_metric_sample {
	char key[160];  /**< value of the "key" label; "" = no key label */
	int word;       /**< value of the "word" label, -1 = none */
	double value;   /**< gauge / counter */
	uint64_t slots[GBPF_METRIC_HIST_SLOTS]; /**< histogram: count per log2 slot */
	uint64_t count; /**< histogram: total of slots */
	double sum;     /**< histogram: approximate (slot midpoints) */
};

struct gbpf_metric {
	char name[160]; /**< "gbpf_<map>" sanitised; counters end in "_total" */
	char map[128];  /**< the map's name */
	char label[16]; /**< name of the label holding samples' key: "key" or "map" */
	char help[256];
	enum gbpf_metric_type type;
	struct gbpf_metric_sample *samples;
	size_t sample_cnt;
};

struct gbpf_metric_set {
	struct gbpf_metric *metrics;
	size_t cnt;
};

/**
 * Read @p cnt maps (descriptions and memory, in the same order) into @p set.
 * @return 0 or -ENOMEM (set is then empty)
 */
int gbpf_metrics_from_maps(struct gbpf_metric_set *set, const struct gbpf_map_desc *descs,
			   struct gbpf_map_instance *maps, size_t cnt);
void gbpf_metrics_free(struct gbpf_metric_set *set);

/** Upper bound of log2 slot @p i as a Prometheus "le": 2^(i+1) - 1. */
uint64_t gbpf_metric_slot_le(size_t i);

/**
 * Render @p set as Prometheus text exposition format 0.0.4 into *out
 * (malloc'ed, NUL-terminated). @return 0 or -ENOMEM
 */
int gbpf_prom_render(const struct gbpf_metric_set *set, char **out, size_t *len);

/**
 * Write the text of @p set to @p path for node_exporter's textfile
 * collector: to PATH.tmp.PID first, then rename(2), so that a scrape never
 * reads half a file. @return 0 or -errno; reason in @p why
 */
int gbpf_prom_write_file(const struct gbpf_metric_set *set, const char *path, char *why,
			 size_t why_size);

/** The Prometheus HTTP endpoint (GET /metrics), one thread. */
struct gbpf_prom_server;
/** Produces the current metric text (malloc'ed) for one scrape; 0 or -errno. */
typedef int (*gbpf_prom_render_fn)(void *ctx, char **text, size_t *len);

/**
 * Listen on @p addr ("PORT", "HOST:PORT", "[V6]:PORT"; host defaults to
 * 127.0.0.1) and serve GET /metrics from a thread, calling @p render per
 * scrape (from that thread: @p render must be safe to call concurrently
 * with the caller). Other paths get 404, other methods 405.
 * @return 0 (server in *out) or -errno; reason in @p why
 */
int gbpf_prom_server_start(const char *addr, gbpf_prom_render_fn render, void *ctx,
			   struct gbpf_prom_server **out, char *why, size_t why_size);
/** The port actually bound (useful with port 0). */
int gbpf_prom_server_port(const struct gbpf_prom_server *s);
/** Stop the thread and close the socket. */
void gbpf_prom_server_stop(struct gbpf_prom_server *s);

/** What to send with OTLP. */
struct gbpf_otlp_opts {
	const char *service_name;  /**< resource attribute service.name ("gbpf") */
	uint64_t start_time_ns;    /**< Unix ns when counting started (cumulative temporality) */
	uint64_t time_ns;          /**< Unix ns of this export */
};

/**
 * Render @p set as an OTLP ExportMetricsServiceRequest in the OTLP/HTTP
 * JSON encoding (resourceMetrics / scopeMetrics / metrics; gauges, sums,
 * histograms with explicitBounds). *out is malloc'ed. @return 0 or -ENOMEM
 */
int gbpf_otlp_render_metrics(const struct gbpf_metric_set *set, const struct gbpf_otlp_opts *o,
			     char **out, size_t *len);

/**
 * POST @p body (JSON) to @p url ("http://HOST[:PORT]/PATH"; https is not
 * supported) and wait up to @p timeout_ms for a 2xx answer.
 * @return 0, -EPROTO (non-2xx status, in why), -EINVAL (bad URL), -errno
 */
int gbpf_otlp_post(const char *url, const char *body, size_t len, int timeout_ms, char *why,
		   size_t why_size);

#endif
