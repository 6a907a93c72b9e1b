/* SPDX-License-Identifier: MIT */
/*
 * Fatbinary containers and entries: parsing and decompression.
 */
#include "plugins/cuda/fatbin/fatbin.h"
#include "plugins/cuda/fatbin/fatbin_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zstd.h>
#ifdef GBPF_HAVE_LZ4
#include <lz4.h>
#endif

#include <gbpf/gbpf.h>

#define CONTAINER_HDR_SIZE 16u
#define ENTRY_MIN_HDR_SIZE 64u
/* No real container holds more; the cap bounds the entry array on hostile input. */
#define MAX_ENTRIES_PER_BUFFER 65536u

void gbpf_fb_log(char *log, size_t log_size, const char *fmt, ...)
{
	va_list ap;

	if (!log || !log_size)
		return;
	va_start(ap, fmt);
	vsnprintf(log, log_size, fmt, ap);
	va_end(ap);
}

uint16_t gbpf_fb_rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] | (p[1] << 8));
}

uint32_t gbpf_fb_rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
	       ((uint32_t)p[3] << 24);
}

uint64_t gbpf_fb_rd64(const uint8_t *p)
{
	return (uint64_t)gbpf_fb_rd32(p) | ((uint64_t)gbpf_fb_rd32(p + 4) << 32);
}

static bool looks_like_ptx(const uint8_t *p, size_t len)
{
	size_t i = 0;

	/* PTX text starts with comments and blank lines, then a directive. */
	while (i < len) {
		if (p[i] == ' ' || p[i] == '\t' || p[i] == '\r' || p[i] == '\n') {
			i++;
		} else if (p[i] == '/' && i + 1 < len && p[i + 1] == '/') {
			while (i < len && p[i] != '\n')
				i++;
		} else if (p[i] == '/' && i + 1 < len && p[i + 1] == '*') {
			i += 2;
			while (i + 1 < len && !(p[i] == '*' && p[i + 1] == '/'))
				i++;
			i += 2;
		} else {
			break;
		}
	}
	if (i >= len)
		return false;
	return (len - i >= 8 && !memcmp(p + i, ".version", 8)) ||
	       (len - i >= 7 && !memcmp(p + i, ".target", 7));
}

enum gbpf_cuda_image_kind gbpf_cuda_image_kind(const void *buf, size_t len)
{
	const uint8_t *p = buf;

	if (!buf || len < 4)
		return GBPF_CUDA_IMAGE_UNKNOWN;
	if (gbpf_fb_rd32(p) == GBPF_FATBIN_WRAPPER_MAGIC)
		return GBPF_CUDA_IMAGE_WRAPPER;
	if (gbpf_fb_rd32(p) == GBPF_FATBIN_MAGIC)
		return GBPF_CUDA_IMAGE_FATBIN;
	if (!memcmp(p, "\177ELF", 4))
		return GBPF_CUDA_IMAGE_ELF;
	if (looks_like_ptx(p, len))
		return GBPF_CUDA_IMAGE_PTX;
	return GBPF_CUDA_IMAGE_UNKNOWN;
}

uint64_t gbpf_fatbin_container_size(const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint16_t hs;
	uint64_t size;

	if (!buf || len < CONTAINER_HDR_SIZE || gbpf_fb_rd32(p) != GBPF_FATBIN_MAGIC)
		return 0;
	hs = gbpf_fb_rd16(p + 6);
	size = gbpf_fb_rd64(p + 8);
	if (hs < CONTAINER_HDR_SIZE || size > UINT64_MAX - hs)
		return 0;
	return hs + size;
}

static int push_entry(struct gbpf_fatbin *fb, size_t *cap, const struct gbpf_fatbin_entry *e)
{
	if (fb->n_entries == *cap) {
		size_t ncap = *cap ? *cap * 2 : 8;
		struct gbpf_fatbin_entry *n = realloc(fb->entries, ncap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		fb->entries = n;
		*cap = ncap;
	}
	fb->entries[fb->n_entries++] = *e;
	return 0;
}

/* Parse one entry header at buf[off]; the entry must end before @end. */
static int parse_entry(const uint8_t *buf, size_t off, size_t end, struct gbpf_fatbin_entry *e,
		       size_t *next, char *log, size_t log_size)
{
	const uint8_t *h = buf + off;
	uint32_t hs, comp, opt_off, name_off, name_len;
	uint64_t psize;

	if (end - off < ENTRY_MIN_HDR_SIZE) {
		gbpf_fb_log(log, log_size,
			    "fatbin: entry header at offset %zu truncated (%zu bytes left, need %u)",
			    off, end - off, ENTRY_MIN_HDR_SIZE);
		return -GBPF_ERRNO__FORMAT;
	}
	memset(e, 0, sizeof(*e));
	e->kind = gbpf_fb_rd16(h);
	hs = gbpf_fb_rd32(h + 4);
	psize = gbpf_fb_rd64(h + 8);
	comp = gbpf_fb_rd32(h + 0x10);
	opt_off = gbpf_fb_rd32(h + 0x14);
	e->ver_minor = gbpf_fb_rd16(h + 0x18);
	e->ver_major = gbpf_fb_rd16(h + 0x1a);
	e->arch = gbpf_fb_rd32(h + 0x1c);
	name_off = gbpf_fb_rd32(h + 0x20);
	name_len = gbpf_fb_rd32(h + 0x24);
	e->flags = gbpf_fb_rd64(h + 0x28);
	e->uncompressed_size = gbpf_fb_rd64(h + 0x38);
	e->offset = off;

	if (e->kind != GBPF_FATBIN_KIND_PTX && e->kind != GBPF_FATBIN_KIND_ELF) {
		gbpf_fb_log(log, log_size, "fatbin: entry at offset %zu has unknown kind %u", off,
			    e->kind);
		return -GBPF_ERRNO__FORMAT;
	}
	if (hs < ENTRY_MIN_HDR_SIZE || hs > end - off) {
		gbpf_fb_log(log, log_size,
			    "fatbin: entry at offset %zu: header size %u outside [%u, %zu]", off, hs,
			    ENTRY_MIN_HDR_SIZE, end - off);
		return -GBPF_ERRNO__FORMAT;
	}
	if (psize > end - off - hs) {
		gbpf_fb_log(log, log_size,
			    "fatbin: entry at offset %zu: payload size %llu exceeds the %zu bytes left "
			    "in the container",
			    off, (unsigned long long)psize, end - off - hs);
		return -GBPF_ERRNO__FORMAT;
	}
	e->payload = h + hs;
	e->payload_size = psize;
	if (e->flags & GBPF_FATBIN_FLAG_ZSTD)
		e->compression = GBPF_FATBIN_COMP_ZSTD;
	else if (e->flags & GBPF_FATBIN_FLAG_LZ4)
		e->compression = GBPF_FATBIN_COMP_LZ4;
	if (e->compression != GBPF_FATBIN_COMP_NONE) {
		/* Stored payload is padded to 8 bytes; the compressed stream is shorter. */
		if (comp == 0 || comp > psize) {
			gbpf_fb_log(log, log_size,
				    "fatbin: entry at offset %zu: compressed size %u outside (0, %llu]",
				    off, comp, (unsigned long long)psize);
			return -GBPF_ERRNO__FORMAT;
		}
		e->payload_size = comp;
	}
	/* Options and name live inside the header; bad ones are ignored, not fatal. */
	if (opt_off && opt_off <= hs - 8) {
		uint32_t so = gbpf_fb_rd32(h + opt_off), sl = gbpf_fb_rd32(h + opt_off + 4);

		if (so < hs && sl <= hs - so && sl) {
			e->ptxas_options = (const char *)h + so;
			e->ptxas_options_len = sl;
		}
	}
	if (name_off && name_off < hs && name_len && name_len <= hs - name_off) {
		e->name = (const char *)h + name_off;
		e->name_len = name_len;
	}
	*next = off + hs + (size_t)psize;
	return 0;
}

int gbpf_fatbin__parse(const void *buf, size_t len, struct gbpf_fatbin *fb, char *log,
		       size_t log_size)
{
	const uint8_t *p = buf;
	size_t off = 0, cap = 0;
	int err = 0;

	if (!fb || (!buf && len))
		return -EINVAL;
	memset(fb, 0, sizeof(*fb));
	while (off < len) {
		uint64_t csize;
		size_t cend, eoff;
		unsigned idx = 0;

		/* Containers are 8-aligned; zero padding may separate them. */
		if (len - off < CONTAINER_HDR_SIZE) {
			for (size_t i = off; i < len; i++) {
				if (p[i]) {
					gbpf_fb_log(log, log_size,
						    "fatbin: %zu trailing bytes at offset %zu are not a "
						    "container",
						    len - off, off);
					err = -GBPF_ERRNO__FORMAT;
					goto out;
				}
			}
			break;
		}
		if (gbpf_fb_rd32(p + off) == 0 && gbpf_fb_rd32(p + off + 4) == 0 && fb->n_containers) {
			off += 8;
			continue;
		}
		if (gbpf_fb_rd32(p + off) != GBPF_FATBIN_MAGIC) {
			gbpf_fb_log(log, log_size,
				    "fatbin: bad magic 0x%08x at offset %zu (container %u), expected "
				    "0x%08x",
				    gbpf_fb_rd32(p + off), off, fb->n_containers, GBPF_FATBIN_MAGIC);
			err = -GBPF_ERRNO__FORMAT;
			goto out;
		}
		csize = gbpf_fatbin_container_size(p + off, len - off);
		if (!csize || csize > len - off) {
			gbpf_fb_log(log, log_size,
				    "fatbin: container %u at offset %zu claims %llu bytes, %zu left",
				    fb->n_containers, off, (unsigned long long)csize, len - off);
			err = -GBPF_ERRNO__FORMAT;
			goto out;
		}
		cend = off + (size_t)csize;
		eoff = off + gbpf_fb_rd16(p + off + 6);
		while (eoff < cend) {
			struct gbpf_fatbin_entry e;
			size_t next;

			err = parse_entry(p, eoff, cend, &e, &next, log, log_size);
			if (err)
				goto out;
			if (fb->n_entries >= MAX_ENTRIES_PER_BUFFER) {
				gbpf_fb_log(log, log_size, "fatbin: more than %u entries at offset %zu",
					    MAX_ENTRIES_PER_BUFFER, eoff);
				err = -GBPF_ERRNO__FORMAT;
				goto out;
			}
			e.container_offset = off;
			e.container_index = fb->n_containers;
			e.index = idx++;
			err = push_entry(fb, &cap, &e);
			if (err)
				goto out;
			eoff = next;
		}
		fb->n_containers++;
		off = cend;
		if (off % 8)
			off += 8 - off % 8;
	}
out:
	if (err)
		gbpf_fatbin__free(fb);
	return err;
}

void gbpf_fatbin__free(struct gbpf_fatbin *fb)
{
	if (!fb)
		return;
	free(fb->entries);
	memset(fb, 0, sizeof(*fb));
}

bool gbpf_fatbin_can_decompress(enum gbpf_fatbin_compression c)
{
	switch (c) {
	case GBPF_FATBIN_COMP_NONE:
	case GBPF_FATBIN_COMP_ZSTD:
		return true;
	case GBPF_FATBIN_COMP_LZ4:
#ifdef GBPF_HAVE_LZ4
		return true;
#else
		return false;
#endif
	}
	return false;
}

int gbpf_fatbin_entry__data(const struct gbpf_fatbin_entry *e, uint64_t max_size, uint8_t **out,
			    size_t *out_len, char *log, size_t log_size)
{
	uint64_t want;
	uint8_t *dst;
	size_t n;

	if (!e || !out || !out_len)
		return -EINVAL;
	*out = NULL;
	*out_len = 0;
	if (!max_size)
		max_size = GBPF_FATBIN_DEFAULT_MAX_DECOMPRESSED;
	want = e->compression == GBPF_FATBIN_COMP_NONE ? e->payload_size : e->uncompressed_size;
	if (want > max_size || want >= SIZE_MAX) {
		gbpf_fb_log(log, log_size,
			    "fatbin: entry %u at offset %zu: %llu bytes exceed the limit of %llu",
			    e->index, e->offset, (unsigned long long)want,
			    (unsigned long long)max_size);
		return -E2BIG;
	}
	if (!gbpf_fatbin_can_decompress(e->compression)) {
		gbpf_fb_log(log, log_size,
			    "fatbin: entry %u at offset %zu is LZ4-compressed and this build has no "
			    "liblz4",
			    e->index, e->offset);
		return -EOPNOTSUPP;
	}
	dst = malloc((size_t)want + 1);
	if (!dst)
		return -ENOMEM;
	switch (e->compression) {
	case GBPF_FATBIN_COMP_NONE:
		memcpy(dst, e->payload, (size_t)want);
		n = (size_t)want;
		break;
	case GBPF_FATBIN_COMP_ZSTD: {
		size_t r = ZSTD_decompress(dst, (size_t)want, e->payload, (size_t)e->payload_size);

		if (ZSTD_isError(r) || r != want) {
			gbpf_fb_log(log, log_size,
				    "fatbin: entry %u at offset %zu: zstd data does not decompress to "
				    "%llu bytes (%s)",
				    e->index, e->offset, (unsigned long long)want,
				    ZSTD_isError(r) ? ZSTD_getErrorName(r) : "size mismatch");
			free(dst);
			return -GBPF_ERRNO__FORMAT;
		}
		n = r;
		break;
	}
	case GBPF_FATBIN_COMP_LZ4:
	default: {
#ifdef GBPF_HAVE_LZ4
		int r = -1;

		if (want <= INT32_MAX && e->payload_size <= INT32_MAX)
			r = LZ4_decompress_safe((const char *)e->payload, (char *)dst,
						(int)e->payload_size, (int)want);
		if (r < 0 || (uint64_t)r != want) {
			gbpf_fb_log(log, log_size,
				    "fatbin: entry %u at offset %zu: LZ4 block does not decompress to "
				    "%llu bytes",
				    e->index, e->offset, (unsigned long long)want);
			free(dst);
			return -GBPF_ERRNO__FORMAT;
		}
		n = (size_t)r;
#else
		free(dst);
		return -EOPNOTSUPP;
#endif
		break;
	}
	}
	if (e->kind == GBPF_FATBIN_KIND_PTX)
		while (n && dst[n - 1] == 0)
			n--;
	dst[n] = 0;
	*out = dst;
	*out_len = n;
	return 0;
}

const char *gbpf_fatbin_entry__label(const struct gbpf_fatbin_entry *e, char *buf, size_t size)
{
	snprintf(buf, size, "%s_%u", e->kind == GBPF_FATBIN_KIND_PTX ? "compute" : "sm", e->arch);
	return buf;
}

const void *gbpf_fatbin_wrapper_container(const void *wrapper, uint64_t *size)
{
	const uint8_t *w = wrapper, *c;
	uint32_t ver;
	uint64_t sz;

	if (!w || gbpf_fb_rd32(w) != GBPF_FATBIN_WRAPPER_MAGIC) {
		errno = EINVAL;
		return NULL;
	}
	ver = gbpf_fb_rd32(w + 4);
	if (ver != 1 && ver != 2) {
		errno = EINVAL;
		return NULL;
	}
	c = (const uint8_t *)(uintptr_t)gbpf_fb_rd64(w + 8);
	sz = c ? gbpf_fatbin_container_size(c, CONTAINER_HDR_SIZE) : 0;
	if (!sz) {
		errno = EINVAL;
		return NULL;
	}
	if (size)
		*size = sz;
	return c;
}
