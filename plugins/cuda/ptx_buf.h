/* SPDX-License-Identifier: MIT */
/*
 * plugins/cuda/ptx_buf.h - growable text buffer for the PTX emitter.
 *
 * Appends never fail visibly: the first allocation failure is latched in
 * @c oom and every later append is a no-op, so the emitter checks once at
 * the end instead of after every line.
 */
#ifndef GBPF_CUDA_PTX_BUF_H
#define GBPF_CUDA_PTX_BUF_H

#include <stddef.h>

/** A NUL-terminated, malloc'ed text being built. Zero-initialise. */
struct ptx_buf {
	char *p;    /**< text (NULL until the first append) */
	size_t len; /**< bytes used, without the NUL */
	size_t cap; /**< bytes allocated */
	int oom;    /**< set when an allocation failed or the text grew past the limit */
};

/** Largest text the emitter produces (guards against runaway input). */
#define PTX_BUF_MAX ((size_t)256 << 20)

/** Append formatted text. */
void ptx_buf_printf(struct ptx_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/** Append a NUL-terminated string. */
void ptx_buf_puts(struct ptx_buf *b, const char *s);
/** Free the text. */
void ptx_buf_free(struct ptx_buf *b);

#endif /* GBPF_CUDA_PTX_BUF_H */
