/* SPDX-License-Identifier: MIT */
/*
 * tests/cuda_agent/test_attach.c - the cuda plugin's agent_attach in
 * process, on the fake driver of this folder (no GPU, no preload): the
 * plugin is dlopen'ed as `gbpf` does, and the application's driver calls
 * go through the plugin's exported interposers (what a program linked
 * with -lcuda reaches when `gbpf run` preloads the plugin).
 * Args: plugin path. GBPF_FAKE_CUDA_LOG must name a writable file.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gbpf/insn.h>
#include <gbpf/plugin.h>
#include <gbpf/probe_ctx.h>

#include "tap.h"

typedef int (*load_fn)(void **, const void *);
typedef int (*getf_fn)(void **, void *, const char *);
typedef int (*launch_fn)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
			 void *, void **, void **);
typedef int (*init_fn)(unsigned);
typedef int (*graph_launch_fn)(void *, void *);

static const char module_ptx[] =
	".version 7.8\n.target sm_90\n.address_size 64\n\n"
	".visible .entry target_k(\n\t.param .u64 target_k_param_0\n)\n{\n\tret;\n}\n\n"
	".visible .entry other_k(\n\t.param .u64 other_k_param_0\n)\n{\n\tret;\n}\n";

static char reports[8192];
static int host_runs;
static uint64_t last_host_id, ids;
static char log_path[] = "/tmp/gbpf-cuda-attach-XXXXXX";

static void svc_report(void *ctx, enum gbpf_agent_event ev, const char *kernel, const char *msg)
{
	size_t n = strlen(reports);

	(void)ctx;
	snprintf(reports + n, sizeof(reports) - n, "%d|%s|%s\n", (int)ev, kernel ? kernel : "-", msg);
}

static int svc_run(void *ctx, size_t idx, void *pctx, size_t size, uint64_t *r0)
{
	const struct gbpf_host_launch_ctx *c = pctx;

	(void)ctx;
	(void)r0;
	if (idx == 1 && size == sizeof(*c)) {
		host_runs++;
		last_host_id = c->launch_id;
	}
	return 0;
}

static uint64_t svc_next(void *ctx)
{
	(void)ctx;
	return ++ids;
}

static const struct gbpf_prog_desc *the_progs;

static int svc_selected(void *ctx, size_t idx, const char *name)
{
	const char *t = the_progs[idx].attach.target;

	(void)ctx;
	return !t || !strcmp(t, name);
}

static int count(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

static void read_log(char *buf, size_t size)
{
	FILE *f = fopen(log_path, "r");
	size_t n = f ? fread(buf, 1, size - 1, f) : 0;

	buf[n] = 0;
	if (f)
		fclose(f);
}

int main(int argc, char **argv)
{
	/* Reads ctx->launch_id (so the agent sets it per launch), returns 0. */
	static const struct gbpf_insn insns[] = {
		{.code = GBPF_LDX | GBPF_MEM | GBPF_DW, .dst = 2, .src = 1, .off = 16},
		{.code = GBPF_ALU64 | GBPF_MOV | GBPF_K, .dst = 0, .imm = 0},
		{.code = GBPF_JMP | GBPF_EXIT},
	};
	static const struct gbpf_map_desc mdesc = {.sz = sizeof(mdesc), .name = "counts", .type = 2,
						   .key_size = 4, .value_size = 8, .max_entries = 4};
	struct gbpf_prog_desc progs[2] = {
		{.sz = sizeof(progs[0]), .name = "on_exit", .section = "gpu/exit/target_k", .insns = insns,
		 .insn_cnt = 3, .maps = &mdesc, .map_cnt = 1,
		 .attach = {.kind = GBPF_ATTACH_GPU_EXIT, .target = "target_k"}, .source_file = "test"},
		{.sz = sizeof(progs[1]), .name = "on_launch", .section = "host/launch", .insns = insns,
		 .insn_cnt = 3, .maps = &mdesc, .map_cnt = 1,
		 .attach = {.kind = GBPF_ATTACH_HOST_LAUNCH}, .source_file = "test"},
	};
	struct gbpf_agent_services svc = {.sz = sizeof(svc), .report = svc_report, .run_host_prog = svc_run,
					  .next_launch_id = svc_next, .kernel_selected = svc_selected};
	struct gbpf_map_instance mi = {.desc = &mdesc};
	struct gbpf_agent_attach_opts ao = {.sz = sizeof(ao), .progs = progs, .prog_cnt = 2, .maps = &mi,
					    .map_cnt = 1, .services = &svc};
	struct gbpf_backend_ops ops = {.sz = sizeof(ops)};
	struct gbpf_backend_caps caps = {.sz = sizeof(caps)};
	gbpf_plugin_get_backend_table_fn entry;
	char log[512] = "", flog[16384];
	void *h, *mod, *tk, *ok_fn, *params[1];
	uint64_t arg = 0;
	int fd, rc;

	if (argc < 2) {
		tap_skip("usage: test_cuda_attach PLUGIN");
		return tap_done();
	}
	fd = mkstemp(log_path);
	if (fd < 0) {
		tap_ok(0, "mkstemp");
		return tap_done();
	}
	close(fd);
	setenv("GBPF_FAKE_CUDA_LOG", log_path, 1);
	the_progs = progs;
	mi.mem_size = 4096;
	mi.mem = aligned_alloc(4096, 4096);
	h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	entry = h ? (gbpf_plugin_get_backend_table_fn)dlsym(h, GBPF_PLUGIN_ENTRY_SYMBOL) : NULL;
	tap_ok(entry && !entry(GBPF_PLUGIN_ABI_VERSION, &ops, &caps), "plugin loads as a normal dlopen'ed plugin");
	if (!entry || !ops.agent_attach) {
		tap_ok(0, "agent_attach present");
		free(mi.mem);
		return tap_done();
	}
	tap_ok((caps.flags & GBPF_CAP_INTERCEPT) && ops.agent_detach, "GBPF_CAP_INTERCEPT with attach and detach");
	rc = ops.agent_attach(NULL, &ao, log, sizeof(log));
	tap_ok(rc == 0, "agent_attach succeeds (%d %s)", rc, log);
	tap_ok(ops.agent_attach(NULL, &ao, log, sizeof(log)) == -EBUSY, "second attach refused");

	/* The application's runtime loads the driver after the (preloaded) plugin. */
	void *cu = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);

	tap_ok(cu != NULL, "fake driver loaded");
	/* The application, through the interposers `gbpf run` would preload. */
	init_fn init = cu ? (init_fn)dlsym(cu, "cuInit") : NULL; /* not interposed */
	load_fn load = (load_fn)dlsym(h, "cuModuleLoadData");
	getf_fn getf = (getf_fn)dlsym(h, "cuModuleGetFunction");
	launch_fn launch = (launch_fn)dlsym(h, "cuLaunchKernel");

	if (!init || !load || !getf || !launch || init(0) || load(&mod, module_ptx) ||
	    getf(&tk, mod, "target_k") || getf(&ok_fn, mod, "other_k")) {
		tap_ok(0, "driver interposers exported and working");
		free(mi.mem);
		return tap_done();
	}
	params[0] = &arg;
	for (int i = 0; i < 3; i++)
		launch(tk, 4, 1, 1, 32, 1, 1, 0, NULL, params, NULL);
	launch(ok_fn, 2, 1, 1, 64, 1, 1, 0, NULL, params, NULL);
	read_log(flog, sizeof(flog));
	tap_ok(count(flog, "load instrumented=1") == 1, "target_k's image instrumented and JIT'ed once");
	tap_ok(count(flog, "launch target_k instrumented=1") == 3, "its 3 launches replaced");
	tap_ok(count(flog, "launch other_k instrumented=0") == 1, "other_k untouched");
	/* the map region once (PORTABLE|DEVICEMAP); the snapshot buffer, if any, is registered apart (flags=1) */
	tap_ok(count(flog, "maps0=set") == 3 && count(flog, "hostregister") - count(flog, "flags=1") == 1 &&
		       count(flog, "flags=3") == 1,
	       "maps registered and set");
	tap_ok(strstr(flog, "launch_id=3 ") && host_runs == 4 && last_host_id == 4,
	       "host/launch ran per launch with the launch id the GPU sees (%d runs, last %llu)", host_runs,
	       (unsigned long long)last_host_id);
	tap_ok(strstr(reports, "0|target_k|instrumented (") != NULL, "info report for target_k");

	/*
	 * A launch into a stream capturing a graph (the fake's stream 0x77) is a
	 * graph node: no host/launch run, no id set then; each cuGraphLaunch
	 * gives the kernel a fresh id, set before the graph on its stream.
	 */
	graph_launch_fn graph_launch = (graph_launch_fn)dlsym(h, "cuGraphLaunch");

	launch(tk, 4, 1, 1, 32, 1, 1, 0, (void *)0x77, params, NULL);
	tap_ok(host_runs == 4 && ids == 4, "captured launch: no host/launch run, no id taken (%d runs, %llu ids)",
	       host_runs, (unsigned long long)ids);
	for (int i = 0; graph_launch && i < 2; i++)
		graph_launch((void *)1, (void *)0x77);
	read_log(flog, sizeof(flog));
	tap_ok(graph_launch && count(flog, "launch target_k instrumented=1") == 4 &&
		       strstr(flog, "graphlaunch launch_id=5\n") && strstr(flog, "graphlaunch launch_id=6\n") &&
		       ids == 6 && host_runs == 4,
	       "each graph launch: a fresh launch id (5, 6) for the kernel its node runs");

	/* Detach: launches go back to the original. */
	ops.agent_detach(NULL);
	launch(tk, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL);
	read_log(flog, sizeof(flog));
	tap_ok(count(flog, "launch target_k instrumented=0") == 1, "after detach the original launches");

	/* Attach again; a failing JIT of a new module: reported, original launched. */
	setenv("GBPF_FAKE_JIT_FAIL", "1", 1);
	reports[0] = 0;
	rc = ops.agent_attach(NULL, &ao, log, sizeof(log));
	if (!rc && !load(&mod, module_ptx) && !getf(&tk, mod, "target_k")) {
		launch(tk, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL);
		launch(tk, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL);
	}
	read_log(flog, sizeof(flog));
	/* one load before (the first attach's), two at the first launch: with the constant-bank map table, without */
	tap_ok(!rc && count(flog, "launch target_k instrumented=0") == 3 && count(flog, "load instrumented=1") == 3,
	       "failing JIT: original launches, JIT not retried at every launch (%d loads)",
	       count(flog, "load instrumented=1"));
	tap_ok(strstr(reports, "1|target_k|JIT of the instrumented PTX") != NULL,
	       "failing JIT reported as not instrumented");
	ops.agent_detach(NULL);
	if (tap_failed)
		tap_diag("reports: %s", reports);
	unlink(log_path);
	free(mi.mem);
	return tap_done();
}
