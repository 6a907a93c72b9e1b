/* SPDX-License-Identifier: MIT */
/*
 * A stand-in libcupti (libcupti.so.99) for the agent's CUPTI watch
 * (core/agent/cupti_watch.c): cuptiSubscribe and cuptiActivityEnable answer
 * FAKE_CUPTI_RESULT (default 0) and remember their arguments, so a test can
 * tell that the agent forwarded the call unchanged.
 */
#include <stdlib.h>

#define API __attribute__((visibility("default")))

API void *fake_cupti_last_userdata;
API int fake_cupti_last_kind = -1;

static int result(void)
{
	const char *r = getenv("FAKE_CUPTI_RESULT");

	return r ? atoi(r) : 0;
}

API int cuptiSubscribe(void **subscriber, void *callback, void *userdata);
API int cuptiSubscribe(void **subscriber, void *callback, void *userdata)
{
	(void)callback;
	fake_cupti_last_userdata = userdata;
	if (subscriber)
		*subscriber = userdata;
	return result();
}

API int cuptiActivityEnable(int kind);
API int cuptiActivityEnable(int kind)
{
	fake_cupti_last_kind = kind;
	return result();
}

API int cuptiGetResultString(int rc, const char **text);
API int cuptiGetResultString(int rc, const char **text)
{
	*text = rc == 39 ? "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED (fake)" : "fake result";
	return 0;
}
