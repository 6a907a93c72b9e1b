// SPDX-License-Identifier: MIT
/*
 * trace_printk with %s: a string literal (.rodata), a stack buffer and a map
 * value, and a NULL. Device and interpreter must print the same lines
 * (bench/agent/device.sh compares `gbpf prog run` on cuda and cpu, and
 * `gbpf run` on a CUDA app).
 */
#include <gbpf/probe.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, char[16]);
} names SEC(".maps");

SEC("gpu/exit/tick")
int printk_str(void *ctx)
{
	char s[8] = "stack";
	__u32 k = 0;
	char *v;

	bpf_printk("rodata=%s n=%d stack=%s\n", "literal", 7, s);
	v = bpf_map_lookup_elem(&names, &k);
	if (v) {
		v[0] = 'm';
		v[1] = 'a';
		v[2] = 'p';
		v[3] = 0;
		bpf_printk("map=%s null=[%s] %%s %llu\n", v, 0, 42);
	}
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
