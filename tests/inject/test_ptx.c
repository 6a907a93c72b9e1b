/* SPDX-License-Identifier: MIT */
/*
 * PTX parser, printer and injector on nvcc output and hand-written PTX.
 * Usage: test_ptx PTXAS|- HANDWRITTEN.ptx [NVCC.ptx ...]
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gbpf/cuda_inject.h>
#include <gbpf/gbpf.h>
#include <gbpf/plugin.h>

#include "plugins/cuda/ptx/ptx.h"
#include "tests/inject/inject_util.h"
#include "tests/tap.h"

static const char *ptxas;

struct counts {
	unsigned kernels, instrumented, entry, exit, mem, barrier;
	char names[16][128];
	unsigned per_exit[16], per_mem[16], per_bar[16];
};

static void collect(const struct gbpf_ptx_kernel_report *r, void *arg)
{
	struct counts *c = arg;

	if (c->kernels < 16) {
		snprintf(c->names[c->kernels], sizeof(c->names[0]), "%s", r->name);
		c->per_exit[c->kernels] = r->n_exit;
		c->per_mem[c->kernels] = r->n_mem;
		c->per_bar[c->kernels] = r->n_barrier;
	}
	c->kernels++;
	c->instrumented += r->instrumented;
	c->entry += r->n_entry;
	c->exit += r->n_exit;
	c->mem += r->n_mem;
	c->barrier += r->n_barrier;
}

static bool tok_is(const struct gbpf_ptx_tok *t, const char *s)
{
	return gbpf_ptx_tok_eq(t, s);
}

static bool tok_prefix(const struct gbpf_ptx_tok *t, const char *p)
{
	size_t n = strlen(p);

	return t->len >= n && !memcmp(t->s, p, n);
}

/*
 * Independent count, from raw tokens, of the exits, barriers and memory
 * instructions inside .entry bodies: an opcode is an identifier after ';',
 * '{', '}', ':', a predicate, or at the start of the line after a .loc.
 */
static void count_sites(const char *text, size_t len, unsigned *exits, unsigned *bars,
			unsigned *mems)
{
	struct gbpf_ptx_tok *t = NULL;
	int n = gbpf_ptx_tokenize(text, len, false, &t, NULL, 0);
	int depth = 0;
	bool in_entry = false, pending = false;

	*exits = *bars = *mems = 0;
	for (int i = 0; i < n; i++) {
		bool opcode_pos;

		if (t[i].kind == GBPF_PTX_TOK_DOT && tok_is(&t[i], ".entry") && depth == 0)
			pending = true;
		if (t[i].kind == GBPF_PTX_TOK_PUNCT && t[i].s[0] == '{') {
			if (depth == 0 && pending)
				in_entry = true;
			pending = false;
			depth++;
			continue;
		}
		if (t[i].kind == GBPF_PTX_TOK_PUNCT && t[i].s[0] == '}') {
			if (--depth == 0)
				in_entry = false;
			continue;
		}
		if (!in_entry || t[i].kind != GBPF_PTX_TOK_IDENT || i == 0)
			continue;
		opcode_pos = (t[i - 1].kind == GBPF_PTX_TOK_PUNCT && strchr(";{}:", t[i - 1].s[0])) ||
			     (t[i].nl_before && t[i - 1].kind == GBPF_PTX_TOK_NUM) || /* after .loc */
			     (t[i - 1].kind == GBPF_PTX_TOK_REG && i >= 2 &&
			      t[i - 2].kind == GBPF_PTX_TOK_PUNCT && strchr("@!", t[i - 2].s[0]));
		if (!opcode_pos)
			continue;
		if (tok_is(&t[i], "ret") || tok_is(&t[i], "exit") || tok_prefix(&t[i], "ret.") ||
		    tok_prefix(&t[i], "exit."))
			(*exits)++;
		else if ((tok_prefix(&t[i], "bar.") || tok_prefix(&t[i], "barrier.")) &&
			 !tok_prefix(&t[i], "bar.warp"))
			(*bars)++;
		else if ((tok_prefix(&t[i], "ld.") || tok_prefix(&t[i], "st.") ||
			  tok_prefix(&t[i], "atom.") || tok_prefix(&t[i], "red.")) &&
			 !tok_prefix(&t[i], "ld.param") && !tok_prefix(&t[i], "st.param") &&
			 !tok_prefix(&t[i], "ld.const"))
			(*mems)++;
	}
	free(t);
}

/* Fields of the probe context no probe reads (GBPF_CUDA_CTX_UNUSED_*) for inject_text. */
static unsigned inject_ctx_unused;

static char *inject_text(const char *text, size_t len, const char *frag, unsigned sites,
			 gbpf_ptx_select_fn sel, struct counts *c, int *err, char *log,
			 size_t log_size)
{
	struct gbpf_ptx_module *m = gbpf_ptx_parse(text, len, "app.ptx", log, log_size);
	struct gbpf_ptx_module *f = frag ? gbpf_ptx_parse(frag, strlen(frag), "frag", log,
							  log_size)
					 : NULL;
	struct gbpf_ptx_inject_req req = {
		.plan = {.sites = sites, .entry_probe = 0, .exit_probe = 1, .mem_probe = 2,
			 .barrier_probe = 3, .ctx_unused = inject_ctx_unused},
		.select = sel,
		.report = collect,
		.report_arg = c,
	};
	char *out = NULL;

	memset(c, 0, sizeof(*c));
	*err = -EINVAL;
	if (m && (f || !frag)) {
		*err = gbpf_ptx_inject(m, f, &req, log, log_size);
		if (*err >= 0)
			out = gbpf_ptx_print_ex(m, GBPF_PTX_PRINT_SOURCE, NULL);
	}
	gbpf_ptx_module_free(m);
	gbpf_ptx_module_free(f);
	return out;
}

static void check_nvcc_ptx(const char *path)
{
	char log[512] = "", arch[32];
	size_t len, plen;
	char *text = iu_read(path, &len), *printed, *src, *inj;
	struct gbpf_ptx_module *m;
	struct counts c;
	unsigned exits, bars, mems;
	int err;

	if (!text) {
		tap_skip("%s not built (no nvcc)", path);
		return;
	}
	iu_ptx_arch(text, arch, sizeof(arch));
	m = gbpf_ptx_parse(text, len, path, log, sizeof(log));
	tap_ok(m != NULL, "%s: parses (%s)", path, log);
	if (!m) {
		free(text);
		return;
	}
	printed = gbpf_ptx_print(m, &plen);
	tap_ok(printed && iu_token_diff(text, len, printed, plen) == -1,
	       "%s: print(parse(x)) is token-identical", path);
	src = gbpf_ptx_print_ex(m, GBPF_PTX_PRINT_SOURCE, NULL);
	tap_ok(src && iu_token_diff(text, len, src, strlen(src)) == -1,
	       "%s: source-preserving print is token-identical", path);
	if (ptxas && printed) {
		char *c1 = iu_tmpname("orig", ".cubin"), *c2 = iu_tmpname("rt", ".cubin");
		size_t l1 = 0, l2 = 0;
		char *b1 = NULL, *b2 = NULL;

		if (c1 && c2 && iu_ptxas(ptxas, arch, text, len, c1) == 0 &&
		    iu_ptxas(ptxas, arch, printed, plen, c2) == 0) {
			b1 = iu_read(c1, &l1);
			b2 = iu_read(c2, &l2);
		}
		if (strstr(text, ".loc"))
			/* Debug cubins embed the PTX text itself: only the code must match. */
			tap_ok(b1 && b2, "%s: ptxas -arch=%s accepts the round trip (debug info)",
			       path, arch);
		else
			tap_ok(b1 && b2 && l1 == l2 && !memcmp(b1, b2, l1),
			       "%s: ptxas -arch=%s gives the same cubin for the round trip", path,
			       arch);
		free(b1);
		free(b2);
		if (c1)
			unlink(c1);
		if (c2)
			unlink(c2);
		free(c1);
		free(c2);
	}
	free(printed);
	free(src);
	gbpf_ptx_module_free(m);

	inj = inject_text(text, len, iu_fragment, 15, NULL, &c, &err, log, sizeof(log));
	tap_ok(inj && err == (int)c.kernels && c.instrumented == c.kernels && c.kernels > 0,
	       "%s: all %u kernels instrumented (%d, %s)", path, c.kernels, err, log);
	count_sites(text, len, &exits, &bars, &mems);
	tap_ok(c.exit == exits, "%s: %u exit probes for %u ret/exit", path, c.exit, exits);
	tap_ok(c.barrier == bars, "%s: %u barrier probes for %u barriers", path, c.barrier, bars);
	tap_ok(c.mem == mems, "%s: %u memory probes for %u ld/st/atom/red", path, c.mem, mems);
	tap_ok(c.entry == c.kernels, "%s: one entry probe per kernel", path);
	if (inj) {
		tap_ok(iu_count(inj, "__gbpf_probe_1, (") == c.exit &&
			       iu_count(inj, "__gbpf_probe_2, (") == c.mem &&
			       iu_count(inj, "__gbpf_probe_3, (") == c.barrier,
		       "%s: probe calls in the text match the reported counts", path);
		tap_ok(iu_count(inj, "%__gbpf_r0, [__gbpf_device];") == c.kernels &&
			       iu_count(inj, "[__gbpf_ctx+56], %__gbpf_rd1;") == c.kernels,
		       "%s: every field read: each kernel's entry loads __gbpf_device into the context", path);
		if (ptxas) {
			tap_ok(iu_ptxas(ptxas, "sm_90", inj, strlen(inj), NULL) == 0,
			       "%s: instrumented PTX assembles for sm_90", path);
			if (strcmp(arch, "sm_90"))
				tap_ok(iu_ptxas(ptxas, arch, inj, strlen(inj), NULL) == 0,
				       "%s: instrumented PTX assembles for %s", path, arch);
		}
	}
	free(inj);
	/*
	 * Probes that read no context field (ctx->device included: bit 4, what the
	 * agent passes) : no per-thread context stores, a NULL context.
	 */
	inject_ctx_unused = GBPF_CUDA_CTX_UNUSED_ALL;
	inj = inject_text(text, len, iu_fragment, 15, NULL, &c, &err, log, sizeof(log));
	inject_ctx_unused = 0;
	tap_ok(inj && c.instrumented == c.kernels && !strstr(inj, "[__gbpf_ctx+") &&
		       strstr(inj, "%__gbpf_rd0, 0;"),
	       "%s: with no context field read, no context stores and a NULL context", path);
	/* ctx->device is read whenever its bit is clear: loaded at entry from __gbpf_device. */
	if (inj)
		tap_ok(!strstr(inj, "[__gbpf_device]") && strstr(inj, ".global .align 4 .u32 __gbpf_device"),
		       "%s: no device read, no __gbpf_device load (the variable is declared)", path);
	if (inj && ptxas)
		tap_ok(iu_ptxas(ptxas, "sm_90", inj, strlen(inj), NULL) == 0,
		       "%s: that PTX assembles for sm_90", path);
	free(inj);
	free(text);
}

static bool only_many_exits(const char *name, struct gbpf_ptx_plan *plan, void *arg)
{
	(void)plan;
	(void)arg;
	return !strcmp(name, "many_exits");
}

static const char *untouched_src(const char *text)
{
	return strstr(text, ".visible .entry untouched(");
}

static void check_handwritten(const char *path)
{
	char log[512] = "";
	size_t len;
	char *text = iu_read(path, &len), *inj;
	struct counts c;
	int err;

	if (!text) {
		tap_ok(0, "%s readable", path);
		return;
	}
	inj = inject_text(text, len, iu_fragment, 15, only_many_exits, &c, &err, log, sizeof(log));
	tap_ok(inj && err == 1 && c.kernels == 2 && c.instrumented == 1,
	       "handwritten: one of two kernels instrumented (%d, %s)", err, log);
	tap_ok(c.per_exit[0] == 4 && c.per_mem[0] == 10 && c.per_bar[0] == 2 && c.entry == 1,
	       "handwritten: 4 exits, 10 memory accesses, 2 barriers, 1 entry (got %u %u %u %u)",
	       c.per_exit[0], c.per_mem[0], c.per_bar[0], c.entry);
	if (inj) {
		const char *u = untouched_src(text);

		tap_ok(u && strstr(inj, u), "handwritten: unselected kernel is byte-identical");
		tap_ok(strstr(inj, "@!%p1 bra") && strstr(inj, "@!%p3 bra") &&
			       strstr(inj, "@%p1 ret;") && strstr(inj, "@%p3 ret.uni;"),
		       "handwritten: predicated exits get a branch around the probe");
		tap_ok(strstr(inj, ".maxntid 256, 1, 1") && strstr(inj, ".minnctapersm 2") &&
			       strstr(inj, ".pragma \"nounroll\";") &&
			       strstr(inj, ".extern .shared .align 16 .b8 dyn_smem[];") &&
			       strstr(inj, ".loc 1 10 3") && strstr(inj, ".file 1 \"handwritten.cu\"") &&
			       strstr(inj, "// callseq 0"),
		       "handwritten: directives, pragmas, debug lines, callseq kept");
		tap_ok(strstr(inj, "cvta.param.u64") && strstr(inj, "cvta.shared.u64") &&
			       strstr(inj, "[__gbpf_launch_id]") && strstr(inj, "%__gbpf_rd<"),
		       "handwritten: ctx built with param/shared conversions and launch id");
		tap_ok(strstr(inj, ".version 8.0") != NULL, "handwritten: .version kept at 8.0");
		if (ptxas)
			tap_ok(iu_ptxas(ptxas, "sm_90", inj, strlen(inj), NULL) == 0,
			       "handwritten: instrumented PTX assembles for sm_90");
	}
	free(inj);

	/* A newer fragment raises the module's .version. */
	{
		char *frag = strdup(iu_fragment);

		memcpy(strstr(frag, ".version 8.0"), ".version 8.7", 12);
		inj = inject_text(text, len, frag, GBPF_PTX_SITE_ENTRY, NULL, &c, &err, log,
				  sizeof(log));
		tap_ok(inj && strstr(inj, ".version 8.7") && !strstr(inj, ".version 8.0"),
		       "version merged to the fragment's 8.7");
		free(inj);
		free(frag);
	}
	/* A fragment without the requested probe is refused. */
	{
		char *frag = strdup(iu_fragment);

		*strstr(frag, ".visible .func (.param .b64 ret) __gbpf_probe_3") = 0;
		inj = inject_text(text, len, frag, 15, NULL, &c, &err, log, sizeof(log));
		tap_ok(!inj && err == -GBPF_ERRNO__INJECT && strstr(log, "__gbpf_probe_3"),
		       "missing probe refused: %s", log);
		free(frag);
	}
	/* Nothing requested: the module prints back unchanged. */
	inj = inject_text(text, len, NULL, 0, NULL, &c, &err, log, sizeof(log));
	tap_ok(inj && err == 0 && c.kernels == 2 && !strstr(inj, "__gbpf"),
	       "no sites: no kernel changed");
	free(inj);
	free(text);
}

static void check_old_version(void)
{
	static const char app[] = ".version 7.0\n.target sm_75\n.address_size 64\n"
				  ".visible .entry k(.param .u64 k_p, .param .u32 k_n,\n"
				  "\t.param .align 4 .b8 k_s[12], .param .u8 k_c)\n{\n\tret;\n}\n";
	char log[256] = "", *frag = strdup(iu_fragment), *inj;
	struct counts c;
	int err;

	memcpy(strstr(frag, ".version 8.0"), ".version 7.0", 12);
	*strstr(frag, ".target sm_90") = 0;
	{
		/* keep the fragment valid: rebuild it without its .target line */
		const char *rest = strstr(iu_fragment, ".address_size");
		char *f2;

		if (asprintf(&f2, "%s.target sm_75\n%s", frag, rest) < 0)
			return;
		free(frag);
		frag = f2;
	}
	inj = inject_text(app, sizeof(app) - 1, frag, GBPF_PTX_SITE_ENTRY | GBPF_PTX_SITE_EXIT,
			  NULL, &c, &err, log, sizeof(log));
	tap_ok(inj && err == 1 && !strstr(inj, "cvta.param") &&
		       strstr(inj, "__gbpf_params[25]") && strstr(inj, "%__gbpf_rd1, [k_p+0]") &&
		       strstr(inj, "%__gbpf_r1, [k_s+8]") &&
		       strstr(inj, "[__gbpf_params+12], %__gbpf_r1") &&
		       strstr(inj, "[__gbpf_params+24], %__gbpf_h0"),
	       "PTX ISA 7.0: parameters copied to a local block in launch layout");
	if (inj && ptxas)
		tap_ok(iu_ptxas(ptxas, "sm_75", inj, strlen(inj), NULL) == 0,
		       "PTX ISA 7.0 instrumented module assembles for sm_75");
	free(inj);
	free(frag);
}

static void check_syntax_errors(void)
{
	static const struct {
		const char *text;
		const char *what;
	} bad[] = {
		{".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n"
		 "\tmov.u32 %r1, 1\n}\n",
		 "lacks its ';'"},
		{".version 8.0\n.entry k()\n{\n\tret;\n}\n}\n", "unexpected '}'"},
		{".version 8.0\n.global .b8 s[2] = \"ab;\n", "unterminated string"},
		{".version 8.0\n.entry k(\n.param .u64 a,\n", "not closed"},
		{".version 8.0\n.entry k()\n{\n\t@ ret;\n}\n", "predicate register expected"},
		{".version 8.0\n.entry k()\n{\n\tret;\n", "not closed"},
		{".version 8.0\n.entry k()\n{\n\t# ret;\n}\n", "unexpected character"},
	};
	char log[256];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct gbpf_ptx_module *m;

		log[0] = 0;
		m = gbpf_ptx_parse(bad[i].text, strlen(bad[i].text), "bad.ptx", log, sizeof(log));
		tap_ok(!m && errno == EINVAL && strstr(log, "bad.ptx") &&
			       (strstr(log, bad[i].what) || strstr(log, "':")),
		       "syntax error %zu reported: %s", i, log);
		gbpf_ptx_module_free(m);
	}
	/* Deep nesting is bounded, not a stack overflow. */
	{
		size_t n = 100000;
		char *t = malloc(n * 2 + 64);
		size_t l = (size_t)sprintf(t, ".entry k()\n");
		struct gbpf_ptx_module *m;

		memset(t + l, '{', n);
		memset(t + l + n, '}', n);
		m = gbpf_ptx_parse(t, l + 2 * n, "deep.ptx", log, sizeof(log));
		tap_ok(!m && strstr(log, "nested deeper"), "deep nesting refused: %s", log);
		gbpf_ptx_module_free(m);
		free(t);
	}
	tap_ok(gbpf_kernel_id("") == 0xcbf29ce484222325ull &&
		       gbpf_kernel_id("a") == 0xaf63dc4c8601ec8cull,
	       "FNV-1a 64 reference values");
}

/* ---- the hidden launch-id parameter (gbpf_ptx_plan.launch_param) ---- */

static const char lid_ptx[] =
	".version 7.8\n.target sm_90\n.address_size 64\n\n"
	".visible .entry k_ptr(\n\t.param .u64 .ptr .global .align 16 k_ptr_a,\n\t.param .u32 k_ptr_n\n)\n"
	"{\n\t.reg .b32 %r<2>;\n\tld.param.u32 %r1, [k_ptr_n];\n\tret;\n}\n\n"
	".visible .entry k_none()\n{\n\tret;\n}\n\n"
	".visible .entry k_arr(\n\t.param .align 16 .b8 k_arr_s[20],\n\t.param .u8 k_arr_c\n)\n"
	"{\n\tret;\n}\n\n"
	".visible .entry k_full(\n\t.param .align 8 .b8 k_full_big[4092]\n)\n{\n\tret;\n}\n";

struct lid_seen {
	unsigned n;
	char name[4][16];
	bool instrumented[4];
	unsigned n_params[4], off[4];
	char reason[4][384];
};

static void lid_collect(const struct gbpf_ptx_kernel_report *r, void *arg)
{
	struct lid_seen *s = arg;

	if (s->n >= 4)
		return;
	snprintf(s->name[s->n], sizeof(s->name[0]), "%s", r->name);
	s->instrumented[s->n] = r->instrumented;
	s->n_params[s->n] = r->n_params;
	s->off[s->n] = r->launch_param_off;
	snprintf(s->reason[s->n], sizeof(s->reason[0]), "%s", r->reason);
	s->n++;
}

static char *lid_inject(unsigned ctx_unused, struct lid_seen *seen, int *err)
{
	char log[512] = "";
	struct gbpf_ptx_module *m = gbpf_ptx_parse(lid_ptx, strlen(lid_ptx), "lid.ptx", log, sizeof(log));
	struct gbpf_ptx_module *f = gbpf_ptx_parse(iu_fragment, strlen(iu_fragment), "frag", log, sizeof(log));
	struct gbpf_ptx_inject_req req = {
		.plan = {.sites = GBPF_PTX_SITE_ENTRY | GBPF_PTX_SITE_EXIT, .exit_probe = 1,
			 .ctx_unused = ctx_unused | GBPF_CUDA_CTX_UNUSED_DEVICE, .launch_param = true},
		.report = lid_collect, .report_arg = seen,
	};
	char *out = NULL;

	memset(seen, 0, sizeof(*seen));
	*err = -EINVAL;
	if (m && f) {
		*err = gbpf_ptx_inject(m, f, &req, log, sizeof(log));
		if (*err >= 0)
			out = gbpf_ptx_print(m, NULL);
	}
	if (*err < 0)
		tap_diag("launch param injection: %d %s", *err, log);
	gbpf_ptx_module_free(m);
	gbpf_ptx_module_free(f);
	return out;
}

static void check_launch_param(void)
{
	struct lid_seen s;
	int err;
	char *inj = lid_inject(0, &s, &err);

	tap_ok(inj && err == 3 && s.n == 4, "launch param: 3 of 4 kernels instrumented (%d, %u reports)", err, s.n);
	tap_ok(s.instrumented[0] && s.n_params[0] == 2 && s.off[0] == 16,
	       "launch param: k_ptr (u64 .ptr .align 16, u32): 2 params, hidden one at 16 (got %u at %u)",
	       s.n_params[0], s.off[0]);
	tap_ok(s.instrumented[1] && s.n_params[1] == 0 && s.off[1] == 0,
	       "launch param: k_none: no params, hidden one at 0 (got %u at %u)", s.n_params[1], s.off[1]);
	tap_ok(s.instrumented[2] && s.n_params[2] == 2 && s.off[2] == 24,
	       "launch param: k_arr (.align 16 .b8 [20], u8): hidden one at 24 (got %u)", s.off[2]);
	tap_ok(!s.instrumented[3] && strstr(s.reason[3], "no room for the launch-id parameter") &&
		       strstr(s.reason[3], "4092 of 4096"),
	       "launch param: k_full (4092 bytes of parameters) left alone, reason: %s", s.reason[3]);
	if (inj) {
		tap_ok(iu_count(inj, ".param .u64 __gbpf_lid") == 3 &&
			       iu_count(inj, "%__gbpf_rd1, [__gbpf_lid];") == 3 &&
			       iu_count(inj, "@%__gbpf_lp ld.global.u64 \t%__gbpf_rd1, [__gbpf_launch_id];") == 3 &&
			       iu_count(inj, "@%__gbpf_lp shl.b64 \t%__gbpf_rd1, %__gbpf_rd1, 32;") == 3 &&
			       iu_count(inj, "@%__gbpf_lp mov.u64 \t%__gbpf_rd2, %gridid;") == 3 &&
			       iu_count(inj, "@%__gbpf_lp or.b64 \t%__gbpf_rd1, %__gbpf_rd1, 0x4000000000000000;") == 3 &&
			       iu_count(inj, ".reg .pred %__gbpf_lp;") == 3,
		       "launch param: each instrumented kernel reads its hidden parameter; on the graph "
		       "sentinel the id is GBPF_CUDA_LAUNCH_ID_GRAPH | __gbpf_launch_id << 32 | %%gridid's low half");
		tap_ok(strstr(inj, "k_full_big[4092]\n)\n{\n\tret;") != NULL, "launch param: k_full unchanged");
		if (ptxas)
			tap_ok(iu_ptxas(ptxas, "sm_90", inj, strlen(inj), NULL) == 0,
			       "launch param: instrumented PTX assembles for sm_90");
	}
	free(inj);
	/* No probe reads launch_id: the parameter is still there (launches pass it) but never read. */
	inj = lid_inject(GBPF_CUDA_CTX_UNUSED_LAUNCH_ID, &s, &err);
	tap_ok(inj && err == 3 && iu_count(inj, ".param .u64 __gbpf_lid") == 3 && !strstr(inj, "[__gbpf_lid]") &&
		       !strstr(inj, "__gbpf_lp"),
	       "launch param: launch_id unread: parameter declared, no load, no predicate");
	if (inj && ptxas)
		tap_ok(iu_ptxas(ptxas, "sm_90", inj, strlen(inj), NULL) == 0,
		       "launch param: that PTX assembles for sm_90");
	free(inj);
}

/*
 * gbpf_gpu_ctx.device (offset 56) at entry, exit and memory sites: one
 * load of __gbpf_device and one 8-byte store (device and its zeroed
 * padding) per thread at kernel entry, and only when a probe reads it.
 */
static const char dev_ptx[] =
	".version 7.5\n"
	".target sm_75\n"
	".address_size 64\n"
	".visible .entry devk(.param .u64 p)\n"
	"{\n\t.reg .b64 %rd<3>;\n"
	"\tld.param.u64 %rd1, [p];\n\tcvta.to.global.u64 %rd2, %rd1;\n"
	"\tst.global.u32 [%rd2], 1;\n\tret;\n}\n";

/* Probes 0 (entry, block), 1 (exit) and 2 (memory) count by ctx->device. */
static const char dev_fragment[] =
	".version 7.5\n"
	".target sm_75\n"
	".address_size 64\n"
	".global .align 8 .u64 __gbpf_devhits[4];\n"
	".visible .func (.param .b64 __ret) __gbpf_probe_0(.param .b64 __ctx)\n"
	"{\n\t.reg .b64 %rd<4>;\n\t.reg .b32 %r<2>;\n"
	"\tld.param.u64 %rd1, [__ctx];\n\tld.u32 %r1, [%rd1+56];\n\tcvt.u64.u32 %rd2, %r1;\n"
	"\tatom.global.add.u64 %rd3, [__gbpf_devhits], %rd2;\n"
	"\tst.param.b64 [__ret], 0;\n\tret;\n}\n"
	".visible .func (.param .b64 __ret) __gbpf_probe_1(.param .b64 __ctx)\n"
	"{\n\t.reg .b64 %rd<4>;\n"
	"\tld.param.u64 %rd1, [__ctx];\n\tld.u64 %rd2, [%rd1+56];\n"
	"\tatom.global.add.u64 %rd3, [__gbpf_devhits+8], %rd2;\n"
	"\tst.param.b64 [__ret], 0;\n\tret;\n}\n"
	".visible .func (.param .b64 __ret) __gbpf_probe_2(.param .b64 __ctx)\n"
	"{\n\t.reg .b64 %rd<5>;\n\t.reg .b32 %r<2>;\n"
	"\tld.param.u64 %rd1, [__ctx];\n\tld.u64 %rd2, [%rd1+24];\n"
	"\tld.u32 %r1, [%rd1+56];\n\tcvt.u64.u32 %rd4, %r1;\n"
	"\tatom.global.add.u64 %rd3, [__gbpf_devhits+16], %rd4;\n"
	"\tst.param.b64 [__ret], 0;\n\tret;\n}\n";

static char *dev_inject(unsigned sites, unsigned unused, struct counts *c, const char *what)
{
	char log[512] = "";
	int err;
	char *inj;

	inject_ctx_unused = unused;
	inj = inject_text(dev_ptx, strlen(dev_ptx), dev_fragment, sites, NULL, c, &err, log, sizeof(log));
	inject_ctx_unused = 0;
	tap_ok(inj && err == 1 && c->instrumented == 1, "device, %s: devk instrumented (%d, %s)", what, err,
	       log);
	if (inj && ptxas) {
		tap_ok(iu_ptxas(ptxas, "sm_75", inj, strlen(inj), NULL) == 0,
		       "device, %s: instrumented PTX assembles for sm_75", what);
		tap_ok(iu_ptxas(ptxas, "sm_90", inj, strlen(inj), NULL) == 0,
		       "device, %s: instrumented PTX assembles for sm_90", what);
	}
	return inj;
}

static void check_device_field(void)
{
	static const char store[] = "[__gbpf_ctx+56], %__gbpf_rd1;";
	const unsigned only_device = GBPF_CUDA_CTX_UNUSED_ALL & ~GBPF_CUDA_CTX_UNUSED_DEVICE;
	struct counts c;
	char *inj;

	/* Only device read, at entry and exit: its load and store, no other context store. */
	inj = dev_inject(GBPF_PTX_SITE_ENTRY | GBPF_PTX_SITE_EXIT, only_device, &c, "entry+exit read it");
	if (inj) {
		const char *ld = strstr(inj, "%__gbpf_r0, [__gbpf_device];");
		const char *cvt = strstr(inj, "%__gbpf_rd1, %__gbpf_r0;");
		const char *st = strstr(inj, store);

		tap_ok(iu_count(inj, "[__gbpf_device]") == 1 && iu_count(inj, store) == 1 && ld && cvt && st &&
			       ld < cvt && cvt < st,
		       "device, entry+exit: one __gbpf_device load, widened, one 8-byte store at ctx+56 "
		       "(padding zeroed)");
		tap_ok(iu_count(inj, "[__gbpf_ctx+") == 1,
		       "device, entry+exit: no other context field stored");
		tap_ok(st && strstr(inj, "__gbpf_inl_end") > st,
		       "device, entry+exit: the store precedes the inlined probes that read it");
		tap_ok(!strstr(inj, "%__gbpf_rd0, 0;"), "device, entry+exit: the probes get the context, not NULL");
	}
	free(inj);
	/* Every other field read, device not: not one instruction for it. */
	inj = dev_inject(GBPF_PTX_SITE_ENTRY | GBPF_PTX_SITE_EXIT, GBPF_CUDA_CTX_UNUSED_DEVICE, &c,
			 "device unread");
	if (inj)
		tap_ok(!strstr(inj, "[__gbpf_device]") && !strstr(inj, "[__gbpf_ctx+56]") &&
			       !strstr(inj, "%__gbpf_rd1, %__gbpf_r0;") &&
			       strstr(inj, "[__gbpf_ctx+16], %__gbpf_rd1;"),
		       "device, unread: no __gbpf_device load and no ctx+56 store (launch_id still stored)");
	free(inj);
	/* A memory probe reads it from the entry's store (the site folds only its own fields). */
	inj = dev_inject(GBPF_PTX_SITE_MEM, only_device & ~GBPF_CUDA_CTX_UNUSED_MEM, &c, "memory site reads it");
	if (inj)
		tap_ok(iu_count(inj, store) == 1 && c.mem == 1 && strstr(inj, store) < strstr(inj, "[%rd2], 1;"),
		       "device, memory site: stored once at entry, before the access (%u mem sites)", c.mem);
	free(inj);
	/* Block sites store gbpf_gpu_block_ctx.device themselves: no entry store at 56. */
	inj = dev_inject(GBPF_PTX_SITE_BLOCK, only_device, &c, "block sites only");
	if (inj)
		tap_ok(!strstr(inj, "[__gbpf_ctx+56]") && strstr(inj, "[__gbpf_ctx+32], %__gbpf_r0;"),
		       "device, block sites only: block ctx device at 32, nothing at 56");
	free(inj);
}

/*
 * The inline budget covers barrier sites too (exit sites alike): a kernel
 * with twelve barriers and a barrier probe of 87 statements inlines it at
 * every one with the default budget, at the first few with a budget of 300
 * lines (the rest call it; test_blocks checks the kernel's note).
 */
static void check_barrier_budget(void)
{
	char kernel[2048], *frag = NULL, *adds = NULL, log[512] = "";
	size_t at = 0, n = 80 * 32 + 1;
	struct counts c;
	const char *budgets[] = {NULL, "300"};

	at += (size_t)snprintf(kernel + at, sizeof(kernel) - at,
			       ".version 7.5\n.target sm_75\n.address_size 64\n"
			       ".visible .entry bars()\n{\n");
	for (int i = 0; i < 12; i++)
		at += (size_t)snprintf(kernel + at, sizeof(kernel) - at, "\tbar.sync 0;\n");
	snprintf(kernel + at, sizeof(kernel) - at, "\tret;\n}\n");
	adds = malloc(n);
	if (!adds)
		return;
	at = 0;
	for (unsigned i = 0; i < 80; i++)
		at += (size_t)snprintf(adds + at, n - at, "add.u64 %%r2, %%r2, %u;\n", i + 1);
	if (asprintf(&frag,
		     ".visible .global .align 8 .u64 __gbpf_counts[4];\n"
		     ".visible .func (.param .b64 __ret) __gbpf_probe_3(.param .b64 __ctx)\n{\n"
		     ".reg .b64 %%r<11>;\nld.param.b64 %%r1, [__ctx];\nld.u64 %%r2, [%%r1+0];\n%s"
		     "st.global.u64 [__gbpf_counts], %%r2;\nmov.b64 %%r0, 0;\nst.param.b64 [__ret], %%r0;\nret;\n}\n",
		     adds) < 0)
		frag = NULL;
	free(adds);
	for (size_t b = 0; frag && b < 2; b++) {
		char *inj;
		int err;
		unsigned calls;

		if (budgets[b])
			setenv("GBPF_PTX_INLINE_BUDGET", budgets[b], 1);
		inj = inject_text(kernel, strlen(kernel), frag, GBPF_PTX_SITE_BARRIER, NULL, &c, &err, log,
				  sizeof(log));
		unsetenv("GBPF_PTX_INLINE_BUDGET");
		calls = inj ? iu_count(inj, "(__gbpf_arg);") : 0;
		if (!budgets[b])
			tap_ok(inj && c.barrier == 12 && calls == 0,
			       "barrier probe of 87 statements, default budget: inlined at all 12 barriers (%u calls; %s)",
			       calls, log);
		else
			tap_ok(inj && c.barrier == 12 && calls > 0 && calls < 12,
			       "barrier probe of 87 statements, budget 300: %u of 12 barriers call it", calls);
		if (inj && ptxas)
			tap_ok(iu_ptxas(ptxas, "sm_90", inj, strlen(inj), NULL) == 0,
			       "barrier budget %s: assembles for sm_90", budgets[b] ? budgets[b] : "default");
		free(inj);
	}
	free(frag);
}

/*
 * A memory site that calls its probe (GBPF_PTX_NO_INLINE here; past the
 * kernel's inline budget in general) stores the site's mem_* fields into the
 * context first: only those some probe reads (GBPF_CUDA_CTX_UNUSED_MEM_ADDR,
 * _VALUE, _SITE), every one when the plan says nothing finer.
 */
static void check_mem_fields(void)
{
	const unsigned base = GBPF_CUDA_CTX_UNUSED_ALL & ~GBPF_CUDA_CTX_UNUSED_MEM;
	static const char *const at[] = {"[__gbpf_ctx+24]", "[__gbpf_ctx+32]", "[__gbpf_ctx+40]",
					 "[__gbpf_ctx+44]", "[__gbpf_ctx+48]", "[__gbpf_ctx+52]"};
	const struct {
		unsigned unused;
		const char *what;
		unsigned stored; /* bit i: at[i] stored */
	} cases[] = {
		{base, "mem fields, nothing finer", 0x3f},
		{base | GBPF_CUDA_CTX_UNUSED_MEM_VALUE | GBPF_CUDA_CTX_UNUSED_MEM_SITE, "mem fields, no value or site",
		 0x1d},
		{base | GBPF_CUDA_CTX_UNUSED_MEM_FIELDS, "mem fields, only size, kind, space", 0x1c},
	};
	struct counts c;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *inj;
		unsigned got = 0;

		setenv("GBPF_PTX_NO_INLINE", "1", 1);
		inj = dev_inject(GBPF_PTX_SITE_MEM, cases[i].unused, &c, cases[i].what);
		unsetenv("GBPF_PTX_NO_INLINE");
		if (!inj)
			continue;
		for (unsigned f = 0; f < 6; f++)
			if (strstr(inj, at[f]))
				got |= 1u << f;
		tap_ok(got == cases[i].stored && c.mem >= 1 && iu_count(inj, "(__gbpf_arg);") == c.mem,
		       "%s: the called site stores fields 0x%x of mem_addr..mem_site (want 0x%x)", cases[i].what, got,
		       cases[i].stored);
		free(inj);
	}
}

/*
 * Past the kernel's inline budget (0 here), a memory site calls a copy of
 * the probe specialised to its constants (kind, space, size): one .func for
 * each tuple, shared by every site with it, with the context loads folded,
 * no context stores at the sites and only the site registers the copy reads
 * as arguments. Not when the probe reads the site's index (every site would
 * need its own copy) nor under GBPF_PTX_NO_INLINE: those call the probe.
 */
static const char spec_kernel[] =
	".version 7.5\n.target sm_75\n.address_size 64\n"
	".visible .entry spk(.param .u64 p)\n{\n\t.reg .b64 %rd<4>;\n\t.reg .b32 %r<8>;\n"
	"\tld.param.u64 %rd1, [p];\n\tcvta.to.global.u64 %rd2, %rd1;\n"
	"\tld.global.u32 %r1, [%rd2];\n\tld.global.u32 %r2, [%rd2+4];\n\tld.global.u32 %r3, [%rd2+8];\n"
	"\tld.global.u32 %r4, [%rd2+12];\n\tadd.s32 %r5, %r1, %r2;\n\tadd.s32 %r6, %r3, %r4;\n"
	"\tst.global.u32 [%rd2+16], %r5;\n\tst.global.u32 [%rd2+20], %r6;\n\tst.global.u32 [%rd2+24], %r1;\n"
	"\tld.global.u64 %rd3, [%rd2+32];\n\tst.global.u64 [%rd2+40], %rd3;\n\tret;\n}\n";

/* __gbpf_probe_2 of more than INLINE_MAX_STMTS_SHORT statements: kind + size (+ the address) counted. */
static char *spec_fragment(bool read_addr, bool read_site)
{
	size_t n = 90 * 32 + 1024, at;
	char *f = malloc(n);

	if (!f)
		return NULL;
	at = (size_t)snprintf(f, n,
			      ".version 7.5\n.target sm_75\n.address_size 64\n"
			      ".global .align 8 .u64 __gbpf_spechits[8];\n"
			      ".visible .func (.param .b64 __ret) __gbpf_probe_2(.param .b64 __ctx)\n"
			      "{\n\t.reg .b64 %%rd<6>;\n\t.reg .b32 %%r<4>;\n"
			      "\tld.param.b64 %%rd1, [__ctx];\n\tld.u32 %%r1, [%%rd1+44];\n\tld.u32 %%r2, [%%rd1+40];\n"
			      "\tadd.u32 %%r1, %%r1, %%r2;\n\tcvt.u64.u32 %%rd2, %%r1;\n%s%s",
			      read_addr ? "\tld.u64 %rd4, [%rd1+24];\n\tadd.u64 %rd2, %rd2, %rd4;\n" : "",
			      read_site ? "\tld.u32 %r3, [%rd1+52];\n\tcvt.u64.u32 %rd4, %r3;\n"
					  "\tadd.u64 %rd2, %rd2, %rd4;\n" : "");
	for (unsigned i = 0; i < 80; i++)
		at += (size_t)snprintf(f + at, n - at, "\tadd.u64 %%rd2, %%rd2, %u;\n", i + 1);
	snprintf(f + at, n - at, "\tatom.global.add.u64 %%rd3, [__gbpf_spechits], %%rd2;\n"
				 "\tst.param.b64 [__ret], 0;\n\tret;\n}\n");
	return f;
}

static void check_mem_specs(void)
{
	const unsigned base = (GBPF_CUDA_CTX_UNUSED_ALL & ~GBPF_CUDA_CTX_UNUSED_MEM) | GBPF_CUDA_CTX_UNUSED_MEM_VALUE;
	const struct {
		const char *what;
		bool read_addr, read_site, no_inline;
		unsigned specs; /* copies expected, 0: every site calls the probe */
	} cases[] = {
		{"kind and size read", false, false, false, 4},
		{"kind, size and the address read", true, false, false, 4},
		{"the site's index read", false, true, false, 0},
		{"GBPF_PTX_NO_INLINE", false, false, true, 0},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *frag = spec_fragment(cases[i].read_addr, cases[i].read_site), *inj, log[512] = "";
		const char *kern;
		struct counts c;
		int err = -ENOMEM;

		setenv("GBPF_PTX_INLINE_BUDGET", "0", 1);
		if (cases[i].no_inline)
			setenv("GBPF_PTX_NO_INLINE", "1", 1);
		inject_ctx_unused = base | (cases[i].read_addr ? 0 : GBPF_CUDA_CTX_UNUSED_MEM_ADDR) |
				    (cases[i].read_site ? 0 : GBPF_CUDA_CTX_UNUSED_MEM_SITE);
		inj = frag ? inject_text(spec_kernel, strlen(spec_kernel), frag, GBPF_PTX_SITE_MEM, NULL, &c, &err,
					 log, sizeof(log))
			   : NULL;
		inject_ctx_unused = 0;
		unsetenv("GBPF_PTX_INLINE_BUDGET");
		unsetenv("GBPF_PTX_NO_INLINE");
		free(frag);
		if (!tap_ok(inj && err == 1 && c.mem == 9, "specialised copies, %s: 9 memory sites (%d, %s)",
			    cases[i].what, err, log)) {
			free(inj);
			continue;
		}
		kern = strstr(inj, ".entry spk");
		if (cases[i].specs) {
			const char *last = strstr(inj, ".func __gbpf_spec_3(");

			tap_ok(iu_count(inj, ".func __gbpf_spec_") == cases[i].specs && !strstr(inj, ".func __gbpf_spec_4(") &&
				       kern && last && last < kern,
			       "%s: %u copies (u32 loads and stores, u64 load and store), defined before the kernel",
			       cases[i].what, cases[i].specs);
			tap_ok(iu_count(inj, "call \t__gbpf_spec_") == 9 && !strstr(inj, "__gbpf_probe_2, (__gbpf_arg)") &&
				       iu_count(inj, "__gbpf_spec_0, (") == 4 && iu_count(inj, "__gbpf_spec_1, (") == 3,
			       "%s: every site calls its tuple's copy (4 u32 loads, 3 u32 stores), none the probe",
			       cases[i].what);
			tap_ok(kern && !strstr(kern, "[__gbpf_ctx+40]") && !strstr(kern, "[__gbpf_ctx+44]") &&
				       !strstr(kern, "[__gbpf_ctx+24]"),
			       "%s: no context stores at the sites", cases[i].what);
			{
				const char *first = strstr(inj, ".func __gbpf_spec_0(");
				char *defs = first && kern > first ? strndup(first, (size_t)(kern - first)) : NULL;

				tap_ok(defs && !strstr(defs, "+44]") && !strstr(defs, "+40]") && strstr(defs, "ret;"),
				       "%s: the copies load no kind or size from the context", cases[i].what);
				free(defs);
			}
			tap_ok(cases[i].read_addr ? iu_count(inj, "st.param.b64 \t[__gbpf_s1], %__gbpf_rd1;") == 9 &&
							    iu_count(inj, "ld.param.b64 %__gbpf_rd1, [__gbpf_s1];") == 4
						  : !strstr(inj, "__gbpf_s1"),
			       "%s: the address is an argument %s", cases[i].what,
			       cases[i].read_addr ? "of every call" : "of none");
			tap_ok(strstr(c.names[0], "spk") != NULL, "%s: kernel reported", cases[i].what);
		} else {
			tap_ok(!strstr(inj, "__gbpf_spec_") && iu_count(inj, "__gbpf_probe_2, (__gbpf_arg)") == 9,
			       "%s: no copies, every site calls the probe", cases[i].what);
		}
		if (ptxas) {
			tap_ok(iu_ptxas(ptxas, "sm_75", inj, strlen(inj), NULL) == 0,
			       "specialised copies, %s: assembles for sm_75", cases[i].what);
			tap_ok(iu_ptxas(ptxas, "sm_90", inj, strlen(inj), NULL) == 0,
			       "specialised copies, %s: assembles for sm_90", cases[i].what);
		}
		free(inj);
	}
}

/*
 * only_selected (what the agent asks for at a kernel's first launch): the
 * module keeps the selected kernel, what it reaches by name (a device
 * function, a kernel whose address it takes), functions named by a variable's
 * initialiser and declarations; the other kernels and the functions only
 * they call are left out, so the driver JIT-compiles one kernel.
 */
static const char prune_ptx[] =
	".version 7.5\n.target sm_75\n.address_size 64\n"
	".extern .func (.param .b32 r) ext_f(.param .b32 a);\n"
	".func (.param .b32 r) f_shared(.param .b32 a)\n{\n\t.reg .b32 %r<3>;\n"
	"\tld.param.b32 %r1, [a];\n\tadd.s32 %r2, %r1, 1;\n\tst.param.b32 [r], %r2;\n\tret;\n}\n"
	".func (.param .b32 r) f_only_b(.param .b32 a)\n{\n\t.reg .b32 %r<3>;\n"
	"\tld.param.b32 %r1, [a];\n\tmul.lo.s32 %r2, %r1, 3;\n\tst.param.b32 [r], %r2;\n\tret;\n}\n"
	".func f_tab()\n{\n\tret;\n}\n"
	".global .align 8 .u64 tab[1] = {f_tab};\n"
	".visible .entry k_c(.param .u64 p)\n{\n\t.reg .b64 %rd<3>;\n"
	"\tld.param.u64 %rd1, [p];\n\tcvta.to.global.u64 %rd2, %rd1;\n\tst.global.u32 [%rd2], 7;\n\tret;\n}\n"
	".visible .entry k_a(.param .u64 p)\n{\n\t.reg .b64 %rd<4>;\n\t.reg .b32 %r<3>;\n"
	"\tld.param.u64 %rd1, [p];\n\tcvta.to.global.u64 %rd2, %rd1;\n\tmov.u64 %rd3, k_c;\n"
	"\tst.global.u64 [%rd2+8], %rd3;\n\tmov.u32 %r1, 5;\n"
	"\t{\n\t.param .b32 x;\n\t.param .b32 y;\n\tst.param.b32 [x], %r1;\n"
	"\tcall.uni (y), f_shared, (x);\n\tld.param.b32 %r2, [y];\n\t}\n"
	"\tst.global.u32 [%rd2], %r2;\n\tret;\n}\n"
	".visible .entry k_b(.param .u64 p)\n{\n\t.reg .b64 %rd<3>;\n\t.reg .b32 %r<4>;\n"
	"\tld.param.u64 %rd1, [p];\n\tcvta.to.global.u64 %rd2, %rd1;\n\tmov.u32 %r1, 5;\n"
	"\t{\n\t.param .b32 x;\n\t.param .b32 y;\n\tst.param.b32 [x], %r1;\n"
	"\tcall.uni (y), f_only_b, (x);\n\tld.param.b32 %r2, [y];\n\t}\n"
	"\t{\n\t.param .b32 x;\n\t.param .b32 y;\n\tst.param.b32 [x], %r2;\n"
	"\tcall.uni (y), f_shared, (x);\n\tld.param.b32 %r3, [y];\n\t}\n"
	"\tst.global.u32 [%rd2], %r3;\n\tret;\n}\n";

static bool select_k_a(const char *name, void *arg)
{
	(void)arg;
	return !strcmp(name, "k_a");
}

static void check_prune(void)
{
	struct gbpf_cuda_inject_opts o = {.sz = sizeof(o), .fragment = dev_fragment,
					  .sites = GBPF_CUDA_SITE_ENTRY, .select = select_k_a};
	struct gbpf_cuda_inject_result *res = NULL;
	char log[512] = "";
	const char *t;
	int rc;

	for (int only = 0; only < 2; only++) {
		o.only_selected = only;
		rc = gbpf_cuda_inject_image(prune_ptx, strlen(prune_ptx), "prune.ptx", &o, &res, log, sizeof(log));
		if (!tap_ok(rc == 0 && res && res->n_modules == 1 && res->n_kernels == 3,
			    "only_selected=%d: k_a instrumented, 3 kernels reported (%d: %s)", only, rc, log)) {
			gbpf_cuda_inject_result__free(res);
			res = NULL;
			continue;
		}
		t = res->modules[0].ptx;
		if (only && !tap_ok(strstr(t, ".entry k_a") && strstr(t, ".entry k_c") && strstr(t, "f_shared(") &&
				       strstr(t, "f_tab(") && strstr(t, "ext_f(") && !strstr(t, ".entry k_b") &&
				       !strstr(t, "f_only_b") && !strstr(t, "__gbpf_probe_") &&
				       strstr(t, "[__gbpf_devhits]") && strstr(t, "__gbpf_inl_end"),
			       "only_selected: k_a, the kernel it names, the functions it calls or a variable "
			       "names and the declarations stay; k_b, f_only_b and the probe functions (k_a's "
			       "probe is inlined: nothing calls them) are left out"))
			tap_diag("%s", t);
		else if (!only)
			tap_ok(strstr(t, ".entry k_b") && strstr(t, "f_only_b") && strstr(t, "__gbpf_probe_1"),
			       "without only_selected every kernel and function stays");
		if (ptxas)
			tap_ok(iu_ptxas(ptxas, "sm_75", t, strlen(t), NULL) == 0,
			       "only_selected=%d: the module assembles for sm_75", only);
		gbpf_cuda_inject_result__free(res);
		res = NULL;
	}
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: %s PTXAS|- HANDWRITTEN.ptx [PTX...]\n", argv[0]);
		return 2;
	}
	ptxas = strcmp(argv[1], "-") ? argv[1] : NULL;
	if (!ptxas)
		tap_diag("ptxas not found: assembling checks are skipped");
	check_syntax_errors();
	check_handwritten(argv[2]);
	check_old_version();
	check_launch_param();
	check_device_field();
	check_barrier_budget();
	check_mem_fields();
	check_mem_specs();
	check_prune();
	for (int i = 3; i < argc; i++)
		check_nvcc_ptx(argv[i]);
	return tap_done();
}
