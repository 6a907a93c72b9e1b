/* SPDX-License-Identifier: MIT */
/*
 * tests/intercept/apps/next_a.c - libgbpftest-next-a.so, which depends on
 * libgbpftest-next-b.so: both define gbpftest_twice. dlsym(RTLD_NEXT) from
 * here must find next_b.c's, as glibc resolves it for this caller, even
 * with the agent's dlsym interposed (which hands such names to glibc as a
 * tail call).
 */
#include <dlfcn.h>

int gbpftest_twice(void);
int gbpftest_twice(void)
{
	return 1;
}

int gbpftest_next_b_marker(void);
int gbpftest_next_twice(void);
int gbpftest_next_twice(void)
{
	if (gbpftest_next_b_marker())
		return -3;
	/* Not a tail call: dlsym must see this library as its caller. */
	int (*volatile next)(void) = (int (*)(void))dlsym(RTLD_NEXT, "gbpftest_twice");

	return next ? next() : -1;
}
