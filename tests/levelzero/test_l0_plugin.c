/* SPDX-License-Identifier: MIT */
/*
 * The levelzero plugin's table and device query, in process: the query
 * runs in a child process, so a failed zeInit (no driver) does not stick
 * to the caller, and a later query (or the caller's own zeInit) succeeds.
 *   test_l0_plugin PLUGIN.so DRIVER.so
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gbpf/plugin.h>

#include "tap.h"

typedef int (*ze_init_fn)(unsigned);

int main(int argc, char **argv)
{
	struct gbpf_backend_ops ops = {.sz = sizeof(ops)};
	struct gbpf_backend_caps caps = {.sz = sizeof(caps)};
	struct gbpf_device_info devs[4];
	gbpf_plugin_get_backend_table_fn entry;
	char why[512] = "";
	uint32_t n = 4;
	void *h, *loader;
	int rc;

	if (argc < 3) {
		fprintf(stderr, "usage: %s PLUGIN DRIVER\n", argv[0]);
		return 2;
	}
	h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!tap_ok(h != NULL, "dlopen %s", argv[1])) {
		tap_diag("%s", dlerror());
		return tap_done();
	}
	*(void **)&entry = dlsym(h, GBPF_PLUGIN_ENTRY_SYMBOL);
	tap_ok(entry && entry(GBPF_PLUGIN_ABI_VERSION, &ops, &caps) == 0, "entry fills the table");
	tap_ok(entry(GBPF_MAKE_VERSION(2, 0), &ops, &caps) == -EPROTONOSUPPORT,
	       "another ABI major is refused");
	tap_ok(ops.name && !strcmp(ops.name, "levelzero") && ops.query_devices && ops.agent_attach &&
		       (caps.flags & GBPF_CAP_INTERCEPT) && !ops.prog_run,
	       "levelzero: query, agent_attach, INTERCEPT; no prog_run");

	setenv("ZE_ENABLE_ALT_DRIVERS", "/nonexistent/libnothing.so", 1);
	rc = ops.query_devices(devs, &n, why, sizeof(why));
	tap_ok(rc == -ENODEV && strstr(why, "zeInit failed") && strstr(why, "no Level Zero GPU driver"),
	       "no driver: -ENODEV, reason says zeInit failed (%d: %s)", rc, why);

	setenv("ZE_ENABLE_ALT_DRIVERS", argv[2], 1);
	n = 4;
	why[0] = 0;
	rc = ops.query_devices(devs, &n, why, sizeof(why));
	tap_ok(rc == 0 && n == 1 && strstr(devs[0].name, "gbpf L0 test driver") &&
		       !strcmp(devs[0].arch, "spirv") && devs[0].compute_units >= 1,
	       "test driver: one GPU device '%s' (%d: %s)", rc == 0 ? devs[0].name : "", rc, why);
	n = 0;
	rc = ops.query_devices(NULL, &n, why, sizeof(why));
	tap_ok(rc == 0 && n == 1, "count only: 1 device");

	/* The failed query above ran in a child: this process's zeInit is untouched. */
	loader = dlopen("libze_loader.so.1", RTLD_NOW | RTLD_LOCAL);
	if (loader) {
		ze_init_fn init;

		*(void **)&init = dlsym(loader, "zeInit");
		tap_ok(init && init(0) == 0, "the caller's own zeInit still succeeds afterwards");
	} else {
		tap_skip("libze_loader.so.1 not installed");
	}
	return tap_done();
}
