/* SPDX-License-Identifier: MIT */
/*
 * An inlined probe's stack stores, moved to where the stack may be read.
 *
 * A probe builds a map key (and an update's initial value) on its eBPF
 * stack and passes their addresses to the map helpers. Inlined, the
 * lookup's fast path reads the key from the fold's snapshot registers
 * (%__gbpf_fw<N>, fold.c), so the stores matter only on the slow path, to
 * the helper calls that take the addresses. Left where the probe wrote
 * them they run at every site of every thread: mem_count stored 24 bytes
 * of local memory a thread at each memory access, and the same 24 bytes
 * stored by hand in CUDA make its hand-written counters cost 4.1x vector
 * add instead of 1.2x (H200, docs/benchmarks/sessions-06-17.md session 11).
 *
 * So a store to [__gbpf_stack+off] whose whole value a snapshot register
 * holds is not emitted where it stands; the register is stored where the
 * stack may be read before those bytes are written again: before a helper
 * call's scope, a stack load the fold did not forward, a generic access
 * through a register that may hold a stack address, any instruction not
 * known here, a later store that reuses the snapshot register; and on an
 * edge into a label where the register no longer holds it on some other
 * way in (for a conditional branch, through a trampoline at the end of the
 * body). A store not written out when the probe ends is dropped: a probe's
 * stack holds nothing across runs. Nor is one written out where no path on
 * reads its bytes before they are all written again or the probe ends (a
 * backward liveness of each store's bytes): a reused register or a join
 * then loses the value, which nothing needed.
 *
 * Each deferred store is CLEAN, STALE or NONE at each statement (its
 * register holds what its bytes should hold, and memory does too / may
 * not yet / the register is no longer its value), the lower of the two
 * where paths join; the analysis iterates over the body's top-level
 * statements from "no path reaches here" down to its greatest fixed
 * point. A store is written out where it is STALE and the stack may be
 * read, and on an edge into a label where it becomes NONE; so on every
 * path memory holds what the probe stored wherever the stack is read,
 * and a path that reads nothing of it (the lookup's hit) stores nothing.
 *
 * Which registers may hold a stack address is a may-analysis over the same
 * statements (registers written from the stack's name, by cvta.local, or from a
 * register that may hold one; joined by union), so that the lookup's loads
 * of map memory through generic addresses do not count as reads of the
 * stack while an access through the key's address does.
 */
#include "plugins/cuda/ptx/inject_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define SINK_MAX_STORES 64
#define REG_SLOTS 1024u /* more than the registers a probe body declares (the pass gives up past it) */
#define SINK_MAX_SWEEPS 512

enum unit_kind {
	U_OTHER,    /* no stack access */
	U_STORE,    /* a deferred store: pending from here */
	U_WRITE,    /* a store to stack bytes [off, off + size) that stays */
	U_READ,     /* a load of stack bytes [off, off + size) */
	U_READ_ALL, /* may read any stack byte: every stale store first */
	U_CLOBBER,  /* may read and write any stack byte: memory is all that is known after it */
	U_LABEL,    /* a top-level label (a join) */
	U_BRANCH,   /* a branch to a top-level label (target) */
	U_END,      /* leaves the probe (a return, exit, trap): pending stores are dropped */
};

struct unit {
	enum unit_kind kind;
	int64_t off;
	unsigned size;
	int store;         /* U_STORE: its index in sink.stores */
	int fw_write;      /* the snapshot register this statement sets, -1 if none */
	int target;        /* U_BRANCH: statement index of the label */
	bool pred;         /* a branch or return under a predicate: falls through too */
	bool addr_tainted; /* an address operand may hold a stack address here */
	enum unit_kind scope_kind; /* a nested scope: U_OTHER, U_READ_ALL or U_CLOBBER */
	bool scope_helper;         /* a nested scope that calls one of the code generator's helpers */
};

struct sink {
	const struct gbpf_ptx_module *m;
	const struct gbpf_ptx_block *body;
	const char *stack;
	struct unit *u;
	struct {
		int64_t off;
		unsigned size;
		int fw;
	} stores[SINK_MAX_STORES];
	unsigned n_stores;
	/* the body's registers by name: taint bit i is regs[i], bit n_regs "a stack address may be in memory" */
	const struct gbpf_ptx_tok **regs;
	unsigned n_regs, cap_regs;
	int32_t reg_slot[REG_SLOTS]; /* open addressing by name: 1 + the register's number, 0 empty */
	uint32_t *labels;            /* statement indices of the body's labels */
	uint64_t *live;              /* per statement: the stores whose bytes may be read from there on */
	uint32_t n_labels;
	/* per token of the body's instructions: its register's number, TOK_STACK or TOK_NONE; and of
	 * an opcode token its OP_* bits (the analyses run each instruction many times) */
	int32_t *tok_reg;
	uint8_t *tok_op;
	uint32_t tok_base, tok_end;
};

enum {
	OP_READS = 1,        /* reads memory */
	OP_WRITES = 2,       /* writes memory */
	OP_PARAM = 4,        /* .param space */
	OP_STORE_PARAM = 8,  /* st.param: an argument passed */
	OP_NO_ADDRESS = 16,  /* its result is no address (makes_no_address) */
	OP_CVTA_LOCAL = 32,  /* cvta.local: a local address made generic */
};

enum { TOK_NONE = -1, TOK_STACK = -2 };

/* A forward analysis over the body's top-level statements. */
struct flow {
	unsigned words; /* of a state */
	void (*meet)(uint64_t *dst, const uint64_t *src, unsigned words); /* where paths join */
	void (*step)(struct sink *k, uint32_t i, uint64_t *state);
};

/* The opcode's first component is @base. */
static bool op_base(const struct gbpf_ptx_tok *op, const char *base)
{
	size_t n;

	if (!op->len || op->s[0] != base[0]) /* most tests end here */
		return false;
	n = strlen(base);
	return op->len >= n && !memcmp(op->s, base, n) && (op->len == n || op->s[n] == '.');
}

static bool op_base_in(const struct gbpf_ptx_tok *op, const char *const *bases, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (op_base(op, bases[i]))
			return true;
	return false;
}

/* Bytes an ld / st moves: its type times .v2 / .v4; 0 if not known. */
static unsigned access_size(const struct gbpf_ptx_tok *op)
{
	static const char *const types[][4] = {{"u8", "s8", "b8", ""}, {"u16", "s16", "b16", "f16"},
					       {"u32", "s32", "b32", "f32"}, {"u64", "s64", "b64", "f64"}};
	unsigned size = 0, vec = gbpf_ptx_op_has(op, "v2") ? 2 : gbpf_ptx_op_has(op, "v4") ? 4 : 1;

	for (unsigned t = 0; t < 4; t++)
		for (unsigned j = 0; j < 4; j++)
			if (types[t][j][0] && gbpf_ptx_op_has(op, types[t][j]))
				size = 1u << t;
	return size * vec;
}

static bool writes_memory(const struct gbpf_ptx_tok *op)
{
	static const char *const bases[] = {"st", "atom", "red", "cp", "stmatrix", "sust", "sured",
					    "multimem", "mbarrier"};

	return op_base_in(op, bases, sizeof(bases) / sizeof(bases[0]));
}

static bool reads_memory(const struct gbpf_ptx_tok *op)
{
	static const char *const bases[] = {"ld", "ldu", "atom", "ldmatrix", "suld", "tex", "tld4", "multimem"};

	return op_base_in(op, bases, sizeof(bases) / sizeof(bases[0]));
}

/* Instructions that touch no memory and do not branch. */
static bool register_only(const struct gbpf_ptx_tok *op)
{
	static const char *const bases[] = {
		"add", "sub", "mul", "mad", "mul24", "mad24", "sad", "div", "rem", "abs", "neg", "min", "max",
		"popc", "clz", "bfind", "fns", "brev", "bfe", "bfi", "bmsk", "szext", "dp4a", "dp2a", "and",
		"or", "xor", "not", "cnot", "lop3", "shf", "shl", "shr", "mov", "cvt", "cvta", "setp", "selp",
		"set", "slct", "prmt", "testp", "copysign", "fma", "rcp", "sqrt", "rsqrt", "sin", "cos", "lg2",
		"ex2", "tanh", "match", "shfl", "vote", "activemask", "isspacep", "membar", "fence",
		"nanosleep", "addc", "subc", "madc", "bar", "barrier", "elect", "redux"};

	return op_base_in(op, bases, sizeof(bases) / sizeof(bases[0]));
}

/*
 * Operations whose result is no address even from an address operand
 * (eBPF only adds to and moves pointers; these make predicates, masks and
 * counts, or scale indices).
 */
static bool makes_no_address(const struct gbpf_ptx_tok *op)
{
	static const char *const bases[] = {"setp", "set", "match", "vote", "popc", "clz", "bfind", "activemask",
					    "mul", "div", "rem", "testp", "isspacep", "fns", "redux"};

	return op_base_in(op, bases, sizeof(bases) / sizeof(bases[0]));
}

static int label_index(const struct sink *k, const struct gbpf_ptx_tok *name)
{
	for (uint32_t j = 0; j < k->n_labels; j++)
		if (gbpf_ptx_tok_same(&k->m->toks[k->body->v[k->labels[j]]->toks.first], name))
			return (int)k->labels[j];
	return -1;
}

/* ---- which registers may hold a stack address ------------------------- */

static unsigned op_bits(const struct gbpf_ptx_tok *op)
{
	return (reads_memory(op) ? OP_READS : 0) | (writes_memory(op) ? OP_WRITES : 0) |
	       (gbpf_ptx_op_has(op, "param") ? OP_PARAM : 0) |
	       (op_base(op, "st") && gbpf_ptx_op_has(op, "param") ? OP_STORE_PARAM : 0) |
	       (makes_no_address(op) ? OP_NO_ADDRESS : 0) |
	       (op_base(op, "cvta") && gbpf_ptx_op_has(op, "local") ? OP_CVTA_LOCAL : 0);
}

static uint32_t name_hash(const struct gbpf_ptx_tok *t)
{
	uint32_t h = 2166136261u;

	for (uint32_t i = 0; i < t->len; i++)
		h = (h ^ (uint8_t)t->s[i]) * 16777619u;
	return h;
}

/* Register @t's number, a new one if it has none yet; -ENOSPC past REG_SLOTS / 2 registers. */
static int reg_number(struct sink *k, const struct gbpf_ptx_tok *t)
{
	uint32_t h = name_hash(t);

	for (uint32_t i = 0; i < REG_SLOTS; i++) {
		int32_t *slot = &k->reg_slot[(h + i) % REG_SLOTS];

		if (*slot && gbpf_ptx_tok_same(k->regs[*slot - 1], t))
			return *slot - 1;
		if (*slot)
			continue;
		if (k->n_regs >= REG_SLOTS / 2)
			return -ENOSPC;
		if (k->n_regs == k->cap_regs) {
			unsigned cap = k->cap_regs ? 2 * k->cap_regs : 64;
			const struct gbpf_ptx_tok **v = realloc(k->regs, cap * sizeof(*v));

			if (!v)
				return -ENOMEM;
			k->regs = v;
			k->cap_regs = cap;
		}
		k->regs[k->n_regs] = t;
		*slot = (int32_t)++k->n_regs;
		return *slot - 1;
	}
	return -ENOSPC;
}

/* The range of token indices the instructions of @b (nested scopes too) span. */
static void token_span(const struct gbpf_ptx_block *b, uint32_t *lo, uint32_t *hi, int depth)
{
	for (uint32_t i = 0; i < b->n && depth <= GBPF_PTX_MAX_DEPTH; i++) {
		const struct gbpf_ptx_stmt *s = b->v[i];

		if (s->kind == GBPF_PTX_STMT_SCOPE) {
			token_span(&s->body, lo, hi, depth + 1);
		} else if (s->kind == GBPF_PTX_STMT_INSN) {
			*lo = s->toks.first < *lo ? s->toks.first : *lo;
			*hi = s->toks.first + s->toks.n > *hi ? s->toks.first + s->toks.n : *hi;
		}
	}
}

/*
 * Number every register of @b's instructions (nested scopes too) and mark
 * each token as a register (its number), the stack's name or neither, so
 * that the analyses compare numbers, not names.
 */
static int index_tokens(struct sink *k, const struct gbpf_ptx_block *b, int depth)
{
	for (uint32_t i = 0; i < b->n; i++) {
		const struct gbpf_ptx_stmt *s = b->v[i];
		int err;

		if (depth > GBPF_PTX_MAX_DEPTH)
			return -EINVAL;
		if (s->kind == GBPF_PTX_STMT_SCOPE) {
			if ((err = index_tokens(k, &s->body, depth + 1)))
				return err;
			continue;
		}
		if (s->kind != GBPF_PTX_STMT_INSN)
			continue;
		for (uint32_t j = s->toks.first; j < s->toks.first + s->toks.n; j++) {
			const struct gbpf_ptx_tok *t = &k->m->toks[j];
			int x;

			if (j == s->opcode) {
				k->tok_op[j - k->tok_base] = (uint8_t)op_bits(t);
				continue;
			}
			if (t->kind == GBPF_PTX_TOK_IDENT && gbpf_ptx_tok_eq(t, k->stack))
				k->tok_reg[j - k->tok_base] = TOK_STACK;
			if (t->kind != GBPF_PTX_TOK_REG)
				continue;
			if ((x = reg_number(k, t)) < 0)
				return x;
			k->tok_reg[j - k->tok_base] = x;
		}
	}
	return 0;
}

/* The OP_* bits of instruction @s (index_tokens stored them at its opcode token). */
static unsigned op_class(const struct sink *k, const struct gbpf_ptx_stmt *s)
{
	return s->opcode >= k->tok_base && s->opcode < k->tok_end ? k->tok_op[s->opcode - k->tok_base]
								   : op_bits(&k->m->toks[s->opcode]);
}

static int32_t tok_class(const struct sink *k, uint32_t j)
{
	return j >= k->tok_base && j < k->tok_end ? k->tok_reg[j - k->tok_base] : TOK_NONE;
}

static bool bit_get(const uint64_t *w, unsigned i)
{
	return w[i / 64] >> (i % 64) & 1;
}

static void bit_put(uint64_t *w, unsigned i, bool v)
{
	if (v)
		w[i / 64] |= (uint64_t)1 << (i % 64);
	else
		w[i / 64] &= ~((uint64_t)1 << (i % 64));
}

/* Some register of @r may hold a stack address, or @r names the stack itself. */
static bool range_tainted(const struct sink *k, const uint64_t *taint, struct gbpf_ptx_range r)
{
	for (uint32_t j = r.first; j < r.first + r.n; j++) {
		int32_t c = tok_class(k, j);

		if (c == TOK_STACK || (c >= 0 && bit_get(taint, (unsigned)c)))
			return true;
	}
	return false;
}

/* The registers @s writes (its first operand) may hold a stack address or not. */
static void taint_dest(const struct sink *k, const struct gbpf_ptx_stmt *s, uint64_t *taint, bool v, bool weak)
{
	if (!s->n_ops || (s->ops[0].kind != GBPF_PTX_OP_REG && s->ops[0].kind != GBPF_PTX_OP_VEC))
		return;
	for (uint32_t j = s->ops[0].toks.first; j < s->ops[0].toks.first + s->ops[0].toks.n; j++) {
		int32_t x = tok_class(k, j);

		if (x >= 0 && (v || (s->pred < 0 && !weak))) /* a predicated write may leave the old value */
			bit_put(taint, (unsigned)x, v);
	}
}

/*
 * A scope that calls one of the code generator's helpers (maps, copies,
 * printing): they return map values, numbers or NULL, never an address of
 * the caller's stack. Any other call (a subprogram) may hand back what it
 * was given.
 */
static bool calls_helper(const struct gbpf_ptx_module *m, const struct gbpf_ptx_block *b)
{
	static const char *const prefixes[] = {"__gbpf_h_", "__gbpf_m_", "__gbpf_pq_"};

	for (uint32_t i = 0; i < b->n; i++) {
		const struct gbpf_ptx_stmt *s = b->v[i];

		if (s->kind != GBPF_PTX_STMT_INSN || !op_base(&m->toks[s->opcode], "call"))
			continue;
		for (uint32_t j = s->toks.first; j < s->toks.first + s->toks.n; j++)
			for (size_t p = 0; p < sizeof(prefixes) / sizeof(prefixes[0]); p++)
				if (m->toks[j].kind == GBPF_PTX_TOK_IDENT && m->toks[j].len > strlen(prefixes[p]) &&
				    !memcmp(m->toks[j].s, prefixes[p], strlen(prefixes[p])))
					return true;
		return false;
	}
	return false;
}

/*
 * Instruction @s on the taint state: a register written from a tainted one
 * (or from the stack's name, or by cvta.local) is tainted, any other write clears
 * it; a tainted value stored to memory taints every loaded value; in a call
 * scope calling a @subprogram a tainted argument taints what it returns.
 */
static void taint_insn(const struct sink *k, const struct gbpf_ptx_stmt *s, uint64_t *taint, bool in_scope,
		       bool subprogram, bool weak, bool *arg_tainted)
{
	unsigned c = op_class(k, s);
	bool src = false;

	/* the values it uses: every operand after the first but addresses */
	for (uint32_t o = 1; o < s->n_ops; o++)
		if (s->ops[o].kind != GBPF_PTX_OP_MEM && range_tainted(k, taint, s->ops[o].toks))
			src = true;
	if (c & OP_STORE_PARAM) {
		*arg_tainted |= in_scope && src;
		return;
	}
	if ((c & OP_WRITES) && src)
		bit_put(taint, k->n_regs, true);
	if (c & OP_READS)
		taint_dest(k, s, taint,
			   bit_get(taint, k->n_regs) || ((c & OP_PARAM) && in_scope && subprogram && *arg_tainted),
			   weak);
	else if (!(c & OP_WRITES))
		taint_dest(k, s, taint, !(c & OP_NO_ADDRESS) && (src || (c & OP_CVTA_LOCAL)), weak);
}

/* The instructions of @b in order (nested scopes inline). */
static void taint_block(const struct sink *k, const struct gbpf_ptx_block *b, uint64_t *taint, bool subprogram,
			bool weak, bool *arg_tainted, int depth)
{
	for (uint32_t j = 0; j < b->n && depth <= GBPF_PTX_MAX_DEPTH; j++) {
		if (b->v[j]->kind == GBPF_PTX_STMT_INSN)
			taint_insn(k, b->v[j], taint, true, subprogram, weak, arg_tainted);
		else if (b->v[j]->kind == GBPF_PTX_STMT_SCOPE)
			taint_block(k, &b->v[j]->body, taint, subprogram, weak, arg_tainted, depth + 1);
	}
}

static bool has_label(const struct gbpf_ptx_block *b, int depth)
{
	for (uint32_t j = 0; j < b->n && depth <= GBPF_PTX_MAX_DEPTH; j++)
		if (b->v[j]->kind == GBPF_PTX_STMT_LABEL ||
		    (b->v[j]->kind == GBPF_PTX_STMT_SCOPE && has_label(&b->v[j]->body, depth + 1)))
			return true;
	return false;
}

/*
 * A nested scope (a helper call, the warp-aggregated add) on @taint.
 * Straight code is followed in order; code with its own branches (closed:
 * scope_closed), or any code when @weak, is over-approximated: every write
 * may have happened, each from what its sources may hold after any number
 * of passes (then the state covers every point inside the scope too).
 */
static void taint_scope(const struct sink *k, const struct gbpf_ptx_block *b, uint64_t *taint, unsigned words,
			bool weak, bool helper)
{
	bool sub = !helper, arg_tainted = false;
	uint64_t *before;

	if (!weak && !has_label(b, 0)) {
		taint_block(k, b, taint, sub, false, &arg_tainted, 0);
		return;
	}
	before = malloc(words * sizeof(*before));
	if (!before) { /* nothing known: anything may hold a stack address */
		memset(taint, 0xff, words * sizeof(*taint));
		return;
	}
	do {
		memcpy(before, taint, words * sizeof(*before));
		arg_tainted = false;
		taint_block(k, b, taint, sub, true, &arg_tainted, 0);
	} while (memcmp(before, taint, words * sizeof(*before)));
	free(before);
}

static void taint_step(struct sink *k, uint32_t i, uint64_t *taint)
{
	const struct gbpf_ptx_stmt *s = k->body->v[i];
	bool arg_tainted = false;

	if (s->kind == GBPF_PTX_STMT_INSN)
		taint_insn(k, s, taint, false, false, false, &arg_tainted);
	else if (s->kind == GBPF_PTX_STMT_SCOPE)
		taint_scope(k, &s->body, taint, (k->n_regs + 1 + 63) / 64, false, k->u[i].scope_helper);
}

/* ---- what each statement does to the stack ---------------------------- */


/* [name] or [name+N] of another variable (the context): not the stack. */
static bool other_variable(const struct sink *k, const struct gbpf_ptx_operand *o)
{
	const struct gbpf_ptx_tok *t = &k->m->toks[o->toks.first + 1];

	return o->kind == GBPF_PTX_OP_MEM && o->toks.n >= 3 && t->kind == GBPF_PTX_TOK_IDENT &&
	       !gbpf_ptx_tok_eq(t, k->stack);
}

/* A memory instruction @s (its text as it was): what it does to the stack. */
static void classify_memory(const struct sink *k, const struct gbpf_ptx_stmt *s, struct unit *u)
{
	const struct gbpf_ptx_tok *op = &k->m->toks[s->opcode];
	bool load = op_base(op, "ld") || op_base(op, "ldu"), store = op_base(op, "st");
	uint32_t mo = load || op_base(op, "atom") ? 1 : 0;
	int64_t off;

	u->kind = load ? U_READ_ALL : U_CLOBBER;
	if (!(load || store || op_base(op, "atom") || op_base(op, "red")) || s->n_ops <= mo ||
	    s->ops[mo].kind != GBPF_PTX_OP_MEM)
		return;
	if (gbpf_ptx_op_has(op, "global") || gbpf_ptx_op_has(op, "shared") || gbpf_ptx_op_has(op, "const") ||
	    gbpf_ptx_op_has(op, "param")) {
		u->kind = U_OTHER;
	} else if ((load || store) && gbpf_ptx_stack_operand(k->m, &s->ops[mo], k->stack, &off) &&
		   (u->size = access_size(op))) {
		u->kind = load ? U_READ : U_WRITE;
		u->off = off;
	} else if (other_variable(k, &s->ops[mo]) || (!gbpf_ptx_op_has(op, "local") && !u->addr_tainted)) {
		u->kind = U_OTHER; /* generic, through a register that cannot hold a stack address */
	}
}

/* Control enters nested scope @b at its top and leaves at its end only: its branches stay inside. */
static bool scope_closed(const struct sink *k, const struct gbpf_ptx_block *top, const struct gbpf_ptx_block *b,
			 int depth)
{
	for (uint32_t j = 0; j < b->n; j++) {
		const struct gbpf_ptx_stmt *s = b->v[j];
		const struct gbpf_ptx_tok *op;

		if (depth > GBPF_PTX_MAX_DEPTH)
			return false;
		if (s->kind == GBPF_PTX_STMT_SCOPE && !scope_closed(k, top, &s->body, depth + 1))
			return false;
		if (s->kind != GBPF_PTX_STMT_INSN)
			continue;
		op = &k->m->toks[s->opcode];
		if (op_base(op, "ret") || op_base(op, "exit") ||
		    (op_base(op, "bra") && (s->n_ops != 1 || s->ops[0].kind != GBPF_PTX_OP_SYM ||
					    !gbpf_ptx_defines_label(k->m, top, &k->m->toks[s->ops[0].toks.first], 0))))
			return false;
	}
	return true;
}

/*
 * Calls that only read through their pointer arguments (map keys and
 * values, formats, records to output): the caller's stack is as it was
 * after them. Any other call may write it (bpf_probe_read into a stack
 * buffer).
 */
static bool call_reads_only(const struct gbpf_ptx_module *m, const struct gbpf_ptx_stmt *call)
{
	static const char *const names[] = {
		"__gbpf_h_map_lookup", "__gbpf_h_map_update", "__gbpf_h_map_delete", "__gbpf_h_trace_printk",
		"__gbpf_h_puts", "__gbpf_h_prandom", "__gbpf_h_perf_event_output", "__gbpf_h_ringbuf_output",
		"__gbpf_h_ringbuf_reserve", "__gbpf_h_ringbuf_submit", "__gbpf_h_ringbuf_discard",
		"__gbpf_m_hash_lookup", "__gbpf_m_hash_lookup_h", "__gbpf_m_hash_lookup_kh",
		"__gbpf_m_hash_update_nl"};

	for (uint32_t j = call->toks.first; j < call->toks.first + call->toks.n; j++)
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (m->toks[j].kind == GBPF_PTX_TOK_IDENT && gbpf_ptx_tok_eq(&m->toks[j], names[i]))
				return true;
	return false;
}

/*
 * Calls of helpers that take no address at all (the record words of a ring
 * or perf output passed by value, ptx_helpers.c): the callee cannot reach
 * the caller's stack, whatever the values are.
 */
static bool call_takes_values_only(const struct gbpf_ptx_module *m, const struct gbpf_ptx_stmt *call)
{
	for (uint32_t j = call->toks.first; j < call->toks.first + call->toks.n; j++)
		if (m->toks[j].kind == GBPF_PTX_TOK_IDENT && gbpf_ptx_tok_eq(&m->toks[j], "__gbpf_h_perf_outv"))
			return true;
	return false;
}

static enum unit_kind worse(enum unit_kind a, enum unit_kind b)
{
	return a == U_CLOBBER || b == U_CLOBBER ? U_CLOBBER : a == U_READ_ALL || b == U_READ_ALL ? U_READ_ALL : U_OTHER;
}

/*
 * What scope @b may do to the stack (U_OTHER, U_READ_ALL or U_CLOBBER),
 * @taint covering every point in it.
 */
static enum unit_kind scope_stack_access(const struct sink *k, const struct gbpf_ptx_block *b,
					 const uint64_t *taint, int depth)
{
	enum unit_kind kind = U_OTHER;

	for (uint32_t j = 0; j < b->n && kind != U_CLOBBER; j++) {
		const struct gbpf_ptx_stmt *s = b->v[j];
		const struct gbpf_ptx_tok *op;
		struct unit u = {.kind = U_OTHER};

		if (depth > GBPF_PTX_MAX_DEPTH)
			return U_CLOBBER;
		if (s->kind == GBPF_PTX_STMT_SCOPE)
			kind = worse(kind, scope_stack_access(k, &s->body, taint, depth + 1));
		if (s->kind != GBPF_PTX_STMT_INSN)
			continue;
		op = &k->m->toks[s->opcode];
		if (register_only(op) || op_base(op, "bra"))
			continue;
		if (op_base(op, "call")) {
			if (!call_takes_values_only(k->m, s))
				kind = worse(kind, call_reads_only(k->m, s) ? U_READ_ALL : U_CLOBBER);
			continue;
		}
		for (uint32_t o = 0; o < s->n_ops; o++)
			if (s->ops[o].kind == GBPF_PTX_OP_MEM && range_tainted(k, taint, s->ops[o].toks))
				u.addr_tainted = true;
		classify_memory(k, s, &u);
		/* a load of the stack reads it, a store writes it */
		kind = worse(kind, u.kind == U_READ ? U_READ_ALL : u.kind == U_WRITE ? U_CLOBBER : u.kind);
	}
	return kind;
}

/* Branches, labels and returns: the control flow, before anything else is known. */
static int classify_control(struct sink *k, uint32_t i, const struct gbpf_ptx_sink_stmt *info, struct unit *u)
{
	const struct gbpf_ptx_stmt *s = k->body->v[i];
	const struct gbpf_ptx_tok *op = &k->m->toks[s->opcode];

	memset(u, 0, sizeof(*u));
	u->store = -1;
	u->fw_write = info->fw_write;
	u->target = -1;
	u->kind = U_OTHER;
	if (s->kind == GBPF_PTX_STMT_LABEL) {
		u->kind = U_LABEL;
		return 0;
	}
	if (s->kind == GBPF_PTX_STMT_SCOPE && !scope_closed(k, &s->body, &s->body, 0))
		return -EINVAL; /* a way out of a scope this pass does not follow: leave the body as it is */
	if (s->kind == GBPF_PTX_STMT_SCOPE)
		u->scope_helper = calls_helper(k->m, &s->body);
	if (s->kind != GBPF_PTX_STMT_INSN || info->emitted == GBPF_PTX_SINK_SKIPPED ||
	    info->emitted == GBPF_PTX_SINK_REPLACED)
		return 0;
	u->pred = s->pred >= 0;
	if (op_base(op, "brx"))
		return -EINVAL; /* an indirect branch: its targets are not followed here */
	if (op_base(op, "ret") || op_base(op, "exit") || op_base(op, "trap")) {
		u->kind = U_END;
	} else if (op_base(op, "bra")) {
		if (s->n_ops != 1 || s->ops[0].kind != GBPF_PTX_OP_SYM ||
		    (u->target = label_index(k, &k->m->toks[s->ops[0].toks.first])) < 0)
			return -EINVAL; /* a branch this pass cannot follow: leave the body as it is */
		u->kind = U_BRANCH;
	}
	return 0;
}

/* Everything but the control flow, once the taint at each statement is known. */
static void classify_access(struct sink *k, const struct gbpf_ptx_sink_stmt *info, struct unit *u,
			    const struct gbpf_ptx_stmt *s)
{
	if (u->kind != U_OTHER || info->emitted == GBPF_PTX_SINK_SKIPPED ||
	    info->emitted == GBPF_PTX_SINK_REPLACED || s->kind == GBPF_PTX_STMT_DIRECTIVE ||
	    s->kind == GBPF_PTX_STMT_COMMENT)
		return;
	if (s->kind == GBPF_PTX_STMT_SCOPE) {
		u->kind = u->scope_kind;
	} else if (info->deferrable && info->size && info->fw_write >= 0 && k->n_stores < SINK_MAX_STORES) {
		u->kind = U_STORE;
		u->off = info->off;
		u->size = info->size;
		u->store = (int)k->n_stores;
		k->stores[k->n_stores].off = info->off;
		k->stores[k->n_stores].size = info->size;
		k->stores[k->n_stores].fw = info->fw_write;
		k->n_stores++;
	} else if (info->emitted == GBPF_PTX_SINK_LOCAL) {
		u->kind = info->size ? (info->is_store ? U_WRITE : U_READ) : info->is_store ? U_CLOBBER : U_READ_ALL;
		u->off = info->off;
		u->size = info->size;
	} else if (!register_only(&k->m->toks[s->opcode])) {
		classify_memory(k, s, u);
	}
}

/* ---- the analyses ----------------------------------------------------- */

static uint64_t store_bit(unsigned i)
{
	return (uint64_t)1 << i;
}

/*
 * The deferred stores' state: per store, HELD (its snapshot register holds
 * what its bytes should hold: it was the last write to them) and STALE
 * (held, and memory may not have it yet), a chain NONE < STALE < CLEAN
 * (held, not stale). pend[PEND_HELD] and pend[PEND_STALE] are masks of
 * stores; STALE is always within HELD.
 */
enum { PEND_HELD, PEND_STALE, PEND_WORDS };

/* Where paths join: the lower of the two on the chain. */
static void meet_pending(uint64_t *dst, const uint64_t *src, unsigned words)
{
	dst[PEND_HELD] &= src[PEND_HELD];
	dst[PEND_STALE] = (dst[PEND_STALE] | src[PEND_STALE]) & dst[PEND_HELD];
}

static void meet_union(uint64_t *dst, const uint64_t *src, unsigned words)
{
	for (unsigned w = 0; w < words; w++)
		dst[w] |= src[w];
}

/*
 * Unit @u on @pend: the stores to write out before it (returned), @pend
 * updated to after it.
 */
static uint64_t pending_transfer(const struct sink *k, const struct unit *u, uint64_t *pend)
{
	uint64_t flush = 0, drop = 0;

	if (u->kind == U_READ_ALL || u->kind == U_CLOBBER) {
		flush = pend[PEND_STALE];
		if (u->kind == U_CLOBBER)
			drop = pend[PEND_HELD];
	}
	for (unsigned i = 0; i < k->n_stores && u->kind != U_READ_ALL && u->kind != U_CLOBBER; i++) {
		const int64_t o = k->stores[i].off, e = o + k->stores[i].size;
		bool overlap = o < u->off + (int64_t)u->size && u->off < e;

		if (!(pend[PEND_HELD] & store_bit(i)))
			continue;
		/* every byte written again (a predicated store maybe not): its value is dead */
		if ((u->kind == U_STORE || (u->kind == U_WRITE && !u->pred)) && o >= u->off &&
		    e <= u->off + (int64_t)u->size) {
			drop |= store_bit(i);
			continue;
		}
		if ((u->kind == U_STORE || u->kind == U_WRITE) && overlap) {
			flush |= store_bit(i) & pend[PEND_STALE]; /* the bytes left of it, then memory knows */
			drop |= store_bit(i);
		} else if (u->kind == U_READ && overlap) {
			flush |= store_bit(i) & pend[PEND_STALE];
		}
		if (u->fw_write >= 0 && k->stores[i].fw == u->fw_write) { /* its register is about to change */
			flush |= store_bit(i) & pend[PEND_STALE];
			drop |= store_bit(i);
		}
	}
	pend[PEND_STALE] &= ~flush & ~drop;
	pend[PEND_HELD] &= ~drop;
	if (u->kind == U_STORE) {
		pend[PEND_HELD] |= store_bit((unsigned)u->store);
		pend[PEND_STALE] |= store_bit((unsigned)u->store);
	}
	return flush;
}

/* A store whose bytes nothing reads from statement @i on need not reach memory: it is let go. */
static void forget_dead(const struct sink *k, uint32_t i, uint64_t *pend)
{
	pend[PEND_HELD] &= k->live[i];
	pend[PEND_STALE] &= k->live[i];
}

static void pending_step(struct sink *k, uint32_t i, uint64_t *state)
{
	forget_dead(k, i, state);
	pending_transfer(k, &k->u[i], state);
}

/* Falls into the next statement: not after an unconditional branch or a return. */
static bool falls_through(const struct unit *u)
{
	return !((u->kind == U_BRANCH || u->kind == U_END) && !u->pred);
}

/* @dst (reached or not) met with @src, an unreached side left out. */
static void meet_into(const struct flow *fl, uint64_t *dst, bool *dst_reach, const uint64_t *src, bool src_reach)
{
	if (!src_reach)
		return;
	if (!*dst_reach) {
		memcpy(dst, src, fl->words * sizeof(*dst));
		*dst_reach = true;
		return;
	}
	fl->meet(dst, src, fl->words);
}

/*
 * Iterate @fl to its fixed point: @at (words per statement), @at_reach:
 * the state where each label is. Returns 0, -E2BIG when it does not
 * settle, -ENOMEM.
 */
static int solve(struct sink *k, const struct flow *fl, uint64_t *at, bool *at_reach)
{
	uint32_t n = k->body->n;
	size_t sz = (size_t)n * fl->words * sizeof(uint64_t);
	uint64_t *edge = calloc(1, sz), *next = calloc(1, sz), *cur = calloc(fl->words, sizeof(*cur));
	bool *edge_reach = calloc(n, sizeof(bool)), *next_reach = calloc(n, sizeof(bool));
	int err = -ENOMEM;

	if (!edge || !next || !cur || !edge_reach || !next_reach)
		goto out;
	err = -E2BIG;
	for (unsigned sweep = 0; sweep < SINK_MAX_SWEEPS; sweep++) {
		bool reach = true;

		memset(next, 0, sz);
		memset(next_reach, 0, n * sizeof(bool));
		memset(cur, 0, fl->words * sizeof(*cur));
		for (uint32_t i = 0; i < n; i++) {
			const struct unit *u = &k->u[i];

			if (u->kind == U_LABEL) {
				meet_into(fl, cur, &reach, edge + (size_t)i * fl->words, edge_reach[i]);
				memcpy(at + (size_t)i * fl->words, cur, fl->words * sizeof(*cur));
				at_reach[i] = reach;
				continue;
			}
			if (!reach)
				continue;
			fl->step(k, i, cur);
			if (u->kind == U_BRANCH)
				meet_into(fl, next + (size_t)u->target * fl->words, &next_reach[u->target], cur, true);
			reach = falls_through(u);
		}
		if (!memcmp(edge, next, sz) && !memcmp(edge_reach, next_reach, n * sizeof(bool))) {
			err = 0;
			break;
		}
		memcpy(edge, next, sz);
		memcpy(edge_reach, next_reach, n * sizeof(bool));
	}
out:
	free(edge);
	free(next);
	free(cur);
	free(edge_reach);
	free(next_reach);
	return err;
}

/* The stores any of whose bytes [off, off + size) touches. */
static uint64_t stores_overlapping(const struct sink *k, int64_t off, unsigned size)
{
	uint64_t set = 0;

	for (unsigned i = 0; i < k->n_stores; i++)
		if (k->stores[i].off < off + (int64_t)size && off < k->stores[i].off + (int64_t)k->stores[i].size)
			set |= store_bit(i);
	return set;
}

/* The stores every byte of which [off, off + size) covers. */
static uint64_t stores_covered(const struct sink *k, int64_t off, unsigned size)
{
	uint64_t set = 0;

	for (unsigned i = 0; i < k->n_stores; i++)
		if (k->stores[i].off >= off && k->stores[i].off + (int64_t)k->stores[i].size <= off + (int64_t)size)
			set |= store_bit(i);
	return set;
}

/*
 * Backward, to its fixed point: k->live[i] holds store s when, on some path
 * from just before statement i, a byte of s's range may be read before all
 * of them are written again or the probe ends. Without it a store was
 * written out wherever its register was reused or paths with different
 * registers joined, even where nothing read the stack again: mem_stride's
 * two key words, stored at each of a kernel's memory sites (two local
 * stores per access on its hot path) though no path after them reads the
 * stack. Returns 0 or -E2BIG.
 */
static int solve_live(struct sink *k)
{
	const uint64_t all = k->n_stores >= 64 ? ~(uint64_t)0 : store_bit(k->n_stores) - 1;
	uint32_t n = k->body->n;

	memset(k->live, 0, (size_t)n * sizeof(*k->live));
	for (unsigned sweep = 0; sweep < SINK_MAX_SWEEPS; sweep++) {
		bool changed = false;

		for (uint32_t i = n; i-- > 0;) {
			const struct unit *u = &k->u[i];
			uint64_t after = 0, before;

			if (falls_through(u) && i + 1 < n)
				after |= k->live[i + 1];
			if (u->kind == U_BRANCH)
				after |= k->live[u->target];
			switch (u->kind) {
			case U_READ:
				before = after | stores_overlapping(k, u->off, u->size);
				break;
			case U_READ_ALL:
			case U_CLOBBER:
				before = all;
				break;
			case U_WRITE: /* a predicated store may not happen */
				before = u->pred ? after : after & ~stores_covered(k, u->off, u->size);
				break;
			case U_STORE:
				before = after & ~stores_covered(k, u->off, u->size);
				break;
			default:
				before = after;
				break;
			}
			changed |= before != k->live[i];
			k->live[i] = before;
		}
		if (!changed)
			return 0;
	}
	return -E2BIG;
}

/*
 * The taint at each statement, from its fixed point: whether an address
 * operand of the statement may hold a stack address (unreached code: yes).
 */
static int mark_tainted_addresses(struct sink *k)
{
	struct flow fl = {.words = (k->n_regs + 1 + 63) / 64, .meet = meet_union, .step = taint_step};
	uint32_t n = k->body->n;
	uint64_t *at = calloc((size_t)(n ? n : 1) * fl.words, sizeof(*at)), *cur = calloc(fl.words, sizeof(*cur));
	uint64_t *inside = calloc(fl.words, sizeof(*inside));
	bool *at_reach = calloc(n ? n : 1, sizeof(bool)), reach = true;
	int err = -ENOMEM;

	if (!at || !cur || !inside || !at_reach || (err = solve(k, &fl, at, at_reach)))
		goto out;
	for (uint32_t i = 0; i < n; i++) {
		const struct gbpf_ptx_stmt *s = k->body->v[i];
		struct unit *u = &k->u[i];

		if (u->kind == U_LABEL) {
			memcpy(cur, at + (size_t)i * fl.words, fl.words * sizeof(*cur));
			reach = at_reach[i];
			continue;
		}
		u->addr_tainted = !reach;
		u->scope_kind = reach ? U_OTHER : U_CLOBBER;
		for (uint32_t o = 0; reach && s->kind == GBPF_PTX_STMT_INSN && o < s->n_ops; o++)
			if (s->ops[o].kind == GBPF_PTX_OP_MEM && range_tainted(k, cur, s->ops[o].toks))
				u->addr_tainted = true;
		if (reach && s->kind == GBPF_PTX_STMT_SCOPE) {
			memcpy(inside, cur, fl.words * sizeof(*cur));
			taint_scope(k, &s->body, inside, fl.words, true, u->scope_helper);
			u->scope_kind = scope_stack_access(k, &s->body, inside, 0);
		}
		if (reach)
			taint_step(k, i, cur);
		reach = reach && falls_through(u);
	}
out:
	free(at);
	free(cur);
	free(inside);
	free(at_reach);
	return err;
}

/* ---- the text --------------------------------------------------------- */

static void emit_flush(struct text *t, const struct sink *k, uint64_t set)
{
	for (unsigned i = 0; i < k->n_stores; i++)
		if (set & store_bit(i))
			gbpf_ptx_tx(t, "st.local.b%u [%s+%" PRId64 "], %%__gbpf_fw%d;\n", k->stores[i].size * 8,
				    k->stack, k->stores[i].off, k->stores[i].fw);
}

struct trampoline {
	uint64_t flush;
	int target;
};

/* The body's text with the stores moved, from the state @at (PEND_WORDS a statement) at each label. */
static void emit_text(struct sink *k, const struct gbpf_ptx_sink_stmt *info, const char *text,
		      const uint64_t *at, const bool *at_reach, const char *end_label, struct text *out,
		      unsigned *deferred)
{
	const struct gbpf_ptx_module *m = k->m;
	struct trampoline *tr = NULL;
	unsigned n_tr = 0;
	uint64_t cur[PEND_WORDS] = {0, 0};
	bool reach = true;

	for (uint32_t i = 0; i < k->body->n && !out->oom; i++) {
		const struct unit *u = &k->u[i];
		const struct gbpf_ptx_sink_stmt *in = &info[i];
		const struct gbpf_ptx_stmt *s = k->body->v[i];
		const uint64_t *target = u->kind == U_BRANCH ? at + (size_t)u->target * PEND_WORDS : NULL;
		const char *at_text = text + in->at;
		int len = (int)(in->end - in->at);
		uint64_t edge = 0;

		if (u->kind == U_LABEL) {
			/* falling in: what is stale here but not held on every way in */
			if (reach)
				emit_flush(out, k, cur[PEND_STALE] & ~at[(size_t)i * PEND_WORDS + PEND_HELD] & k->live[i]);
			memcpy(cur, at + (size_t)i * PEND_WORDS, sizeof(cur));
			reach = at_reach[i];
			gbpf_ptx_tx(out, "%.*s", len, at_text);
			continue;
		}
		if (!reach) { /* never runs: as it was */
			gbpf_ptx_tx(out, "%.*s", len, at_text);
			continue;
		}
		forget_dead(k, i, cur);
		emit_flush(out, k, pending_transfer(k, u, cur));
		if (target)
			edge = cur[PEND_STALE] & ~target[PEND_HELD] & k->live[u->target];
		if (u->kind == U_STORE) {
			gbpf_ptx_tx(out, "%.*s", (int)(in->store_at - in->at), at_text); /* the register's copy only */
			(*deferred)++;
		} else if (edge && u->pred) {
			struct trampoline *v = realloc(tr, (n_tr + 1) * sizeof(*v));

			if (!v) {
				out->oom = true;
				break;
			}
			tr = v;
			tr[n_tr].flush = edge;
			tr[n_tr].target = u->target;
			gbpf_ptx_tx(out, "@%s%.*s %.*s __gbpf_sk%u;\n", s->pred_neg ? "!" : "", (int)m->toks[s->pred].len,
				    m->toks[s->pred].s, (int)m->toks[s->opcode].len, m->toks[s->opcode].s, n_tr);
			n_tr++;
		} else {
			emit_flush(out, k, edge);
			gbpf_ptx_tx(out, "%.*s", len, at_text);
		}
		reach = falls_through(u);
	}
	if (n_tr && reach) /* the body's end falls into the trampolines otherwise */
		gbpf_ptx_tx(out, "bra.uni %s;\n", end_label);
	for (unsigned j = 0; j < n_tr; j++) {
		const struct gbpf_ptx_tok *name = &m->toks[k->body->v[tr[j].target]->toks.first];

		gbpf_ptx_tx(out, "__gbpf_sk%u:\n", j);
		emit_flush(out, k, tr[j].flush);
		gbpf_ptx_tx(out, "bra.uni %.*s;\n", (int)name->len, name->s);
	}
	free(tr);
}

int gbpf_ptx_sink(const struct gbpf_ptx_module *m, const struct gbpf_ptx_block *body,
		  const struct gbpf_ptx_sink_stmt *info, const char *text, const char *stack_name,
		  const char *end_label, struct text *out, unsigned *deferred)
{
	struct sink k = {.m = m, .body = body, .stack = stack_name};
	struct flow pending = {.words = PEND_WORDS, .meet = meet_pending, .step = pending_step};
	uint32_t n = body->n;
	uint64_t *at = calloc((size_t)(n ? n : 1) * PEND_WORDS, sizeof(*at));
	bool *at_reach = calloc(n ? n : 1, sizeof(bool));
	int err = -ENOMEM;

	*deferred = 0;
	k.u = calloc(n ? n : 1, sizeof(*k.u));
	k.tok_base = UINT32_MAX;
	token_span(body, &k.tok_base, &k.tok_end, 0);
	if (k.tok_end <= k.tok_base)
		k.tok_base = k.tok_end = 0;
	k.tok_reg = malloc((k.tok_end - k.tok_base + 1) * sizeof(*k.tok_reg));
	k.tok_op = calloc(k.tok_end - k.tok_base + 1, sizeof(*k.tok_op));
	for (uint32_t j = 0; k.tok_reg && j < k.tok_end - k.tok_base; j++)
		k.tok_reg[j] = TOK_NONE;
	k.labels = malloc((n ? n : 1) * sizeof(*k.labels));
	k.live = calloc(n ? n : 1, sizeof(*k.live));
	for (uint32_t i = 0; k.labels && i < n; i++)
		if (body->v[i]->kind == GBPF_PTX_STMT_LABEL)
			k.labels[k.n_labels++] = i;
	if (!k.u || !at || !at_reach || !k.tok_reg || !k.tok_op || !k.labels || !k.live ||
	    (err = index_tokens(&k, body, 0)))
		goto out;
	for (uint32_t i = 0; i < n; i++)
		if ((err = classify_control(&k, i, &info[i], &k.u[i])))
			goto out;
	if ((err = mark_tainted_addresses(&k)))
		goto out;
	for (uint32_t i = 0; i < n; i++)
		classify_access(&k, &info[i], &k.u[i], body->v[i]);
	if (!k.n_stores || (err = solve_live(&k)) || (err = solve(&k, &pending, at, at_reach)))
		goto out; /* nothing to defer (err 0): the caller keeps its text */
	emit_text(&k, info, text, at, at_reach, end_label, out, deferred);
	err = out->oom ? -ENOMEM : 0;
out:
	free(k.u);
	free(k.regs);
	free(k.tok_reg);
	free(k.tok_op);
	free(k.labels);
	free(k.live);
	free(at);
	free(at_reach);
	return err;
}
