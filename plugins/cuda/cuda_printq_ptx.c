/* SPDX-License-Identifier: MIT */
/* Device side of the print queues (layout in cuda_printq.h). */
#include "cuda_printq.h"

/* Returns {record address or 0, seq to publish}. Bounded: 64 CAS attempts. */
static const char reserve_ptx[] =
	".func (.param .align 8 .b8 r[16]) __gbpf_pq_reserve()\n{\n"
	".reg .b64 %a<12>;\n.reg .b32 %b<6>;\n.reg .pred %q<4>;\n"
	"ld.global.u64 %a0, [__gbpf_printq];\nsetp.eq.u64 %q0, %a0, 0;\n@%q0 bra $Lnone;\n"
	"ld.u64 %a1, [%a0];\nld.u32 %b0, [%a0+8];\nld.u32 %b1, [%a0+12];\n"
	"mov.u32 %b2, %smid;\nsub.u32 %b3, %b0, 1;\nand.b32 %b2, %b2, %b3;\n"
	"mul.wide.u32 %a2, %b2, 16;\nadd.u64 %a2, %a2, %a0;\nadd.u64 %a2, %a2, 64;\n"
	"mul.wide.u32 %a3, %b2, 8;\nadd.u64 %a3, %a3, %a1;\ncvt.u64.u32 %a4, %b1;\nmov.u32 %b4, 0;\n"
	"$Ltry:\nld.volatile.u64 %a5, [%a2];\nld.volatile.u64 %a6, [%a3];\n"
	"sub.u64 %a7, %a5, %a6;\nsetp.ge.u64 %q1, %a7, %a4;\n@%q1 bra $Ldrop;\n"
	"add.u64 %a8, %a5, 1;\natom.cas.b64 %a9, [%a2], %a5, %a8;\nsetp.eq.u64 %q2, %a9, %a5;\n"
	"@%q2 bra $Lgot;\nadd.u32 %b4, %b4, 1;\nsetp.lt.u32 %q3, %b4, 64;\n@%q3 bra $Ltry;\n"
	"$Ldrop:\nred.add.u64 [%a2+8], 1;\n"
	"$Lnone:\nst.param.b64 [r], 0;\nst.param.b64 [r+8], 0;\nret;\n"
	"$Lgot:\nmul.wide.u32 %a10, %b0, 8;\nadd.u64 %a10, %a10, 63;\n"
	"and.b64 %a10, %a10, 0xFFFFFFFFFFFFFFC0;\nadd.u64 %a10, %a10, %a1;\n"
	"sub.u64 %a11, %a4, 1;\nand.b64 %a11, %a5, %a11;\nmul.wide.u32 %a7, %b2, %b1;\n"
	"add.u64 %a11, %a11, %a7;\nshl.b64 %a11, %a11, 8;\nadd.u64 %a10, %a10, %a11;\n"
	"st.param.b64 [r], %a10;\nst.param.b64 [r+8], %a8;\nret;\n}\n";

/* Copy at most max bytes of a string (stopping at NUL) into rec text. */
#define COPY_TEXT(src, limit)                                                                      \
	"mov.u64 %a4, 0;\n"                                                                        \
	"$Lcp:\nsetp.ge.u64 %q1, %a4, " limit ";\n@%q1 bra $Lcpd;\nadd.u64 %a5, " src ", %a4;\n"  \
	"ld.u8 %a6, [%a5];\nsetp.eq.u64 %q2, %a6, 0;\n@%q2 bra $Lcpd;\nadd.u64 %a5, %a2, %a4;\n"  \
	"st.u8 [%a5+40], %a6;\nadd.u64 %a4, %a4, 1;\nbra.uni $Lcp;\n$Lcpd:\n"

#define RESERVE                                                                                    \
	"{\n.param .align 8 .b8 rr[16];\ncall (rr), __gbpf_pq_reserve, ();\n"                     \
	"ld.param.b64 %a2, [rr];\nld.param.b64 %a3, [rr+8];\n}\n"                                \
	"setp.eq.u64 %q0, %a2, 0;\n@%q0 bra $Lfull;\n"

#define PUBLISH(kind)                                                                              \
	"st.u32 [%a2+8], " kind ";\ncvt.u32.u64 %b0, %a4;\nst.u32 [%a2+12], %b0;\n"                \
	"fence.sc.sys;\nst.release.sys.u64 [%a2], %a3;\n"

static const char puts_ptx[] =
	".func (.param .b64 r) __gbpf_h_puts(.param .b64 s)\n{\n"
	".reg .b64 %a<8>;\n.reg .b32 %b<2>;\n.reg .pred %q<3>;\nld.param.b64 %a0, [s];\n"
	RESERVE COPY_TEXT("%a0", "215") PUBLISH("2")
	"st.param.b64 [r], 0;\nret;\n$Lfull:\nst.param.b64 [r], -28;\nret;\n}\n";

static const char printk_ptx[] =
	".func (.param .b64 r) __gbpf_h_trace_printk(.param .b64 f, .param .b64 n, .param .b64 x,"
	" .param .b64 y, .param .b64 z)\n{\n"
	".reg .b64 %a<10>;\n.reg .b32 %b<2>;\n.reg .pred %q<3>;\nld.param.b64 %a0, [f];\n"
	"ld.param.b64 %a1, [n];\nmin.u64 %a1, %a1, 215;\n"
	RESERVE
	"ld.param.b64 %a7, [x];\nst.u64 [%a2+16], %a7;\nld.param.b64 %a7, [y];\n"
	"st.u64 [%a2+24], %a7;\nld.param.b64 %a7, [z];\nst.u64 [%a2+32], %a7;\n"
	COPY_TEXT("%a0", "%a1") PUBLISH("1")
	"st.param.b64 [r], %a4;\nret;\n$Lfull:\nst.param.b64 [r], -28;\nret;\n}\n";

void gbpf_printq_emit_ptx(struct ptx_buf *b, int printk, int puts)
{
	ptx_buf_puts(b, reserve_ptx);
	if (printk)
		ptx_buf_puts(b, printk_ptx);
	if (puts)
		ptx_buf_puts(b, puts_ptx);
}
