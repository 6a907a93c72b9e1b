/* SPDX-License-Identifier: MIT */
/* core/agent/agent_internal.h - state of the agent inside the application. */
#ifndef GBPF_CORE_AGENT_INTERNAL_H
#define GBPF_CORE_AGENT_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include <gbpf/backend.h>
#include <gbpf/plugin.h>

#include "core/agent/print_ring.h"
#include "core/agent/proto.h"

/* Reports waiting for the sender thread; beyond this they are dropped and counted. */
#define AGENT_QUEUE_LEN 1024
/*
 * Timeline events waiting for the sender thread (a ring allocated at attach);
 * beyond this they are dropped and counted. Sized for bursts of a few
 * thousand launches between two sender wake-ups.
 */
#define AGENT_TL_QUEUE_LEN 8192
/* Faults of host programs reported per program; later ones are only counted. */
#define AGENT_FAULT_REPORTS 4

struct agent_msg {
	uint16_t type; /* GBPF_AGENT_MSG_REPORT or _PRINT */
	uint32_t event;
	char kernel[256]; /* as struct gbpf_agent_report: long C++ names fit */
	char msg[384];
};

struct gbpf_interp;

/*
 * What a SETUP becomes before anything is attached: decoded, its region
 * mapped and checked, its programs verified and their interpreters built.
 * An idle agent stages a replacement while the current session still runs,
 * so a hot swap only switches sessions once the new one is ready (and a
 * replacement that fails leaves the current programs attached).
 */
struct agent_staged {
	struct gbpf_agent_setup setup;
	struct gbpf_shm shm;
	struct gbpf_print_ring pring; /* the controller's print ring, hdr NULL when none came */
	struct gbpf_interp **interps; /* per program; NULL for device programs */
	atomic_uint *faults;          /* per program: run failures seen */
	uint64_t *ctx_reads;          /* per program: context bytes it may read (the verifier's) */
};

/*
 * Bytes of a frame that a direct print (agent_print) could only half send:
 * header + dropped count + string length + the longest line.
 */
#define AGENT_TX_REST_MAX (sizeof(struct gbpf_agent_frame) + 8 + sizeof(((struct agent_msg *)0)->msg))

/*
 * The one agent of this process. Fields written by the constructor are
 * read-only once `attached` is set; the queue is guarded by `lock`.
 */
struct agent_state {
	int fd;      /* socket to the controller, -1 when none */
	int wake_fd; /* eventfd that wakes the sender thread */
	pthread_t sender;
	int sender_started;
	pthread_mutex_t lock;
	struct agent_msg queue[AGENT_QUEUE_LEN];
	unsigned q_head, q_len;
	uint32_t dropped;      /* reports dropped since the last one sent */
	atomic_int orphaned;   /* controller gone: report nothing more */
	atomic_int forked;     /* a fork() child without exec: shares the parent's socket */
	atomic_int attached;
	atomic_uint_fast64_t launch_seq;
	/*
	 * 1 while a controller is connected (a session): messages are queued
	 * only then. Written by the agent thread, read by every thread.
	 */
	atomic_int live;
	/* Host programs running now: a detach waits for them before freeing their interpreters. */
	atomic_int host_inflight;

	/*
	 * Direct prints (agent_print): the thread that calls services->print
	 * (a plugin's print thread) writes the frame itself when nothing is
	 * queued, saving the sender thread's wake-up. tx_lock serialises every
	 * frame written on fd after the setup (sender and direct prints); the
	 * sender holds it while it sends, a direct print only tries it. Lock
	 * order: tx_lock, then lock.
	 */
	pthread_mutex_t tx_lock;
	atomic_int direct_ok;  /* 1 from the attach to the end of the session (hello sent) */
	int print_direct;      /* GBPF_AGENT_PRINT_DIRECT=0: neither direct prints nor the ring (benchmarks) */
	unsigned char tx_rest[AGENT_TX_REST_MAX]; /* a frame's unsent tail, guarded by tx_lock */
	size_t tx_rest_len, tx_rest_off;
	/*
	 * The session's print ring (core/agent/print_ring.h): device print lines
	 * go there instead of the socket. pring_lock serialises its producers
	 * and its unmapping at the session's end; hdr is NULL without one.
	 */
	pthread_mutex_t pring_lock;
	struct gbpf_print_ring pring;

	/* Idle mode (GBPF_AGENT_LISTEN): the agent's own socket, served by the sender thread. */
	int listen_fd;            /* -1 when not listening */
	char listen_path[108];
	char job_path[108];       /* DIR/PID.job while attached with a controller socket; "" otherwise */
	char backend_name[64];    /* the open backend (kept across sessions) */
	/*
	 * GBPF_AGENT_F_* options the idle agent was started with
	 * (GBPF_AGENT_ENV_IDLE_FLAGS): the engine an attach gets when it names
	 * none, and whether an attach may let probes write app values.
	 */
	uint32_t idle_flags;

	struct gbpf_agent_setup setup;
	struct gbpf_shm shm;
	struct gbpf_registry *reg;
	const struct gbpf_backend_ops *ops;
	struct gbpf_backend *backend;
	struct gbpf_agent_services services;
	struct gbpf_interp **interps; /* per program; NULL for device programs */
	atomic_uint *faults;          /* per program: run failures seen */
	uint64_t *ctx_reads;          /* per program: context bytes it may read (the verifier's) */

	/* Timeline ring (services->timeline), guarded by tl_lock, not by lock. */
	pthread_mutex_t tl_lock;
	struct gbpf_timeline_event *tl_ring; /* AGENT_TL_QUEUE_LEN events, NULL until attach */
	unsigned tl_head, tl_len;
	uint64_t tl_dropped; /* running total, sent with every batch */
	uint64_t tl_sent_drops; /* total last sent: a change must still reach the controller */
};

extern struct agent_state gbpf_agent_state;

/** Queue a message for the controller; never blocks on I/O. */
void agent_queue(struct agent_state *a, uint16_t type, uint32_t event, const char *kernel,
		 const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/** Start the sender thread (reports flow from then on). */
int agent_sender_start(struct agent_state *a);
/** On the agent's thread: send everything queued now (before a session ends). */
void agent_sender_flush_now(struct agent_state *a);
/** Give the sender up to @p ms milliseconds to empty the queue (at exit). */
void agent_sender_flush(struct agent_state *a, int ms);

/** services->timeline: queue one event for the controller; never blocks on I/O. */
int agent_timeline(void *ctx, const struct gbpf_timeline_event *ev);
/* services.print: one line of device probe output; -EAGAIN when the queue is full. */
int agent_print(void *ctx, const char *text, size_t len);
/** Allocate the timeline ring (at attach); -ENOMEM leaves the timeline off. */
int agent_timeline_init(struct agent_state *a);

/** End the current session (listen mode): detach, wait for host programs, unmap, close. */
void agent_session_end(struct agent_state *a, const char *why);
/** Listen mode: a controller connected to our socket; serve it (attach, detach, replace). */
void agent_accept(struct agent_state *a);

/** Prepare interpreters for the host programs of @p st; reason in why. */
int agent_host_progs_prepare(struct agent_staged *st, char *why, size_t why_size);
/** Free what agent_host_progs_prepare built (interpreters, fault counters). */
void agent_host_progs_free(struct gbpf_interp **interps, atomic_uint *faults, size_t n);
/** services->run_host_prog. */
int agent_run_host_prog(void *ctx, size_t prog_index, void *probe_ctx, size_t ctx_size,
			uint64_t *r0);

#endif
