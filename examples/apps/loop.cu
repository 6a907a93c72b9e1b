// loop: a long-running CUDA app for `gbpf attach` (tests/cuda_agent/attach_device.sh).
// The kernel's module is loaded by its first launch at start, before anything
// is attached; then it launches when told to on stdin, one command per line:
//   launch N   N launches of vec_add (256 blocks x 256 threads) on the default
//              stream, each synchronised; prints "launched N checksum C"
//              (C depends only on N: the app's results, compared with and without gbpf)
//   quit       exit 0
// Prints "ready pid P" once the warm-up launch is done.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>
#include <unistd.h>

__global__ void vec_add(const float *a, const float *b, float *c, int n, float scale)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		c[i] = (a[i] + b[i]) * scale;
}

int main(void)
{
	const int n = 1 << 16;
	size_t bytes = n * sizeof(float);
	float *a, *b, *c;
	char line[128];

	if (cudaMallocManaged(&a, bytes) || cudaMallocManaged(&b, bytes) ||
	    cudaMallocManaged(&c, bytes)) {
		fprintf(stderr, "loop: cudaMallocManaged failed\n");
		return 1;
	}
	for (int i = 0; i < n; i++) {
		a[i] = (float)(i % 1000);
		b[i] = 2.0f * (i % 1000);
	}
	// Warm-up: loads the module before any gbpf attach (it is not counted by the test).
	vec_add<<<(n + 255) / 256, 256>>>(a, b, c, n, 0.0f);
	if (cudaDeviceSynchronize() != cudaSuccess) {
		fprintf(stderr, "loop: warm-up kernel failed\n");
		return 1;
	}
	printf("ready pid %d\n", (int)getpid());
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		long cnt = 0;
		double sum = 0;

		if (!strncmp(line, "quit", 4))
			break;
		if (sscanf(line, "launch %ld", &cnt) != 1 || cnt < 0 || cnt > 100000) {
			printf("unknown command\n");
			fflush(stdout);
			continue;
		}
		for (long j = 0; j < cnt; j++) {
			vec_add<<<(n + 255) / 256, 256>>>(a, b, c, n, (float)(j % 7 + 1));
			if (cudaDeviceSynchronize() != cudaSuccess) {
				fprintf(stderr, "loop: kernel failed\n");
				return 1;
			}
			for (int i = 0; i < n; i++)
				sum += c[i];
		}
		printf("launched %ld checksum %.1f\n", cnt, sum);
		fflush(stdout);
	}
	cudaFree(a);
	cudaFree(b);
	cudaFree(c);
	return 0;
}
