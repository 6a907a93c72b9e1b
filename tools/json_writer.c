/* SPDX-License-Identifier: MIT */
#include "json_writer.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

void jw_init(struct json_writer *w, FILE *out, bool pretty)
{
	w->out = out;
	w->pretty = pretty;
	w->depth = 0;
	w->first[0] = true;
	w->after_key = false;
}

static void indent(struct json_writer *w)
{
	int i;

	if (!w->pretty)
		return;
	fputc('\n', w->out);
	for (i = 0; i < w->depth; i++)
		fputs("  ", w->out);
}

/* Separator before a value or key in the current container. */
static void before_item(struct json_writer *w)
{
	if (w->after_key) {
		w->after_key = false;
		return;
	}
	if (w->depth > 0) {
		if (!w->first[w->depth])
			fputc(',', w->out);
		indent(w);
	}
	w->first[w->depth] = false;
}

static void open_container(struct json_writer *w, char c)
{
	before_item(w);
	fputc(c, w->out);
	if (w->depth + 1 < JSON_MAX_DEPTH)
		w->depth++;
	w->first[w->depth] = true;
}

static void close_container(struct json_writer *w, char c)
{
	bool empty = w->first[w->depth];

	if (w->depth > 0)
		w->depth--;
	if (!empty)
		indent(w);
	fputc(c, w->out);
}

void jw_start_object(struct json_writer *w) { open_container(w, '{'); }
void jw_end_object(struct json_writer *w) { close_container(w, '}'); }
void jw_start_array(struct json_writer *w) { open_container(w, '['); }
void jw_end_array(struct json_writer *w) { close_container(w, ']'); }

static void put_escaped(FILE *out, const char *s, size_t len)
{
	size_t i;

	fputc('"', out);
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		switch (c) {
		case '"': fputs("\\\"", out); break;
		case '\\': fputs("\\\\", out); break;
		case '\n': fputs("\\n", out); break;
		case '\r': fputs("\\r", out); break;
		case '\t': fputs("\\t", out); break;
		default:
			if (c < 0x20)
				fprintf(out, "\\u%04x", c);
			else
				fputc(c, out);
		}
	}
	fputc('"', out);
}

void jw_key(struct json_writer *w, const char *key)
{
	before_item(w);
	put_escaped(w->out, key, strlen(key));
	fputs(w->pretty ? ": " : ":", w->out);
	w->after_key = true;
}

void jw_string_len(struct json_writer *w, const char *s, size_t len)
{
	before_item(w);
	put_escaped(w->out, s, len);
}

void jw_string(struct json_writer *w, const char *s)
{
	if (!s) {
		jw_null(w);
		return;
	}
	jw_string_len(w, s, strlen(s));
}

void jw_uint(struct json_writer *w, uint64_t v)
{
	before_item(w);
	fprintf(w->out, "%" PRIu64, v);
}

void jw_int(struct json_writer *w, int64_t v)
{
	before_item(w);
	fprintf(w->out, "%" PRId64, v);
}

void jw_double(struct json_writer *w, double v)
{
	before_item(w);
	if (isfinite(v))
		fprintf(w->out, "%.17g", v);
	else
		fputs("null", w->out);
}

void jw_bool(struct json_writer *w, bool v)
{
	before_item(w);
	fputs(v ? "true" : "false", w->out);
}

void jw_null(struct json_writer *w)
{
	before_item(w);
	fputs("null", w->out);
}

void jw_finish(struct json_writer *w)
{
	fputc('\n', w->out);
	fflush(w->out);
	w->first[0] = true;
}

void jw_kv_string(struct json_writer *w, const char *key, const char *s) { jw_key(w, key); jw_string(w, s); }
void jw_kv_uint(struct json_writer *w, const char *key, uint64_t v) { jw_key(w, key); jw_uint(w, v); }
void jw_kv_int(struct json_writer *w, const char *key, int64_t v) { jw_key(w, key); jw_int(w, v); }
void jw_kv_bool(struct json_writer *w, const char *key, bool v) { jw_key(w, key); jw_bool(w, v); }
