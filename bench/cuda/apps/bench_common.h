// SPDX-License-Identifier: MIT
// bench/cuda/apps/bench_common.h - timing helpers of the benchmark apps:
// CUDA events around each launch, warm-up, median of many runs, results
// on one line "gbpf-bench NAME key=value ..." that bench/cuda/run.sh reads.
#pragma once
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(x)                                                                              \
	do {                                                                               \
		cudaError_t e_ = (x);                                                      \
		if (e_ != cudaSuccess) {                                                   \
			fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x,          \
				cudaGetErrorString(e_));                                   \
			exit(2);                                                           \
		}                                                                          \
	} while (0)

// Median (and min) kernel time in microseconds of iters timed launches after warmup ones, and the
// time of the first warm-up launch.
template <typename F> static void time_launches(const char *name, int warmup, int iters, F launch)
{
	cudaEvent_t a, b;
	std::vector<float> us;

	CK(cudaEventCreate(&a));
	CK(cudaEventCreate(&b));
	float first_ms = 0;
	double first_host_us = 0;

	if (warmup > iters)
		warmup = iters; /* short runs (event-heavy probes) stay short */
	/* the first launch timed apart: a probe's maps fill in it (keys inserted, counters created) */
	for (int i = 0; i < warmup; i++) {
		auto t0 = std::chrono::steady_clock::now();

		if (i == 0)
			CK(cudaEventRecord(a));
		launch();
		if (i == 0) {
			/*
			 * The launch call itself may block (an injector patching and loading the module
			 * on first use) while the GPU waits with event a done: first_host_us says how much
			 * of first_us was the host's.
			 */
			first_host_us =
				std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0)
					.count();
			CK(cudaEventRecord(b));
			CK(cudaEventSynchronize(b));
			CK(cudaEventElapsedTime(&first_ms, a, b));
		}
	}
	CK(cudaDeviceSynchronize());
	for (int i = 0; i < iters; i++) {
		float ms;

		CK(cudaEventRecord(a));
		launch();
		CK(cudaEventRecord(b));
		CK(cudaEventSynchronize(b));
		CK(cudaEventElapsedTime(&ms, a, b));
		us.push_back(ms * 1000.0f);
	}
	std::sort(us.begin(), us.end());
	printf("gbpf-bench %s median_us=%.2f min_us=%.2f runs=%d first_us=%.2f first_host_us=%.2f\n", name,
	       us[us.size() / 2], us[0], iters, first_ms * 1000.0f, first_host_us);
	fflush(stdout);
}
