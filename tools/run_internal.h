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

#include "core/agent/print_ring.h"
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
	uint64_t rx_off;     /* bytes of whole frames received (where a bad frame starts) */
	bool outbound;       /* we connected to its socket (gbpf attach): JOB before SETUP */
	long preg;           /* --per-process: index of its region in ctx->pregs, else -1 */
	struct gbpf_print_ring pring; /* its print lines (core/agent/print_ring.h); hdr NULL: none */
	bool pring_bad;      /* its ring held a malformed record (reported once) */
};

/* --per-process: one process's own maps (kept after it leaves: its counts still print). */
struct run_preg {
	pid_t pid;
	char exe[64];
	struct gbpf_shm shm;
	uint64_t *lost_seen; /* per map: drops already reported */
};

/* The controller's busy-poll while device print lines flow (run_loop.c). */
struct run_spin {
	bool init;
	uint64_t max_ns;   /* limit of a spin window, 0: never spin */
	uint64_t last_ns;  /* CLOCK_MONOTONIC of the last print line */
	uint64_t until_ns; /* spin until then */
	uint64_t spins;    /* non-blocking polls made (GBPF_RUN_SPIN_STATS) */
	uint64_t lines;    /* print lines seen (PRINT frames and ring records) */
	uint64_t ring_lines; /* of which through the agents' print rings */
	uint64_t wakes;      /* WAKE frames: a ring's producer woke the blocked controller */
};

struct run_ctx {
	const char *who;  /* "run" or "attach": the prefix of every message */
	bool attach_mode; /* gbpf attach: no child, agents reached through their sockets */
	bool per_process; /* --per-process: each process gets its own maps */
	volatile int stop; /* attach: a signal asked us to detach and exit */
	struct run_spin spin; /* busy-poll state while print frames arrive */
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
	/*
	 * GBPF_AGENT_F_ALLOW_APP_WRITES (--allow-app-writes) and
	 * GBPF_AGENT_F_ENGINE_* (--engine): sent in every SETUP; the verifier
	 * flags of both sides derive from them (gbpf_agent_verify_flags).
	 */
	uint32_t agent_flags;
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
	struct gbpf_shm shm;  /* shared by every agent; --per-process: the aggregate, not sent */
	uint32_t *slots;      /* per map: per-CPU slots (every region is built alike) */
	struct run_preg *pregs; /* --per-process regions */
	size_t preg_cnt;
	bool in_preg;         /* ctx->shm is a process region now (run_procs.c swaps it in) */
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

/* cmd_run.c, shared with cmd_attach.c */
/**
 * An option `run` and `attach` share (-i, -c, -b, -j, --allow-app-writes,
 * --engine) applied to @p ctx. @return 1 when @p opt is one of them, 0 when
 * it is not, -1 with the error printed.
 */
int run_shared_option(struct run_ctx *ctx, int opt, const char *arg);
/** Open every object; maps of all objects in ctx->maps. */
int run_open_objects(struct run_ctx *ctx, char **paths, size_t n);
/** Verify every program; the accepted ones in ctx->progs. */
int run_verify_programs(struct run_ctx *ctx);
/** Choose the backend once (reported when none). */
void run_choose_backend(struct run_ctx *ctx);
/** Build the shared map region. */
int run_build_region(struct run_ctx *ctx);
/** Create the controller's socket in a fresh 0700 directory. */
int run_make_socket(struct run_ctx *ctx);
/** Release everything (sockets, region, objects). */
void run_cleanup(struct run_ctx *ctx);
/** Serve agents for up to @p timeout_ms: accept, read, answer. */
void run_serve_agents(struct run_ctx *ctx, int timeout_ms);
/** Add a connected agent socket (gbpf attach); -ENOSPC when the table is full. */
int run_add_agent(struct run_ctx *ctx, int fd, pid_t pid, bool outbound);

/* run_procs.c: --per-process maps */
/** Give agent @p ag its own map region (a copy of the layout, zeroed). */
int run_agent_region(struct run_ctx *ctx, struct run_agent *ag);
/** An agent leaves: its own region's counts stay in the per-process view (kept, not unmapped). */
void run_agent_retire(struct run_ctx *ctx, struct run_agent *ag);
/** --per-process: drain every process's rings (records and drops). */
void run_procs_drain(struct run_ctx *ctx);
/** --per-process: sum every process's maps into ctx->shm (the aggregate view). */
void run_procs_aggregate(struct run_ctx *ctx);
/** --per-process: print each process's maps after a header line. */
void run_procs_print(struct run_ctx *ctx, bool interval);
/** --per-process: unmap every process region. */
void run_procs_free(struct run_ctx *ctx);

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
