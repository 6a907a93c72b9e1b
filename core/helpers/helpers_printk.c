/* SPDX-License-Identifier: MIT */
/*
 * trace_printk formatting and string/memory access checks of the host
 * helpers. Every byte of the program's memory is reached only after
 * env->access_ok agreed, so a hostile format or %s pointer cannot fault.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/helpers/helpers_internal.h"

bool gbpf_hh_can_read(struct gbpf_exec_env *env, uint64_t addr, uint64_t size)
{
	if (size == 0)
		return true;
	if (addr == 0 || addr + size < addr)
		return false;
	return !env->access_ok || env->access_ok(env, addr, size, 0) == 1;
}

bool gbpf_hh_can_write(struct gbpf_exec_env *env, uint64_t addr, uint64_t size)
{
	if (size == 0)
		return true;
	if (addr == 0 || addr + size < addr)
		return false;
	return !env->access_ok || env->access_ok(env, addr, size, 1) == 1;
}

int gbpf_hh_read_str(struct gbpf_exec_env *env, uint64_t addr, char *out, size_t out_size)
{
	size_t n = 0;

	if (!out_size)
		return -EINVAL;
	out[0] = 0;
	/* Byte by byte: the string's length is unknown and may end at a bound. */
	while (n + 1 < out_size && gbpf_hh_can_read(env, addr + n, 1)) {
		char c = *(const char *)(uintptr_t)(addr + n);

		if (!c)
			break;
		out[n++] = c;
	}
	out[n] = 0;
	if (n == 0 && !gbpf_hh_can_read(env, addr, 1))
		return -EFAULT;
	return (int)n;
}

void gbpf_hh_emit(struct gbpf_exec_env *env, const char *text, size_t len)
{
	if (env->print)
		env->print(env->print_ctx, text, len);
	else
		fwrite(text, 1, len, stderr);
}

struct outbuf {
	char *p;
	size_t size, len;
};

static __attribute__((format(printf, 2, 3))) void out_printf(struct outbuf *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (o->len + 1 >= o->size)
		return;
	va_start(ap, fmt);
	n = vsnprintf(o->p + o->len, o->size - o->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		o->len += (size_t)n < o->size - o->len ? (size_t)n : o->size - o->len - 1;
}

static void out_char(struct outbuf *o, char c)
{
	if (o->len + 1 < o->size) {
		o->p[o->len++] = c;
		o->p[o->len] = 0;
	}
}

/* Format one conversion of @p arg; returns 0 or -EINVAL for an unknown one. */
static int format_one(struct gbpf_exec_env *env, struct outbuf *o, char conv, int longs,
		      uint64_t arg)
{
	char str[HELPER_STR_MAX];

	switch (conv) {
	case 'd':
	case 'i':
		if (longs)
			out_printf(o, "%" PRId64, (int64_t)arg);
		else
			out_printf(o, "%" PRId32, (int32_t)arg);
		return 0;
	case 'u':
		if (longs)
			out_printf(o, "%" PRIu64, arg);
		else
			out_printf(o, "%" PRIu32, (uint32_t)arg);
		return 0;
	case 'x':
		if (longs)
			out_printf(o, "%" PRIx64, arg);
		else
			out_printf(o, "%" PRIx32, (uint32_t)arg);
		return 0;
	case 'p':
		if (longs)
			return -EINVAL;
		out_printf(o, "0x%" PRIx64, arg);
		return 0;
	case 'c':
		if (longs)
			return -EINVAL;
		out_char(o, (char)arg);
		return 0;
	case 's':
		if (longs)
			return -EINVAL;
		/* As Linux: an unreadable string prints as empty, the call succeeds. */
		if (gbpf_hh_read_str(env, arg, str, sizeof(str)) < 0)
			str[0] = 0;
		out_printf(o, "%s", str);
		return 0;
	default:
		return -EINVAL;
	}
}

int gbpf_hh_format(struct gbpf_exec_env *env, uint64_t fmt, uint64_t fmt_size,
		   const uint64_t args[3], char *out, size_t out_size)
{
	struct outbuf o = {.p = out, .size = out_size, .len = 0};
	const char *f = (const char *)(uintptr_t)fmt;
	int nargs = 0, err;

	if (!out_size)
		return -EINVAL;
	out[0] = 0;
	if (fmt_size == 0 || fmt_size > 4096)
		return -EINVAL;
	if (!gbpf_hh_can_read(env, fmt, fmt_size))
		return -EFAULT;
	if (!memchr(f, 0, (size_t)fmt_size))
		return -EINVAL;
	for (size_t i = 0; f[i]; i++) {
		int longs = 0;

		if (f[i] != '%') {
			out_char(&o, f[i]);
			continue;
		}
		i++;
		if (f[i] == '%') {
			out_char(&o, '%');
			continue;
		}
		while (f[i] == 'l' && longs < 2) {
			longs++;
			i++;
		}
		if (!f[i] || nargs == 3)
			return -EINVAL;
		err = format_one(env, &o, f[i], longs, args[nargs++]);
		if (err)
			return err;
	}
	return (int)o.len;
}
