/* SPDX-License-Identifier: MIT */
/*
 * Maps carrying print tags (GBPF_PRINT_LOG2_HIST / GBPF_PRINT_TABLE), one
 * untagged map named like a histogram, and a ring carrying a tag of another
 * tool ("ebpf:", ignored; test_loader_bad turns it into a gbpf tag that does
 * not fit a ring).
 */
#include "progs.h"

struct {
	__uint(type, T_ARRAY);
	__uint(max_entries, 32);
	__type(key, __u32);
	__type(value, __u64);
} usecs SEC(".maps") GBPF_PRINT_LOG2_HIST;

/* bcc's BPF_HISTOGRAM: the key is the slot */
struct {
	__uint(type, T_HASH);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, __u64);
} slots SEC(".maps") GBPF_PRINT_LOG2_HIST;

/* one histogram per kernel id */
struct {
	__uint(type, T_HASH);
	__uint(max_entries, 16);
	__type(key, __u64);
	__type(value, __u64[24]);
} per_kernel SEC(".maps") GBPF_PRINT_LOG2_HIST;

/* named like a histogram, but a table by choice */
struct {
	__uint(type, T_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u64);
} history SEC(".maps") GBPF_PRINT_TABLE;

/* untagged: the name rule makes it a histogram */
struct {
	__uint(type, T_ARRAY);
	__uint(max_entries, 16);
	__type(key, __u32);
	__type(value, __u64);
} lat_hist SEC(".maps");

struct {
	__uint(type, T_RINGBUF);
	__uint(max_entries, 1 << 12);
} events SEC(".maps") __attribute__((btf_decl_tag("ebpf:print=log2_hist")));

SEC("gpu/entry/k")
int on_entry(void *ctx)
{
	__u32 k = 1;
	__u64 *v, *w;

	v = bpf_map_lookup_elem(&usecs, &k);
	if (v)
		*v += 1;
	v = bpf_map_lookup_elem(&slots, &k);
	if (v)
		*v += 1;
	w = bpf_map_lookup_elem(&per_kernel, &k);
	if (w)
		w[2] += 1;
	v = bpf_map_lookup_elem(&history, &k);
	if (v)
		*v += 1;
	v = bpf_map_lookup_elem(&lat_hist, &k);
	if (v)
		*v += 1;
	bpf_ringbuf_output(&events, &k, sizeof(k), 0);
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
