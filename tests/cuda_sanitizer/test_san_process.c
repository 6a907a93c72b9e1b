/* SPDX-License-Identifier: MIT */
/*
 * tests/cuda_sanitizer/test_san_process.c - the process's one Sanitizer
 * subscription (plugins/cuda/sanitizer/san_process.h) without a GPU: when
 * the plugin's constructor subscribes (GBPF_SAN_SUBSCRIBE, the agent's
 * environment, GBPF_CUDA_ENGINE), a failed subscription is final and named,
 * and the engine uses the process's subscription: created lazily while none
 * was tried, refused with the reason once it failed. Its own process: the
 * subscription state is process-wide.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gbpf/insn.h>
#include <gbpf/plugin.h>
#include <gbpf/prog.h>

#include "plugins/cuda/ptx_codegen.h"
#include "plugins/cuda/sanitizer/san_engine.h"
#include "plugins/cuda/sanitizer/san_process.h"
#include "tests/cuda_sanitizer/san_test_engine.h"
#include "tests/tap.h"

static void test_when(void)
{
	static const struct {
		const char *val;
		enum gbpf_san_when when;
	} cases[] = {
		{NULL, GBPF_SAN_WHEN_LOAD},       {"", GBPF_SAN_WHEN_LOAD},         {"load", GBPF_SAN_WHEN_LOAD},
		{"attach", GBPF_SAN_WHEN_ATTACH}, {"early", GBPF_SAN_WHEN_ATTACH},  {"lazy", GBPF_SAN_WHEN_LAZY},
		{"off", GBPF_SAN_WHEN_OFF},       {"sometimes", GBPF_SAN_WHEN_LOAD},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (cases[i].val)
			setenv("GBPF_SAN_SUBSCRIBE", cases[i].val, 1);
		else
			unsetenv("GBPF_SAN_SUBSCRIBE");
		tap_ok(gbpf_san_process_when() == cases[i].when, "GBPF_SAN_SUBSCRIBE=%s -> %s",
		       cases[i].val ? cases[i].val : "(unset)", gbpf_san_when_name(cases[i].when));
	}
	unsetenv("GBPF_SAN_SUBSCRIBE");
}

static void test_wanted(void)
{
	unsetenv("GBPF_AGENT_SOCK");
	setenv("NV_SANITIZER_INJECTION_PORT_BASE", "49152", 1);
	tap_ok(!gbpf_san_process_wanted() && gbpf_san_process_foreign_tool() &&
		       !strcmp(gbpf_san_process_foreign_tool(), "NV_SANITIZER_INJECTION_PORT_BASE=49152"),
	       "under compute-sanitizer (NV_SANITIZER_INJECTION_*): its tool's subscription, not ours");
	unsetenv("NV_SANITIZER_INJECTION_PORT_BASE");
	tap_ok(!gbpf_san_process_foreign_tool(), "no NV_SANITIZER_INJECTION_* entry: no foreign tool");
	unsetenv("GBPF_AGENT_LISTEN");
	unsetenv("GBPF_CUDA_ENGINE");
	tap_ok(!gbpf_san_process_wanted(), "no agent environment: the constructor does not subscribe");
	tap_ok(gbpf_san_process_state(NULL) == 0, "so nothing was tried in this test's process");
	setenv("GBPF_AGENT_SOCK", "/tmp/x/ctl.sock", 1);
	tap_ok(gbpf_san_process_wanted(), "under gbpf run (GBPF_AGENT_SOCK): subscribes at load");
	setenv("GBPF_CUDA_ENGINE", "ptx", 1);
	tap_ok(!gbpf_san_process_wanted(), "GBPF_CUDA_ENGINE=ptx: no subscription");
	setenv("GBPF_CUDA_ENGINE", "auto", 1);
	setenv("GBPF_SAN_SUBSCRIBE", "lazy", 1);
	tap_ok(!gbpf_san_process_wanted(), "GBPF_SAN_SUBSCRIBE=lazy: not at load");
	unsetenv("GBPF_SAN_SUBSCRIBE");
	unsetenv("GBPF_AGENT_SOCK");
	setenv("GBPF_AGENT_LISTEN", "1", 1);
	tap_ok(gbpf_san_process_wanted(), "idle agent (GBPF_AGENT_LISTEN): subscribes at load");
	unsetenv("GBPF_AGENT_LISTEN");
	unsetenv("GBPF_CUDA_ENGINE");
}

/* A real library where the loader looks after GBPF_SANITIZER_LIB: the not-found path cannot be shown. */
static int san_lib_installed(void)
{
	const char *home = getenv("CUDA_HOME");
	char path[512];

	if (!access("/usr/local/cuda/compute-sanitizer/libsanitizer-public.so", R_OK))
		return 1;
	if (!home || !*home)
		return 0;
	snprintf(path, sizeof(path), "%s/compute-sanitizer/libsanitizer-public.so", home);
	return !access(path, R_OK);
}

static void test_failed_subscription(void)
{
	const struct gbpf_san_api *api = NULL;
	struct gbpf_san_engine *e = NULL;
	enum gbpf_san_when when = GBPF_SAN_WHEN_OFF;
	char why[1024] = "", why2[1024] = "";
	int rc;

	rc = san_test_engine_create(&e, why, sizeof(why));
	tap_ok(rc == 0 && e, "engine created while no subscription was tried (it subscribes lazily): %d %s", rc, why);
	gbpf_san_engine_destroy(e);
	e = NULL;
	tap_ok(gbpf_san_process_state(NULL) == 0, "creating the engine did not subscribe (default: at load only)");
	if (san_lib_installed()) {
		tap_skip("a real libsanitizer-public.so is installed: the failed subscription is not checked");
		return;
	}
	setenv("GBPF_SANITIZER_LIB", "/nonexistent/libsanitizer-public.so", 1);
	rc = gbpf_san_process_subscribe(GBPF_SAN_WHEN_ATTACH, &api, why, sizeof(why));
	tap_ok(rc == -ENOENT && !api && strstr(why, "/nonexistent/libsanitizer-public.so"),
	       "no library: subscription fails, paths named: %.160s", why);
	tap_ok(gbpf_san_process_state(&when) == -1 && when == GBPF_SAN_WHEN_ATTACH,
	       "the failure is recorded with its moment");
	rc = gbpf_san_process_subscribe(GBPF_SAN_WHEN_LAZY, &api, why2, sizeof(why2));
	tap_ok(rc == -ENOENT && !strcmp(why, why2), "final: a second try answers the same reason");
	rc = san_test_engine_create(&e, why2, sizeof(why2));
	tap_ok(rc == -ENOENT && !e && strstr(why2, "/nonexistent/libsanitizer-public.so"),
	       "engine refused after the process's subscription failed, with the reason (%d)", rc);
	unsetenv("GBPF_SANITIZER_LIB");
}

int main(void)
{
	test_when();
	test_wanted();
	test_failed_subscription();
	return tap_done();
}
