// SPDX-License-Identifier: MIT
// Compute-bound SGEMM (N x N, default 4096), shared-memory tiles with a 4x4
// register block per thread, timed with CUDA events; checks sampled entries
// against a host dot product. Built with -DHAND_THREADHIST, the kernel also
// counts each thread's exit in a per-thread array (threadhist written by hand,
// as in vecadd_bench.cu), for the compute-bound threadhist row.
#include "bench_common.h"
#include <cmath>

#define TILE 64
#define KT 16

__global__ void sgemm(const float *A, const float *B, float *C, int n, unsigned long long *hand)
{
	__shared__ float As[KT][TILE];
	__shared__ float Bs[KT][TILE];
	int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
	int row0 = blockIdx.y * TILE, col0 = blockIdx.x * TILE;
	float acc[4][4] = {};

	for (int k0 = 0; k0 < n; k0 += KT) {
		for (int l = threadIdx.x; l < KT * TILE; l += 256) {
			int kk = l / TILE, rr = l % TILE;
			As[kk][rr] = A[(size_t)(row0 + rr) * n + k0 + kk];
			Bs[kk][rr] = B[(size_t)(k0 + kk) * n + col0 + rr];
		}
		__syncthreads();
#pragma unroll
		for (int kk = 0; kk < KT; kk++) {
			float a[4], b[4];
#pragma unroll
			for (int i = 0; i < 4; i++) {
				a[i] = As[kk][ty * 4 + i];
				b[i] = Bs[kk][tx * 4 + i];
			}
#pragma unroll
			for (int i = 0; i < 4; i++)
#pragma unroll
				for (int j = 0; j < 4; j++)
					acc[i][j] += a[i] * b[j];
		}
		__syncthreads();
	}
	for (int i = 0; i < 4; i++)
		for (int j = 0; j < 4; j++)
			C[(size_t)(row0 + ty * 4 + i) * n + col0 + tx * 4 + j] = acc[i][j];
#ifdef HAND_THREADHIST
	hand[((size_t)blockIdx.y * gridDim.x + blockIdx.x) * blockDim.x + threadIdx.x] += 1;
#endif
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 4096, iters = argc > 2 ? atoi(argv[2]) : 20;
	size_t nn = (size_t)n * n;
	std::vector<float> ha(nn), hb(nn), hc(nn);
	float *A, *B, *C;
	unsigned long long *hand = nullptr;

	for (size_t i = 0; i < nn; i++) {
		ha[i] = (float)((i * 2654435761u) % 1000) / 1000.0f - 0.5f;
		hb[i] = (float)((i * 40503u + 7) % 1000) / 1000.0f - 0.5f;
	}
	CK(cudaMalloc(&A, nn * 4));
	CK(cudaMalloc(&B, nn * 4));
	CK(cudaMalloc(&C, nn * 4));
	CK(cudaMemcpy(A, ha.data(), nn * 4, cudaMemcpyHostToDevice));
	CK(cudaMemcpy(B, hb.data(), nn * 4, cudaMemcpyHostToDevice));
	dim3 grid(n / TILE, n / TILE);
#ifdef HAND_THREADHIST
	CK(cudaMalloc(&hand, (size_t)grid.x * grid.y * 256 * sizeof(*hand)));
	CK(cudaMemset(hand, 0, (size_t)grid.x * grid.y * 256 * sizeof(*hand)));
#endif
	time_launches("gemm", 3, iters, [&] { sgemm<<<grid, 256>>>(A, B, C, n, hand); });
	CK(cudaMemcpy(hc.data(), C, nn * 4, cudaMemcpyDeviceToHost));
	for (int s = 0; s < 16; s++) {
		int r = (s * 977) % n, c = (s * 613 + 5) % n;
		double want = 0;
		for (int k = 0; k < n; k++)
			want += (double)ha[(size_t)r * n + k] * hb[(size_t)k * n + c];
		if (fabs(want - hc[(size_t)r * n + c]) > 1e-2 * (1 + fabs(want))) {
			printf("gemm: wrong C[%d][%d] = %f, want %f\n", r, c, hc[(size_t)r * n + c], want);
			return 1;
		}
	}
	printf("gemm: %d x %d ok\n", n, n);
	return 0;
}
