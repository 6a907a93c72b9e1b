/* SPDX-License-Identifier: MIT */
/*
 * eBPF to PTX: loads, stores, atomics and wide loads.
 *
 * Accesses based on r10 go straight to the function's .local frame
 * (ld.local with a constant offset): they are the common case (spills,
 * helper arguments) and generic addressing would hide from ptxas that they
 * are thread-private. Everything else uses generic addressing, because an
 * eBPF pointer may point at the stack, a map (global memory), the probe
 * context or mapped host memory.
 *
 * PTX requires natural alignment; eBPF allows any offset. An access whose
 * constant offset is not a multiple of its size is split into byte
 * accesses (bases are assumed aligned, as the verifier and the run kernel
 * guarantee for stack, maps, context and data).
 *
 * Atomics on local memory are undefined in PTX, so atomics on the frame
 * are done as plain read-modify-write (the frame is private to the
 * thread), and atomics through other pointers check isspacep.local first,
 * except through a pointer known to be a map value (ptx_cg.ptr).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ptx_internal.h"

struct ptx_addr {
	int local;       /* 1: [__gbpf_stack+off] in .local */
	int global;      /* 1: [%t4+off] in .global, %t4 the base register made a global address */
	unsigned reg;    /* base register when !local */
	long long off;
};

static int size_bytes(uint8_t code)
{
	switch (GBPF_SIZE(code)) {
	case GBPF_B: return 1;
	case GBPF_H: return 2;
	case GBPF_W: return 4;
	default: return 8;
	}
}

static void make_addr(const struct ptx_cg *cg, struct ptx_addr *a, unsigned base, int16_t off, int size)
{
	long long fo = (long long)GBPF_STACK_SIZE + off;

	memset(a, 0, sizeof(*a));
	if (base == 10 && fo >= 0 && fo + size <= GBPF_STACK_SIZE) {
		a->local = 1;
		a->off = fo;
		return;
	}
	/*
	 * A record reserved in the frame (ptx_reserve.c), through a register known to point into
	 * it: .local at a constant offset, so that ptxas keeps the record in registers and the
	 * injector's fold forwards its words to the submit.
	 */
	fo = base < 10 && cg->stk_known[base] ? (long long)GBPF_STACK_SIZE + cg->stk_off[base] + off : -1;
	if (fo >= GBPF_STACK_SIZE && fo + size <= (long long)cg->frame_bytes) {
		a->local = 1;
		a->off = fo;
		return;
	}
	a->reg = base;
	a->off = off;
}

/* "[base+off]" with extra byte displacement k. */
static void addr_str(char *buf, size_t size, const struct ptx_addr *a, int k)
{
	if (a->local)
		snprintf(buf, size, "[__gbpf_stack+%lld]", a->off + k);
	else if (a->global)
		snprintf(buf, size, "[%%t4+%lld]", a->off + k);
	else if (a->reg == 10)
		snprintf(buf, size, "[%%r10+%lld]", a->off + k);
	else
		snprintf(buf, size, "[%%r%u+%lld]", a->reg, a->off + k);
}

static const char *space(const struct ptx_addr *a)
{
	return a->local ? ".local" : a->global ? ".global" : "";
}

/*
 * A store through a register known to point into global memory (a map value, a per-GPU-thread
 * slot, a reserved ring record: ptx_track.c) addresses .global: the fold then knows the
 * store leaves the probe's stack alone and keeps forwarding the stack's values from registers
 * (a generic store might write the stack, so it forgets them all: kernelretsnoop_reserve's
 * block and thread coordinates went through local memory between its stores into the record).
 */
static void make_global(struct ptx_cg *cg, struct ptx_addr *a)
{
	uint8_t prov = a->local || a->reg >= 10 ? PTX_PTR_UNKNOWN : cg->ptr[a->reg];

	if (prov != PTX_PTR_MAP && prov != PTX_PTR_THREAD_SLOT && prov != PTX_PTR_RING)
		return;
	ptx_buf_printf(cg->b, "cvta.to.global.u64 %%t4, %%r%u;\n", a->reg);
	a->global = 1;
}

/*
 * Generic pointers (packets, context fields, data) may be misaligned at run
 * time even when the constant offset is aligned: branch to the byte path
 * ($Lu<id>) then. The check is two ALU ops and a uniform branch in the
 * common aligned case.
 */
static int static_aligned(const struct ptx_cg *cg, unsigned base, int16_t off, int sz)
{
	int bits = sz == 8 ? 3 : sz == 4 ? 2 : sz == 2 ? 1 : 0;

	return off % sz == 0 && cg->align[base] >= bits;
}

static void emit_align_check(struct ptx_cg *cg, const struct ptx_addr *a, int sz, unsigned id)
{
	ptx_buf_printf(cg->b, "add.u64 %%t3, %%r%u, %lld;\nand.b64 %%t3, %%t3, %d;\n"
			      "setp.ne.u64 %%p5, %%t3, 0;\n@%%p5 bra $Lu%u;\n",
		       a->reg, a->off, sz - 1, id);
}

static int emit_load(struct ptx_cg *cg, size_t pc)
{
	const struct gbpf_insn *in = &cg->insns[pc];
	int sz = size_bytes(in->code), sx = GBPF_MODE(in->code) == GBPF_MEMSX;
	unsigned id = ~0u;
	struct ptx_addr a;
	char as[64];
	int k;

	if (sx && sz == 8)
		return ptx_fail(cg, pc, -EINVAL, "sign-extending load of 8 bytes");
	/* a thread-local value at a known place: the form the injector keeps in a register */
	if (ptx_tls_access(cg, in->src, in->off, sz, as, sizeof(as))) {
		ptx_buf_printf(cg->b, "ld.u64 %%r%u, %s;\n", in->dst, as);
		return 0;
	}
	make_addr(cg, &a, in->src, in->off, sz);
	if (sz == 1 || (a.local && a.off % sz == 0) || static_aligned(cg, in->src, in->off, sz)) {
		addr_str(as, sizeof(as), &a, 0);
		/* a context field: through the entry's own copy of the pointer (ptx_internal.h) */
		if (!a.local && in->src < 10 && cg->ptr[in->src] == PTX_PTR_CTX && cg->cur == 0 && !cg->kernel)
			snprintf(as, sizeof(as), "[%%rctx+%lld]", a.off);
		ptx_buf_printf(cg->b, "ld%s.%c%d %%r%u, %s;\n", space(&a), sx ? 's' : 'u', sz * 8,
			       in->dst, as);
		return 0;
	}
	if (!a.local && in->off % sz == 0) {
		id = cg->uniq++;
		emit_align_check(cg, &a, sz, id);
		addr_str(as, sizeof(as), &a, 0);
		ptx_buf_printf(cg->b, "ld.%c%d %%r%u, %s;\nbra.uni $Lv%u;\n$Lu%u:\n", sx ? 's' : 'u',
			       sz * 8, in->dst, as, id, id);
	}
	for (k = 0; k < sz; k++) {
		addr_str(as, sizeof(as), &a, k);
		ptx_buf_printf(cg->b, "ld%s.u8 %%t%d, %s;\n", space(&a), k ? 2 : 1, as);
		if (k) {
			ptx_buf_printf(cg->b, "shl.b64 %%t2, %%t2, %d;\nor.b64 %%t1, %%t1, %%t2;\n", k * 8);
		}
	}
	if (sx)
		ptx_buf_printf(cg->b, "bfe.s64 %%r%u, %%t1, 0, %d;\n", in->dst, sz * 8);
	else
		ptx_buf_printf(cg->b, "mov.b64 %%r%u, %%t1;\n", in->dst);
	if (id != ~0u)
		ptx_buf_printf(cg->b, "$Lv%u:\n", id);
	return 0;
}

static int emit_store(struct ptx_cg *cg, size_t pc)
{
	const struct gbpf_insn *in = &cg->insns[pc];
	int sz = size_bytes(in->code), k;
	unsigned id = ~0u;
	struct ptx_addr a;
	char as[64], val[16];

	if (GBPF_MODE(in->code) != GBPF_MEM)
		return ptx_fail(cg, pc, -EINVAL, "bad store mode 0x%02x", in->code);
	make_addr(cg, &a, in->dst, in->off, sz);
	if (GBPF_CLASS(in->code) == GBPF_ST) {
		ptx_buf_printf(cg->b, "mov.b64 %%t0, 0x%016llX;\n", (unsigned long long)(int64_t)in->imm);
		snprintf(val, sizeof(val), "%%t0");
	} else {
		snprintf(val, sizeof(val), "%%r%u", in->src);
	}
	if (ptx_tls_access(cg, in->dst, in->off, sz, as, sizeof(as))) {
		ptx_buf_printf(cg->b, "st.u64 %s, %s;\n", as, val);
		return 0;
	}
	if (sz == 1 || (a.local && a.off % sz == 0) || static_aligned(cg, in->dst, in->off, sz)) {
		make_global(cg, &a);
		addr_str(as, sizeof(as), &a, 0);
		ptx_buf_printf(cg->b, "st%s.u%d %s, %s;\n", space(&a), sz * 8, as, val);
		return 0;
	}
	if (!a.local && in->off % sz == 0) {
		id = cg->uniq++;
		emit_align_check(cg, &a, sz, id);
		addr_str(as, sizeof(as), &a, 0);
		ptx_buf_printf(cg->b, "st.u%d %s, %s;\nbra.uni $Lv%u;\n$Lu%u:\n", sz * 8, as, val, id, id);
	}
	for (k = 0; k < sz; k++) {
		addr_str(as, sizeof(as), &a, k);
		ptx_buf_printf(cg->b, "shr.b64 %%t1, %s, %d;\nst%s.u8 %s, %%t1;\n", val, k * 8, space(&a),
			       as);
	}
	if (id != ~0u)
		ptx_buf_printf(cg->b, "$Lv%u:\n", id);
	return 0;
}

/* Plain read-modify-write of an atomic at @p as in space @p sp (thread-private memory). */
static void emit_atomic_emulated(struct ptx_cg *cg, const struct gbpf_insn *in, const char *sp,
				 const char *as, int is64)
{
	struct ptx_buf *b = cg->b;
	int op = in->imm & ~GBPF_FETCH;
	const char *w = is64 ? "64" : "32";
	const char *old = is64 ? "%t6" : "%w6", *src = is64 ? "%t7" : "%w7", *nv = is64 ? "%t8" : "%w8";

	if (is64)
		ptx_buf_printf(b, "mov.b64 %%t7, %%r%u;\n", in->src);
	else
		ptx_buf_printf(b, "cvt.u32.u64 %%w7, %%r%u;\n", in->src);
	ptx_buf_printf(b, "ld%s.u%s %s, %s;\n", sp, w, old, as);
	switch (in->imm) {
	case GBPF_ATOMIC_XCHG:
		ptx_buf_printf(b, "st%s.u%s %s, %s;\n", sp, w, as, src);
		break;
	case GBPF_ATOMIC_CMPXCHG:
		if (is64) {
			ptx_buf_puts(b, "setp.eq.u64 %p4, %t6, %r0;\n");
		} else {
			ptx_buf_puts(b, "cvt.u32.u64 %w9, %r0;\nsetp.eq.u32 %p4, %w6, %w9;\n");
		}
		ptx_buf_printf(b, "@%%p4 st%s.u%s %s, %s;\n", sp, w, as, src);
		break;
	default: {
		const char *o = op == GBPF_ATOMIC_ADD ? "add.u" : op == GBPF_ATOMIC_OR ? "or.b"
				: op == GBPF_ATOMIC_AND ? "and.b" : "xor.b";

		ptx_buf_printf(b, "%s%s %s, %s, %s;\n", o, w, nv, old, src);
		ptx_buf_printf(b, "st%s.u%s %s, %s;\n", sp, w, as, nv);
		break;
	}
	}
}

/* Move the fetched old value (%t6 / %w6) to its eBPF register. */
static void emit_atomic_result(struct ptx_cg *cg, const struct gbpf_insn *in, int is64)
{
	unsigned r;

	if (in->imm == GBPF_ATOMIC_CMPXCHG)
		r = 0;
	else if (in->imm & GBPF_FETCH)
		r = in->src;
	else
		return;
	if (is64)
		ptx_buf_printf(cg->b, "mov.b64 %%r%u, %%t6;\n", r);
	else
		ptx_buf_printf(cg->b, "cvt.u64.u32 %%r%u, %%w6;\n", r);
}

/*
 * A counter update (atomic add whose result is unused) at %t5 of %t7 / %w7,
 * aggregated within the warp when every active lane adds the same value to
 * the same address (a shared counter; @value: the value when it is a
 * constant of the program, so only the address is compared, and the
 * product is a multiply by an immediate, none for a counter's 1): the lowest
 * lane (no active lane below it in %lanemask_lt: three instructions where
 * finding its index and comparing with %laneid took six) adds value x count in
 * one atomic, so thousands of threads bumping one counter cost one atomic
 * per warp instead of 32 serialised ones. Otherwise each lane adds its own.
 * Only match.all is used: match.any with 32 distinct addresses (per-thread
 * slots) runs as a loop on sm_90 and made threadhist 8.9x slower than
 * per-lane atomics (sm_70+, PTX 6.0+). A value that comes from a warp-level
 * reduction must not reach these matches as it is: ptxas takes it for the
 * same in every lane and folds the match to true, wrong where the lowest
 * lanes of two groups run here together (counter.c, tx_sums_opaque).
 */
static void emit_warp_aggregated_add(struct ptx_cg *cg, int is64, unsigned id, const char *sp,
				     const uint64_t *value, int addr_same)
{
	const char *w = is64 ? "64" : "32", *v = is64 ? "%t7" : "%w7";
	/* the immediate of the product: a 64-bit add's value below 2^32, any 32-bit add's low half */
	int imm = value && (!is64 || *value <= UINT32_MAX);
	uint32_t c = value ? (uint32_t)*value : 0;

	ptx_buf_puts(cg->b, "{\n.reg .b32 %ag<5>;\n.reg .pred %agp<2>;\nactivemask.b32 %ag0;\n");
	/* a pointer every lane holds alike (struct ptx_uni_ptr) needs no match */
	if (!addr_same)
		ptx_buf_printf(cg->b, "match.all.sync.b64 %%ag1|%%agp0, %%t5, %%ag0;\n@!%%agp0 bra $Lgs%u_%zu;\n", id,
			       cg->prog_idx);
	/* a value the program set to a constant (a counter's 1) is the same in every lane */
	if (!value)
		ptx_buf_printf(cg->b, "match.all.sync.b%s %%ag2|%%agp0, %s, %%ag0;\n@!%%agp0 bra $Lgs%u_%zu;\n", w,
			       v, id, cg->prog_idx);
	ptx_buf_printf(cg->b,
		       "mov.u32 %%ag3, %%lanemask_lt;\nand.b32 %%ag3, %%ag3, %%ag0;\nsetp.ne.u32 %%agp1, %%ag3, 0;\n"
		       "@%%agp1 bra $Lgd%u_%zu;\n"
		       "popc.b32 %%ag4, %%ag0;\n",
		       id, cg->prog_idx);
	if (is64 && imm && c == 1)
		ptx_buf_printf(cg->b, "cvt.u64.u32 %%t8, %%ag4;\nred%s.add.u64 [%%t5], %%t8;\n", sp);
	else if (is64 && imm)
		ptx_buf_printf(cg->b, "mul.wide.u32 %%t8, %%ag4, %u;\nred%s.add.u64 [%%t5], %%t8;\n", c, sp);
	else if (is64)
		ptx_buf_printf(cg->b, "cvt.u64.u32 %%t8, %%ag4;\nmul.lo.u64 %%t8, %%t8, %%t7;\nred%s.add.u64 [%%t5], %%t8;\n",
			       sp);
	else if (imm && c == 1)
		ptx_buf_printf(cg->b, "red%s.add.u32 [%%t5], %%ag4;\n", sp);
	else if (imm)
		ptx_buf_printf(cg->b, "mul.lo.u32 %%w8, %%ag4, %u;\nred%s.add.u32 [%%t5], %%w8;\n", c, sp);
	else
		ptx_buf_printf(cg->b, "mul.lo.u32 %%w8, %%ag4, %%w7;\nred%s.add.u32 [%%t5], %%w8;\n", sp);
	ptx_buf_printf(cg->b, "bra.uni $Lgd%u_%zu;\n$Lgs%u_%zu:\nred%s.add.u%s [%%t5], %s;\n$Lgd%u_%zu:\n}\n",
		       id, cg->prog_idx, id, cg->prog_idx, sp, w, v, id, cg->prog_idx);
}

static int emit_atomic(struct ptx_cg *cg, size_t pc)
{
	const struct gbpf_insn *in = &cg->insns[pc];
	struct ptx_buf *b = cg->b;
	int sz = size_bytes(in->code), is64 = sz == 8, op = in->imm & ~GBPF_FETCH;
	const char *w = is64 ? "64" : "32";
	struct ptx_addr a;
	char as[64] = "";
	const char *sp;
	unsigned id;
	uint8_t prov;

	if (sz != 4 && sz != 8)
		return ptx_fail(cg, pc, -EINVAL, "atomic of %d bytes", sz);
	switch (in->imm) {
	case GBPF_ATOMIC_ADD: case GBPF_ATOMIC_ADD | GBPF_FETCH:
	case GBPF_ATOMIC_OR: case GBPF_ATOMIC_OR | GBPF_FETCH:
	case GBPF_ATOMIC_AND: case GBPF_ATOMIC_AND | GBPF_FETCH:
	case GBPF_ATOMIC_XOR: case GBPF_ATOMIC_XOR | GBPF_FETCH:
	case GBPF_ATOMIC_XCHG: case GBPF_ATOMIC_CMPXCHG:
		break;
	default:
		return ptx_fail(cg, pc, -EINVAL, "unknown atomic operation 0x%x", in->imm);
	}
	if (in->off % sz)
		return ptx_fail(cg, pc, -EINVAL, "misaligned atomic at offset %d", in->off);
	make_addr(cg, &a, in->dst, in->off, sz);
	if (a.local) {
		addr_str(as, sizeof(as), &a, 0);
		emit_atomic_emulated(cg, in, ".local", as, is64);
		emit_atomic_result(cg, in, is64);
		return 0;
	}
	id = cg->uniq++;
	/* Through a map value (an inlined lookup's result, ptx_track.c): global
	 * memory (device memory, or host memory registered for the device, both
	 * in the global window), so no .local path and .global addressing; a
	 * per-GPU-thread slot is the lane's own, so no warp aggregation. */
	prov = in->dst < 10 ? cg->ptr[in->dst] : PTX_PTR_UNKNOWN;
	if (ptx_tls_access(cg, in->dst, in->off, sz, as, sizeof(as)) || prov == PTX_PTR_THREAD_LOCAL ||
	    (in->dst < 10 && cg->tls_known[in->dst])) {
		/* the thread's own value: a plain read-modify-write is the atomic (local memory has none) */
		if (as[0] != '[') {
			ptx_buf_printf(b, "add.u64 %%t5, %%r%u, %d;\n", in->dst, in->off);
			snprintf(as, sizeof(as), "[%%t5]");
		}
		emit_atomic_emulated(cg, in, "", as, is64);
		emit_atomic_result(cg, in, is64);
		return 0;
	}
	if (prov == PTX_PTR_CTX)
		prov = PTX_PTR_UNKNOWN; /* local memory, not a map's */
	sp = prov != PTX_PTR_UNKNOWN ? ".global" : "";
	ptx_buf_printf(b, "add.u64 %%t5, %%r%u, %d;\n", in->dst, in->off);
	if (prov == PTX_PTR_UNKNOWN)
		ptx_buf_printf(b, "isspacep.local %%p5, %%t5;\n@%%p5 bra $La%u_%zu;\n", id, cg->prog_idx);
	else
		ptx_buf_puts(b, "cvta.to.global.u64 %t5, %t5;\n");
	if (is64)
		ptx_buf_printf(b, "mov.b64 %%t7, %%r%u;\n", in->src);
	else
		ptx_buf_printf(b, "cvt.u32.u64 %%w7, %%r%u;\n", in->src);
	if (in->imm == GBPF_ATOMIC_XCHG) {
		ptx_buf_printf(b, "atom%s.exch.b%s %s, [%%t5], %s;\n", sp, w, is64 ? "%t6" : "%w6",
			       is64 ? "%t7" : "%w7");
	} else if (in->imm == GBPF_ATOMIC_CMPXCHG) {
		if (!is64)
			ptx_buf_puts(b, "cvt.u32.u64 %w9, %r0;\n");
		ptx_buf_printf(b, "atom%s.cas.b%s %s, [%%t5], %s, %s;\n", sp, w, is64 ? "%t6" : "%w6",
			       is64 ? "%r0" : "%w9", is64 ? "%t7" : "%w7");
	} else {
		const char *o = op == GBPF_ATOMIC_ADD ? "add.u" : op == GBPF_ATOMIC_OR ? "or.b"
				: op == GBPF_ATOMIC_AND ? "and.b" : "xor.b";

		if (in->imm & GBPF_FETCH)
			ptx_buf_printf(b, "atom%s.%s%s %s, [%%t5], %s;\n", sp, o, w, is64 ? "%t6" : "%w6",
				       is64 ? "%t7" : "%w7");
		else if (op == GBPF_ATOMIC_ADD && prov != PTX_PTR_THREAD_SLOT)
			emit_warp_aggregated_add(cg, is64, id, sp,
						 in->src < 10 && cg->imm_known[in->src] ? &cg->imm_val[in->src] : NULL,
						 prov == PTX_PTR_MAP && cg->uni[in->dst].valid);
		else
			ptx_buf_printf(b, "red%s.%s%s [%%t5], %s;\n", sp, o, w, is64 ? "%t7" : "%w7");
	}
	if (prov == PTX_PTR_UNKNOWN) {
		ptx_buf_printf(b, "bra.uni $Lb%u_%zu;\n$La%u_%zu:\n", id, cg->prog_idx, id, cg->prog_idx);
		emit_atomic_emulated(cg, in, "", "[%t5]", is64);
		ptx_buf_printf(b, "$Lb%u_%zu:\n", id, cg->prog_idx);
	}
	emit_atomic_result(cg, in, is64);
	return 0;
}

int ptx_emit_mem(struct ptx_cg *cg, size_t pc)
{
	const struct gbpf_insn *in = &cg->insns[pc];
	uint8_t cls = GBPF_CLASS(in->code), mode = GBPF_MODE(in->code);

	if (cls == GBPF_LDX) {
		if (mode != GBPF_MEM && mode != GBPF_MEMSX)
			return ptx_fail(cg, pc, -EINVAL, "bad load mode 0x%02x", in->code);
		return emit_load(cg, pc);
	}
	if (cls == GBPF_STX && mode == GBPF_ATOMIC)
		return emit_atomic(cg, pc);
	if (cls == GBPF_ST || cls == GBPF_STX)
		return emit_store(cg, pc);
	return ptx_fail(cg, pc, -EINVAL, "unknown opcode 0x%02x", in->code);
}

int ptx_emit_lddw(struct ptx_cg *cg, size_t pc)
{
	const struct gbpf_insn *in = &cg->insns[pc], *hi = &cg->insns[pc + 1];
	uint64_t v = (uint64_t)(uint32_t)in->imm | ((uint64_t)(uint32_t)hi->imm << 32);
	long f;

	if (hi->code || hi->dst || hi->src || hi->off)
		return ptx_fail(cg, pc, -EINVAL, "second slot of wide load has non-zero fields");
	switch (in->src) {
	case 0:
		ptx_buf_printf(cg->b, "mov.b64 %%r%u, 0x%016llX;\n", in->dst, (unsigned long long)v);
		return 0;
	case GBPF_PSEUDO_MAP_IDX:
	case GBPF_PSEUDO_MAP_IDX_VALUE:
		if (in->imm < 0 || (size_t)in->imm >= cg->prog->map_cnt || !cg->prog->maps)
			return ptx_fail(cg, pc, -EINVAL, "map index %d out of range (%zu maps)", in->imm,
					cg->prog->map_cnt);
		ptx_buf_printf(cg->b, "ld.global.u64 %%r%u, [__gbpf_maps+%d];\n", in->dst, in->imm * 8);
		if (in->src == GBPF_PSEUDO_MAP_IDX_VALUE) {
			const struct gbpf_map_desc *m = &cg->prog->maps[in->imm];
			uint64_t base = ptx_map_value_base(m);

			if (!base)
				return ptx_fail(cg, pc, -EINVAL, "map %s has no direct value access",
						m->name ? m->name : "?");
			ptx_buf_printf(cg->b, "add.u64 %%r%u, %%r%u, %llu;\n", in->dst, in->dst,
				       (unsigned long long)(base + (uint32_t)hi->imm));
		}
		return 0;
	case GBPF_PSEUDO_FUNC:
		f = ptx_func_at(cg, (size_t)((long long)pc + 1 + in->imm));
		if (f < 0)
			return ptx_fail(cg, pc, -EINVAL, "function address does not reach a function");
		ptx_buf_printf(cg->b, "mov.b64 %%r%u, 0x%016llX;\n", in->dst,
			       (unsigned long long)(PTX_FUNC_TAG | (uint64_t)f));
		return 0;
	default:
		return ptx_fail(cg, pc, -ENOTSUP, "wide load with source tag %u is not supported on the GPU",
				in->src);
	}
}
