/* SPDX-License-Identifier: MIT */
/*
 * The controller at run time: start the application, accept its agents
 * (peer credentials checked), send them the setup and the map memory, print
 * their reports, drain ring buffers every millisecond and print maps every
 * interval, until the application exits.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "core/base/cpu_relax.h"
#include "run_internal.h"

/* Ring buffers are drained at least this often (milliseconds). */
#define RUN_DRAIN_MS 1
/* After the application exits, wait this long for its agents' last reports. */
#define RUN_GRACE_MS 300

/*
 * Busy-polling while device print lines flow (#8: GPU -> user printk within
 * 10 us). Blocking in poll() costs a wake-up per line (5-30 us, hundreds
 * from a deep idle state). After a print frame the controller polls without
 * blocking, a few pause instructions apart, for twice the gap between the
 * last two print frames (at least RUN_SPIN_MIN_NS; when that gap is above
 * the limit a spin would not catch the next line, so only the minimum), then
 * blocks again. Cost: one core at most, and only while lines come at least
 * every limit/2 (GBPF_RUN_SPIN_US, default 5000 us: lines every 2.5 ms or
 * more often); a lone line costs RUN_SPIN_MIN_NS of spinning.
 * GBPF_RUN_SPIN_US=0 turns it off.
 */
#define RUN_SPIN_MIN_NS 100000ull
#define RUN_SPIN_MAX_NS_DEFAULT 5000000ull


static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* A print line arrived (a frame or a ring record): open (or stretch) the spin window. */
static void run_spin_note(struct run_spin *sp)
{
	uint64_t now = mono_ns(), gap, win = RUN_SPIN_MIN_NS;

	if (!sp->init) {
		const char *e = getenv("GBPF_RUN_SPIN_US");

		sp->max_ns = RUN_SPIN_MAX_NS_DEFAULT;
		if (e && *e)
			sp->max_ns = strtoull(e, NULL, 10) * 1000ull;
		if (sp->max_ns > 1000000000ull)
			sp->max_ns = 1000000000ull;
		sp->init = true;
	}
	sp->lines++;
	if (!sp->max_ns)
		return;
	gap = sp->last_ns ? now - sp->last_ns : UINT64_MAX;
	sp->last_ns = now;
	if (gap <= sp->max_ns / 2 && 2 * gap > win)
		win = 2 * gap;
	if (win > sp->max_ns)
		win = sp->max_ns;
	if (now + win > sp->until_ns)
		sp->until_ns = now + win;
}

/* The spin window is open (it closes here once it has passed). */
static bool run_spin_open(struct run_spin *sp)
{
	if (!sp->until_ns)
		return false;
	if (mono_ns() < sp->until_ns)
		return true;
	sp->until_ns = 0;
	return false;
}

/* Some agent's print ring holds a line. */
static bool print_rings_pending(const struct run_ctx *ctx)
{
	for (size_t i = 0; i < ctx->agent_cnt; i++)
		if (ctx->agents[i].pring.hdr && gbpf_print_ring_pending(&ctx->agents[i].pring))
			return true;
	return false;
}

/*
 * poll() that spins (timeout 0, pause between) while the spin window is
 * open, at most @p timeout_ms, and also ends when a print ring holds a line
 * (returning 0 if no descriptor is ready); blocks as usual otherwise.
 * Returns poll's.
 */
static int run_poll(struct run_ctx *ctx, struct pollfd *pf, nfds_t n, int timeout_ms)
{
	struct run_spin *sp = &ctx->spin;
	bool all_rings = true;
	uint64_t end;
	int rc;

	if (timeout_ms <= 0 || !run_spin_open(sp))
		return poll(pf, n, timeout_ms);
	end = mono_ns() + (uint64_t)timeout_ms * 1000000ull;
	if (end > sp->until_ns)
		end = sp->until_ns;
	for (size_t i = 0; i < ctx->agent_cnt; i++)
		all_rings &= ctx->agents[i].pring.hdr != NULL;
	/*
	 * Lines come through the rings: a look at them costs loads only, a poll() a system call
	 * (a line arriving during one waits for it), so the sockets (reports, new agents) are
	 * polled every 32nd turn. An agent without a ring sends its lines on the socket: every turn.
	 */
	for (unsigned i = 0;; i++) {
		if (!all_rings || !(i & 31)) {
			rc = poll(pf, n, 0);
			sp->spins++;
			if (rc != 0)
				return rc;
		}
		if (print_rings_pending(ctx) || mono_ns() >= end)
			return 0;
		for (int k = 0; k < 8; k++)
			gbpf_cpu_relax();
		/* A thread that waits for this core (the app's, on a small machine) gets it now and then. */
		if ((i & 255) == 255)
			sched_yield();
	}
}

static volatile sig_atomic_t run_forward_sig;

/* Signals sent to us by a process are passed on; the terminal signals the whole group itself. */
static void on_signal(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (si->si_code == SI_USER || si->si_code == SI_QUEUE)
		run_forward_sig = sig;
}

static char *join_preload(const char *agent, const char *plugin, const char *old)
{
	size_t n = strlen(agent) + (plugin ? strlen(plugin) : 0) + (old ? strlen(old) : 0) + 4;
	char *s = malloc(n);

	if (!s)
		return NULL;
	/* Ours first, so that the plugin's interposers win; then the user's own. */
	snprintf(s, n, "%s%s%s%s%s", agent, plugin ? ":" : "", plugin ? plugin : "",
		 old && old[0] ? ":" : "", old && old[0] ? old : "");
	return s;
}

int run_spawn(struct run_ctx *ctx)
{
	const char *agent = gbpf_agent_library_path();
	char *preload;
	sigset_t none;

	if (access(agent, R_OK))
		return cli_error("agent library %s: %s (set %s)", agent, strerror(errno),
				 GBPF_AGENT_ENV_LIB);
	preload = join_preload(agent, ctx->intercept ? ctx->plugin_path : NULL,
			       getenv("LD_PRELOAD"));
	if (!preload)
		return cli_error("out of memory");
	fflush(NULL);
	ctx->child = fork();
	if (ctx->child < 0) {
		free(preload);
		return cli_error("fork: %s", strerror(errno));
	}
	if (ctx->child == 0) {
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		if (setenv("LD_PRELOAD", preload, 1) || setenv(GBPF_AGENT_ENV_SOCK, ctx->sock, 1))
			_exit(127);
		/*
		 * --engine also reaches the cuda plugin's constructor, which decides
		 * before the agent's setup arrives whether to subscribe the Compute
		 * Sanitizer (that must precede the first context, and costs every
		 * kernel a few percent).
		 */
		if (ctx->agent_flags & (GBPF_AGENT_F_ENGINE_PTX | GBPF_AGENT_F_ENGINE_SANITIZER) &&
		    setenv("GBPF_CUDA_ENGINE", ctx->agent_flags & GBPF_AGENT_F_ENGINE_PTX ? "ptx" : "sanitizer", 1))
			_exit(127);
		execvp(ctx->cmd[0], ctx->cmd);
		fprintf(stderr, "gbpf %s: cannot run %s: %s\n", ctx->who, ctx->cmd[0], strerror(errno));
		_exit(errno == ENOENT ? 127 : 126);
	}
	free(preload);
	return 0;
}

/* ---- agents ---------------------------------------------------------------------- */

static long drain_print_ring(struct run_ctx *ctx, struct run_agent *ag);

static void agent_drop(struct run_ctx *ctx, size_t i)
{
	/* its last lines first: they were in the ring before the socket closed */
	if (drain_print_ring(ctx, &ctx->agents[i]))
		fflush(stdout);
	gbpf_print_ring_unmap(&ctx->agents[i].pring);
	if (ctx->attach_mode && !cli.json)
		fprintf(stderr, "gbpf %s: pid %d: detached\n", ctx->who, (int)ctx->agents[i].pid);
	close(ctx->agents[i].fd);
	free(ctx->agents[i].buf);
	run_agent_retire(ctx, &ctx->agents[i]);
	ctx->agents[i] = ctx->agents[--ctx->agent_cnt];
}

static int send_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		ssize_t w = send(fd, c, n, MSG_NOSIGNAL);

		if (w < 0 && (errno == EINTR || errno == EAGAIN)) {
			struct pollfd pf = {.fd = fd, .events = POLLOUT};

			if (errno == EAGAIN && poll(&pf, 1, 1000) <= 0)
				return -ETIMEDOUT;
			continue;
		}
		if (w <= 0)
			return -errno;
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

static int send_setup(struct run_ctx *ctx, struct run_agent *ag)
{
	union {
		char buf[CMSG_SPACE(2 * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct gbpf_agent_buf b = {0};
	struct gbpf_agent_frame f;
	struct iovec iov = {.iov_base = &f, .iov_len = sizeof(f)};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			    .msg_controllen = sizeof(u.buf)};
	struct cmsghdr *c;
	ssize_t w;
	int err, memfd = ctx->shm.fd, fds[2], ringfd = -1;

	if (ag->outbound) {
		/* Where the agent's children connect (docs/PROCESS_MODEL.md, gbpf attach). */
		gbpf_agent_buf_put_str(&b, ctx->sock);
		err = b.err;
		gbpf_agent_frame_init(&f, GBPF_AGENT_MSG_JOB, (uint32_t)b.len);
		if (!err)
			err = send_all(ag->fd, &f, sizeof(f));
		if (!err)
			err = send_all(ag->fd, b.data, b.len);
		gbpf_agent_buf_free(&b);
		memset(&b, 0, sizeof(b));
		if (err)
			return err;
	}
	if (ctx->per_process) {
		err = run_agent_region(ctx, ag);
		if (err)
			return err;
		memfd = ctx->pregs[ag->preg].shm.fd;
	}
	/*
	 * GPU timing costs the app microseconds per launch: only for a trace
	 * (the exit summary otherwise shows the host side of the calls).
	 */
	err = gbpf_agent_encode_setup(&b, ctx->backend_name ? ctx->backend_name : "",
				      ctx->plugin_path ? ctx->plugin_path : "",
				      ctx->agent_flags | (ctx->trace_path || ctx->otlp_traces_url
								  ? GBPF_AGENT_F_GPU_TIMELINE
								  : 0),
				      ctx->maps,
				      ctx->map_cnt, ctx->progs, ctx->map_base, ctx->prog_cnt);
	if (err)
		goto out;
	gbpf_agent_frame_init(&f, GBPF_AGENT_MSG_SETUP, (uint32_t)b.len);
	/*
	 * The agent's print ring rides along as the second descriptor. Without one (no memory
	 * for it) the agent sends its lines on the socket, as PRINT frames: slower, not wrong.
	 */
	if (!ag->pring.hdr)
		ringfd = gbpf_print_ring_create(&ag->pring);
	fds[0] = memfd;
	fds[1] = ringfd;
	memset(u.buf, 0, sizeof(u.buf));
	mh.msg_controllen = CMSG_SPACE((ringfd >= 0 ? 2 : 1) * sizeof(int));
	c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN((ringfd >= 0 ? 2 : 1) * sizeof(int));
	memcpy(CMSG_DATA(c), fds, (ringfd >= 0 ? 2 : 1) * sizeof(int));
	/* The descriptor rides on the frame header; the payload follows. */
	do {
		w = sendmsg(ag->fd, &mh, MSG_NOSIGNAL);
	} while (w < 0 && errno == EINTR);
	if (ringfd >= 0)
		close(ringfd); /* the agent has its own descriptor now; our mapping stays */
	if (w < 0) {
		err = -errno;
		goto out;
	}
	if (w < (ssize_t)sizeof(f))
		err = send_all(ag->fd, (char *)&f + w, sizeof(f) - (size_t)w);
	if (!err)
		err = send_all(ag->fd, b.data, b.len);
out:
	gbpf_agent_buf_free(&b);
	return err;
}

static void accept_agents(struct run_ctx *ctx)
{
	for (;;) {
		struct ucred cred;
		socklen_t len = sizeof(cred);
		int fd = accept4(ctx->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

		if (fd < 0)
			return;
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len)) {
			fprintf(stderr, "gbpf %s: agent refused: no peer credentials: %s\n", ctx->who,
				strerror(errno));
			close(fd);
			continue;
		}
		if (cred.uid != getuid()) {
			fprintf(stderr,
				"gbpf %s: agent pid %d refused: it runs as uid %u, gbpf as uid %u\n", ctx->who,
				(int)cred.pid, (unsigned)cred.uid, (unsigned)getuid());
			close(fd);
			continue;
		}
		if (ctx->agent_cnt == RUN_MAX_AGENTS) {
			fprintf(stderr, "gbpf %s: agent pid %d refused: %d agents already connected\n", ctx->who,
				(int)cred.pid, RUN_MAX_AGENTS);
			close(fd);
			continue;
		}
		ctx->agents[ctx->agent_cnt++] =
			(struct run_agent){.fd = fd, .pid = cred.pid, .preg = -1};
	}
}

int run_add_agent(struct run_ctx *ctx, int fd, pid_t pid, bool outbound)
{
	int fl = fcntl(fd, F_GETFL);

	if (ctx->agent_cnt == RUN_MAX_AGENTS)
		return -ENOSPC;
	/* Served like accepted agents: reads must never block the loop. */
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK))
		return -errno;
	ctx->agents[ctx->agent_cnt++] =
		(struct run_agent){.fd = fd, .pid = pid, .outbound = outbound, .preg = -1};
	return 0;
}

static void print_report(struct run_ctx *ctx, struct run_agent *ag, uint16_t type,
			 const struct gbpf_agent_report *r)
{
	static const char *const kinds[] = {"info", "not instrumented", "error"};

	if (r->dropped)
		fprintf(stderr, "gbpf %s: pid %d: %u message(s) dropped (agent queue full)\n", ctx->who,
			(int)ag->pid, r->dropped);
	if (type == GBPF_AGENT_MSG_PRINT) {
		if (cli.json) {
			jw_start_object(&cli.jw);
			struct timespec now;

			/* receipt time (CLOCK_REALTIME ns): lets a reader measure GPU-to-user latency */
			clock_gettime(CLOCK_REALTIME, &now);
			jw_kv_string(&cli.jw, "type", "printf");
			jw_kv_int(&cli.jw, "pid", ag->pid);
			jw_kv_int(&cli.jw, "ts_ns", (int64_t)now.tv_sec * 1000000000 + now.tv_nsec);
			jw_kv_string(&cli.jw, "msg", r->msg);
			jw_end_object(&cli.jw);
			jw_finish(&cli.jw);
		} else {
			/*
			 * Whole lines in every write: the application usually writes to the same
			 * stdout (a pipe or file it inherited), and a write of at most PIPE_BUF
			 * bytes is never interleaved with its writes, while stdio's own flush of
			 * a full buffer cuts a line anywhere (one line of 4,096 came out broken
			 * by the app's in a Level Zero test).
			 */
			size_t n = strlen(r->msg) + 1, cap = __fbufsize(stdout);

			if (!cap || cap > PIPE_BUF)
				cap = PIPE_BUF;
			if (__fpending(stdout) + n > cap)
				fflush(stdout);
			printf("%s\n", r->msg);
		}
		/* Flushed by agent_read once per batch of frames (few writes for many lines). */
		return;
	}
	(void)ctx;
	if (r->kernel[0])
		fprintf(stderr, "gbpf %s: pid %d: %s: kernel %s: %s\n", ctx->who, (int)ag->pid,
			kinds[r->event], r->kernel, r->msg);
	else
		fprintf(stderr, "gbpf %s: pid %d: %s: %s\n", ctx->who, (int)ag->pid, kinds[r->event], r->msg);
}

/* A batch of timeline events: stored for the summary and the trace. */
static int agent_timeline_msg(struct run_ctx *ctx, struct run_agent *ag,
			      const struct gbpf_agent_frame *f, const void *payload)
{
	static struct gbpf_timeline_event ctl_tl_batch[GBPF_AGENT_MAX_TL_BATCH]; /* controller thread only */
	char why[256] = "";
	uint64_t dropped;
	size_t n, i;

	if (gbpf_agent_decode_timeline(payload, f->len, &dropped, ctl_tl_batch, &n, why, sizeof(why))) {
		/* A bad batch is the plugin's bug, not a reason to lose the agent. */
		ctx->tl.rejected++;
		fprintf(stderr, "gbpf %s: pid %d: timeline batch rejected: %s\n", ctx->who, (int)ag->pid, why);
		return 0;
	}
	if (dropped > ag->tl_dropped) {
		ctx->tl.dropped_agents += dropped - ag->tl_dropped;
		ag->tl_dropped = dropped;
	}
	for (i = 0; i < n; i++) {
		if (gbpf_tl_add(&ctx->tl, (uint32_t)ag->pid, &ctl_tl_batch[i]) == -ENOSPC) {
			ctx->tl.dropped_store += n - i - 1; /* the rest cannot fit either */
			break;
		}
	}
	return 0;
}

/* Remember which executable a pid runs (names processes in the trace). */
static void remember_proc(struct run_ctx *ctx, pid_t pid, const char *exe)
{
	size_t i;
	void *p;

	for (i = 0; i < ctx->proc_cnt; i++)
		if (ctx->procs[i].pid == pid)
			break;
	if (i == ctx->proc_cnt) {
		if (ctx->proc_cnt >= 4 * RUN_MAX_AGENTS)
			return; /* bounded: a fork bomb only loses names */
		p = realloc(ctx->procs, (ctx->proc_cnt + 1) * sizeof(*ctx->procs));
		if (!p)
			return;
		ctx->procs = p;
		ctx->proc_cnt++;
	}
	ctx->procs[i].pid = pid;
	snprintf(ctx->procs[i].exe, sizeof(ctx->procs[i].exe), "%s", exe);
}

/* Handle one complete frame; returns non-zero to drop the agent. */
static int agent_message(struct run_ctx *ctx, struct run_agent *ag,
			 const struct gbpf_agent_frame *f, const void *payload)
{
	char why[512] = "";
	int err;

	if (f->type == GBPF_AGENT_MSG_HELLO) {
		struct gbpf_agent_hello h;

		err = gbpf_agent_decode_hello(payload, f->len, &h, why, sizeof(why));
		if (!err && ag->hello)
			snprintf(why, sizeof(why), "second hello"), err = -EINVAL;
		if (!err && h.pid != (uint32_t)ag->pid)
			snprintf(why, sizeof(why), "hello claims pid %u, socket says %d", h.pid,
				 (int)ag->pid), err = -EINVAL;
		if (err)
			goto bad;
		ag->hello = true;
		snprintf(ag->exe, sizeof(ag->exe), "%.255s", h.exe);
		remember_proc(ctx, ag->pid, ag->exe);
		if (cli.debug)
			fprintf(stderr, "gbpf %s: agent pid %u (parent %u) %s connected\n", ctx->who, h.pid,
				h.ppid, h.exe);
		err = send_setup(ctx, ag);
		if (err) {
			fprintf(stderr, "gbpf %s: pid %d: sending the setup failed: %s\n", ctx->who,
				(int)ag->pid, strerror(-err));
			return 1;
		}
		return 0;
	}
	if (!ag->hello) {
		snprintf(why, sizeof(why), "message type %u before hello", f->type);
		goto bad;
	}
	if (f->type == GBPF_AGENT_MSG_TIMELINE)
		return agent_timeline_msg(ctx, ag, f, payload);
	if (f->type == GBPF_AGENT_MSG_WAKE) {
		/* its ring was drained when poll() returned, before this frame was read */
		if (f->len) {
			snprintf(why, sizeof(why), "wake with a payload of %u bytes", f->len);
			goto bad;
		}
		ctx->spin.wakes++;
		return 0;
	}
	if (f->type == GBPF_AGENT_MSG_REPORT || f->type == GBPF_AGENT_MSG_PRINT) {
		struct gbpf_agent_report r;

		if (gbpf_agent_decode_report(f->type, payload, f->len, &r, why, sizeof(why)))
			goto bad;
		if (f->type == GBPF_AGENT_MSG_PRINT)
			run_spin_note(&ctx->spin);
		print_report(ctx, ag, f->type, &r);
		return 0;
	}
	snprintf(why, sizeof(why), "unexpected message type %u", f->type);
bad:
	fprintf(stderr, "gbpf %s: pid %d: malformed message, disconnected: %s\n", ctx->who, (int)ag->pid,
		why);
	return 1;
}

/* Bytes of an agent's receive buffer: the longest frame an agent may send. */
#define RUN_AGENT_BUF (sizeof(struct gbpf_agent_frame) + RUN_AGENT_MAX_PAYLOAD)

/*
 * Check a frame header from an agent, saying exactly what is wrong with it
 * in the order a reader meets it; 0 or non-zero with the reason printed.
 */
static int agent_frame_ok(struct run_ctx *ctx, struct run_agent *ag,
			  const struct gbpf_agent_frame *f)
{
	char why[256] = "";

	if (!gbpf_agent_frame_check(f, why, sizeof(why))) {
		if (!gbpf_agent_msg_from_agent(f->type))
			snprintf(why, sizeof(why),
				 "frame: message type %u (%s) is sent by the controller, "
				 "never by an agent", f->type, gbpf_agent_msg_name(f->type));
		else if (f->len > RUN_AGENT_MAX_PAYLOAD)
			snprintf(why, sizeof(why),
				 "frame: %s payload of %u bytes is longer than the %u an "
				 "agent may send", gbpf_agent_msg_name(f->type), f->len,
				 RUN_AGENT_MAX_PAYLOAD);
	}
	if (!why[0])
		return 0;
	fprintf(stderr, "gbpf %s: pid %d: bad frame at byte %llu of its stream, disconnected: %s\n",
		ctx->attach_mode ? "attach" : "run", (int)ag->pid, (unsigned long long)ag->rx_off, why);
	return 1;
}

/*
 * Read what an agent sent; returns non-zero when it is gone or misbehaved.
 * One recv takes whatever the socket holds (many small print frames at a
 * time: a line costs no extra system call) and every whole frame in it is
 * handled; a partial frame waits at the front of the buffer for the rest.
 * Print lines are flushed to stdout once per batch, before returning.
 */
static int agent_read(struct run_ctx *ctx, struct run_agent *ag)
{
	int gone = 0;

	if (!ag->buf) {
		ag->buf = malloc(RUN_AGENT_BUF);
		if (!ag->buf)
			return 1;
	}
	while (!gone) {
		size_t pos = 0, asked = RUN_AGENT_BUF - ag->have;
		ssize_t r;

		do {
			r = recv(ag->fd, ag->buf + ag->have, asked, 0);
		} while (r < 0 && errno == EINTR);
		if (r == 0 || (r < 0 && errno != EAGAIN)) {
			gone = 1;
			break;
		}
		if (r < 0)
			break; /* EAGAIN: everything there was is read */
		ag->have += (size_t)r;
		while (ag->have - pos >= sizeof(struct gbpf_agent_frame)) {
			struct gbpf_agent_frame f;
			size_t want;

			memcpy(&f, ag->buf + pos, sizeof(f));
			if (agent_frame_ok(ctx, ag, &f)) {
				gone = 1;
				break;
			}
			want = sizeof(f) + f.len;
			if (ag->have - pos < want)
				break;
			ag->rx_off += want;
			if (agent_message(ctx, ag, &f, ag->buf + pos + sizeof(f))) {
				gone = 1;
				break;
			}
			pos += want;
		}
		/* The unfinished frame moves to the front: a whole frame always fits behind it. */
		if (pos) {
			memmove(ag->buf, ag->buf + pos, ag->have - pos);
			ag->have -= pos;
		}
		/* A short read means the socket is empty now: no EAGAIN round trip for it. */
		if ((size_t)r < asked)
			break;
	}
	fflush(stdout);
	return gone;
}

struct ring_line_ctx {
	struct run_ctx *ctx;
	struct run_agent *ag;
};

/* One line from an agent's print ring: as a PRINT frame's. */
static void ring_line(void *c, const char *text, size_t len)
{
	struct ring_line_ctx *lc = c;
	struct gbpf_agent_report r;

	if (len > GBPF_AGENT_MAX_STR)
		len = GBPF_AGENT_MAX_STR;
	memcpy(r.msg, text, len);
	r.msg[len] = 0;
	r.event = r.dropped = 0;
	r.kernel[0] = 0;
	run_spin_note(&lc->ctx->spin);
	lc->ctx->spin.ring_lines++;
	print_report(lc->ctx, lc->ag, GBPF_AGENT_MSG_PRINT, &r);
}

/* An agent's print lines, in order; how many. */
static long drain_print_ring(struct run_ctx *ctx, struct run_agent *ag)
{
	struct ring_line_ctx lc = {ctx, ag};
	long n = ag->pring.hdr ? gbpf_print_ring_drain(&ag->pring, ring_line, &lc) : 0;

	if (n == -EPROTO && !ag->pring_bad) {
		ag->pring_bad = true;
		fprintf(stderr, "gbpf %s: pid %d: its print ring holds a malformed record: lines lost\n",
			ctx->who, (int)ag->pid);
	}
	return n > 0 ? n : 0;
}

/*
 * Every agent's print lines, in order; stdout flushed once when there were
 * any (not on every turn of the loop: ring buffer records may be buffered
 * there, written in large blocks).
 */
static void drain_print_rings(struct run_ctx *ctx)
{
	long n = 0;

	for (size_t i = 0; i < ctx->agent_cnt; i++)
		n += drain_print_ring(ctx, &ctx->agents[i]);
	if (n)
		fflush(stdout);
}

/* Ask every agent's ring for a wake-up before blocking (@p on), or stop asking. */
static void print_rings_want_wake(struct run_ctx *ctx, int on)
{
	for (size_t i = 0; i < ctx->agent_cnt; i++)
		if (ctx->agents[i].pring.hdr)
			gbpf_print_ring_want_wake(&ctx->agents[i].pring, on);
}

void run_serve_agents(struct run_ctx *ctx, int timeout_ms)
{
	struct pollfd pf[RUN_MAX_AGENTS + 1];
	size_t i, n = 0;
	bool block = timeout_ms > 0 && !run_spin_open(&ctx->spin);
	int rc;

	pf[n++] = (struct pollfd){.fd = ctx->listen_fd, .events = POLLIN};
	for (i = 0; i < ctx->agent_cnt; i++)
		pf[n++] = (struct pollfd){.fd = ctx->agents[i].fd, .events = POLLIN};
	/*
	 * About to block: ask the rings' producers for a wake-up, then look at the rings once more
	 * (a line published before the request was seen is there now; print_ring.h).
	 */
	if (block) {
		print_rings_want_wake(ctx, 1);
		if (print_rings_pending(ctx))
			timeout_ms = 0;
	}
	rc = run_poll(ctx, pf, n, timeout_ms);
	if (block)
		print_rings_want_wake(ctx, 0);
	drain_print_rings(ctx);
	if (rc <= 0)
		return;
	/* Back to front: agent_drop moves the last agent into the freed place. */
	for (i = ctx->agent_cnt; i-- > 0;)
		if (pf[i + 1].revents && agent_read(ctx, &ctx->agents[i]))
			agent_drop(ctx, i);
	if (pf[0].revents)
		accept_agents(ctx);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int run_loop(struct run_ctx *ctx)
{
	struct sigaction sa = {.sa_sigaction = on_signal, .sa_flags = SA_SIGINFO | SA_RESTART};
	double next = ctx->interval_s > 0 ? now_s() + ctx->interval_s : 0, grace_end;
	double next_export = ctx->export_s > 0 ? now_s() + ctx->export_s : 0;
	long intervals = 0;
	bool busy = false; /* the last ring drain printed records: look again at once */
	pid_t w;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	if (!cli.json)
		fprintf(stderr, "gbpf %s: %zu program(s) on backend %s; tracing %s (pid %d)\n", ctx->who,
			ctx->prog_cnt, ctx->backend_name ? ctx->backend_name : "(none)", ctx->cmd[0],
			(int)ctx->child);
	while (!ctx->child_done) {
		uint64_t records = ctx->records;

		run_serve_agents(ctx, busy ? 0 : RUN_DRAIN_MS);
		run_drain_rings(ctx);
		busy = ctx->records != records;
		if (run_forward_sig) {
			kill(ctx->child, run_forward_sig);
			run_forward_sig = 0;
		}
		w = waitpid(ctx->child, &ctx->child_status, WNOHANG);
		if (w == ctx->child || (w < 0 && errno == ECHILD))
			ctx->child_done = true;
		if (next && !ctx->child_done && now_s() >= next &&
		    (ctx->count < 0 || intervals < ctx->count)) {
			run_print_maps(ctx, true);
			intervals++;
			next += ctx->interval_s;
		}
		if (next_export && !ctx->child_done && now_s() >= next_export) {
			run_export_now(ctx);
			next_export += ctx->export_s;
		}
	}
	/* Last words of the agents (reports queued at exit), bounded. */
	grace_end = now_s() + RUN_GRACE_MS / 1e3;
	while (ctx->agent_cnt && now_s() < grace_end) {
		uint64_t records = ctx->records;

		run_serve_agents(ctx, busy ? 0 : RUN_DRAIN_MS);
		run_drain_rings(ctx);
		busy = ctx->records != records;
	}
	drain_print_rings(ctx);
	run_drain_rings(ctx);
	run_print_maps(ctx, false);
	run_export_now(ctx);
	run_finish_timeline(ctx);
	if (getenv("GBPF_RUN_SPIN_STATS"))
		fprintf(stderr, "gbpf %s: print lines %llu (%llu through print rings, %llu wake-ups), "
			"non-blocking polls %llu\n", ctx->who, (unsigned long long)ctx->spin.lines,
			(unsigned long long)ctx->spin.ring_lines, (unsigned long long)ctx->spin.wakes,
			(unsigned long long)ctx->spin.spins);
	return 0;
}
