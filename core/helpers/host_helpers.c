/* SPDX-License-Identifier: MIT */
/*
 * Host implementations of the helpers (interpreter, host probes) and the
 * helper name table. GPU helpers are emulated from the execution
 * environment: one program instance stands for one GPU thread.
 */
#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <gbpf/helper_ids.h>
#include <gbpf/helpers.h>

#include "core/helpers/helpers_internal.h"
#include "maps/map.h"
#include "maps/map_layout.h"

#define RET_ERR(e) ((uint64_t)(int64_t)(e))
#define GPU_WARP 32u

/* A map argument: its validated header, or NULL. */
static const struct gbpf_map_hdr *map_hdr(uint64_t r)
{
	struct gbpf_map_instance *map = (struct gbpf_map_instance *)(uintptr_t)r;

	if (!map || gbpf_map_mem_validate(map->mem, map->mem_size))
		return NULL;
	return map->mem;
}

/* Slot a helper uses: per-GPU-thread arrays index by thread, the rest by CPU / SM. */
static uint32_t env_slot(const struct gbpf_exec_env *env, const struct gbpf_map_hdr *h)
{
	if (h->type == GBPF_MAP_TYPE_PERGPUTHREAD_ARRAY)
		return env->thread_id > UINT32_MAX ? UINT32_MAX : (uint32_t)env->thread_id;
	return env->slot;
}

size_t gbpf_thread_local_size(const struct gbpf_map_instance *maps, size_t map_cnt)
{
	size_t n = 0;

	/* the instances' descriptions need not be one array: gbpf_thread_local_off's rule, map by map */
	for (size_t i = 0; i < map_cnt; i++)
		if (maps[i].desc)
			n += gbpf_thread_local_off(maps[i].desc, 1, 1);
	return n;
}

/*
 * Element of a GPU_THREAD_LOCAL map in the instance's own values (its maps
 * before it in order, then the index), or NULL: no values here (a host
 * probe), an index out of range, or a map that is not the program's.
 */
static void *thread_local_elem(struct gbpf_exec_env *env, uint64_t map, const struct gbpf_map_hdr *h,
			       uint64_t key)
{
	const struct gbpf_map_instance *m = (const struct gbpf_map_instance *)(uintptr_t)map;
	size_t i = (size_t)(m - env->maps), off;
	uint32_t idx;

	if (!env->thread_local || !env->maps || m < env->maps || i >= env->map_cnt)
		return NULL;
	memcpy(&idx, (const void *)(uintptr_t)key, sizeof(idx));
	if (idx >= h->max_entries)
		return NULL;
	off = gbpf_thread_local_size(env->maps, i) + (size_t)idx * h->value_stride;
	if (off + h->value_stride > env->thread_local_size)
		return NULL;
	return env->thread_local + off;
}

static uint64_t h_map_lookup(struct gbpf_exec_env *env, uint64_t map, uint64_t key, uint64_t r3,
			     uint64_t r4, uint64_t r5)
{
	const struct gbpf_map_hdr *h = map_hdr(map);

	if (!h || !gbpf_hh_can_read(env, key, h->key_size ? h->key_size : 1))
		return 0;
	if (h->type == GBPF_MAP_TYPE_GPU_THREAD_LOCAL)
		return (uint64_t)(uintptr_t)thread_local_elem(env, map, h, key);
	return (uint64_t)(uintptr_t)gbpf_map_lookup((struct gbpf_map_instance *)(uintptr_t)map,
						    (const void *)(uintptr_t)key, env_slot(env, h));
}

static uint64_t h_map_update(struct gbpf_exec_env *env, uint64_t map, uint64_t key, uint64_t value,
			     uint64_t flags, uint64_t r5)
{
	const struct gbpf_map_hdr *h = map_hdr(map);

	if (!h)
		return RET_ERR(-EINVAL);
	if (!gbpf_hh_can_read(env, key, h->key_size ? h->key_size : 1) ||
	    !gbpf_hh_can_read(env, value, h->value_size ? h->value_size : 1))
		return RET_ERR(-EFAULT);
	if (h->type == GBPF_MAP_TYPE_GPU_THREAD_LOCAL) {
		/* as an array: every element exists */
		void *elem = thread_local_elem(env, map, h, key);

		if (flags > GBPF_EXIST)
			return RET_ERR(-EINVAL);
		if (flags == GBPF_NOEXIST)
			return RET_ERR(elem ? -EEXIST : -E2BIG);
		if (!elem)
			return RET_ERR(env->thread_local ? -E2BIG : -EOPNOTSUPP);
		memcpy(elem, (const void *)(uintptr_t)value, h->value_size);
		return 0;
	}
	return RET_ERR(gbpf_map_update((struct gbpf_map_instance *)(uintptr_t)map,
				       (const void *)(uintptr_t)key, (const void *)(uintptr_t)value,
				       flags, env_slot(env, h)));
}

static uint64_t h_map_delete(struct gbpf_exec_env *env, uint64_t map, uint64_t key, uint64_t r3,
			     uint64_t r4, uint64_t r5)
{
	const struct gbpf_map_hdr *h = map_hdr(map);

	if (!h)
		return RET_ERR(-EINVAL);
	if (!gbpf_hh_can_read(env, key, h->key_size ? h->key_size : 1))
		return RET_ERR(-EFAULT);
	return RET_ERR(gbpf_map_delete((struct gbpf_map_instance *)(uintptr_t)map,
				       (const void *)(uintptr_t)key));
}

static uint64_t h_probe_read(struct gbpf_exec_env *env, uint64_t dst, uint64_t size, uint64_t src,
			     uint64_t r4, uint64_t r5)
{
	if (size == 0)
		return 0;
	if (size > UINT32_MAX || !gbpf_hh_can_write(env, dst, size))
		return RET_ERR(-EFAULT);
	if (!gbpf_hh_can_read(env, src, size)) {
		/* Linux zeroes the destination so the program never sees stale bytes. */
		memset((void *)(uintptr_t)dst, 0, (size_t)size);
		return RET_ERR(-EFAULT);
	}
	memmove((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, (size_t)size);
	return 0;
}

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t h_ktime(struct gbpf_exec_env *env, uint64_t r1, uint64_t r2, uint64_t r3,
			uint64_t r4, uint64_t r5)
{
	return clock_ns(CLOCK_MONOTONIC);
}

static uint64_t h_ktime_boot(struct gbpf_exec_env *env, uint64_t r1, uint64_t r2, uint64_t r3,
			     uint64_t r4, uint64_t r5)
{
	return clock_ns(CLOCK_BOOTTIME);
}

static uint64_t h_globaltimer(struct gbpf_exec_env *env, uint64_t r1, uint64_t r2, uint64_t r3,
			      uint64_t r4, uint64_t r5)
{
	return clock_ns(CLOCK_REALTIME);
}

static uint64_t h_trace_printk(struct gbpf_exec_env *env, uint64_t fmt, uint64_t fmt_size,
			       uint64_t a1, uint64_t a2, uint64_t a3)
{
	const uint64_t args[3] = {a1, a2, a3};
	char text[HELPER_TEXT_MAX];
	int n = gbpf_hh_format(env, fmt, fmt_size, args, text, sizeof(text));

	if (n < 0)
		return RET_ERR(n);
	gbpf_hh_emit(env, text, (size_t)n);
	return (uint64_t)n;
}

static uint64_t h_puts(struct gbpf_exec_env *env, uint64_t str, uint64_t r2, uint64_t r3,
		       uint64_t r4, uint64_t r5)
{
	char text[HELPER_TEXT_MAX];
	int n = gbpf_hh_read_str(env, str, text, sizeof(text) - 1);

	if (n < 0)
		return RET_ERR(n);
	text[n++] = '\n';
	gbpf_hh_emit(env, text, (size_t)n);
	return 0;
}

static uint64_t h_prandom(struct gbpf_exec_env *env, uint64_t r1, uint64_t r2, uint64_t r3,
			  uint64_t r4, uint64_t r5)
{
	uint64_t x = env->prandom_state;

	/* xorshift64 has 0 as a fixed point: seed from the thread id instead. */
	if (!x)
		x = 0x9e3779b97f4a7c15ull ^ ((env->thread_id + 1) * 0xbf58476d1ce4e5b9ull);
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	env->prandom_state = x;
	return (uint32_t)((x * 0x2545f4914f6cdd1dull) >> 32);
}

static uint64_t h_slot(struct gbpf_exec_env *env, uint64_t r1, uint64_t r2, uint64_t r3,
		       uint64_t r4, uint64_t r5)
{
	return env->slot;
}

static uint64_t h_pid_tgid(struct gbpf_exec_env *env, uint64_t r1, uint64_t r2, uint64_t r3,
			   uint64_t r4, uint64_t r5)
{
	return ((uint64_t)(uint32_t)getpid() << 32) | (uint32_t)syscall(SYS_gettid);
}

static uint64_t h_perf_event_output(struct gbpf_exec_env *env, uint64_t ctx, uint64_t map,
				    uint64_t flags, uint64_t data, uint64_t size)
{
	uint64_t idx = flags & 0xffffffffull;

	/* The upper bits (BPF_F_CTXLEN_MASK) would append context bytes: unsupported. */
	if (flags >> 32)
		return RET_ERR(-EINVAL);
	if (!gbpf_hh_can_read(env, data, size))
		return RET_ERR(-EFAULT);
	if (idx == GBPF_F_CURRENT_CPU)
		idx = env->slot;
	return RET_ERR(gbpf_perf_event_output((struct gbpf_map_instance *)(uintptr_t)map,
					      (uint32_t)idx, (const void *)(uintptr_t)data, size));
}

static uint64_t h_ringbuf_output(struct gbpf_exec_env *env, uint64_t map, uint64_t data,
				 uint64_t size, uint64_t flags, uint64_t r5)
{
	if (!gbpf_hh_can_read(env, data, size))
		return RET_ERR(-EFAULT);
	return RET_ERR(gbpf_ringbuf_output_on((struct gbpf_map_instance *)(uintptr_t)map, env->slot,
					      (const void *)(uintptr_t)data, size, flags));
}

static uint64_t h_ringbuf_reserve(struct gbpf_exec_env *env, uint64_t map, uint64_t size,
				  uint64_t flags, uint64_t r4, uint64_t r5)
{
	return (uint64_t)(uintptr_t)gbpf_ringbuf_reserve_on(
		(struct gbpf_map_instance *)(uintptr_t)map, env->slot, size, flags);
}

/* submit/discard get no map: find the ring buffer of env->maps holding the record. */
static struct gbpf_map_instance *ring_of(struct gbpf_exec_env *env, uint64_t rec)
{
	for (size_t i = 0; env->maps && i < env->map_cnt; i++) {
		uint64_t base = (uint64_t)(uintptr_t)env->maps[i].mem;

		if (base && rec > base && rec - base < env->maps[i].mem_size)
			return &env->maps[i];
	}
	return NULL;
}

static uint64_t h_ringbuf_submit(struct gbpf_exec_env *env, uint64_t rec, uint64_t flags,
				 uint64_t r3, uint64_t r4, uint64_t r5)
{
	struct gbpf_map_instance *map = ring_of(env, rec);

	if (map)
		gbpf_ringbuf_submit(map, (void *)(uintptr_t)rec, flags);
	return 0;
}

static uint64_t h_ringbuf_discard(struct gbpf_exec_env *env, uint64_t rec, uint64_t flags,
				  uint64_t r3, uint64_t r4, uint64_t r5)
{
	struct gbpf_map_instance *map = ring_of(env, rec);

	if (map)
		gbpf_ringbuf_discard(map, (void *)(uintptr_t)rec, flags);
	return 0;
}

/* Emulated launch geometry: a 1-D grid of thread_count threads in blocks of block_dim. */
static uint64_t env_threads(const struct gbpf_exec_env *env)
{
	return env->thread_count ? env->thread_count : 1;
}

static uint64_t env_block_dim(const struct gbpf_exec_env *env)
{
	return env->block_dim ? env->block_dim : env_threads(env);
}

static uint64_t put_xyz(struct gbpf_exec_env *env, uint64_t px, uint64_t py, uint64_t pz,
			uint64_t x, uint64_t yz)
{
	if (!gbpf_hh_can_write(env, px, 8) || !gbpf_hh_can_write(env, py, 8) ||
	    !gbpf_hh_can_write(env, pz, 8))
		return RET_ERR(-EFAULT);
	memcpy((void *)(uintptr_t)px, &x, 8);
	memcpy((void *)(uintptr_t)py, &yz, 8);
	memcpy((void *)(uintptr_t)pz, &yz, 8);
	return 0;
}

static uint64_t h_block_idx(struct gbpf_exec_env *env, uint64_t x, uint64_t y, uint64_t z,
			    uint64_t r4, uint64_t r5)
{
	return put_xyz(env, x, y, z, env->thread_id / env_block_dim(env), 0);
}

static uint64_t h_block_dim(struct gbpf_exec_env *env, uint64_t x, uint64_t y, uint64_t z,
			    uint64_t r4, uint64_t r5)
{
	return put_xyz(env, x, y, z, env_block_dim(env), 1);
}

static uint64_t h_thread_idx(struct gbpf_exec_env *env, uint64_t x, uint64_t y, uint64_t z,
			     uint64_t r4, uint64_t r5)
{
	return put_xyz(env, x, y, z, env->thread_id % env_block_dim(env), 0);
}

static uint64_t h_grid_dim(struct gbpf_exec_env *env, uint64_t x, uint64_t y, uint64_t z,
			   uint64_t r4, uint64_t r5)
{
	uint64_t bd = env_block_dim(env);

	return put_xyz(env, x, y, z, (env_threads(env) + bd - 1) / bd, 1);
}

static uint64_t h_membar(struct gbpf_exec_env *env, uint64_t r1, uint64_t r2, uint64_t r3,
			 uint64_t r4, uint64_t r5)
{
	atomic_thread_fence(memory_order_seq_cst);
	return 0;
}

static uint64_t h_exit(struct gbpf_exec_env *env, uint64_t r1, uint64_t r2, uint64_t r3,
		       uint64_t r4, uint64_t r5)
{
	env->exit_requested = 1;
	return 0;
}

static uint64_t h_warp_id(struct gbpf_exec_env *env, uint64_t r1, uint64_t r2, uint64_t r3,
			  uint64_t r4, uint64_t r5)
{
	return (env->thread_id % env_block_dim(env)) / GPU_WARP;
}

static uint64_t h_lane_id(struct gbpf_exec_env *env, uint64_t r1, uint64_t r2, uint64_t r3,
			  uint64_t r4, uint64_t r5)
{
	return (env->thread_id % env_block_dim(env)) % GPU_WARP;
}

static uint64_t h_global_thread_id(struct gbpf_exec_env *env, uint64_t r1, uint64_t r2, uint64_t r3,
				   uint64_t r4, uint64_t r5)
{
	return env->thread_id;
}

static uint64_t h_thread_count(struct gbpf_exec_env *env, uint64_t r1, uint64_t r2, uint64_t r3,
			       uint64_t r4, uint64_t r5)
{
	return env_threads(env);
}

/* bcc's log2l: 0 and 1 share bucket 0 */
static uint64_t h_log2(struct gbpf_exec_env *env, uint64_t v, uint64_t r2, uint64_t r3, uint64_t r4,
		       uint64_t r5)
{
	return v ? 63u - (unsigned)__builtin_clzll(v) : 0;
}

static const struct helper_entry {
	uint32_t id;
	const char *name;
	gbpf_host_helper_fn fn;
} helper_table[] = {
	{GBPF_HELPER_MAP_LOOKUP_ELEM, "bpf_map_lookup_elem", h_map_lookup},
	{GBPF_HELPER_MAP_UPDATE_ELEM, "bpf_map_update_elem", h_map_update},
	{GBPF_HELPER_MAP_DELETE_ELEM, "bpf_map_delete_elem", h_map_delete},
	{GBPF_HELPER_PROBE_READ, "bpf_probe_read", h_probe_read},
	{GBPF_HELPER_KTIME_GET_NS, "bpf_ktime_get_ns", h_ktime},
	{GBPF_HELPER_TRACE_PRINTK, "bpf_trace_printk", h_trace_printk},
	{GBPF_HELPER_GET_PRANDOM_U32, "bpf_get_prandom_u32", h_prandom},
	{GBPF_HELPER_GET_SMP_PROCESSOR_ID, "bpf_get_smp_processor_id", h_slot},
	{GBPF_HELPER_GET_CURRENT_PID_TGID, "bpf_get_current_pid_tgid", h_pid_tgid},
	{GBPF_HELPER_PERF_EVENT_OUTPUT, "bpf_perf_event_output", h_perf_event_output},
	{GBPF_HELPER_PROBE_READ_USER, "bpf_probe_read_user", h_probe_read},
	{GBPF_HELPER_PROBE_READ_KERNEL, "bpf_probe_read_kernel", h_probe_read},
	{GBPF_HELPER_KTIME_GET_BOOT_NS, "bpf_ktime_get_boot_ns", h_ktime_boot},
	{GBPF_HELPER_RINGBUF_OUTPUT, "bpf_ringbuf_output", h_ringbuf_output},
	{GBPF_HELPER_RINGBUF_RESERVE, "bpf_ringbuf_reserve", h_ringbuf_reserve},
	{GBPF_HELPER_RINGBUF_SUBMIT, "bpf_ringbuf_submit", h_ringbuf_submit},
	{GBPF_HELPER_RINGBUF_DISCARD, "bpf_ringbuf_discard", h_ringbuf_discard},
	{GBPF_HELPER_GPU_PUTS, "bpf_gpu_puts", h_puts},
	{GBPF_HELPER_GPU_GLOBALTIMER, "bpf_gpu_globaltimer", h_globaltimer},
	{GBPF_HELPER_GPU_BLOCK_IDX, "bpf_gpu_block_idx", h_block_idx},
	{GBPF_HELPER_GPU_BLOCK_DIM, "bpf_gpu_block_dim", h_block_dim},
	{GBPF_HELPER_GPU_THREAD_IDX, "bpf_gpu_thread_idx", h_thread_idx},
	{GBPF_HELPER_GPU_MEMBAR, "bpf_gpu_membar", h_membar},
	{GBPF_HELPER_GPU_EXIT, "bpf_gpu_exit", h_exit},
	{GBPF_HELPER_GPU_GRID_DIM, "bpf_gpu_grid_dim", h_grid_dim},
	{GBPF_HELPER_GPU_SM_ID, "bpf_gpu_sm_id", h_slot},
	{GBPF_HELPER_GPU_WARP_ID, "bpf_gpu_warp_id", h_warp_id},
	{GBPF_HELPER_GPU_LANE_ID, "bpf_gpu_lane_id", h_lane_id},
	{GBPF_HELPER_GPU_GLOBAL_THREAD_ID, "bpf_gpu_global_thread_id", h_global_thread_id},
	{GBPF_HELPER_GPU_THREAD_COUNT, "bpf_gpu_thread_count", h_thread_count},
	{GBPF_HELPER_LOG2, "bpf_log2", h_log2},
};

static const struct helper_entry *find(uint32_t id)
{
	for (size_t i = 0; i < sizeof(helper_table) / sizeof(helper_table[0]); i++)
		if (helper_table[i].id == id)
			return &helper_table[i];
	return NULL;
}

gbpf_host_helper_fn gbpf_host_helper_get(uint32_t id)
{
	const struct helper_entry *e = find(id);

	return e ? e->fn : NULL;
}

const char *gbpf_helper_name(uint32_t id)
{
	const struct helper_entry *e = find(id);

	return e ? e->name : NULL;
}
