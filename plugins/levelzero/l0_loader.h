/* SPDX-License-Identifier: MIT */
/*
 * plugins/levelzero/l0_loader.h - the Level Zero loader (libze_loader.so.1),
 * dlopen'ed at run time: the plugin builds and loads without it, and the
 * entry points resolved here are the loader's own (never the plugin's
 * interposers of the same names).
 */
#ifndef GBPF_L0_LOADER_H
#define GBPF_L0_LOADER_H

#include <level_zero/ze_api.h>
#include <level_zero/ze_ddi.h>
#include <level_zero/layers/zel_tracing_api.h>
#include <level_zero/layers/zel_tracing_register_cb.h>
#include <level_zero/ze_api.h>
#include <stddef.h>

/** Entry points of the loader the plugin uses. */
struct l0_loader {
	void *handle;
	ze_pfnInit_t zeInit;
	ze_pfnDriverGet_t zeDriverGet;
	ze_pfnDriverGetExtensionFunctionAddress_t zeDriverGetExtensionFunctionAddress;
	ze_pfnDeviceGet_t zeDeviceGet;
	ze_pfnDeviceGetProperties_t zeDeviceGetProperties;
	ze_pfnDeviceGetComputeProperties_t zeDeviceGetComputeProperties;
	ze_pfnDeviceGetModuleProperties_t zeDeviceGetModuleProperties;
	ze_pfnModuleCreate_t zeModuleCreate;
	ze_pfnModuleDestroy_t zeModuleDestroy;
	ze_pfnKernelCreate_t zeKernelCreate;
	ze_pfnKernelSetGroupSize_t zeKernelSetGroupSize;
	ze_pfnCommandListAppendLaunchKernel_t zeCommandListAppendLaunchKernel;
	ze_pfnCommandListAppendMemoryCopy_t zeCommandListAppendMemoryCopy;
	ze_pfnCommandListAppendBarrier_t zeCommandListAppendBarrier;
	/* tracing layer API (exported by the loader; absent from very old loaders) */
	ze_result_t (*zelTracerCreate)(const zel_tracer_desc_t *, zel_tracer_handle_t *);
	ze_result_t (*zelTracerSetEnabled)(zel_tracer_handle_t, ze_bool_t);
	ze_result_t (*zelTracerModuleCreateRegisterCallback)(zel_tracer_handle_t, zel_tracer_reg_t,
							     ze_pfnModuleCreateCb_t);
	ze_result_t (*zelTracerKernelCreateRegisterCallback)(zel_tracer_handle_t, zel_tracer_reg_t,
							     ze_pfnKernelCreateCb_t);
	ze_result_t (*zelTracerKernelSetGroupSizeRegisterCallback)(zel_tracer_handle_t,
								   zel_tracer_reg_t,
								   ze_pfnKernelSetGroupSizeCb_t);
	ze_result_t (*zelTracerCommandListAppendLaunchKernelRegisterCallback)(
		zel_tracer_handle_t, zel_tracer_reg_t, ze_pfnCommandListAppendLaunchKernelCb_t);
	/* host waits for the device (print queue flushes); optional */
	ze_result_t (*zelTracerCommandQueueSynchronizeRegisterCallback)(
		zel_tracer_handle_t, zel_tracer_reg_t, ze_pfnCommandQueueSynchronizeCb_t);
	ze_result_t (*zelTracerEventHostSynchronizeRegisterCallback)(zel_tracer_handle_t, zel_tracer_reg_t,
								     ze_pfnEventHostSynchronizeCb_t);
	ze_result_t (*zelTracerFenceHostSynchronizeRegisterCallback)(zel_tracer_handle_t, zel_tracer_reg_t,
								     ze_pfnFenceHostSynchronizeCb_t);
};

/**
 * Open the loader (GBPF_ZE_LOADER overrides the file name) and resolve the
 * entry points above. Tracing entries may stay NULL.
 * @return 0, -ENOENT when the loader or one of its core entry points is
 *         missing (reason in why)
 */
int l0_loader_open(struct l0_loader *l, char *why, size_t why_size);

/** The loader of this process, opened once (NULL when missing). */
const struct l0_loader *l0_loader_get(void);

#endif /* GBPF_L0_LOADER_H */
