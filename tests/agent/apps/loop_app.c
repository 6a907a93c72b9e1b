/* SPDX-License-Identifier: MIT */
/*
 * A long-running test application for `gbpf attach`: it "launches kernels"
 * through gbpf_test_launch() when told to on stdin, so a test knows exactly
 * how many launches happened while probes were attached. Its output depends
 * only on its input.
 *
 *   loop_app            read commands from stdin, one per line:
 *                         launch N   N launches, then "launched N sum S"
 *                         spawn N    fork + exec `loop_app --batch N`, wait,
 *                                    then "child status X"
 *                         quit       exit 0
 *   loop_app --batch N  N launches, "batch N sum S", exit
 * Launch i of a command: kernel "kern_a" (i even) or "kern_b" (i odd),
 * grid 1 << (i % 8), block 128.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

unsigned long gbpf_test_launch(const char *kernel, unsigned grid, unsigned block);

static unsigned long launches(long n)
{
	unsigned long sum = 0;
	long i;

	for (i = 0; i < n; i++)
		sum += gbpf_test_launch(i % 2 ? "kern_b" : "kern_a", 1u << (i % 8), 128);
	return sum;
}

int main(int argc, char **argv)
{
	char line[128];

	if (argc == 3 && !strcmp(argv[1], "--batch")) {
		long n = atol(argv[2]);

		printf("batch %ld sum %lu\n", n, launches(n));
		return 0;
	}
	printf("ready pid %d\n", (int)getpid());
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		long n = 0;

		if (sscanf(line, "launch %ld", &n) == 1 && n >= 0 && n <= 1000000) {
			printf("launched %ld sum %lu\n", n, launches(n));
		} else if (sscanf(line, "spawn %ld", &n) == 1 && n >= 0 && n <= 1000000) {
			char arg[32];
			pid_t pid;
			int st = 0;

			snprintf(arg, sizeof(arg), "%ld", n);
			fflush(stdout);
			pid = fork();
			if (pid == 0) {
				execl("/proc/self/exe", argv[0], "--batch", arg, (char *)NULL);
				_exit(127);
			}
			waitpid(pid, &st, 0);
			printf("child status %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
		} else if (!strncmp(line, "quit", 4)) {
			break;
		} else {
			printf("unknown command\n");
		}
		fflush(stdout);
	}
	return 0;
}
