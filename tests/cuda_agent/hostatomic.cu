// SPDX-License-Identifier: MIT
// hostatomic: are GPU atomics on host memory registered with
// cuMemHostRegister(DEVICEMAP) exact under GPU-side contention? Memory from
// a memfd mmap (as gbpf run's map region); N threads add 1 to one u64 and
// to 1 of 64 u64s; prints the counts and "exact" or "LOST".
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <sys/mman.h>
#include <unistd.h>
#include <cuda.h>
#include <cuda_runtime.h>

__global__ void bump(unsigned long long *one, unsigned long long *many)
{
	unsigned long long t = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
	atomicAdd(one, 1ull);
	atomicAdd(&many[t % 64], 1ull);
}

int main(int argc, char **argv)
{
	unsigned blocks = argc > 1 ? atoi(argv[1]) : 65536, threads = 256;
	int fd = memfd_create("hostatomic", 0);
	size_t size = 1 << 20;
	if (fd < 0 || ftruncate(fd, size)) return 1;
	unsigned long long *m = (unsigned long long *)mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	cudaFree(0);
	if (cudaHostRegister(m, size, cudaHostRegisterMapped | cudaHostRegisterPortable)) { printf("register failed\n"); return 1; }
	unsigned long long *d;
	cudaHostGetDevicePointer((void **)&d, m, 0);
	int native = 0;
	cudaDeviceGetAttribute(&native, cudaDevAttrHostNativeAtomicSupported, 0);
	for (int rep = 0; rep < 3; rep++) {
		for (int i = 0; i < 65; i++) m[i] = 0;
		bump<<<blocks, threads>>>(d, d + 1);
		if (cudaDeviceSynchronize()) { printf("kernel failed\n"); return 1; }
		unsigned long long want = (unsigned long long)blocks * threads, sum = 0;
		for (int i = 1; i < 65; i++) sum += m[i];
		printf("hostatomic: rep %d: %llu threads, one counter %llu, 64 counters sum %llu, host-native-atomics %d: %s\n",
		       rep, want, m[0], sum, native, m[0] == want && sum == want ? "exact" : "LOST");
	}
	return 0;
}
