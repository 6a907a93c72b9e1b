/* SPDX-License-Identifier: MIT */
/*
 * Host side of the print queues (layout in cuda_printq.h): the blocks are
 * set up per loaded program that uses trace_printk / puts, and a drain
 * thread runs while kernels that print may run (drain_thread says how it
 * polls). It only loads records and stores its tail, never a
 * read-modify-write on memory the GPU writes. Lines go to a sink: stdout
 * for `gbpf prog run`, the agent's print service under `gbpf run`. Drops
 * are counted by the device and read back at the end.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include <gbpf/helper_ids.h>
#include <gbpf/prog.h>

#include "core/base/cpu_relax.h"
#include "core/helpers/devprint.h"
#include "core/helpers/host_helpers.h"
#include "cuda_printq.h"
#include "cuda_printq_host.h"

/* Driver entry points used only here, resolved from the already loaded libcuda. */
typedef CUresult (*host_alloc_fn)(void **p, size_t bytes, unsigned flags);
typedef CUresult (*host_devptr_fn)(CUdeviceptr *d, void *p, unsigned flags);
typedef CUresult (*host_free_fn)(void *p);
#define CU_MEMHOSTALLOC_PORTABLE 0x01
#define CU_MEMHOSTALLOC_DEVICEMAP 0x02

struct gbpf_printq {
	struct cuda_driver *drv;
	host_free_fn host_free;
	CUdeviceptr dev;      /* device block */
	uint8_t *host;        /* pinned host block */
	uint64_t host_size;
	uint32_t nqueues, nslots;
	uint64_t *tails;      /* host's own copy of the consumed counts */
	pthread_t thread;
	int running;
	atomic_int stop;
	gbpf_printq_sink_fn sink; /* where lines go (stdout by default) */
	void *sink_ctx;
	/* CLOCK_MONOTONIC ns of the last record or kick: the drain thread polls fast after it */
	_Atomic uint64_t active_ns;
	uint64_t spin_ns; /* spin (no nap) this long after activity: GBPF_PRINTQ_SPIN_US */
	uint64_t printed;
};

static uint64_t printq_now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static int printq_stdout_sink(void *ctx, const char *line, size_t len)
{
	(void)ctx;
	fwrite(line, 1, len, stdout);
	fputc('\n', stdout);
	return 0;
}

size_t gbpf_printq_format_record(const uint8_t *rec, char *line, size_t cap)
{
	uint32_t kind, len;
	uint64_t args[3];
	char text[GBPF_PRINTQ_REC_SIZE];
	int rc;

	if (cap < 2)
		return 0;
	memcpy(&kind, rec + 8, 4);
	memcpy(&len, rec + 12, 4);
	memcpy(args, rec + 16, sizeof(args));
	if (len > GBPF_PRINTQ_TEXT_MAX)
		len = GBPF_PRINTQ_TEXT_MAX;
	/* Every text byte (the strings of %s follow the format): the parser stays within them. */
	memcpy(text, rec + GBPF_PRINTQ_TEXT_OFF, GBPF_PRINTQ_TEXT_MAX + 1);
	text[GBPF_PRINTQ_TEXT_MAX + 1] = 0;
	/* the interpreter's own helpers format it: same output on every backend */
	if (kind == GBPF_PRINTQ_KIND_PRINTK_STR)
		rc = gbpf_format_device_printk_strs(text, strnlen(text, len), text + len,
						    GBPF_PRINTQ_TEXT_MAX + 1 - len, args, line, cap);
	else
		rc = gbpf_format_device_print(kind == GBPF_PRINTQ_KIND_PRINTK ? GBPF_HELPER_TRACE_PRINTK
									  : GBPF_HELPER_GPU_PUTS,
					      text, strnlen(text, len), args, line, cap);
	if (rc <= 0) {
		line[0] = 0;
		return 0;
	}
	while (rc && line[rc - 1] == '\n')
		rc--;
	line[rc] = 0;
	return (size_t)rc;
}

/*
 * Pass every published record to the sink; returns how many. A sink that
 * answers -EAGAIN keeps the record in its queue (the tail does not move)
 * and this pass ends: the device queue absorbs the burst meanwhile and
 * counts what it cannot hold.
 */
static uint64_t drain_once(struct gbpf_printq *q)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < q->nqueues; i++) {
		for (;;) {
			uint64_t t = q->tails[i];
			uint8_t *rec = q->host + GBPF_PRINTQ_REC_OFF(q->nqueues) +
				       ((uint64_t)i * q->nslots + (t & (q->nslots - 1))) * GBPF_PRINTQ_REC_SIZE;
			uint64_t seq = atomic_load_explicit((_Atomic uint64_t *)rec, memory_order_acquire);
			char line[512];
			size_t line_len;

			if (seq != t + 1)
				break;
			line_len = gbpf_printq_format_record(rec, line, sizeof(line));
			if (q->sink(q->sink_ctx, line, line_len) == -EAGAIN)
				goto out;
			/* the sink has its copy: the slot may be reused once the tail moves */
			q->tails[i] = t + 1;
			atomic_store_explicit((_Atomic uint64_t *)(q->host + 8 * (uint64_t)i), t + 1,
					      memory_order_release);
			n++;
		}
	}
out:
	if (n && q->sink == printq_stdout_sink)
		fflush(stdout);
	q->printed += n;
	return n;
}

/*
 * How the thread polls (#8: GPU -> user printk within 10 us):
 *  - for spin_ns after the last record or kick (a launch of a kernel that
 *    prints; GBPF_PRINTQ_SPIN_US, default 2000 us, 0: never) it passes over
 *    the queues without sleeping, a few pause instructions apart: a record
 *    is seen within about a microsecond, where a nap's wake-up took 5-60 us
 *    on a busy host;
 *  - then it naps 2 us (timer slack 1 ns) up to GBPF_PRINTQ_FAST_NS after
 *    the last activity;
 *  - then 1 ms, so an idle process does not pay for the thread.
 * Cost of the spin: one core while records flow or printing kernels are
 * launched at least every spin_ns; spin_ns of one core per launch otherwise.
 */
#define GBPF_PRINTQ_FAST_NS 200000000ull
#define GBPF_PRINTQ_SPIN_NS_DEFAULT 2000000ull
static void *drain_thread(void *arg)
{
	struct gbpf_printq *q = arg;
	const struct timespec nap = {0, 2000}, slow = {0, 1000000};
	unsigned idle = 0;

	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	while (!atomic_load_explicit(&q->stop, memory_order_acquire)) {
		uint64_t since;

		if (drain_once(q)) {
			idle = 0;
			atomic_store_explicit(&q->active_ns, printq_now_ns(), memory_order_relaxed);
			continue;
		}
		if (++idle <= 64)
			continue;
		since = printq_now_ns() - atomic_load_explicit(&q->active_ns, memory_order_relaxed);
		if (since < q->spin_ns) {
			for (int k = 0; k < 16; k++)
				gbpf_cpu_relax();
			continue;
		}
		nanosleep(since < GBPF_PRINTQ_FAST_NS ? &nap : &slow, NULL);
	}
	drain_once(q);
	return NULL;
}

int gbpf_printq_prog_prints(const struct gbpf_prog_desc *prog)
{
	for (size_t i = 0; i < prog->insn_cnt; i++)
		if (prog->insns[i].code == 0x85 && prog->insns[i].src == 0 &&
		    (prog->insns[i].imm == GBPF_HELPER_TRACE_PRINTK || prog->insns[i].imm == GBPF_HELPER_GPU_PUTS))
			return 1;
	return 0;
}

void gbpf_printq_kick(struct gbpf_printq *q)
{
	if (q)
		atomic_store_explicit(&q->active_ns, printq_now_ns(), memory_order_relaxed);
}

void gbpf_printq_set_sink(struct gbpf_printq *q, gbpf_printq_sink_fn fn, void *ctx)
{
	q->sink = fn ? fn : printq_stdout_sink;
	q->sink_ctx = fn ? ctx : NULL;
}

int gbpf_printq_bind(struct gbpf_printq *q, CUmodule mod)
{
	CUdeviceptr sym, maps;
	size_t sym_size, maps_size;
	uint32_t nmaps;

	if (q->drv->cuModuleGetGlobal(&sym, &sym_size, mod, "__gbpf_printq") || sym_size < 8 ||
	    q->drv->cuMemcpyHtoD(sym, &q->dev, 8))
		return -EIO;
	/*
	 * The map blocks a %s string may be in: every entry of __gbpf_maps. A
	 * module without these globals (no printk) has nothing to set.
	 */
	if (!q->drv->cuModuleGetGlobal(&maps, &maps_size, mod, "__gbpf_maps") &&
	    !q->drv->cuModuleGetGlobal(&sym, &sym_size, mod, "__gbpf_printq_nmaps") && sym_size >= 4) {
		nmaps = (uint32_t)(maps_size / 8);
		if (q->drv->cuMemcpyHtoD(sym, &nmaps, 4))
			return -EIO;
	}
	return 0;
}

int gbpf_printq_create(struct cuda_driver *d, uint32_t nqueues, uint32_t nslots,
		       struct gbpf_printq **out)
{
	void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	host_alloc_fn host_alloc = lib ? (host_alloc_fn)dlsym(lib, "cuMemHostAlloc") : NULL;
	host_devptr_fn host_devptr = lib ? (host_devptr_fn)dlsym(lib, "cuMemHostGetDevicePointer_v2") : NULL;
	struct gbpf_printq *q;
	uint8_t hdr[GBPF_PRINTQ_DEV_HDR + 16 * 1024] = {0};
	CUdeviceptr hdev = 0;
	void *hp = NULL;
	uint64_t dev_size;

	*out = NULL;
	if (!nqueues || nqueues > 1024 || (nqueues & (nqueues - 1)) || !nslots || nslots > 4096 ||
	    (nslots & (nslots - 1)))
		return -EINVAL;
	q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	if (lib)
		q->host_free = (host_free_fn)dlsym(lib, "cuMemFreeHost");
	if (lib)
		dlclose(lib); /* NOLOAD: only drops the extra reference */
	q->drv = d;
	q->sink = printq_stdout_sink;
	q->active_ns = printq_now_ns();
	{
		const char *e = getenv("GBPF_PRINTQ_SPIN_US");

		q->spin_ns = e && *e ? strtoull(e, NULL, 10) * 1000ull : GBPF_PRINTQ_SPIN_NS_DEFAULT;
		if (q->spin_ns > 1000000000ull)
			q->spin_ns = 1000000000ull;
	}
	q->nqueues = nqueues;
	q->nslots = nslots;
	q->host_size = GBPF_PRINTQ_REC_OFF(nqueues) + (uint64_t)nqueues * nslots * GBPF_PRINTQ_REC_SIZE;
	dev_size = GBPF_PRINTQ_DEV_HDR + 16ull * nqueues;
	q->tails = calloc(nqueues, sizeof(*q->tails));
	if (!q->tails || !host_alloc || !host_devptr || !q->host_free ||
	    host_alloc(&hp, q->host_size, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP) ||
	    !hp) {
		gbpf_printq_destroy(q);
		return -ENOMEM;
	}
	q->host = hp;
	memset(q->host, 0, q->host_size);
	if (host_devptr(&hdev, hp, 0) || d->cuMemAlloc(&q->dev, dev_size)) {
		q->dev = 0;
		gbpf_printq_destroy(q);
		return -ENOMEM;
	}
	memcpy(hdr, &hdev, 8);
	memcpy(hdr + 8, &nqueues, 4);
	memcpy(hdr + 12, &nslots, 4);
	if (d->cuMemcpyHtoD(q->dev, hdr, dev_size)) {
		gbpf_printq_destroy(q);
		return -EIO;
	}
	*out = q;
	return 0;
}

int gbpf_printq_start(struct gbpf_printq *q)
{
	if (!q || q->running)
		return 0;
	atomic_store(&q->stop, 0);
	if (pthread_create(&q->thread, NULL, drain_thread, q))
		return -EAGAIN;
	q->running = 1;
	return 0;
}

uint64_t gbpf_printq_stop(struct gbpf_printq *q)
{
	if (!q)
		return 0;
	if (q->running) {
		atomic_store_explicit(&q->stop, 1, memory_order_release);
		pthread_join(q->thread, NULL);
		q->running = 0;
	}
	drain_once(q);
	return q->printed;
}

uint64_t gbpf_printq_drops(struct gbpf_printq *q)
{
	uint64_t total = 0, v;

	for (uint32_t i = 0; q && q->dev && i < q->nqueues; i++)
		if (q->drv->cuMemcpyDtoH(&v, q->dev + GBPF_PRINTQ_DEV_HDR + 16ull * i + 8, 8) ==
		    CUDA_SUCCESS)
			total += v;
	return total;
}

void gbpf_printq_destroy(struct gbpf_printq *q)
{
	if (!q)
		return;
	gbpf_printq_stop(q);
	if (q->dev)
		q->drv->cuMemFree(q->dev);
	if (q->host && q->host_free)
		q->host_free(q->host);
	free(q->tails);
	free(q);
}
