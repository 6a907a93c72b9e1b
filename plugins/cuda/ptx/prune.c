/* SPDX-License-Identifier: MIT */
/*
 * Pruning a module to the kernels it is built for.
 *
 * The agent builds one instrumented module per kernel at that kernel's first
 * launch, and the driver JIT-compiles all of it: every other kernel of the
 * application's module (copied unchanged) and the device functions only they
 * call are compiled again for every kernel instrumented. Left out, a module of
 * K kernels costs one kernel's compilation per first launch instead of K.
 *
 * What stays: the kept kernels, every function they reach by name (calls,
 * function addresses, a kernel another launches from the device), every
 * function named outside function bodies (a variable's initialiser), every
 * declaration without a body, and every item that is not a function
 * (variables keep their addresses' meaning: the agent mirrors the app's
 * module variables around launches by name).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "plugins/cuda/ptx/ptx_internal.h"

/* A function with a body, by name: the index is sorted by name for the lookups of every token. */
struct func_ref {
	const struct gbpf_ptx_tok *name;
	uint32_t item;
};

struct prune {
	const struct gbpf_ptx_module *m;
	struct func_ref *funcs;
	uint32_t n_funcs;
	bool *reached;          /* per item: a function that stays */
	uint32_t *todo;         /* items whose bodies are to be scanned */
	uint32_t n_todo;
};

static int tok_cmp(const struct gbpf_ptx_tok *a, const struct gbpf_ptx_tok *b)
{
	int c = memcmp(a->s, b->s, a->len < b->len ? a->len : b->len);

	return c ? c : (a->len > b->len) - (a->len < b->len);
}

static int func_ref_cmp(const void *a, const void *b)
{
	return tok_cmp(((const struct func_ref *)a)->name, ((const struct func_ref *)b)->name);
}

/* The item defining function @t, or -1. */
static int64_t func_named(const struct prune *p, const struct gbpf_ptx_tok *t)
{
	struct func_ref key = {.name = t};
	const struct func_ref *hit = bsearch(&key, p->funcs, p->n_funcs, sizeof(key), func_ref_cmp);

	return hit ? (int64_t)hit->item : -1;
}

static void reach(struct prune *p, int64_t i)
{
	if (i < 0 || p->reached[i])
		return;
	p->reached[i] = true;
	p->todo[p->n_todo++] = (uint32_t)i;
}

static void scan_range(struct prune *p, struct gbpf_ptx_range r)
{
	for (uint32_t j = r.first; j < r.first + r.n && j < p->m->n_toks; j++)
		if (p->m->toks[j].kind == GBPF_PTX_TOK_IDENT)
			reach(p, func_named(p, &p->m->toks[j]));
}

static void scan_block(struct prune *p, const struct gbpf_ptx_block *b, int depth)
{
	if (depth > GBPF_PTX_MAX_DEPTH)
		return;
	for (uint32_t i = 0; i < b->n; i++) {
		scan_range(p, b->v[i]->toks);
		if (b->v[i]->kind == GBPF_PTX_STMT_SCOPE)
			scan_block(p, &b->v[i]->body, depth + 1);
	}
}

int gbpf_ptx_prune(struct gbpf_ptx_module *m, bool (*keep)(const char *kernel, void *arg), void *arg)
{
	struct prune p = {.m = m};
	uint32_t w = 0;
	int removed = 0;
	char name[512];

	if (!m || !keep)
		return -EINVAL;
	if (!m->n_items)
		return 0;
	p.reached = calloc(m->n_items, sizeof(*p.reached));
	p.todo = calloc(m->n_items, sizeof(*p.todo));
	p.funcs = calloc(m->n_items, sizeof(*p.funcs));
	if (!p.reached || !p.todo || !p.funcs) {
		free(p.reached);
		free(p.todo);
		free(p.funcs);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < m->n_items; i++)
		if (m->items[i].kind == GBPF_PTX_ITEM_FUNC && m->items[i].func->has_body)
			p.funcs[p.n_funcs++] = (struct func_ref){&m->toks[m->items[i].func->name], i};
	qsort(p.funcs, p.n_funcs, sizeof(*p.funcs), func_ref_cmp);
	for (uint32_t i = 0; i < m->n_items; i++) {
		const struct gbpf_ptx_item *it = &m->items[i];

		if (it->kind != GBPF_PTX_ITEM_FUNC) {
			scan_range(&p, it->toks);
			continue;
		}
		if (!it->func->has_body) {
			p.reached[i] = true; /* a declaration: nothing to compile */
			continue;
		}
		if (it->func->is_entry) {
			gbpf_ptx_func_name(m, it->func, name, sizeof(name));
			if (keep(name, arg))
				reach(&p, i);
		}
	}
	while (p.n_todo) {
		const struct gbpf_ptx_func *f = m->items[p.todo[--p.n_todo]].func;

		for (uint32_t d = 0; d < f->n_directives; d++)
			scan_range(&p, f->directives[d]);
		scan_block(&p, &f->body, 0);
	}
	for (uint32_t i = 0; i < m->n_items; i++) {
		if (m->items[i].kind == GBPF_PTX_ITEM_FUNC && !p.reached[i]) {
			gbpf_ptx_func_free(m->items[i].func);
			removed++;
			continue;
		}
		m->items[w++] = m->items[i];
	}
	m->n_items = w;
	free(p.reached);
	free(p.todo);
	free(p.funcs);
	return removed;
}
