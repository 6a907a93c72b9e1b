/* SPDX-License-Identifier: MIT */
/* Host helpers: names, map helpers, probe_read bounds, trace_printk formats, GPU emulation. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <gbpf/helper_ids.h>

#include "core/helpers/host_helpers.h"
#include "tests/maps/maps_test_util.h"

/* Memory the "program" may touch: one readable+writable region, one read-only. */
static uint8_t stack[512];
static const char rodata[] = "hello %s, %d %u %x|%ld %lld %llu %lx %llx %i %li|%c%%";
static char captured[1024];
static size_t captured_len;

static int in(uint64_t addr, uint64_t size, const void *base, size_t len)
{
	uint64_t b = (uint64_t)(uintptr_t)base;

	return addr >= b && size <= len && addr - b <= len - size;
}

static int access_ok(struct gbpf_exec_env *env, uint64_t addr, uint64_t size, int write)
{
	if (in(addr, size, stack, sizeof(stack)))
		return 1;
	return !write && in(addr, size, rodata, sizeof(rodata));
}

static void sink(void *ctx, const char *text, size_t len)
{
	if (captured_len + len < sizeof(captured)) {
		memcpy(captured + captured_len, text, len);
		captured_len += len;
		captured[captured_len] = 0;
	}
}

static uint64_t call(struct gbpf_exec_env *env, uint32_t id, uint64_t r1, uint64_t r2, uint64_t r3,
		     uint64_t r4, uint64_t r5)
{
	gbpf_host_helper_fn fn = gbpf_host_helper_get(id);

	return fn ? fn(env, r1, r2, r3, r4, r5) : 0xdeadull;
}

#define P(x) ((uint64_t)(uintptr_t)(x))

static void test_names(void)
{
	static const uint32_t ids[] = {1,   2,	 3,   4,   5,	6,   7,	  8,   14,  25,
				       112, 113, 125, 130, 131, 132, 133, 501, 502, 503,
				       504, 505, 506, 507, 508, 509, 510, 511, 600, 601};
	int ok = 1;

	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++)
		ok &= gbpf_host_helper_get(ids[i]) != NULL && gbpf_helper_name(ids[i]) != NULL &&
		      strncmp(gbpf_helper_name(ids[i]), "bpf_", 4) == 0;
	tap_ok(ok, "all 30 helpers have a host implementation and a bpf_ name");
	tap_ok(strcmp(gbpf_helper_name(1), "bpf_map_lookup_elem") == 0 &&
		       strcmp(gbpf_helper_name(505), "bpf_gpu_thread_idx") == 0 &&
		       strcmp(gbpf_helper_name(131), "bpf_ringbuf_reserve") == 0,
	       "names: bpf_map_lookup_elem, bpf_gpu_thread_idx, bpf_ringbuf_reserve");
	tap_ok(gbpf_host_helper_get(9999) == NULL && gbpf_helper_name(0) == NULL &&
		       gbpf_helper_name(12) == NULL,
	       "unknown helpers: NULL");
}

static void test_map_helpers(struct gbpf_exec_env *env)
{
	struct gbpf_map_desc dh = mk_desc("h", GBPF_MAP_TYPE_HASH, 4, 8, 8);
	struct gbpf_map_desc dp = mk_desc("p", GBPF_MAP_TYPE_PERCPU_ARRAY, 4, 8, 2);
	struct gbpf_map_desc dt = mk_desc("t", GBPF_MAP_TYPE_PERGPUTHREAD_ARRAY, 4, 8, 1);
	struct gbpf_map_instance maps[3];
	uint32_t *key = (uint32_t *)stack;
	uint64_t *val = (uint64_t *)(stack + 8), r, *p;

	if (gbpf_map_instance_create(&maps[0], &dh, 1) ||
	    gbpf_map_instance_create(&maps[1], &dp, 4) ||
	    gbpf_map_instance_create(&maps[2], &dt, 64)) {
		tap_ok(0, "map helper maps create");
		return;
	}
	env->maps = maps;
	env->map_cnt = 3;
	*key = 7;
	*val = 99;
	r = call(env, GBPF_HELPER_MAP_UPDATE_ELEM, P(&maps[0]), P(key), P(val), GBPF_NOEXIST, 0);
	tap_ok(r == 0, "map_update_elem inserts");
	r = call(env, GBPF_HELPER_MAP_UPDATE_ELEM, P(&maps[0]), P(key), P(val), GBPF_NOEXIST, 0);
	tap_ok((int64_t)r == -EEXIST, "map_update_elem NOEXIST twice -> -EEXIST");
	p = (uint64_t *)(uintptr_t)call(env, GBPF_HELPER_MAP_LOOKUP_ELEM, P(&maps[0]), P(key), 0, 0,
					0);
	tap_ok(p && *p == 99, "map_lookup_elem returns the value pointer");
	r = call(env, GBPF_HELPER_MAP_LOOKUP_ELEM, P(&maps[0]), P(stack + 510), 0, 0, 0);
	tap_ok(r == 0, "map_lookup_elem with a key crossing the allowed region -> NULL");
	r = call(env, GBPF_HELPER_MAP_UPDATE_ELEM, P(&maps[0]), P(key), P(stack + 508), 0, 0);
	tap_ok((int64_t)r == -EFAULT, "map_update_elem with a value outside memory -> -EFAULT");
	r = call(env, GBPF_HELPER_MAP_DELETE_ELEM, P(&maps[0]), P(key), 0, 0, 0);
	tap_ok(r == 0 && (int64_t)call(env, GBPF_HELPER_MAP_DELETE_ELEM, P(&maps[0]), P(key), 0, 0,
				       0) == -ENOENT,
	       "map_delete_elem, then -ENOENT");
	r = call(env, GBPF_HELPER_MAP_LOOKUP_ELEM, 0, P(key), 0, 0, 0);
	tap_ok(r == 0, "map_lookup_elem with a NULL map -> NULL");

	/* per-CPU: the helper uses env->slot */
	*key = 1;
	*val = 5;
	env->slot = 3;
	r = call(env, GBPF_HELPER_MAP_UPDATE_ELEM, P(&maps[1]), P(key), P(val), 0, 0);
	tap_ok(r == 0 && *(uint64_t *)gbpf_map_lookup(&maps[1], key, 3) == 5 &&
		       *(uint64_t *)gbpf_map_lookup(&maps[1], key, 0) == 0,
	       "percpu update through the helper lands in env->slot (3)");
	env->slot = 4;
	tap_ok(call(env, GBPF_HELPER_MAP_LOOKUP_ELEM, P(&maps[1]), P(key), 0, 0, 0) == 0,
	       "percpu lookup with slot 4 of 4 -> NULL");
	env->slot = 0;
	/* per-thread: the helper uses env->thread_id */
	*key = 0;
	*val = 1234;
	env->thread_id = 17;
	r = call(env, GBPF_HELPER_MAP_UPDATE_ELEM, P(&maps[2]), P(key), P(val), 0, 0);
	tap_ok(r == 0 && *(uint64_t *)gbpf_map_lookup(&maps[2], key, 17) == 1234,
	       "per-thread array update lands in the thread's slot (17)");
	env->thread_id = 64;
	tap_ok(call(env, GBPF_HELPER_MAP_LOOKUP_ELEM, P(&maps[2]), P(key), 0, 0, 0) == 0,
	       "per-thread lookup of thread 64 of 64 -> NULL");
	env->thread_id = 0;
	for (int i = 0; i < 3; i++)
		gbpf_map_instance_destroy(&maps[i]);
	env->maps = NULL;
	env->map_cnt = 0;
}

static int count_rec(void *ctx, const void *data, size_t size)
{
	uint64_t *sum = ctx;

	*sum += size;
	return 0;
}

static void test_ring_helpers(struct gbpf_exec_env *env)
{
	struct gbpf_map_desc dr = mk_desc("rb", GBPF_MAP_TYPE_RINGBUF, 0, 0, 4096);
	struct gbpf_map_desc dp = mk_desc("pe", GBPF_MAP_TYPE_PERF_EVENT_ARRAY, 4, 4, 0);
	struct gbpf_map_instance maps[2];
	uint64_t r, sum = 0;
	uint8_t *rec;

	if (gbpf_map_instance_create(&maps[0], &dr, 1) ||
	    gbpf_map_instance_create(&maps[1], &dp, 2)) {
		tap_ok(0, "ring helper maps create");
		return;
	}
	env->maps = maps;
	env->map_cnt = 2;
	memset(stack, 7, 64);
	r = call(env, GBPF_HELPER_RINGBUF_OUTPUT, P(&maps[0]), P(stack), 10, 0, 0);
	tap_ok(r == 0, "ringbuf_output of 10 bytes");
	r = call(env, GBPF_HELPER_RINGBUF_OUTPUT, P(&maps[0]), P(stack + 500), 20, 0, 0);
	tap_ok((int64_t)r == -EFAULT, "ringbuf_output of unreadable data -> -EFAULT");
	rec = (uint8_t *)(uintptr_t)call(env, GBPF_HELPER_RINGBUF_RESERVE, P(&maps[0]), 6, 0, 0, 0);
	tap_ok(rec != NULL, "ringbuf_reserve of 6 bytes");
	if (rec) {
		memcpy(rec, "abcdef", 6);
		call(env, GBPF_HELPER_RINGBUF_SUBMIT, P(rec), 0, 0, 0, 0);
	}
	rec = (uint8_t *)(uintptr_t)call(env, GBPF_HELPER_RINGBUF_RESERVE, P(&maps[0]), 3, 0, 0, 0);
	if (rec)
		call(env, GBPF_HELPER_RINGBUF_DISCARD, P(rec), 0, 0, 0, 0);
	tap_ok(gbpf_ringbuf_consume(&maps[0], count_rec, &sum) == 2 && sum == 16,
	       "consumer sees output (10) and submitted (6), not the discarded record");
	env->slot = 1;
	r = call(env, GBPF_HELPER_PERF_EVENT_OUTPUT, 0, P(&maps[1]), GBPF_F_CURRENT_CPU, P(stack),
		 12);
	tap_ok(r == 0, "perf_event_output with BPF_F_CURRENT_CPU");
	r = call(env, GBPF_HELPER_PERF_EVENT_OUTPUT, 0, P(&maps[1]), 5, P(stack), 12);
	tap_ok((int64_t)r == -E2BIG, "perf_event_output to ring 5 of 2 -> -E2BIG");
	r = call(env, GBPF_HELPER_PERF_EVENT_OUTPUT, 0, P(&maps[1]), 1ull << 32, P(stack), 12);
	tap_ok((int64_t)r == -EINVAL, "perf_event_output with context-length flags -> -EINVAL");
	sum = 0;
	tap_ok(gbpf_ringbuf_consume(&maps[1], count_rec, &sum) == 1 && sum == 12,
	       "perf record of 12 bytes consumed");
	env->slot = 0;
	for (int i = 0; i < 2; i++)
		gbpf_map_instance_destroy(&maps[i]);
	env->maps = NULL;
	env->map_cnt = 0;
}

static void test_probe_read(struct gbpf_exec_env *env)
{
	uint64_t r;

	memset(stack, 0x55, 64);
	r = call(env, GBPF_HELPER_PROBE_READ, P(stack), 5, P(rodata), 0, 0);
	tap_ok(r == 0 && memcmp(stack, "hello", 5) == 0 && stack[5] == 0x55,
	       "probe_read copies exactly 5 allowed bytes");
	r = call(env, GBPF_HELPER_PROBE_READ_USER, P(stack), 16, P(rodata + sizeof(rodata) - 8), 0,
		 0);
	tap_ok((int64_t)r == -EFAULT && stack[0] == 0 && stack[15] == 0 && stack[16] == 0x55,
	       "probe_read_user across the end of allowed memory: -EFAULT, destination zeroed");
	memset(stack, 0x55, 64);
	r = call(env, GBPF_HELPER_PROBE_READ_KERNEL, P(stack), 8, 0, 0, 0);
	tap_ok((int64_t)r == -EFAULT && stack[0] == 0,
	       "probe_read_kernel of NULL: -EFAULT, zeroed");
	r = call(env, GBPF_HELPER_PROBE_READ, P(rodata), 4, P(stack), 0, 0);
	tap_ok((int64_t)r == -EFAULT && rodata[0] == 'h',
	       "probe_read into read-only memory -> -EFAULT");
	r = call(env, GBPF_HELPER_PROBE_READ, P(stack), 0, 0, 0, 0);
	tap_ok(r == 0, "probe_read of 0 bytes -> 0");
}

static int64_t printk(struct gbpf_exec_env *env, const char *fmt, uint64_t a1, uint64_t a2,
		      uint64_t a3)
{
	size_t n = strlen(fmt) + 1;

	memcpy(stack + 256, fmt, n);
	captured_len = 0;
	captured[0] = 0;
	return (int64_t)call(env, GBPF_HELPER_TRACE_PRINTK, P(stack + 256), n, a1, a2, a3);
}

static void test_printk(struct gbpf_exec_env *env)
{
	int64_t r;

	strcpy((char *)stack + 100, "world");
	r = printk(env, "hi %s %d %u", P(stack + 100), (uint64_t)-5, 0xffffffffffffffffull);
	tap_ok(r == 22 && strcmp(captured, "hi world -5 4294967295") == 0,
	       "%%s %%d %%u: \"%s\" (%lld)", captured, (long long)r);
	r = printk(env, "%x %lx %llx", 0x1234abcdef, 0x1234abcdef, 0xffffffffffffffffull);
	tap_ok(strcmp(captured, "34abcdef 1234abcdef ffffffffffffffff") == 0 &&
		       r == (int64_t)strlen(captured),
	       "%%x %%lx %%llx: \"%s\"", captured);
	r = printk(env, "%ld %lld %llu", (uint64_t)-1, (uint64_t)-2, (uint64_t)-3);
	tap_ok(strcmp(captured, "-1 -2 18446744073709551613") == 0, "%%ld %%lld %%llu: \"%s\"",
	       captured);
	r = printk(env, "%lu %i %li", 5, (uint64_t)-7, (uint64_t)-8);
	tap_ok(strcmp(captured, "5 -7 -8") == 0, "%%lu %%i %%li: \"%s\"", captured);
	r = printk(env, "%c%c 100%% %p", 'o', 'k', 0xdead);
	tap_ok(strcmp(captured, "ok 100% 0xdead") == 0, "%%c %%%% %%p: \"%s\"", captured);
	r = printk(env, "[%s]", 0x1000, 0, 0);
	tap_ok(r == 2 && strcmp(captured, "[]") == 0, "%%s of unreadable memory prints empty");
	r = printk(env, "%d %d %d %d", 1, 2, 3);
	tap_ok(r == -EINVAL && captured_len == 0, "4 conversions -> -EINVAL, nothing printed");
	r = printk(env, "%q", 1, 2, 3);
	tap_ok(r == -EINVAL, "unknown conversion %%q -> -EINVAL");
	r = printk(env, "%5d", 1, 2, 3);
	tap_ok(r == -EINVAL, "field width -> -EINVAL");
	r = printk(env, "%", 1, 2, 3);
	tap_ok(r == -EINVAL, "lone %% at the end -> -EINVAL");
	memcpy(stack + 256, "abc", 3);
	r = (int64_t)call(env, GBPF_HELPER_TRACE_PRINTK, P(stack + 256), 3, 0, 0, 0);
	tap_ok(r == -EINVAL, "format without NUL within fmt_size -> -EINVAL");
	r = (int64_t)call(env, GBPF_HELPER_TRACE_PRINTK, P(stack + 500), 100, 0, 0, 0);
	tap_ok(r == -EFAULT, "format crossing allowed memory -> -EFAULT");
	r = (int64_t)call(env, GBPF_HELPER_TRACE_PRINTK, P(rodata), sizeof(rodata), P(stack + 100),
			  1, 2);
	tap_ok(r == -EINVAL, "format with 11 conversions -> -EINVAL");
	captured_len = 0;
	r = (int64_t)call(env, GBPF_HELPER_GPU_PUTS, P(stack + 100), 0, 0, 0, 0);
	tap_ok(r == 0 && strcmp(captured, "world\n") == 0,
	       "gpu puts prints the string and a newline");
	r = (int64_t)call(env, GBPF_HELPER_GPU_PUTS, 0x1000, 0, 0, 0, 0);
	tap_ok(r == -EFAULT, "gpu puts of unreadable memory -> -EFAULT");
}

static void test_misc(struct gbpf_exec_env *env)
{
	struct timespec ts;
	uint64_t a, b, now, r, *xyz = (uint64_t *)(stack + 200);
	uint32_t x1, x2;
	int differ = 0;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	a = call(env, GBPF_HELPER_KTIME_GET_NS, 0, 0, 0, 0, 0);
	b = call(env, GBPF_HELPER_KTIME_GET_NS, 0, 0, 0, 0, 0);
	tap_ok(a >= now && b >= a && a - now < 1000000000ull, "ktime_get_ns is CLOCK_MONOTONIC");
	clock_gettime(CLOCK_BOOTTIME, &ts);
	now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	a = call(env, GBPF_HELPER_KTIME_GET_BOOT_NS, 0, 0, 0, 0, 0);
	tap_ok(a >= now && a - now < 1000000000ull, "ktime_get_boot_ns is CLOCK_BOOTTIME");
	clock_gettime(CLOCK_REALTIME, &ts);
	now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	a = call(env, GBPF_HELPER_GPU_GLOBALTIMER, 0, 0, 0, 0, 0);
	tap_ok(a >= now && a - now < 1000000000ull, "gpu globaltimer is CLOCK_REALTIME");

	env->prandom_state = 0;
	x1 = (uint32_t)call(env, GBPF_HELPER_GET_PRANDOM_U32, 0, 0, 0, 0, 0);
	a = env->prandom_state;
	for (int i = 0; i < 100; i++) {
		x2 = (uint32_t)call(env, GBPF_HELPER_GET_PRANDOM_U32, 0, 0, 0, 0, 0);
		differ += x2 != x1;
		x1 = x2;
	}
	tap_ok(a != 0 && differ >= 99, "prandom advances env->prandom_state (%d changes)", differ);
	env->prandom_state = 42;
	x1 = (uint32_t)call(env, GBPF_HELPER_GET_PRANDOM_U32, 0, 0, 0, 0, 0);
	env->prandom_state = 42;
	x2 = (uint32_t)call(env, GBPF_HELPER_GET_PRANDOM_U32, 0, 0, 0, 0, 0);
	tap_ok(x1 == x2, "prandom is deterministic from its state");

	env->slot = 9;
	tap_ok(call(env, GBPF_HELPER_GET_SMP_PROCESSOR_ID, 0, 0, 0, 0, 0) == 9 &&
		       call(env, GBPF_HELPER_GPU_SM_ID, 0, 0, 0, 0, 0) == 9,
	       "smp_processor_id and sm id are env->slot");
	r = call(env, GBPF_HELPER_GET_CURRENT_PID_TGID, 0, 0, 0, 0, 0);
	tap_ok(r >> 32 == (uint64_t)getpid() && (uint32_t)r != 0,
	       "pid_tgid: tgid in the upper half");

	/* 1000 threads in blocks of 128: thread 300 is block 2, thread 44, warp 1, lane 12. */
	env->thread_id = 300;
	env->thread_count = 1000;
	env->block_dim = 128;
	r = call(env, GBPF_HELPER_GPU_BLOCK_IDX, P(xyz), P(xyz + 1), P(xyz + 2), 0, 0);
	tap_ok(r == 0 && xyz[0] == 2 && xyz[1] == 0 && xyz[2] == 0, "block idx (2,0,0)");
	call(env, GBPF_HELPER_GPU_THREAD_IDX, P(xyz), P(xyz + 1), P(xyz + 2), 0, 0);
	tap_ok(xyz[0] == 44 && xyz[1] == 0 && xyz[2] == 0, "thread idx (44,0,0)");
	call(env, GBPF_HELPER_GPU_BLOCK_DIM, P(xyz), P(xyz + 1), P(xyz + 2), 0, 0);
	tap_ok(xyz[0] == 128 && xyz[1] == 1 && xyz[2] == 1, "block dim (128,1,1)");
	call(env, GBPF_HELPER_GPU_GRID_DIM, P(xyz), P(xyz + 1), P(xyz + 2), 0, 0);
	tap_ok(xyz[0] == 8 && xyz[1] == 1 && xyz[2] == 1, "grid dim (8,1,1) for 1000 threads");
	tap_ok(call(env, GBPF_HELPER_GPU_WARP_ID, 0, 0, 0, 0, 0) == 1 &&
		       call(env, GBPF_HELPER_GPU_LANE_ID, 0, 0, 0, 0, 0) == 12,
	       "warp id 1, lane id 12");
	tap_ok(call(env, GBPF_HELPER_GPU_GLOBAL_THREAD_ID, 0, 0, 0, 0, 0) == 300 &&
		       call(env, GBPF_HELPER_GPU_THREAD_COUNT, 0, 0, 0, 0, 0) == 1000,
	       "global thread id 300 of 1000");
	tap_ok(call(env, GBPF_HELPER_LOG2, 0, 0, 0, 0, 0) == 0 && call(env, GBPF_HELPER_LOG2, 1, 0, 0, 0, 0) == 0 &&
		       call(env, GBPF_HELPER_LOG2, 2, 0, 0, 0, 0) == 1 && call(env, GBPF_HELPER_LOG2, 3, 0, 0, 0, 0) == 1 &&
		       call(env, GBPF_HELPER_LOG2, 1024, 0, 0, 0, 0) == 10 &&
		       call(env, GBPF_HELPER_LOG2, 0x80000000ull, 0, 0, 0, 0) == 31 &&
		       call(env, GBPF_HELPER_LOG2, 0x100000000ull, 0, 0, 0, 0) == 32 &&
		       call(env, GBPF_HELPER_LOG2, UINT64_MAX, 0, 0, 0, 0) == 63,
	       "log2: 0 and 1 in bucket 0, 2..3 in 1, 2^32 in 32, 2^64 - 1 in 63");
	r = call(env, GBPF_HELPER_GPU_BLOCK_IDX, P(xyz), P(rodata), P(xyz + 2), 0, 0);
	tap_ok((int64_t)r == -EFAULT, "block idx into read-only memory -> -EFAULT");
	env->block_dim = 0;
	call(env, GBPF_HELPER_GPU_BLOCK_DIM, P(xyz), P(xyz + 1), P(xyz + 2), 0, 0);
	tap_ok(xyz[0] == 1000, "block_dim 0 means one block of thread_count");
	tap_ok(call(env, GBPF_HELPER_GPU_MEMBAR, 0, 0, 0, 0, 0) == 0, "membar returns 0");
	env->exit_requested = 0;
	call(env, GBPF_HELPER_GPU_EXIT, 0, 0, 0, 0, 0);
	tap_ok(env->exit_requested == 1, "gpu exit sets exit_requested");
	env->thread_id = 0;
	env->thread_count = 0;
	env->slot = 0;
}

/*
 * GPU_THREAD_LOCAL: the helpers reach the instance's own values (env->thread_local,
 * map by map after the program's earlier thread-local maps), never the map's block;
 * the host API sees nothing; no values (a host probe) means lookups find none.
 */
static void test_thread_local(struct gbpf_exec_env *env)
{
	struct gbpf_map_desc da = mk_desc("a", GBPF_MAP_TYPE_ARRAY, 4, 8, 2);
	struct gbpf_map_desc d1 = mk_desc("t1", GBPF_MAP_TYPE_GPU_THREAD_LOCAL, 4, 12, 2);
	struct gbpf_map_desc d2 = mk_desc("t2", GBPF_MAP_TYPE_GPU_THREAD_LOCAL, 4, 8, 3);
	struct gbpf_map_desc big = mk_desc("big", GBPF_MAP_TYPE_GPU_THREAD_LOCAL, 4, 8, 33);
	struct gbpf_map_instance maps[3], toobig;
	unsigned char tls[56];
	uint32_t *key = (uint32_t *)stack, next;
	uint64_t *val = (uint64_t *)(stack + 8), r, *p;

	if (gbpf_map_instance_create(&maps[0], &da, 1) || gbpf_map_instance_create(&maps[1], &d1, 1) ||
	    gbpf_map_instance_create(&maps[2], &d2, 1)) {
		tap_ok(0, "thread-local maps create");
		return;
	}
	tap_ok(gbpf_map_instance_create(&toobig, &big, 1) != 0,
	       "a thread-local map of 33 x 8 bytes is refused (a thread holds at most 256)");
	tap_ok(gbpf_thread_local_size(maps, 3) == 2 * 16 + 3 * 8,
	       "thread-local size: 2 x 16 (12 rounded to 8) + 3 x 8 bytes");
	memset(tls, 0xa5, sizeof(tls));
	env->maps = maps;
	env->map_cnt = 3;
	env->thread_local = tls;
	env->thread_local_size = sizeof(tls);
	*key = 1;
	p = (uint64_t *)(uintptr_t)call(env, GBPF_HELPER_MAP_LOOKUP_ELEM, P(&maps[2]), P(key), 0, 0, 0);
	tap_ok((unsigned char *)p == tls + 32 + 8, "t2[1] lies after t1's 32 bytes, 8 into t2");
	*val = 77;
	r = call(env, GBPF_HELPER_MAP_UPDATE_ELEM, P(&maps[2]), P(key), P(val), 0, 0);
	tap_ok(r == 0 && p && *p == 77, "update writes the instance's own value");
	r = call(env, GBPF_HELPER_MAP_UPDATE_ELEM, P(&maps[2]), P(key), P(val), GBPF_NOEXIST, 0);
	tap_ok((int64_t)r == -EEXIST, "update NOEXIST -> -EEXIST (every element exists)");
	*key = 3;
	tap_ok(call(env, GBPF_HELPER_MAP_LOOKUP_ELEM, P(&maps[2]), P(key), 0, 0, 0) == 0 &&
		       (int64_t)call(env, GBPF_HELPER_MAP_UPDATE_ELEM, P(&maps[2]), P(key), P(val), 0, 0) == -E2BIG,
	       "index 3 of 3: lookup NULL, update -E2BIG");
	*key = 1;
	tap_ok(gbpf_map_lookup(&maps[2], key, 0) == NULL && errno == EOPNOTSUPP &&
		       gbpf_map_update(&maps[2], key, val, 0, 0) == -EOPNOTSUPP &&
		       gbpf_map_get_next_key(&maps[2], NULL, &next) == -ENOENT,
	       "the host API: lookup and update refused, a walk finds no element");
	env->thread_local = NULL;
	env->thread_local_size = 0;
	tap_ok(call(env, GBPF_HELPER_MAP_LOOKUP_ELEM, P(&maps[2]), P(key), 0, 0, 0) == 0 &&
		       (int64_t)call(env, GBPF_HELPER_MAP_UPDATE_ELEM, P(&maps[2]), P(key), P(val), 0, 0) ==
			       -EOPNOTSUPP,
	       "outside a GPU thread (no values): lookup NULL, update -EOPNOTSUPP");
	env->maps = NULL;
	env->map_cnt = 0;
	for (int i = 0; i < 3; i++)
		gbpf_map_instance_destroy(&maps[i]);
}

int main(void)
{
	struct gbpf_exec_env env;

	memset(&env, 0, sizeof(env));
	env.access_ok = access_ok;
	env.print = sink;
	test_names();
	test_map_helpers(&env);
	test_ring_helpers(&env);
	test_probe_read(&env);
	test_printk(&env);
	test_misc(&env);
	test_thread_local(&env);
	return tap_done();
}
