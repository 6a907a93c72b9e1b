// SPDX-License-Identifier: MIT
/*
 * plugins/cuda/ptx_track.c - what the PTX emitter knows of each register
 * between instructions (struct ptx_cg's pointer, frame offset, constant,
 * alignment, value bound and warp-uniform facts): updated after every
 * instruction, handed by every forward jump to its target, met at labels.
 * The emitters of later instructions read the facts (ptx_codegen.c,
 * ptx_mem.c, ptx_maps.c); ptx_codegen.c's emit_body drives the pass.
 */
#include <string.h>

#include <gbpf/helper_ids.h>

#include "ptx_internal.h"

static uint8_t tz3(uint64_t v)
{
	uint8_t n = 0;

	while (n < 3 && !(v & 1)) {
		v >>= 1;
		n++;
	}
	return n;
}

static uint8_t min8(uint8_t a, uint8_t b)
{
	return a < b ? a : b;
}

/*
 * Constants in registers after @p in: a move of an immediate (64-bit: sign
 * extended; 32-bit: zero extended), a 64-bit move of a register holding
 * one, a wide load of a plain 64-bit immediate. Every other write of a
 * register forgets it; a call forgets r0..r5.
 */
static void imm_track_update(struct ptx_cg *cg, const struct gbpf_insn *in)
{
	uint8_t cls = GBPF_CLASS(in->code), op = GBPF_OP(in->code);
	unsigned d = in->dst;

	if (in->code == GBPF_OP_CALL || in->code == GBPF_OP_CALLX) {
		memset(cg->imm_known, 0, 6);
		return;
	}
	if (cls == GBPF_STX && GBPF_MODE(in->code) == GBPF_ATOMIC) {
		unsigned w = in->imm == GBPF_ATOMIC_CMPXCHG ? 0 : (in->imm & GBPF_FETCH) ? in->src : 10;

		if (w < 10)
			cg->imm_known[w] = 0;
		return;
	}
	if (d >= 10 || (cls != GBPF_ALU && cls != GBPF_ALU64 && cls != GBPF_LDX && cls != GBPF_LD))
		return;
	cg->imm_known[d] = 0;
	if (cls == GBPF_LD && gbpf_insn_is_wide(in) && in->src == 0) {
		cg->imm_known[d] = 1;
		cg->imm_val[d] = (uint64_t)(uint32_t)in->imm | (uint64_t)(uint32_t)in[1].imm << 32;
	} else if ((cls == GBPF_ALU64 || cls == GBPF_ALU) && op == GBPF_MOV && !in->off) {
		if (GBPF_SRC(in->code) == GBPF_K) {
			cg->imm_known[d] = 1;
			cg->imm_val[d] = cls == GBPF_ALU64 ? (uint64_t)(int64_t)in->imm : (uint64_t)(uint32_t)in->imm;
		} else if (in->src < 10 && cg->imm_known[in->src]) {
			cg->imm_known[d] = 1;
			cg->imm_val[d] = cls == GBPF_ALU64 ? cg->imm_val[in->src] : (uint32_t)cg->imm_val[in->src];
		}
	}
}

int ptx_call_keeps_frame(const struct gbpf_insn *in)
{
	return in->code == GBPF_OP_CALL && in->src == GBPF_CALL_HELPER &&
	       (in->imm == GBPF_HELPER_MAP_LOOKUP_ELEM || in->imm == GBPF_HELPER_MAP_UPDATE_ELEM ||
		in->imm == GBPF_HELPER_MAP_DELETE_ELEM);
}

/*
 * Warp-uniform map value pointers (struct ptx_uni_ptr) and the frame's
 * generation after @p in: r0 of a call is the lookup's (call_r0_uni) or
 * nothing; 64-bit moves copy; every other register write forgets; a store
 * or atomic not through a map value, and a call that may write memory,
 * start a new generation (a key in the frame may have changed).
 */
static void uni_track_update(struct ptx_cg *cg, const struct gbpf_insn *in)
{
	uint8_t cls = GBPF_CLASS(in->code), op = GBPF_OP(in->code);
	unsigned d = in->dst;

	if (in->code == GBPF_OP_CALL || in->code == GBPF_OP_CALLX) {
		memset(cg->uni, 0, 6 * sizeof(cg->uni[0]));
		if (in->code == GBPF_OP_CALL && in->src == GBPF_CALL_HELPER)
			cg->uni[0] = cg->call_r0_uni;
		memset(&cg->call_r0_uni, 0, sizeof(cg->call_r0_uni));
		if (!ptx_call_keeps_frame(in))
			cg->stk_gen++;
		return;
	}
	if (cls == GBPF_ST || cls == GBPF_STX) {
		unsigned w = 10;

		if (d >= 10 || (cg->ptr[d] != PTX_PTR_MAP && cg->ptr[d] != PTX_PTR_THREAD_SLOT &&
				cg->ptr[d] != PTX_PTR_THREAD_LOCAL))
			cg->stk_gen++;
		if (cls == GBPF_STX && GBPF_MODE(in->code) == GBPF_ATOMIC)
			w = in->imm == GBPF_ATOMIC_CMPXCHG ? 0 : (in->imm & GBPF_FETCH) ? in->src : 10;
		if (w < 10)
			memset(&cg->uni[w], 0, sizeof(cg->uni[w]));
		return;
	}
	if (d >= 10 || (cls != GBPF_ALU && cls != GBPF_ALU64 && cls != GBPF_LDX && cls != GBPF_LD))
		return;
	if (cls == GBPF_ALU64 && op == GBPF_MOV && GBPF_SRC(in->code) == GBPF_X && !in->off && in->src < 10)
		cg->uni[d] = cg->uni[in->src];
	else
		memset(&cg->uni[d], 0, sizeof(cg->uni[d]));
}

/*
 * Track what registers hold after the instruction at pc, for the emitters
 * of later instructions:
 * - ptr: r0 of an inlined map lookup (set by its emitter through
 *   call_r0_ptr), kept through 64-bit moves and constant offsets (the
 *   verifier keeps a map value pointer inside its value, and a constant
 *   added by every lane keeps per-thread slots apart);
 * - stk_known/stk_off: r10 plus a constant (set by a 64-bit move of r10,
 *   kept by the same moves and constant offsets, the offset adjusted).
 * Anything else written to a register forgets both: loads (a pointer
 * reloaded from a stack spill included), ALU results, atomics' fetched
 * values; every call clobbers r0..r5 (the callee-saved r6..r9 are the
 * caller's own PTX registers across a .func call). At a join the facts
 * of every way in are met (ptx_track_enter_label). r10 itself is the frame
 * pointer of every function.
 */
static void reg_track_update(struct ptx_cg *cg, const struct gbpf_insn *in)
{
	uint8_t *p = cg->ptr, cls = GBPF_CLASS(in->code), op = GBPF_OP(in->code);
	unsigned d = in->dst;

	ptx_range_update(cg->range, in);
	imm_track_update(cg, in);
	/* before the pointer facts change: a store's target is judged by them */
	uni_track_update(cg, in);

	if (in->code == GBPF_OP_CALL || in->code == GBPF_OP_CALLX) {
		memset(p, PTX_PTR_UNKNOWN, 6);
		memset(cg->stk_known, 0, 6);
		memset(cg->tls_known, 0, 6);
		if (in->code == GBPF_OP_CALL && in->src == GBPF_CALL_HELPER) {
			p[0] = cg->call_r0_ptr;
			cg->stk_known[0] = cg->call_r0_stk;
			cg->stk_off[0] = cg->call_r0_stk_off;
			cg->tls_known[0] = cg->call_r0_tls;
			cg->tls_off[0] = cg->call_r0_tls_off;
		}
		cg->call_r0_ptr = PTX_PTR_UNKNOWN;
		cg->call_r0_stk = 0;
		cg->call_r0_tls = 0;
		return;
	}
	if (cls == GBPF_STX && GBPF_MODE(in->code) == GBPF_ATOMIC) {
		unsigned w = in->imm == GBPF_ATOMIC_CMPXCHG ? 0 : (in->imm & GBPF_FETCH) ? in->src : 10;

		if (w < 10) {
			p[w] = PTX_PTR_UNKNOWN;
			cg->stk_known[w] = 0;
			cg->tls_known[w] = 0;
		}
		return;
	}
	if (d >= 10 || (cls != GBPF_ALU && cls != GBPF_ALU64 && cls != GBPF_LDX && cls != GBPF_LD))
		return;
	if (cls == GBPF_ALU64 && op == GBPF_MOV && GBPF_SRC(in->code) == GBPF_X && !in->off && in->src <= 10) {
		p[d] = in->src < 10 ? p[in->src] : PTX_PTR_UNKNOWN;
		cg->stk_known[d] = in->src == 10 || cg->stk_known[in->src];
		cg->stk_off[d] = in->src == 10 ? 0 : cg->stk_off[in->src];
		cg->tls_known[d] = in->src < 10 && cg->tls_known[in->src];
		cg->tls_off[d] = in->src < 10 ? cg->tls_off[in->src] : 0;
		return;
	}
	if (cls == GBPF_ALU64 && (op == GBPF_ADD || op == GBPF_SUB) && GBPF_SRC(in->code) == GBPF_K) {
		cg->stk_off[d] += op == GBPF_ADD ? (long long)in->imm : -(long long)in->imm;
		cg->tls_off[d] += op == GBPF_ADD ? (long long)in->imm : -(long long)in->imm;
		if (p[d] == PTX_PTR_CTX && in->imm)
			p[d] = PTX_PTR_UNKNOWN; /* inside the context, no longer its start */
		return;
	}
	p[d] = PTX_PTR_UNKNOWN;
	cg->stk_known[d] = 0;
	cg->tls_known[d] = 0;
}

/* Track known alignment of registers after the instruction at pc. */
static void align_update(struct ptx_cg *cg, const struct gbpf_insn *in)
{
	uint8_t *al = cg->align, cls = GBPF_CLASS(in->code), op = GBPF_OP(in->code);
	int x = GBPF_SRC(in->code) == GBPF_X;
	uint8_t s = x ? al[in->src] : tz3((uint64_t)(int64_t)in->imm);
	unsigned d = in->dst;

	if (cls == GBPF_ALU64 && d < 10) {
		switch (op) {
		case GBPF_MOV: al[d] = in->off ? 0 : s; return;
		case GBPF_ADD: case GBPF_SUB: al[d] = min8(al[d], s); return;
		case GBPF_MUL: al[d] = min8(3, al[d] + s); return;
		case GBPF_AND: al[d] = al[d] > s ? al[d] : s; return;
		case GBPF_LSH:
			al[d] = x ? 0 : min8(3, al[d] + min8(3, (uint8_t)((uint32_t)in->imm & 63)));
			return;
		default: al[d] = 0; return;
		}
	}
	if ((cls == GBPF_ALU || cls == GBPF_LDX) && d < 10) {
		al[d] = 0;
		return;
	}
	if (cls == GBPF_LD && gbpf_insn_is_wide(in) && d < 10) {
		al[d] = in->src == GBPF_PSEUDO_MAP_IDX ? 3 : in->src == 0 ? tz3((uint32_t)in->imm) : 0;
		return;
	}
	if (cls == GBPF_STX && GBPF_MODE(in->code) == GBPF_ATOMIC) {
		if (in->imm == GBPF_ATOMIC_CMPXCHG)
			al[0] = 0;
		else if (in->imm & GBPF_FETCH)
			al[in->src] = 0;
		return;
	}
	if (in->code == GBPF_OP_CALL || in->code == GBPF_OP_CALLX) {
		memset(al, 0, 6);
		if (in->code == GBPF_OP_CALL)
			al[0] = cg->call_r0_align;
		cg->call_r0_align = 0;
		return;
	}
}

/* Both name the same lookup's pointer (struct ptx_uni_ptr). */
static int uni_same(const struct ptx_uni_ptr *a, const struct ptx_uni_ptr *b)
{
	return a->valid && b->valid && a->map == b->map && a->key_off == b->key_off && a->gen == b->gen;
}

/* Nothing known of any register's pointer, stack offset, constant or uniform value (alignment aside). */
static void track_forget(struct ptx_cg *cg)
{
	memset(cg->ptr, PTX_PTR_UNKNOWN, sizeof(cg->ptr));
	memset(cg->stk_known, 0, sizeof(cg->stk_known));
	memset(cg->tls_known, 0, sizeof(cg->tls_known));
	memset(cg->imm_known, 0, sizeof(cg->imm_known));
	ptx_range_forget(cg->range, GBPF_REG_COUNT);
	memset(cg->uni, 0, sizeof(cg->uni));
}

/* A function's start: no register facts, no pending call result. */
void ptx_track_function_start(struct ptx_cg *cg)
{
	memset(cg->align, 0, sizeof(cg->align));
	track_forget(cg);
	memset(&cg->call_r0_uni, 0, sizeof(cg->call_r0_uni));
	cg->call_r0_ptr = PTX_PTR_UNKNOWN;
	cg->call_r0_stk = 0;
	cg->call_r0_tls = 0;
}

/* The facts a join record keeps besides alignment, each an array of one entry a register. */
#define TRACK_FACTS(X) X(ptr) X(stk_known) X(stk_off) X(tls_known) X(tls_off) X(imm_known) X(imm_val) X(range) X(uni)
#define TRACK_COPY(field) memcpy(to->field, from->field, sizeof(to->field));

static void track_save(struct ptx_track *to, const struct ptx_cg *from)
{
	memcpy(to->align, from->align, sizeof(to->align));
	TRACK_FACTS(TRACK_COPY)
}

/* r10's alignment is the frame's, the same on every path: kept. */
static void track_load(struct ptx_cg *to, const struct ptx_track *from)
{
	memcpy(to->align, from->align, 10);
	TRACK_FACTS(TRACK_COPY)
}

/* Meet the current register facts into @p t (its first predecessor: a copy). */
static void track_meet_into(const struct ptx_cg *cg, struct ptx_track *t)
{
	if (!t->set) {
		t->set = 1;
		track_save(t, cg);
		return;
	}
	ptx_range_meet(t->range, cg->range, GBPF_REG_COUNT);
	for (unsigned r = 0; r < GBPF_REG_COUNT; r++) {
		if (!uni_same(&t->uni[r], &cg->uni[r]))
			memset(&t->uni[r], 0, sizeof(t->uni[r]));
		t->align[r] = t->align[r] < cg->align[r] ? t->align[r] : cg->align[r];
		if (t->ptr[r] != cg->ptr[r])
			t->ptr[r] = PTX_PTR_UNKNOWN;
		t->stk_known[r] = t->stk_known[r] && cg->stk_known[r] && t->stk_off[r] == cg->stk_off[r];
		t->tls_known[r] = t->tls_known[r] && cg->tls_known[r] && t->tls_off[r] == cg->tls_off[r];
		t->imm_known[r] = t->imm_known[r] && cg->imm_known[r] && t->imm_val[r] == cg->imm_val[r];
	}
}

/* A jump's facts into its target's @p t: a conditional one's, as where it is taken. */
void ptx_track_jump_into(struct ptx_cg *cg, const struct gbpf_insn *in, struct ptx_track *t)
{
	struct ptx_range fall[GBPF_REG_COUNT];

	memcpy(fall, cg->range, sizeof(fall));
	ptx_range_branch(cg->range, in, 1, cg->imm_known, cg->imm_val);
	track_meet_into(cg, t);
	memcpy(cg->range, fall, sizeof(fall));
}

/*
 * The facts at label @p pc: those of every jump to it and of the fall-through
 * (@p falls: the previous instruction continues here), met; none when a
 * backward jump lands here (its facts are not known yet) or no program
 * state was recorded (no join table).
 */
void ptx_track_enter_label(struct ptx_cg *cg, size_t pc, int falls)
{
	struct ptx_track *t = cg->join ? &cg->join[cg->join_at[pc] - 1] : NULL;

	/* paths meet: a key in the frame may differ between them (struct ptx_uni_ptr) */
	cg->stk_gen++;

	if (t && !(cg->label[pc] & PTX_LABEL_BACK)) {
		if (falls)
			track_meet_into(cg, t);
		if (t->set) {
			track_load(cg, t);
			return;
		}
	}
	memset(cg->align, 0, 10);
	track_forget(cg);
}

/* The facts after @p in: every kind of them. */
void ptx_track_insn(struct ptx_cg *cg, const struct gbpf_insn *in)
{
	reg_track_update(cg, in);
	align_update(cg, in);
}
