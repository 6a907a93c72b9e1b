/* SPDX-License-Identifier: MIT */
/* Helpers shared by the PTX sources. */
#ifndef GBPF_CUDA_PTX_INTERNAL_H
#define GBPF_CUDA_PTX_INTERNAL_H

#include "plugins/cuda/ptx/ptx.h"

/* Nesting limit of { } scopes: bounds recursion on hostile input. */
#define GBPF_PTX_MAX_DEPTH 200

void gbpf_ptx_log(char *log, size_t log_size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Lex @len bytes of @text (owned by the module afterwards when @own) and
 * append the tokens to @m; first index in *first. */
int gbpf_ptx_lex_into(struct gbpf_ptx_module *m, const char *text, size_t len, bool keep_comments,
		      uint32_t *first, char *log, size_t log_size);

/* Take ownership of a malloc'ed text buffer. */
int gbpf_ptx_module_own(struct gbpf_ptx_module *m, char *text);

/* Parse statements of tokens [*pos, end) into @b until a closing '}' (when
 * @depth > 0) or @end; *pos ends after the '}' consumed. */
int gbpf_ptx_parse_block(struct gbpf_ptx_module *m, uint32_t *pos, uint32_t end,
			 struct gbpf_ptx_block *b, int depth, char *log, size_t log_size);

/* Parse module-scope items from token @first to the end, appending them to
 * m->items. */
int gbpf_ptx_parse_items(struct gbpf_ptx_module *m, uint32_t first, char *log, size_t log_size);

int gbpf_ptx_block_insert(struct gbpf_ptx_block *b, uint32_t at, struct gbpf_ptx_stmt **v,
			  uint32_t n);
void gbpf_ptx_block_free(struct gbpf_ptx_block *b);
void gbpf_ptx_stmt_free(struct gbpf_ptx_stmt *s);
void gbpf_ptx_func_free(struct gbpf_ptx_func *f);

static inline const struct gbpf_ptx_tok *gbpf_ptx_tok_at(const struct gbpf_ptx_module *m,
							 uint32_t i)
{
	return &m->toks[i];
}

#endif
