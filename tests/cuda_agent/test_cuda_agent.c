/* SPDX-License-Identifier: MIT */
/*
 * tests/cuda_agent/test_cuda_agent.c - `gbpf run --backend cuda` on an app
 * driven by the fake driver of this folder (no GPU): the real controller,
 * the real agent and the cuda plugin preloaded into the app.
 * Args: gbpf, app, plugin, probe object, fake driver directory, devcount,
 * blockdev and devctx_exit probe objects.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tap.h"

static const char *gbpf, *app, *plugin, *obj, *fakedir, *devcount_obj, *blockdev_obj, *devctx_exit_obj,
	*printk_obj;
static char dir[] = "/tmp/gbpf-cuda-agent-XXXXXX";
static char out_buf[65536], err_buf[65536], log_buf[65536];

static void slurp(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");
	size_t n = 0;

	buf[0] = 0;
	if (!f)
		return;
	n = fread(buf, 1, size - 1, f);
	buf[n] = 0;
	fclose(f);
}

/* Print a captured stream as TAP comments, one line each. */
static int diag_lines(const char *what, const char *buf)
{
	const char *p = buf;

	for (int n = 0; *p && n < 40; n++) {
		const char *e = strchr(p, '\n');
		int len = e ? (int)(e - p) : (int)strlen(p);

		tap_diag("%s: %.*s", what, len, p);
		p += len + (e ? 1 : 0);
	}
	return 0;
}

static int count(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* Run `gbpf run OBJECT -- app APP_ARGS` with extra environment; returns the exit status. */
static int run_with(const char *extra_env, const char *object, const char *app_args)
{
	char cmd[4096], path[512];
	int st;

	snprintf(path, sizeof(path), "%s/fake.log", dir);
	unlink(path);
	snprintf(cmd, sizeof(cmd),
		 "env %s LD_LIBRARY_PATH='%s' GBPF_PLUGIN_PATH='%s' GBPF_FAKE_CUDA_LOG='%s' "
		 "'%s' -j run --backend cuda '%s' -- '%s' %s > '%s/out' 2> '%s/err'",
		 extra_env, fakedir, plugin, path, gbpf, object, app, app_args, dir, dir);
	st = system(cmd);
	slurp(path, log_buf, sizeof(log_buf));
	snprintf(path, sizeof(path), "%s/out", dir);
	slurp(path, out_buf, sizeof(out_buf));
	snprintf(path, sizeof(path), "%s/err", dir);
	slurp(path, err_buf, sizeof(err_buf));
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static int run(const char *extra_env, int launches)
{
	char args[32];

	snprintf(args, sizeof(args), "%d", launches);
	return run_with(extra_env, obj, args);
}

/* The first map0= address logged for a launch of target_k in fake context @p ctx. */
static unsigned long long map0_in(int ctx)
{
	const char *p;

	for (p = log_buf; (p = strstr(p, "launch target_k instrumented=1 ")); p++) {
		const char *e = strchr(p, '\n'), *c = strstr(p, " ctx="), *m = strstr(p, " map0=");

		if (c && m && (!e || (c < e && m < e)) && atoi(c + 5) == ctx)
			return strtoull(m + 6, NULL, 16);
	}
	return 0;
}

/*
 * Two contexts: each gets its own device copy of a GPU-only map (the fake
 * driver's launches add the threads they run to it), the app destroys the
 * second context before it exits, and the host view holds both counts.
 */
static void test_two_contexts(void)
{
	int rc = run_with("GBPF_FAKE_EXEC_COUNT=1", devcount_obj, "3 multi");
	unsigned long long a = map0_in(0), b = map0_in(1);

	tap_ok(rc == 0 && strstr(out_buf, "app: 8 launches ok in 2 contexts"),
	       "two contexts: app runs to the end (rc %d)", rc);
	tap_ok(count(log_buf, "load instrumented=1") == 2, "target_k instrumented once per context (%d loads)",
	       count(log_buf, "load instrumented=1"));
	tap_ok(count(log_buf, "instrumented=1 grid=4 block=32") == 6 && count(log_buf, " ctx=1 ") >= 3,
	       "every launch in both contexts replaced (%d of 6)",
	       count(log_buf, "instrumented=1 grid=4 block=32"));
	tap_ok(a && b && a != b, "each context's modules point at its own device copy (%#llx, %#llx)", a, b);
	/* the map region (PORTABLE|DEVICEMAP), and the snapshot buffer (PORTABLE): its copies are DMA */
	tap_ok(count(log_buf, "hostregister") == 2 && count(log_buf, "flags=3") == 1 && count(log_buf, "flags=1") == 1,
	       "the snapshot buffer of the device-placed map is registered beside the map region (%d registrations)",
	       count(log_buf, "hostregister"));
	tap_ok(strstr(log_buf, "ctxdestroy 1") != NULL, "the app destroyed its own context");
	tap_ok(strstr(out_buf, "{\"key\":0,\"value\":768}") != NULL,
	       "host view = both contexts' counts, the destroyed one's kept (768 = 2 x 3 x 128)");
	tap_ok(!strstr(err_buf, "not instrumented") && !strstr(err_buf, "error"),
	       "nothing reported as failed");
	if (tap_failed)
		diag_lines("stdout", out_buf), diag_lines("stderr", err_buf), diag_lines("log", log_buf);
}

/*
 * Contexts made, used and destroyed one after another while the forwarder
 * snapshots the device-placed map (each context synchronises, which asks
 * for a snapshot within milliseconds, and lives a few more): the snapshot
 * merges with the maps' lock released, a new context's first launch and a
 * context's destruction take the locks in the other paths. The host view
 * must hold every context's count once: 30 contexts x 2 launches x 128.
 */
static void test_context_churn(void)
{
	int rc = run_with("GBPF_FAKE_EXEC_COUNT=1", devcount_obj, "2 churn 30");

	tap_ok(rc == 0 && strstr(out_buf, "app: 90 launches ok in 30 contexts"),
	       "context churn: app runs to the end (rc %d)", rc);
	tap_ok(count(log_buf, "ctxdestroy") == 30 && count(log_buf, "load instrumented=1") == 30,
	       "context churn: 30 contexts, target_k instrumented in each (%d loads)",
	       count(log_buf, "load instrumented=1"));
	tap_ok(strstr(out_buf, "{\"key\":0,\"value\":7680}") != NULL,
	       "context churn: the host view holds every context's count once (7680)");
	tap_ok(!strstr(err_buf, "not instrumented") && !strstr(err_buf, "error"), "context churn: nothing failed");
	if (tap_failed)
		diag_lines("stdout", out_buf), diag_lines("stderr", err_buf);
}

/*
 * A module unloaded and another loaded under the same handle (a driver may
 * reuse the address): a launch of the second module's kernel of the same
 * name is instrumented from the second module, not replaced by what was
 * made from the first; and the instrumented module made from the first
 * is unloaded with it, not left loaded for the life of the process.
 */
static void test_module_reload(void)
{
	int rc = run_with("GBPF_FAKE_REUSE_MODULE=1", obj, "1 reload");
	const char *second = strstr(log_buf, "reused=1 second=1");

	tap_ok(rc == 0 && strstr(out_buf, "app: reload ok"), "reload: app runs to the end (rc %d)", rc);
	tap_ok(second != NULL, "reload: the second module got the first one's handle (the case under test)");
	tap_ok(count(log_buf, "load instrumented=1") == 2 && second &&
		       strstr(second, "load instrumented=1 reads_device=0 reused=0 second=1"),
	       "reload: target_k instrumented again, from the second module (%d instrumented loads)",
	       count(log_buf, "load instrumented=1"));
	tap_ok(count(log_buf, "launch target_k instrumented=1") == 2, "reload: both launches replaced");
	/* the app's unload takes the instrumented module made from it along (no module left behind) */
	tap_ok(count(log_buf, "module freed instrumented=1") == 1 && count(log_buf, "module freed instrumented=0") == 1,
	       "reload: the app's unload unloads the instrumented module made from it (%d instrumented, %d app "
	       "unloads)", count(log_buf, "module freed instrumented=1"), count(log_buf, "module freed instrumented=0"));
	if (tap_failed)
		diag_lines("stderr", err_buf), diag_lines("log", log_buf);
}

/*
 * ctx->device: the fake GPU is device 3. The module of a gpu/block probe
 * reading it loads __gbpf_device, which the agent sets to 3 (what the
 * host/launch probe sees); a probe reading no device field has no load.
 */
static void test_device(void)
{
	int rc = run_with("GBPF_FAKE_DEVICE=3", blockdev_obj, "2");

	tap_ok(rc == 0 && strstr(out_buf, "app: 3 launches ok"), "device 3: app runs to the end (rc %d)", rc);
	tap_ok(count(log_buf, "load instrumented=1 reads_device=1") == 2,
	       "both kernels' instrumented modules read __gbpf_device into the block probe's ctx");
	tap_ok(count(log_buf, "instrumented=1 grid=4 block=32") == 2 && count(log_buf, " device=3 ") == 3,
	       "the agent set __gbpf_device = 3 in the module (%d launches logged device=3)",
	       count(log_buf, " device=3 "));
	tap_ok(strstr(out_buf, "\"host_device_launches\"") && strstr(out_buf, "{\"key\":3,\"value\":3}"),
	       "host/launch ctx->device == 3 for the 3 launches");
	run("", 1);
	tap_ok(count(log_buf, "load instrumented=1 reads_device=0") == 1,
	       "a probe reading no device field: no __gbpf_device load");
	if (tap_failed)
		diag_lines("stdout", out_buf), diag_lines("stderr", err_buf), diag_lines("log", log_buf);
}

/*
 * gpu/exit ctx->device (gbpf_gpu_ctx.device): the exit probe reading it
 * makes the agent set __gbpf_device and the kernel entry load it, as for
 * gpu/block; the fake driver runs no PTX, so the counts are the device
 * script's (tools_matrix.sh devctx_exit).
 */
static void test_device_exit(void)
{
	int rc = run_with("GBPF_FAKE_DEVICE=3", devctx_exit_obj, "2");

	tap_ok(rc == 0 && strstr(out_buf, "app: 3 launches ok"), "gpu/exit device 3: app runs to the end (rc %d)",
	       rc);
	tap_ok(count(log_buf, "load instrumented=1 reads_device=1") == 2,
	       "gpu/exit reading ctx->device: both kernels' modules load __gbpf_device at entry");
	tap_ok(count(log_buf, "instrumented=1 grid=4 block=32") == 2 && count(log_buf, " device=3 ") == 3,
	       "gpu/exit: the agent set __gbpf_device = 3 (%d launches logged device=3)",
	       count(log_buf, " device=3 "));
	tap_ok(strstr(out_buf, "\"host_device_launches\"") && strstr(out_buf, "{\"key\":3,\"value\":3}"),
	       "gpu/exit object: host/launch ctx->device == 3 for the 3 launches");
	tap_ok(!strstr(err_buf, "not instrumented") && !strstr(err_buf, "error"), "gpu/exit: nothing reported as failed");
	if (tap_failed)
		diag_lines("stdout", out_buf), diag_lines("stderr", err_buf), diag_lines("log", log_buf);
}

static void test_instrumented(void)
{
	unsigned long long ids[3] = {0};
	const char *p = log_buf;
	int rc = run("", 3), i;

	tap_ok(rc == 0 && strstr(out_buf, "app: 4 launches ok"), "app runs to the end under gbpf run (rc %d)", rc);
	tap_ok(count(log_buf, "load instrumented=1") == 1,
	       "target_k's module instrumented and JIT'ed once (lazily, cached): %d loads",
	       count(log_buf, "load instrumented=1"));
	tap_ok(count(log_buf, "launch target_k instrumented=1") == 3,
	       "every launch of target_k replaced by the instrumented function (%d of 3)",
	       count(log_buf, "launch target_k instrumented=1"));
	tap_ok(count(log_buf, "launch other_k instrumented=0") == 1 && !strstr(log_buf, "launch other_k instrumented=1"),
	       "non-targeted other_k launched untouched");
	tap_ok(count(log_buf, "setattr target_k 8=4096") == 2, "app's attribute replayed on the replacement");
	tap_ok(count(log_buf, "maps0=set") == 3, "__gbpf_maps set in the instrumented module");
	tap_ok(count(log_buf, "const=same") == 3,
	       "__gbpf_maps_const and __gbpf_slots_const: the same addresses, each map's nr_slots (%d of 3)",
	       count(log_buf, "const=same"));
	tap_ok(count(log_buf, "hostregister") == 1 && strstr(log_buf, "flags=3"),
	       "map region registered once with PORTABLE|DEVICEMAP");
	for (i = 0; i < 3 && (p = strstr(p, "launch target_k instrumented=1")); i++, p++) {
		const char *q = strstr(p, "launch_id=");

		ids[i] = q ? strtoull(q + 10, NULL, 10) : 0;
	}
	tap_ok(ids[0] && ids[1] > ids[0] && ids[2] > ids[1],
	       "__gbpf_launch_id set per launch, increasing (%llu %llu %llu)", ids[0], ids[1], ids[2]);
	tap_ok(strstr(err_buf, "target_k") && strstr(err_buf, "instrumented (") != NULL,
	       "instrumentation reported as info");
	tap_ok(strstr(out_buf, "\"counts\"") && strstr(out_buf, "{\"key\":1,\"value\":4}"),
	       "host/launch program ran once per launch (counts[1] == 4)");
	if (!strstr(out_buf, "{\"key\":1,\"value\":4}"))
		diag_lines("stdout", out_buf);
}

/* The launch id field of the launch_n-th log line of target_k (instrumented), or 0. */
static const char *nth_target_launch(int n)
{
	const char *p = log_buf;

	for (int i = 0; p && (p = strstr(p, "launch target_k instrumented=1")); i++, p++)
		if (i == n)
			return p;
	return NULL;
}

static unsigned long long field_of(const char *line, const char *key)
{
	const char *e = line ? strchr(line, '\n') : NULL, *q = line ? strstr(line, key) : NULL;

	return q && (!e || q < e) ? strtoull(q + strlen(key), NULL, 0) : ~0ULL;
}

/*
 * Launch ids per launch (the hidden __gbpf_lid parameter): launches of one
 * kernel on two streams each get their own id, with no memset of the
 * module variable (which concurrent launches would share); an `extra`
 * buffer launch gets it appended after the app's bytes (which arrive
 * intact); a launch into a capturing stream (a graph node) gets the
 * sentinel that makes the kernel read the module variable.
 */
static void test_launch_param(void)
{
	unsigned long long ids[6];
	int rc = run_with("", obj, "4 streams"), distinct = 1, i;

	tap_ok(rc == 0 && strstr(out_buf, "app: 7 launches ok"), "streams app runs to the end (rc %d)", rc);
	tap_ok(count(log_buf, "launch target_k instrumented=1") == 6,
	       "the 6 launches of target_k run the instrumented kernel (%d)",
	       count(log_buf, "launch target_k instrumented=1"));
	for (i = 0; i < 6; i++)
		ids[i] = field_of(nth_target_launch(i), " launch_id=");
	for (i = 0; i < 5; i++) /* the 6th is the captured launch */
		distinct &= ids[i] && ids[i] != ~0ULL && (i == 4 || ids[i + 1] > ids[i]);
	tap_ok(distinct, "direct launches on streams 0x11/0x22 and the extra-buffer one: distinct increasing "
	       "ids from the hidden parameter (%llu %llu %llu %llu %llu)", ids[0], ids[1], ids[2], ids[3], ids[4]);
	tap_ok(count(log_buf, "launch target_k instrumented=1") == count(log_buf, "hidden=1 ") &&
	       field_of(nth_target_launch(0), " arg0=") == 42 && field_of(nth_target_launch(4), " arg0=") == 42,
	       "every instrumented launch carries the hidden parameter; the app's argument intact (kernelParams "
	       "and extra buffer)");
	tap_ok(field_of(nth_target_launch(1), " stream=") == 0x22 && field_of(nth_target_launch(4), " sentinel=") == 0,
	       "the extra-buffer launch on stream 0x22 read its own id, not the module variable");
	tap_ok(field_of(nth_target_launch(5), " sentinel=") == 1 && field_of(nth_target_launch(5), " stream=") == 0x77,
	       "the launch captured into a graph got the sentinel (reads __gbpf_launch_id)");
	tap_ok(count(log_buf, "memset32") == 0, "no per-launch memset of __gbpf_launch_id (%d)",
	       count(log_buf, "memset32"));
	tap_ok(strstr(out_buf, "{\"key\":1,\"value\":6}") != NULL,
	       "host/launch ran for the 6 direct launches (5 of target_k, other_k), not the captured one (a node)");
	if (tap_failed)
		diag_lines("stdout", out_buf), diag_lines("stderr", err_buf), diag_lines("log", log_buf);
}

static void test_jit_fails(void)
{
	int rc = run("GBPF_FAKE_JIT_FAIL=1", 3);

	tap_ok(rc == 0 && strstr(out_buf, "app: 4 launches ok"), "app unaffected by a failing JIT (rc %d)", rc);
	tap_ok(count(log_buf, "launch target_k instrumented=0") == 3, "original launches proceed when the JIT fails");
	tap_ok(strstr(err_buf, "not instrumented") && strstr(err_buf, "JIT of the instrumented PTX"),
	       "failing JIT reported as not instrumented");
	/* the first launch tries the module with the constant-bank map table, then without it */
	tap_ok(count(log_buf, "load instrumented=1") == 2, "a failed kernel is not retried at every launch (%d loads)",
	       count(log_buf, "load instrumented=1"));
}

/*
 * GBPF_CUDA_PTX_DIR: the instrumented module as the driver got it, written
 * and reported; a folder that cannot be written is reported and the kernel
 * is instrumented all the same. The report says where the time went.
 */
/*
 * The JIT refuses the module with the constant-bank map table (an
 * application near the 64 KB of user constants): the kernel is injected
 * again with the global table only, and instrumented.
 */
static void test_const_table_refused(void)
{
	int rc = run("GBPF_FAKE_CONST_FAIL=1", 2);

	tap_ok(rc == 0 && strstr(out_buf, "app: 3 launches ok"), "constant table refused: the app runs (rc %d)", rc);
	tap_ok(count(log_buf, "fault const") == 1 && count(log_buf, "launch target_k instrumented=1") == 2 &&
		       !strstr(log_buf, "const=same") &&
		       count(log_buf, "maps0=set") == 2,
	       "constant table refused once: every launch instrumented from the global table (%d faults)",
	       count(log_buf, "fault const"));
	tap_ok(strstr(err_buf, "injected again with the global table only") && !strstr(err_buf, "not instrumented"),
	       "constant table refused: the user is told, the kernel instrumented");
	if (tap_failed)
		diag_lines("stderr", err_buf), diag_lines("log", log_buf);
}

/*
 * A probe that prints, in two contexts: each context's queues are made
 * once, bound to its instrumented module (__gbpf_printq set for every
 * launch), the destroyed context's closed with it and the other's at exit,
 * without a report (no line printed, no drop). Then in one context with
 * the fake printing a line at each launch and counting 3 drops: every line
 * reaches the user and the drops are told, although the app never detaches.
 */
static void test_print_queues(void)
{
	int rc = run_with("", printk_obj, "2 multi");

	tap_ok(rc == 0 && strstr(out_buf, "app: 6 launches ok in 2 contexts"),
	       "printing probe: the app runs to the end (rc %d)", rc);
	tap_ok(count(log_buf, "launch target_k instrumented=1") == 4 &&
		       count(log_buf, "launch target_k instrumented=1") == count(log_buf, "printq=set"),
	       "each launch of target_k instrumented with __gbpf_printq set (%d, %d)",
	       count(log_buf, "launch target_k instrumented=1"), count(log_buf, "printq=set"));
	tap_ok(count(log_buf, "hostalloc") == 2 && count(log_buf, "freehost") == 2 &&
		       strstr(log_buf, "ctxdestroy 1") && strstr(log_buf, "freehost") < strstr(log_buf, "ctxdestroy 1"),
	       "queues made once per context, the destroyed context's freed before it goes, the other's at exit "
	       "(%d, %d)", count(log_buf, "hostalloc"), count(log_buf, "freehost"));
	tap_ok(!strstr(err_buf, "not instrumented") && !strstr(err_buf, "error") && !strstr(err_buf, "lost"),
	       "printing probe: nothing reported as failed or lost");
	if (tap_failed)
		diag_lines("stderr", err_buf), diag_lines("log", log_buf);

	/* each launch prints a line (the fake's GBPF_FAKE_EXEC_PRINT), the app exits right after the last */
	rc = run_with("GBPF_FAKE_EXEC_PRINT=1 GBPF_FAKE_PRINT_DROPS=3", printk_obj, "3");
	tap_ok(rc == 0 && count(out_buf, "fake print 1") == 1 && count(out_buf, "fake print 2") == 1 &&
		       count(out_buf, "fake print 3") == 1,
	       "every line the launches printed reaches the user once, the last one too (rc %d)", rc);
	tap_ok(count(log_buf, "freehost") == 1 && strstr(err_buf, "3 lines lost"),
	       "at exit without a detach: the queues drained and freed, the GPU's 3 drops reported (%d)",
	       count(log_buf, "freehost"));
	if (tap_failed)
		diag_lines("stdout", out_buf), diag_lines("stderr", err_buf);
}

static void test_ptx_dir(void)
{
	char env[1024], path[900], cmd[1024], text[65536];
	FILE *p;
	int rc;

	snprintf(path, sizeof(path), "%s/ptx", dir);
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", path);
	if (system(cmd))
		tap_diag("%s failed", cmd);
	snprintf(env, sizeof(env), "GBPF_CUDA_PTX_DIR='%s'", path);
	rc = run(env, 1);
	snprintf(cmd, sizeof(cmd), "cat '%s'/*-0.ptx 2>/dev/null", path);
	text[0] = 0;
	if ((p = popen(cmd, "r"))) {
		text[fread(text, 1, sizeof(text) - 1, p)] = 0;
		pclose(p);
	}
	tap_ok(rc == 0 && strstr(err_buf, "instrumented module written to") && strstr(text, ".entry target_k") &&
		       strstr(text, "__gbpf_launch_id"),
	       "GBPF_CUDA_PTX_DIR: target_k's instrumented module written and reported (rc %d)", rc);
	tap_ok(strstr(err_buf, " ms: maps ") && strstr(err_buf, ", injection ") && strstr(err_buf, ", module load "),
	       "the instrumentation report says where the first launch's time went");
	snprintf(env, sizeof(env), "GBPF_CUDA_PTX_DIR='%s/none'", path);
	rc = run(env, 1);
	tap_ok(rc == 0 && strstr(err_buf, "GBPF_CUDA_PTX_DIR: cannot write") &&
		       count(log_buf, "launch target_k instrumented=1") == 1,
	       "GBPF_CUDA_PTX_DIR unwritable: reported, the kernel instrumented all the same");
	if (tap_failed)
		diag_lines("stderr", err_buf);
}

static void test_register_fails(void)
{
	int rc = run("GBPF_FAKE_REGISTER_FAIL=1", 2);

	tap_ok(rc == 0 && count(log_buf, "launch target_k instrumented=0") == 2,
	       "maps unreachable: original launches (rc %d)", rc);
	tap_ok(strstr(err_buf, "error") && strstr(err_buf, "cuMemHostRegister"), "map registration failure reported");
}

int main(int argc, char **argv)
{
	char cmd[256];

	if (argc < 10) {
		tap_skip("usage: test_cuda_agent GBPF APP PLUGIN OBJ FAKEDIR DEVCOUNT_OBJ BLOCKDEV_OBJ DEVCTX_EXIT_OBJ "
			 "PRINTK_OBJ");
		return tap_done();
	}
	gbpf = argv[1];
	app = argv[2];
	plugin = argv[3];
	obj = argv[4];
	fakedir = argv[5];
	devcount_obj = argv[6];
	blockdev_obj = argv[7];
	devctx_exit_obj = argv[8];
	printk_obj = argv[9];
	if (access(gbpf, X_OK) || access(app, X_OK) || access(plugin, R_OK)) {
		tap_skip("%s, %s or %s missing: a sanitizer build runs this against the gcc release build "
			 "beside it, which scripts/test.sh makes", gbpf, app, plugin);
		return tap_done();
	}
	if (!mkdtemp(dir)) {
		tap_ok(0, "mkdtemp");
		return tap_done();
	}
	test_instrumented();
	test_launch_param();
	if (tap_failed)
		diag_lines("stderr", err_buf), diag_lines("log", log_buf);
	test_jit_fails();
	test_register_fails();
	test_ptx_dir();
	test_print_queues();
	test_const_table_refused();
	test_context_churn();
	test_two_contexts();
	test_module_reload();
	test_device();
	test_device_exit();
	if (tap_failed)
		diag_lines("stderr", err_buf);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		tap_diag("cannot remove %s", dir);
	return tap_done();
}
