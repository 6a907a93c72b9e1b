/* SPDX-License-Identifier: MIT */
/*
 * Map descriptions, layout computation, header validation, instances and
 * the type dispatch of the generic operations.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "maps/map_internal.h"

/* Linux map flags gbpf accepts (others, e.g. NUMA placement, are refused). */
#define ACCEPTED_FLAGS                                                                             \
	(GBPF_F_NO_PREALLOC | (1U << 1) /* NO_COMMON_LRU */ | (1U << 3) /* RDONLY */ |             \
	 (1U << 4) /* WRONLY */ | (1U << 6) /* ZERO_SEED */ | GBPF_F_RDONLY_PROG |                 \
	 (1U << 8) /* WRONLY_PROG */ | GBPF_F_MMAPABLE)

static __attribute__((format(printf, 3, 4))) int fail(char *why, size_t why_size, const char *fmt,
						      ...)
{
	va_list ap;

	if (why && why_size) {
		va_start(ap, fmt);
		vsnprintf(why, why_size, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

bool gbpf_mapi_is_array(uint32_t type)
{
	return type == GBPF_MAP_TYPE_ARRAY || type == GBPF_MAP_TYPE_PERCPU_ARRAY ||
	       type == GBPF_MAP_TYPE_GPU_ARRAY || type == GBPF_MAP_TYPE_PERGPUTHREAD_ARRAY ||
	       type == GBPF_MAP_TYPE_GPU_THREAD_LOCAL;
}

bool gbpf_mapi_is_hash(uint32_t type)
{
	return type == GBPF_MAP_TYPE_HASH || type == GBPF_MAP_TYPE_PERCPU_HASH ||
	       type == GBPF_MAP_TYPE_LRU_HASH || type == GBPF_MAP_TYPE_GPU_HASH;
}

bool gbpf_mapi_is_ring(uint32_t type)
{
	return type == GBPF_MAP_TYPE_RINGBUF || type == GBPF_MAP_TYPE_GPU_RINGBUF ||
	       type == GBPF_MAP_TYPE_PERF_EVENT_ARRAY;
}

static bool is_pow2(uint64_t x)
{
	return x && !(x & (x - 1));
}

static uint32_t pow2_floor32(uint32_t x)
{
	uint32_t p = 1;

	while (p <= x / 2)
		p <<= 1;
	return p;
}

/* Multiply-accumulate with overflow and size-limit checks. */
static bool size_mul(uint64_t a, uint64_t b, uint64_t *out)
{
	return !__builtin_mul_overflow(a, b, out) && *out <= GBPF_MAP_MAX_MEM_SIZE;
}

static int layout_array(struct gbpf_map_hdr *h, char *why, size_t why_size)
{
	uint64_t n, per_slot;

	if (h->key_size != 4)
		return fail(why, why_size, "array maps need key_size 4, not %u", h->key_size);
	if (h->value_size == 0 || h->value_size > GBPF_MAP_MAX_VALUE_SIZE)
		return fail(why, why_size, "value_size %u outside 1..%u", h->value_size,
			    GBPF_MAP_MAX_VALUE_SIZE);
	if (h->max_entries == 0 || h->max_entries > GBPF_MAP_MAX_ENTRIES)
		return fail(why, why_size, "max_entries %u outside 1..%u", h->max_entries,
			    GBPF_MAP_MAX_ENTRIES);
	if (h->type != GBPF_MAP_TYPE_PERCPU_ARRAY && h->type != GBPF_MAP_TYPE_PERGPUTHREAD_ARRAY)
		h->nr_slots = 1;
	h->value_stride = (uint32_t)GBPF_MAP_ROUND8(h->value_size);
	/*
	 * Each thread's values live in its own frame (registers or local
	 * memory), so they are kept small; the block itself only describes them.
	 */
	if (h->type == GBPF_MAP_TYPE_GPU_THREAD_LOCAL &&
	    (uint64_t)h->max_entries * h->value_stride > GBPF_MAP_THREAD_LOCAL_MAX)
		return fail(why, why_size, "thread-local map of %u entries x %u bytes: a thread holds at most %u bytes",
			    h->max_entries, h->value_stride, GBPF_MAP_THREAD_LOCAL_MAX);
	h->key_stride = (uint32_t)GBPF_MAP_ROUND8(h->key_size);
	h->data_off = GBPF_MAP_HDR_SIZE;
	/* PERCPU_ARRAY: one plane per slot, padded so that two SMs' copies never share a line */
	per_slot = h->type == GBPF_MAP_TYPE_PERCPU_ARRAY ? gbpf_map_plane_size(h->max_entries, h->value_stride)
							  : (uint64_t)h->max_entries * h->value_stride;
	if (!size_mul(per_slot, h->nr_slots, &n))
		return fail(why, why_size, "%u entries x %u bytes x %u slots is too large",
			    h->max_entries, h->value_size, h->nr_slots);
	h->data_size = n;
	h->total_size = h->data_off + n;
	return 0;
}

static int layout_hash(struct gbpf_map_hdr *h, char *why, size_t why_size)
{
	struct gbpf_hash_geometry g;
	uint64_t bucket, n;

	if (h->key_size == 0 || h->key_size > GBPF_MAP_MAX_KEY_SIZE)
		return fail(why, why_size, "key_size %u outside 1..%u", h->key_size,
			    GBPF_MAP_MAX_KEY_SIZE);
	if (h->value_size == 0 || h->value_size > GBPF_MAP_MAX_VALUE_SIZE)
		return fail(why, why_size, "value_size %u outside 1..%u", h->value_size,
			    GBPF_MAP_MAX_VALUE_SIZE);
	if (h->max_entries == 0 || h->max_entries > GBPF_MAP_MAX_ENTRIES)
		return fail(why, why_size, "max_entries %u outside 1..%u", h->max_entries,
			    GBPF_MAP_MAX_ENTRIES);
	if (h->type != GBPF_MAP_TYPE_PERCPU_HASH)
		h->nr_slots = 1;
	h->value_stride = (uint32_t)GBPF_MAP_ROUND8(h->value_size);
	h->key_stride = (uint32_t)GBPF_MAP_ROUND8(h->key_size);
	/* Twice the entries keeps probe runs short and guarantees a free bucket;
	 * the values are planes after the buckets, one per slot (map_layout.h). */
	gbpf_hash_geometry_of(h->type, h->key_size, h->value_size, h->max_entries, &g);
	bucket = g.bucket_size;
	if (bucket > UINT32_MAX || !size_mul(bucket, g.nr_buckets, &n))
		return fail(why, why_size, "%llu buckets of %llu bytes is too large",
			    (unsigned long long)g.nr_buckets, (unsigned long long)bucket);
	h->nr_buckets = (uint32_t)g.nr_buckets;
	h->bucket_size = (uint32_t)bucket;
	h->data_off = g.data_off;
	h->data_size = n;
	/* one plane of nr_buckets values per slot (PERCPU_HASH; one slot otherwise), each 128-byte aligned */
	h->aux_off = g.aux_off;
	if (!size_mul(g.plane_size, h->nr_slots, &n))
		return fail(why, why_size, "%u slots x %u buckets x %u bytes is too large", h->nr_slots,
			    h->nr_buckets, h->value_stride);
	h->total_size = h->aux_off + n;
	return 0;
}

static int layout_ring(struct gbpf_map_hdr *h, char *why, size_t why_size)
{
	uint64_t n;

	if (h->type == GBPF_MAP_TYPE_PERF_EVENT_ARRAY) {
		if ((h->key_size != 0 && h->key_size != 4) ||
		    (h->value_size != 0 && h->value_size != 4))
			return fail(why, why_size,
				    "perf event arrays need key_size and value_size 4 (or 0), not "
				    "%u/%u",
				    h->key_size, h->value_size);
		if (h->max_entries > GBPF_MAP_MAX_SLOTS)
			return fail(why, why_size, "max_entries %u above %u", h->max_entries,
				    GBPF_MAP_MAX_SLOTS);
		/* One ring per entry; max_entries 0 means one per CPU / SM (nr_slots). */
		if (h->max_entries)
			h->nr_slots = h->max_entries;
		else if (h->nr_slots == 0)
			h->nr_slots = 1;
		h->max_entries = h->nr_slots;
		h->sub_size = GBPF_PERF_RING_SIZE;
	} else {
		uint32_t most;

		if (h->key_size || h->value_size)
			return fail(why, why_size,
				    "ring buffers need key_size and value_size 0, not %u/%u",
				    h->key_size, h->value_size);
		if (!is_pow2(h->max_entries) || h->max_entries < GBPF_RING_MIN_SIZE ||
		    h->max_entries > GBPF_RING_MAX_SIZE)
			return fail(
				why, why_size,
				"ring buffer size (max_entries) %u is not a power of two in %u..%u",
				h->max_entries, GBPF_RING_MIN_SIZE, GBPF_RING_MAX_SIZE);
		/* Sub-rings: a power of two, none smaller than GBPF_RING_MIN_SUBRING. */
		most = h->max_entries / GBPF_RING_MIN_SUBRING;
		if (h->nr_slots > most)
			h->nr_slots = most;
		h->nr_slots = pow2_floor32(h->nr_slots ? h->nr_slots : 1);
		h->sub_size = h->max_entries / h->nr_slots;
	}
	h->value_stride = (uint32_t)GBPF_MAP_ROUND8(h->value_size);
	h->key_stride = (uint32_t)GBPF_MAP_ROUND8(h->key_size);
	h->data_off = GBPF_MAP_HDR_SIZE;
	h->data_size = (uint64_t)h->nr_slots * sizeof(struct gbpf_ring_ctl);
	h->aux_off = h->data_off + h->data_size;
	if (!size_mul(h->nr_slots, h->sub_size, &n))
		return fail(why, why_size, "%u rings of %llu bytes is too large", h->nr_slots,
			    (unsigned long long)h->sub_size);
	h->total_size = h->aux_off + n;
	return 0;
}

int gbpf_mapi_layout_compute(struct gbpf_map_hdr *h, char *why, size_t why_size)
{
	int err;

	h->nr_buckets = 0;
	h->bucket_size = 0;
	h->aux_off = 0;
	h->sub_size = 0;
	if (h->flags & ~ACCEPTED_FLAGS)
		return fail(why, why_size, "unsupported map_flags 0x%x",
			    h->flags & ~ACCEPTED_FLAGS);
	if (h->nr_slots > GBPF_MAP_MAX_SLOTS)
		return fail(why, why_size, "%u slots above %u", h->nr_slots, GBPF_MAP_MAX_SLOTS);
	if (h->nr_slots == 0)
		h->nr_slots = h->type == GBPF_MAP_TYPE_PERF_EVENT_ARRAY ? 0 : 1;
	if (gbpf_mapi_is_array(h->type))
		err = layout_array(h, why, why_size);
	else if (gbpf_mapi_is_hash(h->type))
		err = layout_hash(h, why, why_size);
	else if (gbpf_mapi_is_ring(h->type))
		err = layout_ring(h, why, why_size);
	else
		err = fail(why, why_size, "unsupported map type %u", h->type);
	if (!err && h->total_size > GBPF_MAP_MAX_MEM_SIZE)
		err = fail(why, why_size, "%llu bytes of map memory is above the limit",
			   (unsigned long long)h->total_size);
	return err;
}

static int hdr_from_desc(const struct gbpf_map_desc *desc, uint32_t nr_slots,
			 struct gbpf_map_hdr *h, char *why, size_t why_size)
{
	char reason[160];
	int err;

	if (!desc)
		return fail(why, why_size, "map description is NULL");
	if (desc->sz < offsetof(struct gbpf_map_desc, init_size) + sizeof(desc->init_size))
		return fail(why, why_size, "map '%s': description of %zu bytes is too old",
			    desc->name ? desc->name : "?", desc->sz);
	memset(h, 0, sizeof(*h));
	h->magic = GBPF_MAP_MAGIC;
	h->version = GBPF_MAP_LAYOUT_VERSION;
	h->hdr_size = GBPF_MAP_HDR_SIZE;
	h->type = desc->type;
	h->flags = desc->map_flags;
	h->key_size = desc->key_size;
	h->value_size = desc->value_size;
	h->max_entries = desc->max_entries;
	h->nr_slots = nr_slots;
	reason[0] = 0;
	err = gbpf_mapi_layout_compute(h, reason, sizeof(reason));
	if (!err && desc->init_data && desc->init_size > h->value_size)
		err = fail(reason, sizeof(reason), "%zu bytes of initial data exceed value_size %u",
			   desc->init_size, h->value_size);
	if (!err && desc->init_data && desc->init_size && !gbpf_mapi_is_array(h->type))
		err = fail(reason, sizeof(reason), "initial data given for a map of type %u",
			   h->type);
	if (err)
		return fail(why, why_size, "map '%s' (type %u): %s", desc->name ? desc->name : "?",
			    desc->type, reason);
	return 0;
}

int gbpf_map_desc_check(const struct gbpf_map_desc *desc, char *why, size_t why_size)
{
	struct gbpf_map_hdr h;

	return hdr_from_desc(desc, 1, &h, why, why_size);
}

size_t gbpf_map_mem_size(const struct gbpf_map_desc *desc, uint32_t nr_slots)
{
	struct gbpf_map_hdr h;

	if (hdr_from_desc(desc, nr_slots, &h, NULL, 0))
		return 0;
	return (size_t)h.total_size;
}

int gbpf_map_mem_init(void *mem, size_t size, const struct gbpf_map_desc *desc, uint32_t nr_slots)
{
	struct gbpf_map_hdr h;
	uint8_t *base = mem;
	int err;

	if (!mem || ((uintptr_t)mem & 7))
		return -EINVAL;
	err = hdr_from_desc(desc, nr_slots, &h, NULL, 0);
	if (err)
		return err;
	if (size < h.total_size)
		return -ENOSPC;
	/* Zero first: zero is the empty state of buckets and record headers. */
	memset(base, 0, (size_t)h.total_size);
	if (gbpf_mapi_is_array(h.type) && desc->init_data && desc->init_size) {
		uint64_t copies = (uint64_t)h.nr_slots;

		/* Every copy of value 0 starts with the section's bytes. */
		for (uint64_t s = 0; s < copies; s++)
			memcpy(base + gbpf_array_value_off(&h, 0, s), desc->init_data, desc->init_size);
	}
	memcpy(base, &h, sizeof(h));
	atomic_thread_fence(memory_order_release);
	return 0;
}

/* Validate a header snapshot against the block size; never dereferences beyond it. */
static int hdr_check(const struct gbpf_map_hdr *in, size_t size)
{
	struct gbpf_map_hdr h;

	if (in->magic != GBPF_MAP_MAGIC || in->version != GBPF_MAP_LAYOUT_VERSION ||
	    in->hdr_size != GBPF_MAP_HDR_SIZE || in->ring_gpu_consumer || in->reserved1)
		return -EBADMSG;
	h = *in;
	if (gbpf_mapi_layout_compute(&h, NULL, 0))
		return -EBADMSG;
	/* Every derived field must be exactly what the layout rules give. */
	if (h.nr_slots != in->nr_slots || h.max_entries != in->max_entries ||
	    h.value_stride != in->value_stride || h.key_stride != in->key_stride ||
	    h.nr_buckets != in->nr_buckets || h.bucket_size != in->bucket_size ||
	    h.total_size != in->total_size || h.data_off != in->data_off ||
	    h.data_size != in->data_size || h.aux_off != in->aux_off || h.sub_size != in->sub_size)
		return -EBADMSG;
	if (in->total_size > size)
		return -EBADMSG;
	return 0;
}

int gbpf_map_mem_validate(const void *mem, size_t size)
{
	struct gbpf_map_hdr h;

	if (!mem || ((uintptr_t)mem & 7) || size < GBPF_MAP_HDR_SIZE)
		return -EINVAL;
	memcpy(&h, mem, sizeof(h));
	return hdr_check(&h, size);
}

int gbpf_mapi_view_get(const struct gbpf_map_instance *map, struct map_view *v)
{
	if (!map || !map->mem || ((uintptr_t)map->mem & 7) || map->mem_size < GBPF_MAP_HDR_SIZE)
		return -EINVAL;
	memcpy(&v->h, map->mem, sizeof(v->h));
	v->base = map->mem;
	return hdr_check(&v->h, map->mem_size) ? -EINVAL : 0;
}

int gbpf_map_instance_create(struct gbpf_map_instance *inst, const struct gbpf_map_desc *desc,
			     uint32_t nr_slots)
{
	size_t size;
	void *mem;
	int err;

	if (!inst)
		return -EINVAL;
	memset(inst, 0, sizeof(*inst));
	size = gbpf_map_mem_size(desc, nr_slots);
	if (!size)
		return -EINVAL;
	/* 64-byte alignment keeps ring controls on their own cache lines. */
	mem = aligned_alloc(64, (size + 63) & ~(size_t)63);
	if (!mem)
		return -ENOMEM;
	err = gbpf_map_mem_init(mem, size, desc, nr_slots);
	if (err) {
		free(mem);
		return err;
	}
	inst->desc = desc;
	inst->mem = mem;
	inst->mem_size = size;
	return 0;
}

void gbpf_map_instance_destroy(struct gbpf_map_instance *inst)
{
	if (!inst)
		return;
	free(inst->mem);
	memset(inst, 0, sizeof(*inst));
}

uint32_t gbpf_map_nr_slots(const struct gbpf_map_instance *map)
{
	struct map_view v;

	if (gbpf_mapi_view_get(map, &v))
		return 0;
	return v.h.nr_slots;
}

uint64_t gbpf_map_hash(const void *key, size_t size)
{
	const uint8_t *k = key;
	uint64_t h = GBPF_HASH_INIT ^ (uint64_t)size;

	for (size_t i = 0; i < size; i += 8) {
		uint64_t w = 0;
		size_t n = size - i < 8 ? size - i : 8;

		/* Little-endian assembly of the word, whatever the host order. */
		for (size_t j = 0; j < n; j++)
			w |= (uint64_t)k[i + j] << (8 * j);
		h ^= w;
		h *= GBPF_HASH_MUL1;
		h ^= h >> 32;
	}
	h ^= h >> 33;
	h *= GBPF_HASH_MUL2;
	h ^= h >> 33;
	return h;
}

void *gbpf_map_lookup(struct gbpf_map_instance *map, const void *key, uint32_t slot)
{
	struct map_view v;

	if (!key || gbpf_mapi_view_get(map, &v)) {
		errno = EINVAL;
		return NULL;
	}
	/* a GPU thread's values end with the thread: nothing outlives it for the host */
	if (v.h.type == GBPF_MAP_TYPE_GPU_THREAD_LOCAL) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (gbpf_mapi_is_array(v.h.type))
		return gbpf_mapi_array_lookup(&v, key, slot);
	if (gbpf_mapi_is_hash(v.h.type))
		return gbpf_mapi_hash_lookup(&v, key, slot);
	errno = EINVAL;
	return NULL;
}

int gbpf_map_update(struct gbpf_map_instance *map, const void *key, const void *value,
		    uint64_t flags, uint32_t slot)
{
	struct map_view v;

	if (!key || !value || gbpf_mapi_view_get(map, &v))
		return -EINVAL;
	if (flags > GBPF_EXIST)
		return -EINVAL;
	if (v.h.type == GBPF_MAP_TYPE_GPU_THREAD_LOCAL)
		return -EOPNOTSUPP;
	if (gbpf_mapi_is_array(v.h.type))
		return gbpf_mapi_array_update(&v, key, value, flags, slot);
	if (gbpf_mapi_is_hash(v.h.type))
		return gbpf_mapi_hash_update(&v, key, value, flags, slot);
	return -EINVAL;
}

int gbpf_map_delete(struct gbpf_map_instance *map, const void *key)
{
	struct map_view v;

	if (!key || gbpf_mapi_view_get(map, &v))
		return -EINVAL;
	if (gbpf_mapi_is_hash(v.h.type))
		return gbpf_mapi_hash_delete(&v, key);
	return -EINVAL;
}

int gbpf_map_get_next_key(struct gbpf_map_instance *map, const void *key, void *next_key)
{
	struct map_view v;

	if (!next_key || gbpf_mapi_view_get(map, &v))
		return -EINVAL;
	if (v.h.type == GBPF_MAP_TYPE_GPU_THREAD_LOCAL)
		return -ENOENT; /* no element outlives its thread: a walk finds none */
	if (gbpf_mapi_is_array(v.h.type))
		return gbpf_mapi_array_next_key(&v, key, next_key);
	if (gbpf_mapi_is_hash(v.h.type))
		return gbpf_mapi_hash_next_key(&v, key, next_key);
	return -EINVAL;
}
