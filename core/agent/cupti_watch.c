/* SPDX-License-Identifier: MIT */
/*
 * CUPTI beside gbpf (#12, coexistence). The Compute Sanitizer engine and
 * CUPTI both take the driver's tool subscription, of which a process has
 * one, and the cuda plugin subscribes the Sanitizer when it loads (engine
 * auto or sanitizer), before any profiler. The agent therefore interposes
 * the CUPTI entry points with which a profiler takes the subscription
 * (cuptiSubscribe, cuptiActivityRegisterCallbacks, cuptiActivityEnable,
 * cuptiActivityEnableContext): before the first of them runs, it asks the
 * backend to give the subscription up (gbpf_backend_ops.agent_yield_tool:
 * under engine auto the Sanitizer engine restores what it patched and
 * unsubscribes; PTX injection goes on) and tells the controller once what
 * was given up. Then the call goes to the real CUPTI unchanged and its
 * result comes back unchanged. A failure is still reported once per entry
 * point, saying what failed and why it may have: with --engine sanitizer
 * the engine keeps the subscription, the profiler loses and records no
 * kernels, and the application, which ignores a profiler's failure, runs
 * on. Without this report the only trace of it would be a warning of the
 * profiler's, if any, in the application's own output.
 *
 * The real functions are found in the loaded libcupti itself (by name in
 * the list of loaded objects), not through RTLD_NEXT: Python loads torch,
 * and with it libcupti, RTLD_LOCAL, out of the global scope that RTLD_NEXT
 * searches. When no libcupti is loaded (nothing could have bound to CUPTI
 * but through us) the call answers CUPTI_ERROR_NOT_INITIALIZED and nothing
 * is given up.
 */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "core/agent/agent_internal.h"

#define AGENT_API __attribute__((visibility("default")))

/* CUptiResult values this file names (cupti_result.h). */
#define CUPTI_OK 0
#define CUPTI_NOT_INITIALIZED 15
#define CUPTI_MULTIPLE_SUBSCRIBERS 39

typedef int (*cupti_subscribe_fn)(void **, void *, void *);
typedef int (*cupti_activity_enable_fn)(int);
typedef int (*cupti_activity_enable_ctx_fn)(void *, int);
typedef int (*cupti_register_callbacks_fn)(void *, void *);
typedef int (*cupti_result_string_fn)(int, const char **);

/* The entry points watched: each one may take the driver's tool subscription. */
enum cupti_entry {
	CW_SUBSCRIBE,
	CW_ACTIVITY_ENABLE,
	CW_ACTIVITY_ENABLE_CONTEXT,
	CW_REGISTER_CALLBACKS,
	CW_ENTRIES,
};

static const char *const cupti_entry_name[CW_ENTRIES] = {
	[CW_SUBSCRIBE] = "cuptiSubscribe",
	[CW_ACTIVITY_ENABLE] = "cuptiActivityEnable",
	[CW_ACTIVITY_ENABLE_CONTEXT] = "cuptiActivityEnableContext",
	[CW_REGISTER_CALLBACKS] = "cuptiActivityRegisterCallbacks",
};

struct cupti_find {
	char path[4096];
};

/* Only note the path here: dlopen inside the callback would take the loader's locks in reverse. */
static int find_cupti(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct cupti_find *f = arg;
	const char *base = info->dlpi_name ? strrchr(info->dlpi_name, '/') : NULL;

	(void)size;
	base = base ? base + 1 : info->dlpi_name;
	if (!base || strncmp(base, "libcupti.so", 11) || strlen(info->dlpi_name) >= sizeof(f->path))
		return 0;
	memcpy(f->path, info->dlpi_name, strlen(info->dlpi_name) + 1);
	return 1;
}

/* The real CUPTI function @p name, or NULL when no loaded libcupti has it. */
static void *cupti_real(const char *name)
{
	struct cupti_find f = {.path = ""};
	void *h, *fn;

	if (!dl_iterate_phdr(find_cupti, &f) || !f.path[0])
		return NULL;
	/* Already loaded: NOLOAD only takes a reference, dropped right after the lookup. */
	h = dlopen(f.path, RTLD_LAZY | RTLD_NOLOAD);
	if (!h)
		return NULL;
	fn = dlsym(h, name);
	dlclose(h);
	return fn;
}

/* The real functions, resolved at their first call (never changed after). */
static _Atomic(void *) agent_cupti_real_fn[CW_ENTRIES];
/* Failure reports sent: one per entry point, the first failure says it all. */
static atomic_int agent_cupti_reported[CW_ENTRIES];
/*
 * The backend's answer to the yield: 0 not asked yet (or kept: asked again
 * at the next call, the engine may differ by then), 1 given up, 2 nothing
 * held (never asked again).
 */
static atomic_int agent_cupti_yield_state;
/* The backend keeps the subscription (e.g. --engine sanitizer): the failure's hint says so. */
static atomic_int agent_cupti_kept;
/* Why it keeps it was told (once). */
static atomic_int agent_cupti_kept_said;

/* GBPF_AGENT_F_ENGINE_* the user chose: the attach's, else the start's. */
static uint32_t cupti_engine_flags(const struct agent_state *a)
{
	const uint32_t engines = GBPF_AGENT_F_ENGINE_PTX | GBPF_AGENT_F_ENGINE_SANITIZER;

	return ((a->setup.flags & engines) ? a->setup.flags : a->idle_flags) & engines;
}

/*
 * Before the profiler's call: the backend gives the tool subscription up
 * (its own rules: a plugin before ABI 1.4, or one holding nothing, does
 * nothing). Concurrent callers are serialised by the plugin; only the one
 * that got it given up reports.
 */
static void cupti_yield(enum cupti_entry which)
{
	struct agent_state *a = &gbpf_agent_state;
	const struct gbpf_backend_ops *ops = a->ops;
	char log[300] = "";
	int rc;

	if (atomic_load(&agent_cupti_yield_state) || !ops ||
	    ops->sz < offsetof(struct gbpf_backend_ops, agent_yield_tool) + sizeof(ops->agent_yield_tool) ||
	    !ops->agent_yield_tool)
		return;
	rc = ops->agent_yield_tool(a->backend, cupti_engine_flags(a), cupti_entry_name[which], log,
				   sizeof(log));
	atomic_store(&agent_cupti_kept, rc == -EBUSY);
	if (rc == -EBUSY) {
		if (atomic_load(&a->live) && !atomic_exchange(&agent_cupti_kept_said, 1))
			agent_queue(a, GBPF_AGENT_MSG_REPORT, GBPF_AGENT_EVENT_INFO, NULL,
				    "a CUPTI client (e.g. the PyTorch profiler) called %s: gbpf keeps the driver's "
				    "tool subscription: %.280s", cupti_entry_name[which], log);
		return;
	}
	atomic_store(&agent_cupti_yield_state, rc ? 2 : 1);
	/* Nobody to tell (idle, no session): the next attach learns it from the backend. */
	if (!atomic_load(&a->live) || rc == -ENOENT)
		return;
	if (rc)
		agent_queue(a, GBPF_AGENT_MSG_REPORT, GBPF_AGENT_EVENT_ERROR, NULL,
			    "a CUPTI client in this process called %s: giving it the driver's tool subscription "
			    "failed (%s)%s%.200s", cupti_entry_name[which], strerror(-rc), log[0] ? ": " : "", log);
	else
		agent_queue(a, GBPF_AGENT_MSG_REPORT, GBPF_AGENT_EVENT_INFO, NULL,
			    "a CUPTI client (e.g. the PyTorch profiler) called %s: gbpf gave it the driver's tool "
			    "subscription first: %.260s", cupti_entry_name[which], log);
}

static void cupti_report(enum cupti_entry which, int rc)
{
	struct agent_state *a = &gbpf_agent_state;
	cupti_result_string_fn str = (cupti_result_string_fn)cupti_real("cuptiGetResultString");
	const char *text = NULL, *hint;

	/* Nobody to tell yet (idle, no session): a later failure may still be told. */
	if (!atomic_load(&a->live) || atomic_exchange(&agent_cupti_reported[which], 1))
		return;
	if (!str || str(rc, &text) != CUPTI_OK || !text)
		text = "?";
	if (atomic_load(&agent_cupti_yield_state) == 1)
		hint = ": gbpf had given its tool subscription up before this call; another tool holds it";
	else if (atomic_load(&agent_cupti_kept))
		hint = ": gbpf keeps the process's one tool subscription (said above); run gbpf with --engine ptx "
		       "to profile beside it";
	else if (cupti_engine_flags(a) & GBPF_AGENT_F_ENGINE_PTX)
		hint = ""; /* only ptx (asked by the attach, or the start's engine) keeps the Sanitizer out */
	else if (rc == CUPTI_MULTIPLE_SUBSCRIBERS)
		hint = ": the Compute Sanitizer engine holds the process's one tool subscription; run gbpf "
		       "with --engine ptx to profile beside it";
	else
		hint = ": the Compute Sanitizer engine (engine auto or sanitizer) may hold the driver's tool "
		       "subscription; --engine ptx leaves it to CUPTI";
	agent_queue(a, GBPF_AGENT_MSG_REPORT, GBPF_AGENT_EVENT_ERROR, NULL,
		    "a CUPTI client in this process (e.g. the PyTorch profiler) failed: %s returned %d "
		    "(%.100s)%s; the application runs on, gbpf's probes are not affected",
		    cupti_entry_name[which], rc, text, hint);
}

/* The real function of @p which, the subscription given up first; NULL without a libcupti. */
static void *cupti_enter(enum cupti_entry which)
{
	void *fn = atomic_load(&agent_cupti_real_fn[which]);

	if (!fn) {
		fn = cupti_real(cupti_entry_name[which]);
		if (!fn)
			return NULL;
		atomic_store(&agent_cupti_real_fn[which], fn);
	}
	cupti_yield(which);
	return fn;
}

static int cupti_leave(enum cupti_entry which, int rc)
{
	if (rc != CUPTI_OK)
		cupti_report(which, rc);
	return rc;
}

AGENT_API int cuptiSubscribe(void **subscriber, void *callback, void *userdata);
AGENT_API int cuptiSubscribe(void **subscriber, void *callback, void *userdata)
{
	cupti_subscribe_fn fn = (cupti_subscribe_fn)cupti_enter(CW_SUBSCRIBE);

	return fn ? cupti_leave(CW_SUBSCRIBE, fn(subscriber, callback, userdata)) : CUPTI_NOT_INITIALIZED;
}

AGENT_API int cuptiActivityEnable(int kind);
AGENT_API int cuptiActivityEnable(int kind)
{
	cupti_activity_enable_fn fn = (cupti_activity_enable_fn)cupti_enter(CW_ACTIVITY_ENABLE);

	return fn ? cupti_leave(CW_ACTIVITY_ENABLE, fn(kind)) : CUPTI_NOT_INITIALIZED;
}

AGENT_API int cuptiActivityEnableContext(void *context, int kind);
AGENT_API int cuptiActivityEnableContext(void *context, int kind)
{
	cupti_activity_enable_ctx_fn fn = (cupti_activity_enable_ctx_fn)cupti_enter(CW_ACTIVITY_ENABLE_CONTEXT);

	return fn ? cupti_leave(CW_ACTIVITY_ENABLE_CONTEXT, fn(context, kind)) : CUPTI_NOT_INITIALIZED;
}

AGENT_API int cuptiActivityRegisterCallbacks(void *buffer_requested, void *buffer_completed);
AGENT_API int cuptiActivityRegisterCallbacks(void *buffer_requested, void *buffer_completed)
{
	cupti_register_callbacks_fn fn = (cupti_register_callbacks_fn)cupti_enter(CW_REGISTER_CALLBACKS);

	return fn ? cupti_leave(CW_REGISTER_CALLBACKS, fn(buffer_requested, buffer_completed))
		  : CUPTI_NOT_INITIALIZED;
}
