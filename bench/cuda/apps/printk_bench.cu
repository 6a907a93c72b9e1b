// SPDX-License-Identifier: MIT
// bench/cuda/apps/printk_bench.cu - GPU -> user latency of bpf_trace_printk.
// 1. Calibrates %globaltimer against the host's CLOCK_REALTIME with a
//    ping-pong through mapped host memory (a persistent one-thread kernel
//    answers each host stamp with its globaltimer; the round trip with the
//    smallest duration bounds the offset to +- half of it).
// 2. Launches the one-thread kernel `tick` COUNT times, 2 ms apart; the probe
//    bench/cuda/probes/printk_lat.bpf.c prints the globaltimer at its exit.
// bench/cuda/run.sh subtracts: receipt time of each line at the controller
// (gbpf -j adds ts_ns) minus (globaltimer - offset).
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <unistd.h>

#include "bench_common.h"

__global__ void pingpong(volatile unsigned long long *box, int rounds)
{
	for (int i = 1; i <= rounds; i++) {
		unsigned long long t;

		while (box[0] != (unsigned long long)i)
			;
		asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
		box[2] = t;
		__threadfence_system();
		box[1] = i;
	}
}

extern "C" __global__ void tick(int *sink)
{
	sink[0] += 1;
}

static long long realtime_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return (long long)t.tv_sec * 1000000000ll + t.tv_nsec;
}

int main(int argc, char **argv)
{
	int count = argc > 1 ? atoi(argv[1]) : 200, rounds = 200;
	volatile unsigned long long *box;
	unsigned long long *dbox;
	long long best_rtt = -1, offset = 0;
	int *sink;

	CK(cudaSetDeviceFlags(cudaDeviceMapHost));
	CK(cudaHostAlloc((void **)&box, 3 * sizeof(*box), cudaHostAllocMapped));
	box[0] = box[1] = box[2] = 0;
	CK(cudaHostGetDevicePointer((void **)&dbox, (void *)box, 0));
	pingpong<<<1, 1>>>(dbox, rounds);
	CK(cudaGetLastError());
	for (int i = 1; i <= rounds; i++) {
		long long t0 = realtime_ns(), t1;

		__atomic_store_n(&box[0], (unsigned long long)i, __ATOMIC_RELEASE);
		while (__atomic_load_n(&box[1], __ATOMIC_ACQUIRE) != (unsigned long long)i)
			;
		t1 = realtime_ns();
		if (best_rtt < 0 || t1 - t0 < best_rtt) {
			best_rtt = t1 - t0;
			offset = (long long)box[2] - (t0 + t1) / 2;
		}
	}
	CK(cudaDeviceSynchronize());
	printf("gbpf-bench printk_clock offset_ns=%lld rtt_ns=%lld\n", offset, best_rtt);
	fflush(stdout);
	CK(cudaMalloc(&sink, sizeof(int)));
	CK(cudaMemset(sink, 0, sizeof(int)));
	for (int i = 0; i < count; i++) {
		tick<<<1, 1>>>(sink);
		CK(cudaDeviceSynchronize());
		usleep(2000);
	}
	int got = 0;
	CK(cudaMemcpy(&got, sink, sizeof(got), cudaMemcpyDeviceToHost));
	printf("gbpf-bench printk_ticks launched=%d counted=%d\n", count, got);
	return got == count ? 0 : 1;
}
