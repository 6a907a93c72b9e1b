/* SPDX-License-Identifier: MIT */
/* Device side of the print queues (layout in cuda_printq.h). */
#include "cuda_printq.h"

/*
 * Returns {record address or 0, seq to publish}. Bounded: 64 CAS attempts.
 * The host's tail is read before the head, with acquire: tail never passes
 * head, so head - tail cannot wrap (read the other way, a warp held up
 * between the loads could see the host consume past the head it read and
 * count its line a drop).
 */
static const char reserve_ptx[] =
	".func (.param .align 8 .b8 r[16]) __gbpf_pq_reserve()\n{\n"
	".reg .b64 %a<12>;\n.reg .b32 %b<6>;\n.reg .pred %q<4>;\n"
	"ld.global.u64 %a0, [__gbpf_printq];\nsetp.eq.u64 %q0, %a0, 0;\n@%q0 bra $Lnone;\n"
	"ld.u64 %a1, [%a0];\nld.u32 %b0, [%a0+8];\nld.u32 %b1, [%a0+12];\n"
	"mov.u32 %b2, %smid;\nsub.u32 %b3, %b0, 1;\nand.b32 %b2, %b2, %b3;\n"
	"mul.wide.u32 %a2, %b2, 16;\nadd.u64 %a2, %a2, %a0;\nadd.u64 %a2, %a2, 64;\n"
	"mul.wide.u32 %a3, %b2, 8;\nadd.u64 %a3, %a3, %a1;\ncvt.u64.u32 %a4, %b1;\nmov.u32 %b4, 0;\n"
	"$Ltry:\nld.acquire.sys.u64 %a6, [%a3];\nld.volatile.u64 %a5, [%a2];\n"
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

/*
 * Append the %s string at s to the record text t from position p; returns
 * the next position. It reads only where the string may be: the thread's
 * .local window (stack) or the data of a map block listed in __gbpf_maps
 * (bounded by the block's total_size); anything else (NULL, a number)
 * appends an empty string, as the interpreter prints an unreadable one.
 * At most up to text byte 214, then the NUL; nothing once the text is full.
 * A stack string must end within the thread's stack, as C strings do.
 */
static const char str_ptx[] =
	".visible .global .align 4 .u32 __gbpf_printq_nmaps;\n"
	".func (.param .b64 r) __gbpf_pq_str(.param .b64 s, .param .b64 t, .param .b64 p)\n{\n"
	".reg .b64 %a<8>;\n.reg .b32 %b<3>;\n.reg .pred %q<2>;\n"
	"ld.param.b64 %a0, [s];\nld.param.b64 %a1, [t];\nld.param.b64 %a2, [p];\n"
	"setp.gt.u64 %q0, %a2, 215;\n@%q0 bra $Lret;\nmov.u64 %a3, 0;\n"
	"setp.eq.u64 %q0, %a0, 0;\n@%q0 bra $Lterm;\n"
	"isspacep.local %q0, %a0;\n@%q0 mov.u64 %a3, 216;\n@%q0 bra $Lcopy;\n"
	"ld.global.u32 %b0, [__gbpf_printq_nmaps];\nmov.u32 %b1, 0;\nmov.u64 %a4, __gbpf_maps;\n"
	"$Lmap:\nsetp.ge.u32 %q0, %b1, %b0;\n@%q0 bra $Lterm;\nld.global.u64 %a5, [%a4];\n"
	"add.u64 %a4, %a4, 8;\nadd.u32 %b1, %b1, 1;\nsetp.eq.u64 %q0, %a5, 0;\n@%q0 bra $Lmap;\n"
	"add.u64 %a6, %a5, 128;\nsetp.lt.u64 %q0, %a0, %a6;\n@%q0 bra $Lmap;\n"
	"ld.u64 %a7, [%a5+48];\nadd.u64 %a7, %a7, %a5;\nsetp.ge.u64 %q0, %a0, %a7;\n@%q0 bra $Lmap;\n"
	"sub.u64 %a3, %a7, %a0;\n"
	"$Lcopy:\nmov.u64 %a4, 0;\n"
	"$Lc:\nsetp.ge.u64 %q0, %a4, %a3;\nsetp.ge.u64 %q1, %a2, 215;\nor.pred %q0, %q0, %q1;\n"
	"@%q0 bra $Lterm;\nadd.u64 %a5, %a0, %a4;\nld.u8 %b2, [%a5];\nsetp.eq.u32 %q0, %b2, 0;\n"
	"@%q0 bra $Lterm;\nadd.u64 %a6, %a1, %a2;\nst.u8 [%a6], %b2;\nadd.u64 %a2, %a2, 1;\n"
	"add.u64 %a4, %a4, 1;\nbra.uni $Lc;\n"
	"$Lterm:\nadd.u64 %a6, %a1, %a2;\nst.u8 [%a6], 0;\nadd.u64 %a2, %a2, 1;\n"
	"$Lret:\nst.param.b64 [r], %a2;\nret;\n}\n";

/* The string of argument @p reg when bit @p bit of the %s mask (%b4) is set. */
#define STRARG(bit, reg)                                                                           \
	"and.b32 %b6, %b4, " bit ";\nsetp.eq.u32 %q1, %b6, 0;\n@%q1 bra $Ls" bit ";\n"            \
	"{\n.param .b64 sr;\n.param .b64 s0;\n.param .b64 s1;\n.param .b64 s2;\n"                  \
	"st.param.b64 [s0], " reg ";\nst.param.b64 [s1], %a9;\nst.param.b64 [s2], %a8;\n"         \
	"call (sr), __gbpf_pq_str, (s0, s1, s2);\nld.param.b64 %a8, [sr];\n}\n$Ls" bit ":\n"

/*
 * The format is copied as before; on the way a state machine follows the
 * host formatter's parse (gbpf_hh_format: '%', '%%', up to two 'l', one
 * conversion character) and marks the arguments of %s conversions (%b4,
 * bit k for argument k). Their strings follow the format in the record
 * (kind PRINTK_STR); the host formats the line with them.
 * States (%b2): 0 text, 1 after '%', 2 after "%l", 3 after "%ll".
 */
static const char printk_ptx[] =
	".func (.param .b64 r) __gbpf_h_trace_printk(.param .b64 f, .param .b64 n, .param .b64 x,"
	" .param .b64 y, .param .b64 z)\n{\n"
	".reg .b64 %a<13>;\n.reg .b32 %b<8>;\n.reg .pred %q<4>;\nld.param.b64 %a0, [f];\n"
	"ld.param.b64 %a1, [n];\nmin.u64 %a1, %a1, 215;\n"
	RESERVE
	"ld.param.b64 %a10, [x];\nst.u64 [%a2+16], %a10;\nld.param.b64 %a11, [y];\n"
	"st.u64 [%a2+24], %a11;\nld.param.b64 %a12, [z];\nst.u64 [%a2+32], %a12;\n"
	"mov.u64 %a4, 0;\nmov.u32 %b2, 0;\nmov.u32 %b3, 0;\nmov.u32 %b4, 0;\n"
	"$Lcp:\nsetp.ge.u64 %q1, %a4, %a1;\n@%q1 bra $Lcpd;\nadd.u64 %a5, %a0, %a4;\n"
	"ld.u8 %b5, [%a5];\nsetp.eq.u32 %q1, %b5, 0;\n@%q1 bra $Lcpd;\nadd.u64 %a5, %a2, %a4;\n"
	"st.u8 [%a5+40], %b5;\nadd.u64 %a4, %a4, 1;\n"
	"setp.ne.u32 %q1, %b2, 0;\n@%q1 bra $Lcv;\n"
	"setp.eq.u32 %q1, %b5, 37;\nselp.u32 %b2, 1, 0, %q1;\nbra.uni $Lcp;\n"
	"$Lcv:\nsetp.eq.u32 %q1, %b2, 1;\nsetp.eq.u32 %q2, %b5, 37;\nand.pred %q3, %q1, %q2;\n"
	"@%q3 mov.u32 %b2, 0;\n@%q3 bra $Lcp;\n"
	"setp.eq.u32 %q2, %b5, 108;\nsetp.lt.u32 %q3, %b2, 3;\nand.pred %q3, %q3, %q2;\n"
	"@%q3 add.u32 %b2, %b2, 1;\n@%q3 bra $Lcp;\n"
	"setp.eq.u32 %q2, %b5, 115;\nand.pred %q3, %q1, %q2;\n"
	"mov.u32 %b6, 1;\nshl.b32 %b6, %b6, %b3;\n@%q3 or.b32 %b4, %b4, %b6;\n"
	"add.u32 %b3, %b3, 1;\nmov.u32 %b2, 0;\nbra.uni $Lcp;\n"
	"$Lcpd:\nmov.u32 %b7, 1;\nand.b32 %b4, %b4, 7;\nsetp.eq.u32 %q1, %b4, 0;\n@%q1 bra $Lpub;\n"
	"mov.u32 %b7, 3;\nmov.u64 %a8, %a4;\nadd.u64 %a9, %a2, 40;\n"
	STRARG("1", "%a10") STRARG("2", "%a11") STRARG("4", "%a12")
	"$Lpub:\nst.u32 [%a2+8], %b7;\ncvt.u32.u64 %b0, %a4;\nst.u32 [%a2+12], %b0;\n"
	"fence.sc.sys;\nst.release.sys.u64 [%a2], %a3;\n"
	"st.param.b64 [r], %a4;\nret;\n$Lfull:\nst.param.b64 [r], -28;\nret;\n}\n";

void gbpf_printq_emit_ptx(struct ptx_buf *b, int printk, int puts)
{
	ptx_buf_puts(b, reserve_ptx);
	if (printk) {
		ptx_buf_puts(b, str_ptx);
		ptx_buf_puts(b, printk_ptx);
	}
	if (puts)
		ptx_buf_puts(b, puts_ptx);
}
