/* SPDX-License-Identifier: MIT */
/* Ring buffers (RINGBUF, GPU_RINGBUF) and perf event arrays, single-threaded semantics. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/maps/maps_test_util.h"

struct seen {
	uint32_t n;
	uint32_t vals[4096];
	size_t sizes[4096];
	int stop_after;
};

static int collect(void *ctx, const void *data, size_t size)
{
	struct seen *s = ctx;

	if (s->n < 4096) {
		s->vals[s->n] = 0;
		memcpy(&s->vals[s->n], data, size < 4 ? size : 4);
		s->sizes[s->n] = size;
	}
	s->n++;
	return s->stop_after && (int)s->n >= s->stop_after;
}

static void test_basic(uint32_t type, const char *what)
{
	struct gbpf_map_desc d = mk_desc(what, type, 0, 0, 4096);
	struct gbpf_map_instance m;
	struct seen s = {0};
	uint8_t big8[8] = {0};
	uint32_t v;
	int ok = 1, n;
	void *r1, *r2, *r3;

	if (gbpf_map_instance_create(&m, &d, 1)) {
		tap_ok(0, "%s: create", what);
		return;
	}
	tap_ok(hdr_of(&m)->nr_slots == 1 && hdr_of(&m)->sub_size == 4096,
	       "%s: one sub-ring of 4096 bytes", what);
	for (v = 0; v < 10; v++)
		ok &= gbpf_ringbuf_output(&m, &v, sizeof(v), 0) == 0;
	tap_ok(ok, "%s: 10 outputs", what);
	n = gbpf_ringbuf_consume(&m, collect, &s);
	ok = n == 10;
	for (v = 0; v < 10 && ok; v++)
		ok &= s.vals[v] == v && s.sizes[v] == 4;
	tap_ok(ok, "%s: consume returns 10 records in order (%d)", what, n);
	tap_ok(gbpf_ringbuf_consume(&m, collect, &s) == 0, "%s: nothing left", what);

	/* reserve three, commit out of order: the consumer waits for the first. */
	r1 = gbpf_ringbuf_reserve(&m, 4, 0);
	r2 = gbpf_ringbuf_reserve(&m, 4, 0);
	r3 = gbpf_ringbuf_reserve(&m, 4, 0);
	tap_ok(r1 && r2 && r3 && (uint8_t *)r2 - (uint8_t *)r1 == 16,
	       "%s: reservations 16 bytes apart", what);
	if (!r1 || !r2 || !r3)
		goto out;
	v = 1;
	memcpy(r1, &v, 4);
	v = 2;
	memcpy(r2, &v, 4);
	v = 3;
	memcpy(r3, &v, 4);
	gbpf_ringbuf_submit(&m, r3, 0);
	gbpf_ringbuf_discard(&m, r2, 0);
	s.n = 0;
	tap_ok(gbpf_ringbuf_consume(&m, collect, &s) == 0,
	       "%s: record 1 still busy: nothing consumed", what);
	gbpf_ringbuf_submit(&m, r1, 0);
	gbpf_ringbuf_submit(&m, r1, 0); /* double submit is ignored */
	tap_ok(gbpf_ringbuf_consume(&m, collect, &s) == 2 && s.vals[0] == 1 && s.vals[1] == 3,
	       "%s: after commit: records 1 and 3, discarded 2 skipped", what);
	gbpf_ringbuf_submit(&m, (uint8_t *)m.mem + 3, 0); /* bogus pointer: ignored */

	/* Fill: 4096 bytes hold 256 records of 8 data bytes (16 with header). */
	ok = 1;
	for (uint64_t w = 0; w < 256; w++)
		ok &= gbpf_ringbuf_output(&m, &w, 8, 0) == 0;
	tap_ok(ok, "%s: 256 records of 16 bytes fill 4096 bytes", what);
	tap_ok(gbpf_ringbuf_output(&m, big8, 8, 0) == -EAGAIN && gbpf_ringbuf_dropped(&m) == 1,
	       "%s: one more -> EAGAIN, 1 drop counted", what);
	tap_ok(gbpf_ringbuf_reserve(&m, 1, 0) == NULL && gbpf_ringbuf_dropped(&m) == 2,
	       "%s: reserve when full -> NULL, 2 drops", what);
	s.n = 0;
	s.stop_after = 100;
	tap_ok(gbpf_ringbuf_consume(&m, collect, &s) == 100, "%s: consumer stops when asked (100)",
	       what);
	s.stop_after = 0;
	tap_ok(gbpf_ringbuf_consume(&m, collect, &s) == 156 && s.vals[100] == 100 &&
		       s.vals[255] == 255,
	       "%s: the remaining 156 follow in order", what);

	/* Wrap-around: records of varying size never split; padding is invisible. */
	ok = 1;
	s.n = 0;
	for (uint32_t i = 0; i < 2000; i++) {
		uint8_t buf[300];
		uint32_t len = 4 + (i * 37) % 290;

		memset(buf, 0, sizeof(buf));
		memcpy(buf, &i, 4);
		ok &= gbpf_ringbuf_output(&m, buf, len, 0) == 0;
		if (i % 5 == 4)
			ok &= gbpf_ringbuf_consume(&m, collect, &s) == 5;
	}
	for (uint32_t i = 0; i < 2000 && ok; i++)
		ok &= s.vals[i] == i && s.sizes[i] == 4 + (i * 37) % 290;
	tap_ok(ok && s.n == 2000, "%s: 2000 variable-size records through the wrap, in order",
	       what);
	tap_ok(gbpf_ringbuf_reserve(&m, 4096, 0) == NULL && gbpf_ringbuf_dropped(&m) == 2,
	       "%s: a record larger than the ring is refused, not counted as a drop", what);
	tap_ok(gbpf_ringbuf_reserve(&m, 4, 1) == NULL, "%s: reserve flags must be 0", what);
	tap_ok(gbpf_ringbuf_output(&m, &v, 4, 8) == -EINVAL, "%s: unknown output flag -> EINVAL",
	       what);
out:
	gbpf_map_instance_destroy(&m);
}

static void test_subrings(void)
{
	struct gbpf_map_desc d = mk_desc("sub", GBPF_MAP_TYPE_GPU_RINGBUF, 0, 0, 1u << 16);
	struct gbpf_map_instance m;
	struct seen s = {0};
	int ok = 1;

	if (gbpf_map_instance_create(&m, &d, 132)) {
		tap_ok(0, "sub-rings create");
		return;
	}
	/* 132 wanted, 64 KiB / 4 KiB = 16 at most, power of two -> 16. */
	tap_ok(hdr_of(&m)->nr_slots == 16 && hdr_of(&m)->sub_size == 4096,
	       "132 sub-rings wanted: 16 of 4096 bytes made");
	for (uint32_t i = 0; i < 64; i++)
		ok &= gbpf_ringbuf_output_on(&m, i, &i, 4, 0) == 0;
	tap_ok(ok, "64 records spread over sub-rings by slot");
	tap_ok(gbpf_ringbuf_consume(&m, collect, &s) == 64, "consumer merges all sub-rings (64)");
	ok = 1;
	/* sub-ring by sub-ring: ring 0 has 0,16,32,48; ring 1 has 1,17,... */
	for (uint32_t i = 0; i < 64; i++)
		ok &= s.vals[i] == (i % 4) * 16 + i / 4;
	tap_ok(ok, "order kept within each sub-ring");
	gbpf_map_instance_destroy(&m);
}

static void test_perf(void)
{
	struct gbpf_map_desc d = mk_desc("perf", GBPF_MAP_TYPE_PERF_EVENT_ARRAY, 4, 4, 0);
	struct gbpf_map_instance m;
	struct seen s = {0};
	uint8_t big[1024] = {0};
	int ok = 1, n = 0;

	if (gbpf_map_instance_create(&m, &d, 4)) {
		tap_ok(0, "perf create");
		return;
	}
	tap_ok(gbpf_map_nr_slots(&m) == 4 && hdr_of(&m)->sub_size == GBPF_PERF_RING_SIZE,
	       "perf event array: 4 rings of 64 KiB");
	for (uint32_t i = 0; i < 8; i++)
		ok &= gbpf_perf_event_output(&m, i % 4, &i, 4) == 0;
	tap_ok(ok, "8 records on 4 rings");
	tap_ok(gbpf_perf_event_output(&m, 4, &n, 4) == -E2BIG, "ring 4 of 4 -> E2BIG");
	tap_ok(gbpf_ringbuf_consume(&m, collect, &s) == 8 && s.vals[0] == 0 && s.vals[1] == 4 &&
		       s.vals[2] == 1,
	       "consume reads ring 0 (0, 4) then ring 1 (1, ...)");
	while (gbpf_perf_event_output(&m, 2, big, sizeof(big)) == 0 && n < 1000)
		n++;
	tap_ok(n == 63 && gbpf_ringbuf_dropped(&m) == 1,
	       "ring 2 holds 63 records of 1 KiB, the 64th is a counted drop (%d)", n);
	tap_ok(gbpf_perf_event_output(&m, 1, big, sizeof(big)) == 0, "other rings are unaffected");
	tap_ok(gbpf_ringbuf_output(&m, big, 8, 0) == -EINVAL,
	       "ringbuf_output on a perf array -> EINVAL");
	gbpf_map_instance_destroy(&m);
}

/* The block is self-describing: a producer in another process, found from the memory alone. */
static void test_cross_process(void)
{
	struct gbpf_map_desc d = mk_desc("xp", GBPF_MAP_TYPE_RINGBUF, 0, 0, 8192);
	size_t size = gbpf_map_mem_size(&d, 1);
	struct gbpf_map_instance m;
	struct seen *s = calloc(1, sizeof(*s));
	uint32_t expect = 0;
	int status = 0, ok = 1, n, spins = 0;
	void *mem;
	pid_t pid;

	mem = mmap(NULL, size + 64, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED || !s || gbpf_map_mem_init(mem, size, &d, 1)) {
		tap_ok(0, "cross-process: shared mapping");
		free(s);
		return;
	}
	pid = fork();
	if (pid == 0) {
		/* child: knows only the address and size of the block */
		struct gbpf_map_instance cm = {.desc = NULL, .mem = mem, .mem_size = size};
		uint64_t failed = 0;

		for (uint32_t i = 0; i < 5000; i++)
			while (gbpf_ringbuf_output(&cm, &i, 4, 0) != 0) {
				failed++;
				usleep(10);
			}
		/* report the failures past the end of the map block */
		memcpy((uint8_t *)mem + size, &failed, sizeof(failed));
		_exit(0);
	}
	m = (struct gbpf_map_instance){.desc = NULL, .mem = mem, .mem_size = size};
	while (expect < 5000 && spins < 200000) {
		s->n = 0;
		n = gbpf_ringbuf_consume(&m, collect, s);
		if (n < 0) {
			ok = 0;
			break;
		}
		for (int i = 0; i < n && i < 4096; i++)
			ok &= s->vals[i] == expect++;
		if (n == 0) {
			usleep(50);
			spins++;
		}
	}
	waitpid(pid, &status, 0);
	tap_ok(ok && expect == 5000 && WIFEXITED(status),
	       "cross-process: 5000 records from a child process, in order (%u)", expect);
	{
		uint64_t failed;

		memcpy(&failed, (uint8_t *)mem + size, sizeof(failed));
		tap_ok(gbpf_ringbuf_dropped(&m) == failed,
		       "cross-process: the header counts exactly the child's %llu failed outputs",
		       (unsigned long long)failed);
	}
	munmap(mem, size + 64);
	free(s);
}

int main(void)
{
	test_basic(GBPF_MAP_TYPE_RINGBUF, "ringbuf");
	test_basic(GBPF_MAP_TYPE_GPU_RINGBUF, "gpu_ringbuf");
	test_subrings();
	test_perf();
	test_cross_process();
	return tap_done();
}
