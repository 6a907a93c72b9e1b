/* SPDX-License-Identifier: MIT */
/*
 * plugins/opencl/ocl_intercept.c - the OpenCL entry points the plugin
 * interposes when `gbpf run` preloads it (exported by ocl_agent.map; when
 * the plugin is dlopen'ed RTLD_LOCAL these interpose on nothing).
 *
 * Each calls the real function (ocl_real(): the ICD loader's own symbol)
 * and tells the agent what happened; only clEnqueueNDRangeKernel may launch
 * something else (the instrumented kernel). Nothing runs at load time: no
 * constructor, because the preload is inherited by the processes PoCL and
 * system() spawn (ld, sh), where none of this must happen. A thread-local
 * depth makes calls the runtime makes into these symbols from inside a
 * call pass straight through.
 */
#include <stdlib.h>
#include <string.h>

#include "ocl_agent.h"

#define OCL_EXPORT __attribute__((visibility("default")))

/* Interposer nesting depth of this thread (calls from inside the runtime pass through). */
static _Thread_local int ocl_intercept_depth;

static const struct ocl_api *enter(void)
{
	const struct ocl_api *cl = ocl_real();

	ocl_intercept_depth++;
	return cl;
}

static void leave(void)
{
	ocl_intercept_depth--;
}

static int recording(void)
{
	return ocl_intercept_depth == 1 && ocl_agent_recording();
}

OCL_EXPORT cl_program clCreateProgramWithSource(cl_context ctx, cl_uint count, const char **strings,
						const size_t *lengths, cl_int *errcode_ret)
{
	const struct ocl_api *cl = enter();
	cl_program p;
	cl_int err = CL_SUCCESS;

	if (!cl) {
		leave();
		if (errcode_ret)
			*errcode_ret = CL_OUT_OF_HOST_MEMORY;
		return NULL;
	}
	p = cl->CreateProgramWithSource(ctx, count, strings, lengths, &err);
	if (errcode_ret)
		*errcode_ret = err;
	if (p && err == CL_SUCCESS && recording() && strings && count) {
		/* one source text: the strings concatenated, as the runtime sees them */
		size_t total = 0, off = 0;
		char *src;

		for (cl_uint i = 0; i < count; i++)
			total += strings[i] ? (lengths && lengths[i] ? lengths[i] : strlen(strings[i])) : 0;
		src = malloc(total + 1);
		if (src) {
			for (cl_uint i = 0; i < count; i++) {
				size_t n;

				if (!strings[i])
					continue;
				n = lengths && lengths[i] ? lengths[i] : strlen(strings[i]);
				memcpy(src + off, strings[i], n);
				off += n;
			}
			ocl_agent_program_created(p, ctx, OCL_SRC_SOURCE, src, off);
			free(src);
		}
	}
	leave();
	return p;
}

OCL_EXPORT cl_program clCreateProgramWithIL(cl_context ctx, const void *il, size_t length, cl_int *errcode_ret)
{
	const struct ocl_api *cl = enter();
	cl_program p = NULL;
	cl_int err = CL_INVALID_OPERATION;

	if (cl && cl->CreateProgramWithIL)
		p = cl->CreateProgramWithIL(ctx, il, length, &err);
	if (cl && !p && recording())
		p = ocl_agent_il_fallback(ctx, il, length, &err);
	if (errcode_ret)
		*errcode_ret = err;
	if (p && err == CL_SUCCESS && recording())
		ocl_agent_program_created(p, ctx, OCL_SRC_IL, il, length);
	leave();
	return p;
}

OCL_EXPORT cl_program clCreateProgramWithBinary(cl_context ctx, cl_uint ndev, const cl_device_id *devs,
						const size_t *lengths, const unsigned char **binaries,
						cl_int *binary_status, cl_int *errcode_ret)
{
	const struct ocl_api *cl = enter();
	cl_program p = NULL;
	cl_int err = CL_OUT_OF_HOST_MEMORY;

	if (cl)
		p = cl->CreateProgramWithBinary(ctx, ndev, devs, lengths, binaries, binary_status, &err);
	if (errcode_ret)
		*errcode_ret = err;
	if (p && err == CL_SUCCESS && recording() && ndev && lengths && binaries)
		ocl_agent_program_created(p, ctx, OCL_SRC_BINARY, binaries[0], lengths[0]);
	leave();
	return p;
}

OCL_EXPORT cl_int clBuildProgram(cl_program prog, cl_uint ndev, const cl_device_id *devs, const char *options,
				 void(CL_CALLBACK *notify)(cl_program, void *), void *user_data)
{
	const struct ocl_api *cl = enter();
	cl_int err = CL_OUT_OF_HOST_MEMORY;

	if (cl)
		err = cl->BuildProgram(prog, ndev, devs, options, notify, user_data);
	if (err == CL_SUCCESS && recording())
		ocl_agent_program_built(prog, ndev, devs, options);
	leave();
	return err;
}

OCL_EXPORT cl_kernel clCreateKernel(cl_program prog, const char *name, cl_int *errcode_ret)
{
	const struct ocl_api *cl = enter();
	cl_kernel k = NULL;
	cl_int err = CL_OUT_OF_HOST_MEMORY;

	if (cl)
		k = cl->CreateKernel(prog, name, &err);
	if (errcode_ret)
		*errcode_ret = err;
	if (k && err == CL_SUCCESS && recording())
		ocl_agent_kernel_created(k, prog, name);
	leave();
	return k;
}

OCL_EXPORT cl_int clCreateKernelsInProgram(cl_program prog, cl_uint num, cl_kernel *kernels, cl_uint *num_ret)
{
	const struct ocl_api *cl = enter();
	cl_uint got = 0;
	cl_int err = CL_OUT_OF_HOST_MEMORY;

	if (cl)
		err = cl->CreateKernelsInProgram(prog, num, kernels, &got);
	if (num_ret)
		*num_ret = got;
	if (err == CL_SUCCESS && kernels && recording()) {
		for (cl_uint i = 0; i < got && i < num; i++) {
			char name[256] = "";

			if (cl->GetKernelInfo(kernels[i], CL_KERNEL_FUNCTION_NAME, sizeof(name) - 1, name, NULL) ==
			    CL_SUCCESS)
				ocl_agent_kernel_created(kernels[i], prog, name);
		}
	}
	leave();
	return err;
}

OCL_EXPORT cl_int clSetKernelArg(cl_kernel k, cl_uint idx, size_t size, const void *value)
{
	const struct ocl_api *cl = enter();
	cl_int err = CL_OUT_OF_HOST_MEMORY;

	if (cl)
		err = cl->SetKernelArg(k, idx, size, value);
	if (err == CL_SUCCESS && recording())
		ocl_agent_kernel_arg(k, idx, size, value);
	leave();
	return err;
}

OCL_EXPORT cl_int clEnqueueNDRangeKernel(cl_command_queue q, cl_kernel k, cl_uint dim, const size_t *offset,
					 const size_t *global, const size_t *local, cl_uint nwait,
					 const cl_event *wait, cl_event *event)
{
	const struct ocl_api *cl = enter();
	cl_int err = CL_OUT_OF_HOST_MEMORY;

	if (cl && !(recording() && ocl_agent_enqueue(q, k, dim, offset, global, local, nwait, wait, event, &err)))
		err = cl->EnqueueNDRangeKernel(q, k, dim, offset, global, local, nwait, wait, event);
	leave();
	return err;
}

OCL_EXPORT cl_int clReleaseKernel(cl_kernel k)
{
	const struct ocl_api *cl = enter();
	cl_uint refs = 0;
	cl_int err = CL_OUT_OF_HOST_MEMORY;

	if (cl) {
		if (ocl_intercept_depth == 1 &&
		    cl->GetKernelInfo(k, CL_KERNEL_REFERENCE_COUNT, sizeof(refs), &refs, NULL) != CL_SUCCESS)
			refs = 0;
		err = cl->ReleaseKernel(k);
		if (err == CL_SUCCESS && refs == 1)
			ocl_agent_kernel_release(k, refs);
	}
	leave();
	return err;
}

OCL_EXPORT cl_int clReleaseProgram(cl_program prog)
{
	const struct ocl_api *cl = enter();
	cl_uint refs = 0;
	cl_int err = CL_OUT_OF_HOST_MEMORY;

	if (cl) {
		if (ocl_intercept_depth == 1 &&
		    cl->GetProgramInfo(prog, CL_PROGRAM_REFERENCE_COUNT, sizeof(refs), &refs, NULL) != CL_SUCCESS)
			refs = 0;
		err = cl->ReleaseProgram(prog);
		if (err == CL_SUCCESS && refs == 1)
			ocl_agent_program_release(prog, refs);
	}
	leave();
	return err;
}
