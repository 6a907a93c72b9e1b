/* SPDX-License-Identifier: MIT */
/*
 * Loading libsanitizer-public.so at run time (never linked: gbpf builds and
 * runs without the CUDA toolkit; the engine is then simply unavailable).
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "san_api.h"

#define SAN_LIB_NAME "libsanitizer-public.so"

static int san_try(struct gbpf_san_api *api, const char *path, char *why, size_t why_size, size_t *used)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	int n;

	if (!h) {
		const char *e = dlerror();

		n = snprintf(why + *used, why_size - *used, "%s%s: %s", *used ? "; " : "", path,
			     e ? e : "not loadable");
		if (n > 0) {
			*used += (size_t)n;
			if (*used >= why_size)
				*used = why_size - 1;
		}
		return -ENOENT;
	}
	api->lib = h;
	snprintf(api->path, sizeof(api->path), "%.255s", path);
	return 0;
}

int gbpf_san_api_load(struct gbpf_san_api *api, char *why, size_t why_size)
{
	static const char *const fixed[] = {
		"/usr/local/cuda/compute-sanitizer/" SAN_LIB_NAME,
		SAN_LIB_NAME,
	};
	char buf[512];
	size_t used = 0;
	const char *env;
	int rc = -ENOENT;

	if (!api || !why || !why_size)
		return -EINVAL;
	memset(api, 0, sizeof(*api));
	why[0] = '\0';
	env = getenv("GBPF_SANITIZER_LIB");
	if (env && *env)
		rc = san_try(api, env, why, why_size, &used);
	env = getenv("CUDA_HOME");
	if (rc && env && *env && strlen(env) < sizeof(buf) - 64) {
		snprintf(buf, sizeof(buf), "%s/compute-sanitizer/%s", env, SAN_LIB_NAME);
		rc = san_try(api, buf, why, why_size, &used);
	}
	for (size_t i = 0; rc && i < sizeof(fixed) / sizeof(fixed[0]); i++)
		rc = san_try(api, fixed[i], why, why_size, &used);
	if (rc)
		return rc;

#define SAN_SYM(field, name)                                                                 \
	do {                                                                                 \
		*(void **)&api->field = dlsym(api->lib, name);                               \
		if (!api->field) {                                                           \
			snprintf(why, why_size, "%s lacks %s", api->path, name);             \
			goto missing;                                                        \
		}                                                                            \
	} while (0)
	SAN_SYM(subscribe, "sanitizerSubscribe");
	SAN_SYM(unsubscribe, "sanitizerUnsubscribe");
	SAN_SYM(enable_domain, "sanitizerEnableDomain");
	SAN_SYM(add_patches, "sanitizerAddPatches");
	SAN_SYM(patch_instructions, "sanitizerPatchInstructions");
	SAN_SYM(patch_module, "sanitizerPatchModule");
	SAN_SYM(unpatch_module, "sanitizerUnpatchModule");
	SAN_SYM(set_callback_data, "sanitizerSetCallbackData");
	SAN_SYM(get_result_string, "sanitizerGetResultString");
	SAN_SYM(enable_callback, "sanitizerEnableCallback");
#undef SAN_SYM
	return 0;
missing:
	dlclose(api->lib);
	memset(api, 0, sizeof(*api));
	return -ENOSYS;
}

const char *gbpf_san_api_strerror(const struct gbpf_san_api *api, gbpf_san_result r)
{
	const char *s = NULL;

	if (api && api->get_result_string && api->get_result_string(r, &s) == GBPF_SAN_SUCCESS && s)
		return s;
	return r == GBPF_SAN_SUCCESS ? "success" : "sanitizer error";
}
