/* SPDX-License-Identifier: MIT */
/* Legacy SEC("maps") definitions (struct bpf_map_def layout), which libbpf 1.x refuses. */
#include "progs.h"

struct legacy_map_def {
	unsigned int type;
	unsigned int key_size;
	unsigned int value_size;
	unsigned int max_entries;
	unsigned int map_flags;
};

struct legacy_map_def counts SEC("maps") = {
	.type = T_HASH,
	.key_size = 4,
	.value_size = 8,
	.max_entries = 256,
};

struct legacy_map_def per_thread SEC("maps") = {
	.type = T_PERGPUTHREAD_ARRAY,
	.key_size = 4,
	.value_size = 8,
	.max_entries = 1,
	.map_flags = 0,
};

struct legacy_map_def events SEC("maps") = {
	.type = T_GPU_RINGBUF,
	.key_size = 4,
	.value_size = 32,
	.max_entries = 4096,
	.map_flags = 0,
};

SEC("kprobe/legacy_kernel")
int legacy_prog(void *ctx)
{
	__u32 k = 3;

	bpf_map_lookup_elem(&counts, &k);
	bpf_map_lookup_elem(&per_thread, &k);
	bpf_ringbuf_output(&events, &k, sizeof(k), 0);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
