/* SPDX-License-Identifier: MIT */
/*
 * libgbpf-agent.so: preloaded into the application by `gbpf run`.
 *
 * The constructor does nothing unless GBPF_AGENT_SOCK is set. Otherwise it
 * connects to the controller, says hello, receives the verified programs
 * and the map memory, and hands them to the chosen backend's agent_attach.
 * Everything here may fail; a failure is reported to the controller and the
 * agent stays idle: the application always runs, instrumented or not.
 * docs/PROCESS_MODEL.md describes the whole sequence.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <gbpf/backend.h>
#include <gbpf/maps.h>
#include <gbpf/object.h>
#include <gbpf/verifier.h>

#include "core/agent/agent_internal.h"
#include "core/interp/interp.h"

struct agent_state gbpf_agent_state = {
	.fd = -1,
	.wake_fd = -1,
	.listen_fd = -1,
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.tl_lock = PTHREAD_MUTEX_INITIALIZER,
	.tx_lock = PTHREAD_MUTEX_INITIALIZER,
	.pring_lock = PTHREAD_MUTEX_INITIALIZER,
	.print_direct = 1,
};

/* Seconds the constructor waits for the controller before letting the app run. */
#define AGENT_SETUP_TIMEOUT_S 10

static int write_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		ssize_t w = send(fd, c, n, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -errno;
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

static int read_all(int fd, void *p, size_t n)
{
	char *c = p;

	while (n) {
		ssize_t r = recv(fd, c, n, 0);

		if (r < 0 && errno == EINTR)
			continue;
		if (r == 0)
			return -ECONNRESET;
		if (r < 0)
			return -errno;
		c += r;
		n -= (size_t)r;
	}
	return 0;
}

/* Send one frame (used by the constructor and the sender thread). */
int agent_send_frame(int fd, uint16_t type, const struct gbpf_agent_buf *b);
int agent_send_frame(int fd, uint16_t type, const struct gbpf_agent_buf *b)
{
	struct gbpf_agent_frame f;
	int err;

	gbpf_agent_frame_init(&f, type, (uint32_t)b->len);
	err = write_all(fd, &f, sizeof(f));
	return err ? err : write_all(fd, b->data, b->len);
}

/*
 * Receive one controller frame: the header (with any descriptor riding on
 * it, SCM_RIGHTS), then its payload. A SETUP's first descriptor (the map
 * memory) goes to @p memfd, its second (the print ring, optional) to
 * @p ringfd; any other is closed. A frame type the controller does not
 * send is refused here, with its name.
 */
static int recv_frame(int fd, uint16_t *type, void **payload, size_t *len, int *memfd, int *ringfd,
		      char *why, size_t why_size)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * 4)];
		struct cmsghdr align;
	} u;
	struct gbpf_agent_frame f;
	struct iovec iov = {.iov_base = &f, .iov_len = sizeof(f)};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			    .msg_controllen = sizeof(u.buf)};
	struct cmsghdr *c;
	ssize_t r;
	int err;

	*memfd = -1;
	*ringfd = -1;
	*payload = NULL;
	do {
		r = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC | MSG_WAITALL);
	} while (r < 0 && errno == EINTR);
	if (r != (ssize_t)sizeof(f)) {
		snprintf(why, why_size, "no setup from the controller (%s)",
			 r < 0 ? strerror(errno) : "connection closed");
		err = r < 0 ? -errno : -ECONNRESET;
		goto out_fds;
	}
	err = gbpf_agent_frame_check(&f, why, why_size);
	if (!err && (gbpf_agent_msg_from_agent(f.type) || f.type == GBPF_AGENT_MSG_DETACH)) {
		if (f.type != GBPF_AGENT_MSG_DETACH) {
			snprintf(why, why_size, "controller sent a %s message (type %u), which only agents send",
				 gbpf_agent_msg_name(f.type), f.type);
			err = -EINVAL;
		}
	}
	if (!err && f.len > GBPF_AGENT_MAX_PAYLOAD) {
		snprintf(why, why_size, "%s: payload of %u bytes too long", gbpf_agent_msg_name(f.type),
			 f.len);
		err = -EMSGSIZE;
	}
	if (mh.msg_flags & MSG_CTRUNC) {
		snprintf(why, why_size, "%s: too many descriptors attached", gbpf_agent_msg_name(f.type));
		err = -EINVAL;
	}
out_fds:
	for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		size_t n, i;
		int fds[4];

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		if (n > 4)
			n = 4;
		memcpy(fds, CMSG_DATA(c), n * sizeof(int));
		for (i = 0; i < n; i++) {
			if (*memfd < 0 && !err && f.type == GBPF_AGENT_MSG_SETUP)
				*memfd = fds[i];
			else if (*ringfd < 0 && !err && f.type == GBPF_AGENT_MSG_SETUP)
				*ringfd = fds[i];
			else
				close(fds[i]);
		}
	}
	if (err)
		goto fail;
	if (f.type == GBPF_AGENT_MSG_SETUP && *memfd < 0) {
		snprintf(why, why_size, "setup: no map memory descriptor attached");
		err = -EINVAL;
		goto fail;
	}
	*payload = malloc(f.len ? f.len : 1);
	if (!*payload) {
		snprintf(why, why_size, "%s: no memory for %u bytes", gbpf_agent_msg_name(f.type), f.len);
		err = -ENOMEM;
		goto fail;
	}
	err = read_all(fd, *payload, f.len);
	if (err) {
		snprintf(why, why_size, "%s: payload of %u bytes cut short: %s",
			 gbpf_agent_msg_name(f.type), f.len, strerror(-err));
		goto fail;
	}
	*len = f.len;
	*type = f.type;
	return 0;
fail:
	free(*payload);
	*payload = NULL;
	if (*memfd >= 0)
		close(*memfd);
	if (*ringfd >= 0)
		close(*ringfd);
	*memfd = *ringfd = -1;
	return err;
}

static int agent_connect(struct agent_state *a, const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct timeval tv = {.tv_sec = AGENT_SETUP_TIMEOUT_S};
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* A controller that hangs must not hang the application forever. */
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		int err = -errno;

		close(fd);
		return err;
	}
	a->fd = fd;
	return 0;
}

static int agent_hello_on(int fd)
{
	struct gbpf_agent_buf b = {0};
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	int err;

	exe[n > 0 ? n : 0] = 0;
	err = gbpf_agent_encode_hello(&b, (uint32_t)getpid(), (uint32_t)getppid(), exe);
	if (!err)
		err = agent_send_frame(fd, GBPF_AGENT_MSG_HELLO, &b);
	gbpf_agent_buf_free(&b);
	return err;
}

static int agent_hello(struct agent_state *a)
{
	return agent_hello_on(a->fd);
}

static void agent_report_cb(void *ctx, enum gbpf_agent_event event, const char *kernel,
			    const char *msg)
{
	agent_queue(ctx, GBPF_AGENT_MSG_REPORT, (uint32_t)event, kernel, "%s", msg ? msg : "");
}

static uint64_t agent_next_launch_id(void *ctx)
{
	struct agent_state *a = ctx;

	return atomic_fetch_add(&a->launch_seq, 1) + 1;
}

static int agent_kernel_selected(void *ctx, size_t prog_index, const char *mangled_name)
{
	struct agent_state *a = ctx;

	if (prog_index >= a->setup.prog_cnt)
		return 0;
	return gbpf_prog_targets_kernel(&a->setup.progs[prog_index], mangled_name);
}

static __attribute__((format(printf, 3, 0))) void agent_vlog(void *ctx, enum gbpf_log_level level,
							      const char *fmt, va_list ap)
{
	char msg[384];

	if (level != GBPF_LOG_WARN)
		return;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	msg[strcspn(msg, "\n")] = 0;
	agent_queue(ctx, GBPF_AGENT_MSG_REPORT, GBPF_AGENT_EVENT_INFO, NULL, "%s", msg);
}

/* The library's own diagnostics are not the app's business: route them to the controller. */
static __attribute__((format(printf, 2, 0))) int agent_lib_print(enum gbpf_log_level level,
								  const char *fmt, va_list ap)
{
	char msg[384];

	if (level != GBPF_LOG_WARN)
		return 0;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	msg[strcspn(msg, "\n")] = 0;
	agent_queue(&gbpf_agent_state, GBPF_AGENT_MSG_REPORT, GBPF_AGENT_EVENT_INFO, NULL, "%s", msg);
	return 0;
}

/*
 * The verifier proves string arguments against the .rodata bytes the
 * controller sent; the programs read the region's copy at run time. Both
 * must be the same bytes (programs cannot write .rodata; anything else that
 * changed it did so behind the verifier's back).
 */
static int agent_check_rodata(struct agent_staged *st, char *why, size_t why_size)
{
	size_t i, k;

	for (i = 0; i < st->setup.map_cnt && i < st->shm.map_cnt; i++) {
		const struct gbpf_map_desc *d = &st->setup.maps[i];
		uint32_t key = 0;
		const unsigned char *v;

		if (d->origin != GBPF_MAP_ORIGIN_RODATA || !d->init_data || !d->init_size)
			continue;
		v = gbpf_map__lookup(&st->shm.maps[i], &key, 0);
		if (!v) {
			snprintf(why, why_size, "map #%zu '%s': no value in the map memory", i, d->name);
			return -EINVAL;
		}
		for (k = 0; k < d->init_size; k++)
			if (v[k] != ((const unsigned char *)d->init_data)[k]) {
				snprintf(why, why_size,
					 "map #%zu '%s': its memory differs at byte %zu from the "
					 "contents the controller verified",
					 i, d->name, k);
				return -EINVAL;
			}
	}
	return 0;
}

/*
 * Defence in depth: the controller verified the programs; so do we, before
 * running any, with the same verifier flags (derived from the setup flags
 * as the controller derived them) and the same .rodata bytes.
 */
static int agent_verify_all(struct agent_staged *st, char *why, size_t why_size)
{
	size_t i;
	int err = agent_check_rodata(st, why, why_size);

	if (!err) {
		st->ctx_reads = calloc(st->setup.prog_cnt ? st->setup.prog_cnt : 1, sizeof(*st->ctx_reads));
		if (!st->ctx_reads) {
			snprintf(why, why_size, "out of memory verifying %zu programs", st->setup.prog_cnt);
			return -ENOMEM;
		}
	}
	for (i = 0; !err && i < st->setup.prog_cnt; i++) {
		const struct gbpf_prog_desc *p = &st->setup.progs[i];
		struct gbpf_verify_result res = {.sz = sizeof(res)};
		GBPF_OPTS(gbpf_verify_opts, opts, .log_level = GBPF_VERIFY_LOG_ERROR,
			  .flags = gbpf_agent_verify_flags(st->setup.flags));

		err = gbpf_verify(p, &opts, &res);
		if (err || res.verdict != GBPF_VERDICT_ACCEPT) {
			snprintf(why, why_size, "%s: program '%s': verifier: instruction %lld: %s%s",
				 p->source_file ? p->source_file : "?", p->name,
				 (long long)res.error_insn, res.reason[0] ? res.reason : "rejected",
				 (st->setup.flags & GBPF_AGENT_F_ALLOW_APP_WRITES)
					 ? ""
					 : gbpf_agent_app_write_hint(p, res.reason));
			return err ? err : -GBPF_ERRNO__VERIFY;
		}
		st->ctx_reads[i] = res.ctx_read_mask;
	}
	return err;
}

/* Close the backend (another one is asked for); the registry goes with it. */
static void agent_close_backend(struct agent_state *a)
{
	if (a->backend && a->ops && a->ops->close)
		a->ops->close(a->backend);
	a->backend = NULL;
	a->ops = NULL;
	if (a->reg)
		gbpf_registry_free(a->reg);
	a->reg = NULL;
	a->backend_name[0] = 0;
}

/*
 * Open backend @p name (from @p path when not empty). An idle agent keeps
 * its backend open across sessions: a second attach to the same backend
 * reuses it (its interposers may have recorded the app's modules).
 */
static int agent_open_backend(struct agent_state *a, const char *name, const char *path, char *why,
			      size_t why_size)
{
	static struct gbpf_host_services host_services;
	struct gbpf_plugin *plugin;
	GBPF_OPTS(gbpf_registry_opts, ropts, .plugin_path = NULL);
	int err;

	if (a->backend && !strcmp(a->backend_name, name))
		return 0;
	agent_close_backend(a);
	/* The file the controller chose (and preloaded), else the usual search. */
	if (path && path[0]) {
		ropts.plugin_path = path;
		ropts.no_default_dirs = 1;
	}
	err = gbpf_registry_new(&ropts, &a->reg);
	if (err) {
		snprintf(why, why_size, "plugin registry: %s", strerror(-err));
		return err;
	}
	plugin = gbpf_registry_find(a->reg, name);
	if (!plugin) {
		snprintf(why, why_size, "backend '%s' not found", name);
		return -GBPF_ERRNO__NOBACKEND;
	}
	if (gbpf_plugin__load_error(plugin)) {
		snprintf(why, why_size, "backend '%s' failed to load: %s", name,
			 gbpf_plugin__load_error(plugin));
		return -GBPF_ERRNO__NOBACKEND;
	}
	a->ops = gbpf_plugin__ops(plugin);
	if (!a->ops || !a->ops->open || !a->ops->agent_attach) {
		snprintf(why, why_size, "backend '%s' cannot instrument applications (no agent_attach)",
			 name);
		a->ops = NULL;
		return -EOPNOTSUPP;
	}
	host_services.sz = sizeof(host_services);
	host_services.vlog = agent_vlog;
	host_services.log_ctx = a;
	struct gbpf_backend_open_opts oopts = {
		.sz = sizeof(oopts),
		.services = &host_services,
		.device_index = -1,
		.flags = GBPF_BACKEND_OPEN_AGENT,
	};
	err = a->ops->open(&oopts, &a->backend);
	if (err) {
		snprintf(why, why_size, "backend '%s' failed to open: %s", name, strerror(-err));
		a->backend = NULL;
		a->ops = NULL;
		return err;
	}
	snprintf(a->backend_name, sizeof(a->backend_name), "%s", name);
	return 0;
}

static int agent_attach(struct agent_state *a, char *why, size_t why_size)
{
	char log[512] = "";
	int err;

	a->services = (struct gbpf_agent_services){
		.sz = sizeof(a->services),
		.ctx = a,
		.report = agent_report_cb,
		.run_host_prog = agent_run_host_prog,
		.next_launch_id = agent_next_launch_id,
		.kernel_selected = agent_kernel_selected,
		.timeline = agent_timeline,
		.print = agent_print,
	};
	if (agent_timeline_init(a))
		agent_queue(a, GBPF_AGENT_MSG_REPORT, GBPF_AGENT_EVENT_INFO, NULL,
			    "no memory for the timeline queue: timeline events are dropped");
	struct gbpf_agent_attach_opts opts = {
		.sz = sizeof(opts),
		.progs = a->setup.progs,
		.prog_cnt = a->setup.prog_cnt,
		.maps = a->shm.maps,
		.map_cnt = a->shm.map_cnt,
		.services = &a->services,
		.cache_dir = getenv("GBPF_CACHE_DIR"),
		.flags = a->setup.flags,
		.prog_ctx_reads = a->ctx_reads,
	};
	/* Host programs must be runnable before the first interposed call. */
	atomic_store(&a->attached, 1);
	/* The hello is out: print lines may go straight to the controller (agent_print). */
	atomic_store(&a->direct_ok, 1);
	err = a->ops->agent_attach(a->backend, &opts, log, sizeof(log));
	if (err) {
		atomic_store(&a->attached, 0);
		atomic_store(&a->direct_ok, 0);
		snprintf(why, why_size, "backend '%s': agent_attach failed: %s%s%s",
			 a->setup.backend, strerror(err < 0 ? -err : err), log[0] ? ": " : "", log);
	}
	return err;
}

static void agent_staged_free(struct agent_staged *st)
{
	agent_host_progs_free(st->interps, st->faults, st->setup.prog_cnt);
	st->interps = NULL;
	st->faults = NULL;
	free(st->ctx_reads);
	st->ctx_reads = NULL;
	gbpf_agent_setup_free(&st->setup);
	memset(&st->setup, 0, sizeof(st->setup));
	gbpf_shm_destroy(&st->shm);
	gbpf_print_ring_unmap(&st->pring);
}

/*
 * An idle agent applies the options it was started with (GBPF_AGENT_ENV_IDLE_FLAGS):
 * probes may replace the application's values only when whoever started it
 * allowed that, and an attach that names no engine gets the start's engine.
 */
static int agent_idle_policy(struct agent_state *a, struct agent_staged *st, char *why,
			     size_t why_size)
{
	const uint32_t engines = GBPF_AGENT_F_ENGINE_PTX | GBPF_AGENT_F_ENGINE_SANITIZER;

	if (a->listen_fd < 0)
		return 0;
	if ((st->setup.flags & GBPF_AGENT_F_ALLOW_APP_WRITES) &&
	    !(a->idle_flags & GBPF_AGENT_F_ALLOW_APP_WRITES)) {
		snprintf(why, why_size,
			 "--allow-app-writes refused: the application was started without it "
			 "(gbpf run --idle --allow-app-writes lets probes replace its values)");
		return -EPERM;
	}
	if (!(st->setup.flags & engines))
		st->setup.flags |= a->idle_flags & engines;
	return 0;
}

/*
 * Turn a SETUP into a staged session: decode, map the region and the print
 * ring, apply the idle options, verify, build host interpreters. Takes
 * @p payload, @p memfd and @p ringfd (-1: no ring). Nothing is attached and
 * the current session is not touched.
 */
static int agent_stage(struct agent_state *a, void *payload, size_t len, int memfd, int ringfd,
		       struct agent_staged *st, char *why, size_t why_size)
{
	char ring_why[160];
	int err;

	memset(st, 0, sizeof(*st));
	st->shm.fd = -1;
	/* A ring that cannot be mapped only costs latency: print lines take the socket. */
	if (ringfd >= 0 && gbpf_print_ring_attach(&st->pring, ringfd, ring_why, sizeof(ring_why)))
		agent_queue(a, GBPF_AGENT_MSG_REPORT, GBPF_AGENT_EVENT_INFO, NULL,
			    "%s: print lines go through the socket", ring_why);
	err = gbpf_agent_decode_setup(payload, len, &st->setup, why, why_size);
	free(payload);
	if (err) {
		close(memfd);
		gbpf_print_ring_unmap(&st->pring);
		return err;
	}
	err = gbpf_shm_attach(&st->shm, memfd, st->setup.maps, st->setup.map_cnt, why, why_size);
	if (!err)
		err = agent_idle_policy(a, st, why, why_size);
	/* Without programs there is nothing to verify (reported when it is installed). */
	if (!err && st->setup.prog_cnt)
		err = agent_verify_all(st, why, why_size);
	if (!err && st->setup.prog_cnt)
		err = agent_host_progs_prepare(st, why, why_size);
	if (err)
		agent_staged_free(st);
	return err;
}

/* The staged session becomes the agent's (no session may be installed). */
static void agent_install(struct agent_state *a, struct agent_staged *st)
{
	a->setup = st->setup;
	a->shm = st->shm;
	a->interps = st->interps;
	a->faults = st->faults;
	a->ctx_reads = st->ctx_reads;
	pthread_mutex_lock(&a->pring_lock);
	a->pring = st->pring;
	pthread_mutex_unlock(&a->pring_lock);
	memset(st, 0, sizeof(*st));
	st->shm.fd = -1;
}

/*
 * Attach the installed session: open (or reuse) the backend and call its
 * agent_attach. Every failure is reported; the application runs on,
 * uninstrumented. @return 0 when the programs are attached.
 */
static int agent_go(struct agent_state *a)
{
	char why[512] = "";
	const char *backend = a->setup.backend;
	int err;

	/* An idle agent prepared its backend at start (its interposers are the preloaded ones). */
	if (a->listen_fd >= 0 && a->backend && strcmp(backend, a->backend_name)) {
		agent_queue(a, GBPF_AGENT_MSG_REPORT, GBPF_AGENT_EVENT_INFO, NULL,
			    "uses its own backend '%s' (started with it), not '%s'", a->backend_name,
			    backend[0] ? backend : "(none)");
		backend = a->backend_name;
	}
	if (!backend[0]) {
		agent_queue(a, GBPF_AGENT_MSG_REPORT, GBPF_AGENT_EVENT_INFO, NULL,
			    "no backend chosen: the application runs uninstrumented");
		return -GBPF_ERRNO__NOBACKEND;
	}
	if (!a->setup.prog_cnt) {
		agent_queue(a, GBPF_AGENT_MSG_REPORT, GBPF_AGENT_EVENT_INFO, NULL,
			    "no programs to attach: the application runs uninstrumented");
		return -ENOENT;
	}
	err = agent_open_backend(a, backend,
				 backend == a->setup.backend ? a->setup.backend_path : "", why,
				 sizeof(why));
	if (!err)
		err = agent_attach(a, why, sizeof(why));
	if (err) {
		agent_queue(a, GBPF_AGENT_MSG_REPORT, GBPF_AGENT_EVENT_ERROR, NULL,
			    "%s; the application runs uninstrumented", why);
		return err;
	}
	agent_queue(a, GBPF_AGENT_MSG_REPORT, GBPF_AGENT_EVENT_INFO, NULL,
		    "attached %zu program(s), %zu map(s) on backend '%s'%s", a->setup.prog_cnt,
		    a->shm.map_cnt, a->backend_name,
		    a->setup.flags & GBPF_AGENT_F_ENGINE_PTX         ? " (engine ptx)"
		    : a->setup.flags & GBPF_AGENT_F_ENGINE_SANITIZER ? " (engine sanitizer)"
								     : "");
	return 0;
}

/*
 * Act on a SETUP (no session running): stage, install, attach. Every
 * failure is reported; the application runs on, uninstrumented.
 */
static void agent_setup_from(struct agent_state *a, void *payload, size_t len, int memfd, int ringfd)
{
	struct agent_staged st;
	char why[512] = "";

	if (agent_stage(a, payload, len, memfd, ringfd, &st, why, sizeof(why))) {
		agent_queue(a, GBPF_AGENT_MSG_REPORT, GBPF_AGENT_EVENT_ERROR, NULL,
			    "%s; the application runs uninstrumented", why);
		return;
	}
	agent_install(a, &st);
	agent_go(a);
}

/*
 * Apply the frame recv_frame gave (@p err its result) when it is the
 * SETUP; anything else is refused with a report and the application runs
 * uninstrumented. @return 0 when the setup was applied.
 */
static int agent_take_setup(struct agent_state *a, int err, uint16_t type, void *payload, size_t len,
			    int memfd, int ringfd, char *why, size_t why_size)
{
	if (!err && type != GBPF_AGENT_MSG_SETUP) {
		snprintf(why, why_size, "expected a setup message, got %s (type %u)",
			 gbpf_agent_msg_name(type), type);
		free(payload);
		if (memfd >= 0)
			close(memfd);
		if (ringfd >= 0)
			close(ringfd);
		err = -EINVAL;
	}
	if (err) {
		agent_queue(a, GBPF_AGENT_MSG_REPORT, GBPF_AGENT_EVENT_ERROR, NULL,
			    "%s; the application runs uninstrumented", why);
		return err;
	}
	agent_setup_from(a, payload, len, memfd, ringfd);
	return 0;
}

/* Run mode: the first frame must be the SETUP. */
static void agent_setup(struct agent_state *a)
{
	char why[512] = "";
	void *payload = NULL;
	size_t len = 0;
	uint16_t type = 0;
	int memfd = -1, ringfd = -1, err;

	err = recv_frame(a->fd, &type, &payload, &len, &memfd, &ringfd, why, sizeof(why));
	agent_take_setup(a, err, type, payload, len, memfd, ringfd, why, sizeof(why));
}

/* ---- idle mode: the agent's own socket (`gbpf attach`, `gbpf detach`) ------------- */

/* Tell our children (fork + exec) where our controller listens: DIR/PID.job. */
static void agent_job_write(struct agent_state *a, const char *ctl_path)
{
	char why[256], tmp[128];
	FILE *f;

	if (a->listen_fd < 0 || !ctl_path || !ctl_path[0] ||
	    gbpf_agent_job_path(getpid(), a->job_path, sizeof(a->job_path), why, sizeof(why))) {
		a->job_path[0] = 0;
		return;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp", a->job_path);
	f = fopen(tmp, "we");
	if (!f) {
		a->job_path[0] = 0;
		return;
	}
	fprintf(f, "%s\n", ctl_path);
	/* rename: a child never reads half a path. */
	if (fclose(f) || rename(tmp, a->job_path)) {
		unlink(tmp);
		a->job_path[0] = 0;
	}
}

void agent_session_end(struct agent_state *a, const char *why)
{
	(void)why;
	atomic_store(&a->live, 0);
	atomic_store(&a->direct_ok, 0);
	if (a->job_path[0])
		unlink(a->job_path);
	a->job_path[0] = 0;
	/* Kernels launch their original code from the next launch on. */
	if (atomic_exchange(&a->attached, 0) && a->ops && a->ops->agent_detach)
		a->ops->agent_detach(a->backend);
	/* A host program that started before the flag changed finishes first. */
	while (atomic_load(&a->host_inflight))
		usleep(100);
	agent_host_progs_free(a->interps, a->faults, a->setup.prog_cnt);
	a->interps = NULL;
	a->faults = NULL;
	free(a->ctx_reads);
	a->ctx_reads = NULL;
	gbpf_agent_setup_free(&a->setup);
	memset(&a->setup, 0, sizeof(a->setup));
	gbpf_shm_destroy(&a->shm);
	/* No print may write to the ring once it is unmapped: the controller drains what is there. */
	pthread_mutex_lock(&a->pring_lock);
	gbpf_print_ring_unmap(&a->pring);
	pthread_mutex_unlock(&a->pring_lock);
	/* No direct print may write to the descriptor once it is closed (and maybe reused). */
	pthread_mutex_lock(&a->tx_lock);
	atomic_store(&a->direct_ok, 0);
	if (a->fd >= 0)
		close(a->fd);
	a->fd = -1;
	a->tx_rest_len = a->tx_rest_off = 0;
	pthread_mutex_unlock(&a->tx_lock);
	pthread_mutex_lock(&a->lock);
	a->q_len = 0;
	a->q_head = 0;
	a->dropped = 0;
	pthread_mutex_unlock(&a->lock);
	pthread_mutex_lock(&a->tl_lock);
	a->tl_len = 0;
	a->tl_head = 0;
	pthread_mutex_unlock(&a->tl_lock);
}

/* Only our own user (or root) may attach: peer credentials of the connection. */
static int agent_peer_ok(int fd, pid_t *pid, char *why, size_t why_size)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len)) {
		snprintf(why, why_size, "attach refused: no peer credentials: %s", strerror(errno));
		return -EPERM;
	}
	if (cred.uid != geteuid() && cred.uid != 0) {
		snprintf(why, why_size, "attach by pid %d refused: it runs as uid %u, the application as uid %u",
			 (int)cred.pid, (unsigned)cred.uid, (unsigned)geteuid());
		return -EPERM;
	}
	*pid = cred.pid;
	return 0;
}

/*
 * Tell a controller that is not (yet) the session's something on its own
 * socket, bypassing the queue (which belongs to the current session).
 */
static void agent_tell(int fd, uint32_t event, const char *msg)
{
	struct gbpf_agent_buf b = {0};

	if (!gbpf_agent_encode_report(&b, event, 0, "", msg))
		agent_send_frame(fd, GBPF_AGENT_MSG_REPORT, &b);
	gbpf_agent_buf_free(&b);
}

/*
 * Listen mode: a controller connected to our socket. The exchange (hello,
 * JOB, then SETUP or DETACH) happens on the new connection while the
 * current session, if any, goes on running. A DETACH ends it. A SETUP is
 * staged completely (decoded, mapped, verified, interpreters built) before
 * the current session ends, and the new one is attached right after: a hot
 * swap costs the application only the backend's detach and attach, each
 * launch runs the old programs, the new ones or (in between) the original
 * code, never a mix, and a replacement that fails leaves the current
 * programs attached. The replaced controller is told, and prints the maps
 * of its programs as they were at the swap.
 */
void agent_accept(struct agent_state *a)
{
	struct timeval tv = {.tv_sec = AGENT_SETUP_TIMEOUT_S};
	char why[512] = "", ctl[GBPF_AGENT_MAX_STR + 1] = "", msg[640];
	struct agent_staged st;
	void *payload = NULL;
	size_t len = 0;
	uint16_t type = 0;
	pid_t peer = 0;
	int fd, memfd = -1, ringfd = -1, err, replacing;

	fd = accept4(a->listen_fd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0)
		return;
	if (agent_peer_ok(fd, &peer, why, sizeof(why))) {
		/* The current controller (if any) hears of it; the intruder gets nothing. */
		agent_queue(a, GBPF_AGENT_MSG_REPORT, GBPF_AGENT_EVENT_ERROR, NULL, "%s", why);
		close(fd);
		return;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (agent_hello_on(fd)) {
		close(fd);
		return;
	}
	for (;;) {
		err = recv_frame(fd, &type, &payload, &len, &memfd, &ringfd, why, sizeof(why));
		if (err || type != GBPF_AGENT_MSG_JOB)
			break;
		err = gbpf_agent_decode_job(payload, len, ctl, sizeof(ctl), why, sizeof(why));
		free(payload);
		payload = NULL;
		if (err)
			break;
	}
	replacing = a->fd >= 0;
	if (!err && type == GBPF_AGENT_MSG_DETACH) {
		free(payload);
		if (replacing) {
			agent_queue(a, GBPF_AGENT_MSG_REPORT, GBPF_AGENT_EVENT_INFO, NULL,
				    "detached: another gbpf attach or detach took over (gbpf detach, pid %d)",
				    (int)peer);
			agent_sender_flush_now(a);
			agent_session_end(a, "detach");
		}
		close(fd); /* the confirmation: the detach is complete */
		return;
	}
	if (!err && type != GBPF_AGENT_MSG_SETUP) {
		snprintf(why, sizeof(why), "expected a setup message, got %s (type %u)",
			 gbpf_agent_msg_name(type), type);
		free(payload);
		if (memfd >= 0)
			close(memfd);
		if (ringfd >= 0)
			close(ringfd);
		err = -EINVAL;
	}
	if (!err)
		err = agent_stage(a, payload, len, memfd, ringfd, &st, why, sizeof(why));
	if (err) {
		snprintf(msg, sizeof(msg), "%s; %s", why,
			 replacing ? "the programs attached before stay attached"
				   : "the application runs uninstrumented");
		agent_tell(fd, GBPF_AGENT_EVENT_ERROR, msg);
		close(fd);
		return;
	}
	/* Ready: the current session ends (its maps complete at this point), the new one starts. */
	if (replacing) {
		agent_queue(a, GBPF_AGENT_MSG_REPORT, GBPF_AGENT_EVENT_INFO, NULL,
			    "detached: another gbpf attach or detach took over (gbpf attach, pid %d, "
			    "replaces these programs)", (int)peer);
		agent_sender_flush_now(a);
		agent_session_end(a, "replaced");
	}
	a->fd = fd;
	atomic_store(&a->live, 1);
	agent_install(a, &st);
	if (replacing)
		agent_queue(a, GBPF_AGENT_MSG_REPORT, GBPF_AGENT_EVENT_INFO, NULL,
			    "replaces the programs of the previous session from the next launch");
	if (!agent_go(a))
		agent_job_write(a, ctl);
}

/*
 * Start listening on DIR/PID.sock. A stale socket of a former process with
 * our pid is replaced; the directory's owner and mode are checked first.
 */
static int agent_listen_start(struct agent_state *a)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	char why[256], dir[160];
	int fd;

	if (gbpf_agent_sock_dir(dir, sizeof(dir), 1, why, sizeof(why)) ||
	    gbpf_agent_listen_path(getpid(), a->listen_path, sizeof(a->listen_path), why,
				   sizeof(why))) {
		fprintf(stderr, "gbpf agent: pid %d: not listening: %s\n", (int)getpid(), why);
		return -EPERM;
	}
	memcpy(sa.sun_path, a->listen_path, strlen(a->listen_path) + 1);
	unlink(a->listen_path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || chmod(a->listen_path, 0600) ||
	    listen(fd, 8)) {
		fprintf(stderr, "gbpf agent: pid %d: not listening on %s: %s\n", (int)getpid(),
			a->listen_path, strerror(errno));
		if (fd >= 0)
			close(fd);
		a->listen_path[0] = 0;
		return -errno;
	}
	a->listen_fd = fd;
	return 0;
}

/*
 * The backend named by GBPF_AGENT_BACKEND (or GBPF_BACKEND) is opened at
 * start and attached with no program, then detached: its interposers then
 * record what the app loads from the start (modules, programs, kernel
 * arguments), which a later attach needs to instrument kernels created
 * before it. Launches cost them one atomic load while detached.
 */
static void agent_prime_backend(struct agent_state *a)
{
	const char *name = getenv(GBPF_AGENT_ENV_BACKEND);
	const char *path = getenv(GBPF_AGENT_ENV_BACKEND_PATH);
	char why[512] = "", log[256] = "";

	if (!name || !name[0])
		name = getenv("GBPF_BACKEND");
	if (!name || !name[0])
		return;
	if (agent_open_backend(a, name, path, why, sizeof(why))) {
		fprintf(stderr, "gbpf agent: pid %d: backend %s: %s\n", (int)getpid(), name, why);
		return;
	}
	a->services = (struct gbpf_agent_services){
		.sz = sizeof(a->services),
		.ctx = a,
		.report = agent_report_cb,
		.run_host_prog = agent_run_host_prog,
		.next_launch_id = agent_next_launch_id,
		.kernel_selected = agent_kernel_selected,
		.timeline = agent_timeline,
		.print = agent_print,
	};
	struct gbpf_agent_attach_opts opts = {
		.sz = sizeof(opts),
		.services = &a->services,
	};
	if (!a->ops->agent_attach(a->backend, &opts, log, sizeof(log)) && a->ops->agent_detach)
		a->ops->agent_detach(a->backend);
}

/* A child of an attached process joins its parent's controller (DIR/PPID.job). */
static void agent_join_parent_job(struct agent_state *a)
{
	char path[128], why[256], ctl[160];
	FILE *f;

	if (gbpf_agent_job_path(getppid(), path, sizeof(path), why, sizeof(why)))
		return;
	f = fopen(path, "re");
	if (!f)
		return;
	if (!fgets(ctl, sizeof(ctl), f)) {
		fclose(f);
		return;
	}
	fclose(f);
	ctl[strcspn(ctl, "\n")] = 0;
	if (agent_connect(a, ctl))
		return;
	atomic_store(&a->live, 1);
	if (agent_hello(a)) {
		agent_session_end(a, "hello failed");
		return;
	}
	agent_setup(a);
	if (atomic_load(&a->attached))
		agent_job_write(a, ctl);
}

static void agent_atfork_prepare(void)
{
	pthread_mutex_lock(&gbpf_agent_state.lock);
	pthread_mutex_lock(&gbpf_agent_state.tl_lock);
}

static void agent_atfork_parent(void)
{
	pthread_mutex_unlock(&gbpf_agent_state.tl_lock);
	pthread_mutex_unlock(&gbpf_agent_state.lock);
}

/*
 * A child forked without exec keeps the parent's mappings (so its probes
 * still count into the shared maps) but not the sender thread, and shares
 * the parent's connection: writing to it would interleave frames. It stays
 * silent instead; an exec'd child connects afresh from the constructor.
 */
static void agent_atfork_child(void)
{
	struct agent_state *a = &gbpf_agent_state;

	pthread_mutex_unlock(&a->tl_lock);
	pthread_mutex_unlock(&a->lock);
	/* tx_lock is not taken at fork (the sender may hold it for a slow send): the child never uses it. */
	atomic_store(&a->forked, 1);
	atomic_store(&a->direct_ok, 0);
	a->sender_started = 0;
	if (a->fd >= 0)
		close(a->fd);
	if (a->wake_fd >= 0)
		close(a->wake_fd);
	a->fd = -1;
	a->wake_fd = -1;
	/* The parent's socket stays the parent's: a fork child is not attachable. */
	if (a->listen_fd >= 0)
		close(a->listen_fd);
	a->listen_fd = -1;
	a->job_path[0] = 0;
	atomic_store(&a->live, 0);
}

__attribute__((constructor)) static void gbpf_agent_init(void)
{
	struct agent_state *a = &gbpf_agent_state;
	const char *path = getenv(GBPF_AGENT_ENV_SOCK);
	const char *listen_env = getenv(GBPF_AGENT_ENV_LISTEN);
	const char *direct = getenv("GBPF_AGENT_PRINT_DIRECT");

	/* "0": every print line goes through the sender thread (bench/agent compares both). */
	a->print_direct = !(direct && !strcmp(direct, "0"));

	if (listen_env && !strcmp(listen_env, "1") && (!path || !path[0])) {
		const char *idle = getenv(GBPF_AGENT_ENV_IDLE_FLAGS);
		char *end = NULL;
		unsigned long fl = idle && idle[0] ? strtoul(idle, &end, 0) : 0;

		/* Idle: nothing happens per launch until a controller attaches. */
		gbpf_set_print(agent_lib_print);
		if (idle && idle[0] && (*end || (fl & ~(unsigned long)GBPF_AGENT_F_KNOWN) ||
					((fl & GBPF_AGENT_F_ENGINE_PTX) && (fl & GBPF_AGENT_F_ENGINE_SANITIZER)))) {
			fprintf(stderr, "gbpf agent: pid %d: %s=%s: not a set of start options; "
					"none applied\n", (int)getpid(), GBPF_AGENT_ENV_IDLE_FLAGS, idle);
			fl = 0;
		}
		a->idle_flags = (uint32_t)fl;
		a->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (a->wake_fd < 0 || agent_listen_start(a))
			return;
		pthread_atfork(agent_atfork_prepare, agent_atfork_parent, agent_atfork_child);
		agent_prime_backend(a);
		agent_join_parent_job(a);
		if (agent_sender_start(a)) {
			if (a->fd >= 0)
				agent_session_end(a, "no thread");
			close(a->listen_fd);
			unlink(a->listen_path);
			a->listen_fd = -1;
		}
		return;
	}
	if (!path || !path[0])
		return;
	gbpf_set_print(agent_lib_print);
	if (agent_connect(a, path))
		return; /* no controller (killed, or never there): nothing to report to */
	atomic_store(&a->live, 1);
	a->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (a->wake_fd < 0 || agent_hello(a)) {
		atomic_store(&a->live, 0);
		close(a->fd);
		a->fd = -1;
		return;
	}
	pthread_atfork(agent_atfork_prepare, agent_atfork_parent, agent_atfork_child);
	agent_setup(a);
	/* The sender owns the socket from here on (after setup: no competing reads). */
	if (agent_sender_start(a)) {
		atomic_store(&a->live, 0);
		close(a->fd);
		a->fd = -1;
	}
}

__attribute__((destructor)) static void gbpf_agent_fini(void)
{
	/* Deliver what the app's last moments reported; bounded, never a hang. */
	agent_sender_flush(&gbpf_agent_state, 200);
	/* The socket file goes with the process (a fork child's listen_fd is -1). */
	if (gbpf_agent_state.listen_fd >= 0 && gbpf_agent_state.listen_path[0])
		unlink(gbpf_agent_state.listen_path);
	if (gbpf_agent_state.job_path[0])
		unlink(gbpf_agent_state.job_path);
}
