/* SPDX-License-Identifier: MIT */
/*
 * verifier/scalar.c - the scalar domain: tristate numbers (known bits)
 * combined with signed and unsigned 64-bit ranges, the ALU transfer
 * functions and the refinement of both operands by a conditional jump.
 *
 * 32-bit operations are computed on the zero-extended low halves and then
 * truncated; every operation that is not exact modulo 2^32 on zero-extended
 * inputs (arsh, signed division, sign extension) is only folded when its
 * operands are constants and otherwise yields an unknown 32-bit value.
 */
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "verifier/vstate.h"

#define U32_MAX_ 0xffffffffULL

static struct tnum tnum_unknown(void)
{
	return (struct tnum){0, ~0ULL};
}

struct tnum tnum_const(uint64_t v)
{
	return (struct tnum){v, 0};
}

struct tnum tnum_range(uint64_t min, uint64_t max)
{
	uint64_t chi = min ^ max, delta;
	int bits = chi ? 64 - __builtin_clzll(chi) : 0;

	if (bits > 63)
		return tnum_unknown();
	delta = (1ULL << bits) - 1;
	return (struct tnum){min & ~delta, delta};
}

bool tnum_is_const(struct tnum t)
{
	return t.mask == 0;
}

bool tnum_in(struct tnum outer, struct tnum inner)
{
	if (inner.mask & ~outer.mask)
		return false;
	return (inner.value & ~outer.mask) == outer.value;
}

static struct tnum tnum_intersect(struct tnum a, struct tnum b)
{
	uint64_t v = a.value | b.value, mu = a.mask & b.mask;

	return (struct tnum){v & ~mu, mu};
}

/* Union of the sets two tnums describe (used when joining exit values). */
static struct tnum tnum_union(struct tnum a, struct tnum b)
{
	uint64_t mu = a.mask | b.mask | (a.value ^ b.value);

	return (struct tnum){a.value & ~mu, mu};
}

static struct tnum tnum_add(struct tnum a, struct tnum b)
{
	uint64_t sm = a.mask + b.mask, sv = a.value + b.value;
	uint64_t carries = (sm + sv) ^ sv;
	uint64_t mu = carries | a.mask | b.mask;

	return (struct tnum){sv & ~mu, mu};
}

static struct tnum tnum_sub(struct tnum a, struct tnum b)
{
	uint64_t dv = a.value - b.value;
	uint64_t borrows = (dv + a.mask) ^ (dv - b.mask);
	uint64_t mu = borrows | a.mask | b.mask;

	return (struct tnum){dv & ~mu, mu};
}

static struct tnum tnum_and(struct tnum a, struct tnum b)
{
	uint64_t v = a.value & b.value;

	return (struct tnum){v, (a.value | a.mask) & (b.value | b.mask) & ~v};
}

static struct tnum tnum_or(struct tnum a, struct tnum b)
{
	uint64_t v = a.value | b.value;

	return (struct tnum){v, (a.mask | b.mask) & ~v};
}

static struct tnum tnum_xor(struct tnum a, struct tnum b)
{
	uint64_t mu = a.mask | b.mask;

	return (struct tnum){(a.value ^ b.value) & ~mu, mu};
}

void sval_const(struct sval *v, uint64_t c)
{
	v->t = tnum_const(c);
	v->umin = v->umax = c;
	v->smin = v->smax = (int64_t)c;
}

void sval_unknown(struct sval *v)
{
	v->t = tnum_unknown();
	v->umin = 0;
	v->umax = UINT64_MAX;
	v->smin = INT64_MIN;
	v->smax = INT64_MAX;
}

/* Unknown value zero-extended from @p bytes (1, 2, 4 or 8). */
void sval_sized(struct sval *v, unsigned bytes)
{
	uint64_t max = bytes >= 8 ? UINT64_MAX : (1ULL << (bytes * 8)) - 1;

	if (bytes >= 8) {
		sval_unknown(v);
		return;
	}
	v->t = (struct tnum){0, max};
	v->umin = 0;
	v->umax = max;
	v->smin = 0;
	v->smax = (int64_t)max;
}

bool sval_is_const(const struct sval *v)
{
	return tnum_is_const(v->t);
}

static bool sval_empty(const struct sval *v)
{
	return v->umin > v->umax || v->smin > v->smax;
}

/* Tighten each view of the value with what the others know. */
void sval_sync(struct sval *v)
{
	for (int round = 0; round < 2; round++) {
		uint64_t tmax = v->t.value | v->t.mask;
		int64_t tsmin = (int64_t)(v->t.value | (v->t.mask & (1ULL << 63)));
		int64_t tsmax = (int64_t)(v->t.value | (v->t.mask & ~(1ULL << 63)));

		if (v->umin < v->t.value)
			v->umin = v->t.value;
		if (v->umax > tmax)
			v->umax = tmax;
		if (v->smin < tsmin)
			v->smin = tsmin;
		if (v->smax > tsmax)
			v->smax = tsmax;
		/* A signed range within one sign half is also an unsigned range. */
		if (v->smin >= 0 || v->smax < 0) {
			if (v->umin < (uint64_t)v->smin)
				v->umin = (uint64_t)v->smin;
			if (v->umax > (uint64_t)v->smax)
				v->umax = (uint64_t)v->smax;
		}
		if ((int64_t)v->umin <= (int64_t)v->umax) {
			if (v->smin < (int64_t)v->umin)
				v->smin = (int64_t)v->umin;
			if (v->smax > (int64_t)v->umax)
				v->smax = (int64_t)v->umax;
		}
		if (sval_empty(v))
			return;
		v->t = tnum_intersect(v->t, tnum_range(v->umin, v->umax));
	}
}

bool sval_in(const struct sval *o, const struct sval *i)
{
	return o->umin <= i->umin && o->umax >= i->umax && o->smin <= i->smin &&
	       o->smax >= i->smax && tnum_in(o->t, i->t);
}

void sval_join(struct sval *a, const struct sval *b)
{
	a->t = tnum_union(a->t, b->t);
	a->umin = a->umin < b->umin ? a->umin : b->umin;
	a->umax = a->umax > b->umax ? a->umax : b->umax;
	a->smin = a->smin < b->smin ? a->smin : b->smin;
	a->smax = a->smax > b->smax ? a->smax : b->smax;
}

/* Low 32 bits of @p v, zero-extended. */
static struct sval proj32(const struct sval *v)
{
	struct sval r;

	r.t = (struct tnum){v->t.value & U32_MAX_, v->t.mask & U32_MAX_};
	if ((v->umin >> 32) == (v->umax >> 32)) {
		r.umin = v->umin & U32_MAX_;
		r.umax = v->umax & U32_MAX_;
	} else {
		r.umin = 0;
		r.umax = U32_MAX_;
	}
	r.smin = (int64_t)r.umin;
	r.smax = (int64_t)r.umax;
	sval_sync(&r);
	return r;
}

/* Concrete semantics of one ALU operation (RFC 9669), used to fold constants. */
static uint64_t alu_exec(uint8_t op, int16_t off, bool is64, uint64_t a, uint64_t b)
{
	if (!is64) {
		uint32_t x = (uint32_t)a, y = (uint32_t)b;
		int32_t sx = (int32_t)x, sy = (int32_t)y;

		switch (op) {
		case GBPF_ADD: return (uint32_t)(x + y);
		case GBPF_SUB: return (uint32_t)(x - y);
		case GBPF_MUL: return (uint32_t)(x * y);
		case GBPF_OR: return x | y;
		case GBPF_AND: return x & y;
		case GBPF_XOR: return x ^ y;
		case GBPF_LSH: return (uint32_t)(x << (y & 31));
		case GBPF_RSH: return x >> (y & 31);
		case GBPF_ARSH: return (uint32_t)(sx >> (y & 31));
		case GBPF_NEG: return (uint32_t)(0u - x);
		case GBPF_MOV:
			if (off == 8)
				return (uint32_t)(int32_t)(int8_t)x;
			if (off == 16)
				return (uint32_t)(int32_t)(int16_t)x;
			return y;
		case GBPF_DIV:
			if (off == 1) {
				if (sy == 0)
					return 0;
				if (sx == INT32_MIN && sy == -1)
					return (uint32_t)sx;
				return (uint32_t)(sx / sy);
			}
			return y ? x / y : 0;
		case GBPF_MOD:
			if (off == 1) {
				if (sy == 0)
					return x;
				if (sy == -1)
					return 0;
				return (uint32_t)(sx % sy);
			}
			return y ? x % y : x;
		}
		return 0;
	}
	int64_t sa = (int64_t)a, sb = (int64_t)b;

	switch (op) {
	case GBPF_ADD: return a + b;
	case GBPF_SUB: return a - b;
	case GBPF_MUL: return a * b;
	case GBPF_OR: return a | b;
	case GBPF_AND: return a & b;
	case GBPF_XOR: return a ^ b;
	case GBPF_LSH: return a << (b & 63);
	case GBPF_RSH: return a >> (b & 63);
	case GBPF_ARSH: return (uint64_t)(sa >> (b & 63));
	case GBPF_NEG: return 0 - a;
	case GBPF_MOV:
		if (off == 8)
			return (uint64_t)(int64_t)(int8_t)b;
		if (off == 16)
			return (uint64_t)(int64_t)(int16_t)b;
		if (off == 32)
			return (uint64_t)(int64_t)(int32_t)b;
		return b;
	case GBPF_DIV:
		if (off == 1) {
			if (sb == 0)
				return 0;
			if (sa == INT64_MIN && sb == -1)
				return a;
			return (uint64_t)(sa / sb);
		}
		return b ? a / b : 0;
	case GBPF_MOD:
		if (off == 1) {
			if (sb == 0)
				return a;
			if (sb == -1)
				return 0;
			return (uint64_t)(sa % sb);
		}
		return b ? a % b : a;
	}
	return 0;
}

static void set_urange(struct sval *r, uint64_t umin, uint64_t umax)
{
	r->umin = umin;
	r->umax = umax;
	r->smin = INT64_MIN;
	r->smax = INT64_MAX;
}

/* 64-bit abstract transfer of a non-constant operation. */
static void alu64_abs(struct sval *r, const struct sval *a, const struct sval *b, uint8_t op,
		      int16_t off)
{
	bool bc = sval_is_const(b);
	uint64_t k = b->t.value;
	int64_t lo, hi;

	switch (op) {
	case GBPF_ADD:
		r->t = tnum_add(a->t, b->t);
		if (__builtin_add_overflow(a->smin, b->smin, &lo) ||
		    __builtin_add_overflow(a->smax, b->smax, &hi)) {
			lo = INT64_MIN;
			hi = INT64_MAX;
		}
		r->smin = lo;
		r->smax = hi;
		if (a->umax + b->umax < a->umax) {
			r->umin = 0;
			r->umax = UINT64_MAX;
		} else {
			r->umin = a->umin + b->umin;
			r->umax = a->umax + b->umax;
		}
		return;
	case GBPF_SUB:
		r->t = tnum_sub(a->t, b->t);
		if (__builtin_sub_overflow(a->smin, b->smax, &lo) ||
		    __builtin_sub_overflow(a->smax, b->smin, &hi)) {
			lo = INT64_MIN;
			hi = INT64_MAX;
		}
		r->smin = lo;
		r->smax = hi;
		if (a->umin < b->umax) {
			r->umin = 0;
			r->umax = UINT64_MAX;
		} else {
			r->umin = a->umin - b->umax;
			r->umax = a->umax - b->umin;
		}
		return;
	case GBPF_MUL:
		r->t = tnum_unknown();
		if (a->umax <= U32_MAX_ && b->umax <= U32_MAX_)
			set_urange(r, a->umin * b->umin, a->umax * b->umax);
		else
			set_urange(r, 0, UINT64_MAX);
		if (a->smin >= -(1LL << 31) && a->smax <= (1LL << 31) && b->smin >= -(1LL << 31) &&
		    b->smax <= (1LL << 31)) {
			int64_t c[4] = {a->smin * b->smin, a->smin * b->smax, a->smax * b->smin,
					a->smax * b->smax};
			r->smin = r->smax = c[0];
			for (int i = 1; i < 4; i++) {
				r->smin = c[i] < r->smin ? c[i] : r->smin;
				r->smax = c[i] > r->smax ? c[i] : r->smax;
			}
		}
		return;
	case GBPF_AND:
		r->t = tnum_and(a->t, b->t);
		set_urange(r, r->t.value, a->umax < b->umax ? a->umax : b->umax);
		return;
	case GBPF_OR:
		r->t = tnum_or(a->t, b->t);
		set_urange(r, a->umin > b->umin ? a->umin : b->umin, r->t.value | r->t.mask);
		return;
	case GBPF_XOR:
		r->t = tnum_xor(a->t, b->t);
		set_urange(r, r->t.value, r->t.value | r->t.mask);
		return;
	case GBPF_LSH:
		if (!bc)
			break;
		k &= 63;
		r->t = (struct tnum){a->t.value << k, a->t.mask << k};
		if (k == 0 || (a->umax >> (64 - k)) == 0)
			set_urange(r, a->umin << k, a->umax << k);
		else
			set_urange(r, 0, UINT64_MAX);
		return;
	case GBPF_RSH:
		if (!bc)
			break;
		k &= 63;
		r->t = (struct tnum){a->t.value >> k, a->t.mask >> k};
		set_urange(r, a->umin >> k, a->umax >> k);
		return;
	case GBPF_ARSH:
		if (!bc)
			break;
		k &= 63;
		r->t = (struct tnum){(uint64_t)((int64_t)a->t.value >> k),
				     (uint64_t)((int64_t)a->t.mask >> k)};
		r->umin = 0;
		r->umax = UINT64_MAX;
		r->smin = a->smin >> k;
		r->smax = a->smax >> k;
		return;
	case GBPF_DIV:
		if (off != 0)
			break;
		r->t = tnum_unknown();
		if (b->umin >= 1)
			set_urange(r, a->umin / b->umax, a->umax / b->umin);
		else
			set_urange(r, 0, a->umax); /* x / 0 is 0 */
		return;
	case GBPF_MOD:
		if (off != 0)
			break;
		r->t = tnum_unknown();
		if (b->umin >= 1)
			set_urange(r, 0, a->umax < b->umax - 1 ? a->umax : b->umax - 1);
		else
			set_urange(r, 0, a->umax); /* x % 0 is x */
		return;
	case GBPF_MOV:
		if (off == 0) {
			*r = *b;
			return;
		}
		if (b->umax < (1ULL << (off - 1))) {
			*r = *b;
			return;
		}
		r->t = tnum_unknown();
		r->umin = 0;
		r->umax = UINT64_MAX;
		r->smin = -(1LL << (off - 1));
		r->smax = (1LL << (off - 1)) - 1;
		return;
	}
	sval_unknown(r);
}

int sval_alu(struct sval *dst, const struct sval *src, uint8_t op, int16_t off, bool is64)
{
	struct sval a = *dst, b = *src, r;

	if (!is64) {
		a = proj32(dst);
		b = proj32(src);
	}
	if (op == GBPF_NEG)
		b = a;
	if ((sval_is_const(&a) || op == GBPF_MOV) && sval_is_const(&b)) {
		uint64_t v = alu_exec(op, off, is64, a.t.value, b.t.value);

		sval_const(dst, v);
		return 0;
	}
	if (!is64) {
		switch (op) {
		case GBPF_ARSH:
		case GBPF_NEG:
			if (op == GBPF_NEG) {
				struct sval zero;

				sval_const(&zero, 0);
				alu64_abs(&r, &zero, &a, GBPF_SUB, 0);
				sval_sync(&r);
				break;
			}
			sval_sized(&r, 4);
			break;
		case GBPF_DIV:
		case GBPF_MOD:
			if (off) {
				sval_sized(&r, 4);
				break;
			}
			alu64_abs(&r, &a, &b, op, off);
			break;
		case GBPF_MOV:
			if (off) {
				sval_sized(&r, 4);
				break;
			}
			r = b;
			break;
		case GBPF_LSH:
		case GBPF_RSH:
			if (!sval_is_const(&b)) {
				sval_sized(&r, 4);
				break;
			}
			b.t.value &= 31;
			b.umin = b.umax = b.t.value;
			b.smin = b.smax = (int64_t)b.t.value;
			alu64_abs(&r, &a, &b, op, off);
			break;
		default:
			alu64_abs(&r, &a, &b, op, off);
			break;
		}
		sval_sync(&r);
		*dst = proj32(&r);
		return 0;
	}
	if (op == GBPF_NEG) {
		struct sval zero;

		sval_const(&zero, 0);
		alu64_abs(&r, &zero, &a, GBPF_SUB, 0);
	} else {
		alu64_abs(&r, &a, &b, op, off);
	}
	sval_sync(&r);
	if (sval_empty(&r))
		sval_unknown(&r);
	*dst = r;
	return 0;
}

/*
 * Decide a 64-bit comparison of d and s and refine both for each outcome.
 * Returns 1 always taken, 0 never taken, -1 unknown.
 */
static int cmp64(uint8_t op, struct sval *td, struct sval *ts, struct sval *fd, struct sval *fs)
{
	struct sval d = *td, s = *ts;

	switch (op) {
	case GBPF_JEQ:
	case GBPF_JNE: {
		bool diff = d.umin > s.umax || d.umax < s.umin || d.smin > s.smax ||
			    d.smax < s.smin ||
			    ((d.t.value ^ s.t.value) & ~(d.t.mask | s.t.mask));
		bool same = sval_is_const(&d) && sval_is_const(&s) && d.t.value == s.t.value;
		struct sval *ed = op == GBPF_JEQ ? td : fd, *es = op == GBPF_JEQ ? ts : fs;
		struct sval *nd = op == GBPF_JEQ ? fd : td, *ns = op == GBPF_JEQ ? fs : ts;

		if (diff)
			return op == GBPF_JEQ ? 0 : 1;
		if (same)
			return op == GBPF_JEQ ? 1 : 0;
		/* equal branch: both are the intersection */
		ed->t = tnum_intersect(d.t, s.t);
		ed->umin = d.umin > s.umin ? d.umin : s.umin;
		ed->umax = d.umax < s.umax ? d.umax : s.umax;
		ed->smin = d.smin > s.smin ? d.smin : s.smin;
		ed->smax = d.smax < s.smax ? d.smax : s.smax;
		*es = *ed;
		/* not-equal branch: trim a constant off the ends */
		*nd = d;
		*ns = s;
		if (sval_is_const(&s)) {
			uint64_t c = s.t.value;

			if (nd->umin == c && nd->umin < UINT64_MAX)
				nd->umin++;
			if (nd->umax == c && nd->umax > 0)
				nd->umax--;
			if (nd->smin == (int64_t)c && nd->smin < INT64_MAX)
				nd->smin++;
			if (nd->smax == (int64_t)c && nd->smax > INT64_MIN)
				nd->smax--;
		}
		if (sval_is_const(&d)) {
			uint64_t c = d.t.value;

			if (ns->umin == c && ns->umin < UINT64_MAX)
				ns->umin++;
			if (ns->umax == c && ns->umax > 0)
				ns->umax--;
			if (ns->smin == (int64_t)c && ns->smin < INT64_MAX)
				ns->smin++;
			if (ns->smax == (int64_t)c && ns->smax > INT64_MIN)
				ns->smax--;
		}
		return -1;
	}
	case GBPF_JSET: {
		*fd = d;
		*fs = s;
		if (d.t.value & s.t.value)
			return 1;
		if (((d.t.value | d.t.mask) & (s.t.value | s.t.mask)) == 0)
			return 0;
		if (sval_is_const(&s)) {
			fd->t.value &= ~s.t.value;
			fd->t.mask &= ~s.t.value;
		}
		return -1;
	}
	case GBPF_JGT: /* d > s */
		if (d.umin > s.umax)
			return 1;
		if (d.umax <= s.umin)
			return 0;
		td->umin = d.umin > s.umin + 1 ? d.umin : s.umin + 1;
		ts->umax = s.umax < d.umax - 1 ? s.umax : d.umax - 1;
		fd->umax = d.umax < s.umax ? d.umax : s.umax;
		fs->umin = s.umin > d.umin ? s.umin : d.umin;
		return -1;
	case GBPF_JGE:
		if (d.umin >= s.umax)
			return 1;
		if (d.umax < s.umin)
			return 0;
		td->umin = d.umin > s.umin ? d.umin : s.umin;
		ts->umax = s.umax < d.umax ? s.umax : d.umax;
		fd->umax = d.umax < s.umax - 1 ? d.umax : s.umax - 1;
		fs->umin = s.umin > d.umin + 1 ? s.umin : d.umin + 1;
		return -1;
	case GBPF_JSGT:
		if (d.smin > s.smax)
			return 1;
		if (d.smax <= s.smin)
			return 0;
		td->smin = d.smin > s.smin + 1 ? d.smin : s.smin + 1;
		ts->smax = s.smax < d.smax - 1 ? s.smax : d.smax - 1;
		fd->smax = d.smax < s.smax ? d.smax : s.smax;
		fs->smin = s.smin > d.smin ? s.smin : d.smin;
		return -1;
	case GBPF_JSGE:
		if (d.smin >= s.smax)
			return 1;
		if (d.smax < s.smin)
			return 0;
		td->smin = d.smin > s.smin ? d.smin : s.smin;
		ts->smax = s.smax < d.smax ? s.smax : d.smax;
		fd->smax = d.smax < s.smax - 1 ? d.smax : s.smax - 1;
		fs->smin = s.smin > d.smin + 1 ? s.smin : d.smin + 1;
		return -1;
	}
	return -1;
}

static uint8_t swap_op(uint8_t op)
{
	switch (op) {
	case GBPF_JLT: return GBPF_JGT;
	case GBPF_JLE: return GBPF_JGE;
	case GBPF_JSLT: return GBPF_JSGT;
	case GBPF_JSLE: return GBPF_JSGE;
	}
	return op;
}

static int cmp64_any(uint8_t op, struct sval *td, struct sval *ts, struct sval *fd,
		     struct sval *fs)
{
	if (op == GBPF_JLT || op == GBPF_JLE || op == GBPF_JSLT || op == GBPF_JSLE)
		return cmp64(swap_op(op), ts, td, fs, fd);
	return cmp64(op, td, ts, fd, fs);
}

/* Signed 32-bit view of a zero-extended 32-bit value. */
static struct sval sign32(const struct sval *p)
{
	struct sval r;

	sval_unknown(&r);
	if (p->umax <= 0x7fffffffULL) {
		r.smin = (int64_t)p->umin;
		r.smax = (int64_t)p->umax;
	} else if (p->umin > 0x7fffffffULL) {
		r.smin = (int32_t)(uint32_t)p->umin;
		r.smax = (int32_t)(uint32_t)p->umax;
	} else {
		r.smin = INT32_MIN;
		r.smax = INT32_MAX;
	}
	r.umin = 0;
	r.umax = UINT64_MAX;
	if (sval_is_const(p)) {
		sval_const(&r, (uint64_t)(int64_t)(int32_t)(uint32_t)p->t.value);
	}
	return r;
}

int sval_branch(uint8_t op, bool is32, const struct sval *d, const struct sval *s, struct sval *td,
		struct sval *ts, struct sval *fd, struct sval *fs)
{
	int dir;

	*td = *fd = *d;
	*ts = *fs = *s;
	if (is32) {
		struct sval a = proj32(d), b = proj32(s), x1, x2, x3, x4;
		bool sgn = op == GBPF_JSGT || op == GBPF_JSGE || op == GBPF_JSLT || op == GBPF_JSLE;
		bool exact;

		if (sgn) {
			a = sign32(&a);
			b = sign32(&b);
		}
		x1 = x3 = a;
		x2 = x4 = b;
		dir = cmp64_any(op, &x1, &x2, &x3, &x4);
		if (dir >= 0)
			return dir;
		/* Refine only where the 32-bit comparison equals the 64-bit one. */
		if (sgn)
			exact = d->smin >= 0 && d->umax <= 0x7fffffffULL && s->smin >= 0 &&
				s->umax <= 0x7fffffffULL;
		else
			exact = d->umax <= U32_MAX_ && s->umax <= U32_MAX_;
		if (!exact)
			return -1;
	}
	dir = cmp64_any(op, td, ts, fd, fs);
	if (dir >= 0) {
		*td = *fd = *d;
		*ts = *fs = *s;
		return dir;
	}
	sval_sync(td);
	sval_sync(ts);
	sval_sync(fd);
	sval_sync(fs);
	if (sval_empty(td) || sval_empty(ts)) {
		*fd = *d;
		*fs = *s;
		return 0;
	}
	if (sval_empty(fd) || sval_empty(fs)) {
		*td = *d;
		*ts = *s;
		return 1;
	}
	return -1;
}

/* Byte swaps: ALU|END|K to little endian (a truncation on little-endian
 * targets), ALU|END|X to big endian and ALU64|END|K (bswap) swap bytes. */
void sval_end(struct sval *v, bool swap, int32_t bits)
{
	unsigned bytes = (unsigned)bits / 8;

	if (sval_is_const(v)) {
		uint64_t x = v->t.value;

		if (swap)
			x = bits == 16 ? __builtin_bswap16((uint16_t)x)
			    : bits == 32 ? __builtin_bswap32((uint32_t)x)
					 : __builtin_bswap64(x);
		else if (bits < 64)
			x &= (1ULL << bits) - 1;
		sval_const(v, x);
		return;
	}
	if (!swap && (bits == 64 || v->umax < (1ULL << bits)))
		return;
	sval_sized(v, bytes);
}
