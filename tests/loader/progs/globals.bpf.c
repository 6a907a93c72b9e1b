/* SPDX-License-Identifier: MIT */
/* Global variables of every kind: .data, .rodata, .bss, string literals, a named .data section. */
#include "progs.h"

int g_data = 0x11223344;
__u64 g_data2 = 0x5566778899aabbccULL;
const volatile __u32 g_rodata = 0xfeedbeef;
const volatile char g_rostr[8] = "gbpf!";
int g_bss;
__u64 g_bss_arr[4];
int g_custom SEC(".data.custom") = 42;

SEC("gpu/entry/vec*")
int use_globals(void *ctx)
{
	g_bss += g_data + g_rodata;
	g_bss_arr[2] = g_data2 + g_rostr[1] + g_custom;
	/* A literal passed by pointer lands in a mergeable string section. */
	bpf_trace_printk("literal %d\n", sizeof("literal %d\n"), g_bss);
	return g_bss_arr[g_bss & 3];
}

char LICENSE[] SEC("license") = "GPL";
