// SPDX-License-Identifier: MIT
// bigsmem: a kernel using 160 KB of dynamic shared memory, above the 48 KB
// a launch gets without opting in: cudaFuncSetAttribute(
// cudaFuncAttributeMaxDynamicSharedMemorySize) first (an instrumented copy
// of the kernel needs the same attribute, or its launch fails). Each block
// stages 40960 ints in shared memory and writes them back reversed, plus
// its block index; results checked. One "grid=.. block=.. launches=.." line,
// with the accesses of one launch ("mem=KIND.SPACE.BYTES:COUNT,...").
// `bigsmem --max` stages as many ints as the card lets a block have
// (cudaDevAttrMaxSharedMemoryPerBlockOptin): an instrumented copy that adds
// shared memory of its own cannot launch so, and the original must run.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
	fprintf(stderr, "bigsmem: %s: %s (line %d)\n", #x, cudaGetErrorString(e_), __LINE__); \
	exit(2); } } while (0)

enum { BLOCK = 256, GRID = 24, LAUNCHES = 2 };

// out[b * words + w] = in[b * words + (words - 1 - w)] + b: every word crosses shared memory.
__global__ void stage_k(const int *in, int *out, int words)
{
	extern __shared__ int big[];
	const int *src = in + (size_t)blockIdx.x * words;

	for (int w = threadIdx.x; w < words; w += blockDim.x)
		big[w] = src[w];
	__syncthreads();
	for (int w = threadIdx.x; w < words; w += blockDim.x)
		out[(size_t)blockIdx.x * words + w] = big[words - 1 - w] + blockIdx.x;
}

int main(int argc, char **argv)
{
	int WORDS = 40960, optin = 0;

	if (argc > 1 && !strcmp(argv[1], "--max")) {
		CK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0));
		WORDS = optin / (int)sizeof(int);
	}
	const size_t smem = WORDS * sizeof(int), total = (size_t)GRID * WORDS;
	int *in, *out, *h, bad = 0;

	CK(cudaFuncSetAttribute(stage_k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
	CK(cudaMalloc(&in, total * sizeof(int)));
	CK(cudaMalloc(&out, total * sizeof(int)));
	h = (int *)malloc(total * sizeof(int));
	if (!h)
		return 2;
	for (size_t i = 0; i < total; i++)
		h[i] = (int)(i * 7 % 100003);
	CK(cudaMemcpy(in, h, total * sizeof(int), cudaMemcpyHostToDevice));
	for (int r = 0; r < LAUNCHES; r++)
		stage_k<<<GRID, BLOCK, smem>>>(in, out, WORDS);
	CK(cudaGetLastError());
	CK(cudaDeviceSynchronize());
	CK(cudaMemcpy(h, out, total * sizeof(int), cudaMemcpyDeviceToHost));
	for (size_t i = 0; i < total && !bad; i++) {
		size_t b = i / WORDS, w = i % WORDS, j = b * WORDS + (WORDS - 1 - w);
		int want = (int)(j * 7 % 100003) + (int)b;
		if (h[i] != want) {
			fprintf(stderr, "bigsmem: out[%zu] = %d, expected %d\n", i, h[i], want);
			bad = 1;
		}
	}
	free(h);
	if (!bad)
		printf("bigsmem: stage_k smem=%zu grid=%dx1x1 block=%dx1x1 launches=%d "
		       "mem=ld.global.4:%d,st.shared.4:%d,ld.shared.4:%d,st.global.4:%d: ok\n",
		       smem, GRID, BLOCK, LAUNCHES, GRID * WORDS, GRID * WORDS, GRID * WORDS, GRID * WORDS);
	CK(cudaFree(in));
	CK(cudaFree(out));
	return bad;
}
