// manysites: one kernel with 96 global loads and 32 global stores a thread,
// unrolled, so that it has more memory sites than gbpf inlines a memory probe
// into (the first 64; the rest call the probe as a function). Prints its
// launch configuration, the global accesses one launch makes and the total of
// mem_trace's stride histogram over the run, in the form
// tests/cuda_agent/apps/check_tools.py reads, and checks its own result.
// `manysites REPS [LOG2_N]` (default N 2^15 threads) launches the kernel REPS more times and prints the median
// time of one launch (CUDA events), for measuring what instrumentation costs
// such a kernel.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

enum { LOADS = 96, STORES = 32 };

// in and out may alias as far as the compiler knows (no __restrict__), so the
// loads stay plain ld.global (not ld.global.nc) and none is merged or moved.
__global__ void many_sites(const float *in, float *out, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	float acc = 0.0f;
#pragma unroll
	for (int k = 0; k < LOADS; k++)
		acc += in[k * n + i] * (float)(k + 1);
#pragma unroll
	for (int k = 0; k < STORES; k++)
		out[k * n + i] = acc + (float)k;
}

static int compare_floats(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	int reps = argc > 1 ? atoi(argv[1]) : 0;
	int log2_n = argc > 2 ? atoi(argv[2]) : 15;
	if (log2_n < 8 || log2_n > 22) {
		fprintf(stderr, "manysites: LOG2_N %d out of range 8..22\n", log2_n);
		return 2;
	}
	const int n = 1 << log2_n;
	float *in, *out;
	if (cudaMallocManaged(&in, (size_t)LOADS * n * sizeof(float)) ||
	    cudaMallocManaged(&out, (size_t)STORES * n * sizeof(float))) {
		fprintf(stderr, "manysites: cudaMallocManaged failed\n");
		return 1;
	}
	// Small integers: every partial sum is exact in float.
	for (int k = 0; k < LOADS; k++)
		for (int i = 0; i < n; i++)
			in[k * n + i] = (float)((i + k) % 7);
	many_sites<<<n / 256, 256>>>(in, out, n);
	if (cudaDeviceSynchronize() != cudaSuccess) {
		fprintf(stderr, "manysites: kernel failed\n");
		return 1;
	}
	for (int i = 0; i < n; i++) {
		float acc = 0.0f;
		for (int k = 0; k < LOADS; k++)
			acc += (float)((i + k) % 7) * (float)(k + 1);
		for (int k = 0; k < STORES; k++) {
			if (out[k * n + i] != acc + (float)k) {
				fprintf(stderr, "manysites: out[%d][%d] = %f, expected %f\n", k, i,
					out[k * n + i], acc + (float)k);
				return 1;
			}
		}
	}
	if (reps > 0) {
		float *ms = (float *)calloc(reps, sizeof(float));
		cudaEvent_t start, stop;
		cudaEventCreate(&start);
		cudaEventCreate(&stop);
		for (int r = 0; r < reps && ms; r++) {
			cudaEventRecord(start);
			many_sites<<<n / 256, 256>>>(in, out, n);
			cudaEventRecord(stop);
			cudaEventSynchronize(stop);
			cudaEventElapsedTime(&ms[r], start, stop);
		}
		if (!ms || cudaGetLastError() != cudaSuccess) {
			fprintf(stderr, "manysites: timed launches failed\n");
			return 1;
		}
		qsort(ms, reps, sizeof(float), compare_floats);
		printf("manysites: median_us %.2f over %d launches\n", 1000.0f * ms[reps / 2], reps);
		free(ms);
	}
	/* mem_trace's stride histogram counts every access but each thread's first (no last address yet) */
	printf("manysites: many_sites grid=%dx1x1 block=256x1x1 launches=%d mem=ld.global.4:%d,st.global.4:%d "
	       "strides=%lld\n",
	       n / 256, 1 + reps, LOADS * n, STORES * n, (long long)(LOADS + STORES) * n * (1 + reps) - n);
	printf("manysites: %d threads x %d loads, %d stores ok\n", n, LOADS, STORES);
	return 0;
}
