/* SPDX-License-Identifier: MIT */
/*
 * plugins/spirv/spv_emit.c - eBPF programs to a SPIR-V module: functions,
 * basic blocks, calls, the probe functions and the run kernel.
 *
 * Every eBPF function (the entry and each BPF-to-BPF callee) becomes
 *   ulong __gbpf_p<prog>_f<func>(ulong r1, ... ulong r5, uint *exit_flag)
 * with its own registers and a 512-byte stack as Function-storage
 * variables; r10 holds the stack's generic address + 512, so every eBPF
 * pointer (stack, context, maps, app memory) is one 64-bit integer turned
 * into a Generic pointer at each access. exit_flag carries the GPU exit
 * helper (507) out of nested calls.
 *
 * Blocks are emitted in reverse post-order of the control-flow graph, which
 * puts every block after its dominators (a SPIR-V rule); unreachable code is
 * dropped. Kernel-capability modules need no structured merges.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gbpf/helper_ids.h>
#include <gbpf/insn.h>
#include <gbpf/probe_ctx.h>

#include "spv_internal.h"

/* Largest program translated (slots). */
#define SPV_MAX_INSNS (1u << 20)

int spv_fail(struct spv_cg *cg, size_t pc, int code, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (cg->err && cg->err_size)
		snprintf(cg->err, cg->err_size, "%s: section %s: program %s: insn %zu: %s",
			 cg->prog->source_file ? cg->prog->source_file : "<memory>",
			 cg->prog->section ? cg->prog->section : "-",
			 cg->prog->name ? cg->prog->name : "-", pc, msg);
	return code;
}

uint32_t spv_table(struct spv_gen *g)
{
	if (!g->tbl)
		g->tbl = spv_c64(g->m, g->ctx_table);
	return g->tbl;
}

static int is_jump(uint8_t code)
{
	uint8_t cls = GBPF_CLASS(code), op = GBPF_OP(code);

	return (cls == GBPF_JMP || cls == GBPF_JMP32) && op != GBPF_CALL && op != GBPF_EXIT;
}

static long long jump_target(const struct gbpf_insn *in, size_t pc)
{
	if (in->code == GBPF_OP_GOTOL)
		return (long long)pc + 1 + in->imm;
	return (long long)pc + 1 + in->off;
}

static int is_exit_helper(const struct gbpf_insn *in)
{
	return in->code == GBPF_OP_CALL && in->src == GBPF_CALL_HELPER &&
	       in->imm == GBPF_HELPER_GPU_EXIT;
}

static int cmp_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return x < y ? -1 : x > y;
}

static long func_at(const struct spv_cg *cg, size_t pc)
{
	size_t i;

	for (i = 0; i < cg->nfuncs; i++)
		if (cg->funcs[i].start == pc)
			return (long)i;
	return -1;
}

/* Functions, block leaders and target checks. */
static int analyse(struct spv_cg *cg)
{
	size_t *starts, ns = 0, i, f;

	starts = calloc(cg->n + 1, sizeof(*starts));
	cg->leader = calloc(cg->n + 1, 1);
	cg->label = calloc(cg->n + 1, sizeof(*cg->label));
	if (!starts || !cg->leader || !cg->label) {
		free(starts);
		return spv_fail(cg, 0, -ENOMEM, "out of memory");
	}
	starts[ns++] = 0;
	for (i = 0; i < cg->n; i++) {
		const struct gbpf_insn *in = &cg->insns[i];

		if (gbpf_insn_is_wide(in)) {
			if (i + 1 >= cg->n) {
				free(starts);
				return spv_fail(cg, i, -EINVAL, "wide load without its second slot");
			}
			if (in->src == GBPF_PSEUDO_FUNC) {
				long long t = (long long)i + 1 + in->imm;

				if (t <= 0 || (size_t)t >= cg->n) {
					free(starts);
					return spv_fail(cg, i, -EINVAL, "function address out of range");
				}
				starts[ns++] = (size_t)t;
			}
			i++;
			continue;
		}
		if (in->code == GBPF_OP_CALL && in->src == GBPF_CALL_LOCAL) {
			long long t = (long long)i + 1 + in->imm;

			if (t < 0 || (size_t)t >= cg->n) {
				free(starts);
				return spv_fail(cg, i, -EINVAL, "local call target %lld out of range", t);
			}
			starts[ns++] = (size_t)t;
		}
		if (is_exit_helper(in))
			cg->uses_exit = 1;
	}
	qsort(starts, ns, sizeof(*starts), cmp_size);
	cg->funcs = calloc(ns, sizeof(*cg->funcs));
	if (!cg->funcs) {
		free(starts);
		return spv_fail(cg, 0, -ENOMEM, "out of memory");
	}
	for (i = 0; i < ns; i++)
		if (!cg->nfuncs || cg->funcs[cg->nfuncs - 1].start != starts[i])
			cg->funcs[cg->nfuncs++].start = starts[i];
	free(starts);
	for (f = 0; f < cg->nfuncs; f++) {
		struct spv_func *fn = &cg->funcs[f];

		fn->end = f + 1 < cg->nfuncs ? cg->funcs[f + 1].start : cg->n;
		cg->leader[fn->start] = 1;
		for (i = fn->start; i < fn->end; i++) {
			const struct gbpf_insn *in = &cg->insns[i];

			if (in->dst > 10 || in->src > 10)
				if (!gbpf_insn_is_wide(in) || in->dst > 10)
					return spv_fail(cg, i, -EINVAL, "bad register r%u",
							in->dst > 10 ? in->dst : in->src);
			if (gbpf_insn_is_wide(in)) {
				if (i + 1 >= fn->end)
					return spv_fail(cg, i, -EINVAL, "wide load split across functions");
				i++;
				continue;
			}
			if (is_jump(in->code)) {
				long long t = jump_target(in, i);

				if (t < (long long)fn->start || t >= (long long)fn->end)
					return spv_fail(cg, i, -EINVAL,
							"jump target %lld outside function [%zu, %zu)", t,
							fn->start, fn->end);
				if (t < (long long)cg->n && t > 0 && gbpf_insn_is_wide(&cg->insns[t - 1]) &&
				    (size_t)t - 1 >= fn->start) {
					/* landing on a second slot is not a valid instruction */
					size_t k = fn->start;

					while (k < (size_t)t)
						k += gbpf_insn_is_wide(&cg->insns[k]) ? 2 : 1;
					if (k != (size_t)t)
						return spv_fail(cg, i, -EINVAL,
								"jump into the middle of a wide load");
				}
				cg->leader[t] = 1;
				if (i + 1 < cg->n)
					cg->leader[i + 1] = 1;
			} else if (in->code == GBPF_OP_EXIT || is_exit_helper(in)) {
				if (i + 1 < cg->n)
					cg->leader[i + 1] = 1;
			}
		}
	}
	return 0;
}

/* Successors of the block that starts at @p s in function fn; returns count. */
static size_t block_succ(const struct spv_cg *cg, const struct spv_func *fn, size_t s, size_t *out,
			 size_t *last)
{
	size_t i = s, prev = s;

	for (;;) {
		prev = i;
		i += gbpf_insn_is_wide(&cg->insns[i]) ? 2 : 1;
		if (i >= fn->end || cg->leader[i])
			break;
	}
	*last = prev;
	{
		const struct gbpf_insn *in = &cg->insns[prev];
		size_t n = 0;

		if (in->code == GBPF_OP_EXIT || is_exit_helper(in))
			return 0;
		if (is_jump(in->code)) {
			out[n++] = (size_t)jump_target(in, prev);
			if (in->code == GBPF_OP_JA || in->code == GBPF_OP_GOTOL)
				return n;
		}
		if (i < fn->end)
			out[n++] = i;
		return n;
	}
}

/* Reverse post-order of the blocks of fn reachable from its start. */
static int block_order(struct spv_cg *cg, const struct spv_func *fn, size_t **order, size_t *cnt,
		       size_t pc_for_err)
{
	size_t len = fn->end - fn->start, sp = 0, no = 0;
	size_t *stack = calloc(len, sizeof(*stack)), *post = calloc(len, sizeof(*post));
	uint8_t *state = calloc(len, 1); /* 0 new, 1 on stack, 2 done */
	size_t *edge = calloc(len, sizeof(*edge));

	if (!stack || !post || !state || !edge) {
		free(stack), free(post), free(state), free(edge);
		return spv_fail(cg, pc_for_err, -ENOMEM, "out of memory");
	}
	stack[sp++] = fn->start;
	state[0] = 1;
	while (sp) {
		size_t b = stack[sp - 1], succ[2], last, ns;

		ns = block_succ(cg, fn, b, succ, &last);
		if (edge[b - fn->start] < ns) {
			size_t t = succ[edge[b - fn->start]++];

			if (!state[t - fn->start]) {
				state[t - fn->start] = 1;
				stack[sp++] = t;
			}
			continue;
		}
		state[b - fn->start] = 2;
		post[no++] = b;
		sp--;
	}
	free(stack), free(state), free(edge);
	/* reverse in place */
	for (size_t i = 0; i < no / 2; i++) {
		size_t x = post[i];

		post[i] = post[no - 1 - i];
		post[no - 1 - i] = x;
	}
	*order = post;
	*cnt = no;
	return 0;
}

static void func_name(char *buf, size_t size, size_t prog, size_t f)
{
	snprintf(buf, size, "__gbpf_p%zu_f%zu", prog, f);
}

/* Call function f; with the exit helper in use, branch to a return or to @p after. */
static int emit_call_func(struct spv_cg *cg, long f, uint32_t after)
{
	struct spv_mod *m = cg->m;
	uint32_t a[5], r, id;
	unsigned i;

	for (i = 0; i < 5; i++)
		a[i] = spv_rd(cg, i + 1);
	id = spv_id(m);
	spv_op(m, SPV_SEC_FUNCS, SpvOpFunctionCall, 9, m->t_u64, id, cg->funcs[f].id, a[0], a[1],
	       a[2], a[3], a[4], cg->exit_flag);
	r = id;
	spv_wr(cg, 0, r);
	if (cg->uses_exit) {
		/* the callee ran the exit helper: unwind this frame too */
		uint32_t fl = spv_load(m, m->t_u32, cg->exit_flag, 4);
		uint32_t set = spv_bin(m, SpvOpINotEqual, m->t_bool, fl, spv_c32(m, 0));
		uint32_t lret = spv_id(m);

		spv_brc(m, set, lret, after);
		spv_label(m, lret);
		spv_op(m, SPV_SEC_FUNCS, SpvOpReturnValue, 1, spv_rd(cg, 0));
		return 1;
	}
	return 0;
}

static int emit_call_local(struct spv_cg *cg, size_t pc, uint32_t after)
{
	const struct gbpf_insn *in = &cg->insns[pc];
	long f = func_at(cg, (size_t)((long long)pc + 1 + in->imm));

	if (f <= 0)
		return spv_fail(cg, pc, -EINVAL, "local call does not reach a subprogram");
	return emit_call_func(cg, f, after);
}

/*
 * callx: a dispatch over every helper the device knows (a register holding
 * a helper id) and every subprogram whose address the program can take
 * (SPV_FUNC_TAG | index); anything else returns -EINVAL in r0, as the
 * interpreter does for a bad helper id. Ends by branching to @p after.
 */
static int emit_callx(struct spv_cg *cg, size_t pc, uint32_t after)
{
	struct spv_mod *m = cg->m;
	uint32_t sel = spv_rd(cg, cg->insns[pc].dst), ldef = spv_id(m);
	uint32_t ops[2 + 3 * 700], lab[700];
	size_t no = 2, nc = 0, k;
	uint32_t h;
	int rc, term;

	ops[0] = sel;
	ops[1] = ldef;
	for (h = 0; h < 700 && nc < 650; h++) {
		if (!gbpf_spirv_helper_supported(h))
			continue;
		lab[nc] = spv_id(m);
		ops[no++] = h;
		ops[no++] = 0;
		ops[no++] = lab[nc++];
	}
	for (k = 1; k < cg->nfuncs && nc < 700; k++) {
		lab[nc] = spv_id(m);
		ops[no++] = (uint32_t)(SPV_FUNC_TAG | k);
		ops[no++] = (uint32_t)((SPV_FUNC_TAG | k) >> 32);
		ops[no++] = lab[nc++];
	}
	spv_inst(m, SPV_SEC_FUNCS, SpvOpSwitch, no, ops);
	nc = 0;
	for (h = 0; h < 700; h++) {
		if (!gbpf_spirv_helper_supported(h))
			continue;
		spv_label(m, lab[nc++]);
		rc = spv_emit_helper_id(cg, pc, h, &term);
		if (rc)
			return rc;
		if (!term)
			spv_br(m, after);
	}
	for (k = 1; k < cg->nfuncs; k++) {
		spv_label(m, lab[nc++]);
		if (!emit_call_func(cg, (long)k, after))
			spv_br(m, after);
	}
	spv_label(m, ldef);
	spv_wr(cg, 0, spv_c64(m, (uint64_t)-(int64_t)EINVAL));
	spv_br(m, after);
	return 0;
}

/* Emit the block starting at slot s; it ends with a terminator. */
static int emit_block(struct spv_cg *cg, const struct spv_func *fn, size_t s)
{
	struct spv_mod *m = cg->m;
	size_t i = s;
	int rc;

	spv_label(m, cg->label[s]);
	for (;;) {
		const struct gbpf_insn *in = &cg->insns[i];
		size_t next = i + (gbpf_insn_is_wide(in) ? 2 : 1);
		uint8_t cls = GBPF_CLASS(in->code);

		if (in->code == GBPF_OP_EXIT) {
			spv_op(m, SPV_SEC_FUNCS, SpvOpReturnValue, 1, spv_rd(cg, 0));
			return 0;
		}
		if (is_jump(in->code)) {
			uint32_t t = cg->label[jump_target(in, i)];

			if (in->code == GBPF_OP_JA || in->code == GBPF_OP_GOTOL) {
				spv_br(m, t);
				return 0;
			}
			if (next >= fn->end)
				return spv_fail(cg, i, -EINVAL, "conditional jump falls off the function");
			{
				uint32_t c = spv_jump_cond(cg, i);

				if (!c)
					return spv_fail(cg, i, -EINVAL, "unknown jump opcode 0x%02x",
							in->code);
				spv_brc(m, c, t, cg->label[next]);
			}
			return 0;
		}
		if (cls == GBPF_JMP && GBPF_OP(in->code) == GBPF_CALL) {
			if (in->code == GBPF_OP_CALLX || in->src == GBPF_CALL_LOCAL) {
				uint32_t after;

				if (next >= fn->end)
					return spv_fail(cg, i, -EINVAL, "call falls off the function");
				after = cg->leader[next] ? cg->label[next] : spv_id(m);
				if (in->code == GBPF_OP_CALLX) {
					rc = emit_callx(cg, i, after);
					if (rc)
						return rc;
					rc = 1; /* the dispatch always ends in a branch to after */
				} else {
					rc = emit_call_local(cg, i, after);
				}
				if (rc < 0)
					return rc;
				if (rc == 1) {
					if (cg->leader[next])
						return 0;
					spv_label(m, after);
				}
			} else if (in->src == GBPF_CALL_HELPER) {
				int term = 0;

				rc = spv_emit_helper(cg, i, &term);
				if (rc)
					return rc;
				if (term)
					return 0;
			} else {
				return spv_fail(cg, i, -ENOTSUP, "kfunc calls are not supported on the GPU");
			}
		} else if (cls == GBPF_JMP || cls == GBPF_JMP32) {
			return spv_fail(cg, i, -EINVAL, "unknown jump opcode 0x%02x", in->code);
		} else {
			rc = spv_emit_insn(cg, i);
			if (rc)
				return rc;
		}
		if (next >= fn->end)
			return spv_fail(cg, i, -EINVAL, "execution falls off the end of the function");
		if (cg->leader[next]) {
			spv_br(m, cg->label[next]);
			return 0;
		}
		i = next;
	}
}

static int emit_function(struct spv_cg *cg, size_t f)
{
	struct spv_mod *m = cg->m;
	struct spv_func *fn = &cg->funcs[f];
	uint32_t p[5], stack_t, stack, fp, gptr;
	size_t *order = NULL, cnt = 0, k;
	char name[64];
	int rc;
	unsigned i;

	cg->cur = f;
	func_name(name, sizeof(name), cg->prog_idx, f);
	spv_name(m, fn->id, name);
	spv_op(m, SPV_SEC_FUNCS, SpvOpFunction, 4, m->t_u64, fn->id, SpvFunctionControlMaskNone,
	       cg->g->t_fn5);
	for (i = 0; i < 5; i++) {
		p[i] = spv_id(m);
		spv_op(m, SPV_SEC_FUNCS, SpvOpFunctionParameter, 2, m->t_u64, p[i]);
	}
	cg->exit_flag = spv_id(m);
	spv_op(m, SPV_SEC_FUNCS, SpvOpFunctionParameter, 2, cg->g->t_pu32, cg->exit_flag);
	spv_label(m, 0);
	for (i = 0; i < 11; i++)
		cg->reg[i] = spv_var(m, m->t_u64);
	stack_t = spv_type_array(m, m->t_u64, GBPF_STACK_SIZE / 8);
	stack = spv_var(m, stack_t);
	spv_op(m, SPV_SEC_ANNOT, SpvOpDecorate, 3, stack, SpvDecorationAlignment, 8);
	spv_wr(cg, 0, spv_c64(m, 0));
	/* the main function's a3 is its GPU_THREAD_LOCAL values' base (spv_tls.c), not an eBPF r3 */
	cg->tls_base = f == 0 && gbpf_progs_thread_local_size(&cg->prog, 1) ? p[2] : 0;
	for (i = 0; i < 5; i++)
		spv_wr(cg, i + 1, f == 0 && i >= 2 ? spv_c64(m, 0) : p[i]);
	for (i = 6; i < 10; i++)
		spv_wr(cg, i, spv_c64(m, 0));
	gptr = spv_un(m, SpvOpPtrCastToGeneric, spv_type_ptr(m, SpvStorageClassGeneric, stack_t),
		      stack);
	fp = spv_un(m, SpvOpConvertPtrToU, m->t_u64, gptr);
	spv_wr(cg, 10, spv_addk(m, fp, GBPF_STACK_SIZE));

	for (k = fn->start; k < fn->end; k++)
		if (cg->leader[k])
			cg->label[k] = spv_id(m);
	spv_br(m, cg->label[fn->start]);
	rc = block_order(cg, fn, &order, &cnt, fn->start);
	if (rc)
		return rc;
	for (k = 0; k < cnt && !rc; k++)
		rc = emit_block(cg, fn, order[k]);
	free(order);
	spv_op(m, SPV_SEC_FUNCS, SpvOpFunctionEnd, 0);
	return rc;
}

/* uint flag = 0; return f0(a1, a2, tls, 0, 0, &flag): @p tls the GPU_THREAD_LOCAL values' base or 0 */
static uint32_t call_main(struct spv_cg *cg, uint32_t a1, uint32_t a2, uint32_t tls, uint32_t flag)
{
	struct spv_mod *m = cg->m;
	uint32_t z = spv_c64(m, 0), id = spv_id(m);

	spv_store(m, flag, spv_c32(m, 0), 4);
	spv_op(m, SPV_SEC_FUNCS, SpvOpFunctionCall, 9, m->t_u64, id, cg->funcs[0].id, a1, a2, tls, z,
	       z, flag);
	return id;
}

static uint32_t emit_probe(struct spv_cg *cg, int export)
{
	struct spv_mod *m = cg->m;
	uint32_t fid = spv_id(m), ctx = spv_id(m), flag, r, tls;
	uint32_t ft = spv_type_fn(m, m->t_u64, 1, &m->t_u64);
	char name[64];
	uint32_t lk = SpvLinkageTypeExport;

	snprintf(name, sizeof(name), GBPF_SPIRV_PROBE_PREFIX "%zu", cg->prog_idx);
	spv_name(m, fid, name);
	if (export) {
		uint32_t pre[2] = {fid, SpvDecorationLinkageAttributes};

		spv_cap(m, SpvCapabilityLinkage);
		spv_op_str(m, SPV_SEC_ANNOT, SpvOpDecorate, pre, 2, name, &lk, 1);
	}
	spv_op(m, SPV_SEC_FUNCS, SpvOpFunction, 4, m->t_u64, fid, SpvFunctionControlMaskNone, ft);
	spv_op(m, SPV_SEC_FUNCS, SpvOpFunctionParameter, 2, m->t_u64, ctx);
	spv_label(m, 0);
	flag = spv_var(m, m->t_u32);
	/* the injector keeps the work-item's GPU_THREAD_LOCAL values after the context (spv_inject.c) */
	tls = gbpf_progs_thread_local_size(&cg->prog, 1) ? spv_addk(m, ctx, sizeof(struct gbpf_gpu_ctx))
							 : spv_c64(m, 0);
	r = call_main(cg, ctx, spv_c64(m, 0), tls, flag);
	spv_op(m, SPV_SEC_FUNCS, SpvOpReturnValue, 1, r);
	spv_op(m, SPV_SEC_FUNCS, SpvOpFunctionEnd, 0);
	return fid;
}

static int emit_run_kernel(struct spv_cg *cg, const char *entry)
{
	struct spv_mod *m = cg->m;
	uint32_t p[6], pt[6], fid = spv_id(m), ft, flag, gid, n, lrun, ldone, lout, lnoout, lstats;
	uint32_t data, r1, r0, out, st, lfirst, lfold, zero = spv_c64(m, 0), tls = zero, tls_var = 0, tls_t = 0;
	uint32_t tls_bytes = gbpf_progs_thread_local_size(&cg->prog, 1);
	unsigned i;

	for (i = 0; i < 6; i++)
		pt[i] = m->t_u64;
	ft = spv_type_fn(m, m->t_void, 6, pt);
	spv_name(m, fid, entry);
	spv_op(m, SPV_SEC_FUNCS, SpvOpFunction, 4, m->t_void, fid, SpvFunctionControlMaskNone, ft);
	for (i = 0; i < 6; i++) {
		p[i] = spv_id(m);
		spv_op(m, SPV_SEC_FUNCS, SpvOpFunctionParameter, 2, m->t_u64, p[i]);
	}
	spv_label(m, 0);
	flag = spv_var(m, m->t_u32);
	if (tls_bytes) {
		/* a work-item runs the program once: its GPU_THREAD_LOCAL values live here, zeroed first */
		tls_t = spv_type_array(m, m->t_u64, tls_bytes / 8);
		tls_var = spv_var(m, tls_t);
	}
	gid = spv_global_id(m);
	n = p[4];
	lrun = spv_id(m), ldone = spv_id(m), lout = spv_id(m), lnoout = spv_id(m);
	lstats = spv_id(m), lfirst = spv_id(m), lfold = spv_id(m);
	spv_brc(m, spv_bin(m, SpvOpULessThan, m->t_bool, gid, n), lrun, ldone);
	spv_label(m, lrun);
	data = p[0];
	r1 = spv_select(m, m->t_u64, spv_bin(m, SpvOpIEqual, m->t_bool, data, zero), zero,
			spv_add64(m, data, spv_bin(m, SpvOpIMul, m->t_u64, gid, p[2])));
	if (tls_bytes) {
		tls = spv_un(m, SpvOpConvertPtrToU, m->t_u64,
			     spv_un(m, SpvOpPtrCastToGeneric, spv_type_ptr(m, SpvStorageClassGeneric, tls_t), tls_var));
		for (i = 0; i < tls_bytes / 8; i++)
			spv_store(m, spv_addr_ptr(m, m->t_u64, spv_addk(m, tls, 8 * i)), zero, 8);
	}
	r0 = call_main(cg, r1, p[1], tls, flag);
	out = p[3];
	spv_brc(m, spv_bin(m, SpvOpINotEqual, m->t_bool, out, zero), lout, lnoout);
	spv_label(m, lout);
	spv_store(m, spv_addr_ptr(m, m->t_u64, spv_add64(m, out, spv_bin(m, SpvOpShiftLeftLogical,
									  m->t_u64, gid,
									  spv_c64(m, 3)))),
		  r0, 8);
	spv_br(m, lnoout);
	spv_label(m, lnoout);
	st = p[5];
	spv_brc(m, spv_bin(m, SpvOpINotEqual, m->t_bool, st, zero), lstats, ldone);
	spv_label(m, lstats);
	spv_brc(m, spv_bin(m, SpvOpIEqual, m->t_bool, gid, zero), lfirst, lfold);
	spv_label(m, lfirst);
	spv_store(m, spv_addr_ptr(m, m->t_u64, spv_addk(m, st, 16)), r0, 8);
	spv_br(m, lfold);
	spv_label(m, lfold);
	spv_atomic(m, SpvOpAtomicUMin, 64, st, r0);
	spv_atomic(m, SpvOpAtomicUMax, 64, spv_addk(m, st, 8), r0);
	spv_br(m, ldone);
	spv_label(m, ldone);
	spv_op(m, SPV_SEC_FUNCS, SpvOpReturn, 0);
	spv_op(m, SPV_SEC_FUNCS, SpvOpFunctionEnd, 0);
	return (int)fid;
}

static void cg_free(struct spv_cg *cg)
{
	free(cg->funcs);
	free(cg->leader);
	free(cg->label);
}

static int check_prog(const struct gbpf_prog_desc *p, char *err, size_t err_size)
{
	if (!p || !p->insns || !p->insn_cnt) {
		snprintf(err, err_size, "%s: program without instructions",
			 p && p->name ? p->name : "spirv");
		return -EINVAL;
	}
	if (p->insn_cnt > SPV_MAX_INSNS) {
		snprintf(err, err_size, "%s: section %s: %zu instructions exceed the limit of %u",
			 p->name ? p->name : "-", p->section ? p->section : "-", p->insn_cnt,
			 SPV_MAX_INSNS);
		return -EINVAL;
	}
	return 0;
}

int spv_gen_progs(struct spv_gen *g, const struct gbpf_prog_desc *const *progs, size_t n,
		  uint32_t flags, uint32_t *probe_fids, char *err, size_t err_size)
{
	struct spv_mod *m = g->m;
	struct spv_cg *cgs = NULL;
	uint32_t *kernel_fid = NULL;
	size_t i, f;
	int rc = 0;

	for (i = 0; i < n; i++) {
		rc = check_prog(progs[i], err, err_size);
		if (rc)
			return rc;
		/*
		 * An exported probe's caller passes a context of its own, with nothing after it:
		 * only the injector (its context array) and the run kernel keep thread-local values.
		 */
		if (!(flags & (GBPF_SPIRV_KERNEL | SPV_GEN_NO_EXPORT)) && gbpf_progs_thread_local_size(&progs[i], 1)) {
			snprintf(err, err_size,
				 "%s: section %s: thread-local (GPU_THREAD_LOCAL) maps need a caller that keeps the "
				 "values (gbpf's injection or run kernel), not an exported probe function",
				 progs[i]->source_file ? progs[i]->source_file : "-",
				 progs[i]->section ? progs[i]->section : "-");
			return -ENOTSUP;
		}
	}
	g->t_pu32 = spv_type_ptr(m, SpvStorageClassFunction, m->t_u32);
	{
		uint32_t ops[6] = {m->t_u64, m->t_u64, m->t_u64, m->t_u64, m->t_u64, g->t_pu32};

		g->t_fn5 = spv_type_fn(m, m->t_u64, 6, ops);
	}
	if ((flags & GBPF_SPIRV_KERNEL) && !(flags & GBPF_SPIRV_KERNEL_EACH))
		n = 1;
	cgs = calloc(n, sizeof(*cgs));
	kernel_fid = calloc(n, sizeof(*kernel_fid));
	if (!cgs || !kernel_fid) {
		rc = -ENOMEM;
		snprintf(err, err_size, "spirv: out of memory");
		goto out;
	}
	for (i = 0; i < n; i++) {
		struct spv_cg *cg = &cgs[i];

		cg->g = g;
		cg->m = m;
		cg->prog = progs[i];
		cg->prog_idx = i;
		cg->insns = progs[i]->insns;
		cg->n = progs[i]->insn_cnt;
		cg->err = err;
		cg->err_size = err_size;
		rc = analyse(cg);
		if (rc)
			goto out;
		for (f = 0; f < cg->nfuncs; f++)
			cg->funcs[f].id = spv_id(m);
	}
	for (i = 0; i < n; i++) {
		for (f = 0; f < cgs[i].nfuncs && !rc; f++)
			rc = emit_function(&cgs[i], f);
		if (rc)
			goto out;
		if (flags & GBPF_SPIRV_KERNEL) {
			char kname[64];

			if (i == 0)
				snprintf(kname, sizeof(kname), GBPF_SPIRV_RUN_ENTRY);
			else
				snprintf(kname, sizeof(kname), GBPF_SPIRV_RUN_ENTRY "_%zu", i);
			kernel_fid[i] = (uint32_t)emit_run_kernel(&cgs[i], kname);
		} else {
			uint32_t fid = emit_probe(&cgs[i], !(flags & SPV_GEN_NO_EXPORT));

			if (probe_fids)
				probe_fids[i] = fid;
		}
	}
	rc = spv_rt_emit_all(g);
	if (rc) {
		snprintf(err, err_size, "spirv: support functions: out of memory");
		goto out;
	}
	for (i = 0; (flags & GBPF_SPIRV_KERNEL) && i < n; i++) {
		/* the interface lists every Input variable the module uses (SPIR-V <= 1.3) */
		uint32_t pre[2] = {SpvExecutionModelKernel, kernel_fid[i]};
		char name[64];

		if (i == 0)
			snprintf(name, sizeof(name), GBPF_SPIRV_RUN_ENTRY);
		else
			snprintf(name, sizeof(name), GBPF_SPIRV_RUN_ENTRY "_%zu", i);
		spv_op_str(m, SPV_SEC_ENTRY, SpvOpEntryPoint, pre, 2, name, m->iface, m->niface);
		if (i == 0 && (flags & GBPF_SPIRV_KERNEL_EACH)) {
			/* program 0 answers to both names: a second kernel runs it too */
			uint32_t w = (uint32_t)emit_run_kernel(&cgs[0], GBPF_SPIRV_RUN_ENTRY "_0");
			uint32_t pre0[2] = {SpvExecutionModelKernel, w};

			spv_op_str(m, SPV_SEC_ENTRY, SpvOpEntryPoint, pre0, 2, GBPF_SPIRV_RUN_ENTRY "_0",
				   m->iface, m->niface);
		}
	}
	if (m->oom) {
		rc = -ENOMEM;
		snprintf(err, err_size, "spirv: out of memory (or module over the size limit)");
	}
out:
	for (i = 0; cgs && i < n; i++)
		cg_free(&cgs[i]);
	free(cgs);
	free(kernel_fid);
	return rc;
}

int gbpf_spirv_emit(const struct gbpf_prog_desc *const *progs, size_t n,
		    const struct gbpf_spirv_opts *opts, uint32_t **words, size_t *word_count,
		    char *err, size_t err_size)
{
	struct spv_mod m;
	struct spv_gen g;
	uint32_t version = GBPF_SPIRV_VERSION(1, 0), flags = 0;
	char dummy[1];
	int rc;

	if (!err || !err_size) {
		err = dummy;
		err_size = sizeof(dummy);
	}
	err[0] = 0;
	if (!progs || !n || !words || !word_count) {
		snprintf(err, err_size, "spirv: no program given");
		return -EINVAL;
	}
	if (opts && opts->sz >= offsetof(struct gbpf_spirv_opts, ctx_table) + 8) {
		flags = opts->flags & (GBPF_SPIRV_KERNEL | GBPF_SPIRV_TIMER_IMPORT |
				       GBPF_SPIRV_KERNEL_EACH);
		if (opts->version)
			version = opts->version;
		if (version < GBPF_SPIRV_VERSION(1, 0) || version > GBPF_SPIRV_VERSION(1, 6) ||
		    (version & 0xff0000ffu)) {
			snprintf(err, err_size, "spirv: unsupported SPIR-V version word 0x%08x", version);
			return -EINVAL;
		}
	}
	rc = spv_mod_init(&m);
	if (rc) {
		snprintf(err, err_size, "spirv: out of memory");
		return rc;
	}
	memset(&g, 0, sizeof(g));
	g.m = &m;
	g.flags = flags;
	g.ctx_table = opts && opts->sz >= offsetof(struct gbpf_spirv_opts, ctx_table) + 8
			      ? opts->ctx_table
			      : 0;
	spv_cap(&m, SpvCapabilityAddresses);
	spv_cap(&m, SpvCapabilityKernel);
	spv_cap(&m, SpvCapabilityInt64);
	spv_op(&m, SPV_SEC_MEMMODEL, SpvOpMemoryModel, 2, SpvAddressingModelPhysical64,
	       SpvMemoryModelOpenCL);
	rc = spv_gen_progs(&g, progs, n, flags, NULL, err, err_size);
	if (!rc) {
		rc = spv_mod_finish(&m, version, words, word_count);
		if (rc)
			snprintf(err, err_size, "spirv: out of memory (or module over the size limit)");
	}
	if (!rc) {
		rc = gbpf_spirv_validate(*words, *word_count, GBPF_SPIRV_ENV_AUTO, err, err_size);
		if (rc) {
			free(*words);
			*words = NULL;
			*word_count = 0;
		}
	}
	spv_mod_free(&m);
	return rc;
}
