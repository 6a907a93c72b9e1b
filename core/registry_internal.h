/* SPDX-License-Identifier: MIT */
/* core/registry_internal.h - what the registry keeps per plugin. */
#ifndef GBPF_CORE_REGISTRY_INTERNAL_H
#define GBPF_CORE_REGISTRY_INTERNAL_H

#include <gbpf/backend.h>

struct gbpf_plugin {
	char *path;
	char *file_name;      /* name derived from the file, until the table names it */
	void *handle;
	int loaded;
	char *load_error;
	struct gbpf_backend_ops ops;
	struct gbpf_backend_caps caps;
	int devices_queried;
	int dev_err;
	struct gbpf_device_info *devs;
	uint32_t dev_count;
	char why[256];
	struct gbpf_backend *backend; /* opened on first run */
};

struct gbpf_registry {
	struct gbpf_plugin **plugins;
	size_t count;
};

void plugin_free(struct gbpf_plugin *p);

#endif
