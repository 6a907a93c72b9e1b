/* SPDX-License-Identifier: MIT */
/*
 * verifier/check.c - the abstract interpreter: walks every path of the
 * program depth first, one instruction at a time, and checks each
 * instruction against the state of the path (ALU, loads and stores,
 * jumps, calls, exits). Entry point gbpf_verify().
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gbpf/probe_ctx.h>

#include "verifier/vstate.h"

/* Pending branches kept at once; deeper programs are rejected as too complex. */
#define MAX_PENDING 65536


static const uint32_t size_bytes[4] = {4, 2, 1, 8}; /* W, H, B, DW */

static struct frame *cur(struct vstate *st)
{
	return st->frames[st->curframe];
}

static int check_reg_read(struct venv *env, uint32_t idx, struct vstate *st, unsigned r)
{
	if (r > 10)
		return verr(env, idx, -GBPF_ERRNO__VERIFY, "R%u is not a register (r0-r10)", r);
	if (cur(st)->regs[r].type == REG_NOT_INIT)
		return verr(env, idx, -GBPF_ERRNO__VERIFY, "R%u !read_ok: register is not initialised",
			    r);
	return 0;
}

static int check_reg_write(struct venv *env, uint32_t idx, unsigned r)
{
	if (r == 10)
		return verr(env, idx, -GBPF_ERRNO__VERIFY, "frame pointer (R10) is read only");
	if (r > 10)
		return verr(env, idx, -GBPF_ERRNO__VERIFY, "R%u is not a register (r0-r10)", r);
	return 0;
}

static bool is_ptr(uint8_t type)
{
	return type != REG_SCALAR && type != REG_NOT_INIT;
}

static bool is_nullable(uint8_t type)
{
	return type == REG_PTR_MAP_VALUE_OR_NULL || type == REG_PTR_RINGBUF_OR_NULL ||
	       type == REG_PTR_MEM_OR_NULL;
}

static const char *const alu_names[16] = {"add", "sub", "mul", "div", "or",  "and",
					  "lsh", "rsh", "neg", "mod", "xor", "mov",
					  "arsh", "end", "0xe0", "0xf0"};

static int check_alu(struct venv *env, uint32_t idx, struct vstate *st)
{
	const struct gbpf_insn *in = &env->insns[idx];
	bool is64 = GBPF_CLASS(in->code) == GBPF_ALU64, x = GBPF_SRC(in->code) == GBPF_X;
	uint8_t op = GBPF_OP(in->code);
	struct reg *regs = cur(st)->regs, *d, src;
	int err;

	if (op == 0xe0 || op == 0xf0)
		return verr(env, idx, -GBPF_ERRNO__VERIFY, "unknown ALU opcode 0x%02x", in->code);
	/* reserved fields */
	if (op == GBPF_NEG) {
		if (x || in->src || in->imm || in->off)
			return verr(env, idx, -GBPF_ERRNO__VERIFY, "neg uses no source: reserved fields must be zero%s", "");
	} else if (op == GBPF_END) {
		if (in->src || in->off)
			return verr(env, idx, -GBPF_ERRNO__VERIFY, "byte swap: reserved fields must be zero%s", "");
		if (is64 && x)
			return verr(env, idx, -GBPF_ERRNO__VERIFY, "unknown opcode: 64-bit byte swap takes no source%s",
				    "");
		if (in->imm != 16 && in->imm != 32 && in->imm != 64)
			return verr(env, idx, -GBPF_ERRNO__VERIFY,
				    "byte swap width must be 16, 32 or 64, not %d", in->imm);
	} else if (x) {
		bool off_ok = in->off == 0 || ((op == GBPF_DIV || op == GBPF_MOD) && in->off == 1) ||
			      (op == GBPF_MOV &&
			       (in->off == 8 || in->off == 16 || (is64 && in->off == 32)));

		if (in->imm || !off_ok)
			return verr(env, idx, -GBPF_ERRNO__VERIFY,
				    "reserved fields must be zero (imm, or an offset this operation "
				    "does not define)%s",
				    "");
	} else {
		bool off_ok = in->off == 0 || ((op == GBPF_DIV || op == GBPF_MOD) && in->off == 1);

		if (in->src || !off_ok)
			return verr(env, idx, -GBPF_ERRNO__VERIFY,
				    "reserved fields must be zero (src, or an offset this operation "
				    "does not define)%s",
				    "");
	}
	err = check_reg_write(env, idx, in->dst);
	if (err)
		return err;
	if (op != GBPF_MOV) {
		err = check_reg_read(env, idx, st, in->dst);
		if (err)
			return err;
	}
	if (x && op != GBPF_END && op != GBPF_NEG) {
		err = check_reg_read(env, idx, st, in->src);
		if (err)
			return err;
		src = regs[in->src];
	} else {
		memset(&src, 0, sizeof(src));
		src.type = REG_SCALAR;
		sval_const(&src.v, is64 ? (uint64_t)(int64_t)in->imm : (uint32_t)in->imm);
	}
	d = &regs[in->dst];

	if (op == GBPF_MOV) {
		if (src.type != REG_SCALAR && (!is64 || in->off)) {
			if (in->off)
				return verr(env, idx, -GBPF_ERRNO__VERIFY,
					    "sign-extending move of a pointer (R%u) prohibited",
					    in->src);
			mark_unknown(d);
			sval_sized(&d->v, 4);
			return 0;
		}
		if (src.type != REG_SCALAR) {
			*d = src;
			return 0;
		}
		if (x && is64 && !in->off && in->src != in->dst) {
			/* linked copies: a later comparison of one bounds both */
			if (!regs[in->src].id)
				regs[in->src].id = ++env->next_id;
			*d = regs[in->src];
			return 0;
		}
		mark_unknown(d);
		d->v = src.v;
		return sval_alu(&d->v, &src.v, GBPF_MOV, in->off, is64);
	}
	if (op == GBPF_END) {
		if (is_ptr(d->type))
			return verr(env, idx, -GBPF_ERRNO__VERIFY, "byte swap of pointer R%u prohibited",
				    in->dst);
		sval_end(&d->v, is64 || x, in->imm);
		d->id = 0;
		return 0;
	}
	if (d->type == REG_SCALAR && src.type == REG_SCALAR) {
		d->id = 0;
		return sval_alu(&d->v, &src.v, op, in->off, is64);
	}

	/* pointer arithmetic */
	if (!is64)
		return verr(env, idx, -GBPF_ERRNO__VERIFY,
			    "32-bit arithmetic on pointer R%u prohibited",
			    is_ptr(d->type) ? in->dst : in->src);
	if (op == GBPF_SUB && is_ptr(d->type) && is_ptr(src.type)) {
		if (d->type != src.type || d->map != src.map || d->frameno != src.frameno ||
		    d->type == REG_CONST_MAP || is_nullable(d->type))
			return verr(env, idx, -GBPF_ERRNO__VERIFY,
				    "subtraction of pointers into different objects (%s - %s) "
				    "prohibited",
				    reg_type_name(d->type), reg_type_name(src.type));
		struct sval diff = d->v;

		sval_alu(&diff, &src.v, GBPF_SUB, 0, true);
		mark_unknown(d);
		d->v = diff;
		return 0;
	}
	if (op == GBPF_ADD && d->type == REG_SCALAR && is_ptr(src.type)) {
		struct reg p = src;

		sval_alu(&p.v, &d->v, GBPF_ADD, 0, true);
		*d = p;
		src = regs[in->src];
		d = &regs[in->dst];
		d->v = p.v;
		goto check_ptr;
	}
	if (is_ptr(src.type))
		return verr(env, idx, -GBPF_ERRNO__VERIFY,
			    "pointer R%u used as an operand of '%s' prohibited", in->src,
			    alu_names[op >> 4]);
	if (op != GBPF_ADD && op != GBPF_SUB)
		return verr(env, idx, -GBPF_ERRNO__VERIFY,
			    "R%u pointer arithmetic with '%s' operator prohibited", in->dst,
			    alu_names[op >> 4]);
	if (d->type == REG_CONST_MAP || is_nullable(d->type))
		return verr(env, idx, -GBPF_ERRNO__VERIFY,
			    "R%u pointer arithmetic on %s prohibited%s", in->dst,
			    reg_type_name(d->type),
			    is_nullable(d->type) ? ", null-check it first" : "");
	if (d->type == REG_PTR_CTX && !sval_is_const(&src.v))
		return verr(env, idx, -GBPF_ERRNO__VERIFY,
			    "variable offset added to ctx pointer R%u prohibited", in->dst);
	if (src.v.smin < -(1LL << 29) || src.v.smax > (1LL << 29))
		return verr(env, idx, -GBPF_ERRNO__VERIFY,
			    "math between %s pointer and register with unbounded min value "
			    "(R%u smin=%" PRId64 " smax=%" PRId64 ")",
			    reg_type_name(d->type), x ? in->src : 0, src.v.smin, src.v.smax);
	sval_alu(&d->v, &src.v, op, 0, true);
check_ptr:
	if (d->v.smin < -(1LL << 29) || d->v.smax > (1LL << 29))
		return verr(env, idx, -GBPF_ERRNO__VERIFY,
			    "pointer R%u offset out of range (smin=%" PRId64 " smax=%" PRId64 ")",
			    in->dst, d->v.smin, d->v.smax);
	return 0;
}

static int check_lddw(struct venv *env, uint32_t idx, struct vstate *st)
{
	const struct gbpf_insn *in = &env->insns[idx], *hi = in + 1;
	struct reg *d = &cur(st)->regs[in->dst];
	const struct gbpf_map_desc *map;
	int err = check_reg_write(env, idx, in->dst);

	if (err)
		return err;
	if (in->off)
		return verr(env, idx, -GBPF_ERRNO__VERIFY, "lddw: reserved offset must be zero%s", "");
	memset(d, 0, sizeof(*d));
	switch (in->src) {
	case 0:
		d->type = REG_SCALAR;
		sval_const(&d->v, (uint32_t)in->imm | ((uint64_t)(uint32_t)hi->imm << 32));
		return 0;
	case GBPF_PSEUDO_MAP_IDX:
	case GBPF_PSEUDO_MAP_IDX_VALUE:
		if (in->imm < 0 || (size_t)in->imm >= env->prog->map_cnt)
			return verr(env, idx, -GBPF_ERRNO__VERIFY,
				    "lddw refers to map index %d but the program has %zu maps", in->imm,
				    env->prog->map_cnt);
		map = &env->prog->maps[in->imm];
		d->map = (uint16_t)in->imm;
		if (in->src == GBPF_PSEUDO_MAP_IDX) {
			if (hi->imm)
				return verr(env, idx, -GBPF_ERRNO__VERIFY, "lddw map: reserved upper imm must be zero%s",
					    "");
			d->type = REG_CONST_MAP;
			sval_const(&d->v, 0);
			return 0;
		}
		if (map->type == GBPF_MAP_TYPE_RINGBUF || map->type == GBPF_MAP_TYPE_GPU_RINGBUF ||
		    map->type == GBPF_MAP_TYPE_PERF_EVENT_ARRAY || map->value_size == 0)
			return verr(env, idx, -GBPF_ERRNO__VERIFY,
				    "map '%s' has no direct value to point at",
				    map->name ? map->name : "?");
		if (hi->imm < 0 || (uint32_t)hi->imm >= map->value_size)
			return verr(env, idx, -GBPF_ERRNO__VERIFY,
				    "lddw offset %d outside the value of map '%s' (%u bytes)", hi->imm,
				    map->name ? map->name : "?", map->value_size);
		d->type = REG_PTR_MAP_VALUE;
		sval_const(&d->v, (uint64_t)hi->imm);
		return 0;
	case GBPF_PSEUDO_MAP_FD:
	case GBPF_PSEUDO_MAP_VALUE:
		return verr(env, idx, -GBPF_ERRNO__VERIFY,
			    "lddw with a map file descriptor: gbpf programs refer to maps by index "
			    "(link the object first)%s",
			    "");
	case GBPF_PSEUDO_BTF_ID:
		return verr(env, idx, -GBPF_ERRNO__VERIFY, "lddw of a kernel BTF id is not supported%s", "");
	case GBPF_PSEUDO_FUNC:
		return verr(env, idx, -GBPF_ERRNO__VERIFY,
			    "lddw of a function address: no gbpf helper takes a callback%s", "");
	}
	return verr(env, idx, -GBPF_ERRNO__VERIFY, "lddw with unknown source tag %u", in->src);
}

/* "R<n>" for messages; every load and store needs it, snprintf was a tenth of the time. */
static void reg_name(char *buf, unsigned r)
{
	*buf++ = 'R';
	if (r >= 10)
		*buf++ = (char)('0' + r / 10);
	*buf++ = (char)('0' + r % 10);
	*buf = '\0';
}

static int check_ldst(struct venv *env, uint32_t idx, struct vstate *st)
{
	const struct gbpf_insn *in = &env->insns[idx];
	uint8_t cls = GBPF_CLASS(in->code), mode = GBPF_MODE(in->code);
	uint32_t size = size_bytes[GBPF_SIZE(in->code) >> 3];
	struct reg *regs = cur(st)->regs, val, ptr;
	char what[32];
	int err;

	if (cls == GBPF_LD) {
		if (in->code == GBPF_OP_LDDW)
			return check_lddw(env, idx, st);
		if (mode == GBPF_ABS || mode == GBPF_IND)
			return verr(env, idx, -GBPF_ERRNO__VERIFY,
				    "legacy packet access (ld_abs / ld_ind) is not supported%s", "");
		return verr(env, idx, -GBPF_ERRNO__VERIFY, "unknown opcode 0x%02x", in->code);
	}
	if (cls == GBPF_LDX) {
		if (mode != GBPF_MEM && !(mode == GBPF_MEMSX && size != 8))
			return verr(env, idx, -GBPF_ERRNO__VERIFY, "unknown load opcode 0x%02x",
				    in->code);
		if (in->imm)
			return verr(env, idx, -GBPF_ERRNO__VERIFY, "load: reserved imm must be zero%s", "");
		err = check_reg_write(env, idx, in->dst);
		if (!err)
			err = check_reg_read(env, idx, st, in->src);
		if (err)
			return err;
		reg_name(what, in->src);
		ptr = regs[in->src];
		err = mem_access(env, idx, st, &ptr, in->off, size, false, &val, mode == GBPF_MEMSX,
				 what);
		if (err)
			return err;
		regs[in->dst] = val;
		return 0;
	}
	if (in->dst > 10)
		return verr(env, idx, -GBPF_ERRNO__VERIFY, "R%u is not a register", in->dst);
	err = check_reg_read(env, idx, st, in->dst);
	if (err)
		return err;
	ptr = regs[in->dst];
	reg_name(what, in->dst);
	if (cls == GBPF_ST) {
		if (mode != GBPF_MEM)
			return verr(env, idx, -GBPF_ERRNO__VERIFY, "unknown store opcode 0x%02x",
				    in->code);
		if (in->src)
			return verr(env, idx, -GBPF_ERRNO__VERIFY, "store immediate: reserved src must be zero%s", "");
		memset(&val, 0, sizeof(val));
		val.type = REG_SCALAR;
		/* the stored bytes: imm sign-extended, then truncated to the size */
		sval_const(&val.v, size == 8 ? (uint64_t)(int64_t)in->imm
					     : (uint64_t)(uint32_t)in->imm &
						       (UINT64_MAX >> (64 - 8 * size)));
		return mem_access(env, idx, st, &ptr, in->off, size, true, &val, false, what);
	}
	/* STX */
	err = check_reg_read(env, idx, st, in->src);
	if (err)
		return err;
	if (mode == GBPF_MEM) {
		if (in->imm)
			return verr(env, idx, -GBPF_ERRNO__VERIFY, "store: reserved imm must be zero%s", "");
		val = regs[in->src];
		return mem_access(env, idx, st, &ptr, in->off, size, true, &val, false, what);
	}
	if (mode != GBPF_ATOMIC)
		return verr(env, idx, -GBPF_ERRNO__VERIFY, "unknown store opcode 0x%02x", in->code);
	if (size != 4 && size != 8)
		return verr(env, idx, -GBPF_ERRNO__VERIFY, "atomic operations are 32 or 64 bits wide%s", "");
	switch (in->imm) {
	case GBPF_ATOMIC_ADD:
	case GBPF_ATOMIC_OR:
	case GBPF_ATOMIC_AND:
	case GBPF_ATOMIC_XOR:
	case GBPF_ATOMIC_ADD | GBPF_FETCH:
	case GBPF_ATOMIC_OR | GBPF_FETCH:
	case GBPF_ATOMIC_AND | GBPF_FETCH:
	case GBPF_ATOMIC_XOR | GBPF_FETCH:
	case GBPF_ATOMIC_XCHG:
	case GBPF_ATOMIC_CMPXCHG:
		break;
	default:
		return verr(env, idx, -GBPF_ERRNO__VERIFY, "unknown atomic operation imm=0x%x",
			    (unsigned)in->imm);
	}
	if (regs[in->src].type != REG_SCALAR)
		return verr(env, idx, -GBPF_ERRNO__VERIFY,
			    "atomic operation with a pointer value (R%u) prohibited", in->src);
	if (in->imm == GBPF_ATOMIC_CMPXCHG) {
		err = check_reg_read(env, idx, st, 0);
		if (err)
			return err;
		if (regs[0].type != REG_SCALAR)
			return verr(env, idx, -GBPF_ERRNO__VERIFY, "cmpxchg compares R0, which holds a pointer%s", "");
	}
	err = mem_atomic(env, idx, st, &ptr, in->off, size, what);
	if (err)
		return err;
	if (in->imm & GBPF_FETCH) {
		struct reg *out = &regs[in->imm == GBPF_ATOMIC_CMPXCHG ? 0 : in->src];

		mark_unknown(out);
		sval_sized(&out->v, size);
	}
	return 0;
}

/* Turn every copy of nullable pointer @p id into a pointer or into 0. */
static void mark_null(struct vstate *st, uint32_t id, bool is_null)
{
	for (uint32_t f = 0; f <= st->curframe; f++) {
		struct frame *fr = st->frames[f];

		for (int r = 0; r < GBPF_REG_COUNT; r++) {
			struct reg *x = &fr->regs[r];

			if (!is_nullable(x->type) || x->id != id)
				continue;
			if (is_null) {
				mark_unknown(x);
				sval_const(&x->v, 0);
			} else {
				x->type = x->type == REG_PTR_MAP_VALUE_OR_NULL ? REG_PTR_MAP_VALUE
					  : x->type == REG_PTR_RINGBUF_OR_NULL ? REG_PTR_RINGBUF
									       : REG_PTR_MEM;
			}
		}
		for (uint32_t s = 0; s < fr->nslots; s++) {
			struct reg *x = &fr->stack[s].spill;

			if (fr->stack[s].kind[0] != STK_SPILL || !is_nullable(x->type) || x->id != id)
				continue;
			if (is_null) {
				mark_unknown(x);
				sval_const(&x->v, 0);
			} else {
				x->type = x->type == REG_PTR_MAP_VALUE_OR_NULL ? REG_PTR_MAP_VALUE
					  : x->type == REG_PTR_RINGBUF_OR_NULL ? REG_PTR_RINGBUF
									       : REG_PTR_MEM;
			}
		}
	}
}

void release_ref(struct vstate *st, uint32_t ref)
{
	for (uint32_t i = 0; i < st->nrefs; i++) {
		if (st->refs[i] != ref)
			continue;
		memmove(&st->refs[i], &st->refs[i + 1], (st->nrefs - i - 1) * sizeof(st->refs[0]));
		memmove(&st->ref_insn[i], &st->ref_insn[i + 1],
			(st->nrefs - i - 1) * sizeof(st->ref_insn[0]));
		st->nrefs--;
		break;
	}
	/* every copy of the released record becomes unusable */
	for (uint32_t f = 0; f <= st->curframe; f++) {
		struct frame *fr = st->frames[f];

		for (int r = 0; r < GBPF_REG_COUNT; r++)
			if (fr->regs[r].ref == ref && is_ptr(fr->regs[r].type))
				mark_unknown(&fr->regs[r]);
		for (uint32_t s = 0; s < fr->nslots; s++)
			if (fr->stack[s].kind[0] == STK_SPILL && fr->stack[s].spill.ref == ref)
				mark_unknown(&fr->stack[s].spill);
	}
}

/* Queue @p st (taken over) to be explored from @p target later. */
static int push_owned(struct venv *env, uint32_t target, struct vstate *st,
		      struct checkpoint *parent)
{
	if (env->stack_len == env->stack_cap) {
		size_t cap = env->stack_cap ? env->stack_cap * 2 : 64;
		struct pending *n;

		if (cap > MAX_PENDING) {
			state_free(st);
			return verr(env, target, -GBPF_ERRNO__VERIFY,
				    "program too complex: more than %d branches pending",
				    MAX_PENDING);
		}
		n = realloc(env->stack, cap * sizeof(*n));
		if (!n) {
			state_free(st);
			return -ENOMEM;
		}
		env->stack = n;
		env->stack_cap = cap;
	}
	env->stack[env->stack_len].st = *st;
	env->stack[env->stack_len].insn = target;
	env->stack_len++;
	if (parent)
		parent->branches++;
	return 0;
}

/*
 * Queue a copy of @p st to be explored from @p target later; st goes on.
 * Pending states are compact (only the stack slots in use): a long loop
 * that branches on a helper's result leaves one per iteration, and full
 * frames (about 6 KiB each) made those the verifier's largest memory use.
 * pop_branch() gives the state its full frames back.
 */
static int push_branch(struct venv *env, uint32_t target, struct vstate *st)
{
	struct vstate copy;
	int err = state_copy_compact(&copy, st);

	if (err)
		return err;
	/* the path stores a checkpoint where the branch will arrive (state.c) */
	st->push_target = target;
	st->push_depth = st->depth;
	return push_owned(env, target, &copy, st->parent);
}

static uint32_t subprog_of(const struct venv *env, uint32_t idx)
{
	uint32_t lo = 0, hi = env->subprog_cnt;

	while (hi - lo > 1) {
		uint32_t mid = (lo + hi) / 2;

		if (env->subprogs[mid].start <= idx)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* Give every scalar linked to @p a (and @p b) the value just refined. */
static void sync_linked(struct vstate *st, const struct reg *a, const struct reg *b)
{
	uint32_t ida = a->id, idb = b && b->type == REG_SCALAR ? b->id : 0;

	if (ida == idb)
		ida = idb = 0; /* the same value on both sides: keep each as refined */
	if (!ida && !idb)
		return;
	for (uint32_t f = 0; f <= st->curframe; f++) {
		struct frame *fr = st->frames[f];

		for (int r = 0; r < GBPF_REG_COUNT; r++) {
			struct reg *x = &fr->regs[r];

			if (x->type != REG_SCALAR || !x->id)
				continue;
			if (x->id == ida)
				x->v = a->v;
			else if (x->id == idb)
				x->v = b->v;
		}
		for (uint32_t s = 0; s < fr->nslots; s++) {
			struct reg *x = &fr->stack[s].spill;

			if (fr->stack[s].kind[0] != STK_SPILL || x->type != REG_SCALAR || !x->id)
				continue;
			if (x->id == ida)
				x->v = a->v;
			else if (x->id == idb)
				x->v = b->v;
		}
	}
}

/* A conditional jump: decide or split. *next is the instruction to continue with. */
static int check_cond_jmp(struct venv *env, uint32_t idx, struct vstate *st, uint32_t *next)
{
	const struct gbpf_insn *in = &env->insns[idx];
	bool x = GBPF_SRC(in->code) == GBPF_X, is32 = GBPF_CLASS(in->code) == GBPF_JMP32;
	uint8_t op = GBPF_OP(in->code);
	uint32_t target = idx + 1 + in->off;
	struct reg *regs = cur(st)->regs, *d = &regs[in->dst], s, *sp = NULL;
	struct sval td, ts, fd, fs;
	int dir, err;

	if (x ? in->imm != 0 : in->src != 0)
		return verr(env, idx, -GBPF_ERRNO__VERIFY, "conditional jump: reserved field (%s) must be zero",
			    x ? "imm" : "src");
	err = check_reg_read(env, idx, st, in->dst);
	if (err)
		return err;
	if (x) {
		err = check_reg_read(env, idx, st, in->src);
		if (err)
			return err;
		s = regs[in->src];
		sp = &regs[in->src];
	} else {
		memset(&s, 0, sizeof(s));
		s.type = REG_SCALAR;
		sval_const(&s.v, is32 ? (uint32_t)in->imm : (uint64_t)(int64_t)in->imm);
	}
	if (d->type == REG_SCALAR && s.type == REG_SCALAR) {
		dir = sval_branch(op, is32, &d->v, &s.v, &td, &ts, &fd, &fs);
		if (dir == 1) {
			*next = target;
			return 0;
		}
		if (dir == 0) {
			*next = idx + 1;
			return 0;
		}
		/* taken branch state: refine a copy */
		d->v = td;
		if (sp)
			sp->v = ts;
		sync_linked(st, d, sp);
		err = push_branch(env, target, st);
		d->v = fd;
		if (sp)
			sp->v = fs;
		sync_linked(st, d, sp);
		*next = idx + 1;
		return err;
	}
	/* null checks */
	if (!is32 && (op == GBPF_JEQ || op == GBPF_JNE) && s.type == REG_SCALAR &&
	    sval_is_const(&s.v) && s.v.t.value == 0 && is_ptr(d->type) &&
	    d->type != REG_CONST_MAP) {
		if (!is_nullable(d->type)) {
			/* a valid pointer is never NULL */
			*next = op == GBPF_JNE ? target : idx + 1;
			return 0;
		}
		uint32_t id = d->id, ref = d->ref;
		struct vstate other;

		/* compact, like push_branch(): the changes below stay within the slots in use */
		err = state_copy_compact(&other, st);
		if (err)
			return err;
		/* taken: JEQ sees NULL, JNE a valid pointer; fall-through the opposite */
		mark_null(&other, id, op == GBPF_JEQ);
		if (op == GBPF_JEQ && ref)
			release_ref(&other, ref);
		st->push_target = target;
		st->push_depth = st->depth;
		err = push_owned(env, target, &other, st->parent);
		if (err)
			return err;
		mark_null(st, id, op == GBPF_JNE);
		if (op == GBPF_JNE && ref)
			release_ref(st, ref);
		*next = idx + 1;
		return 0;
	}
	if (is_ptr(d->type) && is_ptr(s.type) && env->device)
		return verr(env, idx, -GBPF_ERRNO__VERIFY,
			    "comparison of pointers (%s, %s) prohibited in device programs",
			    reg_type_name(d->type), reg_type_name(s.type));
	err = push_branch(env, target, st);
	*next = idx + 1;
	return err;
}

static int check_exit(struct venv *env, uint32_t idx, struct vstate *st, bool *done,
		      uint32_t *next)
{
	struct frame *f = cur(st);
	struct reg *r0 = &f->regs[0];
	int err = check_reg_read(env, idx, st, 0);

	*done = false;
	if (err)
		return err;
	if (st->curframe > 0) {
		struct frame *caller = st->frames[st->curframe - 1];

		if (r0->type == REG_PTR_STACK && r0->frameno == st->curframe)
			return verr(env, idx, -GBPF_ERRNO__VERIFY,
				    "function returns a pointer to its own stack, which is gone%s",
				    "");
		caller->regs[0] = *r0;
		for (int r = 1; r <= 5; r++)
			memset(&caller->regs[r], 0, sizeof(caller->regs[r]));
		*next = (uint32_t)f->callsite + 1;
		free(f);
		st->frames[st->curframe] = NULL;
		st->curframe--;
		return 0;
	}
	if (r0->type != REG_SCALAR && env->attach != GBPF_ATTACH_NONE)
		return verr(env, idx, -GBPF_ERRNO__VERIFY,
			    "R0 leaks an address (%s): a program returns a number",
			    reg_type_name(r0->type));
	if (st->nrefs)
		return verr(env, idx, -GBPF_ERRNO__VERIFY,
			    "unreleased reference: ring buffer record reserved at insn %u is "
			    "neither submitted nor discarded on this path",
			    st->ref_insn[0]);
	{
		struct sval v;

		if (r0->type == REG_SCALAR)
			v = r0->v;
		else
			sval_unknown(&v);
		if (env->have_r0)
			sval_join(&env->r0, &v);
		else
			env->r0 = v;
		env->have_r0 = true;
	}
	*done = true;
	return 0;
}

static int check_call_local(struct venv *env, uint32_t idx, struct vstate *st, uint32_t *next)
{
	const struct gbpf_insn *in = &env->insns[idx];
	uint32_t target = idx + 1 + in->imm;
	struct frame *caller, *callee;
	int err;

	err = state_push_frame(st, (int32_t)idx, subprog_of(env, target));
	if (err == -E2BIG)
		return verr(env, idx, -GBPF_ERRNO__VERIFY,
			    "the call stack is too deep (more than %d frames)", GBPF_MAX_CALL_DEPTH);
	if (err)
		return err;
	caller = st->frames[st->curframe - 1];
	callee = st->frames[st->curframe];
	for (int r = 1; r <= 5; r++)
		callee->regs[r] = caller->regs[r];
	callee->regs[10].type = REG_PTR_STACK;
	callee->regs[10].frameno = (uint8_t)st->curframe;
	sval_const(&callee->regs[10].v, 0);
	*next = target;
	return 0;
}

static int check_jmp(struct venv *env, uint32_t idx, struct vstate *st, uint32_t *next,
		     bool *done)
{
	const struct gbpf_insn *in = &env->insns[idx];
	uint8_t op = GBPF_OP(in->code);
	bool is32 = GBPF_CLASS(in->code) == GBPF_JMP32;
	bool x = GBPF_SRC(in->code) == GBPF_X;

	if (op == GBPF_JA) {
		if (x || in->dst || in->src || (is32 ? in->off != 0 : in->imm != 0))
			return verr(env, idx, -GBPF_ERRNO__VERIFY, "ja: reserved fields must be zero%s", "");
		*next = idx + 1 + (is32 ? in->imm : in->off);
		return 0;
	}
	if (op == GBPF_CALL || op == GBPF_EXIT) {
		if (is32)
			return verr(env, idx, -GBPF_ERRNO__VERIFY, "unknown opcode 0x%02x", in->code);
	}
	if (op == GBPF_EXIT) {
		if (x || in->dst || in->src || in->off || in->imm)
			return verr(env, idx, -GBPF_ERRNO__VERIFY, "exit: reserved fields must be zero%s", "");
		*next = idx + 1;
		return check_exit(env, idx, st, done, next);
	}
	if (op == GBPF_CALL) {
		bool ends = false;
		int err;

		if (x) {
			struct reg *t;

			if (in->src || in->off || in->imm)
				return verr(env, idx, -GBPF_ERRNO__VERIFY, "callx: reserved fields must be zero%s", "");
			err = check_reg_read(env, idx, st, in->dst);
			if (err)
				return err;
			t = &cur(st)->regs[in->dst];
			if (env->attach != GBPF_ATTACH_NONE || t->type != REG_SCALAR ||
			    !sval_is_const(&t->v) || t->v.t.value > INT32_MAX)
				return verr(env, idx, -GBPF_ERRNO__VERIFY,
					    "callx (indirect call) is only allowed without an attach "
					    "point and with a constant helper id in the register%s",
					    "");
			err = check_helper_call(env, idx, st, (int32_t)t->v.t.value, &ends);
		} else {
			if (in->dst || in->off)
				return verr(env, idx, -GBPF_ERRNO__VERIFY, "call: reserved fields must be zero%s", "");
			if (in->src == GBPF_CALL_LOCAL)
				return check_call_local(env, idx, st, next);
			if (in->src == GBPF_CALL_KFUNC)
				return verr(env, idx, -GBPF_ERRNO__VERIFY, "calls of kernel functions (kfunc) are not "
						      "supported%s",
					    "");
			if (in->src != GBPF_CALL_HELPER)
				return verr(env, idx, -GBPF_ERRNO__VERIFY,
					    "call with unknown source tag %u", in->src);
			err = check_helper_call(env, idx, st, in->imm, &ends);
		}
		if (err)
			return err;
		*next = idx + 1;
		if (ends) {
			if (st->nrefs)
				return verr(env, idx, -GBPF_ERRNO__VERIFY,
					    "unreleased reference: ring buffer record reserved at "
					    "insn %u is not released before the probe exits",
					    st->ref_insn[0]);
			*done = true;
		}
		return 0;
	}
	if (op == 0xe0 || op == 0xf0)
		return verr(env, idx, -GBPF_ERRNO__VERIFY, "unknown jump opcode 0x%02x", in->code);
	return check_cond_jmp(env, idx, st, next);
}

static int init_state(struct venv *env, struct vstate *st)
{
	struct frame *f;

	memset(st, 0, sizeof(*st));
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->callsite = -1;
	st->frames[0] = f;
	f->regs[10].type = REG_PTR_STACK;
	sval_const(&f->regs[10].v, 0);
	if (env->attach == GBPF_ATTACH_NONE) {
		struct reg *r1 = &f->regs[1], *r2 = &f->regs[2];

		r2->type = REG_SCALAR;
		sval_const(&r2->v, env->mem_size);
		if (env->mem_size == 0) {
			r1->type = REG_SCALAR;
			sval_const(&r1->v, 0);
		} else {
			r1->type = (env->flags & GBPF_VERIFY_F_NULLABLE_MEM) ? REG_PTR_MEM_OR_NULL
									  : REG_PTR_MEM;
			r1->id = ++env->next_id;
			sval_const(&r1->v, 0);
		}
		return 0;
	}
	f->regs[1].type = REG_PTR_CTX;
	sval_const(&f->regs[1].v, 0);
	return 0;
}

uint32_t ctx_size_of(uint32_t attach);

uint32_t ctx_size_of(uint32_t attach)
{
	switch (attach) {
	case GBPF_ATTACH_GPU_ENTRY:
	case GBPF_ATTACH_GPU_EXIT:
	case GBPF_ATTACH_GPU_BARRIER:
		/* all of struct gbpf_gpu_ctx but the mem_* fields (mem.c: ctx_hole) */
	case GBPF_ATTACH_GPU_MEM:
		return sizeof(struct gbpf_gpu_ctx);
	case GBPF_ATTACH_GPU_BLOCK:
		return sizeof(struct gbpf_gpu_block_ctx);
	case GBPF_ATTACH_HOST_LAUNCH:
		return sizeof(struct gbpf_host_launch_ctx);
	case GBPF_ATTACH_HOST_MEMCPY:
	case GBPF_ATTACH_HOST_MALLOC:
	case GBPF_ATTACH_HOST_SYNC:
	case GBPF_ATTACH_HOST_MODULE_LOAD:
		return sizeof(struct gbpf_host_call_ctx);
	case GBPF_ATTACH_UPROBE:
	case GBPF_ATTACH_URETPROBE:
		return 21 * 8; /* x86-64 struct pt_regs */
	}
	return 0;
}

static int step(struct venv *env, uint32_t idx, struct vstate *st, uint32_t *next, bool *done)
{
	const struct gbpf_insn *in = &env->insns[idx];
	int err;

	*done = false;
	*next = idx + 1;
	switch (GBPF_CLASS(in->code)) {
	case GBPF_ALU:
	case GBPF_ALU64:
		return check_alu(env, idx, st);
	case GBPF_LD:
		err = check_ldst(env, idx, st);
		*next = idx + 2;
		return err;
	case GBPF_LDX:
	case GBPF_ST:
	case GBPF_STX:
		return check_ldst(env, idx, st);
	default:
		return check_jmp(env, idx, st, next, done);
	}
}

/* 1 with the next pending state (full frames again) in *st, 0 when none, -ENOMEM. */
static int pop_branch(struct venv *env, struct vstate *st, uint32_t *idx)
{
	struct vstate *p;
	int err;

	if (!env->stack_len)
		return 0;
	env->stack_len--;
	p = &env->stack[env->stack_len].st;
	*idx = env->stack[env->stack_len].insn;
	err = state_copy(st, p);
	state_free(p);
	return err ? err : 1;
}

static int do_check(struct venv *env)
{
	struct vstate st;
	uint32_t idx = 0, next;
	int err = init_state(env, &st);
	char text[128];

	if (err)
		return err;
	for (;;) {
		bool done = false, pruned = false;

		if (++env->processed > env->limit) {
			err = verr(env, idx, -GBPF_ERRNO__VERIFY,
				   "program too complex: more than %" PRIu64
				   " instructions processed (complexity limit)",
				   env->limit);
			break;
		}
		if (idx >= env->insn_cnt || (env->insn_flags[idx] & INSN_SECOND)) {
			err = verr(env, idx >= env->insn_cnt ? env->insn_cnt - 1 : idx,
				   -GBPF_ERRNO__VERIFY,
				   idx >= env->insn_cnt ? "execution falls off the end of the program"
							: "jump into the middle of a wide load");
			break;
		}
		if (subprog_of(env, idx) != cur(&st)->subprog) {
			err = verr(env, idx, -GBPF_ERRNO__VERIFY,
				   "execution leaves function %u (falls or jumps into another "
				   "function)",
				   cur(&st)->subprog);
			break;
		}
		if (env->insn_flags[idx] & INSN_PRUNE) {
			err = prune_visit(env, idx, &st, &pruned);
			if (err)
				break;
		}
		if (!pruned) {
			env->insn_flags[idx] |= INSN_SEEN;
			if (env->log_level >= GBPF_VERIFY_LOG_VERBOSE) {
				vlog_insn_text(env, idx, text, sizeof(text));
				vlog(env, "%u: (%02x) %s\n", idx, env->insns[idx].code, text);
			}
			st.depth++;
			err = step(env, idx, &st, &next, &done);
			if (err) {
				if (env->log_level >= GBPF_VERIFY_LOG_STATE)
					vlog_state(env, &st);
				break;
			}
			if (env->log_level >= GBPF_VERIFY_LOG_VERBOSE)
				vlog_state(env, &st);
			if (done && !pruned)
				path_end(env, &st, 0);
		}
		if (done || pruned) {
			state_free(&st);
			err = pop_branch(env, &st, &idx);
			if (err <= 0) {
				memset(&st, 0, sizeof(st));
				break;
			}
			err = 0;
			if (env->log_level >= GBPF_VERIFY_LOG_VERBOSE)
				vlog(env, "from pending branch to %u\n", idx);
			continue;
		}
		idx = next;
	}
	state_free(&st);
	while (env->stack_len)
		state_free(&env->stack[--env->stack_len].st);
	return err;
}

int verifier_run(struct venv *env);

/*
 * Every per-instruction array in one zeroed block (one allocation instead of
 * ten matters for small programs), 8-byte members first for alignment.
 */
static int alloc_insn_arrays(struct venv *env, void **block)
{
	size_t n = env->insn_cnt;
	size_t b8 = n * (sizeof(*env->cps) + sizeof(*env->wip) + sizeof(*env->sprec_in) +
			 sizeof(*env->anchor_slots));
	size_t b4 = n * (sizeof(*env->wip_cnt) + sizeof(*env->cps_cnt));
	size_t b2 = n * (sizeof(*env->live_in) + sizeof(*env->prec_in) + sizeof(*env->anchor));
	char *p = calloc(1, b8 + b4 + b2 + n * sizeof(*env->insn_flags));

	if (!p)
		return -ENOMEM;
	*block = p;
	env->cps = (struct checkpoint **)p;
	env->wip = env->cps + n;
	env->sprec_in = (uint64_t *)(env->wip + n);
	env->anchor_slots = env->sprec_in + n;
	env->wip_cnt = (uint32_t *)(env->anchor_slots + n);
	env->cps_cnt = env->wip_cnt + n;
	env->live_in = (uint16_t *)(env->cps_cnt + n);
	env->prec_in = env->live_in + n;
	env->anchor = env->prec_in + n;
	env->insn_flags = (uint8_t *)(env->anchor + n);
	return 0;
}

/* Everything after the argument checks: allocate, run the passes, free. */
int verifier_run(struct venv *env)
{
	void *block = NULL;
	int err;

	env->ctx_size = ctx_size_of(env->attach);
	err = alloc_insn_arrays(env, &block);
	if (err)
		return err;
	err = cfg_check(env);
	if (!err)
		err = precise_check(env);
	if (!err)
		err = do_check(env);
	checkpoints_free(env);
	free(env->cp_index);
	free(block);
	free(env->subprogs);
	free(env->stack);
	return err;
}
