/* SPDX-License-Identifier: MIT */
/*
 * Running one program on a backend: verify, make maps, load, run, unload.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gbpf/backend.h>

#include "core/base/log.h"
#include "core/registry_internal.h"
#include "core/run_internal.h"
#include "maps/map.h"

static int plugin_open_backend(struct gbpf_plugin *p, char *log, size_t log_size)
{
	int err;

	if (p->backend)
		return 0;
	if (!p->ops.open) {
		snprintf(log, log_size, "backend '%s' cannot be opened", p->ops.name);
		return -EOPNOTSUPP;
	}
	struct gbpf_backend_open_opts opts = {
		.sz = sizeof(opts),
		.services = gbpf_core_services(),
		.device_index = -1,
	};
	err = p->ops.open(&opts, &p->backend);
	if (err) {
		snprintf(log, log_size, "backend '%s' failed to open: %s", p->ops.name,
			 strerror(-err));
		p->backend = NULL;
	}
	return err;
}

uint32_t gbpf_core_slots_for(const struct gbpf_map_desc *desc, const struct gbpf_plugin *p,
			     uint64_t threads)
{
	long cpus;

	switch (desc->type) {
	case GBPF_MAP_TYPE_PERGPUTHREAD_ARRAY:
		return threads > UINT32_MAX ? UINT32_MAX : (uint32_t)(threads ? threads : 1);
	case GBPF_MAP_TYPE_PERCPU_ARRAY:
	case GBPF_MAP_TYPE_PERCPU_HASH:
	case GBPF_MAP_TYPE_PERF_EVENT_ARRAY:
		/* On a GPU a "CPU" is an SM (docs/MAPS.md); on the host a CPU. */
		if (p && p->dev_count && p->devs[0].compute_units)
			return p->devs[0].compute_units;
		cpus = sysconf(_SC_NPROCESSORS_CONF);
		return cpus > 0 ? (uint32_t)cpus : 1;
	default:
		return 1;
	}
}

int gbpf_core_maps_create(const struct gbpf_prog_desc *prog, struct gbpf_plugin *p,
			  uint64_t threads, struct gbpf_map_instance **out, char *log,
			  size_t log_size)
{
	struct gbpf_map_instance *maps;
	const struct gbpf_device_info *devs;
	const char *why;
	uint32_t count;
	size_t i;
	int err;

	*out = NULL;
	if (!prog->map_cnt)
		return 0;
	/* Per-CPU slot counts come from the device list (queried once, cached). */
	if (p)
		gbpf_plugin__devices(p, &devs, &count, &why);
	maps = calloc(prog->map_cnt, sizeof(*maps));
	if (!maps)
		return -ENOMEM;
	for (i = 0; i < prog->map_cnt; i++) {
		const struct gbpf_map_desc *desc = &prog->maps[i];

		err = gbpf_map_instance_create(&maps[i], desc, gbpf_core_slots_for(desc, p, threads));
		if (err) {
			snprintf(log, log_size, "map '%s' (index %zu): cannot create: %s",
				 desc->name ? desc->name : "?", i, strerror(-err));
			gbpf_core_maps_destroy(maps, i);
			return err;
		}
	}
	*out = maps;
	return 0;
}

void gbpf_core_maps_destroy(struct gbpf_map_instance *maps, size_t count)
{
	size_t i;

	for (i = 0; maps && i < count; i++)
		gbpf_map_instance_destroy(&maps[i]);
	free(maps);
}

int gbpf_plugin__run(struct gbpf_plugin *p, const struct gbpf_prog_desc *prog,
		     const struct gbpf_prog_run_opts *opts, struct gbpf_prog_run_result *result)
{
	char scratch[256], *log = opts && opts->log ? opts->log : scratch;
	size_t log_size = opts && opts->log ? opts->log_size : sizeof(scratch);
	struct gbpf_map_instance *maps = NULL, *own_maps = NULL;
	struct gbpf_backend_prog *loaded = NULL;
	uint64_t threads;
	int err;

	if (!p || !prog || !opts || !result || opts->sz < sizeof(size_t))
		return -(errno = EINVAL);
	if (log_size)
		log[0] = 0;
	if (!p->loaded) {
		snprintf(log, log_size, "backend '%s' is not loaded: %s", gbpf_plugin__name(p),
			 gbpf_plugin__load_error(p));
		return -(errno = GBPF_ERRNO__NOBACKEND);
	}
	if (!p->ops.prog_load || !p->ops.prog_run || !(p->caps.flags & GBPF_CAP_PROG_RUN)) {
		snprintf(log, log_size, "backend '%s' cannot run programs directly", p->ops.name);
		return -(errno = EOPNOTSUPP);
	}
	threads = opts->threads ? opts->threads : 1;
	if (opts->unverified && !(p->caps.flags & GBPF_CAP_SANDBOXED)) {
		snprintf(log, log_size,
			 "backend '%s' is not sandboxed: programs must pass the verifier there",
			 p->ops.name);
		return -(errno = EPERM);
	}
	if (!opts->unverified) {
		err = gbpf_core_verify(prog, opts->data_size, log, log_size);
		if (err)
			return -(errno = -err);
	}
	err = plugin_open_backend(p, log, log_size);
	if (err)
		return -(errno = -err);

	maps = opts->maps;
	if (!maps) {
		err = gbpf_core_maps_create(prog, p, threads, &own_maps, log, log_size);
		if (err)
			return -(errno = -err);
		maps = own_maps;
	}
	err = p->ops.prog_load(p->backend, prog, maps, prog->map_cnt, &loaded, log, log_size);
	if (err)
		goto out;

	struct gbpf_run_opts run = {
		.sz = sizeof(run),
		.threads = threads,
		.data = opts->data,
		.data_size = opts->data_size,
		.flags = opts->run_flags,
		.block_size = opts->block_size,
	};
	struct gbpf_run_result res = {
		.sz = sizeof(res),
		.r0 = opts->r0,
		.data_out = opts->data_out,
	};
	err = p->ops.prog_run(loaded, &run, &res, log, log_size);
	if (!err) {
		result->r0 = res.r0_first;
		result->r0_uniform = res.r0_distinct == 1;
		result->elapsed_ns = res.elapsed_ns;
	}
out:
	if (loaded && p->ops.prog_unload)
		p->ops.prog_unload(loaded);
	gbpf_core_maps_destroy(own_maps, own_maps ? prog->map_cnt : 0);
	if (err)
		errno = -err;
	return err;
}
