/* SPDX-License-Identifier: MIT */
/*
 * Map helpers on the device. Each function reads the map's self-describing
 * header (maps/map_layout.h) at run time, so one function serves every map
 * of a module and the host never has to patch code per map.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <gbpf/helper_ids.h>
#include <gbpf/probe_ctx.h>

#include "maps/map_layout.h"
#include "ptx_internal.h"
#include "ptx_codegen.h"
#include "ptx_maps.h"

/* the generic array routine below rounds a per-slot plane with these constants (127, 0x...80) */
_Static_assert(GBPF_MAP_PLANE_ALIGN == 128u, "device per-slot planes match the layout");

uint64_t ptx_map_value_base(const struct gbpf_map_desc *desc)
{
	if (desc->type == GBPF_MAP_TYPE_ARRAY || desc->type == GBPF_MAP_TYPE_GPU_ARRAY)
		return GBPF_MAP_HDR_SIZE;
	return 0;
}

/*
 * Element address of an array-like map into %a9 (0 when the index is out
 * of range or the type is not an array); map in %a0, key in %a1.
 * PERCPU_ARRAY uses the SM's slot (min(smid, nr_slots - 1), as emit_sm_slot),
 * PERGPUTHREAD_ARRAY the thread's.
 */
static const char array_elem_ptx[] =
	".func (.param .b64 r) __gbpf_m_array_elem(.param .b64 m, .param .b64 k)\n{\n"
	".reg .b64 %a<12>;\n.reg .b32 %b<12>;\n.reg .pred %q<6>;\n"
	"ld.param.b64 %a0, [m];\nld.param.b64 %a1, [k];\nmov.u64 %a9, 0;\n"
	"ld.u32 %b0, [%a0+8];\nld.u32 %b1, [%a0+24];\nld.u32 %b2, [%a0+28];\n"
	"ld.u32 %b3, [%a0+32];\nld.u64 %a3, [%a0+56];\nld.u32 %b4, [%a1];\n"
	"setp.ge.u32 %q0, %b4, %b1;\n@%q0 bra $Lout;\ncvt.u64.u32 %a4, %b4;\n"
	"setp.eq.u32 %q1, %b0, 6;\n@%q1 bra $Lpercpu;\nsetp.eq.u32 %q1, %b0, 1502;\n@%q1 bra $Lthread;\n"
	"setp.eq.u32 %q1, %b0, 2;\nsetp.eq.u32 %q2, %b0, 1503;\nor.pred %q1, %q1, %q2;\n@!%q1 bra $Lout;\n"
	"bra.uni $Lelem;\n"
	/* the slot's plane: max_entries values rounded up to GBPF_MAP_PLANE_ALIGN (128) bytes */
	"$Lpercpu:\nmov.u32 %b5, %smid;\nmax.u32 %b11, %b2, 1;\nsub.u32 %b11, %b11, 1;\nmin.u32 %b5, %b5, %b11;\n"
	"mul.wide.u32 %a7, %b1, %b3;\nadd.u64 %a7, %a7, 127;\nand.b64 %a7, %a7, 0xFFFFFFFFFFFFFF80;\n"
	"cvt.u64.u32 %a5, %b5;\nmul.lo.u64 %a5, %a5, %a7;\nmul.wide.u32 %a4, %b4, %b3;\nadd.u64 %a4, %a4, %a5;\n"
	"add.u64 %a9, %a0, %a3;\nadd.u64 %a9, %a9, %a4;\nbra.uni $Lout;\n"
	"$Lthread:\n"
	"mov.u32 %b6, %ntid.x;\nmov.u32 %b7, %ntid.y;\nmul.lo.u32 %b6, %b6, %b7;\nmov.u32 %b7, %ntid.z;\n"
	"mul.lo.u32 %b6, %b6, %b7;\n"
	"mov.u32 %b7, %nctaid.x;\nmov.u32 %b8, %ctaid.y;\nmov.u32 %b9, %nctaid.y;\nmov.u32 %b10, %ctaid.z;\n"
	"mul.wide.u32 %a6, %b9, %b10;\ncvt.u64.u32 %a7, %b8;\nadd.u64 %a6, %a6, %a7;\n"
	"cvt.u64.u32 %a7, %b7;\nmul.lo.u64 %a6, %a6, %a7;\nmov.u32 %b8, %ctaid.x;\ncvt.u64.u32 %a7, %b8;\n"
	"add.u64 %a6, %a6, %a7;\ncvt.u64.u32 %a7, %b6;\nmul.lo.u64 %a6, %a6, %a7;\n"
	"mov.u32 %b7, %ntid.x;\nmov.u32 %b8, %ntid.y;\nmov.u32 %b9, %tid.z;\nmul.lo.u32 %b9, %b9, %b8;\n"
	"mov.u32 %b10, %tid.y;\nadd.u32 %b9, %b9, %b10;\nmul.lo.u32 %b9, %b9, %b7;\nmov.u32 %b10, %tid.x;\n"
	"add.u32 %b9, %b9, %b10;\ncvt.u64.u32 %a7, %b9;\nadd.u64 %a6, %a6, %a7;\n"
	"cvt.u64.u32 %a8, %b2;\nsetp.ge.u64 %q3, %a6, %a8;\n@%q3 bra $Lout;\n"
	"mul.lo.u64 %a4, %a4, %a8;\nadd.u64 %a4, %a4, %a6;\n"
	"$Lelem:\ncvt.u64.u32 %a5, %b3;\nmul.lo.u64 %a4, %a4, %a5;\nadd.u64 %a9, %a0, %a3;\n"
	"add.u64 %a9, %a9, %a4;\n"
	"$Lout:\nst.param.b64 [r], %a9;\nret;\n}\n";

static const char lookup_ptx[] =
	".func (.param .b64 r) __gbpf_h_map_lookup(.param .b64 m, .param .b64 k)\n{\n"
	".reg .b64 %a<4>;\n.reg .b32 %b<2>;\n.reg .pred %q<2>;\n"
	"ld.param.b64 %a0, [m];\nld.param.b64 %a1, [k];\nld.u32 %b0, [%a0+40];\n"
	"setp.ne.u32 %q0, %b0, 0;\n@%q0 bra $Lhash;\n"
	"{\n.param .b64 x;\n.param .b64 y;\n.param .b64 z;\nst.param.b64 [x], %a0;\n"
	"st.param.b64 [y], %a1;\ncall (z), __gbpf_m_array_elem, (x, y);\nld.param.b64 %a2, [z];\n}\n"
	"st.param.b64 [r], %a2;\nret;\n"
	"$Lhash:\n{\n.param .b64 x;\n.param .b64 y;\n.param .b64 z;\nst.param.b64 [x], %a0;\n"
	"st.param.b64 [y], %a1;\ncall (z), __gbpf_m_hash_lookup, (x, y);\nld.param.b64 %a2, [z];\n}\n"
	"st.param.b64 [r], %a2;\nret;\n}\n";

static const char update_ptx[] =
	".func (.param .b64 r) __gbpf_h_map_update(.param .b64 m, .param .b64 k, .param .b64 v, .param .b64 f)\n{\n"
	".reg .b64 %a<6>;\n.reg .b32 %b<2>;\n.reg .pred %q<2>;\n"
	"ld.param.b64 %a0, [m];\nld.param.b64 %a1, [k];\nld.param.b64 %a2, [v];\nld.param.b64 %a3, [f];\n"
	"setp.gt.u64 %q0, %a3, 2;\n@%q0 bra $Linval;\n"
	"ld.u32 %b0, [%a0+40];\nsetp.ne.u32 %q0, %b0, 0;\n@%q0 bra $Lhash;\n"
	"{\n.param .b64 x;\n.param .b64 y;\n.param .b64 z;\nst.param.b64 [x], %a0;\n"
	"st.param.b64 [y], %a1;\ncall (z), __gbpf_m_array_elem, (x, y);\nld.param.b64 %a4, [z];\n}\n"
	/* As Linux: an index out of range is -E2BIG before NOEXIST's -EEXIST. */
	"setp.eq.u64 %q0, %a4, 0;\n@%q0 bra $Lbig;\n"
	"setp.eq.u64 %q0, %a3, 1;\n@%q0 bra $Lexist;\nld.u32 %b1, [%a0+20];\ncvt.u64.u32 %a5, %b1;\n"
	"{\n.param .b64 x;\n.param .b64 y;\n.param .b64 z;\nst.param.b64 [x], %a4;\n"
	"st.param.b64 [y], %a2;\nst.param.b64 [z], %a5;\ncall __gbpf_h_copy, (x, y, z);\n}\n"
	"st.param.b64 [r], 0;\nret;\n"
	"$Lhash:\n{\n.param .b64 x;\n.param .b64 y;\n.param .b64 z;\n.param .b64 w;\n.param .b64 o;\n"
	"st.param.b64 [x], %a0;\nst.param.b64 [y], %a1;\nst.param.b64 [z], %a2;\nst.param.b64 [w], %a3;\n"
	"call (o), __gbpf_m_hash_update, (x, y, z, w);\nld.param.b64 %a4, [o];\n}\n"
	"st.param.b64 [r], %a4;\nret;\n"
	"$Linval:\nst.param.b64 [r], -22;\nret;\n"
	"$Lexist:\nst.param.b64 [r], -17;\nret;\n"
	"$Lbig:\nst.param.b64 [r], -7;\nret;\n}\n";

static const char delete_ptx[] =
	".func (.param .b64 r) __gbpf_h_map_delete(.param .b64 m, .param .b64 k)\n{\n"
	".reg .b64 %a<4>;\n.reg .b32 %b<2>;\n.reg .pred %q<2>;\n"
	"ld.param.b64 %a0, [m];\nld.param.b64 %a1, [k];\nld.u32 %b0, [%a0+40];\n"
	"setp.eq.u32 %q0, %b0, 0;\n@%q0 bra $Linval;\n"
	"{\n.param .b64 x;\n.param .b64 y;\n.param .b64 z;\nst.param.b64 [x], %a0;\n"
	"st.param.b64 [y], %a1;\ncall (z), __gbpf_m_hash_delete, (x, y);\nld.param.b64 %a2, [z];\n}\n"
	"st.param.b64 [r], %a2;\nret;\n$Linval:\nst.param.b64 [r], -22;\nret;\n}\n";

void ptx_maps_emit(struct ptx_buf *b, const uint8_t *used)
{
	int m = used[GBPF_HELPER_MAP_LOOKUP_ELEM] || used[GBPF_HELPER_MAP_UPDATE_ELEM] ||
		used[GBPF_HELPER_MAP_DELETE_ELEM];

	if (m) {
		ptx_hash_emit(b);
		ptx_buf_puts(b, array_elem_ptx);
	}
	if (used[GBPF_HELPER_MAP_LOOKUP_ELEM])
		ptx_buf_puts(b, lookup_ptx);
	if (used[GBPF_HELPER_MAP_UPDATE_ELEM])
		ptx_buf_puts(b, update_ptx);
	if (used[GBPF_HELPER_MAP_DELETE_ELEM])
		ptx_buf_puts(b, delete_ptx);
	ptx_ring_emit(b, used);
}

/* ---- lookups specialised to a map known at code generation ----------------- */

/*
 * Backwards from @p pc through straight-line code: the first instruction that writes @p reg
 * (a wide load's second slot skipped). A label between, or a call or jump, ends the search
 * (NULL), as does an atomic that may write the register (a fetch or a compare-exchange).
 */
const struct gbpf_insn *ptx_straight_def(const struct ptx_cg *cg, size_t pc, unsigned reg)
{
	if (cg->label[pc])
		return NULL;
	for (size_t q = pc; q-- > 0;) {
		const struct gbpf_insn *in = &cg->insns[q];
		uint8_t cls = in->code & 0x07;

		if (q + 1 < pc && cg->label[q + 1])
			return NULL;
		if (q > 0 && cg->insns[q - 1].code == GBPF_OP_LDDW) {
			/* q is the second slot of a wide load: look at its first */
			continue;
		}
		if (cls == GBPF_JMP || cls == GBPF_JMP32)
			return NULL; /* calls clobber r1..r5; a jump leaves straight-line code backwards */
		if ((cls == GBPF_ALU || cls == GBPF_ALU64 || cls == GBPF_LD || cls == GBPF_LDX) && in->dst == reg)
			return in;
		if (cls == GBPF_STX && (in->code & 0xe0) == GBPF_ATOMIC &&
		    (in->imm == GBPF_ATOMIC_CMPXCHG || (in->imm & GBPF_FETCH)) &&
		    (in->src == reg || in->imm == GBPF_ATOMIC_CMPXCHG))
			return NULL;
	}
	return NULL;
}

const struct gbpf_map_desc *ptx_known_map_in(const struct ptx_cg *cg, size_t pc, unsigned reg)
{
	const struct gbpf_insn *in = ptx_straight_def(cg, pc, reg);

	if (!in || in->code != GBPF_OP_LDDW || in->src != GBPF_PSEUDO_MAP_IDX || in->imm < 0 ||
	    (size_t)in->imm >= cg->prog->map_cnt)
		return NULL;
	return &cg->prog->maps[in->imm];
}

/*
 * Where the key in r2 comes from, followed forwards through the
 * straight-line stretch that ends at the call: r2 = r10 + off, and the
 * last store to the stack at exactly that offset (an immediate, or a
 * register not written since). Probes build keys on the stack and pass
 * their address; with this the key is a register (or a constant ptxas
 * folds) instead of a load from local memory through a generic pointer.
 */
struct key_src {
	int off_known;   /* r2 == r10 + off */
	long long off;
	int kind;        /* KEY_* */
	uint32_t imm;    /* KEY_IMM: the key's low 32 bits */
	unsigned reg;    /* KEY_REG: the register whose low 32 bits are the key */
	/* every key byte was stored from a constant or a context field that is the
	 * same in every lane of the warp (ctx_field_uniform): lanes need no grouping */
	int uniform;
};

/*
 * 1 when bytes [off, off + size) of the probe context hold the same value
 * in every lane that runs the probe together: everything but a memory
 * access's address and value (struct gbpf_gpu_ctx at 24..40), which are
 * per lane; block, barrier, entry and exit contexts hold kernel, launch,
 * device and site constants only.
 */
static int ctx_field_uniform(const struct ptx_cg *cg, long long off, int size)
{
	const struct gbpf_prog_desc *p = cg->prog;

	if (cg->kernel || p->sz < offsetof(struct gbpf_prog_desc, attach) + sizeof(p->attach) ||
	    !gbpf_attach_is_device(p->attach.kind) || off < 0 || off + size > (long long)sizeof(struct gbpf_gpu_ctx))
		return 0;
	if (p->attach.kind != GBPF_ATTACH_GPU_MEM)
		return 1;
	return off + size <= (long long)offsetof(struct gbpf_gpu_ctx, mem_addr) ||
	       off >= (long long)offsetof(struct gbpf_gpu_ctx, mem_size);
}

enum { KEY_UNKNOWN, KEY_IMM, KEY_REG };

#define KEY_RECS 16

struct stk_rec {
	long long off;
	int size;
	int is_imm;
	int uniform;     /* the value stored is warp-uniform */
	uint64_t imm;
	unsigned reg;
	unsigned gen;
};

static int mem_bytes(uint8_t code)
{
	switch (GBPF_SIZE(code)) {
	case GBPF_B: return 1;
	case GBPF_H: return 2;
	case GBPF_W: return 4;
	default: return 8;
	}
}

/* Records overlapping [off, off+size) are forgotten (all of them when @all). */
static void recs_clobber(struct stk_rec *r, unsigned *n, long long off, int size, int all)
{
	for (unsigned i = 0; i < *n;) {
		if (all || (off < r[i].off + r[i].size && off + size > r[i].off))
			r[i] = r[--*n];
		else
			i++;
	}
}

/* 1 when every byte of the @p size-byte key at @p off (r10-relative) is covered by a uniform store. */
static int key_uniform(const struct stk_rec *rec, unsigned nrec, long long off, uint32_t size)
{
	if (!size)
		return 0;
	for (long long b = off; b < off + (long long)size; b++) {
		int covered = 0;

		for (unsigned i = 0; i < nrec && !covered; i++)
			covered = rec[i].uniform && rec[i].off <= b && b < rec[i].off + rec[i].size;
		if (!covered)
			return 0;
	}
	return 1;
}

static void trace_key(const struct ptx_cg *cg, size_t pc, uint32_t key_size, struct key_src *ks)
{
	struct stk_rec rec[KEY_RECS];
	unsigned nrec = 0, gen[GBPF_REG_COUNT] = {0};
	int sp[GBPF_REG_COUNT] = {0}; /* register holds r10 + spoff */
	long long spoff[GBPF_REG_COUNT] = {0};
	int isk[GBPF_REG_COUNT] = {0}; /* register holds the constant kv (a mov of an immediate) */
	uint64_t kv[GBPF_REG_COUNT] = {0};
	/* register holds the context pointer / a warp-uniform value (ctx_field_uniform) */
	int ctxp[GBPF_REG_COUNT] = {0}, uni[GBPF_REG_COUNT] = {0};
	size_t q = pc, start = cg->funcs[cg->cur].start;

	memset(ks, 0, sizeof(*ks));
	while (q > start && !cg->label[q])
		q--;
	sp[10] = 1;
	/* the probe's entry: r1 is the context */
	ctxp[1] = q == start && cg->cur == 0 && !cg->label[q];
	for (; q < pc; q++) {
		const struct gbpf_insn *in = &cg->insns[q];
		uint8_t cls = GBPF_CLASS(in->code), op = GBPF_OP(in->code);
		unsigned d = in->dst < GBPF_REG_COUNT ? in->dst : 0;
		int src_x = GBPF_SRC(in->code) == GBPF_X && in->src < 10;

		/* uniformity: constants, uniform context fields, ALU of uniform operands */
		if (d < 10 && (cls == GBPF_ALU || cls == GBPF_ALU64)) {
			int u = op == GBPF_MOV ? (!src_x ? !in->off : uni[in->src])
				: uni[d] && (GBPF_SRC(in->code) == GBPF_K || (src_x && uni[in->src]));

			ctxp[d] = cls == GBPF_ALU64 && op == GBPF_MOV && src_x && !in->off && ctxp[in->src];
			uni[d] = u;
		} else if (d < 10 && cls == GBPF_LDX) {
			uni[d] = GBPF_MODE(in->code) == GBPF_MEM && in->src < 10 && ctxp[in->src] &&
				 ctx_field_uniform(cg, in->off, mem_bytes(in->code));
			ctxp[d] = 0;
		} else if (d < 10 && cls == GBPF_LD) {
			uni[d] = 1; /* a wide constant or a map address */
			ctxp[d] = 0;
		}

		if (d < 10)
			isk[d] = 0; /* any write below ends a known constant, except a mov of one */
		if ((cls == GBPF_ALU64 || cls == GBPF_ALU) && d < 10 && op == GBPF_MOV &&
		    GBPF_SRC(in->code) == GBPF_K && !in->off) {
			isk[d] = 1;
			kv[d] = cls == GBPF_ALU64 ? (uint64_t)(int64_t)in->imm : (uint64_t)(uint32_t)in->imm;
			sp[d] = 0;
			gen[d]++;
			continue;
		}
		if (in->code == GBPF_OP_LDDW) {
			sp[d] = 0;
			gen[d]++;
			q++;
			continue;
		}
		if (cls == GBPF_ALU64 && d < 10 && op == GBPF_MOV && GBPF_SRC(in->code) == GBPF_X &&
		    !in->off && in->src < GBPF_REG_COUNT && sp[in->src]) {
			sp[d] = 1;
			spoff[d] = spoff[in->src];
			gen[d]++;
			continue;
		}
		if (cls == GBPF_ALU64 && d < 10 && (op == GBPF_ADD || op == GBPF_SUB) &&
		    GBPF_SRC(in->code) == GBPF_K && sp[d]) {
			spoff[d] += op == GBPF_ADD ? (long long)in->imm : -(long long)in->imm;
			gen[d]++;
			continue;
		}
		if (cls == GBPF_ALU || cls == GBPF_ALU64 || cls == GBPF_LDX || cls == GBPF_LD) {
			if (d < 10) {
				sp[d] = 0;
				gen[d]++;
			}
			continue;
		}
		if (cls == GBPF_ST || cls == GBPF_STX) {
			int size = mem_bytes(in->code), atomic = GBPF_MODE(in->code) == GBPF_ATOMIC;

			if (!sp[d]) {
				recs_clobber(rec, &nrec, 0, 0, 1); /* may point into the stack */
			} else {
				long long off = spoff[d] + in->off;

				recs_clobber(rec, &nrec, off, size, 0);
				if (!atomic && GBPF_MODE(in->code) == GBPF_MEM && nrec < KEY_RECS &&
				    (cls == GBPF_ST || in->src < 10)) {
					rec[nrec].off = off;
					rec[nrec].size = size;
					rec[nrec].is_imm = cls == GBPF_ST || isk[in->src];
					rec[nrec].uniform = cls == GBPF_ST || uni[in->src];
					rec[nrec].imm = cls == GBPF_ST ? (uint64_t)(int64_t)in->imm : kv[in->src];
					rec[nrec].reg = in->src;
					rec[nrec].gen = in->src < GBPF_REG_COUNT ? gen[in->src] : 0;
					nrec++;
				}
			}
			if (atomic && in->imm == GBPF_ATOMIC_CMPXCHG) {
				sp[0] = isk[0] = uni[0] = ctxp[0] = 0;
				gen[0]++;
			} else if (atomic && (in->imm & GBPF_FETCH) && in->src < 10) {
				sp[in->src] = isk[in->src] = uni[in->src] = ctxp[in->src] = 0;
				gen[in->src]++;
			}
			continue;
		}
		if ((cls == GBPF_JMP || cls == GBPF_JMP32) && op == GBPF_CALL) {
			/* a map lookup, update or delete reads its key and value, writes no frame */
			if (!ptx_call_keeps_frame(in))
				recs_clobber(rec, &nrec, 0, 0, 1);
			for (unsigned r = 0; r <= 5; r++) {
				sp[r] = isk[r] = uni[r] = ctxp[r] = 0;
				gen[r]++;
			}
		}
	}
	if (!sp[2])
		return;
	ks->off_known = 1;
	ks->off = spoff[2];
	ks->uniform = key_uniform(rec, nrec, ks->off, key_size);
	for (unsigned i = 0; i < nrec; i++) {
		if (rec[i].off != ks->off || (rec[i].size != 4 && rec[i].size != 8))
			continue;
		if (rec[i].is_imm) {
			ks->kind = KEY_IMM;
			ks->imm = (uint32_t)rec[i].imm;
		} else if (rec[i].gen == gen[rec[i].reg]) {
			ks->kind = KEY_REG;
			ks->reg = rec[i].reg;
		}
	}
}

/* The 32-bit key into %w10: from its register, as a constant, or loaded. */
static void emit_key_u32(struct ptx_cg *cg, const struct key_src *ks)
{
	long long fo = (long long)GBPF_STACK_SIZE + ks->off;

	if (ks->kind == KEY_IMM)
		ptx_buf_printf(cg->b, "mov.u32 %%w10, %u;\n", ks->imm);
	else if (ks->kind == KEY_REG)
		ptx_buf_printf(cg->b, "cvt.u32.u64 %%w10, %%r%u;\n", ks->reg);
	else if (ks->off_known && fo >= 0 && fo + 4 <= GBPF_STACK_SIZE && !(fo % 4))
		ptx_buf_printf(cg->b, "ld.local.u32 %%w10, [__gbpf_stack+%lld];\n", fo);
	else
		ptx_buf_puts(cg->b, "ld.u32 %w10, [%r2];\n");
}

/*
 * Linear id of the calling thread in the grid into %t12. A 1-D grid (the
 * common launch) needs one wide multiply; other grids take the general
 * 64-bit form. Uses %w12..%w15, %t13, %p7. In a scope of its own, marked
 * (PTX_GTID_SCOPE_MARK), that an injected copy of the probe takes from the
 * kernel instead: the same value at every site of a thread.
 */
static void emit_thread_linear(struct ptx_cg *cg, unsigned id)
{
	ptx_buf_printf(cg->b,
		       "{\n.reg .pred %%" PTX_GTID_SCOPE_MARK ";\n"
		       "mov.u32 %%w12, %%ntid.x;\nmov.u32 %%w13, %%ntid.y;\nmul.lo.u32 %%w12, %%w12, %%w13;\n"
		       "mov.u32 %%w13, %%ntid.z;\nmul.lo.u32 %%w12, %%w12, %%w13;\n"
		       "mov.u32 %%w13, %%tid.z;\nmov.u32 %%w14, %%ntid.y;\nmov.u32 %%w15, %%tid.y;\n"
		       "mad.lo.u32 %%w13, %%w13, %%w14, %%w15;\nmov.u32 %%w14, %%ntid.x;\nmov.u32 %%w15, %%tid.x;\n"
		       "mad.lo.u32 %%w13, %%w13, %%w14, %%w15;\n"
		       "mov.u32 %%w14, %%nctaid.y;\nmov.u32 %%w15, %%nctaid.z;\nor.b32 %%w14, %%w14, %%w15;\n"
		       "mov.u32 %%w15, %%ctaid.x;\nsetp.ne.u32 %%p7, %%w14, 1;\n@%%p7 bra $Lkg%u_%zu;\n"
		       "mul.wide.u32 %%t12, %%w15, %%w12;\nbra.uni $Lkt%u_%zu;\n"
		       "$Lkg%u_%zu:\n"
		       "mov.u32 %%w14, %%nctaid.y;\nmov.u32 %%w15, %%ctaid.z;\nmul.wide.u32 %%t12, %%w14, %%w15;\n"
		       "mov.u32 %%w14, %%ctaid.y;\ncvt.u64.u32 %%t13, %%w14;\nadd.u64 %%t12, %%t12, %%t13;\n"
		       "mov.u32 %%w14, %%nctaid.x;\ncvt.u64.u32 %%t13, %%w14;\nmul.lo.u64 %%t12, %%t12, %%t13;\n"
		       "mov.u32 %%w14, %%ctaid.x;\ncvt.u64.u32 %%t13, %%w14;\nadd.u64 %%t12, %%t12, %%t13;\n"
		       "cvt.u64.u32 %%t13, %%w12;\nmul.lo.u64 %%t12, %%t12, %%t13;\n"
		       "$Lkt%u_%zu:\ncvt.u64.u32 %%t13, %%w13;\nadd.u64 %%t12, %%t12, %%t13;\n}\n",
		       id, cg->prog_idx, id, cg->prog_idx, id, cg->prog_idx, id, cg->prog_idx);
}

/*
 * The caller's per-CPU slot, min(%smid, nr_slots - 1) (the map in %r1), into
 * %w<slot>, using %w<n> (which holds nr_slots already when @n_loaded: a
 * lookup that loaded it beside its first bucket, so that the load is not one
 * more round trip after the bucket's). %smid (the virtual SM id, dense from 0) is below
 * nr_slots, the SM count the host sized the map for, on every GPU, so the
 * clamp never moves a thread; it only keeps an index in bounds. It is branch
 * free: the subtraction loop it replaces cost a convergence barrier and four
 * more instructions at every lookup (SASS, sm_90), and ptxas if-converts a
 * rem.u32, even branched around, into ~25 instructions. The slow-path helper
 * (__gbpf_m_hval) clamps the same way, so both paths pick the same slot.
 */
static void emit_sm_slot(struct ptx_cg *cg, unsigned slot, unsigned n, bool n_loaded)
{
	if (!n_loaded)
		ptx_buf_printf(cg->b, "ld.u32 %%w%u, [%%r1+28];\n", n);
	ptx_buf_printf(cg->b, "mov.u32 %%w%u, %%smid;\nmax.u32 %%w%u, %%w%u, 1;\n"
			      "sub.u32 %%w%u, %%w%u, 1;\nmin.u32 %%w%u, %%w%u, %%w%u;\n",
		       slot, n, n, n, n, slot, slot, n);
}

/*
 * %r0 = %r1 + @base + slot * @plane + index * @stride: element %w<index>
 * of the calling SM's copy of a per-CPU map (the map in %r1) whose copies
 * are planes of @plane bytes (gbpf_map_plane_size) of elements @stride
 * bytes apart from byte @base of the map block;
 * the slot into %w<slot> (emit_sm_slot, with %w<n>, @n_loaded), temporaries %t<ta>,
 * %t<tb>. A copy below 4 GiB takes the element's offset in the first copy
 * (a constant where the index is one) and the SM's copy in one wide
 * multiply-add: two SASS instructions instead of eight for a 64-bit product.
 */
static void emit_sm_copy_elem(struct ptx_cg *cg, unsigned index, unsigned slot, unsigned n, bool n_loaded,
			      unsigned ta, unsigned tb, uint64_t plane, uint32_t stride, uint64_t base)
{
	emit_sm_slot(cg, slot, n, n_loaded);
	if (plane <= UINT32_MAX)
		ptx_buf_printf(cg->b, "mul.wide.u32 %%t%u, %%w%u, %u;\nadd.u64 %%r0, %%r1, %llu;\n"
				      "add.u64 %%r0, %%r0, %%t%u;\nmad.wide.u32 %%r0, %%w%u, %llu, %%r0;\n",
			       ta, index, stride, (unsigned long long)base, ta, slot, (unsigned long long)plane);
	else
		ptx_buf_printf(cg->b, "mul.wide.u32 %%t%u, %%w%u, %u;\ncvt.u64.u32 %%t%u, %%w%u;\n"
				      "mul.lo.u64 %%t%u, %%t%u, %llu;\nadd.u64 %%t%u, %%t%u, %%t%u;\n"
				      "add.u64 %%r0, %%r1, %llu;\nadd.u64 %%r0, %%r0, %%t%u;\n",
			       tb, index, stride, ta, slot, ta, ta, (unsigned long long)plane, ta, ta, tb,
			       (unsigned long long)base, ta);
}

/*
 * emit_sm_copy_elem where %w12 holds the map's copies from __gbpf_slots_const
 * (the map in %r1, the index in %w10): the host wrote 1 .. GBPF_PTX_CONST_SLOTS_MAX
 * there (gbpf_ptx_const_slots), so no copy count is checked against 0, and
 * where that many planes fit below 4 GB the element's whole offset is taken in
 * 32 bits: two multiply-adds and one 64-bit add, where the 64-bit form took
 * two wide products, a 64-bit add and the base moved out of uniform registers
 * (offline, sm_90: mem_stride_local's vector add 152 -> 136 instruction slots
 * for its two sites, with the bounds of ptx_range.h). Returns 0 (nothing
 * emitted) for larger planes.
 */
static int emit_sm_copy_elem_const(struct ptx_cg *cg, uint64_t plane, uint32_t stride)
{
	if (plane * GBPF_PTX_CONST_SLOTS_MAX + GBPF_MAP_HDR_SIZE > UINT32_MAX)
		return 0;
	ptx_buf_printf(cg->b, "mov.u32 %%w11, %%smid;\nadd.u32 %%w12, %%w12, -1;\nmin.u32 %%w11, %%w11, %%w12;\n"
			      "mad.lo.u32 %%w13, %%w10, %u, %u;\nmad.lo.u32 %%w13, %%w11, %u, %%w13;\n"
			      "cvt.u64.u32 %%t10, %%w13;\nadd.u64 %%r0, %%r1, %%t10;\n",
		       stride, GBPF_MAP_HDR_SIZE, (uint32_t)plane);
	return 1;
}

/*
 * Arrays, per-CPU (per-SM) and per-GPU-thread arrays: address arithmetic,
 * bounds checked, instead of the generic routine that reads the map header
 * (only nr_slots, which the host sets per device or launch, is read).
 */
static int emit_array_lookup(struct ptx_cg *cg, const struct gbpf_map_desc *d, const struct key_src *ks)
{
	struct ptx_buf *b = cg->b;
	uint32_t stride = (d->value_size + 7u) & ~7u;
	unsigned id = cg->uniq++;
	bool slots_const = cg->const_maps && d->type == GBPF_MAP_TYPE_PERCPU_ARRAY;

	if (cg->const_maps) {
		/* r1 holds this map already (from __gbpf_maps): the same address as a constant-bank operand */
		size_t m = (size_t)(d - cg->prog->maps);

		ptx_buf_printf(b, "ld.const.u64 %%r1, [__gbpf_maps_const+%zu];\n", m * 8);
		if (slots_const)
			ptx_buf_printf(b, "ld.const.u32 %%w12, [__gbpf_slots_const+%zu];\n", m * 4);
	}
	emit_key_u32(cg, ks);
	/* a key from a register the program has bounded below max_entries on every path needs no check */
	if (ks->kind != KEY_REG || cg->range[ks->reg].lo_max >= d->max_entries)
		ptx_buf_printf(b, "mov.u64 %%r0, 0;\nsetp.ge.u32 %%p6, %%w10, %u;\n@%%p6 bra $Lk%u_%zu;\n",
			       d->max_entries, id, cg->prog_idx);
	switch (d->type) {
	case GBPF_MAP_TYPE_PERCPU_ARRAY:
		/* slot-major: slot * plane + i * stride */
		if (!slots_const || !emit_sm_copy_elem_const(cg, gbpf_map_plane_size(d->max_entries, stride), stride))
			emit_sm_copy_elem(cg, 10, 11, 12, slots_const, 10, 11,
					  gbpf_map_plane_size(d->max_entries, stride), stride, GBPF_MAP_HDR_SIZE);
		break;
	case GBPF_MAP_TYPE_PERGPUTHREAD_ARRAY:
		/* index-major: i * nr_slots + linear thread id (bounds: thread < nr_slots) */
		ptx_buf_puts(b, "ld.u32 %w11, [%r1+28];\n");
		emit_thread_linear(cg, id);
		ptx_buf_printf(b, "cvt.u64.u32 %%t11, %%w11;\nsetp.ge.u64 %%p6, %%t12, %%t11;\n"
				  "@%%p6 bra $Lk%u_%zu;\nmul.wide.u32 %%t10, %%w10, %%w11;\n"
				  "add.u64 %%t10, %%t10, %%t12;\n",
			       id, cg->prog_idx);
		break;
	default:
		ptx_buf_puts(b, "cvt.u64.u32 %t10, %w10;\n");
		break;
	}
	if (d->type != GBPF_MAP_TYPE_PERCPU_ARRAY)
		ptx_buf_printf(b, "mul.lo.u64 %%t10, %%t10, %u;\nadd.u64 %%r0, %%r1, %u;\nadd.u64 %%r0, %%r0, %%t10;\n",
			       stride, GBPF_MAP_HDR_SIZE);
	/* in bounds: an element, never NULL (lookup_hit_target) */
	if (cg->lookup_hit[0])
		ptx_buf_printf(b, "%s\n", cg->lookup_hit);
	ptx_buf_printf(b, "$Lk%u_%zu:\n", id, cg->prog_idx);
	/* map blocks are allocated aligned, data_off is 128 and strides are multiples of 8 */
	cg->call_r0_align = 3;
	cg->call_r0_ptr = d->type == GBPF_MAP_TYPE_PERGPUTHREAD_ARRAY ? PTX_PTR_THREAD_SLOT : PTX_PTR_MAP;
	return 1;
}

/*
 * Hash maps whose key is whole 4-byte words on the stack at a known,
 * aligned offset: the key's hash (maps/map_layout.h) computed inline from
 * .local loads, then the lookup that takes the hash. The generic path
 * hashes byte by byte in a called function, at every lookup of every
 * thread.
 */
static int emit_hash_lookup(struct ptx_cg *cg, const struct gbpf_map_desc *d, const struct key_src *ks)
{
	struct ptx_buf *b = cg->b;
	long long fo = (long long)GBPF_STACK_SIZE + ks->off;
	uint32_t w;

	/* whole 4-byte words (the lookup compares keys 4 bytes at a time), 8-aligned when longer */
	if (!ks->off_known || !d->key_size || d->key_size % 4 || d->key_size > 64 || fo < 0 ||
	    fo % (d->key_size >= 8 ? 8 : 4) || fo + d->key_size > GBPF_STACK_SIZE)
		return 0;
	ptx_buf_printf(b, "mov.b64 %%t10, 0x%016llX;\n",
		       (unsigned long long)(GBPF_HASH_INIT ^ (uint64_t)d->key_size));
	for (w = 0; w < d->key_size; w += 8) {
		/* a 4-byte tail is the last word, zero-padded */
		if (d->key_size - w >= 8)
			ptx_buf_printf(b, "ld.local.u64 %%t11, [__gbpf_stack+%lld];\n", fo + w);
		else
			ptx_buf_printf(b, "ld.local.u32 %%w11, [__gbpf_stack+%lld];\ncvt.u64.u32 %%t11, %%w11;\n",
				       fo + w);
		ptx_buf_printf(b, "xor.b64 %%t10, %%t10, %%t11;\nmul.lo.u64 %%t10, %%t10, 0x%016llX;\n"
				  "shr.b64 %%t11, %%t10, 32;\nxor.b64 %%t10, %%t10, %%t11;\n",
			       (unsigned long long)GBPF_HASH_MUL1);
	}
	ptx_buf_printf(b, "shr.b64 %%t11, %%t10, 33;\nxor.b64 %%t10, %%t10, %%t11;\n"
			  "mul.lo.u64 %%t10, %%t10, 0x%016llX;\nshr.b64 %%t11, %%t10, 33;\n"
			  "xor.b64 %%t10, %%t10, %%t11;\n",
		       (unsigned long long)GBPF_HASH_MUL2);
	ptx_buf_puts(b, "{\n.param .b64 __hr;\n.param .b64 __h1;\n.param .b64 __h2;\n.param .b64 __h3;\n"
			PTX_STACK_ARG_DECL "st.param.b64 [__h1], %r1;\n");
	ptx_emit_call_arg(cg, 2, 2);
	ptx_buf_puts(b, "st.param.b64 [__h3], %t10;\ncall (__hr), __gbpf_m_hash_lookup_kh, (__h1, __h2, __h3);\n"
			"ld.param.b64 %r0, [__hr];\n}\n");
	cg->call_r0_ptr = PTX_PTR_MAP;
	return 1;
}

/*
 * Group the active lanes whose keys are equal (key words in %w10..%w13 /
 * %t13, %t14, hash in %t10): the group's lane mask into %w1, its leader
 * (lowest lane) into %w2, the lane's id into %w3. match.any costs about a
 * loop over the distinct values on sm_90 (see emit_warp_aggregated_add in
 * ptx_mem.c), so it runs only when some lane shares the hash of the lowest
 * active lane (one broadcast and a ballot): a warp with a key per lane
 * (32 different keys) pays the test only and every lane is its own group.
 * The branch around match.any depends on the ballot alone, so every
 * member of the mask executes it or none does.
 */
static void emit_key_group(struct ptx_cg *cg, unsigned words, unsigned id)
{
	struct ptx_buf *b = cg->b;

	ptx_buf_printf(b, "activemask.b32 %%w0;\nneg.s32 %%w2, %%w0;\nand.b32 %%w2, %%w2, %%w0;\nbfind.u32 %%w2, %%w2;\n"
			  "mov.b64 {%%w4, %%w5}, %%t10;\nshfl.sync.idx.b32 %%w4, %%w4, %%w2, 31, %%w0;\n"
			  "shfl.sync.idx.b32 %%w5, %%w5, %%w2, 31, %%w0;\nmov.b64 %%t0, {%%w4, %%w5};\n"
			  "setp.eq.u64 %%p1, %%t0, %%t10;\nvote.sync.ballot.b32 %%w4, %%p1, %%w0;\n"
			  "mov.u32 %%w1, %%lanemask_eq;\npopc.b32 %%w5, %%w4;\nsetp.lt.u32 %%p1, %%w5, 2;\n"
			  "@%%p1 bra $Lhk%u_%zu;\n",
		       id, cg->prog_idx);
	/* equal keys exactly: every word equal (the AND of the words' groups) */
	if (words == 1)
		ptx_buf_puts(b, "match.any.sync.b32 %w1, %w10, %w0;\n");
	else
		ptx_buf_puts(b, "match.any.sync.b64 %w1, %t13, %w0;\n");
	if (words > 2)
		ptx_buf_puts(b, "match.any.sync.b64 %w4, %t14, %w0;\nand.b32 %w1, %w1, %w4;\n");
	ptx_buf_printf(b, "$Lhk%u_%zu:\nneg.s32 %%w2, %%w1;\nand.b32 %%w2, %%w2, %%w1;\nbfind.u32 %%w2, %%w2;\n"
			  "mov.u32 %%w3, %%laneid;\n",
		       id, cg->prog_idx);
}

/*
 * The weak probe: one plain 16-byte load of each bucket's state, lock and
 * hash words (one L1 sector: buckets are 16-byte aligned, map_common.c's
 * layout_hash, in blocks allocated at least 64-byte aligned, so the
 * geometry alone says it; a geometry that is not, from an older layout,
 * takes the run below). A view of READY with the key's hash is the entry: a READY
 * bucket keeps its key for the whole kernel (cg->hash_stable, not LRU),
 * the state and hash come from one snapshot of the sector, and
 * gbpf_map_hash is a bijection of keys of up to 8 bytes (longer keys
 * also compare their words, which must equal the key's). The view may be
 * older than the map, but only towards EMPTY, BUSY or TOMBSTONE, which send
 * the leader to the ordered run, never to a wrong entry; READY with
 * another hash is another key for good, so the probe goes on to the next
 * bucket. The value's initial bytes were written before the bucket became
 * READY (release), so they reached L2 before any copy of the READY sector
 * could, and the caller's atomics on the value reach L2 after it.
 * Registers as emit_hash_lookup_fast's loop (%w4 mask, %w5 bucket size,
 * %t11 bucket 0, %w15 hash); a hit branches to $Lhf (value address), any
 * doubt to $Lhs (the ordered run).
 */
/* Bucket (h + i) & (nr_buckets - 1) of the probe run into %t12, its index into %w7 (map_layout.h). */
static const char bucket_at_ptx[] = "add.u32 %w7, %w15, %w6;\nand.b32 %w7, %w7, %w4;\n"
				    "mul.wide.u32 %t12, %w7, %w5;\nadd.u64 %t12, %t12, %t11;\n";

/*
 * Compare the key of the bucket at %t12 with the key's words (%w10 / %t13,
 * then %w12 / %t14); a difference branches to $L<miss><id>_<prog>.
 */
static void emit_bucket_key_cmp(struct ptx_cg *cg, uint32_t key_size, const char *miss, unsigned id)
{
	size_t pi = cg->prog_idx;
	unsigned k0 = GBPF_HASH_BUCKET_HDR, k1 = GBPF_HASH_BUCKET_HDR + 8; /* the key's two words */

	if (key_size == 4)
		ptx_buf_printf(cg->b, "ld.u32 %%w14, [%%t12+%u];\nsetp.ne.u32 %%p6, %%w14, %%w10;\n@%%p6 bra $L%s%u_%zu;\n",
			       k0, miss, id, pi);
	else
		ptx_buf_printf(cg->b, "ld.u64 %%t0, [%%t12+%u];\nsetp.ne.u64 %%p6, %%t0, %%t13;\n@%%p6 bra $L%s%u_%zu;\n",
			       k0, miss, id, pi);
	if (key_size == 12)
		ptx_buf_printf(cg->b, "ld.u32 %%w14, [%%t12+%u];\nsetp.ne.u32 %%p6, %%w14, %%w12;\n@%%p6 bra $L%s%u_%zu;\n",
			       k1, miss, id, pi);
	else if (key_size == 16)
		ptx_buf_printf(cg->b, "ld.u64 %%t0, [%%t12+%u];\nsetp.ne.u64 %%p6, %%t0, %%t14;\n@%%p6 bra $L%s%u_%zu;\n",
			       k1, miss, id, pi);
}

/*
 * The entry's value address into %r0 from its bucket's index (%w7), then to
 * $Lhd<id>, as __gbpf_m_hval: aux_off + bucket * value_stride, and for
 * PERCPU_HASH in the SM's plane (the group is one warp: one SM), plus slot *
 * plane_size (map_layout.h: values in planes apart from the buckets), with
 * the nr_slots emit_hash_lookup_fast loaded into %w8.
 */
static void emit_found_value(struct ptx_cg *cg, const struct gbpf_map_desc *d,
			     const struct gbpf_hash_geometry *geo, unsigned id)
{
	struct ptx_buf *b = cg->b;
	uint32_t vstride = (d->value_size + 7u) & ~7u;

	if (d->type == GBPF_MAP_TYPE_PERCPU_HASH)
		emit_sm_copy_elem(cg, 7, 14, 8, true, 11, 12, geo->plane_size, vstride, geo->aux_off);
	else
		ptx_buf_printf(b, "mul.wide.u32 %%t11, %%w7, %u;\nadd.u64 %%r0, %%r1, %llu;\nadd.u64 %%r0, %%r0, %%t11;\n",
			       vstride, (unsigned long long)geo->aux_off);
	if (cg->lookup_hit[0])
		ptx_buf_printf(b, "%s\n", cg->lookup_hit);
	else
		ptx_buf_printf(b, "bra.uni $Lhd%u_%zu;\n", id, cg->prog_idx);
}

/*
 * One bucket of the weak probe (%t12): the entry falls through; anything else
 * branches to $L<sort>, where emit_weak_sort sends a doubt to $Lhs and
 * another key to $L<other>.
 */
static void emit_weak_bucket(struct ptx_cg *cg, const struct gbpf_map_desc *d,
			     const struct gbpf_hash_geometry *geo, const char *sort, unsigned id)
{
	struct ptx_buf *b = cg->b;
	size_t pi = cg->prog_idx;

	/* map blocks are allocated 256-byte aligned: buckets of this geometry are 16-aligned or never */
	if (geo->data_off % 16 || geo->bucket_size % 16)
		ptx_buf_printf(b, "bra.uni $Lhs%u_%zu;\n", id, pi);
	ptx_buf_puts(b, "ld.v2.u64 {%t1, %t2}, [%t12];\n");
	/*
	 * Keys of up to 8 bytes: equal hashes are equal keys; longer ones compare every word. Those
	 * words are loaded here, beside the state and hash and not after their checks (they are in
	 * the bucket: no fault either way), so a hit waits for one round trip to L1 rather than a
	 * chain of three (mem_count's key of 16 bytes, at every memory site: one more 16-byte load,
	 * the key starting 16 bytes into the bucket). They are emit_bucket_key_cmp's words, in
	 * registers that live past the checks (%t3, then %w13 or %t4); the ordered run below keeps
	 * that function, whose loads must follow its acquire.
	 */
	_Static_assert(GBPF_HASH_BUCKET_HDR == 16, "the key's first 16 bytes are one 16-byte aligned load");
	if (d->key_size == 12)
		ptx_buf_puts(b, "ld.u64 %t3, [%t12+16];\nld.u32 %w13, [%t12+24];\n");
	else if (d->key_size == 16)
		ptx_buf_puts(b, "ld.v2.u64 {%t3, %t4}, [%t12+16];\n");
	/*
	 * Every test before one branch (%p6: a doubt, %p3: another key, %p4: the key's other words
	 * differ): with a branch after each test, ptxas moved the key words' load below the first
	 * branch, the one place they were used, and a hit waited for two round trips again (the
	 * SASS of mem_count's flush, session 25).
	 */
	ptx_buf_printf(b, "cvt.u32.u64 %%w14, %%t1;\nand.b32 %%w14, %%w14, 3;\n"
			  "setp.ne.u32 %%p6, %%w14, %u;\nsetp.ne.u64 %%p3, %%t2, %%t10;\nor.pred %%p5, %%p6, %%p3;\n",
		       GBPF_BUCKET_READY);
	if (d->key_size > 8)
		ptx_buf_printf(b, "setp.ne.u64 %%p4, %%t3, %%t13;\nor.pred %%p5, %%p5, %%p4;\n%s\n"
				  "or.pred %%p5, %%p5, %%p4;\n",
			       d->key_size == 12 ? "setp.ne.u32 %p4, %w13, %w12;" : "setp.ne.u64 %p4, %t4, %t14;");
	ptx_buf_printf(b, "@%%p5 bra $L%s%u_%zu;\n", sort, id, pi);
}

/* The weak bucket's way out (emit_weak_bucket's $L<sort>): a doubt to $Lhs, another key to $L<other>. */
static void emit_weak_sort(struct ptx_cg *cg, const char *sort, const char *other, unsigned id)
{
	size_t pi = cg->prog_idx;

	ptx_buf_printf(cg->b, "$L%s%u_%zu:\n@%%p6 bra $Lhs%u_%zu;\n@%%p3 bra $L%s%u_%zu;\nbra.uni $Lhs%u_%zu;\n",
		       sort, id, pi, id, pi, other, id, pi, id, pi);
}

/*
 * The home bucket is tried first, on its own: a hit there (a counter's
 * key, nearly always) takes its value address from a bucket index that is
 * the key's hash masked, a constant where the fold computed the hash, so
 * ptxas folds the address to the map's base plus a constant (plus the SM's
 * plane); the loop over the following buckets goes on from bucket 1.
 */
static void emit_hash_weak_probe(struct ptx_cg *cg, const struct gbpf_map_desc *d,
				 const struct gbpf_hash_geometry *geo, unsigned id)
{
	struct ptx_buf *b = cg->b;
	size_t pi = cg->prog_idx;

	ptx_buf_puts(b, "mov.u32 %w6, 0;\n");
	ptx_buf_puts(b, bucket_at_ptx);
	emit_weak_bucket(cg, d, geo, "hq", id);
	emit_found_value(cg, d, geo, id);
	emit_weak_sort(cg, "hq", "hv", id);
	/*
	 * Not unrolled: the run's later buckets are rare (a collision at home), and ptxas unrolling
	 * this loop, which it does when the bucket size is a power of two, gave mem_count's vector
	 * add 38 registers instead of 32 (6 blocks of 256 threads an SM instead of 8).
	 */
	ptx_buf_printf(b, "$Lhv%u_%zu:\nmov.u32 %%w6, 1;\n$Lhw%u_%zu:\n.pragma \"nounroll\";\n", id, pi, id, pi);
	ptx_buf_puts(b, bucket_at_ptx);
	emit_weak_bucket(cg, d, geo, "hwq", id);
	ptx_buf_printf(b, "bra.uni $Lhf%u_%zu;\n", id, pi);
	emit_weak_sort(cg, "hwq", "hwn", id);
	ptx_buf_printf(b, "$Lhwn%u_%zu:\nadd.u32 %%w6, %%w6, 1;\nsetp.lt.u32 %%p6, %%w6, %llu;\n"
			  "@%%p6 bra $Lhw%u_%zu;\n$Lhs%u_%zu:\n",
		       id, pi, (unsigned long long)geo->nr_buckets, id, pi, id, pi);
}

/*
 * Hash maps with a key of 1 to 4 whole 4-byte words and a bucket whose key
 * cannot change under the reader (cg->hash_stable, not LRU): the key's
 * words into registers (4-byte loads, as the probe stored them, so that
 * the injector's fold forwards a key built from constants and ptxas
 * computes its hash and home bucket), the hash inline, the lanes with
 * equal keys grouped, then the group's leader runs the probe run inline
 * from home, with the map's own rules (__gbpf_m_hprobe): EMPTY ends the
 * run (a miss), BUSY and TOMBSTONE are passed, READY with the key equal is
 * the entry. A READY bucket keeps its key for the whole kernel when nothing
 * deletes (no device delete, no LRU eviction; host deletes happen between
 * launches), so the acquire load of the state word orders the key and value
 * reads and no seqlock re-check or fence is needed. The run goes on to the
 * whole table, as __gbpf_m_hprobe's does; it used to call the full lookup
 * after four buckets, and that call, cold as it is, cost registers in every
 * kernel that looks up (ptxas allocates a kernel's registers for its whole
 * call graph, and the caller's values live across a call add to the
 * callee's: mem_count's vector add 40 registers, 6 blocks of 256 threads an
 * SM instead of 8). The leader's answer goes to the group by shuffles within
 * the group's mask.
 *
 * Before that run the leader tries the same buckets through the L1 cache
 * (emit_hash_weak_probe): the acquire load of the run bypasses L1 and
 * invalidates it for the whole SM, so when every warp looks up one hot key
 * (a counter per access kind at every memory access, mem_trace), each
 * lookup of each warp became a chain of L2 round trips to the same two
 * lines, and mem_count cost 14x vector add where the same counters written
 * by hand in CUDA cost 1.2x (H200, session 8). It walks as far as the
 * ordered run would: a READY bucket of another key stays that key's, so only
 * a doubt (EMPTY, BUSY, TOMBSTONE) sends the leader to the ordered run. It
 * used to stop after four buckets, and at the table's load of 1/4 most warps
 * of 32 distinct keys had a lane whose key lay further from home: that lane
 * started again from home with acquire loads, each invalidating the SM's L1
 * (hash_update from every thread: 1.44 M such loads a launch of 2^26
 * threads, a quarter of the kernel's stall samples; session 30).
 */
static int emit_hash_lookup_fast(struct ptx_cg *cg, const struct gbpf_map_desc *d, const struct key_src *ks)
{
	struct ptx_buf *b = cg->b;
	long long fo = (long long)GBPF_STACK_SIZE + ks->off;
	unsigned id = cg->uniq++, words = d->key_size / 4;
	size_t pi = cg->prog_idx;
	struct gbpf_hash_geometry geo;

	gbpf_hash_geometry_of(d->type, d->key_size, d->value_size, d->max_entries, &geo);
	_Static_assert(GBPF_BUCKET_EMPTY == 0 && GBPF_BUCKET_READY == 2, "bucket states the PTX tests");
	if (d->key_size == 4) {
		emit_key_u32(cg, ks);
		ptx_buf_puts(b, "cvt.u64.u32 %t13, %w10;\n");
	} else {
		for (unsigned w = 0; w < words; w++)
			ptx_buf_printf(b, "ld.local.u32 %%w%u, [__gbpf_stack+%lld];\n", 10 + w, fo + 4 * w);
		ptx_buf_puts(b, "mov.b64 %t13, {%w10, %w11};\n");
		if (words == 3)
			ptx_buf_puts(b, "cvt.u64.u32 %t14, %w12;\n");
		else if (words == 4)
			ptx_buf_puts(b, "mov.b64 %t14, {%w12, %w13};\n");
	}
	ptx_buf_printf(b, "mov.b64 %%t10, 0x%016llX;\n",
		       (unsigned long long)(GBPF_HASH_INIT ^ (uint64_t)d->key_size));
	for (unsigned w = 0; w < d->key_size; w += 8)
		ptx_buf_printf(b, "xor.b64 %%t10, %%t10, %%t%u;\nmul.lo.u64 %%t10, %%t10, 0x%016llX;\n"
				  "shr.b64 %%t11, %%t10, 32;\nxor.b64 %%t10, %%t10, %%t11;\n",
			       13 + w / 8, (unsigned long long)GBPF_HASH_MUL1);
	ptx_buf_printf(b, "shr.b64 %%t11, %%t10, 33;\nxor.b64 %%t10, %%t10, %%t11;\n"
			  "mul.lo.u64 %%t10, %%t10, 0x%016llX;\nshr.b64 %%t11, %%t10, 33;\n"
			  "xor.b64 %%t10, %%t10, %%t11;\n",
		       (unsigned long long)GBPF_HASH_MUL2);
	/* a warp-uniform key: every lane looks up (the same addresses: one transaction each),
	 * no grouping and no shuffle of the answer */
	if (!ks->uniform) {
		emit_key_group(cg, words, id);
		ptx_buf_printf(b, "setp.ne.u32 %%p2, %%w2, %%w3;\n@%%p2 bra $Lhg%u_%zu;\n", id, pi);
	}
	/*
	 * bucket i of the run = data_off + ((h + i) & (nr_buckets - 1)) * bucket_size, the geometry
	 * known from the map's description (map_layout.h): no header loads before the bucket's
	 */
	ptx_buf_printf(b, "mov.u32 %%w4, %llu;\nmov.u32 %%w5, %llu;\nadd.u64 %%t11, %%r1, %llu;\n"
			  "cvt.u32.u64 %%w15, %%t10;\n",
		       (unsigned long long)(geo.nr_buckets - 1), (unsigned long long)geo.bucket_size,
		       (unsigned long long)geo.data_off);
	/* PERCPU_HASH: nr_slots now, beside the first bucket's load (emit_found_value's %w8) */
	if (d->type == GBPF_MAP_TYPE_PERCPU_HASH)
		ptx_buf_puts(b, "ld.u32 %w8, [%r1+28];\n");
	emit_hash_weak_probe(cg, d, &geo, id);
	ptx_buf_printf(b, "mov.u32 %%w6, 0;\n$Lhp%u_%zu:\n.pragma \"nounroll\";\n", id, pi);
	ptx_buf_puts(b, bucket_at_ptx);
	ptx_buf_printf(b, "ld.acquire.gpu.u32 %%w14, [%%t12];\nand.b32 %%w14, %%w14, 3;\n"
			  "setp.eq.u32 %%p6, %%w14, %u;\n@%%p6 bra $Lhm%u_%zu;\n"
			  "setp.ne.u32 %%p6, %%w14, %u;\n@%%p6 bra $Lhn%u_%zu;\n",
		       GBPF_BUCKET_EMPTY, id, pi, GBPF_BUCKET_READY, id, pi);
	emit_bucket_key_cmp(cg, d->key_size, "hn", id);
	ptx_buf_printf(b, "$Lhf%u_%zu:\n", id, pi);
	emit_found_value(cg, d, &geo, id);
	/* the run goes on to the whole table (hprobe's bound): no call, see above */
	ptx_buf_printf(b, "$Lhn%u_%zu:\nadd.u32 %%w6, %%w6, 1;\nsetp.lt.u32 %%p6, %%w6, %llu;\n@%%p6 bra $Lhp%u_%zu;\n",
		       id, pi, (unsigned long long)geo.nr_buckets, id, pi);
	ptx_buf_printf(b, "$Lhm%u_%zu:\nmov.u64 %%r0, 0;\n$Lhd%u_%zu:\n", id, pi, id, pi);
	if (!ks->uniform)
		ptx_buf_printf(b, "$Lhg%u_%zu:\npopc.b32 %%w4, %%w1;\nsetp.eq.u32 %%p6, %%w4, 1;\n@%%p6 bra $Lhx%u_%zu;\n"
				  "mov.b64 {%%w4, %%w5}, %%r0;\nshfl.sync.idx.b32 %%w4, %%w4, %%w2, 31, %%w1;\n"
				  "shfl.sync.idx.b32 %%w5, %%w5, %%w2, 31, %%w1;\nmov.b64 %%r0, {%%w4, %%w5};\n$Lhx%u_%zu:\n",
			       id, pi, id, pi, id, pi);
	cg->call_r0_ptr = PTX_PTR_MAP;
	return 1;
}

/*
 * The program's null check right after the lookup call at @p pc
 * (`if r0 != 0 goto T` or `if r0 == 0 goto N`, or the same of rX after
 * `rX = r0`, nothing else landing on them): a hit of the inlined lookup
 * then makes that copy and jumps straight to where the check sends a value
 * (T, or $Lnn past the check, which emit_body places), so the hit path runs
 * no compare and no join. The check still runs for the paths that end at
 * the lookup's join (a miss, the slow path's call). The register facts on
 * the new edges are those of the check itself (the same copy is made, and
 * nothing else is emitted between the call and the check), which its
 * target records anyway.
 */
static void lookup_hit_target(struct ptx_cg *cg, size_t pc)
{
	const struct gbpf_insn *j;
	size_t end = cg->funcs[cg->cur].end, at = pc + 1;
	unsigned reg = 0;
	char copy[32] = "";

	cg->lookup_hit[0] = 0;
	if (at >= end || cg->label[at])
		return;
	j = &cg->insns[at];
	/* clang often keeps the value in a callee-saved register first */
	if (j->code == (GBPF_ALU64 | GBPF_MOV | GBPF_X) && j->src == 0 && !j->off && j->dst >= 1 && j->dst <= 9) {
		reg = j->dst;
		snprintf(copy, sizeof(copy), "mov.b64 %%r%u, %%r0;\n", reg);
		if (++at >= end || cg->label[at])
			return;
		j = &cg->insns[at];
	}
	if (j->dst != reg || j->imm != 0 ||
	    (j->code != (GBPF_JMP | GBPF_JNE | GBPF_K) && j->code != (GBPF_JMP | GBPF_JEQ | GBPF_K)))
		return;
	if (GBPF_OP(j->code) == GBPF_JNE) {
		long long t = (long long)at + 1 + j->off;

		if (t <= (long long)at || t >= (long long)end)
			return;
		snprintf(cg->lookup_hit, sizeof(cg->lookup_hit), "%sbra.uni $L%lld;", copy, t);
	} else {
		snprintf(cg->lookup_hit, sizeof(cg->lookup_hit), "%sbra.uni $Lnn%zu_%zu;", copy, at, cg->prog_idx);
		cg->nonnull_label_pc = at;
	}
}

int ptx_emit_known_lookup(struct ptx_cg *cg, size_t pc)
{
	const struct gbpf_map_desc *d = ptx_known_map_in(cg, pc, 1);
	struct key_src ks;
	int rc = 0;

	if (!d || !d->max_entries || !d->value_size)
		return 0;
	trace_key(cg, pc, d->key_size, &ks);
	switch (d->type) {
	case GBPF_MAP_TYPE_ARRAY:
	case GBPF_MAP_TYPE_GPU_ARRAY:
	case GBPF_MAP_TYPE_PERCPU_ARRAY:
	case GBPF_MAP_TYPE_PERGPUTHREAD_ARRAY:
		if (d->key_size == 4) {
			lookup_hit_target(cg, pc);
			rc = emit_array_lookup(cg, d, &ks);
		}
		break;
	case GBPF_MAP_TYPE_HASH:
	case GBPF_MAP_TYPE_PERCPU_HASH:
	case GBPF_MAP_TYPE_LRU_HASH:
	case GBPF_MAP_TYPE_GPU_HASH:
		if (cg->hash_stable && d->type != GBPF_MAP_TYPE_LRU_HASH && d->key_size && d->key_size <= 16 &&
		    !(d->key_size % 4) && ks.off_known &&
		    ((long long)GBPF_STACK_SIZE + ks.off) % (d->key_size >= 8 ? 8 : 4) == 0 &&
		    (long long)GBPF_STACK_SIZE + ks.off >= 0 &&
		    (long long)GBPF_STACK_SIZE + ks.off + d->key_size <= GBPF_STACK_SIZE) {
			/* a key per lane shares the leader's answer after the join: no shortcut */
			if (ks.uniform)
				lookup_hit_target(cg, pc);
			rc = emit_hash_lookup_fast(cg, d, &ks);
		} else {
			rc = emit_hash_lookup(cg, d, &ks);
		}
		break;
	default:
		break;
	}
	cg->lookup_hit[0] = 0;
	/*
	 * Every lane looked up the same key (a per-GPU-thread array's slots differ):
	 * an array's element, or a hash bucket that keeps its key for the kernel (no
	 * program deletes: lanes that look the key up at different times find the
	 * same bucket, never one reused for another key).
	 */
	if (rc == 1 && ks.uniform && ks.off_known && d->type != GBPF_MAP_TYPE_PERGPUTHREAD_ARRAY &&
	    (cg->hash_stable || d->type == GBPF_MAP_TYPE_ARRAY || d->type == GBPF_MAP_TYPE_GPU_ARRAY ||
	     d->type == GBPF_MAP_TYPE_PERCPU_ARRAY)) {
		cg->call_r0_uni.valid = 1;
		cg->call_r0_uni.map = (uint16_t)(d - cg->prog->maps);
		cg->call_r0_uni.key_off = (int32_t)ks.off;
		cg->call_r0_uni.gen = cg->stk_gen;
	}
	return rc;
}

bool ptx_update_is_plain_hash(const struct ptx_cg *cg, size_t pc)
{
	const struct gbpf_map_desc *d = ptx_known_map_in(cg, pc, 1);

	if (!d || (d->type != GBPF_MAP_TYPE_HASH && d->type != GBPF_MAP_TYPE_PERCPU_HASH &&
		   d->type != GBPF_MAP_TYPE_GPU_HASH))
		return false;
	/* flags the update takes unchecked: BPF_ANY, BPF_NOEXIST, BPF_EXIST, known here */
	return cg->imm_known[4] && cg->imm_val[4] <= 2;
}

/*
 * Register @p data holds a known 8-aligned place in the frame, @p size a constant the warp-wide
 * write takes.
 */
static bool record_by_value(const struct ptx_cg *cg, unsigned data, unsigned size, long long *frame_off,
			    unsigned *words)
{
	long long fo = (long long)GBPF_STACK_SIZE + cg->stk_off[data];
	uint64_t n = cg->imm_val[size];

	if (!cg->stk_known[data] || !cg->imm_known[size] || n == 0 || n % 8 ||
	    n > 8 * (PTX_RING_WARP_MAX_WORDS - 1) || fo < 0 || fo % 8 || fo + (long long)n > GBPF_STACK_SIZE)
		return false;
	*frame_off = fo;
	*words = (unsigned)(n / 8);
	return true;
}

bool ptx_ringbuf_output_by_value(const struct ptx_cg *cg, size_t pc, long long *frame_off, unsigned *words)
{
	const struct gbpf_map_desc *d = ptx_known_map_in(cg, pc, 1);

	if (!d || (d->type != GBPF_MAP_TYPE_RINGBUF && d->type != GBPF_MAP_TYPE_GPU_RINGBUF) ||
	    !cg->imm_known[4] || (cg->imm_val[4] & ~3ull))
		return false;
	return record_by_value(cg, 2, 3, frame_off, words);
}

bool ptx_perf_output_by_value(const struct ptx_cg *cg, size_t pc, long long *frame_off, unsigned *words)
{
	const struct gbpf_map_desc *d = ptx_known_map_in(cg, pc, 2);

	if (!d || d->type != GBPF_MAP_TYPE_PERF_EVENT_ARRAY)
		return false;
	return record_by_value(cg, 4, 5, frame_off, words);
}

/* ---- GPU_THREAD_LOCAL maps: the thread's own values, in its frame ---- */

uint32_t ptx_thread_local_off(const struct gbpf_prog_desc *prog, size_t map_index)
{
	return gbpf_thread_local_off(prog->maps, prog->map_cnt, map_index);
}

/* Whether the program's object has a GPU_THREAD_LOCAL map at all. */
static int has_thread_local(const struct gbpf_prog_desc *prog)
{
	return ptx_thread_local_off(prog, prog->map_cnt) != 0;
}

int ptx_thread_local_used(const struct gbpf_prog_desc *prog)
{
	for (size_t i = 0; i < prog->insn_cnt; i++) {
		const struct gbpf_insn *in = &prog->insns[i];

		if (in->code == GBPF_OP_LDDW && in->src == GBPF_PSEUDO_MAP_IDX && in->imm >= 0 &&
		    (size_t)in->imm < prog->map_cnt && prog->maps[in->imm].type == GBPF_MAP_TYPE_GPU_THREAD_LOCAL)
			return 1;
	}
	return 0;
}

int ptx_tls_access(struct ptx_cg *cg, unsigned base, long long off, int size, char *as, size_t as_size)
{
	uint8_t prov;

	if (!has_thread_local(cg->prog))
		return 0;
	if (base < 10 && cg->tls_known[base]) {
		long long at = cg->tls_off[base] + off;

		if (size == 8 && at >= 0 && !(at % 8) &&
		    (uint64_t)at + 8 <= ptx_thread_local_off(cg->prog, cg->prog->map_cnt)) {
			snprintf(as, as_size, "[%%rtls+%lld]", at);
			return 1;
		}
		cg->tls_mem = 1;
		return 0;
	}
	/* a pointer whose target is not known may be a thread-local value */
	prov = base < 10 ? cg->ptr[base] : PTX_PTR_UNKNOWN;
	if (base != 10 && prov != PTX_PTR_MAP && prov != PTX_PTR_THREAD_SLOT && prov != PTX_PTR_RING &&
	    prov != PTX_PTR_CTX)
		cg->tls_mem = 1;
	return 0;
}

/*
 * Element address into %r0 (generic, pointing into local memory): %rtls +
 * the map's place + index x stride; 0 for an index out of range (a
 * constant key folds the check away). The key is left in %w10.
 */
static void emit_thread_local_elem(struct ptx_cg *cg, const struct gbpf_map_desc *d, const struct key_src *ks,
				   const char *miss)
{
	uint32_t base = ptx_thread_local_off(cg->prog, (size_t)(d - cg->prog->maps));
	uint32_t stride = (d->value_size + 7u) & ~7u;

	if (ks->kind == KEY_IMM) {
		if (ks->imm >= d->max_entries)
			ptx_buf_printf(cg->b, "mov.u64 %%r0, 0;\nbra.uni %s;\n", miss);
		else
			ptx_buf_printf(cg->b, "add.u64 %%r0, %%rtls, %u;\n", base + ks->imm * stride);
		return;
	}
	emit_key_u32(cg, ks);
	ptx_buf_printf(cg->b, "mov.u64 %%r0, 0;\nsetp.ge.u32 %%p6, %%w10, %u;\n@%%p6 bra %s;\n"
			      "mul.wide.u32 %%t10, %%w10, %u;\nadd.u64 %%r0, %%rtls, %%t10;\nadd.u64 %%r0, %%r0, %u;\n",
		       d->max_entries, miss, stride, base);
}

/* update(map, key, value, flags) as an array's: every element exists, so NOEXIST fails. */
static void emit_thread_local_update(struct ptx_cg *cg, const struct gbpf_map_desc *d, const struct key_src *ks,
				     const char *done)
{
	struct ptx_buf *b = cg->b;
	uint32_t n = d->value_size;
	int words = cg->align[3] >= 3 && !(n % 8);

	ptx_buf_printf(b, "mov.u64 %%r0, %d;\nsetp.gt.u64 %%p6, %%r4, %u;\n@%%p6 bra %s;\n", -EINVAL,
		       2u /* BPF_EXIST */,
		       done);
	/* the index first, as Linux: out of range is -E2BIG even with NOEXIST */
	emit_thread_local_elem(cg, d, ks, "$Ltlx");
	ptx_buf_printf(b, "mov.u64 %%t11, %%r0;\nmov.u64 %%r0, %d;\nsetp.eq.u64 %%p6, %%r4, %u;\n@%%p6 bra %s;\n",
		       -EEXIST, 1u /* BPF_NOEXIST */, done);
	/* the value may lie anywhere the verifier allows: words when provably aligned, else bytes */
	for (uint32_t o = 0; o < n; o += words ? 8 : 1)
		ptx_buf_printf(b, words ? "ld.u64 %%t12, [%%r3+%u];\nst.u64 [%%t11+%u], %%t12;\n"
					: "ld.u8 %%w11, [%%r3+%u];\nst.u8 [%%t11+%u], %%w11;\n",
			       o, o);
	ptx_buf_printf(b, "mov.u64 %%r0, 0;\nbra.uni %s;\n$Ltlx:\nmov.u64 %%r0, %d;\n", done, -E2BIG);
}

int ptx_emit_thread_local_call(struct ptx_cg *cg, size_t pc, uint32_t id)
{
	const struct gbpf_map_desc *d;
	struct key_src ks;
	char done[48];

	if (!has_thread_local(cg->prog))
		return 0;
	/* a helper given a thread-local value's address reads or writes the values' memory */
	for (unsigned r = 1; r <= 5; r++)
		if (cg->ptr[r] == PTX_PTR_THREAD_LOCAL || cg->tls_known[r])
			cg->tls_mem = 1;
	if (id != GBPF_HELPER_MAP_LOOKUP_ELEM && id != GBPF_HELPER_MAP_UPDATE_ELEM &&
	    id != GBPF_HELPER_MAP_DELETE_ELEM)
		return 0;
	d = ptx_known_map_in(cg, pc, 1);
	/*
	 * The device's generic map routines read the block, which holds no
	 * thread's values: a thread-local map must be known where it is used.
	 */
	if (!d)
		return ptx_fail(cg, pc, -ENOTSUP,
				"map helper %u on a map not known at the call, in a program with thread-local "
				"(GPU_THREAD_LOCAL) maps: pass the map directly", id);
	if (d->type != GBPF_MAP_TYPE_GPU_THREAD_LOCAL)
		return 0;
	if (cg->cur != 0)
		return ptx_fail(cg, pc, -ENOTSUP,
				"thread-local map '%s' used in a BPF subprogram: use it in the program's own "
				"function (inline the subprogram)", d->name ? d->name : "?");
	if (!cg->kernel && !cg->tls_ctx)
		return ptx_fail(cg, pc, -ENOTSUP,
				"thread-local map '%s': this probe's caller keeps no values for the thread's run "
				"(PTX injection does; the Compute Sanitizer engine does not)", d->name ? d->name : "?");
	snprintf(done, sizeof(done), "$Ltl%u_%zu", cg->uniq++, cg->prog_idx);
	if (id == GBPF_HELPER_MAP_DELETE_ELEM) {
		ptx_buf_printf(cg->b, "mov.u64 %%r0, %d;\n", -EINVAL); /* as an array's: no element goes away */
		return 1;
	}
	trace_key(cg, pc, d->key_size, &ks);
	if (id == GBPF_HELPER_MAP_UPDATE_ELEM) {
		cg->tls_mem = 1; /* it writes the values' memory */
		/* a scope of its own: the update's labels are unique within it */
		ptx_buf_puts(cg->b, "{\n");
		emit_thread_local_update(cg, d, &ks, done);
		ptx_buf_printf(cg->b, "%s:\n}\n", done);
		return 1;
	}
	lookup_hit_target(cg, pc);
	emit_thread_local_elem(cg, d, &ks, done);
	if (ks.kind == KEY_IMM && ks.imm < d->max_entries) {
		cg->call_r0_tls = 1;
		cg->call_r0_tls_off = ptx_thread_local_off(cg->prog, (size_t)(d - cg->prog->maps)) +
				      (long long)ks.imm * ((d->value_size + 7u) & ~7u);
	}
	/* in range: an element, never NULL (lookup_hit_target) */
	if (cg->lookup_hit[0])
		ptx_buf_printf(cg->b, "%s\n", cg->lookup_hit);
	ptx_buf_printf(cg->b, "%s:\n", done);
	cg->lookup_hit[0] = 0;
	cg->call_r0_align = 3;
	cg->call_r0_ptr = PTX_PTR_THREAD_LOCAL;
	return 1;
}
