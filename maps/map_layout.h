/* SPDX-License-Identifier: MIT */
/*
 * maps/map_layout.h - the memory layout of every gbpf map: THE contract
 * between the host map operations (maps/map_*.c) and the device code that every
 * code generator (PTX, SPIR-V, AMDGCN) emits for map helpers.
 *
 * docs/MAPS.md explains each layout and algorithm in prose; this header is
 * the normative byte layout. Rules that hold for every map:
 *  - one contiguous block, little endian, starting with struct gbpf_map_hdr
 *    (128 bytes); all offsets inside are relative to the block's start, so
 *    the block may be mapped at different addresses in several processes
 *    and on a device;
 *  - every part starts 8-byte aligned; values are stored with a stride of
 *    value_size rounded up to 8 (GBPF_MAP_ROUND8);
 *  - the block is initialised to zero before the header is written: zero is
 *    the "empty" state of every hash bucket and ring buffer record header;
 *  - fields marked "atomic" are only accessed with 32/64-bit atomics
 *    (load/store with the stated order, CAS, fetch-add); everything else in
 *    the header is written once by gbpf_map_mem_init and read-only after.
 *
 * Memory orders use C11 names; device equivalents are listed in MAPS.md
 * (e.g. PTX: acquire = ld.acquire.gpu/.sys, release = st.release or
 * fence.acq_rel + st.relaxed; system scope when the consumer is the host).
 */
#ifndef GBPF_MAPS_MAP_LAYOUT_H
#define GBPF_MAPS_MAP_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** "GBPM" read as a little-endian u32. */
#define GBPF_MAP_MAGIC 0x4d504247u
/** Layout version; bumped on any incompatible change of this file. */
#define GBPF_MAP_LAYOUT_VERSION 4u
/** Bytes of struct gbpf_map_hdr; every data part starts at or after it. */
#define GBPF_MAP_HDR_SIZE 128u

/** Round up to a multiple of 8 (value / key strides, record sizes). */
#define GBPF_MAP_ROUND8(x) (((x) + 7u) & ~(uint64_t)7u)

/**
 * Alignment of each slot's plane of values in PERCPU_ARRAY and PERCPU_HASH:
 * the copies of one value for two SMs (or CPUs) never share a cache line
 * (128 bytes on NVIDIA and AMD GPUs, 64 on x86). Copies 8 or 32 bytes apart
 * in one line cost per-SM counters 5x / 1.6x on the H200 (docs/MAPS.md).
 */
#define GBPF_MAP_PLANE_ALIGN 128u

/** Bytes between two slots' planes of @p count values @p value_stride bytes apart. */
static inline uint64_t gbpf_map_plane_size(uint64_t count, uint64_t value_stride)
{
	return (count * value_stride + GBPF_MAP_PLANE_ALIGN - 1) & ~(uint64_t)(GBPF_MAP_PLANE_ALIGN - 1);
}

/* Limits every implementation enforces (the header of hostile memory is
 * rejected beyond them, so no size computed from it can overflow). */
#define GBPF_MAP_MAX_KEY_SIZE 512u           /**< bytes of a hash key */
#define GBPF_MAP_MAX_VALUE_SIZE (1u << 20)   /**< bytes of one value */
#define GBPF_MAP_MAX_ENTRIES (1u << 28)      /**< entries of an array or hash */
#define GBPF_MAP_MAX_SLOTS (1u << 24)        /**< per-CPU/SM copies or GPU threads */
#define GBPF_MAP_MAX_MEM_SIZE (1ull << 36)   /**< bytes of one map block */

/**
 * Common header at offset 0 of every map block (128 bytes).
 */
struct gbpf_map_hdr {
	uint32_t magic;        /**< 0: GBPF_MAP_MAGIC */
	uint32_t version;      /**< 4: GBPF_MAP_LAYOUT_VERSION */
	uint32_t type;         /**< 8: enum gbpf_map_type */
	uint32_t flags;        /**< 12: map_flags of the description (GBPF_F_*) */
	uint32_t key_size;     /**< 16: bytes of a key (4 for arrays, 0 for rings) */
	uint32_t value_size;   /**< 20: bytes of a value (0 for rings) */
	uint32_t max_entries;  /**< 24: entries; ring buffer: total data bytes */
	/**
	 * 28: copies of each value / rings:
	 *  - PERCPU_ARRAY, PERCPU_HASH: one per host CPU, or one per SM on a GPU;
	 *  - PERGPUTHREAD_ARRAY: threads of the launch (grid size), never fixed;
	 *  - RINGBUF, GPU_RINGBUF: number of sub-rings (power of two);
	 *  - PERF_EVENT_ARRAY: rings, one per CPU or SM (max_entries of the
	 *    description, or the caller's CPU / SM count when that is 0;
	 *    the header stores max_entries == nr_slots);
	 *  - every other type: 1.
	 */
	uint32_t nr_slots;
	uint32_t value_stride; /**< 32: GBPF_MAP_ROUND8(value_size) */
	uint32_t key_stride;   /**< 36: GBPF_MAP_ROUND8(key_size) */
	uint32_t nr_buckets;   /**< 40: hash: buckets, a power of two >= 2 * max_entries; else 0 */
	uint32_t bucket_size;  /**< 44: hash: bytes of one bucket (see gbpf_hash_bucket); else 0 */
	uint64_t total_size;   /**< 48: bytes of the whole block */
	uint64_t data_off;     /**< 56: arrays: first value; hash: bucket 0; rings: ring controls */
	uint64_t data_size;    /**< 64: bytes from data_off to the end of that part */
	uint64_t aux_off;      /**< 72: rings: data of sub-ring 0; hashes: values of slot 0; else 0 */
	uint64_t sub_size;     /**< 80: rings: data bytes of each sub-ring (power of two); else 0 */
	uint64_t count;        /**< 88: atomic: hash: live + being-inserted entries (<= max_entries) */
	uint64_t drops;        /**< 96: atomic: rings: records dropped (full); hash: E2BIG failures */
	uint64_t clock;        /**< 104: atomic: hash: LRU clock, +1 per insert/update */
	uint32_t hdr_size;     /**< 112: GBPF_MAP_HDR_SIZE */
	/**
	 * 116: rings: 1 in a device copy whose only consumer is on the same
	 * GPU (the cuda forwarder): producers order records at GPU scope;
	 * 0 in every host block (the consumer is a CPU: system scope).
	 */
	uint32_t ring_gpu_consumer;
	uint64_t reserved1;    /**< 120: zero */
};

_Static_assert(sizeof(struct gbpf_map_hdr) == GBPF_MAP_HDR_SIZE, "map header is 128 bytes");
_Static_assert(offsetof(struct gbpf_map_hdr, type) == 8, "hdr.type");
_Static_assert(offsetof(struct gbpf_map_hdr, key_size) == 16, "hdr.key_size");
_Static_assert(offsetof(struct gbpf_map_hdr, nr_slots) == 28, "hdr.nr_slots");
_Static_assert(offsetof(struct gbpf_map_hdr, nr_buckets) == 40, "hdr.nr_buckets");
_Static_assert(offsetof(struct gbpf_map_hdr, total_size) == 48, "hdr.total_size");
_Static_assert(offsetof(struct gbpf_map_hdr, data_off) == 56, "hdr.data_off");
_Static_assert(offsetof(struct gbpf_map_hdr, aux_off) == 72, "hdr.aux_off");
_Static_assert(offsetof(struct gbpf_map_hdr, sub_size) == 80, "hdr.sub_size");
_Static_assert(offsetof(struct gbpf_map_hdr, count) == 88, "hdr.count");
_Static_assert(offsetof(struct gbpf_map_hdr, drops) == 96, "hdr.drops");
_Static_assert(offsetof(struct gbpf_map_hdr, clock) == 104, "hdr.clock");
_Static_assert(offsetof(struct gbpf_map_hdr, hdr_size) == 112, "hdr.hdr_size");

/*
 * ARRAY (2), GPU_ARRAY (1503): data_off = 128, value i at
 *   data_off + i * value_stride                       (i < max_entries)
 * PERCPU_ARRAY (6): slot-major, so that one CPU's / SM's copies are contiguous,
 * each slot's plane padded to GBPF_MAP_PLANE_ALIGN:
 *   data_off + slot * gbpf_map_plane_size(max_entries, value_stride)
 *            + i * value_stride                       (slot < nr_slots)
 * PERGPUTHREAD_ARRAY (1502): index-major, so that the threads of a warp
 * touching the same index hit consecutive addresses (coalesced):
 *   data_off + (i * nr_slots + thread) * value_stride  (thread < nr_slots)
 * where thread is the linear id of the calling GPU thread in the grid.
 */

/** Offset in the block of array element @p i of @p slot (the CPU / SM or the GPU thread; bounds unchecked). */
static inline uint64_t gbpf_array_value_off(const struct gbpf_map_hdr *h, uint64_t i, uint64_t slot)
{
	if (h->type == 6u /* GBPF_MAP_TYPE_PERCPU_ARRAY */)
		return h->data_off + slot * gbpf_map_plane_size(h->max_entries, h->value_stride) +
		       i * h->value_stride;
	if (h->type == 1502u /* GBPF_MAP_TYPE_PERGPUTHREAD_ARRAY */)
		return h->data_off + (i * h->nr_slots + slot) * h->value_stride;
	return h->data_off + i * h->value_stride;
}

/*
 * HASH (1), PERCPU_HASH (5), LRU_HASH (9), GPU_HASH (1501): nr_buckets
 * buckets of bucket_size bytes (a multiple of 16) at data_off:
 *   bucket b at data_off + b * bucket_size
 *   struct gbpf_hash_bucket (16 bytes), then the key (key_stride bytes);
 *   LRU_HASH keeps the bucket's last use in its last 8 bytes
 *   (gbpf_hash_last_use_off).
 * Values are kept out of the buckets, in planes of nr_buckets values at
 * aux_off (128-byte aligned): the value of bucket b for slot s at
 *   aux_off + s * gbpf_map_plane_size(nr_buckets, value_stride)
 *           + b * value_stride
 * with one plane (s = 0) except PERCPU_HASH, whose nr_slots planes (one per
 * CPU or SM, slot-major like PERCPU_ARRAY) keep the SMs of a GPU counting
 * into one key on different cache lines (copies side by side cost 5x on
 * the H200, MAPS.md). With the values apart, the buckets a lookup reads are
 * never in a sector that the counts' atomics write: a hash written by hand
 * in CUDA with its keys and values apart took 0.57x the time of one with
 * each key beside its value (H200, every thread counting into 4096 keys).
 */
struct gbpf_hash_bucket {
	/**
	 * 0: atomic state word: (generation << 2) | GBPF_BUCKET_*. The
	 * generation is incremented (mod 2^30) by every claim, so a reader
	 * that sees the same word before and after reading key and value read
	 * a consistent entry (seqlock-style validation).
	 */
	uint32_t state;
	/** 4: atomic home lock: 0 free, 1 held; serialises writers of the keys whose home this is. */
	uint32_t lock;
	/** 8: gbpf_map_hash() of the key, valid while READY (compared before the key bytes). */
	uint64_t hash;
	/* 16: key bytes (key_stride) */
};
#define GBPF_HASH_BUCKET_HDR 16u
_Static_assert(sizeof(struct gbpf_hash_bucket) == GBPF_HASH_BUCKET_HDR, "bucket header");
_Static_assert(offsetof(struct gbpf_hash_bucket, lock) == 4, "bucket.lock");
_Static_assert(offsetof(struct gbpf_hash_bucket, hash) == 8, "bucket.hash");

/**
 * LRU_HASH: offset in a bucket of its atomic (relaxed) last-use word,
 * hdr.clock at the last lookup or update: the bucket's last 8 bytes.
 */
static inline uint64_t gbpf_hash_last_use_off(uint64_t bucket_size)
{
	return bucket_size - 8u;
}

/**
 * A hash map's geometry, which depends on its type and sizes only (not on
 * nr_slots): the layout (maps/map_common.c) and the CUDA code generator,
 * which builds these numbers into its inline lookups as constants instead
 * of loading them from the header at every lookup, both take it from here.
 */
struct gbpf_hash_geometry {
	uint64_t nr_buckets;  /**< a power of two >= 2 * max_entries (and >= 2) */
	uint64_t bucket_size; /**< header, key and (LRU_HASH) last use, a multiple of 16 */
	uint64_t data_off;    /**< bucket 0 */
	uint64_t aux_off;     /**< the value planes (128-byte aligned) */
	uint64_t plane_size;  /**< bytes of a plane: from one slot's plane to the next (PERCPU_HASH) */
};

static inline void gbpf_hash_geometry_of(uint32_t type, uint32_t key_size, uint32_t value_size,
					 uint32_t max_entries, struct gbpf_hash_geometry *g)
{
	uint64_t last_use = type == 9u /* LRU_HASH */ ? 8u : 0u;

	g->nr_buckets = 2;
	while (g->nr_buckets < 2ull * max_entries)
		g->nr_buckets <<= 1;
	/* 16-byte aligned buckets: a bucket's state, lock and hash words then share one
	 * 32-byte sector, which the CUDA lookup reads with one load through L1
	 * (plugins/cuda/ptx_maps.c, emit_hash_weak_probe). */
	g->bucket_size = (GBPF_HASH_BUCKET_HDR + GBPF_MAP_ROUND8(key_size) + last_use + 15) & ~(uint64_t)15;
	g->data_off = GBPF_MAP_HDR_SIZE;
	g->aux_off = (g->data_off + g->nr_buckets * g->bucket_size + GBPF_MAP_PLANE_ALIGN - 1) &
		     ~(uint64_t)(GBPF_MAP_PLANE_ALIGN - 1);
	g->plane_size = gbpf_map_plane_size(g->nr_buckets, GBPF_MAP_ROUND8(value_size));
}

/** Offset in the block of bucket @p b's value for slot @p slot (the slot matters for PERCPU_HASH only). */
static inline uint64_t gbpf_hash_value_off(const struct gbpf_map_hdr *h, uint64_t b, uint64_t slot)
{
	if (h->type != 5u /* GBPF_MAP_TYPE_PERCPU_HASH */)
		slot = 0;
	return h->aux_off + slot * gbpf_map_plane_size(h->nr_buckets, h->value_stride) + b * h->value_stride;
}

/** Bucket states (low 2 bits of gbpf_hash_bucket.state). */
#define GBPF_BUCKET_EMPTY 0u     /**< never used: ends every probe run */
#define GBPF_BUCKET_BUSY 1u      /**< claimed by an inserter; key and value being written */
#define GBPF_BUCKET_READY 2u     /**< holds a live entry */
#define GBPF_BUCKET_TOMBSTONE 3u /**< deleted: reusable, but probe runs continue past it */
#define GBPF_BUCKET_STATE(w) ((w)&3u)
#define GBPF_BUCKET_GEN(w) ((w) >> 2)
#define GBPF_BUCKET_WORD(gen, st) ((uint32_t)(((gen) << 2) | (st)))

/** Buckets LRU eviction examines, starting at the home bucket of the new key. */
#define GBPF_LRU_WINDOW 64u
/** Attempts to take a home lock before giving up with -EBUSY (device code: same bound). */
#define GBPF_HASH_LOCK_SPINS (1u << 22)

/*
 * Hash function (gbpf_map_hash in maps/map.h), over the key bytes k[0..n):
 *   h = 0x9e3779b97f4a7c15 ^ n
 *   for each 8-byte little-endian word w of k (the last one zero-padded):
 *       h ^= w; h *= 0xff51afd7ed558ccd; h ^= h >> 32
 *   h ^= h >> 33; h *= 0xc4ceb9fe1a85ec53; h ^= h >> 33
 * home bucket = h & (nr_buckets - 1). All arithmetic is mod 2^64.
 */
#define GBPF_HASH_INIT 0x9e3779b97f4a7c15ull
#define GBPF_HASH_MUL1 0xff51afd7ed558ccdull
#define GBPF_HASH_MUL2 0xc4ceb9fe1a85ec53ull

/*
 * RINGBUF (27), GPU_RINGBUF (1527), PERF_EVENT_ARRAY (4):
 *   data_off: nr_slots struct gbpf_ring_ctl (128 bytes each)
 *   aux_off:  nr_slots data areas of sub_size bytes (power of two);
 *             sub-ring s's data at aux_off + s * sub_size.
 * Positions are byte counts that only grow; a position p lies at
 * (p & (sub_size - 1)) in the data area. A record is an 8-byte header
 * (struct gbpf_ring_rec) and its data, GBPF_MAP_ROUND8(8 + len) bytes, and
 * never wraps: a producer that would cross the end reserves a DISCARD
 * padding record up to the end in the same CAS.
 */
struct gbpf_ring_ctl {
	/** 0: atomic: end of the reserved space; producers advance it with CAS. */
	uint64_t producer_pos;
	uint64_t pad0[7];
	/** 64: atomic: start of the unconsumed space; consumer stores it with release. */
	uint64_t consumer_pos;
	/** 72: atomic: records dropped by this sub-ring (also added to hdr.drops). */
	uint64_t drops;
	uint64_t pad1[6];
};
_Static_assert(sizeof(struct gbpf_ring_ctl) == 128, "ring control is 128 bytes");
_Static_assert(offsetof(struct gbpf_ring_ctl, consumer_pos) == 64, "ctl.consumer_pos");
_Static_assert(offsetof(struct gbpf_ring_ctl, drops) == 72, "ctl.drops");

/** Record header; the word is 0 until its producer writes it. */
struct gbpf_ring_rec {
	/** 0: atomic: data length | GBPF_RING_BUSY | GBPF_RING_DISCARD. */
	uint32_t len;
	/** 4: sub-ring index of the record (lets submit find its ring). */
	uint32_t sub;
};
_Static_assert(sizeof(struct gbpf_ring_rec) == 8, "record header is 8 bytes");

#define GBPF_RING_BUSY (1u << 31)     /**< reserved, not yet submitted or discarded */
#define GBPF_RING_DISCARD (1u << 30)  /**< consumer skips the record */
#define GBPF_RING_LEN_MASK ((1u << 28) - 1)
/**
 * Set by GPU producers in a record of a ring held in device memory (a ring copy only the GPU and
 * its forwarder read): the record's commit publishes it at GPU scope, not system scope. Outside
 * GBPF_RING_LEN_MASK, so consumers ignore it; the forwarder does not carry it to the host ring.
 */
#define GBPF_RING_GPU_SCOPE (1u << 28)
/** Smallest data size of a ring buffer map (max_entries) and of a sub-ring. */
#define GBPF_RING_MIN_SIZE 64u
/** Largest data size of a ring buffer map (max_entries). */
#define GBPF_RING_MAX_SIZE (1u << 30)
/** Smallest sub-ring the layout creates when asked for several (bytes). */
#define GBPF_RING_MIN_SUBRING 4096u
/** Data bytes of each ring of a perf event array. */
#define GBPF_PERF_RING_SIZE (64u * 1024u)
/** Flag of perf_event_output: write to the caller's own CPU / SM ring. */
#define GBPF_F_CURRENT_CPU 0xffffffffull

#ifdef __cplusplus
}
#endif

#endif /* GBPF_MAPS_MAP_LAYOUT_H */
