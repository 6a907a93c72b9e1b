// SPDX-License-Identifier: MIT
// Asynchronous work on two streams (H2D copy, kernel, D2H copy on each),
// timed by the app itself with CUDA events, one synchronisation at the end:
// the case where a timeline is needed to see where the time goes. Prints
// "phase stream=HANDLE h2d_us=.. kernel_us=.. d2h_us=.." per stream, for
// tests/cuda_agent/check_timeline.py to compare with gbpf's trace.
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
	fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_)); exit(2); } } while (0)

__global__ void spin(float *p, int n, int rounds)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) {
		float v = p[i];
		for (int r = 0; r < rounds; r++)
			v = v * 0.999f + 0.5f;
		p[i] = v;
	}
}

int main()
{
	const int n = 16 << 20; // 64 MB of floats per stream
	cudaStream_t st[2];
	cudaEvent_t ev[2][4];
	float *h[2], *d[2];

	for (int s = 0; s < 2; s++) {
		CK(cudaStreamCreateWithFlags(&st[s], cudaStreamNonBlocking));
		CK(cudaMallocHost(&h[s], n * sizeof(float)));
		CK(cudaMalloc(&d[s], n * sizeof(float)));
		for (int i = 0; i < n; i++)
			h[s][i] = (float)(i % 1000) * 0.001f + s;
		for (int k = 0; k < 4; k++)
			CK(cudaEventCreate(&ev[s][k]));
	}
	// One untimed launch first: the kernel's lazy module load is not a phase.
	spin<<<1, 32, 0, st[0]>>>(d[0], 32, 1);
	CK(cudaDeviceSynchronize());
	for (int s = 0; s < 2; s++) {
		CK(cudaEventRecord(ev[s][0], st[s]));
		CK(cudaMemcpyAsync(d[s], h[s], n * sizeof(float), cudaMemcpyHostToDevice, st[s]));
		CK(cudaEventRecord(ev[s][1], st[s]));
		spin<<<(n + 255) / 256, 256, 0, st[s]>>>(d[s], n, 400 + 200 * s);
		CK(cudaEventRecord(ev[s][2], st[s]));
		CK(cudaMemcpyAsync(h[s], d[s], n * sizeof(float), cudaMemcpyDeviceToHost, st[s]));
		CK(cudaEventRecord(ev[s][3], st[s]));
	}
	CK(cudaDeviceSynchronize());
	for (int s = 0; s < 2; s++) {
		float ms[3];
		for (int k = 0; k < 3; k++)
			CK(cudaEventElapsedTime(&ms[k], ev[s][k], ev[s][k + 1]));
		printf("phase stream=%llu h2d_us=%.1f kernel_us=%.1f d2h_us=%.1f\n",
		       (unsigned long long)(uintptr_t)st[s], ms[0] * 1e3, ms[1] * 1e3, ms[2] * 1e3);
	}
	return 0;
}
