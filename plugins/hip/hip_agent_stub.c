/* SPDX-License-Identifier: MIT */
/* Placeholder agent until the interposers land (replaced by hip_intercept.c). */
#include <errno.h>
#include <stdio.h>

#include "hip_agent.h"

int gbpf_hip_agent_attach(struct gbpf_backend *backend, const struct gbpf_agent_attach_opts *opts, char *log,
			  size_t log_size)
{
	(void)backend;
	(void)opts;
	if (log && log_size)
		snprintf(log, log_size, "hip: interception is not built");
	return -ENOTSUP;
}

void gbpf_hip_agent_detach(struct gbpf_backend *backend)
{
	(void)backend;
}
