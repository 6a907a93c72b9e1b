/* SPDX-License-Identifier: MIT */
/*
 * AMDGPU code-object metadata (NT_AMDGPU_METADATA, MessagePack): reading
 * the per-kernel values the checker compares with kernel descriptors, and
 * re-encoding with new register counts and segment sizes. Integers are
 * re-encoded in their smallest form, so the note may change size; the
 * whole note is re-emitted by the relink anyway.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "co_meta.h"

enum { MP_INT, MP_STR, MP_MAP, MP_ARR, MP_OTHER };

struct mp_item {
	int type;
	uint64_t val;      /* integer value, or element/pair count of map/array */
	const uint8_t *s;  /* string bytes */
	size_t len;        /* string length */
	size_t end;        /* offset after the header (and the string/scalar body) */
};

static int be(const uint8_t *p, size_t n, size_t pos, unsigned bytes, uint64_t *v)
{
	if (pos + bytes > n)
		return -EINVAL;
	*v = 0;
	for (unsigned i = 0; i < bytes; i++)
		*v = *v << 8 | p[pos + i];
	return 0;
}

/* Header of the item at @p pos (containers: only the header is consumed). */
static int mp_head(const uint8_t *p, size_t n, size_t pos, struct mp_item *it)
{
	uint8_t c;
	uint64_t v = 0;
	unsigned w = 0;

	if (pos >= n)
		return -EINVAL;
	c = p[pos++];
	memset(it, 0, sizeof(*it));
	it->type = MP_OTHER;
	if (c <= 0x7f || c >= 0xe0) {
		it->type = MP_INT;
		it->val = c <= 0x7f ? c : (uint64_t)(int64_t)(int8_t)c;
	} else if ((c & 0xf0) == 0x80 || (c & 0xf0) == 0x90) {
		it->type = (c & 0xf0) == 0x80 ? MP_MAP : MP_ARR;
		it->val = c & 0x0f;
	} else if ((c & 0xe0) == 0xa0 || (c >= 0xd9 && c <= 0xdb) || (c >= 0xc4 && c <= 0xc6)) {
		if ((c & 0xe0) == 0xa0)
			v = c & 0x1f;
		else if (be(p, n, pos, (w = c >= 0xd9 ? 1u << (c - 0xd9) : 1u << (c - 0xc4)), &v))
			return -EINVAL;
		pos += w;
		if (v > n - pos)
			return -EINVAL;
		it->type = c >= 0xc4 && c <= 0xc6 ? MP_OTHER : MP_STR;
		it->s = p + pos;
		it->len = (size_t)v;
		pos += (size_t)v;
	} else if (c >= 0xcc && c <= 0xd3) {
		w = 1u << ((c - 0xcc) & 3);
		if (be(p, n, pos, w, &v))
			return -EINVAL;
		if (c >= 0xd0 && w < 8) /* sign-extend intN */
			v = (uint64_t)((int64_t)(v << (64 - 8 * w)) >> (64 - 8 * w));
		pos += w;
		it->type = MP_INT;
		it->val = v;
	} else if (c == 0xdc || c == 0xdd || c == 0xde || c == 0xdf) {
		w = c == 0xdc || c == 0xde ? 2 : 4;
		if (be(p, n, pos, w, &v))
			return -EINVAL;
		pos += w;
		it->type = c <= 0xdd ? MP_ARR : MP_MAP;
		it->val = v;
	} else if (c == 0xca || c == 0xcb) {
		pos += c == 0xca ? 4 : 8;
	} else if (c == 0xc0 || c == 0xc2 || c == 0xc3) {
		/* nil, false, true */
	} else {
		return -EINVAL; /* ext types never appear in AMDGPU metadata */
	}
	if (pos > n)
		return -EINVAL;
	it->end = pos;
	return 0;
}

/* Offset after the whole item at @p pos; depth bounds nesting. */
static int mp_skip(const uint8_t *p, size_t n, size_t pos, size_t *end, int depth)
{
	struct mp_item it;
	int rc = mp_head(p, n, pos, &it);

	if (rc)
		return rc;
	pos = it.end;
	if (it.type == MP_MAP || it.type == MP_ARR) {
		uint64_t k = it.type == MP_MAP ? 2 * it.val : it.val;

		if (depth > 32 || k > n)
			return -EINVAL;
		for (uint64_t i = 0; i < k; i++)
			if ((rc = mp_skip(p, n, pos, &pos, depth + 1)))
				return rc;
	}
	*end = pos;
	return 0;
}

static int key_is(const struct mp_item *it, const char *k)
{
	return it->type == MP_STR && it->len == strlen(k) && !memcmp(it->s, k, it->len);
}

/* Visit each kernel map of amdhsa.kernels: cb(p, n, map_pos, arg). */
static int for_kernels(const uint8_t *p, size_t n, int (*cb)(const uint8_t *, size_t, size_t, void *), void *arg)
{
	struct mp_item top, key, arr;
	size_t pos;
	int rc = mp_head(p, n, 0, &top);

	if (rc || top.type != MP_MAP)
		return -EINVAL;
	pos = top.end;
	for (uint64_t i = 0; i < top.val; i++) {
		if ((rc = mp_head(p, n, pos, &key)))
			return rc;
		if (!key_is(&key, "amdhsa.kernels")) {
			if ((rc = mp_skip(p, n, key.end, &pos, 0)))
				return rc;
			continue;
		}
		if ((rc = mp_head(p, n, key.end, &arr)) || arr.type != MP_ARR)
			return -EINVAL;
		pos = arr.end;
		for (uint64_t k = 0; k < arr.val; k++) {
			if ((rc = cb(p, n, pos, arg)))
				return rc;
			if ((rc = mp_skip(p, n, pos, &pos, 0)))
				return rc;
		}
		return 0;
	}
	return 0;
}

static const struct {
	const char *key;
	size_t off;
} meta_ints[] = {
	{".sgpr_count", offsetof(struct co_meta_kernel, sgpr)},
	{".vgpr_count", offsetof(struct co_meta_kernel, vgpr)},
	{".agpr_count", offsetof(struct co_meta_kernel, agpr)},
	{".private_segment_fixed_size", offsetof(struct co_meta_kernel, priv)},
	{".group_segment_fixed_size", offsetof(struct co_meta_kernel, group)},
	{".kernarg_segment_size", offsetof(struct co_meta_kernel, kernarg)},
};

/* Lowest .offset of the .args entries whose .value_kind is hidden_*. */
static int read_hidden_off(const uint8_t *p, size_t n, size_t pos, uint64_t *lowest)
{
	struct mp_item arr, m, key, val;
	int rc = mp_head(p, n, pos, &arr);

	if (rc || arr.type != MP_ARR)
		return rc ? rc : -EINVAL;
	pos = arr.end;
	for (uint64_t a = 0; a < arr.val; a++) {
		uint64_t off = UINT64_MAX;
		int hidden = 0;

		if ((rc = mp_head(p, n, pos, &m)) || m.type != MP_MAP)
			return rc ? rc : -EINVAL;
		pos = m.end;
		for (uint64_t i = 0; i < m.val; i++) {
			if ((rc = mp_head(p, n, pos, &key)) || (rc = mp_head(p, n, key.end, &val)))
				return rc;
			if (key_is(&key, ".offset") && val.type == MP_INT)
				off = val.val;
			if (key_is(&key, ".value_kind") && val.type == MP_STR && val.len > 7 &&
			    !memcmp(val.s, "hidden_", 7))
				hidden = 1;
			if ((rc = mp_skip(p, n, key.end, &pos, 1)))
				return rc;
		}
		if (hidden && off < *lowest)
			*lowest = off;
	}
	return 0;
}

static int read_kernel(const uint8_t *p, size_t n, size_t pos, struct co_meta_kernel *k)
{
	struct mp_item m, key, val;
	int rc = mp_head(p, n, pos, &m);

	if (rc || m.type != MP_MAP)
		return -EINVAL;
	memset(k, 0, sizeof(*k));
	k->hidden_off = UINT64_MAX;
	pos = m.end;
	for (uint64_t i = 0; i < m.val; i++) {
		if ((rc = mp_head(p, n, pos, &key)) || (rc = mp_head(p, n, key.end, &val)))
			return rc ? rc : -EINVAL;
		if (key_is(&key, ".name") && val.type == MP_STR)
			snprintf(k->name, sizeof(k->name), "%.*s", (int)val.len, (const char *)val.s);
		else if (key_is(&key, ".symbol") && val.type == MP_STR)
			snprintf(k->symbol, sizeof(k->symbol), "%.*s", (int)val.len, (const char *)val.s);
		for (size_t j = 0; j < sizeof(meta_ints) / sizeof(meta_ints[0]); j++)
			if (key_is(&key, meta_ints[j].key) && val.type == MP_INT)
				*(uint64_t *)((char *)k + meta_ints[j].off) = val.val;
		if (key_is(&key, ".args") && (rc = read_hidden_off(p, n, key.end, &k->hidden_off)))
			return rc;
		if ((rc = mp_skip(p, n, key.end, &pos, 0)))
			return rc;
	}
	if (k->hidden_off == UINT64_MAX)
		k->hidden_off = k->kernarg;
	return 0;
}

struct read_ctx {
	struct co_meta_kernel *k;
	size_t max, n;
};

static int read_cb(const uint8_t *p, size_t n, size_t pos, void *arg)
{
	struct read_ctx *r = arg;
	struct co_meta_kernel tmp;
	int rc = read_kernel(p, n, pos, r->n < r->max ? &r->k[r->n] : &tmp);

	if (!rc)
		r->n++;
	return rc;
}

int co_meta_read(const uint8_t *msgpack, size_t n, struct co_meta_kernel *k, size_t max)
{
	struct read_ctx r = {k, max, 0};
	size_t end;
	/* the whole document must be well formed, not only the kernels */
	int rc = mp_skip(msgpack, n, 0, &end, 0);

	if (!rc && end != n)
		rc = -EINVAL;
	if (!rc)
		rc = for_kernels(msgpack, n, read_cb, &r);

	return rc ? rc : (int)(r.n < max ? r.n : max);
}

struct wbuf {
	uint8_t *p;
	size_t len, cap;
};

static int wput(struct wbuf *b, const void *d, size_t n)
{
	if (b->len + n > b->cap) {
		size_t nc = (b->cap + n) * 2;
		uint8_t *np = realloc(b->p, nc);

		if (!np)
			return -ENOMEM;
		b->p = np;
		b->cap = nc;
	}
	memcpy(b->p + b->len, d, n);
	b->len += n;
	return 0;
}

static int wuint(struct wbuf *b, uint64_t v)
{
	uint8_t t[9];
	unsigned w = v <= 0x7f ? 0 : v <= 0xff ? 1 : v <= 0xffff ? 2 : v <= 0xffffffffu ? 4 : 8;

	if (!w) {
		t[0] = (uint8_t)v;
		return wput(b, t, 1);
	}
	t[0] = w == 1 ? 0xcc : w == 2 ? 0xcd : w == 4 ? 0xce : 0xcf;
	for (unsigned i = 0; i < w; i++)
		t[1 + i] = (uint8_t)(v >> (8 * (w - 1 - i)));
	return wput(b, t, 1 + w);
}

/*
 * Copy the item at pos; in a kernel map (depth 3: top map > kernels array >
 * kernel map) whose .name has a patch, replace the patched integers.
 */
static int copy_item(const uint8_t *p, size_t n, size_t pos, size_t *end, struct wbuf *b,
		     const struct co_meta_patch *pt, size_t np, int depth, int in_kernels)
{
	struct mp_item it;
	const struct co_meta_patch *mine = NULL;
	int rc = mp_head(p, n, pos, &it);

	if (rc)
		return rc;
	if (depth > 32)
		return -EINVAL;
	if (it.type != MP_MAP && it.type != MP_ARR) {
		*end = it.end;
		return wput(b, p + pos, it.end - pos);
	}
	if ((rc = wput(b, p + pos, it.end - pos)))
		return rc;
	if (it.type == MP_MAP && in_kernels) {
		struct co_meta_kernel k;

		if (!read_kernel(p, n, pos, &k))
			for (size_t i = 0; i < np; i++)
				if (!strcmp(pt[i].name, k.name))
					mine = &pt[i];
	}
	pos = it.end;
	for (uint64_t i = 0; i < it.val; i++) {
		if (it.type == MP_MAP) {
			struct mp_item key;
			uint64_t nv = 0;
			int repl = 0;

			if ((rc = mp_head(p, n, pos, &key)) || (rc = wput(b, p + pos, key.end - pos)))
				return rc;
			if (mine) {
				repl = key_is(&key, ".sgpr_count") ? (nv = mine->sgpr, 1)
				       : key_is(&key, ".vgpr_count") ? (nv = mine->vgpr, 1)
				       : key_is(&key, ".private_segment_fixed_size") ? (nv = mine->priv, 1)
										      : 0;
			}
			if (repl) {
				if ((rc = mp_skip(p, n, key.end, &pos, depth)) || (rc = wuint(b, nv)))
					return rc;
			} else if ((rc = copy_item(p, n, key.end, &pos, b, pt, np, depth + 1,
						   depth == 0 && key_is(&key, "amdhsa.kernels")))) {
				return rc;
			}
		} else if ((rc = copy_item(p, n, pos, &pos, b, pt, np, depth + 1, in_kernels))) {
			return rc;
		}
	}
	*end = pos;
	return 0;
}

int co_meta_patch(const uint8_t *msgpack, size_t n, const struct co_meta_patch *p, size_t np, uint8_t **out,
		  size_t *out_n)
{
	struct wbuf b = {0};
	size_t end;
	int rc = copy_item(msgpack, n, 0, &end, &b, p, np, 0, 0);

	if (!rc && end != n)
		rc = -EINVAL;
	if (rc) {
		free(b.p);
		return rc;
	}
	*out = b.p;
	*out_n = b.len;
	return 0;
}
