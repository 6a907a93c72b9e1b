/* SPDX-License-Identifier: MIT */
/*
 * The opencl backend plugin: eBPF programs as SPIR-V (plugins/spirv) run on
 * any OpenCL device, and on Debian's PoCL through LLVM bitcode. The ICD
 * loader is dlopen'ed, so the plugin loads where OpenCL is absent and says
 * why it is unusable there.
 *
 * prog_run mirrors every map into device-reachable memory (SVM, or host
 * memory on a CPU device) around each run and writes it back before
 * returning, as the plugin ABI asks: runs are synchronous, so a mirror is
 * simple and correct for every device kind.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <gbpf/gbpf.h>
#include <gbpf/plugin.h>

#include "ocl_agent.h"
#include "ocl_api.h"
#include "ocl_inject_op.h"
#include "spirv.h"

/** Bytes of device memory one run may use for per-work-item data copies. */
#define OCL_RUN_DATA_MAX ((uint64_t)8 << 30)

struct gbpf_backend {
	struct gbpf_spirv_cl *cl;
	struct gbpf_host_services svc;
};

struct gbpf_backend_prog {
	struct gbpf_backend *be;
	void *prog; /* cl_program of gbpf_spirv_cl_build */
	struct gbpf_spirv_ctx_table *table;
	struct gbpf_map_instance *maps;
	size_t map_cnt;
	void **dmaps; /* device mirrors of the maps */
	void *printq; /* trace_printk / puts queue, when the program prints */
	char name[64];
};

/** Records of prog_run's print queue (256 bytes each). */
#define OCL_PRINTQ_SLOTS 4096u

/* prog_run's lines go to stdout, as the cuda backend's device output. */
static int ocl_print_stdout(void *ctx, const char *text, size_t len)
{
	(void)ctx;
	fwrite(text, 1, len, stdout);
	if (!len || text[len - 1] != '\n')
		fputc('\n', stdout);
	return 0;
}

static void ocl_log(char *log, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void ocl_log(char *log, size_t size, const char *fmt, ...)
{
	va_list ap;

	if (!log || !size)
		return;
	va_start(ap, fmt);
	vsnprintf(log, size, fmt, ap);
	va_end(ap);
}

static int ocl_query_devices(struct gbpf_device_info *devs, uint32_t *count, char *why, size_t why_size)
{
	cl_platform_id plats[16];
	cl_uint np = 0, p;
	uint32_t n = 0;
	struct ocl_api api;
	cl_int err;
	int rc;

	rc = ocl_api_open(&api, why, why_size);
	if (rc)
		return rc;
	err = api.GetPlatformIDs(16, plats, &np);
	if (err != CL_SUCCESS || np == 0) {
		ocl_log(why, why_size, "opencl: no OpenCL platform (%s): no ICD installed (e.g. pocl-opencl-icd)",
			err != CL_SUCCESS ? ocl_strerror(err) : "0 platforms");
		ocl_api_close(&api);
		return -ENODEV;
	}
	for (p = 0; p < np && p < 16; p++) {
		cl_device_id ids[32];
		cl_uint nd = 0, d;

		if (api.GetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 32, ids, &nd) != CL_SUCCESS)
			continue;
		for (d = 0; d < nd && d < 32; d++, n++) {
			struct gbpf_device_info *di;
			cl_ulong mem = 0;
			cl_uint cus = 0;
			cl_device_type type = 0;

			if (!devs || n >= *count)
				continue;
			di = &devs[n];
			memset(di, 0, sizeof(*di));
			di->sz = sizeof(*di);
			api.GetDeviceInfo(ids[d], CL_DEVICE_NAME, sizeof(di->name) - 1, di->name, NULL);
			api.GetDeviceInfo(ids[d], CL_DEVICE_TYPE, sizeof(type), &type, NULL);
			api.GetDeviceInfo(ids[d], CL_DEVICE_GLOBAL_MEM_SIZE, sizeof(mem), &mem, NULL);
			api.GetDeviceInfo(ids[d], CL_DEVICE_MAX_COMPUTE_UNITS, sizeof(cus), &cus, NULL);
			snprintf(di->arch, sizeof(di->arch), "spirv64 (%s)",
				 (type & CL_DEVICE_TYPE_CPU) ? "cpu" : (type & CL_DEVICE_TYPE_GPU) ? "gpu" : "other");
			/* CPU devices share host memory: report 0 as the ABI asks. */
			di->memory_bytes = (type & CL_DEVICE_TYPE_CPU) ? 0 : mem;
			di->compute_units = cus;
			di->warp_size = 1;
		}
	}
	ocl_api_close(&api);
	if (n == 0) {
		ocl_log(why, why_size, "opencl: %u OpenCL platform(s) but no device", (unsigned)np);
		return -ENODEV;
	}
	*count = n;
	return 0;
}

static int ocl_open(const struct gbpf_backend_open_opts *opts, struct gbpf_backend **out)
{
	struct gbpf_backend *be = calloc(1, sizeof(*be));
	int idx = opts && opts->sz >= offsetof(struct gbpf_backend_open_opts, device_index) + sizeof(int)
			  ? opts->device_index : -1;
	char why[512] = "";
	int rc;

	if (!be)
		return -ENOMEM;
	if (opts && opts->services)
		memcpy(&be->svc, opts->services,
		       opts->services->sz < sizeof(be->svc) ? opts->services->sz : sizeof(be->svc));
	/*
	 * The runtime opens lazily, at the first prog_load: `gbpf run` opens the
	 * backend in the controller and in every agent, where nothing is run
	 * directly, and an OpenCL context there would cost start-up time.
	 */
	be->cl = NULL;
	(void)idx;
	(void)why;
	rc = 0;
	*out = be;
	return rc;
}

static void ocl_close(struct gbpf_backend *be)
{
	if (!be)
		return;
	if (be->cl)
		gbpf_spirv_cl_close(be->cl);
	free(be);
}

static void ocl_prog_unload(struct gbpf_backend_prog *p)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; p->dmaps && i < p->map_cnt; i++)
		if (p->dmaps[i])
			gbpf_spirv_cl_free(p->be->cl, p->dmaps[i]);
	free(p->dmaps);
	if (p->printq)
		gbpf_spirv_cl_free(p->be->cl, p->printq);
	if (p->table)
		gbpf_spirv_cl_free(p->be->cl, p->table);
	if (p->prog)
		gbpf_spirv_cl_release(p->be->cl, p->prog);
	free(p);
}

static int ocl_prog_load(struct gbpf_backend *be, const struct gbpf_prog_desc *prog,
			 struct gbpf_map_instance *maps, size_t map_cnt, struct gbpf_backend_prog **out,
			 char *log, size_t log_size)
{
	const char *file = prog->source_file ? prog->source_file : "<memory>";
	struct gbpf_spirv_opts so = {.sz = sizeof(so), .flags = GBPF_SPIRV_KERNEL};
	struct gbpf_backend_prog *p;
	uint32_t *words = NULL;
	size_t nwords = 0, i;
	int rc;

	if (map_cnt != prog->map_cnt || (map_cnt && !maps)) {
		ocl_log(log, log_size, "opencl: %s: %zu map instances for %zu maps", file, map_cnt,
			prog->map_cnt);
		return -EINVAL;
	}
	if (map_cnt > GBPF_SPIRV_MAX_MAPS) {
		ocl_log(log, log_size, "opencl: %s: %zu maps, the context table holds %u", file, map_cnt,
			GBPF_SPIRV_MAX_MAPS);
		return -E2BIG;
	}
	if (!be->cl) {
		rc = gbpf_spirv_cl_open(-1, &be->cl, log, log_size);
		if (rc)
			return rc;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->be = be;
	p->maps = maps;
	p->map_cnt = map_cnt;
	snprintf(p->name, sizeof(p->name), "%s", prog->name ? prog->name : "prog");
	p->table = gbpf_spirv_cl_alloc(be->cl, sizeof(*p->table));
	p->dmaps = calloc(map_cnt ? map_cnt : 1, sizeof(*p->dmaps));
	if (!p->table || !p->dmaps) {
		ocl_log(log, log_size, "opencl: %s: out of device-reachable memory for the context table", file);
		rc = -ENOMEM;
		goto fail;
	}
	for (i = 0; i < map_cnt; i++) {
		if (!maps[i].mem || !maps[i].mem_size)
			continue;
		p->dmaps[i] = gbpf_spirv_cl_alloc(be->cl, maps[i].mem_size);
		if (!p->dmaps[i]) {
			ocl_log(log, log_size, "opencl: %s: map %zu (%s): cannot allocate %zu device bytes", file, i,
				maps[i].desc && maps[i].desc->name ? maps[i].desc->name : "?", maps[i].mem_size);
			rc = -ENOMEM;
			goto fail;
		}
		p->table->maps[i] = (uint64_t)(uintptr_t)p->dmaps[i];
	}
	p->table->map_cnt = map_cnt;
	p->table->nr_slots = gbpf_spirv_cl_compute_units(be->cl);
	p->table->pid_tgid = ((uint64_t)getpid() << 32) | (uint32_t)gettid();
	if (gbpf_spirv_prog_prints(prog)) {
		size_t qsize = gbpf_spirv_printq_size(OCL_PRINTQ_SLOTS);

		p->printq = gbpf_spirv_cl_alloc(be->cl, qsize);
		if (!p->printq || gbpf_spirv_printq_init(p->printq, qsize, OCL_PRINTQ_SLOTS)) {
			ocl_log(log, log_size, "opencl: %s: cannot allocate the print queue (%zu bytes)", file, qsize);
			rc = -ENOMEM;
			goto fail;
		}
		p->table->printq = (uint64_t)(uintptr_t)p->printq;
	}
	so.ctx_table = (uint64_t)(uintptr_t)p->table;
	rc = gbpf_spirv_emit(&prog, 1, &so, &words, &nwords, log, log_size);
	if (rc)
		goto fail;
	rc = gbpf_spirv_cl_build(be->cl, words, nwords, &p->prog, log, log_size);
	free(words);
	if (rc) {
		p->prog = NULL;
		goto fail;
	}
	*out = p;
	return 0;
fail:
	ocl_prog_unload(p);
	return rc;
}

static uint64_t ocl_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int ocl_prog_run(struct gbpf_backend_prog *p, const struct gbpf_run_opts *opts,
			struct gbpf_run_result *res, char *log, size_t log_size)
{
	struct gbpf_run_opts none = {.sz = sizeof(none)};
	uint64_t threads, stride = 0, copies, t0, i;
	struct gbpf_spirv_cl_run_opts ro = {.sz = sizeof(ro)};
	struct gbpf_spirv_run_stats *stats = NULL;
	uint64_t *r0 = NULL;
	unsigned char *data = NULL;
	struct gbpf_spirv_printer *printer = NULL;
	int rc = 0;

	if (!opts)
		opts = &none;
	threads = opts->threads ? opts->threads : 1;
	if (opts->data_size && !opts->data) {
		ocl_log(log, log_size, "opencl: data_size %zu given without data", opts->data_size);
		return -EINVAL;
	}
	if (opts->data && opts->data_size) {
		stride = (opts->flags & GBPF_RUN_SHARED_DATA) ? 0 : (opts->data_size + 7) & ~(uint64_t)7;
		copies = stride ? threads : 1;
		if (stride && copies > OCL_RUN_DATA_MAX / stride) {
			ocl_log(log, log_size, "opencl: %llu work-items x %zu bytes of data exceed %llu bytes",
				(unsigned long long)threads, opts->data_size, (unsigned long long)OCL_RUN_DATA_MAX);
			return -E2BIG;
		}
		data = gbpf_spirv_cl_alloc(p->be->cl, stride ? copies * stride : opts->data_size);
		if (!data) {
			ocl_log(log, log_size, "opencl: cannot allocate the run data");
			return -ENOMEM;
		}
		for (i = 0; i < copies; i++)
			memcpy(data + i * stride, opts->data, opts->data_size);
	}
	stats = gbpf_spirv_cl_alloc(p->be->cl, sizeof(*stats));
	if (res && res->r0)
		r0 = gbpf_spirv_cl_alloc(p->be->cl, threads * sizeof(*r0));
	if (!stats || (res && res->r0 && !r0)) {
		ocl_log(log, log_size, "opencl: cannot allocate the results of %llu work-items",
			(unsigned long long)threads);
		rc = -ENOMEM;
		goto out;
	}
	stats->r0_min = ~0ull;
	for (i = 0; i < p->map_cnt; i++)
		if (p->dmaps[i])
			memcpy(p->dmaps[i], p->maps[i].mem, p->maps[i].mem_size);
	p->table->time_base_ns = ocl_now_ns();
	p->table->launch_id = 0;
	ro.threads = threads;
	ro.local_size = opts->block_size;
	ro.data = (uint64_t)(uintptr_t)data;
	ro.size = data ? opts->data_size : 0;
	ro.stride = stride;
	ro.r0 = r0;
	ro.stats = stats;
	if (p->printq && gbpf_spirv_printer_start(p->printq, ocl_print_stdout, NULL, &printer)) {
		ocl_log(log, log_size, "opencl: %s: cannot start the print thread", p->name);
		rc = -EAGAIN;
		goto out;
	}
	t0 = ocl_now_ns();
	rc = gbpf_spirv_cl_run(p->be->cl, p->prog, &ro, log, log_size);
	if (printer) {
		uint64_t lost = gbpf_spirv_printer_flush(printer, 1000);

		gbpf_spirv_printer_stop(printer, 1000);
		fflush(stdout);
		if (lost)
			fprintf(stderr, "opencl: %s: %llu trace_printk/puts line%s lost (the device print queue "
				"of %u records was full)\n", p->name, (unsigned long long)lost, lost == 1 ? "" : "s",
				OCL_PRINTQ_SLOTS);
	}
	if (rc)
		goto out;
	for (i = 0; i < p->map_cnt; i++)
		if (p->dmaps[i])
			memcpy(p->maps[i].mem, p->dmaps[i], p->maps[i].mem_size);
	if (res) {
		res->elapsed_ns = ocl_now_ns() - t0;
		res->r0_first = stats->r0_first;
		res->r0_distinct = stats->r0_min == stats->r0_max ? 1 : 2;
		if (res->r0)
			memcpy(res->r0, r0, threads * sizeof(*r0));
		if (res->data_out && data)
			memcpy(res->data_out, data, opts->data_size);
	}
out:
	if (data)
		gbpf_spirv_cl_free(p->be->cl, data);
	if (r0)
		gbpf_spirv_cl_free(p->be->cl, r0);
	if (stats)
		gbpf_spirv_cl_free(p->be->cl, stats);
	return rc;
}

static int ocl_codegen(const struct gbpf_prog_desc *prog, const struct gbpf_codegen_opts *opts, char **text,
		       size_t *text_len, char *log, size_t log_size)
{
	struct gbpf_spirv_opts so = {.sz = sizeof(so)};
	const struct gbpf_prog_desc *const *progs = &prog;
	size_t n = 1, nwords = 0;
	uint32_t *words = NULL;
	int rc;

	if (opts && opts->target && strcmp(opts->target, "spirv")) {
		ocl_log(log, log_size, "opencl: codegen target %s is not supported (only spirv)", opts->target);
		return -ENOTSUP;
	}
	if (opts && (opts->flags & GBPF_CODEGEN_KERNEL))
		so.flags |= GBPF_SPIRV_KERNEL;
	if (opts && opts->sz >= offsetof(struct gbpf_codegen_opts, prog_cnt) + sizeof(size_t) && opts->prog_cnt) {
		progs = opts->progs;
		n = opts->prog_cnt;
	}
	rc = gbpf_spirv_emit(progs, n, &so, &words, &nwords, log, log_size);
	if (rc)
		return rc;
	rc = gbpf_spirv_disassemble(words, nwords, text);
	free(words);
	if (rc) {
		ocl_log(log, log_size, "opencl: cannot disassemble the generated module (%d)", rc);
		return rc;
	}
	if (text_len)
		*text_len = strlen(*text);
	return 0;
}

GBPF_PLUGIN_EXPORT int gbpf_plugin_get_backend_table(uint32_t abi_version, struct gbpf_backend_ops *ops,
						     struct gbpf_backend_caps *caps);

GBPF_PLUGIN_EXPORT int gbpf_plugin_get_backend_table(uint32_t abi_version, struct gbpf_backend_ops *ops,
						     struct gbpf_backend_caps *caps)
{
	struct gbpf_backend_ops t = {
		.sz = sizeof(t),
		.name = "opencl",
		.description = "OpenCL devices through SPIR-V (PoCL on the CPU through LLVM bitcode)",
		.plugin_version = GBPF_MAKE_VERSION(0, 1),
		/* below cuda (100), above cpu (0): a machine with PoCL and no GPU picks opencl */
		.priority = 50,
		.query_devices = ocl_query_devices,
		.open = ocl_open,
		.close = ocl_close,
		.prog_load = ocl_prog_load,
		.prog_run = ocl_prog_run,
		.prog_unload = ocl_prog_unload,
		.codegen = ocl_codegen,
		.inject = ocl_inject,
		.inject_free = ocl_inject_free,
		.agent_attach = gbpf_ocl_agent_attach,
		.agent_detach = gbpf_ocl_agent_detach,
	};
	struct gbpf_backend_caps c = {
		.sz = sizeof(c),
		.flags = GBPF_CAP_PROG_RUN | GBPF_CAP_CODEGEN | GBPF_CAP_INJECT | GBPF_CAP_INTERCEPT,
		.codegen_targets = "spirv",
	};

	return gbpf_plugin_tables_out(abi_version, &t, &c, ops, caps);
}
