// vecadd: c[i] = a[i] + b[i]; the simplest target app. Prints its launch
// configuration ("grid=.. block=.. launches=..") and the global accesses one
// launch makes ("mem=KIND.SPACE.BYTES:COUNT,..."), for the checks of
// tests/cuda_agent/apps/tools_matrix.sh.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

__global__ void vec_add(const float *a, const float *b, float *c, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		c[i] = a[i] + b[i];
}

int main(void)
{
	const int n = 1 << 16;
	size_t bytes = n * sizeof(float);
	float *a, *b, *c;
	if (cudaMallocManaged(&a, bytes) || cudaMallocManaged(&b, bytes) ||
	    cudaMallocManaged(&c, bytes)) {
		fprintf(stderr, "vecadd: cudaMallocManaged failed\n");
		return 1;
	}
	for (int i = 0; i < n; i++) {
		a[i] = (float)i;
		b[i] = 2.0f * i;
	}
	vec_add<<<(n + 255) / 256, 256>>>(a, b, c, n);
	if (cudaDeviceSynchronize() != cudaSuccess) {
		fprintf(stderr, "vecadd: kernel failed\n");
		return 1;
	}
	for (int i = 0; i < n; i++) {
		if (c[i] != 3.0f * i) {
			fprintf(stderr, "vecadd: c[%d] = %f, expected %f\n", i, c[i], 3.0f * i);
			return 1;
		}
	}
	printf("vecadd: vec_add grid=%dx1x1 block=256x1x1 launches=1 mem=ld.global.4:%d,st.global.4:%d\n",
	       (n + 255) / 256, 2 * n, n);
	printf("vecadd: %d elements ok\n", n);
	return 0;
}
