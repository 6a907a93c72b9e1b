/* SPDX-License-Identifier: MIT */
/*
 * tests/tap.h - minimal TAP producer for gbpf's test programs.
 *
 * Each check prints "ok N - name" or "not ok N - name"; tap_done() prints
 * the plan and returns the exit status. meson runs the tests with
 * protocol 'tap' and counts every check.
 */
#ifndef GBPF_TESTS_TAP_H
#define GBPF_TESTS_TAP_H

#include <stdarg.h>
#include <stdio.h>

static int tap_count;
static int tap_failed;

/*
 * A check's name on one line: names often quote an error message or a
 * tool's output, whose newlines would make TAP lines the harness cannot
 * parse (meson warns "Unknown TAP output lines").
 */
static inline __attribute__((format(printf, 1, 0))) void tap_vprint_line(const char *fmt, va_list ap)
{
	char buf[2048];

	vsnprintf(buf, sizeof(buf), fmt, ap);
	for (char *c = buf; *c; c++)
		if (*c == '\n' || *c == '\r')
			*c = ' ';
	fputs(buf, stdout);
}

static inline __attribute__((format(printf, 2, 3))) int tap_ok(int cond, const char *fmt, ...)
{
	va_list ap;

	tap_count++;
	if (!cond)
		tap_failed++;
	printf("%sok %d - ", cond ? "" : "not ", tap_count);
	va_start(ap, fmt);
	tap_vprint_line(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	return cond;
}

/** Report a skipped check with a reason. */
static inline __attribute__((format(printf, 1, 2))) void tap_skip(const char *fmt, ...)
{
	va_list ap;

	tap_count++;
	printf("ok %d # SKIP ", tap_count);
	va_start(ap, fmt);
	tap_vprint_line(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

/** Free-form diagnostic line. */
#define tap_diag(...) (printf("# "), printf(__VA_ARGS__), printf("\n"))

/** Print the plan; return value for main(). */
static inline int tap_done(void)
{
	if (tap_count == 0) {
		printf("1..0 # SKIP no checks ran\n");
		return 0;
	}
	printf("1..%d\n", tap_count);
	return tap_failed ? 1 : 0;
}

#endif /* GBPF_TESTS_TAP_H */
