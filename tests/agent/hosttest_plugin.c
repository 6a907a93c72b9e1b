/* SPDX-License-Identifier: MIT */
/*
 * libgbpf-hosttest.so: a backend with GBPF_CAP_INTERCEPT that needs no GPU.
 * Preloaded by `gbpf run`, it interposes gbpf_test_launch() (the test
 * "runtime", tests/agent/apps/testlaunch.c) as a real backend interposes a
 * driver's launch call: once agent_attach has armed it, every call runs the
 * host/launch programs through services->run_host_prog, then the real
 * function. It also interposes the simulated asynchronous runtime
 * (gbpf_test_async, gbpf_test_sync) and reports every call and the GPU work
 * it caused through services->timeline, as the CUDA backend does for
 * cudaMemcpyAsync, launches and synchronise calls: a host event for the API
 * call and a GPU event for the work, linked by a correlation id.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <errno.h>
#include <fnmatch.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <gbpf/helper_ids.h>
#include <gbpf/plugin.h>
#include <gbpf/probe_ctx.h>

struct gbpf_backend {
	const struct gbpf_agent_attach_opts *opts; /* valid while attached */
	struct gbpf_agent_attach_opts copy;
	/* GBPF_HOSTTEST_PRINT_TS: the print thread of a simulated GPU (bench/agent). */
	pthread_t ts_thread;
	int ts_started;
	atomic_int ts_stop;
	long ts_count, ts_period_us;
};

/* The armed backend, read by the interposer on every call. */
static _Atomic(struct gbpf_backend *) hosttest_armed;
/*
 * Interposed launches inside the armed path: agent_detach waits for them,
 * because the programs and services they use go away after it returns
 * (as a real backend waits for launches in flight).
 */
static atomic_int hosttest_inflight;

typedef unsigned long (*launch_fn)(const char *, unsigned, unsigned);

unsigned long gbpf_test_launch(const char *kernel, unsigned grid, unsigned block);

/*
 * The simulated device: a gpu/entry program that targets the launched
 * kernel "runs" its puts calls: every `call bpf_gpu_puts` whose r1 was
 * loaded with a .rodata address (ld_imm64 map value) prints that string
 * through services->print, as a GPU backend's print queue does. The string
 * comes from the map description's initial bytes, which the agent received
 * in the setup (the plugin needs the .rodata contents, not only the agent's
 * verifier). Straight-line tracking of r1 is enough for clang's output.
 */
static void hosttest_device_puts(const struct gbpf_agent_attach_opts *o, size_t pi)
{
	const struct gbpf_agent_services *s = o->services;
	const struct gbpf_prog_desc *p = &o->progs[pi];
	long r1_map = -1;
	uint32_t r1_off = 0;
	size_t k;

	if (s->sz < offsetof(struct gbpf_agent_services, print) + sizeof(s->print) || !s->print)
		return;
	for (k = 0; k < p->insn_cnt; k++) {
		const struct gbpf_insn *in = &p->insns[k];

		if (in->code == (GBPF_LD | GBPF_IMM | GBPF_DW) && k + 1 < p->insn_cnt) {
			if (in->dst == 1) {
				r1_map = in->src == GBPF_PSEUDO_MAP_IDX_VALUE ? in->imm : -1;
				r1_off = (uint32_t)p->insns[k + 1].imm;
			}
			k++;
			continue;
		}
		if (in->code == (GBPF_JMP | GBPF_CALL) && in->src == 0 && in->imm == GBPF_HELPER_GPU_PUTS &&
		    r1_map >= 0 && (size_t)r1_map < p->map_cnt) {
			const struct gbpf_map_desc *m = &p->maps[r1_map];
			const char *str = m->init_data;

			if (str && r1_off < m->init_size &&
			    memchr(str + r1_off, 0, m->init_size - r1_off))
				s->print(s->ctx, str + r1_off, strlen(str + r1_off));
			else
				s->report(s->ctx, GBPF_AGENT_EVENT_ERROR, NULL,
					  "hosttest: puts string not in the .rodata bytes of the setup");
		}
		if (in->code == GBPF_OP_CALL)
			r1_map = -1; /* calls clobber r1-r5 */
		else if (in->dst == 1 && (in->code & 0x07) != GBPF_STX && (in->code & 0x07) != GBPF_ST &&
		    (in->code & 0x07) != GBPF_JMP && (in->code & 0x07) != GBPF_JMP32)
			r1_map = -1; /* r1 rewritten by anything else */
	}
}

/* Run the host/launch programs of the armed backend @p b for this launch. */
static void hosttest_run_progs(struct gbpf_backend *b, const char *kernel, unsigned grid,
			       unsigned block)
{
	const struct gbpf_agent_attach_opts *o = &b->copy;
	const struct gbpf_agent_services *s = o->services;
	struct gbpf_host_launch_ctx ctx;
	struct timespec ts;
	size_t i;

	memset(&ctx, 0, sizeof(ctx));
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ctx.kernel_id = gbpf_kernel_id(kernel);
	ctx.launch_id = s->next_launch_id(s->ctx);
	ctx.time_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	ctx.grid[0] = grid;
	ctx.grid[1] = ctx.grid[2] = 1;
	ctx.block[0] = block;
	ctx.block[1] = ctx.block[2] = 1;
	snprintf(ctx.kernel_name, sizeof(ctx.kernel_name), "%s", kernel);
	for (i = 0; i < o->prog_cnt; i++) {
		const struct gbpf_prog_desc *p = &o->progs[i];

		if (p->attach.kind == GBPF_ATTACH_GPU_ENTRY && s->kernel_selected &&
		    s->kernel_selected(s->ctx, i, kernel))
			hosttest_device_puts(o, i);
		if (p->attach.kind != GBPF_ATTACH_HOST_LAUNCH)
			continue;
		if (p->attach.target && fnmatch(p->attach.target, kernel, 0))
			continue;
		s->run_host_prog(s->ctx, i, &ctx, sizeof(ctx), NULL);
	}
}

__attribute__((visibility("default"))) unsigned long gbpf_test_launch(const char *kernel,
								       unsigned grid,
								       unsigned block)
{
	static _Atomic(launch_fn) real;
	launch_fn fn = atomic_load_explicit(&real, memory_order_relaxed);

	if (!fn) {
		fn = (launch_fn)dlsym(RTLD_NEXT, "gbpf_test_launch");
		atomic_store(&real, fn);
	}
	/* Detached: one relaxed load per launch, nothing else. */
	if (atomic_load_explicit(&hosttest_armed, memory_order_relaxed)) {
		struct gbpf_backend *b;

		/* Counted, then re-read: a detach that cleared it in between is seen here. */
		atomic_fetch_add(&hosttest_inflight, 1);
		b = atomic_load(&hosttest_armed);
		if (b)
			hosttest_run_progs(b, kernel, grid, block);
		atomic_fetch_sub(&hosttest_inflight, 1);
	}
	return fn ? fn(kernel, grid, block) : 0;
}

typedef int (*async_fn)(int, unsigned, const char *, unsigned long long, unsigned long long,
			unsigned long long *, unsigned long long *);
typedef unsigned long long (*sync_fn)(int);

int gbpf_test_async(int op, unsigned stream, const char *name, unsigned long long bytes,
		    unsigned long long dur_ns, unsigned long long *gpu_begin,
		    unsigned long long *gpu_end);
unsigned long long gbpf_test_sync(int stream);

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The services of the armed backend when they can take timeline events, else NULL. */
static const struct gbpf_agent_services *timeline_services(void)
{
	struct gbpf_backend *b = atomic_load(&hosttest_armed);
	const struct gbpf_agent_services *s = b ? b->copy.services : NULL;

	if (!s || s->sz < offsetof(struct gbpf_agent_services, timeline) + sizeof(s->timeline) ||
	    !s->timeline)
		return NULL;
	return s;
}

/* Operation of gbpf_test_async -> timeline kind of its GPU work. */
static uint32_t op_kind(int op)
{
	switch (op) {
	case 1: return GBPF_TL_KERNEL;
	case 2: return GBPF_TL_MEMCPY_H2D;
	case 3: return GBPF_TL_MEMCPY_D2H;
	case 4: return GBPF_TL_MEMCPY_D2D;
	default: return GBPF_TL_MEMSET;
	}
}

__attribute__((visibility("default"))) int gbpf_test_async(int op, unsigned stream,
							    const char *name,
							    unsigned long long bytes,
							    unsigned long long dur_ns,
							    unsigned long long *gpu_begin,
							    unsigned long long *gpu_end)
{
	static _Atomic(async_fn) real;
	const struct gbpf_agent_services *s = timeline_services();
	async_fn fn = atomic_load(&real);
	unsigned long long gb = 0, ge = 0;
	struct gbpf_timeline_event ev;
	uint64_t hb, he;
	int ret;

	if (!fn) {
		fn = (async_fn)dlsym(RTLD_NEXT, "gbpf_test_async");
		atomic_store(&real, fn);
	}
	if (!fn)
		return -1;
	hb = mono_ns();
	ret = fn(op, stream, name, bytes, dur_ns, &gb, &ge);
	he = mono_ns();
	if (gpu_begin)
		*gpu_begin = gb;
	if (gpu_end)
		*gpu_end = ge;
	if (!s || ret)
		return ret;
	memset(&ev, 0, sizeof(ev));
	ev.sz = sizeof(ev);
	ev.device = 0;
	ev.stream = stream;
	ev.correlation_id = s->next_launch_id(s->ctx);
	ev.bytes = op == 1 ? 0 : bytes;
	/* The API call, on the calling thread... */
	ev.kind = op == 1 ? GBPF_TL_LAUNCH : op_kind(op);
	ev.flags = GBPF_TL_F_HOST | GBPF_TL_F_ASYNC;
	ev.host_begin_ns = hb;
	ev.host_end_ns = he;
	snprintf(ev.name, sizeof(ev.name), "%s", op == 1 ? "gbpf_test_launch" : name);
	s->timeline(s->ctx, &ev);
	/* ...and the work it caused, reported separately as a real backend learns it later. */
	ev.kind = op_kind(op);
	ev.flags = GBPF_TL_F_GPU;
	ev.host_begin_ns = ev.host_end_ns = 0;
	ev.gpu_begin_ns = gb;
	ev.gpu_end_ns = ge;
	snprintf(ev.name, sizeof(ev.name), "%s", op == 1 ? name : op_kind(op) == GBPF_TL_MEMSET ?
		 "memset" : op == 2 ? "Memcpy HtoD" : op == 3 ? "Memcpy DtoH" : "Memcpy DtoD");
	s->timeline(s->ctx, &ev);
	return ret;
}

__attribute__((visibility("default"))) unsigned long long gbpf_test_sync(int stream)
{
	static _Atomic(sync_fn) real;
	const struct gbpf_agent_services *s = timeline_services();
	sync_fn fn = atomic_load(&real);
	struct gbpf_timeline_event ev;
	unsigned long long ret;
	uint64_t hb;

	if (!fn) {
		fn = (sync_fn)dlsym(RTLD_NEXT, "gbpf_test_sync");
		atomic_store(&real, fn);
	}
	if (!fn)
		return 0;
	hb = mono_ns();
	ret = fn(stream);
	if (!s)
		return ret;
	memset(&ev, 0, sizeof(ev));
	ev.sz = sizeof(ev);
	ev.kind = GBPF_TL_SYNC;
	ev.flags = GBPF_TL_F_HOST | (stream < 0 ? GBPF_TL_F_DEVICE_WIDE : 0);
	ev.device = 0;
	ev.stream = stream < 0 ? 0 : (uint64_t)stream;
	ev.host_begin_ns = hb;
	ev.host_end_ns = mono_ns();
	snprintf(ev.name, sizeof(ev.name), "%s",
		 stream < 0 ? "cudaDeviceSynchronize" : "cudaStreamSynchronize");
	s->timeline(s->ctx, &ev);
	return ret;
}

/*
 * GBPF_HOSTTEST_PRINT_TS=N:PERIOD_US: a thread of ours (as a GPU backend's
 * print-queue thread) passes N lines "gbpf-ts SEQ NS" to services->print,
 * one every PERIOD_US, NS being CLOCK_MONOTONIC when the line is handed
 * over: whoever reads the controller's output measures the latency of the
 * agent -> controller -> stdout path. A full agent queue (-EAGAIN) is
 * retried, as the CUDA print queue keeps its line.
 */
static void *ht_ts_main(void *arg)
{
	struct gbpf_backend *b = arg;
	const struct gbpf_agent_services *s = b->copy.services;
	long i;

	for (i = 0; i < b->ts_count && !atomic_load(&b->ts_stop); i++) {
		char line[64];
		int n, rc;

		do {
			n = snprintf(line, sizeof(line), "gbpf-ts %ld %llu", i,
				     (unsigned long long)mono_ns());
			rc = s->print(s->ctx, line, (size_t)n);
			if (rc == -EAGAIN)
				usleep(50);
		} while (rc == -EAGAIN && !atomic_load(&b->ts_stop));
		if (rc && rc != -EAGAIN)
			break;
		usleep((useconds_t)b->ts_period_us);
	}
	return NULL;
}

static void ht_ts_start(struct gbpf_backend *b, const struct gbpf_agent_services *s)
{
	const char *spec = getenv("GBPF_HOSTTEST_PRINT_TS");

	if (!spec || b->ts_started ||
	    s->sz < offsetof(struct gbpf_agent_services, print) + sizeof(s->print) || !s->print)
		return;
	if (sscanf(spec, "%ld:%ld", &b->ts_count, &b->ts_period_us) != 2 || b->ts_count < 1 ||
	    b->ts_period_us < 0 || b->ts_period_us > 10000000)
		return;
	atomic_store(&b->ts_stop, 0);
	b->ts_started = !pthread_create(&b->ts_thread, NULL, ht_ts_main, b);
}

static void ht_ts_stop(struct gbpf_backend *b)
{
	if (!b->ts_started)
		return;
	atomic_store(&b->ts_stop, 1);
	pthread_join(b->ts_thread, NULL);
	b->ts_started = 0;
}

static int ht_query(struct gbpf_device_info *devs, uint32_t *count, char *why, size_t why_size)
{
	(void)why;
	(void)why_size;
	if (devs && *count >= 1) {
		memset(&devs[0], 0, sizeof(devs[0]));
		devs[0].sz = sizeof(devs[0]);
		snprintf(devs[0].name, sizeof(devs[0].name), "host test runtime");
		snprintf(devs[0].arch, sizeof(devs[0].arch), "host");
		devs[0].warp_size = 1;
	}
	*count = 1;
	return 0;
}

static int ht_open(const struct gbpf_backend_open_opts *opts, struct gbpf_backend **out)
{
	(void)opts;
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

static void ht_close(struct gbpf_backend *b)
{
	ht_ts_stop(b);
	if (atomic_load(&hosttest_armed) == b)
		atomic_store(&hosttest_armed, NULL);
	free(b);
}

static int ht_attach(struct gbpf_backend *b, const struct gbpf_agent_attach_opts *opts, char *log,
		     size_t log_size)
{
	if (!opts->services || !opts->services->run_host_prog || !opts->services->next_launch_id) {
		snprintf(log, log_size, "hosttest: agent services incomplete");
		return -EINVAL;
	}
	b->copy = *opts;
	atomic_store(&hosttest_armed, b);
	/*
	 * GBPF_HOSTTEST_TL_BURST=N: N kernel events at once, before the agent's
	 * sender runs, so that all beyond its queue are dropped (drop accounting).
	 */
	if (getenv("GBPF_HOSTTEST_TL_BURST") &&
	    opts->services->sz >= offsetof(struct gbpf_agent_services, timeline) +
					   sizeof(opts->services->timeline) &&
	    opts->services->timeline) {
		long i, n = atol(getenv("GBPF_HOSTTEST_TL_BURST"));
		struct gbpf_timeline_event ev;

		memset(&ev, 0, sizeof(ev));
		ev.sz = sizeof(ev);
		ev.kind = GBPF_TL_KERNEL;
		ev.flags = GBPF_TL_F_GPU;
		ev.stream = 9;
		snprintf(ev.name, sizeof(ev.name), "burst");
		for (i = 0; i < n && i < 1000000; i++) {
			ev.gpu_begin_ns = 1000 * (uint64_t)i;
			ev.gpu_end_ns = ev.gpu_begin_ns + 500;
			opts->services->timeline(opts->services->ctx, &ev);
		}
	}
	if (opts->services->report) {
		char msg[128];

		/* The options as they reached the plugin (tests check the flags end to end). */
		snprintf(msg, sizeof(msg), "hosttest: gbpf_test_launch interposed (flags 0x%x)",
			 opts->flags);
		opts->services->report(opts->services->ctx, GBPF_AGENT_EVENT_INFO, NULL, msg);
	}
	if (opts->prog_cnt)
		ht_ts_start(b, opts->services);
	return 0;
}

static void ht_detach(struct gbpf_backend *b)
{
	ht_ts_stop(b);
	atomic_store(&hosttest_armed, NULL);
	/* The contract: nothing uses the programs or the maps after we return. */
	while (atomic_load(&hosttest_inflight))
		sched_yield();
}

__attribute__((visibility("default"))) int gbpf_plugin_get_backend_table(uint32_t abi_version,
									  struct gbpf_backend_ops *ops,
									  struct gbpf_backend_caps *caps);
__attribute__((visibility("default"))) int gbpf_plugin_get_backend_table(uint32_t abi_version,
									  struct gbpf_backend_ops *ops,
									  struct gbpf_backend_caps *caps)
{
	if (GBPF_VERSION_MAJOR(abi_version) != 1)
		return -EPROTONOSUPPORT;
	ops->name = "hosttest";
	ops->description = "test backend: interposes gbpf_test_launch (tests/agent)";
	ops->plugin_version = GBPF_MAKE_VERSION(0, 1);
	ops->priority = 0;
	ops->query_devices = ht_query;
	ops->open = ht_open;
	ops->close = ht_close;
	ops->agent_attach = ht_attach;
	ops->agent_detach = ht_detach;
	caps->flags = GBPF_CAP_INTERCEPT;
	return 0;
}
