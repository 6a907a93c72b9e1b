/* SPDX-License-Identifier: MIT */
/*
 * gbpf attach [-i SECONDS] [-c COUNT] [-j] [--per-process] [--allow-app-writes]
 *             [--engine ptx|sanitizer|auto] PID... OBJ...
 * gbpf detach PID...
 *
 * Attach: the controller of `gbpf run`, without a child. It connects to
 * the idle agent of every PID (and of their descendants that have one:
 * `gbpf run --idle`, or GBPF_AGENT_LISTEN=1), checks that the socket
 * belongs to that process and to our user, sends the verified programs and
 * the maps, and serves the agents until they are all gone or a signal
 * asks it to stop; it then detaches them (DETACH), waits for each to
 * confirm by closing, and prints the maps. Children the attached processes
 * start join through the controller's own socket (the JOB message).
 *
 * Detach: tells each PID's agent to end its session; the controller that
 * was attached sees it leave and prints its final maps.
 * docs/PROCESS_MODEL.md ("Attach to a running process") has the sequence.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "run_internal.h"

/* Agents have this long to confirm a detach (their last device copies included). */
#define ATTACH_DETACH_WAIT_MS 5000
/* Longest ancestor chain followed when looking for descendants. */
#define ATTACH_MAX_DEPTH 64
/* Most processes read from /proc when looking for descendants. */
#define ATTACH_MAX_PROCS 65536

static volatile sig_atomic_t attach_stop_sig;

static void on_stop(int sig)
{
	attach_stop_sig = sig;
}

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	return true;
}

/*
 * Connect to the idle agent of @p pid. The peer credentials must name
 * that very process (a socket file is only a name) and our user (root may
 * attach to anyone's). Returns the socket, or -errno with the reason printed.
 */
static int agent_dial(const char *who, pid_t pid, bool quiet)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct timeval tv = {.tv_sec = 10};
	struct ucred cred;
	socklen_t len = sizeof(cred);
	char path[128], why[256];
	int fd, err;

	err = gbpf_agent_listen_path(pid, path, sizeof(path), why, sizeof(why));
	if (err) {
		if (!quiet)
			fprintf(stderr, "gbpf %s: pid %d: %s\n", who, (int)pid, why);
		return err;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		err = -errno;
		if (!quiet)
			fprintf(stderr,
				"gbpf %s: pid %d: no idle agent at %s (%s); start the application with "
				"`gbpf run --idle -- CMD`, or with LD_PRELOAD=libgbpf-agent.so and "
				"GBPF_AGENT_LISTEN=1\n",
				who, (int)pid, path, strerror(errno));
		close(fd);
		return err;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len)) {
		err = -errno;
		fprintf(stderr, "gbpf %s: pid %d: %s: no peer credentials: %s\n", who, (int)pid, path,
			strerror(errno));
		close(fd);
		return err;
	}
	if (cred.pid != pid) {
		fprintf(stderr, "gbpf %s: pid %d: %s belongs to pid %d, not to %d: refused\n", who,
			(int)pid, path, (int)cred.pid, (int)pid);
		close(fd);
		return -EPERM;
	}
	if (cred.uid != getuid() && getuid() != 0) {
		fprintf(stderr, "gbpf %s: pid %d runs as uid %u, gbpf as uid %u: refused\n", who,
			(int)pid, (unsigned)cred.uid, (unsigned)getuid());
		close(fd);
		return -EPERM;
	}
	return fd;
}

/* Parent pid of @p pid from /proc/PID/stat, or -1. */
static pid_t parent_of(pid_t pid)
{
	char path[64], buf[512], *p;
	FILE *f;
	int ppid = -1;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	if (!fgets(buf, sizeof(buf), f)) {
		fclose(f);
		return -1;
	}
	fclose(f);
	/* The command name may hold spaces and parentheses: the fields follow the last ')'. */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %*c %d", &ppid) != 1)
		return -1;
	return (pid_t)ppid;
}

static bool is_target(pid_t pid, pid_t *targets, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (targets[i] == pid)
			return true;
	return false;
}

static bool connected(struct run_ctx *ctx, pid_t pid)
{
	size_t i;

	for (i = 0; i < ctx->agent_cnt; i++)
		if (ctx->agents[i].pid == pid)
			return true;
	return false;
}

/* Descendants of the targets that have an idle agent: a job's worker processes. */
static void attach_descendants(struct run_ctx *ctx, pid_t *targets, size_t n)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	size_t seen = 0;

	if (!d)
		return;
	while ((e = readdir(d)) && seen++ < ATTACH_MAX_PROCS) {
		pid_t pid, up;
		int depth;
		int fd;

		if (!all_digits(e->d_name))
			continue;
		pid = (pid_t)atoi(e->d_name);
		if (is_target(pid, targets, n) || connected(ctx, pid))
			continue;
		for (up = parent_of(pid), depth = 0; up > 1 && depth < ATTACH_MAX_DEPTH;
		     up = parent_of(up), depth++)
			if (is_target(up, targets, n))
				break;
		if (up <= 1 || depth == ATTACH_MAX_DEPTH)
			continue;
		fd = agent_dial(ctx->who, pid, true);
		if (fd >= 0 && run_add_agent(ctx, fd, pid, true))
			close(fd);
	}
	closedir(d);
}

static int attach_usage(void)
{
	fprintf(stderr,
		"Usage: %s attach [OPTIONS] PID... OBJ...\n"
		"  Attach the programs of OBJ... to running processes started with\n"
		"  `gbpf run --idle` (or LD_PRELOAD=libgbpf-agent.so GBPF_AGENT_LISTEN=1),\n"
		"  and to their descendants that have an agent. Ctrl-C (or `gbpf detach PID`)\n"
		"  detaches: kernels launch their original code again. Attaching again\n"
		"  replaces the programs.\n"
		"  -i SECONDS     print maps every SECONDS\n"
		"  -c COUNT       print at most COUNT intervals\n"
		"  -j, --json     one JSON object per line\n"
		"  --backend B    backend (default: the one the agent started with, else detection)\n"
		"  --per-process  each process counts into its own maps: the sum is printed, then\n"
		"                 every process's own\n"
		"  --allow-app-writes  let gpu/mem probes replace the value the application stores\n"
		"  --engine E     cuda: ptx, sanitizer or auto (default)\n",
		cli.argv0);
	return -1;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Ask every agent to detach and wait until each has closed (or the time is up). */
static void detach_all(struct run_ctx *ctx)
{
	struct gbpf_agent_frame f;
	double end;
	size_t i;

	gbpf_agent_frame_init(&f, GBPF_AGENT_MSG_DETACH, 0);
	for (i = 0; i < ctx->agent_cnt; i++)
		if (send(ctx->agents[i].fd, &f, sizeof(f), MSG_NOSIGNAL | MSG_DONTWAIT) < 0 &&
		    errno != EAGAIN)
			shutdown(ctx->agents[i].fd, SHUT_WR);
	end = now_s() + ATTACH_DETACH_WAIT_MS / 1e3;
	while (ctx->agent_cnt && now_s() < end) {
		run_serve_agents(ctx, 5);
		run_drain_rings(ctx);
	}
	for (i = 0; i < ctx->agent_cnt; i++)
		fprintf(stderr, "gbpf %s: pid %d: did not confirm the detach within %d ms\n", ctx->who,
			(int)ctx->agents[i].pid, ATTACH_DETACH_WAIT_MS);
}

static int attach_loop(struct run_ctx *ctx)
{
	struct sigaction sa = {.sa_handler = on_stop};
	double next = ctx->interval_s > 0 ? now_s() + ctx->interval_s : 0;
	long intervals = 0;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (!cli.json)
		fprintf(stderr, "gbpf attach: %zu program(s) on backend %s; %zu process(es)\n",
			ctx->prog_cnt, ctx->backend_name ? ctx->backend_name : "(the agent's)",
			ctx->agent_cnt);
	/* Every agent gone (detached elsewhere, exited) ends the session as a signal does. */
	while (ctx->agent_cnt && !attach_stop_sig) {
		run_serve_agents(ctx, 1);
		run_drain_rings(ctx);
		if (next && now_s() >= next && (ctx->count < 0 || intervals < ctx->count)) {
			run_print_maps(ctx, true);
			intervals++;
			next += ctx->interval_s;
		}
	}
	if (ctx->agent_cnt) {
		if (!cli.json)
			fprintf(stderr, "gbpf attach: detaching from %zu process(es)\n", ctx->agent_cnt);
		detach_all(ctx);
	}
	run_drain_rings(ctx);
	run_print_maps(ctx, false);
	return 0;
}

int cmd_attach(int argc, char **argv)
{
	static const struct option opts[] = {
		{"interval", required_argument, NULL, 'i'},
		{"count", required_argument, NULL, 'c'},
		{"backend", required_argument, NULL, 'b'},
		{"json", no_argument, NULL, 'j'},
		{"per-process", no_argument, NULL, 'P'},
		{"allow-app-writes", no_argument, NULL, 'W'},
		{"engine", required_argument, NULL, 'G'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	static struct run_ctx ctx; /* large (agent table): not on the stack */
	static pid_t targets[RUN_MAX_AGENTS];
	char *objs[256];
	size_t ntarget = 0, nobj = 0, i;
	int opt, ret = -1;

	memset(&ctx, 0, sizeof(ctx));
	ctx.who = "attach";
	ctx.attach_mode = true;
	gbpf_tl_init(&ctx.tl, 0);
	ctx.listen_fd = -1;
	ctx.shm.fd = -1;
	ctx.count = -1;
	ctx.no_summary = true;
	while ((opt = getopt_long(argc, argv, "+i:c:b:j", opts, NULL)) >= 0) {
		int shared = run_shared_option(&ctx, opt, optarg);

		if (shared < 0)
			return -1;
		if (shared)
			continue;
		switch (opt) {
		case 'P': ctx.per_process = true; break;
		case 'h': attach_usage(); return 0;
		default: return attach_usage();
		}
	}
	for (i = (size_t)optind; i < (size_t)argc; i++) {
		if (all_digits(argv[i])) {
			long v = strtol(argv[i], NULL, 10);

			if (v <= 0 || v > 0x7fffffff || ntarget == RUN_MAX_AGENTS)
				return cli_error("%s: not a process id (or more than %d)", argv[i],
						 RUN_MAX_AGENTS);
			targets[ntarget++] = (pid_t)v;
		} else if (nobj < sizeof(objs) / sizeof(objs[0])) {
			objs[nobj++] = argv[i];
		} else {
			return cli_error("more than %zu objects", sizeof(objs) / sizeof(objs[0]));
		}
	}
	if (!ntarget || !nobj)
		return attach_usage();
	if (run_open_objects(&ctx, objs, nobj) || run_verify_programs(&ctx))
		goto out;
	run_choose_backend(&ctx);
	if (run_build_region(&ctx) || run_make_socket(&ctx))
		goto out;
	for (i = 0; i < ntarget; i++) {
		int fd = agent_dial(ctx.who, targets[i], false);

		if (fd < 0)
			continue;
		if (run_add_agent(&ctx, fd, targets[i], true))
			close(fd);
	}
	if (!ctx.agent_cnt) {
		cli_error("no process to attach to");
		goto out;
	}
	attach_descendants(&ctx, targets, ntarget);
	ret = attach_loop(&ctx);
out:
	run_cleanup(&ctx);
	return ret;
}

/* Read one frame header and skip its payload (the agent's HELLO). */
static int skip_frame(int fd, char *why, size_t why_size)
{
	struct gbpf_agent_frame f;
	char junk[4096];
	size_t left;
	ssize_t r = recv(fd, &f, sizeof(f), MSG_WAITALL);

	if (r != (ssize_t)sizeof(f)) {
		snprintf(why, why_size, "no hello from the agent (%s)",
			 r < 0 ? strerror(errno) : "connection closed");
		return -EIO;
	}
	if (gbpf_agent_frame_check(&f, why, why_size))
		return -EINVAL;
	if (f.type != GBPF_AGENT_MSG_HELLO || f.len > RUN_AGENT_MAX_PAYLOAD) {
		snprintf(why, why_size, "expected a hello from the agent, got %s (type %u, %u bytes)",
			 gbpf_agent_msg_name(f.type), f.type, f.len);
		return -EINVAL;
	}
	for (left = f.len; left;) {
		r = recv(fd, junk, left < sizeof(junk) ? left : sizeof(junk), 0);
		if (r <= 0) {
			snprintf(why, why_size, "hello cut short");
			return -EIO;
		}
		left -= (size_t)r;
	}
	return 0;
}

int cmd_detach(int argc, char **argv)
{
	int i, failed = 0;

	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		fprintf(stderr,
			"Usage: %s detach PID...\n"
			"  End the gbpf attach session of each process: its kernels launch their\n"
			"  original code again; the attached gbpf prints its last maps and exits.\n",
			cli.argv0);
		return argc < 2 ? -1 : 0;
	}
	for (i = 1; i < argc; i++) {
		struct gbpf_agent_frame f;
		struct pollfd pf;
		char why[256] = "", c;
		pid_t pid;
		int fd;

		if (!all_digits(argv[i]) || atol(argv[i]) <= 0) {
			fprintf(stderr, "gbpf detach: %s: not a process id\n", argv[i]);
			failed = 1;
			continue;
		}
		pid = (pid_t)atol(argv[i]);
		fd = agent_dial("detach", pid, false);
		if (fd < 0) {
			failed = 1;
			continue;
		}
		gbpf_agent_frame_init(&f, GBPF_AGENT_MSG_DETACH, 0);
		if (skip_frame(fd, why, sizeof(why)) ||
		    send(fd, &f, sizeof(f), MSG_NOSIGNAL) != (ssize_t)sizeof(f)) {
			fprintf(stderr, "gbpf detach: pid %d: %s\n", (int)pid,
				why[0] ? why : strerror(errno));
			close(fd);
			failed = 1;
			continue;
		}
		/* The agent closes once its session is over: that is the confirmation. */
		pf = (struct pollfd){.fd = fd, .events = POLLIN};
		if (poll(&pf, 1, 10000) <= 0 || recv(fd, &c, 1, 0) != 0) {
			fprintf(stderr, "gbpf detach: pid %d: no confirmation within 10 s\n", (int)pid);
			failed = 1;
		} else if (!cli.json) {
			fprintf(stderr, "gbpf detach: pid %d: detached\n", (int)pid);
		}
		close(fd);
	}
	return failed ? 1 : 0;
}
