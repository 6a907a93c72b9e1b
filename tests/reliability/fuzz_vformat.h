/* SPDX-License-Identifier: MIT */
/*
 * tests/reliability/fuzz_vformat.h - input format of the verifier fuzz
 * target (fuzz_verifier.c), shared with its seed maker (fuzz_seeds.c).
 *
 *   byte 0   attach kind: index into fv_kinds (mod)
 *   byte 1   verifier flags (GBPF_VERIFY_F_*, masked)
 *   byte 2   map count (mod FV_MAX_MAPS + 1)
 *   byte 3   memory size of GBPF_ATTACH_NONE programs: byte * 4
 *   then per map 8 bytes: type index into fv_map_types (mod), key size
 *            (byte), value size (u16 LE), max entries (u16 LE), flags
 *            (byte: bit 0 = GBPF_F_RDONLY_PROG), 1 unused byte
 *   then instructions, 8 bytes each (at most FV_MAX_INSNS)
 *
 * Every byte string decodes to something: the fuzzer never wastes inputs on
 * a parse error, and every map description reaches the verifier, including
 * ones gbpf_map_desc_check() would refuse.
 */
#ifndef GBPF_TESTS_RELIABILITY_FUZZ_VFORMAT_H
#define GBPF_TESTS_RELIABILITY_FUZZ_VFORMAT_H

#include <stdint.h>
#include <string.h>

#include <gbpf/prog.h>
#include <gbpf/verifier.h>

#define FV_MAX_MAPS 4
#define FV_MAX_INSNS 4096
#define FV_HDR 4
#define FV_MAP_BYTES 8

static const uint32_t fv_kinds[] = {GBPF_ATTACH_NONE, GBPF_ATTACH_GPU_ENTRY, GBPF_ATTACH_GPU_EXIT,
				    GBPF_ATTACH_GPU_MEM, GBPF_ATTACH_HOST_LAUNCH,
				    GBPF_ATTACH_HOST_MEMCPY};
static const uint32_t fv_map_types[] = {
	GBPF_MAP_TYPE_ARRAY, GBPF_MAP_TYPE_HASH, GBPF_MAP_TYPE_PERCPU_ARRAY,
	GBPF_MAP_TYPE_LRU_HASH, GBPF_MAP_TYPE_RINGBUF, GBPF_MAP_TYPE_PERCPU_HASH,
	GBPF_MAP_TYPE_PERF_EVENT_ARRAY, GBPF_MAP_TYPE_GPU_ARRAY,
};
#define FV_N(a) (sizeof(a) / sizeof((a)[0]))

struct fv_input {
	uint32_t kind;
	uint32_t flags;
	uint64_t mem_size;
	struct gbpf_map_desc maps[FV_MAX_MAPS];
	size_t map_cnt;
	const uint8_t *insns; /* into the input bytes (may be unaligned: copy before use) */
	size_t insn_cnt;
};

/* Decode; returns 0, or -1 when the input is shorter than its header. */
static inline int fv_decode(const uint8_t *d, size_t n, struct fv_input *in)
{
	memset(in, 0, sizeof(*in));
	if (n < FV_HDR)
		return -1;
	in->kind = fv_kinds[d[0] % FV_N(fv_kinds)];
	in->flags = d[1] & (GBPF_VERIFY_F_ALLOW_MEM_WRITE | GBPF_VERIFY_F_NULLABLE_MEM);
	in->map_cnt = d[2] % (FV_MAX_MAPS + 1);
	in->mem_size = (uint64_t)d[3] * 4;
	d += FV_HDR;
	n -= FV_HDR;
	if (n < in->map_cnt * FV_MAP_BYTES)
		in->map_cnt = n / FV_MAP_BYTES;
	for (size_t i = 0; i < in->map_cnt; i++, d += FV_MAP_BYTES, n -= FV_MAP_BYTES) {
		struct gbpf_map_desc *m = &in->maps[i];

		m->sz = sizeof(*m);
		m->name = "fuzz";
		m->type = fv_map_types[d[0] % FV_N(fv_map_types)];
		m->key_size = d[1];
		m->value_size = (uint32_t)d[2] | (uint32_t)d[3] << 8;
		m->max_entries = (uint32_t)d[4] | (uint32_t)d[5] << 8;
		m->map_flags = d[6] & 1 ? GBPF_F_RDONLY_PROG : 0;
	}
	in->insns = d;
	in->insn_cnt = n / 8 > FV_MAX_INSNS ? FV_MAX_INSNS : n / 8;
	return 0;
}

#endif
