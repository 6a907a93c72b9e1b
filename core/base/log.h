/* SPDX-License-Identifier: MIT */
/* core/log.h - internal logging through the callback of gbpf_set_print(). */
#ifndef GBPF_CORE_LOG_H
#define GBPF_CORE_LOG_H

#include <stdarg.h>

#include <gbpf/gbpf.h>

void gbpf_log(enum gbpf_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void gbpf_vlog(enum gbpf_log_level level, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

#define gbpf_warn(...) gbpf_log(GBPF_LOG_WARN, __VA_ARGS__)
#define gbpf_info(...) gbpf_log(GBPF_LOG_INFO, __VA_ARGS__)
#define gbpf_debug(...) gbpf_log(GBPF_LOG_DEBUG, __VA_ARGS__)

/** Services table handed to plugins: routes their messages to gbpf_vlog. */
const struct gbpf_host_services *gbpf_core_services(void);

#endif
