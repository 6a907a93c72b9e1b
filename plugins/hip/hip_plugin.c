/* SPDX-License-Identifier: MIT */
/*
 * The hip backend plugin: AMDGCN code generation (LLVM), devices through
 * libamdhip64 (dlopen'ed, so the plugin loads where ROCm is absent and says
 * why it is unusable), and the HIP interposers of `gbpf run`
 * (hip_intercept.c).
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gbpf/gbpf.h>
#include <gbpf/plugin.h>

#include "amdgcn_codegen.h"
#include "hip_agent.h"

static void hip_log(char *log, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void hip_log(char *log, size_t size, const char *fmt, ...)
{
	va_list ap;

	if (!log || !size)
		return;
	va_start(ap, fmt);
	vsnprintf(log, size, fmt, ap);
	va_end(ap);
}

typedef int (*hip_get_count_fn)(int *);

/* GBPF_HIP_FAKE_DEVICE=1: offer interception where the runtime has no device. */
static int hip_fake_device_mode(void)
{
	const char *e = getenv("GBPF_HIP_FAKE_DEVICE");

	return e && !strcmp(e, "1");
}

/* The backend `gbpf run`'s agent opens: nothing but the device index (the agent state is in hip_agent.c). */
struct gbpf_backend {
	int device_index;
};

static int hip_open(const struct gbpf_backend_open_opts *opts, struct gbpf_backend **out)
{
	struct gbpf_backend *b = calloc(1, sizeof(*b));

	if (!b)
		return -ENOMEM;
	b->device_index = opts && opts->sz >= offsetof(struct gbpf_backend_open_opts, device_index) + sizeof(int) ?
				  opts->device_index :
				  -1;
	*out = b;
	return 0;
}

static void hip_close(struct gbpf_backend *backend)
{
	free(backend);
}

static int hip_query_devices(struct gbpf_device_info *devs, uint32_t *count, char *why, size_t why_size)
{
	void *h = dlopen("libamdhip64.so", RTLD_NOW | RTLD_LOCAL);
	hip_get_count_fn get_count;
	int n = 0, rc;

	(void)devs;
	if (!h)
		h = dlopen("libamdhip64.so.5", RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		hip_log(why, why_size, "hip: libamdhip64 not found (%s)", dlerror());
		return -ENODEV;
	}
	get_count = (hip_get_count_fn)dlsym(h, "hipGetDeviceCount");
	rc = get_count ? get_count(&n) : -1;
	dlclose(h);
	if ((rc != 0 || n <= 0) && hip_fake_device_mode()) {
		/* Interception without a device (docs/HIP.md, "fake-device mode"):
		 * one entry so that `gbpf run` chooses this backend; the agent
		 * registers rewritten images that no device runs, and says so. */
		if (devs && *count >= 1) {
			memset(&devs[0], 0, sizeof(devs[0]));
			devs[0].sz = sizeof(devs[0]);
			snprintf(devs[0].name, sizeof(devs[0].name), "no AMD device (fake-device mode, GBPF_HIP_FAKE_DEVICE)");
			snprintf(devs[0].arch, sizeof(devs[0].arch), "none");
			devs[0].warp_size = 64;
		}
		*count = 1;
		return 0;
	}
	if (rc != 0 || n <= 0) {
		/* hipErrorNoDevice (100) where no AMD GPU is installed */
		hip_log(why, why_size, "hip: no AMD GPU (hipGetDeviceCount returned %d)", rc);
		*count = 0;
		return -ENODEV;
	}
	/* Running programs directly needs a device this project has not had
	 * (README): report the devices, but no prog_run. */
	*count = 0;
	hip_log(why, why_size, "hip: %d AMD GPU(s) present; direct runs are not implemented", n);
	return -ENODEV;
}

static int hip_codegen(const struct gbpf_prog_desc *prog, const struct gbpf_codegen_opts *opts, char **text,
		       size_t *text_len, char *log, size_t log_size)
{
	struct gbpf_amdgcn_opts o = {.sz = sizeof(o), .opt_level = 2};

	if (opts && opts->target && strcmp(opts->target, "amdgcn")) {
		hip_log(log, log_size, "hip: codegen target %s is not supported (only amdgcn)", opts->target);
		return -ENOTSUP;
	}
	o.arch = opts && opts->arch ? opts->arch : "gfx942";
	if (opts && (opts->flags & GBPF_CODEGEN_KERNEL))
		o.flags |= GBPF_AMDGCN_KERNEL;
	if (opts && opts->sz >= offsetof(struct gbpf_codegen_opts, prog_cnt) + sizeof(size_t) && opts->prog_cnt)
		return gbpf_amdgcn_emit(opts->progs, opts->prog_cnt, &o, text, text_len, log, log_size);
	return gbpf_amdgcn_emit(&prog, 1, &o, text, text_len, log, log_size);
}

GBPF_PLUGIN_EXPORT int gbpf_plugin_get_backend_table(uint32_t abi_version, struct gbpf_backend_ops *ops,
						     struct gbpf_backend_caps *caps);

GBPF_PLUGIN_EXPORT int gbpf_plugin_get_backend_table(uint32_t abi_version, struct gbpf_backend_ops *ops,
						     struct gbpf_backend_caps *caps)
{
	struct gbpf_backend_ops t = {
		.sz = sizeof(t),
		.name = "hip",
		.description = "AMD GPUs through HIP (eBPF to AMDGCN with LLVM, code-object rewriting)",
		.plugin_version = GBPF_MAKE_VERSION(0, 1),
		.priority = 90,
		.query_devices = hip_query_devices,
		.open = hip_open,
		.close = hip_close,
		.codegen = hip_codegen,
		.agent_attach = gbpf_hip_agent_attach,
		.agent_detach = gbpf_hip_agent_detach,
	};
	struct gbpf_backend_caps c = {
		.sz = sizeof(c),
		.flags = GBPF_CAP_CODEGEN | GBPF_CAP_INTERCEPT,
		.codegen_targets = "amdgcn",
	};

	return gbpf_plugin_tables_out(abi_version, &t, &c, ops, caps);
}
