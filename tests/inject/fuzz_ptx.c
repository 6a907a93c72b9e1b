/* SPDX-License-Identifier: MIT */
/* libFuzzer target: PTX parser, printer and injector. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "plugins/cuda/ptx/ptx.h"
#include "tests/inject/inject_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct gbpf_ptx_module *fuzz_fragment;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gbpf_ptx_inject_req req = {.plan = {.sites = 15, .exit_probe = 1, .mem_probe = 2,
						   .barrier_probe = 3}};
	struct gbpf_ptx_module *m;
	char *out;

	if (!fuzz_fragment)
		fuzz_fragment = gbpf_ptx_parse(iu_fragment, strlen(iu_fragment), "frag", NULL, 0);
	m = gbpf_ptx_parse((const char *)data, size, "fuzz", NULL, 0);
	if (!m)
		return 0;
	free(gbpf_ptx_print(m, NULL));
	if (gbpf_ptx_inject(m, fuzz_fragment, &req, NULL, 0) >= 0) {
		out = gbpf_ptx_print_ex(m, GBPF_PTX_PRINT_SOURCE, NULL);
		free(out);
	}
	gbpf_ptx_module_free(m);
	return 0;
}
