/* SPDX-License-Identifier: MIT */
/*
 * tests/reliability/test_regressions.c - replays every file of a
 * regression folder (inputs that once crashed a fuzz target, and edge
 * cases kept on purpose) through the target's LLVMFuzzerTestOneInput,
 * built WITHOUT libFuzzer, so the suite 'reliability' runs them in every
 * build. Each input runs in a child: a crash is one failing check that
 * names the file, not the end of the test.
 * A file named "todo-*" reproduces a bug that is not fixed yet: its check
 * is marked TODO (an expected failure); once it passes, meson reports an
 * unexpected pass, and the file is renamed to drop the prefix.
 * argv: FOLDER (a missing or empty folder is a skip).
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define REPLAY_MAX_BYTES (4u << 20)

static int cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void replay(const char *dir, const char *name)
{
	char path[4096];
	uint8_t *buf;
	size_t n;
	FILE *f;
	pid_t pid;
	int st = 0, todo;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "rb");
	buf = malloc(REPLAY_MAX_BYTES);
	if (!f || !buf) {
		tap_ok(0, "%s: cannot read", path);
		if (f)
			fclose(f);
		free(buf);
		return;
	}
	n = fread(buf, 1, REPLAY_MAX_BYTES, f);
	fclose(f);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		LLVMFuzzerTestOneInput(buf, n);
		_exit(0);
	}
	if (pid > 0)
		waitpid(pid, &st, 0);
	todo = !strncmp(name, "todo-", 5);
	if (!tap_ok(pid > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s (%zu bytes) replays cleanly%s%s",
		    name, n, pid > 0 && WIFSIGNALED(st) ? ": crashed" : "",
		    todo ? " # TODO open bug, see regressions/README.md" : "") && todo)
		tap_failed--; /* an expected failure must not fail the program's exit status */
	free(buf);
}

int main(int argc, char **argv)
{
	char **names = NULL;
	size_t cnt = 0;
	struct dirent *e;
	DIR *d;

	if (argc < 2 || !(d = opendir(argv[1]))) {
		tap_skip("regression folder %s absent", argc > 1 ? argv[1] : "(none given)");
		return tap_done();
	}
	while ((e = readdir(d))) {
		char **nn;

		if (e->d_name[0] == '.' || !strcmp(e->d_name, "README.md"))
			continue;
		nn = realloc(names, (cnt + 1) * sizeof(*names));
		if (!nn)
			break;
		names = nn;
		names[cnt++] = strdup(e->d_name);
	}
	closedir(d);
	qsort(names, cnt, sizeof(*names), cmp);
	for (size_t i = 0; i < cnt; i++) {
		if (names[i])
			replay(argv[1], names[i]);
		free(names[i]);
	}
	free(names);
	if (!cnt)
		tap_skip("no regression inputs in %s", argv[1]);
	return tap_done();
}
