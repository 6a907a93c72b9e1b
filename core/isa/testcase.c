/* SPDX-License-Identifier: MIT */
/*
 * core/isa/testcase.c - reader of conformance test files (`.data`).
 *
 * A file is a header of '#' comments followed by sections, each opened by
 * a line "-- NAME". Known sections get fields in struct gbpf_testcase;
 * others are kept by name so that new kinds of section never make a file
 * unreadable.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gbpf/asm.h>

#define TESTCASE_MAX_FILE (16u << 20)

struct tc_parse {
	const char *name;
	char *err;
	size_t err_size;
};

static __attribute__((format(printf, 4, 5))) int tc_error(const struct tc_parse *p, size_t line,
							   int ret, const char *fmt, ...)
{
	va_list ap;
	size_t pos;

	if (p->err && p->err_size) {
		pos = (size_t)snprintf(p->err, p->err_size, "%s:%zu: ", p->name, line);
		if (pos < p->err_size) {
			va_start(ap, fmt);
			vsnprintf(p->err + pos, p->err_size - pos, fmt, ap);
			va_end(ap);
		}
	}
	return ret;
}

/* Body text with '#' comments removed, for sections holding numbers. */
static char *strip_comments(const char *body)
{
	char *s = strdup(body), *r, *w;
	int in_comment = 0;

	if (!s)
		return NULL;
	for (r = w = s; *r; r++) {
		if (*r == '#')
			in_comment = 1;
		else if (*r == '\n')
			in_comment = 0;
		if (!in_comment)
			*w++ = *r;
	}
	*w = '\0';
	return s;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/*
 * Parse hex tokens into bytes: "aa bb" byte by byte, "0x<hex>" as a
 * little-endian 64-bit word (the form "-- raw" uses for whole slots).
 */
static int parse_hex_bytes(const struct tc_parse *p, size_t line, const char *section,
			   const char *body, uint8_t **out, size_t *out_len)
{
	char *text = strip_comments(body), *tok, *save = NULL;
	/* Worst case "0x1 " gives 8 bytes from 4 characters. */
	size_t cap = strlen(body) * 2 + 8, len = 0;
	uint8_t *buf;
	int ret = 0;

	if (!text)
		return -ENOMEM;
	buf = malloc(cap);
	if (!buf) {
		free(text);
		return -ENOMEM;
	}
	for (tok = strtok_r(text, " \t\r\n", &save); tok; tok = strtok_r(NULL, " \t\r\n", &save)) {
		if (tok[0] == '0' && (tok[1] == 'x' || tok[1] == 'X')) {
			char *end;
			unsigned long long w;

			errno = 0;
			w = strtoull(tok + 2, &end, 16);
			if (*end || errno || !tok[2] || strlen(tok + 2) > 16) {
				ret = tc_error(p, line, -EINVAL, "-- %s: invalid 64-bit word '%s'",
					       section, tok);
				goto out;
			}
			for (int i = 0; i < 8; i++)
				buf[len++] = (uint8_t)(w >> (8 * i));
			continue;
		}
		if (strlen(tok) % 2) {
			ret = tc_error(p, line, -EINVAL, "-- %s: odd number of hex digits in '%s'",
				       section, tok);
			goto out;
		}
		for (const char *c = tok; *c; c += 2) {
			int hi = hexval((unsigned char)c[0]), lo = hexval((unsigned char)c[1]);

			if (hi < 0 || lo < 0) {
				ret = tc_error(p, line, -EINVAL, "-- %s: invalid hex byte in '%s'",
					       section, tok);
				goto out;
			}
			buf[len++] = (uint8_t)(hi << 4 | lo);
		}
	}
	*out = buf;
	*out_len = len;
	buf = NULL;
out:
	free(buf);
	free(text);
	return ret;
}

static int parse_result(const struct tc_parse *p, size_t line, const char *body, uint64_t *value)
{
	char *text = strip_comments(body), *s, *end;
	int neg = 0, ret = 0;
	unsigned long long v;

	if (!text)
		return -ENOMEM;
	s = text;
	while (isspace((unsigned char)*s))
		s++;
	if (*s == '-') {
		neg = 1;
		s++;
	}
	errno = 0;
	v = strtoull(s, &end, 0);
	while (isspace((unsigned char)*end))
		end++;
	if (end == s || *end || errno)
		ret = tc_error(p, line, -EINVAL, "-- result: expected one number, got '%s'", text);
	else
		*value = neg ? 0 - (uint64_t)v : (uint64_t)v;
	free(text);
	return ret;
}

static char *trimmed_copy(const char *s)
{
	size_t n;

	while (isspace((unsigned char)*s))
		s++;
	n = strlen(s);
	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	return strndup(s, n);
}

static int take_section(struct gbpf_testcase *tc, const struct tc_parse *p, const char *name,
			char *body, size_t hdr_line)
{
	int ret = 0;

	if (!strcmp(name, "asm")) {
		if (tc->has_asm)
			goto dup;
		tc->has_asm = 1;
		tc->asm_text = body;
		tc->asm_line = hdr_line + 1;
		return 0;
	}
	if (!strcmp(name, "raw")) {
		uint8_t *bytes = NULL;
		size_t len = 0;

		if (tc->has_raw)
			goto dup;
		ret = parse_hex_bytes(p, hdr_line, name, body, &bytes, &len);
		free(body);
		if (ret)
			return ret;
		if (len % sizeof(struct gbpf_insn)) {
			free(bytes);
			return tc_error(p, hdr_line, -EINVAL,
					"-- raw: %zu bytes is not a whole number of 8-byte slots", len);
		}
		tc->has_raw = 1;
		tc->raw = (struct gbpf_insn *)bytes;
		tc->raw_cnt = len / sizeof(struct gbpf_insn);
		return 0;
	}
	if (!strcmp(name, "mem")) {
		if (tc->has_mem)
			goto dup;
		ret = parse_hex_bytes(p, hdr_line, name, body, &tc->mem, &tc->mem_size);
		free(body);
		if (!ret)
			tc->has_mem = 1;
		return ret;
	}
	if (!strcmp(name, "result")) {
		if (tc->has_result)
			goto dup;
		ret = parse_result(p, hdr_line, body, &tc->result);
		free(body);
		if (!ret)
			tc->has_result = 1;
		return ret;
	}
	if (!strcmp(name, "error")) {
		if (tc->has_error)
			goto dup;
		tc->error = trimmed_copy(body);
		free(body);
		if (!tc->error)
			return -ENOMEM;
		tc->has_error = 1;
		return 0;
	}
	if (!strcmp(name, "c")) {
		if (tc->has_c)
			goto dup;
		tc->has_c = 1;
		tc->c_source = body;
		return 0;
	}
	if (!strcmp(name, "no register offset")) {
		if (tc->no_register_offset)
			goto dup;
		tc->no_register_offset = 1;
		tc->no_register_offset_text = trimmed_copy(body);
		free(body);
		return tc->no_register_offset_text ? 0 : -ENOMEM;
	}
	{
		struct gbpf_testcase_section *grown, *sec;

		grown = realloc(tc->other, (tc->other_cnt + 1) * sizeof(*grown));
		if (!grown) {
			free(body);
			return -ENOMEM;
		}
		tc->other = grown;
		sec = &tc->other[tc->other_cnt];
		sec->name = strdup(name);
		if (!sec->name) {
			free(body);
			return -ENOMEM;
		}
		sec->body = body;
		sec->line = hdr_line;
		tc->other_cnt++;
		return 0;
	}
dup:
	free(body);
	return tc_error(p, hdr_line, -EINVAL, "section '-- %s' appears twice", name);
}

int gbpf_testcase_parse(const char *text, size_t len, const char *name, struct gbpf_testcase *tc,
			char *err, size_t err_size)
{
	struct tc_parse p = {.name = name ? name : "<memory>", .err = err, .err_size = err_size};
	const char *pos = text, *end = text + len;
	char *sec_name = NULL, *body = NULL;
	size_t body_len = 0, line = 0, hdr_line = 0;
	int ret = 0;

	if (err && err_size)
		err[0] = '\0';
	if (!tc || (!text && len))
		return -EINVAL;
	memset(tc, 0, sizeof(*tc));
	if (len > TESTCASE_MAX_FILE)
		return tc_error(&p, 0, -E2BIG, "file larger than %u bytes", TESTCASE_MAX_FILE);
	tc->path = strdup(p.name);
	if (!tc->path)
		return -ENOMEM;
	/* One extra round at the end flushes the last section. */
	for (;;) {
		const char *nl = pos < end ? memchr(pos, '\n', (size_t)(end - pos)) : NULL;
		const char *lend = nl ? nl : end;
		int at_end = pos >= end;
		int is_hdr = !at_end && lend - pos >= 3 && !strncmp(pos, "-- ", 3);

		if (!at_end)
			line++;
		if ((at_end || is_hdr) && sec_name) {
			char *b = body ? body : strdup("");

			body = NULL;
			body_len = 0;
			if (!b) {
				ret = -ENOMEM;
				goto fail;
			}
			ret = take_section(tc, &p, sec_name, b, hdr_line);
			free(sec_name);
			sec_name = NULL;
			if (ret)
				goto fail;
		}
		if (at_end)
			break;
		if (is_hdr) {
			const char *ns = pos + 3, *ne = lend;

			while (ne > ns && isspace((unsigned char)ne[-1]))
				ne--;
			sec_name = strndup(ns, (size_t)(ne - ns));
			if (!sec_name) {
				ret = -ENOMEM;
				goto fail;
			}
			hdr_line = line;
		} else if (sec_name) {
			size_t n = (size_t)(lend - pos);
			char *grown = realloc(body, body_len + n + 2);

			if (!grown) {
				ret = -ENOMEM;
				goto fail;
			}
			body = grown;
			memcpy(body + body_len, pos, n);
			body_len += n;
			body[body_len++] = '\n';
			body[body_len] = '\0';
		}
		/* Lines before the first section are the file's comment header. */
		pos = nl ? nl + 1 : end;
	}
	return 0;
fail:
	free(sec_name);
	free(body);
	gbpf_testcase_free(tc);
	return ret;
}

int gbpf_testcase_parse_file(const char *path, struct gbpf_testcase *tc, char *err,
			     size_t err_size)
{
	char *buf = NULL;
	size_t len = 0, cap = 0;
	FILE *f;
	int ret;

	if (err && err_size)
		err[0] = '\0';
	if (!path || !tc)
		return -EINVAL;
	f = fopen(path, "rb");
	if (!f) {
		ret = -errno;
		if (err && err_size)
			snprintf(err, err_size, "%s: cannot open: %s", path, strerror(-ret));
		return ret;
	}
	for (;;) {
		size_t n;

		if (len == cap) {
			char *grown;

			if (cap > TESTCASE_MAX_FILE) {
				fclose(f);
				free(buf);
				if (err && err_size)
					snprintf(err, err_size, "%s: file larger than %u bytes", path,
						 TESTCASE_MAX_FILE);
				return -E2BIG;
			}
			cap = cap ? cap * 2 : 4096;
			grown = realloc(buf, cap);
			if (!grown) {
				fclose(f);
				free(buf);
				return -ENOMEM;
			}
			buf = grown;
		}
		n = fread(buf + len, 1, cap - len, f);
		len += n;
		if (n == 0)
			break;
	}
	if (ferror(f)) {
		fclose(f);
		free(buf);
		if (err && err_size)
			snprintf(err, err_size, "%s: read error", path);
		return -EIO;
	}
	fclose(f);
	ret = gbpf_testcase_parse(buf, len, path, tc, err, err_size);
	free(buf);
	return ret;
}

int gbpf_testcase_program(const struct gbpf_testcase *tc, struct gbpf_insn **insns,
			  size_t *insn_cnt, char *err, size_t err_size)
{
	int ret;

	if (err && err_size)
		err[0] = '\0';
	if (!tc || !insns || !insn_cnt)
		return -EINVAL;
	if (tc->has_asm) {
		char msg[256];

		ret = gbpf_asm(tc->asm_text, insns, insn_cnt, msg, sizeof(msg));
		if (ret && err && err_size)
			snprintf(err, err_size, "%s: -- asm (file line %zu is asm line 1): %s", tc->path,
				 tc->asm_line, msg);
		return ret;
	}
	if (tc->has_raw) {
		if (tc->raw_cnt == 0) {
			if (err && err_size)
				snprintf(err, err_size, "%s: -- raw: empty program", tc->path);
			return -ENOENT;
		}
		*insns = malloc(tc->raw_cnt * sizeof(**insns));
		if (!*insns)
			return -ENOMEM;
		memcpy(*insns, tc->raw, tc->raw_cnt * sizeof(**insns));
		*insn_cnt = tc->raw_cnt;
		return 0;
	}
	if (err && err_size)
		snprintf(err, err_size, "%s: no -- asm or -- raw section", tc->path);
	return -ENOENT;
}

void gbpf_testcase_free(struct gbpf_testcase *tc)
{
	size_t i;

	if (!tc)
		return;
	free(tc->path);
	free(tc->asm_text);
	free(tc->raw);
	free(tc->mem);
	free(tc->error);
	free(tc->c_source);
	free(tc->no_register_offset_text);
	for (i = 0; i < tc->other_cnt; i++) {
		free(tc->other[i].name);
		free(tc->other[i].body);
	}
	free(tc->other);
	memset(tc, 0, sizeof(*tc));
}
