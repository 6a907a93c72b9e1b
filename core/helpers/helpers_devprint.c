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

#include "core/helpers/devprint.h"
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

uint32_t gbpf_printk_str_args(const char *fmt, size_t len)
{
	uint32_t mask = 0, argi = 0;

	for (size_t i = 0; i < len && fmt[i]; i++) {
		int longs = 0;

		if (fmt[i] != '%')
			continue;
		if (++i >= len || !fmt[i])
			break;
		if (fmt[i] == '%')
			continue;
		while (i < len && fmt[i] == 'l' && longs < 2) {
			longs++;
			i++;
		}
		if (i >= len || !fmt[i])
			break;
		if (fmt[i] == 's' && !longs && argi < 3)
			mask |= 1u << argi;
		argi++;
	}
	return mask;
}

int gbpf_format_device_printk_strs(const char *fmt, size_t fmt_len, const char *strs, size_t strs_len,
				   const uint64_t args[3], char *out, size_t out_size)
{
	/* format, NUL, then each string and its NUL: what the helper may read */
	char copy[2 * (GBPF_DEVICE_PRINT_MAX + 1) + 3];
	struct devprint_state st = {.out = out, .out_size = out_size};
	struct gbpf_exec_env env;
	gbpf_host_helper_fn fn = gbpf_host_helper_get(GBPF_HELPER_TRACE_PRINTK);
	uint64_t a[3], ret;
	uint32_t mask;
	size_t pos, p = 0;

	if (!fmt || !args || !out || out_size < 2 || fmt_len > GBPF_DEVICE_PRINT_MAX ||
	    strs_len > GBPF_DEVICE_PRINT_MAX || (strs_len && !strs))
		return -EINVAL;
	if (!fn)
		return -ENOTSUP;
	out[0] = 0;
	fmt_len = strnlen(fmt, fmt_len);
	memcpy(copy, fmt, fmt_len);
	copy[fmt_len] = 0;
	pos = fmt_len + 1;
	mask = gbpf_printk_str_args(fmt, fmt_len);
	for (int k = 0; k < 3; k++) {
		size_t n = p < strs_len ? strnlen(strs + p, strs_len - p) : 0;

		a[k] = args[k];
		if (!(mask & (1u << k)))
			continue;
		/* The device wrote this string at p (cut where the record ended). */
		memcpy(copy + pos, strs + (p < strs_len ? p : 0), n);
		copy[pos + n] = 0;
		a[k] = (uint64_t)(uintptr_t)(copy + pos);
		pos += n + 1;
		p += n + 1;
	}
	memset(&env, 0, sizeof(env));
	env.access_ok = devprint_access;
	env.user = &st;
	env.print = devprint_sink;
	env.print_ctx = &st;
	env.thread_count = 1;
	st.lo = (uint64_t)(uintptr_t)copy;
	st.hi = st.lo + pos;
	ret = fn(&env, st.lo, (uint64_t)fmt_len + 1, a[0], a[1], a[2]);
	if ((int64_t)ret < 0 && (int64_t)ret >= -4095)
		return (int)(int64_t)ret;
	return (int)st.len;
}
