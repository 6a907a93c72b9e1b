/* SPDX-License-Identifier: MIT */
/*
 * bench/agent/bench_print.c - latency of one probe print line from the
 * moment a plugin hands it to the agent (services->print) to the moment a
 * reader of gbpf's stdout has it: agent -> print ring (or socket) ->
 * controller -> stdout, the host half of the GPU -> user printk path (#8
 * target: 10 us end to end).
 *
 * `gbpf run --backend hosttest` runs the test app with the test backend,
 * whose print thread (GBPF_HOSTTEST_PRINT_TS=N:PERIOD_US) passes lines
 * "gbpf-ts SEQ NS" with NS = CLOCK_MONOTONIC at the hand-over, as a GPU
 * backend's print-queue thread does. We read gbpf's stdout as it comes and
 * take CLOCK_MONOTONIC on arrival; gbpf runs with -j, whose "ts_ns" is the
 * controller's receipt (CLOCK_REALTIME, converted with the offset of the
 * two clocks measured here): the point the device benchmark
 * (bench/cuda/run.sh, printk row) measures to. Three modes in one run:
 *   queued:  GBPF_AGENT_PRINT_DIRECT=0, every line through the agent's
 *            sender thread and the socket (the path before direct prints);
 *   direct:  the caller writes the line into the agent's print ring
 *            (core/agent/print_ring.h; before session 19 a socket frame),
 *            the controller blocks in poll() and is woken by a WAKE frame
 *            (GBPF_RUN_SPIN_US=0);
 *   spin:    the ring, and the controller busy-polls while lines flow (the
 *            default, tools/run_loop.c).
 * Output: median, p90, p99 and max per mode, at the controller's receipt
 * and at the reader, and the ratio of the receipt medians spin/direct.
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

/* CLOCK_REALTIME - CLOCK_MONOTONIC in ns (the midpoint of two monotonic reads). */
static int64_t real_minus_mono(void)
{
	struct timespec a, r, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	clock_gettime(CLOCK_REALTIME, &r);
	clock_gettime(CLOCK_MONOTONIC, &b);
	return ((int64_t)r.tv_sec * 1000000000 + r.tv_nsec) -
	       (((int64_t)a.tv_sec * 1000000000 + a.tv_nsec) + ((int64_t)b.tv_sec * 1000000000 + b.tv_nsec)) / 2;
}

static void stats_of(uint64_t *lat, size_t n, struct stats *st)
{
	memset(st, 0, sizeof(*st));
	st->n = n;
	if (!n)
		return;
	qsort(lat, n, sizeof(*lat), cmp_u64);
	st->p50 = lat[n / 2] / 1e3;
	st->p90 = lat[n * 90 / 100] / 1e3;
	st->p99 = lat[n * 99 / 100 < n ? n * 99 / 100 : n - 1] / 1e3;
	st->max = lat[n - 1] / 1e3;
}

static const char *const mode_name[3] = {"queued", "direct", "spin"};

/*
 * One `gbpf -j run` in @p mode (0 queued, 1 direct, 2 spin); latencies of
 * every "gbpf-ts" line at the reader into @p lat and at the controller's
 * receipt into @p rlat (room for @p lines each).
 */
static int run_mode(char *const *argv, int mode, long lines, long period_us, uint64_t *lat,
		    uint64_t *rlat, struct stats *st, struct stats *rst)
{
	char spec[64], buf[65536];
	size_t have = 0, n = 0, rn = 0;
	int pfd[2], status = 0;
	int64_t off = real_minus_mono();
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
		setenv("GBPF_AGENT_PRINT_DIRECT", mode ? "1" : "0", 1);
		if (mode == 1)
			setenv("GBPF_RUN_SPIN_US", "0", 1);
		else
			unsetenv("GBPF_RUN_SPIN_US");
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
			long long rts;
			const char *m = strstr(l, "gbpf-ts "), *t = strstr(l, "\"ts_ns\":");

			*nl = 0;
			if (!m || sscanf(m, "gbpf-ts %llu %llu", &seq, &ts) != 2)
				continue;
			if (n < (size_t)lines && ts <= now)
				lat[n++] = now - ts;
			if (t && sscanf(t + 8, "%lld", &rts) == 1 && rn < (size_t)lines &&
			    rts - off >= (long long)ts)
				rlat[rn++] = (uint64_t)(rts - off - (long long)ts);
		}
		have = (size_t)(buf + have - l);
		memmove(buf, l, have);
		if (have == sizeof(buf) - 1)
			have = 0; /* a line that long is not ours */
	}
	close(pfd[0]);
	waitpid(pid, &status, 0);
	stats_of(lat, n, st);
	stats_of(rlat, rn, rst);
	return n ? 0 : -ENODATA;
}

int main(int argc, char **argv)
{
	long lines = argc > 5 ? atol(argv[5]) : 2000, period_us = argc > 6 ? atol(argv[6]) : 500;
	char app_sleep[32];
	struct stats st[3], rst[3];
	uint64_t *lat, *rlat;
	int mode, err, ok = 1;

	if (argc < 5) {
		fprintf(stderr, "usage: %s GBPF APP HOSTTEST_PLUGIN OBJ [LINES [PERIOD_US]]\n", argv[0]);
		return 2;
	}
	if (lines < 10 || lines > 1000000 || period_us < 0 || period_us > 100000) {
		fprintf(stderr, "bench_print: LINES in [10, 1000000], PERIOD_US in [0, 100000]\n");
		return 2;
	}
	lat = calloc((size_t)lines, sizeof(*lat));
	rlat = calloc((size_t)lines, sizeof(*rlat));
	if (!lat || !rlat)
		return 1;
	/* The app lives while the lines are printed: two launches, each followed by half the time. */
	snprintf(app_sleep, sizeof(app_sleep), "%ld", (lines * (period_us + 60) + 400000) / 2);
	setenv("GBPF_PLUGIN_PATH", argv[3], 1);
	{
		char *run_argv[] = {argv[1], "-j", "run", "--backend", "hosttest", argv[4], "--", argv[2],
				    "2", "1", "0", app_sleep, "plain", NULL};

		for (mode = 0; mode < 3; mode++) {
			err = run_mode(run_argv, mode, lines, period_us, lat, rlat, &st[mode], &rst[mode]);
			if (err) {
				fprintf(stderr, "bench_print: %s mode: no line arrived (%s)\n", mode_name[mode],
					strerror(-err));
				free(lat);
				free(rlat);
				return 1;
			}
			ok &= st[mode].n == (size_t)lines && rst[mode].n == (size_t)lines;
		}
	}
	printf("print -> gbpf controller's receipt (ts_ns) and -> gbpf stdout reader, %ld lines, one every %ld us\n",
	       lines, period_us);
	printf("%-7s %6s | %9s %8s %8s %8s | %9s %8s %8s\n", "mode", "lines", "recv_p50", "recv_p90",
	       "recv_p99", "recv_max", "read_p50", "read_p99", "read_max");
	for (mode = 0; mode < 3; mode++)
		printf("%-7s %6zu | %9.1f %8.1f %8.1f %8.1f | %9.1f %8.1f %8.1f\n", mode_name[mode], st[mode].n,
		       rst[mode].p50, rst[mode].p90, rst[mode].p99, rst[mode].max, st[mode].p50, st[mode].p99,
		       st[mode].max);
	printf("receipt median spin/direct: %.2fx (microseconds, CLOCK_MONOTONIC at the hand-over)\n",
	       rst[2].p50 / rst[1].p50);
	printf("gbpf-bench agent_print recv_p50_us=%.1f recv_p99_us=%.1f direct_recv_p50_us=%.1f\n", rst[2].p50,
	       rst[2].p99, rst[1].p50);
	free(lat);
	free(rlat);
	return ok ? 0 : 1;
}
