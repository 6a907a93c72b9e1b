/* SPDX-License-Identifier: MIT */
/*
 * core/export/timeline.h - the controller's record of the asynchronous GPU
 * work its agents reported (struct gbpf_timeline_event), and what is
 * derived from it: the exit summary ("where did the time go") and the
 * Chrome / Perfetto trace (trace_json.c).
 *
 * Internal to the gbpf command (linked through gbpf_export_dep).
 */
#ifndef GBPF_CORE_EXPORT_TIMELINE_H
#define GBPF_CORE_EXPORT_TIMELINE_H

#include <stdint.h>
#include <stdio.h>

#include <gbpf/plugin.h>

/** Default bound on stored events (each ~100 bytes); later ones are counted as dropped. */
#define GBPF_TL_DEFAULT_MAX_EVENTS (1u << 20)
/** Distinct names kept; further names are stored as "(other)". */
#define GBPF_TL_MAX_NAMES 8192u

/** One stored event: a gbpf_timeline_event with its process and an interned name. */
struct gbpf_tl_rec {
	uint32_t pid;
	uint32_t kind;  /**< enum gbpf_timeline_kind */
	uint32_t flags; /**< GBPF_TL_F_* */
	int32_t device;
	uint64_t stream, corr, tid;
	uint64_t hb, he, gb, ge; /**< host / GPU begin and end, CLOCK_MONOTONIC ns */
	uint64_t bytes;
	uint32_t name; /**< index into gbpf_tl.names */
};

/** Every event of a run, in arrival order. */
struct gbpf_tl {
	struct gbpf_tl_rec *recs;
	size_t n, cap, max;
	char **names;
	size_t name_cnt;
	uint32_t *name_hash; /* open addressing, 2 * GBPF_TL_MAX_NAMES slots of index + 1 */
	uint64_t dropped_agents; /**< events the agents could not queue */
	uint64_t dropped_store;  /**< events beyond max */
	uint64_t rejected;       /**< malformed events (decoder) */
};

/** Start an empty timeline keeping at most @p max_events (0: the default). */
void gbpf_tl_init(struct gbpf_tl *tl, size_t max_events);
/** Free everything. */
void gbpf_tl_free(struct gbpf_tl *tl);
/**
 * Store one event of process @p pid.
 * @return 0, -ENOSPC when the bound is reached (counted in dropped_store),
 *         -ENOMEM
 */
int gbpf_tl_add(struct gbpf_tl *tl, uint32_t pid, const struct gbpf_timeline_event *ev);
/** Name of a stored record. */
const char *gbpf_tl_name(const struct gbpf_tl *tl, const struct gbpf_tl_rec *r);
/** Short label of a kind: "launch", "kernel", "H2D", "D2H", "D2D", "memset", "sync", ... */
const char *gbpf_tl_kind_label(uint32_t kind);
/** 1 for the kinds that are copies or fills on the GPU (memcpy, memset). */
int gbpf_tl_kind_is_copy(uint32_t kind);

/**
 * The GPU records sorted by begin time, with the longest GPU duration: the
 * work overlapping [b, e) starts in [b - max_dur, e), found by binary search
 * (summary and trace stay O(n log n) on a million events).
 */
struct gbpf_tl_gpu_index {
	const struct gbpf_tl_rec **v;
	size_t n;
	uint64_t max_dur;
};
/** Build the index; 0 or -ENOMEM. */
int gbpf_tl_gpu_index_build(const struct gbpf_tl *tl, struct gbpf_tl_gpu_index *ix);
/** First position whose record may overlap an interval beginning at @p b. */
size_t gbpf_tl_gpu_index_from(const struct gbpf_tl_gpu_index *ix, uint64_t b);
void gbpf_tl_gpu_index_free(struct gbpf_tl_gpu_index *ix);

/** Per-stream totals of the summary. */
struct gbpf_tl_stream_sum {
	uint32_t pid;
	int32_t device;
	uint64_t stream;
	uint64_t kernel_ns, kernel_cnt;
	uint64_t copy_ns[4]; /**< H2D, D2H, D2D, memset */
	uint64_t copy_cnt[4];
	uint64_t copy_bytes[4];
	uint64_t busy_ns;   /**< union of every GPU interval of the stream */
	uint64_t window_ns; /**< the process's traced window (first to last timestamp) */
	uint64_t idle_ns;   /**< window_ns - busy_ns */
};

/** Per host synchronising call name (per process) of the summary. */
struct gbpf_tl_sync_sum {
	uint32_t pid;
	uint32_t name; /**< index into names */
	uint64_t calls;
	uint64_t waited_ns;     /**< total time inside these calls: the wait they absorbed */
	uint64_t max_ns;
	uint64_t gpu_kernel_ns; /**< GPU kernel time overlapping the calls */
	uint64_t gpu_copy_ns;   /**< GPU copy / memset time overlapping the calls */
};

/** The summary printed at exit. */
struct gbpf_tl_summary {
	struct gbpf_tl_stream_sum *streams;
	size_t stream_cnt;
	struct gbpf_tl_sync_sum *syncs;
	size_t sync_cnt;
	uint64_t events;
};

/** Compute the summary; 0 or -ENOMEM. Release with gbpf_tl_summary_free(). */
int gbpf_tl_summarize(const struct gbpf_tl *tl, struct gbpf_tl_summary *out);
void gbpf_tl_summary_free(struct gbpf_tl_summary *s);
/** Print the summary as text (durations in adaptive units) to @p out. */
void gbpf_tl_summary_print(const struct gbpf_tl *tl, const struct gbpf_tl_summary *s, FILE *out);

/**
 * Write the timeline as Chrome Trace Event JSON (ui.perfetto.dev,
 * chrome://tracing) to @p path: written to PATH.tmp then renamed.
 * @p proc_names: optional callback naming a process (its executable).
 * docs/OUTPUT.md describes the layout (pids, tids, flows, waits).
 * @return 0 or a negative errno; reason in @p why
 */
int gbpf_tl_write_trace(const struct gbpf_tl *tl, const char *path,
			const char *(*proc_name)(void *ctx, uint32_t pid), void *ctx, char *why,
			size_t why_size);

struct gbpf_otlp_opts;

/** Timeline events sent per OTLP request (each request stays a few MB). */
#define GBPF_TL_OTLP_BATCH 10000u

/**
 * Render events [from, from + count) as an OTLP ExportTraceServiceRequest
 * (OTLP/HTTP JSON): one trace per process (traceId = run id from
 * o->start_time_ns and the pid), a span per host call (kind CLIENT) and
 * per GPU item (kind INTERNAL, parent = the call with its correlation id).
 * @p mono_to_unix_ns converts CLOCK_MONOTONIC to Unix time.
 * @return 0 (*out malloc'ed) or -ENOMEM / -E2BIG
 */
int gbpf_otlp_render_spans(const struct gbpf_tl *tl, size_t from, size_t count,
			   const struct gbpf_otlp_opts *o, int64_t mono_to_unix_ns, char **out,
			   size_t *len);

#endif
