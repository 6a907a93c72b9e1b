/* SPDX-License-Identifier: MIT */
/*
 * tests/cuda_sanitizer/san_test_engine.h - a Compute Sanitizer engine with
 * one gpu/exit probe that returns 0, for the tests that drive the engine's
 * process-level behaviour (test_san_process.c, tests/agent/cupti_yield's
 * test_san_yield.c) rather than what a probe computes.
 */
#ifndef GBPF_TEST_SAN_TEST_ENGINE_H
#define GBPF_TEST_SAN_TEST_ENGINE_H

#include <errno.h>
#include <stdlib.h>

#include <gbpf/insn.h>
#include <gbpf/plugin.h>
#include <gbpf/prog.h>

#include "plugins/cuda/ptx_codegen.h"
#include "plugins/cuda/sanitizer/san_engine.h"

/* r0 = 0; exit */
static const struct gbpf_insn san_test_prog_ret0[] = {
	{.code = GBPF_ALU64 | GBPF_MOV | GBPF_K},
	{.code = GBPF_JMP | GBPF_EXIT},
};

/* Create the engine for that probe (fragment generated for sm_90); 0 or a negative errno, reason in @p why. */
static inline int san_test_engine_create(struct gbpf_san_engine **e, char *why, size_t why_size)
{
	struct gbpf_prog_desc p = {.sz = sizeof(p), .name = "on_exit", .section = "gpu/exit/k",
				   .insns = san_test_prog_ret0, .insn_cnt = 2, .source_file = "unit.o"};
	const struct gbpf_prog_desc *progs[] = {&p};
	struct gbpf_ptx_opts po = {.sz = sizeof(po), .arch = "sm_90"};
	struct gbpf_agent_services svc = {0};
	size_t idx = 0;
	char *frag = NULL;
	int rc;

	p.attach.kind = GBPF_ATTACH_GPU_EXIT;
	if (gbpf_ptx_emit(progs, 1, &po, &frag, NULL, why, why_size))
		return -EINVAL;
	struct gbpf_san_engine_opts o = {.sz = sizeof(o), .svc = &svc, .probes = progs, .prog_index = &idx,
					 .probe_cnt = 1, .fragment = frag};
	rc = gbpf_san_engine_create(e, &o, why, why_size);
	free(frag);
	return rc;
}

#endif
