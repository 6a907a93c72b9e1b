/* SPDX-License-Identifier: MIT */
/*
 * plugins/opencl/ocl_agent.h - the opencl plugin's agent side (internal):
 * instruments the OpenCL kernels of the application the plugin is
 * preloaded into by `gbpf run` (docs/PROCESS_MODEL.md, section OpenCL).
 */
#ifndef GBPF_OCL_AGENT_H
#define GBPF_OCL_AGENT_H

#include <stddef.h>

#include <gbpf/plugin.h>

#include "ocl_api.h"

/**
 * agent_attach of the opencl backend: keep the programs and maps, arm the
 * interposers. Kernels are instrumented lazily, at their first launch.
 * @return 0, -EBUSY when already attached, -EINVAL for bad options, -ENODEV
 *         when the ICD loader cannot be loaded (reason in log)
 */
int gbpf_ocl_agent_attach(struct gbpf_backend *be, const struct gbpf_agent_attach_opts *opts, char *log,
			  size_t log_size);

/** agent_detach: kernels launch uninstrumented from the next launch on. */
void gbpf_ocl_agent_detach(struct gbpf_backend *be);

/* ---- called by the interposers (ocl_intercept.c) ---- */

/** The real OpenCL entry points, loaded once; NULL when libOpenCL.so.1 cannot be loaded. */
const struct ocl_api *ocl_real(void);

/** 1 while attached (instrumented launches). */
int ocl_agent_active(void);
/** 1 once attached the first time: the interposers record programs, kernels and arguments from then on. */
int ocl_agent_recording(void);

/** A program was created: kind OCL_SRC_*, @p bytes its source / IL / binary (copied). */
enum ocl_src_kind { OCL_SRC_SOURCE = 1, OCL_SRC_IL = 2, OCL_SRC_BINARY = 3 };
void ocl_agent_program_created(cl_program prog, cl_context ctx, enum ocl_src_kind kind, const void *bytes,
			       size_t size);
/**
 * clCreateProgramWithIL failed (a platform without IL support, as PoCL):
 * create the program from the module turned into LLVM bitcode instead, so
 * that the application runs (and can be instrumented) under gbpf. Returns
 * the program, or NULL with *err left as the runtime said.
 */
cl_program ocl_agent_il_fallback(cl_context ctx, const void *il, size_t size, cl_int *err);
/** clBuildProgram succeeded or not: keep the options and devices for the instrumented build. */
void ocl_agent_program_built(cl_program prog, cl_uint ndev, const cl_device_id *devs, const char *options);
/** A kernel was created from @p prog. */
void ocl_agent_kernel_created(cl_kernel k, cl_program prog, const char *name);
/** clSetKernelArg succeeded on the application's kernel. */
void ocl_agent_kernel_arg(cl_kernel k, cl_uint idx, size_t size, const void *value);
/** Before the real release of a kernel / program whose reference count is @p refs. */
void ocl_agent_kernel_release(cl_kernel k, cl_uint refs);
void ocl_agent_program_release(cl_program prog, cl_uint refs);

/**
 * clEnqueueNDRangeKernel: runs host/launch programs, and launches the
 * instrumented kernel when a device program targets @p k. Returns 1 with
 * the launch's result in *ret when it launched, 0 when the caller must
 * launch the application's kernel.
 */
int ocl_agent_enqueue(cl_command_queue q, cl_kernel k, cl_uint dim, const size_t *offset,
		      const size_t *global, const size_t *local, cl_uint nwait, const cl_event *wait,
		      cl_event *event, cl_int *ret);

#endif
