/* SPDX-License-Identifier: MIT */
/* The verifier gate every program passes before a backend sees it. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <gbpf/verifier.h>

#include "core/run_internal.h"

int gbpf_core_verify(const struct gbpf_prog_desc *prog, size_t data_size, char *log,
		     size_t log_size)
{
	struct gbpf_verify_result res = {.sz = sizeof(res)};
	GBPF_OPTS(gbpf_verify_opts, opts, .log_level = GBPF_VERIFY_LOG_ERROR, .mem_size = data_size);
	int err;

	err = gbpf_verify(prog, &opts, &res);
	if (!err && res.verdict == GBPF_VERDICT_ACCEPT)
		return 0;
	snprintf(log, log_size, "%s: program '%s': verifier: instruction %lld: %s",
		 prog->source_file ? prog->source_file : "<memory>", prog->name ? prog->name : "?",
		 (long long)res.error_insn, res.reason[0] ? res.reason : "rejected");
	return err ? err : -GBPF_ERRNO__VERIFY;
}
