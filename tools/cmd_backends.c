/* SPDX-License-Identifier: MIT */
/* gbpf backends: every plugin found, its version, its devices or why it is unusable. */
#include <errno.h>
#include <stdio.h>

#include <gbpf/backend.h>

#include "cli.h"

static void print_plugin_json(struct gbpf_plugin *p)
{
	const struct gbpf_backend_caps *caps = gbpf_plugin__caps(p);
	const struct gbpf_device_info *devs;
	const char *why;
	uint32_t count, i, v = gbpf_plugin__version(p);
	int err;

	jw_start_object(&cli.jw);
	jw_kv_string(&cli.jw, "name", gbpf_plugin__name(p));
	jw_kv_string(&cli.jw, "path", gbpf_plugin__path(p));
	if (gbpf_plugin__load_error(p)) {
		jw_kv_bool(&cli.jw, "loaded", false);
		jw_kv_string(&cli.jw, "error", gbpf_plugin__load_error(p));
		jw_end_object(&cli.jw);
		return;
	}
	jw_kv_bool(&cli.jw, "loaded", true);
	jw_kv_string(&cli.jw, "description", gbpf_plugin__description(p));
	jw_key(&cli.jw, "version");
	jw_start_array(&cli.jw);
	jw_uint(&cli.jw, GBPF_VERSION_MAJOR(v));
	jw_uint(&cli.jw, GBPF_VERSION_MINOR(v));
	jw_end_array(&cli.jw);
	jw_kv_uint(&cli.jw, "priority", (uint64_t)(int64_t)gbpf_plugin__ops(p)->priority);
	jw_kv_bool(&cli.jw, "prog_run", caps->flags & GBPF_CAP_PROG_RUN);
	jw_kv_bool(&cli.jw, "codegen", caps->flags & GBPF_CAP_CODEGEN);
	jw_kv_bool(&cli.jw, "inject", caps->flags & GBPF_CAP_INJECT);
	jw_kv_bool(&cli.jw, "intercept", caps->flags & GBPF_CAP_INTERCEPT);
	jw_kv_string(&cli.jw, "codegen_targets", caps->codegen_targets);
	err = gbpf_plugin__devices(p, &devs, &count, &why);
	jw_kv_bool(&cli.jw, "usable", !err && count > 0);
	if (err || !count)
		jw_kv_string(&cli.jw, "unusable_reason", why ? why : "no device");
	jw_key(&cli.jw, "devices");
	jw_start_array(&cli.jw);
	for (i = 0; !err && i < count; i++) {
		jw_start_object(&cli.jw);
		jw_kv_uint(&cli.jw, "index", i);
		jw_kv_string(&cli.jw, "name", devs[i].name);
		jw_kv_string(&cli.jw, "arch", devs[i].arch);
		jw_kv_uint(&cli.jw, "memory_bytes", devs[i].memory_bytes);
		jw_kv_uint(&cli.jw, "compute_units", devs[i].compute_units);
		jw_kv_uint(&cli.jw, "warp_size", devs[i].warp_size);
		jw_end_object(&cli.jw);
	}
	jw_end_array(&cli.jw);
	jw_end_object(&cli.jw);
}

static void print_plugin_plain(struct gbpf_plugin *p)
{
	const struct gbpf_backend_caps *caps = gbpf_plugin__caps(p);
	const struct gbpf_device_info *devs;
	const char *why;
	uint32_t count, i, v = gbpf_plugin__version(p);
	int err;

	if (gbpf_plugin__load_error(p)) {
		printf("%-10s  not loaded: %s\n            %s\n", gbpf_plugin__name(p),
		       gbpf_plugin__load_error(p), gbpf_plugin__path(p));
		return;
	}
	printf("%-10s  v%u.%u  %s\n", gbpf_plugin__name(p), GBPF_VERSION_MAJOR(v),
	       GBPF_VERSION_MINOR(v), gbpf_plugin__description(p));
	printf("            %s\n", gbpf_plugin__path(p));
	printf("            can:%s%s%s%s%s%s\n", caps->flags & GBPF_CAP_PROG_RUN ? " prog-run" : "",
	       caps->flags & GBPF_CAP_CODEGEN ? " codegen" : "",
	       caps->flags & GBPF_CAP_INJECT ? " inject" : "",
	       caps->flags & GBPF_CAP_INTERCEPT ? " intercept" : "",
	       caps->codegen_targets ? " targets=" : "",
	       caps->codegen_targets ? caps->codegen_targets : "");
	err = gbpf_plugin__devices(p, &devs, &count, &why);
	if (err || !count) {
		printf("            unusable: %s\n", why ? why : "no device found");
		return;
	}
	for (i = 0; i < count; i++)
		printf("            device %u: %s (%s, %u compute units, warp %u)\n", i, devs[i].name,
		       devs[i].arch, devs[i].compute_units, devs[i].warp_size);
}

int cmd_backends(int argc, char **argv)
{
	struct gbpf_registry *reg;
	struct gbpf_plugin *chosen = NULL;
	char why[512];
	size_t i, n;
	int err;

	(void)argv;
	if (argc > 1)
		return cli_error("'backends' takes no arguments");
	err = gbpf_registry_new(NULL, &reg);
	if (err)
		return cli_error_code(err, "cannot scan for plugins");
	n = gbpf_registry_plugin_count(reg);
	if (gbpf_registry_select(reg, NULL, &chosen, why, sizeof(why)))
		chosen = NULL;
	if (cli.json) {
		jw_start_object(&cli.jw);
		jw_kv_string(&cli.jw, "selected", chosen ? gbpf_plugin__name(chosen) : NULL);
		if (!chosen)
			jw_kv_string(&cli.jw, "selection_error", why);
		jw_key(&cli.jw, "backends");
		jw_start_array(&cli.jw);
		for (i = 0; i < n; i++)
			print_plugin_json(gbpf_registry_plugin(reg, i));
		jw_end_array(&cli.jw);
		jw_end_object(&cli.jw);
		jw_finish(&cli.jw);
	} else {
		for (i = 0; i < n; i++)
			print_plugin_plain(gbpf_registry_plugin(reg, i));
		if (chosen)
			printf("selected: %s\n", gbpf_plugin__name(chosen));
		else
			printf("selected: none (%s)\n", why);
	}
	gbpf_registry_free(reg);
	return 0;
}
