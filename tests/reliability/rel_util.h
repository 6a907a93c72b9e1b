/* SPDX-License-Identifier: MIT */
/*
 * tests/reliability/rel_util.h - running `gbpf run` under faults: a child
 * with captured stdout/stderr, signals sent to it at chosen times, and the
 * time at which a marker first appeared on its stdout (the application
 * writes to the same pipe, so this measures the application, not the
 * controller).
 */
#ifndef GBPF_TESTS_RELIABILITY_UTIL_H
#define GBPF_TESTS_RELIABILITY_UTIL_H

#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/*
 * One signal to send to the started process, @c at_ms after a base time:
 * the start, or, when the FIRST signal has @c after_err, the moment that
 * text first appeared on stderr (later signals share that base).
 */
struct ru_signal {
	int sig;
	int at_ms;
	const char *after_err;
};

struct ru_out {
	char *o, *e;           /* stdout, stderr (NUL-terminated) */
	size_t on, en;
	int status;            /* wait status of the started process */
	double marker_ms;      /* first appearance of the marker on stdout, -1 if never */
	double end_ms;         /* both pipes closed (every writer gone) */
	double stop_ms;        /* when a SIGSTOP was sent, 0 if none */
};

static inline double ru_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static inline void ru_append(char **buf, size_t *n, const char *p, size_t len)
{
	char *nb = realloc(*buf, *n + len + 1);

	if (!nb)
		return;
	*buf = nb;
	memcpy(*buf + *n, p, len);
	*n += len;
	(*buf)[*n] = 0;
}

/*
 * Run argv (with @p env_extra "K=V" entries added, may be NULL), sending
 * @p sigs in order; collect output until both pipes close or timeout_ms.
 * The caller is a subreaper, so orphans (the app after SIGKILL of the
 * controller) are reaped by ru_reap_orphans().
 */
static inline int ru_run(char *const argv[], char *const env_extra[], const struct ru_signal *sigs,
			 size_t nsig, const char *marker, int timeout_ms, struct ru_out *r)
{
	int po[2], pe[2], open_fds = 2;
	double start, base_ms = -1;
	size_t next = 0;
	pid_t pid;

	memset(r, 0, sizeof(*r));
	r->o = calloc(1, 1);
	r->e = calloc(1, 1);
	r->marker_ms = -1;
	if (!r->o || !r->e || pipe(po) || pipe(pe))
		return -1;
	start = ru_now_ms();
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		dup2(po[1], 1);
		dup2(pe[1], 2);
		close(po[0]);
		close(pe[0]);
		for (size_t i = 0; env_extra && env_extra[i]; i++)
			putenv(env_extra[i]);
		execv(argv[0], argv);
		_exit(127);
	}
	close(po[1]);
	close(pe[1]);
	while (open_fds) {
		struct pollfd pf[2] = {{.fd = po[0], .events = POLLIN}, {.fd = pe[0], .events = POLLIN}};
		double t = ru_now_ms() - start;
		char buf[4096];

		if (next < nsig && base_ms < 0 &&
		    (!sigs[next].after_err || strstr(r->e, sigs[next].after_err)))
			base_ms = t;
		while (next < nsig && base_ms >= 0 && t - base_ms >= sigs[next].at_ms) {
			if (sigs[next].sig == SIGSTOP)
				r->stop_ms = t;
			kill(pid, sigs[next++].sig);
		}
		if (t > timeout_ms) {
			kill(pid, SIGCONT);
			kill(pid, SIGKILL);
			break;
		}
		if (poll(pf, 2, 5) <= 0)
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
				continue;
			}
			if (i == 0) {
				ru_append(&r->o, &r->on, buf, (size_t)n);
				if (marker && r->marker_ms < 0 && strstr(r->o, marker))
					r->marker_ms = ru_now_ms() - start;
			} else {
				ru_append(&r->e, &r->en, buf, (size_t)n);
			}
		}
	}
	r->end_ms = ru_now_ms() - start;
	/* Signals not sent yet (the run ended first) are sent now: never leave it stopped. */
	kill(pid, SIGCONT);
	if (po[0] >= 0)
		close(po[0]);
	if (pe[0] >= 0)
		close(pe[0]);
	waitpid(pid, &r->status, 0);
	return 0;
}

static inline void ru_free(struct ru_out *r)
{
	free(r->o);
	free(r->e);
}

/*
 * Reap the orphans we adopted (as a subreaper), waiting up to 5 s for the
 * first; returns the last status seen or -1.
 */
static inline int ru_reap_orphans(void)
{
	int st, last = -1;

	for (int i = 0; i < 500; i++) {
		pid_t w = waitpid(-1, &st, WNOHANG);

		if (w > 0) {
			last = st;
			continue;
		}
		if (w < 0 || last >= 0)
			break;
		usleep(10000);
	}
	return last;
}

static inline int ru_exit_code(int status)
{
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static inline size_t ru_count(const char *hay, const char *needle)
{
	size_t n = 0;

	while ((hay = strstr(hay, needle))) {
		n++;
		hay += strlen(needle);
	}
	return n;
}

/* Lines of @p text that are not JSON objects (the application's own output); caller frees. */
static inline char *ru_app_lines(const char *text)
{
	size_t n = 0;
	char *res = calloc(1, strlen(text) + 1);
	const char *l = text;

	while (res && *l) {
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

/* Sum of "count":N over the lost_events lines of map @p map. */
static inline unsigned long ru_lost(const char *text, const char *map)
{
	char pat[128];
	unsigned long sum = 0;
	const char *p = text;

	snprintf(pat, sizeof(pat), "\"type\":\"lost_events\",\"map\":\"%s\",\"count\":", map);
	while ((p = strstr(p, pat))) {
		p += strlen(pat);
		sum += strtoul(p, NULL, 10);
	}
	return sum;
}

/* Value of "KEY":N in the last {"MAP":{...}} line, or -1. */
static inline long ru_map_value(const char *text, const char *map, const char *key)
{
	char pat[128];
	const char *p = NULL, *q = text, *v, *eol;

	snprintf(pat, sizeof(pat), "{\"%s\":{", map);
	while ((q = strstr(q, pat)))
		p = q++;
	if (!p)
		return -1;
	snprintf(pat, sizeof(pat), "\"%s\":", key);
	v = strstr(p, pat);
	eol = strchr(p, '\n');
	if (!v || (eol && eol < v))
		return -1;
	return strtol(v + strlen(pat), NULL, 10);
}

/* Multi-line text as TAP diagnostics, at most @p max lines. */
static inline void ru_diag(const char *title, const char *text, int max)
{
	const char *l = text;

	printf("# %s:\n", title);
	for (int n = 0; *l && n < max; n++) {
		const char *nl = strchr(l, '\n');
		int len = nl ? (int)(nl - l) : (int)strlen(l);

		printf("#   %.*s\n", len, l);
		l += len + (nl ? 1 : 0);
	}
}

/*
 * The application's output alone and under gbpf, as diagnostics, when they
 * differ: @p alone, the app's lines of the traced run (@p lines, NULL if
 * none), and for each line of @p alone the raw line of @p traced that holds
 * it, so that a line glued to a JSON line (and so dropped from @p lines)
 * shows how it was glued.
 */
static inline void ru_diag_app_differs(const char *alone, const char *lines, const char *traced)
{
	const char *l = alone;

	if (lines && !strcmp(lines, alone))
		return;
	ru_diag("app alone", alone, 40);
	ru_diag("app lines under gbpf", lines ? lines : "(none)", 40);
	printf("# where the app's lines are in gbpf's stdout (%zu bytes):\n", strlen(traced));
	while (*l) {
		const char *nl = strchr(l, '\n');
		size_t len = nl ? (size_t)(nl - l) : strlen(l);
		char want[256];
		const char *at, *start, *end;

		snprintf(want, sizeof(want), "%.*s", (int)(len < sizeof(want) - 1 ? len : sizeof(want) - 1), l);
		l += len + (nl ? 1 : 0);
		if (!want[0])
			continue;
		at = strstr(traced, want);
		if (!at) {
			printf("#   missing: %s\n", want);
			continue;
		}
		for (start = at; start > traced && start[-1] != '\n'; start--)
			;
		end = strchr(at, '\n');
		if (!end)
			end = at + strlen(at);
		/* The raw line, its start cut to the last 160 bytes before the app's text. */
		printf("#   %s%.*s%s\n", at - start > 160 ? "..." : "",
		       (int)(end - (at - start > 160 ? at - 160 : start)), at - start > 160 ? at - 160 : start,
		       *end ? "" : " (no newline)");
	}
}

#endif
