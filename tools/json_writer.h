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

/*
 * Block output: many lines built in memory and written with one write(2)
 * per block, instead of one stdio flush per line (a ring buffer delivers
 * millions of records a second; `gbpf run` printed each through stdio and
 * fflush, ~0.3 M lines/s). Lines that go through stdio to the same
 * descriptor keep their order: jwb_flush flushes that FILE before writing
 * the block, and a caller flushes the block before its next stdio line.
 */
struct jw_writer;

struct jw_block {
	char *buf;
	size_t len, cap;
	int fd;
	FILE *stdio; /**< flushed before each block write (the same descriptor); may be NULL */
	int err;     /**< first write error (negative errno): later blocks are discarded */
	uint64_t bytes; /**< bytes written so far */
	struct jw_writer *writer; /**< jwb_start_writer's thread, or NULL */
};

/**
 * Prepare @p b to write to @p fd in blocks of @p cap bytes (at least 4096).
 * @return 0 or -ENOMEM
 */
int jwb_init(struct jw_block *b, int fd, FILE *stdio, size_t cap);
/**
 * Write full blocks from a thread of their own from now on (double
 * buffering): the caller fills the next block while the last one is
 * written, and waits only when both are full. jwb_flush still returns once
 * everything is written. @return 0, -ENOMEM or -EAGAIN (stays synchronous)
 */
int jwb_start_writer(struct jw_block *b);
/** Stop the writer thread (if any) and free the buffers (unflushed lines are lost). */
void jwb_free(struct jw_block *b);
/**
 * Room for @p need more bytes: the block is written out first when it has
 * less. @return where to write, or NULL when @p need exceeds the block size
 */
char *jwb_room(struct jw_block *b, size_t need);
/** The bytes up to @p end (inside the room jwb_room gave) are part of the block now. */
void jwb_commit(struct jw_block *b, char *end);
/** Write the block out (stdio flushed first) and wait for it; 0 or the first write error. */
int jwb_flush(struct jw_block *b);

/** Lower-case hex of @p n bytes at @p p into @p out (2n chars, no NUL); returns the end. */
char *jw_hex(char *out, const void *p, size_t n);
/**
 * @p s (@p len bytes) as a quoted JSON string, escaped as jw_string does,
 * into @p out (room for 6 * len + 2 bytes); returns the end (no NUL).
 */
char *jw_escape(char *out, const char *s, size_t len);

/** Data bytes of a record that are printed (the rest is cut, as before). */
#define JW_RECORD_DATA_MAX 512u

/** The constant start of a ring buffer record's line, made once per map. */
struct jw_record_fmt {
	char *prefix;
	size_t prefix_len;
	bool json;
};

/**
 * Prepare the lines of map @p map: JSON
 * `{"type":"event","map":MAP,"size":N,"data":"HEX"}` (byte for byte what
 * the jw_* calls made of a record) or text `MAP: HEX`, with "..." when the
 * record is longer than JW_RECORD_DATA_MAX bytes (hex of that many).
 * @return 0 or -ENOMEM
 */
int jw_record_fmt_init(struct jw_record_fmt *f, const char *map, bool json);
/** Free what jw_record_fmt_init allocated. */
void jw_record_fmt_free(struct jw_record_fmt *f);
/** Room jw_record_line may need for one line. */
static inline size_t jw_record_line_max(const struct jw_record_fmt *f)
{
	return f->prefix_len + 2 * JW_RECORD_DATA_MAX + 64;
}
/**
 * One record's line with its newline into @p out (jw_record_line_max
 * bytes of room); returns the bytes written.
 */
size_t jw_record_line(const struct jw_record_fmt *f, char *out, const void *data, size_t size);

#endif
