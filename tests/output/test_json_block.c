/* SPDX-License-Identifier: MIT */
/*
 * tests/output/test_json_block.c - the controller's fast output of ring
 * buffer records (tools/json_writer.c): each line is byte for byte what the
 * jw_* calls / printf made of a record before, and block writes keep their
 * order with lines printed through stdio on the same descriptor.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "json_writer.h"
#include "tap.h"

/* The line `gbpf run` printed per record before the block path (run_print.c's old on_record). */
static size_t old_line(const char *map, bool json, const unsigned char *data, size_t size, char *out,
		       size_t cap)
{
	FILE *f = fmemopen(out, cap, "w");
	char text[2 * 512 + 1];
	size_t i, o = 0, n = size < 512 ? size : 512;
	long len;

	for (i = 0; i < n && o + 3 <= sizeof(text); i++)
		o += (size_t)snprintf(text + o, sizeof(text) - o, "%02x", data[i]);
	text[o] = 0;
	if (json) {
		struct json_writer w;

		jw_init(&w, f, false);
		jw_start_object(&w);
		jw_kv_string(&w, "type", "event");
		jw_kv_string(&w, "map", map);
		jw_kv_uint(&w, "size", size);
		jw_kv_string(&w, "data", text);
		jw_end_object(&w);
		jw_finish(&w);
	} else {
		fprintf(f, "%s: %s%s\n", map, text, size > 512 ? "..." : "");
	}
	fflush(f);
	len = ftell(f);
	fclose(f);
	return len > 0 ? (size_t)len : 0;
}

static void test_lines(void)
{
	static const char *const maps[] = {"events", "we\"ird\\ma\tp\x01", ""};
	static const size_t sizes[] = {0, 1, 48, 511, 512, 513, 4096};
	unsigned char *data = malloc(4096);
	char *a = malloc(16384), *b = malloc(16384);
	int bad = 0, cases = 0;

	for (size_t i = 0; i < 4096; i++)
		data[i] = (unsigned char)(i * 37 + 11);
	for (int json = 0; json < 2; json++)
		for (size_t m = 0; m < sizeof(maps) / sizeof(maps[0]); m++)
			for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
				struct jw_record_fmt f;
				size_t na, nb;

				if (jw_record_fmt_init(&f, maps[m], json)) {
					bad++;
					continue;
				}
				na = old_line(maps[m], json, data, sizes[s], a, 16384);
				nb = jw_record_line(&f, b, data, sizes[s]);
				cases++;
				if (na != nb || memcmp(a, b, na) || nb > jw_record_line_max(&f)) {
					bad++;
					tap_diag("json %d map %zu size %zu: old '%.*s' new '%.*s'", json, m, sizes[s],
						 (int)na, a, (int)nb, b);
				}
				jw_record_fmt_free(&f);
			}
	tap_ok(cases == 42 && !bad, "record lines equal the jw_*/printf lines (%d cases, %d differ)", cases,
	       bad);
	free(data);
	free(a);
	free(b);
}

static void test_order(int threaded)
{
	char path[] = "/tmp/gbpf-jwb-XXXXXX", buf[256];
	int fd = mkstemp(path);
	FILE *f = fd >= 0 ? fdopen(dup(fd), "w") : NULL;
	struct jw_block blk;
	char *p;
	ssize_t n;

	if (!f || jwb_init(&blk, fd, f, 4096) || (threaded && jwb_start_writer(&blk))) {
		tap_ok(0, "temporary file and block");
		return;
	}
	fputs("stdio-1\n", f);
	p = jwb_room(&blk, 8);
	memcpy(p, "block-1\n", 8);
	jwb_commit(&blk, p + 8);
	jwb_flush(&blk);
	fputs("stdio-2\n", f);
	fflush(f);
	/* more than a block: written out on the way, in order */
	for (int i = 0; i < 1000; i++) {
		p = jwb_room(&blk, 16);
		jwb_commit(&blk, p + snprintf(p, 16, "r%04d\n", i));
	}
	tap_ok(jwb_room(&blk, 5000) == NULL, "a line longer than the block is refused");
	jwb_flush(&blk);
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	buf[n > 0 ? n : 0] = 0;
	tap_ok(!strncmp(buf, "stdio-1\nblock-1\nstdio-2\nr0000\nr0001\n", 36), "%s: stdio and blocks in order: %.40s",
	       threaded ? "writer thread" : "synchronous", buf);
	tap_ok(blk.bytes == 8 + 6000 && !blk.err, "every byte written (%llu)", (unsigned long long)blk.bytes);
	{
		/* every record line in order, across many blocks */
		char *all = malloc(8192);
		int good = all != NULL;

		for (int i = 0; good && i < 1000; i++) {
			char want[8];

			snprintf(want, sizeof(want), "r%04d\n", i);
			good = pread(fd, all, 6, 24 + (off_t)i * 6) == 6 && !memcmp(all, want, 6);
		}
		tap_ok(good, "the 1000 lines of 2 blocks are in order");
		free(all);
	}
	n = pread(fd, buf, 6, 16 + 8 + 999 * 6);
	buf[n > 0 ? n : 0] = 0;
	tap_ok(!strcmp(buf, "r0999\n"), "the last record is the last line: %s", buf);
	jwb_free(&blk);
	fclose(f);
	close(fd);
	unlink(path);
}

int main(void)
{
	test_lines();
	test_order(0);
	test_order(1);
	return tap_done();
}
