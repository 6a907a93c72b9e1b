/* SPDX-License-Identifier: MIT */
/*
 * verifier/mem.c - memory accesses: which pointer may be read or written
 * where, stack slot tracking (initialisation and register spills), and the
 * (pointer, size) arguments of helpers.
 *
 * GPU code faults on misaligned accesses, so device programs must access
 * every object at an address aligned to the access size; host programs
 * only need it for the context.
 */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <string.h>

#include <gbpf/probe_ctx.h>

#include "verifier/vstate.h"

/* Largest offset a pointer may carry; keeps every sum below in int64. */
#define MAX_PTR_OFF (1LL << 29)

void mark_unknown(struct reg *r)
{
	memset(r, 0, sizeof(*r));
	r->type = REG_SCALAR;
	sval_unknown(&r->v);
}

static void grow_slots(struct frame *f, uint32_t n)
{
	if (n <= f->nslots)
		return;
	memset(&f->stack[f->nslots], 0, (n - f->nslots) * sizeof(struct stack_slot));
	f->nslots = n;
}

static void note_stack_depth(struct venv *env, const struct vstate *st)
{
	uint32_t total = 0;

	for (uint32_t i = 0; i <= st->curframe; i++)
		total += st->frames[i]->nslots * 8;
	if (total > env->max_stack)
		env->max_stack = total;
}

/* Writable region of a pointer, or -errno with the message logged. */
static int region(struct venv *env, uint32_t idx, const struct reg *ptr, bool write,
		  const char *what, int64_t *lo, int64_t *hi)
{
	const struct gbpf_map_desc *map;

	switch (ptr->type) {
	case REG_NOT_INIT:
		return verr(env, idx, -GBPF_ERRNO__VERIFY, "%s is not initialised (!read_ok)", what);
	case REG_SCALAR:
		return verr(env, idx, -GBPF_ERRNO__VERIFY,
			    "invalid mem access 'scalar': %s is a number, not a pointer the program "
			    "was given (application and host memory cannot be dereferenced)",
			    what);
	case REG_PTR_MAP_VALUE_OR_NULL:
	case REG_PTR_RINGBUF_OR_NULL:
	case REG_PTR_MEM_OR_NULL:
		return verr(env, idx, -GBPF_ERRNO__VERIFY,
			    "invalid mem access '%s': %s may be NULL, check it first",
			    reg_type_name(ptr->type), what);
	case REG_CONST_MAP:
		return verr(env, idx, -GBPF_ERRNO__VERIFY,
			    "invalid mem access 'map_ptr': %s is a map, use a helper", what);
	case REG_PTR_CTX:
		if (write && !(env->attach == GBPF_ATTACH_GPU_MEM &&
			       (env->flags & GBPF_VERIFY_F_ALLOW_MEM_WRITE)))
			return verr(env, idx, -GBPF_ERRNO__VERIFY,
				    "cannot write into ctx: context fields are read-only");
		if (write) {
			/* only the stored value, which the backend writes back */
			*lo = offsetof(struct gbpf_gpu_ctx, mem_value);
			*hi = *lo + 8;
			return 0;
		}
		*lo = 0;
		*hi = env->ctx_size;
		return 0;
	case REG_PTR_STACK:
		*lo = -GBPF_STACK_SIZE;
		*hi = 0;
		return 0;
	case REG_PTR_MAP_VALUE:
		map = &env->prog->maps[ptr->map];
		if (write && (map->origin == GBPF_MAP_ORIGIN_RODATA ||
			      (map->map_flags & GBPF_F_RDONLY_PROG)))
			return verr(env, idx, -GBPF_ERRNO__VERIFY,
				    "write into read-only map '%s'", map->name ? map->name : "?");
		*lo = 0;
		*hi = map->value_size;
		return 0;
	case REG_PTR_RINGBUF:
		*lo = 0;
		*hi = ptr->size;
		return 0;
	case REG_PTR_MEM:
		*lo = 0;
		*hi = (int64_t)env->mem_size;
		return 0;
	}
	return verr(env, idx, -GBPF_ERRNO__VERIFY, "invalid pointer type in %s", what);
}

/*
 * gpu/entry, gpu/exit and gpu/barrier contexts are struct gbpf_gpu_ctx with
 * the mem_* fields unset: device was appended after them so that no field
 * moved, which leaves a hole in the middle of what these probes may read.
 */
static int ctx_hole(struct venv *env, uint32_t idx, int64_t first, int64_t last)
{
	static const struct {
		const char *name;
		int64_t off, size;
	} mem_fields[] = {
		{"mem_addr", offsetof(struct gbpf_gpu_ctx, mem_addr), 8},
		{"mem_value", offsetof(struct gbpf_gpu_ctx, mem_value), 8},
		{"mem_size", offsetof(struct gbpf_gpu_ctx, mem_size), 4},
		{"mem_kind", offsetof(struct gbpf_gpu_ctx, mem_kind), 4},
		{"mem_space", offsetof(struct gbpf_gpu_ctx, mem_space), 4},
		{"mem_site", offsetof(struct gbpf_gpu_ctx, mem_site), 4},
	};
	const char *kind = env->attach == GBPF_ATTACH_GPU_ENTRY  ? "gpu/entry"
			   : env->attach == GBPF_ATTACH_GPU_EXIT ? "gpu/exit"
								 : "gpu/barrier";

	for (size_t i = 0; i < sizeof(mem_fields) / sizeof(mem_fields[0]); i++)
		if (first < mem_fields[i].off + mem_fields[i].size && last > mem_fields[i].off)
			return verr(env, idx, -GBPF_ERRNO__VERIFY,
				    "invalid access to ctx: off=%" PRId64 " size=%" PRId64
				    " reads %s, a gpu/mem field a %s probe does not have (it reads "
				    "kernel_id, params, launch_id and device)",
				    first, last - first, mem_fields[i].name, kind);
	return 0;
}

static int bounds(struct venv *env, uint32_t idx, const struct reg *ptr, int64_t off,
		  uint64_t size, bool write, const char *what, int64_t *first, int64_t *last)
{
	int64_t lo = 0, hi = 0;
	int err = region(env, idx, ptr, write, what, &lo, &hi);

	if (err)
		return err;
	if (ptr->v.smin < -MAX_PTR_OFF || ptr->v.smax > MAX_PTR_OFF)
		return verr(env, idx, -GBPF_ERRNO__VERIFY,
			    "%s has an unbounded offset into %s (smin=%" PRId64 ", smax=%" PRId64 ")",
			    what, reg_type_name(ptr->type), ptr->v.smin, ptr->v.smax);
	if (size > (uint64_t)MAX_PTR_OFF)
		return verr(env, idx, -GBPF_ERRNO__VERIFY, "access of %" PRIu64 " bytes is too large",
			    size);
	*first = ptr->v.smin + off;
	*last = ptr->v.smax + off + (int64_t)size;
	if (*first < lo || *last > hi)
		return verr(env, idx, -GBPF_ERRNO__VERIFY,
			    "invalid access to %s: off=%" PRId64 "..%" PRId64 " size=%" PRIu64
			    " outside [%" PRId64 ", %" PRId64 ")",
			    reg_type_name(ptr->type), *first, *last - (int64_t)size, size, lo, hi);
	if (ptr->type == REG_PTR_CTX && !sval_is_const(&ptr->v))
		return verr(env, idx, -GBPF_ERRNO__VERIFY,
			    "variable ctx access prohibited: the offset must be a constant");
	if (ptr->type == REG_PTR_CTX && !write) {
		/* Constant offset (checked above), inside a context of at most 64 bytes. */
		for (int64_t b = *first; b < *last && b < 64; b++)
			if (b >= 0)
				env->ctx_read_mask |= 1ULL << b;
	}
	if (ptr->type == REG_PTR_CTX && !write &&
	    (env->attach == GBPF_ATTACH_GPU_ENTRY || env->attach == GBPF_ATTACH_GPU_EXIT ||
	     env->attach == GBPF_ATTACH_GPU_BARRIER)) {
		err = ctx_hole(env, idx, *first, *last);
		if (err)
			return err;
	}
	if (size > 1 && size <= 8 && (env->device || ptr->type == REG_PTR_CTX)) {
		uint64_t bits = (ptr->v.t.value + (uint64_t)off) | ptr->v.t.mask;

		if (bits & (size - 1))
			return verr(env, idx, -GBPF_ERRNO__VERIFY,
				    "misaligned access to %s: off=%" PRId64 " size=%" PRIu64
				    " (GPU memory accesses must be aligned)",
				    reg_type_name(ptr->type), *first, size);
	}
	return 0;
}

static struct stack_slot *slot_of(struct frame *f, int64_t byte_off, int *b)
{
	int64_t pos = -byte_off - 1; /* 0 = the byte just below r10 */

	*b = 7 - (int)(pos % 8);
	return &f->stack[pos / 8];
}

/* Byte b of a slot becomes data of unknown value; a spill it was part of is gone. */
static void slot_clobber(struct stack_slot *s, int b)
{
	if (s->kind[0] == STK_SPILL) {
		memset(s->kind, STK_MISC, 8);
	} else {
		for (int k = 0; k < 8; k++)
			if (s->kind[k] == STK_PART)
				s->kind[k] = STK_MISC;
	}
	s->kind[b] = STK_MISC;
}

/*
 * A 1, 2 or 4-byte store of a scalar that fits in it, naturally aligned:
 * the same fill gets the value back (loop counters kept as u32 on the
 * stack, map keys). Returns false where the bytes stay unknown data.
 */
static bool narrow_spill(struct frame *f, int64_t first, uint32_t size, const struct reg *val)
{
	struct stack_slot *s;
	int b;

	if (!val || val->type != REG_SCALAR || size >= 8 || (first & (size - 1)) ||
	    val->v.umax > (UINT64_MAX >> (64 - 8 * size)))
		return false;
	s = slot_of(f, first, &b);
	for (uint32_t k = 0; k < size; k++)
		slot_clobber(s, b + (int)k);
	for (uint32_t k = 0; k < size; k++)
		s->kind[b + k] = STK_PART;
	s->spill = *val;
	s->spill.id = 0; /* a narrow copy is not refined with its register */
	return true;
}

/* The fill of exactly the bytes of a narrow spill: its value, else NULL. */
static const struct reg *narrow_fill(struct frame *f, int64_t first, uint32_t size)
{
	struct stack_slot *s;
	int b;

	if (size >= 8 || (first & (size - 1)))
		return NULL;
	s = slot_of(f, first, &b);
	if (slot_part_mask(s) != (((1u << size) - 1) << b))
		return NULL;
	return &s->spill;
}

int check_mem_access(struct venv *env, uint32_t idx, struct vstate *st, const struct reg *ptr,
		     int64_t off, uint32_t size, bool write, const char *what)
{
	int64_t first, last;

	return bounds(env, idx, ptr, off, size, write, what, &first, &last);
}

/*
 * Load (write = false, *val receives the value) or store (*val is the value,
 * or NULL for data of unknown value) through @p ptr.
 */

int mem_access(struct venv *env, uint32_t idx, struct vstate *st, const struct reg *ptr, int64_t off,
	       uint32_t size, bool write, struct reg *val, bool sx, const char *what)
{
	int64_t first, last;
	struct frame *f;
	int err = bounds(env, idx, ptr, off, size, write, what, &first, &last);

	if (err)
		return err;
	if (write && val && val->type != REG_SCALAR && ptr->type != REG_PTR_STACK)
		return verr(env, idx, -GBPF_ERRNO__VERIFY,
			    "cannot store a pointer (%s) into %s: it would leak an address",
			    reg_type_name(val->type), reg_type_name(ptr->type));
	if (ptr->type != REG_PTR_STACK) {
		if (!write) {
			mark_unknown(val);
			if (sx) {
				val->v.smin = -(1LL << (size * 8 - 1));
				val->v.smax = (1LL << (size * 8 - 1)) - 1;
				sval_sync(&val->v);
			} else {
				sval_sized(&val->v, size);
			}
		}
		return 0;
	}
	f = st->frames[ptr->frameno];
	grow_slots(f, (uint32_t)((-first + 7) / 8));
	note_stack_depth(env, st);
	if (write) {
		int b;
		struct stack_slot *s;

		if (!sval_is_const(&ptr->v))
			return verr(env, idx, -GBPF_ERRNO__VERIFY,
				    "variable-offset stack write is not supported (fp%+" PRId64
				    "..%+" PRId64 ")",
				    first, last - size);
		if (val && val->type == REG_PTR_STACK && val->frameno > ptr->frameno)
			return verr(env, idx, -GBPF_ERRNO__VERIFY,
				    "cannot store a pointer to the stack of frame %u into the stack of "
				    "its caller (frame %u)",
				    val->frameno, ptr->frameno);
		if (size == 8 && (first & 7) == 0 && val) {
			s = slot_of(f, first, &b);
			memset(s->kind, STK_SPILL, 8);
			s->spill = *val;
			return 0;
		}
		if (val && val->type != REG_SCALAR)
			return verr(env, idx, -GBPF_ERRNO__VERIFY,
				    "cannot spill part of a pointer: %u bytes at fp%+" PRId64, size,
				    first);
		if (narrow_spill(f, first, size, val))
			return 0;
		for (int64_t o = first; o < last; o++) {
			s = slot_of(f, o, &b);
			slot_clobber(s, b);
		}
		return 0;
	}
	if (sval_is_const(&ptr->v) && size == 8 && (first & 7) == 0) {
		int b;
		struct stack_slot *s = slot_of(f, first, &b);

		if (s->kind[0] == STK_SPILL) {
			*val = s->spill;
			return 0;
		}
	}
	if (sval_is_const(&ptr->v) && !sx) {
		const struct reg *part = narrow_fill(f, first, size);

		if (part) {
			*val = *part;
			return 0;
		}
	}
	for (int64_t o = first; o < last; o++) {
		int b;
		struct stack_slot *s = slot_of(f, o, &b);

		if (s->kind[b] == STK_INVALID)
			return verr(env, idx, -GBPF_ERRNO__VERIFY,
				    "invalid read from stack: fp%+" PRId64 " (size %u) was never written",
				    o, size);
		if (s->kind[b] == STK_SPILL && s->spill.type != REG_SCALAR)
			return verr(env, idx, -GBPF_ERRNO__VERIFY,
				    "invalid size of register fill: reading %u bytes of a spilled "
				    "pointer at fp%+" PRId64,
				    size, first);
	}
	mark_unknown(val);
	if (sx) {
		val->v.smin = -(1LL << (size * 8 - 1));
		val->v.smax = (1LL << (size * 8 - 1)) - 1;
		sval_sync(&val->v);
	} else {
		sval_sized(&val->v, size);
	}
	return 0;
}

/* Atomic read-modify-write: readable and writable, scalar data only. */

int mem_atomic(struct venv *env, uint32_t idx, struct vstate *st, const struct reg *ptr, int64_t off,
	       uint32_t size, const char *what)
{
	struct reg tmp;
	int err;

	if (ptr->type == REG_PTR_CTX)
		return verr(env, idx, -GBPF_ERRNO__VERIFY,
			    "atomic operation on ctx: context fields are read-only");
	/* Atomics need natural alignment on every target, host CPUs included. */
	if ((ptr->type == REG_PTR_STACK || ptr->type == REG_PTR_MAP_VALUE ||
	     ptr->type == REG_PTR_RINGBUF || ptr->type == REG_PTR_MEM) &&
	    (((ptr->v.t.value + (uint64_t)off) | ptr->v.t.mask) & (size - 1)))
		return verr(env, idx, -GBPF_ERRNO__VERIFY,
			    "misaligned atomic operation on %s: off=%" PRId64 " size=%u",
			    reg_type_name(ptr->type), ptr->v.smin + off, size);
	if (ptr->type == REG_PTR_STACK && size == 8 && sval_is_const(&ptr->v)) {
		int64_t o = ptr->v.smin + off;
		struct frame *f = st->frames[ptr->frameno];

		if (o >= -GBPF_STACK_SIZE && o < 0 && -o <= (int64_t)f->nslots * 8) {
			int b;
			struct stack_slot *s = slot_of(f, o, &b);

			if (s->kind[b] == STK_SPILL && s->spill.type != REG_SCALAR)
				return verr(env, idx, -GBPF_ERRNO__VERIFY,
					    "atomic operation on a spilled pointer at fp%+" PRId64, o);
		}
	}
	err = mem_access(env, idx, st, ptr, off, size, false, &tmp, false, what);
	if (err)
		return err;
	return mem_access(env, idx, st, ptr, off, size, true, NULL, false, what);
}

int check_mem_range(struct venv *env, uint32_t idx, struct vstate *st, const struct reg *ptr,
		    const struct reg *size_reg, bool write, bool zero_ok, const char *what)
{
	int64_t first, last;
	uint64_t size;
	int err;

	if (size_reg->type != REG_SCALAR)
		return verr(env, idx, -GBPF_ERRNO__VERIFY, "size of %s must be a number, not %s",
			    what, reg_type_name(size_reg->type));
	if (size_reg->v.umax > (uint64_t)MAX_PTR_OFF)
		return verr(env, idx, -GBPF_ERRNO__VERIFY,
			    "size of %s is unbounded (umax=%" PRIu64 "): bound it with a comparison",
			    what, size_reg->v.umax);
	if (size_reg->v.umin == 0 && !zero_ok)
		return verr(env, idx, -GBPF_ERRNO__VERIFY, "size of %s may be zero", what);
	size = size_reg->v.umax;
	if (size == 0)
		return 0;
	err = bounds(env, idx, ptr, 0, size, write, what, &first, &last);
	if (err)
		return err;
	if (ptr->type != REG_PTR_STACK)
		return 0;
	{
		struct frame *f = st->frames[ptr->frameno];

		grow_slots(f, (uint32_t)((-first + 7) / 8));
		note_stack_depth(env, st);
		for (int64_t o = first; o < last; o++) {
			int b;
			struct stack_slot *s = slot_of(f, o, &b);

			if (write) {
				if (!sval_is_const(&ptr->v))
					return verr(env, idx, -GBPF_ERRNO__VERIFY,
						    "%s: helper writes at a variable stack offset",
						    what);
				slot_clobber(s, b);
				continue;
			}
			if (s->kind[b] == STK_INVALID)
				return verr(env, idx, -GBPF_ERRNO__VERIFY,
					    "%s: stack byte fp%+" PRId64 " is not initialised", what,
					    o);
			if (s->kind[b] == STK_SPILL && s->spill.type != REG_SCALAR)
				return verr(env, idx, -GBPF_ERRNO__VERIFY,
					    "%s: passing a spilled pointer at fp%+" PRId64
					    " to a helper leaks it",
					    what, o);
		}
	}
	return 0;
}
