/*
 * ctx->device on the OpenCL backend (tests/opencl/test_opencl_device.c):
 * the exit probe of vadd and the host/launch probe of the same launch each
 * record the device they see (plus 100, so that device 0 is not an empty
 * slot) and the exit probe counts work-items whose device_pad was not 0.
 */
#include <gbpf/probe.h>
#include <gbpf/probe_ctx.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u64);
} devs SEC(".maps");

SEC("gpu/exit/vadd")
int vadd_exit(struct gbpf_gpu_ctx *ctx)
{
	__u32 k = 0;
	__u64 *v = bpf_map_lookup_elem(&devs, &k);

	if (v)
		*v = ctx->device + 100;
	k = 2;
	v = bpf_map_lookup_elem(&devs, &k);
	if (v && ctx->device_pad)
		__sync_fetch_and_add(v, 1);
	return 0;
}

SEC("host/launch/vadd")
int vadd_launch(struct gbpf_host_launch_ctx *ctx)
{
	__u32 k = 1;
	__u64 *v = bpf_map_lookup_elem(&devs, &k);

	if (v)
		*v = ctx->device + 100;
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
