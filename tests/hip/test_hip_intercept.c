/* SPDX-License-Identifier: MIT */
/*
 * Real hipcc-built apps (examples/apps/hip) run to their end under the
 * fake-device shim (LD_PRELOAD, no AMD GPU): the log shows the fat binary
 * with its gfx90a and gfx940 code objects, every kernel registered and every
 * launch with its grid and block.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hip_test_util.h"
#include "tests/tap.h"

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

static char *run_app(const char *app, char *const args[], int *status)
{
	char logp[] = "/tmp/gbpf-hip-shim-XXXXXX", env[600], pre[600], *out = NULL, *log;
	int fd = mkstemp(logp);
	char *argv[8];
	size_t i;

	if (fd < 0)
		return NULL;
	close(fd);
	snprintf(env, sizeof(env), "GBPF_HIP_SHIM_LOG=%s", logp);
	snprintf(pre, sizeof(pre), "LD_PRELOAD=%s", GBPF_HIP_SHIM);
	argv[0] = (char *)"env";
	argv[1] = env;
	argv[2] = pre;
	argv[3] = (char *)app;
	for (i = 0; args && args[i] && i < 3; i++)
		argv[4 + i] = args[i];
	argv[4 + i] = NULL;
	*status = run_cmd(argv, &out);
	log = read_file(logp, NULL);
	if (log && out && strstr(out, "done")) {
		char *both = malloc(strlen(log) + strlen(out) + 2);

		sprintf(both, "%s\n%s", log, out);
		free(log);
		log = both;
	}
	free(out);
	unlink(logp);
	return log;
}

int main(int argc, char **argv)
{
	int st;
	char *log;

	if (argc < 3) {
		tap_skip("hipcc test apps not built");
		return tap_done();
	}
	{
		char *args[] = {(char *)"1024", (char *)"3", NULL};

		log = run_app(argv[1], args, &st);
	}
	tap_ok(st == 0 && log && strstr(log, "3 launches of 1024 elements done"), "vector_add runs to its end (%d)", st);
	if (log) {
		tap_ok(count(log, "register_fatbin entries=3") == 1 &&
			       strstr(log, "bundle_entry id=hipv4-amdgcn-amd-amdhsa--gfx90a size=") &&
			       strstr(log, "bundle_entry id=hipv4-amdgcn-amd-amdhsa--gfx940 size=") &&
			       count(log, "elf=1") == 2,
		       "vector_add: fat binary registered with its gfx90a and gfx940 code objects");
		tap_ok(count(log, "register_function name=_Z10vector_addPKfS0_Pfi") == 1,
		       "vector_add: kernel registered");
		tap_ok(count(log, "launch via=hipLaunchKernel name=_Z10vector_addPKfS0_Pfi grid=4,1,1 block=256,1,1") == 3,
		       "vector_add: 3 launches seen with grid 4 and block 256");
		tap_ok(count(log, "malloc bytes=4096") == 3, "vector_add: 3 device allocations");
	}
	free(log);

	log = run_app(argv[2], NULL, &st);
	tap_ok(st == 0 && log && strstr(log, "4 launches done"), "multi_kernel runs to its end (%d)", st);
	if (log) {
		static const char *const kernels[] = {"_Z5scaleIfEvPT_S0_i", "_Z5scaleIiEvPT_S0_i", "_Z6grid2dPiii",
						      "_Z10reduce_sumPKiPii"};
		static const char *const launches[] = {
			"name=_Z5scaleIfEvPT_S0_i grid=16,1,1 block=256,1,1",
			"name=_Z5scaleIiEvPT_S0_i grid=32,1,1 block=128,1,1",
			"name=_Z6grid2dPiii grid=4,8,1 block=16,8,1",
			"name=_Z10reduce_sumPKiPii grid=8,1,1 block=256,1,1",
		};

		for (int i = 0; i < 4; i++) {
			char pat[128];

			snprintf(pat, sizeof(pat), "register_function name=%s\n", kernels[i]);
			tap_ok(count(log, pat) == 1, "multi_kernel: %s registered", kernels[i]);
			tap_ok(count(log, launches[i]) == 1, "multi_kernel: launch %s seen", launches[i]);
		}
		tap_ok(count(log, "launch via=") == 4, "multi_kernel: exactly 4 launches");
		tap_ok(count(log, "unregister_fatbin") == 1, "multi_kernel: fat binary unregistered at exit");
	}
	free(log);
	return tap_done();
}
