/* SPDX-License-Identifier: MIT */
/*
 * The test driver under the real Level Zero loader: the example apps run
 * and check their own results (with and without the validation layer), a
 * native module is refused with ZE_RESULT_ERROR_INVALID_NATIVE_BINARY, a
 * corrupt module fails cleanly, and with no driver zeInit fails.
 *   test_ze_apps DRIVER.so ZE_VECADD ZE_MULTI VECADD.spv MULTI.spv
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "ze_run.h"

static char drv_env[4200];

static void run_app(const char *what, char *const *argv, const char *validation,
		    const char *expect)
{
	char *env[] = {drv_env, (char *)validation, NULL};
	struct ze_run r;

	ze_run(&r, argv, env, 60);
	if (!tap_ok(r.status == 0 && r.out && strstr(r.out, expect), "%s: exit 0 and '%s'", what,
		    expect)) {
		tap_diag("status %d", r.status);
		ze_run_diag(&r);
	}
	ze_run_free(&r);
}

int main(int argc, char **argv)
{
	char *vecadd, *multi, *vspv, *mspv;
	char bad_path[] = "/tmp/gbpf-l0-bad-XXXXXX";
	struct ze_run r;
	int fd;

	if (argc < 6) {
		fprintf(stderr, "usage: %s DRIVER ZE_VECADD ZE_MULTI VECADD.spv MULTI.spv\n", argv[0]);
		return 2;
	}
	snprintf(drv_env, sizeof(drv_env), "ZE_ENABLE_ALT_DRIVERS=%s", argv[1]);
	vecadd = argv[2];
	multi = argv[3];
	vspv = argv[4];
	mspv = argv[5];

	{
		char *a1[] = {vecadd, vspv, NULL};
		char *a2[] = {vecadd, vspv, "1000", NULL};
		char *a3[] = {multi, mspv, NULL};

		run_app("vecadd", a1, "ZE_ENABLE_VALIDATION_LAYER=", "vecadd: 4096 elements");
		run_app("vecadd N=1000 (odd group size)", a2, "ZE_ENABLE_VALIDATION_LAYER=",
			"vecadd: 1000 elements, group size 50: ok");
		run_app("multi (immediate list, 7 launches)", a3, "ZE_ENABLE_VALIDATION_LAYER=",
			"multi: 1024 elements, 7 launches on an immediate list: ok");
		run_app("vecadd under the validation layer", a1, "ZE_ENABLE_VALIDATION_LAYER=1",
			"vecadd: 4096 elements, group size 64: ok");
		run_app("multi under the validation layer", a3, "ZE_ENABLE_VALIDATION_LAYER=1",
			"multi: 1024 elements, 7 launches on an immediate list: ok");
	}

	{
		char *a[] = {vecadd, "--native", vspv, NULL};
		char *env[] = {drv_env, NULL};

		ze_run(&r, a, env, 60);
		if (!tap_ok(r.status == 4 && strstr(r.out, "native): 0x7800000f"),
			    "native module: ZE_RESULT_ERROR_INVALID_NATIVE_BINARY, app exits 4"))
			ze_run_diag(&r);
		ze_run_free(&r);
	}

	/* A truncated SPIR-V module: the translator refuses it, the build log says so. */
	fd = mkstemp(bad_path);
	if (fd >= 0) {
		static const unsigned int words[] = {0x07230203, 0x00010000, 0, 100, 0, 0x00020011};
		char *a[] = {vecadd, bad_path, NULL};
		char *env[] = {drv_env, NULL};

		tap_ok(write(fd, words, sizeof(words)) == (ssize_t)sizeof(words), "write bad module");
		close(fd);
		ze_run(&r, a, env, 60);
		if (!tap_ok(r.status == 2 && strstr(r.out, "zeModuleCreate") &&
				    strstr(r.out, "0x70000004") && strstr(r.out, "build log: "),
			    "corrupt SPIR-V: MODULE_BUILD_FAILURE with a build log, no crash"))
			ze_run_diag(&r);
		ze_run_free(&r);
		unlink(bad_path);
	} else {
		tap_ok(0, "mkstemp %s", bad_path);
	}

	{
		char *a[] = {vecadd, vspv, NULL};
		char *env[] = {"ZE_ENABLE_ALT_DRIVERS=/nonexistent/libnothing.so", NULL};

		ze_run(&r, a, env, 60);
		if (!tap_ok(r.status == 3 && strstr(r.out, "zeInit failed: 0x78000001"),
			    "no driver: zeInit fails with UNINITIALIZED, app exits 3"))
			ze_run_diag(&r);
		ze_run_free(&r);
	}
	return tap_done();
}
