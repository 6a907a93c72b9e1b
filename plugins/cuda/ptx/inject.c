/* SPDX-License-Identifier: MIT */
/*
 * Probe injection into parsed PTX kernels.
 *
 * Each site gets new statements, built as PTX text and parsed into the
 * module's structure (the parser is the single source of truth for what a
 * statement is). The probe context lives in a per-thread `.local` buffer
 * laid out as struct gbpf_gpu_ctx; its first three fields are written once
 * at kernel entry, the memory fields before each memory probe.
 */
#include "plugins/cuda/ptx/inject_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gbpf/gbpf.h>
#include <gbpf/plugin.h>
#include <gbpf/cuda_inject.h>
#include <gbpf/probe_ctx.h>

void gbpf_ptx_tx(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (t->oom)
		return;
	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(t->p ? t->p + t->len : NULL, t->p ? t->cap - t->len : 0, fmt, ap);
		va_end(ap);
		if (n < 0) {
			t->oom = true;
			return;
		}
		if (t->p && t->len + (size_t)n < t->cap) {
			t->len += (size_t)n;
			return;
		}
		size_t ncap = t->cap ? t->cap * 2 : 1024;
		while (ncap <= t->len + (size_t)n)
			ncap *= 2;
		char *np = realloc(t->p, ncap);
		if (!np) {
			t->oom = true;
			return;
		}
		t->p = np;
		t->cap = ncap;
	}
}

static bool tok_is(const struct gbpf_ptx_module *m, uint32_t i, const char *s)
{
	return gbpf_ptx_tok_eq(&m->toks[i], s);
}

static unsigned type_bits(const char *s, size_t n)
{
	static const struct {
		const char *name;
		unsigned bits;
	} types[] = {
		{"b8", 8},    {"u8", 8},     {"s8", 8},       {"b16", 16},     {"u16", 16},
		{"s16", 16},  {"f16", 16},   {"bf16", 16},    {"b32", 32},     {"u32", 32},
		{"s32", 32},  {"f32", 32},   {"f16x2", 32},   {"bf16x2", 32},  {"tf32", 32},
		{"b64", 64},  {"u64", 64},   {"s64", 64},     {"f64", 64},     {"b128", 128},
		{"pred", 1},
	};

	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (strlen(types[i].name) == n && !memcmp(types[i].name, s, n))
			return types[i].bits;
	return 0;
}

int gbpf_ptx_collect_regs(struct kctx *k, const struct gbpf_ptx_block *b)
{
	struct gbpf_ptx_module *m = k->m;

	for (uint32_t i = 0; i < b->n; i++) {
		const struct gbpf_ptx_stmt *s = b->v[i];
		unsigned bits = 0;

		if (s->kind == GBPF_PTX_STMT_SCOPE) {
			int err = gbpf_ptx_collect_regs(k, &s->body);

			if (err)
				return err;
			continue;
		}
		if (s->kind != GBPF_PTX_STMT_DIRECTIVE || !tok_is(m, s->toks.first, ".reg"))
			continue;
		for (uint32_t j = s->toks.first + 1; j < s->toks.first + s->toks.n; j++) {
			const struct gbpf_ptx_tok *t = &m->toks[j];

			if (t->kind == GBPF_PTX_TOK_DOT && type_bits(t->s + 1, t->len - 1))
				bits = type_bits(t->s + 1, t->len - 1);
			else if (t->kind == GBPF_PTX_TOK_DOT && t->len > 2 && t->s[1] == 'v')
				bits = 0; /* vector registers: components are not tracked */
			if (t->kind != GBPF_PTX_TOK_REG)
				continue;
			if (k->n_regs == k->cap_regs) {
				uint32_t ncap = k->cap_regs ? k->cap_regs * 2 : 32;
				struct reg_decl *nv = realloc(k->regs, ncap * sizeof(*nv));

				if (!nv)
					return -ENOMEM;
				k->regs = nv;
				k->cap_regs = ncap;
			}
			k->regs[k->n_regs].name = t->s;
			k->regs[k->n_regs].len = t->len;
			k->regs[k->n_regs].range = j + 1 < s->toks.first + s->toks.n &&
						   m->toks[j + 1].kind == GBPF_PTX_TOK_PUNCT &&
						   m->toks[j + 1].s[0] == '<';
			k->regs[k->n_regs].bits = bits;
			k->n_regs++;
		}
	}
	return 0;
}

/* Width in bits of a register operand, 0 if unknown. */
unsigned gbpf_ptx_reg_bits(const struct kctx *k, const struct gbpf_ptx_tok *t)
{
	for (uint32_t i = 0; i < k->n_regs; i++) {
		const struct reg_decl *r = &k->regs[i];

		if (!r->range) {
			if (r->len == t->len && !memcmp(r->name, t->s, t->len))
				return r->bits;
			continue;
		}
		if (t->len > r->len && !memcmp(r->name, t->s, r->len)) {
			uint32_t j = r->len;

			while (j < t->len && t->s[j] >= '0' && t->s[j] <= '9')
				j++;
			if (j == t->len)
				return r->bits;
		}
	}
	return 0;
}

/* ---- classification of instructions ------------------------------- */


/* Opcode parts: "ld.global.v4.f32" -> base "ld", modifiers. */
static bool opcode_base(const struct gbpf_ptx_tok *t, const char *base)
{
	size_t n = strlen(base);

	return t->len >= n && !memcmp(t->s, base, n) && (t->len == n || t->s[n] == '.');
}

static bool has_mod(const struct gbpf_ptx_tok *t, const char *mod)
{
	size_t n = strlen(mod);
	const char *p = t->s, *end = t->s + t->len;

	while (p < end) {
		const char *dot = memchr(p, '.', (size_t)(end - p));
		const char *stop = dot ? dot : end;

		if ((size_t)(stop - p) == n && !memcmp(p, mod, n))
			return true;
		p = stop + 1;
	}
	return false;
}

static bool has_mod_prefix(const struct gbpf_ptx_tok *t, const char *mod)
{
	size_t n = strlen(mod);
	const char *p = t->s, *end = t->s + t->len;

	while (p < end) {
		const char *dot = memchr(p, '.', (size_t)(end - p));
		const char *stop = dot ? dot : end;

		if ((size_t)(stop - p) >= n && !memcmp(p, mod, n))
			return true;
		p = stop + 1;
	}
	return false;
}

static unsigned access_size(const struct gbpf_ptx_tok *t)
{
	const char *p = t->s, *end = t->s + t->len;
	unsigned bits = 0, vec = 1;

	while (p < end) {
		const char *dot = memchr(p, '.', (size_t)(end - p));
		const char *stop = dot ? dot : end;
		size_t n = (size_t)(stop - p);
		unsigned b = type_bits(p, n);

		if (b > 1)
			bits = b;
		if (n == 2 && p[0] == 'v' && (p[1] == '2' || p[1] == '4' || p[1] == '8'))
			vec = (unsigned)(p[1] - '0');
		p = stop + 1;
	}
	return bits / 8 * vec;
}

static int find_mem_op(const struct gbpf_ptx_stmt *s, int nth)
{
	for (uint32_t i = 0; i < s->n_ops; i++)
		if (s->ops[i].kind == GBPF_PTX_OP_MEM && nth-- == 0)
			return (int)i;
	return -1;
}

bool gbpf_ptx_is_block_barrier(const struct gbpf_ptx_tok *op)
{
	return (opcode_base(op, "bar") || opcode_base(op, "barrier")) && !has_mod(op, "warp");
}

static enum site_kind classify(const struct gbpf_ptx_module *m, const struct gbpf_ptx_stmt *s,
			       struct mem_info *mi)
{
	const struct gbpf_ptx_tok *op;

	if (s->kind != GBPF_PTX_STMT_INSN)
		return SITE_NONE;
	op = &m->toks[s->opcode];
	if (opcode_base(op, "ret") || opcode_base(op, "exit"))
		return SITE_EXIT;
	if (gbpf_ptx_is_block_barrier(op))
		return SITE_BARRIER;
	memset(mi, 0, sizeof(*mi));
	mi->value_op = -1;
	if (opcode_base(op, "ld") || opcode_base(op, "ldu")) {
		mi->kind = GBPF_MEM_LOAD;
		mi->addr_op = find_mem_op(s, 0);
	} else if (opcode_base(op, "st")) {
		if (has_mod(op, "async") || has_mod(op, "bulk"))
			return SITE_NONE;
		mi->kind = GBPF_MEM_STORE;
		mi->addr_op = find_mem_op(s, 0);
		mi->value_op = mi->addr_op + 1;
	} else if (opcode_base(op, "atom") || opcode_base(op, "red")) {
		mi->kind = GBPF_MEM_ATOMIC;
		mi->addr_op = find_mem_op(s, 0);
		mi->value_op = mi->addr_op + (has_mod(op, "cas") ? 2 : 1);
	} else if (opcode_base(op, "cp.async") && (has_mod(op, "ca") || has_mod(op, "cg")) &&
		   !has_mod(op, "bulk")) {
		/* Recorded as the load of its global source. */
		mi->kind = GBPF_MEM_LOAD;
		mi->addr_op = find_mem_op(s, 1);
		mi->space = GBPF_SPACE_GLOBAL;
		if (mi->addr_op < 0 || (uint32_t)mi->addr_op + 1 >= s->n_ops ||
		    s->ops[mi->addr_op + 1].kind != GBPF_PTX_OP_IMM)
			return SITE_NONE;
		{
			const struct gbpf_ptx_tok *n = &m->toks[s->ops[mi->addr_op + 1].toks.first];

			mi->size = (unsigned)strtoul(n->s, NULL, 0);
		}
		return mi->size ? SITE_MEM : SITE_NONE;
	} else {
		return SITE_NONE;
	}
	if (mi->addr_op < 0)
		return SITE_NONE;
	if (mi->value_op >= (int)s->n_ops)
		mi->value_op = -1;
	if (has_mod(op, "param") || has_mod(op, "const") || has_mod_prefix(op, "param::"))
		return SITE_NONE;
	if (has_mod(op, "global"))
		mi->space = GBPF_SPACE_GLOBAL;
	else if (has_mod(op, "local"))
		mi->space = GBPF_SPACE_LOCAL;
	else if (has_mod(op, "shared") || has_mod(op, "shared::cta"))
		mi->space = GBPF_SPACE_SHARED;
	else if (has_mod(op, "shared::cluster")) {
		mi->space = GBPF_SPACE_SHARED;
		mi->cluster = true;
	} else
		mi->space = GBPF_SPACE_GENERIC;
	mi->size = access_size(op);
	return SITE_MEM;
}

/* Parse @t as statements and append them to @out; consumes t->p. */
static int emit(struct kctx *k, struct text *t, struct gbpf_ptx_block *out)
{
	struct gbpf_ptx_block tmp = {0};
	uint32_t first, pos;
	int err;

	if (t->oom) {
		free(t->p);
		memset(t, 0, sizeof(*t));
		return -ENOMEM;
	}
	if (!t->p)
		return 0;
	err = gbpf_ptx_module_own(k->m, t->p);
	if (err) {
		free(t->p);
		memset(t, 0, sizeof(*t));
		return err;
	}
	err = gbpf_ptx_lex_into(k->m, t->p, t->len, false, &first, k->log, k->log_size);
	memset(t, 0, sizeof(*t));
	if (err)
		return err;
	for (uint32_t i = first; i < k->m->n_toks; i++)
		k->m->toks[i].line = 0;
	pos = first;
	err = gbpf_ptx_parse_block(k->m, &pos, k->m->n_toks, &tmp, 0, k->log, k->log_size);
	if (!err)
		err = gbpf_ptx_block_insert(out, out->n, tmp.v, tmp.n);
	if (err) {
		gbpf_ptx_block_free(&tmp);
		return err;
	}
	free(tmp.v);
	return 0;
}

static void tx_skip_open(struct text *t, struct kctx *k, const struct gbpf_ptx_stmt *s,
			 unsigned *label)
{
	const struct gbpf_ptx_tok *p = &k->m->toks[s->pred];

	*label = k->n_labels++;
	gbpf_ptx_tx(t, "@%s%.*s bra __gbpf_L%u;\n", s->pred_neg ? "" : "!", (int)p->len, p->s, *label);
}

static int rewrite_block(struct kctx *k, struct gbpf_ptx_block *b, int depth, uint32_t entry_at);

/* Largest parameter block we copy for PTX < 7.7 (CUDA's classic 4 KB limit). */
#define MAX_PARAM_COPY 4096u

/*
 * Before PTX ISA 7.7 the address of a kernel parameter cannot be taken
 * (cvta.param): copy the parameters, in the launch's layout (each aligned
 * to its own alignment), into a .local buffer instead. Returns false if a
 * parameter's shape is not understood or the block is too large.
 */
static bool tx_param_copy(struct kctx *k, struct text *t)
{
	const struct gbpf_ptx_module *m = k->m;
	const struct gbpf_ptx_func *f = k->f;
	unsigned off = 0;

	for (uint32_t p = 0; p < f->n_params; p++) {
		const struct gbpf_ptx_range *r = &f->params[p];
		unsigned elem = 0, align = 0, count = 1, chunk;
		const struct gbpf_ptx_tok *name = NULL;

		for (uint32_t i = r->first; i < r->first + r->n; i++) {
			const struct gbpf_ptx_tok *tk = &m->toks[i];

			if (tk->kind == GBPF_PTX_TOK_DOT && gbpf_ptx_tok_eq(tk, ".align") &&
			    i + 1 < r->first + r->n)
				align = (unsigned)strtoul(m->toks[i + 1].s, NULL, 0);
			else if (tk->kind == GBPF_PTX_TOK_DOT && type_bits(tk->s + 1, tk->len - 1) >= 8)
				elem = type_bits(tk->s + 1, tk->len - 1) / 8;
			else if (tk->kind == GBPF_PTX_TOK_IDENT && !name)
				name = tk;
			else if (tk->kind == GBPF_PTX_TOK_NUM && name && i > r->first &&
				 m->toks[i - 1].kind == GBPF_PTX_TOK_PUNCT && m->toks[i - 1].s[0] == '[')
				count = (unsigned)strtoul(tk->s, NULL, 0);
		}
		if (!name || !elem || elem > 8 || !count || count > MAX_PARAM_COPY)
			return false;
		if (!align)
			align = elem;
		if (align & (align - 1) || align > 256)
			return false;
		off = (off + align - 1) & ~(align - 1);
		if (off + elem * count > MAX_PARAM_COPY)
			return false;
		/* Copy in the widest unit the alignment allows. */
		chunk = align < 8 ? align : 8;
		if (chunk < elem)
			chunk = elem;
		for (unsigned b = 0; b < elem * count; b += chunk) {
			unsigned c = chunk <= elem * count - b ? chunk : elem;
			const char *reg = c == 8 ? "%__gbpf_rd1" : c == 4 ? "%__gbpf_r1" : "%__gbpf_h0";

			gbpf_ptx_tx(t, "ld.param.b%u %s, [%.*s+%u];\n", c * 8, reg, (int)name->len, name->s, b);
			gbpf_ptx_tx(t, "st.local.b%u [__gbpf_params+%u], %s;\n", c * 8, off + b, reg);
		}
		off += elem * count;
	}
	k->params_size = off ? off : 1;
	gbpf_ptx_tx(t, "mov.u64 %%__gbpf_rd1, __gbpf_params;\n");
	gbpf_ptx_tx(t, "cvta.local.u64 %%__gbpf_rd1, %%__gbpf_rd1;\n");
	return true;
}

static int tx_entry(struct kctx *k, struct text *t)
{
	const struct gbpf_ptx_func *f = k->f;
	const struct gbpf_ptx_module *m = k->m;
	unsigned unused = k->plan->ctx_unused;

	gbpf_ptx_sum_entry(t, k);
	/*
	 * The thread's GPU_THREAD_LOCAL values start at zero, before any site runs: in
	 * the kernel's registers, which a probe that keeps them in memory gets stored
	 * after the context around it (sites.c, tx_tls_spill).
	 */
	for (unsigned i = 0; i < k->tls_bytes / 8; i++)
		gbpf_ptx_tx(t, "mov.u64 " TLS_REG_FMT ", 0;\n", i);
	/* Fields no probe reads are not stored: every store is per-thread .local traffic. */
	if (!(unused & GBPF_CUDA_CTX_UNUSED_KERNEL_ID)) {
		gbpf_ptx_tx(t, "mov.u64 %%__gbpf_rd1, 0x%016" PRIx64 ";\n", k->rep->kernel_id);
		gbpf_ptx_tx(t, "st.local.u64 [" CTX_NAME "+%u], %%__gbpf_rd1;\n", OFF_KERNEL_ID);
	}
	if (unused & GBPF_CUDA_CTX_UNUSED_PARAMS) {
		/* nothing: ctx.params is never read */
	} else if (f->n_params && k->cvta_param) {
		const struct gbpf_ptx_range *r = &f->params[0];
		uint32_t i;

		for (i = r->first; i < r->first + r->n; i++)
			if (m->toks[i].kind == GBPF_PTX_TOK_IDENT)
				break;
		if (i == r->first + r->n) {
			gbpf_ptx_log(k->log, k->log_size, "%s:%u: kernel %s: parameter 0 has no name",
				     m->filename ? m->filename : "<ptx>", m->toks[f->name].line,
				     k->kname);
			return -GBPF_ERRNO__INJECT;
		}
		gbpf_ptx_tx(t, "mov.u64 %%__gbpf_rd1, %.*s;\n", (int)m->toks[i].len, m->toks[i].s);
		gbpf_ptx_tx(t, "cvta.param.u64 %%__gbpf_rd1, %%__gbpf_rd1;\n");
		gbpf_ptx_tx(t, "st.local.u64 [" CTX_NAME "+%u], %%__gbpf_rd1;\n", OFF_PARAMS);
	} else {
		if (!f->n_params || !tx_param_copy(k, t))
			gbpf_ptx_tx(t, "mov.u64 %%__gbpf_rd1, 0;\n");
		gbpf_ptx_tx(t, "st.local.u64 [" CTX_NAME "+%u], %%__gbpf_rd1;\n", OFF_PARAMS);
	}
	if (!(unused & GBPF_CUDA_CTX_UNUSED_LAUNCH_ID) && k->plan->launch_param) {
		/*
		 * The launch's own id, from its hidden parameter (concurrent
		 * launches of this kernel never share it). Graph nodes pass bit
		 * 63 set (their parameters are fixed when the graph is built):
		 * GBPF_CUDA_LAUNCH_ID_GRAPH | the module variable, set before
		 * each graph launch, << 32 | the low half of %gridid, which is
		 * fixed per node of an executable graph, so that two graphs
		 * running at once never share an id (cuda_agent.c).
		 */
		gbpf_ptx_tx(t, "ld.param.u64 %%__gbpf_rd1, [" LID_PARAM_NAME "];\n");
		gbpf_ptx_tx(t, "setp.lt.s64 " LID_PRED ", %%__gbpf_rd1, 0;\n");
		gbpf_ptx_tx(t, "@" LID_PRED " ld.global.u64 %%__gbpf_rd1, [" LAUNCH_ID_NAME "];\n");
		gbpf_ptx_tx(t, "@" LID_PRED " shl.b64 %%__gbpf_rd1, %%__gbpf_rd1, 32;\n");
		gbpf_ptx_tx(t, "@" LID_PRED " mov.u64 %%__gbpf_rd2, %%gridid;\n");
		gbpf_ptx_tx(t, "@" LID_PRED " and.b64 %%__gbpf_rd2, %%__gbpf_rd2, 0xffffffff;\n");
		gbpf_ptx_tx(t, "@" LID_PRED " or.b64 %%__gbpf_rd1, %%__gbpf_rd1, %%__gbpf_rd2;\n");
		gbpf_ptx_tx(t, "@" LID_PRED " or.b64 %%__gbpf_rd1, %%__gbpf_rd1, 0x%016llx;\n",
			    (unsigned long long)GBPF_CUDA_LAUNCH_ID_GRAPH);
		gbpf_ptx_tx(t, "st.local.u64 [" CTX_NAME "+%u], %%__gbpf_rd1;\n", OFF_LAUNCH_ID);
	} else if (!(unused & GBPF_CUDA_CTX_UNUSED_LAUNCH_ID)) {
		gbpf_ptx_tx(t, "ld.global.u64 %%__gbpf_rd1, [" LAUNCH_ID_NAME "];\n");
		gbpf_ptx_tx(t, "st.local.u64 [" CTX_NAME "+%u], %%__gbpf_rd1;\n", OFF_LAUNCH_ID);
	}
	/*
	 * gbpf_gpu_ctx.device with its padding zeroed, in one store. Block
	 * sites store their own (gbpf_gpu_block_ctx.device lies elsewhere):
	 * a kernel with only block sites needs none here.
	 */
	if (!(unused & GBPF_CUDA_CTX_UNUSED_DEVICE) && (k->plan->sites & ~GBPF_PTX_SITE_BLOCK)) {
		gbpf_ptx_tx(t, "ld.global.u32 %%__gbpf_r0, [" DEVICE_NAME "];\n");
		gbpf_ptx_tx(t, "cvt.u64.u32 %%__gbpf_rd1, %%__gbpf_r0;\n");
		gbpf_ptx_tx(t, "st.local.u64 [" CTX_NAME "+%u], %%__gbpf_rd1;\n", OFF_DEVICE);
	}
	if (k->plan->sites & GBPF_PTX_SITE_ENTRY) {
		gbpf_ptx_site_call(t, k, k->plan->entry_probe, INLINE_MAX_STMTS, NULL);
		k->rep->n_entry++;
	}
	return 0;
}

static int rewrite_stmt(struct kctx *k, struct gbpf_ptx_stmt *s, struct gbpf_ptx_block *out,
			int depth)
{
	const unsigned sites = k->plan->sites;
	struct text t = {0};
	struct mem_info mi;
	enum site_kind kind;
	unsigned label = 0;
	bool pred;
	int err;

	if (s->kind == GBPF_PTX_STMT_SCOPE) {
		err = rewrite_block(k, &s->body, depth + 1, UINT32_MAX);
		if (err)
			return err;
		return gbpf_ptx_block_insert(out, out->n, &s, 1);
	}
	pred = s->kind == GBPF_PTX_STMT_INSN && s->pred >= 0;
	if ((sites & GBPF_PTX_SITE_BLOCK) && k->next_block < k->blocks.n &&
	    k->blocks.first[k->next_block] == s) {
		/* Before everything else at this instruction: the block is entered first. */
		gbpf_ptx_block_site(&t, k, k->next_block++);
		err = emit(k, &t, out);
		if (err)
			return err;
	}
	kind = classify(k->m, s, &mi);
	switch (kind) {
	case SITE_EXIT:
		if (!(sites & GBPF_PTX_SITE_EXIT))
			break;
		if (pred)
			tx_skip_open(&t, k, s, &label);
		gbpf_ptx_site_call(&t, k, k->plan->exit_probe,
				   gbpf_ptx_budgeted_limit(k, k->plan->exit_probe, INLINE_MAX_STMTS), NULL);
		k->rep->n_exit++;
		break;
	case SITE_BARRIER:
		if (!(sites & GBPF_PTX_SITE_BARRIER))
			break;
		if (pred)
			tx_skip_open(&t, k, s, &label);
		gbpf_ptx_site_call(&t, k, k->plan->barrier_probe,
				   gbpf_ptx_budgeted_limit(k, k->plan->barrier_probe, INLINE_MAX_STMTS), NULL);
		k->rep->n_barrier++;
		break;
	case SITE_MEM:
		if (!(sites & GBPF_PTX_SITE_MEM))
			break;
		if (pred)
			tx_skip_open(&t, k, s, &label);
		if (!gbpf_ptx_mem_site(&t, k, s, &mi)) {
			/* An address shape we do not understand: leave the access alone. */
			free(t.p);
			memset(&t, 0, sizeof(t));
			if (pred)
				k->n_labels--;
			break;
		}
		k->rep->n_mem++;
		break;
	case SITE_NONE:
		break;
	}
	if (t.p && pred)
		gbpf_ptx_tx(&t, "__gbpf_L%u:\n", label);
	if (kind == SITE_EXIT)
		gbpf_ptx_sum_exit(&t, k, s);
	err = emit(k, &t, out);
	if (err)
		return err;
	return gbpf_ptx_block_insert(out, out->n, &s, 1);
}

static int rewrite_block(struct kctx *k, struct gbpf_ptx_block *b, int depth, uint32_t entry_at)
{
	struct gbpf_ptx_block out = {0};
	uint32_t i;
	int err = 0;

	for (i = 0; i < b->n; i++) {
		if (i == entry_at) {
			struct text t = {0};

			err = tx_entry(k, &t);
			if (!err)
				err = emit(k, &t, &out);
			else
				free(t.p);
			if (err)
				break;
		}
		err = rewrite_stmt(k, b->v[i], &out, depth);
		if (err)
			break;
	}
	if (!err && entry_at == b->n) {
		struct text t = {0};

		err = tx_entry(k, &t);
		if (!err)
			err = emit(k, &t, &out);
		else
			free(t.p);
	}
	if (err) {
		/* Statements already moved to out belong to b again; free only the new ones. */
		for (uint32_t j = 0; j < out.n; j++) {
			bool orig = false;

			for (uint32_t q = 0; q < b->n && !orig; q++)
				orig = b->v[q] == out.v[j];
			if (!orig)
				gbpf_ptx_stmt_free(out.v[j]);
		}
		free(out.v);
		return err;
	}
	free(b->v);
	*b = out;
	return 0;
}

/* Index of the first statement after the leading declarations. */
static uint32_t entry_index(const struct gbpf_ptx_module *m, const struct gbpf_ptx_block *b)
{
	uint32_t i = 0;

	for (; i < b->n; i++) {
		const struct gbpf_ptx_stmt *s = b->v[i];

		if (s->kind == GBPF_PTX_STMT_COMMENT)
			continue;
		if (s->kind == GBPF_PTX_STMT_DIRECTIVE && !s->nl_terminated &&
		    (tok_is(m, s->toks.first, ".reg") || tok_is(m, s->toks.first, ".local") ||
		     tok_is(m, s->toks.first, ".shared") || tok_is(m, s->toks.first, ".param") ||
		     tok_is(m, s->toks.first, ".const") || tok_is(m, s->toks.first, ".global")))
			continue;
		break;
	}
	return i;
}

/*
 * Byte size of the kernel's parameter block in the launch's layout (each
 * parameter at its own alignment). A `.ptr` parameter's `.align` is its
 * pointee's, not its own. Returns -1 if a parameter is not understood.
 */
static long param_block_size(const struct gbpf_ptx_module *m, const struct gbpf_ptx_func *f)
{
	unsigned long off = 0;

	for (uint32_t p = 0; p < f->n_params; p++) {
		const struct gbpf_ptx_range *r = &f->params[p];
		unsigned long elem = 0, align = 0, count = 1;
		bool ptr = false, named = false;

		for (uint32_t i = r->first; i < r->first + r->n; i++) {
			const struct gbpf_ptx_tok *tk = &m->toks[i];

			if (tk->kind == GBPF_PTX_TOK_DOT && gbpf_ptx_tok_eq(tk, ".ptr"))
				ptr = true;
			else if (tk->kind == GBPF_PTX_TOK_DOT && gbpf_ptx_tok_eq(tk, ".align") &&
				 i + 1 < r->first + r->n) {
				if (!ptr)
					align = strtoul(m->toks[i + 1].s, NULL, 0);
			} else if (tk->kind == GBPF_PTX_TOK_DOT && type_bits(tk->s + 1, tk->len - 1) >= 8)
				elem = type_bits(tk->s + 1, tk->len - 1) / 8;
			else if (tk->kind == GBPF_PTX_TOK_IDENT)
				named = true;
			else if (tk->kind == GBPF_PTX_TOK_NUM && named && i > r->first &&
				 m->toks[i - 1].kind == GBPF_PTX_TOK_PUNCT && m->toks[i - 1].s[0] == '[')
				count = strtoul(tk->s, NULL, 0);
		}
		if (!named || !elem || elem > 16 || !count || count > PARAM_SPACE_LARGE)
			return -1;
		if (align < elem)
			align = elem;
		if (align & (align - 1) || align > 256)
			return -1;
		off = (off + align - 1) & ~(align - 1);
		off += elem * count;
		if (off > PARAM_SPACE_LARGE)
			return -1;
	}
	return (long)off;
}

/*
 * Where the hidden launch-id parameter goes: after the kernel's own
 * parameters at 8-byte alignment. -1 with a reason in rep when there is no
 * room (the kernel is then left alone: the launch could not pass it).
 */
static long lid_param_offset(const struct gbpf_ptx_module *m, const struct gbpf_ptx_func *f,
				 struct gbpf_ptx_kernel_report *rep)
{
	long size = param_block_size(m, f);
	unsigned long off, limit;

	if (size < 0) {
		snprintf(rep->reason, sizeof(rep->reason),
			 "its parameter list is not understood: no room known for the launch-id parameter");
		return -1;
	}
	off = ((unsigned long)size + 7) & ~7ul;
	limit = (unsigned long)size > PARAM_SPACE_CLASSIC ? PARAM_SPACE_LARGE : PARAM_SPACE_CLASSIC;
	if (off + 8 > limit) {
		snprintf(rep->reason, sizeof(rep->reason),
			 "no room for the launch-id parameter: its parameters take %ld of %lu bytes", size,
			 limit);
		return -1;
	}
	return (long)off;
}

/* Append `.param .u64 __gbpf_lid` to the kernel's parameter list. */
static int add_lid_param(struct kctx *k)
{
	static const char decl[] = ".param .u64 " LID_PARAM_NAME;
	struct gbpf_ptx_func *f = k->f;
	struct gbpf_ptx_range *np;
	char *text = strdup(decl);
	uint32_t first;
	int err;

	if (!text)
		return -ENOMEM;
	err = gbpf_ptx_module_own(k->m, text);
	if (err) {
		free(text);
		return err;
	}
	err = gbpf_ptx_lex_into(k->m, text, strlen(text), false, &first, k->log, k->log_size);
	if (err)
		return err;
	np = realloc(f->params, (f->n_params + 1) * sizeof(*np));
	if (!np)
		return -ENOMEM;
	f->params = np;
	np[f->n_params].first = first;
	np[f->n_params].n = k->m->n_toks - first;
	f->n_params++;
	f->has_params = true;
	return 0;
}

/*
 * GTID_REG_FMT: the thread's linear id in the grid, at the kernel's entry for
 * the inlined probes' per-thread slots ((block linear id) x threads per
 * block + thread linear id, as the code generator's own computation).
 */
static void tx_gtid(struct text *t)
{
	gbpf_ptx_tx(t, ".reg .b64 " GTID_REG_FMT ";\n{\n.reg .b32 %%gi<4>;\n.reg .b64 %%gd<2>;\n"
		       "mov.u32 %%gi0, %%ntid.x;\nmov.u32 %%gi1, %%ntid.y;\nmul.lo.u32 %%gi0, %%gi0, %%gi1;\n"
		       "mov.u32 %%gi1, %%ntid.z;\nmul.lo.u32 %%gi0, %%gi0, %%gi1;\n"
		       "mov.u32 %%gi1, %%tid.z;\nmov.u32 %%gi2, %%ntid.y;\nmov.u32 %%gi3, %%tid.y;\n"
		       "mad.lo.u32 %%gi1, %%gi1, %%gi2, %%gi3;\nmov.u32 %%gi2, %%ntid.x;\nmov.u32 %%gi3, %%tid.x;\n"
		       "mad.lo.u32 %%gi1, %%gi1, %%gi2, %%gi3;\n"
		       "mov.u32 %%gi2, %%nctaid.y;\nmov.u32 %%gi3, %%ctaid.z;\nmul.wide.u32 " GTID_REG_FMT ", %%gi2, %%gi3;\n"
		       "mov.u32 %%gi2, %%ctaid.y;\ncvt.u64.u32 %%gd0, %%gi2;\nadd.u64 " GTID_REG_FMT ", " GTID_REG_FMT ", %%gd0;\n"
		       "mov.u32 %%gi2, %%nctaid.x;\ncvt.u64.u32 %%gd0, %%gi2;\nmul.lo.u64 " GTID_REG_FMT ", " GTID_REG_FMT ", %%gd0;\n"
		       "mov.u32 %%gi2, %%ctaid.x;\ncvt.u64.u32 %%gd0, %%gi2;\nadd.u64 " GTID_REG_FMT ", " GTID_REG_FMT ", %%gd0;\n"
		       "cvt.u64.u32 %%gd0, %%gi0;\nmul.lo.u64 " GTID_REG_FMT ", " GTID_REG_FMT ", %%gd0;\n"
		       "cvt.u64.u32 %%gd1, %%gi1;\nadd.u64 " GTID_REG_FMT ", " GTID_REG_FMT ", %%gd1;\n}\n");
}

static int instrument_kernel(struct kctx *k)
{
	struct text t = {0};
	struct gbpf_ptx_block decls = {0};
	int err;

	k->f->modified = true;
	err = gbpf_ptx_collect_regs(k, &k->f->body);
	if (err)
		return err;
	if (k->plan->sites & GBPF_PTX_SITE_BLOCK) {
		err = gbpf_ptx_find_blocks(k->m, k->f, entry_index(k->m, &k->f->body), &k->blocks);
		if (err) {
			gbpf_ptx_log(k->log, k->log_size, "%s:%u: kernel %s: basic blocks not found (%d)",
				     k->m->filename ? k->m->filename : "<ptx>", k->m->toks[k->f->name].line,
				     k->kname, err);
			return err;
		}
	}
	gbpf_ptx_sum_setup(k);
	err = rewrite_block(k, &k->f->body, 0, entry_index(k->m, &k->f->body));
	if (err)
		return err;
	gbpf_ptx_sum_flush_block(&t, k);
	err = emit(k, &t, &k->f->body);
	if (err)
		return err;
	gbpf_ptx_tx(&t, ".reg .b64 %%__gbpf_rd<3>;\n.reg .b32 %%__gbpf_r<2>;\n.reg .b16 %%__gbpf_h<1>;\n");
	if (k->sum.on)
		gbpf_ptx_tx(&t, ".reg .b32 " SUM_REG "<%u>;\n.reg .pred " SUM_PRED ";\n", COUNTER_SUM_MAX);
	if (k->sum.on && k->sum.exit != SUM_EXIT_LANE)
		gbpf_ptx_tx(&t, ".reg .b32 " SUM_WARP_REGS "<3>;\n.reg .pred " SUM_NOT_LEAD ";\n");
	if (k->sum.on && k->sum.exit == SUM_EXIT_WARP)
		gbpf_ptx_tx(&t, ".local .align 4 .b32 " SUM_OPAQUE "[%u];\n", COUNTER_SUM_MAX);
	if (k->sum.on && k->sum.exit == SUM_EXIT_BLOCK)
		gbpf_ptx_tx(&t, ".reg .b32 " SUM_WORD "<%u>;\n", COUNTER_SUM_MAX);
	if (k->sum.on && (k->sum.exit == SUM_EXIT_BLOCK || k->sum.exit == SUM_EXIT_FIRST))
		gbpf_ptx_tx(&t, ".shared .align 16 .b32 " SUM_SHARED "[%u];\n", COUNTER_SUM_MAX);
	gbpf_ptx_tx(&t, ".local .align 8 .b8 " CTX_NAME "[%u];\n", CTX_SIZE + k->tls_bytes);
	if (k->tls_bytes)
		gbpf_ptx_tx(&t, ".reg .b64 %%__gbpf_tl<%u>;\n", k->tls_bytes / 8);
	if (k->plan->launch_param && !(k->plan->ctx_unused & GBPF_CUDA_CTX_UNUSED_LAUNCH_ID))
		gbpf_ptx_tx(&t, ".reg .pred " LID_PRED ";\n");
	if (k->params_size)
		gbpf_ptx_tx(&t, ".local .align 16 .b8 __gbpf_params[%u];\n", k->params_size);
	if (k->inline_stack)
		gbpf_ptx_tx(&t, ".local .align 8 .b8 " STACK_NAME "[%u];\n", k->inline_stack);
	if (k->use_gtid)
		tx_gtid(&t);
	err = emit(k, &t, &decls);
	if (!err)
		err = gbpf_ptx_block_insert(&k->f->body, 0, decls.v, decls.n);
	if (err) {
		gbpf_ptx_block_free(&decls);
		return err;
	}
	free(decls.v);
	return k->plan->launch_param ? add_lid_param(k) : 0;
}

/* ---- fragment splicing ---------------------------------------------- */

static bool module_defines(const struct gbpf_ptx_module *m, const char *name)
{
	for (uint32_t i = 0; i < m->n_items; i++) {
		const struct gbpf_ptx_item *it = &m->items[i];

		if (it->kind == GBPF_PTX_ITEM_FUNC) {
			if (gbpf_ptx_tok_eq(&m->toks[it->func->name], name))
				return true;
			continue;
		}
		if (it->kind != GBPF_PTX_ITEM_DECL)
			continue;
		for (uint32_t j = it->toks.first; j < it->toks.first + it->toks.n; j++)
			if (m->toks[j].kind == GBPF_PTX_TOK_IDENT && gbpf_ptx_tok_eq(&m->toks[j], name))
				return true;
	}
	return false;
}

unsigned gbpf_ptx_target_sm(const struct gbpf_ptx_module *m, uint32_t *tok)
{
	for (uint32_t i = 0; i < m->n_items; i++) {
		const struct gbpf_ptx_item *it = &m->items[i];

		if (it->kind != GBPF_PTX_ITEM_DIRECTIVE || !tok_is(m, it->toks.first, ".target"))
			continue;
		for (uint32_t j = it->toks.first + 1; j < it->toks.first + it->toks.n; j++) {
			const struct gbpf_ptx_tok *tk = &m->toks[j];
			unsigned sm = 0;

			for (uint32_t c = 3; tk->len > 3 && !memcmp(tk->s, "sm_", 3) && c < tk->len &&
					     tk->s[c] >= '0' && tk->s[c] <= '9' && sm < 10000; c++)
				sm = sm * 10 + (unsigned)(tk->s[c] - '0');
			if (sm) {
				if (tok)
					*tok = j;
				return sm;
			}
		}
	}
	return 0;
}

/*
 * The module's `.target sm_7N` raised to sm_80 when it is loaded on an
 * sm_80 GPU or later (@p device_sm) and its PTX ISA is 7.0 or later: the
 * probe's code may then use what sm_80 has (the counter sums' redux.sync).
 * An app built without -arch carries compute_75 PTX. PTX for sm_70..sm_79
 * holds nothing sm_80 refuses (the instructions without .sync, refused
 * from sm_70 on, are already absent), and the driver compiles the module
 * for the GPU's own architecture either way. Other words of the directive
 * (`, debug`) stay.
 */
static int raise_target(struct gbpf_ptx_module *m, unsigned device_sm)
{
	uint32_t at;
	unsigned have = gbpf_ptx_target_sm(m, &at);
	const struct gbpf_ptx_tok *tk;
	char *text;
	int err;

	if (have < 70 || have >= SUM_WARP_MIN_SM || device_sm < SUM_WARP_MIN_SM ||
	    m->version_major * 10 + m->version_minor < SUM_WARP_MIN_VERSION)
		return 0;
	tk = &m->toks[at];
	/* only a plain number: a suffix names features of its own target */
	for (uint32_t c = 3; c < tk->len; c++)
		if (tk->s[c] < '0' || tk->s[c] > '9')
			return 0;
	if (asprintf(&text, "sm_%u", SUM_WARP_MIN_SM) < 0)
		return -ENOMEM;
	err = gbpf_ptx_module_own(m, text);
	if (err) {
		free(text);
		return err;
	}
	/* the directive keeps its tokens (their places on the line too); its sm_ word reads the new text */
	m->toks[at].s = text;
	m->toks[at].len = (uint32_t)strlen(text);
	return 0;
}

static int set_version(struct gbpf_ptx_module *m, unsigned major, unsigned minor, char *log,
		       size_t log_size)
{
	char *text;
	uint32_t first;
	int err;

	for (uint32_t i = 0; i < m->n_items; i++) {
		struct gbpf_ptx_item *it = &m->items[i];

		if (it->kind != GBPF_PTX_ITEM_DIRECTIVE || !tok_is(m, it->toks.first, ".version"))
			continue;
		if (asprintf(&text, ".version %u.%u", major, minor) < 0)
			return -ENOMEM;
		err = gbpf_ptx_module_own(m, text);
		if (err) {
			free(text);
			return err;
		}
		err = gbpf_ptx_lex_into(m, text, strlen(text), false, &first, log, log_size);
		if (err)
			return err;
		it->toks.first = first;
		it->toks.n = m->n_toks - first;
		m->version_major = major;
		m->version_minor = minor;
		return 0;
	}
	return 0;
}

/*
 * Items parsed from @p text (owned by @p m from here on) into @p m, moved to
 * index @p at; their count into @p n_added.
 */
static int insert_items(struct gbpf_ptx_module *m, char *text, size_t len, uint32_t at, uint32_t *n_added,
			char *log, size_t log_size)
{
	uint32_t first, n_before = m->n_items, n_new;
	int err = gbpf_ptx_module_own(m, text);

	if (err) {
		free(text);
		return err;
	}
	err = gbpf_ptx_lex_into(m, text, len, true, &first, log, log_size);
	if (!err)
		err = gbpf_ptx_parse_items(m, first, log, log_size);
	if (err)
		return err;
	n_new = m->n_items - n_before;
	if (n_new && at < n_before) {
		struct gbpf_ptx_item *save = malloc(n_new * sizeof(*save));

		if (!save)
			return -ENOMEM;
		memcpy(save, m->items + n_before, n_new * sizeof(*save));
		memmove(m->items + at + n_new, m->items + at, (n_before - at) * sizeof(*save));
		memcpy(m->items + at, save, n_new * sizeof(*save));
		free(save);
	}
	*n_added = n_new;
	return 0;
}

int gbpf_ptx_insert_specs(struct gbpf_ptx_module *m, struct probe_specs *specs, uint32_t at, char *log,
			  size_t log_size)
{
	uint32_t n;
	char *text = specs->defs.p;

	if (!specs->n)
		return 0;
	if (specs->defs.oom || !text)
		return -ENOMEM;
	specs->defs.p = NULL;
	return insert_items(m, text, strlen(text), at, &n, log, log_size);
}

/*
 * Insert the fragment's module-scope items before the first declaration of
 * @m; the index just past them into @p end.
 */
static int splice(struct gbpf_ptx_module *m, const struct gbpf_ptx_module *frag, uint32_t *end, char *log,
		  size_t log_size)
{
	struct gbpf_ptx_module tmp = *frag;
	struct gbpf_ptx_item *items = NULL;
	char *text = NULL;
	uint32_t at = 0, n_before = m->n_items, n_new = 0;
	size_t len;
	int err;

	/* Print the fragment without its module directives, then parse it here. */
	items = malloc((frag->n_items + 1) * sizeof(*items));
	if (!items)
		return -ENOMEM;
	for (uint32_t i = 0; i < frag->n_items; i++)
		if (frag->items[i].kind != GBPF_PTX_ITEM_DIRECTIVE)
			items[n_new++] = frag->items[i];
	tmp.items = items;
	tmp.n_items = n_new;
	text = gbpf_ptx_print(&tmp, &len);
	free(items);
	if (!text)
		return -ENOMEM;
	if (!module_defines(frag, LAUNCH_ID_NAME) && !module_defines(m, LAUNCH_ID_NAME)) {
		char *t2;

		if (asprintf(&t2, ".visible .global .align 8 .u64 " LAUNCH_ID_NAME ";\n%s", text) < 0) {
			free(text);
			return -ENOMEM;
		}
		free(text);
		text = t2;
		len = strlen(text);
	}
	if (!module_defines(frag, DEVICE_NAME) && !module_defines(m, DEVICE_NAME)) {
		char *t2;

		if (asprintf(&t2, ".visible .global .align 4 .u32 " DEVICE_NAME ";\n%s", text) < 0) {
			free(text);
			return -ENOMEM;
		}
		free(text);
		text = t2;
		len = strlen(text);
	}
	/* The new items go just after the module directives. */
	while (at < n_before && (m->items[at].kind == GBPF_PTX_ITEM_DIRECTIVE ||
				 m->items[at].kind == GBPF_PTX_ITEM_COMMENT))
		at++;
	err = insert_items(m, text, len, at, &n_new, log, log_size);
	*end = at + n_new;
	return err;
}

static bool plan_ok(const struct gbpf_ptx_module *frag, const struct gbpf_ptx_plan *p,
		    unsigned *missing)
{
	static const unsigned kinds[] = {GBPF_PTX_SITE_ENTRY, GBPF_PTX_SITE_EXIT, GBPF_PTX_SITE_MEM,
					 GBPF_PTX_SITE_BARRIER, GBPF_PTX_SITE_BLOCK};
	const unsigned idx[] = {p->entry_probe, p->exit_probe, p->mem_probe, p->barrier_probe,
				p->block_probe};

	for (unsigned i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		if (!(p->sites & kinds[i]))
			continue;
		if (!frag || !gbpf_ptx_probe_func(frag, idx[i])) {
			*missing = idx[i];
			return false;
		}
	}
	return true;
}

int gbpf_ptx_inject(struct gbpf_ptx_module *m, const struct gbpf_ptx_module *fragment,
		    const struct gbpf_ptx_inject_req *req, char *log, size_t log_size)
{
	unsigned version, n_done = 0, missing = 0;
	bool spliced = false;
	struct inline_opts opts;
	struct probe_specs specs = {0};
	int funcs_exit = -1, funcs_barrier = -1; /* counter.c: asked once per injection, when a kernel sums */
	uint32_t frag_end = 0;
	int err = 0;

	if (!m || !req)
		return -EINVAL;
	gbpf_ptx_inline_opts_from_env(&opts);
	version = m->version_major * 10 + m->version_minor;
	if (fragment && fragment->version_major * 10 + fragment->version_minor > version)
		version = fragment->version_major * 10 + fragment->version_minor;

	for (uint32_t i = 0; i < m->n_items && !err; i++) {
		struct gbpf_ptx_item *it = &m->items[i];
		struct gbpf_ptx_kernel_report rep = {0};
		struct gbpf_ptx_plan plan = req->plan;
		struct kctx k = {.m = m, .plan = &plan, .rep = &rep, .log = log,
				 .log_size = log_size, .opts = &opts, .specs = &specs,
				 .funcs_exit = &funcs_exit,
				 .funcs_barrier = &funcs_barrier,
				 .tls_bytes = (req->thread_local_bytes + 7u) & ~7u};

		if (it->kind != GBPF_PTX_ITEM_FUNC || !it->func->is_entry)
			continue;
		k.f = it->func;
		gbpf_ptx_func_name(m, k.f, k.kname, sizeof(k.kname));
		rep.name = k.kname;
		rep.kernel_id = gbpf_kernel_id(k.kname);
		if (!k.f->has_body) {
			snprintf(rep.reason, sizeof(rep.reason), "declaration without a body");
		} else if (req->select && !req->select(k.kname, &plan, req->select_arg)) {
			snprintf(rep.reason, sizeof(rep.reason), "not selected");
		} else if (!plan.sites) {
			snprintf(rep.reason, sizeof(rep.reason), "no injection site requested");
		} else if (!plan_ok(fragment, &plan, &missing)) {
			gbpf_ptx_log(log, log_size,
				     "%s: kernel %s: probe fragment defines no __gbpf_probe_%u",
				     m->filename ? m->filename : "<ptx>", k.kname, missing);
			snprintf(rep.reason, sizeof(rep.reason),
				 "probe fragment defines no __gbpf_probe_%u", missing);
			err = -GBPF_ERRNO__INJECT;
		} else {
			/* The items array may grow when splicing: re-read the item after it. */
			if (!spliced && fragment) {
				if (version > m->version_major * 10 + m->version_minor)
					err = set_version(m, version / 10, version % 10, log,
							  log_size);
				if (!err)
					err = raise_target(m, req->device_sm);
				if (!err)
					err = splice(m, fragment, &frag_end, log, log_size);
				spliced = true;
				if (err)
					break;
				/* Items before i shifted by the spliced count. */
				for (uint32_t j = 0; j < m->n_items; j++)
					if (m->items[j].kind == GBPF_PTX_ITEM_FUNC &&
					    m->items[j].func == k.f)
						i = j;
			}
			long lid = 0;

			rep.n_params = k.f->n_params;
			if (plan.launch_param && (lid = lid_param_offset(m, k.f, &rep)) < 0)
				goto report; /* reason set: left alone */
			rep.launch_param_off = (unsigned)lid;
			k.cvta_param = version >= CVTA_PARAM_MIN_VERSION;
			err = instrument_kernel(&k);
			if (!err) {
				rep.instrumented = true;
				n_done++;
				if (!k.cvta_param && k.f->n_params && !k.params_size)
					snprintf(rep.reason, sizeof(rep.reason),
						 "PTX ISA %u.%u < 7.7 and parameters not copyable: "
						 "ctx.params is 0",
						 version / 10, version % 10);
				else if (!k.cvta_param && k.f->n_params)
					snprintf(rep.reason, sizeof(rep.reason),
						 "PTX ISA %u.%u < 7.7: ctx.params points to a "
						 "per-thread copy",
						 version / 10, version % 10);
				if (k.over_budget) {
					size_t used = strlen(rep.reason);
					char spec[96] = "";

					if (k.spec_calls)
						snprintf(spec, sizeof(spec), " (%u through %u specialised %s)", k.spec_calls,
							 specs.n, specs.n == 1 ? "copy" : "copies");
					snprintf(rep.reason + used, sizeof(rep.reason) - used,
						 "%s%u %s the probe%s: the kernel's inline budget of %u "
						 "PTX lines is spent (GBPF_PTX_INLINE_BUDGET%s)",
						 used ? "; " : "", k.over_budget,
						 k.over_budget == 1 ? "site calls" : "sites call", spec, opts.budget,
						 opts.budget_ignored ? " is not a number of lines: ignored" : "");
				}
				gbpf_ptx_sum_report(&k, rep.reason, sizeof(rep.reason));
			} else {
				snprintf(rep.reason, sizeof(rep.reason), "injection failed (%d)", err);
			}
		}
report:
		free(k.regs);
		gbpf_ptx_blocks_free(&k.blocks);
		if (req->report)
			req->report(&rep, req->report_arg);
	}
	/* the specialised copies before the kernels that call them, after the fragment they use */
	if (!err && specs.n)
		err = gbpf_ptx_insert_specs(m, &specs, frag_end, log, log_size);
	free(specs.defs.p);
	/* the probes as sites call them, once every inlined copy is made from them (GBPF_PTX_NO_SINK: as written) */
	for (uint32_t i = 0; spliced && !err && !opts.no_sink && i < m->n_items; i++) {
		struct gbpf_ptx_item *it = &m->items[i];
		char name[64];

		if (it->kind != GBPF_PTX_ITEM_FUNC || it->func->is_entry || !it->func->has_body)
			continue;
		gbpf_ptx_func_name(m, it->func, name, sizeof(name));
		if (!strncmp(name, "__gbpf_probe_", 13) && gbpf_ptx_fold_called_probe(m, it->func, log, log_size) < 0)
			gbpf_ptx_log(log, log_size, "%s: probe %s left as the code generator wrote it",
				     m->filename ? m->filename : "<ptx>", name);
	}
	return err ? err : (int)n_done;
}
