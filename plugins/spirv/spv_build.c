/* SPDX-License-Identifier: MIT */
/*
 * plugins/spirv/spv_build.c - a minimal SPIR-V module builder: word
 * sections in the order the specification requires, an id counter and a
 * cache that gives each type and constant one id (SPIR-V forbids two
 * OpTypeInt of the same width, and deduplication keeps modules small).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "maps/map_layout.h"
#include "spv_internal.h"

/* Limits the module size: a program of 1M instructions stays well below. */
#define SPV_MAX_WORDS (64u << 20)

static void words_push(struct spv_mod *m, struct spv_words *s, uint32_t w)
{
	if (m->oom)
		return;
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 256;
		uint32_t *p;

		if (cap > SPV_MAX_WORDS) {
			m->oom = 1;
			return;
		}
		p = realloc(s->w, cap * sizeof(*p));
		if (!p) {
			m->oom = 1;
			return;
		}
		s->w = p;
		s->cap = cap;
	}
	s->w[s->n++] = w;
}

int spv_mod_std_types(struct spv_mod *m)
{
	static const uint32_t none[1];
	uint32_t vec[2];

	m->t_void = spv_cached(m, SpvOpTypeVoid, 0, 0, none);
	m->t_bool = spv_cached(m, SpvOpTypeBool, 0, 0, none);
	m->t_u8 = spv_type_int(m, 8);
	m->t_u16 = spv_type_int(m, 16);
	m->t_u32 = spv_type_int(m, 32);
	m->t_u64 = spv_type_int(m, 64);
	vec[0] = m->t_u64;
	vec[1] = 3;
	m->t_v3u64 = spv_cached(m, SpvOpTypeVector, 0, 2, vec);
	return m->oom ? -ENOMEM : 0;
}

int spv_mod_init(struct spv_mod *m)
{
	memset(m, 0, sizeof(*m));
	m->bound = 1;
	return spv_mod_std_types(m);
}

void spv_mod_free(struct spv_mod *m)
{
	size_t i;

	for (i = 0; i < SPV_SEC_COUNT; i++)
		free(m->sec[i].w);
	free(m->cache);
	memset(m, 0, sizeof(*m));
}

int spv_mod_finish(struct spv_mod *m, uint32_t version, uint32_t **words, size_t *count)
{
	size_t total = 5, i, at = 5;
	uint32_t *w;

	if (m->oom)
		return -ENOMEM;
	for (i = 0; i < SPV_SEC_COUNT; i++)
		total += m->sec[i].n;
	w = malloc(total * sizeof(*w));
	if (!w)
		return -ENOMEM;
	w[0] = SpvMagicNumber;
	w[1] = version;
	w[2] = 0x00470000; /* generator: unregistered, "gbpf" tool 0x47 */
	w[3] = m->bound;
	w[4] = 0;
	for (i = 0; i < SPV_SEC_COUNT; i++) {
		if (m->sec[i].n)
			memcpy(w + at, m->sec[i].w, m->sec[i].n * sizeof(*w));
		at += m->sec[i].n;
	}
	*words = w;
	*count = total;
	return 0;
}

uint32_t spv_id(struct spv_mod *m)
{
	if (m->bound >= 0x3fffff) { /* keep far below the 2^32 id limit */
		m->oom = 1;
		return 1;
	}
	return m->bound++;
}

void spv_inst(struct spv_mod *m, enum spv_section s, uint32_t op, size_t n, const uint32_t *ops)
{
	size_t i;

	words_push(m, &m->sec[s], (uint32_t)((n + 1) << 16) | op);
	for (i = 0; i < n; i++)
		words_push(m, &m->sec[s], ops[i]);
}

void spv_op(struct spv_mod *m, enum spv_section s, uint32_t op, size_t n, ...)
{
	uint32_t ops[16];
	va_list ap;
	size_t i;

	va_start(ap, n);
	for (i = 0; i < n && i < 16; i++)
		ops[i] = va_arg(ap, uint32_t);
	va_end(ap);
	spv_inst(m, s, op, n < 16 ? n : 16, ops);
}

void spv_op_str(struct spv_mod *m, enum spv_section s, uint32_t op, const uint32_t *pre, size_t n,
		const char *str, const uint32_t *post, size_t npost)
{
	size_t len = strlen(str), sw = len / 4 + 1, i;

	words_push(m, &m->sec[s], (uint32_t)((1 + n + sw + npost) << 16) | op);
	for (i = 0; i < n; i++)
		words_push(m, &m->sec[s], pre[i]);
	for (i = 0; i < sw; i++) {
		uint32_t w = 0;
		size_t k;

		for (k = 0; k < 4; k++) {
			size_t at = i * 4 + k;

			if (at < len)
				w |= (uint32_t)(uint8_t)str[at] << (8 * k);
		}
		words_push(m, &m->sec[s], w);
	}
	for (i = 0; i < npost; i++)
		words_push(m, &m->sec[s], post[i]);
}

void spv_cap(struct spv_mod *m, uint32_t cap)
{
	size_t i;

	for (i = 0; i < m->ncaps; i++)
		if (m->caps[i] == cap)
			return;
	if (m->ncaps < sizeof(m->caps) / sizeof(m->caps[0]))
		m->caps[m->ncaps++] = cap;
	spv_op(m, SPV_SEC_CAP, SpvOpCapability, 1, cap);
}

void spv_name(struct spv_mod *m, uint32_t id, const char *name)
{
	spv_op_str(m, SPV_SEC_DEBUG, SpvOpName, &id, 1, name, NULL, 0);
}

/* Find or create the type/constant (op, operands...) in SPV_SEC_TYPES; the
 * result id goes after the first @p before operands (after the type for
 * constants, first for types). */
uint32_t spv_cached(struct spv_mod *m, uint32_t op, size_t before, size_t n, const uint32_t *ops)
{
	struct spv_cache_ent *e;
	uint32_t all[12];
	size_t i;

	for (i = 0; i < m->ncache; i++) {
		e = &m->cache[i];
		if (e->klen == n + 1 && e->key[0] == op && (!n || !memcmp(e->key + 1, ops, n * 4)))
			return e->id;
	}
	if (m->ncache == m->capcache) {
		size_t cap = m->capcache ? m->capcache * 2 : 64;
		void *p = realloc(m->cache, cap * sizeof(*m->cache));

		if (!p) {
			m->oom = 1;
			return 1;
		}
		m->cache = p;
		m->capcache = cap;
	}
	e = &m->cache[m->ncache++];
	memset(e, 0, sizeof(*e));
	e->key[0] = op;
	if (n)
		memcpy(e->key + 1, ops, n * 4);
	e->klen = (uint32_t)n + 1;
	e->id = spv_id(m);
	for (i = 0; i < before; i++)
		all[i] = ops[i];
	all[before] = e->id;
	for (i = before; i < n; i++)
		all[i + 1] = ops[i];
	spv_inst(m, SPV_SEC_TYPES, op, n + 1, all);
	return e->id;
}

int spv_cache_add(struct spv_mod *m, uint32_t op, size_t n, const uint32_t *ops, uint32_t id)
{
	struct spv_cache_ent *e;
	size_t i;

	if (n + 1 > sizeof(e->key) / sizeof(e->key[0]))
		return 0; /* too long to be one of ours: never looked up */
	for (i = 0; i < m->ncache; i++) {
		e = &m->cache[i];
		if (e->klen == n + 1 && e->key[0] == op && (!n || !memcmp(e->key + 1, ops, n * 4)))
			return 0; /* keep the first of duplicates (aggregates may repeat) */
	}
	if (m->ncache == m->capcache) {
		size_t cap = m->capcache ? m->capcache * 2 : 64;
		void *p = realloc(m->cache, cap * sizeof(*m->cache));

		if (!p)
			return -ENOMEM;
		m->cache = p;
		m->capcache = cap;
	}
	e = &m->cache[m->ncache++];
	memset(e, 0, sizeof(*e));
	e->key[0] = op;
	if (n)
		memcpy(e->key + 1, ops, n * 4);
	e->klen = (uint32_t)n + 1;
	e->id = id;
	return 0;
}

uint32_t spv_type_int(struct spv_mod *m, uint32_t width)
{
	uint32_t ops[2] = {width, 0};

	if (width == 8)
		spv_cap(m, SpvCapabilityInt8);
	else if (width == 16)
		spv_cap(m, SpvCapabilityInt16);
	else if (width == 64)
		spv_cap(m, SpvCapabilityInt64);
	return spv_cached(m, SpvOpTypeInt, 0, 2, ops);
}

uint32_t spv_type_ptr(struct spv_mod *m, uint32_t storage, uint32_t pointee)
{
	uint32_t ops[2] = {storage, pointee};

	if (storage == SpvStorageClassGeneric)
		spv_cap(m, SpvCapabilityGenericPointer);
	return spv_cached(m, SpvOpTypePointer, 0, 2, ops);
}

uint32_t spv_type_array(struct spv_mod *m, uint32_t elem, uint32_t len)
{
	uint32_t ops[2] = {elem, spv_c32(m, len)};

	return spv_cached(m, SpvOpTypeArray, 0, 2, ops);
}

uint32_t spv_type_fn(struct spv_mod *m, uint32_t ret, size_t n, const uint32_t *params)
{
	uint32_t ops[9];
	size_t i;

	if (n > 8) {
		m->oom = 1;
		return 1;
	}
	ops[0] = ret;
	for (i = 0; i < n; i++)
		ops[i + 1] = params[i];
	return spv_cached(m, SpvOpTypeFunction, 0, n + 1, ops);
}

uint32_t spv_const(struct spv_mod *m, uint32_t type, uint64_t v)
{
	uint32_t ops[3] = {type, (uint32_t)v, (uint32_t)(v >> 32)};

	return spv_cached(m, SpvOpConstant, 1, type == m->t_u64 ? 3 : 2, ops);
}

uint32_t spv_c32(struct spv_mod *m, uint32_t v)
{
	return spv_const(m, m->t_u32, v);
}

uint32_t spv_c64(struct spv_mod *m, uint64_t v)
{
	return spv_const(m, m->t_u64, v);
}

uint32_t spv_cbool(struct spv_mod *m, int v)
{
	uint32_t ops[1] = {m->t_bool};

	return spv_cached(m, v ? SpvOpConstantTrue : SpvOpConstantFalse, 1, 1, ops);
}

uint32_t spv_builtin(struct spv_mod *m, uint32_t builtin, int vector)
{
	uint32_t id, ptr;

	if (builtin >= 64)
		return 1;
	if (m->builtin_var[builtin]) {
		/* an application's variable: still list it in entry point interfaces */
		size_t i;

		for (i = 0; i < m->niface; i++)
			if (m->iface[i] == m->builtin_var[builtin])
				return m->builtin_var[builtin];
		if (m->niface < 64)
			m->iface[m->niface++] = m->builtin_var[builtin];
		return m->builtin_var[builtin];
	}
	ptr = spv_type_ptr(m, SpvStorageClassInput, vector ? m->t_v3u64 : m->t_u64);
	id = spv_id(m);
	spv_op(m, SPV_SEC_TYPES, SpvOpVariable, 3, ptr, id, SpvStorageClassInput);
	spv_op(m, SPV_SEC_ANNOT, SpvOpDecorate, 3, id, SpvDecorationBuiltIn, builtin);
	/* OpenCL builtins are constants of the launch */
	spv_op(m, SPV_SEC_ANNOT, SpvOpDecorate, 2, id, SpvDecorationConstant);
	m->builtin_var[builtin] = id;
	if (m->niface < 64)
		m->iface[m->niface++] = id;
	return id;
}

uint32_t spv_bin(struct spv_mod *m, uint32_t op, uint32_t type, uint32_t a, uint32_t b)
{
	uint32_t id = spv_id(m);

	spv_op(m, SPV_SEC_FUNCS, op, 4, type, id, a, b);
	return id;
}

uint32_t spv_un(struct spv_mod *m, uint32_t op, uint32_t type, uint32_t a)
{
	uint32_t id = spv_id(m);

	spv_op(m, SPV_SEC_FUNCS, op, 3, type, id, a);
	return id;
}

uint32_t spv_select(struct spv_mod *m, uint32_t type, uint32_t c, uint32_t a, uint32_t b)
{
	uint32_t id = spv_id(m);

	spv_op(m, SPV_SEC_FUNCS, SpvOpSelect, 5, type, id, c, a, b);
	return id;
}

uint32_t spv_load(struct spv_mod *m, uint32_t type, uint32_t ptr, uint32_t align)
{
	uint32_t id = spv_id(m);

	if (align)
		spv_op(m, SPV_SEC_FUNCS, SpvOpLoad, 5, type, id, ptr, SpvMemoryAccessAlignedMask, align);
	else
		spv_op(m, SPV_SEC_FUNCS, SpvOpLoad, 3, type, id, ptr);
	return id;
}

void spv_store(struct spv_mod *m, uint32_t ptr, uint32_t val, uint32_t align)
{
	if (align)
		spv_op(m, SPV_SEC_FUNCS, SpvOpStore, 4, ptr, val, SpvMemoryAccessAlignedMask, align);
	else
		spv_op(m, SPV_SEC_FUNCS, SpvOpStore, 2, ptr, val);
}

uint32_t spv_addr_ptr(struct spv_mod *m, uint32_t type, uint32_t addr)
{
	return spv_un(m, SpvOpConvertUToPtr, spv_type_ptr(m, SpvStorageClassGeneric, type), addr);
}

uint32_t spv_label(struct spv_mod *m, uint32_t id)
{
	if (!id)
		id = spv_id(m);
	spv_op(m, SPV_SEC_FUNCS, SpvOpLabel, 1, id);
	return id;
}

void spv_br(struct spv_mod *m, uint32_t target)
{
	spv_op(m, SPV_SEC_FUNCS, SpvOpBranch, 1, target);
}

void spv_brc(struct spv_mod *m, uint32_t cond, uint32_t t, uint32_t f)
{
	spv_op(m, SPV_SEC_FUNCS, SpvOpBranchConditional, 3, cond, t, f);
}

uint32_t spv_ld64(struct spv_mod *m, uint32_t base, uint64_t off)
{
	return spv_load(m, m->t_u64, spv_addr_ptr(m, m->t_u64, spv_addk(m, base, off)), 8);
}

uint32_t spv_ld32(struct spv_mod *m, uint32_t base, uint64_t off)
{
	return spv_load(m, m->t_u32, spv_addr_ptr(m, m->t_u32, spv_addk(m, base, off)), 4);
}

uint32_t spv_add64(struct spv_mod *m, uint32_t a, uint32_t b)
{
	return spv_bin(m, SpvOpIAdd, m->t_u64, a, b);
}

uint32_t spv_addk(struct spv_mod *m, uint32_t a, uint64_t k)
{
	if (!k)
		return a;
	return spv_add64(m, a, spv_c64(m, k));
}

uint32_t spv_plane_size(struct spv_mod *m, uint32_t count, uint32_t stride)
{
	uint32_t bytes = spv_bin(m, SpvOpIMul, m->t_u64, count, stride);

	return spv_bin(m, SpvOpBitwiseAnd, m->t_u64, spv_addk(m, bytes, GBPF_MAP_PLANE_ALIGN - 1),
		       spv_c64(m, ~(uint64_t)(GBPF_MAP_PLANE_ALIGN - 1)));
}

/*
 * Atomics address CrossWorkgroup memory, not Generic: PoCL 3.1's kernel
 * library has atomic built-ins for global and local pointers only. Maps,
 * the context table and application buffers are global memory; eBPF
 * atomics on the stack reach it this way only on devices with one flat
 * address space (CPU devices).
 */
static uint32_t atomic_ptr(struct spv_mod *m, uint32_t t, uint32_t addr)
{
	return spv_un(m, SpvOpConvertUToPtr, spv_type_ptr(m, SpvStorageClassCrossWorkgroup, t), addr);
}

static uint32_t wtype(struct spv_mod *m, uint32_t width)
{
	if (width == 64)
		spv_cap(m, SpvCapabilityInt64Atomics);
	return width == 64 ? m->t_u64 : m->t_u32;
}

uint32_t spv_atomic(struct spv_mod *m, uint32_t op, uint32_t width, uint32_t addr, uint32_t val)
{
	uint32_t t = wtype(m, width), id = spv_id(m);

	spv_op(m, SPV_SEC_FUNCS, op, 6, t, id, atomic_ptr(m, t, addr), spv_c32(m, SpvScopeDevice),
	       spv_c32(m, SPV_SEM_SC), val);
	return id;
}

uint32_t spv_atomic_cas(struct spv_mod *m, uint32_t width, uint32_t addr, uint32_t val,
			uint32_t cmp)
{
	uint32_t t = wtype(m, width), id = spv_id(m);
	/* the failure order may not be stronger than the success order, nor release */
	uint32_t fail = SpvMemorySemanticsAcquireMask | SpvMemorySemanticsCrossWorkgroupMemoryMask |
			SpvMemorySemanticsWorkgroupMemoryMask;

	spv_op(m, SPV_SEC_FUNCS, SpvOpAtomicCompareExchange, 8, t, id, atomic_ptr(m, t, addr),
	       spv_c32(m, SpvScopeDevice), spv_c32(m, SPV_SEM_SC), spv_c32(m, fail), val, cmp);
	return id;
}

uint32_t spv_atomic_load(struct spv_mod *m, uint32_t width, uint32_t addr)
{
	uint32_t t = wtype(m, width), id = spv_id(m);

	spv_op(m, SPV_SEC_FUNCS, SpvOpAtomicLoad, 5, t, id, atomic_ptr(m, t, addr),
	       spv_c32(m, SpvScopeDevice), spv_c32(m, SPV_SEM_SC));
	return id;
}

void spv_atomic_store(struct spv_mod *m, uint32_t width, uint32_t addr, uint32_t val)
{
	uint32_t t = wtype(m, width);

	spv_op(m, SPV_SEC_FUNCS, SpvOpAtomicStore, 4, atomic_ptr(m, t, addr),
	       spv_c32(m, SpvScopeDevice), spv_c32(m, SPV_SEM_SC), val);
}

/*
 * A full fence as a sequentially consistent read-modify-write (OR 0) of a
 * global word: OpMemoryBarrier becomes mem_fence() under the OpenCL 1.2
 * built-in names that PoCL needs (see spv_pocl.c), which PoCL 3.1's library
 * lacks. A seq_cst RMW orders all earlier and later accesses just as well.
 * @p word is the address of a word nobody else relies on (the context table's
 * reserved word); 0 falls back to OpMemoryBarrier.
 */
void spv_fence(struct spv_mod *m, uint64_t word)
{
	if (word) {
		spv_atomic(m, SpvOpAtomicOr, 64, spv_c64(m, word), spv_c64(m, 0));
		return;
	}
	spv_op(m, SPV_SEC_FUNCS, SpvOpMemoryBarrier, 2, spv_c32(m, SpvScopeDevice),
	       spv_c32(m, SPV_SEM_SC));
}

uint32_t spv_var(struct spv_mod *m, uint32_t pointee)
{
	uint32_t id = spv_id(m);

	spv_op(m, SPV_SEC_FUNCS, SpvOpVariable, 3,
	       spv_type_ptr(m, SpvStorageClassFunction, pointee), id, SpvStorageClassFunction);
	return id;
}
