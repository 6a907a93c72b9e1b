/* SPDX-License-Identifier: MIT */
/*
 * Basic blocks of a parsed PTX kernel (the gpu/block site).
 *
 * A block starts at the kernel's first instruction, at the first
 * instruction after a label that a branch names (`bra` operands and
 * `.branchtargets` lists), and at the first instruction after a control
 * transfer (bra, brx.idx, ret, exit; predicated or not). Consecutive
 * labels start one block. The blocks are numbered in the order their
 * first instructions appear in the PTX text, nested scopes included, so
 * that the number of a block is stable for a given PTX (docs/ATTACH.md).
 */
#include "plugins/cuda/ptx/ptx_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Label names referenced as branch targets, sorted for lookup. */
struct targets {
	const struct gbpf_ptx_tok **v;
	uint32_t n, cap;
};

static int targets_add(struct targets *t, const struct gbpf_ptx_tok *tok)
{
	if (t->n == t->cap) {
		uint32_t ncap = t->cap ? t->cap * 2 : 64;
		const struct gbpf_ptx_tok **nv;

		if (ncap > (1u << 26))
			return -E2BIG;
		nv = realloc(t->v, ncap * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		t->v = nv;
		t->cap = ncap;
	}
	t->v[t->n++] = tok;
	return 0;
}

static int tok_cmp(const struct gbpf_ptx_tok *a, const struct gbpf_ptx_tok *b)
{
	uint32_t n = a->len < b->len ? a->len : b->len;
	int c = memcmp(a->s, b->s, n);

	if (c)
		return c;
	return a->len < b->len ? -1 : a->len > b->len;
}

static int tok_ptr_cmp(const void *a, const void *b)
{
	return tok_cmp(*(const struct gbpf_ptx_tok *const *)a, *(const struct gbpf_ptx_tok *const *)b);
}

static bool is_target(const struct targets *t, const struct gbpf_ptx_tok *name)
{
	uint32_t lo = 0, hi = t->n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		int c = tok_cmp(t->v[mid], name);

		if (!c)
			return true;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

/* "bra" or "bra.uni", not "brax": the opcode's first dotted word. */
static bool op_is(const struct gbpf_ptx_tok *t, const char *base)
{
	size_t n = strlen(base);

	return t->len >= n && !memcmp(t->s, base, n) && (t->len == n || t->s[n] == '.');
}

static int collect_targets(const struct gbpf_ptx_module *m, const struct gbpf_ptx_block *b,
			   struct targets *t, int depth)
{
	if (depth > GBPF_PTX_MAX_DEPTH)
		return -E2BIG;
	for (uint32_t i = 0; i < b->n; i++) {
		const struct gbpf_ptx_stmt *s = b->v[i];
		int err = 0;

		if (s->kind == GBPF_PTX_STMT_SCOPE) {
			err = collect_targets(m, &s->body, t, depth + 1);
		} else if (s->kind == GBPF_PTX_STMT_INSN && op_is(&m->toks[s->opcode], "bra")) {
			for (uint32_t o = 0; o < s->n_ops && !err; o++)
				if (s->ops[o].kind == GBPF_PTX_OP_SYM)
					err = targets_add(t, &m->toks[s->ops[o].toks.first]);
		} else if (s->kind == GBPF_PTX_STMT_DIRECTIVE &&
			   gbpf_ptx_tok_eq(&m->toks[s->toks.first], ".branchtargets")) {
			for (uint32_t j = s->toks.first + 1; j < s->toks.first + s->toks.n && !err; j++)
				if (m->toks[j].kind == GBPF_PTX_TOK_IDENT)
					err = targets_add(t, &m->toks[j]);
		}
		if (err)
			return err;
	}
	return 0;
}

/* The instruction ends its block: control may go elsewhere than to the next one. */
static bool ends_block(const struct gbpf_ptx_module *m, const struct gbpf_ptx_stmt *s)
{
	const struct gbpf_ptx_tok *op = &m->toks[s->opcode];

	return op_is(op, "bra") || op_is(op, "brx") || op_is(op, "ret") || op_is(op, "exit");
}

struct walk {
	const struct gbpf_ptx_module *m;
	const struct targets *targets;
	struct gbpf_ptx_blocks *out;
	bool pending; /* the next instruction starts a block */
};

static int leaders_add(struct gbpf_ptx_blocks *b, const struct gbpf_ptx_stmt *s)
{
	if (b->n == b->cap) {
		uint32_t ncap = b->cap ? b->cap * 2 : 32;
		const struct gbpf_ptx_stmt **nv;

		if (ncap > (1u << 26))
			return -E2BIG;
		nv = realloc(b->first, ncap * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		b->first = nv;
		b->cap = ncap;
	}
	b->first[b->n++] = s;
	return 0;
}

static int walk_block(struct walk *w, const struct gbpf_ptx_block *b, uint32_t from, int depth)
{
	if (depth > GBPF_PTX_MAX_DEPTH)
		return -E2BIG;
	for (uint32_t i = from; i < b->n; i++) {
		const struct gbpf_ptx_stmt *s = b->v[i];
		int err;

		switch (s->kind) {
		case GBPF_PTX_STMT_LABEL:
			if (is_target(w->targets, &w->m->toks[s->toks.first]))
				w->pending = true;
			break;
		case GBPF_PTX_STMT_SCOPE:
			err = walk_block(w, &s->body, 0, depth + 1);
			if (err)
				return err;
			break;
		case GBPF_PTX_STMT_INSN:
			if (w->pending) {
				err = leaders_add(w->out, s);
				if (err)
					return err;
				w->pending = false;
			}
			if (ends_block(w->m, s))
				w->pending = true;
			break;
		default:
			break;
		}
	}
	return 0;
}

int gbpf_ptx_find_blocks(const struct gbpf_ptx_module *m, const struct gbpf_ptx_func *f,
			 uint32_t first, struct gbpf_ptx_blocks *out)
{
	struct targets t = {0};
	struct walk w = {.m = m, .targets = &t, .out = out, .pending = true};
	int err;

	memset(out, 0, sizeof(*out));
	err = collect_targets(m, &f->body, &t, 0);
	if (!err) {
		if (t.n)
			qsort(t.v, t.n, sizeof(*t.v), tok_ptr_cmp);
		err = walk_block(&w, &f->body, first, 0);
	}
	free(t.v);
	if (err)
		gbpf_ptx_blocks_free(out);
	return err;
}

void gbpf_ptx_blocks_free(struct gbpf_ptx_blocks *b)
{
	free(b->first);
	memset(b, 0, sizeof(*b));
}
