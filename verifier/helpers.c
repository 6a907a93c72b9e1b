/* SPDX-License-Identifier: MIT */
/*
 * verifier/helpers.c - the prototype of every helper and where it may run.
 *
 * Where helpers may run (the GPU/SIMT rule "no host-blocking helper in
 * device programs"):
 *  - HOST ONLY: bpf_probe_read (4), bpf_probe_read_user (112),
 *    bpf_probe_read_kernel (113). They read an arbitrary address of the
 *    host process or kernel; from a GPU that means a round trip to the host
 *    (the GPU thread would block on it) or a load that can fault and kill
 *    the application. gpu/mem probes get the accessed value in their
 *    context instead.
 *  - DEVICE ONLY: the GPU helpers 501-511 and gbpf's 600-601: they read
 *    GPU special registers and mean nothing in a host probe. gbpf's 602
 *    (log2) is arithmetic and runs in both.
 *  - everything else runs in both: map helpers operate on shared map
 *    memory, trace_printk and the ring buffer / perf output helpers write
 *    into a queue the host drains asynchronously, time and id helpers are
 *    filled on the device (get_current_pid_tgid is filled in by the agent).
 *  - GBPF_ATTACH_NONE (`prog run`) may call every helper: the backend
 *    (interpreter or GPU) emulates the other side.
 * Collective / warp helpers: gbpf has none today (lane and warp ids are
 * plain reads), so no helper needs warp-uniform control flow.
 * No helper writes application memory, so memory probes cannot either.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <gbpf/helper_ids.h>

#include "core/helpers/host_helpers.h"
#include "verifier/vstate.h"

enum arg_type {
	ARG_NONE = 0,  /* not used: not checked */
	ARG_ANY,       /* any initialised scalar */
	ARG_MAP,       /* a map (lddw of a map index) */
	ARG_MAP_KEY,   /* readable key_size bytes of the previous map argument */
	ARG_MAP_VAL,   /* readable value_size bytes of the previous map argument */
	ARG_MEM_RD,    /* readable memory, size in the next argument */
	ARG_MEM_WR,    /* writable memory (may be uninitialised stack), size next */
	ARG_SIZE,      /* bounded size of the previous memory argument, > 0 */
	ARG_SIZE0,     /* same, may be 0 */
	ARG_CONST_SZ,  /* constant size of a ring buffer reservation */
	ARG_CTX,       /* the program's context */
	ARG_RB_REC,    /* a reserved ring buffer record (released by the call) */
	ARG_U64_OUT,   /* writable 8 bytes */
	ARG_STR,       /* NUL-terminated constant string in a read-only map */
};

enum ret_type {
	RET_SCALAR,
	RET_U32,
	RET_0_63,
	RET_VOID,
	RET_MAP_VALUE_OR_NULL,
	RET_RINGBUF_OR_NULL,
	RET_NORETURN,
};

#define F_HOST_ONLY 1u
#define F_DEVICE_ONLY 2u

/* Map kinds a map argument must have. */
enum map_kind { MK_ANY, MK_KV, MK_RINGBUF, MK_PERF };

struct proto {
	int32_t id;
	uint8_t ret;
	uint8_t args[5];
	uint8_t flags;
	uint8_t map_kind;
};

static const struct proto protos[] = {
	{GBPF_HELPER_MAP_LOOKUP_ELEM, RET_MAP_VALUE_OR_NULL,
	 {ARG_MAP, ARG_MAP_KEY}, 0, MK_KV},
	{GBPF_HELPER_MAP_UPDATE_ELEM, RET_SCALAR,
	 {ARG_MAP, ARG_MAP_KEY, ARG_MAP_VAL, ARG_ANY}, 0, MK_KV},
	{GBPF_HELPER_MAP_DELETE_ELEM, RET_SCALAR, {ARG_MAP, ARG_MAP_KEY}, 0,
	 MK_KV},
	{GBPF_HELPER_PROBE_READ, RET_SCALAR, {ARG_MEM_WR, ARG_SIZE0, ARG_ANY},
	 F_HOST_ONLY, MK_ANY},
	{GBPF_HELPER_KTIME_GET_NS, RET_SCALAR, {0}, 0, MK_ANY},
	{GBPF_HELPER_TRACE_PRINTK, RET_SCALAR,
	 {ARG_MEM_RD, ARG_SIZE, ARG_NONE, ARG_NONE, ARG_NONE}, 0, MK_ANY},
	{GBPF_HELPER_GET_PRANDOM_U32, RET_U32, {0}, 0, MK_ANY},
	{GBPF_HELPER_GET_SMP_PROCESSOR_ID, RET_U32, {0}, 0, MK_ANY},
	{GBPF_HELPER_GET_CURRENT_PID_TGID, RET_SCALAR, {0}, 0, MK_ANY},
	{GBPF_HELPER_PERF_EVENT_OUTPUT, RET_SCALAR,
	 {ARG_CTX, ARG_MAP, ARG_ANY, ARG_MEM_RD, ARG_SIZE}, 0, MK_PERF},
	{GBPF_HELPER_PROBE_READ_USER, RET_SCALAR,
	 {ARG_MEM_WR, ARG_SIZE0, ARG_ANY}, F_HOST_ONLY, MK_ANY},
	{GBPF_HELPER_PROBE_READ_KERNEL, RET_SCALAR,
	 {ARG_MEM_WR, ARG_SIZE0, ARG_ANY}, F_HOST_ONLY, MK_ANY},
	{GBPF_HELPER_KTIME_GET_BOOT_NS, RET_SCALAR, {0}, 0, MK_ANY},
	{GBPF_HELPER_RINGBUF_OUTPUT, RET_SCALAR,
	 {ARG_MAP, ARG_MEM_RD, ARG_SIZE, ARG_ANY}, 0, MK_RINGBUF},
	{GBPF_HELPER_RINGBUF_RESERVE, RET_RINGBUF_OR_NULL,
	 {ARG_MAP, ARG_CONST_SZ, ARG_ANY}, 0, MK_RINGBUF},
	{GBPF_HELPER_RINGBUF_SUBMIT, RET_VOID, {ARG_RB_REC, ARG_ANY}, 0,
	 MK_ANY},
	{GBPF_HELPER_RINGBUF_DISCARD, RET_VOID, {ARG_RB_REC, ARG_ANY}, 0,
	 MK_ANY},
	{GBPF_HELPER_GPU_PUTS, RET_SCALAR, {ARG_STR}, F_DEVICE_ONLY, MK_ANY},
	{GBPF_HELPER_GPU_GLOBALTIMER, RET_SCALAR, {0}, F_DEVICE_ONLY,
	 MK_ANY},
	{GBPF_HELPER_GPU_BLOCK_IDX, RET_SCALAR,
	 {ARG_U64_OUT, ARG_U64_OUT, ARG_U64_OUT}, F_DEVICE_ONLY, MK_ANY},
	{GBPF_HELPER_GPU_BLOCK_DIM, RET_SCALAR,
	 {ARG_U64_OUT, ARG_U64_OUT, ARG_U64_OUT}, F_DEVICE_ONLY, MK_ANY},
	{GBPF_HELPER_GPU_THREAD_IDX, RET_SCALAR,
	 {ARG_U64_OUT, ARG_U64_OUT, ARG_U64_OUT}, F_DEVICE_ONLY, MK_ANY},
	{GBPF_HELPER_GPU_MEMBAR, RET_SCALAR, {0}, F_DEVICE_ONLY, MK_ANY},
	{GBPF_HELPER_GPU_EXIT, RET_NORETURN, {0}, F_DEVICE_ONLY, MK_ANY},
	{GBPF_HELPER_GPU_GRID_DIM, RET_SCALAR,
	 {ARG_U64_OUT, ARG_U64_OUT, ARG_U64_OUT}, F_DEVICE_ONLY, MK_ANY},
	{GBPF_HELPER_GPU_SM_ID, RET_U32, {0}, F_DEVICE_ONLY, MK_ANY},
	{GBPF_HELPER_GPU_WARP_ID, RET_U32, {0}, F_DEVICE_ONLY, MK_ANY},
	{GBPF_HELPER_GPU_LANE_ID, RET_0_63, {0}, F_DEVICE_ONLY, MK_ANY},
	{GBPF_HELPER_GPU_GLOBAL_THREAD_ID, RET_SCALAR, {0},
	 F_DEVICE_ONLY, MK_ANY},
	{GBPF_HELPER_GPU_THREAD_COUNT, RET_SCALAR, {0}, F_DEVICE_ONLY,
	 MK_ANY},
	{GBPF_HELPER_LOG2, RET_0_63, {ARG_ANY}, 0, MK_ANY},
};

/* One table of helper names for the project: core/helpers' (gbpf_helper_name). */
static const char *helper_name(const struct proto *p)
{
	const char *name = gbpf_helper_name((uint32_t)p->id);

	return name ? name : "unknown helper";
}

static const struct proto *find_proto(int32_t id)
{
	for (size_t i = 0; i < sizeof(protos) / sizeof(protos[0]); i++)
		if (protos[i].id == id)
			return &protos[i];
	return NULL;
}

uint16_t verifier_helper_value_args(int32_t id)
{
	const struct proto *p = find_proto(id);
	uint16_t mask = 0;

	if (!p)
		return 0x3e; /* rejected at the call anyway */
	for (int a = 0; a < 5; a++)
		if (p->args[a] == ARG_SIZE || p->args[a] == ARG_SIZE0 || p->args[a] == ARG_CONST_SZ)
			mask |= (uint16_t)(1u << (a + 1));
	return mask;
}

bool verifier_helper_returns_ptr(int32_t id)
{
	const struct proto *p = find_proto(id);

	return !p || p->ret == RET_MAP_VALUE_OR_NULL || p->ret == RET_RINGBUF_OR_NULL;
}

static bool is_host_kind(uint32_t kind)
{
	return kind >= GBPF_ATTACH_HOST_LAUNCH;
}

int gbpf_verify_helper_allowed(uint32_t id, uint32_t attach_kind, const char **name)
{
	const struct proto *p = id <= INT32_MAX ? find_proto((int32_t)id) : NULL;

	if (name)
		*name = p ? helper_name(p) : NULL;
	if (!p)
		return -ENOENT;
	if ((p->flags & F_HOST_ONLY) && gbpf_attach_is_device(attach_kind))
		return 0;
	if ((p->flags & F_DEVICE_ONLY) && is_host_kind(attach_kind))
		return 0;
	return 1;
}

static bool map_kind_ok(const struct gbpf_map_desc *m, uint8_t kind)
{
	bool rb = m->type == GBPF_MAP_TYPE_RINGBUF || m->type == GBPF_MAP_TYPE_GPU_RINGBUF;
	bool perf = m->type == GBPF_MAP_TYPE_PERF_EVENT_ARRAY;

	switch (kind) {
	case MK_KV:
		return !rb && !perf;
	case MK_RINGBUF:
		return rb;
	case MK_PERF:
		return perf;
	}
	return true;
}

static const char *const kind_names[] = {"any map", "a hash or array map", "a ring buffer map",
					 "a perf event array"};

/* A string argument: a constant offset into a read-only map holding a NUL. */
static int check_str(struct venv *env, uint32_t idx, const struct proto *p, int argno,
		     const struct reg *r)
{
	const struct gbpf_map_desc *m;
	uint64_t off;

	if (r->type != REG_PTR_MAP_VALUE || !sval_is_const(&r->v))
		return verr(env, idx, -GBPF_ERRNO__VERIFY,
			    "%s arg%d must be a constant string (pointer into .rodata), not %s",
			    helper_name(p), argno, reg_type_name(r->type));
	m = &env->prog->maps[r->map];
	off = r->v.t.value;
	if (m->origin != GBPF_MAP_ORIGIN_RODATA || !m->init_data || off >= m->init_size ||
	    !memchr((const char *)m->init_data + off, '\0', m->init_size - off))
		return verr(env, idx, -GBPF_ERRNO__VERIFY,
			    "%s arg%d must point to a NUL-terminated string in a read-only map",
			    helper_name(p), argno);
	return 0;
}

int check_helper_call(struct venv *env, uint32_t idx, struct vstate *st, int32_t id,
		      bool *path_ends)
{
	const struct proto *p = find_proto(id);
	struct frame *f = st->frames[st->curframe];
	const struct gbpf_map_desc *map = NULL;
	uint32_t rb_ref = 0, rsize = 0;
	char what[96];
	int err;

	*path_ends = false;
	if (!p)
		return verr(env, idx, -GBPF_ERRNO__VERIFY, "unknown helper id %d (func#%d)", id, id);
	if ((p->flags & F_HOST_ONLY) && env->device)
		return verr(env, idx, -GBPF_ERRNO__VERIFY,
			    "helper %s (%d) is host-only: it would block or fault on the GPU "
			    "(not allowed in device programs)",
			    helper_name(p), id);
	if ((p->flags & F_DEVICE_ONLY) && is_host_kind(env->attach))
		return verr(env, idx, -GBPF_ERRNO__VERIFY,
			    "helper %s (%d) is GPU-only: not allowed in host programs", helper_name(p), id);
	for (int a = 0; a < 5; a++) {
		struct reg *r = &f->regs[a + 1];
		uint8_t t = p->args[a];

		if (t == ARG_NONE)
			continue;
		snprintf(what, sizeof(what), "%s arg%d (R%d)", helper_name(p), a + 1, a + 1);
		if (r->type == REG_NOT_INIT)
			return verr(env, idx, -GBPF_ERRNO__VERIFY, "%s !read_ok: not initialised",
				    what);
		switch (t) {
		case ARG_ANY:
			if (r->type != REG_SCALAR)
				return verr(env, idx, -GBPF_ERRNO__VERIFY,
					    "%s type=%s expected=scalar", what,
					    reg_type_name(r->type));
			break;
		case ARG_MAP:
			if (r->type != REG_CONST_MAP)
				return verr(env, idx, -GBPF_ERRNO__VERIFY,
					    "%s type=%s expected=map_ptr", what,
					    reg_type_name(r->type));
			map = &env->prog->maps[r->map];
			if (!map_kind_ok(map, p->map_kind))
				return verr(env, idx, -GBPF_ERRNO__VERIFY,
					    "%s: map '%s' (type %u) is not %s", what,
					    map->name ? map->name : "?", map->type,
					    kind_names[p->map_kind]);
			break;
		case ARG_MAP_KEY:
		case ARG_MAP_VAL: {
			struct reg sz;

			memset(&sz, 0, sizeof(sz));
			sz.type = REG_SCALAR;
			sval_const(&sz.v, t == ARG_MAP_KEY ? map->key_size : map->value_size);
			err = check_mem_range(env, idx, st, r, &sz, false, true, what);
			if (err)
				return err;
			break;
		}
		case ARG_MEM_RD:
		case ARG_MEM_WR:
			if (a + 1 >= 5) /* table error */
				return -EINVAL;
			if (f->regs[a + 2].type == REG_NOT_INIT)
				return verr(env, idx, -GBPF_ERRNO__VERIFY,
					    "%s arg%d (size) !read_ok: not initialised", helper_name(p),
					    a + 2);
			err = check_mem_range(env, idx, st, r, &f->regs[a + 2], t == ARG_MEM_WR,
					      p->args[a + 1] == ARG_SIZE0, what);
			if (err)
				return err;
			break;
		case ARG_SIZE:
		case ARG_SIZE0:
			break; /* checked with its memory argument */
		case ARG_CONST_SZ:
			if (r->type != REG_SCALAR || !sval_is_const(&r->v) || r->v.t.value == 0 ||
			    r->v.t.value > (1u << 24))
				return verr(env, idx, -GBPF_ERRNO__VERIFY,
					    "%s must be a constant size between 1 and %u bytes", what,
					    1u << 24);
			rsize = (uint32_t)r->v.t.value;
			break;
		case ARG_CTX:
			if (env->attach == GBPF_ATTACH_NONE)
				break;
			if (r->type != REG_PTR_CTX || !sval_is_const(&r->v) || r->v.t.value != 0)
				return verr(env, idx, -GBPF_ERRNO__VERIFY,
					    "%s type=%s expected=ctx", what, reg_type_name(r->type));
			/* The helper may read any of it. */
			env->ctx_read_mask = ~0ULL;
			break;
		case ARG_RB_REC:
			if (r->type != REG_PTR_RINGBUF || !r->ref)
				return verr(env, idx, -GBPF_ERRNO__VERIFY,
					    "%s type=%s expected=ringbuf_mem (a non-NULL record from "
					    "bpf_ringbuf_reserve)",
					    what, reg_type_name(r->type));
			if (!sval_is_const(&r->v) || r->v.t.value != 0)
				return verr(env, idx, -GBPF_ERRNO__VERIFY,
					    "%s must point to the start of the record", what);
			rb_ref = r->ref;
			break;
		case ARG_U64_OUT: {
			struct reg sz;

			memset(&sz, 0, sizeof(sz));
			sz.type = REG_SCALAR;
			sval_const(&sz.v, 8);
			err = check_mem_range(env, idx, st, r, &sz, true, false, what);
			if (err)
				return err;
			break;
		}
		case ARG_STR:
			err = check_str(env, idx, p, a + 1, r);
			if (err)
				return err;
			break;
		}
	}
	if (rb_ref)
		release_ref(st, rb_ref);
	f = st->frames[st->curframe];
	for (int r = 1; r <= 5; r++)
		memset(&f->regs[r], 0, sizeof(f->regs[r]));
	mark_unknown(&f->regs[0]);
	switch (p->ret) {
	case RET_U32:
		sval_sized(&f->regs[0].v, 4);
		break;
	case RET_0_63:
		f->regs[0].v.smin = 0;
		f->regs[0].v.smax = 63;
		sval_sync(&f->regs[0].v);
		break;
	case RET_VOID:
		memset(&f->regs[0], 0, sizeof(f->regs[0]));
		break;
	case RET_MAP_VALUE_OR_NULL:
		f->regs[0].type = REG_PTR_MAP_VALUE_OR_NULL;
		f->regs[0].map = (uint16_t)(map - env->prog->maps);
		f->regs[0].id = ++env->next_id;
		sval_const(&f->regs[0].v, 0);
		break;
	case RET_RINGBUF_OR_NULL:
		if (st->nrefs >= MAX_REFS)
			return verr(env, idx, -GBPF_ERRNO__VERIFY,
				    "more than %d ring buffer records reserved at once", MAX_REFS);
		f->regs[0].type = REG_PTR_RINGBUF_OR_NULL;
		f->regs[0].size = rsize;
		f->regs[0].id = ++env->next_id;
		f->regs[0].ref = f->regs[0].id;
		st->refs[st->nrefs] = f->regs[0].ref;
		st->ref_insn[st->nrefs++] = idx;
		sval_const(&f->regs[0].v, 0);
		break;
	case RET_NORETURN:
		*path_ends = true;
		break;
	}
	return 0;
}
