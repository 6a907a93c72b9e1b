// SPDX-License-Identifier: MIT
// sgemm_cublas: C = A x B (N x N, float) through cublasSgemm, the kernels
// NVIDIA ships (SASS, no PTX for our GPU); checked against a CPU product on
// sampled elements. Prints deterministic lines (tests/cuda_sanitizer/device.sh).
//   sgemm_cublas [N] [REPEATS]
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cublas_v2.h>
#include <cuda_runtime.h>

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 512, reps = argc > 2 ? atoi(argv[2]) : 1;
	size_t cnt = (size_t)n * n;
	std::vector<float> a(cnt), b(cnt), c(cnt);
	float *da, *db, *dc, one = 1.0f, zero = 0.0f;
	cublasHandle_t h;

	if (n < 16 || n > 8192 || reps < 1 || reps > 1000) {
		fprintf(stderr, "sgemm_cublas: N in 16..8192, REPEATS in 1..1000\n");
		return 2;
	}
	for (size_t i = 0; i < cnt; i++) {
		a[i] = (float)((i * 7) % 13) - 6.0f;
		b[i] = (float)((i * 5) % 11) - 5.0f;
	}
	if (cudaMalloc(&da, cnt * 4) || cudaMalloc(&db, cnt * 4) || cudaMalloc(&dc, cnt * 4) ||
	    cudaMemcpy(da, a.data(), cnt * 4, cudaMemcpyHostToDevice) ||
	    cudaMemcpy(db, b.data(), cnt * 4, cudaMemcpyHostToDevice) || cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) {
		fprintf(stderr, "sgemm_cublas: setup failed\n");
		return 2;
	}
	/* Exact float results: small integers, products and sums stay below 2^24. */
	cublasSetMathMode(h, CUBLAS_PEDANTIC_MATH);
	for (int r = 0; r < reps; r++)
		if (cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, da, n, db, n, &zero, dc, n) !=
		    CUBLAS_STATUS_SUCCESS) {
			fprintf(stderr, "sgemm_cublas: cublasSgemm failed\n");
			return 1;
		}
	if (cudaMemcpy(c.data(), dc, cnt * 4, cudaMemcpyDeviceToHost)) {
		fprintf(stderr, "sgemm_cublas: kernel failed\n");
		return 1;
	}
	/* Column-major: C(i,j) = sum_k A(i,k) B(k,j). */
	for (int s = 0; s < 64; s++) {
		int i = (s * 37) % n, j = (s * 101) % n;
		double want = 0;

		for (int k = 0; k < n; k++)
			want += (double)a[(size_t)k * n + i] * b[(size_t)j * n + k];
		if (std::fabs(c[(size_t)j * n + i] - want) > 1e-3) {
			fprintf(stderr, "sgemm_cublas: C(%d,%d) = %f, expected %f\n", i, j, c[(size_t)j * n + i], want);
			return 1;
		}
	}
	printf("sgemm_cublas: %dx%d x %d ok, C(1,2) = %.1f\n", n, n, reps, c[(size_t)2 * n + 1]);
	cublasDestroy(h);
	return 0;
}
