/* SPDX-License-Identifier: MIT */
/*
 * tests/output/test_printq_str.c - trace_printk %s from the GPU, on the CPU:
 *  - the host parses %s arguments as the printk helper does;
 *  - a record filled as the device code fills it (model_printk follows
 *    plugins/cuda/cuda_printq_ptx.c step by step) formats to the same line
 *    as the interpreter's printk on the same format, arguments and strings
 *    (rodata, stack and map strings, cut strings, unreadable pointers);
 *  - puts / printk records without strings still format as before;
 *  - the device functions assemble with ptxas (sm_90, and sm_70's arch).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gbpf/helper_ids.h>

#include "core/helpers/devprint.h"
#include "core/helpers/host_helpers.h"
#include "cuda_printq.h"
#include "cuda_printq_host.h"
#include "ptx_buf.h"
#include "tap.h"
#include "../cuda/cuda_test_util.h"

/* Where the modelled device may read a string: [lo, hi) of each region, like the map blocks. */
struct region {
	const char *lo, *hi;
};

static size_t model_readable(const struct region *r, size_t nr, const char *s)
{
	for (size_t i = 0; i < nr; i++)
		if (s >= r[i].lo && s < r[i].hi)
			return (size_t)(r[i].hi - s);
	return 0;
}

/* __gbpf_pq_str: append the string at s to text t from p; returns the next position. */
static uint64_t model_str(const struct region *r, size_t nr, const char *s, uint8_t *t, uint64_t p)
{
	size_t lim;

	if (p > 215)
		return p;
	lim = s ? model_readable(r, nr, s) : 0;
	for (size_t i = 0; i < lim && p < 215 && s[i]; i++)
		t[p++] = (uint8_t)s[i];
	t[p++] = 0;
	return p;
}

/* __gbpf_h_trace_printk after the reservation: the record's bytes (seq aside). */
static void model_printk(uint8_t *rec, const char *fmt, uint64_t n, const uint64_t args[3],
			 const struct region *r, size_t nr)
{
	uint8_t *t = rec + GBPF_PRINTQ_TEXT_OFF;
	uint32_t state = 0, argi = 0, mask = 0, kind = 1, len;
	uint64_t i = 0, p;

	/* a reused slot: old bytes everywhere */
	memset(rec, 0xAB, GBPF_PRINTQ_REC_SIZE);
	if (n > 215)
		n = 215;
	memcpy(rec + 16, args, 24);
	for (; i < n && fmt[i]; i++) {
		uint8_t c = (uint8_t)fmt[i];

		t[i] = c;
		if (!state) {
			state = c == '%';
			continue;
		}
		if (state == 1 && c == '%') {
			state = 0;
			continue;
		}
		if (c == 'l' && state < 3) {
			state++;
			continue;
		}
		if (c == 's' && state == 1 && argi < 32)
			mask |= 1u << argi;
		argi++;
		state = 0;
	}
	mask &= 7;
	p = i;
	if (mask) {
		kind = 3;
		for (int k = 0; k < 3; k++)
			if (mask & (1u << k))
				p = model_str(r, nr, (const char *)(uintptr_t)args[k], t, p);
	}
	len = (uint32_t)i;
	memcpy(rec + 8, &kind, 4);
	memcpy(rec + 12, &len, 4);
}

struct cap {
	char text[1024];
	size_t len;
};

static void cap_sink(void *ctx, const char *text, size_t len)
{
	struct cap *c = ctx;
	size_t n = len < sizeof(c->text) - 1 - c->len ? len : sizeof(c->text) - 1 - c->len;

	memcpy(c->text + c->len, text, n);
	c->len += n;
	c->text[c->len] = 0;
}

/* What the interpreter prints for printk(fmt, args) where only @p r may be read. */
static const struct region *interp_regions;
static size_t interp_nr;

static int interp_access(struct gbpf_exec_env *env, uint64_t addr, uint64_t size, int write)
{
	(void)env;
	for (size_t i = 0; i < interp_nr; i++)
		if (!write && addr >= (uint64_t)(uintptr_t)interp_regions[i].lo &&
		    addr + size <= (uint64_t)(uintptr_t)interp_regions[i].hi)
			return 1;
	return 0;
}

static void interp_line(const char *fmt, size_t fmt_size, const uint64_t args[3], const struct region *r,
			size_t nr, struct cap *out)
{
	gbpf_host_helper_fn fn = gbpf_host_helper_get(GBPF_HELPER_TRACE_PRINTK);
	struct gbpf_exec_env env;

	memset(&env, 0, sizeof(env));
	memset(out, 0, sizeof(*out));
	interp_regions = r;
	interp_nr = nr;
	env.access_ok = interp_access;
	env.print = cap_sink;
	env.print_ctx = out;
	env.thread_count = 1;
	fn(&env, (uint64_t)(uintptr_t)fmt, fmt_size, args[0], args[1], args[2]);
	while (out->len && out->text[out->len - 1] == '\n')
		out->text[--out->len] = 0;
}

/* One case: the device record's line equals the interpreter's. */
static void parity(const char *what, const char *fmt, const uint64_t args[3], const struct region *r,
		   size_t nr, const char *expect)
{
	uint8_t rec[GBPF_PRINTQ_REC_SIZE];
	char line[512];
	struct cap in;
	size_t n;
	/* the format lives in "rodata": readable by both */
	struct region all[8];

	memcpy(all, r, nr * sizeof(*r));
	all[nr].lo = fmt;
	all[nr].hi = fmt + strlen(fmt) + 1;
	interp_line(fmt, strlen(fmt) + 1, args, all, nr + 1, &in);
	model_printk(rec, fmt, strlen(fmt) + 1, args, r, nr);
	n = gbpf_printq_format_record(rec, line, sizeof(line));
	tap_ok(n == in.len && !strcmp(line, in.text), "%s: device line '%s' = interpreter line '%s'", what,
	       line, in.text);
	if (expect)
		tap_ok(!strcmp(line, expect), "%s: line is '%s'", what, expect);
}

static void test_parse(void)
{
	tap_ok(gbpf_printk_str_args("a=%s", 4) == 1, "%%s is argument 0");
	tap_ok(gbpf_printk_str_args("%d %s %s", 8) == 6, "%%d %%s %%s: arguments 1 and 2");
	tap_ok(gbpf_printk_str_args("%% %s", 5) == 1, "%%%% takes no argument");
	tap_ok(gbpf_printk_str_args("%lld %s", 7) == 2, "%%lld counts as one argument");
	tap_ok(gbpf_printk_str_args("%ls", 3) == 0, "%%ls is not a string");
	tap_ok(gbpf_printk_str_args("%d %d %d %s", 11) == 0, "a fourth argument is never a string");
	tap_ok(gbpf_printk_str_args("%s", 1) == 0, "parse stops at len");
	tap_ok(gbpf_printk_str_args("x%", 2) == 0 && gbpf_printk_str_args("", 0) == 0, "cut formats");
}

static void test_parity(void)
{
	static const char rodata[] = "from-rodata\0other";
	char stack[16] = "on-stack", map[64], longs[300];
	struct region r[3] = {{rodata, rodata + sizeof(rodata)}, {stack, stack + sizeof(stack)},
			      {map, map + sizeof(map)}};
	uint64_t a[3];

	memset(map, 0, sizeof(map));
	strcpy(map, "map-value");
	a[0] = (uintptr_t)rodata, a[1] = 7, a[2] = (uintptr_t)stack;
	parity("rodata, int, stack", "a=%s b=%d c=%s", a, r, 3, "a=from-rodata b=7 c=on-stack");
	a[0] = (uintptr_t)map, a[1] = 0, a[2] = 0;
	parity("map string, NULL", "map=%s %%s [%s]", a, r, 3, "map=map-value %s []");
	a[0] = 0x1234, a[1] = (uintptr_t)(rodata + 12), a[2] = 0xffffffff;
	parity("unreadable pointer, second rodata string", "%s|%s|%x", a, r, 3, "|other|ffffffff");
	a[0] = (uintptr_t)stack, a[1] = (uintptr_t)stack, a[2] = (uintptr_t)stack;
	parity("three strings", "%s %s %s", a, r, 3, "on-stack on-stack on-stack");
	a[0] = 5, a[1] = (uintptr_t)map, a[2] = 9;
	parity("%llu then %s", "n=%llu s=%s m=%lx", a, r, 3, "n=5 s=map-value m=9");
	a[0] = 122, a[1] = 0, a[2] = 0;
	parity("no %s: kind 1", "plain %d %u", a, r, 3, "plain 122 0");

	/* A string the record cannot hold: cut where the record ends (the interpreter prints it all). */
	{
		struct region lr[1] = {{longs, longs + sizeof(longs)}};
		uint8_t rec[GBPF_PRINTQ_REC_SIZE];
		char line[512], want[256];
		const char *fmt = "long=%s|%s";

		memset(longs, 'x', sizeof(longs) - 1);
		longs[sizeof(longs) - 1] = 0;
		a[0] = (uintptr_t)longs, a[1] = (uintptr_t)longs, a[2] = 0;
		model_printk(rec, fmt, strlen(fmt) + 1, a, lr, 1);
		gbpf_printq_format_record(rec, line, sizeof(line));
		/* format 10 bytes, string to text byte 214, NUL at 215, second string beyond: empty */
		snprintf(want, sizeof(want), "long=%.*s|", 215 - 10, longs);
		tap_ok(!strcmp(line, want), "a long string is cut at the record's end (%zu chars), the next is empty",
		       strlen(line));
	}
}

static void test_old_kinds(void)
{
	uint8_t rec[GBPF_PRINTQ_REC_SIZE];
	uint32_t kind = GBPF_PRINTQ_KIND_PUTS, len = 5;
	uint64_t args[3] = {42, 0, 0};
	char line[512];

	memset(rec, 0xCD, sizeof(rec));
	memcpy(rec + 8, &kind, 4);
	memcpy(rec + 12, &len, 4);
	memcpy(rec + 16, args, sizeof(args));
	memcpy(rec + GBPF_PRINTQ_TEXT_OFF, "hello", 5);
	tap_ok(gbpf_printq_format_record(rec, line, sizeof(line)) == 5 && !strcmp(line, "hello"),
	       "puts record: '%s'", line);
	kind = GBPF_PRINTQ_KIND_PRINTK;
	len = 8;
	memcpy(rec + 8, &kind, 4);
	memcpy(rec + 12, &len, 4);
	memcpy(rec + GBPF_PRINTQ_TEXT_OFF, "v=%llu\n", 8);
	tap_ok(gbpf_printq_format_record(rec, line, sizeof(line)) == 4 && !strcmp(line, "v=42"),
	       "printk record without strings, newline dropped: '%s'", line);
	kind = GBPF_PRINTQ_KIND_PRINTK;
	len = 2;
	memcpy(rec + 8, &kind, 4);
	memcpy(rec + 12, &len, 4);
	memcpy(rec + GBPF_PRINTQ_TEXT_OFF, "%q", 2);
	tap_ok(gbpf_printq_format_record(rec, line, sizeof(line)) == 0 && !line[0],
	       "a format the helper rejects gives an empty line");
}

/*
 * The reservation reads the host's tail before the queue's head, with
 * acquire: tail never passes head, so head - tail cannot wrap into a false
 * "full" (read the other way, a warp held up between the two loads while
 * the host consumed past the head it read counted its line as dropped).
 */
static void test_reserve_order(void)
{
	struct ptx_buf b = {0};
	const char *tail, *head;

	gbpf_printq_emit_ptx(&b, 1, 1);
	tail = b.p ? strstr(b.p, "ld.acquire.sys.u64 %a6, [%a3];") : NULL;
	head = b.p ? strstr(b.p, "ld.volatile.u64 %a5, [%a2];") : NULL;
	tap_ok(!b.oom && tail && head && tail < head && !strstr(head + 1, "ld.volatile.u64 %a6, [%a3];"),
	       "the print queue's reservation loads the tail (acquire) before the head");
	ptx_buf_free(&b);
}

static void test_ptxas(void)
{
	struct ptx_buf b;
	char log[2048] = "";
	const char *entry =
		".visible .entry t(.param .u64 f)\n{\n.reg .b64 %x<3>;\n.local .align 8 .b8 st[16];\n"
		"ld.param.u64 %x0, [f];\nmov.u64 %x1, st;\ncvta.local.u64 %x1, %x1;\n"
		"{\n.param .b64 r;\n.param .b64 a;\n.param .b64 b;\n.param .b64 c;\n.param .b64 d;\n"
		".param .b64 e;\nst.param.b64 [a], %x0;\nst.param.b64 [b], 16;\nst.param.b64 [c], %x1;\n"
		"st.param.b64 [d], %x0;\nst.param.b64 [e], 0;\n"
		"call (r), __gbpf_h_trace_printk, (a, b, c, d, e);\n}\n"
		"{\n.param .b64 r;\n.param .b64 a;\nst.param.b64 [a], %x1;\ncall (r), __gbpf_h_puts, (a);\n}\n"
		"ret;\n}\n";
	const char *archs[2] = {"sm_90", ptxas_arch_for_sm70()};

	if (!ptxas_path()) {
		tap_skip("ptxas not found: the device print functions are not assembled");
		return;
	}
	for (int i = 0; i < 2; i++) {
		memset(&b, 0, sizeof(b));
		ptx_buf_printf(&b, ".version %s\n.target %s\n.address_size 64\n", i ? "7.0" : "7.8",
			       i ? "sm_70" : "sm_90");
		ptx_buf_puts(&b, ".visible .global .align 8 .u64 __gbpf_maps[4];\n"
				 ".visible .global .align 8 .u64 __gbpf_printq;\n");
		gbpf_printq_emit_ptx(&b, 1, 1);
		ptx_buf_puts(&b, entry);
		tap_ok(!b.oom && strstr(b.p, "__gbpf_printq_nmaps") && !ptxas_check(b.p, archs[i], log, sizeof(log)),
		       "printk with %%s strings and puts assemble for %s%s%s", archs[i], log[0] ? ": " : "", log);
		ptx_buf_free(&b);
	}
}

int main(void)
{
	test_parse();
	test_parity();
	test_old_kinds();
	test_reserve_order();
	test_ptxas();
	return tap_done();
}
