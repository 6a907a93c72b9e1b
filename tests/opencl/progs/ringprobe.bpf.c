/* Feature probe of the device code: a ring buffer reserve + submit (r0 = 1), or 0 when reserve fails. */
#include <gbpf/probe.h>

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 16);
} rb SEC(".maps");

SEC("prog")
int ringprobe(void *ctx)
{
	__u64 *e = bpf_ringbuf_reserve(&rb, sizeof(*e), 0);

	if (!e)
		return 0;
	*e = 42;
	bpf_ringbuf_submit(e, 0);
	return 1;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
