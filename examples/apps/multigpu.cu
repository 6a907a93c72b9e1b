// SPDX-License-Identifier: MIT
// multigpu: vec_add on every visible GPU (or one, --device D), each with its
// own buffers, launched L times per device and checked.
// Usage: multigpu [--device D] [L]   (L = launches per device, default 4)
// Prints one "multigpu: device=D grid=.. block=.. launches=L: ok" line per device.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
	fprintf(stderr, "multigpu: %s: %s (line %d)\n", #x, cudaGetErrorString(e_), __LINE__); \
	exit(2); } } while (0)

__global__ void vec_add(const float *a, const float *b, float *c, int n, float k)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		c[i] += a[i] + k * b[i];
}

enum { N = 1 << 16, BLOCK = 256, MAXDEV = 16 };

int main(int argc, char **argv)
{
	int ndev = 0, only = -1, launches = 4, bad = 0;
	float *a[MAXDEV], *b[MAXDEV], *c[MAXDEV], *h = (float *)malloc(N * sizeof(float));

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--device") && i + 1 < argc)
			only = atoi(argv[++i]);
		else
			launches = atoi(argv[i]);
	}
	CK(cudaGetDeviceCount(&ndev));
	if (ndev > MAXDEV)
		ndev = MAXDEV;
	if (!h || only >= ndev) {
		fprintf(stderr, "multigpu: no device %d (%d visible)\n", only, ndev);
		return 2;
	}
	for (int i = 0; i < N; i++)
		h[i] = (float)(i % 977);
	// Every device's work is queued before any is waited for: the GPUs run together.
	for (int d = 0; d < ndev; d++) {
		if (only >= 0 && d != only)
			continue;
		CK(cudaSetDevice(d));
		CK(cudaMalloc(&a[d], N * sizeof(float)));
		CK(cudaMalloc(&b[d], N * sizeof(float)));
		CK(cudaMalloc(&c[d], N * sizeof(float)));
		CK(cudaMemcpy(a[d], h, N * sizeof(float), cudaMemcpyHostToDevice));
		CK(cudaMemcpy(b[d], h, N * sizeof(float), cudaMemcpyHostToDevice));
		CK(cudaMemset(c[d], 0, N * sizeof(float)));
		for (int l = 0; l < launches; l++)
			vec_add<<<N / BLOCK, BLOCK>>>(a[d], b[d], c[d], N, (float)(d + 1));
		CK(cudaGetLastError());
	}
	for (int d = 0; d < ndev; d++) {
		if (only >= 0 && d != only)
			continue;
		CK(cudaSetDevice(d));
		CK(cudaDeviceSynchronize());
		CK(cudaMemcpy(h, c[d], N * sizeof(float), cudaMemcpyDeviceToHost));
		for (int i = 0; i < N && !bad; i++) {
			float want = (float)launches * ((float)(i % 977) * (float)(d + 2));
			if (h[i] != want) {
				fprintf(stderr, "multigpu: device %d: [%d] = %g, expected %g\n", d, i, h[i], want);
				bad = 1;
			}
		}
		for (int i = 0; i < N; i++)
			h[i] = (float)(i % 977);
		if (!bad)
			printf("multigpu: device=%d grid=%dx1x1 block=%dx1x1 launches=%d: ok\n", d, N / BLOCK, BLOCK,
			       launches);
		CK(cudaFree(a[d]));
		CK(cudaFree(b[d]));
		CK(cudaFree(c[d]));
	}
	free(h);
	return bad;
}
