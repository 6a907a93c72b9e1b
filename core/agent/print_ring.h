/* SPDX-License-Identifier: MIT */
/*
 * core/agent/print_ring.h - device print lines from an agent to its
 * controller through shared memory (docs/PROCESS_MODEL.md, "Print lines").
 *
 * Why: a line sent on the agent's socket costs a send() in the agent, and a
 * poll() and a recv() in the controller even while it busy-polls: about
 * 6 us from the agent's hand-over to the controller's receipt on the H200's
 * host (bench/agent, session 19), half and more of the GPU -> user printk
 * latency (#8: within 10 us). Through this ring a line costs stores and
 * loads only, while the controller polls; a controller about to block asks
 * for a wake-up (waiting), and the next line's producer sends it one
 * GBPF_AGENT_MSG_WAKE frame on the socket.
 *
 * The controller creates one ring per agent (a memfd, passed with SETUP as
 * its second descriptor) and is its only consumer; the agent's threads
 * produce under the agent's own lock. Layout: this header (one cache line a
 * counter, so that producer and consumer do not share lines), then `size`
 * bytes of records. A record is a u32 length and the line's bytes, padded to
 * 8; one that would not fit before the end of the data is preceded by a pad
 * record (length GBPF_PRINT_RING_PAD) that fills the rest. head and tail
 * count bytes since the start and only grow.
 */
#ifndef GBPF_CORE_AGENT_PRINT_RING_H
#define GBPF_CORE_AGENT_PRINT_RING_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define GBPF_PRINT_RING_MAGIC 0x52504247u /* "GBPR" */
#define GBPF_PRINT_RING_VERSION 1u
/** Data bytes of the ring the controller creates (a power of two). */
#define GBPF_PRINT_RING_SIZE (1u << 18)
/** Length of a pad record: the rest of the data area is unused, go on at its start. */
#define GBPF_PRINT_RING_PAD 0xffffffffu
/** Longest line a record holds (as a PRINT message's text). */
#define GBPF_PRINT_RING_LINE_MAX 4096u

struct gbpf_print_ring_hdr {
	uint32_t magic;   /**< GBPF_PRINT_RING_MAGIC */
	uint32_t version; /**< GBPF_PRINT_RING_VERSION */
	uint64_t size;    /**< data bytes after the header, a power of two */
	_Alignas(64) _Atomic uint64_t head; /**< bytes published (producers, under the agent's lock) */
	_Alignas(64) _Atomic uint64_t tail; /**< bytes consumed (the controller) */
	/** 1: the controller is about to block in poll(); the next producer clears it and wakes it */
	_Alignas(64) _Atomic uint32_t waiting;
};
_Static_assert(sizeof(struct gbpf_print_ring_hdr) == 256, "a cache line each: geometry, head, tail, waiting");

/** A ring mapped by one side. */
struct gbpf_print_ring {
	struct gbpf_print_ring_hdr *hdr;
	unsigned char *data;
	uint64_t mask; /**< size - 1 */
	size_t map_size;
};

/**
 * Controller: create an initialised ring of GBPF_PRINT_RING_SIZE data bytes in
 * a memfd (sealed against resizing) and map it. @return the memfd (kept
 * open by the caller, who closes it) or -errno.
 */
int gbpf_print_ring_create(struct gbpf_print_ring *r);
/**
 * Agent: map the ring of @p fd after checking its header against the file
 * size. Closes fd either way. @return 0 or -EINVAL / -errno with the reason in why
 */
int gbpf_print_ring_attach(struct gbpf_print_ring *r, int fd, char *why, size_t why_size);
/** Unmap (either side). */
void gbpf_print_ring_unmap(struct gbpf_print_ring *r);

/**
 * Producer: append @p len bytes of @p text (at most GBPF_PRINT_RING_LINE_MAX).
 * The caller serialises producers. @return 0; -EAGAIN when the ring is full
 * (the caller keeps the line and tries again later); 1 when the line is
 * published and the controller asked to be woken (send it a WAKE frame).
 */
int gbpf_print_ring_put(struct gbpf_print_ring *r, const char *text, size_t len);

/** Consumer: handle one line (not NUL-terminated). */
typedef void (*gbpf_print_ring_line_fn)(void *ctx, const char *text, size_t len);
/**
 * Consumer: hand every published line to @p fn in order and free their
 * space. A malformed record (a producer's bug, or the application writing
 * the ring's memory) ends the drain and skips everything published (tail set
 * to head: those lines are lost). @return lines handed, or -EPROTO
 */
long gbpf_print_ring_drain(struct gbpf_print_ring *r, gbpf_print_ring_line_fn fn, void *ctx);
/** Consumer: 1 when a line is waiting. */
int gbpf_print_ring_pending(const struct gbpf_print_ring *r);
/**
 * Consumer, before it blocks: ask producers for a wake-up (@p on 1), or stop
 * asking (0, after the block). Call drain after asking: a line published
 * before the request was seen is there to take.
 */
void gbpf_print_ring_want_wake(struct gbpf_print_ring *r, int on);

#endif /* GBPF_CORE_AGENT_PRINT_RING_H */
