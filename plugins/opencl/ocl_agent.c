/* SPDX-License-Identifier: MIT */
/*
 * plugins/opencl/ocl_agent.c - `gbpf run` inside an OpenCL application:
 * the opencl plugin's agent_attach / agent_detach and what the interposers
 * (ocl_intercept.c) call.
 *
 * The interposers only record: a program's source, IL or binary, its build
 * options and devices, its kernels and their arguments. A program is
 * instrumented LAZILY, at the first launch of a kernel that a device
 * program targets: compiling OpenCL C to SPIR-V and building the result
 * takes about a second on PoCL, so only programs whose targeted kernels
 * actually run pay for it, and the application's own clBuildProgram (and
 * its errors) stay exactly as without gbpf. The instrumented program is
 * built for the devices and options of the application's build: through
 * clCreateProgramWithIL where the device reports an IL version, else
 * through LLVM bitcode (PoCL). Its kernels get the application's
 * arguments replayed and replace the application's kernel at launch.
 *
 * Maps: the context table (plugins/spirv/spirv.h) holds the address of
 * each map block in the region shared with the controller; its address is
 * baked into the instrumented module. That needs a device that reaches
 * host memory at host addresses: a CPU device (PoCL) or one with
 * fine-grained system SVM; other devices are reported, uninstrumented.
 * One table per instrumented program: launch_id is written there before
 * each instrumented launch, after the previous instrumented launch of the
 * same program has finished, so every launch reads its own id; the
 * device of the launch's queue (gbpf_gpu_ctx.device) goes there too, as
 * one instrumented program serves every device it was built for.
 *
 * trace_printk / puts: device records go to one print queue (host memory
 * the device reaches, as the table) that a printer thread drains while
 * kernels run; after an instrumented launch completes (waited for here
 * when it has no wait list, else in its completion callback) the queue is
 * flushed and lost lines are reported with their count.
 *
 * Any failure is reported and the application's own kernel runs.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <gbpf/probe_ctx.h>

#include "maps/map.h"
#include "maps/map_layout.h"
#include "ocl_agent.h"
#include "ocl_compile.h"
#include "spirv.h"

#define SPIRV_MAGIC 0x07230203u
/** Largest program source / IL / binary the agent keeps a copy of. */
#define OA_IMAGE_MAX ((size_t)64 << 20)
/** Largest by-value kernel argument recorded for replay. */
#define OA_ARG_MAX 4096u
/** Most arguments recorded per kernel. */
#define OA_ARGS_MAX 256u
/** Most bytes of per-work-item map copies one launch may allocate. */
#define OA_THREAD_MAPS_MAX ((size_t)1 << 30)

/** One recorded clSetKernelArg. */
struct oa_arg {
	int set;
	size_t size;
	unsigned char *value; /* NULL for __local sizes */
};

/** A program the application created. */
struct oa_prog {
	cl_program app;
	cl_context ctx;
	enum ocl_src_kind kind;
	void *bytes;
	size_t size;
	char *options;
	cl_uint ndev;
	cl_device_id *devs;
	int state; /* 0 = not tried, 1 = instrumented, -1 = failed (reason reported) */
	char why[1024];
	cl_program inst;
	struct gbpf_spirv_ctx_table *table;
	struct gbpf_spirv_inject_kernel *kernels; /* injector's per-kernel outcome */
	size_t kernel_cnt;
	cl_event last; /* last instrumented launch (the table is per program) */
	struct oa_prog *next;
};

/** A kernel the application created. */
struct oa_kernel {
	cl_kernel app;
	struct oa_prog *prog;
	char *name;
	struct oa_arg args[OA_ARGS_MAX];
	cl_uint nargs;
	int state; /* 0 = not tried, 1 = instrumented, -1 = runs uninstrumented */
	int targeted; /* -1 unknown, 0/1 */
	cl_kernel inst;
	struct oa_kernel *next;
};

/** Everything the agent side holds: one per process (the plugin is attached once). */
static struct ocl_agent_state {
	pthread_mutex_t lock;
	atomic_int attached;
	struct gbpf_agent_services svc;
	const struct gbpf_prog_desc *progs;
	size_t prog_cnt;
	struct gbpf_map_instance *maps; /* the device object's maps, in prog->maps order */
	size_t map_cnt;
	const struct gbpf_prog_desc **dev; /* device programs handed to the injector */
	size_t *dev_origin;                /* their index in progs */
	size_t dev_cnt;
	uint32_t allow_writes;
	struct oa_prog *programs;
	struct oa_kernel *kernels;
	/* trace_printk / puts: one queue for the process, set up at the first instrumentation */
	int prints;       /* a device program prints */
	int printq_state; /* 0 not yet, 1 ready, -1 off (reported) */
	void *printq;
	struct gbpf_spirv_printer *printer;
	/* every platform's devices in gbpf's numbering, listed once (oa_queue_device) */
	pthread_once_t devs_once;
	cl_device_id devs[64];
	cl_uint dev_list_cnt;
} ocl_agent_state = {.lock = PTHREAD_MUTEX_INITIALIZER, .devs_once = PTHREAD_ONCE_INIT};

/* The real entry points, for the interposers and the agent (loaded once). */
static pthread_once_t ocl_real_once = PTHREAD_ONCE_INIT;
static struct ocl_api ocl_real_api;
static int ocl_real_ok;

static void ocl_real_load(void)
{
	char why[256];

	ocl_real_ok = ocl_api_open(&ocl_real_api, why, sizeof(why)) == 0;
}

const struct ocl_api *ocl_real(void)
{
	pthread_once(&ocl_real_once, ocl_real_load);
	return ocl_real_ok ? &ocl_real_api : NULL;
}

int ocl_agent_active(void)
{
	return atomic_load(&ocl_agent_state.attached);
}

/*
 * Set at the first attach and never cleared: after a detach (and in an
 * idle agent, attached once with no program at start) programs, kernels
 * and their arguments are still recorded, so that a later attach can
 * instrument kernels the application created before it (gbpf attach).
 */
static atomic_int ocl_agent_recording_on;

int ocl_agent_recording(void)
{
	return atomic_load_explicit(&ocl_agent_recording_on, memory_order_relaxed);
}

static void oa_report(enum gbpf_agent_event ev, const char *kernel, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void oa_report(enum gbpf_agent_event ev, const char *kernel, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	gbpf_agent_vreportf(&ocl_agent_state.svc, ev, kernel, fmt, ap);
	va_end(ap);
}

static uint64_t oa_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * GBPF_OPENCL_FAULT=compile|inject|build|launch makes that stage fail on
 * purpose (tests: a kernel that cannot be instrumented must run as the
 * application's own, with a report).
 */
static int oa_fault(const char *stage)
{
	const char *f = getenv("GBPF_OPENCL_FAULT");

	return f && !strcmp(f, stage);
}

static int oa_selected(size_t prog, const char *name)
{
	struct ocl_agent_state *s = &ocl_agent_state;

	return s->svc.kernel_selected && s->svc.kernel_selected(s->svc.ctx, prog, name ? name : "");
}

/* Injector callback: its prog_index counts the device programs we passed. */
static int oa_inject_selected(void *ctx, size_t prog_index, const char *name)
{
	struct ocl_agent_state *s = ctx;

	return prog_index < s->dev_cnt && oa_selected(s->dev_origin[prog_index], name);
}

static int oa_targeted(struct ocl_agent_state *s, const char *name)
{
	for (size_t i = 0; i < s->dev_cnt; i++)
		if (oa_selected(s->dev_origin[i], name))
			return 1;
	return 0;
}

/* ---- bookkeeping (under the lock) ---- */

static struct oa_prog *oa_find_prog(struct ocl_agent_state *s, cl_program p)
{
	for (struct oa_prog *op = s->programs; op; op = op->next)
		if (op->app == p)
			return op;
	return NULL;
}

static struct oa_kernel *oa_find_kernel(struct ocl_agent_state *s, cl_kernel k)
{
	for (struct oa_kernel *ok = s->kernels; ok; ok = ok->next)
		if (ok->app == k)
			return ok;
	return NULL;
}

void ocl_agent_program_created(cl_program prog, cl_context ctx, enum ocl_src_kind kind, const void *bytes,
			       size_t size)
{
	struct ocl_agent_state *s = &ocl_agent_state;
	struct oa_prog *op;

	if (!prog || !ocl_agent_recording())
		return;
	op = calloc(1, sizeof(*op));
	if (!op)
		return;
	op->app = prog;
	op->ctx = ctx;
	op->kind = kind;
	if (kind == OCL_SRC_BINARY && size >= 20 && size % 4 == 0) {
		uint32_t magic;

		memcpy(&magic, bytes, 4);
		if (magic == SPIRV_MAGIC)
			op->kind = OCL_SRC_IL; /* a SPIR-V "binary" is instrumentable */
	}
	if (op->kind != OCL_SRC_BINARY && bytes && size && size <= OA_IMAGE_MAX) {
		op->bytes = malloc(size);
		if (op->bytes) {
			memcpy(op->bytes, bytes, size);
			op->size = size;
		}
	}
	pthread_mutex_lock(&s->lock);
	op->next = s->programs;
	s->programs = op;
	pthread_mutex_unlock(&s->lock);
}

cl_program ocl_agent_il_fallback(cl_context ctx, const void *il, size_t size, cl_int *err)
{
	const struct ocl_api *cl = ocl_real();
	cl_device_id devs[16];
	const unsigned char *bins[16];
	size_t sizes[16], dev_bytes = 0, ndev, i;
	uint32_t *words = NULL;
	void *bc = NULL;
	size_t bc_size = 0;
	char log[512] = "";
	cl_program p = NULL;
	cl_int e = CL_SUCCESS;
	uint32_t magic = 0;

	if (!cl || !il || size < 20 || size % 4 || size > OA_IMAGE_MAX)
		return NULL;
	memcpy(&magic, il, 4);
	if (magic != SPIRV_MAGIC ||
	    cl->GetContextInfo(ctx, CL_CONTEXT_DEVICES, sizeof(devs), devs, &dev_bytes) != CL_SUCCESS)
		return NULL;
	ndev = dev_bytes / sizeof(devs[0]);
	words = malloc(size);
	if (!ndev || !words)
		goto out;
	memcpy(words, il, size);
	if (gbpf_spirv_to_pocl(words, size / 4, &bc, &bc_size, log, sizeof(log))) {
		oa_report(GBPF_AGENT_EVENT_ERROR, NULL,
			  "clCreateProgramWithIL failed (%s) and the SPIR-V to LLVM bitcode fallback too: %s",
			  ocl_strerror(*err), log);
		goto out;
	}
	for (i = 0; i < ndev; i++) {
		sizes[i] = bc_size;
		bins[i] = bc;
	}
	p = cl->CreateProgramWithBinary(ctx, (cl_uint)ndev, devs, sizes, bins, NULL, &e);
	if (!p || e != CL_SUCCESS) {
		oa_report(GBPF_AGENT_EVENT_ERROR, NULL, "LLVM bitcode fallback of clCreateProgramWithIL failed: %s",
			  ocl_strerror(e));
		p = NULL;
		goto out;
	}
	*err = CL_SUCCESS;
	oa_report(GBPF_AGENT_EVENT_INFO, NULL,
		  "the platform has no SPIR-V IL support: program created from the module as LLVM bitcode");
out:
	free(bc);
	free(words);
	return p;
}

void ocl_agent_program_built(cl_program prog, cl_uint ndev, const cl_device_id *devs, const char *options)
{
	struct ocl_agent_state *s = &ocl_agent_state;
	struct oa_prog *op;

	if (!ocl_agent_recording())
		return;
	pthread_mutex_lock(&s->lock);
	op = oa_find_prog(s, prog);
	if (op && !op->inst) {
		free(op->options);
		op->options = options ? strdup(options) : NULL;
		free(op->devs);
		op->devs = NULL;
		op->ndev = 0;
		if (ndev && devs) {
			op->devs = calloc(ndev, sizeof(*devs));
			if (op->devs) {
				memcpy(op->devs, devs, ndev * sizeof(*devs));
				op->ndev = ndev;
			}
		}
	}
	pthread_mutex_unlock(&s->lock);
}

void ocl_agent_kernel_created(cl_kernel k, cl_program prog, const char *name)
{
	struct ocl_agent_state *s = &ocl_agent_state;
	struct oa_kernel *ok;

	if (!k || !ocl_agent_recording())
		return;
	ok = calloc(1, sizeof(*ok));
	if (!ok || !(ok->name = strdup(name ? name : ""))) {
		free(ok);
		return;
	}
	ok->app = k;
	ok->targeted = -1;
	pthread_mutex_lock(&s->lock);
	ok->prog = oa_find_prog(s, prog);
	ok->next = s->kernels;
	s->kernels = ok;
	pthread_mutex_unlock(&s->lock);
}

void ocl_agent_kernel_arg(cl_kernel k, cl_uint idx, size_t size, const void *value)
{
	struct ocl_agent_state *s = &ocl_agent_state;
	const struct ocl_api *cl = ocl_real();
	struct oa_kernel *ok;
	struct oa_arg *a;

	if (!ocl_agent_recording())
		return;
	pthread_mutex_lock(&s->lock);
	ok = oa_find_kernel(s, k);
	if (!ok)
		goto out;
	if (idx >= OA_ARGS_MAX || size > OA_ARG_MAX) {
		/* cannot replay it: the instrumented kernel would get other arguments */
		if (ok->state == 1 || ok->state == 0) {
			ok->state = -1;
			oa_report(GBPF_AGENT_EVENT_NOT_INSTRUMENTED, ok->name,
				  "argument %u (%zu bytes) beyond what the agent records (%u arguments of %u bytes)",
				  idx, size, OA_ARGS_MAX, OA_ARG_MAX);
		}
		goto out;
	}
	a = &ok->args[idx];
	free(a->value);
	a->value = NULL;
	a->size = size;
	a->set = 1;
	if (value) {
		a->value = malloc(size ? size : 1);
		if (!a->value) {
			a->set = 0;
			goto out;
		}
		memcpy(a->value, value, size);
	}
	if (idx + 1 > ok->nargs)
		ok->nargs = idx + 1;
	if (ok->state == 1 && ok->inst && cl && cl->SetKernelArg(ok->inst, idx, size, value) != CL_SUCCESS)
		a->set = 0; /* replayed (and reported) at the next launch */
out:
	pthread_mutex_unlock(&s->lock);
}

static void oa_kernel_free(const struct ocl_api *cl, struct oa_kernel *ok)
{
	for (cl_uint i = 0; i < ok->nargs; i++)
		free(ok->args[i].value);
	if (ok->inst && cl)
		cl->ReleaseKernel(ok->inst);
	free(ok->name);
	free(ok);
}

void ocl_agent_kernel_release(cl_kernel k, cl_uint refs)
{
	struct ocl_agent_state *s = &ocl_agent_state;
	struct oa_kernel **pp, *ok = NULL;

	if (refs != 1)
		return;
	pthread_mutex_lock(&s->lock);
	for (pp = &s->kernels; *pp; pp = &(*pp)->next)
		if ((*pp)->app == k) {
			ok = *pp;
			*pp = ok->next;
			break;
		}
	pthread_mutex_unlock(&s->lock);
	if (ok)
		oa_kernel_free(ocl_real(), ok);
}

static void oa_prog_free(const struct ocl_api *cl, struct oa_prog *op)
{
	if (cl && op->last) {
		/* the table must outlive the last instrumented launch */
		cl->WaitForEvents(1, &op->last);
		cl->ReleaseEvent(op->last);
	}
	if (cl && op->inst)
		cl->ReleaseProgram(op->inst);
	for (size_t i = 0; i < op->kernel_cnt; i++) {
		free(op->kernels[i].name);
		free(op->kernels[i].reason);
	}
	free(op->kernels);
	free(op->table);
	free(op->bytes);
	free(op->options);
	free(op->devs);
	free(op);
}

void ocl_agent_program_release(cl_program prog, cl_uint refs)
{
	struct ocl_agent_state *s = &ocl_agent_state;
	struct oa_prog **pp, *op = NULL;

	if (refs != 1)
		return;
	pthread_mutex_lock(&s->lock);
	for (pp = &s->programs; *pp; pp = &(*pp)->next)
		if ((*pp)->app == prog) {
			op = *pp;
			*pp = op->next;
			break;
		}
	/* kernels hold their program: any left point to it only if released out of order */
	for (struct oa_kernel *ok = s->kernels; op && ok; ok = ok->next)
		if (ok->prog == op)
			ok->prog = NULL;
	pthread_mutex_unlock(&s->lock);
	if (op)
		oa_prog_free(ocl_real(), op);
}

/* ---- per-work-item arrays ---- */

/*
 * PERGPUTHREAD_ARRAY maps hold one value per work-item of the launch
 * (docs/MAPS.md), but the controller's region has one slot (launch sizes
 * are unknown in advance). Each instrumented launch therefore gets private
 * blocks sized for its work-items; when the launch completes, each index's
 * values of all work-items are summed (as u64 words) into the region's
 * slot, so the host sees the launch's totals: threadhist counts every
 * exit. Values whose size is not a multiple of 8 keep work-item 0's.
 */
struct oa_launch_maps {
	atomic_int refs;   /* the completion callback and the launching thread */
	atomic_int folded; /* the first of them folds */
	size_t cnt;
	void *priv[GBPF_SPIRV_MAX_MAPS];             /* private block per map, NULL = none */
	struct gbpf_map_instance *dst[GBPF_SPIRV_MAX_MAPS];
};

static void oa_fold_one(const struct gbpf_map_hdr *src, struct gbpf_map_instance *dst)
{
	const struct gbpf_map_hdr *dh = dst->mem;
	uint64_t stride = GBPF_MAP_ROUND8(src->value_size), words = stride / 8;
	uint32_t n = src->nr_slots;

	if (!dh || dh->nr_slots < 1 || dh->max_entries != src->max_entries || dh->value_size != src->value_size)
		return;
	for (uint32_t i = 0; i < src->max_entries; i++) {
		const unsigned char *from = (const unsigned char *)src + src->data_off + (uint64_t)i * n * stride;
		unsigned char *to = (unsigned char *)dst->mem + dh->data_off + (uint64_t)i * dh->nr_slots * stride;

		if (src->value_size % 8) {
			memcpy(to, from, src->value_size);
			continue;
		}
		for (uint64_t w = 0; w < words; w++) {
			uint64_t sum = 0;

			for (uint32_t t = 0; t < n; t++)
				sum += ((const uint64_t *)(const void *)(from + (uint64_t)t * stride))[w];
			if (sum)
				__atomic_fetch_add((uint64_t *)(void *)to + w, sum, __ATOMIC_RELAXED);
		}
	}
}

static void oa_launch_maps_put(struct oa_launch_maps *lm, int fold)
{
	if (fold && !atomic_exchange(&lm->folded, 1))
		for (size_t i = 0; i < lm->cnt; i++)
			if (lm->priv[i])
				oa_fold_one(lm->priv[i], lm->dst[i]);
	if (atomic_fetch_sub(&lm->refs, 1) == 1) {
		for (size_t i = 0; i < lm->cnt; i++)
			free(lm->priv[i]);
		free(lm);
	}
}

static void CL_CALLBACK oa_launch_done(cl_event ev, cl_int status, void *arg)
{
	(void)ev;
	/* a failed launch (status < 0) wrote nothing worth folding */
	oa_launch_maps_put(arg, status == CL_COMPLETE);
}

/* Private per-work-item blocks for a launch of @p threads work-items; NULL when the object has none. */
static struct oa_launch_maps *oa_launch_maps_new(struct ocl_agent_state *s, struct oa_prog *op,
						 uint64_t threads, const char *kernel)
{
	struct oa_launch_maps *lm = NULL;
	size_t total = 0;

	for (size_t i = 0; i < s->map_cnt; i++) {
		const struct gbpf_map_desc *d = s->maps[i].desc;
		size_t size;
		void *mem;

		if (!d || d->type != GBPF_MAP_TYPE_PERGPUTHREAD_ARRAY)
			continue;
		if (!lm) {
			lm = calloc(1, sizeof(*lm));
			if (!lm)
				return NULL;
			atomic_init(&lm->refs, 2);
			lm->cnt = s->map_cnt;
		}
		size = threads && threads <= GBPF_MAP_MAX_SLOTS ? gbpf_map_mem_size(d, (uint32_t)threads) : 0;
		mem = size && size <= OA_THREAD_MAPS_MAX - total ? aligned_alloc(64, (size + 63) & ~(size_t)63) : NULL;
		if (mem && gbpf_map_mem_init(mem, size, d, (uint32_t)threads)) {
			free(mem);
			mem = NULL;
		}
		if (!mem) {
			oa_report(GBPF_AGENT_EVENT_INFO, kernel,
				  "map %s: %llu work-items exceed the per-work-item copies the agent allocates; "
				  "work-item 0 alone counts in it for this launch",
				  d->name ? d->name : "?", (unsigned long long)threads);
			continue;
		}
		total += size;
		lm->priv[i] = mem;
		lm->dst[i] = &s->maps[i];
		op->table->maps[i] = (uint64_t)(uintptr_t)mem;
	}
	return lm;
}

/* ---- trace_printk / puts ---- */

/** Records of the agent's print queue (256 bytes each: 4 MiB). */
#define OA_PRINTQ_SLOTS_DEFAULT 16384u

/* The print queue's address for context tables, 0 when printing is off (under the lock). */
static uint64_t oa_printq(struct ocl_agent_state *s)
{
	uint32_t slots = gbpf_spirv_printq_slots(OA_PRINTQ_SLOTS_DEFAULT);
	size_t size = gbpf_spirv_printq_size(slots);
	char why[256] = "";
	int rc;

	if (!s->prints)
		return 0;
	if (s->printq_state)
		return s->printq_state > 0 ? (uint64_t)(uintptr_t)s->printq : 0;
	s->printq_state = -1;
	s->printq = aligned_alloc(64, size);
	if (!s->printq || gbpf_spirv_printq_init(s->printq, size, slots)) {
		oa_report(GBPF_AGENT_EVENT_ERROR, NULL, "no memory for the print queue: trace_printk and puts "
			  "return -ENOTSUP on the device");
		goto fail;
	}
	rc = gbpf_spirv_agent_printer_start(s->printq, &s->svc, &s->printer, why, sizeof(why));
	if (rc) {
		oa_report(GBPF_AGENT_EVENT_ERROR, NULL, "%s", why[0] ? why : "the print thread could not start");
		goto fail;
	}
	s->printq_state = 1;
	return (uint64_t)(uintptr_t)s->printq;
fail:
	free(s->printq);
	s->printq = NULL;
	return 0;
}

/* A launch of a printing kernel completed: deliver its lines, report losses. */
static void oa_print_flush(const char *kernel)
{
	struct ocl_agent_state *s = &ocl_agent_state;

	if (s->printer)
		gbpf_spirv_agent_printer_flush(s->printer, &s->svc, kernel, 200);
}

/* (no kernel name: the app may release the kernel before its launch completes) */
static void CL_CALLBACK oa_print_done(cl_event ev, cl_int status, void *arg)
{
	(void)ev;
	(void)status;
	(void)arg;
	oa_print_flush(NULL);
}

/* ---- instrumentation (under the lock) ---- */

/* The devices of the program: those of its build, else those of the program object. */
static int oa_prog_devices(const struct ocl_api *cl, struct oa_prog *op)
{
	cl_uint n = 0;

	if (op->ndev)
		return 0;
	if (cl->GetProgramInfo(op->app, CL_PROGRAM_NUM_DEVICES, sizeof(n), &n, NULL) != CL_SUCCESS || !n ||
	    n > 64)
		return -ENODEV;
	op->devs = calloc(n, sizeof(*op->devs));
	if (!op->devs)
		return -ENOMEM;
	if (cl->GetProgramInfo(op->app, CL_PROGRAM_DEVICES, n * sizeof(*op->devs), op->devs, NULL) != CL_SUCCESS)
		return -ENODEV;
	op->ndev = n;
	return 0;
}

/* Every device must reach host memory at host addresses (the maps and the table). */
static int oa_devices_reach_host(const struct ocl_api *cl, struct oa_prog *op, int *has_il)
{
	*has_il = 1;
	for (cl_uint i = 0; i < op->ndev; i++) {
		cl_device_type type = 0;
		cl_device_svm_capabilities svm = 0;
		char il[256] = "", name[128] = "?";
		size_t il_len = 0;

		cl->GetDeviceInfo(op->devs[i], CL_DEVICE_NAME, sizeof(name) - 1, name, NULL);
		cl->GetDeviceInfo(op->devs[i], CL_DEVICE_TYPE, sizeof(type), &type, NULL);
		if (!(type & CL_DEVICE_TYPE_CPU) &&
		    (cl->GetDeviceInfo(op->devs[i], CL_DEVICE_SVM_CAPABILITIES, sizeof(svm), &svm, NULL) !=
			     CL_SUCCESS ||
		     !(svm & CL_DEVICE_SVM_FINE_GRAIN_SYSTEM))) {
			snprintf(op->why, sizeof(op->why),
				 "device %s cannot reach the maps: not a CPU device and no fine-grained system SVM",
				 name);
			return -ENOTSUP;
		}
		if (cl->GetDeviceInfo(op->devs[i], CL_DEVICE_IL_VERSION, sizeof(il) - 1, il, &il_len) != CL_SUCCESS ||
		    !strstr(il, "SPIR-V"))
			*has_il = 0;
	}
	return 0;
}

/* The application's module as SPIR-V: its IL, or its source compiled. */
static int oa_app_spirv(struct oa_prog *op, uint32_t **words, size_t *nwords)
{
	char log[768] = "";
	int rc;

	if (!op->bytes) {
		snprintf(op->why, sizeof(op->why), "%s",
			 op->kind == OCL_SRC_BINARY ? "program created from a device binary (not SPIR-V): not instrumentable"
						    : "program image not recorded (too large or created before gbpf)");
		return -ENOTSUP;
	}
	if (op->kind == OCL_SRC_IL) {
		*words = malloc(op->size);
		if (!*words)
			return -ENOMEM;
		memcpy(*words, op->bytes, op->size);
		*nwords = op->size / 4;
		return 0;
	}
	if (oa_fault("compile")) {
		snprintf(op->why, sizeof(op->why), "OpenCL C to SPIR-V failed: forced by GBPF_OPENCL_FAULT=compile");
		return -EPROTO;
	}
	rc = ocl_compile_source(op->bytes, op->size, op->options, words, nwords, log, sizeof(log));
	if (rc)
		snprintf(op->why, sizeof(op->why), "%s: %s",
			 rc == -ENOENT ? "OpenCL C program not instrumentable (clang-15 / llvm-spirv-15 not installed)"
				       : "OpenCL C to SPIR-V failed",
			 log);
	return rc;
}

/* Build the instrumented program of @p op; on failure op->why says why. */
static int oa_instrument_prog(struct ocl_agent_state *s, const struct ocl_api *cl, struct oa_prog *op)
{
	struct gbpf_spirv_inject_opts io = {.sz = sizeof(io)};
	struct gbpf_spirv_inject_result res = {0};
	uint32_t *words = NULL;
	size_t nwords = 0, i;
	void *bc = NULL;
	size_t bc_size = 0;
	char log[1024] = "";
	int has_il = 0, rc;
	cl_int err = CL_SUCCESS;

	if (!op->ctx && cl->GetProgramInfo(op->app, CL_PROGRAM_CONTEXT, sizeof(op->ctx), &op->ctx, NULL) != CL_SUCCESS) {
		snprintf(op->why, sizeof(op->why), "cannot query the program's context");
		return -EIO;
	}
	rc = oa_prog_devices(cl, op);
	if (rc) {
		snprintf(op->why, sizeof(op->why), "cannot query the program's devices");
		return rc;
	}
	rc = oa_devices_reach_host(cl, op, &has_il);
	if (rc)
		return rc;
	rc = oa_app_spirv(op, &words, &nwords);
	if (rc)
		return rc;
	op->table = aligned_alloc(64, sizeof(*op->table));
	if (!op->table) {
		rc = -ENOMEM;
		goto out;
	}
	memset(op->table, 0, sizeof(*op->table));
	for (i = 0; i < s->map_cnt; i++)
		op->table->maps[i] = (uint64_t)(uintptr_t)s->maps[i].mem;
	op->table->map_cnt = s->map_cnt;
	op->table->pid_tgid = ((uint64_t)getpid() << 32) | (uint32_t)gettid();
	op->table->printq = oa_printq(s);
	{
		cl_uint cus = 1;

		cl->GetDeviceInfo(op->devs[0], CL_DEVICE_MAX_COMPUTE_UNITS, sizeof(cus), &cus, NULL);
		op->table->nr_slots = cus ? cus : 1;
	}
	io.kernel_selected = oa_inject_selected;
	io.select_ctx = s;
	io.ctx_table = (uint64_t)(uintptr_t)op->table;
	io.allow_writes = s->allow_writes;
	io.flags = GBPF_SPIRV_DEVICE_TABLE;
	if (oa_fault("inject")) {
		snprintf(op->why, sizeof(op->why), "injection failed: forced by GBPF_OPENCL_FAULT=inject");
		rc = -EPROTO;
		goto out;
	}
	rc = gbpf_spirv_inject(words, nwords, s->dev, s->dev_cnt, &io, &res, log, sizeof(log));
	if (rc) {
		snprintf(op->why, sizeof(op->why), "injection failed (%d): %.900s", rc, log);
		goto out;
	}
	op->kernels = res.kernels;
	op->kernel_cnt = res.kernel_cnt;
	res.kernels = NULL;
	res.kernel_cnt = 0;
	if (has_il && cl->CreateProgramWithIL) {
		op->inst = cl->CreateProgramWithIL(op->ctx, res.words, res.word_count * 4, &err);
	} else {
		rc = gbpf_spirv_to_pocl(res.words, res.word_count, &bc, &bc_size, log, sizeof(log));
		if (rc) {
			snprintf(op->why, sizeof(op->why), "SPIR-V to LLVM bitcode for the device failed (%d): %.900s", rc,
				 log);
			goto out;
		}
		{
			const size_t *sizes = NULL;
			const unsigned char **bins = NULL;
			size_t *sz_arr = calloc(op->ndev, sizeof(*sz_arr));
			const unsigned char **bin_arr = calloc(op->ndev, sizeof(*bin_arr));

			if (!sz_arr || !bin_arr) {
				free(sz_arr);
				free(bin_arr);
				rc = -ENOMEM;
				goto out;
			}
			for (i = 0; i < op->ndev; i++) {
				sz_arr[i] = bc_size;
				bin_arr[i] = bc;
			}
			sizes = sz_arr;
			bins = bin_arr;
			op->inst = cl->CreateProgramWithBinary(op->ctx, op->ndev, op->devs, sizes, bins, NULL, &err);
			free(sz_arr);
			free(bin_arr);
		}
	}
	if (!op->inst || err != CL_SUCCESS) {
		snprintf(op->why, sizeof(op->why), "creating the instrumented program failed: %s (%d)",
			 ocl_strerror(err), err);
		op->inst = NULL;
		rc = -EIO;
		goto out;
	}
	err = oa_fault("build") ? CL_BUILD_PROGRAM_FAILURE
				: cl->BuildProgram(op->inst, op->ndev, op->devs, op->options, NULL, NULL);
	if (err != CL_SUCCESS) {
		char blog[300] = "";

		cl->GetProgramBuildInfo(op->inst, op->devs[0], CL_PROGRAM_BUILD_LOG, sizeof(blog) - 1, blog, NULL);
		snprintf(op->why, sizeof(op->why), "build of the instrumented program failed: %s%s%.290s",
			 oa_fault("build") ? "forced by GBPF_OPENCL_FAULT=build" : ocl_strerror(err),
			 blog[0] ? ": " : "", blog);
		cl->ReleaseProgram(op->inst);
		op->inst = NULL;
		rc = -EIO;
		goto out;
	}
	rc = 0;
out:
	free(bc);
	gbpf_spirv_inject_result_free(&res);
	free(words);
	return rc;
}

/* Replay every recorded argument on the instrumented kernel. */
static int oa_replay_args(const struct ocl_api *cl, struct oa_kernel *ok, char *why, size_t why_size)
{
	for (cl_uint i = 0; i < ok->nargs; i++) {
		cl_int err;

		if (!ok->args[i].set)
			continue;
		err = cl->SetKernelArg(ok->inst, i, ok->args[i].size, ok->args[i].value);
		if (err != CL_SUCCESS) {
			snprintf(why, why_size, "replaying argument %u on the instrumented kernel failed: %s", i,
				 ocl_strerror(err));
			return -EIO;
		}
	}
	return 0;
}

/* The instrumented kernel of @p ok, instrumenting at first use; 0 when it can be launched. */
static int oa_kernel_ready(struct ocl_agent_state *s, const struct ocl_api *cl, struct oa_kernel *ok)
{
	struct oa_prog *op = ok->prog;
	const struct gbpf_spirv_inject_kernel *ik = NULL;
	char why[512] = "";
	cl_int err = CL_SUCCESS;

	if (ok->state == 1)
		return 0;
	if (ok->state < 0)
		return -1;
	ok->state = -1; /* unless everything below works */
	if (!op) {
		oa_report(GBPF_AGENT_EVENT_NOT_INSTRUMENTED, ok->name,
			  "its program was not created through an intercepted call (clCompileProgram/"
			  "clLinkProgram, or before gbpf attached)");
		return -1;
	}
	if (op->state == 0) {
		op->state = oa_instrument_prog(s, cl, op) ? -1 : 1;
		if (op->state < 0) {
			oa_report(GBPF_AGENT_EVENT_NOT_INSTRUMENTED, ok->name, "%s", op->why);
			return -1;
		}
	} else if (op->state < 0) {
		oa_report(GBPF_AGENT_EVENT_NOT_INSTRUMENTED, ok->name, "%s", op->why);
		return -1;
	}
	for (size_t i = 0; i < op->kernel_cnt; i++)
		if (op->kernels[i].name && !strcmp(op->kernels[i].name, ok->name))
			ik = &op->kernels[i];
	if (!ik || !ik->instrumented) {
		oa_report(GBPF_AGENT_EVENT_NOT_INSTRUMENTED, ok->name, "%s",
			  ik && ik->reason ? ik->reason : "the injector did not find the kernel in its module");
		return -1;
	}
	ok->inst = cl->CreateKernel(op->inst, ok->name, &err);
	if (!ok->inst || err != CL_SUCCESS) {
		ok->inst = NULL;
		oa_report(GBPF_AGENT_EVENT_ERROR, ok->name, "instrumented program lacks the kernel: %s",
			  ocl_strerror(err));
		return -1;
	}
	if (oa_replay_args(cl, ok, why, sizeof(why))) {
		oa_report(GBPF_AGENT_EVENT_ERROR, ok->name, "%s", why);
		cl->ReleaseKernel(ok->inst);
		ok->inst = NULL;
		return -1;
	}
	ok->state = 1;
	oa_report(GBPF_AGENT_EVENT_INFO, ok->name, "instrumented (entry %u, exit %u, mem %u)%s", ik->n_entry,
		  ik->n_exit, ik->n_mem, op->kind == OCL_SRC_SOURCE ? "; OpenCL C compiled to SPIR-V" : "");
	return 0;
}

/*
 * Every platform's devices, as gbpf numbers OpenCL devices everywhere
 * (`gbpf --device N`, gbpf_spirv_cl_open, the plugin's device list):
 * clGetPlatformIDs order, then clGetDeviceIDs(CL_DEVICE_TYPE_ALL) order
 * within each platform. Listed once: the set does not change while the
 * process runs, and listing it costs several runtime calls per launch.
 */
static void oa_devs_load(void)
{
	const struct ocl_api *cl = ocl_real();
	struct ocl_agent_state *s = &ocl_agent_state;
	cl_platform_id plats[16];
	cl_uint np = 0, total = 0;

	if (!cl || cl->GetPlatformIDs(16, plats, &np) != CL_SUCCESS)
		return;
	for (cl_uint i = 0; i < np && i < 16 && total < 64; i++) {
		cl_uint nd = 0;

		if (cl->GetDeviceIDs(plats[i], CL_DEVICE_TYPE_ALL, 64 - total, s->devs + total, &nd) != CL_SUCCESS)
			continue;
		total += nd < 64 - total ? nd : 64 - total;
	}
	s->dev_list_cnt = total;
}

/* The number of the device queue @p q feeds (oa_devs_load); 0 when it is not among them. */
static uint32_t oa_queue_device(const struct ocl_api *cl, cl_command_queue q)
{
	struct ocl_agent_state *s = &ocl_agent_state;
	cl_device_id dev = NULL;

	if (!cl || !q || !cl->GetCommandQueueInfo ||
	    cl->GetCommandQueueInfo(q, CL_QUEUE_DEVICE, sizeof(dev), &dev, NULL) != CL_SUCCESS || !dev)
		return 0;
	pthread_once(&s->devs_once, oa_devs_load);
	for (cl_uint k = 0; k < s->dev_list_cnt; k++)
		if (s->devs[k] == dev)
			return k;
	return 0;
}

static void oa_run_host_launch(struct ocl_agent_state *s, cl_command_queue q, const struct oa_kernel *ok,
			       cl_uint dim, const size_t *global, const size_t *local, uint64_t *id)
{
	struct gbpf_host_launch_ctx c;
	int made = 0;

	for (size_t i = 0; i < s->prog_cnt; i++) {
		if (s->progs[i].attach.kind != GBPF_ATTACH_HOST_LAUNCH || !oa_selected(i, ok->name))
			continue;
		if (!*id)
			*id = s->svc.next_launch_id(s->svc.ctx);
		if (!made) {
			memset(&c, 0, sizeof(c));
			c.kernel_id = gbpf_kernel_id(ok->name);
			c.stream = (uint64_t)(uintptr_t)q;
			c.launch_id = *id;
			c.time_ns = oa_now_ns();
			c.device = oa_queue_device(ocl_real(), q);
			/* grid = work-groups, block = work-group size, as CUDA counts them */
			for (cl_uint d = 0; d < 3; d++) {
				size_t g = d < dim && global ? global[d] : 1, l = d < dim && local ? local[d] : 0;

				c.block[d] = (uint32_t)(l ? l : 1);
				c.grid[d] = (uint32_t)(l ? (g + l - 1) / l : g);
			}
			snprintf(c.kernel_name, sizeof(c.kernel_name), "%s", ok->name);
			made = 1;
		}
		s->svc.run_host_prog(s->svc.ctx, i, &c, sizeof(c), NULL);
	}
}

int ocl_agent_enqueue(cl_command_queue q, cl_kernel k, cl_uint dim, const size_t *offset,
		      const size_t *global, const size_t *local, cl_uint nwait, const cl_event *wait,
		      cl_event *event, cl_int *ret)
{
	struct ocl_agent_state *s = &ocl_agent_state;
	const struct ocl_api *cl = ocl_real();
	struct oa_launch_maps *lm = NULL;
	struct oa_kernel *ok;
	struct oa_prog *op;
	uint64_t id = 0;
	cl_event ev = NULL;
	cl_int err;
	int launched = 0;

	if (!cl || !ocl_agent_active())
		return 0;
	pthread_mutex_lock(&s->lock);
	ok = oa_find_kernel(s, k);
	if (!ok)
		goto out;
	oa_run_host_launch(s, q, ok, dim, global, local, &id);
	if (ok->targeted < 0)
		ok->targeted = oa_targeted(s, ok->name);
	if (!ok->targeted || oa_kernel_ready(s, cl, ok))
		goto out;
	op = ok->prog;
	for (cl_uint i = 0; i < ok->nargs; i++)
		if (!ok->args[i].set) {
			/* a replay failed at clSetKernelArg time: try again, else give up */
			char why[256];

			if (oa_replay_args(cl, ok, why, sizeof(why))) {
				oa_report(GBPF_AGENT_EVENT_ERROR, ok->name, "%s; the original kernel ran", why);
				goto out;
			}
			break;
		}
	if (!id)
		id = s->svc.next_launch_id(s->svc.ctx);
	if (op->last) {
		cl->WaitForEvents(1, &op->last);
		cl->ReleaseEvent(op->last);
		op->last = NULL;
	}
	op->table->launch_id = id;
	/* the program may be built for several devices: the module reads the device from the table */
	op->table->device = oa_queue_device(cl, q);
	op->table->time_base_ns = oa_now_ns();
	{
		uint64_t threads = 1;

		for (cl_uint d = 0; d < dim && global; d++)
			threads *= global[d];
		for (size_t i = 0; i < s->map_cnt; i++)
			op->table->maps[i] = (uint64_t)(uintptr_t)s->maps[i].mem;
		lm = oa_launch_maps_new(s, op, threads, ok->name);
	}
	err = oa_fault("launch") ? CL_OUT_OF_RESOURCES
				 : cl->EnqueueNDRangeKernel(q, ok->inst, dim, offset, global, local, nwait, wait, &ev);
	if (err == CL_SUCCESS && lm && cl->SetEventCallback(ev, CL_COMPLETE, oa_launch_done, lm) != CL_SUCCESS) {
		/* no callback: fold when the launch is waited for below */
		atomic_fetch_sub(&lm->refs, 1);
	}
	if (err == CL_SUCCESS && s->printer && op->table->printq) {
		/*
		 * Print lines of this launch: flush once it completes. Without a wait
		 * list wait here (as for per-work-item maps), so the lines reach the
		 * controller before the app can see the launch end and exit.
		 */
		if (nwait == 0)
			cl->WaitForEvents(1, &ev);
		if (nwait == 0 || cl->SetEventCallback(ev, CL_COMPLETE, oa_print_done, NULL) != CL_SUCCESS)
			oa_print_flush(ok->name);
	}
	if (err == CL_SUCCESS && lm && nwait == 0) {
		/*
		 * Nothing the launch waits for can be held back by the app, so wait
		 * here: the totals are in the map before the app can observe the
		 * launch's end (and exit). With a wait list the callback folds.
		 */
		cl->WaitForEvents(1, &ev);
		oa_launch_maps_put(lm, 1);
		lm = NULL;
	} else if (err == CL_SUCCESS && lm) {
		oa_launch_maps_put(lm, 0);
		lm = NULL;
	}
	if (err != CL_SUCCESS) {
		oa_report(GBPF_AGENT_EVENT_ERROR, ok->name, "launch of the instrumented kernel failed: %s%s; the "
			  "original kernel ran", ocl_strerror(err), oa_fault("launch") ? " (forced by GBPF_OPENCL_FAULT=launch)" : "");
		if (lm) {
			/* neither the callback nor a fold will come */
			for (size_t i = 0; i < lm->cnt; i++)
				free(lm->priv[i]);
			free(lm);
		}
		goto out;
	}
	op->last = ev;
	if (event) {
		cl->RetainEvent(ev);
		*event = ev;
	}
	*ret = CL_SUCCESS;
	launched = 1;
out:
	pthread_mutex_unlock(&s->lock);
	return launched;
}

/* ---- attach / detach ---- */

/* Index in opts->maps of the first map of @p p's object, or -1. */
static long oa_map_base(const struct gbpf_agent_attach_opts *o, const struct gbpf_prog_desc *p)
{
	for (size_t k = 0; p->map_cnt && k + p->map_cnt <= o->map_cnt; k++)
		if (o->maps[k].desc == &p->maps[0] ||
		    (o->maps[k].desc && o->maps[k].desc->name && p->maps[0].name &&
		     !strcmp(o->maps[k].desc->name, p->maps[0].name)))
			return (long)k;
	return p->map_cnt ? -1 : 0;
}

/*
 * Drop what an earlier attach instrumented (kernels, programs, context
 * tables): it was built for that attach's programs and maps. The recorded
 * sources, options and arguments stay.
 */
static void oa_forget_instrumentation(struct ocl_agent_state *s)
{
	const struct ocl_api *cl = ocl_real();

	pthread_mutex_lock(&s->lock);
	for (struct oa_kernel *ok = s->kernels; ok; ok = ok->next) {
		if (ok->inst && cl)
			cl->ReleaseKernel(ok->inst);
		ok->inst = NULL;
		ok->state = 0;
		ok->targeted = -1;
	}
	for (struct oa_prog *op = s->programs; op; op = op->next) {
		if (cl && op->last) {
			cl->WaitForEvents(1, &op->last);
			cl->ReleaseEvent(op->last);
		}
		op->last = NULL;
		if (cl && op->inst)
			cl->ReleaseProgram(op->inst);
		op->inst = NULL;
		for (size_t i = 0; i < op->kernel_cnt; i++) {
			free(op->kernels[i].name);
			free(op->kernels[i].reason);
		}
		free(op->kernels);
		op->kernels = NULL;
		op->kernel_cnt = 0;
		free(op->table);
		op->table = NULL;
		op->state = 0;
		op->why[0] = 0;
	}
	pthread_mutex_unlock(&s->lock);
}

int gbpf_ocl_agent_attach(struct gbpf_backend *be, const struct gbpf_agent_attach_opts *o, char *log,
			  size_t log_size)
{
	struct ocl_agent_state *s = &ocl_agent_state;
	const struct gbpf_prog_desc *first = NULL;
	long base = 0;

	(void)be;
	if (!o || !o->services || (o->prog_cnt && !o->progs) || (o->map_cnt && !o->maps)) {
		snprintf(log, log_size, "opencl agent: bad attach options");
		return -EINVAL;
	}
	if (atomic_load(&s->attached)) {
		snprintf(log, log_size, "opencl agent: already attached");
		return -EBUSY;
	}
	/* A re-attach may bring other programs and maps: instrument afresh at the next launch. */
	oa_forget_instrumentation(s);
	if (!ocl_real()) {
		char why[256] = "";
		struct ocl_api tmp;

		ocl_api_open(&tmp, why, sizeof(why));
		snprintf(log, log_size, "opencl agent: %s", why);
		return -ENODEV;
	}
	pthread_mutex_lock(&s->lock);
	free(s->dev);
	free(s->dev_origin);
	s->dev_cnt = 0;
	s->svc = *o->services;
	s->progs = o->progs;
	s->prog_cnt = o->prog_cnt;
	s->allow_writes = (o->flags & GBPF_AGENT_F_ALLOW_APP_WRITES) ? 1 : 0;
	s->maps = NULL;
	s->map_cnt = 0;
	s->prints = 0;
	s->dev = calloc(o->prog_cnt ? o->prog_cnt : 1, sizeof(*s->dev));
	s->dev_origin = calloc(o->prog_cnt ? o->prog_cnt : 1, sizeof(*s->dev_origin));
	if (!s->dev || !s->dev_origin) {
		pthread_mutex_unlock(&s->lock);
		return -ENOMEM;
	}
	/* One object's device programs: they share its map table (one context table). */
	for (size_t i = 0; i < o->prog_cnt; i++) {
		const struct gbpf_prog_desc *p = &o->progs[i];

		if (!gbpf_attach_is_device(p->attach.kind))
			continue;
		if (gbpf_spirv_site_unsupported(p->attach.kind)) {
			oa_report(GBPF_AGENT_EVENT_NOT_INSTRUMENTED, NULL, "%s: program '%s' (section %s) not attached: %s",
			          p->source_file ? p->source_file : "?", p->name ? p->name : "?",
			          p->section ? p->section : "?", gbpf_spirv_site_unsupported(p->attach.kind));
			continue;
		}
		if (!first) {
			first = p;
			base = oa_map_base(o, p);
			if (base < 0 || p->map_cnt > GBPF_SPIRV_MAX_MAPS) {
				snprintf(log, log_size, "opencl agent: %s: program '%s': %s",
					 p->source_file ? p->source_file : "?", p->name ? p->name : "?",
					 base < 0 ? "its maps are not in the region" : "more maps than the context table holds");
				pthread_mutex_unlock(&s->lock);
				return -EINVAL;
			}
		} else if (p->maps != first->maps) {
			oa_report(GBPF_AGENT_EVENT_NOT_INSTRUMENTED, NULL,
				  "%s: program '%s' not attached: device programs of one object only (%s)",
				  p->source_file ? p->source_file : "?", p->name ? p->name : "?",
				  first->source_file ? first->source_file : "?");
			continue;
		}
		s->dev[s->dev_cnt] = p;
		s->dev_origin[s->dev_cnt++] = i;
		if (gbpf_spirv_prog_prints(p))
			s->prints = 1;
	}
	if (first) {
		s->maps = o->maps + base;
		s->map_cnt = first->map_cnt;
	}
	atomic_store(&s->attached, 1);
	atomic_store(&ocl_agent_recording_on, 1);
	pthread_mutex_unlock(&s->lock);
	return 0;
}

void gbpf_ocl_agent_detach(struct gbpf_backend *be)
{
	(void)be;
	/* Instrumented programs and tables stay: a launch in flight may use them. */
	atomic_store(&ocl_agent_state.attached, 0);
	/*
	 * The maps stay mapped only until we return (plugin.h): a launch being
	 * enqueued holds the lock; then wait for the last instrumented launch of
	 * each program (launches of one program are serialised).
	 */
	pthread_mutex_lock(&ocl_agent_state.lock);
	for (struct oa_prog *op = ocl_agent_state.programs; op; op = op->next)
		if (op->last && ocl_real())
			ocl_real()->WaitForEvents(1, &op->last);
	pthread_mutex_unlock(&ocl_agent_state.lock);
	/* the printer stays too (such a launch may still print): deliver what is there */
	oa_print_flush(NULL);
}

/* At exit: lines of launches the app never waited for through the agent. */
__attribute__((destructor)) static void oa_print_fini(void)
{
	oa_print_flush(NULL);
}
