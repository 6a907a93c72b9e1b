/* SPDX-License-Identifier: MIT */
/*
 * plugins/spirv/spv_cl.c - a small OpenCL runner for run kernels and test
 * applications. libOpenCL.so.1 is dlopen'ed (the plugins must load on
 * machines without OpenCL); CL/cl.h only gives the types.
 *
 * Memory the device must reach at the host's address (maps, the context
 * table, r0 arrays): fine-grained SVM when the device offers it, otherwise
 * plain host memory on a CPU device (PoCL's CPU device runs kernels in the
 * host process, so host pointers are device pointers). A GPU without
 * fine-grained SVM cannot run gbpf maps this way and is refused.
 */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spv_internal.h"

struct spv_clapi {
	cl_int (*GetPlatformIDs)(cl_uint, cl_platform_id *, cl_uint *);
	cl_int (*GetDeviceIDs)(cl_platform_id, cl_device_type, cl_uint, cl_device_id *, cl_uint *);
	cl_int (*GetDeviceInfo)(cl_device_id, cl_device_info, size_t, void *, size_t *);
	cl_context (*CreateContext)(const cl_context_properties *, cl_uint, const cl_device_id *,
				    void(CL_CALLBACK *)(const char *, const void *, size_t, void *),
				    void *, cl_int *);
	cl_command_queue (*CreateCommandQueue)(cl_context, cl_device_id, cl_command_queue_properties,
					       cl_int *);
	cl_program (*CreateProgramWithIL)(cl_context, const void *, size_t, cl_int *);
	cl_program (*CreateProgramWithBinary)(cl_context, cl_uint, const cl_device_id *,
					      const size_t *, const unsigned char **, cl_int *,
					      cl_int *);
	cl_int (*BuildProgram)(cl_program, cl_uint, const cl_device_id *, const char *,
			       void(CL_CALLBACK *)(cl_program, void *), void *);
	cl_int (*GetProgramBuildInfo)(cl_program, cl_device_id, cl_program_build_info, size_t,
				      void *, size_t *);
	cl_kernel (*CreateKernel)(cl_program, const char *, cl_int *);
	cl_int (*SetKernelArg)(cl_kernel, cl_uint, size_t, const void *);
	cl_int (*SetKernelArgSVMPointer)(cl_kernel, cl_uint, const void *);
	cl_int (*EnqueueNDRangeKernel)(cl_command_queue, cl_kernel, cl_uint, const size_t *,
				       const size_t *, const size_t *, cl_uint, const cl_event *,
				       cl_event *);
	cl_int (*Finish)(cl_command_queue);
	cl_int (*ReleaseKernel)(cl_kernel);
	cl_int (*ReleaseProgram)(cl_program);
	cl_int (*ReleaseCommandQueue)(cl_command_queue);
	cl_int (*ReleaseContext)(cl_context);
	void *(*SVMAlloc)(cl_context, cl_svm_mem_flags, size_t, cl_uint);
	void (*SVMFree)(cl_context, void *);
	cl_mem (*CreateBuffer)(cl_context, cl_mem_flags, size_t, void *, cl_int *);
	cl_int (*ReleaseMemObject)(cl_mem);
	void *(*EnqueueMapBuffer)(cl_command_queue, cl_mem, cl_bool, cl_map_flags, size_t, size_t,
				  cl_uint, const cl_event *, cl_event *, cl_int *);
	cl_int (*EnqueueUnmapMemObject)(cl_command_queue, cl_mem, void *, cl_uint, const cl_event *,
					cl_event *);
};

struct gbpf_spirv_cl {
	void *lib;
	struct spv_clapi api;
	cl_device_id dev;
	cl_context ctx;
	cl_command_queue q;
	int svm;      /* fine-grained SVM allocations */
	int has_il;   /* clCreateProgramWithIL works */
	cl_uint cus;
	char name[256];
};

#define LOAD(field, sym)                                                                           \
	do {                                                                                       \
		*(void **)&cl->api.field = dlsym(cl->lib, sym);                                    \
	} while (0)

int gbpf_spirv_cl_open(int device_index, struct gbpf_spirv_cl **out, char *err, size_t err_size)
{
	struct gbpf_spirv_cl *cl = calloc(1, sizeof(*cl));
	cl_platform_id plats[16];
	cl_device_id devs[64];
	cl_uint np = 0, nd = 0, i, total = 0;
	cl_device_id pick = NULL, first_gpu = NULL;
	cl_device_type type = 0;
	cl_device_svm_capabilities svm = 0;
	cl_int e;
	char il[256] = "";

	if (!cl)
		return -ENOMEM;
	cl->lib = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!cl->lib) {
		snprintf(err, err_size, "opencl: cannot load libOpenCL.so.1: %s", dlerror());
		free(cl);
		return -ENOENT;
	}
	LOAD(GetPlatformIDs, "clGetPlatformIDs");
	LOAD(GetDeviceIDs, "clGetDeviceIDs");
	LOAD(GetDeviceInfo, "clGetDeviceInfo");
	LOAD(CreateContext, "clCreateContext");
	LOAD(CreateCommandQueue, "clCreateCommandQueue");
	LOAD(CreateProgramWithIL, "clCreateProgramWithIL");
	LOAD(CreateProgramWithBinary, "clCreateProgramWithBinary");
	LOAD(BuildProgram, "clBuildProgram");
	LOAD(GetProgramBuildInfo, "clGetProgramBuildInfo");
	LOAD(CreateKernel, "clCreateKernel");
	LOAD(SetKernelArg, "clSetKernelArg");
	LOAD(SetKernelArgSVMPointer, "clSetKernelArgSVMPointer");
	LOAD(EnqueueNDRangeKernel, "clEnqueueNDRangeKernel");
	LOAD(Finish, "clFinish");
	LOAD(ReleaseKernel, "clReleaseKernel");
	LOAD(ReleaseProgram, "clReleaseProgram");
	LOAD(ReleaseCommandQueue, "clReleaseCommandQueue");
	LOAD(ReleaseContext, "clReleaseContext");
	LOAD(SVMAlloc, "clSVMAlloc");
	LOAD(SVMFree, "clSVMFree");
	LOAD(CreateBuffer, "clCreateBuffer");
	LOAD(ReleaseMemObject, "clReleaseMemObject");
	LOAD(EnqueueMapBuffer, "clEnqueueMapBuffer");
	LOAD(EnqueueUnmapMemObject, "clEnqueueUnmapMemObject");
	if (!cl->api.GetPlatformIDs || !cl->api.GetDeviceIDs || !cl->api.CreateContext ||
	    !cl->api.CreateCommandQueue || !cl->api.CreateProgramWithBinary ||
	    !cl->api.BuildProgram || !cl->api.CreateKernel || !cl->api.SetKernelArg ||
	    !cl->api.EnqueueNDRangeKernel || !cl->api.Finish || !cl->api.CreateBuffer) {
		snprintf(err, err_size, "opencl: libOpenCL.so.1 lacks OpenCL 1.2 entry points");
		gbpf_spirv_cl_close(cl);
		return -ENOENT;
	}
	if (cl->api.GetPlatformIDs(16, plats, &np) != CL_SUCCESS || !np) {
		snprintf(err, err_size, "opencl: no OpenCL platform (is an ICD such as PoCL installed?)");
		gbpf_spirv_cl_close(cl);
		return -ENOENT;
	}
	if (np > 16)
		np = 16;
	for (i = 0; i < np && total < 64; i++) {
		cl_uint k;

		nd = 0;
		if (cl->api.GetDeviceIDs(plats[i], CL_DEVICE_TYPE_ALL, 64 - total, devs + total, &nd) !=
		    CL_SUCCESS)
			continue;
		if (nd > 64 - total)
			nd = 64 - total;
		for (k = 0; k < nd; k++) {
			cl->api.GetDeviceInfo(devs[total + k], CL_DEVICE_TYPE, sizeof(type), &type, NULL);
			if ((type & CL_DEVICE_TYPE_GPU) && !first_gpu)
				first_gpu = devs[total + k];
		}
		total += nd;
	}
	if (!total) {
		snprintf(err, err_size, "opencl: no OpenCL device");
		gbpf_spirv_cl_close(cl);
		return -ENOENT;
	}
	if (device_index >= 0) {
		if ((cl_uint)device_index >= total) {
			snprintf(err, err_size, "opencl: device %d absent (%u devices)", device_index,
				 total);
			gbpf_spirv_cl_close(cl);
			return -ENOENT;
		}
		pick = devs[device_index];
	} else {
		pick = first_gpu ? first_gpu : devs[0];
	}
	cl->dev = pick;
	cl->api.GetDeviceInfo(pick, CL_DEVICE_NAME, sizeof(cl->name) - 1, cl->name, NULL);
	cl->api.GetDeviceInfo(pick, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof(cl->cus), &cl->cus, NULL);
	cl->api.GetDeviceInfo(pick, CL_DEVICE_TYPE, sizeof(type), &type, NULL);
	if (cl->api.GetDeviceInfo(pick, CL_DEVICE_SVM_CAPABILITIES, sizeof(svm), &svm, NULL) !=
	    CL_SUCCESS)
		svm = 0;
	if (cl->api.GetDeviceInfo(pick, CL_DEVICE_IL_VERSION, sizeof(il) - 1, il, NULL) == CL_SUCCESS &&
	    strstr(il, "SPIR-V") && cl->api.CreateProgramWithIL)
		cl->has_il = 1;
	/* CPU devices share the host's address space: plain memory is enough and
	 * avoids depending on the ICD's SVM implementation */
	if (!(type & CL_DEVICE_TYPE_CPU)) {
		if (!(svm & CL_DEVICE_SVM_FINE_GRAIN_BUFFER) || !cl->api.SVMAlloc) {
			snprintf(err, err_size,
				 "opencl: device %s has no fine-grained SVM: gbpf maps need memory the "
				 "device and the host address alike", cl->name);
			gbpf_spirv_cl_close(cl);
			return -ENOTSUP;
		}
		cl->svm = 1;
	}
	cl->ctx = cl->api.CreateContext(NULL, 1, &pick, NULL, NULL, &e);
	if (!cl->ctx) {
		snprintf(err, err_size, "opencl: clCreateContext on %s: %d", cl->name, e);
		gbpf_spirv_cl_close(cl);
		return -EIO;
	}
	cl->q = cl->api.CreateCommandQueue(cl->ctx, pick, 0, &e);
	if (!cl->q) {
		snprintf(err, err_size, "opencl: clCreateCommandQueue on %s: %d", cl->name, e);
		gbpf_spirv_cl_close(cl);
		return -EIO;
	}
	*out = cl;
	return 0;
}

void gbpf_spirv_cl_close(struct gbpf_spirv_cl *cl)
{
	if (!cl)
		return;
	if (cl->q)
		cl->api.ReleaseCommandQueue(cl->q);
	if (cl->ctx)
		cl->api.ReleaseContext(cl->ctx);
	/* libOpenCL stays loaded: ICDs (PoCL) keep threads and atexit handlers */
	free(cl);
}

const char *gbpf_spirv_cl_device_name(const struct gbpf_spirv_cl *cl)
{
	return cl->name;
}

uint32_t gbpf_spirv_cl_compute_units(const struct gbpf_spirv_cl *cl)
{
	return cl->cus ? cl->cus : 1;
}

void *gbpf_spirv_cl_alloc(struct gbpf_spirv_cl *cl, size_t size)
{
	void *p = NULL;

	if (!size)
		size = 8;
	if (cl->svm) {
		p = cl->api.SVMAlloc(cl->ctx, CL_MEM_READ_WRITE | CL_MEM_SVM_FINE_GRAIN_BUFFER |
						      CL_MEM_SVM_ATOMICS,
				     size, 128);
		if (!p)
			p = cl->api.SVMAlloc(cl->ctx, CL_MEM_READ_WRITE | CL_MEM_SVM_FINE_GRAIN_BUFFER,
					     size, 128);
	} else if (posix_memalign(&p, 128, size)) {
		p = NULL;
	}
	if (p)
		memset(p, 0, size);
	return p;
}

void gbpf_spirv_cl_free(struct gbpf_spirv_cl *cl, void *mem)
{
	if (!mem)
		return;
	if (cl->svm)
		cl->api.SVMFree(cl->ctx, mem);
	else
		free(mem);
}

int gbpf_spirv_cl_build(struct gbpf_spirv_cl *cl, const uint32_t *words, size_t count,
			void **prog_out, char *err, size_t err_size)
{
	cl_program p = NULL;
	cl_int e = 0, st = 0;
	int rc;

	if (cl->has_il) {
		p = cl->api.CreateProgramWithIL(cl->ctx, words, count * 4, &e);
	} else {
		void *bc = NULL;
		size_t bcsize = 0;
		const unsigned char *bin;

		rc = gbpf_spirv_to_pocl(words, count, &bc, &bcsize, err, err_size);
		if (rc)
			return rc;
		bin = bc;
		p = cl->api.CreateProgramWithBinary(cl->ctx, 1, &cl->dev, &bcsize, &bin, &st, &e);
		free(bc);
	}
	if (!p) {
		snprintf(err, err_size, "opencl: creating the program on %s failed: %d", cl->name, e);
		return -EPROTO;
	}
	e = cl->api.BuildProgram(p, 1, &cl->dev, "", NULL, NULL);
	if (e != CL_SUCCESS) {
		char log[1024] = "";

		if (cl->api.GetProgramBuildInfo)
			cl->api.GetProgramBuildInfo(p, cl->dev, CL_PROGRAM_BUILD_LOG, sizeof(log) - 1,
						    log, NULL);
		snprintf(err, err_size, "opencl: clBuildProgram on %s: %d: %s", cl->name, e, log);
		cl->api.ReleaseProgram(p);
		return -EPROTO;
	}
	*prog_out = p;
	return 0;
}

void gbpf_spirv_cl_release(struct gbpf_spirv_cl *cl, void *prog)
{
	if (prog)
		cl->api.ReleaseProgram(prog);
}

static int enqueue(struct gbpf_spirv_cl *cl, cl_kernel k, size_t global, size_t local,
		   const char *name, char *err, size_t err_size)
{
	cl_int e;

	if (local && global % local)
		global += local - global % local;
	e = cl->api.EnqueueNDRangeKernel(cl->q, k, 1, NULL, &global, local ? &local : NULL, 0, NULL,
					 NULL);
	if (e == CL_SUCCESS)
		e = cl->api.Finish(cl->q);
	if (e != CL_SUCCESS) {
		snprintf(err, err_size, "opencl: running %s on %zu work-items: %d", name, global, e);
		return -EIO;
	}
	return 0;
}

int gbpf_spirv_cl_run(struct gbpf_spirv_cl *cl, void *prog, const struct gbpf_spirv_cl_run_opts *opts,
		      char *err, size_t err_size)
{
	const char *name = opts && opts->kernel ? opts->kernel : GBPF_SPIRV_RUN_ENTRY;
	uint64_t a[6];
	cl_kernel k;
	cl_int e;
	int rc = 0;
	unsigned i;

	if (!opts)
		return -EINVAL;
	a[0] = opts->data;
	a[1] = opts->size;
	a[2] = opts->stride;
	a[3] = (uint64_t)(uintptr_t)opts->r0;
	a[4] = opts->threads ? opts->threads : 1;
	a[5] = (uint64_t)(uintptr_t)opts->stats;
	k = cl->api.CreateKernel(prog, name, &e);
	if (!k) {
		snprintf(err, err_size, "opencl: kernel %s not found: %d", name, e);
		return -ENOENT;
	}
	for (i = 0; i < 6 && !rc; i++)
		if (cl->api.SetKernelArg(k, i, sizeof(a[i]), &a[i]) != CL_SUCCESS) {
			snprintf(err, err_size, "opencl: %s: argument %u rejected", name, i);
			rc = -EIO;
		}
	if (!rc)
		rc = enqueue(cl, k, (size_t)a[4], opts->local_size, name, err, err_size);
	cl->api.ReleaseKernel(k);
	return rc;
}

int gbpf_spirv_cl_run_kernel(struct gbpf_spirv_cl *cl, void *prog, const char *kernel,
			     size_t global_size, size_t local_size,
			     const struct gbpf_spirv_cl_arg *args, size_t nargs, char *err,
			     size_t err_size)
{
	cl_mem bufs[32] = {0};
	cl_kernel k;
	cl_int e;
	size_t i;
	int rc = 0;

	if (!kernel || nargs > 32)
		return -EINVAL;
	k = cl->api.CreateKernel(prog, kernel, &e);
	if (!k) {
		snprintf(err, err_size, "opencl: kernel %s not found: %d", kernel, e);
		return -ENOENT;
	}
	for (i = 0; i < nargs && !rc; i++) {
		if (args[i].is_pointer && cl->svm) {
			e = cl->api.SetKernelArgSVMPointer(k, (cl_uint)i, args[i].value);
		} else if (args[i].is_pointer) {
			bufs[i] = cl->api.CreateBuffer(cl->ctx, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR,
						       args[i].size, (void *)args[i].value, &e);
			if (bufs[i])
				e = cl->api.SetKernelArg(k, (cl_uint)i, sizeof(cl_mem), &bufs[i]);
		} else {
			e = cl->api.SetKernelArg(k, (cl_uint)i, args[i].size, args[i].value);
		}
		if (e != CL_SUCCESS) {
			snprintf(err, err_size, "opencl: %s: argument %zu rejected: %d", kernel, i, e);
			rc = -EIO;
		}
	}
	if (!rc)
		rc = enqueue(cl, k, global_size, local_size, kernel, err, err_size);
	for (i = 0; i < nargs; i++) {
		if (!bufs[i])
			continue;
		/* a map makes the host copy current for USE_HOST_PTR buffers */
		if (!rc && cl->api.EnqueueMapBuffer) {
			void *p = cl->api.EnqueueMapBuffer(cl->q, bufs[i], CL_TRUE, CL_MAP_READ, 0,
							   args[i].size, 0, NULL, NULL, &e);

			if (p)
				cl->api.EnqueueUnmapMemObject(cl->q, bufs[i], p, 0, NULL, NULL);
			cl->api.Finish(cl->q);
		}
		cl->api.ReleaseMemObject(bufs[i]);
	}
	cl->api.ReleaseKernel(k);
	return rc;
}
