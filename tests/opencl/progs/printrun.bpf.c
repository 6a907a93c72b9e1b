/*
 * `gbpf prog run --backend opencl` print test: each work-item prints its
 * id and a signed value; work-item 0 also calls puts. r0 = bytes of the
 * format queued (the device's trace_printk return value).
 */
#include <gbpf/probe.h>

SEC("prog")
int printrun(void *ctx)
{
	__u64 t = bpf_gpu_global_thread_id();
	long r = bpf_printk("gbpf-run tid=%llu neg=%d pct=%%", t, -(int)t - 1);

	if (t == 0)
		bpf_gpu_puts("gbpf-run puts");
	return r;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
