/* SPDX-License-Identifier: MIT */
/*
 * A device probe with strings in .rodata: every entry of kern_a prints a
 * line with bpf_gpu_puts. The verifier proves the argument is a
 * NUL-terminated string of a read-only map, which the agent can only do
 * with the .rodata bytes the controller sends in the setup.
 */
#include <gbpf/probe.h>

SEC("gpu/entry/kern_a")
int say_hello(void *ctx)
{
	bpf_gpu_puts("hello from kern_a");
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
