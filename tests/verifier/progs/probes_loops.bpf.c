// SPDX-License-Identifier: MIT
/*
 * Verifier corpus in C: bounded loops whose body branches on a helper's
 * result. Without pruning that ignores values which decide nothing (the
 * counters below), the states double at every iteration and the programs
 * exceed the complexity limit; the ones marked reject must stay rejected
 * (a later iteration goes out of bounds). "EXPECT <function>: ..." lines
 * are read by tests/verifier/test_c_corpus.c, which verifies with a limit of
 * 200,000 processed instructions (a fifth of the default); "max N" bounds
 * each program well below it. ringbuf_ok_and_full, map_update_successes and
 * lookups_with_hits went over 1,000,000 before pruning ignored the counters
 * (lookups_with_hits also needs its __u32 key, the loop counter, restored
 * from the stack); clang compiles ringbuf_lost_count without a branch.
 */
#include <gbpf/probe.h>

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 16);
} rb SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u64);
} seen SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u64);
} totals SEC(".maps");

struct slots {
	__u64 v[48];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct slots);
} table SEC(".maps");

struct rec {
	__u64 launch;
	__u64 i;
};

static __always_inline void add_total(__u32 k, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&totals, &k);

	if (v)
		__sync_fetch_and_add(v, n);
}

/* EXPECT ringbuf_lost_count: accept max 3000 */
SEC("host/launch")
int ringbuf_lost_count(struct gbpf_host_launch_ctx *ctx)
{
	struct rec r = {};
	__u64 lost = 0;

	for (int i = 0; i < 64; i++) {
		r.launch = ctx->launch_id;
		r.i = i;
		if (bpf_ringbuf_output(&rb, &r, sizeof(r), 0) < 0)
			lost++;
	}
	add_total(0, lost);
	return 0;
}

/* EXPECT ringbuf_ok_and_full: accept max 5000 */
SEC("host/launch")
int ringbuf_ok_and_full(struct gbpf_host_launch_ctx *ctx)
{
	struct rec r = {};
	__u64 ok = 0, full = 0;

	for (int i = 0; i < 64; i++) {
		r.launch = ctx->launch_id;
		r.i = i;
		if (bpf_ringbuf_output(&rb, &r, sizeof(r), 0))
			full++;
		else
			ok++;
	}
	add_total(0, ok);
	add_total(1, full);
	return 0;
}

/* EXPECT map_update_successes: accept max 10000 */
SEC("gpu/exit/*")
int map_update_successes(struct gbpf_gpu_ctx *ctx)
{
	__u64 one = 1, done = 0, failed = 0;

	for (__u32 k = 0; k < 100; k++) {
		__u32 key = (__u32)(ctx->kernel_id & 0xff) + k;

		if (bpf_map_update_elem(&seen, &key, &one, BPF_NOEXIST) == 0)
			done++;
		else
			failed++;
	}
	add_total(2, done);
	add_total(3, failed);
	return 0;
}

/* EXPECT lookups_with_hits: accept max 5000 */
SEC("gpu/entry/*")
int lookups_with_hits(struct gbpf_gpu_ctx *ctx)
{
	__u64 hits = 0, sum = 0;

	for (__u32 k = 0; k < 64; k++) {
		__u64 *v = bpf_map_lookup_elem(&seen, &k);

		if (v) {
			hits++;
			sum += *v;
		}
	}
	add_total(0, hits);
	add_total(1, sum);
	return 0;
}

/* The counter indexes an array of 48: after 48 failures it is out of bounds. */
/* EXPECT counter_indexes_array: reject invalid access to map_value */
SEC("host/launch")
int counter_indexes_array(struct gbpf_host_launch_ctx *ctx)
{
	struct rec r = {};
	__u32 zero = 0, lost = 0;
	struct slots *s = bpf_map_lookup_elem(&table, &zero);

	if (!s)
		return 0;
	for (int i = 0; i < 64; i++) {
		r.launch = ctx->launch_id;
		r.i = i;
		if (bpf_ringbuf_output(&rb, &r, sizeof(r), 0) < 0) {
			s->v[lost] = i;
			lost++;
		}
	}
	return 0;
}

/* The loop index goes past the array in a late iteration only. */
/* EXPECT late_iteration_out_of_bounds: reject invalid access to map_value */
SEC("host/launch")
int late_iteration_out_of_bounds(struct gbpf_host_launch_ctx *ctx)
{
	struct rec r = {};
	__u32 zero = 0;
	__u64 lost = 0;
	struct slots *s = bpf_map_lookup_elem(&table, &zero);

	if (!s)
		return 0;
	for (int i = 0; i < 50; i++) {
		r.launch = ctx->launch_id;
		r.i = i;
		if (bpf_ringbuf_output(&rb, &r, sizeof(r), 0) < 0)
			lost++;
		else
			s->v[i] = lost;
	}
	return 0;
}

/* The counter is returned: its range is part of the result, and stays exact. */
/* EXPECT returns_the_count: accept max 1000 */
SEC("host/launch")
int returns_the_count(struct gbpf_host_launch_ctx *ctx)
{
	struct rec r = {};
	int lost = 0;

	for (int i = 0; i < 16; i++) {
		r.launch = ctx->launch_id;
		r.i = i;
		if (bpf_ringbuf_output(&rb, &r, sizeof(r), 0) < 0)
			lost++;
	}
	return lost;
}

char LICENSE[] SEC("license") = "GPL";
