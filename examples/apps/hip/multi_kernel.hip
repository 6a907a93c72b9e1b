// SPDX-License-Identifier: MIT
// Several kernels (a template, a 2-D grid, a loop with branches, shared
// memory and a barrier) launched with <<<>>> and hipLaunchKernelGGL: code
// with many branches for the rewriter and several registrations for the
// interception tests.
#include <hip/hip_runtime.h>
#include <stdio.h>

template <typename T> __global__ void scale(T *x, T f, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		x[i] *= f;
}

__global__ void grid2d(int *out, int w, int h)
{
	int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;

	if (x < w && y < h)
		out[y * w + x] = x ^ y;
}

__global__ void reduce_sum(const int *in, int *out, int n)
{
	__shared__ int part[256];
	int t = threadIdx.x, s = 0;

	for (int i = blockIdx.x * blockDim.x + t; i < n; i += gridDim.x * blockDim.x)
		s += (in[i] & 1) ? in[i] * 3 : in[i] / 2;
	part[t] = s;
	__syncthreads();
	for (int k = blockDim.x / 2; k > 0; k >>= 1) {
		if (t < k)
			part[t] += part[t + k];
		__syncthreads();
	}
	if (t == 0)
		atomicAdd(out, part[0]);
}

int main(void)
{
	int n = 4096, *ibuf, *sum;
	float *fbuf;

	if (hipMalloc((void **)&ibuf, n * sizeof(int)) != hipSuccess ||
	    hipMalloc((void **)&fbuf, n * sizeof(float)) != hipSuccess ||
	    hipMalloc((void **)&sum, sizeof(int)) != hipSuccess) {
		fprintf(stderr, "multi_kernel: hipMalloc failed\n");
		return 1;
	}
	scale<float><<<n / 256, 256>>>(fbuf, 2.0f, n);
	scale<int><<<n / 128, 128>>>(ibuf, 3, n);
	grid2d<<<dim3(4, 8, 1), dim3(16, 8, 1)>>>(ibuf, 64, 64);
	hipLaunchKernelGGL(reduce_sum, dim3(8), dim3(256), 0, 0, ibuf, sum, n);
	hipDeviceSynchronize();
	hipFree(ibuf);
	hipFree(fbuf);
	hipFree(sum);
	printf("multi_kernel: 4 launches done\n");
	return 0;
}
