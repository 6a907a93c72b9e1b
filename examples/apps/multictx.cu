// SPDX-License-Identifier: MIT
// multictx: two driver contexts on one device (cuCtxCreate), switched with
// cuCtxSetCurrent between launches, two streams in each; the runtime API
// launches into whichever context is current. Each context's buffers are
// checked. Build: nvcc -o multictx multictx.cu -lcuda
// Prints one "grid=.. block=.. launches=.." line per kernel configuration, with
// the global accesses of one launch ("mem=KIND.SPACE.BYTES:COUNT,...").
#include <cstdio>
#include <cstdlib>
#include <cuda.h>
#include <cuda_runtime.h>

#define CU(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { const char *s_ = "?"; \
	cuGetErrorString(r_, &s_); fprintf(stderr, "multictx: %s: %s (line %d)\n", #x, s_, __LINE__); \
	exit(2); } } while (0)
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
	fprintf(stderr, "multictx: %s: %s (line %d)\n", #x, cudaGetErrorString(e_), __LINE__); \
	exit(2); } } while (0)

__global__ void mark_k(int *p, int n, int v)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		p[i] = p[i] * 10 + v;
}

enum { NCTX = 2, NST = 2, ROUNDS = 3, N = 5000, BLOCK = 128 };

int main(void)
{
	CUdevice dev;
	CUcontext ctx[NCTX];
	cudaStream_t st[NCTX][NST];
	int *buf[NCTX][NST], *h, bad = 0;
	const int grid = (N + BLOCK - 1) / BLOCK;

	CU(cuInit(0));
	CU(cuDeviceGet(&dev, 0));
	for (int c = 0; c < NCTX; c++) {
		CU(cuCtxCreate(&ctx[c], NULL, 0, dev));
		for (int s = 0; s < NST; s++) {
			CK(cudaStreamCreateWithFlags(&st[c][s], cudaStreamNonBlocking));
			CK(cudaMalloc(&buf[c][s], N * sizeof(int)));
			CK(cudaMemset(buf[c][s], 0, N * sizeof(int)));
		}
	}
	// Every round visits both contexts and both streams of each: value digits 1..4.
	for (int r = 0; r < ROUNDS; r++)
		for (int c = 0; c < NCTX; c++) {
			CU(cuCtxSetCurrent(ctx[c]));
			for (int s = 0; s < NST; s++)
				mark_k<<<grid, BLOCK, 0, st[c][s]>>>(buf[c][s], N, c * NST + s + 1);
		}
	h = (int *)malloc(N * sizeof(int));
	if (!h)
		return 2;
	for (int c = 0; c < NCTX; c++) {
		CU(cuCtxSetCurrent(ctx[c]));
		CK(cudaDeviceSynchronize());
		for (int s = 0; s < NST; s++) {
			int d = c * NST + s + 1, want = d * 111;
			CK(cudaMemcpy(h, buf[c][s], N * sizeof(int), cudaMemcpyDeviceToHost));
			for (int i = 0; i < N && !bad; i++)
				if (h[i] != want) {
					fprintf(stderr, "multictx: context %d stream %d: [%d] = %d, expected %d\n", c,
						s, i, h[i], want);
					bad = 1;
				}
		}
	}
	free(h);
	if (!bad)
		printf("multictx: mark_k contexts=%d streams=%d grid=%dx1x1 block=%dx1x1 launches=%d "
		       "mem=ld.global.4:%d,st.global.4:%d: ok\n", NCTX, NST, grid, BLOCK, NCTX * NST * ROUNDS, N, N);
	for (int c = 0; c < NCTX; c++) {
		CU(cuCtxSetCurrent(ctx[c]));
		for (int s = 0; s < NST; s++) {
			CK(cudaFree(buf[c][s]));
			CK(cudaStreamDestroy(st[c][s]));
		}
	}
	CU(cuCtxSetCurrent(NULL));
	for (int c = 0; c < NCTX; c++)
		CU(cuCtxDestroy(ctx[c]));
	return bad;
}
