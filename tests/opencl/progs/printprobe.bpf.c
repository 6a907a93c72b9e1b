/*
 * Device print test: every exit of every work-item prints one line naming
 * its launch and global id (bpf_printk, formatted on the host by the
 * interpreter's helper); work-item 0 of each launch also calls puts.
 */
#include <gbpf/probe.h>

SEC("gpu/exit/*")
int printprobe(struct gbpf_gpu_ctx *ctx)
{
	__u64 t = bpf_gpu_global_thread_id();

	bpf_printk("gbpf-print launch=%llu tid=%llu hex=%x", ctx->launch_id, t, (__u32)t);
	if (t == 0)
		bpf_gpu_puts("gbpf-puts first work-item");
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
