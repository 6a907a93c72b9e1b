/* SPDX-License-Identifier: MIT */
/*
 * bench/agent/bench_ring.c - how fast the controller of `gbpf run` prints
 * ring buffer records (#8 kernelretsnoop: 5.2 M records of 48 bytes, the
 * controller took 0.9 M within 3 s of the app's exit).
 *
 * A producer thread fills a 16 MiB ring (kernelretsnoop's size) with
 * 48-byte records as the CUDA forwarder does (reserve, wait while full,
 * submit: nothing dropped); the main thread consumes it the way
 * run_drain_rings does and writes the JSON lines (-j) to a file:
 *   per-line: the jw_* calls and a flush per record (what run_print.c did);
 *   block:    jw_record_line into 1 MiB blocks, one write(2) per block
 *             (the same bytes: tests/output/json_block checks);
 *   threaded: the same, blocks written by a writer thread while the next
 *             one fills (what `gbpf run` does now).
 * Output: records/s and MB/s per mode, and the ratio.
 * argv: [RECORDS_BLOCK [RECORDS_PER_LINE [OUT_FILE]]]
 *   defaults 5242880 (2^20 threads x 5 launches), 1048576, a temporary file
 *   of ours (removed at the end); a given OUT_FILE must exist and is only
 *   written to (e.g. /dev/null: the formatter alone).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "json_writer.h"
#include "maps/map.h"

struct exit_event {
	uint64_t kernel_id, launch_id, time_ns;
	uint32_t block[3], thread[3];
};

struct bench {
	struct gbpf_map_instance ring;
	uint64_t records;  /* to produce */
	uint64_t consumed;
	atomic_int failed;
	/* per-line mode */
	FILE *out;
	struct json_writer jw;
	/* block mode */
	struct jw_block blk;
	struct jw_record_fmt fmt;
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void *producer(void *arg)
{
	struct bench *b = arg;

	for (uint64_t i = 0; i < b->records; i++) {
		struct exit_event e = {.kernel_id = 7, .launch_id = i / 1048576, .time_ns = 1000000 + i,
				       .block = {(uint32_t)(i / 256), 0, 0},
				       .thread = {(uint32_t)(i % 256), 0, 0}};
		void *p;

		/* A full ring makes the producer wait, as the forwarder does: no record is lost. */
		while (!(p = gbpf_ring_forward_reserve(&b->ring, 0, sizeof(e))))
			sched_yield();
		memcpy(p, &e, sizeof(e));
		gbpf_ringbuf_submit(&b->ring, p, 0);
	}
	return NULL;
}

/* run_print.c's old on_record: hex with snprintf, jw_* calls, a flush per record (jw_finish). */
static int on_record_line(void *c, const void *data, size_t size)
{
	struct bench *b = c;
	const unsigned char *d = data;
	char text[2 * 512 + 1];
	size_t i, o = 0, n = size < 512 ? size : 512;

	for (i = 0; i < n && o + 3 <= sizeof(text); i++)
		o += (size_t)snprintf(text + o, sizeof(text) - o, "%02x", d[i]);
	text[o] = 0;
	jw_start_object(&b->jw);
	jw_kv_string(&b->jw, "type", "event");
	jw_kv_string(&b->jw, "map", "events");
	jw_kv_uint(&b->jw, "size", size);
	jw_kv_string(&b->jw, "data", text);
	jw_end_object(&b->jw);
	jw_finish(&b->jw);
	b->consumed++;
	return 0;
}

/* run_print.c's on_record now. */
static int on_record_block(void *c, const void *data, size_t size)
{
	struct bench *b = c;
	char *p = jwb_room(&b->blk, jw_record_line_max(&b->fmt));

	if (!p) {
		atomic_store(&b->failed, 1);
		return 1;
	}
	jwb_commit(&b->blk, p + jw_record_line(&b->fmt, p, data, size));
	b->consumed++;
	return 0;
}

/* One mode: records/s from the first record to the last line written; -errno on failure. */
static int run_mode(int mode, uint64_t records, const char *path, int own, double *rate, double *mbs)
{
	int block = mode > 0;

	struct gbpf_map_desc d = {.sz = sizeof(d), .name = "events", .type = GBPF_MAP_TYPE_RINGBUF,
				  .max_entries = 1u << 24};
	struct bench b;
	pthread_t t;
	uint64_t t0, t1;
	int fd, err = 0;
	uint64_t size;

	memset(&b, 0, sizeof(b));
	b.records = records;
	/* A given path is only written (never created, truncated or removed: it may be a device). */
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (own && ftruncate(fd, 0)) {
		close(fd);
		return -errno;
	}
	if (gbpf_map_instance_create(&b.ring, &d, 1)) {
		close(fd);
		return -ENOMEM;
	}
	if (block) {
		if (jwb_init(&b.blk, fd, NULL, 1u << 20) || jw_record_fmt_init(&b.fmt, "events", true) ||
		    (mode == 2 && jwb_start_writer(&b.blk)))
			err = -ENOMEM;
	} else {
		b.out = fdopen(dup(fd), "w");
		if (!b.out)
			err = -errno;
		else
			jw_init(&b.jw, b.out, false);
	}
	if (!err && pthread_create(&t, NULL, producer, &b))
		err = -EAGAIN;
	if (err)
		goto out;
	t0 = mono_ns();
	while (b.consumed < records && !atomic_load(&b.failed)) {
		int n = gbpf_ringbuf_consume(&b.ring, block ? on_record_block : on_record_line, &b);

		if (block)
			jwb_flush(&b.blk); /* once per drain, as run_drain_rings */
		if (n < 0) {
			atomic_store(&b.failed, 1);
			break;
		}
		if (!n)
			sched_yield();
	}
	if (!block)
		fflush(b.out);
	t1 = mono_ns();
	pthread_join(t, NULL);
	size = block ? b.blk.bytes : (uint64_t)ftell(b.out);
	*rate = (double)b.consumed / ((double)(t1 - t0) / 1e9);
	*mbs = (double)size / 1e6 / ((double)(t1 - t0) / 1e9);
	if (atomic_load(&b.failed) || b.consumed != records || (block && b.blk.err))
		err = -EIO;
out:
	if (block) {
		jw_record_fmt_free(&b.fmt);
		jwb_free(&b.blk);
	} else if (b.out) {
		fclose(b.out);
	}
	gbpf_map_instance_destroy(&b.ring);
	close(fd);
	return err;
}

int main(int argc, char **argv)
{
	uint64_t n_block = argc > 1 ? strtoull(argv[1], NULL, 10) : 5242880,
		 n_line = argc > 2 ? strtoull(argv[2], NULL, 10) : 1048576;
	char tmp[] = "/tmp/gbpf-bench-ring-XXXXXX";
	const char *path = argc > 3 ? argv[3] : tmp;
	int tfd = -1;
	double rate[3] = {0}, mbs[3] = {0};
	int err;

	if (!n_block || n_block > (1ull << 30) || n_line > (1ull << 30)) {
		fprintf(stderr, "bench_ring: RECORDS in [1, 2^30]\n");
		return 2;
	}
	if (argc <= 3) {
		/* our own file, removed at the end */
		tfd = mkstemp(tmp);
		if (tfd < 0) {
			fprintf(stderr, "bench_ring: %s: %s\n", tmp, strerror(errno));
			return 1;
		}
	}
	if (n_line) {
		err = run_mode(0, n_line, path, tfd >= 0, &rate[0], &mbs[0]);
		if (err) {
			fprintf(stderr, "bench_ring: per-line mode failed: %s\n", strerror(-err));
			goto fail;
		}
	}
	err = run_mode(1, n_block, path, tfd >= 0, &rate[1], &mbs[1]);
	if (!err)
		err = run_mode(2, n_block, path, tfd >= 0, &rate[2], &mbs[2]);
	if (err) {
		fprintf(stderr, "bench_ring: block mode failed: %s\n", strerror(-err));
		goto fail;
	}
	if (tfd >= 0) {
		close(tfd);
		unlink(tmp);
	}
	printf("ring records (48 bytes) -> gbpf -j lines in a file, 16 MiB ring, producer waits when full\n");
	printf("%-9s %10s %14s %10s\n", "mode", "records", "records_per_s", "MB_per_s");
	if (n_line)
		printf("%-9s %10llu %14.0f %10.1f\n", "per-line", (unsigned long long)n_line, rate[0], mbs[0]);
	printf("%-9s %10llu %14.0f %10.1f\n", "block", (unsigned long long)n_block, rate[1], mbs[1]);
	printf("%-9s %10llu %14.0f %10.1f\n", "threaded", (unsigned long long)n_block, rate[2], mbs[2]);
	if (n_line)
		printf("block/per-line: %.1fx, threaded/per-line: %.1fx\n", rate[1] / rate[0], rate[2] / rate[0]);
	printf("gbpf-bench ring_print records_per_s=%.0f block_records_per_s=%.0f per_line_records_per_s=%.0f\n",
	       rate[2], rate[1], rate[0]);
	return 0;
fail:
	if (tfd >= 0) {
		close(tfd);
		unlink(tmp);
	}
	return 1;
}
