/* SPDX-License-Identifier: MIT */
/*
 * A stand-in libcupti (libcupti.so.98) with a fake driver tool
 * subscription, for the agent's CUPTI yield (core/agent/cupti_watch.c):
 * while the subscription is "held" by another tool (FAKE_TOOL_HELD=1 at
 * start, released by fake_tool_release, which the test backend calls from
 * agent_yield_tool), every entry point that takes it answers 39
 * (CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED), as the real CUPTI does
 * beside the Compute Sanitizer. Every call is logged in order, so a test
 * sees whether the yield came before the profiler's call.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define API __attribute__((visibility("default")))

static pthread_mutex_t fake_tool_lock = PTHREAD_MUTEX_INITIALIZER;
static char fake_tool_calls[4096];
static int fake_tool_held = -1; /* -1: not read from FAKE_TOOL_HELD yet */

/* Under fake_tool_lock. */
static int held_locked(void)
{
	if (fake_tool_held < 0) {
		const char *h = getenv("FAKE_TOOL_HELD");

		fake_tool_held = h && !strcmp(h, "1");
	}
	return fake_tool_held;
}

API void fake_tool_note(const char *what);
API void fake_tool_note(const char *what)
{
	size_t n;

	pthread_mutex_lock(&fake_tool_lock);
	n = strlen(fake_tool_calls);
	snprintf(fake_tool_calls + n, sizeof(fake_tool_calls) - n, "%s%s", n ? " " : "", what);
	pthread_mutex_unlock(&fake_tool_lock);
}

/* The holder gives the subscription up: 1 when it was held. */
API int fake_tool_release(const char *call);
API int fake_tool_release(const char *call)
{
	char b[128];
	int was;

	pthread_mutex_lock(&fake_tool_lock);
	was = held_locked();
	fake_tool_held = 0;
	pthread_mutex_unlock(&fake_tool_lock);
	if (was) {
		snprintf(b, sizeof(b), "yield(%s)", call ? call : "?");
		fake_tool_note(b);
	}
	return was;
}

API const char *fake_tool_log(void);
API const char *fake_tool_log(void)
{
	return fake_tool_calls;
}

/* A call that takes the subscription: 39 while another tool holds it. */
static int take(const char *name)
{
	char b[128];
	int rc;

	pthread_mutex_lock(&fake_tool_lock);
	rc = held_locked() ? 39 : 0;
	pthread_mutex_unlock(&fake_tool_lock);
	snprintf(b, sizeof(b), "%s=%d", name, rc);
	fake_tool_note(b);
	return rc;
}

API int cuptiSubscribe(void **subscriber, void *callback, void *userdata);
API int cuptiSubscribe(void **subscriber, void *callback, void *userdata)
{
	int rc = take("cuptiSubscribe");

	(void)callback;
	if (!rc && subscriber)
		*subscriber = userdata;
	return rc;
}

API int cuptiActivityRegisterCallbacks(void *requested, void *completed);
API int cuptiActivityRegisterCallbacks(void *requested, void *completed)
{
	(void)requested;
	(void)completed;
	return take("cuptiActivityRegisterCallbacks");
}

API int cuptiActivityEnable(int kind);
API int cuptiActivityEnable(int kind)
{
	return take(kind == 10 ? "cuptiActivityEnable" : "cuptiActivityEnable(kind?)");
}

API int cuptiActivityEnableContext(void *context, int kind);
API int cuptiActivityEnableContext(void *context, int kind)
{
	return take(context == (void *)&fake_tool_lock && kind == 3 ? "cuptiActivityEnableContext"
								     : "cuptiActivityEnableContext(args?)");
}

API void *fake_tool_context(void);
API void *fake_tool_context(void)
{
	return &fake_tool_lock;
}

API int cuptiGetResultString(int rc, const char **text);
API int cuptiGetResultString(int rc, const char **text)
{
	*text = rc == 39 ? "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED (fake)" : "fake result";
	return 0;
}
