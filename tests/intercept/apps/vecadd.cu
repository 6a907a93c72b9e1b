// tests/intercept/apps/vecadd.cu - a plain CUDA runtime app (built with nvcc when found).
#include <cstdio>
__global__ void vec_add(const float *a, const float *b, float *c, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		c[i] = a[i] + b[i];
}
int main()
{
	const int n = 1000;
	float *a, *b, *c;
	cudaError_t e = cudaMalloc(&a, n * sizeof(float));
	printf("cudaMalloc: %d\n", (int)e);
	cudaMalloc(&b, n * sizeof(float));
	cudaMalloc(&c, n * sizeof(float));
	vec_add<<<4, 256>>>(a, b, c, n);
	e = cudaGetLastError();
	printf("launch: %d\n", (int)e);
	e = cudaDeviceSynchronize();
	printf("sync: %d\n", (int)e);
	return 0;
}
