/* SPDX-License-Identifier: MIT */
#include "core/base/log.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The one print callback of the process, as libbpf_set_print; atomic so
 * that a plugin thread logging while the CLI swaps it sees either one. */
static int default_print(enum gbpf_log_level level, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));
static _Atomic(gbpf_print_fn_t) gbpf_print_callback = default_print;

static int default_print(enum gbpf_log_level level, const char *fmt, va_list ap)
{
	const char *env = getenv("GBPF_LOG_LEVEL");

	if (level == GBPF_LOG_DEBUG && !(env && strcmp(env, "debug") == 0))
		return 0;
	return vfprintf(stderr, fmt, ap);
}

gbpf_print_fn_t gbpf_set_print(gbpf_print_fn_t fn)
{
	return atomic_exchange(&gbpf_print_callback, fn);
}

void gbpf_vlog(enum gbpf_log_level level, const char *fmt, va_list ap)
{
	gbpf_print_fn_t fn = atomic_load(&gbpf_print_callback);
	int saved = errno;

	if (fn)
		fn(level, fmt, ap);
	errno = saved;
}

void gbpf_log(enum gbpf_log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	gbpf_vlog(level, fmt, ap);
	va_end(ap);
}

static __attribute__((format(printf, 3, 0))) void services_vlog(void *ctx, enum gbpf_log_level level,
							      const char *fmt, va_list ap)
{
	(void)ctx;
	gbpf_vlog(level, fmt, ap);
}

const struct gbpf_host_services *gbpf_core_services(void)
{
	static const struct gbpf_host_services services = {
		.sz = sizeof(services),
		.vlog = services_vlog,
	};
	return &services;
}

const char *gbpf_version(void)
{
	return GBPF_VERSION_STRING;
}
