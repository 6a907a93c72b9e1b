/* SPDX-License-Identifier: MIT */
#include "json_writer.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* ---- block output ------------------------------------------------------------------ */

/* The writer thread's side of a block (jwb_start_writer). */
struct jw_writer {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	char *buf;   /* the block being written, or the spare one when idle */
	size_t len;  /* bytes of buf to write; 0: idle */
	bool stop;
	struct jw_block *b;
};

int jwb_init(struct jw_block *b, int fd, FILE *stdio, size_t cap)
{
	memset(b, 0, sizeof(*b));
	if (cap < 4096)
		cap = 4096;
	b->buf = malloc(cap);
	if (!b->buf)
		return -ENOMEM;
	b->cap = cap;
	b->fd = fd;
	b->stdio = stdio;
	return 0;
}

/*
 * How much of p[0..n) to write at once to a pipe: whole lines, at most
 * PIPE_BUF bytes when they fit. `gbpf run` shares its stdout with the
 * application, and only writes of at most PIPE_BUF bytes are atomic on a
 * pipe: a larger one blocked on a full pipe lets the application's lines
 * in between its pieces, and a controller killed while blocked leaves half
 * a line that the application's next line is glued to.
 */
static size_t pipe_piece(const char *p, size_t n)
{
	const char *nl;

	if (n <= PIPE_BUF)
		return n;
	nl = memrchr(p, '\n', PIPE_BUF);
	if (nl)
		return (size_t)(nl - p) + 1;
	/* a line longer than PIPE_BUF cannot be atomic: write it whole */
	nl = memchr(p, '\n', n);
	return nl ? (size_t)(nl - p) + 1 : n;
}

/* write(2) all of it; the first error sticks (later blocks are discarded). */
static int write_all(int fd, const char *p, size_t n, uint64_t *bytes)
{
	struct stat st;
	bool is_pipe = fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode);
	size_t off = 0;

	while (off < n) {
		ssize_t w = write(fd, p + off, is_pipe ? pipe_piece(p + off, n - off) : n - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		off += (size_t)w;
		*bytes += (uint64_t)w;
	}
	return 0;
}

static void *writer_main(void *arg)
{
	struct jw_writer *w = arg;

	pthread_mutex_lock(&w->lock);
	for (;;) {
		uint64_t bytes = 0;
		int err = 0;

		while (!w->len && !w->stop)
			pthread_cond_wait(&w->cond, &w->lock);
		if (!w->len)
			break;
		/* the block is ours until len goes back to 0 */
		pthread_mutex_unlock(&w->lock);
		if (!w->b->err)
			err = write_all(w->b->fd, w->buf, w->len, &bytes);
		pthread_mutex_lock(&w->lock);
		w->b->bytes += bytes;
		if (err && !w->b->err)
			w->b->err = err;
		w->len = 0;
		pthread_cond_broadcast(&w->cond);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

int jwb_start_writer(struct jw_block *b)
{
	struct jw_writer *w;

	if (b->writer)
		return 0;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->buf = malloc(b->cap);
	if (!w->buf) {
		free(w);
		return -ENOMEM;
	}
	w->b = b;
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cond, NULL);
	if (pthread_create(&w->thread, NULL, writer_main, w)) {
		pthread_mutex_destroy(&w->lock);
		pthread_cond_destroy(&w->cond);
		free(w->buf);
		free(w);
		return -EAGAIN;
	}
	b->writer = w;
	return 0;
}

/* Caller holds w->lock: wait until the writer has written what it was given. */
static void writer_wait_locked(struct jw_writer *w)
{
	while (w->len)
		pthread_cond_wait(&w->cond, &w->lock);
}

void jwb_free(struct jw_block *b)
{
	struct jw_writer *w = b->writer;

	if (w) {
		pthread_mutex_lock(&w->lock);
		writer_wait_locked(w);
		w->stop = true;
		pthread_cond_broadcast(&w->cond);
		pthread_mutex_unlock(&w->lock);
		pthread_join(w->thread, NULL);
		pthread_mutex_destroy(&w->lock);
		pthread_cond_destroy(&w->cond);
		free(w->buf);
		free(w);
		b->writer = NULL;
	}
	free(b->buf);
	b->buf = NULL;
	b->len = b->cap = 0;
}

/*
 * Give the block to the writer thread (after the one before it is written
 * and stdio is flushed: the order of lines is kept) and take the spare.
 * With @p wait, return once this block is written too.
 */
static int writer_hand_over(struct jw_block *b, bool wait)
{
	struct jw_writer *w = b->writer;
	char *spare;
	int err;

	pthread_mutex_lock(&w->lock);
	writer_wait_locked(w);
	if (b->len) {
		if (b->stdio)
			fflush(b->stdio);
		spare = w->buf;
		w->buf = b->buf;
		w->len = b->len;
		b->buf = spare;
		b->len = 0;
		pthread_cond_broadcast(&w->cond);
		if (wait)
			writer_wait_locked(w);
	}
	err = b->err;
	pthread_mutex_unlock(&w->lock);
	return err;
}

int jwb_flush(struct jw_block *b)
{
	uint64_t bytes = 0;

	if (b->writer)
		return writer_hand_over(b, true);
	if (!b->len)
		return b->err;
	/* Whatever stdio holds for the same descriptor was printed first. */
	if (b->stdio)
		fflush(b->stdio);
	if (!b->err)
		b->err = write_all(b->fd, b->buf, b->len, &bytes);
	b->bytes += bytes;
	b->len = 0;
	return b->err;
}

char *jwb_room(struct jw_block *b, size_t need)
{
	if (need > b->cap)
		return NULL;
	if (b->cap - b->len < need) {
		if (b->writer)
			writer_hand_over(b, false);
		else
			jwb_flush(b);
	}
	return b->buf + b->len;
}

void jwb_commit(struct jw_block *b, char *end)
{
	b->len = (size_t)(end - b->buf);
}

/* "00".."ff" for every byte: one two-byte copy per byte (ring records are all hex). */
static const char jw_hex_pairs[513] =
	"000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
	"202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f"
	"404142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f"
	"606162636465666768696a6b6c6d6e6f707172737475767778797a7b7c7d7e7f"
	"808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f"
	"a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebf"
	"c0c1c2c3c4c5c6c7c8c9cacbcccdcecfd0d1d2d3d4d5d6d7d8d9dadbdcdddedf"
	"e0e1e2e3e4e5e6e7e8e9eaebecedeeeff0f1f2f3f4f5f6f7f8f9fafbfcfdfeff";

char *jw_hex(char *out, const void *p, size_t n)
{
	const unsigned char *c = p;

	for (size_t i = 0; i < n; i++, out += 2)
		memcpy(out, jw_hex_pairs + 2 * c[i], 2);
	return out;
}

char *jw_escape(char *out, const char *s, size_t len)
{
	static const char digits[] = "0123456789abcdef";

	*out++ = '"';
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		char e = c == '"' ? '"' : c == '\\' ? '\\' : c == '\n' ? 'n' : c == '\r' ? 'r' : c == '\t' ? 't' : 0;

		if (e) {
			*out++ = '\\';
			*out++ = e;
		} else if (c < 0x20) {
			memcpy(out, "\\u00", 4);
			out[4] = digits[c >> 4];
			out[5] = digits[c & 15];
			out += 6;
		} else {
			*out++ = (char)c;
		}
	}
	*out++ = '"';
	return out;
}

int jw_record_fmt_init(struct jw_record_fmt *f, const char *map, bool json)
{
	size_t n = strlen(map);
	char *p;

	memset(f, 0, sizeof(*f));
	f->json = json;
	f->prefix = malloc(6 * n + 64);
	if (!f->prefix)
		return -ENOMEM;
	p = f->prefix;
	if (json) {
		static const char a[] = "{\"type\":\"event\",\"map\":", b[] = ",\"size\":";

		memcpy(p, a, sizeof(a) - 1);
		p = jw_escape(p + sizeof(a) - 1, map, n);
		memcpy(p, b, sizeof(b) - 1);
		p += sizeof(b) - 1;
	} else {
		memcpy(p, map, n);
		p += n;
		*p++ = ':';
		*p++ = ' ';
	}
	f->prefix_len = (size_t)(p - f->prefix);
	return 0;
}

void jw_record_fmt_free(struct jw_record_fmt *f)
{
	free(f->prefix);
	f->prefix = NULL;
}

/* Decimal digits of @p v at @p out; returns the end. */
static char *put_u64(char *out, uint64_t v)
{
	char tmp[20];
	size_t n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		*out++ = tmp[--n];
	return out;
}

size_t jw_record_line(const struct jw_record_fmt *f, char *out, const void *data, size_t size)
{
	size_t shown = size < JW_RECORD_DATA_MAX ? size : JW_RECORD_DATA_MAX;
	char *p = out;

	memcpy(p, f->prefix, f->prefix_len);
	p += f->prefix_len;
	if (f->json) {
		p = put_u64(p, size);
		memcpy(p, ",\"data\":\"", 9);
		p = jw_hex(p + 9, data, shown);
		memcpy(p, "\"}\n", 3);
		p += 3;
	} else {
		p = jw_hex(p, data, shown);
		if (size > JW_RECORD_DATA_MAX) {
			memcpy(p, "...", 3);
			p += 3;
		}
		*p++ = '\n';
	}
	return (size_t)(p - out);
}
