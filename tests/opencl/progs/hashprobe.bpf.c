/* Feature probe of the device code: a hash map insert (r0 = 3) or lookup hit (r0 = 1); 2 = update failed. */
#include <gbpf/probe.h>

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16);
	__type(key, __u64);
	__type(value, __u64);
} h SEC(".maps");

SEC("prog")
int hashprobe(void *ctx)
{
	__u64 k = 5, one = 1, *c = bpf_map_lookup_elem(&h, &k);

	if (c) {
		__sync_fetch_and_add(c, 1);
		return 1;
	}
	return bpf_map_update_elem(&h, &k, &one, BPF_NOEXIST) ? 2 : 3;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
