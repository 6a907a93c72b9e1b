/* SPDX-License-Identifier: MIT */
/*
 * tests/opencl/test_opencl_device.c - gbpf_gpu_ctx.device and
 * gbpf_host_launch_ctx.device on the opencl backend, in process, on PoCL
 * with two devices (meson runs it with POCL_DEVICES="pthread pthread").
 *
 * One vadd program is built for both devices of one context (so one
 * instrumented program serves both) and launched on a queue of device 1,
 * then of device 0, then of 1 again. After each launch the exit probe's
 * map slot must hold 100 + the queue's device number and the host/launch
 * context the agent handed to its service must carry the same number; no
 * work-item may see a non-zero device_pad. A module that baked a constant
 * device, or an agent that passed 0, fails the launches on device 1.
 *
 * Args: plugin, devprobe.bpf.o
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

#define N 256

static const char *kernel_src =
	"__kernel void vadd(__global const int *a, __global const int *b, __global int *c, uint n)\n"
	"{ size_t i = get_global_id(0); if (i < n) c[i] = a[i] + b[i]; }\n";

static struct {
	pthread_mutex_t lock;
	char reports[16384];
	uint64_t launch_id;
	int host_runs;
	uint32_t host_device; /* device of the last host/launch context */
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
	if (idx < seen.prog_cnt && size == sizeof(*c)) {
		seen.host_runs++;
		seen.host_device = c->device;
	}
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

static struct ocl_interposers icl;

static uint64_t slot(const struct gbpf_map_instance *m, unsigned i)
{
	const struct gbpf_map_hdr *h = m->mem;

	return ((const uint64_t *)(const void *)((const char *)m->mem + h->data_off))[i];
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
	struct gbpf_prog_desc progs[4];
	struct gbpf_map_instance maps[4];
	struct gbpf_backend *be = NULL;
	struct gbpf_object *obj;
	gbpf_plugin_get_backend_table_fn entry;
	cl_platform_id plat;
	cl_device_id devs[2];
	cl_command_queue q[2];
	cl_context cx;
	cl_uint np = 0, nd = 0;
	cl_program p;
	cl_kernel k;
	cl_mem da, db, dc;
	cl_int err;
	int a[N], b[N], c[N];
	cl_uint n = N;
	size_t global = N, len = strlen(kernel_src), nprog, nmap, i;
	char log[1024] = "";
	void *h;

	if (argc < 3) {
		fprintf(stderr, "usage: %s PLUGIN DEVPROBE_OBJ\n", argv[0]);
		return 2;
	}
	/* the agent numbers devices over every platform: the test wants PoCL's two as the first two */
	if (clGetPlatformIDs(1, &plat, &np) != CL_SUCCESS || !np ||
	    clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 2, devs, &nd) != CL_SUCCESS || nd < 2) {
		tap_skip("no OpenCL platform with two devices (PoCL with POCL_DEVICES=\"pthread pthread\")");
		return tap_done();
	}
	h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	entry = h ? (gbpf_plugin_get_backend_table_fn)dlsym(h, GBPF_PLUGIN_ENTRY_SYMBOL) : NULL;
	if (!tap_ok(entry && entry(GBPF_PLUGIN_ABI_VERSION, &ops, &caps) == 0 && ops.agent_attach,
		    "plugin %s loads, has agent_attach", argv[1]))
		return tap_done();
	if (!tap_ok(ocl_interposers_load(h, &icl), "the plugin exports the OpenCL interposers"))
		return tap_done();
	obj = gbpf_object__open_file(argv[2], NULL);
	nprog = obj ? gbpf_object__prog_cnt(obj) : 0;
	nmap = obj ? gbpf_object__map_cnt(obj) : 0;
	if (!tap_ok(obj && nprog == 2 && nmap == 1, "%s opens (2 programs, 1 map)", argv[2]))
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
	cx = clCreateContext(NULL, 2, devs, NULL, NULL, &err);
	q[0] = cx ? clCreateCommandQueue(cx, devs[0], 0, NULL) : NULL;
	q[1] = cx ? clCreateCommandQueue(cx, devs[1], 0, NULL) : NULL;
	for (i = 0; i < N; i++) {
		a[i] = (int)i;
		b[i] = 2 * (int)i;
	}
	p = cx ? icl.CreateProgramWithSource(cx, 1, &kernel_src, &len, &err) : NULL;
	if (!tap_ok(q[0] && q[1] && p && icl.BuildProgram(p, 2, devs, "", NULL, NULL) == CL_SUCCESS,
		    "context, two queues and a program built for both devices"))
		return tap_done();
	k = icl.CreateKernel(p, "vadd", &err);
	da = clCreateBuffer(cx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof(a), a, &err);
	db = clCreateBuffer(cx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof(b), b, &err);
	dc = clCreateBuffer(cx, CL_MEM_WRITE_ONLY, sizeof(c), NULL, &err);
	if (!tap_ok(k && da && db && dc, "kernel and buffers"))
		return tap_done();
	icl.SetKernelArg(k, 0, sizeof(da), &da);
	icl.SetKernelArg(k, 1, sizeof(db), &db);
	icl.SetKernelArg(k, 2, sizeof(dc), &dc);
	icl.SetKernelArg(k, 3, sizeof(n), &n);
	{
		static const unsigned order[] = {1, 0, 1};

		for (unsigned r = 0; r < 3; r++) {
			unsigned d = order[r];
			int bad = 0;

			memset(c, 0, sizeof(c));
			err = icl.EnqueueNDRangeKernel(q[d], k, 1, NULL, &global, NULL, 0, NULL, NULL);
			if (err == CL_SUCCESS)
				err = clEnqueueReadBuffer(q[d], dc, CL_TRUE, 0, sizeof(c), c, 0, NULL, NULL);
			for (i = 0; i < N; i++)
				bad += c[i] != 3 * (int)i;
			tap_ok(err == CL_SUCCESS && bad == 0, "launch %u on device %u: result right (%d wrong)", r, d,
			       bad);
			tap_ok(slot(&maps[0], 0) == 100 + d, "launch %u: the exit probe read ctx->device %u (slot %llu)",
			       r, d, (unsigned long long)slot(&maps[0], 0));
			tap_ok(seen.host_runs == (int)r + 1 && seen.host_device == d,
			       "launch %u: host/launch ctx->device %u (got %u, %d runs)", r, d, seen.host_device,
			       seen.host_runs);
		}
	}
	tap_ok(slot(&maps[0], 2) == 0, "no work-item saw a non-zero device_pad (%llu)",
	       (unsigned long long)slot(&maps[0], 2));
	tap_ok(strstr(seen.reports, "info: kernel vadd: instrumented (entry 0, exit 1") != NULL,
	       "vadd reported instrumented at its exit");
	if (tap_failed)
		tap_diag("reports:\n%s", seen.reports);
	ops.agent_detach(be);
	clReleaseMemObject(da);
	clReleaseMemObject(db);
	clReleaseMemObject(dc);
	icl.ReleaseKernel(k);
	icl.ReleaseProgram(p);
	clReleaseCommandQueue(q[0]);
	clReleaseCommandQueue(q[1]);
	clReleaseContext(cx);
	ops.close(be);
	for (i = 0; i < nmap; i++)
		gbpf_map_instance_destroy(&maps[i]);
	gbpf_object__close(obj);
	return tap_done();
}
