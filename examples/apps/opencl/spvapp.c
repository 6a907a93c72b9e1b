/* SPDX-License-Identifier: MIT */
/*
 * spvapp: a program created from a SPIR-V module (saxpy.spv, built from
 * saxpy.cl by clang-15 + llvm-spirv-15) with clCreateProgramWithIL.
 *
 * Platforms without SPIR-V IL support (PoCL 3.1 rejects IL) make the app
 * print "no SPIR-V IL support" and exit 2. Under `gbpf run` with the opencl
 * backend the agent serves such a platform through LLVM bitcode (what PoCL
 * does accept), so the same unmodified app runs there, instrumented.
 *
 * usage: ocl_spvapp [MODULE.spv] [N]
 */
#include "ocl_common.h"

int main(int argc, char **argv)
{
	const char *app = "ocl_spvapp", *path = argc > 1 ? argv[1] : OCL_EXAMPLE_BUILD_DIR "/saxpy.spv";
	cl_uint n = argc > 2 ? (cl_uint)strtoul(argv[2], NULL, 0) : 2048, i, bad = 0;
	size_t il_size = 0, global;
	char *il = ocl_read_file(app, path, &il_size);
	float *x, *y, a = 3.0f;
	double sum = 0;
	struct ocl_env env;
	cl_program prog;
	cl_kernel k;
	cl_mem dx, dy;
	cl_int err;

	if (!il)
		return 1;
	if (n == 0 || n > (1u << 24)) {
		fprintf(stderr, "%s: N must be in 1..16777216\n", app);
		return 1;
	}
	x = malloc(n * sizeof(float));
	y = malloc(n * sizeof(float));
	if (!x || !y)
		return 1;
	for (i = 0; i < n; i++) {
		x[i] = (float)(i % 100);
		y[i] = 1.0f;
	}
	ocl_env_open(app, &env);
	prog = clCreateProgramWithIL(env.ctx, il, il_size, &err);
	if (err != CL_SUCCESS) {
		char ver[128] = "";

		clGetDeviceInfo(env.device, CL_DEVICE_IL_VERSION, sizeof(ver) - 1, ver, NULL);
		printf("spvapp: no SPIR-V IL support on this platform (clCreateProgramWithIL: error %d, "
		       "device IL versions: '%s')\n", (int)err, ver);
		return 2;
	}
	err = clBuildProgram(prog, 1, &env.device, "", NULL, NULL);
	if (err != CL_SUCCESS)
		ocl_print_build_log(prog, env.device);
	OCL_CHECK(app, err, "clBuildProgram");
	k = clCreateKernel(prog, "saxpy", &err);
	OCL_CHECK(app, err, "clCreateKernel(saxpy)");
	dx = clCreateBuffer(env.ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, n * sizeof(float), x, &err);
	OCL_CHECK(app, err, "clCreateBuffer(x)");
	dy = clCreateBuffer(env.ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, n * sizeof(float), y, &err);
	OCL_CHECK(app, err, "clCreateBuffer(y)");
	OCL_CHECK(app, clSetKernelArg(k, 0, sizeof(a), &a), "clSetKernelArg(0)");
	OCL_CHECK(app, clSetKernelArg(k, 1, sizeof(dx), &dx), "clSetKernelArg(1)");
	OCL_CHECK(app, clSetKernelArg(k, 2, sizeof(dy), &dy), "clSetKernelArg(2)");
	OCL_CHECK(app, clSetKernelArg(k, 3, sizeof(n), &n), "clSetKernelArg(3)");
	global = n;
	OCL_CHECK(app, clEnqueueNDRangeKernel(env.queue, k, 1, NULL, &global, NULL, 0, NULL, NULL),
		  "clEnqueueNDRangeKernel(saxpy)");
	OCL_CHECK(app, clEnqueueReadBuffer(env.queue, dy, CL_TRUE, 0, n * sizeof(float), y, 0, NULL, NULL),
		  "clEnqueueReadBuffer(y)");
	for (i = 0; i < n; i++) {
		if (y[i] != a * (float)(i % 100) + 1.0f)
			bad++;
		sum += y[i];
	}
	printf("spvapp: n=%u work-items=%u errors=%u checksum=%.1f\n", n, n, bad, sum);
	clReleaseMemObject(dx);
	clReleaseMemObject(dy);
	clReleaseKernel(k);
	clReleaseProgram(prog);
	ocl_env_close(&env);
	free(il);
	free(x);
	free(y);
	return bad ? 1 : 0;
}
