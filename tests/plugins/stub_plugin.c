/* SPDX-License-Identifier: MIT */
/*
 * A backend plugin that needs no hardware, built several times with
 * different STUB_* behaviours to test discovery and ABI negotiation:
 *   STUB_GOOD        a usable backend with one device (priority STUB_PRIORITY)
 *   STUB_NEWER_MAJOR refuses: it implements only ABI major 2
 *   STUB_NO_DEVICES  loads, but query_devices reports why it has none
 *   STUB_NO_QUERY    loads with query_devices and prog_run missing (NULL)
 *   STUB_NO_ENTRY    exports no entry symbol at all
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gbpf/plugin.h>

#ifndef STUB_NAME
#define STUB_NAME "stub"
#endif
#ifndef STUB_PRIORITY
#define STUB_PRIORITY 1
#endif

struct gbpf_backend {
	int opened;
};

struct gbpf_backend_prog {
	size_t insn_cnt;
};

static __attribute__((unused)) int stub_query(struct gbpf_device_info *devs, uint32_t *count, char *why, size_t why_size)
{
#ifdef STUB_NO_DEVICES
	(void)devs;
	*count = 0;
	snprintf(why, why_size, "stub runtime library not found");
	return -ENODEV;
#else
	(void)why;
	(void)why_size;
	if (devs && *count >= 1) {
		snprintf(devs[0].name, sizeof(devs[0].name), "stub device");
		snprintf(devs[0].arch, sizeof(devs[0].arch), "stub1");
		devs[0].compute_units = 3;
		devs[0].warp_size = 1;
	}
	*count = 1;
	return 0;
#endif
}

static __attribute__((unused)) int stub_open(const struct gbpf_backend_open_opts *opts, struct gbpf_backend **out)
{
	(void)opts;
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

static __attribute__((unused)) void stub_close(struct gbpf_backend *b)
{
	free(b);
}

static __attribute__((unused)) int stub_load(struct gbpf_backend *b, const struct gbpf_prog_desc *prog,
		     struct gbpf_map_instance *maps, size_t map_cnt, struct gbpf_backend_prog **out,
		     char *log, size_t log_size)
{
	(void)b;
	(void)maps;
	(void)map_cnt;
	(void)log;
	(void)log_size;
	*out = calloc(1, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	(*out)->insn_cnt = prog->insn_cnt;
	return 0;
}

/* "Runs" a program by returning its instruction count as r0 in every thread. */
static __attribute__((unused)) int stub_run(struct gbpf_backend_prog *p, const struct gbpf_run_opts *opts,
		    struct gbpf_run_result *res, char *log, size_t log_size)
{
	uint64_t t, threads = opts->threads ? opts->threads : 1;

	(void)log;
	(void)log_size;
	for (t = 0; res->r0 && t < threads; t++)
		res->r0[t] = p->insn_cnt;
	res->r0_first = p->insn_cnt;
	res->r0_distinct = 1;
	return 0;
}

static __attribute__((unused)) void stub_unload(struct gbpf_backend_prog *p)
{
	free(p);
}

#ifndef STUB_NO_ENTRY
GBPF_PLUGIN_EXPORT int gbpf_plugin_get_backend_table(uint32_t abi_version, struct gbpf_backend_ops *ops,
						     struct gbpf_backend_caps *caps);
GBPF_PLUGIN_EXPORT int gbpf_plugin_get_backend_table(uint32_t abi_version, struct gbpf_backend_ops *ops,
						     struct gbpf_backend_caps *caps)
{
#ifdef STUB_NEWER_MAJOR
	if (GBPF_VERSION_MAJOR(abi_version) != 2)
		return -EPROTONOSUPPORT;
#else
	if (GBPF_VERSION_MAJOR(abi_version) != 1)
		return -EPROTONOSUPPORT;
#endif
	struct gbpf_backend_ops t = {
		.sz = sizeof(t),
		.name = STUB_NAME,
		.description = "test stub backend",
		.plugin_version = GBPF_MAKE_VERSION(0, 7),
		.priority = STUB_PRIORITY,
#ifndef STUB_NO_QUERY
		.query_devices = stub_query,
		.prog_run = stub_run,
#endif
		.open = stub_open,
		.close = stub_close,
		.prog_load = stub_load,
		.prog_unload = stub_unload,
	};
	/* Fill no more than the caller's table holds. */
	memcpy(ops, &t, ops->sz < sizeof(t) ? ops->sz : sizeof(t));
	ops->sz = ops->sz < sizeof(t) ? ops->sz : sizeof(t);
	caps->flags = GBPF_CAP_PROG_RUN;
	return 0;
}
#else
int stub_plugin_not_an_entry(void);
int stub_plugin_not_an_entry(void)
{
	return 0;
}
#endif
