/* SPDX-License-Identifier: MIT */
/*
 * tests/levelzero/ze_run.h - run a command with extra environment variables
 * and capture its output, for the levelzero tests.
 */
#ifndef GBPF_TESTS_ZE_RUN_H
#define GBPF_TESTS_ZE_RUN_H

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ZE_RUN_OUT_MAX (8u << 20) /* 7168 ring records in JSON are over 1 MiB */

/** Output and status of one command. */
struct ze_run {
	char *out;  /**< stdout and stderr interleaved, NUL-terminated (truncated at 8 MiB) */
	size_t len;
	int status; /**< exit status, 128 + signal, or -1 when it could not run / timed out */
};

/**
 * Run argv (argv[0] a path) with @p env ("NAME=value" entries added to, or
 * replacing, the environment; "NAME=" with nothing after unsets NAME),
 * killed after @p timeout_s seconds.
 */
static inline void ze_run(struct ze_run *r, char *const *argv, char *const *env, int timeout_s)
{
	int fds[2], st = 0;
	pid_t pid;
	time_t end = time(NULL) + timeout_s;

	memset(r, 0, sizeof(*r));
	r->status = -1;
	r->out = calloc(1, ZE_RUN_OUT_MAX + 1);
	if (!r->out || pipe(fds))
		return;
	pid = fork();
	if (pid < 0)
		return;
	if (pid == 0) {
		dup2(fds[1], 1);
		dup2(fds[1], 2);
		close(fds[0]);
		close(fds[1]);
		for (; env && *env; env++) {
			char name[256];
			const char *eq = strchr(*env, '=');
			size_t n = eq ? (size_t)(eq - *env) : 0;

			if (!eq || n >= sizeof(name))
				continue;
			memcpy(name, *env, n);
			name[n] = 0;
			if (eq[1])
				setenv(name, eq + 1, 1);
			else
				unsetenv(name);
		}
		execv(argv[0], argv);
		_exit(127);
	}
	close(fds[1]);
	for (;;) {
		struct pollfd p = {.fd = fds[0], .events = POLLIN};
		ssize_t n;

		if (time(NULL) > end) {
			kill(pid, SIGKILL);
			break;
		}
		if (poll(&p, 1, 200) <= 0)
			continue;
		if (r->len < ZE_RUN_OUT_MAX)
			n = read(fds[0], r->out + r->len, ZE_RUN_OUT_MAX - r->len);
		else {
			char sink[4096];

			n = read(fds[0], sink, sizeof(sink));
		}
		if (n <= 0)
			break;
		if (r->len < ZE_RUN_OUT_MAX)
			r->len += (size_t)n;
	}
	close(fds[0]);
	if (waitpid(pid, &st, 0) == pid && time(NULL) <= end)
		r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	r->out[r->len] = 0;
}

/** Print the captured output as TAP diagnostics (after a failed check). */
static inline void ze_run_diag(const struct ze_run *r)
{
	const char *p = r->out ? r->out : "";

	while (*p) {
		const char *nl = strchr(p, '\n');
		int n = nl ? (int)(nl - p) : (int)strlen(p);

		printf("#   | %.*s\n", n, p);
		p += n + (nl ? 1 : 0);
	}
}

static inline void ze_run_free(struct ze_run *r)
{
	free(r->out);
	r->out = NULL;
}

#endif /* GBPF_TESTS_ZE_RUN_H */
