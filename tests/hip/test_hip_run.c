/* SPDX-License-Identifier: MIT */
/*
 * `gbpf run` with GBPF_BACKEND=hip on the fake-device runtime (the fake
 * libamdhip64.so.5 of tests/hip/fakert first on LD_LIBRARY_PATH, no GPU):
 * the real controller, the real agent and the hip plugin's interposers in
 * hipcc-built apps and in an app that dlopens the runtime.
 *
 * Checks: the apps run to their end with the same output; the fake runtime
 * logs every registration, module load and launch; the images it was given
 * for targeted kernels are rewritten code objects that pass co_check_object
 * and hold the probe functions, while an app none of whose kernels is
 * targeted registers its fat binary byte for byte; the controller reports
 * each instrumented kernel, per code object, and that no AMD device ran it.
 *
 * Args: GBPF_BUILD_ROOT native|sibling FAKE_RT_DIR PROBE_OBJ VECTOR_ADD MULTI_KERNEL MODULE_APP [CO_GFX942]
 * (a sanitizer build drives the non-sanitized <build>-gcc that
 * scripts/test.sh builds: sanitized libraries cannot be preloaded into
 * uninstrumented apps).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hip_test_util.h"
#include "plugins/hip/co_instrument.h"
#include "plugins/hip/co_rewrite.h"
#include "tests/tap.h"

static char gbpf[4096], plugin[4096];
static const char *fake_rt, *probe;
/* One more VAR=value for the next run under gbpf (NULL: none). */
static const char *extra_env;

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;

	for (const char *p = hay; hay && (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* 1 when @p out has a table line "KEY VALUE" (columns separated by spaces). */
static int has_row(const char *out, const char *key, const char *value)
{
	for (const char *l = out; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		char k[64], v[64];

		if (sscanf(l, "%63s %63s", k, v) == 2 && !strcmp(k, key) && !strcmp(v, value))
			return 1;
	}
	return 0;
}

/*
 * Run @p app (with up to 2 args) on the fake runtime, under `gbpf run`
 * when @p with_gbpf. Returns the exit status; *out: stdout+stderr, *log:
 * the runtime's log; images land in @p dump.
 */
static int run(int with_gbpf, const char *app, const char *a1, const char *a2, const char *dump, char **out,
	       char **log)
{
	char logp[] = "/tmp/gbpf-hip-run-log-XXXXXX", e_log[600], e_dump[600], e_lib[600], e_plug[4200];
	char *argv[20];
	int fd = mkstemp(logp), n = 0, st;

	if (fd < 0)
		return -1;
	close(fd);
	snprintf(e_log, sizeof(e_log), "GBPF_HIP_SHIM_LOG=%s", logp);
	snprintf(e_dump, sizeof(e_dump), "GBPF_HIP_SHIM_DUMP=%s", dump);
	snprintf(e_lib, sizeof(e_lib), "LD_LIBRARY_PATH=%s", fake_rt);
	snprintf(e_plug, sizeof(e_plug), "GBPF_PLUGIN_PATH=%s", plugin);
	argv[n++] = (char *)"env";
	argv[n++] = e_log;
	argv[n++] = e_dump;
	argv[n++] = e_lib;
	if (with_gbpf) {
		argv[n++] = e_plug;
		argv[n++] = (char *)"GBPF_BACKEND=hip";
		argv[n++] = (char *)"GBPF_HIP_FAKE_DEVICE=1";
		if (extra_env)
			argv[n++] = (char *)extra_env;
		argv[n++] = gbpf;
		argv[n++] = (char *)"run";
		argv[n++] = (char *)probe;
		argv[n++] = (char *)"--";
	}
	argv[n++] = (char *)app;
	if (a1)
		argv[n++] = (char *)a1;
	if (a2)
		argv[n++] = (char *)a2;
	argv[n] = NULL;
	st = run_cmd(argv, out);
	*log = read_file(logp, NULL);
	unlink(logp);
	return st;
}

static uint8_t *dumped(const char *dir, const char *name, size_t *len)
{
	char path[4200];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return (uint8_t *)read_file(path, len);
}

/* A rewritten code object: passes the checker, holds the probe functions and differs from the original. */
static int rewritten_ok(const char *what, const uint8_t *co, size_t len, const uint8_t *orig, size_t olen)
{
	char err[512] = "";
	size_t nk = 0;
	int rc = co_check_object(NULL, co, len, &nk, err, sizeof(err));
	int has_probe = memmem(co, len, "__gbpf_probe_0", 14) != NULL;
	int differs = len != olen || memcmp(co, orig, len);

	return tap_ok(rc == 0 && nk > 0 && has_probe && differs,
		      "%s: registered image is a rewritten code object (checker %s%s, %zu kernels, probe functions %s, "
		      "%s the original)",
		      what, rc ? "fails: " : "passes", rc ? err : "", nk, has_probe ? "present" : "missing",
		      differs ? "differs from" : "SAME AS");
}

/* Every AMDGCN entry of @p b rewritten relative to @p o; the host entry unchanged. */
static void check_bundle(const char *what, const uint8_t *b, size_t blen, const uint8_t *o, size_t olen)
{
	struct co_bundle *nb = calloc(1, sizeof(*nb)), *ob = calloc(1, sizeof(*ob));
	char err[256] = "";

	if (!tap_ok(nb && ob && !co_bundle_parse(b, blen, nb, err, sizeof(err)) &&
			    !co_bundle_parse(o, olen, ob, err, sizeof(err)) && nb->n == ob->n,
		    "%s: registered bundle parses with as many entries as the original %s", what, err))
		goto out;
	for (size_t i = 0; i < nb->n; i++) {
		char w[300];

		snprintf(w, sizeof(w), "%s: %s", what, nb->e[i].id);
		if (strstr(nb->e[i].id, "amdgcn"))
			rewritten_ok(w, nb->e[i].data, nb->e[i].size, ob->e[i].data, ob->e[i].size);
		else
			tap_ok(!strcmp(nb->e[i].id, ob->e[i].id) && nb->e[i].size == ob->e[i].size,
			       "%s: entry unchanged", w);
	}
out:
	if (nb)
		co_bundle_free(nb);
	if (ob)
		co_bundle_free(ob);
	free(nb);
	free(ob);
}

static void test_multi_kernel(const char *app, const char *tmp)
{
	char d0[600], d1[600], *out0 = NULL, *log0 = NULL, *out = NULL, *log = NULL;
	uint8_t *orig, *rw;
	size_t olen = 0, rlen = 0;
	int st0, st;

	snprintf(d0, sizeof(d0), "%s/mk0", tmp);
	snprintf(d1, sizeof(d1), "%s/mk1", tmp);
	if (mkdir(d0, 0700) || mkdir(d1, 0700))
		return;
	st0 = run(0, app, NULL, NULL, d0, &out0, &log0);
	st = run(1, app, NULL, NULL, d1, &out, &log);
	tap_ok(st0 == 0 && st == 0 && strstr(out0 ? out0 : "", "multi_kernel: 4 launches done") &&
		       strstr(out ? out : "", "multi_kernel: 4 launches done"),
	       "multi_kernel: runs to its end on the fake runtime, alone (%d) and under gbpf run (%d)", st0, st);
	tap_ok(count(log, "register_fatbin entries=3") == 1 && count(log, "register_function name=") == 4 &&
		       count(log, "launch via=hipLaunchKernel") == 4 && count(log, "unregister_fatbin") == 1 &&
		       count(log, "name=_Z6grid2dPiii grid=4,8,1 block=16,8,1") == 1,
	       "multi_kernel: the runtime saw the fat binary, 4 registrations, 4 launches and the unregistration");
	tap_ok(count(out, "kernel _Z6grid2dPiii: instrumented in the gfx90a code object") == 1 &&
		       count(out, "kernel _Z6grid2dPiii: instrumented in the gfx940 code object") == 1 &&
		       count(out, ": instrumented in the ") == 2,
	       "multi_kernel: the controller reports grid2d instrumented in both code objects, nothing else");
	tap_ok(count(out, "kernel _Z6grid2dPiii: launched through hipLaunchKernel (grid 4,8,1 block 16,8,1) with its "
			  "instrumented code objects (gfx90a gfx940); no AMD device ran it") == 1,
	       "multi_kernel: the controller reports grid2d launched instrumented and that no AMD device ran it");
	tap_ok(count(out, "no AMD device (hipGetDeviceCount returned 100)") == 1,
	       "multi_kernel: the missing device is reported once");
	tap_ok(has_row(out, "0", "4"), "multi_kernel: the host/launch probe counted the 4 launches (map 'hits', key 0)");
	tap_ok(has_row(out, "1002", "4") && !has_row(out, "1000", "4"),
	       "multi_kernel: host/launch ctx->device is the runtime's current device (2) at each of the 4 launches");
	orig = dumped(d0, "fatbin-0.bin", &olen);
	rw = dumped(d1, "fatbin-0.bin", &rlen);
	if (tap_ok(orig && rw, "multi_kernel: the fat binaries the runtime got were dumped"))
		check_bundle("multi_kernel", rw, rlen, orig, olen);
	if (!tap_ok(st == 0, "multi_kernel output"))
		tap_diag("%s", out ? out : "");
	free(orig);
	free(rw);
	free(out0);
	free(log0);
	free(out);
	free(log);
}

static void test_vector_add(const char *app, const char *tmp)
{
	char d0[600], d1[600], *out0 = NULL, *log0 = NULL, *out = NULL, *log = NULL;
	uint8_t *orig, *rw;
	size_t olen = 0, rlen = 0;
	int st0, st;

	snprintf(d0, sizeof(d0), "%s/va0", tmp);
	snprintf(d1, sizeof(d1), "%s/va1", tmp);
	if (mkdir(d0, 0700) || mkdir(d1, 0700))
		return;
	st0 = run(0, app, "1024", "3", d0, &out0, &log0);
	st = run(1, app, "1024", "3", d1, &out, &log);
	tap_ok(st0 == 0 && st == 0 && strstr(out ? out : "", "3 launches of 1024 elements done"),
	       "vector_add: runs to its end under gbpf run (%d)", st);
	tap_ok(count(log, "launch via=hipLaunchKernel name=_Z10vector_addPKfS0_Pfi grid=4,1,1 block=256,1,1") == 3,
	       "vector_add: the runtime saw its 3 launches");
	orig = dumped(d0, "fatbin-0.bin", &olen);
	rw = dumped(d1, "fatbin-0.bin", &rlen);
	tap_ok(orig && rw && olen == rlen && !memcmp(orig, rw, olen),
	       "vector_add: no kernel targeted: the fat binary registered byte for byte (%zu bytes)", rlen);
	tap_ok(count(out, ": instrumented in the ") == 0, "vector_add: nothing reported instrumented");
	free(orig);
	free(rw);
	free(out0);
	free(log0);
	free(out);
	free(log);
}

/* The rewriter fails (no llvm-mc): the original fat binary is registered, the failure reported, the app runs. */
static void test_failure(const char *app, const char *tmp)
{
	char d0[600], d1[600], *out0 = NULL, *log0 = NULL, *out = NULL, *log = NULL;
	uint8_t *orig, *rw;
	size_t olen = 0, rlen = 0;
	int st;

	snprintf(d0, sizeof(d0), "%s/fail0", tmp);
	snprintf(d1, sizeof(d1), "%s/fail1", tmp);
	if (mkdir(d0, 0700) || mkdir(d1, 0700))
		return;
	run(0, app, NULL, NULL, d0, &out0, &log0);
	extra_env = "GBPF_HIP_MC=/nonexistent/llvm-mc-19";
	st = run(1, app, NULL, NULL, d1, &out, &log);
	extra_env = NULL;
	tap_ok(st == 0 && strstr(out ? out : "", "multi_kernel: 4 launches done") &&
		       count(log, "launch via=hipLaunchKernel") == 4,
	       "rewriter failure: multi_kernel still runs its 4 launches (%d)", st);
	orig = dumped(d0, "fatbin-0.bin", &olen);
	rw = dumped(d1, "fatbin-0.bin", &rlen);
	tap_ok(orig && rw && olen == rlen && !memcmp(orig, rw, olen),
	       "rewriter failure: the original fat binary is registered byte for byte");
	tap_ok(count(out, "error: fat binary") >= 2 && count(out, "code object not rewritten") >= 2 &&
		       count(out, "the original runs") >= 2 && count(out, ": instrumented in the ") == 0,
	       "rewriter failure: reported for both code objects, nothing reported instrumented");
	free(orig);
	free(rw);
	free(out0);
	free(log0);
	free(out);
	free(log);
}

/*
 * Each of the @p n image kinds (the "where" of the agent's report, e.g.
 * "hipModuleLoadData image") has exactly one image reported with @p kernel
 * instrumented in its @p arch code object, and no report names another
 * kind. A report names the image's address, so distinct images give
 * distinct lines: a line that comes twice, byte for byte, is the same
 * report of the same image (delivered twice) and is counted once, while a
 * second image of one kind (an image rewritten twice, a load the agent
 * saw twice) still fails. What reached the runtime, and how often, is
 * checked separately from its own log.
 */
static int instrumented_once(const char *out, const char *kernel, const char *arch, const char *const *kinds,
			     size_t n)
{
	char prefix[160], seen[16][512];
	size_t n_seen = 0, per_kind[16] = {0};
	int ok = 1;

	if (!out || n > 16)
		return 0;
	snprintf(prefix, sizeof(prefix), "kernel %s: instrumented in the %s code object of ", kernel, arch);
	for (const char *l = out; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		const char *p = strstr(l, prefix), *eol = strchr(l, '\n');
		size_t len = eol ? (size_t)(eol - l) : strlen(l), i, k;

		if (!p || (eol && p > eol))
			continue;
		p += strlen(prefix);
		for (i = 0; i < n_seen; i++)
			if (strlen(seen[i]) == len && !strncmp(seen[i], l, len))
				break;
		if (i < n_seen)
			continue; /* the same line again */
		if (n_seen == 16 || len >= sizeof(seen[0]))
			return 0;
		snprintf(seen[n_seen++], sizeof(seen[0]), "%.*s", (int)len, l);
		/* the kind and then the address: "hipModuleLoad image" never matches "hipModuleLoadData image" */
		for (k = 0; k < n; k++)
			if (!strncmp(p, kinds[k], strlen(kinds[k])) && p[strlen(kinds[k])] == ' ')
				break;
		if (k == n)
			ok = 0; /* a kind the app never used */
		else
			per_kind[k]++;
	}
	for (size_t k = 0; k < n; k++)
		ok &= per_kind[k] == 1;
	return ok;
}

static const char *const module_app_images[] = {"hipModuleLoad image", "hipModuleLoadData image",
						 "hipModuleLoadDataEx image", "fat binary"};

static void test_module_app(const char *app, const char *co_path, const char *tmp)
{
	char d1[600], *out = NULL, *log = NULL, name[64];
	uint8_t *orig, *rw, *fb;
	size_t olen = 0, rlen = 0, flen = 0;
	int st;

	snprintf(d1, sizeof(d1), "%s/mod1", tmp);
	if (mkdir(d1, 0700))
		return;
	orig = (uint8_t *)read_file(co_path, &olen);
	st = run(1, app, co_path, "gfx942", d1, &out, &log);
	tap_ok(st == 0 && strstr(out ? out : "", "module_app: 6 launches done"),
	       "module_app (dlopens the runtime): runs to its end under gbpf run (%d)", st);
	if (st)
		tap_diag("%s", out ? out : "");
	/* hipModuleLoad of a file the agent rewrote reaches the runtime as hipModuleLoadData of the new image */
	tap_ok(count(log, "module_load via=") == 3 && count(log, "module_load via=hipModuleLoadData kind=elf") == 2 &&
		       count(log, "module_load via=hipModuleLoadDataEx kind=elf") == 1,
	       "module_app: hipModuleLoad (as hipModuleLoadData of the rewritten file), hipModuleLoadData and "
	       "hipModuleLoadDataEx reached the runtime");
	tap_ok(count(log, "launch via=hipModuleLaunchKernel name=vector_add") == 2 &&
		       count(log, "launch via=hipExtModuleLaunchKernel name=reduce_loop global=4096,1,1 local=256,1,1") == 1 &&
		       count(log, "launch via=hipLaunchKernel name=vector_add grid=8,1,1") == 1 &&
		       count(log, "launch via=hipLaunchCooperativeKernel name=reduce_loop grid=16,1,1") == 1 &&
		       count(log, "launch via=hipExtLaunchKernel name=vector_add grid=1,2,1") == 1,
	       "module_app: every launch variant reached the runtime");
	if (!tap_ok(instrumented_once(out, "reduce_loop", "gfx942", module_app_images, 4) &&
			    count(out, "kernel vector_add: instrumented") == 0,
		    "module_app: reduce_loop reported instrumented in each of the 4 images (one image each), "
		    "vector_add never"))
		tap_diag("%s", out ? out : "");
	tap_ok(count(out, "kernel reduce_loop: launched through hipExtModuleLaunchKernel (grid 16,1,1 block 256,1,1) "
			  "with its instrumented code objects (gfx942") == 1,
	       "module_app: the instrumented launch through hipExtModuleLaunchKernel is reported (global size 4096 = "
	       "16 blocks of 256)");
	for (int i = 0; i < 3 && orig; i++) {
		char what[64];

		snprintf(name, sizeof(name), "module-%d.bin", i);
		snprintf(what, sizeof(what), "module_app: module %d", i);
		rw = dumped(d1, name, &rlen);
		if (tap_ok(rw != NULL, "%s dumped", what))
			rewritten_ok(what, rw, rlen, orig, olen);
		free(rw);
	}
	fb = dumped(d1, "fatbin-0.bin", &flen);
	if (tap_ok(fb != NULL, "module_app: fat binary dumped")) {
		struct co_bundle *b = calloc(1, sizeof(*b));
		char err[256] = "";

		if (tap_ok(b && !co_bundle_parse(fb, flen, b, err, sizeof(err)) && b->n == 2,
			   "module_app: registered bundle parses (2 entries) %s", err))
			rewritten_ok("module_app: fat binary gfx942 entry", b->e[1].data, b->e[1].size, orig, olen);
		if (b)
			co_bundle_free(b);
		free(b);
	}
	free(fb);
	free(orig);
	free(out);
	free(log);
}

int main(int argc, char **argv)
{
	char *tmp;

	if (argc < 8) {
		tap_skip("hipcc test apps or the fake runtime not built");
		return tap_done();
	}
	snprintf(gbpf, sizeof(gbpf), "%s/tools/gbpf", argv[1]);
	snprintf(plugin, sizeof(plugin), "%s/plugins/hip/libgbpf-hip.so", argv[1]);
	fake_rt = argv[3];
	probe = argv[4];
	if (access(gbpf, X_OK) || access(plugin, R_OK)) {
		tap_skip("%s build %s has no gbpf or hip plugin (a sanitizer build runs this test on the non-sanitized "
			 "<build>-gcc that scripts/test.sh makes)",
			 argv[2], argv[1]);
		return tap_done();
	}
	tmp = tmp_dir("hip-run");
	if (!tap_ok(tmp != NULL, "temporary directory"))
		return tap_done();
	test_multi_kernel(argv[6], tmp);
	test_vector_add(argv[5], tmp);
	test_failure(argv[6], tmp);
	if (argc > 8)
		test_module_app(argv[7], argv[8], tmp);
	else
		tap_skip("clang-19 gfx942 code object not built: module_app not run");
	rm_tree(tmp);
	free(tmp);
	return tap_done();
}
