/* SPDX-License-Identifier: MIT */
/*
 * tests/cuda_sanitizer/test_san_subscribe.c - what the process's Sanitizer
 * subscription (plugins/cuda/sanitizer/san_process.c) asks of the library,
 * against a stand-in library (fake_sanitizer.c, argv[1]): only the
 * MODULE_UNLOAD_STARTING callback, never the resource domain, which slowed
 * every kernel ~3.5% on the H200 (docs/SANITIZER.md); the domain only when
 * the library refuses the single callback. Each case in a child process:
 * the subscription is process-wide and final.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "plugins/cuda/sanitizer/san_process.h"
#include "tests/tap.h"

/* In a child: subscribe through @p lib; exit 0 when the library's log is @p want. */
static int subscribe_logs(const char *lib, const char *want, int refuse)
{
	pid_t pid = fork();
	int st = 0;

	if (pid < 0)
		return -1;
	if (!pid) {
		const struct gbpf_san_api *api = NULL;
		const char *(*log_fn)(void);
		char why[512] = "";
		void *h;
		int rc;

		setenv("GBPF_SANITIZER_LIB", lib, 1);
		if (refuse)
			setenv("FAKE_SAN_REFUSE_CALLBACK", "1", 1);
		rc = gbpf_san_process_subscribe(GBPF_SAN_WHEN_LOAD, &api, why, sizeof(why));
		h = dlopen(lib, RTLD_NOW | RTLD_NOLOAD);
		*(void **)&log_fn = h ? dlsym(h, "fake_san_log") : NULL;
		if (rc || !api || !log_fn) {
			fprintf(stderr, "# subscribe %d (%s), library %p, log %p\n", rc, why, h, (void *)log_fn);
			_exit(2);
		}
		fprintf(stderr, "# library calls: %s\n", log_fn());
		_exit(strcmp(log_fn(), want) ? 1 : 0);
	}
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		tap_skip("usage: test_san_subscribe FAKE_LIBRARY");
		return tap_done();
	}
	unsetenv("GBPF_SAN_SUBSCRIBE");
	tap_ok(subscribe_logs(argv[1], "subscribe callback(1,3,10)", 0) == 0,
	       "subscription enables MODULE_UNLOAD_STARTING (resource 3, id 10) only, not the resource domain");
	tap_ok(subscribe_logs(argv[1], "subscribe callback(1,3,10)=refused domain(1,3)", 1) == 0,
	       "a library refusing the single callback gets the resource domain (module unloads still seen)");
	return tap_done();
}
