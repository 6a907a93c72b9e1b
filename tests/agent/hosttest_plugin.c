/* SPDX-License-Identifier: MIT */
/*
 * libgbpf-hosttest.so: a backend with GBPF_CAP_INTERCEPT that needs no GPU.
 * Preloaded by `gbpf run`, it interposes gbpf_test_launch() (the test
 * "runtime", tests/agent/apps/testlaunch.c) as a real backend interposes a
 * driver's launch call: once agent_attach has armed it, every call runs the
 * host/launch programs through services->run_host_prog, then the real
 * function.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gbpf/plugin.h>
#include <gbpf/probe_ctx.h>

struct gbpf_backend {
	const struct gbpf_agent_attach_opts *opts; /* valid while attached */
	struct gbpf_agent_attach_opts copy;
};

/* The armed backend, read by the interposer on every call. */
static _Atomic(struct gbpf_backend *) hosttest_armed;

typedef unsigned long (*launch_fn)(const char *, unsigned, unsigned);

static uint64_t fnv1a(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

unsigned long gbpf_test_launch(const char *kernel, unsigned grid, unsigned block);

__attribute__((visibility("default"))) unsigned long gbpf_test_launch(const char *kernel,
								       unsigned grid,
								       unsigned block)
{
	static _Atomic(launch_fn) real;
	struct gbpf_backend *b = atomic_load(&hosttest_armed);
	launch_fn fn = atomic_load(&real);

	if (!fn) {
		fn = (launch_fn)dlsym(RTLD_NEXT, "gbpf_test_launch");
		atomic_store(&real, fn);
	}
	if (b) {
		const struct gbpf_agent_attach_opts *o = &b->copy;
		const struct gbpf_agent_services *s = o->services;
		struct gbpf_host_launch_ctx ctx;
		struct timespec ts;
		size_t i;

		memset(&ctx, 0, sizeof(ctx));
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ctx.kernel_id = fnv1a(kernel);
		ctx.launch_id = s->next_launch_id(s->ctx);
		ctx.time_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
		ctx.grid[0] = grid;
		ctx.grid[1] = ctx.grid[2] = 1;
		ctx.block[0] = block;
		ctx.block[1] = ctx.block[2] = 1;
		snprintf(ctx.kernel_name, sizeof(ctx.kernel_name), "%s", kernel);
		for (i = 0; i < o->prog_cnt; i++) {
			const struct gbpf_prog_desc *p = &o->progs[i];

			if (p->attach.kind != GBPF_ATTACH_HOST_LAUNCH)
				continue;
			if (p->attach.target && fnmatch(p->attach.target, kernel, 0))
				continue;
			s->run_host_prog(s->ctx, i, &ctx, sizeof(ctx), NULL);
		}
	}
	return fn ? fn(kernel, grid, block) : 0;
}

static int ht_query(struct gbpf_device_info *devs, uint32_t *count, char *why, size_t why_size)
{
	(void)why;
	(void)why_size;
	if (devs && *count >= 1) {
		memset(&devs[0], 0, sizeof(devs[0]));
		devs[0].sz = sizeof(devs[0]);
		snprintf(devs[0].name, sizeof(devs[0].name), "host test runtime");
		snprintf(devs[0].arch, sizeof(devs[0].arch), "host");
		devs[0].warp_size = 1;
	}
	*count = 1;
	return 0;
}

static int ht_open(const struct gbpf_backend_open_opts *opts, struct gbpf_backend **out)
{
	(void)opts;
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

static void ht_close(struct gbpf_backend *b)
{
	if (atomic_load(&hosttest_armed) == b)
		atomic_store(&hosttest_armed, NULL);
	free(b);
}

static int ht_attach(struct gbpf_backend *b, const struct gbpf_agent_attach_opts *opts, char *log,
		     size_t log_size)
{
	if (!opts->services || !opts->services->run_host_prog || !opts->services->next_launch_id) {
		snprintf(log, log_size, "hosttest: agent services incomplete");
		return -EINVAL;
	}
	b->copy = *opts;
	atomic_store(&hosttest_armed, b);
	if (opts->services->report)
		opts->services->report(opts->services->ctx, GBPF_AGENT_EVENT_INFO, NULL,
				       "hosttest: gbpf_test_launch interposed");
	return 0;
}

static void ht_detach(struct gbpf_backend *b)
{
	(void)b;
	atomic_store(&hosttest_armed, NULL);
}

__attribute__((visibility("default"))) int gbpf_plugin_get_backend_table(uint32_t abi_version,
									  struct gbpf_backend_ops *ops,
									  struct gbpf_backend_caps *caps);
__attribute__((visibility("default"))) int gbpf_plugin_get_backend_table(uint32_t abi_version,
									  struct gbpf_backend_ops *ops,
									  struct gbpf_backend_caps *caps)
{
	if (GBPF_VERSION_MAJOR(abi_version) != 1)
		return -EPROTONOSUPPORT;
	ops->name = "hosttest";
	ops->description = "test backend: interposes gbpf_test_launch (tests/agent)";
	ops->plugin_version = GBPF_MAKE_VERSION(0, 1);
	ops->priority = 0;
	ops->query_devices = ht_query;
	ops->open = ht_open;
	ops->close = ht_close;
	ops->agent_attach = ht_attach;
	ops->agent_detach = ht_detach;
	caps->flags = GBPF_CAP_INTERCEPT;
	return 0;
}
