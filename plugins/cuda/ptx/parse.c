/* SPDX-License-Identifier: MIT */
/*
 * PTX lexer and parser.
 */
#include "plugins/cuda/ptx/ptx_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gbpf/gbpf.h>

/* Token count cap: a 1 GB PTX would not be JIT-compiled anyway. */
#define MAX_TOKENS (64u << 20)

void gbpf_ptx_log(char *log, size_t log_size, const char *fmt, ...)
{
	va_list ap;

	if (!log || !log_size)
		return;
	va_start(ap, fmt);
	vsnprintf(log, log_size, fmt, ap);
	va_end(ap);
}

bool gbpf_ptx_tok_eq(const struct gbpf_ptx_tok *t, const char *s)
{
	size_t n = strlen(s);

	return t->len == n && !memcmp(t->s, s, n);
}

bool gbpf_ptx_op_has(const struct gbpf_ptx_tok *op, const char *word)
{
	size_t n = strlen(word);

	for (uint32_t i = 0; i + n <= op->len; i++)
		if ((i == 0 || op->s[i - 1] == '.') && !memcmp(op->s + i, word, n) &&
		    (i + n == op->len || op->s[i + n] == '.'))
			return true;
	return false;
}

const char *gbpf_ptx_func_name(const struct gbpf_ptx_module *m, const struct gbpf_ptx_func *f,
			       char *buf, size_t size)
{
	const struct gbpf_ptx_tok *t = &m->toks[f->name];

	snprintf(buf, size, "%.*s", (int)t->len, t->s);
	return buf;
}

static bool is_word_start(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$';
}

static bool is_word_char(char c)
{
	return is_word_start(c) || (c >= '0' && c <= '9');
}

/* Length of a dotted word starting at p (name, then .word or ::word parts). */
static size_t dotted_len(const char *p, const char *end, size_t i)
{
	for (;;) {
		while (p + i < end && is_word_char(p[i]))
			i++;
		if (p + i + 1 < end && p[i] == '.' && is_word_char(p[i + 1]))
			i++;
		else if (p + i + 2 < end && p[i] == ':' && p[i + 1] == ':' && is_word_char(p[i + 2]))
			i += 2;
		else
			return i;
	}
}

static int push_tok(struct gbpf_ptx_module *m, const struct gbpf_ptx_tok *t)
{
	if (m->n_toks == m->cap_toks) {
		uint32_t ncap = m->cap_toks ? m->cap_toks * 2 : 1024;
		struct gbpf_ptx_tok *n;

		if (m->cap_toks >= MAX_TOKENS)
			return -E2BIG;
		n = realloc(m->toks, (size_t)ncap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		m->toks = n;
		m->cap_toks = ncap;
	}
	m->toks[m->n_toks++] = *t;
	return 0;
}

int gbpf_ptx_lex_into(struct gbpf_ptx_module *m, const char *text, size_t len, bool keep_comments,
		      uint32_t *first, char *log, size_t log_size)
{
	const char *p = text, *end = text + len;
	uint32_t line = 1;
	bool nl = true;
	int err;

	if (first)
		*first = m->n_toks;
	while (p < end) {
		struct gbpf_ptx_tok t = {.s = p, .line = line};
		char c = *p;

		if (c == '\n') {
			nl = true;
			line++;
			p++;
			continue;
		}
		if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
			p++;
			continue;
		}
		if (c == '/' && p + 1 < end && p[1] == '/') {
			while (p < end && *p != '\n')
				p++;
			t.kind = GBPF_PTX_TOK_COMMENT;
		} else if (c == '/' && p + 1 < end && p[1] == '*') {
			p += 2;
			while (p + 1 < end && !(p[0] == '*' && p[1] == '/')) {
				if (*p == '\n')
					line++;
				p++;
			}
			if (p + 1 >= end) {
				gbpf_ptx_log(log, log_size, "%s:%u: unterminated comment",
					     m->filename ? m->filename : "<ptx>", t.line);
				return -GBPF_ERRNO__FORMAT;
			}
			p += 2;
			t.kind = GBPF_PTX_TOK_COMMENT;
		} else if (c == '"') {
			p++;
			while (p < end && *p != '"' && *p != '\n') {
				if (*p == '\\' && p + 1 < end && p[1] != '\n')
					p++;
				p++;
			}
			if (p >= end || *p != '"') {
				gbpf_ptx_log(log, log_size, "%s:%u: unterminated string",
					     m->filename ? m->filename : "<ptx>", t.line);
				return -GBPF_ERRNO__FORMAT;
			}
			p++;
			t.kind = GBPF_PTX_TOK_STR;
		} else if (c == '.' && p + 1 < end && is_word_char(p[1])) {
			p += dotted_len(p, end, 1);
			t.kind = GBPF_PTX_TOK_DOT;
		} else if (c == '%' && p + 1 < end && is_word_char(p[1])) {
			p += dotted_len(p, end, 1);
			t.kind = GBPF_PTX_TOK_REG;
		} else if (is_word_start(c)) {
			p += dotted_len(p, end, 0);
			t.kind = GBPF_PTX_TOK_IDENT;
		} else if (c >= '0' && c <= '9') {
			while (p < end && (is_word_char(*p) || *p == '.'))
				p++;
			t.kind = GBPF_PTX_TOK_NUM;
		} else if (strchr("{}()[],;:+-@!<>=|*/&^~?", c) && c) {
			p++;
			t.kind = GBPF_PTX_TOK_PUNCT;
		} else {
			gbpf_ptx_log(log, log_size, "%s:%u: unexpected character 0x%02x",
				     m->filename ? m->filename : "<ptx>", line,
				     (unsigned char)c);
			return -GBPF_ERRNO__FORMAT;
		}
		t.len = (uint32_t)(p - t.s);
		t.nl_before = nl;
		nl = false;
		if (t.kind == GBPF_PTX_TOK_COMMENT && !keep_comments)
			continue;
		err = push_tok(m, &t);
		if (err) {
			gbpf_ptx_log(log, log_size, "%s:%u: too many tokens",
				     m->filename ? m->filename : "<ptx>", line);
			return err;
		}
	}
	return 0;
}

int gbpf_ptx_tokenize(const char *text, size_t len, bool keep_comments, struct gbpf_ptx_tok **toks,
		      char *log, size_t log_size)
{
	struct gbpf_ptx_module m = {0};
	int err;

	*toks = NULL;
	err = gbpf_ptx_lex_into(&m, text, len, keep_comments, NULL, log, log_size);
	if (err) {
		free(m.toks);
		return err;
	}
	*toks = m.toks;
	return (int)m.n_toks;
}

int gbpf_ptx_module_own(struct gbpf_ptx_module *m, char *text)
{
	if (m->n_texts == m->cap_texts) {
		uint32_t ncap = m->cap_texts ? m->cap_texts * 2 : 8;
		char **n = realloc(m->texts, ncap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		m->texts = n;
		m->cap_texts = ncap;
	}
	m->texts[m->n_texts++] = text;
	return 0;
}

/* ---- blocks and statements ---------------------------------------- */

int gbpf_ptx_block_insert(struct gbpf_ptx_block *b, uint32_t at, struct gbpf_ptx_stmt **v,
			  uint32_t n)
{
	if (at > b->n)
		return -EINVAL;
	if (b->n + n > b->cap) {
		uint32_t ncap = b->cap ? b->cap : 16;
		struct gbpf_ptx_stmt **nv;

		while (ncap < b->n + n)
			ncap *= 2;
		nv = realloc(b->v, ncap * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		b->v = nv;
		b->cap = ncap;
	}
	memmove(b->v + at + n, b->v + at, (b->n - at) * sizeof(*b->v));
	memcpy(b->v + at, v, n * sizeof(*v));
	b->n += n;
	return 0;
}

void gbpf_ptx_stmt_free(struct gbpf_ptx_stmt *s)
{
	if (!s)
		return;
	free(s->ops);
	gbpf_ptx_block_free(&s->body);
	free(s);
}

void gbpf_ptx_block_free(struct gbpf_ptx_block *b)
{
	for (uint32_t i = 0; i < b->n; i++)
		gbpf_ptx_stmt_free(b->v[i]);
	free(b->v);
	memset(b, 0, sizeof(*b));
}

void gbpf_ptx_func_free(struct gbpf_ptx_func *f)
{
	if (!f)
		return;
	free(f->rets);
	free(f->params);
	free(f->directives);
	gbpf_ptx_block_free(&f->body);
	free(f);
}

void gbpf_ptx_module_free(struct gbpf_ptx_module *m)
{
	if (!m)
		return;
	for (uint32_t i = 0; i < m->n_items; i++)
		gbpf_ptx_func_free(m->items[i].func);
	for (uint32_t i = 0; i < m->n_texts; i++)
		free(m->texts[i]);
	free(m->texts);
	free(m->items);
	free(m->toks);
	free(m->filename);
	free(m);
}

static bool is_punct(const struct gbpf_ptx_tok *t, char c)
{
	return t->kind == GBPF_PTX_TOK_PUNCT && t->s[0] == c;
}

static const char *fname(const struct gbpf_ptx_module *m)
{
	return m->filename ? m->filename : "<ptx>";
}

/* Index just after the ';' ending the statement at pos, skipping bracketed
 * groups; or end + 1 (as an error marker) if none. */
static uint32_t find_semicolon(const struct gbpf_ptx_module *m, uint32_t pos, uint32_t end)
{
	int depth = 0;

	for (uint32_t i = pos; i < end; i++) {
		const struct gbpf_ptx_tok *t = &m->toks[i];

		if (t->kind != GBPF_PTX_TOK_PUNCT)
			continue;
		if (t->s[0] == '(' || t->s[0] == '[' || t->s[0] == '{')
			depth++;
		else if ((t->s[0] == ')' || t->s[0] == ']' || t->s[0] == '}') && depth > 0)
			depth--;
		else if (t->s[0] == ';' && depth == 0)
			return i + 1;
		else if (t->s[0] == '}' && depth == 0)
			return end + 1; /* block closes before the ';' */
	}
	return end + 1;
}

/* Index after the last token on the same line as the token at pos. */
static uint32_t line_end(const struct gbpf_ptx_module *m, uint32_t pos, uint32_t end)
{
	uint32_t i = pos + 1;

	while (i < end && !m->toks[i].nl_before)
		i++;
	return i;
}

static enum gbpf_ptx_operand_kind classify(const struct gbpf_ptx_module *m, uint32_t first,
					   uint32_t n)
{
	const struct gbpf_ptx_tok *t = &m->toks[first];

	if (!n)
		return GBPF_PTX_OP_OTHER;
	if (is_punct(t, '['))
		return GBPF_PTX_OP_MEM;
	if (is_punct(t, '{'))
		return GBPF_PTX_OP_VEC;
	if (is_punct(t, '('))
		return GBPF_PTX_OP_LIST;
	if (t->kind == GBPF_PTX_TOK_REG || (is_punct(t, '!') && n > 1))
		return GBPF_PTX_OP_REG;
	if (t->kind == GBPF_PTX_TOK_NUM || (is_punct(t, '-') && n > 1))
		return GBPF_PTX_OP_IMM;
	if (t->kind == GBPF_PTX_TOK_IDENT)
		return n == 1 ? GBPF_PTX_OP_SYM : GBPF_PTX_OP_OTHER;
	return GBPF_PTX_OP_OTHER;
}

static int parse_insn(struct gbpf_ptx_module *m, uint32_t pos, uint32_t stop,
		      struct gbpf_ptx_stmt *s, char *log, size_t log_size)
{
	uint32_t i = pos, cap = 0, start;
	int depth = 0;

	s->kind = GBPF_PTX_STMT_INSN;
	s->pred = -1;
	if (is_punct(&m->toks[i], '@')) {
		i++;
		if (i < stop && is_punct(&m->toks[i], '!')) {
			s->pred_neg = true;
			i++;
		}
		if (i >= stop || m->toks[i].kind != GBPF_PTX_TOK_REG) {
			gbpf_ptx_log(log, log_size, "%s:%u: predicate register expected after '@'",
				     fname(m), m->toks[pos].line);
			return -GBPF_ERRNO__FORMAT;
		}
		s->pred = (int32_t)i++;
	}
	if (i >= stop || m->toks[i].kind != GBPF_PTX_TOK_IDENT) {
		gbpf_ptx_log(log, log_size, "%s:%u: instruction opcode expected", fname(m),
			     m->toks[pos].line);
		return -GBPF_ERRNO__FORMAT;
	}
	s->opcode = i++;
	/* Operands: comma-separated groups before the final ';'. */
	start = i;
	for (; i < stop; i++) {
		const struct gbpf_ptx_tok *t = &m->toks[i];
		bool last = i + 1 == stop;

		if (t->kind == GBPF_PTX_TOK_COMMENT)
			continue;
		if (t->kind == GBPF_PTX_TOK_PUNCT) {
			if (strchr("([{", t->s[0]))
				depth++;
			else if (strchr(")]}", t->s[0]))
				depth--;
		}
		if ((depth == 0 && is_punct(t, ',')) || last) {
			uint32_t n = i - start;

			if (start == i && last && s->n_ops == 0)
				break; /* no operands */
			if (n == 0) {
				gbpf_ptx_log(log, log_size, "%s:%u: empty operand %u", fname(m),
					     t->line, s->n_ops);
				return -GBPF_ERRNO__FORMAT;
			}
			if (s->n_ops == cap) {
				uint32_t ncap = cap ? cap * 2 : 4;
				struct gbpf_ptx_operand *nv =
					realloc(s->ops, ncap * sizeof(*nv));

				if (!nv)
					return -ENOMEM;
				s->ops = nv;
				cap = ncap;
			}
			s->ops[s->n_ops].toks.first = start;
			s->ops[s->n_ops].toks.n = n;
			s->ops[s->n_ops].kind = classify(m, start, n);
			s->n_ops++;
			start = i + 1;
		}
	}
	return 0;
}

static bool is_nl_directive(const struct gbpf_ptx_tok *t)
{
	return gbpf_ptx_tok_eq(t, ".loc") || gbpf_ptx_tok_eq(t, ".file") ||
	       gbpf_ptx_tok_eq(t, ".version") || gbpf_ptx_tok_eq(t, ".target") ||
	       gbpf_ptx_tok_eq(t, ".address_size");
}

int gbpf_ptx_parse_block(struct gbpf_ptx_module *m, uint32_t *pos, uint32_t end,
			 struct gbpf_ptx_block *b, int depth, char *log, size_t log_size)
{
	uint32_t i = *pos;
	int err;

	if (depth > GBPF_PTX_MAX_DEPTH) {
		gbpf_ptx_log(log, log_size, "%s:%u: scopes nested deeper than %d", fname(m),
			     i < end ? m->toks[i].line : 0, GBPF_PTX_MAX_DEPTH);
		return -GBPF_ERRNO__FORMAT;
	}
	while (i < end) {
		const struct gbpf_ptx_tok *t = &m->toks[i];
		struct gbpf_ptx_stmt *s;
		uint32_t stop;

		if (is_punct(t, '}')) {
			if (depth == 0) {
				gbpf_ptx_log(log, log_size, "%s:%u: unbalanced '}'", fname(m),
					     t->line);
				return -GBPF_ERRNO__FORMAT;
			}
			*pos = i + 1;
			return 0;
		}
		s = calloc(1, sizeof(*s));
		if (!s)
			return -ENOMEM;
		s->line = t->line;
		s->pred = -1;
		s->toks.first = i;
		if (is_punct(t, '{')) {
			uint32_t j = i + 1;

			s->kind = GBPF_PTX_STMT_SCOPE;
			s->toks.n = 1;
			err = gbpf_ptx_parse_block(m, &j, end, &s->body, depth + 1, log, log_size);
			if (err)
				goto fail;
			i = j;
		} else if (t->kind == GBPF_PTX_TOK_COMMENT) {
			s->kind = GBPF_PTX_STMT_COMMENT;
			s->toks.n = 1;
			i++;
		} else if (t->kind == GBPF_PTX_TOK_IDENT && i + 1 < end &&
			   is_punct(&m->toks[i + 1], ':')) {
			s->kind = GBPF_PTX_STMT_LABEL;
			s->toks.n = 2;
			i += 2;
		} else if (t->kind == GBPF_PTX_TOK_DOT && is_nl_directive(t)) {
			s->kind = GBPF_PTX_STMT_DIRECTIVE;
			s->nl_terminated = true;
			stop = line_end(m, i, end);
			s->toks.n = stop - i;
			i = stop;
		} else if (t->kind == GBPF_PTX_TOK_DOT || t->kind == GBPF_PTX_TOK_IDENT ||
			   is_punct(t, '@')) {
			stop = find_semicolon(m, i, end);
			if (stop > end) {
				gbpf_ptx_log(log, log_size, "%s:%u: statement '%.*s' lacks its ';'",
					     fname(m), t->line, (int)t->len, t->s);
				err = -GBPF_ERRNO__FORMAT;
				goto fail;
			}
			s->toks.n = stop - i;
			if (t->kind == GBPF_PTX_TOK_DOT) {
				s->kind = GBPF_PTX_STMT_DIRECTIVE;
			} else {
				err = parse_insn(m, i, stop, s, log, log_size);
				if (err)
					goto fail;
			}
			i = stop;
		} else {
			gbpf_ptx_log(log, log_size, "%s:%u: unexpected '%.*s' in a function body",
				     fname(m), t->line, (int)t->len, t->s);
			err = -GBPF_ERRNO__FORMAT;
			goto fail;
		}
		err = gbpf_ptx_block_insert(b, b->n, &s, 1);
		if (err)
			goto fail;
		continue;
fail:
		gbpf_ptx_stmt_free(s);
		return err;
	}
	if (depth > 0) {
		gbpf_ptx_log(log, log_size, "%s: '{' not closed at end of text", fname(m));
		return -GBPF_ERRNO__FORMAT;
	}
	*pos = i;
	return 0;
}

/* ---- module level ------------------------------------------------- */

static int push_item(struct gbpf_ptx_module *m, const struct gbpf_ptx_item *it)
{
	if (m->n_items == m->cap_items) {
		uint32_t ncap = m->cap_items ? m->cap_items * 2 : 32;
		struct gbpf_ptx_item *n = realloc(m->items, ncap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		m->items = n;
		m->cap_items = ncap;
	}
	m->items[m->n_items++] = *it;
	return 0;
}

static int push_range(struct gbpf_ptx_range **v, uint32_t *n, uint32_t first, uint32_t count)
{
	struct gbpf_ptx_range *nv = realloc(*v, (*n + 1) * sizeof(**v));

	if (!nv)
		return -ENOMEM;
	*v = nv;
	nv[*n].first = first;
	nv[*n].n = count;
	(*n)++;
	return 0;
}

/* Parse "( a, b, c )" at *pos into ranges (the parentheses excluded). */
static int parse_param_list(struct gbpf_ptx_module *m, uint32_t *pos, uint32_t end,
			    struct gbpf_ptx_range **v, uint32_t *n, char *log, size_t log_size)
{
	uint32_t i = *pos + 1, start = i;
	int depth = 0, err;

	for (; i < end; i++) {
		const struct gbpf_ptx_tok *t = &m->toks[i];

		if (t->kind == GBPF_PTX_TOK_COMMENT)
			continue;
		if (is_punct(t, '(') || is_punct(t, '['))
			depth++;
		else if (is_punct(t, ']'))
			depth--;
		else if (is_punct(t, ')') && depth > 0)
			depth--;
		else if ((is_punct(t, ',') || is_punct(t, ')')) && depth == 0) {
			if (i > start) {
				err = push_range(v, n, start, i - start);
				if (err)
					return err;
			} else if (is_punct(t, ',')) {
				gbpf_ptx_log(log, log_size, "%s:%u: empty parameter", fname(m),
					     t->line);
				return -GBPF_ERRNO__FORMAT;
			}
			start = i + 1;
			if (is_punct(t, ')')) {
				*pos = i + 1;
				return 0;
			}
		}
	}
	gbpf_ptx_log(log, log_size, "%s:%u: parameter list not closed", fname(m),
		     m->toks[*pos].line);
	return -GBPF_ERRNO__FORMAT;
}

static int parse_func(struct gbpf_ptx_module *m, uint32_t *pos, uint32_t end, char *log,
		      size_t log_size)
{
	struct gbpf_ptx_func *f = calloc(1, sizeof(*f));
	struct gbpf_ptx_item it = {.kind = GBPF_PTX_ITEM_FUNC};
	uint32_t i = *pos;
	int err = -GBPF_ERRNO__FORMAT;

	if (!f)
		return -ENOMEM;
	f->prefix.first = i;
	while (i < end && m->toks[i].kind == GBPF_PTX_TOK_DOT) {
		bool kw = gbpf_ptx_tok_eq(&m->toks[i], ".entry") ||
			  gbpf_ptx_tok_eq(&m->toks[i], ".func");

		f->is_entry |= gbpf_ptx_tok_eq(&m->toks[i], ".entry");
		i++;
		if (kw)
			break;
	}
	f->prefix.n = i - f->prefix.first;
	if (i < end && is_punct(&m->toks[i], '(')) {
		f->has_ret = true;
		err = parse_param_list(m, &i, end, &f->rets, &f->n_rets, log, log_size);
		if (err)
			goto fail;
	}
	if (i >= end || m->toks[i].kind != GBPF_PTX_TOK_IDENT) {
		gbpf_ptx_log(log, log_size, "%s:%u: function name expected", fname(m),
			     m->toks[i < end ? i : *pos].line);
		err = -GBPF_ERRNO__FORMAT;
		goto fail;
	}
	f->name = i++;
	if (i < end && is_punct(&m->toks[i], '(')) {
		f->has_params = true;
		err = parse_param_list(m, &i, end, &f->params, &f->n_params, log, log_size);
		if (err)
			goto fail;
	}
	/* Performance directives until '{' or ';'. */
	while (i < end && !is_punct(&m->toks[i], '{') && !is_punct(&m->toks[i], ';')) {
		uint32_t start = i;

		if (m->toks[i].kind != GBPF_PTX_TOK_DOT) {
			gbpf_ptx_log(log, log_size, "%s:%u: unexpected '%.*s' after function %.*s",
				     fname(m), m->toks[i].line, (int)m->toks[i].len, m->toks[i].s,
				     (int)m->toks[f->name].len, m->toks[f->name].s);
			err = -GBPF_ERRNO__FORMAT;
			goto fail;
		}
		i++;
		while (i < end && m->toks[i].kind != GBPF_PTX_TOK_DOT &&
		       !is_punct(&m->toks[i], '{') && !is_punct(&m->toks[i], ';'))
			i++;
		/* A ';' right after a directive (.pragma "x";) belongs to it. */
		if (i < end && is_punct(&m->toks[i], ';') &&
		    gbpf_ptx_tok_eq(&m->toks[start], ".pragma"))
			i++;
		err = push_range(&f->directives, &f->n_directives, start, i - start);
		if (err)
			goto fail;
	}
	if (i >= end) {
		gbpf_ptx_log(log, log_size, "%s: function %.*s has no body and no ';'", fname(m),
			     (int)m->toks[f->name].len, m->toks[f->name].s);
		err = -GBPF_ERRNO__FORMAT;
		goto fail;
	}
	if (is_punct(&m->toks[i], ';')) {
		i++;
	} else {
		f->has_body = true;
		i++;
		err = gbpf_ptx_parse_block(m, &i, end, &f->body, 1, log, log_size);
		if (err)
			goto fail;
	}
	it.func = f;
	it.toks.first = *pos;
	it.toks.n = i - *pos;
	err = push_item(m, &it);
	if (err)
		goto fail;
	*pos = i;
	return 0;
fail:
	gbpf_ptx_func_free(f);
	return err;
}

/* Whether the declaration starting at pos is a function: .entry/.func
 * before the first '(' , '{' or ';'. */
static bool starts_func(const struct gbpf_ptx_module *m, uint32_t pos, uint32_t end)
{
	for (uint32_t i = pos; i < end; i++) {
		const struct gbpf_ptx_tok *t = &m->toks[i];

		if (t->kind != GBPF_PTX_TOK_DOT)
			return false;
		if (gbpf_ptx_tok_eq(t, ".entry") || gbpf_ptx_tok_eq(t, ".func"))
			return true;
	}
	return false;
}

static void parse_version(struct gbpf_ptx_module *m, uint32_t i, uint32_t end)
{
	unsigned maj = 0, min = 0;
	char buf[32];

	if (i + 1 >= end || m->toks[i + 1].kind != GBPF_PTX_TOK_NUM || m->toks[i + 1].len >= 32)
		return;
	snprintf(buf, sizeof(buf), "%.*s", (int)m->toks[i + 1].len, m->toks[i + 1].s);
	if (sscanf(buf, "%u.%u", &maj, &min) >= 1) {
		m->version_major = maj;
		m->version_minor = min;
	}
}

int gbpf_ptx_parse_items(struct gbpf_ptx_module *m, uint32_t first, char *log, size_t log_size)
{
	uint32_t i = first, end = m->n_toks;
	int err;

	while (i < end) {
		const struct gbpf_ptx_tok *t = &m->toks[i];
		struct gbpf_ptx_item it = {0};
		uint32_t stop;

		if (t->kind == GBPF_PTX_TOK_COMMENT) {
			it.kind = GBPF_PTX_ITEM_COMMENT;
			stop = i + 1;
		} else if (t->kind == GBPF_PTX_TOK_DOT && is_nl_directive(t)) {
			it.kind = GBPF_PTX_ITEM_DIRECTIVE;
			stop = line_end(m, i, end);
			if (gbpf_ptx_tok_eq(t, ".version"))
				parse_version(m, i, stop);
		} else if (t->kind == GBPF_PTX_TOK_DOT && gbpf_ptx_tok_eq(t, ".section")) {
			int depth = 0;

			it.kind = GBPF_PTX_ITEM_RAW;
			for (stop = i + 1; stop < end; stop++) {
				if (is_punct(&m->toks[stop], '{'))
					depth++;
				else if (is_punct(&m->toks[stop], '}') && --depth == 0)
					break;
			}
			if (stop >= end) {
				gbpf_ptx_log(log, log_size, "%s:%u: .section not closed", fname(m),
					     t->line);
				return -GBPF_ERRNO__FORMAT;
			}
			stop++;
		} else if (t->kind == GBPF_PTX_TOK_DOT && starts_func(m, i, end)) {
			err = parse_func(m, &i, end, log, log_size);
			if (err)
				return err;
			continue;
		} else if (t->kind == GBPF_PTX_TOK_DOT) {
			it.kind = GBPF_PTX_ITEM_DECL;
			stop = find_semicolon(m, i, end);
			if (stop > end) {
				gbpf_ptx_log(log, log_size,
					     "%s:%u: module-scope declaration '%.*s' lacks its ';'",
					     fname(m), t->line, (int)t->len, t->s);
				return -GBPF_ERRNO__FORMAT;
			}
		} else {
			gbpf_ptx_log(log, log_size, "%s:%u: unexpected '%.*s' at module scope",
				     fname(m), t->line, (int)t->len, t->s);
			return -GBPF_ERRNO__FORMAT;
		}
		it.toks.first = i;
		it.toks.n = stop - i;
		err = push_item(m, &it);
		if (err)
			return err;
		i = stop;
	}
	return 0;
}

struct gbpf_ptx_module *gbpf_ptx_parse(const char *text, size_t len, const char *filename,
				       char *log, size_t log_size)
{
	struct gbpf_ptx_module *m = calloc(1, sizeof(*m));
	char *copy = NULL;
	int err = -ENOMEM;

	if (!m)
		goto fail;
	if (filename && !(m->filename = strdup(filename)))
		goto fail;
	copy = malloc(len + 1);
	if (!copy)
		goto fail;
	memcpy(copy, text, len);
	copy[len] = 0;
	err = gbpf_ptx_module_own(m, copy);
	if (err) {
		free(copy);
		goto fail;
	}
	err = gbpf_ptx_lex_into(m, copy, len, true, NULL, log, log_size);
	if (err)
		goto fail;
	err = gbpf_ptx_parse_items(m, 0, log, log_size);
	if (err)
		goto fail;
	return m;
fail:
	gbpf_ptx_module_free(m);
	errno = err == -ENOMEM ? ENOMEM : EINVAL;
	return NULL;
}
