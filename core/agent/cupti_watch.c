/* SPDX-License-Identifier: MIT */
/*
 * CUPTI beside gbpf (#12, coexistence): the agent interposes two CUPTI
 * entry points, cuptiSubscribe and cuptiActivityEnable, only to watch their
 * results. Each call goes to the real CUPTI unchanged and its result comes
 * back unchanged; a failure is reported to the controller once per entry
 * point, saying what failed and why it may have (the Compute Sanitizer
 * engine and CUPTI both take the driver's tool subscription, and the
 * Sanitizer subscribes when the cuda plugin loads, before any profiler: the
 * profiler then loses, records no kernels, and the application, which
 * ignores a profiler's failure, runs on). Without this the only trace of it
 * would be a warning of the profiler's, if any, in the application's own
 * output.
 *
 * The real functions are found in the loaded libcupti itself (by name in
 * the list of loaded objects), not through RTLD_NEXT: Python loads torch,
 * and with it libcupti, RTLD_LOCAL, out of the global scope that RTLD_NEXT
 * searches. When no libcupti is loaded (nothing could have bound to CUPTI
 * but through us) the call answers CUPTI_ERROR_NOT_INITIALIZED.
 */
#include <dlfcn.h>
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
typedef int (*cupti_result_string_fn)(int, const char **);

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

/* Reports sent: one per entry point, the first failure says it all. */
static atomic_int agent_cupti_reported[2];

static void cupti_report(int which, const char *call, int rc)
{
	struct agent_state *a = &gbpf_agent_state;
	cupti_result_string_fn str = (cupti_result_string_fn)cupti_real("cuptiGetResultString");
	const char *text = NULL;
	const uint32_t engines = GBPF_AGENT_F_ENGINE_PTX | GBPF_AGENT_F_ENGINE_SANITIZER;
	int sanitizer_possible;

	/* Nobody to tell yet (idle, no session): a later failure may still be told. */
	if (!atomic_load(&a->live) || atomic_exchange(&agent_cupti_reported[which], 1))
		return;
	if (!str || str(rc, &text) != CUPTI_OK || !text)
		text = "?";
	/* Only ptx (asked by the attach, or the start's engine) keeps the Sanitizer out. */
	sanitizer_possible = !(((a->setup.flags & engines) ? a->setup.flags : a->idle_flags) &
			       GBPF_AGENT_F_ENGINE_PTX);
	agent_queue(a, GBPF_AGENT_MSG_REPORT, GBPF_AGENT_EVENT_ERROR, NULL,
		    "a CUPTI client in this process (e.g. the PyTorch profiler) failed: %s returned %d "
		    "(%.100s)%s; the application runs on, gbpf's probes are not affected", call, rc,
		    text,
		    !sanitizer_possible ? ""
		    : rc == CUPTI_MULTIPLE_SUBSCRIBERS
			    ? ": the Compute Sanitizer engine holds the process's one tool "
			      "subscription; run gbpf with --engine ptx to profile beside it"
			    : ": the Compute Sanitizer engine (engine auto or sanitizer) may hold the "
			      "driver's tool subscription; --engine ptx leaves it to CUPTI");
}

AGENT_API int cuptiSubscribe(void **subscriber, void *callback, void *userdata);
AGENT_API int cuptiSubscribe(void **subscriber, void *callback, void *userdata)
{
	static _Atomic(cupti_subscribe_fn) real;
	cupti_subscribe_fn fn = atomic_load(&real);
	int rc;

	if (!fn) {
		fn = (cupti_subscribe_fn)cupti_real("cuptiSubscribe");
		if (!fn)
			return CUPTI_NOT_INITIALIZED;
		atomic_store(&real, fn);
	}
	rc = fn(subscriber, callback, userdata);
	if (rc != CUPTI_OK)
		cupti_report(0, "cuptiSubscribe", rc);
	return rc;
}

AGENT_API int cuptiActivityEnable(int kind);
AGENT_API int cuptiActivityEnable(int kind)
{
	static _Atomic(cupti_activity_enable_fn) real;
	cupti_activity_enable_fn fn = atomic_load(&real);
	int rc;

	if (!fn) {
		fn = (cupti_activity_enable_fn)cupti_real("cuptiActivityEnable");
		if (!fn)
			return CUPTI_NOT_INITIALIZED;
		atomic_store(&real, fn);
	}
	rc = fn(kind);
	if (rc != CUPTI_OK)
		cupti_report(1, "cuptiActivityEnable", rc);
	return rc;
}
