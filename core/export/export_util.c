/* SPDX-License-Identifier: MIT */
/* Helpers of the export writers: JSON strings, a bounded text buffer. */
#include "core/export/export_util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* Escape into @p out (at least 7 bytes) the character @p c; returns its length. */
static size_t json_escape(unsigned char c, char *out)
{
	switch (c) {
	case '"': return (size_t)sprintf(out, "\\\"");
	case '\\': return (size_t)sprintf(out, "\\\\");
	case '\n': return (size_t)sprintf(out, "\\n");
	case '\r': return (size_t)sprintf(out, "\\r");
	case '\t': return (size_t)sprintf(out, "\\t");
	default:
		if (c < 0x20)
			return (size_t)sprintf(out, "\\u%04x", c);
		out[0] = (char)c;
		out[1] = 0;
		return 1;
	}
}

void gbpf_json_str(FILE *f, const char *s)
{
	char e[8];

	fputc('"', f);
	for (; s && *s; s++) {
		/* Bytes >= 0x80 pass through: names are UTF-8 (or at worst shown as is). */
		json_escape((unsigned char)*s, e);
		fputs(e, f);
	}
	fputc('"', f);
}

static void sbuf_put(struct gbpf_sbuf *b, const char *s, size_t n)
{
	if (b->err)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		char *p;

		while (cap < b->len + n + 1)
			cap *= 2;
		if (b->max && cap > b->max) {
			if (b->len + n + 1 > b->max) {
				b->err = -E2BIG;
				return;
			}
			cap = b->max;
		}
		p = realloc(b->p, cap);
		if (!p) {
			b->err = -ENOMEM;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = 0;
}

void gbpf_sbuf_printf(struct gbpf_sbuf *b, const char *fmt, ...)
{
	char small[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->err = b->err ? b->err : -EINVAL;
		return;
	}
	if ((size_t)n < sizeof(small)) {
		sbuf_put(b, small, (size_t)n);
		return;
	}
	{
		char *big = malloc((size_t)n + 1);

		if (!big) {
			b->err = b->err ? b->err : -ENOMEM;
			return;
		}
		va_start(ap, fmt);
		vsnprintf(big, (size_t)n + 1, fmt, ap);
		va_end(ap);
		sbuf_put(b, big, (size_t)n);
		free(big);
	}
}

void gbpf_sbuf_json_str(struct gbpf_sbuf *b, const char *s)
{
	char e[8];

	sbuf_put(b, "\"", 1);
	for (; s && *s; s++) {
		size_t n = json_escape((unsigned char)*s, e);

		sbuf_put(b, e, n);
	}
	sbuf_put(b, "\"", 1);
}

void gbpf_sbuf_free(struct gbpf_sbuf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}
