/* SPDX-License-Identifier: MIT */
/*
 * tests/intercept/apps/tool_lookup.c - an application with a tool's
 * injection library loaded (libsanitizer-gbpftest.so, apps/tool_lib.c).
 * Both look up cuGetProcAddress_v2 and cuLaunchKernel with dlsym; prints,
 * for each pointer, the file of the object that defines it:
 *   app NAME FILE / tool NAME FILE
 * then what libgbpftest-next-a.so's dlsym(RTLD_NEXT) finds: "next 2".
 */
#include <dlfcn.h>
#include <stdio.h>

static const char *owner(void *p)
{
	Dl_info info;

	return p && dladdr(p, &info) && info.dli_fname ? info.dli_fname : "(none)";
}

int main(void)
{
	static const char *const names[] = {"cuGetProcAddress_v2", "cuLaunchKernel"};
	void *h = dlopen("libcuda.so.1", RTLD_NOW);
	void *tool = dlopen("libsanitizer-gbpftest.so", RTLD_NOW | RTLD_LOCAL);
	void *(*lookup)(const char *) = tool ? (void *(*)(const char *))dlsym(tool, "gbpftest_tool_lookup") : NULL;

	if (!h || !lookup) {
		printf("tool_lookup: cannot load libcuda.so.1 or the tool library: %s\n", dlerror());
		return 1;
	}
	for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		printf("app %s %s\n", names[i], owner(dlsym(h, names[i])));
		printf("tool %s %s\n", names[i], owner(lookup(names[i])));
	}
	/* RTLD_NEXT from a library the application loaded: glibc's answer for that library. */
	void *a = dlopen("libgbpftest-next-a.so", RTLD_NOW | RTLD_GLOBAL);
	int (*next_twice)(void) = a ? (int (*)(void))dlsym(a, "gbpftest_next_twice") : NULL;

	printf("next %d\n", next_twice ? next_twice() : -2);
	printf("tool_lookup ok\n");
	return 0;
}
