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
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <gbpf/backend.h>
#include <gbpf/object.h>
#include <gbpf/verifier.h>

#include "core/agent/agent_internal.h"

struct agent_state gbpf_agent_state = {
	.fd = -1,
	.wake_fd = -1,
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.tl_lock = PTHREAD_MUTEX_INITIALIZER,
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
 * Receive the SETUP frame header together with the memfd (SCM_RIGHTS),
 * then its payload. Any other descriptor that arrives is closed.
 */
static int recv_setup(int fd, void **payload, size_t *len, int *memfd, char *why, size_t why_size)
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
	if (!err && f.type != GBPF_AGENT_MSG_SETUP) {
		snprintf(why, why_size, "expected a setup message, got type %u", f.type);
		err = -EINVAL;
	}
	if (mh.msg_flags & MSG_CTRUNC) {
		snprintf(why, why_size, "setup: too many descriptors attached");
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
			if (*memfd < 0 && !err)
				*memfd = fds[i];
			else
				close(fds[i]);
		}
	}
	if (err)
		goto fail;
	if (*memfd < 0) {
		snprintf(why, why_size, "setup: no map memory descriptor attached");
		err = -EINVAL;
		goto fail;
	}
	*payload = malloc(f.len ? f.len : 1);
	if (!*payload) {
		snprintf(why, why_size, "setup: no memory for %u bytes", f.len);
		err = -ENOMEM;
		goto fail;
	}
	err = read_all(fd, *payload, f.len);
	if (err) {
		snprintf(why, why_size, "setup: payload of %u bytes cut short: %s", f.len,
			 strerror(-err));
		goto fail;
	}
	*len = f.len;
	return 0;
fail:
	free(*payload);
	*payload = NULL;
	if (*memfd >= 0)
		close(*memfd);
	*memfd = -1;
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

static int agent_hello(struct agent_state *a)
{
	struct gbpf_agent_buf b = {0};
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	int err;

	exe[n > 0 ? n : 0] = 0;
	err = gbpf_agent_encode_hello(&b, (uint32_t)getpid(), (uint32_t)getppid(), exe);
	if (!err)
		err = agent_send_frame(a->fd, GBPF_AGENT_MSG_HELLO, &b);
	gbpf_agent_buf_free(&b);
	return err;
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

/* Defence in depth: the controller verified the programs; so do we, before running any. */
static int agent_verify_all(struct agent_state *a, char *why, size_t why_size)
{
	size_t i;

	for (i = 0; i < a->setup.prog_cnt; i++) {
		const struct gbpf_prog_desc *p = &a->setup.progs[i];
		struct gbpf_verify_result res = {.sz = sizeof(res)};
		GBPF_OPTS(gbpf_verify_opts, opts, .log_level = GBPF_VERIFY_LOG_ERROR);
		int err = gbpf_verify(p, &opts, &res);

		if (err || res.verdict != GBPF_VERDICT_ACCEPT) {
			snprintf(why, why_size, "%s: program '%s': verifier: instruction %lld: %s",
				 p->source_file ? p->source_file : "?", p->name,
				 (long long)res.error_insn, res.reason[0] ? res.reason : "rejected");
			return err ? err : -GBPF_ERRNO__VERIFY;
		}
	}
	return 0;
}

static int agent_open_backend(struct agent_state *a, char *why, size_t why_size)
{
	const char *name = a->setup.backend;
	struct gbpf_plugin *plugin;
	GBPF_OPTS(gbpf_registry_opts, ropts, .plugin_path = NULL);
	int err;

	/* The file the controller chose (and preloaded), else the usual search. */
	if (a->setup.backend_path[0]) {
		ropts.plugin_path = a->setup.backend_path;
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
	static struct gbpf_host_services host_services;

	host_services.sz = sizeof(host_services);
	host_services.vlog = agent_vlog;
	host_services.log_ctx = a;
	struct gbpf_backend_open_opts oopts = {
		.sz = sizeof(oopts),
		.services = &host_services,
		.device_index = -1,
	};
	err = a->ops->open(&oopts, &a->backend);
	if (err) {
		snprintf(why, why_size, "backend '%s' failed to open: %s", name, strerror(-err));
		a->backend = NULL;
		a->ops = NULL;
	}
	return err;
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
	};
	/* Host programs must be runnable before the first interposed call. */
	atomic_store(&a->attached, 1);
	err = a->ops->agent_attach(a->backend, &opts, log, sizeof(log));
	if (err) {
		atomic_store(&a->attached, 0);
		snprintf(why, why_size, "backend '%s': agent_attach failed: %s%s%s",
			 a->setup.backend, strerror(err < 0 ? -err : err), log[0] ? ": " : "", log);
	}
	return err;
}

static void agent_setup(struct agent_state *a)
{
	char why[512] = "";
	void *payload = NULL;
	size_t len = 0;
	int memfd = -1, err;

	err = recv_setup(a->fd, &payload, &len, &memfd, why, sizeof(why));
	if (err)
		goto fail;
	err = gbpf_agent_decode_setup(payload, len, &a->setup, why, sizeof(why));
	free(payload);
	if (err) {
		close(memfd);
		goto fail;
	}
	err = gbpf_shm_attach(&a->shm, memfd, a->setup.maps, a->setup.map_cnt, why, sizeof(why));
	if (err)
		goto fail;
	if (!a->setup.backend[0]) {
		agent_queue(a, GBPF_AGENT_MSG_REPORT, GBPF_AGENT_EVENT_INFO, NULL,
			    "no backend chosen: the application runs uninstrumented");
		return;
	}
	if (!a->setup.prog_cnt) {
		agent_queue(a, GBPF_AGENT_MSG_REPORT, GBPF_AGENT_EVENT_INFO, NULL,
			    "no programs to attach: the application runs uninstrumented");
		return;
	}
	err = agent_verify_all(a, why, sizeof(why));
	if (!err)
		err = agent_host_progs_prepare(a, why, sizeof(why));
	if (!err)
		err = agent_open_backend(a, why, sizeof(why));
	if (!err)
		err = agent_attach(a, why, sizeof(why));
	if (err)
		goto fail;
	agent_queue(a, GBPF_AGENT_MSG_REPORT, GBPF_AGENT_EVENT_INFO, NULL,
		    "attached %zu program(s), %zu map(s) on backend '%s'", a->setup.prog_cnt,
		    a->shm.map_cnt, a->setup.backend);
	return;
fail:
	agent_queue(a, GBPF_AGENT_MSG_REPORT, GBPF_AGENT_EVENT_ERROR, NULL,
		    "%s; the application runs uninstrumented", why);
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
	atomic_store(&a->forked, 1);
	a->sender_started = 0;
	if (a->fd >= 0)
		close(a->fd);
	if (a->wake_fd >= 0)
		close(a->wake_fd);
	a->fd = -1;
	a->wake_fd = -1;
}

__attribute__((constructor)) static void gbpf_agent_init(void)
{
	struct agent_state *a = &gbpf_agent_state;
	const char *path = getenv(GBPF_AGENT_ENV_SOCK);

	if (!path || !path[0])
		return;
	gbpf_set_print(agent_lib_print);
	if (agent_connect(a, path))
		return; /* no controller (killed, or never there): nothing to report to */
	a->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (a->wake_fd < 0 || agent_hello(a)) {
		close(a->fd);
		a->fd = -1;
		return;
	}
	pthread_atfork(agent_atfork_prepare, agent_atfork_parent, agent_atfork_child);
	agent_setup(a);
	/* The sender owns the socket from here on (after setup: no competing reads). */
	if (agent_sender_start(a)) {
		close(a->fd);
		a->fd = -1;
	}
}

__attribute__((destructor)) static void gbpf_agent_fini(void)
{
	/* Deliver what the app's last moments reported; bounded, never a hang. */
	agent_sender_flush(&gbpf_agent_state, 200);
}
