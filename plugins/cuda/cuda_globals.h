/* SPDX-License-Identifier: MIT */
/*
 * plugins/cuda/cuda_globals.h - the application's module variables
 * (__device__, __constant__) mirrored around instrumented launches. An
 * instrumented kernel runs in a module of its own, which has its own copy
 * of every module-scope variable: each launch copies the app's values in
 * before and the kernel's writes back after, on the launch's stream.
 */
#ifndef GBPF_CUDA_GLOBALS_H
#define GBPF_CUDA_GLOBALS_H

#include <stddef.h>

#include "plugins/cuda/intercept/intercept.h"

/** A variable of the app's module and its copy in the instrumented module. */
struct ca_global {
	CUdeviceptr orig, inst;
	size_t size;
	int is_const; /* kernels cannot write it: no copy back */
};

/** cuMemcpyDtoDAsync (or its per-thread default stream variant). */
typedef CUresult (*ca_d2d_async_fn)(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream st);

/**
 * Append to *v (*n entries, realloc'ed) each module-scope variable the
 * instrumented module @p inst_mod defines (from its text @p ptx) that the
 * launch's own module or library defines with the same size.
 * @param not_mirrored  told of each variable larger than what is mirrored (may be NULL)
 */
void ca_globals_collect(struct ca_global **v, size_t *n, CUmodule inst_mod, const struct gbpf_cu_launch *l,
			const char *ptx, void (*not_mirrored)(void *arg, const char *var, size_t bytes), void *arg);

/** Copy the app's values in (@p to = 1, before a launch) or the kernel's writes back (0, after). */
void ca_globals_sync(ca_d2d_async_fn d2d, const struct ca_global *v, size_t n, CUstream stream, int to);

#endif
