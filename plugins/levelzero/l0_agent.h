/* SPDX-License-Identifier: MIT */
/*
 * plugins/levelzero/l0_agent.h - the levelzero plugin's agent side
 * (internal): instruments the Level Zero application the plugin runs in.
 *
 * Interception (l0_intercept.c) reaches these hooks either from the
 * loader's tracing layer (default: ZE_ENABLE_TRACING_LAYER=1 is set by the
 * plugin's constructor before the application's first zeInit, the tracer
 * is created right after it) or from the plugin's own preloaded ze*
 * interposers (GBPF_LEVELZERO_INTERCEPT=preload, or when the tracing layer
 * cannot be enabled).
 */
#ifndef GBPF_L0_AGENT_H
#define GBPF_L0_AGENT_H

#include <level_zero/ze_api.h>
#include <stddef.h>
#include <stdint.h>

#include <gbpf/plugin.h>

struct gbpf_backend {
	const struct gbpf_host_services *svc;
	int device_index;
};

/** query_devices (l0_plugin.c). */
int l0_query(struct gbpf_device_info *devs, uint32_t *count, char *why, size_t why_size);

/**
 * agent_attach: keep the device programs (one object) and the map region;
 * modules created from now on are instrumented.
 * @return 0, -EBUSY when attached already, -EINVAL for bad options
 */
int gbpf_l0_agent_attach(struct gbpf_backend *be, const struct gbpf_agent_attach_opts *opts, char *log,
			 size_t log_size);
/** agent_detach: modules and launches pass through from now on. */
void gbpf_l0_agent_detach(struct gbpf_backend *be);

/** 1 while attached. */
int l0_agent_active(void);

/**
 * Before zeModuleCreate: the instrumented descriptor to use instead of
 * @p desc (kept alive by the agent), or NULL to create the application's
 * module unchanged. With @p trial, the instrumented module is first built
 * once (through the loader, bypassing interception) so that a driver
 * that refuses it never makes the application's call fail: the tracing
 * layer cannot retry a call.
 * @param cookie out: passed to l0_agent_module_post
 */
const ze_module_desc_t *l0_agent_module_pre(ze_context_handle_t ctx, ze_device_handle_t dev,
					    const ze_module_desc_t *desc, int trial, void **cookie);
/** After zeModuleCreate: @p instrumented is 1 when the swapped descriptor was used. */
void l0_agent_module_post(void *cookie, ze_result_t r, ze_module_handle_t mod, int instrumented);
/** After a successful zeKernelCreate. */
void l0_agent_kernel_created(ze_module_handle_t mod, const char *name, ze_kernel_handle_t k);
/** After a successful zeKernelSetGroupSize. */
void l0_agent_group_size(ze_kernel_handle_t k, uint32_t x, uint32_t y, uint32_t z);
/**
 * Before zeCommandListAppendLaunchKernel: runs host/launch programs, and
 * for an instrumented kernel appends the launch id's copy into the context
 * table (ordered after @p wait, followed by a barrier) to @p list.
 */
void l0_agent_launch_pre(ze_command_list_handle_t list, ze_kernel_handle_t k,
			 const ze_group_count_t *count, uint32_t nwait, ze_event_handle_t *wait);

/**
 * After a host wait for the device succeeded (queue, event or fence
 * synchronize): deliver the print lines of the kernels that completed.
 */
void l0_agent_synced(void);

/** Report through the agent services (no-op when detached). */
void l0_agent_report(enum gbpf_agent_event ev, const char *kernel, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/** Interception mode chosen in the application (l0_intercept.c). */
enum l0_mode {
	L0_MODE_OFF = 0,     /**< not in a `gbpf run` application */
	L0_MODE_TRACING = 1, /**< loader tracing layer */
	L0_MODE_PRELOAD = 2, /**< the plugin's ze* interposers */
};
enum l0_mode l0_intercept_mode(void);
/** Why the tracing layer could not be used, or NULL. */
const char *l0_intercept_tracing_failure(void);

#endif /* GBPF_L0_AGENT_H */
