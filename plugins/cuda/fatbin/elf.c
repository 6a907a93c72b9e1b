/* SPDX-License-Identifier: MIT */
/*
 * Reading the few ELF structures we need (section table, symbol table) from
 * untrusted bytes. Hand-written instead of libelf because the input may be
 * a cubin image in memory and every size must be checked against the
 * buffer before it is used.
 */
#include "plugins/cuda/fatbin/fatbin.h"
#include "plugins/cuda/fatbin/fatbin_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <gbpf/gbpf.h>

#define SHT_SYMTAB 2
#define SHT_NOBITS 8
#define STT_FUNC 2
/* st_other bit nvcc sets on __global__ functions (kernels). */
#define STO_CUDA_ENTRY 0x10
/* Bounds the section walk on hostile input. */
#define MAX_SECTIONS 65536u

struct elf_view {
	const uint8_t *buf;
	size_t len;
	uint64_t shoff;
	uint32_t shnum;
	uint32_t shstrndx;
};

struct elf_shdr {
	uint32_t name;
	uint32_t type;
	uint64_t offset;
	uint64_t size;
	uint32_t link;
	uint64_t entsize;
};

static int elf_open(struct elf_view *v, const void *buf, size_t len, char *log, size_t log_size)
{
	const uint8_t *p = buf;
	uint16_t shentsize;

	memset(v, 0, sizeof(*v));
	if (len < 64 || memcmp(p, "\177ELF", 4)) {
		gbpf_fb_log(log, log_size, "elf: not an ELF file (%zu bytes)", len);
		return -GBPF_ERRNO__FORMAT;
	}
	if (p[4] != 2 || p[5] != 1) {
		gbpf_fb_log(log, log_size, "elf: only 64-bit little-endian ELF is supported");
		return -GBPF_ERRNO__FORMAT;
	}
	v->buf = p;
	v->len = len;
	v->shoff = gbpf_fb_rd64(p + 0x28);
	shentsize = gbpf_fb_rd16(p + 0x3a);
	v->shnum = gbpf_fb_rd16(p + 0x3c);
	v->shstrndx = gbpf_fb_rd16(p + 0x3e);
	if (!v->shoff) {
		v->shnum = 0; /* no section table: nothing to read */
		return 0;
	}
	if (shentsize != 64 || v->shoff > len || len - v->shoff < 64) {
		gbpf_fb_log(log, log_size, "elf: section table at offset %llu is outside the file",
			    (unsigned long long)v->shoff);
		return -GBPF_ERRNO__FORMAT;
	}
	/* Extended numbering: the real counts live in section 0. */
	if (v->shnum == 0)
		v->shnum = (uint32_t)gbpf_fb_rd64(p + v->shoff + 0x20);
	if (v->shstrndx == 0xffff)
		v->shstrndx = gbpf_fb_rd32(p + v->shoff + 0x28);
	if (v->shnum > MAX_SECTIONS || v->shnum > (len - v->shoff) / 64) {
		gbpf_fb_log(log, log_size, "elf: %u sections do not fit in the file", v->shnum);
		return -GBPF_ERRNO__FORMAT;
	}
	return 0;
}

static void elf_shdr(const struct elf_view *v, uint32_t i, struct elf_shdr *s)
{
	const uint8_t *h = v->buf + v->shoff + (uint64_t)i * 64;

	s->name = gbpf_fb_rd32(h);
	s->type = gbpf_fb_rd32(h + 4);
	s->offset = gbpf_fb_rd64(h + 0x18);
	s->size = gbpf_fb_rd64(h + 0x20);
	s->link = gbpf_fb_rd32(h + 0x28);
	s->entsize = gbpf_fb_rd64(h + 0x38);
}

static bool elf_sec_in_file(const struct elf_view *v, const struct elf_shdr *s)
{
	return s->type != SHT_NOBITS && s->offset <= v->len && s->size <= v->len - s->offset;
}

/* NUL-terminated string at @off of string section @strndx, or NULL. */
static const char *elf_str(const struct elf_view *v, uint32_t strndx, uint64_t off)
{
	struct elf_shdr s;
	const char *base;

	if (strndx >= v->shnum)
		return NULL;
	elf_shdr(v, strndx, &s);
	if (!elf_sec_in_file(v, &s) || off >= s.size)
		return NULL;
	base = (const char *)v->buf + s.offset;
	if (!memchr(base + off, 0, (size_t)(s.size - off)))
		return NULL;
	return base + off;
}

int gbpf_fatbin_find_in_file(const void *buf, size_t len, gbpf_fatbin_region_cb cb, void *arg,
			     char *log, size_t log_size)
{
	struct elf_view v;
	int err;

	switch (gbpf_cuda_image_kind(buf, len)) {
	case GBPF_CUDA_IMAGE_FATBIN:
		return cb("fatbin", buf, len, arg);
	case GBPF_CUDA_IMAGE_WRAPPER:
		gbpf_fb_log(log, log_size,
			    "fatbin: a fatbin wrapper (0x%08x) holds a pointer and cannot be read "
			    "from a file",
			    GBPF_FATBIN_WRAPPER_MAGIC);
		return -GBPF_ERRNO__FORMAT;
	case GBPF_CUDA_IMAGE_ELF:
		break;
	default:
		gbpf_fb_log(log, log_size, "fatbin: file is neither ELF nor a fatbin container");
		return -GBPF_ERRNO__FORMAT;
	}
	err = elf_open(&v, buf, len, log, log_size);
	if (err)
		return err;
	for (uint32_t i = 1; i < v.shnum; i++) {
		struct elf_shdr s;
		const char *name;

		elf_shdr(&v, i, &s);
		name = elf_str(&v, v.shstrndx, s.name);
		if (!name || (strcmp(name, ".nv_fatbin") && strcmp(name, "__nv_relfatbin")))
			continue;
		if (!elf_sec_in_file(&v, &s)) {
			gbpf_fb_log(log, log_size,
				    "elf: section %u (%s) at offset %llu size %llu is outside the file",
				    i, name, (unsigned long long)s.offset,
				    (unsigned long long)s.size);
			return -GBPF_ERRNO__FORMAT;
		}
		err = cb(name, v.buf + s.offset, (size_t)s.size, arg);
		if (err)
			return err;
	}
	return 0;
}

int gbpf_cubin_for_each_kernel(const void *buf, size_t len,
			       int (*cb)(const char *name, void *arg), void *arg, char *log,
			       size_t log_size)
{
	struct elf_view v;
	int err, n = 0;

	err = elf_open(&v, buf, len, log, log_size);
	if (err)
		return err;
	for (uint32_t i = 1; i < v.shnum; i++) {
		struct elf_shdr s;

		elf_shdr(&v, i, &s);
		if (s.type != SHT_SYMTAB)
			continue;
		if (!elf_sec_in_file(&v, &s) || s.entsize != 24) {
			gbpf_fb_log(log, log_size, "elf: symbol table (section %u) is malformed", i);
			return -GBPF_ERRNO__FORMAT;
		}
		for (uint64_t k = 1; k < s.size / 24; k++) {
			const uint8_t *sym = v.buf + s.offset + k * 24;
			const char *name;

			if ((sym[4] & 0xf) != STT_FUNC || !(sym[5] & STO_CUDA_ENTRY) ||
			    gbpf_fb_rd16(sym + 6) == 0)
				continue;
			name = elf_str(&v, s.link, gbpf_fb_rd32(sym));
			if (!name || !*name)
				continue;
			n++;
			if (cb) {
				err = cb(name, arg);
				if (err)
					return err;
			}
		}
	}
	return n;
}
