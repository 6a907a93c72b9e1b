/* SPDX-License-Identifier: MIT */
/*
 * vecadd: c = a + b on the first OpenCL device, kernel compiled from OpenCL C
 * (vecadd.cl). Checks every element and prints a checksum, so that a run
 * under `gbpf run` can be compared with a plain run.
 *
 * usage: ocl_vecadd [KERNEL.cl] [N]   (defaults: vecadd.cl next to the binary's
 *        source, as installed by meson into the build folder; N = 4096)
 */
#include <stdint.h>
#include <string.h>

#include "ocl_common.h"

int main(int argc, char **argv)
{
	const char *app = "ocl_vecadd", *path = argc > 1 ? argv[1] : OCL_EXAMPLE_DIR "/vecadd.cl";
	cl_uint n = argc > 2 ? (cl_uint)strtoul(argv[2], NULL, 0) : 4096;
	struct ocl_env env;
	size_t src_size = 0, global;
	char *src = ocl_read_file(app, path, &src_size);
	float *a, *b, *c;
	double sum = 0;
	cl_mem da, db, dc;
	cl_program prog;
	cl_kernel k;
	cl_int err;
	cl_uint i, bad = 0;

	if (!src)
		return 1;
	if (n == 0 || n > (1u << 24)) {
		fprintf(stderr, "%s: N must be in 1..16777216\n", app);
		return 1;
	}
	a = malloc(n * sizeof(float));
	b = malloc(n * sizeof(float));
	c = calloc(n, sizeof(float));
	if (!a || !b || !c)
		return 1;
	for (i = 0; i < n; i++) {
		a[i] = (float)i;
		b[i] = (float)(2 * i + 1);
	}
	ocl_env_open(app, &env);
	prog = clCreateProgramWithSource(env.ctx, 1, (const char **)&src, &src_size, &err);
	OCL_CHECK(app, err, "clCreateProgramWithSource");
	err = clBuildProgram(prog, 1, &env.device, "", NULL, NULL);
	if (err != CL_SUCCESS)
		ocl_print_build_log(prog, env.device);
	OCL_CHECK(app, err, "clBuildProgram");
	k = clCreateKernel(prog, "vecadd", &err);
	OCL_CHECK(app, err, "clCreateKernel(vecadd)");
	da = clCreateBuffer(env.ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, n * sizeof(float), a, &err);
	OCL_CHECK(app, err, "clCreateBuffer(a)");
	db = clCreateBuffer(env.ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, n * sizeof(float), b, &err);
	OCL_CHECK(app, err, "clCreateBuffer(b)");
	dc = clCreateBuffer(env.ctx, CL_MEM_WRITE_ONLY, n * sizeof(float), NULL, &err);
	OCL_CHECK(app, err, "clCreateBuffer(c)");
	OCL_CHECK(app, clSetKernelArg(k, 0, sizeof(da), &da), "clSetKernelArg(0)");
	OCL_CHECK(app, clSetKernelArg(k, 1, sizeof(db), &db), "clSetKernelArg(1)");
	OCL_CHECK(app, clSetKernelArg(k, 2, sizeof(dc), &dc), "clSetKernelArg(2)");
	OCL_CHECK(app, clSetKernelArg(k, 3, sizeof(n), &n), "clSetKernelArg(3)");
	global = n;
	OCL_CHECK(app, clEnqueueNDRangeKernel(env.queue, k, 1, NULL, &global, NULL, 0, NULL, NULL),
		  "clEnqueueNDRangeKernel(vecadd)");
	OCL_CHECK(app, clEnqueueReadBuffer(env.queue, dc, CL_TRUE, 0, n * sizeof(float), c, 0, NULL, NULL),
		  "clEnqueueReadBuffer(c)");
	for (i = 0; i < n; i++) {
		if (c[i] != a[i] + b[i])
			bad++;
		sum += c[i];
	}
	printf("vecadd: n=%u work-items=%u errors=%u checksum=%.1f\n", n, n, bad, sum);
	clReleaseMemObject(da);
	clReleaseMemObject(db);
	clReleaseMemObject(dc);
	clReleaseKernel(k);
	clReleaseProgram(prog);
	ocl_env_close(&env);
	free(src);
	free(a);
	free(b);
	free(c);
	return bad ? 1 : 0;
}
