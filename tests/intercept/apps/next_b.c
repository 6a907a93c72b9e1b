/* SPDX-License-Identifier: MIT */
/* tests/intercept/apps/next_b.c - libgbpftest-next-b.so: the definition RTLD_NEXT must find from next_a.c. */
int gbpftest_twice(void);
int gbpftest_twice(void)
{
	return 2;
}

/* Referenced by next_a.c so that the linker keeps next_b as its dependency. */
int gbpftest_next_b_marker(void);
int gbpftest_next_b_marker(void)
{
	return 0;
}
