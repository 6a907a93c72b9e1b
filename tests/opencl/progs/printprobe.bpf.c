/*
 * Device print test: every exit of every work-item prints one line naming
 * its launch and global id (bpf_printk, formatted on the host by the
 * interpreter's helper). puts is checked through `gbpf prog run`
 * (printrun.bpf.c): under `gbpf run` the agent's verifier refuses puts'
 * .rodata string today (the agent protocol carries no map init data).
 */
#include <gbpf/probe.h>

SEC("gpu/exit/*")
int printprobe(struct gbpf_gpu_ctx *ctx)
{
	__u64 t = bpf_gpu_global_thread_id();

	bpf_printk("gbpf-print launch=%llu tid=%llu hex=%x", ctx->launch_id, t, (__u32)t);
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
