/* SPDX-License-Identifier: MIT */
/* tools/json_writer.h - streaming JSON output for the gbpf command (-j, -p). */
#ifndef GBPF_TOOLS_JSON_WRITER_H
#define GBPF_TOOLS_JSON_WRITER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 32

struct json_writer {
	FILE *out;
	bool pretty;
	int depth;
	bool first[JSON_MAX_DEPTH]; /* no member written yet at this depth */
	bool after_key;
};

void jw_init(struct json_writer *w, FILE *out, bool pretty);
void jw_start_object(struct json_writer *w);
void jw_end_object(struct json_writer *w);
void jw_start_array(struct json_writer *w);
void jw_end_array(struct json_writer *w);
void jw_key(struct json_writer *w, const char *key);
void jw_string(struct json_writer *w, const char *s);
void jw_string_len(struct json_writer *w, const char *s, size_t len);
void jw_uint(struct json_writer *w, uint64_t v);
void jw_int(struct json_writer *w, int64_t v);
void jw_double(struct json_writer *w, double v);
void jw_bool(struct json_writer *w, bool v);
void jw_null(struct json_writer *w);
/** End a top-level value with a newline (one JSON document per line when not pretty). */
void jw_finish(struct json_writer *w);

/* key + value shorthands */
void jw_kv_string(struct json_writer *w, const char *key, const char *s);
void jw_kv_uint(struct json_writer *w, const char *key, uint64_t v);
void jw_kv_int(struct json_writer *w, const char *key, int64_t v);
void jw_kv_bool(struct json_writer *w, const char *key, bool v);

#endif
