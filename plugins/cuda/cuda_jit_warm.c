// SPDX-License-Identifier: MIT
/* plugins/cuda/cuda_jit_warm.c - see cuda_jit_warm.h */
#include <dlfcn.h>
#include <stdlib.h>

#include "cuda_jit_warm.h"

/* The soname the driver loads (one per driver, beside libcuda.so.1). */
#define CA_JIT_LIB "libnvidia-ptxjitcompiler.so.1"

static void *ca_jit_warm_load(void *arg)
{
	struct ca_jit_warm *w = arg;

	w->lib = dlopen(CA_JIT_LIB, RTLD_NOW | RTLD_LOCAL);
	return NULL;
}

void ca_jit_warm_start(struct ca_jit_warm *w)
{
	if (w->started || getenv("GBPF_CUDA_NO_JIT_WARM"))
		return;
	w->lib = NULL;
	w->started = pthread_create(&w->thread, NULL, ca_jit_warm_load, w) == 0;
}

void ca_jit_warm_stop(struct ca_jit_warm *w)
{
	if (!w->started)
		return;
	pthread_join(w->thread, NULL);
	w->started = false;
	if (w->lib)
		dlclose(w->lib);
	w->lib = NULL;
}
