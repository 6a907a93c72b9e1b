/* SPDX-License-Identifier: MIT */
/*
 * Test application for `gbpf run`: "launches kernels" through
 * gbpf_test_launch() from several threads, and optionally from a child it
 * forks and execs. Its output depends only on its arguments.
 *
 *   launch_app N THREADS EXIT SLEEP_US MODE
 *   MODE: plain | fork (also a fork+exec'd child doing N launches) |
 *         foreign (also a child that connects to the controller as uid 65534)
 * Launch i of a thread: kernel "kern_a" (i even) or "kern_b" (i odd),
 * grid 1 << (i % 8), block 128.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

unsigned long gbpf_test_launch(const char *kernel, unsigned grid, unsigned block);

static long n_launch;
static long sleep_us;

static void *worker(void *arg)
{
	unsigned long *sum = arg;
	long i;

	for (i = 0; i < n_launch; i++) {
		*sum += gbpf_test_launch(i % 2 ? "kern_b" : "kern_a", 1u << (i % 8), 128);
		if (sleep_us)
			usleep((useconds_t)sleep_us);
	}
	return NULL;
}

/* Connect to the controller as another uid: it must refuse us. */
static void foreign(void)
{
	const char *path = getenv("GBPF_AGENT_SOCK");
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	char c;
	int fd;

	if (!path || strlen(path) >= sizeof(sa.sun_path)) {
		printf("foreign: no socket\n");
		return;
	}
	strcpy(sa.sun_path, path);
	/* euid decides SO_PEERCRED; fsuid 0 still lets us reach the 0700 directory. */
	if (seteuid(65534)) {
		printf("foreign: seteuid failed\n");
		return;
	}
	setfsuid(0);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		printf("foreign: connect failed: %s\n", strerror(errno));
		return;
	}
	printf("foreign: %s\n", read(fd, &c, 1) == 0 ? "refused" : "accepted");
	close(fd);
}

int main(int argc, char **argv)
{
	pthread_t th[16];
	unsigned long sums[16] = {0};
	long threads, i;
	int code;

	if (argc < 6) {
		fprintf(stderr, "usage: %s N THREADS EXIT SLEEP_US MODE\n", argv[0]);
		return 2;
	}
	n_launch = atol(argv[1]);
	threads = atol(argv[2]);
	code = atoi(argv[3]);
	sleep_us = atol(argv[4]);
	if (threads < 1 || threads > 16)
		return 2;
	for (i = 0; i < threads; i++)
		pthread_create(&th[i], NULL, worker, &sums[i]);
	for (i = 0; i < threads; i++) {
		pthread_join(th[i], NULL);
		printf("thread %ld: sum %lu\n", i, sums[i]);
	}
	fflush(stdout);
	if (strcmp(argv[4 + 1], "fork") == 0) {
		pid_t pid = fork();
		int st = 0;

		if (pid == 0) {
			execl("/proc/self/exe", argv[0], argv[1], "1", "0", argv[4], "plain",
			      (char *)NULL);
			_exit(127);
		}
		waitpid(pid, &st, 0);
		printf("child: status %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	} else if (strcmp(argv[5], "foreign") == 0) {
		pid_t pid = fork();

		if (pid == 0) {
			foreign();
			fflush(stdout);
			_exit(0);
		}
		waitpid(pid, NULL, 0);
	}
	printf("done\n");
	return code;
}
