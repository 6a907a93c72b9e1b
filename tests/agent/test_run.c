/* SPDX-License-Identifier: MIT */
/*
 * End-to-end tests of `gbpf run` on the test backend (no GPU): the real
 * controller, the real agent, the test app and BPF probes built from C.
 * argv: GBPF APP PLUGIN COUNT_OBJ REJECT_OBJ [PUTS_OBJ MEMWRITE_OBJ [MANYKEYS_OBJ]]
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tap.h"

static const char *gbpf, *app, *plugin, *count_obj, *reject_obj, *puts_obj, *memwrite_obj,
	*manykeys_obj;

struct out {
	char *o, *e;
	size_t on, en;
	int status;
	pid_t pid;
};

static void append(char **buf, size_t *n, const char *p, size_t len)
{
	*buf = realloc(*buf, *n + len + 1);
	memcpy(*buf + *n, p, len);
	*n += len;
	(*buf)[*n] = 0;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/*
 * Run argv, collecting stdout and stderr until both close (every writer,
 * the app's children included, is gone). kill_after_ms > 0: SIGKILL the
 * started process (the controller) that long after the app's agent first
 * reported through it (a "gbpf run: pid " line on stderr: the app is
 * running then; a fixed delay from the start killed a controller that had
 * not yet started the app when the machine was busy), and reap the orphans
 * ourselves (we are a subreaper).
 */
static int run(char *const argv[], struct out *r, int kill_after_ms, int timeout_ms)
{
	int po[2], pe[2];
	double start = now_ms(), reported = 0;
	int killed = 0, open_fds = 2;

	memset(r, 0, sizeof(*r));
	r->o = calloc(1, 1);
	r->e = calloc(1, 1);
	if (pipe(po) || pipe(pe))
		return -1;
	r->pid = fork();
	if (r->pid == 0) {
		dup2(po[1], 1);
		dup2(pe[1], 2);
		close(po[0]);
		close(pe[0]);
		execv(argv[0], argv);
		_exit(127);
	}
	close(po[1]);
	close(pe[1]);
	while (open_fds) {
		struct pollfd pf[2] = {{.fd = po[0], .events = POLLIN}, {.fd = pe[0], .events = POLLIN}};
		char buf[4096];
		int i;

		if (kill_after_ms > 0 && !reported && strstr(r->e, "gbpf run: pid "))
			reported = now_ms();
		if (kill_after_ms > 0 && !killed && reported && now_ms() - reported >= kill_after_ms) {
			kill(r->pid, SIGKILL);
			killed = 1;
		}
		if (now_ms() - start > timeout_ms) {
			kill(r->pid, SIGKILL);
			break;
		}
		if (poll(pf, 2, 20) <= 0)
			continue;
		for (i = 0; i < 2; i++) {
			ssize_t n;

			if (pf[i].fd < 0 || !pf[i].revents)
				continue;
			n = read(pf[i].fd, buf, sizeof(buf));
			if (n <= 0) {
				close(pf[i].fd);
				if (i == 0)
					po[0] = -1;
				else
					pe[0] = -1;
				open_fds--;
				continue;
			}
			if (i == 0)
				append(&r->o, &r->on, buf, (size_t)n);
			else
				append(&r->e, &r->en, buf, (size_t)n);
		}
	}
	if (po[0] >= 0)
		close(po[0]);
	if (pe[0] >= 0)
		close(pe[0]);
	waitpid(r->pid, &r->status, 0);
	return 0;
}

static void out_free(struct out *r)
{
	free(r->o);
	free(r->e);
}

/* Lines of @p text that are not JSON objects (the app's own output). */
static char *app_lines(const char *text)
{
	size_t n = 0;
	char *res = calloc(1, strlen(text) + 1);
	const char *l = text;

	while (*l) {
		const char *nl = strchr(l, '\n');
		size_t len = nl ? (size_t)(nl - l + 1) : strlen(l);

		if (l[0] != '{') {
			memcpy(res + n, l, len);
			n += len;
		}
		l += len;
	}
	return res;
}

static size_t count_str(const char *hay, const char *needle)
{
	size_t n = 0;

	while ((hay = strstr(hay, needle))) {
		n++;
		hay += strlen(needle);
	}
	return n;
}

/* Sum of "count":N of lost_events lines. */
static unsigned long lost_total(const char *text)
{
	unsigned long sum = 0;
	const char *p = text;

	while ((p = strstr(p, "\"type\":\"lost_events\""))) {
		const char *c = strstr(p, "\"count\":");

		if (c)
			sum += strtoul(c + 8, NULL, 10);
		p++;
	}
	return sum;
}

/* Value of "KEY":N inside the last line holding @p map. */
static long json_map_value(const char *text, const char *map, const char *key)
{
	char pat[128];
	const char *p = NULL, *q = text, *v;

	snprintf(pat, sizeof(pat), "{\"%s\":{", map);
	while ((q = strstr(q, pat)))
		p = q++;
	if (!p)
		return -1;
	snprintf(pat, sizeof(pat), "\"%s\":", key);
	v = strstr(p, pat);
	if (!v || strchr(p, '\n') < v)
		return -1;
	return strtol(v + strlen(pat), NULL, 10);
}

/* Multi-line text as TAP diagnostics ("# " before every line). */
static void diag_text(const char *title, const char *text)
{
	const char *l = text;

	printf("# %s:\n", title);
	while (*l) {
		const char *nl = strchr(l, '\n');
		int len = nl ? (int)(nl - l) : (int)strlen(l);

		printf("#   %.*s\n", len, l);
		l += len + (nl ? 1 : 0);
	}
}

static int exit_code(int status)
{
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Launches "kern_a" of one thread doing n launches. */
static long kern_a(long n)
{
	return (n + 1) / 2;
}

static void test_counts(void)
{
	char *base_argv[] = {(char *)app, "40", "4", "3", "0", "fork", NULL};
	char *run_argv[] = {(char *)gbpf, "-j", "run", "--backend", "hosttest", (char *)count_obj,
			    "--", (char *)app, "40", "4", "3", "0", "fork", NULL};
	struct out base, r;
	char *lines;
	long total = 40 * 4 + 40, a, b;
	size_t events;
	unsigned long lost;

	run(base_argv, &base, 0, 30000);
	tap_ok(exit_code(base.status) == 3, "app alone exits with 3 (got %d)",
	       exit_code(base.status));
	run(run_argv, &r, 0, 60000);
	tap_ok(exit_code(r.status) == 3, "gbpf run propagates the app's exit status 3 (got %d)",
	       exit_code(r.status));
	lines = app_lines(r.o);
	tap_ok(strcmp(lines, base.o) == 0, "app output identical with and without gbpf run");
	if (strcmp(lines, base.o)) {
		diag_text("with gbpf", lines);
		diag_text("without", base.o);
	}
	a = json_map_value(r.o, "launches", "kern_a");
	b = json_map_value(r.o, "launches", "kern_b");
	tap_ok(a == kern_a(40) * 5 && b == (40 - kern_a(40)) * 5,
	       "launches counted per kernel over 4 threads and an exec'd child: kern_a %ld (want %ld), kern_b %ld (want %ld)",
	       a, kern_a(40) * 5, b, (40 - kern_a(40)) * 5);
	events = count_str(r.o, "\"type\":\"event\"");
	lost = lost_total(r.o);
	tap_ok((long)(events + lost) == total,
	       "every ring buffer record seen or counted lost: %zu records + %lu lost == %ld launches",
	       events, lost, total);
	tap_ok(strstr(r.o, "\"type\":\"hist\"") && strstr(r.o, "\"grid_hist\":[{\"min\":0"),
	       "grid size histogram printed as a log2 histogram in JSON");
	tap_ok(count_str(r.e, "hosttest: gbpf_test_launch interposed") == 2,
	       "two agents attached (the app and its exec'd child)");
	if (tap_failed)
		diag_text("stderr", r.e);
	free(lines);
	out_free(&base);
	out_free(&r);
}

/* Many launches, no pause: the 4 KiB ring overflows; nothing may go unaccounted. */
static void test_lost(void)
{
	char *run_argv[] = {(char *)gbpf, "-j", "run", "--backend", "hosttest", (char *)count_obj,
			    "--", (char *)app, "1500", "4", "0", "0", "plain", NULL};
	struct out r;
	size_t events;
	unsigned long lost;

	run(run_argv, &r, 0, 120000);
	events = count_str(r.o, "\"type\":\"event\"");
	lost = lost_total(r.o);
	tap_ok(exit_code(r.status) == 0 && events + lost == 6000,
	       "under load: %zu records + %lu lost == 6000 launches", events, lost);
	tap_ok(json_map_value(r.o, "launches", "kern_a") == 3000,
	       "under load: exact count kern_a %ld == 3000", json_map_value(r.o, "launches", "kern_a"));
	out_free(&r);
}

static void test_text(void)
{
	char *run_argv[] = {(char *)gbpf, "run", "--backend", "hosttest", (char *)count_obj, "--",
			    (char *)app, "16", "1", "0", "0", "plain", NULL};
	struct out r;

	run(run_argv, &r, 0, 30000);
	tap_ok(exit_code(r.status) == 0, "text mode: exit status 0");
	tap_ok(strstr(r.o, "     value               : count    distribution\n") &&
		       strstr(r.o, "         0 -> 1          : 2        |"),
	       "text mode: bcc-style log2 histogram");
	char row[64];

	snprintf(row, sizeof(row), "%-32s %12d\n", "kern_a", 8);
	tap_ok(strstr(r.o, row) != NULL,
	       "text mode: counter table row for kern_a with 8 launches");
	if (tap_failed) {
		diag_text("stdout", r.o);
		diag_text("stderr", r.e);
	}
	out_free(&r);
}

/* A counter table of 3000 keys (one per launch): every key printed, in JSON and in text. */
static void test_many_keys(void)
{
	char *json_argv[] = {(char *)gbpf, "-j", "run", "--backend", "hosttest", (char *)manykeys_obj,
			     "--", (char *)app, "1500", "2", "0", "0", "plain", NULL};
	char *text_argv[] = {(char *)gbpf, "run", "--backend", "hosttest", (char *)manykeys_obj,
			     "--", (char *)app, "1500", "2", "0", "0", "plain", NULL};
	const char *line;
	struct out r;
	size_t keys = 0, ones = 0, rows;

	run(json_argv, &r, 0, 60000);
	line = strstr(r.o, "{\"per_launch\":{");
	for (const char *p = line; p && *p && *p != '\n'; p++) {
		if (*p == ':' && p[-1] == '"' && p[1] >= '0' && p[1] <= '9') {
			keys++;
			ones += p[1] == '1' && (p[2] == ',' || p[2] == '}');
		}
	}
	tap_ok(exit_code(r.status) == 0 && keys == 3000 && ones == 3000,
	       "a table of 3000 keys: all printed in JSON (%zu keys, %zu of them 1)", keys, ones);
	if (tap_failed)
		diag_text("stderr", r.e);
	out_free(&r);
	run(text_argv, &r, 0, 60000);
	rows = count_str(r.o, "           1\n"); /* the count column is 12 wide */
	tap_ok(exit_code(r.status) == 0 && rows == 3000,
	       "a table of 3000 keys: all printed as text (%zu rows with count 1)", rows);
	out_free(&r);
}

static void test_reject(void)
{
	char *base_argv[] = {(char *)app, "10", "2", "0", "0", "plain", NULL};
	char *run_argv[] = {(char *)gbpf, "-j", "run", "--backend", "hosttest", (char *)reject_obj,
			    (char *)count_obj, "--", (char *)app, "10", "2", "0", "0", "plain", NULL};
	struct out base, r;
	char *lines;

	run(base_argv, &base, 0, 30000);
	run(run_argv, &r, 0, 30000);
	tap_ok(strstr(r.e, "program 'bad_probe': rejected by the verifier at instruction") != NULL,
	       "rejected program reported with file, program and instruction");
	lines = app_lines(r.o);
	tap_ok(exit_code(r.status) == 0 && strcmp(lines, base.o) == 0,
	       "app runs unchanged next to a rejected program");
	tap_ok(json_map_value(r.o, "launches", "kern_a") == 10,
	       "the accepted program still counts (kern_a %ld)",
	       json_map_value(r.o, "launches", "kern_a"));
	free(lines);
	out_free(&base);
	out_free(&r);
}

static void test_unknown_backend(void)
{
	char *base_argv[] = {(char *)app, "10", "1", "5", "0", "plain", NULL};
	char *run_argv[] = {(char *)gbpf, "run", "--backend", "nope", (char *)count_obj, "--",
			    (char *)app, "10", "1", "5", "0", "plain", NULL};
	struct out base, r;

	run(base_argv, &base, 0, 30000);
	run(run_argv, &r, 0, 30000);
	tap_ok(strstr(r.e, "backend nope") && strstr(r.e, "backend 'nope' not found"),
	       "unknown backend reported by the controller and the agent");
	tap_ok(exit_code(r.status) == 5 && strncmp(r.o, base.o, base.on) == 0,
	       "app runs uninstrumented with an unknown backend (status %d)", exit_code(r.status));
	if (tap_failed)
		diag_text("stderr", r.e);
	out_free(&base);
	out_free(&r);
}

static void test_kill_controller(void)
{
	char *base_argv[] = {(char *)app, "100", "2", "4", "3000", "plain", NULL};
	char *run_argv[] = {(char *)gbpf, "-j", "run", "--backend", "hosttest", (char *)count_obj,
			    "--", (char *)app, "100", "2", "4", "3000", "plain", NULL};
	struct out base, r;
	char *lines;
	int st = -1;
	pid_t w;

	run(base_argv, &base, 0, 30000);
	/* We reap the orphaned app: it keeps our pipes and its status comes to us. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	run(run_argv, &r, 150, 30000);
	while ((w = waitpid(-1, &st, 0)) > 0 && w == r.pid)
		;
	tap_ok(WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGKILL,
	       "controller killed with SIGKILL mid-run");
	lines = app_lines(r.o);
	tap_ok(strcmp(lines, base.o) == 0, "app finishes with identical output after the controller died");
	free(lines);
	tap_ok(w > 0 && exit_code(st) == 4, "orphaned app exits normally with its own status (%d)",
	       w > 0 ? exit_code(st) : -1);
	if (tap_failed) {
		diag_text("stdout", r.o);
		diag_text("stderr", r.e);
	}
	out_free(&base);
	out_free(&r);
}

static void test_foreign_uid(void)
{
	char *run_argv[] = {(char *)gbpf, "run", "--backend", "hosttest", (char *)count_obj, "--",
			    (char *)app, "4", "1", "0", "0", "foreign", NULL};
	struct out r;

	if (getuid() != 0) {
		tap_skip("peer with another uid: needs root to switch uid");
		return;
	}
	run(run_argv, &r, 0, 30000);
	tap_ok(strstr(r.e, "refused: it runs as uid 65534") != NULL,
	       "controller refuses an agent of another uid");
	tap_ok(strstr(r.o, "foreign: refused") && strstr(r.o, "done\n"),
	       "the foreign peer sees its connection closed; the app completes");
	if (tap_failed) {
		diag_text("stdout", r.o);
		diag_text("stderr", r.e);
	}
	out_free(&r);
}

/* The controller's print counts (GBPF_RUN_SPIN_STATS): lines, of which through rings, wake-ups. */
struct print_stats {
	unsigned long long lines, ring, wakes;
};

/* Run @p argv with GBPF_RUN_SPIN_STATS=1, and @p var=@p val when @p var is not NULL. */
static struct print_stats run_print_stats(char **argv, const char *var, const char *val, struct out *r)
{
	struct print_stats ps = {0};
	const char *st;

	setenv("GBPF_RUN_SPIN_STATS", "1", 1);
	if (var)
		setenv(var, val, 1);
	run(argv, r, 0, 30000);
	if (var)
		unsetenv(var);
	unsetenv("GBPF_RUN_SPIN_STATS");
	st = strstr(r->e, "print lines ");
	if (st)
		sscanf(st, "print lines %llu (%llu through print rings, %llu wake-ups)", &ps.lines, &ps.ring, &ps.wakes);
	return ps;
}

/*
 * A device probe calling puts with a .rodata string: the controller and the
 * agent both verify it (the agent with the .rodata bytes of the setup), the
 * test backend's simulated device prints it through services->print, and
 * the line reaches gbpf's stdout once per kern_a launch.
 */
static void test_puts(void)
{
	char *base_argv[] = {(char *)app, "6", "2", "0", "0", "plain", NULL};
	char *run_argv[] = {(char *)gbpf, "run", "--backend", "hosttest", (char *)puts_obj, "--",
			    (char *)app, "6", "2", "0", "0", "plain", NULL};
	char *json_argv[] = {(char *)gbpf, "-j", "run", "--backend", "hosttest", (char *)puts_obj,
			     "--", (char *)app, "6", "2", "0", "0", "plain", NULL};
	char *slow_argv[] = {(char *)gbpf, "-j", "run", "--backend", "hosttest", (char *)puts_obj,
			     "--", (char *)app, "6", "2", "0", "5000", "plain", NULL};
	struct out base, r;
	struct print_stats ps;
	unsigned long long n;
	char *lines;

	run(base_argv, &base, 0, 30000);
	run(run_argv, &r, 0, 30000);
	tap_ok(strstr(r.e, "attached 1 program(s), 1 map(s) on backend 'hosttest'") &&
		       !strstr(r.e, "verifier") && !strstr(r.e, "uninstrumented"),
	       "puts probe with a .rodata string accepted by the controller and the agent");
	tap_ok(count_str(r.o, "hello from kern_a\n") == (size_t)(2 * kern_a(6)),
	       "its line reaches gbpf's stdout once per kern_a launch (%zu, want %ld)",
	       count_str(r.o, "hello from kern_a\n"), 2 * kern_a(6));
	lines = app_lines(r.o);
	{
		/* The app's own lines are all there, in their order, between the probe's. */
		char *p = lines, *q = lines;

		for (; *p; p++) {
			if (!strncmp(p, "hello from kern_a\n", 18)) {
				p += 17;
				continue;
			}
			*q++ = *p;
		}
		*q = 0;
	}
	tap_ok(exit_code(r.status) == 0 && !strcmp(lines, base.o),
	       "the app's output is unchanged next to the probe's lines");
	if (tap_failed) {
		diag_text("stdout", r.o);
		diag_text("stderr", r.e);
	}
	free(lines);
	out_free(&r);
	n = (unsigned long long)(2 * kern_a(6));
	ps = run_print_stats(json_argv, NULL, NULL, &r);
	tap_ok(count_str(r.o, "{\"type\":\"printf\",\"pid\":") == n &&
		       strstr(r.o, "\"msg\":\"hello from kern_a\"}"),
	       "-j: each line is a printf object with the text");
	/* the lines came through the agent's print ring (core/agent/print_ring.h), not the socket */
	tap_ok(ps.lines == n && ps.ring == n, "every line through the print ring (%llu of %llu)", ps.ring, ps.lines);
	out_free(&r);
	/* a controller that never spins blocks between lines 5 ms apart: the ring's producer wakes it */
	ps = run_print_stats(slow_argv, "GBPF_RUN_SPIN_US", "0", &r);
	tap_ok(count_str(r.o, "\"msg\":\"hello from kern_a\"}") == n && ps.ring == n && ps.wakes >= 1,
	       "GBPF_RUN_SPIN_US=0: every line through the ring, the blocked controller woken %llu times",
	       ps.wakes);
	out_free(&r);
	/* GBPF_AGENT_PRINT_DIRECT=0: no ring, every line a frame through the agent's sender */
	ps = run_print_stats(json_argv, "GBPF_AGENT_PRINT_DIRECT", "0", &r);
	tap_ok(count_str(r.o, "\"msg\":\"hello from kern_a\"}") == n && ps.lines == n && ps.ring == 0,
	       "without the ring the same lines come as frames (%llu of %llu through a ring)", ps.ring, ps.lines);
	out_free(&r);
	out_free(&base);
}

/* --allow-app-writes: a gpu/mem probe writing ctx->mem_value, refused or attached on both sides. */
static void test_allow_app_writes(void)
{
	char *plain_argv[] = {(char *)gbpf, "-j", "run", "--backend", "hosttest",
			      (char *)memwrite_obj, "--", (char *)app, "4", "1", "0", "0", "plain",
			      NULL};
	char *allow_argv[] = {(char *)gbpf, "-j", "run", "--backend", "hosttest",
			      "--allow-app-writes", (char *)memwrite_obj, "--", (char *)app, "4",
			      "1", "0", "0", "plain", NULL};
	struct out r;

	run(plain_argv, &r, 0, 30000);
	tap_ok(strstr(r.e, "program 'zero_stores': rejected by the verifier at instruction 3: "
			   "cannot write into ctx") &&
		       strstr(r.e, "only with --allow-app-writes); not attached"),
	       "without --allow-app-writes the controller refuses the writer, naming the option");
	tap_ok(strstr(r.e, "attached 1 program(s)") && strstr(r.e, "(flags 0x0)") &&
		       strstr(r.o, "\"name\":\"launch_count\",\"type\":\"array\",\"entries\":1,"
				  "\"data\":[{\"key\":0,\"value\":4}]") && exit_code(r.status) == 0,
	       "the other program of the object still runs (4 launches counted), no flag sent");
	if (tap_failed)
		diag_text("stderr", r.e);
	out_free(&r);
	run(allow_argv, &r, 0, 30000);
	tap_ok(!strstr(r.e, "rejected") && !strstr(r.e, "verifier") &&
		       strstr(r.e, "attached 2 program(s)") && strstr(r.e, "(flags 0x1)"),
	       "with --allow-app-writes both sides accept it (the agent verifies as the controller "
	       "did) and the plugin gets GBPF_AGENT_F_ALLOW_APP_WRITES");
	tap_ok(strstr(r.o, "\"data\":[{\"key\":0,\"value\":4}]") && exit_code(r.status) == 0,
	       "and the launches are counted as before");
	if (tap_failed) {
		diag_text("stdout", r.o);
		diag_text("stderr", r.e);
	}
	out_free(&r);
}

/* --engine reaches agent_attach as GBPF_AGENT_F_ENGINE_* (the test backend reports its flags). */
static void test_engine(void)
{
	static const struct {
		const char *engine, *want;
	} cases[] = {{"ptx", "(flags 0x4)"}, {"sanitizer", "(flags 0x8)"}, {"auto", "(flags 0x0)"}};
	struct out r;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *argv[] = {(char *)gbpf, "run", "--backend", "hosttest", "--engine",
				(char *)cases[i].engine, (char *)count_obj, "--", (char *)app, "2",
				"1", "0", "0", "plain", NULL};

		run(argv, &r, 0, 30000);
		tap_ok(strstr(r.e, cases[i].want) && exit_code(r.status) == 0,
		       "--engine %s: the plugin's attach options carry %s", cases[i].engine,
		       cases[i].want);
		if (tap_failed)
			diag_text("stderr", r.e);
		out_free(&r);
	}
	{
		char *argv[] = {(char *)gbpf, "run", "--engine", "nvbit", (char *)count_obj, "--",
				(char *)app, "2", "1", "0", "0", "plain", NULL};

		run(argv, &r, 0, 30000);
		tap_ok(exit_code(r.status) != 0 && strstr(r.e, "--engine nvbit: not an engine") &&
			       !strstr(r.o, "done"),
		       "--engine nvbit refused before anything runs");
		out_free(&r);
	}
}

int main(int argc, char **argv)
{
	if (argc < 6) {
		tap_skip("usage: test_run GBPF APP PLUGIN COUNT_OBJ REJECT_OBJ");
		return tap_done();
	}
	gbpf = argv[1];
	app = argv[2];
	plugin = argv[3];
	count_obj = argv[4];
	reject_obj = argv[5];
	setenv("GBPF_PLUGIN_PATH", plugin, 1);
	test_counts();
	test_lost();
	test_text();
	test_reject();
	test_unknown_backend();
	test_kill_controller();
	test_foreign_uid();
	if (argc >= 8) {
		puts_obj = argv[6];
		memwrite_obj = argv[7];
		test_puts();
		test_allow_app_writes();
		test_engine();
		if (argc >= 9) {
			manykeys_obj = argv[8];
			test_many_keys();
		}
	} else {
		tap_skip("puts / memwrite probes not given");
	}
	return tap_done();
}
