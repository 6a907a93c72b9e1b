/* SPDX-License-Identifier: MIT */
/*
 * tests/intercept/apps/tool_lib.c - built as libsanitizer-gbpftest.so: a
 * stand-in for an NVIDIA tool's injection library (the file-name prefix is
 * what the agent's dlsym recognises). It resolves the driver the way such a
 * library does, through dlsym, and must get the driver's own entry point.
 */
#include <dlfcn.h>
#include <stddef.h>

void *gbpftest_tool_lookup(const char *name);
void *gbpftest_tool_lookup(const char *name)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW);
	/* Not a tail call: dlsym must see this library as its caller. */
	void *volatile p = h ? dlsym(h, name) : NULL;

	return p;
}
