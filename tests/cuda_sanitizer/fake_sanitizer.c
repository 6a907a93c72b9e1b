/* SPDX-License-Identifier: MIT */
/*
 * tests/cuda_sanitizer/fake_sanitizer.c - a stand-in for NVIDIA's
 * libsanitizer-public.so (the entry points san_api.c resolves), for
 * test_san_subscribe: it records which callbacks the subscription enables;
 * for test_san_engine, the last patch image and callback data it was given,
 * and a module unload it reports as the library would (fake_san_module_unload).
 * FAKE_SAN_REFUSE_CALLBACK=1 makes sanitizerEnableCallback fail, as a library
 * that knows no single callback ids would.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What the subscription did, in order, for the test (fake_san_log). */
static char fake_san_calls[1024];

static void fake_san_note(const char *what)
{
	size_t n = strlen(fake_san_calls);

	snprintf(fake_san_calls + n, sizeof(fake_san_calls) - n, "%s%s", n ? " " : "", what);
}

/* The last patch image and callback data the engine gave (test_san_engine reads what it bound). */
static const void *fake_san_image;
static const void *fake_san_userdata;

/* The subscriber's callback, for the resource callbacks the test asks for. */
static void (*fake_san_cb)(void *userdata, int domain, uint32_t cbid, const void *cbdata);
static void *fake_san_cb_userdata;

/* Sanitizer_ResourceModuleData's leading fields, as plugins/cuda/sanitizer/san_api.h reads them. */
struct fake_san_module_data {
	void *context;
	void *module;
	size_t cubin_size;
	const char *cubin;
	void *library;
};

const char *fake_san_log(void);
void fake_san_module_unload(void *ctx, void *module);
const void *fake_san_last_image(void);
const void *fake_san_last_userdata(void);
int sanitizerSubscribe(void **sub, void *cb, void *userdata);
int sanitizerUnsubscribe(void *sub);
int sanitizerEnableDomain(uint32_t enable, void *sub, int domain);
int sanitizerEnableCallback(uint32_t enable, void *sub, int domain, uint32_t cbid);
int sanitizerAddPatches(const void *image, void *ctx);
int sanitizerPatchInstructions(int id, void *module, const char *callback);
int sanitizerPatchModule(void *module);
int sanitizerUnpatchModule(void *module);
int sanitizerSetCallbackData(void *kernel, const void *userdata);
int sanitizerGetResultString(int result, const char **str);

const char *fake_san_log(void)
{
	return fake_san_calls;
}

const void *fake_san_last_image(void)
{
	return fake_san_image;
}

const void *fake_san_last_userdata(void)
{
	return fake_san_userdata;
}

/* SANITIZER_CB_DOMAIN_RESOURCE, SANITIZER_CBID_RESOURCE_MODULE_UNLOAD_STARTING */
void fake_san_module_unload(void *ctx, void *module)
{
	struct fake_san_module_data md = {.context = ctx, .module = module};

	if (fake_san_cb)
		fake_san_cb(fake_san_cb_userdata, 3, 10, &md);
}

int sanitizerSubscribe(void **sub, void *cb, void *userdata)
{
	*(void **)&fake_san_cb = cb;
	fake_san_cb_userdata = userdata;
	*sub = fake_san_calls;
	fake_san_note("subscribe");
	return 0;
}

int sanitizerUnsubscribe(void *sub)
{
	(void)sub;
	fake_san_note("unsubscribe");
	return 0;
}

int sanitizerEnableDomain(uint32_t enable, void *sub, int domain)
{
	char b[64];

	(void)sub;
	snprintf(b, sizeof(b), "domain(%u,%d)", enable, domain);
	fake_san_note(b);
	return 0;
}

int sanitizerEnableCallback(uint32_t enable, void *sub, int domain, uint32_t cbid)
{
	const char *refuse = getenv("FAKE_SAN_REFUSE_CALLBACK");
	char b[64];

	(void)sub;
	snprintf(b, sizeof(b), "callback(%u,%d,%u)%s", enable, domain, cbid, refuse ? "=refused" : "");
	fake_san_note(b);
	return refuse ? 1 /* SANITIZER_ERROR_INVALID_PARAMETER */ : 0;
}

int sanitizerAddPatches(const void *image, void *ctx)
{
	(void)ctx;
	fake_san_image = image;
	return 0;
}

int sanitizerPatchInstructions(int id, void *module, const char *callback)
{
	(void)id;
	(void)module;
	(void)callback;
	return 0;
}

int sanitizerPatchModule(void *module)
{
	(void)module;
	return 0;
}

int sanitizerUnpatchModule(void *module)
{
	(void)module;
	return 0;
}

int sanitizerSetCallbackData(void *kernel, const void *userdata)
{
	(void)kernel;
	fake_san_userdata = userdata;
	return 0;
}

int sanitizerGetResultString(int result, const char **str)
{
	*str = result ? "SANITIZER_ERROR_INVALID_PARAMETER" : "SANITIZER_SUCCESS";
	return 0;
}
