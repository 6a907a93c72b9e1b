/* SPDX-License-Identifier: MIT */
/*
 * The cpu backend: the reference interpreter behind the plugin ABI.
 *
 * Programs run in bounds-checked mode, so this backend is sandboxed
 * (GBPF_CAP_SANDBOXED): it is the one place where programs the verifier
 * has not accepted may run (conformance, debugging). "Threads" are
 * emulated GPU threads: each instance gets its thread id, its block (of
 * block_size threads) and a per-CPU slot derived from the block, as an SM
 * would, and the instances are spread over a few host threads.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <gbpf/gbpf.h>
#include <gbpf/plugin.h>

#include "core/interp/interp.h"

#define CPU_PLUGIN_VERSION GBPF_MAKE_VERSION(0, 1)
/* Threads per emulated block when the caller does not say. */
#define DEFAULT_BLOCK 256
/* Fewer instances than this run on the calling thread alone. */
#define INSTANCES_PER_WORKER 1024
#define MAX_WORKERS 64

struct gbpf_backend {
	struct gbpf_host_services services;
	uint32_t nr_cpus;
};

struct gbpf_backend_prog {
	struct gbpf_backend *backend;
	struct gbpf_interp *interp;
	struct gbpf_map_instance *maps;
	size_t map_cnt;
	char name[64];
};

static uint32_t online_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 0 ? (uint32_t)n : 1;
}

static int cpu_query_devices(struct gbpf_device_info *devs, uint32_t *count, char *why,
			     size_t why_size)
{
	struct utsname u;

	(void)why;
	(void)why_size;
	if (devs && *count >= 1) {
		snprintf(devs[0].name, sizeof(devs[0].name), "host CPU (reference interpreter)");
		snprintf(devs[0].arch, sizeof(devs[0].arch), "%.31s",
			 uname(&u) == 0 ? u.machine : "unknown");
		devs[0].memory_bytes = 0;
		devs[0].compute_units = online_cpus();
		devs[0].warp_size = 1;
	}
	*count = 1;
	return 0;
}

static int cpu_open(const struct gbpf_backend_open_opts *opts, struct gbpf_backend **out)
{
	struct gbpf_backend *b = calloc(1, sizeof(*b));

	if (!b)
		return -ENOMEM;
	if (opts && opts->services)
		memcpy(&b->services, opts->services,
		       opts->services->sz < sizeof(b->services) ? opts->services->sz
								: sizeof(b->services));
	b->nr_cpus = online_cpus();
	*out = b;
	return 0;
}

static void cpu_close(struct gbpf_backend *b)
{
	free(b);
}

static int cpu_prog_load(struct gbpf_backend *b, const struct gbpf_prog_desc *prog,
			 struct gbpf_map_instance *maps, size_t map_cnt,
			 struct gbpf_backend_prog **out, char *log, size_t log_size)
{
	struct gbpf_backend_prog *p = calloc(1, sizeof(*p));
	struct gbpf_interp_opts opts = {.sz = sizeof(opts), .bounds_checked = 1};
	int err;

	if (!p)
		return -ENOMEM;
	err = gbpf_interp_create(prog, maps, map_cnt, &opts, &p->interp, log, log_size);
	if (err) {
		free(p);
		return err;
	}
	p->backend = b;
	p->maps = maps;
	p->map_cnt = map_cnt;
	snprintf(p->name, sizeof(p->name), "%s", prog->name ? prog->name : "prog");
	*out = p;
	return 0;
}

static void cpu_prog_unload(struct gbpf_backend_prog *p)
{
	if (!p)
		return;
	gbpf_interp_destroy(p->interp);
	free(p);
}

/* One host thread's share of a run: instances [first, last). */
struct cpu_worker {
	pthread_t thread;
	int on_thread; /* runs on its own pthread (join it) */
	struct gbpf_backend_prog *prog;
	const struct gbpf_run_opts *opts;
	struct gbpf_run_result *result;
	uint64_t first, last, threads;
	uint32_t block;
	uint64_t r0_first;
	int uniform;
	int err;
	uint64_t failed_thread;
	char log[512];
	atomic_int *stop;
};

static void *cpu_worker_run(void *arg)
{
	struct cpu_worker *w = arg;
	const struct gbpf_run_opts *o = w->opts;
	int shared = (o->flags & GBPF_RUN_SHARED_DATA) != 0;
	unsigned char *copy = NULL, *tls = NULL;
	size_t tls_size = gbpf_thread_local_size(w->prog->maps, w->prog->map_cnt);
	uint64_t t;

	w->uniform = 1;
	/* GPU_THREAD_LOCAL values: each instance (an emulated GPU thread) starts with zeros */
	if (tls_size && !(tls = malloc(tls_size))) {
		w->err = -ENOMEM;
		snprintf(w->log, sizeof(w->log), "out of memory for thread-local map values");
		return NULL;
	}
	if (o->data && !shared) {
		copy = malloc(o->data_size ? o->data_size : 1);
		if (!copy) {
			w->err = -ENOMEM;
			snprintf(w->log, sizeof(w->log), "out of memory for thread data");
			return NULL;
		}
	}
	for (t = w->first; t < w->last && !atomic_load_explicit(w->stop, memory_order_relaxed); t++) {
		void *mem = shared ? o->data : copy;
		struct gbpf_exec_env env = {
			.maps = w->prog->maps,
			.map_cnt = w->prog->map_cnt,
			.slot = (uint32_t)((t / w->block) % w->prog->backend->nr_cpus),
			.thread_id = t,
			.thread_count = w->threads,
			.block_dim = w->block,
			.prandom_state = 0x9e3779b97f4a7c15ull ^ (t * 0xbf58476d1ce4e5b9ull) ^ 1,
			.thread_local = tls,
			.thread_local_size = tls_size,
		};
		struct gbpf_interp_region region = {
			.addr = mem, .size = o->data_size, .writable = 1, .name = "data",
		};
		uint64_t args[5] = {(uint64_t)(uintptr_t)mem, mem ? o->data_size : 0, 0, 0, 0};
		struct gbpf_interp_result res = {0};
		int err;

		if (copy)
			memcpy(copy, o->data, o->data_size);
		if (tls)
			memset(tls, 0, tls_size);
		err = gbpf_interp_run(w->prog->interp, &env, args, mem ? &region : NULL, mem ? 1 : 0,
				      &res, w->log, sizeof(w->log));
		if (err) {
			w->err = err;
			w->failed_thread = t;
			atomic_store(w->stop, 1);
			break;
		}
		if (w->result->r0)
			w->result->r0[t] = res.r0;
		if (t == w->first)
			w->r0_first = res.r0;
		else if (res.r0 != w->r0_first)
			w->uniform = 0;
		if (t == 0 && w->result->data_out && mem)
			memcpy(w->result->data_out, mem, o->data_size);
	}
	free(copy);
	free(tls);
	return NULL;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cpu_prog_run(struct gbpf_backend_prog *p, const struct gbpf_run_opts *opts,
			struct gbpf_run_result *result, char *log, size_t log_size)
{
	uint64_t threads = opts->threads ? opts->threads : 1, per, start, i;
	uint32_t block = opts->block_size ? opts->block_size : DEFAULT_BLOCK;
	struct cpu_worker workers[MAX_WORKERS];
	size_t nworkers;
	atomic_int stop = 0;
	int err = 0, uniform = 1;

	if (opts->data_size && !opts->data) {
		snprintf(log, log_size, "data_size %zu given without data", opts->data_size);
		return -EINVAL;
	}
	nworkers = (size_t)((threads + INSTANCES_PER_WORKER - 1) / INSTANCES_PER_WORKER);
	if (nworkers > p->backend->nr_cpus)
		nworkers = p->backend->nr_cpus;
	if (nworkers > MAX_WORKERS)
		nworkers = MAX_WORKERS;
	if (nworkers == 0)
		nworkers = 1;
	per = (threads + nworkers - 1) / nworkers;
	memset(workers, 0, sizeof(workers));
	start = now_ns();
	for (i = 0; i < nworkers; i++) {
		struct cpu_worker *w = &workers[i];

		w->prog = p;
		w->opts = opts;
		w->result = result;
		w->first = i * per;
		w->last = w->first + per < threads ? w->first + per : threads;
		w->threads = threads;
		w->block = block;
		w->stop = &stop;
		/* Worker 0 runs on the calling thread. */
		if (i > 0) {
			w->on_thread = pthread_create(&w->thread, NULL, cpu_worker_run, w) == 0;
			if (!w->on_thread)
				cpu_worker_run(w);
		}
	}
	cpu_worker_run(&workers[0]);
	for (i = 1; i < nworkers; i++)
		if (workers[i].on_thread)
			pthread_join(workers[i].thread, NULL);
	result->elapsed_ns = now_ns() - start;
	for (i = 0; i < nworkers; i++) {
		struct cpu_worker *w = &workers[i];

		if (w->err && !err) {
			err = w->err;
			snprintf(log, log_size, "%s: thread %llu: %s", p->name,
				 (unsigned long long)w->failed_thread, w->log);
		}
		if (w->first < w->last && (!w->uniform || w->r0_first != workers[0].r0_first))
			uniform = 0;
	}
	if (err)
		return err;
	result->r0_first = workers[0].r0_first;
	result->r0_distinct = uniform ? 1 : 2;
	return 0;
}

GBPF_PLUGIN_EXPORT int gbpf_plugin_get_backend_table(uint32_t abi_version, struct gbpf_backend_ops *ops,
						     struct gbpf_backend_caps *caps);
GBPF_PLUGIN_EXPORT int gbpf_plugin_get_backend_table(uint32_t abi_version, struct gbpf_backend_ops *ops,
						     struct gbpf_backend_caps *caps)
{
	const struct gbpf_backend_ops table = {
		.sz = sizeof(table),
		.name = "cpu",
		.description = "reference interpreter on the host CPU (bounds-checked)",
		.plugin_version = CPU_PLUGIN_VERSION,
		.priority = 0,
		.query_devices = cpu_query_devices,
		.open = cpu_open,
		.close = cpu_close,
		.prog_load = cpu_prog_load,
		.prog_run = cpu_prog_run,
		.prog_unload = cpu_prog_unload,
	};
	const struct gbpf_backend_caps my_caps = {
		.sz = sizeof(my_caps),
		.flags = GBPF_CAP_PROG_RUN | GBPF_CAP_SANDBOXED,
	};

	if (GBPF_VERSION_MAJOR(abi_version) == GBPF_VERSION_MAJOR(GBPF_PLUGIN_ABI_VERSION) &&
	    (!ops || !caps || ops->sz < sizeof(size_t) || caps->sz < sizeof(size_t)))
		return -EINVAL;
	return gbpf_plugin_tables_out(abi_version, &table, &my_caps, ops, caps);
}
