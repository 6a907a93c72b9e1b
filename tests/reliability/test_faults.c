/* SPDX-License-Identifier: MIT */
/*
 * tests/reliability/test_faults.c - faults injected into `gbpf run` on the
 * test backend (tests/agent: libgbpf-hosttest.so, launch_app), none of
 * which is CUDA-specific. For each: the application finishes with the
 * output it has without gbpf, and the user is told what was lost.
 *   - ring buffer full: lost count exact (= outputs the probe saw refused);
 *   - controller killed (SIGKILL) mid-run, and killed while blocked on a
 *     full stdout pipe (the application's lines come out whole);
 *   - controller slow (SIGSTOP for 2 s mid-run): the application is not
 *     held up beyond a measured bound, and nothing is miscounted after;
 *   - a probe over the verifier's complexity bound;
 *   - a local process sending malformed messages to the control socket,
 *     and the socket's permissions;
 *   - a memory probe that writes application memory (no option of
 *     `gbpf run` allows it): rejected by the controller, others still run.
 * argv: GBPF APP PLUGIN COUNT_OBJ FLOOD_OBJ COMPLEX_OBJ SEC_APP [WRITE_OBJ]
 */
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "rel_util.h"
#include "tap.h"

static const char *gbpf, *app, *count_obj, *flood_obj, *complex_obj, *sec_app, *write_obj;

/* Slack allowed between the app alone and the app under a stopped controller. */
#define SLOW_BOUND_MS 1000.0

static void test_ring_full(void)
{
	char *base_argv[] = {(char *)app, "40", "2", "0", "0", "plain", NULL};
	char *argv[] = {(char *)gbpf, "-j", "run", "--backend", "hosttest", (char *)flood_obj, "--",
			(char *)app, "40", "2", "0", "0", "plain", NULL};
	struct ru_out base, r;
	char *lines;
	size_t events;
	unsigned long lost;
	long ok, full;

	ru_run(base_argv, NULL, NULL, 0, NULL, 30000, &base);
	ru_run(argv, NULL, NULL, 0, NULL, 60000, &r);
	lines = ru_app_lines(r.o);
	events = ru_count(r.o, "\"type\":\"event\",\"map\":\"flood\"");
	lost = ru_lost(r.o, "flood");
	ok = ru_map_value(r.o, "outputs", "ok");
	full = ru_map_value(r.o, "outputs", "full");
	tap_ok(ru_exit_code(r.status) == 0 && lines && !strcmp(lines, base.o),
	       "ring full: app output and status unchanged (status %d)", ru_exit_code(r.status));
	tap_ok(lost > 0 && (long)lost == full,
	       "ring full: lost count reported exactly: %lu lost == %ld outputs the probe saw refused",
	       lost, full);
	tap_ok((long)events == ok && events + lost == 80 * 64,
	       "ring full: %zu records printed == %ld accepted; + lost == %d outputs", events, ok,
	       80 * 64);
	ru_diag_app_differs(base.o, lines, r.o);
	if (tap_failed)
		ru_diag("stderr", r.e, 20);
	free(lines);
	ru_free(&base);
	ru_free(&r);
}

static void test_killed(void)
{
	char *base_argv[] = {(char *)app, "150", "2", "4", "2000", "plain", NULL};
	char *argv[] = {(char *)gbpf, "-j", "run", "--backend", "hosttest", (char *)flood_obj,
			(char *)count_obj, "--", (char *)app, "150", "2", "4", "2000", "plain", NULL};
	struct ru_signal sig[] = {{SIGKILL, 50, "attached"}};
	struct ru_out base, r;
	char *lines;
	int st;

	ru_run(base_argv, NULL, NULL, 0, "done\n", 30000, &base);
	ru_run(argv, NULL, sig, 1, "done\n", 30000, &r);
	st = ru_reap_orphans();
	lines = ru_app_lines(r.o);
	tap_ok(WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGKILL,
	       "controller killed: SIGKILL reached the controller mid-run");
	tap_ok(lines && !strcmp(lines, base.o), "controller killed: app output identical");
	tap_ok(st >= 0 && ru_exit_code(st) == 4, "controller killed: app exits with its own status 4 (%d)",
	       st >= 0 ? ru_exit_code(st) : -1);
	tap_ok(r.marker_ms >= 0 && r.marker_ms <= base.marker_ms + SLOW_BOUND_MS,
	       "controller killed: app finished in %.0f ms (alone %.0f ms, bound +%.0f ms)",
	       r.marker_ms, base.marker_ms, SLOW_BOUND_MS);
	ru_diag_app_differs(base.o, lines, r.o);
	if (tap_failed)
		ru_diag("stderr", r.e, 20);
	free(lines);
	ru_free(&base);
	ru_free(&r);
}

/* JSON lines of @p text that were cut: they start with '{' and do not end with '}'. */
static size_t cut_json_lines(const char *text)
{
	size_t n = 0;

	for (const char *l = text; *l;) {
		const char *nl = strchr(l, '\n');
		size_t len = nl ? (size_t)(nl - l) : strlen(l);

		n += l[0] == '{' && l[len - 1] != '}';
		l += len + (nl ? 1 : 0);
	}
	return n;
}

/*
 * The controller SIGKILLed while blocked writing to its stdout pipe, which
 * the application shares: what a reader that lags (a loaded machine)
 * makes happen by chance, made certain here with a one-page pipe nobody
 * reads until the controller is dead. The application's lines must come
 * out whole, not glued to half a record line (the way test_killed can
 * fail on a loaded machine: `{"type":"event","map"thread 0: sum ...`).
 */
static void test_killed_full_pipe(void)
{
	char *base_argv[] = {(char *)app, "150", "2", "4", "2000", "plain", NULL};
	char *argv[] = {(char *)gbpf, "-j", "run", "--backend", "hosttest", (char *)flood_obj,
			(char *)count_obj, "--", (char *)app, "150", "2", "4", "2000", "plain", NULL};
	struct ru_out base, r = {0};
	int po[2], pe[2], queued = 0, st, open_fds = 2;
	char *lines = NULL, buf[4096];
	double start;
	bool killed = false;
	pid_t pid;

	ru_run(base_argv, NULL, NULL, 0, "done\n", 30000, &base);
	r.o = calloc(1, 1);
	r.e = calloc(1, 1);
	if (!r.o || !r.e || pipe(po) || pipe(pe)) {
		tap_ok(0, "controller killed on a full pipe: set up");
		return;
	}
	/* one page: the controller blocks on it at once */
	fcntl(po[1], F_SETPIPE_SZ, 4096);
	pid = fork();
	if (pid == 0) {
		dup2(po[1], 1);
		dup2(pe[1], 2);
		close(po[0]);
		close(pe[0]);
		execv(argv[0], argv);
		_exit(127);
	}
	close(po[1]);
	close(pe[1]);
	start = ru_now_ms();
	/* stderr only, until the stdout pipe holds records */
	while (!killed && ru_now_ms() - start < 30000) {
		struct pollfd pf = {.fd = pe[0], .events = POLLIN};
		ssize_t n;

		if (poll(&pf, 1, 5) > 0 && (n = read(pe[0], buf, sizeof(buf))) > 0)
			ru_append(&r.e, &r.en, buf, (size_t)n);
		/* records on stdout: the probes are attached (the controller may be too blocked to say so) */
		if (ioctl(po[0], FIONREAD, &queued) == 0 && queued >= 2048) {
			/* the controller had more records than the pipe holds: it is blocked writing */
			usleep(100000);
			kill(pid, SIGKILL);
			killed = true;
		}
	}
	if (!killed)
		kill(pid, SIGKILL);
	waitpid(pid, &r.status, 0);
	/* now read all: the application (orphaned, still running) writes to both pipes until it exits */
	start = ru_now_ms();
	while (open_fds && ru_now_ms() - start < 30000) {
		struct pollfd pf[2] = {{.fd = po[0], .events = POLLIN}, {.fd = pe[0], .events = POLLIN}};

		if (poll(pf, 2, 50) <= 0)
			continue;
		for (int i = 0; i < 2; i++) {
			ssize_t n;

			if (pf[i].fd < 0 || !pf[i].revents)
				continue;
			n = read(pf[i].fd, buf, sizeof(buf));
			if (n <= 0) {
				close(pf[i].fd);
				*(i ? &pe[0] : &po[0]) = -1;
				open_fds--;
			} else if (i == 0) {
				ru_append(&r.o, &r.on, buf, (size_t)n);
			} else {
				ru_append(&r.e, &r.en, buf, (size_t)n);
			}
		}
	}
	for (int i = 0; i < 2; i++)
		if ((i ? pe[0] : po[0]) >= 0)
			close(i ? pe[0] : po[0]);
	st = ru_reap_orphans();
	lines = ru_app_lines(r.o);
	tap_ok(killed && WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGKILL,
	       "controller killed on a full pipe: SIGKILL while %d bytes of records waited in its stdout pipe",
	       queued);
	tap_ok(lines && !strcmp(lines, base.o) && cut_json_lines(r.o) == 0,
	       "controller killed on a full pipe: app output identical, no record line cut (%zu cut)",
	       cut_json_lines(r.o));
	tap_ok(st >= 0 && ru_exit_code(st) == 4,
	       "controller killed on a full pipe: app exits with its own status 4 (%d)",
	       st >= 0 ? ru_exit_code(st) : -1);
	ru_diag_app_differs(base.o, lines, r.o);
	if (tap_failed)
		ru_diag("stderr", r.e, 20);
	free(lines);
	ru_free(&base);
	ru_free(&r);
}

static void test_slow(void)
{
	char *base_argv[] = {(char *)app, "150", "2", "0", "2000", "plain", NULL};
	char *argv[] = {(char *)gbpf, "-j", "run", "--backend", "hosttest", (char *)count_obj, "--",
			(char *)app, "150", "2", "0", "2000", "plain", NULL};
	/* stopped 50 ms after the agent attached, for 2 s: the app has ~300 ms of launches left */
	struct ru_signal sig[] = {{SIGSTOP, 50, "attached"}, {SIGCONT, 2050, NULL}};
	struct ru_out base, plain, r;
	char *lines;
	double held;
	size_t events;
	unsigned long lost;

	ru_run(base_argv, NULL, NULL, 0, "done\n", 30000, &base);
	ru_run(argv, NULL, NULL, 0, "done\n", 30000, &plain);
	ru_run(argv, NULL, sig, 2, "done\n", 30000, &r);
	lines = ru_app_lines(r.o);
	held = r.marker_ms - r.stop_ms;
	tap_ok(r.stop_ms > 0 && r.marker_ms > 0 && r.marker_ms < r.stop_ms + 2000,
	       "controller stopped: the app finished while it was stopped (stop at %.0f ms, done at %.0f ms)",
	       r.stop_ms, r.marker_ms);
	tap_ok(r.marker_ms > 0 && r.marker_ms <= plain.marker_ms + SLOW_BOUND_MS,
	       "controller stopped: app done in %.0f ms (%.0f ms after the stop); alone %.0f ms, "
	       "traced %.0f ms, bound +%.0f ms",
	       r.marker_ms, held, base.marker_ms, plain.marker_ms, SLOW_BOUND_MS);
	tap_ok(ru_exit_code(r.status) == 0 && lines && !strcmp(lines, base.o),
	       "controller stopped: app output identical, gbpf run exits 0 after SIGCONT");
	events = ru_count(r.o, "\"type\":\"event\"");
	lost = ru_lost(r.o, "events");
	tap_ok(ru_map_value(r.o, "launches", "kern_a") == 150 && events + lost == 300,
	       "controller stopped: counts exact afterwards (kern_a %ld == 150), %zu records + %lu lost == 300",
	       ru_map_value(r.o, "launches", "kern_a"), events, lost);
	ru_diag_app_differs(base.o, lines, r.o);
	if (tap_failed)
		ru_diag("stderr", r.e, 20);
	free(lines);
	ru_free(&base);
	ru_free(&plain);
	ru_free(&r);
}

static void test_complexity(void)
{
	char *base_argv[] = {(char *)app, "10", "2", "0", "0", "plain", NULL};
	char *both[] = {(char *)gbpf, "-j", "run", "--backend", "hosttest", (char *)complex_obj,
			(char *)count_obj, "--", (char *)app, "10", "2", "0", "0", "plain", NULL};
	char *alone[] = {(char *)gbpf, "run", "--backend", "hosttest", (char *)complex_obj, "--",
			 (char *)app, "10", "2", "0", "0", "plain", NULL};
	struct ru_out base, r, a;
	char *lines;

	ru_run(base_argv, NULL, NULL, 0, NULL, 30000, &base);
	ru_run(both, NULL, NULL, 0, NULL, 60000, &r);
	ru_run(alone, NULL, NULL, 0, NULL, 60000, &a);
	lines = ru_app_lines(r.o);
	tap_ok(strstr(r.e, "program 'too_complex': rejected by the verifier at instruction") &&
		       strstr(r.e, "too complex") && strstr(r.e, "not attached"),
	       "complexity bound: probe rejected with file, program, instruction and reason");
	tap_ok(ru_exit_code(r.status) == 0 && lines && !strcmp(lines, base.o) &&
		       ru_map_value(r.o, "launches", "kern_a") == 10,
	       "complexity bound: app unchanged, the other probe still counts (kern_a %ld == 10)",
	       ru_map_value(r.o, "launches", "kern_a"));
	tap_ok(ru_exit_code(a.status) == 0 && !strcmp(a.o, base.o) &&
		       strstr(a.e, "the application runs uninstrumented"),
	       "complexity bound alone: app runs uninstrumented and the user is told");
	ru_diag_app_differs(base.o, lines, r.o);
	if (strcmp(a.o, base.o))
		ru_diag_app_differs(base.o, NULL, a.o);
	if (tap_failed) {
		ru_diag("stderr", r.e, 20);
		ru_diag("stderr (alone)", a.e, 20);
	}
	free(lines);
	ru_free(&base);
	ru_free(&r);
	ru_free(&a);
}

static void test_socket(void)
{
	char *argv[] = {(char *)gbpf, "-j", "run", "--backend", "hosttest", (char *)count_obj, "--",
			(char *)sec_app, "20", NULL};
	static const char *const bad[] = {"garbage", "wrong version", "unknown type", "oversized",
					  "report before hello", "truncated hello", "forged pid"};
	struct ru_out r;
	char want[128];
	unsigned uid = (unsigned)getuid();

	ru_run(argv, NULL, NULL, 0, NULL, 60000, &r);
	snprintf(want, sizeof(want), "sec: dir mode 700 uid %u\n", uid);
	tap_ok(strstr(r.o, want) != NULL, "socket directory is 0700 and ours");
	snprintf(want, sizeof(want), "sec: socket mode 600 uid %u\n", uid);
	tap_ok(strstr(r.o, want) != NULL, "control socket is 0600 and ours");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(want, sizeof(want), "sec: %s: closed\n", bad[i]);
		tap_ok(strstr(r.o, want) != NULL, "malformed message on the control socket (%s): "
		       "connection closed by the controller", bad[i]);
	}
	tap_ok(ru_count(r.e, "disconnected") + ru_count(r.e, "refused") >= 6,
	       "each malformed connection reported by the controller (%zu)",
	       ru_count(r.e, "disconnected") + ru_count(r.e, "refused"));
	tap_ok(strstr(r.o, "sec: map region mapped rw-s") != NULL,
	       "map region is a shared memfd mapping (no path another user could open)");
	tap_ok(ru_exit_code(r.status) == 0 && strstr(r.o, "done\n") &&
		       ru_map_value(r.o, "launches", "kern_a") == 10,
	       "the real agent is unaffected by the bad connections (kern_a %ld == 10)",
	       ru_map_value(r.o, "launches", "kern_a"));
	if (tap_failed) {
		ru_diag("stdout", r.o, 40);
		ru_diag("stderr", r.e, 40);
	}
	ru_free(&r);
}

/* A probe writing application memory never reaches the agent; the other probe runs. */
static void test_app_write(void)
{
	char *base_argv[] = {(char *)app, "10", "2", "0", "0", "plain", NULL};
	char *argv[] = {(char *)gbpf, "-j", "run", "--backend", "hosttest", (char *)write_obj,
			(char *)count_obj, "--", (char *)app, "10", "2", "0", "0", "plain", NULL};
	struct ru_out base, r;
	char *lines;

	if (!write_obj) {
		tap_skip("app writes: no WRITE_OBJ argument");
		return;
	}
	ru_run(base_argv, NULL, NULL, 0, NULL, 30000, &base);
	ru_run(argv, NULL, NULL, 0, NULL, 60000, &r);
	lines = ru_app_lines(r.o);
	tap_ok(strstr(r.e, "program 'write_value': rejected by the verifier at instruction") &&
		       strstr(r.e, "cannot write into ctx") && strstr(r.e, "not attached"),
	       "app writes: a gpu/mem probe storing mem_value is rejected by `gbpf run`, named, "
	       "with its instruction and reason");
	tap_ok(ru_exit_code(r.status) == 0 && lines && !strcmp(lines, base.o) &&
		       ru_map_value(r.o, "launches", "kern_a") == 10,
	       "app writes: app output unchanged, the other probe still counts (kern_a %ld == 10)",
	       ru_map_value(r.o, "launches", "kern_a"));
	ru_diag_app_differs(base.o, lines, r.o);
	if (tap_failed)
		ru_diag("stderr", r.e, 20);
	free(lines);
	ru_free(&base);
	ru_free(&r);
}

int main(int argc, char **argv)
{
	if (argc < 8) {
		tap_skip("usage: test_faults GBPF APP PLUGIN COUNT_OBJ FLOOD_OBJ COMPLEX_OBJ SEC_APP");
		return tap_done();
	}
	gbpf = argv[1];
	app = argv[2];
	setenv("GBPF_PLUGIN_PATH", argv[3], 1);
	count_obj = argv[4];
	flood_obj = argv[5];
	complex_obj = argv[6];
	sec_app = argv[7];
	write_obj = argc > 8 ? argv[8] : NULL;
	/* The app outlives a killed controller: we reap it. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	test_ring_full();
	test_killed();
	test_killed_full_pipe();
	test_slow();
	test_complexity();
	test_socket();
	test_app_write();
	return tap_done();
}
