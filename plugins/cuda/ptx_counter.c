/* SPDX-License-Identifier: MIT */
/*
 * Finding memory probes that only count (ptx_counter.h).
 *
 * Every path of the program is followed with an abstract state: what each
 * register and each stack byte holds (a site constant, a move of an
 * immediate, the context or frame pointer, the map, a lookup's result,
 * an update's result, or something per lane), and where the path stands
 * in the one sequence of map operations a counter may make:
 *
 *   lookup -> hit -> atomic add of C -> exit
 *          -> miss -> exit
 *          -> miss -> update(key, C) -> exit
 *                                    -> ok -> exit
 *                                    -> failed -> exit
 *                                              -> lookup -> hit -> add C -> exit
 *                                                        -> miss -> exit
 *
 * Branches on site constants are followed both ways (at one site only one
 * way is ever taken); any other branch, a loop or a call other than the
 * lookup and the update ends the search with "not a counter". Each move of
 * an immediate is classed by its uses: counted (the atomic add's operand,
 * the update's value) or not (key bytes, flags, arithmetic, branches); a
 * move used both ways cannot be replaced by the sum, so the program is not
 * a counter either.
 */
#include "ptx_counter.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <gbpf/helper_ids.h>
#include <gbpf/insn.h>
#include <gbpf/probe_ctx.h>

/* What a register or a stack byte holds. */
enum cval {
	CV_NONE,  /* nothing yet (or clobbered by a call) */
	CV_SITE,  /* the same value every time the program runs at one site */
	CV_IMM,   /* the value of the immediate move at pc (site constant or count) */
	CV_CTX,   /* the context pointer + off */
	CV_FP,    /* the frame pointer + off */
	CV_MAP,   /* the map with index id */
	CV_LOOK,  /* a lookup's result, not yet tested */
	CV_HIT,   /* a lookup's result that is not NULL */
	CV_NULL,  /* a lookup's result that is NULL */
	CV_UPD,   /* an update's result */
	CV_LANE,  /* differs between executions (the access's address or value) */
};

struct creg {
	uint8_t k;
	int32_t off;
	uint32_t pc; /* CV_IMM */
};

/* A stack byte: its class, and for CV_IMM the move's pc and the store that wrote it. */
struct cbyte {
	uint8_t k;
	uint8_t store_size;
	int16_t store_off;
	uint32_t pc;
};

/* Where a path stands in the sequence of map operations (see the top). */
enum cstep {
	ST_START,
	ST_LOOK1,    /* first lookup done, result untested */
	ST_HIT1,
	ST_MISS1,
	ST_UPD,      /* update done, result untested */
	ST_UPD_OK,
	ST_UPD_FAIL,
	ST_LOOK2,
	ST_HIT2,
	ST_MISS2,
	ST_ADDED,
};

struct cstate {
	size_t pc;
	struct creg r[GBPF_REG_COUNT];
	struct cbyte stk[GBPF_STACK_SIZE];
	uint8_t step;
	int32_t key_off; /* the key's first stack byte, fixed by the first map call; -1 = none yet */
};

struct csearch {
	const struct gbpf_prog_desc *p;
	uint8_t *counted;  /* per pc: the move's value is counted */
	uint8_t *constant; /* per pc: the move's value is used as a constant */
	int map;           /* -1 until the first map call */
	uint32_t key_size, value_size;
	uint32_t fields;
	bool added;
	unsigned budget;   /* instructions left to follow, over all paths */
	struct cstate *stack;
	size_t depth, cap;
};

static bool ptr_class(uint8_t k)
{
	return k == CV_CTX || k == CV_FP || k == CV_MAP || k == CV_LOOK || k == CV_HIT || k == CV_NULL;
}

/* A value used as a constant (a key byte, an operand, a flag): an immediate's move is not a count. */
static void use_constant(struct csearch *s, const struct creg *v)
{
	if (v->k == CV_IMM)
		s->constant[v->pc] = 1;
}

/* The class of a value computed from @p a (and @p b when not NULL); CV_NONE when it may not be computed. */
static uint8_t computed(struct csearch *s, const struct creg *a, const struct creg *b)
{
	uint8_t k = CV_SITE;

	for (int i = 0; i < 2; i++) {
		const struct creg *v = i ? b : a;

		if (!v)
			continue;
		if (v->k == CV_NONE || v->k == CV_UPD || ptr_class(v->k))
			return CV_NONE;
		use_constant(s, v);
		if (v->k == CV_LANE)
			k = CV_LANE;
	}
	return k;
}

static bool push(struct csearch *s, const struct cstate *st)
{
	if (s->depth == s->cap) {
		size_t ncap = s->cap ? s->cap * 2 : 8;
		struct cstate *n = realloc(s->stack, ncap * sizeof(*n));

		if (!n)
			return false;
		s->stack = n;
		s->cap = ncap;
	}
	s->stack[s->depth++] = *st;
	return true;
}

/* Context field at @p off of @p size bytes: a site constant, or per lane (address, value). */
static uint8_t ctx_field(struct csearch *s, long long off, int size)
{
	static const struct {
		unsigned off;
		uint32_t bit;
	} fields[] = {
		{offsetof(struct gbpf_gpu_ctx, mem_size), PTX_COUNTER_FIELD_SIZE},
		{offsetof(struct gbpf_gpu_ctx, mem_kind), PTX_COUNTER_FIELD_KIND},
		{offsetof(struct gbpf_gpu_ctx, mem_space), PTX_COUNTER_FIELD_SPACE},
		{offsetof(struct gbpf_gpu_ctx, mem_site), PTX_COUNTER_FIELD_SITE},
	};

	if (off < 0 || off + size > (long long)sizeof(struct gbpf_gpu_ctx))
		return CV_NONE;
	if (off < (long long)offsetof(struct gbpf_gpu_ctx, mem_size) &&
	    off + size > (long long)offsetof(struct gbpf_gpu_ctx, mem_addr))
		return CV_LANE;
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		if (off < fields[i].off + 4 && off + size > fields[i].off)
			s->fields |= fields[i].bit;
	return CV_SITE;
}

static bool stack_range(const struct creg *ptr, int16_t off, unsigned size, int *first)
{
	long long o = (long long)ptr->off + off;

	if (ptr->k != CV_FP || o < -GBPF_STACK_SIZE || o + (long long)size > 0)
		return false;
	*first = (int)(o + GBPF_STACK_SIZE);
	return true;
}

static bool load(struct csearch *s, struct cstate *st, const struct gbpf_insn *in)
{
	static const unsigned sizes[] = {4, 2, 1, 8};
	unsigned size = sizes[GBPF_SIZE(in->code) >> 3];
	const struct creg *src = &st->r[in->src];
	struct creg *d = &st->r[in->dst];
	int first;

	if (GBPF_MODE(in->code) != GBPF_MEM && GBPF_MODE(in->code) != GBPF_MEMSX)
		return false;
	if (src->k == CV_CTX) {
		d->k = ctx_field(s, (long long)src->off + in->off, (int)size);
		return d->k != CV_NONE;
	}
	if (!stack_range(src, in->off, size, &first))
		return false; /* the counted value itself, or memory we do not follow */
	const struct cbyte *b = &st->stk[first];
	bool whole = b->k == CV_IMM && b->store_off == first && b->store_size == size &&
		     GBPF_MODE(in->code) == GBPF_MEM;
	uint8_t k = CV_SITE;

	for (unsigned i = 0; i < size; i++) {
		if (b[i].k == CV_NONE)
			return false;
		if (b[i].k == CV_LANE)
			k = CV_LANE;
		if (b[i].k == CV_IMM && (b[i].pc != b->pc || b[i].store_off != b->store_off))
			whole = false;
	}
	if (whole) {
		/* a spilled immediate read back whole: still that immediate */
		*d = (struct creg){.k = CV_IMM, .pc = b->pc};
		return true;
	}
	for (unsigned i = 0; i < size; i++)
		if (b[i].k == CV_IMM)
			s->constant[b[i].pc] = 1;
	*d = (struct creg){.k = k};
	return true;
}

static bool store(struct csearch *s, struct cstate *st, const struct gbpf_insn *in)
{
	static const unsigned sizes[] = {4, 2, 1, 8};
	unsigned size = sizes[GBPF_SIZE(in->code) >> 3];
	struct creg v = {.k = CV_SITE};
	int first;

	if (GBPF_MODE(in->code) != GBPF_MEM)
		return false;
	if (GBPF_CLASS(in->code) == GBPF_STX) {
		v = st->r[in->src];
		if (v.k == CV_NONE || v.k == CV_UPD || ptr_class(v.k))
			return false; /* a pointer spilled: not followed */
	}
	if (!stack_range(&st->r[in->dst], in->off, size, &first))
		return false;
	if (st->key_off >= 0 && first < st->key_off + (int)s->key_size && first + (int)size > st->key_off)
		return false; /* the key changes between map calls */
	for (unsigned i = 0; i < size; i++)
		st->stk[first + i] = (struct cbyte){.k = v.k, .store_size = (uint8_t)size,
						    .store_off = (int16_t)first, .pc = v.pc};
	return true;
}

/* The increment C of an atomic add or an inserted value: an immediate's move, counted. */
static bool count_use(struct csearch *s, const struct creg *v)
{
	if (v->k != CV_IMM)
		return false;
	s->counted[v->pc] = 1;
	return true;
}

static bool atomic_add(struct csearch *s, struct cstate *st, const struct gbpf_insn *in)
{
	unsigned size = GBPF_SIZE(in->code) == GBPF_DW ? 8 : GBPF_SIZE(in->code) == GBPF_W ? 4 : 0;

	if (in->imm != GBPF_ATOMIC_ADD || st->r[in->dst].k != CV_HIT || st->r[in->dst].off || in->off ||
	    size != s->value_size || (st->step != ST_HIT1 && st->step != ST_HIT2))
		return false;
	if (!count_use(s, &st->r[in->src]))
		return false;
	st->step = ST_ADDED;
	s->added = true;
	return true;
}

/* The key at r2: the same frame bytes at every map call, built from site constants only. */
static bool key_arg(struct csearch *s, struct cstate *st)
{
	int first;

	if (!stack_range(&st->r[2], 0, s->key_size, &first))
		return false;
	if (st->key_off >= 0 && st->key_off != first)
		return false;
	for (unsigned i = 0; i < s->key_size; i++) {
		const struct cbyte *b = &st->stk[first + i];

		if (b->k != CV_SITE && b->k != CV_IMM)
			return false;
		if (b->k == CV_IMM)
			s->constant[b->pc] = 1;
	}
	st->key_off = first;
	return true;
}

static bool map_arg(struct csearch *s, const struct cstate *st)
{
	const struct gbpf_map_desc *m;
	const struct creg *r1 = &st->r[1];

	if (r1->k != CV_MAP)
		return false;
	if (s->map >= 0)
		return (uint32_t)s->map == (uint32_t)r1->off;
	m = &s->p->maps[r1->off];
	switch (m->type) {
	case GBPF_MAP_TYPE_HASH:
	case GBPF_MAP_TYPE_PERCPU_HASH:
	case GBPF_MAP_TYPE_GPU_HASH:
	case GBPF_MAP_TYPE_ARRAY:
	case GBPF_MAP_TYPE_PERCPU_ARRAY:
	case GBPF_MAP_TYPE_GPU_ARRAY:
		break;
	default:
		return false; /* LRU: fewer lookups would change which key is evicted */
	}
	if ((m->value_size != 8 && m->value_size != 4) || !m->key_size || m->key_size > 64)
		return false;
	s->map = (int)r1->off;
	s->key_size = m->key_size;
	s->value_size = m->value_size;
	return true;
}

/* The value at r3 of an update: exactly one store of an immediate's move, the value's size. */
static bool value_arg(struct csearch *s, const struct cstate *st)
{
	const struct cbyte *b;
	int first;

	if (!stack_range(&st->r[3], 0, s->value_size, &first))
		return false;
	if (first < st->key_off + (int)s->key_size && first + (int)s->value_size > st->key_off)
		return false;
	b = &st->stk[first];
	if (b->k != CV_IMM || b->store_off != first || b->store_size != s->value_size)
		return false;
	for (unsigned i = 1; i < s->value_size; i++)
		if (b[i].k != CV_IMM || b[i].pc != b->pc || b[i].store_off != first)
			return false;
	s->counted[b->pc] = 1;
	return true;
}

static bool call(struct csearch *s, struct cstate *st, const struct gbpf_insn *in)
{
	if (in->src != GBPF_CALL_HELPER || !map_arg(s, st) || !key_arg(s, st))
		return false;
	if (in->imm == GBPF_HELPER_MAP_LOOKUP_ELEM) {
		if (st->step != ST_START && st->step != ST_UPD_FAIL)
			return false;
		st->step = st->step == ST_START ? ST_LOOK1 : ST_LOOK2;
		st->r[0] = (struct creg){.k = CV_LOOK};
	} else if (in->imm == GBPF_HELPER_MAP_UPDATE_ELEM) {
		const struct creg *flags = &st->r[4];

		if (st->step != ST_MISS1 || !value_arg(s, st) || flags->k != CV_IMM)
			return false;
		/* BPF_ANY or BPF_NOEXIST: either inserts C where the key is missing */
		uint64_t f = (uint64_t)(int64_t)s->p->insns[flags->pc].imm;

		if (f > 1)
			return false;
		s->constant[flags->pc] = 1;
		st->step = ST_UPD;
		st->r[0] = (struct creg){.k = CV_UPD};
	} else {
		return false;
	}
	for (unsigned r = 1; r <= 5; r++)
		st->r[r] = (struct creg){.k = CV_NONE};
	return true;
}

/* A lookup's null test: both ways, the result known on each. */
static bool fork_lookup(struct csearch *s, struct cstate *st, size_t taken, bool taken_is_null)
{
	struct cstate other = *st;
	struct cstate *sides[2] = {st, &other};

	/* st falls through, other jumps */
	for (int i = 0; i < 2; i++) {
		bool null = i ? taken_is_null : !taken_is_null;
		struct cstate *x = sides[i];

		for (unsigned r = 0; r < GBPF_REG_COUNT; r++)
			if (x->r[r].k == CV_LOOK)
				x->r[r].k = null ? CV_NULL : CV_HIT;
		x->step = x->step == ST_LOOK1 ? (null ? ST_MISS1 : ST_HIT1) : (null ? ST_MISS2 : ST_HIT2);
	}
	other.pc = taken;
	return push(s, &other);
}

static bool fork_update(struct csearch *s, struct cstate *st, size_t taken, bool taken_is_ok)
{
	struct cstate other = *st;

	st->step = taken_is_ok ? ST_UPD_FAIL : ST_UPD_OK;
	other.step = taken_is_ok ? ST_UPD_OK : ST_UPD_FAIL;
	other.pc = taken;
	return push(s, &other);
}

static bool jump(struct csearch *s, struct cstate *st, const struct gbpf_insn *in)
{
	uint8_t op = GBPF_OP(in->code);
	long long t = (long long)st->pc + 1 + in->off;
	struct creg *d = &st->r[in->dst];
	bool imm_zero = GBPF_SRC(in->code) == GBPF_K && in->imm == 0;

	if (GBPF_CLASS(in->code) == GBPF_JMP32 && op == GBPF_JA)
		return false; /* gotol */
	if (in->code == GBPF_OP_JA) {
		if (t <= (long long)st->pc || t >= (long long)s->p->insn_cnt)
			return false;
		st->pc = (size_t)t;
		return true;
	}
	if (t <= (long long)st->pc || t >= (long long)s->p->insn_cnt)
		return false; /* loops are not followed */
	st->pc++;
	if (d->k == CV_LOOK && imm_zero && GBPF_CLASS(in->code) == GBPF_JMP && (op == GBPF_JEQ || op == GBPF_JNE))
		return fork_lookup(s, st, (size_t)t, op == GBPF_JEQ);
	if (d->k == CV_UPD && imm_zero && (op == GBPF_JEQ || op == GBPF_JNE))
		return fork_update(s, st, (size_t)t, op == GBPF_JEQ);
	if (d->k == CV_UPD || ptr_class(d->k))
		return false;
	if (computed(s, d, GBPF_SRC(in->code) == GBPF_X ? &st->r[in->src] : NULL) != CV_SITE)
		return false; /* a branch on the access's address or value */
	/* a site constant: one way at any one site, so both ways are followed */
	struct cstate other = *st;

	other.pc = (size_t)t;
	return push(s, &other);
}

static bool alu(struct csearch *s, struct cstate *st, const struct gbpf_insn *in)
{
	uint8_t op = GBPF_OP(in->code), cls = GBPF_CLASS(in->code);
	struct creg *d = &st->r[in->dst];
	const struct creg *src = GBPF_SRC(in->code) == GBPF_X ? &st->r[in->src] : NULL;

	if (in->dst >= 10)
		return false;
	if (op == GBPF_MOV && !in->off) {
		if (!src) {
			*d = (struct creg){.k = CV_IMM, .pc = (uint32_t)st->pc};
			return true;
		}
		if (cls == GBPF_ALU64) {
			*d = *src;
			return d->k != CV_NONE;
		}
		d->k = computed(s, src, NULL);
		return d->k != CV_NONE;
	}
	if (cls == GBPF_ALU64 && (op == GBPF_ADD || op == GBPF_SUB) && !src && (d->k == CV_FP || d->k == CV_CTX)) {
		d->off += op == GBPF_ADD ? in->imm : -in->imm;
		return true;
	}
	if (op == GBPF_NEG || op == GBPF_END || op == GBPF_MOV)
		src = NULL; /* unary (a sign-extending move reads its source: below) */
	if (op == GBPF_MOV) {
		d->k = computed(s, &st->r[in->src], NULL);
		return d->k != CV_NONE;
	}
	d->k = computed(s, d, src);
	d->off = 0;
	return d->k != CV_NONE;
}

static bool lddw(struct csearch *s, struct cstate *st, const struct gbpf_insn *in)
{
	if (st->pc + 1 >= s->p->insn_cnt || in->dst >= 10)
		return false;
	if (in->src == GBPF_PSEUDO_MAP_IDX && in->imm >= 0 && (size_t)in->imm < s->p->map_cnt)
		st->r[in->dst] = (struct creg){.k = CV_MAP, .off = in->imm};
	else if (in->src == 0)
		st->r[in->dst] = (struct creg){.k = CV_SITE};
	else
		return false;
	st->pc += 2;
	return true;
}

/* Follow one path from @p st to its exit; false when the program is not a counter. */
static bool follow(struct csearch *s, struct cstate *st)
{
	for (;;) {
		const struct gbpf_insn *in;

		if (st->pc >= s->p->insn_cnt || !s->budget--)
			return false;
		in = &s->p->insns[st->pc];
		/* registers 0..10 only (a wide load's and a call's src is a tag) */
		if (in->dst >= GBPF_REG_COUNT ||
		    (in->src >= GBPF_REG_COUNT && in->code != GBPF_OP_LDDW && in->code != GBPF_OP_CALL))
			return false;
		switch (GBPF_CLASS(in->code)) {
		case GBPF_ALU:
		case GBPF_ALU64:
			if (!alu(s, st, in))
				return false;
			st->pc++;
			break;
		case GBPF_LD:
			if (in->code != GBPF_OP_LDDW || !lddw(s, st, in))
				return false;
			break;
		case GBPF_LDX:
			if (in->dst >= 10 || !load(s, st, in))
				return false;
			st->pc++;
			break;
		case GBPF_ST:
			if (!store(s, st, in))
				return false;
			st->pc++;
			break;
		case GBPF_STX:
			if (GBPF_MODE(in->code) == GBPF_ATOMIC ? !atomic_add(s, st, in) : !store(s, st, in))
				return false;
			st->pc++;
			break;
		case GBPF_JMP:
		case GBPF_JMP32:
			if (in->code == GBPF_OP_EXIT) {
				/* a hit must be counted; an untested update may have inserted or not */
				return st->step != ST_HIT1 && st->step != ST_HIT2;
			}
			if (in->code == GBPF_OP_CALL) {
				if (!call(s, st, in))
					return false;
				st->pc++;
				break;
			}
			if (GBPF_OP(in->code) == GBPF_CALL || GBPF_OP(in->code) == GBPF_EXIT || !jump(s, st, in))
				return false;
			break;
		default:
			return false;
		}
	}
}

/* The moves that are counted: all of one immediate, none also used as a constant. */
static bool collect_movs(const struct csearch *s, struct ptx_counter *c)
{
	c->n_movs = 0;
	for (size_t pc = 0; pc < s->p->insn_cnt; pc++) {
		const struct gbpf_insn *in = &s->p->insns[pc];
		uint64_t v;

		if (!s->counted[pc])
			continue;
		if (s->constant[pc] || c->n_movs == PTX_COUNTER_MAX_MOVS || GBPF_OP(in->code) != GBPF_MOV)
			return false;
		v = GBPF_CLASS(in->code) == GBPF_ALU64 ? (uint64_t)(int64_t)in->imm : (uint32_t)in->imm;
		if (!v || v > PTX_COUNTER_MAX_ADD || (c->n_movs && v != c->add))
			return false;
		c->add = (uint32_t)v;
		c->mov_pc[c->n_movs++] = (uint32_t)pc;
	}
	return c->n_movs > 0;
}

int ptx_counter_find(const struct gbpf_prog_desc *p, struct ptx_counter *c)
{
	struct csearch s = {.p = p, .map = -1, .budget = 1u << 16};
	struct cstate *st;
	bool ok = true;

	if (!p || !p->insns || !p->insn_cnt || p->insn_cnt > 4096 || p->attach.kind != GBPF_ATTACH_GPU_MEM)
		return 0;
	s.counted = calloc(p->insn_cnt, 1);
	s.constant = calloc(p->insn_cnt, 1);
	st = calloc(1, sizeof(*st));
	if (!s.counted || !s.constant || !st) {
		ok = false;
		goto out;
	}
	st->r[1] = (struct creg){.k = CV_CTX};
	st->r[10] = (struct creg){.k = CV_FP};
	st->key_off = -1;
	ok = push(&s, st);
	while (ok && s.depth) {
		*st = s.stack[--s.depth];
		ok = follow(&s, st);
	}
	ok = ok && s.added && collect_movs(&s, c);
	if (ok) {
		c->map = (uint32_t)s.map;
		c->site_fields = s.fields;
	}
out:
	free(s.stack);
	free(st);
	free(s.counted);
	free(s.constant);
	return ok;
}
