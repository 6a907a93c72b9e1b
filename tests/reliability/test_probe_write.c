/* SPDX-License-Identifier: MIT */
/*
 * tests/reliability/test_probe_write.c - probes cannot write the
 * application's memory unless the user allows it: the verifier rejects a
 * gpu/mem probe that stores into ctx->mem_value without
 * GBPF_VERIFY_F_ALLOW_MEM_WRITE, accepts it with the flag, and never lets
 * any probe store into another context field or dereference an
 * application address (ctx->mem_addr), flag or not.
 */
#include <stddef.h>
#include <string.h>

#include <gbpf/helper_ids.h>
#include <gbpf/probe_ctx.h>
#include <gbpf/verifier.h>

#include "tap.h"

#define MOV_K(d, k) {.code = GBPF_ALU64 | GBPF_MOV | GBPF_K, .dst = d, .imm = k}
#define EXIT {.code = GBPF_OP_EXIT}

static int verify(const struct gbpf_insn *insns, size_t n, uint32_t kind, uint32_t flags,
		  struct gbpf_verify_result *res)
{
	struct gbpf_prog_desc p = {.sz = sizeof(p), .name = "probe", .section = "gpu/mem/k",
				   .insns = insns, .insn_cnt = n, .source_file = "test",
				   .attach = {.kind = kind}};
	GBPF_OPTS(gbpf_verify_opts, o, .flags = flags);

	memset(res, 0, sizeof(*res));
	res->sz = sizeof(*res);
	return gbpf_verify(&p, &o, res);
}

int main(void)
{
	const int16_t value_off = offsetof(struct gbpf_gpu_ctx, mem_value);
	const int16_t addr_off = offsetof(struct gbpf_gpu_ctx, mem_addr);
	/* *(u64 *)(ctx + mem_value) = 42 */
	const struct gbpf_insn store_value[] = {
		{.code = GBPF_ST | GBPF_MEM | GBPF_DW, .dst = 1, .off = value_off, .imm = 42},
		MOV_K(0, 0), EXIT,
	};
	/* *(u64 *)(ctx + mem_addr) = 42: redirecting the access */
	const struct gbpf_insn store_addr[] = {
		{.code = GBPF_ST | GBPF_MEM | GBPF_DW, .dst = 1, .off = addr_off, .imm = 42},
		MOV_K(0, 0), EXIT,
	};
	/* r2 = ctx->mem_addr; *(u64 *)r2 = 0: writing application memory directly */
	const struct gbpf_insn store_app[] = {
		{.code = GBPF_LDX | GBPF_MEM | GBPF_DW, .dst = 2, .src = 1, .off = addr_off},
		{.code = GBPF_ST | GBPF_MEM | GBPF_DW, .dst = 2, .imm = 0},
		MOV_K(0, 0), EXIT,
	};
	/* r2 = ctx->mem_addr; r0 = *(u64 *)r2: reading it is refused too */
	const struct gbpf_insn load_app[] = {
		{.code = GBPF_LDX | GBPF_MEM | GBPF_DW, .dst = 2, .src = 1, .off = addr_off},
		{.code = GBPF_LDX | GBPF_MEM | GBPF_DW, .dst = 0, .src = 2},
		EXIT,
	};
	struct gbpf_verify_result res;
	int rc;

	rc = verify(store_value, 3, GBPF_ATTACH_GPU_MEM, 0, &res);
	tap_ok(rc == -GBPF_ERRNO__VERIFY && res.error_insn == 0 && res.reason[0],
	       "gpu/mem probe writing ctx->mem_value without the flag: rejected at 0 (%s)", res.reason);
	rc = verify(store_value, 3, GBPF_ATTACH_GPU_MEM, GBPF_VERIFY_F_ALLOW_MEM_WRITE, &res);
	tap_ok(rc == 0, "with GBPF_VERIFY_F_ALLOW_MEM_WRITE it is accepted (%d %s)", rc, res.reason);
	rc = verify(store_value, 3, GBPF_ATTACH_GPU_ENTRY, GBPF_VERIFY_F_ALLOW_MEM_WRITE, &res);
	tap_ok(rc == -GBPF_ERRNO__VERIFY, "the flag does not extend to gpu/entry probes (%s)",
	       res.reason);
	rc = verify(store_addr, 3, GBPF_ATTACH_GPU_MEM, GBPF_VERIFY_F_ALLOW_MEM_WRITE, &res);
	tap_ok(rc == -GBPF_ERRNO__VERIFY && res.error_insn == 0,
	       "ctx->mem_addr stays read-only with the flag (%s)", res.reason);
	rc = verify(store_app, 4, GBPF_ATTACH_GPU_MEM, GBPF_VERIFY_F_ALLOW_MEM_WRITE, &res);
	tap_ok(rc == -GBPF_ERRNO__VERIFY && res.error_insn == 1,
	       "a store through the application's address is rejected, flag or not (%s)", res.reason);
	rc = verify(load_app, 3, GBPF_ATTACH_GPU_MEM, 0, &res);
	tap_ok(rc == -GBPF_ERRNO__VERIFY && res.error_insn == 1,
	       "a load through the application's address is rejected (%s)", res.reason);
	return tap_done();
}
