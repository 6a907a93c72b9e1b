// SPDX-License-Identifier: MIT
// Vector add through the HIP runtime API (<<<>>> launch): the test app of
// the hip backend's interception and code-object rewriting.
#include <hip/hip_runtime.h>
#include <stdio.h>
#include <stdlib.h>

__global__ void vector_add(const float *a, const float *b, float *c, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		c[i] = a[i] + b[i];
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1024, iters = argc > 2 ? atoi(argv[2]) : 3;
	size_t bytes = (size_t)n * sizeof(float);
	float *a, *b, *c;

	if (hipMalloc((void **)&a, bytes) != hipSuccess || hipMalloc((void **)&b, bytes) != hipSuccess ||
	    hipMalloc((void **)&c, bytes) != hipSuccess) {
		fprintf(stderr, "vector_add: hipMalloc failed\n");
		return 1;
	}
	for (int it = 0; it < iters; it++) {
		vector_add<<<(n + 255) / 256, 256>>>(a, b, c, n);
		if (hipGetLastError() != hipSuccess) {
			fprintf(stderr, "vector_add: launch %d failed\n", it);
			return 1;
		}
	}
	hipDeviceSynchronize();
	hipFree(a);
	hipFree(b);
	hipFree(c);
	printf("vector_add: %d launches of %d elements done\n", iters, n);
	return 0;
}
