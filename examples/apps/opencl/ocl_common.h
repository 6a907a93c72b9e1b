/* SPDX-License-Identifier: MIT */
/*
 * Shared helpers of the example OpenCL apps: pick the first device of the
 * first platform, read a kernel file, and fail loudly with what and where.
 */
#ifndef GBPF_EXAMPLE_OCL_COMMON_H
#define GBPF_EXAMPLE_OCL_COMMON_H

#define CL_TARGET_OPENCL_VERSION 210
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>

/** Print "APP: what failed: error N" and exit 1 when @p err is not CL_SUCCESS. */
#define OCL_CHECK(app, err, what)                                                               \
	do {                                                                                     \
		cl_int e_ = (err);                                                               \
		if (e_ != CL_SUCCESS) {                                                          \
			fprintf(stderr, "%s: %s failed: OpenCL error %d\n", (app), (what), (int)e_); \
			exit(1);                                                                 \
		}                                                                                \
	} while (0)

/** The first device of the first platform, with a context and an in-order queue. */
struct ocl_env {
	cl_platform_id platform;
	cl_device_id device;
	cl_context ctx;
	cl_command_queue queue;
};

/**
 * Open the first OpenCL device (any type).
 * @param app  program name, for messages
 * @param env  filled on success
 * @return 0, or exits the process with a message when no platform/device exists
 */
static inline int ocl_env_open(const char *app, struct ocl_env *env)
{
	cl_uint n = 0;
	cl_int err;

	err = clGetPlatformIDs(1, &env->platform, &n);
	if (err != CL_SUCCESS || n == 0) {
		fprintf(stderr, "%s: no OpenCL platform (error %d): is an ICD installed?\n", app, (int)err);
		exit(1);
	}
	err = clGetDeviceIDs(env->platform, CL_DEVICE_TYPE_ALL, 1, &env->device, &n);
	if (err != CL_SUCCESS || n == 0) {
		fprintf(stderr, "%s: the OpenCL platform has no device (error %d)\n", app, (int)err);
		exit(1);
	}
	env->ctx = clCreateContext(NULL, 1, &env->device, NULL, NULL, &err);
	OCL_CHECK(app, err, "clCreateContext");
	env->queue = clCreateCommandQueue(env->ctx, env->device, 0, &err);
	OCL_CHECK(app, err, "clCreateCommandQueue");
	return 0;
}

static inline void ocl_env_close(struct ocl_env *env)
{
	clReleaseCommandQueue(env->queue);
	clReleaseContext(env->ctx);
}

/**
 * Read a whole file (kernel source or SPIR-V), NUL-terminated.
 * @return malloc'ed bytes (caller frees), or NULL with a message on stderr
 */
static inline char *ocl_read_file(const char *app, const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long len;

	if (!f) {
		fprintf(stderr, "%s: cannot open %s\n", app, path);
		return NULL;
	}
	if (fseek(f, 0, SEEK_END) || (len = ftell(f)) < 0 || len > (64L << 20) || fseek(f, 0, SEEK_SET)) {
		fprintf(stderr, "%s: %s: cannot size the file (or larger than 64 MiB)\n", app, path);
		fclose(f);
		return NULL;
	}
	buf = malloc((size_t)len + 1);
	if (buf && fread(buf, 1, (size_t)len, f) != (size_t)len) {
		fprintf(stderr, "%s: %s: short read\n", app, path);
		free(buf);
		buf = NULL;
	}
	fclose(f);
	if (buf) {
		buf[len] = 0;
		*size = (size_t)len;
	}
	return buf;
}

/** Print the build log of @p prog on stderr (after a failed clBuildProgram). */
static inline void ocl_print_build_log(cl_program prog, cl_device_id dev)
{
	char log[4096] = "";

	clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, sizeof(log) - 1, log, NULL);
	fprintf(stderr, "build log:\n%s\n", log);
}

#endif
