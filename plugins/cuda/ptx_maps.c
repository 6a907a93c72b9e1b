/* SPDX-License-Identifier: MIT */
/*
 * Map helpers on the device. Each function reads the map's self-describing
 * header (maps/map_layout.h) at run time, so one function serves every map
 * of a module and the host never has to patch code per map.
 */
#include <gbpf/helper_ids.h>

#include "maps/map_layout.h"
#include "ptx_internal.h"
#include "ptx_maps.h"

uint64_t ptx_map_value_base(const struct gbpf_map_desc *desc)
{
	if (desc->type == GBPF_MAP_TYPE_ARRAY || desc->type == GBPF_MAP_TYPE_GPU_ARRAY)
		return GBPF_MAP_HDR_SIZE;
	return 0;
}

/*
 * Element address of an array-like map into %a9 (0 when the index is out
 * of range or the type is not an array); map in %a0, key in %a1.
 * PERCPU_ARRAY uses the SM's slot, PERGPUTHREAD_ARRAY the thread's.
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
	"$Lpercpu:\nmov.u32 %b5, %smid;\nrem.u32 %b5, %b5, %b2;\nmul.wide.u32 %a5, %b5, %b1;\n"
	"add.u64 %a4, %a4, %a5;\nbra.uni $Lelem;\n"
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
