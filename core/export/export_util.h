/* SPDX-License-Identifier: MIT */
/* core/export/export_util.h - small helpers the writers of core/export share. */
#ifndef GBPF_CORE_EXPORT_UTIL_H
#define GBPF_CORE_EXPORT_UTIL_H

#include <stddef.h>
#include <stdio.h>

/** Write @p s as a JSON string (quotes included), escaping as RFC 8259 requires. */
void gbpf_json_str(FILE *f, const char *s);

/** Growable text buffer (bounded by @c max); the first failure sticks in @c err. */
struct gbpf_sbuf {
	char *p;
	size_t len, cap, max;
	int err;
};

/** Append formatted text. */
void gbpf_sbuf_printf(struct gbpf_sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/** Append @p s as a JSON string. */
void gbpf_sbuf_json_str(struct gbpf_sbuf *b, const char *s);
void gbpf_sbuf_free(struct gbpf_sbuf *b);

#endif
