/* SPDX-License-Identifier: MIT */
/*
 * Formatting of trace_printk / puts records that device code queued (a
 * format or string copied out of the GPU, and up to three arguments): the
 * host helpers themselves run on the copy, so a line reads the same from
 * every backend and from the interpreter.
 */
#include <errno.h>
#include <string.h>

#include <gbpf/helper_ids.h>

#include "core/helpers/helpers_internal.h"

struct devprint_state {
	uint64_t lo, hi; /* the readable bytes: the copied text and its NUL */
	char *out;
	size_t out_size, len;
};

/* The helpers may read the copied text and nothing else. */
static int devprint_access(struct gbpf_exec_env *env, uint64_t addr, uint64_t size, int write)
{
	const struct devprint_state *st = env->user;

	return !write && addr >= st->lo && size <= st->hi - addr && addr + size <= st->hi;
}

static void devprint_sink(void *ctx, const char *text, size_t len)
{
	struct devprint_state *st = ctx;
	size_t n = len < st->out_size - 1 - st->len ? len : st->out_size - 1 - st->len;

	memcpy(st->out + st->len, text, n);
	st->len += n;
	st->out[st->len] = 0;
}

int gbpf_format_device_print(uint32_t helper_id, const char *text, size_t len, const uint64_t args[3],
			     char *out, size_t out_size)
{
	char copy[GBPF_DEVICE_PRINT_MAX + 1];
	struct devprint_state st = {.out = out, .out_size = out_size};
	struct gbpf_exec_env env;
	gbpf_host_helper_fn fn;
	uint64_t ret;

	if (!text || !args || !out || out_size < 2 || len > GBPF_DEVICE_PRINT_MAX ||
	    (helper_id != GBPF_HELPER_TRACE_PRINTK && helper_id != GBPF_HELPER_GPU_PUTS))
		return -EINVAL;
	out[0] = 0;
	memcpy(copy, text, len);
	copy[len] = 0;
	memset(&env, 0, sizeof(env));
	env.access_ok = devprint_access;
	env.user = &st;
	env.print = devprint_sink;
	env.print_ctx = &st;
	env.thread_count = 1;
	st.lo = (uint64_t)(uintptr_t)copy;
	st.hi = st.lo + len + 1;
	fn = gbpf_host_helper_get(helper_id);
	if (!fn)
		return -ENOTSUP;
	if (helper_id == GBPF_HELPER_TRACE_PRINTK)
		ret = fn(&env, st.lo, (uint64_t)len + 1, args[0], args[1], args[2]);
	else
		ret = fn(&env, st.lo, 0, 0, 0, 0);
	if ((int64_t)ret < 0 && (int64_t)ret >= -4095)
		return (int)(int64_t)ret;
	return (int)st.len;
}
