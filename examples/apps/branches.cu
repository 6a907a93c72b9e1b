// branches: a kernel with early and predicated returns, and a device
// function call, so that exits are divergent.
#include <cstdio>
#include <cuda_runtime.h>

__device__ __noinline__ int collatz_steps(unsigned v)
{
	int steps = 0;
	while (v != 1 && steps < 1000) {
		v = (v & 1) ? 3 * v + 1 : v / 2;
		steps++;
	}
	return steps;
}

__global__ void classify(const unsigned *in, int *out, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	unsigned v = in[i];
	if (v == 0) {
		out[i] = -1;
		return;
	}
	if (v & 1) {
		out[i] = collatz_steps(v);
		if (out[i] > 100)
			return;
		out[i] += 1000;
		return;
	}
	out[i] = 2;
}

int main(void)
{
	const int n = 4096;
	unsigned *in;
	int *out;
	if (cudaMallocManaged(&in, n * sizeof(*in)) || cudaMallocManaged(&out, n * sizeof(*out)))
		return 1;
	for (int i = 0; i < n; i++)
		in[i] = i;
	classify<<<(n + 127) / 128, 128>>>(in, out, n);
	if (cudaDeviceSynchronize() != cudaSuccess)
		return 1;
	if (out[0] != -1 || out[2] != 2 || out[1] != 1000) {
		fprintf(stderr, "branches: wrong results %d %d %d\n", out[0], out[1], out[2]);
		return 1;
	}
	printf("branches: ok\n");
	return 0;
}
