/* SPDX-License-Identifier: MIT */
/*
 * Specialising an inlined probe to its site (gpu/block, gpu/mem).
 *
 * At a basic-block site the block's index, the block count and the kernel
 * id are constants. The code generator reads them through the context
 * pointer and passes helper arguments (map keys) through generic pointers
 * into the probe's stack; ptxas can see through neither, so a counter
 * indexed by the block would cost context stores, local-memory loads and
 * a computed address at every block. Here the probe's statements are
 * followed in order with a small symbolic state (which registers hold the
 * context pointer or an address in the probe's stack, at a known offset):
 *   - a load of a constant field through the context becomes a move of
 *     the constant;
 *   - a generic load or store at a known stack address becomes a .local
 *     access at a constant offset, which ptxas forwards and keeps in
 *     registers;
 *   - the code generator's alignment check of such a pointer, which always
 *     passes (context and stack are 8-byte aligned), is reduced to its
 *     constant, and its never-taken byte path is dropped.
 * (Memory sites fold the same way: the access's kind, space, size and
 * site are constants there, its address and value registers.)
 *
 * Between joins, registers holding constants (a folded field, an
 * immediate, a forwarded stack slot that was stored one) are followed too,
 * and integer arithmetic on constants only becomes a move of its result
 * (fold_const): a hash map key built from the site's fields is then hashed
 * here, once, instead of at every site by ptxas, which leaves 64-bit
 * multiplications of constants to run (~20 instructions a lookup of
 * mem_trace's counters on sm_90).
 *
 * The state is exact in the probe's leading code (up to its first label or
 * branch). At a label (a join) only registers whose every write lies in
 * that leading code are kept (the leading code runs first, so their values
 * reach every later use); between two labels the code is straight again
 * and new values are followed until the next label. Registers that may
 * hold the context pointer on some way into a join (what each forward
 * branch to it carried, the fall-through's, a loop's own copies) but are
 * not kept are "tainted": reading one before it is written again escapes.
 * The code generator loads context fields through its own copy of the
 * pointer (%rctx, written once in the leading code), so a register that
 * held the pointer before a join and is only overwritten later costs
 * nothing.
 *
 * When the context pointer may still be read in a way not followed here
 * (arithmetic on it, a store of it, a tainted register read), the fold is
 * "escaped" and the site also stores the constants into the context
 * memory, so the probe reads correct values either way.
 */
#include "plugins/cuda/ptx/ptx_internal.h"

#include <stdlib.h>
#include <string.h>

static void slots_clear(struct gbpf_ptx_fold *f);

static int val_find(const struct gbpf_ptx_fold *f, const struct gbpf_ptx_tok *t)
{
	for (unsigned i = 0; i < f->n_vals; i++)
		if (gbpf_ptx_tok_same(f->vals[i].reg, t))
			return (int)i;
	return -1;
}

static int taint_find(const struct gbpf_ptx_fold *f, const struct gbpf_ptx_tok *t)
{
	for (unsigned i = 0; i < f->n_tainted; i++)
		if (gbpf_ptx_tok_same(f->tainted[i], t))
			return (int)i;
	return -1;
}

/* @t was written by a plain (unpredicated) write: it no longer holds the pointer. */
static void taint_clear(struct gbpf_ptx_fold *f, const struct gbpf_ptx_tok *t)
{
	int i = taint_find(f, t);

	if (i >= 0)
		f->tainted[i] = f->tainted[--f->n_tainted];
}

/* ---- registers holding constants ------------------------------------ */

static int const_find(const struct gbpf_ptx_fold *f, const struct gbpf_ptx_tok *t)
{
	for (unsigned i = 0; i < f->n_const_regs; i++)
		if (gbpf_ptx_tok_same(f->const_regs[i].reg, t))
			return (int)i;
	return -1;
}

static void const_drop(struct gbpf_ptx_fold *f, const struct gbpf_ptx_tok *t)
{
	int i = const_find(f, t);

	if (i >= 0)
		f->const_regs[i] = f->const_regs[--f->n_const_regs];
}

/* @t holds @value from here (a full table forgets it: the statement is kept as it is). */
static void const_set(struct gbpf_ptx_fold *f, const struct gbpf_ptx_tok *t, uint64_t value)
{
	int i = const_find(f, t);

	if (i < 0) {
		if (f->n_const_regs == GBPF_PTX_FOLD_MAX_CONSTS)
			return;
		i = (int)f->n_const_regs++;
	}
	f->const_regs[i].reg = t;
	f->const_regs[i].value = value;
}

/* @t no longer holds a followed value; @overwritten: by a plain write. */
static void val_drop(struct gbpf_ptx_fold *f, const struct gbpf_ptx_tok *t, bool overwritten)
{
	int i = val_find(f, t);

	if (i < 0)
		return;
	if (f->vals[i].kind == GBPF_PTX_VAL_CTX && !overwritten)
		f->escaped = true; /* may still hold the pointer: its reads are not followed */
	f->vals[i] = f->vals[--f->n_vals];
}

static void val_set(struct gbpf_ptx_fold *f, const struct gbpf_ptx_tok *t, unsigned kind,
		    int64_t off)
{
	int i = val_find(f, t);

	if (i < 0) {
		if (f->n_vals == GBPF_PTX_FOLD_MAX_VALS) {
			if (kind == GBPF_PTX_VAL_CTX)
				f->escaped = true;
			return;
		}
		i = (int)f->n_vals++;
	}
	taint_clear(f, t);
	const_drop(f, t);
	f->vals[i].reg = t;
	f->vals[i].kind = kind;
	f->vals[i].off = off;
	f->vals[i].permanent = false;
}

static const struct gbpf_ptx_tok *op_tok(const struct gbpf_ptx_module *m, const struct gbpf_ptx_stmt *s,
					 uint32_t o)
{
	return &m->toks[s->ops[o].toks.first];
}

static bool op_is_reg(const struct gbpf_ptx_stmt *s, uint32_t o)
{
	return o < s->n_ops && s->ops[o].kind == GBPF_PTX_OP_REG && s->ops[o].toks.n == 1;
}

static bool op_is_imm(const struct gbpf_ptx_module *m, const struct gbpf_ptx_stmt *s, uint32_t o,
		      int64_t *v)
{
	const struct gbpf_ptx_range r = s->ops[o].toks;
	bool neg = false;
	const struct gbpf_ptx_tok *n;

	if (o >= s->n_ops || s->ops[o].kind != GBPF_PTX_OP_IMM || !r.n || r.n > 2)
		return false;
	if (r.n == 2) {
		if (!gbpf_ptx_tok_eq(&m->toks[r.first], "-"))
			return false;
		neg = true;
	}
	n = &m->toks[r.first + r.n - 1];
	/* 0d/0f floats are not offsets; hex and decimal integers are. */
	if (n->len > 1 && n->s[0] == '0' && (n->s[1] | 0x20) != 'x' && (n->s[1] < '0' || n->s[1] > '9'))
		return false;
	*v = (int64_t)strtoull(n->s, NULL, 0);
	if (neg)
		*v = -*v;
	return true;
}

/* Operand @o as a constant (@bits wide): an immediate or a register holding one. */
static bool const_operand(const struct gbpf_ptx_fold *f, const struct gbpf_ptx_stmt *s, uint32_t o,
			  unsigned bits, uint64_t *v)
{
	uint64_t mask = bits == 64 ? ~0ull : (1ull << bits) - 1;
	int64_t imm;
	int i;

	if (op_is_imm(f->m, s, o, &imm)) {
		*v = (uint64_t)imm & mask;
		return true;
	}
	if (!op_is_reg(s, o) || (i = const_find(f, op_tok(f->m, s, o))) < 0)
		return false;
	*v = f->const_regs[i].value & mask;
	return true;
}

/* Writes of register @r in @b[from, to) (destinations are operand 0). */
static unsigned count_writes(const struct gbpf_ptx_module *m, const struct gbpf_ptx_block *b,
			     uint32_t from, uint32_t to, const struct gbpf_ptx_tok *r, int depth)
{
	unsigned n = 0;

	if (depth > GBPF_PTX_MAX_DEPTH)
		return 1u << 20;
	for (uint32_t i = from; i < to && i < b->n; i++) {
		const struct gbpf_ptx_stmt *s = b->v[i];

		if (s->kind == GBPF_PTX_STMT_SCOPE) {
			n += count_writes(m, &s->body, 0, s->body.n, r, depth + 1);
			continue;
		}
		if (s->kind != GBPF_PTX_STMT_INSN || !s->n_ops)
			continue;
		for (uint32_t j = s->ops[0].toks.first; j < s->ops[0].toks.first + s->ops[0].toks.n; j++)
			if (m->toks[j].kind == GBPF_PTX_TOK_REG && gbpf_ptx_tok_same(&m->toks[j], r))
				n++;
	}
	return n;
}

/*
 * The leading code ends before statement @at (the first label or branch):
 * a value whose every write lies in it is the same on every path after it.
 */
static void end_leading(struct gbpf_ptx_fold *f, uint32_t at)
{
	if (!f->leading)
		return;
	f->leading = false;
	for (unsigned i = 0; i < f->n_vals; i++)
		f->vals[i].permanent = count_writes(f->m, f->body, 0, f->body->n, f->vals[i].reg, 0) ==
				       count_writes(f->m, f->body, 0, at, f->vals[i].reg, 0);
}

static bool is_branch(const struct gbpf_ptx_module *m, const struct gbpf_ptx_stmt *s)
{
	const struct gbpf_ptx_tok *op = &m->toks[s->opcode];

	return s->kind == GBPF_PTX_STMT_INSN && s->n_ops == 1 && s->ops[0].kind == GBPF_PTX_OP_SYM &&
	       op->len >= 3 && !memcmp(op->s, "bra", 3) && (op->len == 3 || op->s[3] == '.');
}

/* Some branch in @b from statement @from on (nested blocks included) jumps to label @name. */
static bool branches_to(const struct gbpf_ptx_module *m, const struct gbpf_ptx_block *b, uint32_t from,
			const struct gbpf_ptx_tok *name, int depth)
{
	if (depth > GBPF_PTX_MAX_DEPTH)
		return true;
	for (uint32_t i = from; i < b->n; i++) {
		const struct gbpf_ptx_stmt *s = b->v[i];

		if (s->kind == GBPF_PTX_STMT_SCOPE ? branches_to(m, &s->body, 0, name, depth + 1)
						   : is_branch(m, s) && gbpf_ptx_tok_same(&m->toks[s->ops[0].toks.first], name))
			return true;
	}
	return false;
}

static uint32_t all_ctx_regs(const struct gbpf_ptx_fold *f)
{
	return f->n_ctx_regs >= 32 ? ~0u : (1u << f->n_ctx_regs) - 1;
}

/* A loop head: the last statement at or after @at that jumps to label @name, or UINT32_MAX. */
static uint32_t loop_end(const struct gbpf_ptx_fold *f, const struct gbpf_ptx_tok *name, uint32_t at)
{
	for (uint32_t i = f->body->n; i-- > at;) {
		const struct gbpf_ptx_stmt *s = f->body->v[i];

		if (s->kind == GBPF_PTX_STMT_SCOPE ? branches_to(f->m, &s->body, 0, name, 1)
						   : is_branch(f->m, s) && gbpf_ptx_tok_same(op_tok(f->m, s, 0), name))
			return i;
	}
	return UINT32_MAX;
}

/* Index of @t in ctx_regs, or -1. */
static int ctx_reg_index(const struct gbpf_ptx_fold *f, const struct gbpf_ptx_tok *t)
{
	for (unsigned k = 0; k < f->n_ctx_regs; k++)
		if (gbpf_ptx_tok_same(f->ctx_regs[k], t))
			return (int)k;
	return -1;
}

/* @s makes its destination register the context pointer: a parameter load, a 64-bit move from ctx_regs. */
static bool ctx_copy(const struct gbpf_ptx_fold *f, const struct gbpf_ptx_stmt *s)
{
	const struct gbpf_ptx_module *m = f->m;
	const struct gbpf_ptx_tok *op = &m->toks[s->opcode];

	if (s->kind != GBPF_PTX_STMT_INSN || !op_is_reg(s, 0))
		return false;
	if (gbpf_ptx_tok_eq(op, "ld.param.b64"))
		return true;
	return s->n_ops == 2 && op_is_reg(s, 1) && (gbpf_ptx_tok_eq(op, "mov.b64") || gbpf_ptx_tok_eq(op, "mov.u64")) &&
	       ctx_reg_index(f, op_tok(m, s, 1)) >= 0;
}

/* ctx_regs that a statement of @b makes the pointer (a parameter load, a move from one of them). */
static uint32_t ctx_writes(const struct gbpf_ptx_fold *f, const struct gbpf_ptx_block *b, uint32_t from,
			   uint32_t to, int depth)
{
	uint32_t mask = 0;

	if (depth > GBPF_PTX_MAX_DEPTH)
		return all_ctx_regs(f);
	for (uint32_t i = from; i <= to && i < b->n; i++) {
		const struct gbpf_ptx_stmt *s = b->v[i];
		int k;

		if (s->kind == GBPF_PTX_STMT_SCOPE)
			mask |= ctx_writes(f, &s->body, 0, UINT32_MAX, depth + 1);
		else if (ctx_copy(f, s) && (k = ctx_reg_index(f, op_tok(f->m, s, 0))) >= 0)
			mask |= 1u << k;
	}
	return mask;
}

/* ctx_regs (bit i: ctx_regs[i]) that hold the pointer here, followed or tainted. */
static uint32_t may_ctx_now(const struct gbpf_ptx_fold *f)
{
	uint32_t mask = 0;

	for (unsigned i = 0; i < f->n_ctx_regs; i++) {
		int v = val_find(f, f->ctx_regs[i]);

		if ((v >= 0 && f->vals[v].kind == GBPF_PTX_VAL_CTX) || taint_find(f, f->ctx_regs[i]) >= 0)
			mask |= 1u << i;
	}
	return mask;
}

/* A branch at f->at to @target: what may hold the pointer reaches the label. */
static void branch_to(struct gbpf_ptx_fold *f, const struct gbpf_ptx_tok *target)
{
	uint32_t mask = may_ctx_now(f);

	for (unsigned i = 0; i < f->n_pending; i++)
		if (gbpf_ptx_tok_same(f->pending[i].label, target)) {
			f->pending[i].may_ctx |= mask;
			return;
		}
	if (!mask)
		return;
	if (f->n_pending == GBPF_PTX_FOLD_MAX_PENDING) {
		f->pending_lost = true;
		return;
	}
	f->pending[f->n_pending].label = target;
	f->pending[f->n_pending++].may_ctx = mask;
}

/* Label @name is defined in @b (nested blocks included). */
bool gbpf_ptx_defines_label(const struct gbpf_ptx_module *m, const struct gbpf_ptx_block *b,
			     const struct gbpf_ptx_tok *name, int depth)
{
	for (uint32_t i = 0; i < b->n && depth <= GBPF_PTX_MAX_DEPTH; i++) {
		const struct gbpf_ptx_stmt *s = b->v[i];

		if (s->kind == GBPF_PTX_STMT_SCOPE ? gbpf_ptx_defines_label(m, &s->body, name, depth + 1)
						   : s->kind == GBPF_PTX_STMT_LABEL &&
							     gbpf_ptx_tok_same(&m->toks[s->toks.first], name))
			return true;
	}
	return false;
}

/* The branches out of a copied block @top, as branches from where it stands. */
static void scope_branches(struct gbpf_ptx_fold *f, const struct gbpf_ptx_block *top,
			   const struct gbpf_ptx_block *b, int depth)
{
	if (depth > GBPF_PTX_MAX_DEPTH) {
		f->pending_lost = true;
		return;
	}
	for (uint32_t i = 0; i < b->n; i++) {
		const struct gbpf_ptx_stmt *s = b->v[i];

		if (s->kind == GBPF_PTX_STMT_SCOPE)
			scope_branches(f, top, &s->body, depth + 1);
		else if (is_branch(f->m, s) && !gbpf_ptx_defines_label(f->m, top, op_tok(f->m, s, 0), 0))
			branch_to(f, op_tok(f->m, s, 0));
	}
}

/* The pending mask of label @name (removed), all registers for a loop head or a lost entry. */
static uint32_t pending_take(struct gbpf_ptx_fold *f, const struct gbpf_ptx_tok *name, uint32_t at)
{
	uint32_t mask = 0, end;

	for (unsigned i = 0; i < f->n_pending; i++)
		if (gbpf_ptx_tok_same(f->pending[i].label, name)) {
			mask = f->pending[i].may_ctx;
			f->pending[i] = f->pending[--f->n_pending];
			break;
		}
	if (f->pending_lost)
		return all_ctx_regs(f);
	/*
	 * A loop head: its back edges bring what enters it (the rest of the mask)
	 * unless the loop writes it, and whatever the loop makes the pointer.
	 */
	end = loop_end(f, name, at);
	if (end != UINT32_MAX)
		mask |= ctx_writes(f, f->body, at, end, 0);
	return mask;
}

/*
 * A join before statement @at, where @may_ctx may hold the context pointer
 * (the fall-through's and the jumps'): keep the values that hold everywhere
 * after the leading code; taint the others of @may_ctx (read before they
 * are written again: escape).
 */
static void join(struct gbpf_ptx_fold *f, uint32_t at, uint32_t may_ctx)
{
	slots_clear(f);
	f->n_const_regs = 0; /* another way in may have written them */
	end_leading(f, at);
	f->n_tainted = 0;
	for (unsigned i = 0; i < f->n_vals;) {
		if (f->vals[i].permanent) {
			i++;
			continue;
		}
		val_drop(f, f->vals[i].reg, true);
	}
	for (unsigned i = 0; i < f->n_ctx_regs; i++) {
		int v = val_find(f, f->ctx_regs[i]);

		if (!(may_ctx & (1u << i)) || (v >= 0 && f->vals[v].permanent))
			continue;
		if (v >= 0)
			val_drop(f, f->ctx_regs[i], true);
		f->tainted[f->n_tainted++] = f->ctx_regs[i]; /* n_ctx_regs bounds it */
	}
}

static bool range_uses(const struct gbpf_ptx_fold *f, struct gbpf_ptx_range r, unsigned kind)
{
	for (uint32_t j = r.first; j < r.first + r.n; j++) {
		int v;

		if (f->m->toks[j].kind != GBPF_PTX_TOK_REG)
			continue;
		v = val_find(f, &f->m->toks[j]);
		if (v >= 0 && f->vals[v].kind == kind)
			return true;
		if (kind == GBPF_PTX_VAL_CTX && taint_find(f, &f->m->toks[j]) >= 0)
			return true;
	}
	return false;
}

/*
 * Reads of a register that may still hold the context pointer (tainted at a
 * join) escape; the statement's plain writes clear the taint. Operand 0 is
 * written when it is a register (or vector), read when it is an address.
 */
static void taint_stmt(struct gbpf_ptx_fold *f, const struct gbpf_ptx_stmt *s)
{
	const struct gbpf_ptx_module *m = f->m;

	if (!f->n_tainted)
		return;
	if (s->pred >= 0 && taint_find(f, &m->toks[s->pred]) >= 0)
		f->escaped = true;
	for (uint32_t o = 0; o < s->n_ops; o++) {
		bool dest = o == 0 && (s->ops[0].kind == GBPF_PTX_OP_REG || s->ops[0].kind == GBPF_PTX_OP_VEC);

		for (uint32_t j = s->ops[o].toks.first; j < s->ops[o].toks.first + s->ops[o].toks.n; j++) {
			if (m->toks[j].kind != GBPF_PTX_TOK_REG || taint_find(f, &m->toks[j]) < 0)
				continue;
			if (!dest)
				f->escaped = true;
			else if (s->pred < 0)
				taint_clear(f, &m->toks[j]);
		}
	}
}

static bool block_uses_ctx(const struct gbpf_ptx_fold *f, const struct gbpf_ptx_block *b, int depth)
{
	if (depth > GBPF_PTX_MAX_DEPTH)
		return true;
	for (uint32_t i = 0; i < b->n; i++) {
		const struct gbpf_ptx_stmt *s = b->v[i];

		if (s->kind == GBPF_PTX_STMT_SCOPE ? block_uses_ctx(f, &s->body, depth + 1)
						   : range_uses(f, s->toks, GBPF_PTX_VAL_CTX))
			return true;
	}
	return false;
}

/* [%reg] or [%reg+N] / [%reg+-N] with %reg followed: its value index, offset in *off. */
static int mem_addr(const struct gbpf_ptx_fold *f, const struct gbpf_ptx_stmt *s, uint32_t o,
		    int64_t *off)
{
	const struct gbpf_ptx_module *m = f->m;
	const struct gbpf_ptx_range r = s->ops[o].toks;
	uint32_t i, end = r.first + r.n - 1;
	bool neg = false;
	int v;

	if (s->ops[o].kind != GBPF_PTX_OP_MEM || r.n < 3 || m->toks[r.first + 1].kind != GBPF_PTX_TOK_REG)
		return -1;
	v = val_find(f, &m->toks[r.first + 1]);
	if (v < 0)
		return -1;
	*off = 0;
	if (r.n == 3)
		return v;
	for (i = r.first + 2; i < end && m->toks[i].kind == GBPF_PTX_TOK_PUNCT; i++) {
		if (m->toks[i].s[0] == '-')
			neg = !neg;
		else if (m->toks[i].s[0] != '+')
			return -2;
	}
	if (i + 1 != end || m->toks[i].kind != GBPF_PTX_TOK_NUM)
		return -2;
	*off = (int64_t)strtoull(m->toks[i].s, NULL, 0);
	if (neg)
		*off = -*off;
	return v;
}

/* Bytes of a scalar generic ld/st (ld.u32 -> 4); 0 for anything else (state spaces, vectors). */
static unsigned access_bytes(const struct gbpf_ptx_tok *op, const char *base)
{
	static const struct {
		const char *suffix;
		unsigned size;
	} types[] = {{".u8", 1}, {".b8", 1}, {".s8", 1}, {".u16", 2}, {".b16", 2}, {".s16", 2},
		     {".u32", 4}, {".b32", 4}, {".s32", 4}, {".f32", 4}, {".u64", 8}, {".b64", 8},
		     {".s64", 8}, {".f64", 8}};
	size_t bl = strlen(base);

	if (op->len <= bl || memcmp(op->s, base, bl))
		return 0;
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		size_t n = strlen(types[i].suffix);

		if (op->len == bl + n && !memcmp(op->s + bl, types[i].suffix, n))
			return types[i].size;
	}
	return 0;
}

/*
 * The code generator's alignment check: `add.u64 %t, %p, OFF` followed by
 * `and.b64 %t, %t, MASK` (MASK < 8) with %p the context or a stack address:
 * both bases are 8-byte aligned, so the sum's low bits are those of the
 * known offset; the and overwrites the sum, which has no other reader.
 */
static bool align_check(struct gbpf_ptx_fold *f, uint32_t i, struct gbpf_ptx_fold_out *out)
{
	const struct gbpf_ptx_module *m = f->m;
	const struct gbpf_ptx_stmt *s = f->body->v[i], *n, *setp, *bra;
	int64_t off, mask;
	int v;

	if (s->pred >= 0 || s->n_ops != 3 || !gbpf_ptx_tok_eq(&m->toks[s->opcode], "add.u64") ||
	    !op_is_reg(s, 0) || !op_is_reg(s, 1) || !op_is_imm(m, s, 2, &off) || i + 1 >= f->body->n)
		return false;
	v = val_find(f, op_tok(m, s, 1));
	n = f->body->v[i + 1];
	if (v < 0 || n->kind != GBPF_PTX_STMT_INSN || n->pred >= 0 || n->n_ops != 3 ||
	    !gbpf_ptx_tok_eq(&m->toks[n->opcode], "and.b64") || !op_is_reg(n, 0) || !op_is_reg(n, 1) ||
	    !gbpf_ptx_tok_same(op_tok(m, n, 0), op_tok(m, s, 0)) ||
	    !gbpf_ptx_tok_same(op_tok(m, n, 1), op_tok(m, s, 0)) ||
	    !op_is_imm(m, n, 2, &mask) || mask < 0 || mask > 7)
		return false;
	out->action = GBPF_PTX_FOLD_MOV;
	out->dest = op_tok(m, s, 0);
	out->value = (uint64_t)(f->vals[v].off + off);
	val_drop(f, out->dest, true);
	/*
	 * `setp.ne.u64 %p, %t, 0; @%p bra $Lu` after an aligned check never
	 * branches: the code at $Lu up to the next label is dead (if nothing
	 * falls into it, checked at the label).
	 */
	if ((out->value & (uint64_t)mask) || i + 3 >= f->body->n)
		return true;
	setp = f->body->v[i + 2];
	bra = f->body->v[i + 3];
	if (setp->kind == GBPF_PTX_STMT_INSN && setp->pred < 0 && setp->n_ops == 3 &&
	    gbpf_ptx_tok_eq(&m->toks[setp->opcode], "setp.ne.u64") && op_is_reg(setp, 1) &&
	    gbpf_ptx_tok_same(op_tok(m, setp, 1), out->dest) && bra->kind == GBPF_PTX_STMT_INSN &&
	    bra->pred >= 0 && !bra->pred_neg && bra->n_ops == 1 &&
	    bra->ops[0].kind == GBPF_PTX_OP_SYM && gbpf_ptx_tok_eq(&m->toks[bra->opcode], "bra") &&
	    op_is_reg(setp, 0) && gbpf_ptx_tok_same(&m->toks[bra->pred], op_tok(m, setp, 0)))
		f->dead_label = op_tok(m, bra, 0);
	return true;
}

/* ---- stack slots: store-to-load forwarding -------------------------- */

/* Slots overlapping [off, off+size) lose their value; an exact match is kept when @keep. */
static void slots_clobber(struct gbpf_ptx_fold *f, int64_t off, unsigned size)
{
	for (unsigned i = 0; i < f->n_slots; i++)
		if (f->slots[i].valid && off < f->slots[i].off + f->slots[i].size &&
		    off + size > f->slots[i].off)
			f->slots[i].valid = false;
}

static void slots_clear(struct gbpf_ptx_fold *f)
{
	for (unsigned i = 0; i < f->n_slots; i++)
		f->slots[i].valid = false;
}

/* A slot (and its snapshot register) for [off, off+size), or -1. */
static int slot_for(struct gbpf_ptx_fold *f, int64_t off, unsigned size)
{
	unsigned i;

	slots_clobber(f, off, size);
	for (i = 0; i < f->n_slots; i++)
		if (!f->slots[i].valid)
			break;
	if (i == GBPF_PTX_FOLD_MAX_SLOTS)
		return -1;
	if (i == f->n_slots)
		f->n_slots++;
	f->slots[i].off = off;
	f->slots[i].size = size;
	f->slots[i].valid = true;
	return (int)i;
}

static int slot_find(const struct gbpf_ptx_fold *f, int64_t off, unsigned size)
{
	for (unsigned i = 0; i < f->n_slots; i++)
		if (f->slots[i].valid && f->slots[i].off == off && f->slots[i].size == size)
			return (int)i;
	return -1;
}

bool gbpf_ptx_stack_operand(const struct gbpf_ptx_module *m, const struct gbpf_ptx_operand *o,
			    const char *stack_name, int64_t *off)
{
	const struct gbpf_ptx_range r = o->toks;

	if (o->kind != GBPF_PTX_OP_MEM || r.n < 3 || !stack_name ||
	    !gbpf_ptx_tok_eq(&m->toks[r.first + 1], stack_name))
		return false;
	if (r.n == 3) {
		*off = 0;
		return true;
	}
	if (r.n != 5 || !gbpf_ptx_tok_eq(&m->toks[r.first + 2], "+") ||
	    m->toks[r.first + 3].kind != GBPF_PTX_TOK_NUM)
		return false;
	*off = (int64_t)strtoull(m->toks[r.first + 3].s, NULL, 0);
	return true;
}

/* [__gbpf_stack], [__gbpf_stack+N]: the code generator's own frame accesses. */
static bool stack_direct(const struct gbpf_ptx_fold *f, const struct gbpf_ptx_stmt *s, uint32_t o,
			 int64_t *off)
{
	return o < s->n_ops && gbpf_ptx_stack_operand(f->m, &s->ops[o], f->stack_name, off);
}

/* Forwardable widths: unsigned / untyped 4 and 8 bytes (zero-extending loads). */
static bool fwd_type(const struct gbpf_ptx_tok *op, unsigned size)
{
	const char *t = op->s + op->len - 4;

	return (size == 4 || size == 8) && op->len > 4 && t[0] == '.' && (t[1] == 'u' || t[1] == 'b');
}

/*
 * A store to the stack at a known offset (@local: its .local offset): the
 * stored value is kept in a snapshot register as well, for later loads of
 * the same slot in the same straight-line stretch.
 */
static void note_store(struct gbpf_ptx_fold *f, const struct gbpf_ptx_stmt *s, int64_t off,
		       unsigned size, struct gbpf_ptx_fold_out *out)
{
	const struct gbpf_ptx_module *m = f->m;
	int64_t imm;
	int k;

	if (s->pred >= 0 || !fwd_type(&m->toks[s->opcode], size) ||
	    (!op_is_reg(s, 1) && !op_is_imm(m, s, 1, &imm))) {
		slots_clobber(f, off, size);
		return;
	}
	k = slot_for(f, off, size);
	if (k < 0)
		return;
	{
		uint64_t v;

		f->slots[k].is_const = const_operand(f, s, 1, 64, &v);
		f->slots[k].value = size == 8 ? v : v & ((1ull << (8 * size)) - 1);
	}
	out->snap = k;
	out->snap_src = &m->toks[s->ops[1].toks.first];
	out->local_off = off; /* where the stored bytes are (sink.c may move the store) */
	out->size = size;
	if (out->action == GBPF_PTX_FOLD_KEEP)
		out->action = GBPF_PTX_FOLD_SNAP;
}

/*
 * A load of a stack slot: from its snapshot register when the slot is known. An 8-byte load of
 * two known 4-byte slots (a struct's 32-bit fields read as one word: a ring record passed by
 * value, ptx_helpers.c) takes both halves from their registers.
 */
static void note_load(struct gbpf_ptx_fold *f, const struct gbpf_ptx_stmt *s, int64_t off,
		      unsigned size, struct gbpf_ptx_fold_out *out)
{
	int k, hi = -1;

	if (s->pred >= 0 || !fwd_type(&f->m->toks[s->opcode], size))
		return;
	k = slot_find(f, off, size);
	if (k < 0 && size == 8 && (k = slot_find(f, off, 4)) >= 0 && (hi = slot_find(f, off + 4, 4)) < 0)
		k = -1;
	if (k < 0)
		return;
	if (hi >= 0) {
		if (f->slots[k].is_const && f->slots[hi].is_const)
			const_set(f, &f->m->toks[s->ops[0].toks.first],
				  (f->slots[k].value & 0xffffffffu) | f->slots[hi].value << 32);
		out->snap_hi = hi;
	} else if (f->slots[k].is_const) { /* the load reads what was stored, forwarded or not */
		const_set(f, &f->m->toks[s->ops[0].toks.first], f->slots[k].value);
	}
	out->action = GBPF_PTX_FOLD_FWD;
	out->dest = &f->m->toks[s->ops[0].toks.first];
	out->snap = k;
	out->size = size;
}

/* Instructions that may write memory at an address not followed here. */
static bool unknown_store(const struct gbpf_ptx_module *m, const struct gbpf_ptx_stmt *s)
{
	const struct gbpf_ptx_tok *op = &m->toks[s->opcode];
	static const char *const bases[] = {"st", "atom", "red", "call", "cp", "stmatrix"};

	/*
	 * A store naming global or shared memory cannot write the thread's local stack (the code
	 * generator addresses a reserved ring record so: the probe's stores into it keep the
	 * snapshots of its stack).
	 */
	if (gbpf_ptx_op_has(op, "global") || gbpf_ptx_op_has(op, "shared"))
		return false;
	/* nor one at the thread-local values past the context, which the code generator addresses "[%rtls+N]" */
	if (s->n_ops && s->ops[0].kind == GBPF_PTX_OP_MEM)
		for (uint32_t j = s->ops[0].toks.first; j < s->ops[0].toks.first + s->ops[0].toks.n; j++)
			if (gbpf_ptx_tok_eq(&m->toks[j], "%rtls"))
				return false;
	for (size_t i = 0; i < sizeof(bases) / sizeof(bases[0]); i++) {
		size_t n = strlen(bases[i]);

		if (op->len >= n && !memcmp(op->s, bases[i], n) && (op->len == n || op->s[n] == '.'))
			return true;
	}
	return false;
}

static void ctx_reg_add(struct gbpf_ptx_fold *f, const struct gbpf_ptx_tok *t, bool *grew)
{
	if (ctx_reg_index(f, t) >= 0)
		return;
	if (f->n_ctx_regs == GBPF_PTX_FOLD_MAX_VALS) {
		f->escaped = true; /* too many copies to follow */
		return;
	}
	f->ctx_regs[f->n_ctx_regs++] = t;
	*grew = true;
}

/* One pass of ctx_regs_collect over @b; *grew when a register was added. */
static void ctx_regs_pass(struct gbpf_ptx_fold *f, const struct gbpf_ptx_block *b, int depth, bool *grew)
{
	if (depth > GBPF_PTX_MAX_DEPTH) {
		f->escaped = true;
		return;
	}
	for (uint32_t i = 0; i < b->n; i++) {
		const struct gbpf_ptx_stmt *s = b->v[i];

		if (s->kind == GBPF_PTX_STMT_SCOPE)
			ctx_regs_pass(f, &s->body, depth + 1, grew);
		else if (ctx_copy(f, s))
			ctx_reg_add(f, op_tok(f->m, s, 0), grew);
	}
}

/*
 * Every register some statement may make the context pointer, whatever the
 * path: parameter loads and 64-bit moves from such registers, to a fixed
 * point (the fold follows the pointer through nothing else without escaping).
 */
static void ctx_regs_collect(struct gbpf_ptx_fold *f, const struct gbpf_ptx_block *b, int depth)
{
	bool grew = true;

	while (grew && !f->escaped) {
		grew = false;
		ctx_regs_pass(f, b, depth, &grew);
	}
}

void gbpf_ptx_fold_begin(struct gbpf_ptx_fold *f, const struct gbpf_ptx_module *m,
			 const struct gbpf_ptx_block *body, const char *stack_name)
{
	f->m = m;
	f->body = body;
	f->stack_name = stack_name;
	f->leading = true;
	f->n_vals = 0;
	f->escaped = false;
	f->in_dead = false;
	f->dead_label = NULL;
	f->folded = f->localized = f->forwarded = f->evaluated = 0;
	f->n_slots = 0;
	f->n_const_regs = 0;
	f->n_ctx_regs = f->n_tainted = f->n_pending = 0;
	f->pending_lost = false;
	ctx_regs_collect(f, body, 0);
}

/* Operands naming label @name in @b (branches to it). */
static unsigned label_refs(const struct gbpf_ptx_module *m, const struct gbpf_ptx_block *b,
			   const struct gbpf_ptx_tok *name, int depth)
{
	unsigned n = 0;

	if (depth > GBPF_PTX_MAX_DEPTH)
		return 2;
	for (uint32_t i = 0; i < b->n; i++) {
		const struct gbpf_ptx_stmt *s = b->v[i];

		if (s->kind == GBPF_PTX_STMT_SCOPE) {
			n += label_refs(m, &s->body, name, depth + 1);
			continue;
		}
		if (s->kind == GBPF_PTX_STMT_LABEL)
			continue;
		for (uint32_t j = s->toks.first; j < s->toks.first + s->toks.n; j++)
			n += m->toks[j].kind == GBPF_PTX_TOK_IDENT && gbpf_ptx_tok_same(&m->toks[j], name);
	}
	return n;
}

static void fold_label(struct gbpf_ptx_fold *f, uint32_t i)
{
	const struct gbpf_ptx_module *m = f->m;
	const struct gbpf_ptx_tok *name = &m->toks[f->body->v[i]->toks.first];
	const struct gbpf_ptx_stmt *prev = i ? f->body->v[i - 1] : NULL;
	/* nothing falls in after an unconditional branch or a return */
	bool falls = !(prev && prev->kind == GBPF_PTX_STMT_INSN && prev->pred < 0 &&
		       (is_branch(m, prev) || gbpf_ptx_tok_eq(&m->toks[prev->opcode], "ret") ||
			gbpf_ptx_tok_eq(&m->toks[prev->opcode], "exit")));

	join(f, i, (falls ? may_ctx_now(f) : 0) | pending_take(f, name, i));
	/* Dead when nothing falls into it and the never-taken branch is its only way in. */
	f->in_dead = f->dead_label && gbpf_ptx_tok_same(f->dead_label, name) && prev &&
		     prev->kind == GBPF_PTX_STMT_INSN && prev->pred < 0 &&
		     gbpf_ptx_tok_eq(&m->toks[prev->opcode], "bra.uni") &&
		     label_refs(m, f->body, name, 0) == 1;
	f->dead_label = NULL;
}

/* {%lo, %hi} of two 32-bit constants, as mov.b64 packs them. */
static bool const_pair(const struct gbpf_ptx_fold *f, const struct gbpf_ptx_stmt *s, uint64_t *v)
{
	const struct gbpf_ptx_module *m = f->m;
	const struct gbpf_ptx_range r = s->ops[1].toks;
	uint64_t part[2];
	unsigned n = 0;
	int i;

	if (s->ops[1].kind != GBPF_PTX_OP_VEC)
		return false;
	for (uint32_t j = r.first; j < r.first + r.n; j++) {
		if (m->toks[j].kind != GBPF_PTX_TOK_REG)
			continue;
		if (n == 2 || (i = const_find(f, &m->toks[j])) < 0)
			return false;
		part[n++] = f->const_regs[i].value & 0xffffffffu;
	}
	if (n != 2)
		return false;
	*v = part[1] << 32 | part[0];
	return true;
}

/*
 * The value an unpredicated integer statement computes from constants only
 * (@direct: it is already a move of an immediate). Shifts clamp their
 * amount to the width, as PTX does.
 */
static bool fold_const(const struct gbpf_ptx_fold *f, const struct gbpf_ptx_stmt *s, uint64_t *v,
		       bool *direct)
{
	enum { MOV, TRUNC, ZEXT, XOR, AND, OR, ADD, SUB, MUL, MULWIDE, SHR, SHL };
	static const struct {
		const char *op;
		unsigned bits, kind;
	} forms[] = {
		{"mov.b64", 64, MOV}, {"mov.u64", 64, MOV}, {"mov.s64", 64, MOV},
		{"mov.b32", 32, MOV}, {"mov.u32", 32, MOV}, {"mov.s32", 32, MOV},
		{"cvt.u32.u64", 32, TRUNC}, {"cvt.u64.u32", 64, ZEXT},
		{"xor.b64", 64, XOR}, {"and.b64", 64, AND}, {"or.b64", 64, OR},
		{"xor.b32", 32, XOR}, {"and.b32", 32, AND}, {"or.b32", 32, OR},
		{"add.u64", 64, ADD}, {"add.s64", 64, ADD}, {"sub.u64", 64, SUB}, {"sub.s64", 64, SUB},
		{"add.u32", 32, ADD}, {"add.s32", 32, ADD}, {"sub.u32", 32, SUB}, {"sub.s32", 32, SUB},
		{"mul.lo.u64", 64, MUL}, {"mul.lo.s64", 64, MUL}, {"mul.lo.u32", 32, MUL},
		{"mul.lo.s32", 32, MUL}, {"mul.wide.u32", 64, MULWIDE},
		{"shr.b64", 64, SHR}, {"shr.u64", 64, SHR}, {"shl.b64", 64, SHL},
		{"shr.b32", 32, SHR}, {"shr.u32", 32, SHR}, {"shl.b32", 32, SHL},
	};
	const struct gbpf_ptx_tok *op = &f->m->toks[s->opcode];
	uint64_t a, b, mask;
	unsigned k;

	if (s->pred >= 0 || !op_is_reg(s, 0))
		return false;
	for (k = 0; k < sizeof(forms) / sizeof(forms[0]); k++)
		if (gbpf_ptx_tok_eq(op, forms[k].op))
			break;
	if (k == sizeof(forms) / sizeof(forms[0]))
		return false;
	mask = forms[k].bits == 64 ? ~0ull : 0xffffffffu;
	*direct = false;
	switch (forms[k].kind) {
	case MOV:
		if (s->n_ops != 2)
			return false;
		if (forms[k].bits == 64 && const_pair(f, s, v))
			return true;
		*direct = s->ops[1].kind == GBPF_PTX_OP_IMM;
		return const_operand(f, s, 1, forms[k].bits, v);
	case TRUNC:
	case ZEXT:
		return s->n_ops == 2 && const_operand(f, s, 1, forms[k].kind == TRUNC ? 64 : 32, &a) &&
		       (*v = a & 0xffffffffu, true);
	default:
		break;
	}
	if (s->n_ops != 3 || !const_operand(f, s, 1, forms[k].kind == MULWIDE ? 32 : forms[k].bits, &a) ||
	    !const_operand(f, s, 2, forms[k].kind >= MULWIDE ? 32 : forms[k].bits, &b))
		return false;
	switch (forms[k].kind) {
	case XOR: *v = a ^ b; break;
	case AND: *v = a & b; break;
	case OR: *v = a | b; break;
	case ADD: *v = a + b; break;
	case SUB: *v = a - b; break;
	case MUL: *v = a * b; break;
	case MULWIDE: *v = a * b; break;
	case SHR: *v = b >= forms[k].bits ? 0 : a >> b; break;
	default: *v = b >= forms[k].bits ? 0 : a << b; break;
	}
	*v &= mask;
	return true;
}

/* Every register operand 0 names (a destination) no longer holds a known constant. */
static void const_drop_written(struct gbpf_ptx_fold *f, const struct gbpf_ptx_stmt *s)
{
	const struct gbpf_ptx_module *m = f->m;

	if (!s->n_ops || (s->ops[0].kind != GBPF_PTX_OP_REG && s->ops[0].kind != GBPF_PTX_OP_VEC))
		return;
	for (uint32_t j = s->ops[0].toks.first; j < s->ops[0].toks.first + s->ops[0].toks.n; j++)
		if (m->toks[j].kind == GBPF_PTX_TOK_REG)
			const_drop(f, &m->toks[j]);
}

static void fold_insn(struct gbpf_ptx_fold *f, const struct gbpf_ptx_stmt *s,
		      struct gbpf_ptx_fold_out *out)
{
	const struct gbpf_ptx_module *m = f->m;
	const struct gbpf_ptx_tok *op = &m->toks[s->opcode];
	bool pred = s->pred >= 0;
	unsigned size;
	int64_t off, imm;
	int v;

	taint_stmt(f, s);
	/* a branch (but the alignment check's never-taken one) ends the leading code */
	if (is_branch(m, s) && !(f->dead_label && gbpf_ptx_tok_same(op_tok(m, s, 0), f->dead_label))) {
		end_leading(f, f->at);
		branch_to(f, op_tok(m, s, 0));
	}
	/* Arithmetic on constants (the operands read before the destination is written). */
	{
		uint64_t cv;
		bool direct;

		if (fold_const(f, s, &cv, &direct)) {
			const struct gbpf_ptx_tok *d = op_tok(m, s, 0);

			val_drop(f, d, true);
			const_set(f, d, cv);
			if (!direct) {
				out->action = GBPF_PTX_FOLD_CONST;
				out->dest = d;
				out->value = cv;
			}
			return;
		}
	}
	const_drop_written(f, s);
	/* The probe's argument: the context pointer. */
	if (gbpf_ptx_tok_eq(op, "ld.param.b64") && op_is_reg(s, 0) && !pred && s->n_ops == 2) {
		val_set(f, op_tok(m, s, 0), GBPF_PTX_VAL_CTX, 0);
		return;
	}
	if (s->n_ops >= 2 && op_is_reg(s, 0) && (size = access_bytes(op, "ld")) &&
	    (v = mem_addr(f, s, 1, &off)) >= 0 && !pred) {
		const struct gbpf_ptx_tok *d = op_tok(m, s, 0);
		int64_t a = f->vals[v].off + off;

		if (f->vals[v].kind == GBPF_PTX_VAL_CTX) {
			bool hit = false;

			for (unsigned c = 0; c < f->n_consts && !hit; c++) {
				if (a == f->c[c].off && size == f->c[c].size) {
					out->action = GBPF_PTX_FOLD_MOV;
					out->dest = d;
					out->value = f->c[c].value;
					out->reg = f->c[c].reg;
					hit = true;
					if (!out->reg)
						const_set(f, d, size == 8 ? out->value
									  : out->value & ((1ull << (8 * size)) - 1));
				} else if (a < f->c[c].off + f->c[c].size && a + size > f->c[c].off) {
					f->escaped = true; /* part of a constant field */
				}
			}
			/* Other fields (params, launch_id) are in memory since kernel entry. */
		} else if (f->vals[v].kind == GBPF_PTX_VAL_STACK && a >= 0 &&
			   a + size <= GBPF_PTX_FOLD_STACK_SIZE && !(a % size)) {
			out->action = GBPF_PTX_FOLD_LOCAL;
			out->mem_op = 1;
			out->local_off = a;
			out->size = size;
			note_load(f, s, a, size, out);
		}
		val_drop(f, d, true);
		return;
	}
	if (s->n_ops == 2 && op_is_reg(s, 0) && (size = access_bytes(op, "ld.local")) &&
	    stack_direct(f, s, 1, &off)) {
		note_load(f, s, off, size, out);
		val_drop(f, op_tok(m, s, 0), !pred);
		return;
	}
	if (s->n_ops == 2 && (size = access_bytes(op, "st.local")) && stack_direct(f, s, 0, &off)) {
		if (range_uses(f, s->ops[1].toks, GBPF_PTX_VAL_CTX))
			f->escaped = true; /* the pointer spilled */
		note_store(f, s, off, size, out);
		return;
	}
	if (s->n_ops == 2 && (size = access_bytes(op, "st")) && (v = mem_addr(f, s, 0, &off)) >= 0) {
		int64_t a = f->vals[v].off + off;

		if (range_uses(f, s->ops[1].toks, GBPF_PTX_VAL_CTX) || f->vals[v].kind == GBPF_PTX_VAL_CTX)
			f->escaped = true; /* the pointer stored, or a store into the context */
		else if (f->vals[v].kind == GBPF_PTX_VAL_STACK && a >= 0 &&
			 a + size <= GBPF_PTX_FOLD_STACK_SIZE && !(a % size)) {
			out->action = GBPF_PTX_FOLD_LOCAL;
			out->mem_op = 0;
			out->local_off = a;
			out->size = size;
			note_store(f, s, a, size, out);
			return;
		}
		slots_clear(f); /* a store this fold does not place */
		return;
	}
	if (align_check(f, f->at, out))
		return;
	/* Value-producing forms followed exactly (unpredicated only). */
	if (!pred && op_is_reg(s, 0)) {
		const struct gbpf_ptx_tok *d = op_tok(m, s, 0);

		if (s->n_ops == 2 && (gbpf_ptx_tok_eq(op, "mov.b64") || gbpf_ptx_tok_eq(op, "mov.u64"))) {
			if (op_is_reg(s, 1) && (v = val_find(f, op_tok(m, s, 1))) >= 0) {
				val_set(f, d, f->vals[v].kind, f->vals[v].off);
				return;
			}
			if (s->ops[1].kind == GBPF_PTX_OP_SYM && f->stack_name &&
			    gbpf_ptx_tok_eq(op_tok(m, s, 1), f->stack_name)) {
				val_set(f, d, GBPF_PTX_VAL_STACK_LOCAL, 0);
				return;
			}
		}
		if (s->n_ops == 2 && gbpf_ptx_tok_eq(op, "cvta.local.u64") && op_is_reg(s, 1) &&
		    (v = val_find(f, op_tok(m, s, 1))) >= 0 &&
		    f->vals[v].kind == GBPF_PTX_VAL_STACK_LOCAL) {
			val_set(f, d, GBPF_PTX_VAL_STACK, f->vals[v].off);
			return;
		}
		if (s->n_ops == 3 && (gbpf_ptx_tok_eq(op, "add.u64") || gbpf_ptx_tok_eq(op, "add.s64")) &&
		    op_is_reg(s, 1) && (v = val_find(f, op_tok(m, s, 1))) >= 0 &&
		    f->vals[v].kind == GBPF_PTX_VAL_STACK && op_is_imm(m, s, 2, &imm)) {
			val_set(f, d, GBPF_PTX_VAL_STACK, f->vals[v].off + imm);
			return;
		}
		/*
		 * The context plus a constant that reaches past it: the code generator's
		 * base of the GPU_THREAD_LOCAL values (%rtls). What it points to is no
		 * field (the verifier keeps a map value's accesses within the value), so
		 * the register is not the context pointer: neither followed nor tainted
		 * at joins, where an element's pointer is held across the lookup's branch.
		 */
		if (s->n_ops == 3 && (gbpf_ptx_tok_eq(op, "add.u64") || gbpf_ptx_tok_eq(op, "add.s64")) &&
		    op_is_reg(s, 1) && (v = val_find(f, op_tok(m, s, 1))) >= 0 &&
		    f->vals[v].kind == GBPF_PTX_VAL_CTX && op_is_imm(m, s, 2, &imm) &&
		    f->vals[v].off + imm >= (int64_t)GBPF_PTX_THREAD_LOCAL_CTX_OFF) {
			val_drop(f, d, true);
			return;
		}
	}
	if (unknown_store(m, s))
		slots_clear(f);
	/* Anything else: reads of the context pointer are not followed. */
	for (uint32_t o = pred ? 0 : 1; o < s->n_ops; o++)
		if (range_uses(f, s->ops[o].toks, GBPF_PTX_VAL_CTX))
			f->escaped = true;
	if (s->n_ops && s->ops[0].kind == GBPF_PTX_OP_MEM && range_uses(f, s->ops[0].toks, GBPF_PTX_VAL_CTX))
		f->escaped = true;
	if (pred && s->pred >= 0 && val_find(f, &m->toks[s->pred]) >= 0)
		f->escaped = true;
	if (s->n_ops && (s->ops[0].kind == GBPF_PTX_OP_REG || s->ops[0].kind == GBPF_PTX_OP_VEC))
		for (uint32_t j = s->ops[0].toks.first; j < s->ops[0].toks.first + s->ops[0].toks.n; j++)
			if (m->toks[j].kind == GBPF_PTX_TOK_REG)
				val_drop(f, &m->toks[j], !pred);
}

enum gbpf_ptx_fold_action gbpf_ptx_fold_stmt(struct gbpf_ptx_fold *f, uint32_t i,
					     struct gbpf_ptx_fold_out *out)
{
	const struct gbpf_ptx_stmt *s = f->body->v[i];

	memset(out, 0, sizeof(*out));
	out->action = GBPF_PTX_FOLD_KEEP;
	out->snap = -1;
	out->snap_hi = -1;
	f->at = i;
	switch (s->kind) {
	case GBPF_PTX_STMT_LABEL:
		fold_label(f, i);
		break;
	case GBPF_PTX_STMT_SCOPE:
		/*
		 * Copied as it is (and a join after it): a mention of the pointer inside reads it,
		 * and a branch out of it takes what may hold the pointer to its label.
		 */
		scope_branches(f, &s->body, &s->body, 0);
		join(f, i, may_ctx_now(f));
		if (block_uses_ctx(f, &s->body, 0))
			f->escaped = true;
		break;
	case GBPF_PTX_STMT_INSN:
		if (f->in_dead) {
			out->action = GBPF_PTX_FOLD_SKIP;
			break;
		}
		fold_insn(f, s, out);
		break;
	default:
		break;
	}
	return out->action;
}

void gbpf_ptx_fold_end(struct gbpf_ptx_fold *f)
{
	join(f, f->body->n, may_ctx_now(f));
}
