/* SPDX-License-Identifier: MIT */
/*
 * A test backend ("yieldtest") with ABI 1.4's agent_yield_tool and nothing
 * to instrument: it stands for the cuda plugin's Compute Sanitizer, the
 * holder of the driver's one tool subscription. Its yield notes each
 * request in the fake libcupti's log ("ask(CALL,FLAGS)"), keeps the
 * subscription when the user chose the sanitizer engine (-EBUSY, as the
 * cuda plugin does), and otherwise releases the fake's subscription
 * (fake_tool_release, found in the application's global scope).
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <gbpf/plugin.h>

struct gbpf_backend {
	int unused;
};

typedef void (*note_fn)(const char *);
typedef int (*release_fn)(const char *);

static int yt_query(struct gbpf_device_info *devs, uint32_t *count, char *why, size_t why_size)
{
	(void)why;
	(void)why_size;
	if (devs && *count >= 1) {
		memset(&devs[0], 0, sizeof(devs[0]));
		devs[0].sz = sizeof(devs[0]);
		snprintf(devs[0].name, sizeof(devs[0].name), "tool subscription stand-in");
		snprintf(devs[0].arch, sizeof(devs[0].arch), "host");
		devs[0].warp_size = 1;
	}
	*count = 1;
	return 0;
}

static int yt_open(const struct gbpf_backend_open_opts *opts, struct gbpf_backend **out)
{
	(void)opts;
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

static void yt_close(struct gbpf_backend *b)
{
	free(b);
}

static int yt_attach(struct gbpf_backend *b, const struct gbpf_agent_attach_opts *opts, char *log,
		     size_t log_size)
{
	(void)b;
	(void)opts;
	(void)log;
	(void)log_size;
	return 0;
}

static void yt_detach(struct gbpf_backend *b)
{
	(void)b;
}

static int yt_yield(struct gbpf_backend *b, uint32_t flags, const char *call, char *log, size_t log_size)
{
	note_fn note;
	release_fn release;
	char ask[128];

	(void)b;
	*(void **)&note = dlsym(RTLD_DEFAULT, "fake_tool_note");
	*(void **)&release = dlsym(RTLD_DEFAULT, "fake_tool_release");
	if (!note || !release) {
		snprintf(log, log_size, "yieldtest: no fake libcupti in the process");
		return -ENOENT;
	}
	snprintf(ask, sizeof(ask), "ask(%s,0x%x)", call ? call : "(null)", flags);
	note(ask);
	if (flags & GBPF_AGENT_F_ENGINE_SANITIZER) {
		snprintf(log, log_size, "yieldtest: kept for the sanitizer engine");
		return -EBUSY;
	}
	if (!release(call))
		return -ENOENT;
	snprintf(log, log_size, "yieldtest: fake tool subscription released");
	return 0;
}

__attribute__((visibility("default"))) int gbpf_plugin_get_backend_table(uint32_t abi_version,
									  struct gbpf_backend_ops *ops,
									  struct gbpf_backend_caps *caps);
__attribute__((visibility("default"))) int gbpf_plugin_get_backend_table(uint32_t abi_version,
									  struct gbpf_backend_ops *ops,
									  struct gbpf_backend_caps *caps)
{
	struct gbpf_backend_ops t = {
		.sz = sizeof(t),
		.name = "yieldtest",
		.description = "test backend: holds a fake tool subscription and yields it (tests/agent)",
		.plugin_version = GBPF_MAKE_VERSION(0, 1),
		.query_devices = yt_query,
		.open = yt_open,
		.close = yt_close,
		.agent_attach = yt_attach,
		.agent_detach = yt_detach,
		.agent_yield_tool = yt_yield,
	};
	struct gbpf_backend_caps c = {.sz = sizeof(c)};

	return gbpf_plugin_tables_out(abi_version, &t, &c, ops, caps);
}
