/* SPDX-License-Identifier: MIT */
/* tools/run_internal.h - the controller of `gbpf run` (docs/PROCESS_MODEL.md). */
#ifndef GBPF_TOOLS_RUN_INTERNAL_H
#define GBPF_TOOLS_RUN_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <gbpf/backend.h>
#include <gbpf/object.h>

#include "core/agent/proto.h"
#include "core/export/metrics.h"
#include "core/export/timeline.h"
#include "maps/map_layout.h"

/* Most agents connected at once (processes of the application tree). */
#define RUN_MAX_AGENTS 1024
/*
 * Largest payload an agent may send: reports and prints are small, a
 * timeline batch is at most GBPF_AGENT_MAX_TL_BATCH events of <= 340 bytes.
 */
#define RUN_AGENT_MAX_PAYLOAD (128u << 10)

struct run_agent {
	int fd;
	pid_t pid;
	bool hello;
	char exe[256];
	unsigned char *buf; /* frame being received */
	size_t have;
	uint64_t tl_dropped; /* the agent's running total of dropped timeline events */
};

struct run_ctx {
	/* options */
	double interval_s;
	long count;
	const char *backend_name;
	char **cmd;
	const char *trace_path; /* --trace FILE.json */
	bool no_summary;        /* --no-summary */
	const char *prom_addr;  /* --prom [HOST:]PORT */
	const char *prom_file;  /* --prom-file PATH */
	const char *otlp_url;   /* --otlp URL */
	const char *otlp_traces_url; /* --otlp-traces URL */
	double export_s;        /* period of --prom-file / --otlp exports */
	uint64_t start_unix_ns; /* when counting began (OTLP start time) */
	struct gbpf_prom_server *prom;
	uint32_t thread_slots;  /* --thread-slots: GPU threads a per-GPU-thread array holds */
	/* objects and what goes to the agents */
	struct gbpf_object **objs;
	size_t obj_cnt;
	struct gbpf_map_desc *maps; /* every map of every object, object by object */
	size_t map_cnt;
	struct gbpf_prog_desc *progs; /* accepted programs */
	uint32_t *map_base;
	size_t prog_cnt, rejected;
	/* backend */
	struct gbpf_registry *reg;
	struct gbpf_plugin *plugin;
	const char *plugin_path;
	bool intercept;
	/* the shared region, and each map header as created (corruption check) */
	struct gbpf_shm shm;
	struct gbpf_map_hdr *hdr_copy;
	uint64_t *lost_seen; /* per map: drops already reported */
	uint64_t records;    /* ring buffer records printed */
	/* the socket */
	char dir[256];
	char sock[300];
	int listen_fd;
	struct run_agent agents[RUN_MAX_AGENTS];
	size_t agent_cnt;
	/* the GPU timeline the agents report */
	struct gbpf_tl tl;
	/* executables by pid, for naming processes in the trace */
	struct {
		pid_t pid;
		char exe[256];
	} *procs;
	size_t proc_cnt;
	/* the application */
	pid_t child;
	int child_status;
	bool child_done;
};

/** Start CMD with the agent preloaded; fills ctx->child. */
int run_spawn(struct run_ctx *ctx);
/** Serve agents, drain rings and print until the application exits. */
int run_loop(struct run_ctx *ctx);
/** Consume every ring buffer, print records and report lost events. */
void run_drain_rings(struct run_ctx *ctx);
/** Print every map that holds something (bcc style, or JSON lines). */
void run_print_maps(struct run_ctx *ctx, bool interval);
/** Start the --prom endpoint (before the application starts). */
int run_export_start(struct run_ctx *ctx);
/** Write --prom-file and POST --otlp now (every export period and at exit). */
void run_export_now(struct run_ctx *ctx);
/** Stop the --prom endpoint. */
void run_export_stop(struct run_ctx *ctx);
/** At exit: the timeline summary (text or JSON) and the --trace file. */
void run_finish_timeline(struct run_ctx *ctx);
/** True when map @p i still has the header it was created with. */
bool run_map_intact(struct run_ctx *ctx, size_t i);

#endif
