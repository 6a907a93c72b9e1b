/* SPDX-License-Identifier: MIT */
#include "cuda_driver.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SYM(field, name) {offsetof(struct cuda_driver, field), name}

static const struct {
	size_t off;
	const char *name;
} cuda_syms[] = {
	SYM(cuInit, "cuInit"),
	SYM(cuDeviceGetCount, "cuDeviceGetCount"),
	SYM(cuDeviceGet, "cuDeviceGet"),
	SYM(cuDeviceGetName, "cuDeviceGetName"),
	SYM(cuDeviceGetAttribute, "cuDeviceGetAttribute"),
	SYM(cuDeviceTotalMem, "cuDeviceTotalMem_v2"),
	SYM(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain"),
	SYM(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2"),
	SYM(cuCtxSetCurrent, "cuCtxSetCurrent"),
	SYM(cuCtxSynchronize, "cuCtxSynchronize"),
	SYM(cuModuleLoadDataEx, "cuModuleLoadDataEx"),
	SYM(cuModuleUnload, "cuModuleUnload"),
	SYM(cuModuleGetFunction, "cuModuleGetFunction"),
	SYM(cuModuleGetGlobal, "cuModuleGetGlobal_v2"),
	SYM(cuMemAlloc, "cuMemAlloc_v2"),
	SYM(cuMemFree, "cuMemFree_v2"),
	SYM(cuMemcpyHtoD, "cuMemcpyHtoD_v2"),
	SYM(cuMemcpyDtoH, "cuMemcpyDtoH_v2"),
	SYM(cuMemsetD8, "cuMemsetD8_v2"),
	SYM(cuLaunchKernel, "cuLaunchKernel"),
	SYM(cuEventCreate, "cuEventCreate"),
	SYM(cuEventRecord, "cuEventRecord"),
	SYM(cuEventSynchronize, "cuEventSynchronize"),
	SYM(cuEventElapsedTime, "cuEventElapsedTime"),
	SYM(cuEventDestroy, "cuEventDestroy_v2"),
	SYM(cuGetErrorString, "cuGetErrorString"),
};

int cuda_driver_load(struct cuda_driver *drv, char *why, size_t why_size)
{
	const char *lib = getenv("GBPF_LIBCUDA");
	size_t i;

	memset(drv, 0, sizeof(*drv));
	if (!lib || !*lib)
		lib = "libcuda.so.1";
	drv->handle = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (!drv->handle) {
		snprintf(why, why_size, "cuda: cannot load the driver %s: %s", lib, dlerror());
		return -ENODEV;
	}
	for (i = 0; i < sizeof(cuda_syms) / sizeof(cuda_syms[0]); i++) {
		void *p = dlsym(drv->handle, cuda_syms[i].name);

		if (!p) {
			snprintf(why, why_size, "cuda: driver %s lacks %s", lib, cuda_syms[i].name);
			cuda_driver_close(drv);
			return -ENODEV;
		}
		memcpy((char *)drv + cuda_syms[i].off, &p, sizeof(p));
	}
	return 0;
}

int cuda_driver_init(struct cuda_driver *drv, char *why, size_t why_size)
{
	CUresult r = drv->cuInit(0);
	int count = 0;

	if (r == CUDA_SUCCESS)
		r = drv->cuDeviceGetCount(&count);
	if (r != CUDA_SUCCESS || count == 0) {
		snprintf(why, why_size, "cuda: no usable device (%s)",
			 r != CUDA_SUCCESS ? cuda_driver_strerror(drv, r) : "0 devices");
		return -ENODEV;
	}
	return 0;
}

int cuda_driver_open(struct cuda_driver *drv, char *why, size_t why_size)
{
	int rc = cuda_driver_load(drv, why, why_size);

	if (!rc) {
		rc = cuda_driver_init(drv, why, why_size);
		if (rc)
			cuda_driver_close(drv);
	}
	return rc;
}

void cuda_driver_close(struct cuda_driver *drv)
{
	if (drv->handle)
		dlclose(drv->handle);
	memset(drv, 0, sizeof(*drv));
}

const char *cuda_driver_strerror(const struct cuda_driver *drv, CUresult r)
{
	const char *s = NULL;

	if (drv->cuGetErrorString && drv->cuGetErrorString(r, &s) == CUDA_SUCCESS && s)
		return s;
	return "unknown CUDA error";
}
