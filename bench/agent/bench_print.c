/* SPDX-License-Identifier: MIT */
/*
 * bench/agent/bench_print.c - latency of one probe print line from the
 * moment a plugin hands it to the agent (services->print) to the moment a
 * reader of gbpf's stdout has it: agent -> socket -> controller -> stdout,
 * the host half of the GPU -> user printk path (#8 target: 10 us end to end).
 *
 * `gbpf run --backend hosttest` runs the test app with the test backend,
 * whose print thread (GBPF_HOSTTEST_PRINT_TS=N:PERIOD_US) passes lines
 * "gbpf-ts SEQ NS" with NS = CLOCK_MONOTONIC at the hand-over, as a GPU
 * backend's print-queue thread does. We read gbpf's stdout as it comes and
 * take CLOCK_MONOTONIC on arrival. Two modes in one run:
 *   queued: GBPF_AGENT_PRINT_DIRECT=0, every line through the agent's
 *           sender thread (the path before direct prints);
 *   direct: the caller writes the frame itself when nothing is queued.
 * Output: median, p90, p99 and max per mode, and the ratio of medians.
 * argv: GBPF APP HOSTTEST_PLUGIN OBJ [LINES [PERIOD_US]]
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

struct stats {
	size_t n;
	double p50, p90, p99, max; /* microseconds */
};

/* One `gbpf run`; latencies of every "gbpf-ts" line into @p lat (room for @p lines). */
static int run_mode(char *const *argv, int direct, long lines, long period_us, uint64_t *lat,
		    struct stats *st)
{
	char spec[64], buf[65536];
	size_t have = 0, n = 0;
	int pfd[2], status = 0;
	pid_t pid;

	if (pipe(pfd))
		return -errno;
	snprintf(spec, sizeof(spec), "%ld:%ld", lines, period_us);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		dup2(pfd[1], 1);
		close(pfd[0]);
		close(pfd[1]);
		setenv("GBPF_HOSTTEST_PRINT_TS", spec, 1);
		setenv("GBPF_AGENT_PRINT_DIRECT", direct ? "1" : "0", 1);
		execv(argv[0], argv);
		_exit(127);
	}
	close(pfd[1]);
	for (;;) {
		ssize_t r = read(pfd[0], buf + have, sizeof(buf) - 1 - have);
		uint64_t now = mono_ns();
		char *l, *nl;

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		have += (size_t)r;
		buf[have] = 0;
		for (l = buf; (nl = strchr(l, '\n')); l = nl + 1) {
			unsigned long long seq, ts;

			*nl = 0;
			if (sscanf(l, "gbpf-ts %llu %llu", &seq, &ts) == 2 && n < (size_t)lines &&
			    ts <= now)
				lat[n++] = now - ts;
		}
		have = (size_t)(buf + have - l);
		memmove(buf, l, have);
		if (have == sizeof(buf) - 1)
			have = 0; /* a line that long is not ours */
	}
	close(pfd[0]);
	waitpid(pid, &status, 0);
	memset(st, 0, sizeof(*st));
	st->n = n;
	if (!n)
		return -ENODATA;
	qsort(lat, n, sizeof(*lat), cmp_u64);
	st->p50 = lat[n / 2] / 1e3;
	st->p90 = lat[n * 90 / 100] / 1e3;
	st->p99 = lat[n * 99 / 100 < n ? n * 99 / 100 : n - 1] / 1e3;
	st->max = lat[n - 1] / 1e3;
	return 0;
}

int main(int argc, char **argv)
{
	long lines = argc > 5 ? atol(argv[5]) : 2000, period_us = argc > 6 ? atol(argv[6]) : 500;
	char app_sleep[32];
	struct stats st[2];
	uint64_t *lat;
	int mode, err;

	if (argc < 5) {
		fprintf(stderr, "usage: %s GBPF APP HOSTTEST_PLUGIN OBJ [LINES [PERIOD_US]]\n", argv[0]);
		return 2;
	}
	if (lines < 10 || lines > 1000000 || period_us < 0 || period_us > 100000) {
		fprintf(stderr, "bench_print: LINES in [10, 1000000], PERIOD_US in [0, 100000]\n");
		return 2;
	}
	lat = calloc((size_t)lines, sizeof(*lat));
	if (!lat)
		return 1;
	/* The app lives while the lines are printed: two launches, each followed by half the time. */
	snprintf(app_sleep, sizeof(app_sleep), "%ld", (lines * (period_us + 60) + 400000) / 2);
	setenv("GBPF_PLUGIN_PATH", argv[3], 1);
	{
		char *run_argv[] = {argv[1], "run", "--backend", "hosttest", argv[4], "--", argv[2],
				    "2", "1", "0", app_sleep, "plain", NULL};

		for (mode = 0; mode < 2; mode++) {
			err = run_mode(run_argv, mode, lines, period_us, lat, &st[mode]);
			if (err) {
				fprintf(stderr, "bench_print: %s mode: no line arrived (%s)\n",
					mode ? "direct" : "queued", strerror(-err));
				free(lat);
				return 1;
			}
		}
	}
	printf("print -> gbpf stdout reader, %ld lines, one every %ld us (CLOCK_MONOTONIC)\n", lines,
	       period_us);
	printf("%-8s %8s %10s %10s %10s %10s\n", "mode", "lines", "median_us", "p90_us", "p99_us",
	       "max_us");
	for (mode = 0; mode < 2; mode++)
		printf("%-8s %8zu %10.1f %10.1f %10.1f %10.1f\n", mode ? "direct" : "queued",
		       st[mode].n, st[mode].p50, st[mode].p90, st[mode].p99, st[mode].max);
	printf("median direct/queued: %.2fx\n", st[1].p50 / st[0].p50);
	free(lat);
	return st[0].n == (size_t)lines && st[1].n == (size_t)lines ? 0 : 1;
}
