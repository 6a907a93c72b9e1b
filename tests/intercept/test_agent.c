/* SPDX-License-Identifier: MIT */
/*
 * tests/intercept/test_agent.c - a preloadable test agent: the interception
 * layer plus hooks that log what they see, one line per event, to the file
 * named by GBPF_TEST_AGENT_LOG. GBPF_TEST_AGENT_REPLACE selects what
 * launch_pre does:
 *   ok     - replace every launch by "gbpf_replacement" (loaded through the
 *            real driver from PTX) after replaying the original's attributes;
 *   fail   - set that replacement but return -EIO (must be ignored);
 *   reject - replace by "gbpf_reject", which the fake driver refuses to
 *            launch (the original must then be launched);
 *   param  - as ok, the replacement taking one hidden trailing parameter
 *            after the original's one (value 0xabc: the launch-id channel).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plugins/cuda/intercept/intercept.h"

static int agent_fd = -1;
static const char *agent_mode;

static void agent_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void agent_log(const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	int n;

	if (agent_fd < 0)
		return;
	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (n > (int)sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	if (write(agent_fd, line, (size_t)n) < 0)
		return;
}

static void on_query(void *ctx, const char *name, int version, uint64_t flags, int wrapped)
{
	agent_log("query %s %d %llu %s", name, version, (unsigned long long)flags,
		  wrapped ? "wrapped" : "passthrough");
}

static void on_image(void *ctx, const struct gbpf_cu_image_event *ev)
{
	agent_log("image %s %s size=%zu fatbin_size=%zu path=%s result=%d", ev->api,
		  gbpf_cu_image_kind_name(ev->kind), ev->image_size, ev->fatbin_size,
		  ev->path ? ev->path : "-", ev->result);
}

static void on_handle(void *ctx, const struct gbpf_cu_handle_event *ev)
{
	agent_log("handle %s %s name=%s", ev->api,
		  ev->kind == GBPF_CU_HANDLE_KERNEL ? "kernel" : "function",
		  ev->name ? ev->name : "-");
}

static void on_attr(void *ctx, const struct gbpf_cu_attr_event *ev)
{
	agent_log("attr %s attrib=%d value=%d cache=%d result=%d", ev->api, ev->attrib, ev->value,
		  ev->cache_config, ev->result);
}

/* The replacement function, made once through the real driver. */
static CUfunction replacement_fn;
static pthread_once_t replacement_once = PTHREAD_ONCE_INIT;

static void make_replacement(void)
{
	static const char ptx[] = ".version 8.0\n.target sm_90\n.address_size 64\n"
				  ".visible .entry gbpf_replacement()\n{\n\tret;\n}\n";
	PFN_cuModuleLoadData_v2000 load = gbpf_cu_real_proc("cuModuleLoadData", 2000, 0);
	PFN_cuModuleGetFunction_v2000 get = gbpf_cu_real_proc("cuModuleGetFunction", 2000, 0);
	const char *name = strcmp(agent_mode, "reject") == 0 ? "gbpf_reject" : "gbpf_replacement";
	CUmodule mod = NULL;

	if (!load || !get) {
		agent_log("replacement: real driver entry points missing");
		return;
	}
	if (load(&mod, ptx) != GBPF_CUDA_SUCCESS || get(&replacement_fn, mod, name) != 0)
		agent_log("replacement: cannot load %s", name);
}

static int on_launch_pre(void *ctx, struct gbpf_cu_launch *l)
{
	char why[256] = "";
	int n;

	if (!agent_mode)
		return 0;
	pthread_once(&replacement_once, make_replacement);
	if (!replacement_fn)
		return -ENOENT;
	n = gbpf_cu_attr_replay(l->func, replacement_fn, why, sizeof(why));
	agent_log("replay %d %s", n, why);
	l->replacement = replacement_fn;
	if (!strcmp(agent_mode, "param")) {
		l->extra_param.on = 1;
		l->extra_param.n_params = 1;
		l->extra_param.offset = 8;
		l->extra_param.value = 0xabc;
	}
	return strcmp(agent_mode, "fail") == 0 ? -EIO : 0;
}

static void on_launch_post(void *ctx, const struct gbpf_cu_launch *l)
{
	agent_log("launch %s id=%llu name=%s grid=%u,%u,%u block=%u,%u,%u shmem=%u ptds=%d "
		  "replaced=%d replacement_result=%d result=%d",
		  l->api_name, (unsigned long long)l->launch_id, l->name ? l->name : "-",
		  l->grid[0], l->grid[1], l->grid[2], l->block[0], l->block[1], l->block[2],
		  l->shared_mem_bytes, l->ptds, l->replaced, l->replacement_result, l->result);
}

static void on_call_post(void *ctx, const struct gbpf_cu_call_event *ev)
{
	agent_log("call %s kind=%d bytes=%llu dir=%u async=%u ptds=%d result=%d", ev->api,
		  (int)ev->kind, (unsigned long long)ev->bytes, ev->direction, ev->async, ev->ptds,
		  ev->result);
}

static const struct gbpf_cu_hooks agent_hooks = {
	.sz = sizeof(struct gbpf_cu_hooks),
	.proc_query = on_query,
	.image_loaded = on_image,
	.handle_created = on_handle,
	.attribute_set = on_attr,
	.launch_pre = on_launch_pre,
	.launch_post = on_launch_post,
	.call_post = on_call_post,
};

__attribute__((constructor)) static void agent_init(void)
{
	const char *path = getenv("GBPF_TEST_AGENT_LOG");

	if (path)
		agent_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	agent_mode = getenv("GBPF_TEST_AGENT_REPLACE");
	if (agent_mode && !*agent_mode)
		agent_mode = NULL;
	gbpf_cu_intercept_set_hooks(&agent_hooks);
	agent_log("agent loaded");
}
