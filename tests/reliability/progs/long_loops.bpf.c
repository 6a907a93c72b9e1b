/* SPDX-License-Identifier: MIT */
/*
 * Long loops whose body branches on a helper's result (test_long_loops.c).
 * A loop of N iterations that counts successes leaves N pending branches on
 * the verifier's first path; each is cut only if an explored state waits at
 * the loop head for its iteration, so the verifier must keep one per
 * iteration (not a fixed number per instruction) for the work to stay
 * linear in N. The counters only go to a map: their values decide nothing.
 *
 * "EXPECT <function>: accept max N" / "reject <text>" lines are read by the
 * test, which verifies with the default complexity limit (1,000,000).
 */
#include <linux/bpf.h>
#include <linux/types.h>
#include <bpf/bpf_helpers.h>
#include <gbpf/probe_ctx.h>

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 16);
} rb SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u64);
} seen SEC(".maps");

struct slots {
	__u64 v[48];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, struct slots);
} totals SEC(".maps");

struct rec {
	__u64 launch;
	__u64 i;
};

static __always_inline void add_total(__u32 k, __u64 n)
{
	struct slots *v = bpf_map_lookup_elem(&totals, &k);

	if (v)
		__sync_fetch_and_add(&v->v[0], n);
}

/* EXPECT ringbuf_ok_10000: accept max 400000 */
SEC("host/launch")
int ringbuf_ok_10000(struct gbpf_host_launch_ctx *ctx)
{
	struct rec r = {};
	__u64 ok = 0, full = 0;

#pragma clang loop unroll(disable)
	for (int i = 0; i < 10000; i++) {
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

/* EXPECT ringbuf_ok_20000: accept max 800000 */
SEC("host/launch")
int ringbuf_ok_20000(struct gbpf_host_launch_ctx *ctx)
{
	struct rec r = {};
	__u64 ok = 0;

#pragma clang loop unroll(disable)
	for (int i = 0; i < 20000; i++) {
		r.launch = ctx->launch_id;
		r.i = i;
		if (bpf_ringbuf_output(&rb, &r, sizeof(r), 0) == 0)
			ok++;
	}
	add_total(0, ok);
	return 0;
}

/* EXPECT map_update_10000: accept max 400000 */
SEC("gpu/exit/*")
int map_update_10000(struct gbpf_gpu_ctx *ctx)
{
	__u64 one = 1, done = 0;

#pragma clang loop unroll(disable)
	for (__u32 k = 0; k < 10000; k++) {
		__u32 key = (__u32)(ctx->kernel_id & 0xff) + k;

		if (bpf_map_update_elem(&seen, &key, &one, BPF_NOEXIST) == 0)
			done++;
	}
	add_total(2, done);
	return 0;
}

/*
 * Safe for 9,999 iterations, out of bounds in the last one (slot 48 of
 * 0..47): pruning that keeps states of every iteration must still reach it.
 */
/* EXPECT late_out_of_bounds: reject invalid access to map_value */
SEC("host/launch")
int late_out_of_bounds(struct gbpf_host_launch_ctx *ctx)
{
	struct rec r = {};
	__u32 k = 0;
	struct slots *s = bpf_map_lookup_elem(&totals, &k);
	__u64 ok = 0;

	if (!s)
		return 0;
#pragma clang loop unroll(disable)
	for (__u32 i = 0; i < 10000; i++) {
		r.launch = ctx->launch_id;
		r.i = i;
		if (bpf_ringbuf_output(&rb, &r, sizeof(r), 0) == 0)
			ok++;
		if (i >= 9951)
			s->v[i - 9951] = ok;
	}
	return 0;
}

/*
 * A counter that decides something (an index) must be tracked exactly:
 * with 60 iterations it can reach 59 (rejected), with 40 at most 40.
 * (Exact tracking of a counter makes the states grow with the square of the
 * iterations, so these loops are short.)
 */
/* EXPECT counter_as_index: reject invalid access to map_value */
SEC("host/launch")
int counter_as_index(struct gbpf_host_launch_ctx *ctx)
{
	struct rec r = {};
	__u32 k = 0, ok = 0;
	struct slots *s = bpf_map_lookup_elem(&totals, &k);

	if (!s)
		return 0;
#pragma clang loop unroll(disable)
	for (__u32 i = 0; i < 60; i++) {
		r.launch = ctx->launch_id;
		r.i = i;
		if (bpf_ringbuf_output(&rb, &r, sizeof(r), 0) == 0)
			ok++;
	}
	s->v[ok] = 1;
	return 0;
}

/* EXPECT counter_in_bounds: accept */
SEC("host/launch")
int counter_in_bounds(struct gbpf_host_launch_ctx *ctx)
{
	struct rec r = {};
	__u32 k = 0, ok = 0;
	struct slots *s = bpf_map_lookup_elem(&totals, &k);

	if (!s)
		return 0;
#pragma clang loop unroll(disable)
	for (__u32 i = 0; i < 40; i++) {
		r.launch = ctx->launch_id;
		r.i = i;
		if (bpf_ringbuf_output(&rb, &r, sizeof(r), 0) == 0)
			ok++;
	}
	s->v[ok] = 1;
	return 0;
}

/* No bound: rejected (complexity or loop), in bounded time and memory. */
/* EXPECT endless: reject */
SEC("host/launch")
int endless(struct gbpf_host_launch_ctx *ctx)
{
	struct rec r = {};
	__u64 ok = 0;

#pragma clang loop unroll(disable)
	for (__u64 i = 0;; i++) {
		r.launch = ctx->launch_id;
		r.i = i;
		if (bpf_ringbuf_output(&rb, &r, sizeof(r), 0) == 0)
			ok++;
		if (ok == ~0ull)
			break;
	}
	add_total(3, ok);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
