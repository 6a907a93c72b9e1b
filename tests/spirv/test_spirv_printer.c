// SPDX-License-Identifier: MIT
/*
 * The host side of the SPIR-V print queue (plugins/spirv/spv_printq_host.c),
 * without a device: records published in the queue as device code does
 * (spirv.h), a sink that refuses lines for a while, for longer than a
 * flush waits, or for good, and what a flush after a kernel delivers or
 * counts as lost. A line the sink refuses for now is never lost: the flush
 * waits for it a while, then the printer thread delivers it when the sink
 * takes lines again. Lost are device drops and lines refused for good.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "spirv.h"
#include "tests/tap.h"

struct sink {
	struct timespec accept_after; /* refuse (-EAGAIN) until then */
	atomic_int never;             /* refuse (-EAGAIN) while set */
	atomic_int fail;              /* refuse for good (-EIO) while set */
	atomic_uint lines;
	char last[64];
};

static int after(const struct timespec *t)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec > t->tv_sec || (now.tv_sec == t->tv_sec && now.tv_nsec >= t->tv_nsec);
}

static int sink_print(void *ctx, const char *text, size_t len)
{
	struct sink *s = ctx;

	if (atomic_load(&s->fail))
		return -EIO;
	if (atomic_load(&s->never) || !after(&s->accept_after))
		return -EAGAIN;
	s->lines++;
	snprintf(s->last, sizeof(s->last), "%.*s", (int)len, text);
	return 0;
}

static void in_ms(struct timespec *t, long ms)
{
	clock_gettime(CLOCK_MONOTONIC, t);
	t->tv_sec += ms / 1000;
	t->tv_nsec += (ms % 1000) * 1000000L;
	if (t->tv_nsec >= 1000000000L) {
		t->tv_sec++;
		t->tv_nsec -= 1000000000L;
	}
}

static void sleep_ms(long ms)
{
	struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&t, NULL);
}

/* Publish a puts record of @p text at the queue's next position, as the device helper does. */
static void publish(struct gbpf_spirv_printq_hdr *q, const char *text)
{
	uint64_t pos = q->head++;
	unsigned char *rec = (unsigned char *)q + GBPF_SPIRV_PRINTQ_HDR +
			     (pos & (q->nslots - 1)) * (uint64_t)GBPF_SPIRV_PRINTQ_REC_SIZE;
	uint32_t kind = GBPF_SPIRV_PRINTQ_PUTS, len = (uint32_t)strlen(text);

	memcpy(rec + 8, &kind, 4);
	memcpy(rec + 12, &len, 4);
	memcpy(rec + GBPF_SPIRV_PRINTQ_TEXT_OFF, text, len);
	atomic_store_explicit((_Atomic uint64_t *)(void *)rec, pos + 1, memory_order_release);
}

/* Wait up to 2 s for the printer thread to have delivered @p n lines in all. */
static int delivered_soon(struct gbpf_spirv_printer *p, uint64_t n)
{
	for (int i = 0; i < 400 && gbpf_spirv_printer_delivered(p) < n; i++)
		sleep_ms(5);
	return gbpf_spirv_printer_delivered(p) == n;
}

int main(void)
{
	size_t size = gbpf_spirv_printq_size(16);
	void *mem = aligned_alloc(64, (size + 63) & ~(size_t)63);
	struct gbpf_spirv_printq_hdr *q = mem;
	struct gbpf_spirv_printer *p = NULL;
	struct sink s = {0};
	uint64_t lost;

	if (!tap_ok(mem && !gbpf_spirv_printq_init(mem, size, 16), "a queue of 16 records")) {
		free(mem);
		return tap_done();
	}
	/* the sink refuses for 400 ms; the thread takes the line at once and offers it meanwhile */
	in_ms(&s.accept_after, 400);
	publish(q, "first line");
	if (!tap_ok(!gbpf_spirv_printer_start(mem, sink_print, &s, &p), "printer started")) {
		free(mem);
		return tap_done();
	}
	sleep_ms(300);
	/* the kernel's flush, 300 ms later, waits up to 250 ms: the sink takes it at 400 */
	lost = gbpf_spirv_printer_flush(p, 250);
	tap_ok(lost == 0 && atomic_load(&s.lines) == 1 && !strncmp(s.last, "first line", 10),
	       "a line refused since before the flush is delivered within the flush's wait (lost %llu, lines %u)",
	       (unsigned long long)lost, atomic_load(&s.lines));
	/* refused for longer than the flush waits: not lost, the thread delivers it afterwards */
	atomic_store(&s.never, 1);
	publish(q, "second line");
	lost = gbpf_spirv_printer_flush(p, 50);
	tap_ok(lost == 0 && atomic_load(&s.lines) == 1,
	       "a line refused past the flush's wait is not lost, not delivered yet (lost %llu)",
	       (unsigned long long)lost);
	atomic_store(&s.never, 0);
	tap_ok(delivered_soon(p, 2) && !strncmp(s.last, "second line", 11),
	       "the printer thread delivers it once the sink takes lines again");
	/* device drops (a full queue) are reported, once */
	atomic_store_explicit((_Atomic uint64_t *)&q->drops, 3, memory_order_relaxed);
	lost = gbpf_spirv_printer_flush(p, 50);
	tap_ok(lost == 3 && gbpf_spirv_printer_flush(p, 50) == 0,
	       "device drops are reported by one flush (%llu of 3)", (unsigned long long)lost);
	/* a sink that refuses a line for good: counted lost, and the next line goes through */
	atomic_store(&s.fail, 1);
	publish(q, "third line");
	lost = gbpf_spirv_printer_flush(p, 50);
	atomic_store(&s.fail, 0);
	publish(q, "fourth line");
	tap_ok(lost == 1 && gbpf_spirv_printer_flush(p, 250) == 0 && delivered_soon(p, 3) &&
		       !strncmp(s.last, "fourth line", 11),
	       "a line refused for good is counted lost, the next is delivered (lost %llu)", (unsigned long long)lost);
	gbpf_spirv_printer_stop(p, 50);
	free(mem);
	return tap_done();
}
