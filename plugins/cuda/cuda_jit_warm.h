/* SPDX-License-Identifier: MIT */
/*
 * plugins/cuda/cuda_jit_warm.h - loading the driver's PTX JIT compiler
 * while the application starts, not at its first instrumented launch.
 *
 * The driver loads its PTX compiler library (libnvidia-ptxjitcompiler) at
 * the first PTX module of the process, and only PTX needs it: an
 * application built for its GPU never does, so without gbpf that load is
 * not part of its life at all. The first instrumented launch paid for it
 * inside its module load: 16.5 ms against 9.9 ms for the second kernel of
 * the same run, whose module is as small (H200, docs/BENCHMARKS.md, session
 * 29). The agent loads the library on a thread of its own when it attaches,
 * while the application initialises CUDA; the driver's own load then finds
 * it in the process. Loading a library runs no CUDA call and touches no
 * context; where it is missing or fails, nothing changes but the time.
 * GBPF_CUDA_NO_JIT_WARM=1 leaves it to the driver (comparisons).
 */
#ifndef GBPF_CUDA_JIT_WARM_H
#define GBPF_CUDA_JIT_WARM_H

#include <pthread.h>
#include <stdbool.h>

/** The loader thread and what it loaded (zero-initialised: nothing started). */
struct ca_jit_warm {
	pthread_t thread;
	bool started;
	void *lib; /* the library's handle, kept while attached (NULL: not found) */
};

/** Start loading the JIT compiler library; returns at once. */
void ca_jit_warm_start(struct ca_jit_warm *w);

/** Wait for the loader and let the library go (the driver keeps its own reference if it took one). */
void ca_jit_warm_stop(struct ca_jit_warm *w);

#endif /* GBPF_CUDA_JIT_WARM_H */
