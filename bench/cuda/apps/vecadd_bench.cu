// SPDX-License-Identifier: MIT
// Vector add of 2^LOG2N floats (default 2^26), inputs from a hash (not zeros),
// timed with CUDA events; checks the result. Built twice: plain, and with
// -DHAND_THREADHIST, where the kernel itself counts each thread's exit in a
// per-thread array - threadhist written by hand, to compare gbpf's injected
// probe with.
#include "bench_common.h"

__global__ void init(float *a, float *b, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) {
		unsigned h = (unsigned)i * 2654435761u;
		a[i] = (float)(h & 0xffff) / 65536.0f + 0.5f;
		b[i] = (float)(h >> 16) / 65536.0f + 0.25f;
	}
}

__global__ void vec_add(const float *a, const float *b, float *c, int n, unsigned long long *hand)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		c[i] = a[i] + b[i];
#ifdef HAND_THREADHIST
	hand[(size_t)blockIdx.x * blockDim.x + threadIdx.x] += 1;
#endif
}

int main(int argc, char **argv)
{
	int log2n = argc > 1 ? atoi(argv[1]) : 26, iters = argc > 2 ? atoi(argv[2]) : 50;
	int n = 1 << log2n, threads = 256, blocks = (n + threads - 1) / threads;
	float *a, *b, *c;
	unsigned long long *hand = nullptr;
	std::vector<float> hc(n);

	CK(cudaMalloc(&a, n * sizeof(float)));
	CK(cudaMalloc(&b, n * sizeof(float)));
	CK(cudaMalloc(&c, n * sizeof(float)));
#ifdef HAND_THREADHIST
	CK(cudaMalloc(&hand, (size_t)blocks * threads * sizeof(*hand)));
	CK(cudaMemset(hand, 0, (size_t)blocks * threads * sizeof(*hand)));
#endif
	init<<<blocks, threads>>>(a, b, n);
	CK(cudaGetLastError());
	time_launches(argc > 3 ? argv[3] : "vecadd", 5, iters,
		      [&] { vec_add<<<blocks, threads>>>(a, b, c, n, hand); });
	CK(cudaMemcpy(hc.data(), c, n * sizeof(float), cudaMemcpyDeviceToHost));
	for (int i = 0; i < n; i += 4099) {
		unsigned h = (unsigned)i * 2654435761u;
		float want = ((float)(h & 0xffff) / 65536.0f + 0.5f) + ((float)(h >> 16) / 65536.0f + 0.25f);
		if (hc[i] != want) {
			printf("vecadd: wrong result at %d: %f != %f\n", i, hc[i], want);
			return 1;
		}
	}
	printf("vecadd: %d elements ok\n", n);
	return 0;
}
