/* SPDX-License-Identifier: MIT */
/* Helpers shared by the PTX sources. */
#ifndef GBPF_CUDA_PTX_INTERNAL_H
#define GBPF_CUDA_PTX_INTERNAL_H

#include "plugins/cuda/ptx/ptx.h"
#include "plugins/cuda/ptx_codegen.h"

#include <string.h>

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

/*
 * Specialising an inlined probe to a site whose context fields are
 * constants (gpu/block: block_index, block_count, kernel_id; memory sites:
 * kind, space, size, site) or registers (mem_addr, mem_value); fold.c.
 */
#define GBPF_PTX_FOLD_MAX_VALS 32 /* also the bits of a pending label's may_ctx */
#define GBPF_PTX_FOLD_MAX_PENDING 64
#define GBPF_PTX_FOLD_STACK_SIZE GBPF_PTX_FRAME_MAX /* the probe's frame (.local): eBPF stack, records */
#define GBPF_PTX_FOLD_MAX_SLOTS 16  /* stack slots forwarded: snapshot registers %__gbpf_fw<N> */
#define GBPF_PTX_FOLD_MAX_CONSTS 32 /* registers followed as constants */

enum { GBPF_PTX_VAL_CTX = 1, GBPF_PTX_VAL_STACK, GBPF_PTX_VAL_STACK_LOCAL };

struct gbpf_ptx_fold {
	/* Set by the caller: */
	struct {
		unsigned off, size;
		uint64_t value;
		const char *reg; /* not NULL: the field's value is in this 64-bit register, not a constant */
	} c[8];
	unsigned n_consts;
	/* Results: */
	bool escaped;      /* the context memory may be read: store the constants there too */
	unsigned folded;   /* loads replaced by constants */
	unsigned localized; /* generic stack accesses made .local */
	unsigned forwarded; /* stack loads replaced by the value stored */
	/* State (gbpf_ptx_fold_begin): */
	const struct gbpf_ptx_module *m;
	const struct gbpf_ptx_block *body; /* the probe function's body */
	const char *stack_name;
	uint32_t at;
	bool leading;      /* still in the body's leading code: no label or branch yet */
	bool in_dead;      /* code after a never-taken alignment branch */
	const struct gbpf_ptx_tok *dead_label;
	struct {
		const struct gbpf_ptx_tok *reg;
		unsigned kind;  /* GBPF_PTX_VAL_* */
		int64_t off;
		bool permanent; /* every write in the leading code: holds after joins */
	} vals[GBPF_PTX_FOLD_MAX_VALS];
	unsigned n_vals;
	/* Registers some statement of the body makes the context pointer (a
	 * parameter load, a 64-bit move from one of them): where paths join,
	 * any of them may hold it (gbpf_ptx_fold_begin). */
	const struct gbpf_ptx_tok *ctx_regs[GBPF_PTX_FOLD_MAX_VALS];
	unsigned n_ctx_regs;
	/* Those that may hold the pointer here without being followed (since
	 * the last join): a read of one escapes, a plain write clears it. */
	const struct gbpf_ptx_tok *tainted[GBPF_PTX_FOLD_MAX_VALS];
	unsigned n_tainted;
	/* Forward branches' ctx_regs that may hold the pointer (bit i:
	 * ctx_regs[i]), per target label not reached yet; a label that does
	 * not fit here counts every register (as a loop head does). */
	struct {
		const struct gbpf_ptx_tok *label;
		uint32_t may_ctx;
	} pending[GBPF_PTX_FOLD_MAX_PENDING];
	unsigned n_pending;
	bool pending_lost;
	struct {
		int64_t off;
		unsigned size;
		bool valid;
		bool is_const;  /* the value stored was the constant value */
		uint64_t value;
	} slots[GBPF_PTX_FOLD_MAX_SLOTS]; /* stack bytes whose value %__gbpf_fw<i> holds */
	unsigned n_slots;
	/* Registers known to hold a constant since the last join (fold_const). */
	struct {
		const struct gbpf_ptx_tok *reg;
		uint64_t value;
	} const_regs[GBPF_PTX_FOLD_MAX_CONSTS];
	unsigned n_const_regs;
	unsigned evaluated; /* statements replaced by the constant they compute */
};

enum gbpf_ptx_fold_action {
	GBPF_PTX_FOLD_KEEP,  /* copy the statement */
	GBPF_PTX_FOLD_SKIP,  /* dead: leave it out */
	GBPF_PTX_FOLD_MOV,   /* mov dest, value instead */
	GBPF_PTX_FOLD_LOCAL, /* same access, .local at [stack+local_off] (operand mem_op) */
	GBPF_PTX_FOLD_SNAP,  /* copy the statement, after keeping its stored value in snap */
	GBPF_PTX_FOLD_FWD,   /* dest = the value snapshot register snap holds (size bytes) */
	GBPF_PTX_FOLD_CONST, /* mov dest, value: the constant the statement computes */
};

struct gbpf_ptx_fold_out {
	enum gbpf_ptx_fold_action action;
	const struct gbpf_ptx_tok *dest;
	uint64_t value;
	const char *reg; /* GBPF_PTX_FOLD_MOV: from this register instead of value */
	uint32_t mem_op;
	int64_t local_off;
	int snap;                            /* snapshot register, -1 if none */
	int snap_hi;                         /* FWD of 8 bytes from two 4-byte slots: the upper one, else -1 */
	const struct gbpf_ptx_tok *snap_src; /* the stored register / immediate */
	unsigned size;
};

/* Start on the statements of @body (the probe's); @stack_name: its stack array. */
void gbpf_ptx_fold_begin(struct gbpf_ptx_fold *f, const struct gbpf_ptx_module *m,
			 const struct gbpf_ptx_block *body, const char *stack_name);
/* Statement @i of the body, in order: what to emit for it. */
enum gbpf_ptx_fold_action gbpf_ptx_fold_stmt(struct gbpf_ptx_fold *f, uint32_t i,
					     struct gbpf_ptx_fold_out *out);
/* After the last statement: settles f->escaped. */
void gbpf_ptx_fold_end(struct gbpf_ptx_fold *f);

/* Tokens @a and @b spell the same text. */
static inline bool gbpf_ptx_tok_same(const struct gbpf_ptx_tok *a, const struct gbpf_ptx_tok *b)
{
	return a->len == b->len && !memcmp(a->s, b->s, a->len);
}

/* Operand @o is [@stack_name] or [@stack_name+N]: *off = N (the code generator's frame accesses; fold.c). */
bool gbpf_ptx_stack_operand(const struct gbpf_ptx_module *m, const struct gbpf_ptx_operand *o,
			    const char *stack_name, int64_t *off);

/* Block @b or a scope nested in it (down to GBPF_PTX_MAX_DEPTH below @depth) defines label @name (fold.c). */
bool gbpf_ptx_defines_label(const struct gbpf_ptx_module *m, const struct gbpf_ptx_block *b,
			    const struct gbpf_ptx_tok *name, int depth);

static inline const struct gbpf_ptx_tok *gbpf_ptx_tok_at(const struct gbpf_ptx_module *m,
							 uint32_t i)
{
	return &m->toks[i];
}

#endif
