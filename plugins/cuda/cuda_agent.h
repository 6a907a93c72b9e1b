/* SPDX-License-Identifier: MIT */
/*
 * plugins/cuda/cuda_agent.h - the cuda plugin's agent side (internal):
 * instruments the kernels of the application the plugin is preloaded into
 * (`gbpf run`). See docs/PROCESS_MODEL.md, section "CUDA".
 */
#ifndef GBPF_CUDA_AGENT_H
#define GBPF_CUDA_AGENT_H

#include <stddef.h>

#include <gbpf/plugin.h>

/**
 * agent_attach of the cuda backend: generate the probe fragment of the
 * device programs, install the driver hooks. Kernels are instrumented
 * lazily at their first launch.
 * @param be        the open backend (unused: the agent works in the
 *                  application's own contexts)
 * @param opts      programs, maps (shared memory) and agent services
 * @param log       reason of a failure (what and where)
 * @param log_size  bytes at log
 * @return 0, -EBUSY when already attached, -EINVAL for bad options,
 *         -ENOTSUP when the device programs cannot be translated, -ENOMEM
 */
int gbpf_cuda_agent_attach(struct gbpf_backend *be, const struct gbpf_agent_attach_opts *opts,
			   char *log, size_t log_size);

/** agent_detach: remove the hooks; launches proceed uninstrumented from then on. */
void gbpf_cuda_agent_detach(struct gbpf_backend *be);

#endif /* GBPF_CUDA_AGENT_H */
