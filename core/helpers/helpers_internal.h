/* SPDX-License-Identifier: MIT */
/*
 * core/helpers/helpers_internal.h - shared by the host helper files only.
 */
#ifndef GBPF_CORE_HELPERS_INTERNAL_H
#define GBPF_CORE_HELPERS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/helpers/host_helpers.h"

/* Longest text one trace_printk / puts call produces (longer is truncated). */
#define HELPER_TEXT_MAX 512
/* Longest string argument read for %s / puts. */
#define HELPER_STR_MAX 256

/* True when the program may read [addr, addr+size) (size 0 is always fine). */
bool gbpf_hh_can_read(struct gbpf_exec_env *env, uint64_t addr, uint64_t size);
/* True when the program may write [addr, addr+size). */
bool gbpf_hh_can_write(struct gbpf_exec_env *env, uint64_t addr, uint64_t size);

/*
 * Copy the NUL-terminated string at @p addr (read through access_ok, at
 * most out_size - 1 bytes) into out. Returns its length, or -EFAULT if its
 * first byte cannot be read (out is then "").
 */
int gbpf_hh_read_str(struct gbpf_exec_env *env, uint64_t addr, char *out, size_t out_size);

/* Send text to env->print or stderr. */
void gbpf_hh_emit(struct gbpf_exec_env *env, const char *text, size_t len);

/*
 * Format like bpf_trace_printk: the format (fmt_size bytes at fmt, NUL
 * within them) is read through access_ok; conversions %d %i %u %x %ld %li
 * %lu %lx %lld %lli %llu %llx %p %s %c %%, at most 3 taking arguments.
 * Returns the text's length or -EINVAL / -EFAULT.
 */
int gbpf_hh_format(struct gbpf_exec_env *env, uint64_t fmt, uint64_t fmt_size,
		   const uint64_t args[3], char *out, size_t out_size);

#endif /* GBPF_CORE_HELPERS_INTERNAL_H */
