/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the verifier, with the bounds-checked interpreter as
 * oracle. The input (fuzz_vformat.h) is an attach kind, verifier flags,
 * map descriptions and an instruction stream. The verifier must return
 * without a sanitizer report; every program it ACCEPTS then runs once in
 * the checked interpreter on real maps and a real context, and must not
 * fault (out-of-bounds or misaligned access, missing helper), must finish
 * within its budget, and must return an r0 inside the bounds the verifier
 * computed. Any of those aborts: an accepted program that misbehaves is a
 * verifier bug.
 *
 * Built into `fuzz_verifier` (suite 'fuzz') and, without libFuzzer, into
 * the regression replayer (test_regressions.c).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gbpf/asm.h>
#include <gbpf/probe_ctx.h>
#include <gbpf/verifier.h>

#include "core/interp/interp.h"
#include "fuzz_vformat.h"
#include "maps/map.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void discard_text(void *ctx, const char *text, size_t len)
{
	(void)ctx;
	(void)text;
	(void)len;
}

static void fail(const char *what, const struct gbpf_insn *insns, size_t n, const char *why)
{
	char *text = NULL;

	fprintf(stderr, "fuzz_verifier: %s: %s\n", what, why);
	if (gbpf_disasm(insns, n, &text) == 0)
		fprintf(stderr, "program:\n%s", text);
	free(text);
	abort();
}

/* Run an accepted program once on fresh maps; abort on anything unsafe. */
static void run_accepted(const struct gbpf_prog_desc *p, const struct fv_input *in,
			 const struct gbpf_verify_result *vr)
{
	struct gbpf_map_instance maps[FV_MAX_MAPS];
	struct gbpf_interp *ip = NULL;
	struct gbpf_gpu_ctx gctx = {.kernel_id = 0x1234, .params = 0, .launch_id = 7,
				    .mem_addr = 0x7000, .mem_value = 5, .mem_size = 8,
				    .mem_kind = GBPF_MEM_STORE};
	struct gbpf_host_launch_ctx lctx = {.kernel_id = 0x1234, .grid = {4, 1, 1},
					    .block = {128, 1, 1}, .kernel_name = "fuzz_k"};
	struct gbpf_host_call_ctx cctx = {.bytes = 4096, .direction = GBPF_COPY_H2D};
	static uint8_t mem[1024];
	struct gbpf_interp_region regions[3];
	size_t nreg = 0, made = 0;
	uint64_t args[5] = {0};
	char err[512], why[160];
	struct gbpf_interp_result res = {0};
	struct gbpf_exec_env env = {.thread_count = 1, .prandom_state = 42, .print = discard_text};
	int rc;

	for (; made < in->map_cnt; made++) {
		/*
		 * A map the product refuses is never run against; a valid but huge
		 * one (hundreds of MiB) is skipped only to keep each input fast.
		 */
		if (gbpf_map_desc_check(&in->maps[made], why, sizeof(why)) ||
		    gbpf_map_mem_size(&in->maps[made], 2) > (4u << 20) ||
		    gbpf_map_instance_create(&maps[made], &in->maps[made], 2))
			goto out;
	}
	GBPF_OPTS(gbpf_interp_opts, io, .bounds_checked = 1, .max_insns = 1u << 22);
	if (gbpf_interp_create(p, maps, made, &io, &ip, err, sizeof(err)))
		fail("interpreter refused an accepted program", p->insns, p->insn_cnt, err);
	switch (in->kind) {
	case GBPF_ATTACH_NONE:
		memset(mem, 0xa5, sizeof(mem));
		if (in->mem_size) {
			args[0] = (uint64_t)(uintptr_t)mem;
			args[1] = in->mem_size;
			regions[nreg++] = (struct gbpf_interp_region){mem, in->mem_size, 1, "data"};
		}
		break;
	case GBPF_ATTACH_HOST_LAUNCH:
		args[0] = (uint64_t)(uintptr_t)&lctx;
		regions[nreg++] = (struct gbpf_interp_region){&lctx, sizeof(lctx), 0, "ctx"};
		break;
	case GBPF_ATTACH_HOST_MEMCPY:
		args[0] = (uint64_t)(uintptr_t)&cctx;
		regions[nreg++] = (struct gbpf_interp_region){&cctx, sizeof(cctx), 0, "ctx"};
		break;
	default: {
		/* only mem_value may be written, and only by gpu/mem with the flag */
		int w = in->kind == GBPF_ATTACH_GPU_MEM && (in->flags & GBPF_VERIFY_F_ALLOW_MEM_WRITE);
		uint8_t *c = (uint8_t *)&gctx;
		size_t vo = offsetof(struct gbpf_gpu_ctx, mem_value);

		args[0] = (uint64_t)(uintptr_t)&gctx;
		regions[nreg++] = (struct gbpf_interp_region){c, vo, 0, "ctx"};
		regions[nreg++] = (struct gbpf_interp_region){c + vo, 8, w, "ctx.mem_value"};
		regions[nreg++] = (struct gbpf_interp_region){c + vo + 8, sizeof(gctx) - vo - 8, 0,
							      "ctx"};
	}
	}
	env.maps = maps;
	env.map_cnt = made;
	rc = gbpf_interp_run(ip, &env, args, regions, nreg, &res, err, sizeof(err));
	if (rc == -GBPF_ERRNO__FAULT)
		fail("accepted program faulted", p->insns, p->insn_cnt, err);
	if (rc == -GBPF_ERRNO__BUDGET)
		fail("accepted program ran past 4M instructions", p->insns, p->insn_cnt, err);
	if (!rc && !res.exited &&
	    !((int64_t)res.r0 >= vr->r0_smin && (int64_t)res.r0 <= vr->r0_smax &&
	      res.r0 >= vr->r0_umin && res.r0 <= vr->r0_umax &&
	      (res.r0 & ~vr->r0_known_mask) == vr->r0_known_value)) {
		snprintf(err, sizeof(err),
			 "r0 0x%" PRIx64 " outside [%" PRId64 ", %" PRId64 "] u[%" PRIu64 ", %" PRIu64
			 "] tnum(0x%" PRIx64 "; 0x%" PRIx64 ")",
			 res.r0, vr->r0_smin, vr->r0_smax, vr->r0_umin, vr->r0_umax,
			 vr->r0_known_value, vr->r0_known_mask);
		fail("r0 outside the verifier's bounds", p->insns, p->insn_cnt, err);
	}
out:
	gbpf_interp_destroy(ip);
	while (made)
		gbpf_map_instance_destroy(&maps[--made]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct gbpf_insn insns[FV_MAX_INSNS];
	struct gbpf_verify_result vr = {.sz = sizeof(vr)};
	struct fv_input in;
	char log[1024];

	if (fv_decode(data, size, &in) || !in.insn_cnt)
		return 0;
	memcpy(insns, in.insns, in.insn_cnt * 8);
	struct gbpf_prog_desc p = {.sz = sizeof(p), .name = "fuzz", .section = "fuzz",
				   .insns = insns, .insn_cnt = in.insn_cnt, .maps = in.maps,
				   .map_cnt = in.map_cnt, .attach = {.kind = in.kind},
				   .source_file = "<fuzz>"};
	/* a lower complexity bound keeps each input fast; the logic is the same */
	GBPF_OPTS(gbpf_verify_opts, o, .flags = in.flags, .mem_size = in.mem_size,
		  .complexity_limit = 200000, .log_buf = log, .log_size = sizeof(log),
		  .log_level = GBPF_VERIFY_LOG_STATE);
	if (gbpf_verify(&p, &o, &vr) == 0 && vr.verdict == GBPF_VERDICT_ACCEPT)
		run_accepted(&p, &in, &vr);
	return 0;
}
