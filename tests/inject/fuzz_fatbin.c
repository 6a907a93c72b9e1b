/* SPDX-License-Identifier: MIT */
/* libFuzzer target: fatbin containers, entries, decompression, cubin symbols. */
#include <stdint.h>
#include <stdlib.h>

#include "plugins/cuda/fatbin/fatbin.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int region(const char *where, const uint8_t *d, size_t n, void *arg)
{
	struct gbpf_fatbin fb;

	(void)where;
	(void)arg;
	if (gbpf_fatbin__parse(d, n, &fb, NULL, 0))
		return 0;
	for (size_t i = 0; i < fb.n_entries; i++) {
		uint8_t *out;
		size_t len;

		if (gbpf_fatbin_entry__data(&fb.entries[i], 1 << 20, &out, &len, NULL, 0))
			continue;
		if (fb.entries[i].kind == GBPF_FATBIN_KIND_ELF)
			gbpf_cubin_for_each_kernel(out, len, NULL, NULL, NULL, 0);
		free(out);
	}
	gbpf_fatbin__free(&fb);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	region("input", data, size, NULL);
	gbpf_fatbin_find_in_file(data, size, region, NULL, NULL, 0);
	gbpf_cubin_for_each_kernel(data, size, NULL, NULL, NULL, 0);
	return 0;
}
