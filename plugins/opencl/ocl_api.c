/* SPDX-License-Identifier: MIT */
#include "ocl_api.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SYM(field, req) {offsetof(struct ocl_api, field), "cl" #field, req}

static const struct {
	size_t off;
	const char *name;
	int required;
} ocl_syms[] = {
	SYM(GetPlatformIDs, 1),      SYM(GetPlatformInfo, 1),     SYM(GetDeviceIDs, 1),
	SYM(GetDeviceInfo, 1),       SYM(CreateContext, 1),       SYM(ReleaseContext, 1),
	SYM(GetContextInfo, 1),      SYM(CreateCommandQueue, 1),  SYM(ReleaseCommandQueue, 1),
	SYM(GetCommandQueueInfo, 1), SYM(CreateProgramWithSource, 1),
	SYM(CreateProgramWithBinary, 1), SYM(BuildProgram, 1),    SYM(GetProgramInfo, 1),
	SYM(GetProgramBuildInfo, 1), SYM(RetainProgram, 1),       SYM(ReleaseProgram, 1),
	SYM(CreateKernel, 1),        SYM(CreateKernelsInProgram, 1), SYM(SetKernelArg, 1),
	SYM(GetKernelInfo, 1),       SYM(RetainKernel, 1),        SYM(ReleaseKernel, 1),
	SYM(EnqueueNDRangeKernel, 1), SYM(CreateBuffer, 1),       SYM(ReleaseMemObject, 1),
	SYM(EnqueueReadBuffer, 1),   SYM(Finish, 1),              SYM(CreateProgramWithIL, 0),
	SYM(WaitForEvents, 1),       SYM(RetainEvent, 1),         SYM(ReleaseEvent, 1),
	SYM(SetEventCallback, 1),
};

int ocl_api_open(struct ocl_api *api, char *why, size_t why_size)
{
	const char *lib = getenv("GBPF_LIBOPENCL");
	size_t i;

	memset(api, 0, sizeof(*api));
	if (!lib || !*lib)
		lib = "libOpenCL.so.1";
	api->handle = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (!api->handle) {
		snprintf(why, why_size, "opencl: cannot load the ICD loader %s: %s", lib, dlerror());
		return -ENODEV;
	}
	for (i = 0; i < sizeof(ocl_syms) / sizeof(ocl_syms[0]); i++) {
		void *p = dlsym(api->handle, ocl_syms[i].name);

		if (!p && ocl_syms[i].required) {
			snprintf(why, why_size, "opencl: ICD loader %s lacks %s", lib, ocl_syms[i].name);
			ocl_api_close(api);
			return -ENODEV;
		}
		memcpy((char *)api + ocl_syms[i].off, &p, sizeof(p));
	}
	return 0;
}

void ocl_api_close(struct ocl_api *api)
{
	/*
	 * The ICD loader is never unloaded: it and the vendor ICDs it loaded
	 * keep allocations reachable only from their own globals (unloading
	 * turns them into leaks for LeakSanitizer), and ICDs are not written
	 * to be unloaded. Each dlopen only raises the reference count.
	 */
	memset(api, 0, sizeof(*api));
}

const char *ocl_strerror(cl_int err)
{
	switch (err) {
	case CL_SUCCESS: return "CL_SUCCESS";
	case CL_DEVICE_NOT_FOUND: return "CL_DEVICE_NOT_FOUND";
	case CL_DEVICE_NOT_AVAILABLE: return "CL_DEVICE_NOT_AVAILABLE";
	case CL_COMPILER_NOT_AVAILABLE: return "CL_COMPILER_NOT_AVAILABLE";
	case CL_MEM_OBJECT_ALLOCATION_FAILURE: return "CL_MEM_OBJECT_ALLOCATION_FAILURE";
	case CL_OUT_OF_RESOURCES: return "CL_OUT_OF_RESOURCES";
	case CL_OUT_OF_HOST_MEMORY: return "CL_OUT_OF_HOST_MEMORY";
	case CL_BUILD_PROGRAM_FAILURE: return "CL_BUILD_PROGRAM_FAILURE";
	case CL_INVALID_VALUE: return "CL_INVALID_VALUE";
	case CL_INVALID_PLATFORM: return "CL_INVALID_PLATFORM";
	case CL_INVALID_DEVICE: return "CL_INVALID_DEVICE";
	case CL_INVALID_CONTEXT: return "CL_INVALID_CONTEXT";
	case CL_INVALID_BINARY: return "CL_INVALID_BINARY";
	case CL_INVALID_BUILD_OPTIONS: return "CL_INVALID_BUILD_OPTIONS";
	case CL_INVALID_PROGRAM: return "CL_INVALID_PROGRAM";
	case CL_INVALID_PROGRAM_EXECUTABLE: return "CL_INVALID_PROGRAM_EXECUTABLE";
	case CL_INVALID_KERNEL_NAME: return "CL_INVALID_KERNEL_NAME";
	case CL_INVALID_KERNEL: return "CL_INVALID_KERNEL";
	case CL_INVALID_ARG_INDEX: return "CL_INVALID_ARG_INDEX";
	case CL_INVALID_ARG_VALUE: return "CL_INVALID_ARG_VALUE";
	case CL_INVALID_ARG_SIZE: return "CL_INVALID_ARG_SIZE";
	case CL_INVALID_KERNEL_ARGS: return "CL_INVALID_KERNEL_ARGS";
	case CL_INVALID_WORK_DIMENSION: return "CL_INVALID_WORK_DIMENSION";
	case CL_INVALID_WORK_GROUP_SIZE: return "CL_INVALID_WORK_GROUP_SIZE";
	case CL_INVALID_GLOBAL_WORK_SIZE: return "CL_INVALID_GLOBAL_WORK_SIZE";
	default: return "OpenCL error";
	}
}
