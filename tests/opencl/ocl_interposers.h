/* SPDX-License-Identifier: MIT */
/*
 * tests/opencl/ocl_interposers.h - the OpenCL entry points the opencl
 * plugin interposes, taken from the dlopen'ed plugin itself, for the
 * in-process agent tests (test_opencl_attach.c, test_opencl_device.c): an
 * application linked against OpenCL would reach them the same way.
 */
#ifndef GBPF_TEST_OCL_INTERPOSERS_H
#define GBPF_TEST_OCL_INTERPOSERS_H

#include <dlfcn.h>

/* The including test defines CL_TARGET_OPENCL_VERSION before its own <CL/cl.h>. */
#include <CL/cl.h>

struct ocl_interposers {
	cl_program (*CreateProgramWithSource)(cl_context, cl_uint, const char **, const size_t *, cl_int *);
	cl_int (*BuildProgram)(cl_program, cl_uint, const cl_device_id *, const char *,
			       void(CL_CALLBACK *)(cl_program, void *), void *);
	cl_kernel (*CreateKernel)(cl_program, const char *, cl_int *);
	cl_int (*SetKernelArg)(cl_kernel, cl_uint, size_t, const void *);
	cl_int (*EnqueueNDRangeKernel)(cl_command_queue, cl_kernel, cl_uint, const size_t *, const size_t *,
				       const size_t *, cl_uint, const cl_event *, cl_event *);
	cl_int (*ReleaseKernel)(cl_kernel);
	cl_int (*ReleaseProgram)(cl_program);
};

/* Fill @p icl from plugin handle @p h; 1 when the entry points the tests call are all there. */
static inline int ocl_interposers_load(void *h, struct ocl_interposers *icl)
{
	*(void **)&icl->CreateProgramWithSource = dlsym(h, "clCreateProgramWithSource");
	*(void **)&icl->BuildProgram = dlsym(h, "clBuildProgram");
	*(void **)&icl->CreateKernel = dlsym(h, "clCreateKernel");
	*(void **)&icl->SetKernelArg = dlsym(h, "clSetKernelArg");
	*(void **)&icl->EnqueueNDRangeKernel = dlsym(h, "clEnqueueNDRangeKernel");
	*(void **)&icl->ReleaseKernel = dlsym(h, "clReleaseKernel");
	*(void **)&icl->ReleaseProgram = dlsym(h, "clReleaseProgram");
	return icl->CreateProgramWithSource && icl->BuildProgram && icl->CreateKernel && icl->SetKernelArg &&
	       icl->EnqueueNDRangeKernel && icl->ReleaseKernel && icl->ReleaseProgram;
}

#endif
