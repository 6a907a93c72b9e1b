/* SPDX-License-Identifier: MIT */
/*
 * Clang offload bundles: "__CLANG_OFFLOAD_BUNDLE__", u64 entry count, per
 * entry {u64 offset, u64 size, u64 id length, id}, offsets from the bundle
 * start. Compressed bundles ("CCOB") wrap a plain bundle: magic, u16
 * version, u16 method (0 zlib, 1 zstd), then sizes (v1: u32 uncompressed;
 * v2: u32 total, u32 uncompressed; v3: u64 total, u64 uncompressed), a u64
 * hash and the compressed bytes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef GBPF_HIP_HAVE_ZSTD
#include <zstd.h>
#endif
#ifdef GBPF_HIP_HAVE_ZLIB
#include <zlib.h>
#endif

#include "co_rewrite.h"

#define BUNDLE_MAGIC "__CLANG_OFFLOAD_BUNDLE__"
#define BUNDLE_MAGIC_LEN 24
/* Decompressed bundles larger than this are refused (untrusted size field). */
#define CCOB_MAX_SIZE ((uint64_t)1 << 31)

static uint64_t rd64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static uint32_t rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static int decompress(const uint8_t *buf, size_t size, struct co_bundle *b, const uint8_t **plain,
		      size_t *plain_size, char *err, size_t err_size)
{
	uint16_t version, method;
	uint64_t raw;
	size_t hdr;

	if (size < 24) {
		snprintf(err, err_size, "CCOB bundle: header truncated (%zu bytes)", size);
		return -EINVAL;
	}
	memcpy(&version, buf + 4, 2);
	memcpy(&method, buf + 6, 2);
	if (version == 1) {
		raw = rd32(buf + 8);
		hdr = 8 + 4 + 8;
	} else if (version == 2) {
		raw = rd32(buf + 12);
		hdr = 8 + 8 + 8;
	} else if (version == 3 && size >= 32) {
		raw = rd64(buf + 16);
		hdr = 8 + 16 + 8;
	} else {
		snprintf(err, err_size, "CCOB bundle: unknown version %u at offset 4", version);
		return -ENOTSUP;
	}
	if (raw > CCOB_MAX_SIZE || !raw) {
		snprintf(err, err_size, "CCOB bundle: uncompressed size %llu out of range", (unsigned long long)raw);
		return -EINVAL;
	}
	b->owned = malloc(raw);
	if (!b->owned)
		return -ENOMEM;
	if (method == 1) {
#ifdef GBPF_HIP_HAVE_ZSTD
		size_t got = ZSTD_decompress(b->owned, raw, buf + hdr, size - hdr);

		if (ZSTD_isError(got) || got != raw) {
			snprintf(err, err_size, "CCOB bundle: zstd data at offset %zu is corrupt", hdr);
			return -EINVAL;
		}
#else
		snprintf(err, err_size, "CCOB bundle: zstd support not built");
		return -ENOTSUP;
#endif
	} else if (method == 0) {
#ifdef GBPF_HIP_HAVE_ZLIB
		uLongf got = (uLongf)raw;

		if (uncompress(b->owned, &got, buf + hdr, (uLong)(size - hdr)) != Z_OK || got != raw) {
			snprintf(err, err_size, "CCOB bundle: zlib data at offset %zu is corrupt", hdr);
			return -EINVAL;
		}
#else
		snprintf(err, err_size, "CCOB bundle: zlib support not built");
		return -ENOTSUP;
#endif
	} else {
		snprintf(err, err_size, "CCOB bundle: unknown compression method %u at offset 6", method);
		return -ENOTSUP;
	}
	b->compressed = 1;
	*plain = b->owned;
	*plain_size = raw;
	return 0;
}

int co_bundle_parse(const uint8_t *buf, size_t size, struct co_bundle *b, char *err, size_t err_size)
{
	const uint8_t *p = buf;
	uint64_t n, off, sz, idlen;
	size_t pos, i;
	int rc;

	memset(b, 0, sizeof(*b));
	if (size >= 4 && !memcmp(buf, "CCOB", 4)) {
		rc = decompress(buf, size, b, &p, &size, err, err_size);
		if (rc) {
			co_bundle_free(b);
			return rc;
		}
	}
	if (size < BUNDLE_MAGIC_LEN + 8 || memcmp(p, BUNDLE_MAGIC, BUNDLE_MAGIC_LEN)) {
		snprintf(err, err_size, "not a clang offload bundle (no magic at offset 0)");
		co_bundle_free(b);
		return -EINVAL;
	}
	n = rd64(p + BUNDLE_MAGIC_LEN);
	if (n > CO_BUNDLE_MAX_ENTRIES) {
		snprintf(err, err_size, "bundle: %llu entries (at most %d)", (unsigned long long)n,
			 CO_BUNDLE_MAX_ENTRIES);
		co_bundle_free(b);
		return -EINVAL;
	}
	pos = BUNDLE_MAGIC_LEN + 8;
	for (i = 0; i < n; i++) {
		if (size - pos < 24) {
			snprintf(err, err_size, "bundle: entry %zu header truncated at offset %zu", i, pos);
			co_bundle_free(b);
			return -EINVAL;
		}
		off = rd64(p + pos);
		sz = rd64(p + pos + 8);
		idlen = rd64(p + pos + 16);
		pos += 24;
		if (idlen >= sizeof(b->e[i].id) || idlen > size - pos || off > size || sz > size - off) {
			snprintf(err, err_size, "bundle: entry %zu at offset %zu out of range", i, pos - 24);
			co_bundle_free(b);
			return -EINVAL;
		}
		memcpy(b->e[i].id, p + pos, idlen);
		b->e[i].id[idlen] = 0;
		pos += idlen;
		b->e[i].data = p + off;
		b->e[i].size = sz;
	}
	b->n = n;
	return 0;
}

void co_bundle_free(struct co_bundle *b)
{
	free(b->owned);
	b->owned = NULL;
	b->n = 0;
}

int co_bundle_write(const struct co_bundle_entry *e, size_t n, uint8_t **out, size_t *out_size)
{
	size_t hdr = BUNDLE_MAGIC_LEN + 8, i, pos, total;
	uint64_t *offs = calloc(n ? n : 1, sizeof(*offs));
	uint8_t *buf;

	if (!offs)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		hdr += 24 + strlen(e[i].id);
	/* clang aligns every payload to 4096; an empty one (host) sits at the
	 * next aligned offset and takes no room */
	pos = hdr;
	for (i = 0; i < n; i++) {
		pos = (pos + 4095) & ~(size_t)4095;
		offs[i] = pos;
		pos += e[i].size;
	}
	total = pos;
	buf = calloc(1, total ? total : 1);
	if (!buf) {
		free(offs);
		return -ENOMEM;
	}
	memcpy(buf, BUNDLE_MAGIC, BUNDLE_MAGIC_LEN);
	memcpy(buf + BUNDLE_MAGIC_LEN, &(uint64_t){n}, 8);
	pos = BUNDLE_MAGIC_LEN + 8;
	for (i = 0; i < n; i++) {
		uint64_t sz = e[i].size, idl = strlen(e[i].id);

		memcpy(buf + pos, &offs[i], 8);
		memcpy(buf + pos + 8, &sz, 8);
		memcpy(buf + pos + 16, &idl, 8);
		memcpy(buf + pos + 24, e[i].id, idl);
		pos += 24 + idl;
		if (e[i].size)
			memcpy(buf + offs[i], e[i].data, e[i].size);
	}
	free(offs);
	*out = buf;
	*out_size = total;
	return 0;
}
