/* SPDX-License-Identifier: MIT */
/*
 * plugins/cuda/cuda_devmaps.c - map placement for `gbpf run` on CUDA:
 * device working copies mirrored to the shared memory, or the shared memory
 * itself registered for the GPU (cuda_devmaps.h says which and why).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cuda_devmaps.h"
#include "map_mirror.h"
#include "maps/map.h"
#include "maps/map_layout.h"
#include "plugins/cuda/intercept/intercept.h"

#define DM_HOSTREGISTER_PORTABLE 0x01u
#define DM_HOSTREGISTER_DEVICEMAP 0x02u
#define DM_ERROR_ALREADY_REGISTERED 712
#define DM_STREAM_NON_BLOCKING 0x1u
#define DM_ATTR_MULTIPROCESSOR_COUNT 16
/*
 * Device sub-rings per SM (rounded down to a power of two in all): the
 * device code spreads an SM's warps over them (ptx_ring.c), so a sub-ring's
 * producer_pos is contended by a few warps, not by all of an SM's. 16: on
 * the H200 kernelretsnoop (2^20 threads) took 74.1 us with 16, 77.9 with 8;
 * 64 was no faster and the forwarder's per-sub-ring copies then did not
 * drain 12 M records within the exit wait. GBPF_CUDA_RING_SUBS overrides;
 * GBPF_CUDA_RING_HOLD=1 forwards rings only at exit (to measure the
 * forwarder's effect on kernels: 77.9 vs 79.9 us there).
 */
#define DM_RING_SUBS_PER_SM 16u
/** GBPF_CUDA_RING_SUBS (sub-rings per SM) accepts 1 .. this. */
#define DM_RING_SUBS_PER_SM_MAX 128u
/** Device ring size per ring map (GBPF_CUDA_RING_MB overrides). */
#define DM_RING_BYTES_DEFAULT (128ull << 20)
#define DM_SNAPSHOT_PERIOD_NS 100000000ull
#define DM_SYNC_SNAPSHOT_MIN_NS 5000000ull
/** How long the exit flush waits for a slow controller before counting records as lost. */
#define DM_EXIT_WAIT_NS 3000000000ull

typedef CUresult (*dm_alloc_fn)(CUdeviceptr *, size_t);
typedef CUresult (*dm_free_fn)(CUdeviceptr);
typedef CUresult (*dm_d2h_async_fn)(void *, CUdeviceptr, size_t, CUstream);
typedef CUresult (*dm_h2d_async_fn)(CUdeviceptr, const void *, size_t, CUstream);
typedef CUresult (*dm_d2h_fn)(void *, CUdeviceptr, size_t);
typedef CUresult (*dm_h2d_fn)(CUdeviceptr, const void *, size_t);
typedef CUresult (*dm_memset_async_fn)(CUdeviceptr, unsigned char, size_t, CUstream);
typedef CUresult (*dm_memset_fn)(CUdeviceptr, unsigned char, size_t);
typedef CUresult (*dm_stream_create_fn)(CUstream *, unsigned int);
typedef CUresult (*dm_stream_sync_fn)(CUstream);
typedef CUresult (*dm_void_fn)(void);
typedef CUresult (*dm_ctx_set_fn)(CUcontext);
typedef CUresult (*dm_ctx_get_device_fn)(CUdevice *);
typedef CUresult (*dm_device_attr_fn)(int *, int, CUdevice);
typedef CUresult (*dm_host_register_fn)(void *, size_t, unsigned int);
typedef CUresult (*dm_host_devptr_fn)(CUdeviceptr *, void *, unsigned int);

enum dm_place { DM_HOST, DM_DEVICE };

typedef CUresult (*dm_ctx_get_fn)(CUcontext *);
typedef CUresult (*dm_stream_destroy_fn)(CUstream);
typedef CUresult (*dm_host_unregister_fn)(void *);

/*
 * The device copies of one context. Device memory belongs to a context, so
 * every context that launches an instrumented kernel gets its own copies
 * (two GPUs, or two contexts on one GPU). A snapshot adds what a copy
 * changed since its last snapshot into the host block (atomically): the
 * host block is the sum of every context's and every process's work.
 */
struct dm_ctx {
	struct ca_devmaps *d;
	CUcontext ctx;
	CUstream stream;                /* our non-blocking stream in this context, or NULL */
	struct gbpf_dev_mem_ops ops;    /* .ctx = this */
	struct gbpf_map_mirror *mirror; /* per map; only device-placed ones are set */
	CUdeviceptr *table;             /* per map: the address modules of this context use */
	uint8_t **last;                 /* per snapshot map: the device block at its last merge */
	struct dm_ctx *next;
};

struct ca_devmaps {
	pthread_mutex_t lock; /* contexts, mirrors, streams, copies */
	/*
	 * Held by a snapshot from start to end: the stage buffer, the contexts'
	 * last copies, and the contexts themselves (none is freed meanwhile).
	 * Taken before lock, never while holding it.
	 */
	pthread_mutex_t snap_lock;
	struct gbpf_map_instance *maps;
	size_t n;
	enum dm_place *place;
	ca_devmaps_report_fn report;
	void *report_ctx;
	int state; /* 0 not set up, 1 ready, -1 failed */
	char failed_why[256];
	struct dm_ctx *ctxs; /* live contexts, newest first */
	size_t n_ctxs;
	uint8_t *stage;        /* a device block's snapshot, as large as the largest snapshot map */
	int stage_pinned;      /* stage registered for the GPU: a snapshot's copy is DMA */
	atomic_int merge_lost_reported; /* hash keys the host block had no room for: said once */
	void *reg_addr;        /* the region registered for the GPU (cuMemHostRegister) */
	struct {
		dm_alloc_fn alloc;
		dm_free_fn free;
		dm_d2h_async_fn d2h_async;
		dm_h2d_async_fn h2d_async;
		dm_d2h_fn d2h;
		dm_h2d_fn h2d;
		dm_memset_async_fn memset_async;
		dm_memset_fn memset;
		dm_stream_sync_fn stream_sync;
		dm_stream_create_fn stream_create;
		dm_stream_destroy_fn stream_destroy;
		dm_ctx_set_fn ctx_set;
		dm_ctx_get_fn ctx_get;
		dm_void_fn ctx_sync;
		dm_host_register_fn host_register;
		dm_host_unregister_fn host_unregister;
	} cu;
	pthread_t forwarder;
	atomic_int forwarder_running; /* read by application threads (sync points) */
	atomic_int stop;
	atomic_int dirty;
	atomic_int sync_seen; /* the application synchronised: snapshot soon (forwarder) */
	int ring_hold;        /* GBPF_CUDA_RING_HOLD=1: rings forwarded only at exit (measurements) */
	uint64_t last_snapshot_ns;
	uint64_t snapshots;
	int finalised;
	uint32_t *thread_slots_reported; /* per map: largest launch already reported */
};

/* The atexit handler's target: the one devmaps of the process (the agent attaches once). */
static struct ca_devmaps *ca_devmaps_exit_target;

static uint64_t dm_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void dm_report(struct ca_devmaps *d, int is_error, const char *kernel, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void dm_report(struct ca_devmaps *d, int is_error, const char *kernel, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (!d->report)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	d->report(d->report_ctx, is_error, kernel, msg);
}

static const char *dm_name(const struct ca_devmaps *d, size_t i)
{
	return d->maps[i].desc && d->maps[i].desc->name ? d->maps[i].desc->name : "?";
}

/*
 * Make @p c current on this thread, returning what was current: our copies
 * run on application threads (sync points) and on our own threads, and the
 * application's current context must be what it was afterwards.
 */
static CUcontext dm_enter(struct ca_devmaps *d, const struct dm_ctx *c)
{
	CUcontext cur = NULL;

	if (d->cu.ctx_get)
		d->cu.ctx_get(&cur);
	if (cur != c->ctx && d->cu.ctx_set)
		d->cu.ctx_set(c->ctx);
	return cur;
}

static void dm_leave(struct ca_devmaps *d, const struct dm_ctx *c, CUcontext prev)
{
	if (prev != c->ctx && d->cu.ctx_set)
		d->cu.ctx_set(prev);
}

/* ---- memory operations on our own non-blocking stream (never the application's) ---- */

static int op_alloc(void *ctx, uint64_t *p, size_t n)
{
	struct dm_ctx *c = ctx;
	CUdeviceptr dp = 0;

	if (c->d->cu.alloc(&dp, n) != GBPF_CUDA_SUCCESS)
		return -ENOMEM;
	*p = dp;
	return 0;
}

static void op_release(void *ctx, uint64_t p)
{
	struct dm_ctx *c = ctx;

	if (c->d->cu.free)
		c->d->cu.free((CUdeviceptr)p);
}

static int op_to_host(void *ctx, void *dst, uint64_t src, size_t n)
{
	struct dm_ctx *c = ctx;
	struct ca_devmaps *d = c->d;

	if (d->cu.d2h_async && c->stream)
		return d->cu.d2h_async(dst, src, n, c->stream) || d->cu.stream_sync(c->stream) ? -EIO : 0;
	return d->cu.d2h(dst, src, n) ? -EIO : 0;
}

static int op_to_device(void *ctx, uint64_t dst, const void *src, size_t n)
{
	struct dm_ctx *c = ctx;
	struct ca_devmaps *d = c->d;

	if (d->cu.h2d_async && c->stream)
		return d->cu.h2d_async(dst, src, n, c->stream) || d->cu.stream_sync(c->stream) ? -EIO : 0;
	return d->cu.h2d(dst, src, n) ? -EIO : 0;
}

static int op_zero(void *ctx, uint64_t dst, size_t n)
{
	struct dm_ctx *c = ctx;
	struct ca_devmaps *d = c->d;

	if (d->cu.memset_async && c->stream)
		return d->cu.memset_async(dst, 0, n, c->stream) || d->cu.stream_sync(c->stream) ? -EIO : 0;
	return d->cu.memset(dst, 0, n) ? -EIO : 0;
}

/*
 * Pin @p n bytes at @p p (page-aligned) for every context: the copies into a
 * stage buffer are then DMA. PORTABLE even for a ring's stage, which only its
 * own context writes, so that every registration of the agent is alike.
 * Only where it can be undone; false leaves the memory pageable.
 */
static bool dm_host_pin(struct ca_devmaps *d, void *p, size_t n)
{
	return d->cu.host_register && d->cu.host_unregister &&
	       d->cu.host_register(p, n, DM_HOSTREGISTER_PORTABLE) == GBPF_CUDA_SUCCESS;
}

static int op_pin_host(void *ctx, void *p, size_t n)
{
	struct dm_ctx *c = ctx;

	return dm_host_pin(c->d, p, n) ? 0 : -EIO;
}

static void op_unpin_host(void *ctx, void *p)
{
	struct dm_ctx *c = ctx;

	c->d->cu.host_unregister(p);
}

/* ---- placement ---- */

static int dm_device_capable(uint32_t type)
{
	switch (type) {
	case GBPF_MAP_TYPE_ARRAY:
	case GBPF_MAP_TYPE_GPU_ARRAY:
	case GBPF_MAP_TYPE_PERCPU_ARRAY:
	case GBPF_MAP_TYPE_PERGPUTHREAD_ARRAY:
	case GBPF_MAP_TYPE_GPU_THREAD_LOCAL:
	case GBPF_MAP_TYPE_HASH:
	case GBPF_MAP_TYPE_PERCPU_HASH:
	case GBPF_MAP_TYPE_LRU_HASH:
	case GBPF_MAP_TYPE_GPU_HASH:
	case GBPF_MAP_TYPE_RINGBUF:
	case GBPF_MAP_TYPE_GPU_RINGBUF:
	case GBPF_MAP_TYPE_PERF_EVENT_ARRAY:
		return 1;
	default:
		return 0;
	}
}

int ca_devmaps_create(struct ca_devmaps **out, struct gbpf_map_instance *maps, size_t n,
		      const uint8_t *host_used, ca_devmaps_report_fn report, void *report_ctx)
{
	const char *env = getenv("GBPF_CUDA_MAPS");
	int all_host = env && !strcmp(env, "host");
	struct ca_devmaps *d = calloc(1, sizeof(*d));
	size_t cnt = n ? n : 1;

	if (!d)
		return -ENOMEM;
	pthread_mutex_init(&d->lock, NULL);
	pthread_mutex_init(&d->snap_lock, NULL);
	d->maps = maps;
	d->n = n;
	d->report = report;
	d->report_ctx = report_ctx;
	d->place = calloc(cnt, sizeof(*d->place));
	d->thread_slots_reported = calloc(cnt, sizeof(*d->thread_slots_reported));
	if (!d->place || !d->thread_slots_reported) {
		free(d->place);
		free(d->thread_slots_reported);
		free(d);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		d->place[i] = !all_host && maps[i].mem && maps[i].desc && !(host_used && host_used[i]) &&
					      dm_device_capable(maps[i].desc->type)
				      ? DM_DEVICE
				      : DM_HOST;
	*out = d;
	return 0;
}

static int dm_is_ring(const struct ca_devmaps *d, size_t i)
{
	uint32_t t = d->maps[i].desc->type;

	return t == GBPF_MAP_TYPE_RINGBUF || t == GBPF_MAP_TYPE_GPU_RINGBUF ||
	       t == GBPF_MAP_TYPE_PERF_EVENT_ARRAY;
}

/* A device-placed map whose host view is a snapshot (not a forwarded ring). */
static int dm_is_snapshot(const struct ca_devmaps *d, size_t i)
{
	return d->place[i] == DM_DEVICE && !dm_is_ring(d, i);
}

/*
 * Register the shared region (one mmap) for the GPU, once for every
 * context (PORTABLE). A region mapped where an earlier, unmapped one was
 * (a re-attach gets a new region, often at the same address) is found
 * registered already: that registration pins the old pages, so the GPU
 * would write where nobody reads. It is dropped and made again.
 */
static int dm_register_region(struct ca_devmaps *d, char *why, size_t why_size)
{
	dm_host_register_fn reg = (dm_host_register_fn)gbpf_cu_real_proc("cuMemHostRegister", 6050, 0);
	uintptr_t lo = UINTPTR_MAX, hi = 0, page = (uintptr_t)sysconf(_SC_PAGESIZE);
	CUresult r;

	if (!reg) {
		snprintf(why, why_size, "driver lacks cuMemHostRegister");
		return -ENOSYS;
	}
	/*
	 * The whole region, device-placed maps included: their host blocks
	 * are then pinned, so the mirror's copies into them are true DMA.
	 */
	for (size_t i = 0; i < d->n; i++) {
		uintptr_t a = (uintptr_t)d->maps[i].mem;

		if (!a)
			continue;
		if (a < lo)
			lo = a;
		if (a + d->maps[i].mem_size > hi)
			hi = a + d->maps[i].mem_size;
	}
	if (hi <= lo)
		return 0;
	lo &= ~(page - 1);
	hi = (hi + page - 1) & ~(page - 1);
	r = reg((void *)lo, hi - lo, DM_HOSTREGISTER_PORTABLE | DM_HOSTREGISTER_DEVICEMAP);
	if (r == DM_ERROR_ALREADY_REGISTERED && d->cu.host_unregister &&
	    d->cu.host_unregister((void *)lo) == GBPF_CUDA_SUCCESS)
		r = reg((void *)lo, hi - lo, DM_HOSTREGISTER_PORTABLE | DM_HOSTREGISTER_DEVICEMAP);
	if (r != GBPF_CUDA_SUCCESS) {
		snprintf(why, why_size, "cuMemHostRegister of the map region (%zu bytes) failed: error %d",
			 (size_t)(hi - lo), r);
		return -EIO;
	}
	d->reg_addr = (void *)lo;
	return 0;
}

/* The device addresses of the host-placed maps in context @p c (current). */
static int dm_host_table(struct ca_devmaps *d, struct dm_ctx *c, char *why, size_t why_size)
{
	dm_host_devptr_fn devptr = (dm_host_devptr_fn)gbpf_cu_real_proc("cuMemHostGetDevicePointer", 3020, 0);

	for (size_t i = 0; i < d->n; i++) {
		CUresult r;

		if (d->place[i] != DM_HOST || !d->maps[i].mem)
			continue;
		r = devptr ? devptr(&c->table[i], d->maps[i].mem, 0) : (CUresult)-1;
		if (r != GBPF_CUDA_SUCCESS) {
			snprintf(why, why_size, "map %zu (%s): no device address for the shared memory: error %d",
				 i, dm_name(d, i), r);
			return -EIO;
		}
	}
	return 0;
}

static uint32_t dm_sm_count(void)
{
	dm_ctx_get_device_fn getdev = (dm_ctx_get_device_fn)gbpf_cu_real_proc("cuCtxGetDevice", 2000, 0);
	dm_device_attr_fn attr = (dm_device_attr_fn)gbpf_cu_real_proc("cuDeviceGetAttribute", 2000, 0);
	CUdevice dev;
	int sms = 0;

	if (getdev && attr && getdev(&dev) == GBPF_CUDA_SUCCESS &&
	    attr(&sms, DM_ATTR_MULTIPROCESSOR_COUNT, dev) == GBPF_CUDA_SUCCESS && sms > 0)
		return (uint32_t)sms;
	return 1;
}

static int dm_resolve(struct ca_devmaps *d)
{
	d->cu.alloc = (dm_alloc_fn)gbpf_cu_real_proc("cuMemAlloc", 3020, 0);
	d->cu.free = (dm_free_fn)gbpf_cu_real_proc("cuMemFree", 3020, 0);
	d->cu.d2h = (dm_d2h_fn)gbpf_cu_real_proc("cuMemcpyDtoH", 3020, 0);
	d->cu.h2d = (dm_h2d_fn)gbpf_cu_real_proc("cuMemcpyHtoD", 3020, 0);
	d->cu.memset = (dm_memset_fn)gbpf_cu_real_proc("cuMemsetD8", 3020, 0);
	d->cu.d2h_async = (dm_d2h_async_fn)gbpf_cu_real_proc("cuMemcpyDtoHAsync", 3020, 0);
	d->cu.h2d_async = (dm_h2d_async_fn)gbpf_cu_real_proc("cuMemcpyHtoDAsync", 3020, 0);
	d->cu.memset_async = (dm_memset_async_fn)gbpf_cu_real_proc("cuMemsetD8Async", 3020, 0);
	d->cu.stream_sync = (dm_stream_sync_fn)gbpf_cu_real_proc("cuStreamSynchronize", 2000, 0);
	d->cu.stream_create = (dm_stream_create_fn)gbpf_cu_real_proc("cuStreamCreate", 2000, 0);
	d->cu.stream_destroy = (dm_stream_destroy_fn)gbpf_cu_real_proc("cuStreamDestroy", 4000, 0);
	d->cu.ctx_set = (dm_ctx_set_fn)gbpf_cu_real_proc("cuCtxSetCurrent", 4000, 0);
	d->cu.ctx_get = (dm_ctx_get_fn)gbpf_cu_real_proc("cuCtxGetCurrent", 4000, 0);
	d->cu.ctx_sync = (dm_void_fn)gbpf_cu_real_proc("cuCtxSynchronize", 2000, 0);
	d->cu.host_register = (dm_host_register_fn)gbpf_cu_real_proc("cuMemHostRegister", 6050, 0);
	d->cu.host_unregister = (dm_host_unregister_fn)gbpf_cu_real_proc("cuMemHostUnregister", 4000, 0);
	if (!d->cu.alloc || !d->cu.d2h || !d->cu.h2d || !d->cu.memset)
		return -ENOSYS;
	return 0;
}

/* Map @p i is snapshotted in context @p c (a device-placed block with a last copy there). */
static bool dm_snapshot_wanted(const struct ca_devmaps *d, const struct dm_ctx *c, size_t i)
{
	return dm_is_snapshot(d, i) && c->last[i];
}

/* Copy context @p c's block of map @p i into the stage buffer (c current); 0 when copied. */
static int dm_snapshot_copy(struct ca_devmaps *d, struct dm_ctx *c, size_t i)
{
	return c->ops.to_host(c, d->stage, c->mirror[i].dev, d->maps[i].mem_size) ? -EIO : 0;
}

/* Add what the staged copy of map @p i changed since context @p c's last snapshot into the host block. */
static void dm_snapshot_merge(struct ca_devmaps *d, struct dm_ctx *c, size_t i)
{
	struct gbpf_map_instance host = d->maps[i], now = d->maps[i], last = d->maps[i];
	uint64_t lost = 0;

	now.mem = d->stage;
	last.mem = c->last[i];
	if (gbpf_map_merge_delta(&host, &now, &last, &lost) == 0 && lost &&
	    !atomic_exchange(&d->merge_lost_reported, 1))
		dm_report(d, 1, NULL,
			  "map '%s': %llu keys of a device copy found no room in the host map "
			  "(other contexts or processes filled it; raise max_entries)",
			  dm_name(d, i), (unsigned long long)lost);
	memcpy(c->last[i], d->stage, d->maps[i].mem_size);
}

/*
 * Add what context @p c's copy of every snapshot map changed since its last
 * snapshot into the host block (c current; snap_lock and lock held). Copies
 * taken while kernels run may be torn (a counter between two updates): the
 * rest arrives with the next one; the one after the application
 * synchronised is exact.
 */
static void dm_snapshot_ctx(struct ca_devmaps *d, struct dm_ctx *c)
{
	for (size_t i = 0; i < d->n; i++)
		if (dm_snapshot_wanted(d, c, i) && !dm_snapshot_copy(d, c, i))
			dm_snapshot_merge(d, c, i);
}

/* Every context's snapshot maps, merged with lock held (snap_lock and lock held). */
static void dm_snapshot_locked(struct ca_devmaps *d)
{
	for (struct dm_ctx *c = d->ctxs; c; c = c->next) {
		CUcontext prev = dm_enter(d, c);

		dm_snapshot_ctx(d, c);
		dm_leave(d, c, prev);
	}
	d->last_snapshot_ns = dm_now_ns();
	d->snapshots++;
}

/* Forward every ring of every context once; returns the records moved. */
static uint64_t dm_forward_locked(struct ca_devmaps *d)
{
	uint64_t total = 0, moved;

	for (struct dm_ctx *c = d->ctxs; c; c = c->next) {
		CUcontext prev = 0;
		int entered = 0;

		for (size_t i = 0; i < d->n; i++) {
			if (d->place[i] != DM_DEVICE || !c->mirror[i].ring)
				continue;
			if (!entered) {
				prev = dm_enter(d, c);
				entered = 1;
			}
			if (gbpf_map_mirror_forward(&c->mirror[i], &c->ops, &moved) == -EUCLEAN)
				dm_report(d, 1, NULL, "map '%s': a malformed record on the device ring; that sub-ring "
						      "is no longer forwarded",
					  dm_name(d, i));
			total += moved;
		}
		if (entered)
			dm_leave(d, c, prev);
	}
	return total;
}

/* Records committed on context @p c's device rings and not yet forwarded. */
static int dm_ring_pending(struct ca_devmaps *d, struct dm_ctx *c)
{
	int pending = 0;

	for (size_t i = 0; i < d->n; i++)
		if (d->place[i] == DM_DEVICE && c->mirror[i].ring) {
			const struct gbpf_ring_ctl *ctl = (const void *)c->mirror[i].ctl;

			for (uint32_t s = 0; s < c->mirror[i].dev_rings; s++)
				pending |= ctl[s].producer_pos > c->mirror[i].fwd[s];
		}
	return pending;
}

/*
 * Forward until every committed record of @p only (or of every context)
 * reached the host; a controller that takes nothing for 3 s makes the rest
 * count as lost (reported with @p when).
 */
static void dm_drain_rings_locked(struct ca_devmaps *d, struct dm_ctx *only, const char *when)
{
	uint64_t start = dm_now_ns();

	for (;;) {
		uint64_t moved = dm_forward_locked(d);
		int pending = 0;

		for (struct dm_ctx *c = d->ctxs; c; c = c->next)
			if (!only || c == only)
				pending |= dm_ring_pending(d, c);
		if (!pending)
			return;
		if (dm_now_ns() - start > DM_EXIT_WAIT_NS) {
			uint64_t lost = 0;

			for (struct dm_ctx *c = d->ctxs; c; c = c->next) {
				CUcontext prev;

				if (only && c != only)
					continue;
				prev = dm_enter(d, c);
				for (size_t i = 0; i < d->n; i++)
					if (d->place[i] == DM_DEVICE && c->mirror[i].ring)
						lost += gbpf_map_mirror_abandon(&c->mirror[i], &c->ops);
				dm_leave(d, c, prev);
			}
			dm_report(d, 1, NULL, "%s: the controller did not take the last %llu ring buffer "
					      "records within 3 s; they are counted as lost",
				  when, (unsigned long long)lost);
			return;
		}
		if (!moved)
			usleep(1000);
	}
}

/*
 * At exit, for each device ring that dropped records: where they were dropped and how the records
 * spread over the sub-rings, so that a ring too small (raise GBPF_CUDA_RING_MB) can be told from
 * records crowding a few sub-rings (the lost events alone say neither).
 */
static void dm_report_ring_drops_locked(struct ca_devmaps *d)
{
	for (struct dm_ctx *c = d->ctxs; c; c = c->next)
		for (size_t i = 0; i < d->n; i++) {
			struct gbpf_map_mirror_ring_stats st;

			if (d->place[i] != DM_DEVICE || !c->mirror[i].ring ||
			    gbpf_map_mirror_ring_stats(&c->mirror[i], &st) || !st.drops)
				continue;
			dm_report(d, 0, NULL,
				  "map '%s': %llu records dropped on the GPU (a device sub-ring full) in %u of %u "
				  "sub-rings, most %llu in sub-ring %u; bytes reserved per sub-ring: busiest %llu, "
				  "median %llu, %llu each: %s",
				  dm_name(d, i), (unsigned long long)st.drops, st.subs_dropping, st.subs,
				  (unsigned long long)st.most_drops, st.most_drops_sub, (unsigned long long)st.most_bytes,
				  (unsigned long long)st.median_bytes, (unsigned long long)st.sub_size,
				  st.most_bytes > 2 * st.median_bytes ? "records crowd a few sub-rings"
								      : "a larger ring (GBPF_CUDA_RING_MB) holds more");
		}
}

/*
 * The forwarder's periodic snapshot: each block is copied with lock held
 * (the context is entered, its mirror read) and merged with lock released,
 * so that a kernel's first launch, which takes lock to find its maps, never
 * waits for the merge of a large map (16M per-thread values took ~200 ms on
 * the H200's host). snap_lock keeps the stage buffer and the contexts.
 */
static void dm_snapshot_unlocked(struct ca_devmaps *d)
{
	pthread_mutex_lock(&d->snap_lock);
	pthread_mutex_lock(&d->lock);
	for (struct dm_ctx *c = d->ctxs; c; c = c->next)
		for (size_t i = 0; i < d->n; i++) {
			CUcontext prev;
			int copied;

			if (!dm_snapshot_wanted(d, c, i))
				continue;
			prev = dm_enter(d, c);
			copied = dm_snapshot_copy(d, c, i) == 0;
			dm_leave(d, c, prev);
			if (!copied)
				continue;
			pthread_mutex_unlock(&d->lock);
			dm_snapshot_merge(d, c, i);
			pthread_mutex_lock(&d->lock);
		}
	d->last_snapshot_ns = dm_now_ns();
	d->snapshots++;
	pthread_mutex_unlock(&d->lock);
	pthread_mutex_unlock(&d->snap_lock);
}

static void *dm_forwarder(void *arg)
{
	struct ca_devmaps *d = arg;
	uint64_t nap_us = 50;

	/* Its copies must not invalidate a graph the application captures meanwhile. */
	gbpf_cu_thread_relaxed_capture();
	while (!atomic_load(&d->stop)) {
		uint64_t moved;
		int snapshot = 0;

		pthread_mutex_lock(&d->lock);
		moved = d->ring_hold ? 0 : dm_forward_locked(d);
		if (atomic_load(&d->dirty) &&
		    dm_now_ns() - d->last_snapshot_ns >= (atomic_load(&d->sync_seen) ? DM_SYNC_SNAPSHOT_MIN_NS
										    : DM_SNAPSHOT_PERIOD_NS)) {
			atomic_store(&d->dirty, 0);
			atomic_store(&d->sync_seen, 0);
			snapshot = 1;
		}
		pthread_mutex_unlock(&d->lock);
		if (snapshot)
			dm_snapshot_unlocked(d);
		/* Busy rings are polled every 20 us; idle ones back off to 1 ms. */
		nap_us = moved ? 20 : (nap_us * 2 > 1000 ? 1000 : nap_us * 2);
		usleep((useconds_t)nap_us);
	}
	return NULL;
}

static void dm_at_exit(void)
{
	if (ca_devmaps_exit_target)
		ca_devmaps_flush_final(ca_devmaps_exit_target);
}

/* Once per process attach: driver entry points, the registered region, the forwarder. */
static int dm_setup(struct ca_devmaps *d, char *why, size_t why_size)
{
	size_t largest = 0;
	int rc, need_thread = 0;

	if (dm_resolve(d)) {
		/* No device allocation: every map stays on the host (correct, slower). */
		for (size_t i = 0; i < d->n; i++)
			d->place[i] = DM_HOST;
	}
	rc = dm_register_region(d, why, why_size);
	if (rc)
		return rc;
	for (size_t i = 0; i < d->n; i++) {
		if (d->place[i] != DM_DEVICE)
			continue;
		need_thread = 1;
		if (!dm_is_ring(d, i) && d->maps[i].mem_size > largest)
			largest = d->maps[i].mem_size;
	}
	if (largest) {
		size_t bytes;
		void *stage = gbpf_stage_alloc(largest, &bytes);

		if (!stage) {
			snprintf(why, why_size, "out of memory for a snapshot buffer of %zu bytes", largest);
			return -ENOMEM;
		}
		d->stage = stage;
		/*
		 * Pinned, as the map region is: a snapshot copies every device-placed map's
		 * block into it while the application runs, and a copy into pageable memory
		 * goes through the driver's staging at a fraction of the bus's speed (a
		 * per-thread map of 16M thread slots is 128 MB a snapshot). Unpinned if the
		 * driver refuses (a memlock limit): slower, still correct.
		 */
		d->stage_pinned = dm_host_pin(d, stage, bytes);
	}
	if (need_thread) {
		const char *hold = getenv("GBPF_CUDA_RING_HOLD");

		d->ring_hold = hold && !strcmp(hold, "1");
		if (pthread_create(&d->forwarder, NULL, dm_forwarder, d) == 0)
			d->forwarder_running = 1;
		else
			dm_report(d, 1, NULL, "cannot start the map forwarder thread: ring buffers are "
					      "forwarded only at synchronisation points and exit");
		/*
		 * Registered now, after the runtime initialised, so that it runs
		 * BEFORE the runtime's own exit-time teardown (atexit order is
		 * reverse registration): the contexts still exist for the
		 * final copies.
		 */
		ca_devmaps_exit_target = d;
		atexit(dm_at_exit);
	}
	return 0;
}

static void dm_ctx_free(struct ca_devmaps *d, struct dm_ctx *c)
{
	for (size_t i = 0; i < d->n; i++)
		if (d->place[i] == DM_DEVICE)
			gbpf_map_mirror_fini(&c->mirror[i], &c->ops);
	if (c->stream && d->cu.stream_destroy)
		d->cu.stream_destroy(c->stream);
	for (size_t i = 0; c->last && i < d->n; i++)
		free(c->last[i]);
	free(c->last);
	free(c->mirror);
	free(c->table);
	free(c);
}

/*
 * Mark a device ring copy as read only by the forwarder (copies on this
 * GPU): its producers then order records at GPU scope instead of system
 * scope (ptx_ring.c reads the header's ring_gpu_consumer, zero in every
 * host block, where the consumer is a CPU). A system-scope release on device memory waits for
 * a system-wide fence per warp: 13% of the write cost measured on the H200.
 * GBPF_CUDA_RING_SCOPE=sys keeps system scope (for comparisons).
 */
static int dm_ring_mark_device(struct dm_ctx *c, struct gbpf_map_mirror *m, char *why, size_t why_size)
{
	uint32_t one = 1;

	if (c->ops.to_device(c, m->dev + offsetof(struct gbpf_map_hdr, ring_gpu_consumer), &one, sizeof(one))) {
		snprintf(why, why_size, "cannot mark the device ring's scope (header +%zu)",
			 offsetof(struct gbpf_map_hdr, ring_gpu_consumer));
		return -EIO;
	}
	return 0;
}

/*
 * The copies of context @p ctx, made at its first instrumented kernel from
 * the host blocks as they are then (other contexts' counts included: the
 * snapshots add only what this copy changes after that).
 */
static int dm_ctx_create(struct ca_devmaps *d, CUcontext ctx, struct dm_ctx **out, char *why,
			 size_t why_size)
{
	const char *env = getenv("GBPF_CUDA_RING_MB"), *scope = getenv("GBPF_CUDA_RING_SCOPE");
	const char *subs_env = getenv("GBPF_CUDA_RING_SUBS");
	int ring_sys_scope = scope && !strcmp(scope, "sys");
	uint64_t ring_bytes = DM_RING_BYTES_DEFAULT;
	uint32_t subs_per_sm = DM_RING_SUBS_PER_SM;
	struct dm_ctx *c = calloc(1, sizeof(*c));
	size_t cnt = d->n ? d->n : 1;
	CUcontext prev;
	uint32_t sms;
	int rc = 0, first = !d->n_ctxs;

	if (!c)
		return -ENOMEM;
	c->d = d;
	c->ctx = ctx;
	c->mirror = calloc(cnt, sizeof(*c->mirror));
	c->table = calloc(cnt, sizeof(*c->table));
	c->last = calloc(cnt, sizeof(*c->last));
	if (!c->mirror || !c->table || !c->last) {
		free(c->mirror);
		free(c->table);
		free(c->last);
		free(c);
		return -ENOMEM;
	}
	c->ops = (struct gbpf_dev_mem_ops){.ctx = c, .alloc = op_alloc, .release = op_release,
					   .to_host = op_to_host, .to_device = op_to_device, .zero = op_zero,
					   .pin_host = op_pin_host, .unpin_host = op_unpin_host};
	if (env && atoi(env) > 0)
		ring_bytes = (uint64_t)atoi(env) << 20;
	if (subs_env && atoi(subs_env) > 0)
		subs_per_sm = (uint32_t)atoi(subs_env) > DM_RING_SUBS_PER_SM_MAX ? DM_RING_SUBS_PER_SM_MAX
										 : (uint32_t)atoi(subs_env);
	prev = dm_enter(d, c);
	/*
	 * Our own non-blocking stream: mirror copies never wait behind the
	 * application's work on the legacy stream, nor make it wait.
	 */
	if (!d->cu.stream_create || !d->cu.stream_sync ||
	    d->cu.stream_create(&c->stream, DM_STREAM_NON_BLOCKING) != GBPF_CUDA_SUCCESS)
		c->stream = NULL;
	sms = dm_sm_count();
	for (size_t i = 0; i < d->n && !rc; i++) {
		char mwhy[256] = "";

		if (d->place[i] != DM_DEVICE)
			continue;
		rc = gbpf_map_mirror_init(&c->mirror[i], &d->maps[i], ring_bytes, sms * subs_per_sm,
					  &c->ops, mwhy, sizeof(mwhy));
		if (!rc && c->mirror[i].ring && !ring_sys_scope) {
			rc = dm_ring_mark_device(c, &c->mirror[i], mwhy, sizeof(mwhy));
			if (rc)
				gbpf_map_mirror_fini(&c->mirror[i], &c->ops);
		}
		if (rc && first) {
			/* The first context may still change placements: this map stays on the host, correct. */
			d->place[i] = DM_HOST;
			dm_report(d, 0, NULL, "map '%s' stays in host memory: %s", dm_name(d, i), mwhy);
			rc = 0;
			continue;
		}
		/*
		 * The device block must equal `last` exactly (deltas are taken
		 * against it), and the host block may change meanwhile (other
		 * processes' snapshots, host probes): one image, copied to both.
		 */
		if (!rc && dm_is_snapshot(d, i)) {
			c->last[i] = malloc(d->maps[i].mem_size);
			if (c->last[i])
				memcpy(c->last[i], d->maps[i].mem, d->maps[i].mem_size);
			rc = !c->last[i] ? -ENOMEM
			     : c->ops.to_device(c, c->mirror[i].dev, c->last[i], d->maps[i].mem_size) ? -EIO
																: 0;
		}
		if (rc)
			snprintf(why, why_size, "map '%s': %s", dm_name(d, i),
				 mwhy[0] ? mwhy : "cannot copy its initial contents to the device");
		c->table[i] = (CUdeviceptr)c->mirror[i].dev;
	}
	if (!rc)
		rc = dm_host_table(d, c, why, why_size);
	dm_leave(d, c, prev);
	if (rc) {
		dm_ctx_free(d, c);
		return rc;
	}
	*out = c;
	return 0;
}

int ca_devmaps_table(struct ca_devmaps *d, CUcontext ctx, CUdeviceptr *table, char *why,
		     size_t why_size)
{
	struct dm_ctx *c;
	int rc = 0;

	pthread_mutex_lock(&d->lock);
	if (d->state == 0) {
		rc = dm_setup(d, why, why_size);
		d->state = rc ? -1 : 1;
		if (rc)
			snprintf(d->failed_why, sizeof(d->failed_why), "%s", why);
	}
	if (d->state < 0) {
		snprintf(why, why_size, "%s", d->failed_why);
		rc = -EIO;
		goto out;
	}
	for (c = d->ctxs; c && c->ctx != ctx; c = c->next)
		;
	if (!c) {
		rc = dm_ctx_create(d, ctx, &c, why, why_size);
		if (rc)
			goto out;
		c->next = d->ctxs;
		d->ctxs = c;
		d->n_ctxs++;
	}
	memcpy(table, c->table, d->n * sizeof(*table));
out:
	pthread_mutex_unlock(&d->lock);
	return rc;
}

void ca_devmaps_context_destroyed(struct ca_devmaps *d, CUcontext ctx)
{
	struct dm_ctx **pp, *c;
	CUcontext prev;

	if (!d || d->state != 1)
		return;
	pthread_mutex_lock(&d->snap_lock);
	pthread_mutex_lock(&d->lock);
	for (pp = &d->ctxs; *pp && (*pp)->ctx != ctx; pp = &(*pp)->next)
		;
	c = *pp;
	if (!c || d->finalised) {
		pthread_mutex_unlock(&d->lock);
		pthread_mutex_unlock(&d->snap_lock);
		return;
	}
	prev = dm_enter(d, c);
	/* Its instrumented work must finish before the last copies. */
	if (d->cu.ctx_sync)
		d->cu.ctx_sync();
	dm_leave(d, c, prev);
	dm_drain_rings_locked(d, c, "a context was destroyed");
	prev = dm_enter(d, c);
	dm_snapshot_ctx(d, c);
	*pp = c->next;
	d->n_ctxs--;
	/* Its device memory would go with the context; freed first, the driver's books stay straight. */
	dm_ctx_free(d, c);
	if (prev != ctx && d->cu.ctx_set)
		d->cu.ctx_set(prev);
	pthread_mutex_unlock(&d->lock);
	pthread_mutex_unlock(&d->snap_lock);
}

void ca_devmaps_launch(struct ca_devmaps *d, uint64_t threads, const char *kernel)
{
	atomic_store(&d->dirty, 1);
	for (size_t i = 0; i < d->n; i++) {
		const struct gbpf_map_hdr *h = d->maps[i].mem;

		if (!h || h->type != GBPF_MAP_TYPE_PERGPUTHREAD_ARRAY || threads <= h->nr_slots)
			continue;
		pthread_mutex_lock(&d->lock);
		if (threads > d->thread_slots_reported[i]) {
			d->thread_slots_reported[i] = threads > UINT32_MAX ? UINT32_MAX : (uint32_t)threads;
			dm_report(d, 0, kernel,
				  "launch of %llu threads, but per-GPU-thread map '%s' holds %u threads: the "
				  "others find no slot (raise it with gbpf run --thread-slots)",
				  (unsigned long long)threads, dm_name(d, i), h->nr_slots);
		}
		pthread_mutex_unlock(&d->lock);
	}
}

void ca_devmaps_sync_point(struct ca_devmaps *d)
{
	if (!d || d->state != 1 || !atomic_load(&d->dirty))
		return;
	/*
	 * The snapshot (a copy of each device block and a merge pass over it)
	 * runs on the forwarder thread, within a millisecond: not on the
	 * application's thread, inside its synchronising call.
	 */
	if (d->forwarder_running) {
		atomic_store(&d->sync_seen, 1);
		return;
	}
	if (pthread_mutex_trylock(&d->snap_lock))
		return;
	if (pthread_mutex_trylock(&d->lock)) {
		pthread_mutex_unlock(&d->snap_lock);
		return;
	}
	if (dm_now_ns() - d->last_snapshot_ns >= DM_SYNC_SNAPSHOT_MIN_NS) {
		atomic_store(&d->dirty, 0);
		dm_snapshot_locked(d);
	}
	pthread_mutex_unlock(&d->lock);
	pthread_mutex_unlock(&d->snap_lock);
}

void ca_devmaps_flush_final(struct ca_devmaps *d)
{
	if (!d || d->state != 1)
		return;
	atomic_store(&d->stop, 1);
	if (d->forwarder_running) {
		pthread_join(d->forwarder, NULL);
		d->forwarder_running = 0;
	}
	pthread_mutex_lock(&d->snap_lock);
	pthread_mutex_lock(&d->lock);
	if (d->finalised) {
		pthread_mutex_unlock(&d->lock);
		pthread_mutex_unlock(&d->snap_lock);
		return;
	}
	d->finalised = 1;
	/* Instrumented work still queued must finish before the last copies. */
	for (struct dm_ctx *c = d->ctxs; c; c = c->next) {
		CUcontext prev = dm_enter(d, c);

		if (d->cu.ctx_sync)
			d->cu.ctx_sync();
		dm_leave(d, c, prev);
	}
	dm_drain_rings_locked(d, NULL, "exit");
	dm_report_ring_drops_locked(d);
	dm_snapshot_locked(d);
	pthread_mutex_unlock(&d->lock);
	pthread_mutex_unlock(&d->snap_lock);
}

void ca_devmaps_destroy(struct ca_devmaps *d)
{
	if (!d)
		return;
	ca_devmaps_flush_final(d);
	if (ca_devmaps_exit_target == d)
		ca_devmaps_exit_target = NULL;
	while (d->ctxs) {
		struct dm_ctx *c = d->ctxs;
		CUcontext ctx = c->ctx, prev = dm_enter(d, c);

		d->ctxs = c->next;
		dm_ctx_free(d, c);
		/* Registration is per process: dropped with a context current, once. */
		if (!d->ctxs && d->reg_addr && d->cu.host_unregister)
			d->cu.host_unregister(d->reg_addr);
		if (!d->ctxs && d->stage_pinned)
			d->cu.host_unregister(d->stage);
		if (prev != ctx && d->cu.ctx_set)
			d->cu.ctx_set(prev);
	}
	pthread_mutex_destroy(&d->lock);
	pthread_mutex_destroy(&d->snap_lock);
	free(d->place);
	free(d->stage);
	free(d->thread_slots_reported);
	free(d);
}
