/* SPDX-License-Identifier: MIT */
/*
 * examples/apps/levelzero/ze_app.h - what the Level Zero example apps share:
 * error checks, reading the SPIR-V file, finding the first GPU device.
 * Plain Level Zero (ze_api.h): they run on Intel GPUs unchanged.
 */
#ifndef GBPF_ZE_APP_H
#define GBPF_ZE_APP_H

#include <level_zero/ze_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ZE_CHECK(call)                                                                             \
	do {                                                                                       \
		ze_result_t r_ = (call);                                                           \
		if (r_ != ZE_RESULT_SUCCESS) {                                                     \
			fprintf(stderr, "%s:%d: %s failed: 0x%x\n", __FILE__, __LINE__, #call,     \
				(unsigned)r_);                                                     \
			exit(2);                                                                   \
		}                                                                                  \
	} while (0)

/** Read a whole file (the SPIR-V module); exits on failure. */
static inline unsigned char *ze_app_read(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf;
	long len;

	if (!f || fseek(f, 0, SEEK_END) || (len = ftell(f)) <= 0 || len > (64L << 20) ||
	    fseek(f, 0, SEEK_SET)) {
		fprintf(stderr, "cannot read %s\n", path);
		exit(2);
	}
	buf = malloc((size_t)len);
	if (!buf || fread(buf, 1, (size_t)len, f) != (size_t)len) {
		fprintf(stderr, "cannot read %s\n", path);
		exit(2);
	}
	fclose(f);
	*size = (size_t)len;
	return buf;
}

/** zeInit, then the first driver and its first GPU device; exits when there is none. */
static inline void ze_app_device(ze_driver_handle_t *drv, ze_device_handle_t *dev)
{
	uint32_t n = 1;
	ze_result_t r = zeInit(ZE_INIT_FLAG_GPU_ONLY);

	if (r != ZE_RESULT_SUCCESS) {
		fprintf(stderr, "zeInit failed: 0x%x (no Level Zero driver?)\n", (unsigned)r);
		exit(3);
	}
	ZE_CHECK(zeDriverGet(&n, drv));
	n = 1;
	ZE_CHECK(zeDeviceGet(*drv, &n, dev));
	if (n == 0) {
		fprintf(stderr, "no Level Zero device\n");
		exit(3);
	}
}

/**
 * Create a module from @p path: SPIR-V, or, with @p native, the same bytes
 * declared as a native binary. Returns the zeModuleCreate result.
 */
static inline ze_result_t ze_app_module(ze_context_handle_t ctx, ze_device_handle_t dev,
					const char *path, int native, ze_module_handle_t *mod)
{
	ze_module_desc_t desc = {.stype = ZE_STRUCTURE_TYPE_MODULE_DESC};
	ze_module_build_log_handle_t log = NULL;
	size_t size;
	unsigned char *spv = ze_app_read(path, &size);
	ze_result_t r;

	desc.format = native ? ZE_MODULE_FORMAT_NATIVE : ZE_MODULE_FORMAT_IL_SPIRV;
	desc.inputSize = size;
	desc.pInputModule = spv;
	desc.pBuildFlags = "";
	r = zeModuleCreate(ctx, dev, &desc, mod, &log);
	if (r != ZE_RESULT_SUCCESS && log) {
		size_t len = 0;
		char *text;

		zeModuleBuildLogGetString(log, &len, NULL);
		text = calloc(1, len + 1);
		if (text && zeModuleBuildLogGetString(log, &len, text) == ZE_RESULT_SUCCESS)
			fprintf(stderr, "build log: %s\n", text);
		free(text);
	}
	if (log)
		zeModuleBuildLogDestroy(log);
	free(spv);
	return r;
}

static inline ze_kernel_handle_t ze_app_kernel(ze_module_handle_t mod, const char *name)
{
	ze_kernel_desc_t desc = {.stype = ZE_STRUCTURE_TYPE_KERNEL_DESC, .pKernelName = name};
	ze_kernel_handle_t k;

	ZE_CHECK(zeKernelCreate(mod, &desc, &k));
	return k;
}

#endif /* GBPF_ZE_APP_H */
