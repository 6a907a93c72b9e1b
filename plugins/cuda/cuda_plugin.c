/* SPDX-License-Identifier: MIT */
/*
 * The cuda backend plugin: runs eBPF programs directly as GPU kernels
 * (codegen form "run kernel", JIT by the driver) and emits PTX as text.
 * The driver is dlopen'ed, so the plugin loads on machines without CUDA
 * and reports why it is unusable there.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gbpf/gbpf.h>
#include <gbpf/helper_ids.h>
#include <gbpf/plugin.h>

#include "cuda_agent.h"
#include "cuda_const_maps.h"
#include "cuda_driver.h"
#include "cuda_printq_host.h"
#include "cuda_inject_op.h"
#include "ptx_codegen.h"
#include "plugins/cuda/sanitizer/san_engine.h"
#include "plugins/cuda/sanitizer/san_process.h"

/** Bytes of device memory one run may use for per-thread data copies. */
#define CUDA_RUN_DATA_MAX ((uint64_t)32 << 30)
/** Host staging buffer for replicating per-thread data. */
#define CUDA_STAGE_MAX ((size_t)64 << 20)

struct gbpf_backend {
	struct cuda_driver drv;
	CUdevice dev;
	int device_index; /* the device open() was asked for */
	CUcontext ctx;    /* its primary context; NULL until cuda_backend_start */
	char arch[16];
	const struct gbpf_host_services *svc;
};

struct gbpf_backend_prog {
	struct gbpf_backend *be;
	CUmodule mod;
	CUfunction fn;
	struct gbpf_map_instance *maps;
	size_t map_cnt;
	CUdeviceptr *dmaps;
	struct gbpf_printq *printq; /* trace_printk / puts queues, when the program uses them */
};

static void cuda_log(char *log, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void cuda_log(char *log, size_t size, const char *fmt, ...)
{
	va_list ap;

	if (!log || !size)
		return;
	va_start(ap, fmt);
	vsnprintf(log, size, fmt, ap);
	va_end(ap);
}

static int cuda_query_devices(struct gbpf_device_info *devs, uint32_t *count, char *why, size_t why_size)
{
	struct cuda_driver drv;
	int n = 0, i, rc;

	rc = cuda_driver_open(&drv, why, why_size);
	if (rc)
		return rc;
	drv.cuDeviceGetCount(&n);
	for (i = 0; devs && i < n && (uint32_t)i < *count; i++) {
		struct gbpf_device_info *d = &devs[i];
		CUdevice dev;
		size_t mem = 0;
		int maj = 0, min = 0, sms = 0, warp = 0;

		memset(d, 0, sizeof(*d));
		d->sz = sizeof(*d);
		if (drv.cuDeviceGet(&dev, i) != CUDA_SUCCESS)
			continue;
		drv.cuDeviceGetName(d->name, sizeof(d->name), dev);
		drv.cuDeviceGetAttribute(&maj, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
		drv.cuDeviceGetAttribute(&min, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
		drv.cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
		drv.cuDeviceGetAttribute(&warp, CU_DEVICE_ATTRIBUTE_WARP_SIZE, dev);
		drv.cuDeviceTotalMem(&mem, dev);
		snprintf(d->arch, sizeof(d->arch), "sm_%d%d", maj, min);
		d->memory_bytes = mem;
		d->compute_units = (uint32_t)sms;
		d->warp_size = (uint32_t)warp;
	}
	*count = (uint32_t)n;
	cuda_driver_close(&drv);
	return 0;
}

/*
 * cuInit, the device's primary context and the code generator's target.
 * Done at open, or, for a backend the agent opened inside an application
 * (GBPF_BACKEND_OPEN_AGENT), only when something of ours needs the device
 * itself (prog_load): the agent's instrumentation runs in the application's
 * own contexts. 0, or -ENODEV with the reason in @p why.
 */
static int cuda_backend_start(struct gbpf_backend *be, char *why, size_t why_size)
{
	int maj = 0, min = 0, sm, rc;

	if (be->ctx)
		return 0;
	if (!be->drv.handle) {
		rc = cuda_driver_load(&be->drv, why, why_size);
		if (rc)
			return rc;
	}
	rc = cuda_driver_init(&be->drv, why, why_size);
	if (rc)
		return rc;
	if (be->drv.cuDeviceGet(&be->dev, be->device_index) != CUDA_SUCCESS ||
	    be->drv.cuDevicePrimaryCtxRetain(&be->ctx, be->dev) != CUDA_SUCCESS) {
		snprintf(why, why_size, "cuda: device %d: no primary context", be->device_index);
		be->ctx = NULL;
		return -ENODEV;
	}
	be->drv.cuCtxSetCurrent(be->ctx);
	be->drv.cuDeviceGetAttribute(&maj, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, be->dev);
	be->drv.cuDeviceGetAttribute(&min, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, be->dev);
	/* The generator targets sm_70..sm_90; newer GPUs JIT sm_90 PTX forward. */
	sm = maj * 10 + min;
	if (sm > 90)
		sm = 90;
	if (sm < 70)
		sm = 70;
	snprintf(be->arch, sizeof(be->arch), "sm_%d", sm);
	return 0;
}

static int cuda_open(const struct gbpf_backend_open_opts *opts, struct gbpf_backend **out)
{
	struct gbpf_backend *be = calloc(1, sizeof(*be));
	char why[256];
	int idx = opts && opts->sz >= offsetof(struct gbpf_backend_open_opts, device_index) + sizeof(int)
			  ? opts->device_index : -1;
	unsigned int flags = opts && opts->sz >= offsetof(struct gbpf_backend_open_opts, flags) + sizeof(opts->flags)
				     ? opts->flags : 0;
	int rc;

	if (!be)
		return -ENOMEM;
	be->svc = opts ? opts->services : NULL;
	be->device_index = idx < 0 ? 0 : idx;
	snprintf(be->arch, sizeof(be->arch), "sm_70");
	/* Not even dlopen: libcuda is the application's to load (the agent's interposers find it then). */
	if (!(flags & GBPF_BACKEND_OPEN_AGENT)) {
		rc = cuda_backend_start(be, why, sizeof(why));
		if (rc) {
			if (be->drv.handle)
				cuda_driver_close(&be->drv);
			free(be);
			return rc;
		}
	}
	*out = be;
	return 0;
}

static void cuda_close(struct gbpf_backend *be)
{
	if (!be)
		return;
	if (be->ctx)
		be->drv.cuDevicePrimaryCtxRelease(be->dev);
	if (be->drv.handle)
		cuda_driver_close(&be->drv);
	free(be);
}

static void cuda_prog_unload(struct gbpf_backend_prog *p)
{
	size_t i;

	if (!p)
		return;
	p->be->drv.cuCtxSetCurrent(p->be->ctx);
	for (i = 0; p->dmaps && i < p->map_cnt; i++)
		if (p->dmaps[i])
			p->be->drv.cuMemFree(p->dmaps[i]);
	gbpf_printq_destroy(p->printq);
	if (p->mod)
		p->be->drv.cuModuleUnload(p->mod);
	free(p->dmaps);
	free(p);
}

static int cuda_prog_load(struct gbpf_backend *be, const struct gbpf_prog_desc *prog,
			  struct gbpf_map_instance *maps, size_t map_cnt,
			  struct gbpf_backend_prog **out, char *log, size_t log_size)
{
	/* the inlined array lookups read the map table from the constant bank, as the agent's probes */
	struct gbpf_ptx_opts o = {.sz = sizeof(o), .flags = GBPF_PTX_KERNEL | GBPF_PTX_CONST_MAP_TABLE,
				  .arch = be->arch};
	struct cuda_driver *d = &be->drv;
	struct gbpf_backend_prog *p;
	char jit_err[4096] = "", *ptx = NULL;
	CUjit_option jo[2] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
	void *jv[2] = {jit_err, (void *)(uintptr_t)sizeof(jit_err)};
	CUdeviceptr sym;
	size_t sym_size, i;
	CUresult r;
	int rc;

	if (map_cnt != prog->map_cnt || (map_cnt && !maps)) {
		cuda_log(log, log_size, "cuda: %s: %zu map instances for %zu maps",
			 prog->source_file ? prog->source_file : "<memory>", map_cnt, prog->map_cnt);
		return -EINVAL;
	}
	rc = cuda_backend_start(be, jit_err, sizeof(jit_err));
	if (rc) {
		cuda_log(log, log_size, "%s", jit_err);
		return rc;
	}
	o.arch = be->arch;
	rc = gbpf_ptx_emit(&prog, 1, &o, &ptx, NULL, log, log_size);
	if (rc)
		return rc;
	p = calloc(1, sizeof(*p));
	if (!p) {
		free(ptx);
		return -ENOMEM;
	}
	p->be = be;
	p->maps = maps;
	p->map_cnt = map_cnt;
	d->cuCtxSetCurrent(be->ctx);
	r = d->cuModuleLoadDataEx(&p->mod, ptx, 2, jo, jv);
	free(ptx);
	if (r != CUDA_SUCCESS) {
		cuda_log(log, log_size, "cuda: %s: section %s: JIT of the generated PTX failed: %s: %s",
			 prog->source_file ? prog->source_file : "<memory>",
			 prog->section ? prog->section : "-", cuda_driver_strerror(d, r), jit_err);
		p->mod = NULL;
		rc = -GBPF_ERRNO__JIT;
		goto fail;
	}
	if (d->cuModuleGetFunction(&p->fn, p->mod, GBPF_PTX_RUN_ENTRY) != CUDA_SUCCESS) {
		cuda_log(log, log_size, "cuda: run kernel entry missing from the JIT'ed module");
		rc = -GBPF_ERRNO__JIT;
		goto fail;
	}
	if (map_cnt) {
		p->dmaps = calloc(map_cnt, sizeof(*p->dmaps));
		if (!p->dmaps) {
			rc = -ENOMEM;
			goto fail;
		}
		for (i = 0; i < map_cnt; i++) {
			if (!maps[i].mem || !maps[i].mem_size)
				continue;
			r = d->cuMemAlloc(&p->dmaps[i], maps[i].mem_size);
			if (r != CUDA_SUCCESS) {
				cuda_log(log, log_size, "cuda: map %zu (%s): cannot allocate %zu bytes: %s", i,
					 maps[i].desc && maps[i].desc->name ? maps[i].desc->name : "?",
					 maps[i].mem_size, cuda_driver_strerror(d, r));
				p->dmaps[i] = 0;
				rc = -ENOMEM;
				goto fail;
			}
		}
		if (d->cuModuleGetGlobal(&sym, &sym_size, p->mod, "__gbpf_maps") != CUDA_SUCCESS ||
		    sym_size < map_cnt * sizeof(CUdeviceptr) ||
		    d->cuMemcpyHtoD(sym, p->dmaps, map_cnt * sizeof(CUdeviceptr)) != CUDA_SUCCESS) {
			cuda_log(log, log_size, "cuda: cannot set __gbpf_maps in the module");
			rc = -GBPF_ERRNO__JIT;
			goto fail;
		}
		rc = gbpf_ptx_const_map_table(map_cnt) ? cuda_set_const_map_table(d, p->mod, p->dmaps, maps, map_cnt) : 0;
		if (rc) {
			cuda_log(log, log_size,
				 "cuda: cannot set __gbpf_maps_const / __gbpf_slots_const in the module");
			goto fail;
		}
	}
	if (gbpf_printq_prog_prints(prog)) {
		int sms = 1;
		uint32_t nq = 1;

		/* one queue per SM (a power of two: threads use smid & (nq - 1)) */
		d->cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, be->dev);
		while (nq < (uint32_t)sms && nq < 1024)
			nq <<= 1;
		rc = gbpf_printq_create(d, nq, 64, &p->printq);
		if (!rc)
			rc = gbpf_printq_bind(p->printq, p->mod);
		if (rc) {
			cuda_log(log, log_size, "cuda: %s: section %s: cannot set up the print queues (%d)",
				 prog->source_file ? prog->source_file : "<memory>",
				 prog->section ? prog->section : "-", rc);
			goto fail;
		}
	}
	if (d->cuModuleGetGlobal(&sym, &sym_size, p->mod, "__gbpf_clock_off") == CUDA_SUCCESS) {
		uint64_t off = cuda_clock_offset_ns();

		d->cuMemcpyHtoD(sym, &off, sizeof(off));
	}
	if (d->cuModuleGetGlobal(&sym, &sym_size, p->mod, "__gbpf_pid_tgid") == CUDA_SUCCESS) {
		uint64_t v = ((uint64_t)getpid() << 32) | (uint32_t)gettid();

		d->cuMemcpyHtoD(sym, &v, sizeof(v));
	}
	*out = p;
	return 0;
fail:
	cuda_prog_unload(p);
	return rc;
}

/* Device copy of the per-thread data: one copy (shared) or one per thread. */
static int stage_data(struct cuda_driver *d, const struct gbpf_run_opts *o, uint64_t threads,
		      CUdeviceptr *dptr, uint64_t *stride, char *log, size_t log_size)
{
	uint64_t st = (o->data_size + 7) & ~(uint64_t)7, copies, total, done;
	size_t chunk_copies, i;
	char *stage;

	*dptr = 0;
	*stride = 0;
	if (!o->data || !o->data_size)
		return 0;
	copies = (o->flags & GBPF_RUN_SHARED_DATA) ? 1 : threads;
	if (st && copies > CUDA_RUN_DATA_MAX / st) {
		cuda_log(log, log_size, "cuda: %llu threads x %zu bytes of data exceed %llu bytes",
			 (unsigned long long)threads, o->data_size, (unsigned long long)CUDA_RUN_DATA_MAX);
		return -E2BIG;
	}
	total = copies * st;
	if (d->cuMemAlloc(dptr, total) != CUDA_SUCCESS) {
		cuda_log(log, log_size, "cuda: cannot allocate %llu bytes of run data",
			 (unsigned long long)total);
		*dptr = 0;
		return -ENOMEM;
	}
	chunk_copies = (size_t)(CUDA_STAGE_MAX / st);
	if (chunk_copies > copies)
		chunk_copies = (size_t)copies;
	if (!chunk_copies)
		chunk_copies = 1;
	stage = calloc(chunk_copies, st);
	if (!stage)
		return -ENOMEM;
	for (i = 0; i < chunk_copies; i++)
		memcpy(stage + i * st, o->data, o->data_size);
	for (done = 0; done < copies; done += chunk_copies) {
		uint64_t n = copies - done < chunk_copies ? copies - done : chunk_copies;

		if (d->cuMemcpyHtoD(*dptr + done * st, stage, n * st) != CUDA_SUCCESS) {
			free(stage);
			return -EIO;
		}
	}
	free(stage);
	*stride = (o->flags & GBPF_RUN_SHARED_DATA) ? 0 : st;
	return 0;
}

static int cuda_prog_run(struct gbpf_backend_prog *p, const struct gbpf_run_opts *opts,
			 struct gbpf_run_result *res, char *log, size_t log_size)
{
	struct cuda_driver *d = &p->be->drv;
	CUdeviceptr data = 0, out = 0, stats = 0;
	uint64_t threads = opts && opts->threads ? opts->threads : 1, stride = 0, size;
	uint64_t st_host[4] = {~0ull, 0, 0, 0};
	unsigned block = opts && opts->block_size ? opts->block_size : 256, grid;
	CUevent e0 = NULL, e1 = NULL;
	struct gbpf_run_opts none = {.sz = sizeof(none)};
	void *params[6];
	float ms = 0;
	CUresult r;
	size_t i;
	int rc = 0;

	if (!opts)
		opts = &none;
	if (block > 1024)
		block = 1024;
	if ((threads + block - 1) / block > 0x7fffffffull) {
		cuda_log(log, log_size, "cuda: %llu threads exceed one grid", (unsigned long long)threads);
		return -E2BIG;
	}
	grid = (unsigned)((threads + block - 1) / block);
	d->cuCtxSetCurrent(p->be->ctx);
	rc = stage_data(d, opts, threads, &data, &stride, log, log_size);
	if (rc)
		goto out;
	if (res && res->r0 && d->cuMemAlloc(&out, threads * 8) != CUDA_SUCCESS) {
		rc = -ENOMEM;
		goto out;
	}
	if (d->cuMemAlloc(&stats, sizeof(st_host)) != CUDA_SUCCESS ||
	    d->cuMemcpyHtoD(stats, st_host, sizeof(st_host)) != CUDA_SUCCESS) {
		rc = -ENOMEM;
		goto out;
	}
	for (i = 0; i < p->map_cnt; i++)
		if (p->dmaps[i] && d->cuMemcpyHtoD(p->dmaps[i], p->maps[i].mem, p->maps[i].mem_size)) {
			rc = -EIO;
			goto out;
		}
	size = opts->data ? opts->data_size : 0;
	params[0] = &data;
	params[1] = &size;
	params[2] = &stride;
	params[3] = &out;
	params[4] = &threads;
	params[5] = &stats;
	d->cuEventCreate(&e0, CU_EVENT_DEFAULT);
	d->cuEventCreate(&e1, CU_EVENT_DEFAULT);
	if (p->printq && gbpf_printq_start(p->printq)) {
		rc = -EAGAIN;
		goto out;
	}
	d->cuEventRecord(e0, NULL);
	r = d->cuLaunchKernel(p->fn, grid, 1, 1, block, 1, 1, 0, NULL, params, NULL);
	d->cuEventRecord(e1, NULL);
	if (r == CUDA_SUCCESS)
		r = d->cuEventSynchronize(e1);
	gbpf_printq_stop(p->printq);
	if (r != CUDA_SUCCESS) {
		cuda_log(log, log_size, "cuda: run of %llu threads failed: %s", (unsigned long long)threads,
			 cuda_driver_strerror(d, r));
		rc = -GBPF_ERRNO__FAULT;
		goto out;
	}
	d->cuEventElapsedTime(&ms, e0, e1);
	for (i = 0; i < p->map_cnt; i++)
		if (p->dmaps[i] && d->cuMemcpyDtoH(p->maps[i].mem, p->dmaps[i], p->maps[i].mem_size)) {
			rc = -EIO;
			goto out;
		}
	if (d->cuMemcpyDtoH(st_host, stats, sizeof(st_host)) != CUDA_SUCCESS) {
		rc = -EIO;
		goto out;
	}
	if (res) {
		res->r0_first = st_host[2];
		res->r0_distinct = st_host[0] == st_host[1];
		res->elapsed_ns = (uint64_t)((double)ms * 1e6);
		if (res->r0 && d->cuMemcpyDtoH(res->r0, out, threads * 8) != CUDA_SUCCESS)
			rc = -EIO;
		if (!rc && res->data_out && data &&
		    d->cuMemcpyDtoH(res->data_out, data, opts->data_size) != CUDA_SUCCESS)
			rc = -EIO;
	}
out:
	if (e0)
		d->cuEventDestroy(e0);
	if (e1)
		d->cuEventDestroy(e1);
	if (data)
		d->cuMemFree(data);
	if (out)
		d->cuMemFree(out);
	if (stats)
		d->cuMemFree(stats);
	return rc;
}

static int cuda_codegen(const struct gbpf_prog_desc *prog, const struct gbpf_codegen_opts *opts,
			char **text, size_t *text_len, char *log, size_t log_size)
{
	struct gbpf_ptx_opts o = {.sz = sizeof(o)};

	if (opts && opts->target && strcmp(opts->target, "ptx")) {
		cuda_log(log, log_size, "cuda: codegen target %s is not supported (only ptx)", opts->target);
		return -ENOTSUP;
	}
	o.arch = opts && opts->arch ? opts->arch : "sm_90";
	if (opts && (opts->flags & GBPF_CODEGEN_KERNEL))
		o.flags |= GBPF_PTX_KERNEL;
	if (opts && opts->sz >= offsetof(struct gbpf_codegen_opts, prog_cnt) + sizeof(size_t) &&
	    opts->prog_cnt)
		return gbpf_ptx_emit(opts->progs, opts->prog_cnt, &o, text, text_len, log, log_size);
	return gbpf_ptx_emit(&prog, 1, &o, text, text_len, log, log_size);
}

/*
 * A CUPTI client (the PyTorch profiler) is about to take the driver's tool
 * subscription, which the Compute Sanitizer holds from the plugin's load
 * (engine auto). Under auto the profiler wins: the Sanitizer engine gives
 * its modules back and unsubscribes, PTX injection goes on. An explicit
 * --engine sanitizer keeps it: the user asked for the engine that cannot
 * work without it, and a profiler's failure is reported instead.
 */
static int cuda_agent_yield_tool(struct gbpf_backend *be, uint32_t flags, const char *call, char *log,
				 size_t log_size)
{
	char why[128];
	int choice = gbpf_san_engine_choice(flags, why, sizeof(why)), rc;

	(void)be;
	if (choice == GBPF_SAN_CHOICE_SANITIZER) {
		if (gbpf_san_process_state(NULL) != 1)
			return -ENOENT;
		cuda_log(log, log_size, "kept by the Compute Sanitizer engine: --engine sanitizer needs it; "
			 "--engine auto gives it to the profiler, --engine ptx never takes it");
		return -EBUSY;
	}
	rc = gbpf_san_process_yield(call, log, log_size);
	if (!rc && log && log_size) {
		size_t n = strlen(log);

		snprintf(log + n, log_size - n, "; PTX injection goes on, kernels without PTX are not instrumentable");
	}
	return rc;
}

GBPF_PLUGIN_EXPORT int gbpf_plugin_get_backend_table(uint32_t abi_version, struct gbpf_backend_ops *ops,
						     struct gbpf_backend_caps *caps);

GBPF_PLUGIN_EXPORT int gbpf_plugin_get_backend_table(uint32_t abi_version, struct gbpf_backend_ops *ops,
						     struct gbpf_backend_caps *caps)
{
	struct gbpf_backend_ops t = {
		.sz = sizeof(t),
		.name = "cuda",
		.description = "NVIDIA GPUs through the CUDA driver (eBPF to PTX, no LLVM)",
		.plugin_version = GBPF_MAKE_VERSION(0, 1),
		.priority = 100,
		.query_devices = cuda_query_devices,
		.open = cuda_open,
		.close = cuda_close,
		.prog_load = cuda_prog_load,
		.prog_run = cuda_prog_run,
		.prog_unload = cuda_prog_unload,
		.codegen = cuda_codegen,
		.inject = cuda_inject,
		.inject_free = cuda_inject_free,
		.agent_attach = gbpf_cuda_agent_attach,
		.agent_detach = gbpf_cuda_agent_detach,
		.agent_yield_tool = cuda_agent_yield_tool,
	};
	struct gbpf_backend_caps c = {
		.sz = sizeof(c),
		.flags = GBPF_CAP_PROG_RUN | GBPF_CAP_CODEGEN | GBPF_CAP_INJECT | GBPF_CAP_INTERCEPT,
		.codegen_targets = "ptx",
	};

	return gbpf_plugin_tables_out(abi_version, &t, &c, ops, caps);
}
