/* SPDX-License-Identifier: MIT */
/*
 * PTX printer: regenerates text from the parsed structure. The layout is
 * nvcc's (tab indentation, one statement per line); the token sequence is
 * the parsed one, so the result assembles to the same code.
 */
#include "plugins/cuda/ptx/ptx_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct sbuf {
	char *p;
	size_t len;
	size_t cap;
	bool oom;
};

static void sb_put(struct sbuf *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t ncap = b->cap ? b->cap : 4096;
		char *np;

		while (ncap < b->len + n + 1)
			ncap *= 2;
		np = realloc(b->p, ncap);
		if (!np) {
			b->oom = true;
			return;
		}
		b->p = np;
		b->cap = ncap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = 0;
}

static void sb_str(struct sbuf *b, const char *s)
{
	sb_put(b, s, strlen(s));
}

static void sb_indent(struct sbuf *b, int depth)
{
	for (int i = 0; i < depth; i++)
		sb_put(b, "\t", 1);
}

static bool wordlike(const struct gbpf_ptx_tok *t)
{
	return t->kind != GBPF_PTX_TOK_PUNCT && t->kind != GBPF_PTX_TOK_COMMENT;
}

static bool punct_is(const struct gbpf_ptx_tok *t, char c)
{
	return t->kind == GBPF_PTX_TOK_PUNCT && t->s[0] == c;
}

/* Whether a space goes between two adjacent tokens of one statement. */
static bool need_space(const struct gbpf_ptx_tok *prev, const struct gbpf_ptx_tok *cur)
{
	if (!prev)
		return false;
	if (punct_is(prev, ',') || punct_is(prev, '=') || punct_is(cur, '='))
		return true;
	if (punct_is(prev, ')') && wordlike(cur))
		return true;
	return wordlike(prev) && wordlike(cur);
}

/* Print tokens of a range; @keep_lines keeps the source's line breaks. */
static void put_range(struct sbuf *b, const struct gbpf_ptx_module *m, struct gbpf_ptx_range r,
		      bool keep_lines)
{
	const struct gbpf_ptx_tok *prev = NULL;

	for (uint32_t i = r.first; i < r.first + r.n; i++) {
		const struct gbpf_ptx_tok *t = &m->toks[i];

		if (t->kind == GBPF_PTX_TOK_COMMENT)
			continue;
		if (keep_lines && prev && t->nl_before)
			sb_put(b, "\n", 1);
		else if (need_space(prev, t))
			sb_put(b, " ", 1);
		sb_put(b, t->s, t->len);
		prev = t;
	}
}

static void put_comment(struct sbuf *b, const struct gbpf_ptx_module *m, uint32_t tok)
{
	sb_put(b, m->toks[tok].s, m->toks[tok].len);
	sb_put(b, "\n", 1);
}

static void put_block(struct sbuf *b, const struct gbpf_ptx_module *m,
		      const struct gbpf_ptx_block *blk, int depth);

static void put_stmt(struct sbuf *b, const struct gbpf_ptx_module *m, const struct gbpf_ptx_stmt *s,
		     int depth)
{
	switch (s->kind) {
	case GBPF_PTX_STMT_COMMENT:
		sb_indent(b, depth);
		put_comment(b, m, s->toks.first);
		break;
	case GBPF_PTX_STMT_LABEL:
		put_range(b, m, s->toks, false);
		sb_put(b, "\n", 1);
		break;
	case GBPF_PTX_STMT_DIRECTIVE:
		sb_indent(b, depth);
		put_range(b, m, s->toks, false);
		sb_put(b, "\n", 1);
		break;
	case GBPF_PTX_STMT_SCOPE:
		sb_indent(b, depth);
		sb_str(b, "{\n");
		put_block(b, m, &s->body, depth + 1);
		sb_indent(b, depth);
		sb_str(b, "}\n");
		break;
	case GBPF_PTX_STMT_INSN:
		sb_indent(b, depth);
		if (s->pred >= 0) {
			sb_str(b, s->pred_neg ? "@!" : "@");
			sb_put(b, m->toks[s->pred].s, m->toks[s->pred].len);
			sb_put(b, " ", 1);
		}
		sb_put(b, m->toks[s->opcode].s, m->toks[s->opcode].len);
		for (uint32_t i = 0; i < s->n_ops; i++) {
			sb_str(b, i ? ", " : " \t");
			put_range(b, m, s->ops[i].toks, false);
		}
		sb_str(b, ";\n");
		break;
	}
}

static void put_block(struct sbuf *b, const struct gbpf_ptx_module *m,
		      const struct gbpf_ptx_block *blk, int depth)
{
	for (uint32_t i = 0; i < blk->n; i++)
		put_stmt(b, m, blk->v[i], depth);
}

static void put_func(struct sbuf *b, const struct gbpf_ptx_module *m, const struct gbpf_ptx_func *f)
{
	put_range(b, m, f->prefix, false);
	if (f->has_ret) {
		sb_str(b, " (");
		for (uint32_t i = 0; i < f->n_rets; i++) {
			if (i)
				sb_str(b, ", ");
			put_range(b, m, f->rets[i], false);
		}
		sb_str(b, ")");
	}
	sb_put(b, " ", 1);
	sb_put(b, m->toks[f->name].s, m->toks[f->name].len);
	if (f->has_params) {
		sb_str(b, "(");
		for (uint32_t i = 0; i < f->n_params; i++) {
			sb_str(b, i ? ",\n\t" : "\n\t");
			put_range(b, m, f->params[i], false);
		}
		sb_str(b, f->n_params ? "\n)" : ")");
	}
	for (uint32_t i = 0; i < f->n_directives; i++) {
		sb_put(b, "\n", 1);
		put_range(b, m, f->directives[i], false);
	}
	if (!f->has_body) {
		sb_str(b, "\n;\n");
		return;
	}
	sb_str(b, "\n{\n");
	put_block(b, m, &f->body, 1);
	sb_str(b, "}\n");
}

char *gbpf_ptx_print_stmt(const struct gbpf_ptx_module *m, const struct gbpf_ptx_stmt *s, size_t *len)
{
	struct sbuf b = {0};

	put_stmt(&b, m, s, 0);
	sb_put(&b, "", 1);
	if (b.oom) {
		free(b.p);
		errno = ENOMEM;
		return NULL;
	}
	if (len)
		*len = b.len - 1;
	return b.p;
}

char *gbpf_ptx_print(const struct gbpf_ptx_module *m, size_t *len)
{
	return gbpf_ptx_print_ex(m, 0, len);
}

char *gbpf_ptx_print_ex(const struct gbpf_ptx_module *m, unsigned flags, size_t *len)
{
	struct sbuf b = {0};

	for (uint32_t i = 0; i < m->n_items; i++) {
		const struct gbpf_ptx_item *it = &m->items[i];

		switch (it->kind) {
		case GBPF_PTX_ITEM_COMMENT:
			put_comment(&b, m, it->toks.first);
			break;
		case GBPF_PTX_ITEM_DIRECTIVE:
		case GBPF_PTX_ITEM_DECL:
			put_range(&b, m, it->toks, false);
			sb_put(&b, "\n", 1);
			break;
		case GBPF_PTX_ITEM_RAW:
			put_range(&b, m, it->toks, true);
			sb_put(&b, "\n", 1);
			break;
		case GBPF_PTX_ITEM_FUNC:
			sb_put(&b, "\n", 1);
			if ((flags & GBPF_PTX_PRINT_SOURCE) && !it->func->modified && it->toks.n) {
				/* Tokens of an unmodified item are contiguous in one text. */
				const struct gbpf_ptx_tok *a = &m->toks[it->toks.first];
				const struct gbpf_ptx_tok *z = &m->toks[it->toks.first + it->toks.n - 1];

				sb_put(&b, a->s, (size_t)(z->s + z->len - a->s));
				sb_put(&b, "\n", 1);
				break;
			}
			put_func(&b, m, it->func);
			break;
		}
	}
	sb_put(&b, "", 0);
	if (b.oom || !b.p) {
		free(b.p);
		errno = ENOMEM;
		return NULL;
	}
	if (len)
		*len = b.len;
	return b.p;
}
