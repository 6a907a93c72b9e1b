/* SPDX-License-Identifier: MIT */
/* BTF-defined maps of every type gbpf knows, used from bpftime-style sections. */
#include "progs.h"

struct val16 {
	__u64 a;
	__u32 b;
	__u32 c;
};

struct {
	__uint(type, T_HASH);
	__uint(max_entries, 128);
	__type(key, __u32);
	__type(value, struct val16);
} m_hash SEC(".maps");

struct {
	__uint(type, T_ARRAY);
	__uint(max_entries, 8);
	__type(key, __u32);
	__type(value, __u64);
} m_array SEC(".maps");

struct {
	__uint(type, T_PERCPU_ARRAY);
	__uint(max_entries, 4);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, 24);
} m_percpu SEC(".maps");

struct {
	__uint(type, T_LRU_HASH);
	__uint(max_entries, 1000);
	__uint(map_flags, 1);
	__type(key, __u64);
	__type(value, __u32);
} m_lru SEC(".maps");

struct {
	__uint(type, T_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} m_perf SEC(".maps");

struct {
	__uint(type, T_RINGBUF);
	__uint(max_entries, 1 << 16);
} m_ringbuf SEC(".maps");

struct {
	__uint(type, T_GPU_HASH);
	__uint(max_entries, 64);
	__type(key, __u64);
	__type(value, __u64);
} m_gpu_hash SEC(".maps");

struct {
	__uint(type, T_PERGPUTHREAD_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} m_thread SEC(".maps");

struct {
	__uint(type, T_GPU_ARRAY);
	__uint(max_entries, 16);
	__type(key, __u32);
	__type(value, struct val16);
} m_gpu_array SEC(".maps");

struct {
	__uint(type, T_GPU_RINGBUF);
	__uint(max_entries, 1 << 12);
	__type(key, __u32);
	__type(value, struct val16);
} m_gpu_ringbuf SEC(".maps");

SEC("kprobe/_Z6vecAddPfS_S_i")
int on_entry(void *ctx)
{
	__u32 k = 0;
	__u64 *v = bpf_map_lookup_elem(&m_thread, &k);

	if (v)
		*v += 1;
	bpf_map_lookup_elem(&m_hash, &k);
	return 0;
}

SEC("kretprobe/_Z6vecAddPfS_S_i")
int on_exit(void *ctx)
{
	__u32 k = 1;
	struct val16 *v = bpf_map_lookup_elem(&m_gpu_array, &k);

	if (v)
		v->b++;
	bpf_map_lookup_elem(&m_array, &k);
	return 1;
}

SEC("kprobe/__memcapture")
int on_mem(void *ctx)
{
	__u64 k = 7;

	bpf_map_lookup_elem(&m_gpu_hash, &k);
	bpf_map_lookup_elem(&m_lru, &k);
	bpf_map_lookup_elem(&m_percpu, &k);
	return 2;
}

SEC("uprobe/./vec_add:main")
int on_main(void *ctx)
{
	struct val16 v = {1, 2, 3};

	bpf_ringbuf_output(&m_ringbuf, &v, sizeof(v), 0);
	bpf_perf_event_output(ctx, &m_perf, 0, &v, sizeof(v));
	return 3;
}

SEC("uretprobe//usr/lib/libcuda.so.1:cuLaunchKernel")
int on_launch_ret(void *ctx)
{
	struct val16 v = {4, 5, 6};

	bpf_ringbuf_output(&m_gpu_ringbuf, &v, sizeof(v), 0);
	return 4;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
