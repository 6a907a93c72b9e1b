/* SPDX-License-Identifier: MIT */
/*
 * The inject result across plugin ABI versions: struct gbpf_inject_kernel
 * grew n_block in 1.3, so callers read kernels[] with the element size the
 * plugin reports (kernel_size), and a 1.2 plugin's shorter elements still
 * read right.
 */
#include <gbpf/plugin.h>

#include "tap.h"

/* A kernel element as plugins before ABI 1.3 laid it out. */
struct kernel_1_2 {
	const char *name, *module;
	int instrumented;
	const char *reason;
	uint32_t n_entry, n_exit, n_mem, n_barrier;
};

/* A result struct as callers before ABI 1.3 allocated it. */
struct result_1_2 {
	size_t sz;
	const struct gbpf_inject_kernel *kernels;
	size_t kernel_cnt;
	const struct gbpf_inject_module *modules;
	size_t module_cnt;
	void *priv;
};

int main(void)
{
	struct kernel_1_2 old[3] = {{"a", "m", 1, NULL, 1, 2, 3, 4}, {"b", "m", 0, "why", 0, 0, 0, 0},
				    {"c", "m", 1, NULL, 5, 6, 7, 8}};
	struct gbpf_inject_kernel now[2] = {{"x", "m", 1, NULL, 1, 1, 0, 0, 9}, {"y", "m", 1, NULL, 2, 2, 0, 0, 7}};
	struct gbpf_inject_result r = {.sz = sizeof(r)}, o = {.sz = sizeof(struct result_1_2)};
	struct gbpf_inject_kernel k;

	tap_ok(sizeof(struct kernel_1_2) == offsetof(struct gbpf_inject_kernel, n_block),
	       "a 1.2 element ends where n_block starts");
	/* A 1.2 plugin: it never sets kernel_size. */
	r.kernels = (const struct gbpf_inject_kernel *)(const void *)old;
	r.kernel_cnt = 3;
	gbpf_inject_result_kernel(&r, 2, &k);
	tap_ok(!strcmp(k.name, "c") && k.n_barrier == 8 && k.n_block == 0,
	       "1.2 plugin: element 2 read at the old stride, n_block 0");
	gbpf_inject_result_kernel(&r, 1, &k);
	tap_ok(!strcmp(k.reason, "why") && !k.instrumented, "1.2 plugin: element 1 intact");
	/* A 1.3 plugin and caller. */
	memset(&r, 0, sizeof(r));
	r.sz = sizeof(r);
	gbpf_inject_result_set_kernels(&r, now, 2);
	tap_ok(r.kernel_size == sizeof(now[0]) && r.kernel_cnt == 2, "1.3: kernel_size published");
	gbpf_inject_result_kernel(&r, 1, &k);
	tap_ok(!strcmp(k.name, "y") && k.n_block == 7, "1.3: element 1 with its n_block");
	/* A 1.3 plugin filling a 1.2 caller's shorter struct: kernel_size is not written. */
	{
		unsigned char buf[sizeof(struct gbpf_inject_result)];

		memset(buf, 0xa5, sizeof(buf));
		memcpy(buf, &o, sizeof(struct result_1_2));
		gbpf_inject_result_set_kernels((struct gbpf_inject_result *)(void *)buf, now, 2);
		tap_ok(buf[sizeof(struct result_1_2)] == 0xa5 &&
			       buf[sizeof(buf) - 1] == 0xa5,
		       "1.3 plugin, 1.2 caller: nothing written past the caller's struct");
	}
	return tap_done();
}
