/* SPDX-License-Identifier: MIT */
/* The Level Zero loader, dlopen'ed (never linked): see l0_loader.h. */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "l0_loader.h"

int l0_loader_open(struct l0_loader *l, char *why, size_t why_size)
{
	const char *name = getenv("GBPF_ZE_LOADER");

	memset(l, 0, sizeof(*l));
	if (!name || !*name)
		name = "libze_loader.so.1";
	l->handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
	if (!l->handle) {
		snprintf(why, why_size, "Level Zero loader %s not found: %s", name, dlerror());
		return -ENOENT;
	}
#define L0_SYM(f, required)                                                                        \
	do {                                                                                       \
		*(void **)&l->f = dlsym(l->handle, #f);                                            \
		if (!l->f && (required)) {                                                         \
			snprintf(why, why_size, "%s: no symbol %s", name, #f);                     \
			dlclose(l->handle);                                                        \
			l->handle = NULL;                                                          \
			return -ENOENT;                                                            \
		}                                                                                  \
	} while (0)
	L0_SYM(zeInit, 1);
	L0_SYM(zeDriverGet, 1);
	L0_SYM(zeDriverGetExtensionFunctionAddress, 1);
	L0_SYM(zeDeviceGet, 1);
	L0_SYM(zeDeviceGetProperties, 1);
	L0_SYM(zeDeviceGetComputeProperties, 1);
	L0_SYM(zeDeviceGetModuleProperties, 1);
	L0_SYM(zeModuleCreate, 1);
	L0_SYM(zeModuleDestroy, 1);
	L0_SYM(zeKernelCreate, 1);
	L0_SYM(zeKernelSetGroupSize, 1);
	L0_SYM(zeCommandListAppendLaunchKernel, 1);
	L0_SYM(zeCommandListAppendMemoryCopy, 1);
	L0_SYM(zeCommandListAppendBarrier, 1);
	L0_SYM(zelTracerCreate, 0);
	L0_SYM(zelTracerSetEnabled, 0);
	L0_SYM(zelTracerModuleCreateRegisterCallback, 0);
	L0_SYM(zelTracerKernelCreateRegisterCallback, 0);
	L0_SYM(zelTracerKernelSetGroupSizeRegisterCallback, 0);
	L0_SYM(zelTracerCommandListAppendLaunchKernelRegisterCallback, 0);
	L0_SYM(zelTracerCommandQueueSynchronizeRegisterCallback, 0);
	L0_SYM(zelTracerEventHostSynchronizeRegisterCallback, 0);
	L0_SYM(zelTracerFenceHostSynchronizeRegisterCallback, 0);
#undef L0_SYM
	return 0;
}

static struct l0_loader l0_process_loader;
static pthread_once_t l0_process_loader_once = PTHREAD_ONCE_INIT;
static int l0_process_loader_ok;

static void l0_process_loader_init(void)
{
	char why[256];

	l0_process_loader_ok = l0_loader_open(&l0_process_loader, why, sizeof(why)) == 0;
}

const struct l0_loader *l0_loader_get(void)
{
	pthread_once(&l0_process_loader_once, l0_process_loader_init);
	return l0_process_loader_ok ? &l0_process_loader : NULL;
}
