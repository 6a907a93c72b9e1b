/* SPDX-License-Identifier: MIT */
/*
 * The levelzero backend plugin (Intel GPUs): instruments Level Zero
 * applications in `gbpf run` (l0_agent.c, l0_intercept.c). Code
 * generation and `prog run` of SPIR-V are the opencl plugin's.
 *
 * Devices are queried in a forked child: the loader's zeInit result
 * sticks for the process (call_once), so a query must never be the first
 * zeInit of a process that may still want its own (an application the
 * agent runs in, or a controller that later runs other backends).
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <gbpf/gbpf.h>
#include <gbpf/plugin.h>

#include "l0_agent.h"
#include "l0_loader.h"

/** Devices reported at most, and how long the query child may take. */
#define L0_QUERY_MAX_DEVS 16u
#define L0_QUERY_TIMEOUT_MS 20000

/** What the query child sends back through its pipe. */
struct l0_query_reply {
	int rc;
	uint32_t count;
	char why[256];
	struct gbpf_device_info devs[L0_QUERY_MAX_DEVS];
};

static void l0_query_child(struct l0_query_reply *r)
{
	struct l0_loader l;
	ze_driver_handle_t drivers[4];
	uint32_t nd = 4, i, j;
	ze_result_t zr;

	r->rc = l0_loader_open(&l, r->why, sizeof(r->why));
	if (r->rc)
		return;
	zr = l.zeInit(ZE_INIT_FLAG_GPU_ONLY);
	if (zr != ZE_RESULT_SUCCESS) {
		snprintf(r->why, sizeof(r->why),
			 "zeInit failed (0x%x): no Level Zero GPU driver (libze_intel_gpu.so.1, or "
			 "ZE_ENABLE_ALT_DRIVERS) is installed",
			 (unsigned)zr);
		r->rc = -ENODEV;
		return;
	}
	if (l.zeDriverGet(&nd, drivers) != ZE_RESULT_SUCCESS)
		nd = 0;
	for (i = 0; i < nd && r->count < L0_QUERY_MAX_DEVS; i++) {
		ze_device_handle_t devs[L0_QUERY_MAX_DEVS];
		uint32_t n = L0_QUERY_MAX_DEVS - r->count;

		if (l.zeDeviceGet(drivers[i], &n, devs) != ZE_RESULT_SUCCESS)
			continue;
		for (j = 0; j < n && r->count < L0_QUERY_MAX_DEVS; j++) {
			ze_device_properties_t p = {.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES};
			struct gbpf_device_info *d = &r->devs[r->count];

			if (l.zeDeviceGetProperties(devs[j], &p) != ZE_RESULT_SUCCESS ||
			    p.type != ZE_DEVICE_TYPE_GPU)
				continue;
			memset(d, 0, sizeof(*d));
			d->sz = sizeof(*d);
			snprintf(d->name, sizeof(d->name), "%.127s", p.name);
			snprintf(d->arch, sizeof(d->arch), "spirv");
			d->compute_units = p.numSlices * p.numSubslicesPerSlice * p.numEUsPerSubslice;
			if (!d->compute_units)
				d->compute_units = 1;
			d->warp_size = p.physicalEUSimdWidth ? p.physicalEUSimdWidth : 1;
			r->count++;
		}
	}
	if (!r->count) {
		snprintf(r->why, sizeof(r->why), "the Level Zero drivers report no GPU device");
		r->rc = -ENODEV;
	}
}

int l0_query(struct gbpf_device_info *devs, uint32_t *count, char *why, size_t why_size)
{
	struct l0_query_reply *r;
	int fds[2], st = 0, rc = -EIO;
	size_t got = 0;
	pid_t pid;

	if (!count)
		return -EINVAL;
	r = calloc(1, sizeof(*r));
	if (!r || pipe(fds)) {
		free(r);
		return -ENOMEM;
	}
	pid = fork();
	if (pid < 0) {
		snprintf(why, why_size, "levelzero: fork for the device query: %s", strerror(errno));
		close(fds[0]);
		close(fds[1]);
		free(r);
		return -errno;
	}
	if (pid == 0) {
		const char *p = (const char *)r;
		size_t left = sizeof(*r);

		close(fds[0]);
		l0_query_child(r);
		while (left) {
			ssize_t n = write(fds[1], p, left);

			if (n <= 0)
				break;
			p += n;
			left -= (size_t)n;
		}
		_exit(0);
	}
	close(fds[1]);
	while (got < sizeof(*r)) {
		struct pollfd pf = {.fd = fds[0], .events = POLLIN};
		ssize_t n;

		if (poll(&pf, 1, L0_QUERY_TIMEOUT_MS) <= 0) {
			kill(pid, SIGKILL);
			break;
		}
		n = read(fds[0], (char *)r + got, sizeof(*r) - got);
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fds[0]);
	waitpid(pid, &st, 0);
	if (got != sizeof(*r)) {
		snprintf(why, why_size,
			 "levelzero: the device query process ended early (status 0x%x): the driver "
			 "crashed or hung",
			 (unsigned)st);
		rc = -ENODEV;
	} else if (r->rc) {
		r->why[sizeof(r->why) - 1] = 0;
		snprintf(why, why_size, "levelzero: %s", r->why);
		rc = r->rc == -ENOENT ? -ENODEV : r->rc;
	} else {
		uint32_t i;

		for (i = 0; devs && i < r->count && i < *count; i++)
			devs[i] = r->devs[i];
		*count = r->count > L0_QUERY_MAX_DEVS ? L0_QUERY_MAX_DEVS : r->count;
		rc = 0;
	}
	free(r);
	return rc;
}

static int l0_open(const struct gbpf_backend_open_opts *opts, struct gbpf_backend **out)
{
	struct gbpf_backend *be = calloc(1, sizeof(*be));

	if (!be)
		return -ENOMEM;
	be->svc = opts ? opts->services : NULL;
	be->device_index = opts ? opts->device_index : -1;
	*out = be;
	return 0;
}

static void l0_close(struct gbpf_backend *be)
{
	free(be);
}

GBPF_PLUGIN_EXPORT int gbpf_plugin_get_backend_table(uint32_t abi_version, struct gbpf_backend_ops *ops,
						     struct gbpf_backend_caps *caps);

GBPF_PLUGIN_EXPORT int gbpf_plugin_get_backend_table(uint32_t abi_version, struct gbpf_backend_ops *ops,
						     struct gbpf_backend_caps *caps)
{
	struct gbpf_backend_ops t = {
		.sz = sizeof(t),
		.name = "levelzero",
		.description = "Intel GPUs through Level Zero (SPIR-V injection at zeModuleCreate)",
		.plugin_version = GBPF_MAKE_VERSION(0, 1),
		.priority = 40,
		.query_devices = l0_query,
		.open = l0_open,
		.close = l0_close,
		.agent_attach = gbpf_l0_agent_attach,
		.agent_detach = gbpf_l0_agent_detach,
	};
	struct gbpf_backend_caps c = {
		.sz = sizeof(c),
		.flags = GBPF_CAP_INTERCEPT,
		.codegen_targets = NULL,
	};

	return gbpf_plugin_tables_out(abi_version, &t, &c, ops, caps);
}
