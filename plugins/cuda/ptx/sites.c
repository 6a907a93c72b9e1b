/* SPDX-License-Identifier: MIT */
/*
 * The code of each probe site: the context fields the site knows, and the
 * probe itself, called or inlined into the kernel (with the site's
 * constant fields folded in: fold.c).
 */
#include "plugins/cuda/ptx/inject_internal.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gbpf/cuda_inject.h>
#include <gbpf/probe_ctx.h>

_Static_assert(offsetof(struct gbpf_gpu_ctx, device) == OFF_DEVICE &&
		       offsetof(struct gbpf_gpu_ctx, mem_site) == OFF_MEM_SITE &&
		       sizeof(struct gbpf_gpu_ctx) == CTX_SIZE,
	       "the injector's context offsets match struct gbpf_gpu_ctx");
_Static_assert(CTX_SIZE == GBPF_PTX_THREAD_LOCAL_CTX_OFF,
	       "the thread-local values the code generator reaches after the context follow it");
_Static_assert(offsetof(struct gbpf_gpu_block_ctx, device) == OFF_BLOCK_DEVICE &&
		       sizeof(struct gbpf_gpu_block_ctx) <= CTX_SIZE,
	       "the injector's block context offsets match struct gbpf_gpu_block_ctx");

const struct gbpf_ptx_func *gbpf_ptx_probe_func(const struct gbpf_ptx_module *m, unsigned idx)
{
	char name[48];

	snprintf(name, sizeof(name), "__gbpf_probe_%u", idx);
	for (uint32_t i = 0; i < m->n_items; i++)
		if (m->items[i].kind == GBPF_PTX_ITEM_FUNC && m->items[i].func->has_body &&
		    gbpf_ptx_tok_eq(&m->toks[m->items[i].func->name], name))
			return m->items[i].func;
	return NULL;
}


static bool range_has_ident(const struct gbpf_ptx_module *m, struct gbpf_ptx_range r, const char *name)
{
	for (uint32_t i = r.first; i < r.first + r.n; i++)
		if (m->toks[i].kind == GBPF_PTX_TOK_IDENT && gbpf_ptx_tok_eq(&m->toks[i], name))
			return true;
	return false;
}

/* The tokens of @r spell @text exactly (no spaces: tokens are compared joined). */
static bool range_is(const struct gbpf_ptx_module *m, struct gbpf_ptx_range r, const char *text)
{
	size_t n = strlen(text), o = 0;

	for (uint32_t i = r.first; i < r.first + r.n; i++) {
		const struct gbpf_ptx_tok *tk = &m->toks[i];

		if (o + tk->len > n || memcmp(text + o, tk->s, tk->len))
			return false;
		o += tk->len;
	}
	return o == n;
}

/*
 * Bytes of the probe's frame declared by @r, ".local .align 8 .b8 __gbpf_stack[N]" (the ';' may
 * be a token of it) with N from 512 to GBPF_PTX_FRAME_MAX (ptx_codegen.h); 0 for anything else.
 */
static unsigned stack_decl_bytes(const struct gbpf_ptx_module *m, struct gbpf_ptx_range r)
{
	static const char head[] = ".local.align8.b8" STACK_NAME "[";
	char text[64], tail[4] = "";
	size_t o = 0;
	unsigned n;

	for (uint32_t i = r.first; i < r.first + r.n; i++) {
		const struct gbpf_ptx_tok *tk = &m->toks[i];

		if (o + tk->len >= sizeof(text))
			return 0;
		memcpy(text + o, tk->s, tk->len);
		o += tk->len;
	}
	text[o] = 0;
	if (strncmp(text, head, sizeof(head) - 1) ||
	    sscanf(text + sizeof(head) - 1, "%u%3s", &n, tail) != 2 ||
	    (strcmp(tail, "]") && strcmp(tail, "];")) || n < 512 || n > GBPF_PTX_FRAME_MAX)
		return 0;
	return n;
}

/*
 * The site's fields into the context memory, for probes that read it there
 * (a fold that escaped, or a probe that is called). kernel_id and the
 * fields before the site's own are stored once at kernel entry.
 */
/* GBPF_CUDA_CTX_UNUSED_MEM_* bit of the context field at @p off, 0 for the others. */
static unsigned mem_field_bit(unsigned off)
{
	switch (off) {
	case OFF_MEM_ADDR: return GBPF_CUDA_CTX_UNUSED_MEM_ADDR;
	case OFF_MEM_VALUE: return GBPF_CUDA_CTX_UNUSED_MEM_VALUE;
	case OFF_MEM_SITE: return GBPF_CUDA_CTX_UNUSED_MEM_SITE;
	default: return 0;
	}
}

/* The site's fields into the context for a called probe: those a probe reads (@p unused: plan.ctx_unused). */
static void tx_fold_stores(struct text *t, const struct gbpf_ptx_fold *fold, unsigned unused)
{
	for (unsigned i = 0; i < fold->n_consts; i++) {
		if (fold->c[i].off < OFF_MEM_ADDR || (unused & mem_field_bit(fold->c[i].off)))
			continue;
		if (fold->c[i].reg) {
			gbpf_ptx_tx(t, "st.local.u64 [" CTX_NAME "+%u], %s;\n", fold->c[i].off, fold->c[i].reg);
		} else if (fold->c[i].size == 4) {
			gbpf_ptx_tx(t, "mov.u32 %%__gbpf_r0, %u;\n", (unsigned)fold->c[i].value);
			gbpf_ptx_tx(t, "st.local.u32 [" CTX_NAME "+%u], %%__gbpf_r0;\n", fold->c[i].off);
		}
	}
}

/*
 * A statement of the probe specialised to the site (fold.c): a constant
 * instead of a context load, or a .local access instead of a generic one.
 * Returns false when the statement is to be copied as it is.
 */
static bool tx_folded(struct text *t, const struct kctx *pregs, struct gbpf_ptx_fold *fold,
		      const struct gbpf_ptx_stmt *s, const struct gbpf_ptx_fold_out *o,
		      struct gbpf_ptx_sink_stmt *rec)
{
	const struct gbpf_ptx_module *m = pregs->m;
	const struct gbpf_ptx_tok *op = &m->toks[s->opcode];
	unsigned bits;

	if (o->snap >= 0 && o->action != GBPF_PTX_FOLD_FWD) {
		/* Keep the stored value (zero-extended) for the loads of this slot. */
		const struct gbpf_ptx_operand *v = &s->ops[1];
		unsigned sb = v->kind == GBPF_PTX_OP_REG ? gbpf_ptx_reg_bits(pregs, &m->toks[v->toks.first]) : 64;

		if (sb == 64 || sb == 32 || sb == 16) {
			if (sb == 64)
				gbpf_ptx_tx(t, "mov.b64 %%__gbpf_fw%d, ", o->snap);
			else
				gbpf_ptx_tx(t, "cvt.u64.u%u %%__gbpf_fw%d, ", sb, o->snap);
			for (uint32_t j = v->toks.first; j < v->toks.first + v->toks.n; j++)
				gbpf_ptx_tx(t, "%.*s", (int)m->toks[j].len, m->toks[j].s);
			gbpf_ptx_tx(t, ";\n");
			/* the store that follows may be moved (sink.c): the register holds all of it */
			rec->fw_write = o->snap;
			rec->store_at = t->len;
			rec->deferrable = sb != 16 && (o->action == GBPF_PTX_FOLD_SNAP ||
						       (o->action == GBPF_PTX_FOLD_LOCAL && o->mem_op == 0));
			rec->off = o->local_off;
			rec->size = o->size;
		} else {
			fold->slots[o->snap].valid = false;
		}
	}
	switch (o->action) {
	case GBPF_PTX_FOLD_SKIP:
		rec->emitted = GBPF_PTX_SINK_SKIPPED;
		return true;
	case GBPF_PTX_FOLD_SNAP:
		return false; /* the store itself is copied */
	case GBPF_PTX_FOLD_FWD:
		bits = gbpf_ptx_reg_bits(pregs, o->dest);
		if (bits == 64 && o->size == 8 && o->snap_hi >= 0) /* the low words of two 4-byte slots */
			gbpf_ptx_tx(t, "bfi.b64 %.*s, %%__gbpf_fw%d, %%__gbpf_fw%d, 32, 32;\n", (int)o->dest->len,
				    o->dest->s, o->snap_hi, o->snap);
		else if (o->snap_hi >= 0)
			return false;
		else if (bits == 64 && o->size == 8)
			gbpf_ptx_tx(t, "mov.b64 %.*s, %%__gbpf_fw%d;\n", (int)o->dest->len, o->dest->s, o->snap);
		else if (bits == 64 && o->size == 4)
			gbpf_ptx_tx(t, "and.b64 %.*s, %%__gbpf_fw%d, 0xffffffff;\n", (int)o->dest->len, o->dest->s,
			   o->snap);
		else if (bits == 32 && o->size == 4)
			gbpf_ptx_tx(t, "cvt.u32.u64 %.*s, %%__gbpf_fw%d;\n", (int)o->dest->len, o->dest->s, o->snap);
		else
			return false; /* the load as it is: the store is in memory too */
		fold->forwarded++;
		rec->emitted = GBPF_PTX_SINK_REPLACED;
		return true;
	case GBPF_PTX_FOLD_MOV:
		bits = gbpf_ptx_reg_bits(pregs, o->dest);
		if (bits != 64 && bits != 32) {
			fold->escaped = true; /* unknown width: keep the load */
			return false;
		}
		if (o->reg && bits == 64)
			gbpf_ptx_tx(t, "mov.b64 %.*s, %s;\n", (int)o->dest->len, o->dest->s, o->reg);
		else if (o->reg)
			gbpf_ptx_tx(t, "cvt.u32.u64 %.*s, %s;\n", (int)o->dest->len, o->dest->s, o->reg);
		else
			gbpf_ptx_tx(t, "mov.b%u %.*s, 0x%" PRIx64 ";\n", bits, (int)o->dest->len, o->dest->s,
				    bits == 64 ? o->value : (o->value & 0xffffffffu));
		fold->folded++;
		rec->emitted = GBPF_PTX_SINK_REPLACED;
		return true;
	case GBPF_PTX_FOLD_CONST:
		bits = gbpf_ptx_reg_bits(pregs, o->dest);
		if (bits != 64 && bits != 32)
			return false; /* computed as it is: the same value */
		gbpf_ptx_tx(t, "mov.b%u %.*s, 0x%" PRIx64 ";\n", bits, (int)o->dest->len, o->dest->s,
			    bits == 64 ? o->value : (o->value & 0xffffffffu));
		fold->evaluated++;
		rec->emitted = GBPF_PTX_SINK_REPLACED;
		return true;
	case GBPF_PTX_FOLD_LOCAL:
		/* "ld.u32 %d, [%r2]" -> "ld.local.u32 %d, [__gbpf_stack+504]" */
		if (s->pred >= 0)
			gbpf_ptx_tx(t, "@%s%.*s ", s->pred_neg ? "!" : "", (int)m->toks[s->pred].len,
			   m->toks[s->pred].s);
		gbpf_ptx_tx(t, "%.2s.local%.*s ", op->s, (int)op->len - 2, op->s + 2);
		for (uint32_t i = 0; i < s->n_ops; i++) {
			gbpf_ptx_tx(t, "%s", i ? ", " : "");
			if (i == o->mem_op) {
				gbpf_ptx_tx(t, "[" STACK_NAME "+%" PRId64 "]", o->local_off);
				continue;
			}
			for (uint32_t j = s->ops[i].toks.first; j < s->ops[i].toks.first + s->ops[i].toks.n; j++)
				gbpf_ptx_tx(t, "%.*s", (int)m->toks[j].len, m->toks[j].s);
		}
		gbpf_ptx_tx(t, ";\n");
		fold->localized++;
		rec->emitted = GBPF_PTX_SINK_LOCAL;
		rec->is_store = o->mem_op == 0;
		rec->off = o->local_off;
		rec->size = o->size;
		return true;
	default:
		return false;
	}
}

/*
 * The probe's stack stores that only its slow paths read, moved there
 * (sink.c). The text up to the first statement (the scope's opening and
 * its register declarations) stays; on any doubt the whole text does.
 */
static void tx_sink(struct text *body, const struct gbpf_ptx_module *m, const struct gbpf_ptx_block *b,
		    const struct gbpf_ptx_sink_stmt *rec)
{
	struct text sunk = {0};
	size_t head = b->n ? rec[0].at : body->len;
	unsigned n = 0;

	gbpf_ptx_tx(&sunk, "%.*s", (int)head, body->p);
	if (gbpf_ptx_sink(m, b, rec, body->p, STACK_NAME, "__gbpf_inl_end", &sunk, &n) || !n || sunk.oom) {
		free(sunk.p);
		return;
	}
	free(body->p);
	*body = sunk;
}

/* @p s is the code generator's scope computing the thread's linear id into %t12 (GTID_SCOPE_MARK). */
static bool is_gtid_scope(const struct gbpf_ptx_module *m, const struct gbpf_ptx_stmt *s)
{
	const struct gbpf_ptx_stmt *d;

	if (s->kind != GBPF_PTX_STMT_SCOPE || !s->body.n)
		return false;
	d = s->body.v[0];
	return d->kind == GBPF_PTX_STMT_DIRECTIVE && range_is(m, d->toks, ".reg.pred" GTID_SCOPE_MARK ";");
}

/* Statement @p s of the probe's body appended to @p body as it is; false without memory. */
static bool tx_copy_stmt(struct text *body, const struct gbpf_ptx_module *m, const struct gbpf_ptx_stmt *s)
{
	char *stmt = gbpf_ptx_print_stmt(m, s, NULL);

	if (!stmt)
		return false;
	gbpf_ptx_tx(body, "%s", stmt);
	free(stmt);
	return true;
}

/* A copy of a probe's body for a site (tx_inline_copy): its text and what it needs of its surroundings. */
struct inline_copy {
	struct text body; /* a nested scope ending at __gbpf_inl_end */
	unsigned stack;   /* bytes of STACK_NAME it uses (0: none) */
	bool gtid;        /* reads GTID_REG_FMT */
	bool tls_regs;    /* its thread-local values are the kernel's registers (TLS_REG_FMT), not memory */
};

/* Some token of @r is @text (of any kind). */
static bool range_has_tok(const struct gbpf_ptx_module *m, struct gbpf_ptx_range r, const char *text)
{
	for (uint32_t i = r.first; i < r.first + r.n; i++)
		if (gbpf_ptx_tok_eq(&m->toks[i], text))
			return true;
	return false;
}

/*
 * How probe @probe reaches GPU_THREAD_LOCAL values (after the context,
 * through %rtls): TLS_NONE; TLS_MEMORY; TLS_REGS when the code generator
 * declared that it does so only by 64-bit accesses "[%rtls+N]"
 * (GBPF_PTX_TLS_REGS_MARK), which an inlined copy turns into moves of the
 * kernel's registers. A probe not found counts as memory.
 */
enum { TLS_NONE, TLS_MEMORY, TLS_REGS };

static int probe_tls_use(const struct gbpf_ptx_module *m, unsigned probe)
{
	const struct gbpf_ptx_func *f = gbpf_ptx_probe_func(m, probe);
	bool uses = false, regs = false;

	if (!f)
		return TLS_MEMORY;
	for (uint32_t i = 0; i < f->body.n; i++) {
		uses |= range_has_tok(m, f->body.v[i]->toks, "%rtls");
		regs |= f->body.v[i]->kind == GBPF_PTX_STMT_DIRECTIVE &&
			range_has_tok(m, f->body.v[i]->toks, GBPF_PTX_TLS_REGS_MARK);
	}
	return !uses ? TLS_NONE : regs ? TLS_REGS : TLS_MEMORY;
}

/*
 * "ld.u64 D, [%rtls+N];" -> "mov.b64 D, %__gbpf_tl<N/8>;" and "st.u64 [%rtls+N], S;" -> the
 * reverse: 1 when rewritten, 0 when the statement does not name %rtls, -1 when it names it in
 * a way that is not one of these (the copy must keep memory then).
 */
static int tx_tls_reg_stmt(struct text *body, const struct gbpf_ptx_module *m, const struct gbpf_ptx_stmt *s,
			   unsigned tls_bytes)
{
	char *text, *c = NULL, reg[64], tail[8];
	unsigned n;
	int rc = -1;

	if (!range_has_tok(m, s->toks, "%rtls"))
		return 0;
	if (s->kind == GBPF_PTX_STMT_DIRECTIVE)
		return 0; /* its declaration */
	text = gbpf_ptx_print_stmt(m, s, NULL);
	if (!text)
		return -1;
	/* compared without blanks: "ld.u64%r2,[%rtls+0];" */
	c = text;
	for (char *p = text; *p; p++)
		if (*p != ' ' && *p != '\t' && *p != '\n')
			*c++ = *p;
	*c = 0;
	if (!strncmp(text, "add.u64%rtls,%rctx,", 19) || !strncmp(text, "add.u64%r0,%rtls,", 17)) {
		rc = 0; /* the base and a lookup's result (its null check only: no access goes through it) */
	} else if (sscanf(text, "ld.u64%63[^,],[%%rtls+%u]%7s", reg, &n, tail) == 3 && !strcmp(tail, ";") &&
		   !(n % 8) && n + 8 <= tls_bytes) {
		gbpf_ptx_tx(body, "mov.b64 %s, " TLS_REG_FMT ";\n", reg, n / 8);
		rc = 1;
	} else if (sscanf(text, "st.u64[%%rtls+%u],%63[^;]%7s", &n, reg, tail) == 3 && !strcmp(tail, ";") &&
		   !(n % 8) && n + 8 <= tls_bytes) {
		gbpf_ptx_tx(body, "mov.b64 " TLS_REG_FMT ", %s;\n", n / 8, reg);
		rc = 1;
	}
	free(text);
	return rc;
}

/*
 * Probe @probe's body as a nested scope that takes its context from
 * %__gbpf_rd0 and ends at a local label instead of returning. The body is
 * what the code generator emits: its only parameter accesses are the
 * context load and the result store, anything else (or a body too long)
 * keeps the call. Nested scopes may redeclare registers and labels, so
 * every site gets its own copy under the same names. With @fold (memory
 * and block sites) the copy is specialised to the site's constant context
 * fields; fold->escaped then says whether the site must store them too.
 */
static bool tx_inline_copy(struct kctx *k, unsigned probe, unsigned max_stmts, struct gbpf_ptx_fold *fold,
			   struct inline_copy *out)
{
	const struct gbpf_ptx_func *f = gbpf_ptx_probe_func(k->m, probe);
	const struct gbpf_ptx_module *m = k->m;
	struct kctx pregs = {.m = k->m}; /* the probe's own register declarations (fold widths) */
	struct text body = {0};
	struct gbpf_ptx_sink_stmt *rec = NULL;
	unsigned stack = 0;
	bool gtid = false;
	/* the thread-local values as the kernel's registers: every access rewritten, or no copy */
	bool tls_regs = k->tls_bytes && probe_tls_use(m, probe) == TLS_REGS;

	if (!f || f->body.n > max_stmts)
		return false;
	if (fold) {
		if (gbpf_ptx_collect_regs(&pregs, &f->body))
			goto keep_call;
		rec = calloc(f->body.n ? f->body.n : 1, sizeof(*rec));
		if (!rec)
			goto keep_call;
		gbpf_ptx_fold_begin(fold, m, &f->body, STACK_NAME);
	}
	gbpf_ptx_tx(&body, "{\n");
	if (fold)
		gbpf_ptx_tx(&body, ".reg .b64 %%__gbpf_fw<%u>;\n", GBPF_PTX_FOLD_MAX_SLOTS);
	for (uint32_t i = 0; i < f->body.n && !body.oom; i++) {
		const struct gbpf_ptx_stmt *s = f->body.v[i];
		struct gbpf_ptx_sink_stmt scratch, *r = rec ? &rec[i] : &scratch;
		struct gbpf_ptx_fold_out fo;

		memset(r, 0, sizeof(*r));
		r->at = r->store_at = body.len;
		r->fw_write = -1;
		if (fold && gbpf_ptx_fold_stmt(fold, i, &fo) != GBPF_PTX_FOLD_KEEP &&
		    tx_folded(&body, &pregs, fold, s, &fo, r)) {
			r->end = body.len;
			continue;
		}
		if (s->kind == GBPF_PTX_STMT_INSN) {
			const struct gbpf_ptx_tok *op = &m->toks[s->opcode];

			if (gbpf_ptx_tok_eq(op, "ret")) {
				if (s->pred >= 0)
					gbpf_ptx_tx(&body, "@%s%.*s bra __gbpf_inl_end;\n", s->pred_neg ? "!" : "",
					   (int)m->toks[s->pred].len, m->toks[s->pred].s);
				else
					gbpf_ptx_tx(&body, "bra.uni __gbpf_inl_end;\n");
				r->end = body.len;
				continue;
			}
			if (op->len >= 8 && !memcmp(op->s, "ld.param", 8)) {
				if (s->pred >= 0 || s->n_ops != 2 || !range_is(m, s->ops[1].toks, "[__ctx]"))
					goto keep_call;
				/* "ld.param.b64 %rN, [__ctx];" -> "mov.b64 %rN, %__gbpf_rd0;" */
				gbpf_ptx_tx(&body, "mov.b64 ");
				for (uint32_t j = s->ops[0].toks.first; j < s->ops[0].toks.first + s->ops[0].toks.n; j++)
					gbpf_ptx_tx(&body, "%.*s", (int)m->toks[j].len, m->toks[j].s);
				gbpf_ptx_tx(&body, ", %%__gbpf_rd0;\n");
				r->end = body.len;
				continue;
			}
			if (op->len >= 8 && !memcmp(op->s, "st.param", 8)) {
				if (s->pred >= 0 || s->n_ops != 2 || !range_is(m, s->ops[0].toks, "[__ret]"))
					goto keep_call;
				r->emitted = GBPF_PTX_SINK_SKIPPED;
				r->end = body.len;
				continue; /* the sites ignore r0 */
			}
		}
		/*
		 * The eBPF stack: one per kernel (STACK_NAME, declared with the
		 * context) instead of one per site, since a probe's stack holds
		 * nothing across runs and sites run one after another.
		 */
		if (s->kind == GBPF_PTX_STMT_DIRECTIVE && range_has_ident(m, s->toks, STACK_NAME)) {
			stack = stack_decl_bytes(m, s->toks);
			if (!stack)
				goto keep_call;
			r->emitted = GBPF_PTX_SINK_SKIPPED;
			r->end = body.len;
			continue;
		}
		/*
		 * At memory and block sites (many a kernel) the thread's linear id
		 * comes from the kernel, computed once at its entry: ptxas does not
		 * share the computation between sites (mem_stride into vec_add: 536 ->
		 * 472 static instructions, sm_90).
		 */
		if (fold && is_gtid_scope(m, s)) {
			gbpf_ptx_tx(&body, "mov.u64 %%t12, " GTID_REG_FMT ";\n");
			gtid = true;
			r->end = body.len;
			continue;
		}
		if (tls_regs) {
			int tr = tx_tls_reg_stmt(&body, m, s, k->tls_bytes);

			if (tr < 0)
				goto keep_call;
			if (tr) {
				r->end = body.len;
				continue;
			}
		}
		if (!tx_copy_stmt(&body, m, s))
			goto keep_call;
		r->end = body.len;
	}
	if (rec && !body.oom && !k->opts->no_sink)
		tx_sink(&body, m, &f->body, rec);
	gbpf_ptx_tx(&body, "__gbpf_inl_end:\n}\n");
	if (body.oom)
		goto keep_call;
	if (fold)
		gbpf_ptx_fold_end(fold);
	out->body = body;
	out->stack = stack;
	out->gtid = gtid;
	out->tls_regs = tls_regs;
	free(pregs.regs);
	free(rec);
	return true;
keep_call:
	free(body.p);
	free(pregs.regs);
	free(rec);
	return false;
}

/* Probe @probe inlined at the site: tx_inline_copy, after the context stores an escaped fold needs. */
static bool tx_inline(struct text *t, struct kctx *k, unsigned probe, unsigned max_stmts,
		      struct gbpf_ptx_fold *fold, bool *tls_regs)
{
	struct inline_copy c = {0};

	if (!tx_inline_copy(k, probe, max_stmts, fold, &c))
		return false;
	*tls_regs = c.tls_regs;
	if (fold && fold->escaped)
		tx_fold_stores(t, fold, k->plan->ctx_unused);
	if (c.stack > k->inline_stack)
		k->inline_stack = c.stack;
	k->use_gtid |= c.gtid;
	for (const char *p = c.body.p; (p = strchr(p, '\n')) != NULL; p++)
		k->inline_lines++;
	gbpf_ptx_tx(t, "%s", c.body.p);
	free(c.body.p);
	return true;
}

/*
 * A probe function as sites call it (those that do not inline it: past a
 * kernel's inline budget, a probe longer than the limit): its stack
 * accesses forwarded and its stores moved to where the stack may be read,
 * as in an inlined copy, without the site constants (the caller stores the
 * context). Runs after every kernel is instrumented (the inlined copies are
 * made from the body as the code generator wrote it). Left as it is on any
 * doubt; 1 when the body was rewritten.
 */
int gbpf_ptx_fold_called_probe(struct gbpf_ptx_module *m, struct gbpf_ptx_func *f, char *log, size_t log_size)
{
	struct kctx pregs = {.m = m};
	struct gbpf_ptx_fold fold = {0};
	struct gbpf_ptx_block nb = {0};
	struct text body = {0}, sunk = {0};
	struct gbpf_ptx_sink_stmt *rec = NULL;
	const struct gbpf_ptx_stmt *last = f->body.n ? f->body.v[f->body.n - 1] : NULL;
	uint32_t first, pos;
	unsigned n = 0;
	int err = 0;

	/* a body that ends in an unconditional return: nothing falls off its end */
	if (!f->has_body || !last || last->kind != GBPF_PTX_STMT_INSN || last->pred >= 0 ||
	    !gbpf_ptx_tok_eq(&m->toks[last->opcode], "ret") || gbpf_ptx_collect_regs(&pregs, &f->body))
		goto out;
	rec = calloc(f->body.n, sizeof(*rec));
	if (!rec)
		goto out;
	gbpf_ptx_fold_begin(&fold, m, &f->body, STACK_NAME);
	gbpf_ptx_tx(&body, ".reg .b64 %%__gbpf_fw<%u>;\n", GBPF_PTX_FOLD_MAX_SLOTS);
	for (uint32_t i = 0; i < f->body.n && !body.oom; i++) {
		const struct gbpf_ptx_stmt *s = f->body.v[i];
		struct gbpf_ptx_sink_stmt *r = &rec[i];
		struct gbpf_ptx_fold_out fo;

		r->at = r->store_at = body.len;
		r->fw_write = -1;
		if (gbpf_ptx_fold_stmt(&fold, i, &fo) != GBPF_PTX_FOLD_KEEP && tx_folded(&body, &pregs, &fold, s, &fo, r)) {
			r->end = body.len;
			continue;
		}
		if (!tx_copy_stmt(&body, m, s))
			goto out;
		r->end = body.len;
	}
	gbpf_ptx_fold_end(&fold);
	if (body.oom)
		goto out;
	gbpf_ptx_tx(&sunk, "%.*s", (int)rec[0].at, body.p);
	if (gbpf_ptx_sink(m, &f->body, rec, body.p, STACK_NAME, "__gbpf_fn_end", &sunk, &n) || sunk.oom ||
	    (!n && !fold.forwarded && !fold.localized && !fold.evaluated))
		goto out;
	/* the new body into the module (it owns the text) and in place of the old one */
	if ((err = gbpf_ptx_module_own(m, sunk.p)))
		goto out;
	first = 0;
	err = gbpf_ptx_lex_into(m, sunk.p, sunk.len, false, &first, log, log_size);
	sunk.p = NULL;
	if (err)
		goto out;
	pos = first;
	err = gbpf_ptx_parse_block(m, &pos, m->n_toks, &nb, 0, log, log_size);
	if (err) {
		gbpf_ptx_block_free(&nb);
		goto out;
	}
	gbpf_ptx_block_free(&f->body);
	f->body = nb;
	f->modified = true;
	err = 1;
out:
	free(sunk.p);
	free(body.p);
	free(rec);
	free(pregs.regs);
	return err;
}

unsigned gbpf_ptx_budgeted_limit(struct kctx *k, unsigned probe, unsigned limit)
{
	const struct gbpf_ptx_func *f;

	if (k->inline_lines < k->opts->budget)
		return limit;
	/* past the budget only: the probe is looked up by name for the report */
	f = gbpf_ptx_probe_func(k->m, probe);
	if (f && f->body.n > INLINE_MAX_STMTS_SHORT && f->body.n <= limit)
		k->over_budget++;
	return INLINE_MAX_STMTS_SHORT;
}

void gbpf_ptx_inline_opts_from_env(struct inline_opts *o)
{
	/* GBPF_PTX_COUNTER_SUM_EXIT's values, by SUM_EXIT_* */
	static const char *const exit_modes[] = {
		[SUM_EXIT_LANE] = "lane", [SUM_EXIT_WARP] = "warp", [SUM_EXIT_BLOCK] = "block", [SUM_EXIT_FIRST] = "first"};
	const char *env = getenv("GBPF_PTX_INLINE_BUDGET"), *flush, *exit_mode = getenv("GBPF_PTX_COUNTER_SUM_EXIT");
	char *end;
	unsigned long v;

	o->budget = INLINE_KERNEL_BUDGET_LINES;
	o->budget_ignored = false;
	o->no_inline = getenv("GBPF_PTX_NO_INLINE") != NULL;
	o->no_sink = getenv("GBPF_PTX_NO_SINK") != NULL;
	o->no_sum = getenv("GBPF_PTX_NO_COUNTER_SUM") != NULL;
	o->sum_exit = SUM_EXIT_FIRST;
	o->sum_exit_ignored = exit_mode != NULL;
	for (unsigned i = 0; exit_mode && i < sizeof(exit_modes) / sizeof(exit_modes[0]); i++)
		if (!strcmp(exit_mode, exit_modes[i])) {
			o->sum_exit = i;
			o->sum_exit_ignored = false;
		}
	o->sum_flush = COUNTER_SUM_FLUSH;
	if ((flush = getenv("GBPF_PTX_COUNTER_SUM_FLUSH")) && isdigit((unsigned char)*flush)) {
		errno = 0;
		v = strtoul(flush, &end, 10);
		if (!errno && !*end && v >= 1 && v <= COUNTER_SUM_FLUSH)
			o->sum_flush = (unsigned)v;
	}
	if (!env || !*env)
		return;
	errno = 0;
	v = strtoul(env, &end, 10);
	if (!isdigit((unsigned char)*env) || errno || *end || v > UINT_MAX)
		o->budget_ignored = true;
	else
		o->budget = (unsigned)v;
}

/* @p name appears in @p text as a whole register name (not a prefix of a longer one). */
static bool text_names_reg(const char *text, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = text; (p = strstr(p, name)) != NULL; p += n)
		if (!isalnum((unsigned char)p[n]) && p[n] != '_')
			return true;
	return false;
}

static const char *const spec_arg_reg[4] = {"%__gbpf_rd0", "%__gbpf_rd1", "%__gbpf_rd2", "%__gbpf_gtid"};

/*
 * The specialised copy of probe @p probe for the constants of @p fold
 * (struct probe_specs): found, or made from the probe's body as an inlined
 * copy would be and wrapped in a .func that takes the site's registers it
 * reads as arguments. -1: none (no room, the probe too long or its copy
 * not made, the site's index read: every site would need its own).
 */
static int spec_for(struct kctx *k, unsigned probe, unsigned max_stmts, struct gbpf_ptx_fold *fold)
{
	struct probe_specs *ss = k->specs;
	struct probe_spec key = {.probe = probe};
	struct inline_copy c = {0};
	struct probe_spec *sp;

	if (!ss || !(k->plan->ctx_unused & GBPF_CUDA_CTX_UNUSED_MEM_SITE))
		return -1;
	for (unsigned i = 0; i < fold->n_consts; i++) {
		if (fold->c[i].reg || fold->c[i].off == OFF_MEM_SITE)
			continue;
		if (key.n_key == SPEC_MAX_KEY)
			return -1;
		key.key_off[key.n_key] = fold->c[i].off;
		key.key_val[key.n_key++] = fold->c[i].value;
	}
	for (unsigned i = 0; i < ss->n; i++) {
		sp = &ss->v[i];
		if (sp->probe == probe && sp->n_key == key.n_key &&
		    !memcmp(sp->key_off, key.key_off, key.n_key * sizeof(key.key_off[0])) &&
		    !memcmp(sp->key_val, key.key_val, key.n_key * sizeof(key.key_val[0])))
			return (int)i;
	}
	if (ss->n == SPEC_MAX || (probe < 32 && (ss->uncopyable >> probe & 1)))
		return -1;
	if (!tx_inline_copy(k, probe, max_stmts, fold, &c)) {
		if (probe < 32)
			ss->uncopyable |= 1u << probe;
		return -1;
	}
	sp = &ss->v[ss->n];
	*sp = key;
	sp->escaped = fold->escaped;
	for (unsigned a = 0; a < 4; a++)
		sp->args[a] = text_names_reg(c.body.p, spec_arg_reg[a]);
	gbpf_ptx_tx(&ss->defs, ".func __gbpf_spec_%u(", ss->n);
	for (unsigned a = 0, n = 0; a < 4; a++)
		if (sp->args[a])
			gbpf_ptx_tx(&ss->defs, "%s.param .b64 __gbpf_s%u", n++ ? ", " : "", a);
	gbpf_ptx_tx(&ss->defs, ")\n{\n.reg .b64 %%__gbpf_rd<3>;\n");
	if (sp->args[3])
		gbpf_ptx_tx(&ss->defs, ".reg .b64 " GTID_REG_FMT ";\n");
	if (c.stack)
		gbpf_ptx_tx(&ss->defs, ".local .align 8 .b8 " STACK_NAME "[%u];\n", c.stack);
	for (unsigned a = 0; a < 4; a++)
		if (sp->args[a])
			gbpf_ptx_tx(&ss->defs, "ld.param.b64 %s, [__gbpf_s%u];\n", spec_arg_reg[a], a);
	gbpf_ptx_tx(&ss->defs, "%sret;\n}\n", c.body.p);
	free(c.body.p);
	if (ss->defs.oom)
		return -1;
	return (int)ss->n++;
}

/* A call of specialised copy @p i (spec_for) with the site's registers it reads. */
static void tx_spec_call(struct text *t, struct kctx *k, unsigned i, struct gbpf_ptx_fold *fold)
{
	const struct probe_spec *sp = &k->specs->v[i];
	unsigned n = 0;

	if (sp->escaped)
		tx_fold_stores(t, fold, k->plan->ctx_unused);
	k->use_gtid |= sp->args[3];
	gbpf_ptx_tx(t, "{\n");
	for (unsigned a = 0; a < 4; a++)
		if (sp->args[a])
			gbpf_ptx_tx(t, ".param .b64 __gbpf_s%u;\nst.param.b64 [__gbpf_s%u], %s;\n", a, a,
				    spec_arg_reg[a]);
	gbpf_ptx_tx(t, "call __gbpf_spec_%u, (", i);
	for (unsigned a = 0; a < 4; a++)
		if (sp->args[a])
			gbpf_ptx_tx(t, "%s__gbpf_s%u", n++ ? ", " : "", a);
	gbpf_ptx_tx(t, ");\n}\n");
	k->spec_calls++;
}

/*
 * Around a probe that reaches the thread-local values in memory (a call, or an
 * inlined copy that keeps memory): the kernel's registers that hold them are
 * stored after the context first and loaded back after it (@p fill).
 */
static void tx_tls_spill(struct text *t, const struct kctx *k, bool fill)
{
	for (unsigned i = 0; i < k->tls_bytes / 8; i++)
		if (fill)
			gbpf_ptx_tx(t, "ld.local.u64 " TLS_REG_FMT ", [" CTX_NAME "+%u];\n", i, CTX_SIZE + 8 * i);
		else
			gbpf_ptx_tx(t, "st.local.u64 [" CTX_NAME "+%u], " TLS_REG_FMT ";\n", CTX_SIZE + 8 * i, i);
}

/*
 * Probe @probe at a site: inlined, its specialised copy or a call.
 * @p spec_limit: past the inline budget, a memory site calls the copy of a
 * probe of up to that many statements specialised to its constants
 * (spec_for) rather than the probe itself; 0: never. *@p tls_regs: an
 * inlined copy keeps the thread-local values in the kernel's registers.
 */
static void site_call_any(struct text *t, struct kctx *k, unsigned probe, unsigned max_inline,
			  struct gbpf_ptx_fold *fold, unsigned spec_limit, bool *tls_regs)
{
	int spec;

	/* No probe reads the context (nor the thread-local values after it): no .local traffic, the probe gets NULL. */
	if ((k->plan->ctx_unused & GBPF_CUDA_CTX_UNUSED_ALL) == GBPF_CUDA_CTX_UNUSED_ALL && !k->tls_bytes) {
		gbpf_ptx_tx(t, "mov.u64 %%__gbpf_rd0, 0;\n");
	} else {
		gbpf_ptx_tx(t, "mov.u64 %%__gbpf_rd0, " CTX_NAME ";\n");
		gbpf_ptx_tx(t, "cvta.local.u64 %%__gbpf_rd0, %%__gbpf_rd0;\n");
	}
	if (!k->opts->no_inline && tx_inline(t, k, probe, max_inline, fold, tls_regs))
		return;
	if (fold && spec_limit > max_inline && !k->opts->no_inline &&
	    (spec = spec_for(k, probe, spec_limit, fold)) >= 0) {
		tx_spec_call(t, k, (unsigned)spec, fold);
		return;
	}
	if (fold)
		tx_fold_stores(t, fold, k->plan->ctx_unused);
	gbpf_ptx_tx(t, "{\n.param .b64 __gbpf_arg;\n.param .b64 __gbpf_ret;\n");
	gbpf_ptx_tx(t, "st.param.b64 [__gbpf_arg], %%__gbpf_rd0;\n");
	gbpf_ptx_tx(t, "call (__gbpf_ret), __gbpf_probe_%u, (__gbpf_arg);\n}\n", probe);
}

/* site_call_any, with the thread-local values spilled around a probe that keeps them in memory. */
static void site_call(struct text *t, struct kctx *k, unsigned probe, unsigned max_inline,
		      struct gbpf_ptx_fold *fold, unsigned spec_limit)
{
	size_t at = t->len;
	bool tls_regs = false;
	char *after;

	site_call_any(t, k, probe, max_inline, fold, spec_limit, &tls_regs);
	if (!k->tls_bytes || tls_regs || probe_tls_use(k->m, probe) == TLS_NONE || t->oom)
		return;
	/* the spill goes before everything the site emitted */
	after = strdup(t->p + at);
	if (!after) {
		t->oom = true;
		return;
	}
	t->len = at;
	tx_tls_spill(t, k, false);
	gbpf_ptx_tx(t, "%s", after);
	free(after);
	tx_tls_spill(t, k, true);
}

void gbpf_ptx_site_call(struct text *t, struct kctx *k, unsigned probe, unsigned max_inline,
			struct gbpf_ptx_fold *fold)
{
	/*
	 * Entry, exit and barrier sites have no constants of their own (the
	 * kernel's entry stored the context), but their inlined copies get the
	 * stack treatment too: loads forwarded from the stores, stores only
	 * where the stack may be read (sink.c). Without it an exit probe that
	 * builds a map key from helper outputs stored them all to local memory
	 * in every thread.
	 */
	struct gbpf_ptx_fold none = {0};

	site_call(t, k, probe, max_inline, fold ? fold : &none, 0);
}

/* Address of a [ ... ] operand into %__gbpf_rd1; false if its shape is unknown. */
static bool tx_address(struct text *t, const struct kctx *k, const struct gbpf_ptx_operand *op)
{
	const struct gbpf_ptx_module *m = k->m;
	uint32_t i = op->toks.first + 1, end = op->toks.first + op->toks.n - 1;
	const struct gbpf_ptx_tok *base;
	bool neg = false;

	if (i >= end)
		return false;
	base = &m->toks[i++];
	if (base->kind == GBPF_PTX_TOK_REG) {
		unsigned bits = gbpf_ptx_reg_bits(k, base);

		if (bits == 64)
			gbpf_ptx_tx(t, "mov.b64 %%__gbpf_rd1, %.*s;\n", (int)base->len, base->s);
		else if (bits == 32)
			gbpf_ptx_tx(t, "cvt.u64.u32 %%__gbpf_rd1, %.*s;\n", (int)base->len, base->s);
		else
			return false;
	} else if (base->kind == GBPF_PTX_TOK_IDENT || base->kind == GBPF_PTX_TOK_NUM) {
		gbpf_ptx_tx(t, "mov.u64 %%__gbpf_rd1, %.*s;\n", (int)base->len, base->s);
	} else {
		return false;
	}
	if (i == end)
		return true;
	for (; i < end && m->toks[i].kind == GBPF_PTX_TOK_PUNCT; i++) {
		if (m->toks[i].s[0] == '-')
			neg = !neg;
		else if (m->toks[i].s[0] != '+')
			return false;
	}
	if (i + 1 != end || m->toks[i].kind != GBPF_PTX_TOK_NUM)
		return false;
	gbpf_ptx_tx(t, "add.s64 %%__gbpf_rd1, %%__gbpf_rd1, %s%.*s;\n", neg ? "-" : "", (int)m->toks[i].len,
	   m->toks[i].s);
	return true;
}

/* Stored value into %__gbpf_rd2 (zero-extended bits; first element of a vector). */
static void tx_value(struct text *t, const struct kctx *k, const struct gbpf_ptx_stmt *s,
		     const struct mem_info *mi)
{
	const struct gbpf_ptx_module *m = k->m;
	const struct gbpf_ptx_tok *v;
	const struct gbpf_ptx_operand *op;
	unsigned bits;

	if (mi->value_op < 0)
		goto zero;
	op = &s->ops[mi->value_op];
	v = &m->toks[op->toks.first];
	if (op->kind == GBPF_PTX_OP_VEC && op->toks.n > 2)
		v = &m->toks[op->toks.first + 1];
	else if (op->kind != GBPF_PTX_OP_REG && op->kind != GBPF_PTX_OP_IMM)
		goto zero;
	if (v->kind == GBPF_PTX_TOK_REG) {
		bits = gbpf_ptx_reg_bits(k, v);
	} else if (v->kind == GBPF_PTX_TOK_NUM && op->toks.n == 1) {
		bits = mi->size >= 8 ? 64 : 32;
		if (v->len > 2 && v->s[0] == '0' && (v->s[1] == 'd' || v->s[1] == 'D'))
			bits = 64;
		else if (v->len > 2 && v->s[0] == '0' && (v->s[1] == 'f' || v->s[1] == 'F'))
			bits = 32;
	} else {
		goto zero;
	}
	switch (bits) {
	case 64:
		gbpf_ptx_tx(t, "mov.b64 %%__gbpf_rd2, %.*s;\n", (int)v->len, v->s);
		return;
	case 32:
		gbpf_ptx_tx(t, "mov.b32 %%__gbpf_r1, %.*s;\n", (int)v->len, v->s);
		gbpf_ptx_tx(t, "cvt.u64.u32 %%__gbpf_rd2, %%__gbpf_r1;\n");
		return;
	case 16:
		gbpf_ptx_tx(t, "mov.b16 %%__gbpf_h0, %.*s;\n", (int)v->len, v->s);
		gbpf_ptx_tx(t, "cvt.u64.u16 %%__gbpf_rd2, %%__gbpf_h0;\n");
		return;
	default:
		break;
	}
zero:
	gbpf_ptx_tx(t, "mov.u64 %%__gbpf_rd2, 0;\n");
}

/*
 * Kind, space, size and site are constants at a memory site, address and
 * value registers (%__gbpf_rd1, %__gbpf_rd2): an inlined probe gets them
 * folded in (a key built from them is a constant, its hash and bucket
 * computed by ptxas), with no per-access context stores unless the probe
 * reads the context in a way the fold does not follow.
 */
void gbpf_ptx_mem_fold(struct gbpf_ptx_fold *fold, const struct kctx *k, const struct mem_info *mi,
		       unsigned site)
{
	static const unsigned offs[] = {OFF_MEM_SIZE, OFF_MEM_KIND, OFF_MEM_SPACE, OFF_MEM_SITE};
	const unsigned vals[] = {mi->size, mi->kind, mi->space, site};

	memset(fold, 0, sizeof(*fold));
	fold->c[0].off = OFF_MEM_ADDR;
	fold->c[0].size = 8;
	fold->c[0].reg = "%__gbpf_rd1";
	fold->c[1].off = OFF_MEM_VALUE;
	fold->c[1].size = 8;
	fold->c[1].reg = "%__gbpf_rd2";
	for (unsigned i = 0; i < 4; i++) {
		fold->c[2 + i].off = offs[i];
		fold->c[2 + i].size = 4;
		fold->c[2 + i].value = vals[i];
	}
	fold->c[6].off = OFF_KERNEL_ID;
	fold->c[6].size = 8;
	fold->c[6].value = k->rep->kernel_id;
	fold->n_consts = 7;
}

void gbpf_ptx_mem_probe_call(struct text *t, struct kctx *k, unsigned probe, struct gbpf_ptx_fold *fold,
			     bool may_inline)
{
	/* not inlined: a call of the copy specialised to the site's constants (no context stores) */
	site_call(t, k, probe, may_inline ? gbpf_ptx_budgeted_limit(k, probe, INLINE_MAX_STMTS_MEM) : 0, fold,
		  INLINE_MAX_STMTS_MEM);
}

/* The access's address, generic, into %__gbpf_rd1; false if its operand is not one this pass writes. */
static bool tx_mem_address(struct text *t, const struct kctx *k, const struct gbpf_ptx_stmt *s,
			   const struct mem_info *mi)
{
	if (!tx_address(t, k, &s->ops[mi->addr_op]))
		return false;
	if (mi->space == GBPF_SPACE_GLOBAL)
		gbpf_ptx_tx(t, "cvta.global.u64 %%__gbpf_rd1, %%__gbpf_rd1;\n");
	else if (mi->space == GBPF_SPACE_SHARED && !mi->cluster)
		gbpf_ptx_tx(t, "cvta.shared.u64 %%__gbpf_rd1, %%__gbpf_rd1;\n");
	else if (mi->space == GBPF_SPACE_LOCAL)
		gbpf_ptx_tx(t, "cvta.local.u64 %%__gbpf_rd1, %%__gbpf_rd1;\n");
	return true;
}

bool gbpf_ptx_mem_site(struct text *t, struct kctx *k, const struct gbpf_ptx_stmt *s,
			const struct mem_info *mi)
{
	unsigned probe = k->plan->mem_probe;

	if (!tx_mem_address(t, k, s, mi))
		return false;
	/* summed: the add only, or the add and the rest of a probe that was cut (ptx_split.h) */
	if (gbpf_ptx_sum_site(t, k, mi)) {
		if (k->sum.rest < 0)
			return true;
		probe = (unsigned)k->sum.rest;
		/* the add's flush (when the sum reached its limit) passed no address: the rest reads it */
		tx_mem_address(t, k, s, mi);
	}
	if (!(k->plan->ctx_unused & GBPF_CUDA_CTX_UNUSED_MEM)) {
		struct gbpf_ptx_fold fold;

		tx_value(t, k, s, mi);
		gbpf_ptx_mem_fold(&fold, k, mi, k->rep->n_mem);
		gbpf_ptx_mem_probe_call(t, k, probe, &fold, true);
		return true;
	}
	gbpf_ptx_site_call(t, k, probe, gbpf_ptx_budgeted_limit(k, probe, INLINE_MAX_STMTS_MEM), NULL);
	return true;
}

/*
 * gpu/block site: the block's index and count and the kernel id are
 * constants here; an inlined probe gets them as immediates (its loads of
 * them are replaced), so that a counter indexed by the block becomes a
 * constant address and one atomic, with no per-thread context traffic.
 */
void gbpf_ptx_block_site(struct text *t, struct kctx *k, uint32_t index)
{
	struct gbpf_ptx_fold fold = {0};

	fold.c[0].off = OFF_BLOCK_INDEX;
	fold.c[0].size = 4;
	fold.c[0].value = index;
	fold.c[1].off = OFF_BLOCK_COUNT;
	fold.c[1].size = 4;
	fold.c[1].value = k->blocks.n;
	fold.c[2].off = OFF_KERNEL_ID;
	fold.c[2].size = 8;
	fold.c[2].value = k->rep->kernel_id;
	fold.n_consts = 3;
	if (!(k->plan->ctx_unused & GBPF_CUDA_CTX_UNUSED_DEVICE)) {
		/* From the module variable: block 0's site may come before the entry's stores. */
		gbpf_ptx_tx(t, "ld.global.u32 %%__gbpf_r0, [" DEVICE_NAME "];\n");
		gbpf_ptx_tx(t, "st.local.u32 [" CTX_NAME "+%u], %%__gbpf_r0;\n", OFF_BLOCK_DEVICE);
	}
	gbpf_ptx_site_call(t, k, k->plan->block_probe,
			   gbpf_ptx_budgeted_limit(k, k->plan->block_probe, INLINE_MAX_STMTS_BLOCK), &fold);
	k->rep->n_block++;
}

