/* SPDX-License-Identifier: MIT */
/*
 * plugins/hip/hip_agent.h - agent_attach/agent_detach of the hip plugin:
 * hands the attach request to the HIP interposers (hip_intercept.c).
 */
#ifndef GBPF_HIP_AGENT_H
#define GBPF_HIP_AGENT_H

#include <stddef.h>

#include <gbpf/plugin.h>

/** Start instrumenting: later registrations and launches are rewritten. */
int gbpf_hip_agent_attach(struct gbpf_backend *backend, const struct gbpf_agent_attach_opts *opts, char *log,
			  size_t log_size);
/** Stop instrumenting: later launches run the original code objects. */
void gbpf_hip_agent_detach(struct gbpf_backend *backend);

#endif /* GBPF_HIP_AGENT_H */
