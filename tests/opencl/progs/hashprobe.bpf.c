/*
 * Feature probe of the device code: a hash map insert (r0 = 3) or lookup hit
 * (r0 = 1); 2 = the insert lost a race and counted into the winner's entry.
 */
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
	if (!bpf_map_update_elem(&h, &k, &one, BPF_NOEXIST))
		return 3;
	/* Another work-item inserted the key between our lookup and insert: count into its entry. */
	c = bpf_map_lookup_elem(&h, &k);
	if (c)
		__sync_fetch_and_add(c, 1);
	return 2;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
