// templated: templated kernels in a namespace, one of them using more than
// 48 KB of dynamic shared memory (needs cudaFuncSetAttribute).
#include <cstdio>
#include <cuda_runtime.h>

namespace gbpf_demo {
template <typename T, int SCALE>
__global__ void scale(T *data, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		data[i] = data[i] * (T)SCALE;
}

template <typename T>
__global__ void big_shared(const T *in, T *out, int n)
{
	extern __shared__ unsigned char smem_raw[];
	T *buf = reinterpret_cast<T *>(smem_raw);
	int per = (int)(64 * 1024 / sizeof(T)) / blockDim.x;
	for (int k = 0; k < per; k++)
		buf[threadIdx.x * per + k] = in[(blockIdx.x * blockDim.x + threadIdx.x) % n] + (T)k;
	__syncthreads();
	T acc = 0;
	for (int k = 0; k < per; k++)
		acc += buf[((threadIdx.x + 1) % blockDim.x) * per + k];
	out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}
} // namespace gbpf_demo

int main(void)
{
	const int n = 1024;
	const size_t smem = 64 * 1024;
	double *d, *out;
	int *iv;
	if (cudaMallocManaged(&d, n * sizeof(*d)) || cudaMallocManaged(&out, n * sizeof(*out)) ||
	    cudaMallocManaged(&iv, n * sizeof(*iv)))
		return 1;
	for (int i = 0; i < n; i++) {
		d[i] = i;
		iv[i] = i;
	}
	gbpf_demo::scale<double, 3><<<n / 128, 128>>>(d, n);
	gbpf_demo::scale<int, 2><<<n / 128, 128>>>(iv, n);
	if (cudaFuncSetAttribute(gbpf_demo::big_shared<double>,
				 cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem))
		return 1;
	gbpf_demo::big_shared<double><<<n / 128, 128, smem>>>(d, out, n);
	if (cudaDeviceSynchronize() != cudaSuccess)
		return 1;
	if (d[5] != 15.0 || iv[5] != 10) {
		fprintf(stderr, "templated: wrong results\n");
		return 1;
	}
	printf("templated: ok\n");
	return 0;
}
