/* SPDX-License-Identifier: MIT */
/*
 * plugins/levelzero/l0_agent.c - `gbpf run` inside a Level Zero
 * application: agent_attach / agent_detach and the interception hooks.
 *
 * Modules: at zeModuleCreate, a SPIR-V module goes through
 * gbpf_spirv_inject (every device program of the object, kernels selected
 * by their attach targets); the instrumented words replace the module
 * descriptor's and stay alive for the process. Native modules and any
 * failure are reported and the application's module is created as is.
 *
 * Maps: the device works on the very bytes of the shared-memory region
 * the controller prints. The region (and the context table with its
 * launch-id slots, in page-aligned host memory) is made device-visible with
 * the driver extension zexDriverImportExternalPointer (Intel's compute
 * runtime has it; so has the test driver). No copy protocol: a driver
 * without the extension gets its modules reported as not instrumented.
 *
 * Launch ids: the context table's launch_id is written in stream order, by
 * a copy from a per-launch slot appended to the application's command list
 * before the launch (after its wait events) and a barrier, so that launches
 * queued on regular lists and run later see their own id.
 *
 * Devices: gbpf_gpu_ctx.device is a constant of each instrumented module
 * (zeModuleCreate builds a module for one device): the device's number
 * among the GPU devices of every driver (l0_device_ordinal). host/launch
 * probes see the same number for kernels of instrumented modules; 0 for
 * other kernels (the agent does not record their module's device).
 *
 * trace_printk / puts: one print queue (page-aligned host memory, imported
 * as the table) drained by a printer thread while kernels run, and flushed
 * after every successful host wait for the device (queue, event and fence
 * synchronize), when lost lines are reported with their count.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <gbpf/probe_ctx.h>

#include "l0_agent.h"
#include "l0_loader.h"
#include "spirv.h"

/** Launch-id slots after the context table (a launch's slot is reused 4096 launches later). */
#define L0_ID_SLOTS 4096u
#define L0_PAGE 4096u

typedef ze_result_t (*l0_import_fn)(ze_driver_handle_t, void *, size_t);

struct l0_module {
	ze_module_desc_t desc; /* the instrumented descriptor */
	struct gbpf_spirv_inject_result res;
	ze_module_handle_t handle;
	int live; /* 1 once created with the instrumented words */
	uint32_t device; /* l0_device_ordinal() of the device it is built for */
	struct l0_module *next;
};

struct l0_kernel {
	ze_kernel_handle_t handle;
	char name[64];
	int instrumented;
	uint32_t device; /* its module's device (l0_device_ordinal), 0 when its module was not instrumented */
	uint32_t group[3];
	struct l0_kernel *next;
};

/** Everything the agent side holds: one per process. */
static struct l0_agent_state {
	pthread_mutex_t lock;
	atomic_int attached;
	struct gbpf_agent_services svc;
	const struct gbpf_prog_desc *progs;
	size_t prog_cnt;
	const struct gbpf_prog_desc **dp; /* device programs of one object */
	size_t *dev;                      /* their indices in progs */
	size_t dev_cnt;
	struct gbpf_map_instance *maps;   /* that object's maps */
	size_t map_cnt;
	uint32_t flags;
	int table_state; /* 0 not yet, 1 ready, -1 failed (reason in table_why) */
	char table_why[256];
	struct gbpf_spirv_ctx_table *table;
	uint64_t *slots;
	struct l0_module *modules;
	struct l0_kernel *kernels;
	int prints; /* a device program calls trace_printk / puts */
	void *printq;
	struct gbpf_spirv_printer *printer;
} l0_agent_state = {.lock = PTHREAD_MUTEX_INITIALIZER};

int l0_agent_active(void)
{
	return atomic_load(&l0_agent_state.attached);
}

void l0_agent_report(enum gbpf_agent_event ev, const char *kernel, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	gbpf_agent_vreportf(&l0_agent_state.svc, ev, kernel, fmt, ap);
	va_end(ap);
}

static uint64_t l0_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* gbpf_spirv_inject numbers programs in s->dp; the agent core in progs. */
static int l0_inject_selected(void *ctx, size_t prog_index, const char *name)
{
	struct l0_agent_state *s = ctx;

	if (prog_index >= s->dev_cnt || !s->svc.kernel_selected)
		return 0;
	return s->svc.kernel_selected(s->svc.ctx, s->dev[prog_index], name ? name : "");
}

static int l0_any_selected(const char *name)
{
	for (size_t i = 0; i < l0_agent_state.dev_cnt; i++)
		if (l0_inject_selected(&l0_agent_state, i, name))
			return 1;
	return 0;
}

/** Records of the print queue (256 bytes each: 4 MiB; launches queued together share it). */
#define L0_PRINTQ_SLOTS_DEFAULT 16384u

/* The print queue, imported like the table; failures only turn printing off. */
static void l0_printq_setup(struct l0_agent_state *s, ze_driver_handle_t drv, l0_import_fn import)
{
	uint32_t slots = gbpf_spirv_printq_slots(L0_PRINTQ_SLOTS_DEFAULT);
	size_t size = (gbpf_spirv_printq_size(slots) + L0_PAGE - 1) & ~(size_t)(L0_PAGE - 1);
	char why[256] = "";
	ze_result_t zr;

	if (!s->prints)
		return;
	if (posix_memalign(&s->printq, L0_PAGE, size) ||
	    gbpf_spirv_printq_init(s->printq, size, slots)) {
		snprintf(why, sizeof(why), "no memory for the print queue");
		goto fail;
	}
	zr = import(drv, s->printq, size);
	if (zr != ZE_RESULT_SUCCESS) {
		snprintf(why, sizeof(why), "zexDriverImportExternalPointer(print queue, %zu bytes): 0x%x", size,
			 (unsigned)zr);
		goto fail;
	}
	if (gbpf_spirv_agent_printer_start(s->printq, &s->svc, &s->printer, why, sizeof(why)))
		goto fail;
	s->table->printq = (uint64_t)(uintptr_t)s->printq;
	return;
fail:
	l0_agent_report(GBPF_AGENT_EVENT_ERROR, NULL, "%s; trace_printk and puts return -ENOTSUP on the device",
			why[0] ? why : "the print thread could not start");
	free(s->printq);
	s->printq = NULL;
}

void l0_agent_synced(void)
{
	struct l0_agent_state *s = &l0_agent_state;

	if (s->printer)
		gbpf_spirv_agent_printer_flush(s->printer, &s->svc, NULL, 200);
}

/*
 * The context table and the map region, made device-visible once (under
 * s->lock). Returns 0 or -errno with the reason in s->table_why.
 */
static int l0_table_setup(const struct l0_loader *l, ze_device_handle_t dev)
{
	struct l0_agent_state *s = &l0_agent_state;
	ze_device_properties_t p = {.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES};
	ze_driver_handle_t drv = NULL;
	l0_import_fn import = NULL;
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	size_t size, i;
	uint32_t n = 1;
	ze_result_t zr;

	if (s->table_state)
		return s->table_state > 0 ? 0 : -ENOTSUP;
	s->table_state = -1;
	if (l->zeDriverGet(&n, &drv) != ZE_RESULT_SUCCESS || !n || !drv) {
		snprintf(s->table_why, sizeof(s->table_why), "zeDriverGet found no driver");
		return -ENODEV;
	}
	if (l->zeDriverGetExtensionFunctionAddress(drv, "zexDriverImportExternalPointer",
						   (void **)&import) != ZE_RESULT_SUCCESS ||
	    !import) {
		snprintf(s->table_why, sizeof(s->table_why),
			 "the driver lacks zexDriverImportExternalPointer: maps cannot be made "
			 "device-visible in place");
		return -ENOTSUP;
	}
	size = (sizeof(*s->table) + L0_ID_SLOTS * sizeof(uint64_t) + L0_PAGE - 1) & ~(size_t)(L0_PAGE - 1);
	if (posix_memalign((void **)&s->table, L0_PAGE, size)) {
		snprintf(s->table_why, sizeof(s->table_why), "no memory for the context table");
		return -ENOMEM;
	}
	memset(s->table, 0, size);
	s->slots = (uint64_t *)(s->table + 1);
	zr = import(drv, s->table, size);
	if (zr != ZE_RESULT_SUCCESS) {
		snprintf(s->table_why, sizeof(s->table_why),
			 "zexDriverImportExternalPointer(context table, %zu bytes): 0x%x", size,
			 (unsigned)zr);
		goto fail;
	}
	for (i = 0; i < s->map_cnt; i++) {
		uintptr_t m = (uintptr_t)s->maps[i].mem;

		if (!m || !s->maps[i].mem_size)
			continue;
		lo = m < lo ? m : lo;
		hi = m + s->maps[i].mem_size > hi ? m + s->maps[i].mem_size : hi;
		s->table->maps[i] = (uint64_t)m;
	}
	if (hi > lo) {
		/* The maps share one mapping of the region: import it whole, page-rounded. */
		lo &= ~(uintptr_t)(L0_PAGE - 1);
		hi = (hi + L0_PAGE - 1) & ~(uintptr_t)(L0_PAGE - 1);
		zr = import(drv, (void *)lo, hi - lo);
		if (zr != ZE_RESULT_SUCCESS) {
			snprintf(s->table_why, sizeof(s->table_why),
				 "zexDriverImportExternalPointer(map region, %zu bytes): 0x%x",
				 (size_t)(hi - lo), (unsigned)zr);
			goto fail;
		}
	}
	s->table->pid_tgid = ((uint64_t)getpid() << 32) | (uint32_t)getpid();
	s->table->time_base_ns = l0_now_ns();
	s->table->map_cnt = s->map_cnt;
	if (dev && l->zeDeviceGetProperties(dev, &p) == ZE_RESULT_SUCCESS)
		s->table->nr_slots = (uint64_t)p.numSlices * p.numSubslicesPerSlice * p.numEUsPerSubslice;
	if (!s->table->nr_slots)
		s->table->nr_slots = 1;
	l0_printq_setup(s, drv, import);
	s->table_state = 1;
	return 0;
fail:
	free(s->table);
	s->table = NULL;
	s->slots = NULL;
	return -EIO;
}

/*
 * The number of device @p dev as gbpf numbers Level Zero devices (`gbpf
 * --device N`, the plugin's device list, l0_query): its index among the
 * GPU devices of every driver, in zeDriverGet then zeDeviceGet order. 0
 * when it is not one of them (a sub-device handle, say).
 */
static uint32_t l0_device_ordinal(const struct l0_loader *l, ze_device_handle_t dev)
{
	ze_driver_handle_t drivers[16];
	uint32_t nd = 16, n_gpu = 0;

	if (!dev || l->zeDriverGet(&nd, drivers) != ZE_RESULT_SUCCESS)
		return 0;
	for (uint32_t i = 0; i < nd && i < 16; i++) {
		ze_device_handle_t devs[64];
		uint32_t n = 64;

		if (l->zeDeviceGet(drivers[i], &n, devs) != ZE_RESULT_SUCCESS)
			continue;
		for (uint32_t j = 0; j < n && j < 64; j++) {
			ze_device_properties_t p = {.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES};

			if (l->zeDeviceGetProperties(devs[j], &p) != ZE_RESULT_SUCCESS || p.type != ZE_DEVICE_TYPE_GPU)
				continue;
			if (devs[j] == dev)
				return n_gpu;
			n_gpu++;
		}
	}
	return 0;
}

const ze_module_desc_t *l0_agent_module_pre(ze_context_handle_t ctx, ze_device_handle_t dev,
					    const ze_module_desc_t *desc, int trial, void **cookie)
{
	struct l0_agent_state *s = &l0_agent_state;
	const struct l0_loader *l = l0_loader_get();
	struct gbpf_spirv_inject_opts io = {.sz = sizeof(io)};
	struct l0_module *m = NULL;
	char err[512] = "";
	size_t i, n_ins = 0;
	int rc;

	*cookie = NULL;
	if (!l0_agent_active() || !s->dev_cnt || !desc || !l)
		return NULL;
	if (desc->format != ZE_MODULE_FORMAT_IL_SPIRV) {
		l0_agent_report(GBPF_AGENT_EVENT_NOT_INSTRUMENTED, NULL,
				"zeModuleCreate: native module (%zu bytes): only SPIR-V modules can be "
				"instrumented; it runs as is",
				desc->inputSize);
		return NULL;
	}
	if (!desc->pInputModule || desc->inputSize < 20 || desc->inputSize % 4) {
		l0_agent_report(GBPF_AGENT_EVENT_NOT_INSTRUMENTED, NULL,
				"zeModuleCreate: SPIR-V module of %zu bytes is malformed; it runs as is",
				desc->inputSize);
		return NULL;
	}
	pthread_mutex_lock(&s->lock);
	rc = l0_table_setup(l, dev);
	pthread_mutex_unlock(&s->lock);
	if (rc) {
		l0_agent_report(GBPF_AGENT_EVENT_NOT_INSTRUMENTED, NULL,
				"zeModuleCreate: %s; the module runs uninstrumented", s->table_why);
		return NULL;
	}
	m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	io.kernel_selected = l0_inject_selected;
	io.select_ctx = s;
	io.ctx_table = (uint64_t)(uintptr_t)s->table;
	io.allow_writes = !!(s->flags & GBPF_AGENT_F_ALLOW_APP_WRITES);
	/* a module is built for one device: its number is a constant of the module */
	m->device = io.device = l0_device_ordinal(l, dev);
	rc = gbpf_spirv_inject((const uint32_t *)desc->pInputModule, desc->inputSize / 4, s->dp,
			       s->dev_cnt, &io, &m->res, err, sizeof(err));
	if (rc) {
		l0_agent_report(GBPF_AGENT_EVENT_ERROR, NULL,
				"zeModuleCreate: SPIR-V injection failed (%d): %s; the module runs "
				"uninstrumented",
				rc, err);
		free(m);
		return NULL;
	}
	for (i = 0; i < m->res.kernel_cnt; i++) {
		const struct gbpf_spirv_inject_kernel *k = &m->res.kernels[i];

		if (k->instrumented) {
			n_ins++;
		} else if (l0_any_selected(k->name)) {
			l0_agent_report(GBPF_AGENT_EVENT_NOT_INSTRUMENTED, k->name, "%s",
					k->reason ? k->reason : "not instrumented");
		}
	}
	if (!n_ins) {
		gbpf_spirv_inject_result_free(&m->res);
		free(m);
		return NULL;
	}
	m->desc = *desc;
	m->desc.pInputModule = (const uint8_t *)m->res.words;
	m->desc.inputSize = m->res.word_count * 4;
	if (trial) {
		ze_module_handle_t probe = NULL;
		ze_result_t zr = l->zeModuleCreate(ctx, dev, &m->desc, &probe, NULL);

		if (zr != ZE_RESULT_SUCCESS) {
			l0_agent_report(GBPF_AGENT_EVENT_ERROR, NULL,
					"zeModuleCreate: the driver refused the instrumented module "
					"(0x%x); the module runs uninstrumented",
					(unsigned)zr);
			gbpf_spirv_inject_result_free(&m->res);
			free(m);
			return NULL;
		}
		l->zeModuleDestroy(probe);
	}
	*cookie = m;
	return &m->desc;
}

void l0_agent_module_post(void *cookie, ze_result_t r, ze_module_handle_t mod, int instrumented)
{
	struct l0_agent_state *s = &l0_agent_state;
	struct l0_module *m = cookie;
	size_t i;

	if (!m)
		return;
	if (r != ZE_RESULT_SUCCESS || !instrumented) {
		/* The words may still be read by a driver that kept the pointer: keep them. */
		pthread_mutex_lock(&s->lock);
		m->next = s->modules;
		s->modules = m;
		pthread_mutex_unlock(&s->lock);
		return;
	}
	m->handle = mod;
	m->live = 1;
	for (i = 0; i < m->res.kernel_cnt; i++)
		if (m->res.kernels[i].instrumented)
			l0_agent_report(GBPF_AGENT_EVENT_INFO, m->res.kernels[i].name,
					"instrumented (entry %u, exit %u, mem %u probe calls)",
					m->res.kernels[i].n_entry, m->res.kernels[i].n_exit,
					m->res.kernels[i].n_mem);
	pthread_mutex_lock(&s->lock);
	m->next = s->modules;
	s->modules = m;
	pthread_mutex_unlock(&s->lock);
}

void l0_agent_kernel_created(ze_module_handle_t mod, const char *name, ze_kernel_handle_t k)
{
	struct l0_agent_state *s = &l0_agent_state;
	struct l0_kernel *rec;
	struct l0_module *m;
	size_t i;

	if (!l0_agent_active() || !k || !name)
		return;
	rec = calloc(1, sizeof(*rec));
	if (!rec)
		return;
	rec->handle = k;
	snprintf(rec->name, sizeof(rec->name), "%s", name);
	rec->group[0] = rec->group[1] = rec->group[2] = 1;
	pthread_mutex_lock(&s->lock);
	for (m = s->modules; m; m = m->next) {
		if (!m->live || m->handle != mod)
			continue;
		for (i = 0; i < m->res.kernel_cnt; i++)
			if (m->res.kernels[i].instrumented && !strcmp(m->res.kernels[i].name, name)) {
				rec->instrumented = 1;
				rec->device = m->device;
			}
	}
	rec->next = s->kernels;
	s->kernels = rec;
	pthread_mutex_unlock(&s->lock);
}

static struct l0_kernel *l0_kernel_find(ze_kernel_handle_t k)
{
	struct l0_kernel *rec;

	for (rec = l0_agent_state.kernels; rec; rec = rec->next)
		if (rec->handle == k)
			return rec;
	return NULL;
}

void l0_agent_group_size(ze_kernel_handle_t k, uint32_t x, uint32_t y, uint32_t z)
{
	struct l0_agent_state *s = &l0_agent_state;
	struct l0_kernel *rec;

	pthread_mutex_lock(&s->lock);
	rec = l0_kernel_find(k);
	if (rec) {
		rec->group[0] = x;
		rec->group[1] = y;
		rec->group[2] = z;
	}
	pthread_mutex_unlock(&s->lock);
}

void l0_agent_launch_pre(ze_command_list_handle_t list, ze_kernel_handle_t k,
			 const ze_group_count_t *count, uint32_t nwait, ze_event_handle_t *wait)
{
	struct l0_agent_state *s = &l0_agent_state;
	const struct l0_loader *l = l0_loader_get();
	struct gbpf_host_launch_ctx hc;
	struct l0_kernel rec;
	int have_id = 0, found = 0;
	uint64_t id = 0;
	size_t i;

	if (!l0_agent_active() || !l)
		return;
	pthread_mutex_lock(&s->lock);
	if (l0_kernel_find(k)) {
		rec = *l0_kernel_find(k);
		found = 1;
	}
	pthread_mutex_unlock(&s->lock);
	if (!found)
		return;
	memset(&hc, 0, sizeof(hc));
	for (i = 0; i < s->prog_cnt; i++) {
		uint64_t r0;

		if (s->progs[i].attach.kind != GBPF_ATTACH_HOST_LAUNCH || !s->svc.kernel_selected ||
		    !s->svc.kernel_selected(s->svc.ctx, i, rec.name))
			continue;
		if (!have_id) {
			id = s->svc.next_launch_id(s->svc.ctx);
			have_id = 1;
			hc.kernel_id = gbpf_kernel_id(rec.name);
			hc.stream = (uint64_t)(uintptr_t)list;
			hc.launch_id = id;
			hc.time_ns = l0_now_ns();
			hc.device = rec.device;
			if (count) {
				hc.grid[0] = count->groupCountX;
				hc.grid[1] = count->groupCountY;
				hc.grid[2] = count->groupCountZ;
			}
			memcpy(hc.block, rec.group, sizeof(hc.block));
			snprintf(hc.kernel_name, sizeof(hc.kernel_name), "%s", rec.name);
		}
		s->svc.run_host_prog(s->svc.ctx, i, &hc, sizeof(hc), &r0);
	}
	if (!rec.instrumented || !s->table)
		return;
	if (!have_id)
		id = s->svc.next_launch_id(s->svc.ctx);
	s->slots[id % L0_ID_SLOTS] = id;
	/* Loader calls made here bypass the tracing layer and the interposers. */
	if (l->zeCommandListAppendMemoryCopy(list, &s->table->launch_id, &s->slots[id % L0_ID_SLOTS],
					     sizeof(uint64_t), NULL, nwait, wait) != ZE_RESULT_SUCCESS ||
	    l->zeCommandListAppendBarrier(list, NULL, 0, NULL) != ZE_RESULT_SUCCESS)
		l0_agent_report(GBPF_AGENT_EVENT_ERROR, rec.name,
				"launch %llu: the launch id could not be queued; probes of this "
				"launch may see another launch's id",
				(unsigned long long)id);
}

/* Maps of one object: a device program's maps lie at some offset of the region's list. */
static long l0_map_base(const struct gbpf_agent_attach_opts *o, const struct gbpf_prog_desc *p)
{
	for (size_t k = 0; p->map_cnt && k + p->map_cnt <= o->map_cnt; k++)
		if (o->maps[k].desc == &p->maps[0] ||
		    (o->maps[k].desc && o->maps[k].desc->name && p->maps[0].name &&
		     !strcmp(o->maps[k].desc->name, p->maps[0].name)))
			return (long)k;
	return p->map_cnt ? -1 : 0;
}

int gbpf_l0_agent_attach(struct gbpf_backend *be, const struct gbpf_agent_attach_opts *o, char *log,
			 size_t log_size)
{
	struct l0_agent_state *s = &l0_agent_state;
	const struct gbpf_prog_desc *first = NULL;
	long base = 0;

	(void)be;
	if (!o || !o->services || (o->prog_cnt && !o->progs) || (o->map_cnt && !o->maps)) {
		snprintf(log, log_size, "levelzero agent: bad attach options");
		return -EINVAL;
	}
	if (atomic_load(&s->attached)) {
		snprintf(log, log_size, "levelzero agent: already attached");
		return -EBUSY;
	}
	if (l0_intercept_mode() == L0_MODE_OFF) {
		snprintf(log, log_size,
			 "levelzero agent: the plugin is not preloaded into the application "
			 "(gbpf run preloads it); nothing can be intercepted");
		return -ENOTSUP;
	}
	pthread_mutex_lock(&s->lock);
	free(s->dp);
	free(s->dev);
	s->dp = calloc(o->prog_cnt ? o->prog_cnt : 1, sizeof(*s->dp));
	s->dev = calloc(o->prog_cnt ? o->prog_cnt : 1, sizeof(*s->dev));
	s->dev_cnt = 0;
	s->prints = 0;
	if (!s->dp || !s->dev) {
		pthread_mutex_unlock(&s->lock);
		snprintf(log, log_size, "levelzero agent: out of memory");
		return -ENOMEM;
	}
	s->svc = *o->services;
	s->progs = o->progs;
	s->prog_cnt = o->prog_cnt;
	s->flags = o->flags;
	/* One object's device programs (they share its map table), as the cuda agent. */
	for (size_t i = 0; i < o->prog_cnt; i++) {
		const struct gbpf_prog_desc *p = &o->progs[i];

		if (!gbpf_attach_is_device(p->attach.kind))
			continue;
		if (gbpf_spirv_site_unsupported(p->attach.kind)) {
			l0_agent_report(GBPF_AGENT_EVENT_NOT_INSTRUMENTED, NULL, "%s: program '%s' (section %s) not attached: %s",
			                p->source_file ? p->source_file : "?", p->name ? p->name : "?",
			                p->section ? p->section : "?", gbpf_spirv_site_unsupported(p->attach.kind));
			continue;
		}
		if (!first) {
			first = p;
			base = l0_map_base(o, p);
			if (base < 0) {
				pthread_mutex_unlock(&s->lock);
				snprintf(log, log_size,
					 "levelzero agent: %s: program '%s': its maps are not in the region",
					 p->source_file ? p->source_file : "?", p->name ? p->name : "?");
				return -EINVAL;
			}
		} else if (p->maps != first->maps) {
			l0_agent_report(GBPF_AGENT_EVENT_NOT_INSTRUMENTED, NULL,
					"%s: program '%s' not attached: device programs of one object only (%s)",
					p->source_file ? p->source_file : "?", p->name ? p->name : "?",
					first->source_file ? first->source_file : "?");
			continue;
		}
		s->dp[s->dev_cnt] = p;
		s->dev[s->dev_cnt++] = i;
		if (gbpf_spirv_prog_prints(p))
			s->prints = 1;
	}
	if (first && first->map_cnt > GBPF_SPIRV_MAX_MAPS) {
		pthread_mutex_unlock(&s->lock);
		snprintf(log, log_size, "levelzero agent: %s: %zu maps, the context table holds %u",
			 first->source_file ? first->source_file : "?", first->map_cnt,
			 GBPF_SPIRV_MAX_MAPS);
		return -E2BIG;
	}
	s->maps = first ? o->maps + base : NULL;
	s->map_cnt = first ? first->map_cnt : 0;
	pthread_mutex_unlock(&s->lock);
	if (l0_intercept_tracing_failure())
		l0_agent_report(GBPF_AGENT_EVENT_INFO, NULL,
				"tracing layer unavailable (%s): intercepting through the preloaded "
				"ze* functions",
				l0_intercept_tracing_failure());
	atomic_store(&s->attached, 1);
	return 0;
}

void gbpf_l0_agent_detach(struct gbpf_backend *be)
{
	(void)be;
	/* Modules and kernels stay recorded: a launch in flight on another thread may read them. */
	atomic_store(&l0_agent_state.attached, 0);
	l0_agent_synced();
}

/* At exit: lines the app's last kernels printed after its last wait. */
__attribute__((destructor)) static void l0_print_fini(void)
{
	l0_agent_synced();
}
