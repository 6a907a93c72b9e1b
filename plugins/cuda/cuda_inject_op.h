/* SPDX-License-Identifier: MIT */
/* plugins/cuda/cuda_inject_op.h - the inject() entries of the cuda plugin's table. */
#ifndef GBPF_CUDA_INJECT_OP_H
#define GBPF_CUDA_INJECT_OP_H

#include <gbpf/plugin.h>

int cuda_inject(const struct gbpf_inject_opts *opts, struct gbpf_inject_result *result, char *log,
		size_t log_size);
void cuda_inject_free(struct gbpf_inject_result *result);

#endif
