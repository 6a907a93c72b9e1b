// SPDX-License-Identifier: MIT
// bigconst: a kernel reading a `__constant__` table that takes the user
// constant bank (64 KB) all but 8 bytes: nothing more fits in it, so gbpf's
// map table in the constant bank (GBPF_PTX_CONST_MAP_TABLE) does not
// either; the agent injects the kernel again with the global table only
// (docs/PROCESS_MODEL.md). The host writes the table with
// cudaMemcpyToSymbol; each thread sums a stride of it. One
// "grid=.. block=.. launches=.." line per kernel.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
	fprintf(stderr, "bigconst: %s: %s (line %d)\n", #x, cudaGetErrorString(e_), __LINE__); \
	exit(2); } } while (0)

enum { WORDS = (65536 - 8) / 4, N = 8192, BLOCK = 256, STEPS = 16 };

__constant__ unsigned table[WORDS];

__global__ void sum_k(unsigned *out)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	unsigned s = 0;

	for (int k = 0; k < STEPS; k++)
		s += table[(i * 7 + k * 1021) % WORDS];
	out[i] = s;
}

int main(void)
{
	static unsigned h[WORDS], got[N];
	const int grid = N / BLOCK, launches = 2;
	unsigned *out;
	int bad = 0;

	for (int w = 0; w < WORDS; w++)
		h[w] = (unsigned)w * 2654435761u;
	CK(cudaMemcpyToSymbol(table, h, sizeof(h)));
	CK(cudaMalloc(&out, N * sizeof(unsigned)));
	for (int l = 0; l < launches; l++)
		sum_k<<<grid, BLOCK>>>(out);
	CK(cudaDeviceSynchronize());
	CK(cudaMemcpy(got, out, sizeof(got), cudaMemcpyDeviceToHost));
	for (int i = 0; i < N; i++) {
		unsigned s = 0;

		for (int k = 0; k < STEPS; k++)
			s += h[(i * 7 + k * 1021) % WORDS];
		bad += got[i] != s;
	}
	printf("grid=%dx1x1 block=%dx1x1 launches=%d sum_k\n", grid, BLOCK, launches);
	printf("bigconst: %d sums %s\n", N, bad ? "WRONG" : "ok");
	CK(cudaFree(out));
	return bad ? 1 : 0;
}
