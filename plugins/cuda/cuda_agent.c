/* SPDX-License-Identifier: MIT */
/*
 * plugins/cuda/cuda_agent.c - `gbpf run` inside a CUDA application: the
 * cuda plugin's agent_attach / agent_detach.
 *
 * Nothing is compiled up front but the probe fragment (one PTX text for
 * every device program of the object). A kernel is instrumented at its
 * FIRST launch, and only when a device program targets it: its module's
 * image (recorded when the application loaded it) goes through
 * gbpf_cuda_inject_image, the instrumented PTX is JIT'ed by the real
 * cuModuleLoadDataEx (the driver's disk cache obeys CUDA_CACHE_PATH; ours
 * is in memory, per image, kernel and context), the module globals are
 * set, the application's attributes are replayed, and the launch is
 * replaced. Any failure is reported and the original launch proceeds.
 *
 * Maps: placed by cuda_devmaps.c - device working copies mirrored into
 * the shared memory for maps only device programs use, the shared memory
 * itself (registered) for maps host programs update too.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <gbpf/cuda_inject.h>
#include <gbpf/helper_ids.h>
#include <gbpf/probe_ctx.h>

#include "cuda_agent.h"
#include "cuda_agent_occupancy.h"
#include "cuda_agent_printq.h"
#include "cuda_agent_regcap.h"
#include "cuda_clock.h"
#include "cuda_ctx_fields.h"
#include "cuda_devmaps.h"
#include "cuda_globals.h"
#include "cuda_primary.h"
#include "cuda_printq_host.h"
#include "cuda_timeline.h"
#include "maps/map.h"
#include "plugins/cuda/intercept/intercept.h"
#include "plugins/cuda/sanitizer/san_engine.h"
#include "ptx_codegen.h"

/* Driver values we use (cuda.h is not available at build time). */
#define CA_JIT_ERROR_LOG_BUFFER 5
/* cuModuleLoadDataEx's answer when ptxas refuses the PTX (CUDA_ERROR_INVALID_PTX) */
#define CA_ERROR_INVALID_PTX 218
#define CA_JIT_ERROR_LOG_BUFFER_SIZE_BYTES 6
#define CA_PROC_PER_THREAD_STREAM 2ull
/** Largest module image we keep a copy of. */
#define CA_IMAGE_MAX ((size_t)512 << 20)

typedef CUresult (*ca_load_ex_fn)(CUmodule *, const void *, unsigned int, int *, void **);
typedef CUresult (*ca_get_function_fn)(CUfunction *, CUmodule, const char *);
typedef CUresult (*ca_get_global_fn)(CUdeviceptr *, size_t *, CUmodule, const char *);
typedef CUresult (*ca_htod_fn)(CUdeviceptr, const void *, size_t);
typedef CUresult (*ca_memset32_async_fn)(CUdeviceptr, unsigned int, size_t, CUstream);
typedef CUresult (*ca_ctx_get_fn)(CUcontext *);
typedef CUresult (*ca_ctx_set_fn)(CUcontext);

/** A module image the application loaded (copied: the app may free it). */
struct ca_image {
	const void *key; /* CUmodule or CUlibrary */
	void *bytes;
	size_t size;
	struct ca_image *next;
};

/** CUstreamCaptureMode: calls that are unsafe during a capture are allowed on this thread. */
#define CA_STREAM_CAPTURE_MODE_RELAXED 2
/** CUdevice_attribute: compute capability. */
#define CA_ATTR_CC_MAJOR 75
#define CA_ATTR_CC_MINOR 76
/** cuGetProcAddress flag: the per-thread default stream variant (_ptds/_ptsz). */
#define CA_GET_PROC_PER_THREAD_DEFAULT_STREAM 2

/** One instrumented (or failed) kernel, per image and context. */
struct ca_kernel {
	const void *key;
	CUcontext ctx;
	char *name;
	int ok;
	CUmodule mod;
	CUfunction fn;
	CUdeviceptr launch_id_addr;
	/* The instrumented kernel takes the launch id as a hidden trailing parameter. */
	int lid_param;
	unsigned n_params, lid_off; /* its own parameter count; the hidden one's byte offset */
	atomic_int in_graph; /* a graph node (or a launch captured into a graph) runs it */
	struct gbpf_printq *printq; /* its context's print queues, when a probe prints */
	int const_maps;             /* its module has the constant-bank map table (the fragment's first form) */
	struct ca_global *globals;  /* the app's module variables, mirrored around launches */
	size_t n_globals;
	struct ca_kernel *next;
};

/** Everything the agent side holds: one per process (the plugin is attached once). */
static struct cuda_agent_state {
	pthread_mutex_t lock;
	struct ca_primary_refs primaries; /* primary contexts kept alive while attached (cuda_primary.h) */
	atomic_int attached;
	struct gbpf_agent_services svc;
	const struct gbpf_prog_desc *progs;
	size_t prog_cnt;
	struct gbpf_map_instance *maps; /* the object's maps, in prog->maps order */
	size_t map_cnt;
	size_t *dev;  /* prog indices of the fragment's probes: probe i = progs[dev[i]] */
	size_t dev_cnt;
	int need_launch_id; /* a device program reads ctx->launch_id */
	unsigned thread_local_bytes; /* GPU_THREAD_LOCAL values each thread keeps after its probe context */
	unsigned ctx_unused; /* GBPF_CUDA_CTX_UNUSED_*: fields no device program reads */
	char *fragment;
	/* The fragment without the constant-bank map table, when the first has it: for the Sanitizer
	 * engine (no constants in patch modules) and for a module whose JIT failed with it (an
	 * application near the 64 KB of user constants) */
	char *fragment_plain;
	struct ca_devmaps *devmaps; /* where the maps live for the GPU */
	struct ca_timeline *timeline; /* GPU timing of launches and copies, when asked */
	CUdeviceptr *dmaps;         /* their device addresses (the modules' __gbpf_maps) */
	uint32_t *map_slots;        /* each map's nr_slots (__gbpf_slots_const), when const_maps */
	int const_maps;             /* the fragment reads them from the constant bank (GBPF_PTX_CONST_MAP_TABLE) */
	int uses_print;             /* a device program calls trace_printk or puts */
	atomic_int mirrors_globals; /* some instrumented kernel mirrors module variables */
	ca_d2d_async_fn d2d_async, d2d_async_ptds; /* for the mirrors, resolved once */
	struct ca_printqs printqs;  /* trace_printk / puts queues, per context */
	pid_t printqs_at_exit;      /* the process that registered ca_printqs_at_exit (0: none did) */
	struct ca_image *images;
	struct ca_kernel *kernels;
	struct gbpf_cu_hooks hooks;
	struct gbpf_san_engine *san; /* the Compute Sanitizer engine (kernels without PTX), or NULL */
	int engine;                  /* GBPF_SAN_CHOICE_* */
	/* Entry points of the launch path, resolved once (asking the driver costs ~0.1 us a call). */
	_Atomic(void *) p_ctx_get, p_ctx_dev, p_memset32, p_memset32_ptds, p_capturing, p_capturing_ptds;
	int has_host_launch; /* some program is a host/launch probe */
} cuda_agent_state = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* Kernels of earlier attaches (re-attach): kept, their modules stay loaded; under the state's lock. */
static struct ca_kernel *ca_retired_kernels;

/*
 * The kernels of module or library @p key (NULL: any) in context @p ctx
 * (NULL: any), taken off s->kernels (under s->lock).
 */
static struct ca_kernel *ca_take_kernels(struct cuda_agent_state *s, const void *key, CUcontext ctx)
{
	struct ca_kernel *taken = NULL;

	for (struct ca_kernel **pk = &s->kernels; *pk;) {
		struct ca_kernel *k = *pk;

		if ((key && k->key != key) || (ctx && k->ctx != ctx)) {
			pk = &k->next;
			continue;
		}
		*pk = k->next;
		k->next = taken;
		taken = k;
	}
	return taken;
}

/* Kernels (a list taken off s->kernels) to the retired list, their modules loaded (under s->lock). */
static void ca_retire_list(struct ca_kernel *list)
{
	while (list) {
		struct ca_kernel *k = list;

		list = k->next;
		k->next = ca_retired_kernels;
		ca_retired_kernels = k;
	}
}

/*
 * Forget the kernels of module or library @p key (NULL: any) in context
 * @p ctx (NULL: any), under s->lock: each is instrumented afresh at its next
 * launch. They go to the retired list with their modules loaded (unloading
 * needs their context current and no launch in flight; one may still use
 * them).
 */
static void ca_retire_kernels(struct cuda_agent_state *s, const void *key, CUcontext ctx)
{
	ca_retire_list(ca_take_kernels(s, key, ctx));
}

static void ca_report(enum gbpf_agent_event ev, const char *kernel, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void ca_report(enum gbpf_agent_event ev, const char *kernel, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	gbpf_agent_vreportf(&cuda_agent_state.svc, ev, kernel, fmt, ap);
	va_end(ap);
}

static uint64_t ca_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int ca_selected(size_t prog, const char *name)
{
	struct cuda_agent_state *s = &cuda_agent_state;

	/* The agent core matches targets, GPU programs and host/launch alike (docs/ATTACH.md). */
	return s->svc.kernel_selected && s->svc.kernel_selected(s->svc.ctx, prog, name ? name : "");
}

/* ---- images ---- */

/* The recorded images of module or library @p key, taken off the list (under s->lock). */
static struct ca_image *ca_take_images(struct cuda_agent_state *s, const void *key)
{
	struct ca_image *taken = NULL;

	for (struct ca_image **pi = &s->images; *pi;) {
		struct ca_image *im = *pi;

		if (im->key != key) {
			pi = &im->next;
			continue;
		}
		*pi = im->next;
		im->next = taken;
		taken = im;
	}
	return taken;
}

static void ca_images_free(struct ca_image *im)
{
	while (im) {
		struct ca_image *next = im->next;

		free(im->bytes);
		free(im);
		im = next;
	}
}

static void ca_on_image(void *ctx, const struct gbpf_cu_image_event *ev)
{
	struct cuda_agent_state *s = ctx;
	const void *src = ev->image, *key = ev->library ? (const void *)ev->library : (const void *)ev->module;
	size_t size = ev->image_size;
	struct ca_image *im;

	if (ev->result != GBPF_CUDA_SUCCESS || !key)
		return;
	if (ev->kind == GBPF_CU_IMAGE_WRAPPER) {
		src = ev->fatbin;
		size = ev->fatbin_size;
	}
	if (!src || !size || size > CA_IMAGE_MAX)
		return; /* file loads and unknown sizes: reported at launch as "image not recorded" */
	im = calloc(1, sizeof(*im));
	if (!im || !(im->bytes = malloc(size))) {
		free(im);
		return;
	}
	memcpy(im->bytes, src, size);
	/* PTX sizes count the NUL; the injector parses text only. */
	while (ev->kind == GBPF_CU_IMAGE_PTX && size && !((char *)im->bytes)[size - 1])
		size--;
	im->size = size;
	im->key = key;
	pthread_mutex_lock(&s->lock);
	/*
	 * A handle that comes back from a load names a new module: the one it
	 * named before was unloaded (the driver may reuse the address). What was
	 * made from the old one goes: its image, and its kernels, which a launch
	 * of a kernel of the same name in the new module would otherwise replace
	 * with the old module's code. (An unload the agent saw let them go
	 * already, ca_module_unloading; this covers one it did not see.)
	 */
	ca_images_free(ca_take_images(s, key));
	ca_retire_kernels(s, key, NULL);
	im->next = s->images;
	s->images = im;
	pthread_mutex_unlock(&s->lock);
}

static struct ca_image *ca_find_image(struct cuda_agent_state *s, const void *key)
{
	for (struct ca_image *im = s->images; im; im = im->next)
		if (im->key == key)
			return im;
	return NULL;
}

/* ---- maps ---- */

static void ca_devmaps_report(void *ctx, int is_error, const char *kernel, const char *msg)
{
	(void)ctx;
	ca_report(is_error ? GBPF_AGENT_EVENT_ERROR : GBPF_AGENT_EVENT_INFO, kernel, "%s", msg);
}

/* 1 for each map of the device object that a host program of the same object references. */
static uint8_t *ca_host_used_maps(const struct gbpf_agent_attach_opts *o, const struct gbpf_prog_desc *first)
{
	uint8_t *used = calloc(first->map_cnt ? first->map_cnt : 1, 1);

	for (size_t i = 0; used && i < o->prog_cnt; i++) {
		const struct gbpf_prog_desc *p = &o->progs[i];

		if (gbpf_attach_is_device(p->attach.kind) || p->maps != first->maps)
			continue;
		for (size_t k = 0; k < p->insn_cnt; k++) {
			const struct gbpf_insn *in = &p->insns[k];

			if (in->code == (GBPF_LD | GBPF_IMM | GBPF_DW) &&
			    (in->src == GBPF_PSEUDO_MAP_IDX || in->src == GBPF_PSEUDO_MAP_IDX_VALUE) &&
			    in->imm >= 0 && (size_t)in->imm < first->map_cnt)
				used[in->imm] = 1;
		}
	}
	return used;
}

/* ---- instrumentation ---- */

struct ca_select {
	const char *name;
};

static bool ca_select_one(const char *mangled, void *arg)
{
	return !strcmp(mangled, ((struct ca_select *)arg)->name);
}

/* Which probe goes to which site for kernel @p name; 0 when none targets it. */
static unsigned ca_sites(struct cuda_agent_state *s, const char *name, struct gbpf_cuda_inject_opts *io)
{
	unsigned sites = 0;

	for (size_t i = 0; i < s->dev_cnt; i++) {
		const struct gbpf_prog_desc *p = &s->progs[s->dev[i]];
		unsigned site = 0, *probe = NULL;

		if (!ca_selected(s->dev[i], name))
			continue;
		switch (p->attach.kind) {
		case GBPF_ATTACH_GPU_ENTRY: site = GBPF_CUDA_SITE_ENTRY; probe = &io->entry_probe; break;
		case GBPF_ATTACH_GPU_EXIT: site = GBPF_CUDA_SITE_EXIT; probe = &io->exit_probe; break;
		case GBPF_ATTACH_GPU_MEM: site = GBPF_CUDA_SITE_MEM; probe = &io->mem_probe; break;
		case GBPF_ATTACH_GPU_BARRIER: site = GBPF_CUDA_SITE_BARRIER; probe = &io->barrier_probe; break;
		case GBPF_ATTACH_GPU_BLOCK: site = GBPF_CUDA_SITE_BLOCK; probe = &io->block_probe; break;
		default: continue;
		}
		if (sites & site) {
			/* The injector calls one probe per site. */
			ca_report(GBPF_AGENT_EVENT_NOT_INSTRUMENTED, name,
				  "%s: program '%s' not attached: another program already probes this site",
				  p->source_file ? p->source_file : "?", p->name ? p->name : "?");
			continue;
		}
		sites |= site;
		*probe = (unsigned)i;
	}
	return sites;
}

static int ca_set_global(CUmodule mod, const char *sym, const void *val, size_t size, int required)
{
	ca_get_global_fn get = (ca_get_global_fn)gbpf_cu_real_proc("cuModuleGetGlobal", 3020, 0);
	ca_htod_fn htod = (ca_htod_fn)gbpf_cu_real_proc("cuMemcpyHtoD", 3020, 0);
	CUdeviceptr addr;
	size_t have;

	if (!get || !htod)
		return -ENOSYS;
	if (get(&addr, &have, mod, sym) != GBPF_CUDA_SUCCESS)
		return required ? -ENOENT : 0;
	if (have < size)
		return -EINVAL;
	return htod(addr, val, size) == GBPF_CUDA_SUCCESS ? 0 : -EIO;
}

/*
 * __gbpf_device of an instrumented module: the ordinal of the device of
 * its context (current while the kernel is instrumented), what host/launch
 * probes see as ctx->device. A module is loaded per context, so the value
 * is set once; the probes read it into their context (ptx/inject.c).
 */
static int ca_set_device(struct cuda_agent_state *s, const struct ca_kernel *k)
{
	typedef CUresult (*ctx_dev_fn)(CUdevice *dev);
	ctx_dev_fn ctx_dev = (ctx_dev_fn)gbpf_cu_real_proc_once(&s->p_ctx_dev, "cuCtxGetDevice", 2000, 0);
	CUdevice dev;
	uint32_t v;

	if (!ctx_dev || ctx_dev(&dev) != GBPF_CUDA_SUCCESS)
		return -ENODEV;
	v = (uint32_t)dev;
	return ca_set_global(k->mod, "__gbpf_device", &v, sizeof(v), 1);
}

/* Attribute @p attrib of the current context's device; 0 or -ENOENT. */
static int ca_device_attr(int attrib, int *v)
{
	typedef CUresult (*attr_fn)(int *v, int attrib, CUdevice dev);
	typedef CUresult (*ctx_dev_fn)(CUdevice *dev);
	attr_fn attr = (attr_fn)gbpf_cu_real_proc("cuDeviceGetAttribute", 2000, 0);
	ctx_dev_fn ctx_dev = (ctx_dev_fn)gbpf_cu_real_proc("cuCtxGetDevice", 2000, 0);
	CUdevice dev;

	if (!attr || !ctx_dev || ctx_dev(&dev) != GBPF_CUDA_SUCCESS ||
	    attr(v, attrib, dev) != GBPF_CUDA_SUCCESS)
		return -ENOENT;
	return 0;
}

/* Lines from the GPU go to the controller; a full agent queue keeps them on the device queue. */
static int ca_print_sink(void *ctx, const char *line, size_t len)
{
	struct cuda_agent_state *s = ctx;

	if (s->svc.sz < offsetof(struct gbpf_agent_services, print) + sizeof(s->svc.print) ||
	    !s->svc.print)
		return 0; /* an agent core before ABI 1.2 cannot take them */
	return s->svc.print(s->svc.ctx, line, len) == -EAGAIN ? -EAGAIN : 0;
}

static void ca_print_lost(void *ctx, unsigned long long lines)
{
	(void)ctx;
	ca_report(GBPF_AGENT_EVENT_ERROR, NULL, "trace_printk/puts: %llu lines lost (the GPU's print queue was full)",
		  lines);
}

/*
 * At exit, each context's last lines drained and its drops reported, as
 * detach does: an application that exits without a detach would lose what
 * its last kernels printed after the drain thread's last pass, and no one
 * would be told of the lines the GPU dropped. Registered with atexit at
 * the first queue, after the CUDA runtime registered its own teardown, so
 * it runs first, with the contexts alive (as cuda_devmaps.c's handler).
 */
static void ca_printqs_at_exit(void)
{
	/* a fork child inherits the handler, not the drain threads */
	if (getpid() != cuda_agent_state.printqs_at_exit)
		return;
	pthread_mutex_lock(&cuda_agent_state.lock);
	ca_printqs_close_all(&cuda_agent_state.printqs);
	pthread_mutex_unlock(&cuda_agent_state.lock);
}

/* A launch (direct, Ex or cooperative), not a graph kernel node. */
static int ca_is_launch(const struct gbpf_cu_launch *l)
{
	return l->api == GBPF_CU_LAUNCH_KERNEL || l->api == GBPF_CU_LAUNCH_KERNEL_EX ||
	       l->api == GBPF_CU_LAUNCH_COOPERATIVE;
}

/* A module variable too large to mirror around launches: said once, at instrumentation. */
static void ca_global_not_mirrored(void *kernel, const char *var, size_t bytes)
{
	ca_report(GBPF_AGENT_EVENT_INFO, kernel,
		  "module variable '%s' (%zu bytes) is not mirrored: instrumented launches do not see the app's "
		  "writes to it, nor it theirs",
		  var, bytes);
}

/* SM number of the current context's device (90 for sm_90); 0 when unknown. */
static unsigned ca_device_sm(void)
{
	int major = 0, minor = 0;

	if (ca_device_attr(CA_ATTR_CC_MAJOR, &major) || ca_device_attr(CA_ATTR_CC_MINOR, &minor) ||
	    major <= 0)
		return 0;
	return (unsigned)(major * 10 + minor);
}

/*
 * GBPF_CUDA_PTX_DIR=DIR: each instrumented module as the driver gets it, in
 * DIR/<pid>-<n>.ptx (n counts this process's modules): what was injected,
 * to read or to assemble by hand. Reported either way; never fails a kernel.
 */
static void ca_keep_ptx(const char *kernel, const char *ptx, size_t len)
{
	static atomic_uint modules_kept; /* the <n> of the names */
	const char *dir = getenv("GBPF_CUDA_PTX_DIR");
	char path[4096];
	FILE *f;
	int ok;

	if (!dir || !*dir)
		return;
	snprintf(path, sizeof(path), "%s/%d-%u.ptx", dir, (int)getpid(), atomic_fetch_add(&modules_kept, 1));
	f = fopen(path, "w");
	ok = f && fwrite(ptx, 1, len, f) == len;
	if (f && fclose(f))
		ok = 0;
	ca_report(ok ? GBPF_AGENT_EVENT_INFO : GBPF_AGENT_EVENT_ERROR, kernel, "%s %s",
		  ok ? "instrumented module written to" : "GBPF_CUDA_PTX_DIR: cannot write", path);
}

/*
 * The image of @p l's module with the probes injected into kernel @p name
 * (@p io selects it and names the fragment): the result, the kernel's entry
 * in it and its module. 0, or -1 once the reason was reported.
 */
static int ca_inject_one(struct cuda_agent_state *s, const char *name, const struct gbpf_cu_launch *l,
			 const struct ca_image *im, const struct gbpf_cuda_inject_opts *io,
			 struct gbpf_cuda_inject_result **res, const struct gbpf_cuda_kernel_info **ki,
			 const struct gbpf_cuda_inject_module **mi)
{
	char why[1024] = "";
	size_t i;
	int rc = gbpf_cuda_inject_image(im->bytes, im->size, l->api_name, io, res, why, sizeof(why));

	*ki = NULL;
	*mi = NULL;
	if (rc) {
		ca_report(GBPF_AGENT_EVENT_NOT_INSTRUMENTED, name, "injection failed (%d): %s", rc, why);
		return -1;
	}
	for (i = 0; i < (*res)->n_kernels && !*ki; i++)
		if (!strcmp((*res)->kernels[i].name, name) && (*res)->kernels[i].instrumented)
			*ki = &(*res)->kernels[i];
	if (!*ki) {
		const char *reason = "kernel not found in its module's image";

		for (i = 0; i < (*res)->n_kernels; i++)
			if (!strcmp((*res)->kernels[i].name, name) && (*res)->kernels[i].reason)
				reason = (*res)->kernels[i].reason;
		/* The Sanitizer engine gets the kernel next and reports its own outcome. */
		if (s->san)
			ca_report(GBPF_AGENT_EVENT_INFO, name, "no PTX injection (%s): left to the Compute "
				  "Sanitizer engine", reason);
		else
			ca_report(GBPF_AGENT_EVENT_NOT_INSTRUMENTED, name, "%s", reason);
		return -1;
	}
	for (i = 0; i < (*res)->n_modules; i++)
		if (!strcmp((*res)->modules[i].module, (*ki)->module))
			*mi = &(*res)->modules[i];
	if (!*mi) {
		ca_report(GBPF_AGENT_EVENT_ERROR, name, "instrumented module missing from the result");
		return -1;
	}
	return 0;
}

/* Build the instrumented kernel of entry @p k; fills k->ok. Under the lock. */
static void ca_instrument(struct cuda_agent_state *s, struct ca_kernel *k, const struct gbpf_cu_launch *l,
			  const struct ca_image *im)
{
	struct ca_select sel = {.name = k->name};
	struct gbpf_cuda_inject_opts io = {.sz = sizeof(io), .fragment = s->fragment,
					   .select = ca_select_one, .select_arg = &sel,
					   .ctx_unused = s->ctx_unused,
					   /* The id per launch: concurrent launches of a kernel must not share it. */
					   .launch_id_param = s->need_launch_id != 0,
					   /* this module serves this kernel's launches only: JIT nothing else */
					   .only_selected = true,
					   .thread_local_bytes = s->thread_local_bytes};
	struct gbpf_cuda_inject_result *res = NULL;
	const struct gbpf_cuda_kernel_info *ki = NULL;
	const struct gbpf_cuda_inject_module *mi = NULL;
	ca_load_ex_fn load = (ca_load_ex_fn)gbpf_cu_real_proc("cuModuleLoadDataEx", 2010, 0);
	ca_get_function_fn getf = (ca_get_function_fn)gbpf_cu_real_proc("cuModuleGetFunction", 2000, 0);
	ca_get_global_fn getg = (ca_get_global_fn)gbpf_cu_real_proc("cuModuleGetGlobal", 3020, 0);
	char why[1024] = "", jit_log[4096] = "", cap_note[192] = "";
	int jo[2] = {CA_JIT_ERROR_LOG_BUFFER, CA_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
	void *jv[2] = {jit_log, (void *)(uintptr_t)sizeof(jit_log)};
	int regs = 0, orig_regs = 0;
	/*
	 * What the first launch waits for, in the report: the maps' device copies, the
	 * injection, the module's load (the driver's JIT or its cache, and whatever else the
	 * load waits for) and the rest.
	 */
	uint64_t t_start = ca_now_ns(), t_maps, t_inject, t_load_start, t_load;
	uint64_t pid_tgid = ((uint64_t)getpid() << 32) | (uint32_t)gettid();
	uint64_t clock_off = cuda_clock_offset_ns();
	size_t sz;
	CUresult r;
	int rc;

	io.sites = ca_sites(s, k->name, &io);
	if (!io.sites)
		return;
	io.max_ptx_arch = ca_device_sm();
	if (!im) {
		ca_report(GBPF_AGENT_EVENT_NOT_INSTRUMENTED, k->name,
			  "the image of its module was not recorded (loaded from a file, or before gbpf)");
		return;
	}
	ca_primary_keep(&s->primaries, k->ctx);
	rc = s->map_cnt ? ca_devmaps_table(s->devmaps, k->ctx, s->dmaps, why, sizeof(why)) : 0;
	if (rc) {
		ca_report(GBPF_AGENT_EVENT_ERROR, k->name, "maps unreachable from the GPU: %s", why);
		return;
	}
	t_maps = ca_now_ns();
	for (;;) {
		rc = ca_inject_one(s, k->name, l, im, &io, &res, &ki, &mi);
		t_inject = ca_now_ns();
		if (rc)
			goto out;
		if (!load || !getf || !getg) {
			ca_report(GBPF_AGENT_EVENT_ERROR, k->name, "driver entry points unavailable");
			goto out;
		}
		ca_keep_ptx(k->name, mi->ptx, mi->ptx_len);
		t_load_start = ca_now_ns();
		r = load(&k->mod, mi->ptx, 2, jo, jv);
		t_load = ca_now_ns();
		if (r == GBPF_CUDA_SUCCESS)
			break;
		k->mod = NULL;
		if (r != CA_ERROR_INVALID_PTX || !s->fragment_plain || io.fragment == s->fragment_plain) {
			ca_report(GBPF_AGENT_EVENT_NOT_INSTRUMENTED, k->name,
				  "JIT of the instrumented PTX (%s, %zu bytes) failed: error %d: %.600s", ki->module,
				  mi->ptx_len, r, jit_log);
			goto out;
		}
		/* ptxas refused it: e.g. an application whose own constants leave no room for the table's */
		ca_report(GBPF_AGENT_EVENT_INFO, k->name,
			  "JIT with the map table in the constant bank failed (error %d: %.300s): injected again "
			  "with the global table only", r, jit_log);
		gbpf_cuda_inject_result__free(res);
		res = NULL;
		jit_log[0] = 0;
		io.fragment = s->fragment_plain;
	}
	k->const_maps = s->const_maps && io.fragment != s->fragment_plain;
	if (getf(&k->fn, k->mod, k->name) != GBPF_CUDA_SUCCESS) {
		ca_report(GBPF_AGENT_EVENT_ERROR, k->name, "instrumented module lacks the kernel");
		goto out;
	}
	/* the probe's registers can cost a light kernel its occupancy: kept where a small cap does it */
	ca_func_attr(l->func, CA_FUNC_ATTR_NUM_REGS, &orig_regs);
	ca_func_attr(k->fn, CA_FUNC_ATTR_NUM_REGS, &regs);
	ca_keep_occupancy(&k->mod, &k->fn, k->name, l->block[0] * l->block[1] * l->block[2], mi->ptx, orig_regs,
			  &regs, cap_note, sizeof(cap_note));
	t_load = ca_now_ns();
	if ((s->map_cnt && ca_set_global(k->mod, "__gbpf_maps", s->dmaps, s->map_cnt * sizeof(*s->dmaps), 1)) ||
	    (s->map_cnt && k->const_maps &&
	     (ca_set_global(k->mod, "__gbpf_maps_const", s->dmaps, s->map_cnt * sizeof(*s->dmaps), 1) ||
	      ca_set_global(k->mod, "__gbpf_slots_const", s->map_slots, s->map_cnt * sizeof(*s->map_slots), 1))) ||
	    ca_set_global(k->mod, "__gbpf_pid_tgid", &pid_tgid, sizeof(pid_tgid), 0) ||
	    ca_set_global(k->mod, "__gbpf_clock_off", &clock_off, sizeof(clock_off), 0) ||
	    (!(s->ctx_unused & GBPF_CUDA_CTX_UNUSED_DEVICE) && ca_set_device(s, k)) ||
	    getg(&k->launch_id_addr, &sz, k->mod, "__gbpf_launch_id") != GBPF_CUDA_SUCCESS || sz < 8) {
		ca_report(GBPF_AGENT_EVENT_ERROR, k->name, "cannot set the module globals (__gbpf_maps, "
			  "__gbpf_maps_const, __gbpf_slots_const, __gbpf_pid_tgid, __gbpf_device, __gbpf_launch_id)");
		goto out;
	}
	ca_globals_collect(&k->globals, &k->n_globals, k->mod, l, mi->ptx, ca_global_not_mirrored, k->name);
	if (k->n_globals) {
		if (!s->d2d_async) {
			s->d2d_async = (ca_d2d_async_fn)gbpf_cu_real_proc("cuMemcpyDtoDAsync", 3020, 0);
			s->d2d_async_ptds = (ca_d2d_async_fn)gbpf_cu_real_proc(
				"cuMemcpyDtoDAsync", 3020, CA_GET_PROC_PER_THREAD_DEFAULT_STREAM);
		}
		atomic_store(&s->mirrors_globals, 1);
	}
	rc = gbpf_cu_attr_replay(l->func, k->fn, why, sizeof(why));
	if (rc < 0) {
		ca_report(GBPF_AGENT_EVENT_ERROR, k->name, "attribute replay failed: %s", why);
		goto out;
	}
	if (s->uses_print) {
		int sms = 1;

		if (ca_device_attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &sms))
			sms = 1;
		k->printq = ca_printqs_for(&s->printqs, k->ctx, sms, why, sizeof(why));
		if (k->printq && !s->printqs_at_exit && atexit(ca_printqs_at_exit) == 0)
			s->printqs_at_exit = getpid();
		if (!k->printq || gbpf_printq_bind(k->printq, k->mod)) {
			ca_report(GBPF_AGENT_EVENT_NOT_INSTRUMENTED, k->name, "trace_printk/puts queues: %s",
				  k->printq ? "cannot set __gbpf_printq in the module" : why);
			goto out;
		}
	}
	k->lid_param = io.launch_id_param;
	k->n_params = ki->n_params;
	k->lid_off = ki->launch_param_off;
	k->ok = 1;
	{
		uint64_t t_end = ca_now_ns();

		ca_report(GBPF_AGENT_EVENT_INFO, k->name,
			  "instrumented (%s: entry %u, exit %u, mem %u, barrier %u, block %u; registers %d, "
			  "uninstrumented %d) in %.2f ms: maps %.2f, injection %.2f, module load %.2f, "
			  "setup %.2f%s%s%s",
			  ki->module, ki->n_entry, ki->n_exit, ki->n_mem, ki->n_barrier, ki->n_block, regs,
			  orig_regs, (t_end - t_start) / 1e6, (t_maps - t_start) / 1e6, (t_inject - t_maps) / 1e6,
			  (t_load - t_load_start) / 1e6, (t_end - t_load) / 1e6, cap_note, ki->reason ? "; " : "",
			  ki->reason ? ki->reason : "");
	}
out:
	gbpf_cuda_inject_result__free(res);
}

/* The instrumented kernel for this launch, instrumenting it at first use; NULL = launch the original. */
static struct ca_kernel *ca_kernel_for(struct cuda_agent_state *s, const struct gbpf_cu_launch *l)
{
	typedef CUresult (*exchange_mode_fn)(int *mode);
	ca_ctx_get_fn ctx_get = (ca_ctx_get_fn)gbpf_cu_real_proc_once(&s->p_ctx_get, "cuCtxGetCurrent", 4000, 0);
	exchange_mode_fn exchange_mode;
	const void *key = l->library ? (const void *)l->library : (const void *)l->module;
	int mode = CA_STREAM_CAPTURE_MODE_RELAXED;
	CUcontext ctx = NULL;
	struct ca_kernel *k;

	if (ctx_get)
		ctx_get(&ctx);
	pthread_mutex_lock(&s->lock);
	for (k = s->kernels; k; k = k->next)
		if (k->key == key && k->ctx == ctx && !strcmp(k->name, l->name))
			goto done;
	k = calloc(1, sizeof(*k));
	if (!k || !(k->name = strdup(l->name))) {
		free(k);
		k = NULL;
		goto done;
	}
	k->key = key;
	k->ctx = ctx;
	exchange_mode = (exchange_mode_fn)gbpf_cu_real_proc("cuThreadExchangeStreamCaptureMode", 10010, 0);
	/*
	 * The first launch of a kernel may come while a stream captures a graph;
	 * the JIT and the synchronous copies that set module globals would then
	 * invalidate the capture (global capture mode forbids them on this
	 * thread). Our calls touch no capturing stream: relaxed mode allows them.
	 */
	if (exchange_mode)
		exchange_mode(&mode);
	ca_instrument(s, k, l, key ? ca_find_image(s, key) : NULL);
	if (exchange_mode)
		exchange_mode(&mode);
	k->next = s->kernels;
	s->kernels = k;
done:
	pthread_mutex_unlock(&s->lock);
	return k && k->ok ? k : NULL;
}

/*
 * The launch id reaches the replacement through its module global, set by
 * two 32-bit memsets enqueued on the launch's own stream: stream order puts
 * them between the previous and this launch, the value travels in the
 * call (no host buffer to keep alive), and a memset never synchronises
 * the stream (an async copy from pageable memory may).
 */
static int ca_set_launch_id_on(const struct ca_kernel *k, CUstream stream, int ptds, uint64_t id)
{
	struct cuda_agent_state *s = &cuda_agent_state;
	ca_memset32_async_fn ms = (ca_memset32_async_fn)gbpf_cu_real_proc_once(
		ptds ? &s->p_memset32_ptds : &s->p_memset32, "cuMemsetD32Async", 3020,
		ptds ? CA_PROC_PER_THREAD_STREAM : 0);

	if (!ms || ms(k->launch_id_addr, (uint32_t)id, 1, stream) != GBPF_CUDA_SUCCESS ||
	    ms(k->launch_id_addr + 4, (uint32_t)(id >> 32), 1, stream) != GBPF_CUDA_SUCCESS)
		return -EIO;
	return 0;
}

static int ca_set_launch_id(const struct ca_kernel *k, const struct gbpf_cu_launch *l, uint64_t id)
{
	return ca_set_launch_id_on(k, l->stream, l->ptds, id);
}

/*
 * Whether a launch goes into a stream that captures a graph: then it is a
 * graph node, not a launch (its id comes at each cuGraphLaunch). The legacy
 * default stream never captures, and asking about it while another stream
 * captures in global mode is itself an error: it is not asked.
 */
static int ca_capturing(struct cuda_agent_state *s, const struct gbpf_cu_launch *l)
{
	typedef CUresult (*is_capturing_fn)(CUstream, int *status);
	is_capturing_fn fn;
	int status = 0;

	if ((!l->stream && !l->ptds) || l->stream == (CUstream)(uintptr_t)1 /* CU_STREAM_LEGACY */)
		return 0;
	fn = (is_capturing_fn)gbpf_cu_real_proc_once(l->ptds ? &s->p_capturing_ptds : &s->p_capturing,
					   "cuStreamIsCapturing", 10000,
					   l->ptds ? CA_PROC_PER_THREAD_STREAM : 0);
	if (!fn || fn(l->stream, &status) != GBPF_CUDA_SUCCESS)
		return 0;
	return status != 0; /* CU_STREAM_CAPTURE_STATUS_ACTIVE or _INVALIDATED */
}

/*
 * A graph launch: every instrumented kernel of this context that a graph
 * node runs gets a fresh number in __gbpf_launch_id, set on the graph's
 * stream before the graph (stream order). Graph nodes pass the sentinel
 * GBPF_CUDA_LAUNCH_ID_FROM_GRID in their hidden parameter (a node's
 * parameters are fixed when the graph is built) and combine this number
 * with the GPU's %gridid, which is fixed per node of an executable graph
 * (measured on the H200: it does not change between launches of one
 * graph). Launches of one graph are serialised, so each reads its own
 * number; two graphs running at once may read the same number but differ
 * in %gridid. Direct launches carry their own id and never read it.
 */
static void ca_graph_launch_ids(struct cuda_agent_state *s, const struct gbpf_cu_call_event *ev)
{
	ca_ctx_get_fn ctx_get = (ca_ctx_get_fn)gbpf_cu_real_proc_once(&s->p_ctx_get, "cuCtxGetCurrent", 4000, 0);
	CUcontext ctx = NULL;
	struct ca_kernel *k;

	if (ctx_get)
		ctx_get(&ctx);
	pthread_mutex_lock(&s->lock);
	for (k = s->kernels; k; k = k->next) {
		if (!k->ok || k->ctx != ctx || !atomic_load_explicit(&k->in_graph, memory_order_relaxed))
			continue;
		if (ca_set_launch_id_on(k, ev->stream, ev->ptds, s->svc.next_launch_id(s->svc.ctx)))
			ca_report(GBPF_AGENT_EVENT_ERROR, k->name,
				  "cannot set __gbpf_launch_id on the stream of a graph launch");
	}
	pthread_mutex_unlock(&s->lock);
}

static void ca_run_host_launch(struct cuda_agent_state *s, const struct gbpf_cu_launch *l, uint64_t *id)
{
	typedef CUresult (*ctx_dev_fn)(CUdevice *dev);
	ctx_dev_fn ctx_dev;
	struct gbpf_host_launch_ctx c;
	CUdevice dev;
	int made = 0;

	for (size_t i = 0; i < s->prog_cnt; i++) {
		if (s->progs[i].attach.kind != GBPF_ATTACH_HOST_LAUNCH || !ca_selected(i, l->name))
			continue;
		if (!*id)
			*id = s->svc.next_launch_id(s->svc.ctx);
		if (!made) {
			ctx_dev = (ctx_dev_fn)gbpf_cu_real_proc_once(&s->p_ctx_dev, "cuCtxGetDevice", 2000, 0);
			memset(&c, 0, sizeof(c));
			c.kernel_id = gbpf_kernel_id(l->name);
			c.stream = (uint64_t)(uintptr_t)l->stream;
			c.launch_id = *id;
			c.time_ns = ca_now_ns();
			for (int d = 0; d < 3; d++) {
				c.grid[d] = l->grid[d];
				c.block[d] = l->block[d];
			}
			c.shared_mem_bytes = l->shared_mem_bytes;
			if (ctx_dev && ctx_dev(&dev) == GBPF_CUDA_SUCCESS)
				c.device = (uint32_t)dev; /* the current context's: the launch's */
			snprintf(c.kernel_name, sizeof(c.kernel_name), "%s", l->name ? l->name : "");
			made = 1;
		}
		s->svc.run_host_prog(s->svc.ctx, i, &c, sizeof(c), NULL);
	}
}

/* The maps table of a context, for the Sanitizer engine's patch module. */
static int ca_san_maps(void *arg, CUcontext ctx, CUdeviceptr *table, char *why, size_t why_size)
{
	struct cuda_agent_state *s = arg;
	int rc;

	pthread_mutex_lock(&s->lock);
	ca_primary_keep(&s->primaries, ctx);
	rc = ca_devmaps_table(s->devmaps, ctx, table, why, why_size);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

/* A launch the PTX engine does not instrument: the Sanitizer engine patches the kernel in place. */
static int ca_san_launch(struct cuda_agent_state *s, struct gbpf_cu_launch *l, uint64_t *id)
{
	if (!s->san || gbpf_san_engine_launch(s->san, l, id, s->need_launch_id))
		return -ENOENT;
	if (s->devmaps)
		ca_devmaps_launch(s->devmaps, (uint64_t)l->grid[0] * l->grid[1] * l->grid[2] * l->block[0] *
						      l->block[1] * l->block[2],
				  l->name);
	return 0;
}

static int ca_launch_instrument(struct cuda_agent_state *s, struct gbpf_cu_launch *l)
{
	int node = !ca_is_launch(l), captured = 0;
	struct ca_kernel *k;
	uint64_t id = 0;

	/*
	 * A graph kernel node gets the instrumented function too (every launch
	 * of the graph runs the probes); it is no launch yet: no host launch
	 * probe, no id here (each cuGraphLaunch sets one: ca_graph_launch_ids)
	 * and no mirrored module variables. A launch into a capturing stream is
	 * a node too, but its mirrors of module variables are captured with it
	 * (copies the graph repeats at each launch, as it should).
	 */
	if (!node && (s->need_launch_id || s->has_host_launch))
		captured = ca_capturing(s, l);
	if (!node && !captured)
		ca_run_host_launch(s, l, &id);
	if (!l->name || !s->dev_cnt)
		return -ENOENT;
	k = s->engine != GBPF_SAN_CHOICE_SANITIZER ? ca_kernel_for(s, l) : NULL;
	if (!k)
		return node ? -ENOENT : ca_san_launch(s, l, &id);
	if ((node || captured) && !atomic_load_explicit(&k->in_graph, memory_order_relaxed))
		atomic_store(&k->in_graph, 1);
	if (!node && !captured && !id)
		id = s->svc.next_launch_id(s->svc.ctx);
	if (k->lid_param) {
		/*
		 * The id travels in the launch's own hidden parameter; a graph
		 * node (captured or explicit) runs at every graph launch: its
		 * sentinel makes the kernel combine the module variable, which
		 * each cuGraphLaunch sets (ca_graph_launch_ids), with %gridid.
		 */
		l->extra_param.on = 1;
		l->extra_param.n_params = k->n_params;
		l->extra_param.offset = k->lid_off;
		l->extra_param.value = node || captured ? GBPF_CUDA_LAUNCH_ID_FROM_GRID : id;
	}
	if (!node) {
		/* Kernels without the hidden parameter: two memsets on the stream (~2 us). */
		if (s->need_launch_id && !k->lid_param && !captured && ca_set_launch_id(k, l, id)) {
			ca_report(GBPF_AGENT_EVENT_ERROR, l->name,
				  "cannot set __gbpf_launch_id on the launch's stream");
			return -EIO;
		}
		ca_globals_sync(l->ptds ? s->d2d_async_ptds : s->d2d_async, k->globals, k->n_globals, l->stream, 1);
	}
	if (s->devmaps)
		ca_devmaps_launch(s->devmaps, (uint64_t)l->grid[0] * l->grid[1] * l->grid[2] * l->block[0] *
						      l->block[1] * l->block[2],
				  l->name);
	gbpf_printq_kick(k->printq);
	l->replacement = k->fn;
	return 0;
}

static int ca_launch_pre(void *ctx, struct gbpf_cu_launch *l)
{
	struct cuda_agent_state *s = ctx;
	uint64_t called_ns = s->timeline ? ca_now_ns() : 0;
	int rc;

	if (!atomic_load(&s->attached))
		return -ENOENT;
	rc = ca_launch_instrument(s, l);
	/* After instrumenting: a first launch's JIT is host time, not the kernel's. */
	ca_timeline_launch_pre(s->timeline, l, called_ns);
	return rc;
}

static void ca_launch_post(void *ctx, const struct gbpf_cu_launch *l)
{
	struct cuda_agent_state *s = ctx;

	if (l->hook_data)
		ca_timeline_launch_post(s->timeline, l);
	/* Only while some instrumented module mirrors variables: no lock on other launches. */
	if (l->replacement && l->replaced && ca_is_launch(l) &&
	    atomic_load_explicit(&s->mirrors_globals, memory_order_relaxed)) {
		struct ca_kernel *k;

		pthread_mutex_lock(&s->lock);
		for (k = s->kernels; k && k->fn != l->replacement; k = k->next)
			;
		if (k)
			ca_globals_sync(l->ptds ? s->d2d_async_ptds : s->d2d_async, k->globals, k->n_globals, l->stream, 0);
		pthread_mutex_unlock(&s->lock);
	}
	if (l->replacement && !l->replaced)
		ca_report(GBPF_AGENT_EVENT_ERROR, l->name,
			  "the instrumented kernel failed to launch (error %d); the original ran",
			  l->replacement_result);
}

/* The primary context of @p dev, without creating one: NULL when it is not active. */
static CUcontext ca_primary_ctx(CUdevice dev)
{
	typedef CUresult (*state_fn)(CUdevice, unsigned int *, int *);
	typedef CUresult (*retain_fn)(CUcontext *, CUdevice);
	typedef CUresult (*release_fn)(CUdevice);
	state_fn state = (state_fn)gbpf_cu_real_proc("cuDevicePrimaryCtxGetState", 7000, 0);
	retain_fn retain = (retain_fn)gbpf_cu_real_proc("cuDevicePrimaryCtxRetain", 7000, 0);
	release_fn release = (release_fn)gbpf_cu_real_proc("cuDevicePrimaryCtxRelease", 11000, 0);
	unsigned int flags = 0;
	CUcontext ctx = NULL;
	int active = 0;

	if (!state || !retain || !release || state(dev, &flags, &active) != GBPF_CUDA_SUCCESS || !active)
		return NULL;
	/* Active: retaining only counts a reference, released at once. */
	if (retain(&ctx, dev) != GBPF_CUDA_SUCCESS)
		return NULL;
	release(dev);
	return ctx;
}

/*
 * The application destroys a context: what the GPU counted there is kept
 * (ca_devmaps_context_destroyed), its print queues are drained and freed,
 * and its instrumented kernels are forgotten (their modules go with the
 * context; a later context may even get the same handle).
 */
static void ca_context_gone(struct cuda_agent_state *s, const struct gbpf_cu_call_event *ev)
{
	CUcontext ctx = ev->context ? ev->context : ca_primary_ctx(ev->device);

	if (!ctx)
		return;
	ca_devmaps_context_destroyed(s->devmaps, ctx);
	pthread_mutex_lock(&s->lock);
	ca_primary_forget(&s->primaries, ctx);
	ca_printqs_close(&s->printqs, ctx);
	ca_retire_kernels(s, NULL, ctx);
	pthread_mutex_unlock(&s->lock);
}

/* What an unload of the application's module took from the agent, from call_pre to call_post. */
struct ca_unloading {
	const void *key;           /* the CUmodule or CUlibrary */
	struct ca_image *images;   /* its recorded image */
	struct ca_kernel *kernels; /* the kernels instrumented from it */
};

typedef CUresult (*ca_unload_fn)(CUmodule);
typedef CUresult (*ca_ctx_push_fn)(CUcontext);
typedef CUresult (*ca_ctx_pop_fn)(CUcontext *);

/*
 * The application unloads a module or library (call_pre: the handle still
 * names it; once the driver returns, a load may get it for a new module).
 * Its image and its kernels leave the agent's lists now; call_post unloads
 * their instrumented modules (ca_module_unloaded).
 */
static void ca_module_unloading(struct cuda_agent_state *s, struct gbpf_cu_call_event *ev)
{
	const void *key = ev->library ? (const void *)ev->library : (const void *)ev->module;
	struct ca_unloading *u = key ? calloc(1, sizeof(*u)) : NULL;

	if (!u)
		return; /* a load under the same handle still retires them (ca_on_image) */
	u->key = key;
	pthread_mutex_lock(&s->lock);
	u->images = ca_take_images(s, key);
	u->kernels = ca_take_kernels(s, key, NULL);
	pthread_mutex_unlock(&s->lock);
	if (!u->images && !u->kernels) {
		free(u);
		return;
	}
	ev->hook_data = u;
}

/* Unload the instrumented module of @p k in its context (made current for the call if it is not). */
static void ca_unload_instrumented(struct ca_kernel *k, CUcontext current)
{
	ca_unload_fn unload = (ca_unload_fn)gbpf_cu_real_proc("cuModuleUnload", 2000, 0);
	ca_ctx_push_fn push = (ca_ctx_push_fn)gbpf_cu_real_proc("cuCtxPushCurrent", 4000, 0);
	ca_ctx_pop_fn pop = (ca_ctx_pop_fn)gbpf_cu_real_proc("cuCtxPopCurrent", 4000, 0);
	CUcontext popped = NULL;
	int pushed = 0;
	CUresult r;

	if (!k->mod || !unload)
		return;
	if (k->ctx && k->ctx != current) {
		if (!push || !pop || push(k->ctx) != GBPF_CUDA_SUCCESS)
			return;
		pushed = 1;
	}
	r = unload(k->mod);
	if (pushed)
		pop(&popped);
	if (r != GBPF_CUDA_SUCCESS)
		ca_report(GBPF_AGENT_EVENT_ERROR, k->name,
			  "the instrumented module of an unloaded module stays loaded: cuModuleUnload error %d", r);
}

/*
 * After the application's unload. Done: the instrumented modules are
 * unloaded too (cuModuleUnload waits for kernels of the module still
 * running, measured on the H200: a kernel launched just before ran to its
 * end and the unload returned after it, so an instrumented kernel that
 * replaced one of the application's is never cut short). Refused: the
 * module stays, and so does its image (unless a load under the handle
 * recorded another since); its kernels are retired with their modules
 * loaded and instrumented afresh at their next launch.
 */
static void ca_module_unloaded(struct cuda_agent_state *s, const struct gbpf_cu_call_event *ev)
{
	ca_ctx_get_fn ctx_get = (ca_ctx_get_fn)gbpf_cu_real_proc_once(&s->p_ctx_get, "cuCtxGetCurrent", 4000, 0);
	struct ca_unloading *u = ev->hook_data;
	CUcontext current = NULL;

	if (!u)
		return;
	if (ev->result != GBPF_CUDA_SUCCESS) {
		pthread_mutex_lock(&s->lock);
		if (!ca_find_image(s, u->key) && u->images) {
			struct ca_image *last = u->images;

			while (last->next)
				last = last->next;
			last->next = s->images;
			s->images = u->images;
			u->images = NULL;
		}
		ca_retire_list(u->kernels);
		u->kernels = NULL;
		pthread_mutex_unlock(&s->lock);
	}
	ca_images_free(u->images);
	if (ctx_get)
		ctx_get(&current);
	while (u->kernels) {
		struct ca_kernel *k = u->kernels;

		u->kernels = k->next;
		ca_unload_instrumented(k, current);
		free(k->globals);
		free(k->name);
		free(k);
	}
	free(u);
}

static void ca_call_pre(void *ctx, struct gbpf_cu_call_event *ev)
{
	struct cuda_agent_state *s = ctx;

	if (!atomic_load(&s->attached))
		return;
	if (ev->kind == GBPF_CU_CALL_CTX_DESTROY)
		ca_context_gone(s, ev);
	if (ev->kind == GBPF_CU_CALL_MODULE_UNLOAD)
		ca_module_unloading(s, ev);
	if (ev->kind == GBPF_CU_CALL_GRAPH_LAUNCH && s->need_launch_id)
		ca_graph_launch_ids(s, ev);
	ca_timeline_call_pre(s->timeline, ev);
}

static void ca_call_post(void *ctx, const struct gbpf_cu_call_event *ev)
{
	struct cuda_agent_state *s = ctx;
	struct gbpf_host_call_ctx c = {0};
	uint32_t kind;

	ca_timeline_call_post(s->timeline, ev);
	if (ev->kind == GBPF_CU_CALL_MODULE_UNLOAD) {
		ca_module_unloaded(s, ev); /* also after a detach: what call_pre took is let go */
		return;
	}
	if (!atomic_load(&s->attached) || ev->result != GBPF_CUDA_SUCCESS)
		return;
	/* The application waited for the GPU: a good moment to refresh the host view of the maps. */
	if (ev->kind == GBPF_CU_CALL_SYNC || (ev->kind == GBPF_CU_CALL_MEMCPY && !ev->async))
		ca_devmaps_sync_point(s->devmaps);
	switch (ev->kind) {
	case GBPF_CU_CALL_MEMCPY: kind = GBPF_ATTACH_HOST_MEMCPY; break;
	case GBPF_CU_CALL_MALLOC: kind = GBPF_ATTACH_HOST_MALLOC; break;
	case GBPF_CU_CALL_SYNC: kind = GBPF_ATTACH_HOST_SYNC; break;
	default: return;
	}
	c.dst = ev->dst;
	c.src = ev->src;
	c.bytes = ev->bytes;
	c.stream = (uint64_t)(uintptr_t)ev->stream;
	c.time_ns = ca_now_ns();
	c.direction = ev->direction;
	c.async = ev->async;
	for (size_t i = 0; i < s->prog_cnt; i++)
		if (s->progs[i].attach.kind == kind)
			s->svc.run_host_prog(s->svc.ctx, i, &c, sizeof(c), NULL);
}

/* ---- attach / detach ---- */

/* Index in opts->maps of the first map of @p p's object, or -1. */
static long ca_map_base(const struct gbpf_agent_attach_opts *o, const struct gbpf_prog_desc *p)
{
	for (size_t k = 0; p->map_cnt && k + p->map_cnt <= o->map_cnt; k++)
		if (o->maps[k].desc == &p->maps[0] ||
		    (o->maps[k].desc && o->maps[k].desc->name && p->maps[0].name &&
		     !strcmp(o->maps[k].desc->name, p->maps[0].name)))
			return (long)k;
	return p->map_cnt ? -1 : 0;
}

/*
 * The Compute Sanitizer engine, unless PTX injection alone was asked for.
 * Without a usable libsanitizer-public.so the PTX engine works alone (the
 * user is told once); only an explicit --engine sanitizer fails then.
 */
static int ca_san_attach(struct cuda_agent_state *s, const struct gbpf_agent_attach_opts *o,
			 const struct gbpf_prog_desc **dp, char *log, size_t log_size)
{
	struct gbpf_san_engine_opts so = {.sz = sizeof(so), .svc = &s->svc, .probes = dp,
					  .prog_index = s->dev, .probe_cnt = s->dev_cnt,
					  .fragment = s->fragment, .map_cnt = s->map_cnt,
					  .ctx_unused = s->ctx_unused, .maps_table = ca_san_maps, .maps_arg = s};
	char why[1024] = "";
	int rc;

	s->engine = gbpf_san_engine_choice(o->flags, log, log_size);
	if (s->engine < 0)
		return s->engine;
	if (s->engine == GBPF_SAN_CHOICE_PTX || !s->dev_cnt || s->san)
		return 0;
	/*
	 * The fragment keeps GPU_THREAD_LOCAL values after the context, which
	 * the engine's callbacks (a fresh context at each access) do not have.
	 */
	if (s->thread_local_bytes) {
		snprintf(why, sizeof(why),
			 "the probes use thread-local (GPU_THREAD_LOCAL) maps, which live in the frame of a kernel "
			 "that PTX injection instruments; the Compute Sanitizer's callbacks have no frame that lasts "
			 "a thread's run");
		rc = -ENOTSUP;
	} else {
		/* patch modules may not allocate constants (ptxas --compile-as-tools-patch): the global table only */
		if (s->fragment_plain)
			so.fragment = s->fragment_plain;
		rc = gbpf_san_engine_create(&s->san, &so, why, sizeof(why));
	}
	if (rc && s->engine == GBPF_SAN_CHOICE_SANITIZER) {
		snprintf(log, log_size, "cuda agent: --engine sanitizer: %s", why);
		return rc;
	}
	if (rc)
		ca_report(GBPF_AGENT_EVENT_INFO, NULL, "no Compute Sanitizer engine (kernels without PTX stay "
						       "uninstrumented): %s", why);
	return 0;
}


int gbpf_cuda_agent_attach(struct gbpf_backend *be, const struct gbpf_agent_attach_opts *o, char *log,
			   size_t log_size)
{
	struct cuda_agent_state *s = &cuda_agent_state;
	struct gbpf_ptx_opts po = {.sz = sizeof(po), .arch = "sm_70"};
	const struct gbpf_prog_desc **dp = NULL;
	const struct gbpf_prog_desc *first = NULL;
	long base = 0;
	int rc;

	(void)be;
	if (!o || !o->services || (o->prog_cnt && !o->progs) || (o->map_cnt && !o->maps)) {
		snprintf(log, log_size, "cuda agent: bad attach options");
		return -EINVAL;
	}
	if (atomic_load(&s->attached)) {
		snprintf(log, log_size, "cuda agent: already attached");
		return -EBUSY;
	}
	/*
	 * A re-attach after detach replaces the previous programs. The kernels
	 * instrumented for them (their modules' __gbpf_maps point to device maps
	 * and print queues the detach freed) are forgotten (ca_retire_kernels).
	 */
	pthread_mutex_lock(&s->lock);
	ca_retire_kernels(s, NULL, NULL);
	pthread_mutex_unlock(&s->lock);
	free(s->dev);
	free(s->fragment);
	free(s->fragment_plain);
	s->dev = NULL;
	s->fragment = NULL;
	s->fragment_plain = NULL;
	s->dev_cnt = 0;
	s->need_launch_id = 0;
	s->thread_local_bytes = 0;
	s->uses_print = 0;
	s->printqs.sink = ca_print_sink;
	s->printqs.lost = ca_print_lost;
	s->printqs.ctx = s;
	s->ctx_unused = GBPF_CUDA_CTX_UNUSED_ALL | GBPF_CUDA_CTX_UNUSED_MEM_FIELDS;
	s->svc = *o->services;
	s->progs = o->progs;
	s->prog_cnt = o->prog_cnt;
	s->dev = calloc(o->prog_cnt ? o->prog_cnt : 1, sizeof(*s->dev));
	dp = calloc(o->prog_cnt ? o->prog_cnt : 1, sizeof(*dp));
	if (!s->dev || !dp) {
		rc = -ENOMEM;
		goto fail;
	}
	s->has_host_launch = 0;
	/* One fragment = one object (its programs share the map table). */
	for (size_t i = 0; i < o->prog_cnt; i++) {
		const struct gbpf_prog_desc *p = &o->progs[i];

		if (p->attach.kind == GBPF_ATTACH_HOST_LAUNCH)
			s->has_host_launch = 1;
		if (!gbpf_attach_is_device(p->attach.kind))
			continue;
		if (!first) {
			first = p;
			base = ca_map_base(o, p);
			if (base < 0) {
				snprintf(log, log_size, "cuda agent: %s: program '%s': its maps are not in the region",
					 p->source_file ? p->source_file : "?", p->name ? p->name : "?");
				rc = -EINVAL;
				goto fail;
			}
		} else if (p->maps != first->maps) {
			ca_report(GBPF_AGENT_EVENT_NOT_INSTRUMENTED, NULL,
				  "%s: program '%s' not attached: device programs of one object only (%s)",
				  p->source_file ? p->source_file : "?", p->name ? p->name : "?",
				  first->source_file ? first->source_file : "?");
			continue;
		}
		dp[s->dev_cnt] = p;
		s->dev[s->dev_cnt++] = i;
		s->uses_print |= gbpf_printq_prog_prints(p);
		s->ctx_unused &= gbpf_cuda_ctx_unused(p, o->sz >= offsetof(struct gbpf_agent_attach_opts, prog_ctx_reads) +
								 sizeof(o->prog_ctx_reads) && o->prog_ctx_reads
							    ? &o->prog_ctx_reads[i]
							    : NULL);
		s->need_launch_id = !(s->ctx_unused & GBPF_CUDA_CTX_UNUSED_LAUNCH_ID);
	}
	if (s->dev_cnt) {
		uint8_t *host_used = ca_host_used_maps(o, first);

		s->maps = o->maps + base;
		s->map_cnt = first->map_cnt;
		/* each thread's GPU_THREAD_LOCAL values follow its probe context (ca_instrument) */
		s->thread_local_bytes = gbpf_progs_thread_local_size(dp, s->dev_cnt);
		po.flags |= GBPF_PTX_THREAD_LOCAL_CTX;
		/* GBPF_CUDA_NO_CONST_MAPS: the global table only (comparisons) */
		s->const_maps = !getenv("GBPF_CUDA_NO_CONST_MAPS") && gbpf_ptx_const_map_table(s->map_cnt);
		if (s->const_maps)
			po.flags |= GBPF_PTX_CONST_MAP_TABLE;
		rc = gbpf_ptx_emit(dp, s->dev_cnt, &po, &s->fragment, NULL, log, log_size);
		if (!rc && s->const_maps) {
			struct gbpf_ptx_opts plain = po;

			plain.flags &= ~GBPF_PTX_CONST_MAP_TABLE;
			rc = gbpf_ptx_emit(dp, s->dev_cnt, &plain, &s->fragment_plain, NULL, log, log_size);
		}
		if (!rc && s->map_cnt) {
			/* A re-attach gets fresh placements: its maps are a new region. */
			s->dmaps = calloc(s->map_cnt, sizeof(*s->dmaps));
			s->map_slots = calloc(s->map_cnt, sizeof(*s->map_slots));
			rc = !host_used || !s->dmaps || !s->map_slots
				     ? -ENOMEM
				     : ca_devmaps_create(&s->devmaps, s->maps, s->map_cnt, host_used,
							 ca_devmaps_report, s);
			/* the device copies are made from these blocks, headers and all (cuda_devmaps.h) */
			for (size_t m = 0; !rc && m < s->map_cnt; m++)
				s->map_slots[m] = gbpf_ptx_const_slots(gbpf_map_nr_slots(&s->maps[m]));
		}
		free(host_used);
		if (rc)
			goto fail;
	}
	rc = ca_san_attach(s, o, dp, log, log_size);
	if (rc)
		goto fail;
	free(dp);
	dp = NULL;
	if ((o->flags & GBPF_AGENT_F_GPU_TIMELINE) && !s->timeline &&
	    (rc = ca_timeline_create(&s->timeline, o->services)))
		ca_report(GBPF_AGENT_EVENT_INFO, NULL, "no GPU timeline: %s",
			  rc == -ENOSYS ? "the driver or the agent lacks what it needs" : "out of memory");
	s->hooks = (struct gbpf_cu_hooks){
		.sz = sizeof(s->hooks),
		.ctx = s,
		.image_loaded = ca_on_image,
		.launch_pre = ca_launch_pre,
		.launch_post = ca_launch_post,
		.call_pre = ca_call_pre,
		.call_post = ca_call_post,
	};
	atomic_store(&s->attached, 1);
	rc = gbpf_cu_intercept_set_hooks(&s->hooks);
	if (rc) {
		atomic_store(&s->attached, 0);
		snprintf(log, log_size, "cuda agent: cannot install the driver hooks (%d)", rc);
		goto fail;
	}
	return 0;
fail:
	free(dp);
	free(s->dev);
	s->dev = NULL;
	s->dev_cnt = 0;
	free(s->fragment);
	s->fragment = NULL;
	free(s->fragment_plain);
	s->fragment_plain = NULL;
	return rc;
}

/* Hooks while detached: record images only (see gbpf_cuda_agent_detach). */
static const struct gbpf_cu_hooks ca_idle_hooks = {
	.sz = sizeof(ca_idle_hooks),
	.ctx = &cuda_agent_state,
	.image_loaded = ca_on_image,
};

void gbpf_cuda_agent_detach(struct gbpf_backend *be)
{
	(void)be;
	/*
	 * Launches check `attached` first; the hooks struct, images and
	 * modules stay (a launch in flight on another thread may use them).
	 */
	atomic_store(&cuda_agent_state.attached, 0);
	/*
	 * Images loaded while detached are still recorded: a later attach
	 * (gbpf attach to an idle agent) instruments kernels of modules the
	 * application loaded before it. Nothing else is hooked.
	 */
	gbpf_cu_intercept_set_hooks(&ca_idle_hooks);
	/*
	 * What the GPU recorded so far reaches the controller; then the device
	 * copies go (no launch uses them once `attached` is 0; the final
	 * flush waited for the GPU).
	 */
	ca_timeline_destroy(cuda_agent_state.timeline);
	cuda_agent_state.timeline = NULL;
	pthread_mutex_lock(&cuda_agent_state.lock);
	ca_printqs_close_all(&cuda_agent_state.printqs);
	gbpf_san_engine_destroy(cuda_agent_state.san);
	cuda_agent_state.san = NULL;
	ca_devmaps_destroy(cuda_agent_state.devmaps);
	cuda_agent_state.devmaps = NULL;
	free(cuda_agent_state.dmaps);
	cuda_agent_state.dmaps = NULL;
	free(cuda_agent_state.map_slots);
	cuda_agent_state.map_slots = NULL;
	/* Flushed: the primary contexts kept for it are the application's alone again. */
	ca_primary_release_all(&cuda_agent_state.primaries);
	pthread_mutex_unlock(&cuda_agent_state.lock);
}
