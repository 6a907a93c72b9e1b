/* SPDX-License-Identifier: MIT */
/*
 * An application that uses CUPTI (the fake libcupti.so.99) as a profiler
 * would: subscribes, enables an activity kind, then launches through the
 * test runtime. Prints what CUPTI answered and whether the arguments
 * arrived unchanged: "cupti subscribe R ok|changed activity R ok|changed".
 */
#include <stdio.h>

int cuptiSubscribe(void **subscriber, void *callback, void *userdata);
int cuptiActivityEnable(int kind);
unsigned long gbpf_test_launch(const char *kernel, unsigned grid, unsigned block);
extern void *fake_cupti_last_userdata;
extern int fake_cupti_last_kind;

static void on_callback(void)
{
}

int main(void)
{
	static int token;
	void *sub = NULL;
	int rs = cuptiSubscribe(&sub, (void *)on_callback, &token);
	int ra = cuptiActivityEnable(10);
	unsigned long sum = gbpf_test_launch("kern_a", 2, 128);

	printf("cupti subscribe %d %s activity %d %s launch %lu\n", rs,
	       sub == &token && fake_cupti_last_userdata == &token ? "ok" : "changed", ra,
	       fake_cupti_last_kind == 10 ? "ok" : "changed", sum);
	return 0;
}
