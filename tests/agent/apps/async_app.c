/* SPDX-License-Identifier: MIT */
/*
 * Test application for timelines: the "where did the time go" pattern.
 * Each iteration enqueues on two streams an H2D copy, a kernel and a D2H
 * copy, all asynchronous, then one device-wide synchronise absorbs the wait.
 *
 *   async_app ITERS H2D_US KERNEL_US D2H_US
 * Prints the time the synchronise calls waited, as measured by the app.
 */
#include <stdio.h>
#include <stdlib.h>

int gbpf_test_async(int op, unsigned stream, const char *name, unsigned long long bytes,
		    unsigned long long dur_ns, unsigned long long *gpu_begin,
		    unsigned long long *gpu_end);
unsigned long long gbpf_test_sync(int stream);

int main(int argc, char **argv)
{
	unsigned long long h2d, kern, d2h, waited = 0;
	long iters, i;
	unsigned s;

	if (argc < 5) {
		fprintf(stderr, "usage: %s ITERS H2D_US KERNEL_US D2H_US\n", argv[0]);
		return 2;
	}
	iters = atol(argv[1]);
	h2d = strtoull(argv[2], NULL, 10) * 1000;
	kern = strtoull(argv[3], NULL, 10) * 1000;
	d2h = strtoull(argv[4], NULL, 10) * 1000;
	for (i = 0; i < iters; i++) {
		for (s = 1; s <= 2; s++) {
			gbpf_test_async(2, s, "cudaMemcpyAsync", 1 << 20, h2d, NULL, NULL);
			gbpf_test_async(1, s, s == 1 ? "vec_add(float*, float*)" : "scale(float*)",
					0, kern, NULL, NULL);
			gbpf_test_async(3, s, "cudaMemcpyAsync", 1 << 20, d2h, NULL, NULL);
		}
		waited += gbpf_test_sync(-1);
	}
	printf("waited_us %llu\n", waited / 1000);
	return 0;
}
