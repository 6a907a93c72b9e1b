/* SPDX-License-Identifier: MIT */
/*
 * tests/opencl/test_opencl_attach.c - the opencl plugin's agent side in
 * process (runs in sanitizer builds too, where `gbpf run` on PoCL cannot):
 * the plugin is dlopen'ed, attached with test services, and a vector add is
 * driven through its interposers (taken with dlsym from the plugin), on
 * PoCL. Checks: the kernel is compiled, injected, built and launched
 * instrumented; the app's result is right; the exit probe counted every
 * work-item in the per-work-item array; a forced failure runs the original
 * kernel with a report; one launch id per instrumented launch; detach.
 *
 * Args: plugin, threadhist.bpf.o
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define CL_TARGET_OPENCL_VERSION 210
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>

#include <gbpf/object.h>
#include <gbpf/plugin.h>
#include <gbpf/probe_ctx.h>

#include "maps/map.h"
#include "maps/map_layout.h"
#include "ocl_interposers.h"
#include "tap.h"

#define N 2048

static const char *kernel_src =
	"__kernel void vadd(__global const int *a, __global const int *b, __global int *c, uint n)\n"
	"{ size_t i = get_global_id(0); if (i < n) c[i] = a[i] + b[i]; }\n";

/* What the test services saw. */
static struct {
	pthread_mutex_t lock;
	char reports[16384];
	uint64_t launch_id;
	int host_runs;
	uint64_t host_launch_ids[16];
	const struct gbpf_prog_desc *progs;
	size_t prog_cnt;
} seen = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void svc_report(void *ctx, enum gbpf_agent_event ev, const char *kernel, const char *msg)
{
	static const char *const kinds[] = {"info", "not instrumented", "error"};
	size_t len;

	(void)ctx;
	pthread_mutex_lock(&seen.lock);
	len = strlen(seen.reports);
	snprintf(seen.reports + len, sizeof(seen.reports) - len, "%s: kernel %s: %s\n", kinds[ev % 3],
		 kernel ? kernel : "-", msg);
	pthread_mutex_unlock(&seen.lock);
}

static int svc_run_host_prog(void *ctx, size_t idx, void *probe_ctx, size_t size, uint64_t *r0)
{
	const struct gbpf_host_launch_ctx *c = probe_ctx;

	(void)ctx;
	(void)r0;
	if (idx < seen.prog_cnt && size == sizeof(*c) && seen.host_runs < 16)
		seen.host_launch_ids[seen.host_runs++] = c->launch_id;
	return 0;
}

static uint64_t svc_next_launch_id(void *ctx)
{
	(void)ctx;
	return ++seen.launch_id;
}

static int svc_kernel_selected(void *ctx, size_t idx, const char *name)
{
	(void)ctx;
	return idx < seen.prog_cnt && gbpf_prog_targets_kernel(&seen.progs[idx], name);
}

/* The interposers of the plugin. */
static struct ocl_interposers icl;

struct env {
	cl_context ctx;
	cl_device_id dev;
	cl_command_queue q;
};

/* One vector add through the interposers; returns the number of wrong elements (-1: OpenCL failure). */
static int vadd(struct env *e, size_t local)
{
	int a[N], b[N], c[N], bad = 0;
	cl_uint n = N;
	size_t global = N, len = strlen(kernel_src);
	cl_mem da, db, dc;
	cl_program p;
	cl_kernel k;
	cl_int err;

	for (int i = 0; i < N; i++) {
		a[i] = i;
		b[i] = 3 * i;
	}
	p = icl.CreateProgramWithSource(e->ctx, 1, &kernel_src, &len, &err);
	if (!p || icl.BuildProgram(p, 1, &e->dev, "", NULL, NULL) != CL_SUCCESS)
		return -1;
	k = icl.CreateKernel(p, "vadd", &err);
	da = clCreateBuffer(e->ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof(a), a, &err);
	db = clCreateBuffer(e->ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof(b), b, &err);
	dc = clCreateBuffer(e->ctx, CL_MEM_WRITE_ONLY, sizeof(c), NULL, &err);
	if (!k || !da || !db || !dc)
		return -1;
	/* argument 3 first: the recorded arguments are replayed by index */
	icl.SetKernelArg(k, 3, sizeof(n), &n);
	icl.SetKernelArg(k, 0, sizeof(da), &da);
	icl.SetKernelArg(k, 1, sizeof(db), &db);
	icl.SetKernelArg(k, 2, sizeof(dc), &dc);
	if (icl.EnqueueNDRangeKernel(e->q, k, 1, NULL, &global, local ? &local : NULL, 0, NULL, NULL) != CL_SUCCESS ||
	    clEnqueueReadBuffer(e->q, dc, CL_TRUE, 0, sizeof(c), c, 0, NULL, NULL) != CL_SUCCESS)
		return -1;
	for (int i = 0; i < N; i++)
		bad += c[i] != 4 * i;
	clReleaseMemObject(da);
	clReleaseMemObject(db);
	clReleaseMemObject(dc);
	icl.ReleaseKernel(k);
	icl.ReleaseProgram(p);
	return bad;
}

static uint64_t slot0(const struct gbpf_map_instance *m)
{
	const struct gbpf_map_hdr *h = m->mem;

	return *(const uint64_t *)(const void *)((const char *)m->mem + h->data_off);
}

int main(int argc, char **argv)
{
	struct gbpf_backend_ops ops = {.sz = sizeof(ops)};
	struct gbpf_backend_caps caps = {.sz = sizeof(caps)};
	struct gbpf_agent_services svc = {
		.sz = sizeof(svc),
		.report = svc_report,
		.run_host_prog = svc_run_host_prog,
		.next_launch_id = svc_next_launch_id,
		.kernel_selected = svc_kernel_selected,
	};
	struct gbpf_prog_desc progs[8];
	struct gbpf_map_instance maps[8];
	struct gbpf_backend *be = NULL;
	struct gbpf_object *obj;
	gbpf_plugin_get_backend_table_fn entry;
	cl_platform_id plat;
	cl_uint np = 0;
	struct env e;
	char log[1024] = "";
	size_t nprog, nmap, i;
	void *h;
	int bad;

	if (argc < 3) {
		fprintf(stderr, "usage: %s PLUGIN THREADHIST_OBJ\n", argv[0]);
		return 2;
	}
	if (clGetPlatformIDs(1, &plat, &np) != CL_SUCCESS || !np ||
	    clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &e.dev, NULL) != CL_SUCCESS) {
		tap_skip("no OpenCL platform or device (install pocl-opencl-icd)");
		return tap_done();
	}
	h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	entry = h ? (gbpf_plugin_get_backend_table_fn)dlsym(h, GBPF_PLUGIN_ENTRY_SYMBOL) : NULL;
	if (!tap_ok(entry && entry(GBPF_PLUGIN_ABI_VERSION, &ops, &caps) == 0 && ops.agent_attach,
		    "plugin %s loads, has agent_attach", argv[1]))
		return tap_done();
	tap_ok(ocl_interposers_load(h, &icl), "the plugin exports the OpenCL interposers");
	obj = gbpf_object__open_file(argv[2], NULL);
	nprog = obj ? gbpf_object__prog_cnt(obj) : 0;
	nmap = obj ? gbpf_object__map_cnt(obj) : 0;
	if (!tap_ok(obj && nprog && nprog <= 8 && nmap <= 8, "%s opens", argv[2]))
		return tap_done();
	for (i = 0; i < nprog; i++)
		progs[i] = *gbpf_object__prog(obj, i);
	for (i = 0; i < nmap; i++)
		if (gbpf_map_instance_create(&maps[i], gbpf_object__map(obj, i), 1))
			return tap_done();
	seen.progs = progs;
	seen.prog_cnt = nprog;
	ops.open(&(struct gbpf_backend_open_opts){.sz = sizeof(struct gbpf_backend_open_opts), .device_index = -1},
		 &be);
	{
		struct gbpf_agent_attach_opts ao = {.sz = sizeof(ao), .progs = progs, .prog_cnt = nprog,
						    .maps = maps, .map_cnt = nmap, .services = &svc};

		tap_ok(ops.agent_attach(be, &ao, log, sizeof(log)) == 0, "agent_attach: %s", log[0] ? log : "ok");
	}
	e.ctx = clCreateContext(NULL, 1, &e.dev, NULL, NULL, NULL);
	e.q = clCreateCommandQueue(e.ctx, e.dev, 0, NULL);

	bad = vadd(&e, 0);
	tap_ok(bad == 0, "instrumented vadd: result right (%d wrong)", bad);
	tap_ok(strstr(seen.reports, "info: kernel vadd: instrumented (entry 0, exit 1") != NULL,
	       "vadd reported instrumented at its exit");
	tap_ok(slot0(&maps[0]) == N, "thread_exits == %d work-items (got %llu)", N,
	       (unsigned long long)slot0(&maps[0]));
	bad = vadd(&e, 64);
	tap_ok(bad == 0 && slot0(&maps[0]) == 2 * N, "second program, work-groups of 64: right, exits %llu == %d",
	       (unsigned long long)slot0(&maps[0]), 2 * N);
	tap_ok(seen.launch_id == 2, "one launch id per instrumented launch (%llu)",
	       (unsigned long long)seen.launch_id);

	setenv("GBPF_OPENCL_FAULT", "inject", 1);
	bad = vadd(&e, 0);
	unsetenv("GBPF_OPENCL_FAULT");
	tap_ok(bad == 0, "forced injection failure: the original kernel ran, result right");
	tap_ok(strstr(seen.reports, "not instrumented: kernel vadd: injection failed: forced") != NULL,
	       "forced injection failure reported as not instrumented");
	tap_ok(slot0(&maps[0]) == 2 * N, "forced injection failure: no probe ran");
	if (tap_failed)
		tap_diag("reports:\n%s", seen.reports);

	ops.agent_detach(be);
	bad = vadd(&e, 0);
	tap_ok(bad == 0 && slot0(&maps[0]) == 2 * N, "after detach: uninstrumented, right");

	/* The same programs as basic-block probes: refused by name, app untouched. */
	for (i = 0; i < nprog; i++)
		if (gbpf_attach_is_device(progs[i].attach.kind)) {
			progs[i].attach.kind = GBPF_ATTACH_GPU_BLOCK;
			progs[i].section = "gpu/block/vadd";
		}
	{
		struct gbpf_agent_attach_opts ao = {.sz = sizeof(ao), .progs = progs, .prog_cnt = nprog,
						    .maps = maps, .map_cnt = nmap, .services = &svc};

		tap_ok(ops.agent_attach(be, &ao, log, sizeof(log)) == 0, "agent_attach of gpu/block programs: %s",
		       log[0] ? log : "ok");
	}
	bad = vadd(&e, 0);
	tap_ok(bad == 0 && slot0(&maps[0]) == 2 * N, "gpu/block programs: vadd right, nothing counted (%llu)",
	       (unsigned long long)slot0(&maps[0]));
	tap_ok(strstr(seen.reports, "(section gpu/block/vadd) not attached: basic-block probes are not inserted "
				    "into SPIR-V modules") != NULL,
	       "a gpu/block program is reported as not attached, with the reason");
	if (tap_failed)
		tap_diag("reports:\n%s", seen.reports);
	ops.agent_detach(be);
	clReleaseCommandQueue(e.q);
	clReleaseContext(e.ctx);
	ops.close(be);
	for (i = 0; i < nmap; i++)
		gbpf_map_instance_destroy(&maps[i]);
	gbpf_object__close(obj);
	return tap_done();
}
