/* SPDX-License-Identifier: MIT */
/*
 * plugins/spirv/spv_inject.c - probes into an application's SPIR-V module.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spv_internal.h"

int gbpf_spirv_inject(const uint32_t *app_words, size_t app_count,
		      const struct gbpf_prog_desc *const *progs, size_t n,
		      const struct gbpf_spirv_inject_opts *opts, struct gbpf_spirv_inject_result *res,
		      char *err, size_t err_size)
{
	(void)app_words, (void)app_count, (void)progs, (void)n, (void)opts, (void)res;
	snprintf(err, err_size, "spirv: injection not implemented yet");
	return -ENOTSUP;
}

void gbpf_spirv_inject_result_free(struct gbpf_spirv_inject_result *res)
{
	size_t i;

	if (!res)
		return;
	for (i = 0; i < res->kernel_cnt; i++) {
		free(res->kernels[i].name);
		free(res->kernels[i].reason);
	}
	free(res->kernels);
	free(res->words);
	memset(res, 0, sizeof(*res));
}
