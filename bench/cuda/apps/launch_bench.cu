// SPDX-License-Identifier: MIT
// Host cost of a kernel launch: an empty kernel launched N times (default
// 20000), host time per cudaLaunchKernel call; and the time of the very
// first launch (+ synchronisation) of a small kernel, which under gbpf
// includes instrumentation and JIT.
#include "bench_common.h"
#include <time.h>

__global__ void empty_kernel(int *p)
{
	if (p && threadIdx.x == 1000000)
		*p = 1;
}

__global__ void small_kernel(int *p)
{
	p[threadIdx.x] = threadIdx.x * 3;
}

static double now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 20000;
	int *p, h[64];
	double t0, t1;

	CK(cudaFree(0)); // context creation is not the launch's cost
	CK(cudaMalloc(&p, 64 * sizeof(int)));
	t0 = now_us();
	small_kernel<<<1, 64>>>(p);
	CK(cudaDeviceSynchronize());
	t1 = now_us();
	CK(cudaMemcpy(h, p, sizeof(h), cudaMemcpyDeviceToHost));
	for (int i = 0; i < 64; i++)
		if (h[i] != i * 3) {
			printf("launch: small_kernel wrong at %d\n", i);
			return 1;
		}
	printf("gbpf-bench first_launch us=%.1f\n", t1 - t0);
	for (int i = 0; i < 1000; i++)
		empty_kernel<<<1, 32>>>(nullptr);
	CK(cudaDeviceSynchronize());
	t0 = now_us();
	for (int i = 0; i < n; i++)
		empty_kernel<<<1, 32>>>(nullptr);
	t1 = now_us();
	CK(cudaDeviceSynchronize());
	printf("gbpf-bench launch per_launch_us=%.3f launches=%d\n", (t1 - t0) / n, n);
	return 0;
}
