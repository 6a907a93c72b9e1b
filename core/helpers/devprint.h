/* SPDX-License-Identifier: MIT */
/*
 * core/helpers/devprint.h - host formatting of device print records whose
 * printk format has %s conversions (the strings travel in the record).
 */
#ifndef GBPF_CORE_HELPERS_DEVPRINT_H
#define GBPF_CORE_HELPERS_DEVPRINT_H

#include <stddef.h>
#include <stdint.h>

/**
 * Bit k set when argument k (k < 3) of printk format @p fmt (@p len bytes,
 * stops at a NUL) is a %s conversion, parsed exactly as the printk helper
 * parses formats ('%%', up to two 'l', one conversion character). Device
 * code marks the same arguments (plugins/cuda/cuda_printq_ptx.c).
 */
uint32_t gbpf_printk_str_args(const char *fmt, size_t len);

/**
 * Format a device printk whose %s strings were copied into its record:
 * @p fmt (@p fmt_len bytes, no NUL needed) and, in @p strs (@p strs_len
 * bytes), one NUL-terminated string per %s argument in order; a string
 * that starts at or beyond @p strs_len, or has no NUL within it, is taken
 * up to the end (empty when it starts beyond). The other arguments are in
 * @p args. The printk helper formats it as on the interpreter.
 * @return the length written to @p out (NUL-terminated), or a negative
 *         errno (-EINVAL for bad arguments or a format the helper rejects)
 */
int gbpf_format_device_printk_strs(const char *fmt, size_t fmt_len, const char *strs, size_t strs_len,
				   const uint64_t args[3], char *out, size_t out_size);

#endif /* GBPF_CORE_HELPERS_DEVPRINT_H */
