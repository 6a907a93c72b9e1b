/* SPDX-License-Identifier: MIT */
/*
 * A stand-in for a GPU runtime: the test backend interposes
 * gbpf_test_launch() the way the CUDA backend interposes cuLaunchKernel,
 * and gbpf_test_async() / gbpf_test_sync() the way it interposes the
 * asynchronous copy, launch and synchronise calls.
 *
 * The "GPU" is simulated: every stream runs its work in order, one item
 * after the other, each taking the duration the caller asks for, starting
 * when both the call is made and the stream's previous work is done. Async
 * calls return at once; gbpf_test_sync() sleeps until the work it waits for
 * would be finished. GPU times are CLOCK_MONOTONIC, so they are exact and
 * already on the host clock.
 */
#include <pthread.h>
#include <string.h>
#include <time.h>

#define TEST_STREAMS 16

unsigned long gbpf_test_launch(const char *kernel, unsigned grid, unsigned block);
int gbpf_test_async(int op, unsigned stream, const char *name, unsigned long long bytes,
		    unsigned long long dur_ns, unsigned long long *gpu_begin,
		    unsigned long long *gpu_end);
unsigned long long gbpf_test_sync(int stream);

__attribute__((visibility("default"))) unsigned long gbpf_test_launch(const char *kernel,
								       unsigned grid,
								       unsigned block)
{
	return (unsigned long)grid * block + strlen(kernel);
}

/* The simulated device: when each stream's queued work will be done. */
static pthread_mutex_t test_gpu_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long long test_gpu_busy_until[TEST_STREAMS];

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

/*
 * Enqueue work on @p stream (op: 1 kernel, 2 H2D, 3 D2H, 4 D2D, 5 memset;
 * the op only matters to the interposer). Returns 0, or -1 for a bad stream.
 */
__attribute__((visibility("default"))) int gbpf_test_async(int op, unsigned stream,
							    const char *name,
							    unsigned long long bytes,
							    unsigned long long dur_ns,
							    unsigned long long *gpu_begin,
							    unsigned long long *gpu_end)
{
	unsigned long long t = now_ns(), b;

	(void)op;
	(void)name;
	(void)bytes;
	if (stream >= TEST_STREAMS)
		return -1;
	pthread_mutex_lock(&test_gpu_lock);
	b = test_gpu_busy_until[stream] > t ? test_gpu_busy_until[stream] : t;
	test_gpu_busy_until[stream] = b + dur_ns;
	pthread_mutex_unlock(&test_gpu_lock);
	if (gpu_begin)
		*gpu_begin = b;
	if (gpu_end)
		*gpu_end = b + dur_ns;
	return 0;
}

/* Wait for @p stream's work (-1: every stream); returns the nanoseconds waited. */
__attribute__((visibility("default"))) unsigned long long gbpf_test_sync(int stream)
{
	unsigned long long until = 0, start = now_ns(), t;
	struct timespec ts;
	int i;

	pthread_mutex_lock(&test_gpu_lock);
	for (i = 0; i < TEST_STREAMS; i++)
		if ((stream < 0 || i == stream) && test_gpu_busy_until[i] > until)
			until = test_gpu_busy_until[i];
	pthread_mutex_unlock(&test_gpu_lock);
	ts.tv_sec = (time_t)(until / 1000000000ull);
	ts.tv_nsec = (long)(until % 1000000000ull);
	while (now_ns() < until)
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
	t = now_ns();
	return t - start;
}
