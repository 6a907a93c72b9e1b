/* SPDX-License-Identifier: MIT */
/*
 * verifier/state.c - abstract states: copying, checkpoints at prune
 * points, the subsumption test that prunes a path, the detection of
 * infinite loops, and the bookkeeping of the longest path.
 *
 * A checkpoint stays "in progress" (branches > 0) while some path below it
 * is unexplored. Pruning against an in-progress checkpoint would let a
 * loop justify itself, so only explored checkpoints prune; an in-progress
 * ancestor that covers the state means the path came back to it: a loop
 * that never ends. Each instruction keeps its in-progress checkpoints in
 * one list (wip) and its explored ones in an index keyed by their constant
 * loop counters (cp_index) or, where those are not constants, in a list
 * (cps); a checkpoint moves when its last path below ends.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "verifier/vstate.h"

/*
 * In-progress checkpoints compared per visit for the infinite-loop check:
 * the newest LOOP_CHECK_CPS (a state that repeats does so within an
 * iteration or two; a longer period ends at the complexity limit). Past
 * THIN_AFTER at one instruction, a path stores a new one only
 * when branches it left pending below its last checkpoint will come back
 * to look for explored states (a loop that branches on a helper's result),
 * at the target of the last branch it left pending (where that branch will
 * look first), or after THIN_DEPTH instructions since its last one: a long counted loop
 * without pending branches then keeps a checkpoint every few dozen
 * iterations, which bounds memory and copying.
 */
#define LOOP_CHECK_CPS 16
#define THIN_AFTER 48
#define THIN_DEPTH 256
/*
 * Past dense_max() in progress at one instruction, only THIN_DEPTH stores
 * (a loop that never ends but branches on every iteration would otherwise
 * hold one checkpoint per iteration until the complexity limit). A counted
 * loop that branches on a helper's result needs one per iteration at the
 * targets of its branches, where the pending branches come back to be
 * pruned; without it each of them walks on until the limit. So the bound
 * grows with the complexity limit: a checkpoint per DENSE_PER_INSNS
 * instructions the limit allows keeps the copying within a small factor of
 * the instructions processed, and never below DENSE_MIN.
 */
#define DENSE_MIN 4096
#define DENSE_PER_INSNS 32
/*
 * Where more than EVICT_ABOVE explored checkpoints wait at one instruction,
 * one that keeps missing (misses > EVICT_RATIO * hits + EVICT_SLACK) is
 * freed: it only slows the lookups of later paths. Below that, all stay:
 * in a loop, a checkpoint of a late iteration misses the paths of every
 * earlier one before the path it is for arrives.
 */
#define EVICT_ABOVE 256
#define EVICT_RATIO 3
#define EVICT_SLACK 3
/* Checkpoints held in all: bounds memory on huge programs. */
#define MAX_CPS_TOTAL 200000

static uint64_t dense_max(const struct venv *env)
{
	uint64_t n = env->limit / DENSE_PER_INSNS;

	return n > DENSE_MIN ? n : DENSE_MIN;
}

static size_t frame_bytes(const struct frame *f)
{
	return offsetof(struct frame, stack) + f->nslots * sizeof(struct stack_slot);
}

static struct frame *frame_dup(const struct frame *src, bool compact)
{
	size_t used = frame_bytes(src);
	struct frame *f = malloc(compact ? used : sizeof(*f));

	if (!f)
		return NULL;
	memcpy(f, src, used);
	return f;
}

static int copy_state(struct vstate *dst, const struct vstate *src, bool compact)
{
	struct vstate tmp = *src;

	for (uint32_t i = 0; i <= src->curframe; i++) {
		tmp.frames[i] = frame_dup(src->frames[i], compact);
		if (!tmp.frames[i]) {
			for (uint32_t j = 0; j < i; j++)
				free(tmp.frames[j]);
			return -ENOMEM;
		}
	}
	for (uint32_t i = src->curframe + 1; i < GBPF_MAX_CALL_DEPTH; i++)
		tmp.frames[i] = NULL;
	*dst = tmp;
	return 0;
}

int state_copy(struct vstate *dst, const struct vstate *src)
{
	return copy_state(dst, src, false);
}

int state_copy_compact(struct vstate *dst, const struct vstate *src)
{
	return copy_state(dst, src, true);
}

void state_free(struct vstate *st)
{
	for (uint32_t i = 0; i < GBPF_MAX_CALL_DEPTH; i++) {
		free(st->frames[i]);
		st->frames[i] = NULL;
	}
}

int state_push_frame(struct vstate *st, int32_t callsite, uint32_t subprog)
{
	struct frame *f;

	if (st->curframe + 1 >= GBPF_MAX_CALL_DEPTH)
		return -E2BIG;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->callsite = callsite;
	f->subprog = subprog;
	st->frames[++st->curframe] = f;
	return 0;
}

struct idmap {
	uint32_t n;
	uint32_t old[64], cur[64];
};

static bool id_match(struct idmap *m, uint32_t o, uint32_t c)
{
	if (!o || !c)
		return o == c;
	for (uint32_t i = 0; i < m->n; i++) {
		if (m->old[i] == o)
			return m->cur[i] == c;
		if (m->cur[i] == c)
			return false;
	}
	if (m->n == 64)
		return false;
	m->old[m->n] = o;
	m->cur[m->n++] = c;
	return true;
}

static bool sval_eq(const struct sval *a, const struct sval *b)
{
	return a->t.value == b->t.value && a->t.mask == b->t.mask && a->smin == b->smin &&
	       a->smax == b->smax && a->umin == b->umin && a->umax == b->umax;
}

/* Does every concrete register old allows include what cur allows? */
static bool reg_covers(const struct reg *o, const struct reg *c, struct idmap *m, bool exact)
{
	if (o->type == REG_NOT_INIT)
		return !exact || c->type == REG_NOT_INIT;
	if (o->type != c->type)
		return false;
	if (exact ? !sval_eq(&o->v, &c->v) : !sval_in(&o->v, &c->v))
		return false;
	if (o->type == REG_SCALAR)
		return !o->id || id_match(m, o->id, c->id);
	if (o->frameno != c->frameno || o->map != c->map || o->size != c->size)
		return false;
	if (!id_match(m, o->ref, c->ref))
		return false;
	switch (o->type) {
	case REG_PTR_MAP_VALUE_OR_NULL:
	case REG_PTR_RINGBUF_OR_NULL:
	case REG_PTR_MEM_OR_NULL:
		return id_match(m, o->id, c->id);
	}
	return true;
}

/*
 * @p need: slots whose spilled scalar value may still matter (precise.c);
 * elsewhere an old scalar spill only asks for initialised, non-pointer bytes.
 */
static bool stack_covers(const struct frame *o, const struct frame *c, struct idmap *m, bool exact,
			 uint64_t need)
{
	uint32_t n = o->nslots > c->nslots ? o->nslots : c->nslots;

	for (uint32_t s = 0; s < n; s++) {
		static const struct stack_slot none;
		const struct stack_slot *os = s < o->nslots ? &o->stack[s] : &none;
		const struct stack_slot *cs = s < c->nslots ? &c->stack[s] : &none;
		bool ospill = os->kind[0] == STK_SPILL, cspill = cs->kind[0] == STK_SPILL;

		unsigned opart = slot_part_mask(os);

		if (exact) {
			if (memcmp(os->kind, cs->kind, 8))
				return false;
			if ((ospill || opart) && !reg_covers(&os->spill, &cs->spill, m, true))
				return false;
			continue;
		}
		/* a narrow spill whose value matters: the same bytes, a covered value */
		if (opart && (need & (1ull << s)) &&
		    (slot_part_mask(cs) != opart || !reg_covers(&os->spill, &cs->spill, m, false)))
			return false;
		if (ospill && (os->spill.type != REG_SCALAR || (need & (1ull << s)))) {
			if (!cspill || !reg_covers(&os->spill, &cs->spill, m, false))
				return false;
			continue;
		}
		for (int b = 0; b < 8; b++) {
			if (os->kind[b] == STK_INVALID)
				continue;
			/* old MISC: any initialised byte that is not part of a pointer */
			if (cs->kind[b] == STK_INVALID)
				return false;
			if (cs->kind[b] == STK_SPILL && cs->spill.type != REG_SCALAR)
				return false;
		}
	}
	return true;
}

/*
 * Does old state @p o cover @p c at idx? @p relax: scalars that decide
 * nothing any more (precise.c) may differ, which is sound for pruning
 * against an explored state (its every continuation was proven). The
 * infinite-loop check does not relax: an ancestor covering the state only
 * in the values that matter is no proof that the path repeats (a loop
 * whose counter's range shrinks each time ends), and the values that
 * changed kept the old verifier from calling such loops endless.
 */
static bool states_cover(struct venv *env, const struct vstate *o, const struct vstate *c,
			 uint32_t idx, bool exact, bool relax)
{
	struct idmap m;

	if (o->curframe != c->curframe || o->nrefs != c->nrefs)
		return false;
	m.n = 0;
	for (uint32_t f = 0; f <= o->curframe; f++) {
		const struct frame *of = o->frames[f], *cf = c->frames[f];
		bool top = f == o->curframe;
		uint16_t live = top ? env->live_in[idx] : 0x3c0; /* r6-r9 */
		/* caller frames: everything matters (the callee may reach them) */
		uint16_t need = top && !exact && relax ? env->prec_in[idx] : 0x7ff;
		uint64_t sneed = top && !exact && relax ? env->sprec_in[idx] : UINT64_MAX;

		if (of->callsite != cf->callsite)
			return false;
		for (int r = 0; r < GBPF_REG_COUNT - 1; r++) {
			if (!(live & (1u << r)))
				continue;
			/* a scalar whose value decides nothing any more: any scalar will do */
			if (!(need & (1u << r)) && of->regs[r].type == REG_SCALAR &&
			    cf->regs[r].type == REG_SCALAR)
				continue;
			if (!reg_covers(&of->regs[r], &cf->regs[r], &m, exact))
				return false;
		}
		if (!stack_covers(of, cf, &m, exact, sneed))
			return false;
	}
	for (uint32_t i = 0; i < o->nrefs; i++)
		if (!id_match(&m, o->refs[i], c->refs[i]))
			return false;
	return true;
}

/* Is slot s of f a spilled (whole or narrow) scalar constant? */
static bool slot_const(const struct frame *f, uint32_t s)
{
	const struct stack_slot *sl = &f->stack[s];

	if (s >= f->nslots || sl->spill.type != REG_SCALAR || !sval_is_const(&sl->spill.v))
		return false;
	return sl->kind[0] == STK_SPILL || slot_part_mask(sl);
}

/* Registers and slots needed at idx that hold a constant scalar in the top frame of st. */
static uint16_t const_needed(const struct venv *env, uint32_t idx, const struct vstate *st,
			     uint64_t *slots)
{
	const struct frame *f = st->frames[st->curframe];
	uint16_t m = env->live_in[idx] & env->prec_in[idx] & 0x3ff, out = 0;
	uint64_t sm = env->sprec_in[idx];

	for (int r = 0; r < 10; r++)
		if ((m & (1u << r)) && f->regs[r].type == REG_SCALAR && sval_is_const(&f->regs[r].v))
			out |= (uint16_t)(1u << r);
	*slots = 0;
	if (f->nslots < 64)
		sm &= (1ull << f->nslots) - 1;
	for (; sm; sm &= sm - 1)
		if (slot_const(f, (uint32_t)__builtin_ctzll(sm)))
			*slots |= sm & -sm;
	return out;
}

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v;
	h *= 0xbf58476d1ce4e5b9ull;
	return h ^ (h >> 31);
}

/*
 * Index key of st at idx: false when an anchor is not a constant in st. A
 * needed constant register or spill of an explored state covers only the
 * same constant (in the same bytes of the slot), so the key is exact.
 */
static bool anchor_key(const struct venv *env, uint32_t idx, const struct vstate *st,
		       uint64_t *key)
{
	const struct frame *f = st->frames[st->curframe];
	uint16_t a = env->anchor[idx];
	uint64_t as = env->anchor_slots[idx], h = 0x9e3779b97f4a7c15ull ^ idx;

	if (!(env->insn_flags[idx] & INSN_ANCHORED) || (!a && !as))
		return false;
	for (int r = 0; r < 10; r++) {
		const struct reg *x = &f->regs[r];

		if (!(a & (1u << r)))
			continue;
		if (x->type != REG_SCALAR || !sval_is_const(&x->v))
			return false;
		h = mix(h, x->v.t.value + (uint64_t)r);
	}
	for (; as; as &= as - 1) {
		uint32_t s = (uint32_t)__builtin_ctzll(as);

		if (!slot_const(f, s))
			return false;
		h = mix(h, f->stack[s].spill.v.t.value ^ ((uint64_t)s << 56) ^
				   ((uint64_t)slot_part_mask(&f->stack[s]) << 48));
	}
	*key = h;
	return true;
}

/* Returns false only when no index could be allocated at all. */
static bool index_put(struct venv *env, struct checkpoint *p)
{
	size_t slot;

	if (env->cp_index_cnt >= env->cp_index_size) {
		size_t size = env->cp_index_size ? env->cp_index_size * 2 : 32;
		struct checkpoint **t = calloc(size, sizeof(*t));

		if (t) { /* else the chains just get longer */
			for (size_t i = 0; i < env->cp_index_size; i++) {
				struct checkpoint *c = env->cp_index[i], *n;

				for (; c; c = n) {
					n = c->hnext;
					c->hnext = t[c->key & (size - 1)];
					t[c->key & (size - 1)] = c;
				}
			}
			free(env->cp_index);
			env->cp_index = t;
			env->cp_index_size = size;
		}
	}
	if (!env->cp_index_size)
		return false;
	slot = p->key & (env->cp_index_size - 1);
	p->hnext = env->cp_index[slot];
	env->cp_index[slot] = p;
	env->cp_index_cnt++;
	return true;
}

/* An explored checkpoint moves from the in-progress list to the index or the pruning list. */
static void mark_explored(struct venv *env, struct checkpoint *p)
{
	uint32_t idx = p->insn;

	if (p->prev)
		p->prev->next = p->next;
	else
		env->wip[idx] = p->next;
	if (p->next)
		p->next->prev = p->prev;
	env->wip_cnt[idx]--;
	p->prev = NULL;
	p->next = NULL;
	if (!(env->insn_flags[idx] & INSN_ANCHORED)) {
		env->anchor[idx] = const_needed(env, idx, &p->st, &env->anchor_slots[idx]);
		env->insn_flags[idx] |= INSN_ANCHORED;
	}
	if (anchor_key(env, idx, &p->st, &p->key) && index_put(env, p)) {
		env->insn_flags[idx] |= INSN_INDEXED;
		return;
	}
	p->next = env->cps[idx];
	env->cps[idx] = p;
	env->cps_cnt[idx]++;
}

static void finish_checkpoint(struct venv *env, struct checkpoint *p)
{
	while (p) {
		struct checkpoint *q;

		if (--p->branches > 0)
			return;
		mark_explored(env, p);
		q = p->parent;
		if (q) {
			uint64_t tail = p->st.depth + p->max_tail - q->st.depth;

			if (tail > q->max_tail)
				q->max_tail = tail;
		} else if (p->st.depth + p->max_tail > env->worst) {
			env->worst = p->st.depth + p->max_tail;
		}
		p = q;
	}
}

void path_end(struct venv *env, struct vstate *st, uint64_t extra_tail)
{
	uint64_t total = st->depth + extra_tail;
	struct checkpoint *p = st->parent;

	if (!p) {
		if (total > env->worst)
			env->worst = total;
		return;
	}
	if (total - p->st.depth > p->max_tail)
		p->max_tail = total - p->st.depth;
	finish_checkpoint(env, p);
	st->parent = NULL;
}

/*
 * A scalar id shared by no other register or spill links nothing; clearing
 * it in a checkpoint lets later states prune against it.
 */
static void drop_single_ids(struct vstate *st)
{
	struct reg *regs[GBPF_MAX_CALL_DEPTH * (GBPF_REG_COUNT + STACK_SLOTS)];
	size_t n = 0;

	for (uint32_t f = 0; f <= st->curframe; f++) {
		struct frame *fr = st->frames[f];

		for (int r = 0; r < GBPF_REG_COUNT; r++)
			if (fr->regs[r].type == REG_SCALAR && fr->regs[r].id)
				regs[n++] = &fr->regs[r];
		for (uint32_t s = 0; s < fr->nslots; s++)
			if (fr->stack[s].kind[0] == STK_SPILL && fr->stack[s].spill.type == REG_SCALAR &&
			    fr->stack[s].spill.id)
				regs[n++] = &fr->stack[s].spill;
	}
	for (size_t i = 0; i < n; i++) {
		bool shared = false;

		for (size_t j = 0; j < n && !shared; j++)
			shared = j != i && regs[j]->id == regs[i]->id;
		if (!shared)
			regs[i]->id = 0;
	}
}

static bool is_ancestor(const struct vstate *st, const struct checkpoint *cp)
{
	for (const struct checkpoint *p = st->parent; p; p = p->parent)
		if (p == cp)
			return true;
	return false;
}

static void checkpoint_free(struct venv *env, struct checkpoint *cp)
{
	state_free(&cp->st);
	free(cp);
	env->live_cps--;
}

int prune_visit(struct venv *env, uint32_t idx, struct vstate *st, bool *pruned)
{
	struct checkpoint *cp, **link;
	uint32_t n = 0;
	uint64_t key;
	int err;

	*pruned = false;
	/* The path came back to a state it already covered: the abstract loop
	 * can repeat forever, so no bound is provable. */
	for (cp = env->wip[idx]; cp && n < LOOP_CHECK_CPS; cp = cp->next, n++)
		if (states_cover(env, &cp->st, st, idx, false, false) && is_ancestor(st, cp))
			return verr(env, idx, -GBPF_ERRNO__VERIFY,
				    "infinite loop detected: the state at insn %u repeats "
				    "a state of the same path (loops must be bounded)",
				    idx);
	/* Explored checkpoints: every continuation of theirs was proven safe. */
	if ((env->insn_flags[idx] & INSN_INDEXED) && anchor_key(env, idx, st, &key)) {
		for (cp = env->cp_index[key & (env->cp_index_size - 1)]; cp; cp = cp->hnext) {
			if (cp->key != key || cp->insn != idx ||
			    !states_cover(env, &cp->st, st, idx, false, true))
				continue;
			cp->hits++;
			env->pruned++;
			*pruned = true;
			path_end(env, st, cp->max_tail);
			return 0;
		}
	}
	/* Freeing one never frees a live path's ancestor (those are in progress). */
	for (link = &env->cps[idx]; (cp = *link);) {
		if (states_cover(env, &cp->st, st, idx, false, true)) {
			cp->hits++;
			env->pruned++;
			*pruned = true;
			path_end(env, st, cp->max_tail);
			return 0;
		}
		if (++cp->misses > EVICT_RATIO * cp->hits + EVICT_SLACK &&
		    env->cps_cnt[idx] > EVICT_ABOVE) {
			*link = cp->next;
			env->cps_cnt[idx]--;
			checkpoint_free(env, cp);
			continue;
		}
		link = &cp->next;
	}
	if (env->live_cps >= MAX_CPS_TOTAL)
		return 0;
	if (env->wip_cnt[idx] >= THIN_AFTER && st->parent &&
	    st->depth - st->parent->st.depth < THIN_DEPTH &&
	    (env->wip_cnt[idx] >= dense_max(env) ||
	     (st->parent->branches <= 1 &&
	      !(idx == st->push_target && st->depth - st->push_depth < THIN_DEPTH))))
		return 0;
	cp = calloc(1, sizeof(*cp));
	if (!cp)
		return -ENOMEM;
	err = state_copy_compact(&cp->st, st);
	if (err) {
		free(cp);
		return err;
	}
	drop_single_ids(&cp->st);
	cp->parent = st->parent;
	cp->branches = 1;
	cp->insn = idx;
	cp->next = env->wip[idx];
	if (cp->next)
		cp->next->prev = cp;
	env->wip[idx] = cp;
	env->wip_cnt[idx]++;
	st->parent = cp;
	env->stored++;
	env->live_cps++;
	return 0;
}

void checkpoints_free(struct venv *env)
{
	for (size_t i = 0; i < env->cp_index_size; i++) {
		struct checkpoint *cp = env->cp_index[i], *next;

		for (; cp; cp = next) {
			next = cp->hnext;
			checkpoint_free(env, cp);
		}
		env->cp_index[i] = NULL;
	}
	if (!env->cps)
		return;
	for (uint32_t i = 0; i < env->insn_cnt; i++) {
		struct checkpoint *lists[2] = {env->cps[i], env->wip ? env->wip[i] : NULL};

		for (int l = 0; l < 2; l++) {
			struct checkpoint *cp = lists[l];

			while (cp) {
				struct checkpoint *next = cp->next;

				checkpoint_free(env, cp);
				cp = next;
			}
		}
	}
}
