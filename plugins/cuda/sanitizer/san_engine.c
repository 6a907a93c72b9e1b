/* SPDX-License-Identifier: MIT */
/*
 * The Compute Sanitizer engine (san_engine.h): subscription, per-context
 * patch modules, per-module patching and per-kernel records.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gbpf/cuda_inject.h>
#include <gbpf/plugin.h>

#include "plugins/cuda/cuda_clock.h"
#include "san_api.h"
#include "san_engine.h"
#include "san_patch.h"
#include "san_process.h"

/* cuDeviceGetAttribute: compute capability. */
#define SAN_ATTR_CC_MAJOR 75
#define SAN_ATTR_CC_MINOR 76
#define SAN_PROC_PER_THREAD_STREAM 2ull

typedef CUresult (*san_ctx_get_fn)(CUcontext *);
typedef CUresult (*san_ctx_dev_fn)(CUdevice *);
typedef CUresult (*san_attr_fn)(int *, int, CUdevice);
typedef CUresult (*san_kernel_fn_fn)(CUfunction *, CUkernel);
typedef CUresult (*san_func_mod_fn)(CUmodule *, CUfunction);
typedef CUresult (*san_alloc_fn)(CUdeviceptr *, size_t);
typedef CUresult (*san_htod_fn)(CUdeviceptr, const void *, size_t);
typedef CUresult (*san_memset32_async_fn)(CUdeviceptr, unsigned int, size_t, CUstream);
typedef CUresult (*san_ctx_push_fn)(CUcontext);
typedef CUresult (*san_ctx_pop_fn)(CUcontext *);
typedef CUresult (*san_ctx_sync_fn)(void);

/* A context the patch module was loaded into (or failed to load into). */
struct san_ctx {
	CUcontext ctx;
	int ok;
	uint32_t device; /* its device's ordinal: the records' device (ctx->device) */
	void *cubin; /* kept: the library may refer to the image it was given */
	struct san_ctx *next;
};

struct san_module {
	CUmodule mod;
	CUcontext ctx;
	int ok;
	struct san_module *next;
};

/* One kernel handle (as the application passes it) in one context. */
struct san_kernel {
	const void *handle;
	CUcontext ctx;
	CUmodule mod; /* its module in ctx (NULL when the driver did not say) */
	int ok;
	int yield_said; /* its loss of the engine (the subscription given to CUPTI) was reported */
	CUdeviceptr record;
	struct san_kernel *next;
};

/* The reason every kernel the engine can no longer serve is given. */
#define SAN_YIELD_REASON "the CUPTI profiler took the tool subscription"

struct gbpf_san_engine {
	pthread_mutex_t lock;
	const struct gbpf_san_api *api; /* the process's subscription (san_process.h), once subscribed */
	int active;
	int subscribed; /* 1 subscribed, -1 failed (final), 0 not yet */
	struct gbpf_agent_services svc;
	size_t *prog_index;
	uint32_t *probe_kind;
	size_t probe_cnt;
	size_t map_cnt;
	gbpf_san_maps_fn maps_table;
	void *maps_arg;
	struct gbpf_san_patch_opts popts; /* to rebuild the text in another form */
	char *fragment;
	char *ptx[2];   /* the patch module's PTX: as emitted, and with every function .visible */
	size_t ptx_len[2];
	int form;       /* the form the library accepted last (tried first) */
	int repatch;    /* GBPF_SAN_REPATCH=1: patch a module again for each new kernel */
	int yielded;    /* the subscription went to CUPTI: nothing is patched any more */
	char yield_call[64];
	struct san_ctx *ctxs;
	struct san_module *modules;
	struct san_kernel *kernels;
	struct gbpf_san_engine_stats stats;
	/* driver entry points every launch calls (gbpf_cu_real_proc_once) */
	_Atomic(void *) p_ctx_get, p_memset32, p_memset32_ptds;
};

static void san_report(struct gbpf_san_engine *e, enum gbpf_agent_event ev, const char *kernel, const char *fmt,
		       ...) __attribute__((format(printf, 4, 5)));
static void san_report(struct gbpf_san_engine *e, enum gbpf_agent_event ev, const char *kernel, const char *fmt,
		       ...)
{
	va_list ap;

	va_start(ap, fmt);
	gbpf_agent_vreportf(&e->svc, ev, kernel, fmt, ap);
	va_end(ap);
}

/*
 * A module about to be unloaded forgets its state, and its kernels theirs:
 * a later module may get the same handle, and its functions the handles of
 * the old one's, which must then be patched and given records afresh (a
 * kernel found by its handle alone ran the new module's code unpatched, or
 * with the old kernel's record). The records stay in device memory, as at
 * a detach: a kernel of the module may still be running. Called from the
 * process's subscription (san_process.c).
 */
static void san_module_unloading(void *arg, CUcontext ctx, CUmodule mod)
{
	struct gbpf_san_engine *e = arg;

	pthread_mutex_lock(&e->lock);
	for (struct san_module *m = e->modules; m; m = m->next)
		if (m->mod == mod && m->ctx == ctx)
			m->mod = NULL;
	for (struct san_kernel **pk = &e->kernels; *pk;) {
		struct san_kernel *k = *pk;

		if (k->mod != mod || k->ctx != ctx) {
			pk = &k->next;
			continue;
		}
		*pk = k->next;
		free(k);
	}
	pthread_mutex_unlock(&e->lock);
}

static void san_engine_yield(void *arg, const char *call, char *msg, size_t msg_size);

int gbpf_san_engine_choice(uint32_t attach_flags, char *why, size_t why_size)
{
	const char *env = getenv("GBPF_CUDA_ENGINE");

	if ((attach_flags & GBPF_AGENT_F_ENGINE_PTX) && (attach_flags & GBPF_AGENT_F_ENGINE_SANITIZER)) {
		snprintf(why, why_size, "engine: both ptx and sanitizer asked for");
		return -EINVAL;
	}
	if (attach_flags & GBPF_AGENT_F_ENGINE_PTX)
		return GBPF_SAN_CHOICE_PTX;
	if (attach_flags & GBPF_AGENT_F_ENGINE_SANITIZER)
		return GBPF_SAN_CHOICE_SANITIZER;
	if (!env || !*env || !strcmp(env, "auto"))
		return GBPF_SAN_CHOICE_AUTO;
	if (!strcmp(env, "ptx"))
		return GBPF_SAN_CHOICE_PTX;
	if (!strcmp(env, "sanitizer"))
		return GBPF_SAN_CHOICE_SANITIZER;
	snprintf(why, why_size, "GBPF_CUDA_ENGINE=%.32s: expected ptx, sanitizer or auto", env);
	return -EINVAL;
}

/*
 * Use the process's subscription, made at load time unless
 * GBPF_SAN_SUBSCRIBE says otherwise (then made here: too late for the
 * Sanitizer to patch in contexts that exist already, which the reports
 * say). Under the lock, or before
 * sharing; a failure is final.
 */
static int san_subscribe(struct gbpf_san_engine *e, enum gbpf_san_when when, char *log, size_t log_size)
{
	int rc;

	if (e->subscribed)
		return e->subscribed > 0 ? 0 : -ENOENT;
	e->subscribed = -1;
	rc = gbpf_san_process_subscribe(when, &e->api, log, log_size);
	if (rc)
		return rc;
	gbpf_san_process_on_unload(san_module_unloading, e);
	e->subscribed = 1;
	return 0;
}

int gbpf_san_engine_create(struct gbpf_san_engine **out, const struct gbpf_san_engine_opts *o, char *log,
			   size_t log_size)
{
	struct gbpf_san_engine *e;
	struct gbpf_san_patch_opts po = {.sz = sizeof(po)};
	int rc;

	if (!out || !o || o->sz < sizeof(*o) || !o->svc || !o->probes || !o->prog_index || !o->probe_cnt ||
	    o->probe_cnt > GBPF_SAN_MAX_PROBES || !o->fragment || (o->map_cnt && !o->maps_table)) {
		snprintf(log, log_size, "sanitizer engine: bad options (1..%d device programs)", GBPF_SAN_MAX_PROBES);
		return -EINVAL;
	}
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	pthread_mutex_init(&e->lock, NULL);
	e->svc = *o->svc;
	e->map_cnt = o->map_cnt;
	e->maps_table = o->maps_table;
	e->maps_arg = o->maps_arg;
	e->probe_cnt = o->probe_cnt;
	e->prog_index = calloc(o->probe_cnt, sizeof(*e->prog_index));
	e->probe_kind = calloc(o->probe_cnt, sizeof(*e->probe_kind));
	if (!e->prog_index || !e->probe_kind) {
		rc = -ENOMEM;
		goto fail;
	}
	for (size_t i = 0; i < o->probe_cnt; i++) {
		e->prog_index[i] = o->prog_index[i];
		e->probe_kind[i] = o->probes[i]->attach.kind;
	}
	/* The text does not depend on the device: built once, compiled per architecture. */
	e->fragment = strdup(o->fragment);
	if (!e->fragment) {
		rc = -ENOMEM;
		goto fail;
	}
	po.fragment = e->fragment;
	po.probe_kind = e->probe_kind;
	po.probe_cnt = e->probe_cnt;
	po.map_cnt = e->map_cnt;
	po.ctx_unused = o->ctx_unused;
	e->popts = po;
	rc = gbpf_san_patch_ptx(&po, &e->ptx[0], &e->ptx_len[0], log, log_size);
	if (rc)
		goto fail;
	/*
	 * The subscription normally exists already (made when the plugin was
	 * loaded, before any context existed: san_process.h). Otherwise
	 * it is made here only when asked (GBPF_SAN_SUBSCRIBE=attach), else at
	 * the first launch a probe targets.
	 */
	{
		enum gbpf_san_when when = gbpf_san_process_when();

		if (gbpf_san_process_state(NULL) != 0 || when == GBPF_SAN_WHEN_ATTACH) {
			rc = san_subscribe(e, when, log, log_size);
			if (rc)
				goto fail;
		}
	}
	{
		const char *rp = getenv("GBPF_SAN_REPATCH");

		e->repatch = rp && !strcmp(rp, "1");
	}
	e->active = 1;
	gbpf_san_process_on_yield(san_engine_yield, e);
	*out = e;
	return 0;
fail:
	free(e->ptx[0]);
	free(e->fragment);
	free(e->prog_index);
	free(e->probe_kind);
	pthread_mutex_destroy(&e->lock);
	free(e);
	return rc;
}

/* Load the patch module into the current context @p ctx, once. Under the lock. */
static struct san_ctx *san_ctx_for(struct gbpf_san_engine *e, CUcontext ctx, const char *kernel)
{
	san_ctx_dev_fn getdev = (san_ctx_dev_fn)gbpf_cu_real_proc("cuCtxGetDevice", 2000, 0);
	san_attr_fn attr = (san_attr_fn)gbpf_cu_real_proc("cuDeviceGetAttribute", 2000, 0);
	CUdeviceptr *table = NULL;
	struct san_ctx *c;
	char why[1024] = "", arch[16];
	CUdevice dev = 0;
	int major = 0, minor = 0, cached = 0, rc;
	size_t size = 0;
	gbpf_san_result r;

	for (c = e->ctxs; c; c = c->next)
		if (c->ctx == ctx)
			return c->ok ? c : NULL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->ctx = ctx;
	c->next = e->ctxs;
	e->ctxs = c;
	if (!getdev || !attr || getdev(&dev) != GBPF_CUDA_SUCCESS ||
	    attr(&major, SAN_ATTR_CC_MAJOR, dev) != GBPF_CUDA_SUCCESS ||
	    attr(&minor, SAN_ATTR_CC_MINOR, dev) != GBPF_CUDA_SUCCESS) {
		san_report(e, GBPF_AGENT_EVENT_ERROR, kernel, "sanitizer engine: cannot read the device's architecture");
		return NULL;
	}
	c->device = (uint32_t)dev;
	snprintf(arch, sizeof(arch), "sm_%d%d", major, minor);
	if (e->map_cnt) {
		table = calloc(e->map_cnt, sizeof(*table));
		rc = table ? e->maps_table(e->maps_arg, ctx, table, why, sizeof(why)) : -ENOMEM;
		if (rc) {
			san_report(e, GBPF_AGENT_EVENT_NOT_INSTRUMENTED, kernel,
				   "sanitizer engine: maps unreachable from the GPU: %s", rc == -ENOMEM ? "out of memory" : why);
			free(table);
			return NULL;
		}
	}
	/*
	 * Two forms of the module: as emitted, then with every helper function
	 * .visible (the form the library accepted is tried first next time).
	 */
	for (int t = 0; t < 2 && !c->ok; t++) {
		int form = t ? !e->form : e->form;

		free(c->cubin);
		c->cubin = NULL;
		if (!e->ptx[form]) {
			struct gbpf_san_patch_opts po = e->popts;

			po.flags = form ? GBPF_SAN_PATCH_VISIBLE_FUNCS : 0;
			if (gbpf_san_patch_ptx(&po, &e->ptx[form], &e->ptx_len[form], why, sizeof(why)))
				break;
		}
		rc = gbpf_san_patch_compile(e->ptx[form], e->ptx_len[form], arch, &c->cubin, &size, &cached, why,
					    sizeof(why));
		if (rc) {
			san_report(e, GBPF_AGENT_EVENT_ERROR, kernel, "sanitizer engine: patch module for %s: %s", arch,
				   why);
			break;
		}
		e->stats.cubin_cached = cached;
		/* The clock offset of now, as the PTX engine's modules get theirs when loaded. */
		rc = gbpf_san_patch_set_globals(c->cubin, size, (const uint64_t *)table, e->map_cnt,
						((uint64_t)getpid() << 32) | (uint32_t)gettid(),
						cuda_clock_offset_ns(), why, sizeof(why));
		if (rc) {
			san_report(e, GBPF_AGENT_EVENT_ERROR, kernel, "sanitizer engine: %s", why);
			break;
		}
		r = e->api->add_patches(c->cubin, ctx);
		if (r != GBPF_SAN_SUCCESS && e->api->add_patches(c->cubin, NULL) == GBPF_SAN_SUCCESS) {
			/* The library may know the context by another handle: "the current one" then. */
			san_report(e, GBPF_AGENT_EVENT_INFO, kernel, "sanitizerAddPatches took the current context (NULL), "
								     "not the handle %p", (void *)ctx);
			r = GBPF_SAN_SUCCESS;
		}
		if (r == GBPF_SAN_SUCCESS) {
			c->ok = 1;
			e->form = form;
			gbpf_san_process_note_patches();
		} else {
			enum gbpf_san_when when = GBPF_SAN_WHEN_LOAD;

			gbpf_san_process_state(&when);
			san_report(e, t ? GBPF_AGENT_EVENT_ERROR : GBPF_AGENT_EVENT_INFO, kernel,
				   "sanitizerAddPatches (%s, %s, %zu bytes, %s, %s; subscribed %s) failed: %s%s",
				   e->api->path, arch, size, cached ? "cached" : "compiled",
				   form ? "visible helpers" : "as emitted", gbpf_san_when_name(when),
				   gbpf_san_api_strerror(e->api, r), t ? "" : "; trying the other form");
		}
	}
	free(table);
	if (!c->ok)
		return NULL;
	e->stats.contexts++;
	return c;
}

/* Patch module @p mod at every patch point a probe serves, once. Under the lock. */
static int san_patch_module(struct gbpf_san_engine *e, CUmodule mod, CUcontext ctx, const char *kernel)
{
	static const int points[] = {
		GBPF_SAN_INSTRUCTION_BLOCK_ENTER, GBPF_SAN_INSTRUCTION_BLOCK_EXIT,
		GBPF_SAN_INSTRUCTION_GLOBAL_MEMORY_ACCESS, GBPF_SAN_INSTRUCTION_SHARED_MEMORY_ACCESS,
		GBPF_SAN_INSTRUCTION_BARRIER,
	};
	struct san_module *m;
	gbpf_san_result r;

	for (m = e->modules; m; m = m->next)
		if (m->mod == mod && m->ctx == ctx)
			break;
	if (m && (!m->ok || !e->repatch))
		return m->ok ? 0 : -EIO;
	if (m) {
		/*
		 * GBPF_SAN_REPATCH=1 (an experiment for lazily loaded modules):
		 * patch the module again for each new kernel of it, in case
		 * functions loaded after the first patch were left unpatched.
		 */
		r = e->api->patch_module(mod);
		if (r != GBPF_SAN_SUCCESS) {
			san_report(e, GBPF_AGENT_EVENT_NOT_INSTRUMENTED, kernel, "sanitizerPatchModule (again) failed: %s",
				   gbpf_san_api_strerror(e->api, r));
			return -EIO;
		}
		return 0;
	}
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->mod = mod;
	m->ctx = ctx;
	m->next = e->modules;
	e->modules = m;
	for (size_t p = 0; p < sizeof(points) / sizeof(points[0]); p++) {
		const char *cb = gbpf_san_patch_callback(e->probe_kind, e->probe_cnt, points[p]);

		if (!cb)
			continue;
		r = e->api->patch_instructions(points[p], mod, cb);
		if (r != GBPF_SAN_SUCCESS) {
			san_report(e, GBPF_AGENT_EVENT_NOT_INSTRUMENTED, kernel,
				   "sanitizerPatchInstructions(%d, %s) failed: %s", points[p], cb,
				   gbpf_san_api_strerror(e->api, r));
			return -EIO;
		}
	}
	r = e->api->patch_module(mod);
	if (r != GBPF_SAN_SUCCESS) {
		/*
		 * A module the library failed to patch may be left half patched
		 * (seen on the H200 after a hot swap: the app then died of an
		 * illegal instruction). Take it back to its original code.
		 */
		gbpf_san_result u = e->api->unpatch_module ? e->api->unpatch_module(mod) : GBPF_SAN_SUCCESS;

		san_report(e, GBPF_AGENT_EVENT_NOT_INSTRUMENTED, kernel, "sanitizerPatchModule failed: %s%s%s",
			   gbpf_san_api_strerror(e->api, r),
			   u == GBPF_SAN_SUCCESS ? "; the module runs its original code" :
						   "; sanitizerUnpatchModule failed too: ",
			   u == GBPF_SAN_SUCCESS ? "" : gbpf_san_api_strerror(e->api, u));
		return -EIO;
	}
	m->ok = 1;
	e->stats.modules++;
	return 0;
}

/* Instrument kernel @p k at its first launch. Under the lock. */
static void san_instrument(struct gbpf_san_engine *e, struct san_kernel *k, const struct gbpf_cu_launch *l)
{
	san_kernel_fn_fn kfn = (san_kernel_fn_fn)gbpf_cu_real_proc("cuKernelGetFunction", 12000, 0);
	san_func_mod_fn fmod = (san_func_mod_fn)gbpf_cu_real_proc("cuFuncGetModule", 11000, 0);
	san_alloc_fn alloc = (san_alloc_fn)gbpf_cu_real_proc("cuMemAlloc", 3020, 0);
	san_htod_fn htod = (san_htod_fn)gbpf_cu_real_proc("cuMemcpyHtoD", 3020, 0);
	struct gbpf_san_record rec = {.kernel_id = gbpf_kernel_id(l->name)};
	struct gbpf_cu_handle_info info;
	struct san_ctx *c;
	CUfunction fn = l->func;
	CUmodule mod = NULL;
	gbpf_san_result r;

	for (size_t i = 0; i < e->probe_cnt; i++)
		if (e->svc.kernel_selected && e->svc.kernel_selected(e->svc.ctx, e->prog_index[i], l->name))
			rec.probes |= 1ull << i;
	/*
	 * The module first, for every kernel handle, probed or not: its unload forgets the handle
	 * (san_module_unloading), which a kernel of a later module may get. A CUkernel
	 * (cuLibraryGetKernel) is launched as is; the Sanitizer works on its function in this context.
	 */
	if (!kfn || !fmod || !alloc || !htod) {
		if (rec.probes)
			san_report(e, GBPF_AGENT_EVENT_ERROR, l->name, "sanitizer engine: driver entry points unavailable");
		return;
	}
	if (!gbpf_cu_handle_lookup(l->func, &info) && info.kind == GBPF_CU_HANDLE_KERNEL &&
	    kfn(&fn, (CUkernel)(void *)l->func) != GBPF_CUDA_SUCCESS) {
		if (rec.probes)
			san_report(e, GBPF_AGENT_EVENT_ERROR, l->name, "sanitizer engine: cuKernelGetFunction failed");
		return;
	}
	if (fmod(&mod, fn) != GBPF_CUDA_SUCCESS || !mod) {
		if (rec.probes)
			san_report(e, GBPF_AGENT_EVENT_ERROR, l->name, "sanitizer engine: cuFuncGetModule failed");
		return;
	}
	k->mod = mod;
	if (!rec.probes)
		return;
	if (e->yielded) {
		k->yield_said = 1;
		san_report(e, GBPF_AGENT_EVENT_NOT_INSTRUMENTED, l->name,
			   "not instrumentable: %s (%s); only the PTX engine runs, and this kernel has no PTX it could use",
			   SAN_YIELD_REASON, e->yield_call);
		return;
	}
	if (e->subscribed <= 0) {
		char why[1024] = "";

		if (e->subscribed < 0)
			return; /* reported once */
		if (san_subscribe(e, GBPF_SAN_WHEN_LAZY, why, sizeof(why))) {
			san_report(e, GBPF_AGENT_EVENT_NOT_INSTRUMENTED, l->name,
				   "no Compute Sanitizer engine (kernels without PTX stay uninstrumented): %s", why);
			return;
		}
	}
	c = san_ctx_for(e, k->ctx, l->name);
	if (!c || san_patch_module(e, mod, k->ctx, l->name))
		return;
	/* A record serves one kernel handle in one context, hence one device. */
	rec.device = c->device;
	if (alloc(&k->record, sizeof(rec)) != GBPF_CUDA_SUCCESS ||
	    htod(k->record, &rec, sizeof(rec)) != GBPF_CUDA_SUCCESS) {
		san_report(e, GBPF_AGENT_EVENT_ERROR, l->name, "sanitizer engine: cannot allocate the kernel's record");
		return;
	}
	r = e->api->set_callback_data(fn, (const void *)(uintptr_t)k->record);
	if (r != GBPF_SAN_SUCCESS) {
		san_report(e, GBPF_AGENT_EVENT_ERROR, l->name, "sanitizerSetCallbackData failed: %s",
			   gbpf_san_api_strerror(e->api, r));
		return;
	}
	k->ok = 1;
	e->stats.kernels++;
	san_report(e, GBPF_AGENT_EVENT_INFO, l->name,
		   "instrumented by the Compute Sanitizer engine (%s%s%s%s)",
		   gbpf_san_patch_callback(e->probe_kind, e->probe_cnt, GBPF_SAN_INSTRUCTION_BLOCK_ENTER) ? "entry " : "",
		   gbpf_san_patch_callback(e->probe_kind, e->probe_cnt, GBPF_SAN_INSTRUCTION_BLOCK_EXIT) ? "exit " : "",
		   gbpf_san_patch_callback(e->probe_kind, e->probe_cnt, GBPF_SAN_INSTRUCTION_GLOBAL_MEMORY_ACCESS)
			   ? "global+shared memory "
			   : "",
		   gbpf_san_patch_callback(e->probe_kind, e->probe_cnt, GBPF_SAN_INSTRUCTION_BARRIER) ? "barrier" : "");
}

int gbpf_san_engine_launch(struct gbpf_san_engine *e, const struct gbpf_cu_launch *l, uint64_t *id,
			   int need_launch_id)
{
	san_ctx_get_fn ctx_get;
	CUcontext ctx = NULL;
	struct san_kernel *k;
	CUdeviceptr record = 0;

	if (!e || !l || !l->name || !l->func || !id)
		return -ENOENT;
	ctx_get = (san_ctx_get_fn)gbpf_cu_real_proc_once(&e->p_ctx_get, "cuCtxGetCurrent", 4000, 0);
	if (l->api != GBPF_CU_LAUNCH_KERNEL && l->api != GBPF_CU_LAUNCH_KERNEL_EX &&
	    l->api != GBPF_CU_LAUNCH_COOPERATIVE)
		return -ENOENT;
	if (ctx_get)
		ctx_get(&ctx);
	pthread_mutex_lock(&e->lock);
	if (!e->active)
		goto out;
	for (k = e->kernels; k; k = k->next)
		if (k->handle == (const void *)l->func && k->ctx == ctx)
			break;
	if (!k && (k = calloc(1, sizeof(*k)))) {
		k->handle = l->func;
		k->ctx = ctx;
		san_instrument(e, k, l);
		k->next = e->kernels;
		e->kernels = k;
	} else if (k && e->yielded && !k->yield_said) {
		/* Instrumented before the yield: its module runs its original code now (said once). */
		k->yield_said = 1;
		san_report(e, GBPF_AGENT_EVENT_NOT_INSTRUMENTED, l->name,
			   "no longer instrumented: %s (%s); the Compute Sanitizer engine restored its module",
			   SAN_YIELD_REASON, e->yield_call);
	}
	if (k && k->ok) {
		record = k->record;
		e->stats.launches++;
	}
out:
	pthread_mutex_unlock(&e->lock);
	if (!record)
		return -ENOENT;
	if (!*id)
		*id = e->svc.next_launch_id(e->svc.ctx);
	if (need_launch_id) {
		/* Stream order puts the id between the previous launch and this one (as the PTX engine). */
		san_memset32_async_fn ms = (san_memset32_async_fn)gbpf_cu_real_proc_once(
			l->ptds ? &e->p_memset32_ptds : &e->p_memset32, "cuMemsetD32Async", 3020,
			l->ptds ? SAN_PROC_PER_THREAD_STREAM : 0);
		CUdeviceptr at = record + offsetof(struct gbpf_san_record, launch_id);

		if (!ms || ms(at, (uint32_t)*id, 1, l->stream) != GBPF_CUDA_SUCCESS ||
		    ms(at + 4, (uint32_t)(*id >> 32), 1, l->stream) != GBPF_CUDA_SUCCESS)
			san_report(e, GBPF_AGENT_EVENT_ERROR, l->name,
				   "sanitizer engine: cannot set the launch id on the launch's stream");
	}
	return 0;
}

void gbpf_san_engine_stats(struct gbpf_san_engine *e, struct gbpf_san_engine_stats *st)
{
	if (!e || !st)
		return;
	pthread_mutex_lock(&e->lock);
	*st = e->stats;
	pthread_mutex_unlock(&e->lock);
}

/*
 * Detach: every module this engine patched goes back to its original code,
 * so that nothing is left behind (the callbacks would otherwise keep
 * writing into maps the agent is about to unmap, and a later attach would
 * patch an already patched module, which the library fails). Each context
 * is synchronised first: a kernel still running must not lose its code.
 */
/* Restore one module: its context synchronised first (a kernel still running keeps its code). */
static int san_unpatch_one(const struct gbpf_san_api *api, CUcontext ctx, CUmodule mod)
{
	san_ctx_push_fn push = (san_ctx_push_fn)gbpf_cu_real_proc("cuCtxPushCurrent", 4000, 0);
	san_ctx_pop_fn pop = (san_ctx_pop_fn)gbpf_cu_real_proc("cuCtxPopCurrent", 4000, 0);
	san_ctx_sync_fn sync = (san_ctx_sync_fn)gbpf_cu_real_proc("cuCtxSynchronize", 2000, 0);
	CUcontext popped;
	bool pushed = false;
	int ok;

	if (push && pop && sync && push(ctx) == GBPF_CUDA_SUCCESS) {
		pushed = true;
		sync();
	}
	ok = api->unpatch_module(mod) == GBPF_SAN_SUCCESS;
	if (pushed)
		pop(&popped);
	return ok;
}

static void san_unpatch_all(struct gbpf_san_engine *e)
{
	unsigned failed = 0, done = 0;

	if (!e->api || !e->api->unpatch_module)
		return;
	for (struct san_module *m = e->modules; m; m = m->next) {
		if (!m->ok || !m->mod)
			continue;
		if (san_unpatch_one(e->api, m->ctx, m->mod))
			done++;
		else
			failed++;
		m->ok = 0;
	}
	if (failed)
		san_report(e, GBPF_AGENT_EVENT_ERROR, NULL,
			   "sanitizer engine: detach: %u of %u patched modules could not be restored "
			   "(sanitizerUnpatchModule failed): their kernels keep calling the detached probes",
			   failed, failed + done);
}

/*
 * The process's subscription goes to CUPTI (called by san_process.c under
 * its yield lock, while still subscribed). Under the engine's lock: mark it
 * yielded (launches get no record from now on) and take the list of
 * patched modules; then, outside the lock, restore them as the detach does,
 * because the library's module-unload callback and launches take the
 * engine's lock from inside driver calls. A launch that got its record just
 * before and that the driver starts before the restore still runs patched
 * code: its probes run against live maps, as any instrumented launch.
 */
static void san_engine_yield(void *arg, const char *call, char *msg, size_t msg_size)
{
	struct gbpf_san_engine *e = arg;
	struct san_module *m;
	struct san_yield_mod {
		CUcontext ctx;
		CUmodule mod;
	} *todo = NULL;
	unsigned n = 0, cap = 0, kernels = 0, done = 0;

	pthread_mutex_lock(&e->lock);
	e->yielded = 1;
	snprintf(e->yield_call, sizeof(e->yield_call), "%s", call ? call : "?");
	for (m = e->modules; m; m = m->next)
		cap += m->ok && m->mod;
	if (cap)
		todo = calloc(cap, sizeof(*todo));
	for (m = e->modules; m && todo; m = m->next)
		if (m->ok && m->mod && n < cap) {
			todo[n].ctx = m->ctx;
			todo[n].mod = m->mod;
			n++;
			m->ok = 0;
		}
	for (struct san_kernel *k = e->kernels; k; k = k->next) {
		/* Kernels it served say so at their next launch; the others lost nothing. */
		k->yield_said = !k->ok;
		kernels += k->ok != 0;
		k->ok = 0;
	}
	pthread_mutex_unlock(&e->lock);
	if (e->api && e->api->unpatch_module)
		for (unsigned i = 0; i < n; i++)
			done += (unsigned)san_unpatch_one(e->api, todo[i].ctx, todo[i].mod);
	free(todo);
	if (cap && !n)
		snprintf(msg, msg_size, "out of memory listing its %u patched modules: they stay patched", cap);
	else
		snprintf(msg, msg_size, "restored %u/%u patched modules (each context synchronised once), its %u "
			 "kernels run uninstrumented now", done, n, kernels);
}

void gbpf_san_engine_destroy(struct gbpf_san_engine *e)
{
	if (!e)
		return;
	/* Waits for a yield in progress (it uses e); none reaches e after this. */
	gbpf_san_process_on_yield(NULL, e);
	/*
	 * The subscription stays (the process's, san_process.h): a later attach
	 * needs it, and one made after the driver's initialisation could not
	 * patch. Module unloads stop reaching this engine first.
	 */
	if (e->subscribed > 0)
		gbpf_san_process_on_unload(NULL, NULL);
	pthread_mutex_lock(&e->lock);
	e->active = 0;
	pthread_mutex_unlock(&e->lock);
	san_unpatch_all(e);
	/*
	 * The records stay in device memory (the context frees them). The host
	 * state goes: the agent calls this after no launch can reach the
	 * engine any more (detach).
	 */
	while (e->ctxs) {
		struct san_ctx *c = e->ctxs;

		e->ctxs = c->next;
		free(c->cubin);
		free(c);
	}
	while (e->modules) {
		struct san_module *m = e->modules;

		e->modules = m->next;
		free(m);
	}
	while (e->kernels) {
		struct san_kernel *k = e->kernels;

		e->kernels = k->next;
		free(k);
	}
	/* The library stays loaded: the driver may still hold callbacks into it. */
	free(e->ptx[0]);
	free(e->ptx[1]);
	free(e->fragment);
	free(e->prog_index);
	free(e->probe_kind);
	pthread_mutex_destroy(&e->lock);
	free(e);
}
