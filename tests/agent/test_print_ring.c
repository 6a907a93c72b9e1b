/* SPDX-License-Identifier: MIT */
/*
 * The print ring between an agent and its controller (core/agent/print_ring.h):
 * both sides' mappings of one memfd, lines in order across the end of the data
 * area, a full ring refusing a line until the consumer frees space, the wake-up
 * request, a malformed record skipped without a read out of bounds, a bad
 * header refused, and four producer threads against a consumer thread with
 * every line delivered once, in each thread's order.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/agent/print_ring.h"
#include "tap.h"

struct seen {
	unsigned n;
	char last[GBPF_PRINT_RING_LINE_MAX + 1];
	size_t last_len;
	unsigned bad; /* lines not as expected (the check of each test) */
	unsigned next; /* the line number expected next ("line N") */
};

static void take_line(void *ctx, const char *text, size_t len)
{
	struct seen *s = ctx;
	char want[32];

	snprintf(want, sizeof(want), "line %u", s->next++);
	if (len != strlen(want) || memcmp(text, want, len))
		s->bad++;
	s->n++;
}

static void keep_line(void *ctx, const char *text, size_t len)
{
	struct seen *s = ctx;

	memcpy(s->last, text, len);
	s->last[len] = 0;
	s->last_len = len;
	s->n++;
}

/* Both sides: the controller's ring and the agent's mapping of the same memfd. */
static int open_pair(struct gbpf_print_ring *ctl, struct gbpf_print_ring *agent)
{
	char why[160] = "";
	int fd = gbpf_print_ring_create(ctl);

	if (fd < 0)
		return fd;
	if (gbpf_print_ring_attach(agent, fd, why, sizeof(why))) {
		tap_diag("attach: %s", why);
		gbpf_print_ring_unmap(ctl);
		return -EINVAL;
	}
	return 0;
}

static void test_order_and_wrap(void)
{
	struct gbpf_print_ring ctl, agent;
	struct seen s = {0};
	unsigned put = 0, rounds = 0;
	char line[32], big[GBPF_PRINT_RING_LINE_MAX + 100];
	int rc = 0;

	if (!tap_ok(open_pair(&ctl, &agent) == 0, "ring created and attached through its descriptor"))
		return;
	tap_ok(!gbpf_print_ring_pending(&ctl), "a new ring holds no line");
	/* four times round the data area, lines of 16 and 24 bytes: records meet its end at varied offsets */
	while (atomic_load(&ctl.hdr->head) < 4ull * GBPF_PRINT_RING_SIZE) {
		for (int k = 0; k < 7 && !rc; k++) {
			snprintf(line, sizeof(line), "line %u", put);
			rc = gbpf_print_ring_put(&agent, line, strlen(line));
			if (!rc)
				put++;
		}
		if (rc) {
			tap_diag("put refused a line at %u: %d", put, rc);
			break;
		}
		gbpf_print_ring_drain(&ctl, take_line, &s);
		rounds++;
	}
	tap_ok(!rc && s.n == put && s.bad == 0 && !gbpf_print_ring_pending(&ctl),
	       "%u lines through %u drains, round the data area 4 times: all in order (%u wrong)", put, rounds,
	       s.bad);

	/* the longest line whole, a longer one cut to it, an empty one */
	memset(big, 'x', sizeof(big));
	s.n = 0;
	gbpf_print_ring_put(&agent, big, GBPF_PRINT_RING_LINE_MAX);
	gbpf_print_ring_drain(&ctl, keep_line, &s);
	tap_ok(s.n == 1 && s.last_len == GBPF_PRINT_RING_LINE_MAX, "a line of %u bytes whole (%zu)",
	       GBPF_PRINT_RING_LINE_MAX, s.last_len);
	gbpf_print_ring_put(&agent, big, sizeof(big));
	gbpf_print_ring_drain(&ctl, keep_line, &s);
	tap_ok(s.n == 2 && s.last_len == GBPF_PRINT_RING_LINE_MAX, "a longer line cut to %u bytes (%zu)",
	       GBPF_PRINT_RING_LINE_MAX, s.last_len);
	gbpf_print_ring_put(&agent, "", 0);
	gbpf_print_ring_drain(&ctl, keep_line, &s);
	tap_ok(s.n == 3 && s.last_len == 0, "an empty line");
	gbpf_print_ring_unmap(&agent);
	gbpf_print_ring_unmap(&ctl);
}

static void test_full_and_wake(void)
{
	struct gbpf_print_ring ctl, agent;
	struct seen s = {0};
	char line[32];
	unsigned put = 0;
	uint64_t used;
	int rc;

	if (open_pair(&ctl, &agent))
		return;

	do {
		snprintf(line, sizeof(line), "line %u", put);
		rc = gbpf_print_ring_put(&agent, line, strlen(line));
		put += rc == 0;
	} while (rc == 0 && put < GBPF_PRINT_RING_SIZE);
	/* refused only when the record (8 bytes and the text rounded up to 8) does not fit */
	used = atomic_load(&ctl.hdr->head) - atomic_load(&ctl.hdr->tail);
	tap_ok(rc == -EAGAIN && used <= GBPF_PRINT_RING_SIZE &&
		       used + 8 + ((strlen(line) + 7) & ~7ul) > GBPF_PRINT_RING_SIZE,
	       "full after %u lines (%llu bytes): the next is refused (%d)", put, (unsigned long long)used, rc);
	gbpf_print_ring_drain(&ctl, take_line, &s);
	snprintf(line, sizeof(line), "line %u", put);
	rc = gbpf_print_ring_put(&agent, line, strlen(line));
	gbpf_print_ring_drain(&ctl, take_line, &s);
	tap_ok(rc == 0 && s.n == put + 1 && s.bad == 0, "once drained it takes lines again: %u in order", s.n);

	tap_ok(gbpf_print_ring_put(&agent, "line x", 6) == 0, "no wake-up asked: put answers 0");
	gbpf_print_ring_drain(&ctl, keep_line, &s);
	gbpf_print_ring_want_wake(&ctl, 1);
	rc = gbpf_print_ring_put(&agent, "a", 1);
	tap_ok(rc == 1 && gbpf_print_ring_pending(&ctl), "wake-up asked: the first line answers 1 (wake it)");
	tap_ok(gbpf_print_ring_put(&agent, "b", 1) == 0, "the next one 0: one wake-up a request");
	gbpf_print_ring_want_wake(&ctl, 1);
	gbpf_print_ring_want_wake(&ctl, 0);
	tap_ok(gbpf_print_ring_put(&agent, "c", 1) == 0, "a request withdrawn: 0");
	gbpf_print_ring_unmap(&agent);
	gbpf_print_ring_unmap(&ctl);
}

static void test_malformed(void)
{
	struct gbpf_print_ring ctl, agent, bad;
	struct seen s = {0};
	char why[160] = "";
	uint32_t huge = GBPF_PRINT_RING_LINE_MAX + 1;
	int fd;

	if (open_pair(&ctl, &agent))
		return;
	gbpf_print_ring_put(&agent, "line 0", 6);
	gbpf_print_ring_put(&agent, "line 1", 6);
	/* the application overwrote the second record's length */
	memcpy(agent.data + 16, &huge, 4);
	tap_ok(gbpf_print_ring_drain(&ctl, take_line, &s) == -EPROTO && s.n == 1 && !gbpf_print_ring_pending(&ctl),
	       "a record longer than a line: the drain stops there, the rest skipped (%u line before)", s.n);
	s.next = 2;
	gbpf_print_ring_put(&agent, "line 2", 6);
	tap_ok(gbpf_print_ring_drain(&ctl, take_line, &s) == 1 && s.bad == 0, "lines after it come through");
	/* a head far past the tail */
	atomic_store(&agent.hdr->head, atomic_load(&agent.hdr->tail) + 2 * GBPF_PRINT_RING_SIZE);
	tap_ok(gbpf_print_ring_drain(&ctl, take_line, &s) == -EPROTO, "a head past the ring's size refused");
	gbpf_print_ring_unmap(&agent);

	/* a descriptor whose header is not a ring's */
	fd = gbpf_print_ring_create(&bad);
	if (fd >= 0) {
		bad.hdr->magic = 0;
		tap_ok(gbpf_print_ring_attach(&agent, fd, why, sizeof(why)) == -EINVAL && strstr(why, "bad header"),
		       "attach refuses a bad header: %s", why);
		gbpf_print_ring_unmap(&bad);
	}
	fd = memfd_create("not-a-ring", MFD_CLOEXEC);
	if (fd >= 0 && !ftruncate(fd, 100))
		tap_ok(gbpf_print_ring_attach(&agent, fd, why, sizeof(why)) == -EINVAL && strstr(why, "too small"),
		       "attach refuses a file too small: %s", why);
	gbpf_print_ring_unmap(&ctl);
}

/* ---- producers on threads against a consumer ---------------------------------------------- */

#define THREADS 4
#define PER_THREAD 20000

struct mt {
	struct gbpf_print_ring *agent;
	pthread_mutex_t lock; /* the agent's pring_lock */
	atomic_int done;
	unsigned next[THREADS]; /* consumer: the number expected next from each thread */
	unsigned bad, lines;
};

struct producer {
	struct mt *mt;
	unsigned id;
};

static void *produce(void *arg)
{
	struct producer *p = arg;
	char line[32];

	for (unsigned i = 0; i < PER_THREAD; i++) {
		int n = snprintf(line, sizeof(line), "t%u %u", p->id, i), rc;

		do {
			pthread_mutex_lock(&p->mt->lock);
			rc = gbpf_print_ring_put(p->mt->agent, line, (size_t)n);
			pthread_mutex_unlock(&p->mt->lock);
		} while (rc == -EAGAIN);
	}
	atomic_fetch_add(&p->mt->done, 1);
	return NULL;
}

static void consume_line(void *ctx, const char *text, size_t len)
{
	struct mt *mt = ctx;
	unsigned t, i;
	char buf[32];

	mt->lines++;
	if (len >= sizeof(buf)) {
		mt->bad++;
		return;
	}
	memcpy(buf, text, len);
	buf[len] = 0;
	if (sscanf(buf, "t%u %u", &t, &i) != 2 || t >= THREADS || i != mt->next[t])
		mt->bad++;
	else
		mt->next[t]++;
}

static void test_threads(void)
{
	struct gbpf_print_ring ctl, agent;
	struct mt mt = {.agent = &agent, .lock = PTHREAD_MUTEX_INITIALIZER};
	struct producer p[THREADS];
	pthread_t th[THREADS];

	if (open_pair(&ctl, &agent))
		return;
	for (unsigned t = 0; t < THREADS; t++) {
		p[t] = (struct producer){&mt, t};
		pthread_create(&th[t], NULL, produce, &p[t]);
	}
	while (atomic_load(&mt.done) < THREADS || gbpf_print_ring_pending(&ctl))
		gbpf_print_ring_drain(&ctl, consume_line, &mt);
	for (unsigned t = 0; t < THREADS; t++)
		pthread_join(th[t], NULL);
	gbpf_print_ring_drain(&ctl, consume_line, &mt);
	tap_ok(mt.lines == THREADS * PER_THREAD && mt.bad == 0,
	       "%d producer threads x %d lines against a consumer: %u delivered, each thread's in order (%u wrong)",
	       THREADS, PER_THREAD, mt.lines, mt.bad);
	gbpf_print_ring_unmap(&agent);
	gbpf_print_ring_unmap(&ctl);
}

int main(void)
{
	test_order_and_wrap();
	test_full_and_wake();
	test_malformed();
	test_threads();
	return tap_done();
}
