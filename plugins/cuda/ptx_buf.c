/* SPDX-License-Identifier: MIT */
#include "ptx_buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int ptx_buf_reserve(struct ptx_buf *b, size_t extra)
{
	size_t need, cap;
	char *p;

	if (b->oom)
		return -1;
	if (extra > PTX_BUF_MAX || b->len + extra + 1 > PTX_BUF_MAX) {
		b->oom = 1;
		return -1;
	}
	need = b->len + extra + 1;
	if (need <= b->cap)
		return 0;
	cap = b->cap ? b->cap : 4096;
	while (cap < need)
		cap *= 2;
	p = realloc(b->p, cap);
	if (!p) {
		b->oom = 1;
		return -1;
	}
	b->p = p;
	b->cap = cap;
	return 0;
}

void ptx_buf_printf(struct ptx_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (ptx_buf_reserve(b, 256))
		return;
	va_start(ap, fmt);
	n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->oom = 1;
		return;
	}
	if ((size_t)n >= b->cap - b->len) {
		/* Rare long line: grow to fit and format again. */
		if (ptx_buf_reserve(b, (size_t)n))
			return;
		va_start(ap, fmt);
		vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
	}
	b->len += (size_t)n;
}

void ptx_buf_puts(struct ptx_buf *b, const char *s)
{
	size_t n = strlen(s);

	if (ptx_buf_reserve(b, n))
		return;
	memcpy(b->p + b->len, s, n + 1);
	b->len += n;
}

void ptx_buf_free(struct ptx_buf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
	b->oom = 0;
}
