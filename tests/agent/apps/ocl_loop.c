/* SPDX-License-Identifier: MIT */
/*
 * An OpenCL application in a loop, for `gbpf attach` on the opencl backend:
 * the program and kernel (vector add, OpenCL C) are built ONCE at start,
 * before any attach, and launched when told to on stdin:
 *   launch N   N launches of vadd over 1024 work-items, each followed by
 *              clFinish; prints "launched N checksum C" (C depends only on N)
 *   quit       exit 0
 * Prints "ready pid P" when the kernel is built.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ocl_common.h"

#define N_ITEMS 1024

static const char *src =
	"__kernel void vadd(__global const int *a, __global const int *b, __global int *c, uint n)\n"
	"{ size_t i = get_global_id(0); if (i < n) c[i] = a[i] + b[i]; }\n";

int main(void)
{
	const char *app = "ocl_loop";
	struct ocl_env env;
	static int a[N_ITEMS], b[N_ITEMS], c[N_ITEMS];
	cl_uint n = N_ITEMS;
	size_t global = N_ITEMS;
	cl_program prog;
	cl_kernel k;
	cl_mem da, db, dc;
	cl_int err;
	char line[128];
	int i;

	for (i = 0; i < N_ITEMS; i++) {
		a[i] = i;
		b[i] = 3 * i;
	}
	ocl_env_open(app, &env);
	prog = clCreateProgramWithSource(env.ctx, 1, &src, NULL, &err);
	OCL_CHECK(app, err, "clCreateProgramWithSource");
	OCL_CHECK(app, clBuildProgram(prog, 1, &env.device, "", NULL, NULL), "clBuildProgram");
	k = clCreateKernel(prog, "vadd", &err);
	OCL_CHECK(app, err, "clCreateKernel");
	da = clCreateBuffer(env.ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof(a), a, &err);
	OCL_CHECK(app, err, "clCreateBuffer a");
	db = clCreateBuffer(env.ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof(b), b, &err);
	OCL_CHECK(app, err, "clCreateBuffer b");
	dc = clCreateBuffer(env.ctx, CL_MEM_WRITE_ONLY, sizeof(c), NULL, &err);
	OCL_CHECK(app, err, "clCreateBuffer c");
	OCL_CHECK(app, clSetKernelArg(k, 0, sizeof(da), &da), "clSetKernelArg 0");
	OCL_CHECK(app, clSetKernelArg(k, 1, sizeof(db), &db), "clSetKernelArg 1");
	OCL_CHECK(app, clSetKernelArg(k, 2, sizeof(dc), &dc), "clSetKernelArg 2");
	OCL_CHECK(app, clSetKernelArg(k, 3, sizeof(n), &n), "clSetKernelArg 3");
	printf("ready pid %d\n", (int)getpid());
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		long cnt = 0, j;
		unsigned long long sum = 0;

		if (!strncmp(line, "quit", 4))
			break;
		if (sscanf(line, "launch %ld", &cnt) != 1 || cnt < 0 || cnt > 100000) {
			printf("unknown command\n");
			fflush(stdout);
			continue;
		}
		for (j = 0; j < cnt; j++) {
			memset(c, 0, sizeof(c));
			OCL_CHECK(app, clEnqueueNDRangeKernel(env.queue, k, 1, NULL, &global, NULL, 0, NULL,
							      NULL), "clEnqueueNDRangeKernel");
			OCL_CHECK(app, clEnqueueReadBuffer(env.queue, dc, CL_TRUE, 0, sizeof(c), c, 0, NULL,
							   NULL), "clEnqueueReadBuffer");
			OCL_CHECK(app, clFinish(env.queue), "clFinish");
			for (i = 0; i < N_ITEMS; i++)
				sum += (unsigned long long)c[i] * (unsigned long long)(j + 1);
		}
		printf("launched %ld checksum %llu\n", cnt, sum);
		fflush(stdout);
	}
	clReleaseMemObject(da);
	clReleaseMemObject(db);
	clReleaseMemObject(dc);
	clReleaseKernel(k);
	clReleaseProgram(prog);
	ocl_env_close(&env);
	return 0;
}
