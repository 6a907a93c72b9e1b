// SPDX-License-Identifier: MIT
/*
 * directly_run_on_gpu: an eBPF program that uses the GPU as an accelerator.
 * `gbpf prog run --threads N vec_add.bpf.o` runs it once per GPU thread;
 * thread i adds a[i] and b[i] into the map `c`.
 */
#include <gbpf/probe.h>

#define N 64

/* Inputs: read-only globals (.rodata), copied to the device with the program. */
static const __u32 a[N] = {
	1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15, 16,
	17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32,
	33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48,
	49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64,
};
static const __u32 b[N] = {
	1000, 2000, 3000, 4000, 5000, 6000, 7000, 8000, 9000, 10000, 11000, 12000, 13000, 14000,
	15000, 16000, 17000, 18000, 19000, 20000, 21000, 22000, 23000, 24000, 25000, 26000, 27000,
	28000, 29000, 30000, 31000, 32000, 33000, 34000, 35000, 36000, 37000, 38000, 39000, 40000,
	41000, 42000, 43000, 44000, 45000, 46000, 47000, 48000, 49000, 50000, 51000, 52000, 53000,
	54000, 55000, 56000, 57000, 58000, 59000, 60000, 61000, 62000, 63000, 64000,
};

/* Output: one element per thread, shared by all GPU threads. */
struct {
	__uint(type, BPF_MAP_TYPE_GPU_ARRAY);
	__uint(max_entries, N);
	__type(key, __u32);
	__type(value, __u32);
} c SEC(".maps");

SEC("prog")
int vec_add(void *ctx)
{
	__u32 i = (__u32)bpf_gpu_global_thread_id();
	__u32 *out;

	if (i >= N)
		return 0;
	out = bpf_map_lookup_elem(&c, &i);
	if (!out)
		return 0;
	/* i was reloaded from the stack after the bound check; the mask (a no-op
	 * since N is a power of two) lets the verifier see the bound again. */
	i &= N - 1;
	*out = a[i] + b[i];
	return *out;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
