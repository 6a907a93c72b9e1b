/* SPDX-License-Identifier: MIT */
/*
 * The process's one Compute Sanitizer subscription (san_process.h).
 *
 * Why at load time: measured on the H200 (driver 580, CUDA 13.0), the
 * Sanitizer patches only in contexts created after it was subscribed
 * (before or after cuInit does not matter; in a context that existed
 * before, sanitizerAddPatches, sanitizerPatchInstructions and
 * sanitizerPatchModule all answer SANITIZER_ERROR_INVALID_PARAMETER).
 * Under `gbpf run` the agent opens the cuda backend from its constructor
 * (cuInit and the device's primary context, which the application then
 * shares), so a subscription made at attach or at the first launch came
 * too late. This file's constructor runs when the plugin is loaded
 * (preloaded by `gbpf run`; the loader runs it before the agent's
 * constructor, which opens the backend) and subscribes there.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>

#include "core/agent/proto.h"
#include "san_process.h"

struct gbpf_san_process {
	pthread_mutex_t lock;         /* the subscription */
	pthread_mutex_t handler_lock; /* on_unload: taken before an engine's lock, never with `lock` */
	/*
	 * on_yield and the yield itself: taken before an engine's lock and
	 * before `lock`; held while the engine restores its modules (driver
	 * calls), so never taken by the library's callbacks.
	 */
	pthread_mutex_t yield_lock;
	int state; /* 1 subscribed, -1 failed or given up (final), 0 not tried */
	int yielded; /* given to another tool (CUPTI): state is -1 */
	int patches_loaded; /* sanitizerAddPatches succeeded in some context */
	enum gbpf_san_when when;
	struct gbpf_san_api api;
	gbpf_san_subscriber sub;
	gbpf_san_module_unload_fn on_unload;
	void *on_unload_arg;
	gbpf_san_yield_fn on_yield;
	void *on_yield_arg;
	char why[512];
};

/* The process's subscription: one per process by the Sanitizer's own rule. */
static struct gbpf_san_process gbpf_san_process_sub = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.handler_lock = PTHREAD_MUTEX_INITIALIZER,
	.yield_lock = PTHREAD_MUTEX_INITIALIZER,
};

enum gbpf_san_when gbpf_san_process_when(void)
{
	const char *v = getenv("GBPF_SAN_SUBSCRIBE");

	if (!v || !*v || !strcmp(v, "load"))
		return GBPF_SAN_WHEN_LOAD;
	if (!strcmp(v, "attach") || !strcmp(v, "early"))
		return GBPF_SAN_WHEN_ATTACH;
	if (!strcmp(v, "lazy"))
		return GBPF_SAN_WHEN_LAZY;
	if (!strcmp(v, "off"))
		return GBPF_SAN_WHEN_OFF;
	return GBPF_SAN_WHEN_LOAD;
}

/* The library's callbacks: module unloads go to the engine that registered. */
static void san_process_callback(void *userdata, int domain, uint32_t cbid, const void *cbdata)
{
	struct gbpf_san_process *p = userdata;
	const struct gbpf_san_module_data *md = cbdata;

	if (domain != GBPF_SAN_CB_DOMAIN_RESOURCE || cbid != GBPF_SAN_CBID_RESOURCE_MODULE_UNLOAD_STARTING || !md)
		return;
	pthread_mutex_lock(&p->handler_lock);
	if (p->on_unload)
		p->on_unload(p->on_unload_arg, md->context, md->module);
	pthread_mutex_unlock(&p->handler_lock);
}

/*
 * The one callback the engines use (module unloads), not the whole resource
 * domain: measured on the H200 (bench/cuda/sanitizer/subcost.c), a context
 * created while the resource domain is enabled runs every kernel ~3.5%
 * slower, for the life of the context (unsubscribing later does not undo
 * it), while a subscription with this one callback costs ~0.3%. The domain
 * stays the fallback for a library that refuses one id: correct module
 * bookkeeping first.
 */
static gbpf_san_result san_process_enable(struct gbpf_san_process *p)
{
	gbpf_san_result r = p->api.enable_callback(1, p->sub, GBPF_SAN_CB_DOMAIN_RESOURCE,
						   GBPF_SAN_CBID_RESOURCE_MODULE_UNLOAD_STARTING);

	if (r != GBPF_SAN_SUCCESS)
		r = p->api.enable_domain(1, p->sub, GBPF_SAN_CB_DOMAIN_RESOURCE);
	return r;
}

/* sanitizerSubscribe + the callback; under p->lock. 0 or negative errno, p->why set. */
static int san_process_attach_library(struct gbpf_san_process *p)
{
	gbpf_san_result r = p->api.subscribe(&p->sub, san_process_callback, p);

	if (r != GBPF_SAN_SUCCESS) {
		snprintf(p->why, sizeof(p->why), "sanitizerSubscribe (%.200s) failed: %.100s (another Sanitizer tool in the "
						 "process?)", p->api.path, gbpf_san_api_strerror(&p->api, r));
		return -EBUSY;
	}
	r = san_process_enable(p);
	if (r != GBPF_SAN_SUCCESS) {
		snprintf(p->why, sizeof(p->why), "sanitizerEnableCallback(RESOURCE, MODULE_UNLOAD_STARTING) failed: %.100s",
			 gbpf_san_api_strerror(&p->api, r));
		p->api.unsubscribe(p->sub);
		return -EIO;
	}
	return 0;
}

int gbpf_san_process_subscribe(enum gbpf_san_when when, const struct gbpf_san_api **api, char *why,
			       size_t why_size)
{
	struct gbpf_san_process *p = &gbpf_san_process_sub;
	int rc = 0;

	pthread_mutex_lock(&p->lock);
	if (p->state == 1)
		goto out;
	if (p->state < 0) {
		rc = p->yielded ? -EBUSY : -ENOENT;
		goto out;
	}
	p->state = -1;
	p->when = when;
	if (gbpf_san_process_foreign_tool()) {
		snprintf(p->why, sizeof(p->why), "compute-sanitizer runs this process (%.80s): its tool holds the "
						 "process's one Compute Sanitizer subscription",
			 gbpf_san_process_foreign_tool());
		rc = -EBUSY;
		goto out;
	}
	rc = gbpf_san_api_load(&p->api, p->why, sizeof(p->why));
	if (rc)
		goto out;
	rc = san_process_attach_library(p);
	if (!rc)
		p->state = 1;
out:
	if (rc && why && why_size)
		snprintf(why, why_size, "%s", p->why);
	if (!rc && api)
		*api = &p->api;
	pthread_mutex_unlock(&p->lock);
	return rc;
}

int gbpf_san_process_state(enum gbpf_san_when *when)
{
	struct gbpf_san_process *p = &gbpf_san_process_sub;
	int st;

	pthread_mutex_lock(&p->lock);
	st = p->state;
	if (when)
		*when = p->when;
	pthread_mutex_unlock(&p->lock);
	return st;
}

void gbpf_san_process_on_unload(gbpf_san_module_unload_fn fn, void *arg)
{
	struct gbpf_san_process *p = &gbpf_san_process_sub;

	pthread_mutex_lock(&p->handler_lock);
	p->on_unload = fn;
	p->on_unload_arg = arg;
	pthread_mutex_unlock(&p->handler_lock);
}

void gbpf_san_process_on_yield(gbpf_san_yield_fn fn, void *arg)
{
	struct gbpf_san_process *p = &gbpf_san_process_sub;

	pthread_mutex_lock(&p->yield_lock);
	/* Clearing (fn NULL) applies to @p arg only: a newer engine may have registered since. */
	if (fn || p->on_yield_arg == arg) {
		p->on_yield = fn;
		p->on_yield_arg = fn ? arg : NULL;
	}
	pthread_mutex_unlock(&p->yield_lock);
}

/*
 * The engine goes first, while the subscription exists: sanitizerUnpatchModule
 * needs it, and a module left patched would keep calling into patches the
 * library no longer serves. The library stays loaded (the driver may still
 * hold callbacks into it).
 */
/*
 * Unloading the library was verified with a subscription and a context
 * only (san_cupti_probe.c); once patches were loaded into a context the
 * driver may keep references into it, so the subscription is kept then,
 * unless GBPF_SAN_YIELD_UNLOAD=1. Under p->yield_lock.
 */
static int san_process_unload_ok(struct gbpf_san_process *p)
{
	const char *force = getenv("GBPF_SAN_YIELD_UNLOAD");
	int loaded;

	pthread_mutex_lock(&p->lock);
	loaded = p->patches_loaded;
	pthread_mutex_unlock(&p->lock);
	return !loaded || (force && !strcmp(force, "1"));
}

void gbpf_san_process_note_patches(void)
{
	struct gbpf_san_process *p = &gbpf_san_process_sub;

	pthread_mutex_lock(&p->lock);
	p->patches_loaded = 1;
	pthread_mutex_unlock(&p->lock);
}

int gbpf_san_process_yield(const char *call, char *msg, size_t msg_size)
{
	struct gbpf_san_process *p = &gbpf_san_process_sub;
	char engine[384] = "";
	struct timespec t0, t1;
	int rc = 0, st;

	if (msg && msg_size)
		msg[0] = 0;
	pthread_mutex_lock(&p->yield_lock);
	pthread_mutex_lock(&p->lock);
	st = p->state;
	if (st != 1 && !p->yielded) {
		/* Not subscribed yet (GBPF_SAN_SUBSCRIBE=lazy/off): it must not be taken back later. */
		if (st == 0) {
			p->state = -1;
			p->yielded = 1;
			snprintf(p->why, sizeof(p->why), "the CUPTI profiler took the driver's tool subscription (%.64s) "
				 "before gbpf subscribed the Compute Sanitizer", call ? call : "?");
		}
	}
	pthread_mutex_unlock(&p->lock);
	if (st != 1) {
		rc = -ENOENT;
		goto out;
	}
	if (!san_process_unload_ok(p)) {
		if (msg && msg_size)
			snprintf(msg, msg_size, "kept by the Compute Sanitizer engine: it has loaded patches into a "
				 "context, and only unloading its library frees the subscription, not verified in that "
				 "state (GBPF_SAN_YIELD_UNLOAD=1 unloads it anyway)");
		rc = -EBUSY;
		goto out;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (p->on_yield)
		p->on_yield(p->on_yield_arg, call, engine, sizeof(engine));
	pthread_mutex_lock(&p->lock);
	/* Callbacks off first: the whole of what the subscription enabled goes with it. */
	p->api.enable_callback(0, p->sub, GBPF_SAN_CB_DOMAIN_RESOURCE, GBPF_SAN_CBID_RESOURCE_MODULE_UNLOAD_STARTING);
	p->api.enable_domain(0, p->sub, GBPF_SAN_CB_DOMAIN_RESOURCE);
	p->api.unsubscribe(p->sub);
	/*
	 * Measured on the H200 (driver 580, CUDA 13.0; tests/agent/cupti_yield/
	 * san_cupti_probe.c): after sanitizerUnsubscribe, with every callback
	 * disabled, CUPTI still answers MULTIPLE_SUBSCRIBERS; only unloading
	 * the library frees the driver's tool subscription. Nothing calls into
	 * it afterwards: the engine is yielded and its entry points are cleared.
	 */
	dlclose(p->api.lib);
	memset(&p->api, 0, sizeof(p->api));
	p->state = -1;
	p->yielded = 1;
	snprintf(p->why, sizeof(p->why), "the CUPTI profiler took the driver's tool subscription (%.64s): the Compute "
		 "Sanitizer engine gave it up and cannot run again in this process", call ? call : "?");
	pthread_mutex_unlock(&p->lock);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (msg && msg_size)
		snprintf(msg, msg_size, "Compute Sanitizer engine %s%sunsubscribed, library unloaded (%.1f ms)", engine,
			 engine[0] ? "; " : "",
			 (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
out:
	pthread_mutex_unlock(&p->yield_lock);
	return rc;
}

int gbpf_san_process_yielded(void)
{
	struct gbpf_san_process *p = &gbpf_san_process_sub;
	int y;

	pthread_mutex_lock(&p->lock);
	y = p->yielded;
	pthread_mutex_unlock(&p->lock);
	return y;
}

const char *gbpf_san_when_name(enum gbpf_san_when when)
{
	switch (when) {
	case GBPF_SAN_WHEN_LOAD: return "at load, before any context existed";
	case GBPF_SAN_WHEN_ATTACH: return "at attach (GBPF_SAN_SUBSCRIBE=attach)";
	case GBPF_SAN_WHEN_LAZY: return "at the first targeted launch (GBPF_SAN_SUBSCRIBE=lazy)";
	default: return "never (GBPF_SAN_SUBSCRIBE=off)";
	}
}

const char *gbpf_san_process_foreign_tool(void)
{
	for (char **e = environ; e && *e; e++)
		if (!strncmp(*e, "NV_SANITIZER_INJECTION_", 23))
			return *e;
	return NULL;
}

int gbpf_san_process_wanted(void)
{
	const char *engine = getenv("GBPF_CUDA_ENGINE");

	/* compute-sanitizer's own tool holds the subscription: gbpf_san_process_subscribe says so. */
	if (gbpf_san_process_foreign_tool())
		return 0;

	/* Only in an application an agent serves (gbpf run, or an idle agent for gbpf attach). */
	if (!getenv(GBPF_AGENT_ENV_SOCK) && !getenv(GBPF_AGENT_ENV_LISTEN))
		return 0;
	if (engine && !strcmp(engine, "ptx"))
		return 0;
	return gbpf_san_process_when() == GBPF_SAN_WHEN_LOAD;
}

/*
 * A failure here is not reported (no agent exists yet): the engine reports
 * it at the first launch it would serve (gbpf_san_process_subscribe
 * answers the same reason again).
 */
__attribute__((constructor)) static void gbpf_san_process_ctor(void)
{
	if (gbpf_san_process_wanted())
		gbpf_san_process_subscribe(GBPF_SAN_WHEN_LOAD, NULL, NULL, 0);
}
