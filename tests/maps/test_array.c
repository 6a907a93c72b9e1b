/* SPDX-License-Identifier: MIT */
/* Array maps: ARRAY, GPU_ARRAY, PERCPU_ARRAY, PERGPUTHREAD_ARRAY; descriptions and sizes. */
#include <stdio.h>
#include <stdlib.h>

#include "tests/maps/maps_test_util.h"

static void test_desc_check(void)
{
	struct gbpf_map_desc d;
	char why[256];
	int err;

	d = mk_desc("ok", GBPF_MAP_TYPE_ARRAY, 4, 8, 16);
	tap_ok(gbpf_map_desc_check(&d, why, sizeof(why)) == 0, "valid array accepted");
	d = mk_desc("badkey", GBPF_MAP_TYPE_ARRAY, 8, 8, 16);
	err = gbpf_map_desc_check(&d, why, sizeof(why));
	tap_ok(err == -EINVAL && strstr(why, "badkey") && strstr(why, "key_size"),
	       "array with key_size 8 rejected naming the map: %s", why);
	d = mk_desc("zero", GBPF_MAP_TYPE_HASH, 4, 0, 16);
	tap_ok(gbpf_map_desc_check(&d, why, sizeof(why)) == -EINVAL && strstr(why, "value_size"),
	       "hash with value_size 0 rejected: %s", why);
	d = mk_desc("type", 77, 4, 4, 16);
	tap_ok(gbpf_map_desc_check(&d, why, sizeof(why)) == -EINVAL && strstr(why, "type"),
	       "unknown type rejected: %s", why);
	d = mk_desc("rb", GBPF_MAP_TYPE_RINGBUF, 0, 0, 1000);
	tap_ok(gbpf_map_desc_check(&d, why, sizeof(why)) == -EINVAL && strstr(why, "power of two"),
	       "ring buffer of 1000 bytes rejected: %s", why);
	d = mk_desc("flags", GBPF_MAP_TYPE_ARRAY, 4, 4, 1);
	d.map_flags = 1u << 2; /* NUMA node */
	tap_ok(gbpf_map_desc_check(&d, why, sizeof(why)) == -EINVAL && strstr(why, "map_flags"),
	       "unsupported flag rejected: %s", why);
	d = mk_desc("huge", GBPF_MAP_TYPE_ARRAY, 4, 1u << 20, 1u << 28);
	tap_ok(gbpf_map_mem_size(&d, 1) == 0, "array of 2^48 bytes has no size");
	d = mk_desc("huge", GBPF_MAP_TYPE_PERCPU_ARRAY, 4, 1u << 16, 1u << 16);
	tap_ok(gbpf_map_mem_size(&d, 1u << 24) == 0,
	       "percpu array overflowing 64 bits has no size");
	tap_ok(gbpf_map_desc_check(NULL, why, sizeof(why)) == -EINVAL, "NULL description rejected");
}

static void test_array(uint32_t type, const char *what)
{
	struct gbpf_map_desc d = mk_desc(what, type, 4, 12, 10);
	struct gbpf_map_instance m;
	uint32_t k, next;
	uint8_t val[12], *p;
	int err, n;

	err = gbpf_map_instance_create(&m, &d, 1);
	tap_ok(err == 0, "%s: create", what);
	if (err)
		return;
	tap_ok(m.mem_size == GBPF_MAP_HDR_SIZE + 10 * 16,
	       "%s: size is header + 10 x stride 16 (%zu)", what, m.mem_size);
	tap_ok(hdr_of(&m)->value_stride == 16 && hdr_of(&m)->nr_slots == 1,
	       "%s: header stride 16, one slot", what);
	k = 3;
	p = gbpf_map_lookup(&m, &k, 0);
	tap_ok(p == (uint8_t *)m.mem + 128 + 3 * 16, "%s: lookup(3) at data_off + 3 * stride",
	       what);
	memset(val, 0xab, sizeof(val));
	tap_ok(gbpf_map_update(&m, &k, val, GBPF_ANY, 0) == 0 && p && p[0] == 0xab &&
		       p[11] == 0xab && p[12] == 0,
	       "%s: update ANY writes exactly value_size bytes", what);
	tap_ok(gbpf_map_update(&m, &k, val, GBPF_NOEXIST, 0) == -EEXIST, "%s: NOEXIST -> EEXIST",
	       what);
	tap_ok(gbpf_map_update(&m, &k, val, GBPF_EXIST, 0) == 0, "%s: EXIST succeeds", what);
	tap_ok(gbpf_map_update(&m, &k, val, 4, 0) == -EINVAL, "%s: unknown flag -> EINVAL", what);
	k = 10;
	tap_ok(gbpf_map_lookup(&m, &k, 0) == NULL, "%s: lookup(10) out of range is NULL", what);
	tap_ok(gbpf_map_update(&m, &k, val, GBPF_ANY, 0) == -E2BIG, "%s: update(10) -> E2BIG",
	       what);
	tap_ok(gbpf_map_delete(&m, &k) == -EINVAL, "%s: delete -> EINVAL", what);
	n = 0;
	err = gbpf_map_get_next_key(&m, NULL, &next);
	while (err == 0) {
		if (next != (uint32_t)n)
			break;
		n++;
		k = next;
		err = gbpf_map_get_next_key(&m, &k, &next);
	}
	tap_ok(n == 10 && err == -ENOENT, "%s: iteration visits 0..9 then ENOENT (%d)", what, n);
	k = 1000;
	tap_ok(gbpf_map_get_next_key(&m, &k, &next) == 0 && next == 0,
	       "%s: next of an out-of-range key is 0", what);
	tap_ok(gbpf_map_lookup(&m, NULL, 0) == NULL, "%s: NULL key -> NULL", what);
	gbpf_map_instance_destroy(&m);
	tap_ok(m.mem == NULL, "%s: destroy clears the instance", what);
}

static void test_percpu(void)
{
	struct gbpf_map_desc d = mk_desc("pcpu", GBPF_MAP_TYPE_PERCPU_ARRAY, 4, 8, 4);
	struct gbpf_map_instance m;
	uint64_t v;
	uint32_t k = 2;
	int ok = 1;

	if (gbpf_map_instance_create(&m, &d, 5)) {
		tap_ok(0, "percpu array create");
		return;
	}
	tap_ok(gbpf_map_nr_slots(&m) == 5, "percpu array has 5 slots");
	for (uint32_t s = 0; s < 5; s++) {
		v = 100 + s;
		ok &= gbpf_map_update(&m, &k, &v, GBPF_ANY, s) == 0;
	}
	for (uint32_t s = 0; s < 5; s++) {
		uint64_t *p = gbpf_map_lookup(&m, &k, s);

		ok &= p && *p == 100 + s;
		/* slot-major: copy of slot s lies at data_off + s * 128 + k * 8 (4 values in a
		 * plane padded to 128 bytes, so that two SMs never share a cache line) */
		ok &= (uint8_t *)p == (uint8_t *)m.mem + 128 + s * 128 + k * 8;
	}
	tap_ok(ok, "each slot keeps its own value, slot-major layout, 128-byte planes");
	tap_ok(gbpf_map_mem_size(&d, 5) == 128 + 5 * 128, "5 slots of 4 values: 5 planes of 128 bytes");
	tap_ok(gbpf_map_lookup(&m, &k, 5) == NULL, "slot 5 of 5 -> NULL");
	tap_ok(gbpf_map_update(&m, &k, &v, GBPF_ANY, 5) == -EINVAL, "update slot 5 of 5 -> EINVAL");
	gbpf_map_instance_destroy(&m);
}

static void test_pergputhread(void)
{
	struct gbpf_map_desc d = mk_desc("pt", GBPF_MAP_TYPE_PERGPUTHREAD_ARRAY, 4, 4, 3);
	struct gbpf_map_instance m;
	uint32_t threads = 5000, k, v;
	int ok = 1;

	if (gbpf_map_instance_create(&m, &d, threads)) {
		tap_ok(0, "per-thread array create");
		return;
	}
	tap_ok(gbpf_map_nr_slots(&m) == threads,
	       "per-thread array sized for the launch (5000, not 1024)");
	tap_ok(m.mem_size == 128 + 3ull * threads * 8, "size is 3 entries x 5000 threads x 8");
	for (uint32_t t = 0; t < threads; t++) {
		k = t % 3;
		v = t;
		ok &= gbpf_map_update(&m, &k, &v, GBPF_ANY, t) == 0;
	}
	for (uint32_t t = 0; t < threads; t++) {
		uint32_t *p;

		k = t % 3;
		p = gbpf_map_lookup(&m, &k, t);
		ok &= p && *p == t;
		/* index-major: (k * threads + t) * stride */
		ok &= (uint8_t *)p == (uint8_t *)m.mem + 128 + ((uint64_t)k * threads + t) * 8;
	}
	tap_ok(ok, "every thread sees its own slot, index-major layout");
	k = 0;
	tap_ok(gbpf_map_lookup(&m, &k, threads) == NULL, "thread 5000 of 5000 -> NULL");
	gbpf_map_instance_destroy(&m);
}

static void test_init_data(void)
{
	static const char init[5] = "hi!!";
	struct gbpf_map_desc d = mk_desc(".data", GBPF_MAP_TYPE_ARRAY, 4, 8, 1);
	struct gbpf_map_instance m;
	uint32_t k = 0;
	char *p;
	char why[200];

	d.origin = GBPF_MAP_ORIGIN_DATA;
	d.init_data = init;
	d.init_size = sizeof(init);
	if (gbpf_map_instance_create(&m, &d, 1)) {
		tap_ok(0, ".data create");
		return;
	}
	p = gbpf_map_lookup(&m, &k, 0);
	tap_ok(p && memcmp(p, "hi!!", 5) == 0 && p[5] == 0, ".data initialised from init_data");
	gbpf_map_instance_destroy(&m);
	d.init_size = 9;
	tap_ok(gbpf_map_desc_check(&d, why, sizeof(why)) == -EINVAL,
	       "init_data larger than value rejected: %s", why);
}

static void test_mem_api(void)
{
	struct gbpf_map_desc d = mk_desc("a", GBPF_MAP_TYPE_ARRAY, 4, 4, 4);
	size_t size = gbpf_map_mem_size(&d, 1);
	uint64_t *mem = calloc(1, size + 64);

	tap_ok(size == 128 + 4 * 8, "mem_size of 4 x 4-byte values is 160 (%zu)", size);
	tap_ok(gbpf_map_mem_init(mem, size - 1, &d, 1) == -ENOSPC,
	       "mem_init into too small memory -> ENOSPC");
	tap_ok(gbpf_map_mem_init((uint8_t *)mem + 1, size, &d, 1) == -EINVAL,
	       "misaligned memory -> EINVAL");
	tap_ok(gbpf_map_mem_init(mem, size + 64, &d, 1) == 0 &&
		       gbpf_map_mem_validate(mem, size) == 0,
	       "mem_init then validate");
	tap_ok(gbpf_map_mem_validate(mem, size - 1) == -EBADMSG,
	       "validate with a smaller size fails");
	free(mem);
}

int main(void)
{
	test_desc_check();
	test_array(GBPF_MAP_TYPE_ARRAY, "array");
	test_array(GBPF_MAP_TYPE_GPU_ARRAY, "gpu_array");
	test_percpu();
	test_pergputhread();
	test_init_data();
	test_mem_api();
	return tap_done();
}
