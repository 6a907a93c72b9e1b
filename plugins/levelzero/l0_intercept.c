/* SPDX-License-Identifier: MIT */
/*
 * plugins/levelzero/l0_intercept.c - how the levelzero plugin sees the
 * application's Level Zero calls (see l0_agent.h).
 *
 * `gbpf run` preloads the plugin (GBPF_CAP_INTERCEPT). Its constructor,
 * in the application before main, sets ZE_ENABLE_TRACING_LAYER=1 (the
 * loader reads it at the first zeInit) unless GBPF_LEVELZERO_INTERCEPT is
 * "preload". The preloaded zeInit creates the tracer right after the real
 * zeInit: callbacks on zeModuleCreate (prologue swaps the descriptor),
 * zeKernelCreate, zeKernelSetGroupSize and zeCommandListAppendLaunchKernel.
 * Loader calls made inside callbacks bypass tracing.
 *
 * When the tracer cannot be created (or in "preload" mode) the exported
 * ze* functions below do the same work themselves. They miss applications
 * that dlopen the loader and dlsym its functions; the tracing layer does not.
 * The plugin never interposes dlsym (in sanitizer builds the ASan runtime
 * would call it before it is initialised).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "l0_agent.h"
#include "l0_loader.h"
#include <level_zero/ze_ddi.h>

/** Interception state of the process (set by the constructor and the zeInit interposer). */
static struct l0_intercept_state {
	atomic_int mode; /* enum l0_mode */
	char tracing_failure[160];
	int tracing_failed;
	pthread_once_t tracer_once;
	zel_tracer_handle_t tracer;
} l0_intercept_state = {.tracer_once = PTHREAD_ONCE_INIT};

enum l0_mode l0_intercept_mode(void)
{
	return (enum l0_mode)atomic_load(&l0_intercept_state.mode);
}

const char *l0_intercept_tracing_failure(void)
{
	return l0_intercept_state.tracing_failed ? l0_intercept_state.tracing_failure : NULL;
}

__attribute__((constructor)) static void l0_intercept_init(void)
{
	const char *want = getenv("GBPF_LEVELZERO_INTERCEPT");

	/* Only inside an application that `gbpf run` started (the agent's own condition). */
	if (!getenv("GBPF_AGENT_SOCK"))
		return;
	if (want && !strcmp(want, "preload")) {
		atomic_store(&l0_intercept_state.mode, L0_MODE_PRELOAD);
		return;
	}
	setenv("ZE_ENABLE_TRACING_LAYER", "1", 1);
	atomic_store(&l0_intercept_state.mode, L0_MODE_TRACING);
}

/* ---- tracing-layer callbacks ---- */

static void ZE_APICALL l0_cb_module_pre(ze_module_create_params_t *p, ze_result_t r, void *user,
					void **inst)
{
	void *cookie = NULL;
	const ze_module_desc_t *d =
		l0_agent_module_pre(*p->phContext, *p->phDevice, *p->pdesc, 1, &cookie);

	if (d)
		*p->pdesc = d;
	*inst = cookie;
}

static void ZE_APICALL l0_cb_module_post(ze_module_create_params_t *p, ze_result_t r, void *user,
					 void **inst)
{
	if (*inst)
		l0_agent_module_post(*inst, r,
				     r == ZE_RESULT_SUCCESS && *p->pphModule ? **p->pphModule : NULL, 1);
}

static void ZE_APICALL l0_cb_kernel_post(ze_kernel_create_params_t *p, ze_result_t r, void *user,
					 void **inst)
{
	if (r == ZE_RESULT_SUCCESS && *p->pdesc && *p->pphKernel)
		l0_agent_kernel_created(*p->phModule, (*p->pdesc)->pKernelName, **p->pphKernel);
}

static void ZE_APICALL l0_cb_group_post(ze_kernel_set_group_size_params_t *p, ze_result_t r,
					void *user, void **inst)
{
	if (r == ZE_RESULT_SUCCESS)
		l0_agent_group_size(*p->phKernel, *p->pgroupSizeX, *p->pgroupSizeY, *p->pgroupSizeZ);
}

static void ZE_APICALL l0_cb_launch_pre(ze_command_list_append_launch_kernel_params_t *p,
					ze_result_t r, void *user, void **inst)
{
	l0_agent_launch_pre(*p->phCommandList, *p->phKernel, *p->ppLaunchFuncArgs, *p->pnumWaitEvents,
			    *p->pphWaitEvents);
}

static void ZE_APICALL l0_cb_queue_sync(ze_command_queue_synchronize_params_t *p, ze_result_t r,
					void *user, void **inst)
{
	if (r == ZE_RESULT_SUCCESS)
		l0_agent_synced();
}

static void ZE_APICALL l0_cb_event_sync(ze_event_host_synchronize_params_t *p, ze_result_t r,
					void *user, void **inst)
{
	if (r == ZE_RESULT_SUCCESS)
		l0_agent_synced();
}

static void ZE_APICALL l0_cb_fence_sync(ze_fence_host_synchronize_params_t *p, ze_result_t r,
					void *user, void **inst)
{
	if (r == ZE_RESULT_SUCCESS)
		l0_agent_synced();
}

static void l0_tracing_fail(const char *what, unsigned code)
{
	struct l0_intercept_state *s = &l0_intercept_state;

	if (code)
		snprintf(s->tracing_failure, sizeof(s->tracing_failure), "%s: 0x%x", what, code);
	else
		snprintf(s->tracing_failure, sizeof(s->tracing_failure), "%s", what);
	s->tracing_failed = 1;
	atomic_store(&s->mode, L0_MODE_PRELOAD);
}

static void l0_tracer_create(void)
{
	struct l0_intercept_state *s = &l0_intercept_state;
	const struct l0_loader *l = l0_loader_get();
	zel_tracer_desc_t desc = {.stype = ZEL_STRUCTURE_TYPE_TRACER_EXP_DESC};
	ze_result_t r;

	if (!l || !l->zelTracerCreate || !l->zelTracerSetEnabled ||
	    !l->zelTracerModuleCreateRegisterCallback || !l->zelTracerKernelCreateRegisterCallback ||
	    !l->zelTracerKernelSetGroupSizeRegisterCallback ||
	    !l->zelTracerCommandListAppendLaunchKernelRegisterCallback) {
		l0_tracing_fail("the loader has no tracing API", 0);
		return;
	}
	r = l->zelTracerCreate(&desc, &s->tracer);
	if (r != ZE_RESULT_SUCCESS) {
		l0_tracing_fail("zelTracerCreate failed (is libze_tracing_layer.so.1 installed?)", r);
		return;
	}
	if (l->zelTracerModuleCreateRegisterCallback(s->tracer, ZEL_REGISTER_PROLOGUE,
						     l0_cb_module_pre) ||
	    l->zelTracerModuleCreateRegisterCallback(s->tracer, ZEL_REGISTER_EPILOGUE,
						     l0_cb_module_post) ||
	    l->zelTracerKernelCreateRegisterCallback(s->tracer, ZEL_REGISTER_EPILOGUE,
						     l0_cb_kernel_post) ||
	    l->zelTracerKernelSetGroupSizeRegisterCallback(s->tracer, ZEL_REGISTER_EPILOGUE,
							   l0_cb_group_post) ||
	    l->zelTracerCommandListAppendLaunchKernelRegisterCallback(s->tracer, ZEL_REGISTER_PROLOGUE,
								      l0_cb_launch_pre)) {
		l0_tracing_fail("registering tracing callbacks failed", 0);
		return;
	}
	/* optional: without them the print thread alone delivers device print lines */
	if (l->zelTracerCommandQueueSynchronizeRegisterCallback)
		l->zelTracerCommandQueueSynchronizeRegisterCallback(s->tracer, ZEL_REGISTER_EPILOGUE,
								     l0_cb_queue_sync);
	if (l->zelTracerEventHostSynchronizeRegisterCallback)
		l->zelTracerEventHostSynchronizeRegisterCallback(s->tracer, ZEL_REGISTER_EPILOGUE,
								 l0_cb_event_sync);
	if (l->zelTracerFenceHostSynchronizeRegisterCallback)
		l->zelTracerFenceHostSynchronizeRegisterCallback(s->tracer, ZEL_REGISTER_EPILOGUE,
								 l0_cb_fence_sync);
	r = l->zelTracerSetEnabled(s->tracer, 1);
	if (r != ZE_RESULT_SUCCESS)
		l0_tracing_fail("zelTracerSetEnabled failed", r);
}

/* ---- the preloaded ze* functions ---- */

/* The next definition after this plugin (the loader), else the loader's own. */
static void *l0_real(const char *name)
{
	void *f = dlsym(RTLD_NEXT, name);
	const struct l0_loader *l;

	if (f)
		return f;
	l = l0_loader_get();
	return l ? dlsym(l->handle, name) : NULL;
}

#define L0_REAL(type, name)                                                                        \
	static type real_;                                                                         \
	if (!real_)                                                                                \
		*(void **)&real_ = l0_real(name);                                                  \
	if (!real_)                                                                                \
		return ZE_RESULT_ERROR_UNINITIALIZED

#define L0_EXPORT __attribute__((visibility("default")))

L0_EXPORT ze_result_t ZE_APICALL zeInit(ze_init_flags_t flags)
{
	ze_result_t r;

	L0_REAL(ze_pfnInit_t, "zeInit");
	r = real_(flags);
	if (r == ZE_RESULT_SUCCESS && l0_intercept_mode() == L0_MODE_TRACING)
		pthread_once(&l0_intercept_state.tracer_once, l0_tracer_create);
	return r;
}

static int l0_preload_active(void)
{
	return l0_intercept_mode() == L0_MODE_PRELOAD && l0_agent_active();
}

L0_EXPORT ze_result_t ZE_APICALL zeModuleCreate(ze_context_handle_t ctx, ze_device_handle_t dev,
						const ze_module_desc_t *desc,
						ze_module_handle_t *mod,
						ze_module_build_log_handle_t *log)
{
	const ze_module_desc_t *inst;
	void *cookie = NULL;
	ze_result_t r;

	L0_REAL(ze_pfnModuleCreate_t, "zeModuleCreate");
	if (!l0_preload_active())
		return real_(ctx, dev, desc, mod, log);
	inst = l0_agent_module_pre(ctx, dev, desc, 0, &cookie);
	if (!inst)
		return real_(ctx, dev, desc, mod, log);
	r = real_(ctx, dev, inst, mod, log);
	if (r == ZE_RESULT_SUCCESS) {
		l0_agent_module_post(cookie, r, *mod, 1);
		return r;
	}
	l0_agent_report(GBPF_AGENT_EVENT_ERROR, NULL,
			"zeModuleCreate: the driver refused the instrumented module (0x%x); the "
			"module runs uninstrumented",
			(unsigned)r);
	l0_agent_module_post(cookie, r, NULL, 0);
	if (log && *log) {
		ze_pfnModuleBuildLogDestroy_t destroy =
			(ze_pfnModuleBuildLogDestroy_t)l0_real("zeModuleBuildLogDestroy");

		if (destroy)
			destroy(*log);
		*log = NULL;
	}
	return real_(ctx, dev, desc, mod, log);
}

L0_EXPORT ze_result_t ZE_APICALL zeKernelCreate(ze_module_handle_t mod, const ze_kernel_desc_t *desc,
						ze_kernel_handle_t *k)
{
	ze_result_t r;

	L0_REAL(ze_pfnKernelCreate_t, "zeKernelCreate");
	r = real_(mod, desc, k);
	if (r == ZE_RESULT_SUCCESS && desc && k && l0_preload_active())
		l0_agent_kernel_created(mod, desc->pKernelName, *k);
	return r;
}

L0_EXPORT ze_result_t ZE_APICALL zeKernelSetGroupSize(ze_kernel_handle_t k, uint32_t x, uint32_t y,
						      uint32_t z)
{
	ze_result_t r;

	L0_REAL(ze_pfnKernelSetGroupSize_t, "zeKernelSetGroupSize");
	r = real_(k, x, y, z);
	if (r == ZE_RESULT_SUCCESS && l0_preload_active())
		l0_agent_group_size(k, x, y, z);
	return r;
}

L0_EXPORT ze_result_t ZE_APICALL zeCommandListAppendLaunchKernel(ze_command_list_handle_t list,
								 ze_kernel_handle_t k,
								 const ze_group_count_t *count,
								 ze_event_handle_t signal,
								 uint32_t nwait,
								 ze_event_handle_t *wait)
{
	L0_REAL(ze_pfnCommandListAppendLaunchKernel_t, "zeCommandListAppendLaunchKernel");
	if (l0_preload_active())
		l0_agent_launch_pre(list, k, count, nwait, wait);
	return real_(list, k, count, signal, nwait, wait);
}

L0_EXPORT ze_result_t ZE_APICALL zeCommandQueueSynchronize(ze_command_queue_handle_t q, uint64_t timeout)
{
	ze_result_t r;

	L0_REAL(ze_pfnCommandQueueSynchronize_t, "zeCommandQueueSynchronize");
	r = real_(q, timeout);
	if (r == ZE_RESULT_SUCCESS && l0_preload_active())
		l0_agent_synced();
	return r;
}

L0_EXPORT ze_result_t ZE_APICALL zeEventHostSynchronize(ze_event_handle_t ev, uint64_t timeout)
{
	ze_result_t r;

	L0_REAL(ze_pfnEventHostSynchronize_t, "zeEventHostSynchronize");
	r = real_(ev, timeout);
	if (r == ZE_RESULT_SUCCESS && l0_preload_active())
		l0_agent_synced();
	return r;
}

L0_EXPORT ze_result_t ZE_APICALL zeFenceHostSynchronize(ze_fence_handle_t f, uint64_t timeout)
{
	ze_result_t r;

	L0_REAL(ze_pfnFenceHostSynchronize_t, "zeFenceHostSynchronize");
	r = real_(f, timeout);
	if (r == ZE_RESULT_SUCCESS && l0_preload_active())
		l0_agent_synced();
	return r;
}
