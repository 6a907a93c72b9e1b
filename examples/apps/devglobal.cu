// SPDX-License-Identifier: MIT
// devglobal: `__device__` globals shared by the host and kernels. The host
// writes a scale with cudaMemcpyToSymbol, a kernel reads it and counts its
// threads in a global counter, a second kernel reads what the first wrote
// into a global table, and the host reads counter and table back with
// cudaMemcpyFromSymbol. An instrumented kernel must see and update the same
// globals as the original. One "grid=.. block=.. launches=.." line per kernel.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
	fprintf(stderr, "devglobal: %s: %s (line %d)\n", #x, cudaGetErrorString(e_), __LINE__); \
	exit(2); } } while (0)

enum { N = 4096, BLOCK = 128 };

__device__ int scale;
__device__ unsigned long long counter;
__device__ int table[N];

__global__ void write_k(void)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	atomicAdd(&counter, 1ull);
	if (i < N)
		table[i] = i * scale;
}

__global__ void bump_k(int *out)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	atomicAdd(&counter, 1ull);
	if (i < N)
		out[i] = table[i] + 1;
}

int main(void)
{
	const int grid = N / BLOCK;
	int s = 7, *out, *h, bad = 0;
	unsigned long long c = 0;

	CK(cudaMemcpyToSymbol(scale, &s, sizeof(s)));
	CK(cudaMemcpyToSymbol(counter, &c, sizeof(c)));
	CK(cudaMalloc(&out, N * sizeof(int)));
	h = (int *)malloc(N * sizeof(int));
	if (!h)
		return 2;
	write_k<<<grid, BLOCK>>>();
	bump_k<<<grid, BLOCK>>>(out);
	CK(cudaDeviceSynchronize());
	CK(cudaMemcpyFromSymbol(&c, counter, sizeof(c)));
	if (c != 2ull * grid * BLOCK) {
		fprintf(stderr, "devglobal: counter = %llu, expected %llu\n", c, 2ull * grid * BLOCK);
		bad = 1;
	}
	CK(cudaMemcpyFromSymbol(h, table, N * sizeof(int)));
	for (int i = 0; i < N && !bad; i++)
		if (h[i] != i * s) {
			fprintf(stderr, "devglobal: table[%d] = %d, expected %d\n", i, h[i], i * s);
			bad = 1;
		}
	CK(cudaMemcpy(h, out, N * sizeof(int), cudaMemcpyDeviceToHost));
	for (int i = 0; i < N && !bad; i++)
		if (h[i] != i * s + 1) {
			fprintf(stderr, "devglobal: out[%d] = %d, expected %d\n", i, h[i], i * s + 1);
			bad = 1;
		}
	free(h);
	if (!bad) {
		printf("devglobal: write_k grid=%dx1x1 block=%dx1x1 launches=1\n", grid, BLOCK);
		printf("devglobal: bump_k grid=%dx1x1 block=%dx1x1 launches=1\n", grid, BLOCK);
		printf("devglobal: counter %llu, table and out ok\n", c);
	}
	CK(cudaFree(out));
	return bad;
}
