/* SPDX-License-Identifier: MIT */
/*
 * gpu/block sites: basic blocks found in hand-written PTX (each block's
 * first instruction is marked "// B<n>" in the file), and the probe
 * specialised at each site (constants folded, context stores only when
 * the probe still reads the context memory).
 * Usage: test_blocks PTXAS|- BLOCKS.ptx
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gbpf/cuda_inject.h>
#include <gbpf/gbpf.h>

#include "plugins/cuda/ptx/ptx.h"
#include "plugins/cuda/ptx/inject_internal.h"
#include "tests/inject/block_inject.h"
#include "tests/inject/inject_util.h"
#include "tests/tap.h"

static const char *ptxas;

/* Line of marker "// B<n>" in @text, 0 if absent. */
static unsigned marker_line(const char *text, unsigned n)
{
	char tag[32];
	const char *hit;
	unsigned line = 1;

	snprintf(tag, sizeof(tag), "// B%u ", n);
	hit = strstr(text, tag);
	if (!hit) {
		snprintf(tag, sizeof(tag), "// B%u\n", n);
		hit = strstr(text, tag);
	}
	if (!hit)
		return 0;
	for (const char *p = text; p < hit; p++)
		line += *p == '\n';
	return line;
}

static const struct gbpf_ptx_func *find_func(const struct gbpf_ptx_module *m, const char *name)
{
	for (uint32_t i = 0; i < m->n_items; i++)
		if (m->items[i].kind == GBPF_PTX_ITEM_FUNC &&
		    gbpf_ptx_tok_eq(&m->toks[m->items[i].func->name], name))
			return m->items[i].func;
	return NULL;
}

/* The statements before the first non-declaration, as the injector counts them. */
static uint32_t first_stmt(const struct gbpf_ptx_module *m, const struct gbpf_ptx_func *f)
{
	uint32_t i = 0;

	while (i < f->body.n && f->body.v[i]->kind == GBPF_PTX_STMT_DIRECTIVE &&
	       gbpf_ptx_tok_eq(&m->toks[f->body.v[i]->toks.first], ".reg"))
		i++;
	return i;
}

static void test_find(const char *text, size_t len)
{
	char log[512] = "";
	struct gbpf_ptx_module *m = gbpf_ptx_parse(text, len, "blocks.ptx", log, sizeof(log));
	static const struct {
		const char *kernel;
		unsigned n;
	} want[] = {{"k_blocks", 10}, {"k_straight", 1}};

	if (!tap_ok(m != NULL, "blocks.ptx parses (%s)", log))
		return;
	for (size_t k = 0; k < sizeof(want) / sizeof(want[0]); k++) {
		const struct gbpf_ptx_func *f = find_func(m, want[k].kernel);
		struct gbpf_ptx_blocks b;
		const char *body = strstr(text, want[k].kernel);
		unsigned good = 0;

		if (!tap_ok(f && gbpf_ptx_find_blocks(m, f, first_stmt(m, f), &b) == 0,
			    "%s: blocks found", want[k].kernel))
			continue;
		tap_ok(b.n == want[k].n, "%s: %u basic blocks (want %u)", want[k].kernel, b.n, want[k].n);
		/* Markers are numbered per kernel: search from the kernel's text on. */
		for (unsigned i = 0; i < b.n && i < want[k].n; i++) {
			unsigned line = marker_line(body, i);
			unsigned base = 0;

			for (const char *p = text; p < body; p++)
				base += *p == '\n';
			if (line && b.first[i]->line == base + line)
				good++;
			else
				tap_diag("%s: block %u starts at line %u, marker B%u at line %u",
					 want[k].kernel, i, b.first[i]->line, i, line ? base + line : 0);
		}
		tap_ok(good == want[k].n, "%s: every block starts at its marked instruction, in order",
		       want[k].kernel);
		gbpf_ptx_blocks_free(&b);
	}
	gbpf_ptx_module_free(m);
}

/*
 * A probe in the code generator's form: counts[block_index] += 1 and
 * kernel id into counts[63]; @extra is inserted before the return
 * (e.g. arithmetic on the context pointer, which the fold cannot follow).
 */
static char *probe_fragment(const char *extra)
{
	char *s = NULL;

	if (asprintf(&s,
		     ".visible .global .align 8 .u64 __gbpf_counts[64];\n"
		     ".visible .func (.param .b64 __ret) __gbpf_probe_0(.param .b64 __ctx)\n{\n"
		     ".local .align 8 .b8 __gbpf_stack[512];\n"
		     ".reg .b64 %%r<11>;\n.reg .b64 %%t<16>;\n.reg .b32 %%w<16>;\n.reg .pred %%p<8>;\n"
		     "mov.u64 %%r10, __gbpf_stack;\ncvta.local.u64 %%r10, %%r10;\nadd.u64 %%r10, %%r10, 512;\n"
		     "ld.param.b64 %%r1, [__ctx];\nmov.b64 %%r6, %%r1;\n"
		     "ld.u32 %%r2, [%%r6+24];\n"
		     "st.local.u32 [__gbpf_stack+508], %%r2;\n"
		     "mov.b64 %%r3, %%r10;\nadd.s64 %%r3, %%r3, -4;\n"
		     "ld.u32 %%w1, [%%r3];\n"
		     "setp.ge.u32 %%p1, %%w1, 63;\n@%%p1 bra $Lout;\n"
		     "mul.wide.u32 %%t1, %%w1, 8;\nmov.u64 %%t2, __gbpf_counts;\n"
		     "add.u64 %%t2, %%t2, %%t1;\nred.global.add.u64 [%%t2], 1;\n"
		     "$Lout:\n"
		     "add.u64 %%t3, %%r6, 0;\nand.b64 %%t3, %%t3, 7;\nsetp.ne.u64 %%p5, %%t3, 0;\n"
		     "@%%p5 bra $Lu1;\nld.u64 %%r4, [%%r6+0];\nbra.uni $Lv1;\n$Lu1:\n"
		     "ld.u8 %%r4, [%%r6+0];\n$Lv1:\n"
		     "st.global.u64 [__gbpf_counts+504], %%r4;\n"
		     "%s"
		     "mov.b64 %%r0, 0;\nst.param.b64 [__ret], %%r0;\nret;\n}\n",
		     extra) < 0)
		return NULL;
	return s;
}

/*
 * The code generator's copy of the context pointer (%rctx): r6 = ctx, r6
 * written again on one path, the kernel id read through %rctx after the
 * join; @read_r6: r6 (the pointer on the other path) read after the join
 * too; 2: and the branch to the join from inside a { } block.
 */
static char *probe_fragment_ctx_copy(int read_r6)
{
	char *s = NULL;

	if (asprintf(&s,
		     ".visible .global .align 8 .u64 __gbpf_counts[64];\n"
		     ".visible .func (.param .b64 __ret) __gbpf_probe_0(.param .b64 __ctx)\n{\n"
		     ".reg .b64 %%r<11>;\n.reg .b64 %%t<16>;\n.reg .b32 %%w<16>;\n.reg .pred %%p<8>;\n"
		     ".reg .b64 %%rctx;\nld.param.b64 %%r1, [__ctx];\nld.param.b64 %%rctx, [__ctx];\n"
		     "mov.b64 %%r6, %%r1;\nld.u32 %%r2, [%%r6+24];\n"
		     "setp.ge.u64 %%p1, %%r2, 63;\n%s\nmov.b64 %%r6, 0;\n$Lout:\n"
		     "ld.u64 %%r4, [%%rctx+0];\nst.global.u64 [__gbpf_counts+504], %%r4;\n%s"
		     "mov.b64 %%r0, 0;\nst.param.b64 [__ret], %%r0;\nret;\n}\n",
		     read_r6 == 2 ? "{\n.reg .b32 %x;\n@%p1 bra $Lout;\n}" : "@%p1 bra $Lout;",
		     read_r6 ? "mov.b64 %r5, %r6;\nst.global.u64 [__gbpf_counts+496], %r5;\n" : "") < 0)
		return NULL;
	return s;
}

static void test_inject(const char *text, size_t len)
{
	char *frag = probe_fragment(""), *esc = probe_fragment("add.u64 %r7, %r6, 8;\n");
	struct bi_report rep;
	char *out;

	if (!tap_ok(frag && esc, "probe fragments built"))
		goto out;
	out = bi_instrument(text, len, frag, &rep);
	if (out && getenv("TEST_BLOCKS_DUMP"))
		fputs(out, stderr);
	if (tap_ok(out != NULL, "folded probe injected at every block")) {
		/* The kernels follow the spliced probe function (which keeps its loads). */
		const char *k = strstr(out, ".entry") ? strstr(out, ".entry") : out;

		tap_ok(rep.kernels == 2 && rep.blocks == 11, "2 kernels, 11 block sites (%u, %u)",
		       rep.kernels, rep.blocks);
		/* Block 9 of k_blocks: its index is an immediate, the context is not read. */
		tap_ok(strstr(k, "mov.b64 %r2, 0x9;") != NULL, "block 9's index folded to 0x9");
		tap_ok(!strstr(k, "[%r6+24]") && !strstr(k, "[%r6+0]") && !strstr(k, "[%r6]"),
		       "no load through the context pointer remains");
		tap_ok(!strstr(k, "__gbpf_ctx+24]"), "no per-site context store (nothing escapes)");
		tap_ok(iu_count(k, "ld.u32 %w1") == 0 && iu_count(k, "cvt.u32.u64 %w1, %__gbpf_fw") == 11,
		       "the key's stack load is forwarded from the store at every site");
		tap_ok(iu_count(k, "mov.b64 %r4, 0x") == 11 && !strstr(k, "ld.u8 %r4"),
		       "kernel id folded past the alignment check, its byte path dropped");
		bi_check_ptxas(ptxas, "folded block probes", out);
		free(out);
	}
	out = bi_instrument(text, len, esc, &rep);
	if (tap_ok(out != NULL, "probe using the context pointer injected")) {
		tap_ok(iu_count(out, "st.local.u32 [__gbpf_ctx+24]") == 11 &&
		       iu_count(out, "st.local.u32 [__gbpf_ctx+28]") == 11,
		       "context arithmetic: block index and count stored at every site");
		bi_check_ptxas(ptxas, "escaping block probes", out);
		free(out);
	}
	/* A register that held the pointer before a join is only a risk if read after it. */
	free(esc);
	esc = probe_fragment_ctx_copy(0);
	out = esc ? bi_instrument(text, len, esc, &rep) : NULL;
	if (tap_ok(out != NULL, "probe reading the context through its copy after a join injected")) {
		tap_ok(iu_count(out, "mov.b64 %r4, 0x") == 11 && !strstr(out, "[__gbpf_ctx+24]"),
		       "kernel id folded after the join, no context stores (%u folds)",
		       iu_count(out, "mov.b64 %r4, 0x"));
		bi_check_ptxas(ptxas, "context copy probes", out);
		free(out);
	}
	free(esc);
	esc = probe_fragment_ctx_copy(1);
	out = esc ? bi_instrument(text, len, esc, &rep) : NULL;
	if (tap_ok(out != NULL, "probe reading a maybe-context register after a join injected") &&
	    !tap_ok(iu_count(out, "st.local.u32 [__gbpf_ctx+24]") == 11,
		    "the register read after the join: block index stored at every site"))
		tap_diag("%s", out);
	free(out);
	free(esc);
	esc = probe_fragment_ctx_copy(2);
	out = esc ? bi_instrument(text, len, esc, &rep) : NULL;
	if (tap_ok(out != NULL, "probe jumping to the join from inside a block injected"))
		tap_ok(iu_count(out, "st.local.u32 [__gbpf_ctx+24]") == 11,
		       "the jump out of the block brings the pointer to the join: stored at every site");
	free(out);
	setenv("GBPF_PTX_NO_INLINE", "1", 1);
	out = bi_instrument(text, len, frag, &rep);
	unsetenv("GBPF_PTX_NO_INLINE");
	if (tap_ok(out != NULL, "block probes as calls (GBPF_PTX_NO_INLINE)")) {
		tap_ok(iu_count(out, "call (__gbpf_ret), __gbpf_probe_0") == 11 &&
		       iu_count(out, "st.local.u32 [__gbpf_ctx+24]") == 11,
		       "each call gets its block index in the context");
		bi_check_ptxas(ptxas, "called block probes", out);
		free(out);
	}
out:
	free(frag);
	free(esc);
}

/*
 * Arithmetic on constants (the code generator's inline hash of a key built
 * from site constants): a block index through a forwarded stack slot, a
 * {lo, hi} pair, 64-bit multiply, shifts (one past the width: clamped),
 * truncation and a widening multiply become moves of their values at each
 * site; a predicated move and anything after a join are kept as they are.
 */
static const char const_fragment[] =
	".visible .global .align 8 .u64 __gbpf_counts[64];\n"
	".visible .func (.param .b64 __ret) __gbpf_probe_0(.param .b64 __ctx)\n{\n"
	".local .align 8 .b8 __gbpf_stack[512];\n"
	".reg .b64 %r<11>;\n.reg .b64 %t<16>;\n.reg .b32 %w<16>;\n.reg .pred %p<8>;\n"
	"mov.u64 %r10, __gbpf_stack;\ncvta.local.u64 %r10, %r10;\nadd.u64 %r10, %r10, 512;\n"
	"ld.param.b64 %r1, [__ctx];\nld.u32 %r2, [%r1+24];\nst.local.u32 [__gbpf_stack+508], %r2;\n"
	"mov.b64 %r3, %r10;\nadd.s64 %r3, %r3, -4;\nld.u32 %w1, [%r3];\nmov.u32 %w2, 7;\n"
	"mov.b64 %t13, {%w1, %w2};\nmov.b64 %t10, 0x9E3779B97F4A7C05;\nxor.b64 %t10, %t10, %t13;\n"
	"mul.lo.u64 %t10, %t10, 0xFF51AFD7ED558CCD;\nshr.b64 %t11, %t10, 32;\nxor.b64 %t10, %t10, %t11;\n"
	"shl.b64 %t12, %t10, 64;\nadd.u64 %t10, %t10, %t12;\ncvt.u32.u64 %w3, %t10;\n"
	"mul.wide.u32 %t14, %w3, 3;\nst.global.u64 [__gbpf_counts+0], %t10;\n"
	"st.global.u64 [__gbpf_counts+8], %t14;\nsetp.eq.u32 %p1, %w1, 0;\n@%p1 mov.b64 %t15, 5;\n"
	"st.global.u64 [__gbpf_counts+24], %t15;\n@%p1 bra $Lj;\nst.global.u64 [__gbpf_counts+32], %t10;\n"
	"$Lj:\nxor.b64 %t5, %t10, 1;\nst.global.u64 [__gbpf_counts+16], %t5;\n"
	"mov.b64 %r0, 0;\nst.param.b64 [__ret], %r0;\nret;\n}\n";

static void test_const(const char *text, size_t len)
{
	struct bi_report rep;
	char *out = bi_instrument(text, len, const_fragment, &rep);
	const char *k;
	char want[96];
	unsigned good = 0;

	if (!tap_ok(out != NULL, "probe computing on site constants injected"))
		return;
	if (getenv("TEST_BLOCKS_DUMP"))
		fputs(out, stderr);
	k = strstr(out, ".entry") ? strstr(out, ".entry") : out;
	for (uint64_t block = 0; block < 10; block++) {
		uint64_t h = (0x9E3779B97F4A7C05ull ^ (7ull << 32 | block)) * 0xFF51AFD7ED558CCDull;
		uint64_t w3;

		h ^= h >> 32;
		w3 = h & 0xffffffffu;
		snprintf(want, sizeof(want), "mov.b64 %%t10, 0x%" PRIx64 ";", h);
		good += strstr(k, want) != NULL;
		snprintf(want, sizeof(want), "mov.b64 %%t14, 0x%" PRIx64 ";", w3 * 3);
		good += strstr(k, want) != NULL;
	}
	tap_ok(good == 20, "the hash and the widened product of every block's index are immediates (%u of 20)",
	       good);
	tap_ok(!strstr(k, "mul.lo.u64 %t10") && !strstr(k, "mul.wide.u32 %t14") && !strstr(k, "shl.b64"),
	       "no multiply or shift of constants is left to the sites");
	tap_ok(iu_count(k, "mov.b64 %t12, 0x0;") == 11, "a shift by the width gives 0 (clamped, as PTX does)");
	tap_ok(iu_count(k, "@%p1 mov.b64 %t15, 5;") == 11 && iu_count(k, "xor.b64 %t5, %t10, 1;") == 11,
	       "a predicated move and the code after the join are copied as they are");
	bi_check_ptxas(ptxas, "probes with constant arithmetic", out);
	free(out);
}

/*
 * The kernel's inline budget (GBPF_PTX_INLINE_BUDGET, PTX lines): a probe
 * longer than INLINE_MAX_STMTS_SHORT (64 statements) is inlined at the block
 * sites of each kernel (data/blocks.ptx has two) until the lines inlined
 * so far reach the budget, the later sites call it and the kernel's report
 * says how many; a short probe is inlined whatever the budget.
 */
static void test_inline_budget(const char *text, size_t len)
{
	static const char head[] =
		".visible .global .align 8 .u64 __gbpf_counts[64];\n"
		".visible .func (.param .b64 __ret) __gbpf_probe_0(.param .b64 __ctx)\n{\n"
		".reg .b64 %r<11>;\nld.param.b64 %r1, [__ctx];\nld.u32 %r2, [%r1+24];\n";
	static const char tail[] = "st.global.u64 [__gbpf_counts], %r2;\n"
				   "mov.b64 %r0, 0;\nst.param.b64 [__ret], %r0;\nret;\n}\n";
	const struct {
		unsigned adds;      /* statements of the probe: adds + 7 */
		const char *budget; /* GBPF_PTX_INLINE_BUDGET, NULL: the default (2048) */
		unsigned calls_min, calls_max;
	} cases[] = {
		{80, NULL, 0, 0},  /* 11 copies of about 90 lines fit in 2048 */
		{80, "0", 11, 11}, /* nothing inlined */
		{80, "300", 1, 10}, /* a few copies reach 300 lines in each of the two kernels */
		{40, "0", 0, 0},   /* short: inlined regardless */
	};
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		size_t n = strlen(head) + strlen(tail) + 32 * cases[c].adds + 1, at;
		char *frag = malloc(n), *out, what[96];
		struct bi_report rep;
		unsigned calls;

		if (!frag)
			return;
		at = (size_t)snprintf(frag, n, "%s", head);
		for (unsigned i = 0; i < cases[c].adds; i++)
			at += (size_t)snprintf(frag + at, n - at, "add.u64 %%r2, %%r2, %u;\n", i + 1);
		snprintf(frag + at, n - at, "%s", tail);
		snprintf(what, sizeof(what), "probe of %u statements, inline budget %s", cases[c].adds + 7,
			 cases[c].budget ? cases[c].budget : "default");
		if (cases[c].budget)
			setenv("GBPF_PTX_INLINE_BUDGET", cases[c].budget, 1);
		out = bi_instrument(text, len, frag, &rep);
		unsetenv("GBPF_PTX_INLINE_BUDGET");
		free(frag);
		if (!tap_ok(out != NULL && rep.blocks == 11, "%s: injected at the 11 block sites", what)) {
			free(out);
			continue;
		}
		calls = iu_count(out, "call (__gbpf_ret), __gbpf_probe_0");
		tap_ok(calls >= cases[c].calls_min && calls <= cases[c].calls_max,
		       "%s: %u sites call the probe (want %u..%u)", what, calls, cases[c].calls_min,
		       cases[c].calls_max);
		if (calls)
			tap_ok(strstr(rep.note, " call") && strstr(rep.note, "GBPF_PTX_INLINE_BUDGET"),
			       "%s: the kernel's report says so: %s", what, rep.note);
		else
			tap_ok(rep.note[0] == 0, "%s: no note in the kernel's report (%s)", what, rep.note);
		if (calls && calls < 11)
			bi_check_ptxas(ptxas, what, out);
		free(out);
	}
	/* the variable's values: a decimal number of lines, anything else ignored (and said) */
	const struct {
		const char *env;
		unsigned budget;
		bool ignored;
	} values[] = {{"0", 0, false}, {"300", 300, false}, {"4k", INLINE_KERNEL_BUDGET_LINES, true},
		      {"-1", INLINE_KERNEL_BUDGET_LINES, true}, {"99999999999", INLINE_KERNEL_BUDGET_LINES, true},
		      {"", INLINE_KERNEL_BUDGET_LINES, false}};
	for (size_t v = 0; v < sizeof(values) / sizeof(values[0]); v++) {
		struct inline_opts o;

		setenv("GBPF_PTX_INLINE_BUDGET", values[v].env, 1);
		gbpf_ptx_inline_opts_from_env(&o);
		unsetenv("GBPF_PTX_INLINE_BUDGET");
		tap_ok(o.budget == values[v].budget && o.budget_ignored == values[v].ignored,
		       "GBPF_PTX_INLINE_BUDGET='%s': budget %u (want %u), %s", values[v].env, o.budget,
		       values[v].budget, o.budget_ignored ? "ignored" : "taken");
	}
}

/*
 * The code generator's scope computing the thread's linear id (marked
 * %__gbpf_gtid_scope, as plugins/cuda/ptx_maps.c writes it for per-GPU-thread
 * slots): inlined at the block sites, each copy moves the id from
 * %__gbpf_gtid, which the kernel computes once at its entry; a called probe
 * keeps its own computation.
 */
static void test_thread_id_from_kernel(const char *text, size_t len)
{
	static const char frag[] =
		".visible .global .align 8 .u64 __gbpf_counts[64];\n"
		".visible .func (.param .b64 __ret) __gbpf_probe_0(.param .b64 __ctx)\n{\n"
		".reg .b64 %r<11>;\n.reg .b64 %t<16>;\n.reg .b32 %w<16>;\n.reg .pred %p<8>;\n"
		"ld.param.b64 %r1, [__ctx];\n"
		"{\n.reg .pred %__gbpf_gtid_scope;\nmov.u32 %w12, %ntid.x;\nmov.u32 %w13, %tid.x;\n"
		"mov.u32 %w14, %ctaid.x;\nmul.wide.u32 %t12, %w14, %w12;\ncvt.u64.u32 %t13, %w13;\n"
		"add.u64 %t12, %t12, %t13;\n}\n"
		"st.global.u64 [__gbpf_counts], %t12;\n"
		"mov.b64 %r0, 0;\nst.param.b64 [__ret], %r0;\nret;\n}\n";
	struct bi_report rep;
	char *out = bi_instrument(text, len, frag, &rep), *func;

	if (!tap_ok(out != NULL && rep.blocks == 11, "probe with the thread-id scope injected at 11 block sites")) {
		free(out);
		return;
	}
	func = strstr(out, "__gbpf_probe_0(\n");
	tap_ok(iu_count(out, "mov.u64 %t12, %__gbpf_gtid;") == 11,
	       "each inlined copy moves the id from the kernel's register (%u of 11)",
	       iu_count(out, "mov.u64 %t12, %__gbpf_gtid;"));
	tap_ok(iu_count(out, ".reg .b64 %__gbpf_gtid;") == 2 && iu_count(out, "mov.u32 %gi3, %tid.x;") == 2,
	       "each of the two kernels declares and computes it once at its entry");
	tap_ok(func && iu_count(func, "%__gbpf_gtid_scope") == 1 && iu_count(out, "%__gbpf_gtid_scope") == 1,
	       "the probe function (as sites would call it) keeps its own computation, the copies do not");
	bi_check_ptxas(ptxas, "thread id from the kernel", out);
	free(out);
	setenv("GBPF_PTX_NO_INLINE", "1", 1);
	out = bi_instrument(text, len, frag, &rep);
	unsetenv("GBPF_PTX_NO_INLINE");
	tap_ok(out && !strstr(out, "%__gbpf_gtid;") && iu_count(out, "call (__gbpf_ret), __gbpf_probe_0") == 11,
	       "called at every site (GBPF_PTX_NO_INLINE): no kernel register");
	free(out);
}

static void run(const char *text, size_t len)
{
	test_find(text, len);
	test_inject(text, len);
	test_const(text, len);
	test_inline_budget(text, len);
	test_thread_id_from_kernel(text, len);
}

int main(int argc, char **argv)
{
	return bi_main(argc, argv, &ptxas, run);
}
