// SPDX-License-Identifier: MIT
/*
 * The host side of the SPIR-V print queue (plugins/spirv/spv_printq_host.c),
 * without a device: records published in the queue as device code does
 * (docs: spirv.h), a sink that refuses lines for a while, and what a flush
 * after a kernel delivers or counts as lost. A flush gives a line the sink
 * refuses its whole wait, also a line the printer thread has been offering
 * since before the flush; a line refused past the wait is counted.
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
	struct timespec accept_after; /* refuse (-EAGAIN) until then; tv_sec 0: never accept */
	int never;
	unsigned lines;
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

	if (s->never || !after(&s->accept_after))
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

int main(void)
{
	size_t size = gbpf_spirv_printq_size(16);
	void *mem = aligned_alloc(64, (size + 63) & ~(size_t)63);
	struct gbpf_spirv_printer *p = NULL;
	struct sink s = {0};
	uint64_t lost;

	if (!tap_ok(mem && !gbpf_spirv_printq_init(mem, size, 16), "a queue of 16 records")) {
		free(mem);
		return tap_done();
	}
	/* the sink refuses for 400 ms; the thread takes the line at once and offers it meanwhile */
	in_ms(&s.accept_after, 400);
	publish(mem, "first line");
	if (!tap_ok(!gbpf_spirv_printer_start(mem, sink_print, &s, &p), "printer started")) {
		free(mem);
		return tap_done();
	}
	sleep_ms(300);
	/* the kernel's flush, 300 ms later, waits up to 250 ms: the sink takes it at 400 */
	lost = gbpf_spirv_printer_flush(p, 250);
	tap_ok(lost == 0 && s.lines == 1 && !strncmp(s.last, "first line", 10),
	       "a line refused since before the flush gets the flush's whole wait (lost %llu, lines %u, '%s')",
	       (unsigned long long)lost, s.lines, s.last);
	tap_ok(gbpf_spirv_printer_delivered(p) == 1, "one line delivered");
	/* a sink that never takes a line: it is lost after the wait, and counted once */
	s.never = 1;
	publish(mem, "second line");
	lost = gbpf_spirv_printer_flush(p, 50);
	tap_ok(lost == 1 && s.lines == 1, "a line refused for the flush's whole wait is counted lost (lost %llu)",
	       (unsigned long long)lost);
	tap_ok(gbpf_spirv_printer_flush(p, 50) == 0, "a lost line is reported by one flush only");
	s.never = 0;
	publish(mem, "third line");
	lost = gbpf_spirv_printer_flush(p, 250);
	tap_ok(lost == 0 && s.lines == 2 && !strncmp(s.last, "third line", 10),
	       "the next line goes through (lost %llu, '%s')", (unsigned long long)lost, s.last);
	gbpf_spirv_printer_stop(p, 50);
	free(mem);
	return tap_done();
}
