/* SPDX-License-Identifier: MIT */
/*
 * tests/opencl/ocl_test_util.h - running the gbpf command (and tools) from
 * the opencl tests and reading what they printed.
 */
#ifndef GBPF_TESTS_OCL_TEST_UTIL_H
#define GBPF_TESTS_OCL_TEST_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "tap.h"

/** Output of one command: stdout up to 8 MiB (7168 ring records are ~1 MiB), stderr up to 1 MiB. */
struct cmd_out {
	char out[8 << 20];
	char err[1 << 20];
	int status; /* exit status, 128 + signal when killed */
};

static inline void ocl_slurp(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");
	size_t n = 0;

	buf[0] = 0;
	if (!f)
		return;
	n = fread(buf, 1, size - 1, f);
	buf[n] = 0;
	fclose(f);
}

/**
 * Run a shell command line with stdout and stderr captured through files
 * in @p dir; fills @p o.
 */
static inline int ocl_run(const char *dir, struct cmd_out *o, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static inline int ocl_run(const char *dir, struct cmd_out *o, const char *fmt, ...)
{
	char cmd[8192], full[9000], path[1024];
	va_list ap;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	snprintf(full, sizeof(full), "( %s ) > '%s/out' 2> '%s/err'", cmd, dir, dir);
	st = system(full);
	snprintf(path, sizeof(path), "%s/out", dir);
	ocl_slurp(path, o->out, sizeof(o->out));
	snprintf(path, sizeof(path), "%s/err", dir);
	ocl_slurp(path, o->err, sizeof(o->err));
	o->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
	return o->status;
}

/** Print up to @p max lines of @p buf as TAP diagnostics. */
static inline void ocl_diag(const char *what, const char *buf, int max)
{
	const char *p = buf;

	for (int n = 0; *p && n < max; n++) {
		const char *e = strchr(p, '\n');
		int len = e ? (int)(e - p) : (int)strlen(p);

		tap_diag("%s: %.*s", what, len, p);
		p += len + (e ? 1 : 0);
	}
}

/** Occurrences of @p needle in @p hay. */
static inline int ocl_count(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

#endif
