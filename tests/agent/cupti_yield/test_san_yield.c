/* SPDX-License-Identifier: MIT */
/*
 * tests/agent/cupti_yield/test_san_yield.c - the cuda plugin gives the
 * Compute Sanitizer's subscription to a CUPTI profiler (#12), against the
 * stand-in libsanitizer-public.so (tests/cuda_sanitizer/fake_sanitizer.c,
 * argv[1]) and without a GPU:
 *  - the plugin's table entry (argv[2], the cuda plugin, dlopen'ed as an
 *    agent would, its constructor subscribing): kept under --engine
 *    sanitizer (flags or GBPF_CUDA_ENGINE), given up otherwise (the library
 *    sees sanitizerUnsubscribe), then nothing held;
 *  - the process's subscription (san_process.h, this program's own copy):
 *    the registered engine is called before the unsubscription, the
 *    subscription is never made again (the reason names CUPTI and the
 *    call), an engine is refused afterwards, a second yield finds nothing.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gbpf/insn.h>
#include <gbpf/plugin.h>
#include <gbpf/prog.h>

#include "plugins/cuda/ptx_codegen.h"
#include "plugins/cuda/sanitizer/san_engine.h"
#include "plugins/cuda/sanitizer/san_process.h"
#include "tests/cuda_sanitizer/san_test_engine.h"
#include "tests/tap.h"

static const char *(*fake_log)(void);

/* The fake's call log from @p mark on (the library is shared by the plugin's copy and ours). */
static const char *log_since(size_t mark)
{
	const char *l = fake_log ? fake_log() : "";

	return strlen(l) >= mark ? l + mark : "";
}

static void test_plugin_entry(const char *plugin)
{
	gbpf_plugin_get_backend_table_fn entry;
	struct gbpf_backend_ops ops = {.sz = sizeof(ops)};
	struct gbpf_backend_caps caps = {.sz = sizeof(caps)};
	char log[512] = "";
	void *h;
	int rc;

	/* As under gbpf run: the constructor subscribes (engine auto, at load). */
	setenv("GBPF_AGENT_SOCK", "/nonexistent/gbpf-ctl.sock", 1);
	h = dlopen(plugin, RTLD_NOW | RTLD_LOCAL);
	unsetenv("GBPF_AGENT_SOCK");
	*(void **)&entry = h ? dlsym(h, GBPF_PLUGIN_ENTRY_SYMBOL) : NULL;
	if (!tap_ok(entry && !entry(GBPF_PLUGIN_ABI_VERSION, &ops, &caps), "cuda plugin loaded: %s",
		    h ? plugin : dlerror()))
		return;
	tap_ok(ops.sz >= offsetof(struct gbpf_backend_ops, agent_yield_tool) + sizeof(void *) && ops.agent_yield_tool,
	       "its table has agent_yield_tool (ABI 1.4)");
	if (!ops.agent_yield_tool)
		return;
	tap_ok(!strcmp(log_since(0), "subscribe callback(1,3,10)"), "its constructor subscribed: %s", log_since(0));
	rc = ops.agent_yield_tool(NULL, GBPF_AGENT_F_ENGINE_SANITIZER, "cuptiSubscribe", log, sizeof(log));
	tap_ok(rc == -EBUSY && strstr(log, "--engine sanitizer"), "--engine sanitizer (attach flags): kept (%d: %s)",
	       rc, log);
	setenv("GBPF_CUDA_ENGINE", "sanitizer", 1);
	rc = ops.agent_yield_tool(NULL, 0, "cuptiSubscribe", log, sizeof(log));
	unsetenv("GBPF_CUDA_ENGINE");
	tap_ok(rc == -EBUSY, "GBPF_CUDA_ENGINE=sanitizer (gbpf run --engine sanitizer): kept (%d)", rc);
	tap_ok(!strcmp(log_since(0), "subscribe callback(1,3,10)"), "nothing asked of the library while kept");
	log[0] = 0;
	rc = ops.agent_yield_tool(NULL, 0, "cuptiSubscribe", log, sizeof(log));
	tap_ok(rc == 0 && strstr(log, "Compute Sanitizer engine unsubscribed") &&
	       strstr(log, "PTX injection goes on, kernels without PTX are not instrumentable"),
	       "engine auto: given up, the log says what: %s", log);
	tap_ok(!strcmp(log_since(0), "subscribe callback(1,3,10) callback(0,3,10) domain(0,3) unsubscribe"),
	       "the library saw its callbacks disabled, then sanitizerUnsubscribe: %s",
	       log_since(0));
	rc = ops.agent_yield_tool(NULL, 0, "cuptiActivityEnable", log, sizeof(log));
	tap_ok(rc == -ENOENT, "asked again: nothing held (%d)", rc);
	rc = ops.agent_yield_tool(NULL, GBPF_AGENT_F_ENGINE_SANITIZER, "cuptiActivityEnable", log, sizeof(log));
	tap_ok(rc == -ENOENT, "nor with --engine sanitizer: it is gone (%d)", rc);
	tap_ok(!strcmp(log_since(0), "subscribe callback(1,3,10) callback(0,3,10) domain(0,3) unsubscribe"), "and the library saw nothing more");
	/* The plugin stays loaded: the driver could hold callbacks into the library. */
}

static void test_process_yield(void)
{
	const struct gbpf_san_api *api = NULL;
	struct gbpf_san_engine *e = NULL, *e2 = NULL;
	size_t mark = strlen(log_since(0));
	char why[1024] = "", msg[512] = "";
	int rc;

	rc = gbpf_san_process_subscribe(GBPF_SAN_WHEN_LOAD, &api, why, sizeof(why));
	tap_ok(rc == 0 && api, "subscribed through the stand-in (%d %s)", rc, why);
	rc = san_test_engine_create(&e, why, sizeof(why));
	tap_ok(rc == 0 && e, "engine created on it (%d %s)", rc, why);
	/* Patches loaded into a context: unloading the library is unverified then, the subscription is kept. */
	gbpf_san_process_note_patches();
	unsetenv("GBPF_SAN_YIELD_UNLOAD");
	rc = gbpf_san_process_yield("cuptiActivityEnable", msg, sizeof(msg));
	tap_ok(rc == -EBUSY && strstr(msg, "GBPF_SAN_YIELD_UNLOAD=1") && gbpf_san_process_state(NULL) == 1 &&
	       !strcmp(log_since(mark), " subscribe callback(1,3,10)"),
	       "patches loaded: kept, nothing asked of the library (%d: %s)", rc, msg);
	setenv("GBPF_SAN_YIELD_UNLOAD", "1", 1);
	rc = gbpf_san_process_yield("cuptiActivityEnable", msg, sizeof(msg));
	unsetenv("GBPF_SAN_YIELD_UNLOAD");
	tap_ok(rc == 0 && strstr(msg, "Compute Sanitizer engine restored 0/0 patched modules") &&
	       strstr(msg, "its 0 kernels run uninstrumented now; unsubscribed, library unloaded"),
	       "GBPF_SAN_YIELD_UNLOAD=1: given up, the engine restored its modules first: %s", msg);
	tap_ok(!strcmp(log_since(mark), " subscribe callback(1,3,10) callback(0,3,10) domain(0,3) unsubscribe") ||
	       !strcmp(log_since(mark), "subscribe callback(1,3,10) callback(0,3,10) domain(0,3) unsubscribe"),
	       "the library saw the subscription, then its end: %s", log_since(mark));
	tap_ok(gbpf_san_process_state(NULL) == -1 && gbpf_san_process_yielded(), "state: given up (final)");
	rc = gbpf_san_process_subscribe(GBPF_SAN_WHEN_LAZY, &api, why, sizeof(why));
	tap_ok(rc == -EBUSY && strstr(why, "the CUPTI profiler took the driver's tool subscription (cuptiActivityEnable)"),
	       "never subscribed again, the reason names CUPTI and the call: %s", why);
	rc = san_test_engine_create(&e2, why, sizeof(why));
	tap_ok(rc == -EBUSY && !e2 && strstr(why, "CUPTI"), "a later engine (next attach) is refused with it (%d)", rc);
	rc = gbpf_san_process_yield("cuptiSubscribe", msg, sizeof(msg));
	tap_ok(rc == -ENOENT, "a second yield finds nothing (%d)", rc);
	gbpf_san_engine_destroy(e);
}

int main(int argc, char **argv)
{
	void *fake;

	if (argc < 3) {
		tap_skip("usage: test_san_yield FAKE_SANITIZER_LIBRARY CUDA_PLUGIN");
		return tap_done();
	}
	unsetenv("GBPF_SAN_SUBSCRIBE");
	unsetenv("GBPF_CUDA_ENGINE");
	unsetenv("GBPF_AGENT_LISTEN");
	setenv("GBPF_SANITIZER_LIB", argv[1], 1);
	fake = dlopen(argv[1], RTLD_NOW);
	*(void **)&fake_log = fake ? dlsym(fake, "fake_san_log") : NULL;
	if (!tap_ok(fake_log != NULL, "stand-in library loaded: %s", fake ? argv[1] : dlerror()))
		return tap_done();
	test_plugin_entry(argv[2]);
	test_process_yield();
	return tap_done();
}
