/* SPDX-License-Identifier: MIT */
/*
 * The agent at run time: the report queue and its sender thread, and host
 * programs run on the interpreter.
 *
 * Application threads only ever copy a message into a bounded queue under a
 * short lock and poke an eventfd; the sender thread does their socket I/O.
 * Device print lines (services->print, called by a plugin's own print
 * thread) skip that hop when nothing is queued: the caller sends the frame
 * itself without blocking (agent_print_direct), one thread wake-up less
 * between the GPU and the user.
 * A full queue drops the message and counts it, the count travels with the
 * next message that gets through. When the controller goes away the sender
 * sees the socket close, stops reporting and detaches the backend; the maps
 * stay mapped so that nothing the application still runs can fault.
 */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <gbpf/probe_ctx.h>

#include "core/agent/agent_internal.h"
#include "core/interp/interp.h"

int agent_send_frame(int fd, uint16_t type, const struct gbpf_agent_buf *b);

/*
 * Queue one message for the sender and wake it. A full queue answers
 * -EAGAIN; with @p count_drop the message is a counted drop instead
 * (reports), without it the caller keeps it (device print lines).
 */
static __attribute__((format(printf, 6, 0))) int agent_push(struct agent_state *a, uint16_t type,
							     uint32_t event, const char *kernel,
							     int count_drop, const char *fmt, va_list ap)
{
	struct agent_msg *m;
	uint64_t one = 1;

	if (atomic_load(&a->orphaned) || atomic_load(&a->forked) || !atomic_load(&a->live))
		return -ESHUTDOWN;
	pthread_mutex_lock(&a->lock);
	if (a->q_len == AGENT_QUEUE_LEN) {
		a->dropped += count_drop ? 1 : 0;
		pthread_mutex_unlock(&a->lock);
		return -EAGAIN;
	}
	m = &a->queue[(a->q_head + a->q_len) % AGENT_QUEUE_LEN];
	m->type = type;
	m->event = event;
	snprintf(m->kernel, sizeof(m->kernel), "%s", kernel ? kernel : "");
	vsnprintf(m->msg, sizeof(m->msg), fmt, ap);
	a->q_len++;
	pthread_mutex_unlock(&a->lock);
	if (a->wake_fd >= 0 && write(a->wake_fd, &one, sizeof(one)) < 0) {
		/* EAGAIN: the counter is saturated, the sender is awake anyway. */
	}
	return 0;
}

void agent_queue(struct agent_state *a, uint16_t type, uint32_t event, const char *kernel,
		 const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	agent_push(a, type, event, kernel, 1, fmt, ap);
	va_end(ap);
}

/* agent_push with a va_list built here (agent_print has no format of its own). */
static __attribute__((format(printf, 2, 3))) int agent_push_print(struct agent_state *a,
								   const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = agent_push(a, GBPF_AGENT_MSG_PRINT, 0, NULL, 0, fmt, ap);
	va_end(ap);
	return rc;
}

/* ---- timeline ---------------------------------------------------------------------- */

/* Events queued before the sender is woken: the app pays a write() once per batch. */
#define AGENT_TL_WAKE_AT GBPF_AGENT_MAX_TL_BATCH
/* Otherwise the sender picks up what is queued this often (milliseconds). */
#define AGENT_TL_PERIOD_MS 20

int agent_timeline_init(struct agent_state *a)
{
	struct gbpf_timeline_event *ring = calloc(AGENT_TL_QUEUE_LEN, sizeof(*ring));

	if (!ring)
		return -ENOMEM;
	pthread_mutex_lock(&a->tl_lock);
	if (!a->tl_ring) {
		a->tl_ring = ring;
		ring = NULL;
	}
	pthread_mutex_unlock(&a->tl_lock);
	free(ring);
	return 0;
}

int agent_timeline(void *ctx, const struct gbpf_timeline_event *ev)
{
	struct agent_state *a = ctx;
	struct gbpf_timeline_event *e;
	size_t name_len;
	unsigned len;
	uint64_t one = 1;

	if (!ev || ev->sz < sizeof(*ev) || ev->kind < GBPF_TL_LAUNCH || ev->kind > GBPF_TL_KIND_MAX ||
	    (ev->flags & ~GBPF_TL_F_ALL) || !(ev->flags & (GBPF_TL_F_HOST | GBPF_TL_F_GPU)))
		return -EINVAL;
	if (atomic_load(&a->orphaned) || atomic_load(&a->forked) || !atomic_load(&a->live))
		return -ESHUTDOWN;
	pthread_mutex_lock(&a->tl_lock);
	if (!a->tl_ring || a->tl_len == AGENT_TL_QUEUE_LEN) {
		a->tl_dropped++;
		pthread_mutex_unlock(&a->tl_lock);
		return -EAGAIN;
	}
	e = &a->tl_ring[(a->tl_head + a->tl_len) % AGENT_TL_QUEUE_LEN];
	*e = *ev;
	/* A plugin's name may lack its NUL: never read past the field. */
	name_len = strnlen(ev->name, sizeof(ev->name) - 1);
	e->name[name_len] = 0;
	if (!e->host_tid)
		e->host_tid = (uint64_t)syscall(SYS_gettid);
	len = ++a->tl_len;
	pthread_mutex_unlock(&a->tl_lock);
	if (len == AGENT_TL_WAKE_AT && a->wake_fd >= 0 && write(a->wake_fd, &one, sizeof(one)) < 0) {
		/* EAGAIN: the counter is saturated, the sender is awake anyway. */
	}
	return 0;
}

/*
 * Finish the frame a direct print left half sent (tx_lock held): nothing
 * else may be written before its last byte. Blocking, as every sender write.
 */
static int tx_rest_flush_locked(struct agent_state *a)
{
	while (a->tx_rest_off < a->tx_rest_len) {
		ssize_t w = send(a->fd, a->tx_rest + a->tx_rest_off, a->tx_rest_len - a->tx_rest_off,
				 MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EPIPE;
		a->tx_rest_off += (size_t)w;
	}
	a->tx_rest_len = a->tx_rest_off = 0;
	return 0;
}

/* Send queued timeline events in batches; 0, or -errno when the socket failed. */
static int sender_drain_timeline(struct agent_state *a)
{
	static struct gbpf_timeline_event sender_tl_batch[GBPF_AGENT_MAX_TL_BATCH]; /* sender thread only */

	for (;;) {
		struct gbpf_agent_buf b = {0};
		uint64_t dropped;
		size_t n = 0;
		int err;

		pthread_mutex_lock(&a->tl_lock);
		while (n < GBPF_AGENT_MAX_TL_BATCH && a->tl_len) {
			sender_tl_batch[n++] = a->tl_ring[a->tl_head];
			a->tl_head = (a->tl_head + 1) % AGENT_TL_QUEUE_LEN;
			a->tl_len--;
		}
		dropped = a->tl_dropped;
		pthread_mutex_unlock(&a->tl_lock);
		if (!n && dropped == a->tl_sent_drops) /* written by this thread only */
			return 0;
		err = gbpf_agent_encode_timeline(&b, dropped, sender_tl_batch, n);
		if (!err) {
			pthread_mutex_lock(&a->tx_lock);
			err = tx_rest_flush_locked(a);
			if (!err)
				err = agent_send_frame(a->fd, GBPF_AGENT_MSG_TIMELINE, &b);
			pthread_mutex_unlock(&a->tx_lock);
		}
		gbpf_agent_buf_free(&b);
		if (err)
			return err;
		pthread_mutex_lock(&a->tl_lock);
		a->tl_sent_drops = dropped;
		pthread_mutex_unlock(&a->tl_lock);
	}
}

/* Send every queued message; returns 0, or -errno when the socket failed. */
static int sender_drain(struct agent_state *a)
{
	int tl_err = sender_drain_timeline(a);

	if (tl_err)
		return tl_err;
	for (;;) {
		struct gbpf_agent_buf b = {0};
		struct agent_msg m;
		uint32_t dropped;
		int err;

		/*
		 * tx_lock from the pop to the end of the send: a direct print that
		 * found the queue empty meanwhile would otherwise overtake this one.
		 */
		pthread_mutex_lock(&a->tx_lock);
		err = tx_rest_flush_locked(a);
		if (err) {
			pthread_mutex_unlock(&a->tx_lock);
			return err;
		}
		pthread_mutex_lock(&a->lock);
		if (!a->q_len) {
			pthread_mutex_unlock(&a->lock);
			pthread_mutex_unlock(&a->tx_lock);
			return 0;
		}
		m = a->queue[a->q_head];
		a->q_head = (a->q_head + 1) % AGENT_QUEUE_LEN;
		a->q_len--;
		dropped = a->dropped;
		a->dropped = 0;
		pthread_mutex_unlock(&a->lock);
		if (m.type == GBPF_AGENT_MSG_PRINT) {
			gbpf_agent_buf_put_u32(&b, dropped);
			gbpf_agent_buf_put_str(&b, m.msg);
			err = b.err;
		} else {
			err = gbpf_agent_encode_report(&b, m.event, dropped, m.kernel, m.msg);
		}
		if (!err)
			err = agent_send_frame(a->fd, m.type, &b);
		pthread_mutex_unlock(&a->tx_lock);
		gbpf_agent_buf_free(&b);
		if (err)
			return err;
	}
}

static void agent_orphan(struct agent_state *a)
{
	atomic_store(&a->orphaned, 1);
	atomic_store(&a->live, 0);
	atomic_store(&a->direct_ok, 0);
	/* Nobody reads the results any more: stop paying for instrumentation. */
	if (atomic_exchange(&a->attached, 0) && a->ops && a->ops->agent_detach)
		a->ops->agent_detach(a->backend);
}

void agent_sender_flush_now(struct agent_state *a)
{
	if (a->fd >= 0)
		sender_drain(a);
}

/*
 * The agent's thread: sends what the app's threads queued, watches the
 * controller's connection and, in idle mode, accepts `gbpf attach` and
 * `gbpf detach` on the agent's own socket. In run mode a closed connection
 * ends the thread (the maps stay mapped); in idle mode it ends the session
 * and the agent waits for the next one.
 */
static void *sender_main(void *arg)
{
	struct agent_state *a = arg;

	for (;;) {
		struct pollfd pf[3] = {
			{.fd = a->fd, .events = POLLIN},
			{.fd = a->wake_fd, .events = POLLIN},
			{.fd = a->listen_fd, .events = POLLIN},
		};
		int lost = 0;
		uint64_t n;

		if (poll(pf, 3, a->tl_ring && a->fd >= 0 ? AGENT_TL_PERIOD_MS : -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (a->fd >= 0 && pf[0].revents) {
			char junk[256];
			ssize_t r = recv(a->fd, junk, sizeof(junk), MSG_DONTWAIT);

			/*
			 * After setup `gbpf run` sends nothing: EOF or error = it is gone.
			 * An attach session's controller sends DETACH when it stops: any
			 * byte ends an idle agent's session (it closes: the confirmation).
			 */
			if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR) ||
			    (r > 0 && a->listen_fd >= 0))
				lost = 1;
		}
		if (pf[1].revents && read(a->wake_fd, &n, sizeof(n)) < 0 && errno != EAGAIN)
			break;
		if (!lost && a->fd >= 0 && sender_drain(a))
			lost = 1;
		if (lost) {
			if (a->listen_fd < 0)
				break;
			agent_session_end(a, "controller gone");
		}
		if (a->listen_fd >= 0 && pf[2].revents)
			agent_accept(a);
	}
	agent_orphan(a);
	return NULL;
}

int agent_sender_start(struct agent_state *a)
{
	pthread_attr_t attr;
	sigset_t all, old;
	int err;

	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	/* The app's signals belong to the app's threads, never to ours. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&a->sender, &attr, sender_main, a);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (err)
		return -err;
	a->sender_started = 1;
	return 0;
}

void agent_sender_flush(struct agent_state *a, int ms)
{
	int i;

	if (!a->sender_started || atomic_load(&a->orphaned) || atomic_load(&a->forked))
		return;
	for (i = 0; i < ms; i++) {
		unsigned left;

		uint64_t one = 1;

		pthread_mutex_lock(&a->lock);
		left = a->q_len;
		pthread_mutex_unlock(&a->lock);
		pthread_mutex_lock(&a->tl_lock);
		left += a->tl_len;
		if (a->tl_dropped != a->tl_sent_drops)
			left++;
		pthread_mutex_unlock(&a->tl_lock);
		if (atomic_load(&a->orphaned))
			return;
		/*
		 * An empty queue is not enough: the sender pops a message before it
		 * sends it (holding tx_lock), and a process that exits meanwhile
		 * loses it. Done when tx_lock is free and no half frame waits.
		 */
		if (!left && !pthread_mutex_trylock(&a->tx_lock)) {
			size_t rest = a->tx_rest_len;

			pthread_mutex_unlock(&a->tx_lock);
			if (!rest)
				return;
		}
		/* The timeline is only sent on wake-ups: ask for one now. */
		if (i == 0 && a->wake_fd >= 0 && write(a->wake_fd, &one, sizeof(one)) < 0) {
			/* saturated: the sender is awake */
		}
		usleep(1000);
	}
}

/* ---- host programs --------------------------------------------------------------- */

static int is_host_kind(uint32_t kind)
{
	return kind >= GBPF_ATTACH_HOST_LAUNCH && kind <= GBPF_ATTACH_HOST_MODULE_LOAD;
}

static size_t host_ctx_size(uint32_t kind)
{
	return kind == GBPF_ATTACH_HOST_LAUNCH ? sizeof(struct gbpf_host_launch_ctx)
					       : sizeof(struct gbpf_host_call_ctx);
}

/* Host programs run bounded: a probe must never stall a launch for long. */
#define AGENT_HOST_MAX_INSNS (1u << 20)

int agent_host_progs_prepare(struct agent_staged *st, char *why, size_t why_size)
{
	size_t i, n = st->setup.prog_cnt;

	st->interps = calloc(n ? n : 1, sizeof(*st->interps));
	st->faults = calloc(n ? n : 1, sizeof(*st->faults));
	if (!st->interps || !st->faults) {
		snprintf(why, why_size, "no memory for %zu programs", n);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		const struct gbpf_prog_desc *p = &st->setup.progs[i];
		size_t base = p->map_cnt ? (size_t)(p->maps - st->setup.maps) : 0;
		/* Checked mode: a probe bug faults the probe, never the application. */
		GBPF_OPTS(gbpf_interp_opts, opts, .bounds_checked = 1,
			  .max_insns = AGENT_HOST_MAX_INSNS);
		char err_text[256] = "";
		int err;

		if (!is_host_kind(p->attach.kind))
			continue;
		err = gbpf_interp_create(p, p->map_cnt ? &st->shm.maps[base] : NULL, p->map_cnt,
					 &opts, &st->interps[i], err_text, sizeof(err_text));
		if (err) {
			snprintf(why, why_size, "%s: program '%s': interpreter: %s",
				 p->source_file ? p->source_file : "?", p->name, err_text);
			return err;
		}
	}
	return 0;
}

void agent_host_progs_free(struct gbpf_interp **interps, atomic_uint *faults, size_t n)
{
	size_t i;

	for (i = 0; interps && i < n; i++)
		if (interps[i])
			gbpf_interp_destroy(interps[i]);
	free(interps);
	free(faults);
}

/* trace_printk output goes to the controller, never into the app's own output. */
static void agent_print_sink(void *ctx, const char *text, size_t len)
{
	struct agent_state *a = ctx;

	if (len && text[len - 1] == '\n')
		len--;
	agent_queue(a, GBPF_AGENT_MSG_PRINT, 0, NULL, "%.*s", (int)(len > 380 ? 380 : len), text);
}

/*
 * Send @p n bytes of one frame from the calling thread (tx_lock held, no
 * frame half sent): 0 when it is on its way (a part the socket did not take
 * is finished by the sender before anything else), -EAGAIN when the socket
 * took none of it.
 */
static int agent_send_direct_locked(struct agent_state *a, const unsigned char *frame, size_t n)
{
	uint64_t one = 1;
	ssize_t w;

	do {
		w = send(a->fd, frame, n, MSG_DONTWAIT | MSG_NOSIGNAL);
	} while (w < 0 && errno == EINTR);
	if (w == (ssize_t)n)
		return 0;
	if (w <= 0)
		return -EAGAIN;
	/* Half a frame is on the wire: the sender finishes it before anything else. */
	memcpy(a->tx_rest, frame + w, n - (size_t)w);
	a->tx_rest_len = n - (size_t)w;
	a->tx_rest_off = 0;
	if (a->wake_fd >= 0 && write(a->wake_fd, &one, sizeof(one)) < 0) {
		/* saturated: the sender is awake */
	}
	return 0;
}

/*
 * Take tx_lock for a direct frame: 0 with the lock held, -EAGAIN when direct
 * frames are off or someone else is sending (the caller must not wait).
 */
static int agent_direct_begin(struct agent_state *a)
{
	if (!a->print_direct || !atomic_load(&a->direct_ok) || atomic_load(&a->forked) ||
	    atomic_load(&a->orphaned))
		return -EAGAIN;
	if (pthread_mutex_trylock(&a->tx_lock))
		return -EAGAIN;
	/* direct_ok again under the lock: a session end clears it before closing fd. */
	if (!atomic_load(&a->direct_ok) || a->fd < 0 || a->tx_rest_len) {
		pthread_mutex_unlock(&a->tx_lock);
		return -EAGAIN;
	}
	return 0;
}

/*
 * Send one PRINT frame from the calling thread: only when nothing is queued
 * (order), nobody is sending (tx_lock is only tried: the caller never waits
 * for the sender) and the socket takes it now (MSG_DONTWAIT). A frame the
 * socket took in part is finished by the sender before anything else.
 * Returns 0 when the line is on its way, -EAGAIN when the caller must queue
 * it.
 */
static int agent_print_direct(struct agent_state *a, const char *text, size_t len)
{
	unsigned char frame[AGENT_TX_REST_MAX];
	struct gbpf_agent_frame f;
	uint32_t dropped, n32 = (uint32_t)len;
	size_t n;

	if (agent_direct_begin(a))
		return -EAGAIN;
	pthread_mutex_lock(&a->lock);
	if (a->q_len) {
		pthread_mutex_unlock(&a->lock);
		pthread_mutex_unlock(&a->tx_lock);
		return -EAGAIN;
	}
	dropped = a->dropped;
	a->dropped = 0;
	pthread_mutex_unlock(&a->lock);
	/* The frame as sender_drain encodes it: u32 dropped, str text (little endian). */
	gbpf_agent_frame_init(&f, GBPF_AGENT_MSG_PRINT, (uint32_t)(8 + len));
	memcpy(frame, &f, sizeof(f));
	n = sizeof(f);
	for (int i = 0; i < 4; i++)
		frame[n++] = (unsigned char)(dropped >> (8 * i));
	for (int i = 0; i < 4; i++)
		frame[n++] = (unsigned char)(n32 >> (8 * i));
	memcpy(frame + n, text, len);
	n += len;
	if (!agent_send_direct_locked(a, frame, n)) {
		pthread_mutex_unlock(&a->tx_lock);
		return 0;
	}
	/* Socket full (or gone: the sender sees that): the queue takes the line, drop count back. */
	pthread_mutex_lock(&a->lock);
	a->dropped += dropped;
	pthread_mutex_unlock(&a->lock);
	pthread_mutex_unlock(&a->tx_lock);
	return -EAGAIN;
}

/*
 * Wake a controller blocked in poll(): lines wait in the print ring. Best
 * effort: when a frame is being sent, queued or half sent, or the socket is
 * full, the controller has data to wake for already (and it drains the ring
 * after every poll); and it polls at least every millisecond.
 */
static void agent_wake_controller(struct agent_state *a)
{
	struct gbpf_agent_frame f;

	if (agent_direct_begin(a))
		return;
	gbpf_agent_frame_init(&f, GBPF_AGENT_MSG_WAKE, 0);
	agent_send_direct_locked(a, (const unsigned char *)&f, sizeof(f));
	pthread_mutex_unlock(&a->tx_lock);
}

/*
 * A line into the session's print ring: 0 when it is there, -EAGAIN when the
 * ring is full (the plugin keeps the line and offers it again), -ENOENT when
 * there is no ring (the socket takes the line).
 */
static int agent_print_ring(struct agent_state *a, const char *text, size_t len)
{
	int rc;

	if (!a->print_direct || atomic_load(&a->forked) || atomic_load(&a->orphaned) ||
	    !atomic_load(&a->live))
		return -ENOENT;
	pthread_mutex_lock(&a->pring_lock);
	rc = a->pring.hdr ? gbpf_print_ring_put(&a->pring, text, len) : -ENOENT;
	pthread_mutex_unlock(&a->pring_lock);
	if (rc == 1) {
		agent_wake_controller(a);
		rc = 0;
	}
	return rc;
}

int agent_print(void *ctx, const char *text, size_t len)
{
	struct agent_state *a = ctx;
	int rc;

	if (!text)
		return -EINVAL;
	if (len && text[len - 1] == '\n')
		len--;
	if (len > 380)
		len = 380;
	/* A NUL would cut the line short in the queue; the direct frame must carry the same text. */
	len = strnlen(text, len);
	rc = agent_print_ring(a, text, len);
	if (rc != -ENOENT)
		return rc;
	if (!agent_print_direct(a, text, len))
		return 0;
	/* Full: the plugin keeps the line (its device queue absorbs the burst and counts what it must drop). */
	return agent_push_print(ctx, "%.*s", (int)len, text);
}

static int agent_run_host_prog_locked(struct agent_state *a, size_t prog_index, void *probe_ctx,
				      size_t ctx_size, uint64_t *r0)
{
	const struct gbpf_prog_desc *p;
	struct gbpf_interp_result res = {0};
	struct gbpf_exec_env env;
	struct gbpf_interp_region region;
	uint64_t args[5] = {0};
	char err_text[256] = "";
	size_t base;
	int cpu, err;

	if (prog_index >= a->setup.prog_cnt || !a->interps || !a->interps[prog_index])
		return -EINVAL;
	p = &a->setup.progs[prog_index];
	if (!probe_ctx || ctx_size < host_ctx_size(p->attach.kind))
		return -EINVAL;
	base = p->map_cnt ? (size_t)(p->maps - a->setup.maps) : 0;
	memset(&env, 0, sizeof(env));
	env.maps = p->map_cnt ? &a->shm.maps[base] : NULL;
	env.map_cnt = p->map_cnt;
	cpu = sched_getcpu();
	env.slot = cpu > 0 ? (uint32_t)cpu : 0;
	env.thread_count = 1;
	env.prandom_state = (uint64_t)time(NULL) ^ ((uint64_t)(uintptr_t)&env << 16);
	env.print = agent_print_sink;
	env.print_ctx = a;
	region = (struct gbpf_interp_region){.addr = probe_ctx, .size = ctx_size, .name = "ctx"};
	args[0] = (uint64_t)(uintptr_t)probe_ctx;
	err = gbpf_interp_run(a->interps[prog_index], &env, args, &region, 1, &res, err_text,
			      sizeof(err_text));
	if (err) {
		unsigned seen = atomic_fetch_add(&a->faults[prog_index], 1);

		if (seen < AGENT_FAULT_REPORTS)
			agent_queue(a, GBPF_AGENT_MSG_REPORT, GBPF_AGENT_EVENT_ERROR, NULL,
				    "%s: program '%s': %s%s", p->source_file ? p->source_file : "?",
				    p->name, err_text,
				    seen + 1 == AGENT_FAULT_REPORTS ? " (further faults not reported)"
								    : "");
		return err;
	}
	if (r0)
		*r0 = res.r0;
	return 0;
}

int agent_run_host_prog(void *ctx, size_t prog_index, void *probe_ctx, size_t ctx_size,
			uint64_t *r0)
{
	struct agent_state *a = ctx;
	int err;

	/* Counted before the flag is read: a detach waits for us (agent_session_end). */
	atomic_fetch_add(&a->host_inflight, 1);
	if (!atomic_load(&a->attached)) {
		atomic_fetch_sub(&a->host_inflight, 1);
		return -ESHUTDOWN;
	}
	err = agent_run_host_prog_locked(a, prog_index, probe_ctx, ctx_size, r0);
	atomic_fetch_sub(&a->host_inflight, 1);
	return err;
}
