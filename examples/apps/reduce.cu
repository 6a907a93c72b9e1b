// reduce: shared memory + __syncthreads, float4 vector loads and atomics.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void sum4(const float4 *in, float *total, unsigned *blocks_done, int n4)
{
	__shared__ float part[256];
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	float s = 0.0f;
	if (i < n4) {
		float4 v = in[i];
		s = v.x + v.y + v.z + v.w;
	}
	part[threadIdx.x] = s;
	__syncthreads();
	for (unsigned k = blockDim.x / 2; k > 0; k >>= 1) {
		if (threadIdx.x < k)
			part[threadIdx.x] += part[threadIdx.x + k];
		__syncthreads();
	}
	if (threadIdx.x == 0) {
		atomicAdd(total, part[0]);
		atomicInc(blocks_done, 0xffffffffu);
	}
}

int main(void)
{
	const int n4 = 1 << 12;
	float4 *in;
	float *total;
	unsigned *done;
	if (cudaMallocManaged(&in, n4 * sizeof(*in)) || cudaMallocManaged(&total, sizeof(*total)) ||
	    cudaMallocManaged(&done, sizeof(*done)))
		return 1;
	for (int i = 0; i < n4; i++)
		in[i] = make_float4(1.0f, 1.0f, 1.0f, 1.0f);
	*total = 0.0f;
	*done = 0;
	sum4<<<n4 / 256, 256>>>(in, total, done, n4);
	if (cudaDeviceSynchronize() != cudaSuccess)
		return 1;
	if (*total != 4.0f * n4 || *done != (unsigned)(n4 / 256)) {
		fprintf(stderr, "reduce: total %f blocks %u\n", *total, *done);
		return 1;
	}
	printf("reduce: ok\n");
	return 0;
}
