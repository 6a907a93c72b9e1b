/* SPDX-License-Identifier: MIT */
/*
 * The print ring between an agent and its controller (print_ring.h says why
 * and how it is laid out). The consumer reads memory the application's
 * process can write, so every record is checked against the bytes
 * published before it is read, and the ring's geometry is the consumer's
 * own, never the header's.
 */
#include "core/agent/print_ring.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* The data area starts one page in: the header's cache lines stay apart from it. */
#define PRINT_RING_DATA_OFF 4096u
_Static_assert(sizeof(struct gbpf_print_ring_hdr) <= PRINT_RING_DATA_OFF, "the header fits its page");

/* Bytes of a record of @p len text bytes: the u32 length, a u32 0, the text padded to 8. */
static uint64_t record_bytes(uint64_t len)
{
	return 8 + ((len + 7) & ~7ull);
}

static void ring_set(struct gbpf_print_ring *r, void *base, size_t map_size, uint64_t size)
{
	r->hdr = base;
	r->data = (unsigned char *)base + PRINT_RING_DATA_OFF;
	r->mask = size - 1;
	r->map_size = map_size;
}

int gbpf_print_ring_create(struct gbpf_print_ring *r)
{
	size_t map_size = PRINT_RING_DATA_OFF + GBPF_PRINT_RING_SIZE;
	struct gbpf_print_ring_hdr *h;
	void *base;
	int fd, err;

	memset(r, 0, sizeof(*r));
	fd = memfd_create("gbpf-print", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)map_size) ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)) {
		err = -errno;
		close(fd);
		return err;
	}
	base = mmap(NULL, map_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED) {
		err = -errno;
		close(fd);
		return err;
	}
	h = base;
	h->magic = GBPF_PRINT_RING_MAGIC;
	h->version = GBPF_PRINT_RING_VERSION;
	h->size = GBPF_PRINT_RING_SIZE;
	ring_set(r, base, map_size, GBPF_PRINT_RING_SIZE);
	return fd;
}

int gbpf_print_ring_attach(struct gbpf_print_ring *r, int fd, char *why, size_t why_size)
{
	struct gbpf_print_ring_hdr *h;
	struct stat st;
	void *base;
	uint64_t size;

	memset(r, 0, sizeof(*r));
	if (fstat(fd, &st) || st.st_size < (off_t)(PRINT_RING_DATA_OFF + 4096)) {
		snprintf(why, why_size, "print ring: %s", fstat(fd, &st) ? strerror(errno) : "too small");
		close(fd);
		return -EINVAL;
	}
	base = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (base == MAP_FAILED) {
		snprintf(why, why_size, "print ring: mmap: %s", strerror(errno));
		return -errno;
	}
	h = base;
	size = h->size;
	if (h->magic != GBPF_PRINT_RING_MAGIC || h->version != GBPF_PRINT_RING_VERSION || !size ||
	    (size & (size - 1)) || size != (uint64_t)st.st_size - PRINT_RING_DATA_OFF) {
		snprintf(why, why_size, "print ring: bad header (magic 0x%08x, version %u, %llu data bytes in %lld)",
			 h->magic, h->version, (unsigned long long)size, (long long)st.st_size);
		munmap(base, (size_t)st.st_size);
		return -EINVAL;
	}
	ring_set(r, base, (size_t)st.st_size, size);
	return 0;
}

void gbpf_print_ring_unmap(struct gbpf_print_ring *r)
{
	if (r->hdr)
		munmap(r->hdr, r->map_size);
	memset(r, 0, sizeof(*r));
}

int gbpf_print_ring_put(struct gbpf_print_ring *r, const char *text, size_t len)
{
	struct gbpf_print_ring_hdr *h = r->hdr;
	uint64_t head, tail, pos, need, to_end, size = r->mask + 1;
	uint32_t word[2] = {0, 0};

	if (len > GBPF_PRINT_RING_LINE_MAX)
		len = GBPF_PRINT_RING_LINE_MAX;
	need = record_bytes(len);
	head = atomic_load_explicit(&h->head, memory_order_relaxed);
	/* acquire: the consumer is done reading the space it gave back */
	tail = atomic_load_explicit(&h->tail, memory_order_acquire);
	pos = head & r->mask;
	to_end = size - pos;
	if (head - tail + need + (to_end < need ? to_end : 0) > size)
		return -EAGAIN;
	if (to_end < need) {
		word[0] = GBPF_PRINT_RING_PAD;
		memcpy(r->data + pos, word, 4);
		head += to_end;
		pos = 0;
	}
	word[0] = (uint32_t)len;
	memcpy(r->data + pos, word, 8);
	memcpy(r->data + pos + 8, text, len);
	/*
	 * seq_cst, as the load of waiting after it and the consumer's store of waiting before its
	 * look at head: either the consumer sees this line before it blocks, or we see its request.
	 */
	atomic_store_explicit(&h->head, head + need, memory_order_seq_cst);
	if (atomic_load_explicit(&h->waiting, memory_order_seq_cst) &&
	    atomic_exchange_explicit(&h->waiting, 0, memory_order_seq_cst))
		return 1;
	return 0;
}

long gbpf_print_ring_drain(struct gbpf_print_ring *r, gbpf_print_ring_line_fn fn, void *ctx)
{
	struct gbpf_print_ring_hdr *h = r->hdr;
	uint64_t size = r->mask + 1, head, tail;
	long n = 0;

	head = atomic_load_explicit(&h->head, memory_order_acquire);
	tail = atomic_load_explicit(&h->tail, memory_order_relaxed);
	if (head == tail)
		return 0; /* the common case while the controller polls: no store to the line */
	if (head - tail > size || (tail & 7))
		goto bad;
	while (tail != head) {
		uint64_t pos = tail & r->mask, to_end = size - pos, rec;
		uint32_t len;

		memcpy(&len, r->data + pos, 4);
		if (len == GBPF_PRINT_RING_PAD) {
			if (to_end > head - tail)
				goto bad;
			tail += to_end;
			continue;
		}
		rec = record_bytes(len);
		if (len > GBPF_PRINT_RING_LINE_MAX || rec > to_end || rec > head - tail)
			goto bad;
		fn(ctx, (const char *)r->data + pos + 8, len);
		tail += rec;
		n++;
		/* release: the producer may reuse the record's bytes once it sees the new tail */
		atomic_store_explicit(&h->tail, tail, memory_order_release);
	}
	atomic_store_explicit(&h->tail, tail, memory_order_release);
	return n;
bad:
	atomic_store_explicit(&h->tail, head, memory_order_release);
	return -EPROTO;
}

int gbpf_print_ring_pending(const struct gbpf_print_ring *r)
{
	return atomic_load_explicit(&r->hdr->head, memory_order_acquire) !=
	       atomic_load_explicit(&r->hdr->tail, memory_order_relaxed);
}

void gbpf_print_ring_want_wake(struct gbpf_print_ring *r, int on)
{
	atomic_store_explicit(&r->hdr->waiting, on ? 1u : 0u, memory_order_seq_cst);
	/* the drain's load of head comes after the request in the single order put's accesses are in */
	atomic_thread_fence(memory_order_seq_cst);
}
