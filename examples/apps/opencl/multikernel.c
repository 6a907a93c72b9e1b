/* SPDX-License-Identifier: MIT */
/*
 * multikernel: three kernels of one program (multikernel.cl, created with
 * clCreateKernelsInProgram), launched ROUNDS times each for scale and shift
 * and once for square_sum (with a __local argument), on N floats. Checks the
 * result on the host and prints one line, identical with and without gbpf.
 *
 * usage: ocl_multikernel [KERNEL.cl] [N] [ROUNDS]   (N a multiple of 64)
 */
#include <math.h>
#include <string.h>

#include "ocl_common.h"

#define GROUP 64

static cl_kernel find_kernel(const char *app, cl_kernel *ks, cl_uint n, const char *name)
{
	for (cl_uint i = 0; i < n; i++) {
		char got[64] = "";

		clGetKernelInfo(ks[i], CL_KERNEL_FUNCTION_NAME, sizeof(got) - 1, got, NULL);
		if (!strcmp(got, name))
			return ks[i];
	}
	fprintf(stderr, "%s: kernel %s missing from the program\n", app, name);
	exit(1);
}

int main(int argc, char **argv)
{
	const char *app = "ocl_multikernel", *path = argc > 1 ? argv[1] : OCL_EXAMPLE_DIR "/multikernel.cl";
	cl_uint n = argc > 2 ? (cl_uint)strtoul(argv[2], NULL, 0) : 1024;
	cl_uint rounds = argc > 3 ? (cl_uint)strtoul(argv[3], NULL, 0) : 3, nk = 0, i, r, launches = 0;
	size_t src_size = 0, global, local = GROUP;
	char *src = ocl_read_file(app, path, &src_size);
	float *x, *partial, f = 2.0f, d = 1.0f;
	double expect = 0, got = 0;
	struct ocl_env env;
	cl_kernel ks[8], scale, shift, sq;
	cl_program prog;
	cl_mem dx, dp;
	cl_int err;

	if (!src)
		return 1;
	if (n == 0 || n % GROUP || n > (1u << 22) || rounds > 1000) {
		fprintf(stderr, "%s: N must be a multiple of %d up to 4194304, ROUNDS at most 1000\n", app, GROUP);
		return 1;
	}
	x = malloc(n * sizeof(float));
	partial = calloc(n / GROUP, sizeof(float));
	if (!x || !partial)
		return 1;
	for (i = 0; i < n; i++)
		x[i] = (float)(i % 7);
	ocl_env_open(app, &env);
	prog = clCreateProgramWithSource(env.ctx, 1, (const char **)&src, &src_size, &err);
	OCL_CHECK(app, err, "clCreateProgramWithSource");
	err = clBuildProgram(prog, 1, &env.device, "-DUNUSED=1", NULL, NULL);
	if (err != CL_SUCCESS)
		ocl_print_build_log(prog, env.device);
	OCL_CHECK(app, err, "clBuildProgram");
	OCL_CHECK(app, clCreateKernelsInProgram(prog, 8, ks, &nk), "clCreateKernelsInProgram");
	scale = find_kernel(app, ks, nk, "scale");
	shift = find_kernel(app, ks, nk, "shift");
	sq = find_kernel(app, ks, nk, "square_sum");
	dx = clCreateBuffer(env.ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, n * sizeof(float), x, &err);
	OCL_CHECK(app, err, "clCreateBuffer(x)");
	dp = clCreateBuffer(env.ctx, CL_MEM_WRITE_ONLY, n / GROUP * sizeof(float), NULL, &err);
	OCL_CHECK(app, err, "clCreateBuffer(partial)");
	OCL_CHECK(app, clSetKernelArg(scale, 0, sizeof(dx), &dx), "clSetKernelArg(scale, 0)");
	OCL_CHECK(app, clSetKernelArg(scale, 1, sizeof(f), &f), "clSetKernelArg(scale, 1)");
	OCL_CHECK(app, clSetKernelArg(scale, 2, sizeof(n), &n), "clSetKernelArg(scale, 2)");
	OCL_CHECK(app, clSetKernelArg(shift, 0, sizeof(dx), &dx), "clSetKernelArg(shift, 0)");
	OCL_CHECK(app, clSetKernelArg(shift, 2, sizeof(n), &n), "clSetKernelArg(shift, 2)");
	global = n;
	for (r = 0; r < rounds; r++) {
		/* the shift changes at every round: arguments set between launches must reach them */
		float dr = d + (float)r;

		OCL_CHECK(app, clSetKernelArg(shift, 1, sizeof(dr), &dr), "clSetKernelArg(shift, 1)");
		OCL_CHECK(app, clEnqueueNDRangeKernel(env.queue, scale, 1, NULL, &global, NULL, 0, NULL, NULL),
			  "clEnqueueNDRangeKernel(scale)");
		OCL_CHECK(app, clEnqueueNDRangeKernel(env.queue, shift, 1, NULL, &global, NULL, 0, NULL, NULL),
			  "clEnqueueNDRangeKernel(shift)");
		launches += 2;
	}
	OCL_CHECK(app, clSetKernelArg(sq, 0, sizeof(dx), &dx), "clSetKernelArg(square_sum, 0)");
	OCL_CHECK(app, clSetKernelArg(sq, 1, sizeof(dp), &dp), "clSetKernelArg(square_sum, 1)");
	OCL_CHECK(app, clSetKernelArg(sq, 2, GROUP * sizeof(float), NULL), "clSetKernelArg(square_sum, 2)");
	OCL_CHECK(app, clSetKernelArg(sq, 3, sizeof(n), &n), "clSetKernelArg(square_sum, 3)");
	OCL_CHECK(app, clEnqueueNDRangeKernel(env.queue, sq, 1, NULL, &global, &local, 0, NULL, NULL),
		  "clEnqueueNDRangeKernel(square_sum)");
	launches++;
	OCL_CHECK(app, clEnqueueReadBuffer(env.queue, dp, CL_TRUE, 0, n / GROUP * sizeof(float), partial, 0, NULL,
					   NULL), "clEnqueueReadBuffer(partial)");
	for (i = 0; i < n; i++) {
		double v = x[i];

		for (r = 0; r < rounds; r++)
			v = v * f + (d + r);
		expect += v * v;
	}
	for (i = 0; i < n / GROUP; i++)
		got += partial[i];
	printf("multikernel: n=%u rounds=%u launches=%u work-items=%u sum=%.6e %s\n", n, rounds, launches,
	       launches * n, got, fabs(got - expect) <= 1e-4 * fabs(expect) ? "ok" : "WRONG");
	clReleaseMemObject(dx);
	clReleaseMemObject(dp);
	for (i = 0; i < nk; i++)
		clReleaseKernel(ks[i]);
	clReleaseProgram(prog);
	ocl_env_close(&env);
	free(src);
	free(x);
	free(partial);
	return fabs(got - expect) <= 1e-4 * fabs(expect) ? 0 : 1;
}
