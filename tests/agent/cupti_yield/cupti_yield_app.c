/* SPDX-License-Identifier: MIT */
/*
 * A profiler's first CUPTI calls, as the PyTorch profiler (kineto) makes
 * them, on the fake libcupti.so.98: subscribe, register the activity
 * buffers, enable an activity kind, process-wide and for one context.
 * argv[1] = N > 1: N threads subscribe at once first (the yield is asked
 * for concurrently). Prints each call's answer, then the fake's call log:
 * "results S R A C log: ...".
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

int cuptiSubscribe(void **subscriber, void *callback, void *userdata);
int cuptiActivityRegisterCallbacks(void *requested, void *completed);
int cuptiActivityEnable(int kind);
int cuptiActivityEnableContext(void *context, int kind);
const char *fake_tool_log(void);
void *fake_tool_context(void);

#define MAX_THREADS 16

static int thread_rc[MAX_THREADS];

static void *subscriber(void *arg)
{
	int *rc = arg;
	void *sub = NULL;

	*rc = cuptiSubscribe(&sub, NULL, rc);
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1, failed = 0;
	pthread_t t[MAX_THREADS];
	void *sub = NULL;
	int rs, rr, ra, rc;

	if (n > 1) {
		if (n > MAX_THREADS)
			n = MAX_THREADS;
		for (int i = 0; i < n; i++)
			if (pthread_create(&t[i], NULL, subscriber, &thread_rc[i]))
				return 2;
		for (int i = 0; i < n; i++) {
			pthread_join(t[i], NULL);
			failed += thread_rc[i] != 0;
		}
		printf("threads %d failed %d\n", n, failed);
	}
	rs = cuptiSubscribe(&sub, NULL, &n);
	rr = cuptiActivityRegisterCallbacks(NULL, NULL);
	ra = cuptiActivityEnable(10);
	rc = cuptiActivityEnableContext(fake_tool_context(), 3);
	printf("results %d %d %d %d %s log: %s\n", rs, rr, ra, rc, !rs && sub != &n ? "changed" : "ok",
	       fake_tool_log());
	return 0;
}
