/* SPDX-License-Identifier: MIT */
/*
 * plugins/opencl/ocl_api.h - the OpenCL entry points the plugin calls,
 * resolved from a dlopen of the ICD loader (never linked: the plugin must
 * load where OpenCL is absent and say why).
 */
#ifndef GBPF_OCL_API_H
#define GBPF_OCL_API_H

#include <stddef.h>

#define CL_TARGET_OPENCL_VERSION 210
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>

/** The real OpenCL functions (those of libOpenCL.so.1, not our interposers). */
struct ocl_api {
	void *handle;
	cl_int (*GetPlatformIDs)(cl_uint, cl_platform_id *, cl_uint *);
	cl_int (*GetPlatformInfo)(cl_platform_id, cl_platform_info, size_t, void *, size_t *);
	cl_int (*GetDeviceIDs)(cl_platform_id, cl_device_type, cl_uint, cl_device_id *, cl_uint *);
	cl_int (*GetDeviceInfo)(cl_device_id, cl_device_info, size_t, void *, size_t *);
	cl_context (*CreateContext)(const cl_context_properties *, cl_uint, const cl_device_id *,
				    void(CL_CALLBACK *)(const char *, const void *, size_t, void *), void *,
				    cl_int *);
	cl_int (*ReleaseContext)(cl_context);
	cl_int (*GetContextInfo)(cl_context, cl_context_info, size_t, void *, size_t *);
	cl_command_queue (*CreateCommandQueue)(cl_context, cl_device_id, cl_command_queue_properties,
					       cl_int *);
	cl_int (*ReleaseCommandQueue)(cl_command_queue);
	cl_int (*GetCommandQueueInfo)(cl_command_queue, cl_command_queue_info, size_t, void *, size_t *);
	cl_program (*CreateProgramWithSource)(cl_context, cl_uint, const char **, const size_t *, cl_int *);
	cl_program (*CreateProgramWithBinary)(cl_context, cl_uint, const cl_device_id *, const size_t *,
					      const unsigned char **, cl_int *, cl_int *);
	cl_int (*BuildProgram)(cl_program, cl_uint, const cl_device_id *, const char *,
			       void(CL_CALLBACK *)(cl_program, void *), void *);
	cl_int (*GetProgramInfo)(cl_program, cl_program_info, size_t, void *, size_t *);
	cl_int (*GetProgramBuildInfo)(cl_program, cl_device_id, cl_program_build_info, size_t, void *,
				      size_t *);
	cl_int (*RetainProgram)(cl_program);
	cl_int (*ReleaseProgram)(cl_program);
	cl_kernel (*CreateKernel)(cl_program, const char *, cl_int *);
	cl_int (*CreateKernelsInProgram)(cl_program, cl_uint, cl_kernel *, cl_uint *);
	cl_int (*SetKernelArg)(cl_kernel, cl_uint, size_t, const void *);
	cl_int (*GetKernelInfo)(cl_kernel, cl_kernel_info, size_t, void *, size_t *);
	cl_int (*RetainKernel)(cl_kernel);
	cl_int (*ReleaseKernel)(cl_kernel);
	cl_int (*EnqueueNDRangeKernel)(cl_command_queue, cl_kernel, cl_uint, const size_t *, const size_t *,
				       const size_t *, cl_uint, const cl_event *, cl_event *);
	cl_mem (*CreateBuffer)(cl_context, cl_mem_flags, size_t, void *, cl_int *);
	cl_int (*ReleaseMemObject)(cl_mem);
	cl_int (*EnqueueReadBuffer)(cl_command_queue, cl_mem, cl_bool, size_t, size_t, void *, cl_uint,
				    const cl_event *, cl_event *);
	cl_int (*Finish)(cl_command_queue);
	cl_int (*WaitForEvents)(cl_uint, const cl_event *);
	cl_int (*RetainEvent)(cl_event);
	cl_int (*ReleaseEvent)(cl_event);
	cl_int (*SetEventCallback)(cl_event, cl_int, void(CL_CALLBACK *)(cl_event, cl_int, void *), void *);
	/* OpenCL 2.1 (absent from old loaders: may be NULL) */
	cl_program (*CreateProgramWithIL)(cl_context, const void *, size_t, cl_int *);
};

/**
 * Load the ICD loader (GBPF_LIBOPENCL or libOpenCL.so.1) and resolve every
 * entry point. Entry points of the loader itself (dlsym on its handle), so
 * that calls from the agent bypass the plugin's own interposers.
 * @return 0, or -ENODEV with the reason in @p why
 */
int ocl_api_open(struct ocl_api *api, char *why, size_t why_size);

/** Forget the entry points (the ICD loader itself stays loaded: see ocl_api.c). */
void ocl_api_close(struct ocl_api *api);

/** Name of an OpenCL error code ("CL_BUILD_PROGRAM_FAILURE"), or "OpenCL error". */
const char *ocl_strerror(cl_int err);

#endif
