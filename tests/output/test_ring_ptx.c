/* SPDX-License-Identifier: MIT */
/*
 * The device ring buffer functions (plugins/cuda/ptx_ring.c) on the CPU:
 * they assemble with ptxas for sm_90 and sm_70's arch, called from a kernel
 * that outputs an event (the warp-wide write), a perf record passed by
 * value, and reserves and submits one; the text has the paths the agent
 * relies on: the warp-wide write for whole words (a whole warp's exchange
 * and the general one), both memory scopes chosen by the device ring's
 * header word +116, and the lane-by-lane fallback.
 * (Delivery itself is checked on the GPU: bench/cuda/run.sh and
 * bench/agent/device.sh count every record once.)
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <gbpf/helper_ids.h>

#include "../cuda/cuda_test_util.h"
#include "ptx_buf.h"
#include "ptx_internal.h"
#include "ptx_maps.h"
#include "tap.h"

/* The byte copy the ring functions call (the code generator's is in ptx_helpers.c). */
static const char copy_stub[] =
	".func __gbpf_h_copy(.param .b64 d, .param .b64 s, .param .b64 n)\n{\n.reg .b64 %a<6>;\n"
	".reg .b16 %h<1>;\n.reg .pred %q<1>;\nld.param.b64 %a0, [d];\nld.param.b64 %a1, [s];\n"
	"ld.param.b64 %a2, [n];\nmov.u64 %a3, 0;\n$Ll:\nsetp.ge.u64 %q0, %a3, %a2;\n@%q0 bra $Le;\n"
	"add.u64 %a4, %a1, %a3;\nld.u8 %h0, [%a4];\nadd.u64 %a5, %a0, %a3;\nst.u8 [%a5], %h0;\n"
	"add.u64 %a3, %a3, 1;\nbra.uni $Ll;\n$Le:\nret;\n}\n";

/* ringbuf_output of a 48-byte stack event, a 16-byte perf record by value, then reserve + submit of 48 bytes. */
static const char entry[] =
	".visible .entry t(.param .u64 m)\n{\n.reg .b64 %x<4>;\n.reg .pred %p<1>;\n.local .align 8 .b8 ev[48];\n"
	"ld.param.u64 %x0, [m];\nmov.u64 %x1, ev;\ncvta.local.u64 %x1, %x1;\nst.u64 [%x1], %x0;\n"
	"{\n.param .b64 r;\n.param .b64 a;\n.param .b64 b;\n.param .b64 c;\n.param .b64 d;\n"
	"st.param.b64 [a], %x0;\nst.param.b64 [b], %x1;\nst.param.b64 [c], 48;\nst.param.b64 [d], 0;\n"
	"call (r), __gbpf_h_ringbuf_output, (a, b, c, d);\n}\n"
	"{\n.param .b64 r;\n.param .b64 a;\n.param .b64 f;\n.param .b64 n;\n.param .b64 w0;\n.param .b64 w1;\n"
	".param .b64 w2;\n.param .b64 w3;\n.param .b64 w4;\n.param .b64 w5;\n.param .b64 w6;\n"
	"st.param.b64 [a], %x0;\nst.param.b64 [f], 0xFFFFFFFF;\nst.param.b64 [n], 16;\nst.param.b64 [w0], %x0;\n"
	"st.param.b64 [w1], %x1;\nst.param.b64 [w2], 0;\nst.param.b64 [w3], 0;\nst.param.b64 [w4], 0;\n"
	"st.param.b64 [w5], 0;\nst.param.b64 [w6], 0;\n"
	"call (r), __gbpf_h_perf_outv, (a, f, n, w0, w1, w2, w3, w4, w5, w6);\n}\n"
	"{\n.param .b64 r;\n.param .b64 a;\n.param .b64 b;\n.param .b64 c;\nst.param.b64 [a], %x0;\n"
	"st.param.b64 [b], 48;\nst.param.b64 [c], 0;\ncall (r), __gbpf_h_ringbuf_reserve, (a, b, c);\n"
	"ld.param.b64 %x2, [r];\n}\nsetp.eq.u64 %p0, %x2, 0;\n@%p0 bra $Ldone;\nst.u64 [%x2], %x0;\n"
	"{\n.param .b64 r;\n.param .b64 a;\n.param .b64 b;\nst.param.b64 [a], %x2;\nst.param.b64 [b], 0;\n"
	"call (r), __gbpf_h_ringbuf_submit, (a, b);\n}\n$Ldone:\nret;\n}\n";

static size_t count(const char *s, const char *what)
{
	size_t n = 0;

	for (; (s = strstr(s, what)); s += strlen(what))
		n++;
	return n;
}

static void emit(struct ptx_buf *b, int old, const uint8_t *used)
{
	memset(b, 0, sizeof(*b));
	ptx_buf_printf(b, ".version %s\n.target %s\n.address_size 64\n", old ? "7.0" : "7.8",
		       old ? "sm_70" : "sm_90");
	ptx_buf_puts(b, copy_stub);
	ptx_ring_emit(b, used);
}

int main(void)
{
	uint8_t used[PTX_HELPER_ID_MAX] = {0}, none[PTX_HELPER_ID_MAX] = {0};
	const char *archs[2] = {"sm_90", ptxas_arch_for_sm70()};
	struct ptx_buf b;
	char log[2048];

	used[GBPF_HELPER_RINGBUF_OUTPUT] = 1;
	emit(&b, 0, none);
	tap_ok(!b.oom && !strstr(b.p, "__gbpf_m_ring"), "no ring helper used: no ring functions emitted");
	ptx_buf_free(&b);

	emit(&b, 0, used);
	tap_ok(!b.oom && strstr(b.p, ".func (.param .b64 r) __gbpf_m_ring_wput(") &&
		       strstr(b.p, "__gbpf_m_ring_wput(") < strstr(b.p, "__gbpf_m_ring_put("),
	       "the warp-wide write is defined before m_ring_put calls it");
	tap_ok(count(b.p, "call (o), __gbpf_m_ring_wput, (x, y, w, c0, c1, c2, c3, c4, c5, c6);") == 2,
	       "ringbuf_output (from memory) and the perf record passed by value reach the warp-wide write (a ring "
	       "record by value is written in the probe: ptx_ring_emit_output_inline)");
	tap_ok(strstr(b.p, "setp.eq.u32 %q5, %b7, 32;\n@%q5 bra $Lwarp;") && count(b.p, "\n$Lww") == 8,
	       "a whole warp's group takes its own exchange, one for each record size");
	tap_ok(strstr(b.p, "st.u64 [%a12], %a11;\nbra.uni $Lwdone;\n$Lwarp:") != NULL,
	       "the general exchange ends before the whole warp's (it fell into it: records of a half warp "
	       "overwrote the next group's)");
	tap_ok(count(b.p, "shfl.sync.idx.b32 %b16, %b16, %b14, 31, %b5;") == 64,
	       "the exchange covers 8 x 8 words (records up to 64 bytes)");
	tap_ok(strstr(b.p, "bar.warp.sync %b5;\nbra.uni $Lcommit;") != NULL,
	       "the warp's stores are ordered before the headers' release");
	tap_ok(strstr(b.p, "@%q7 st.release.gpu.u32 [%a4], %b0;\n@!%q7 st.release.sys.u32 [%a4], %b0;") != NULL,
	       "the commit's scope follows the device ring's header word");
	tap_ok(strstr(b.p, "ld.u32 %b14, [%a0+116];") && count(b.p, "@!%q5 ld.acquire.sys.u64") == 2 &&
		       count(b.p, "@%q5 ld.relaxed.gpu.u64 %a") == 4 && !strstr(b.p, "ld.acquire.gpu"),
	       "the reservation reads the consumer at the ring's scope (relaxed on device copies: no L1 invalidation)");
	tap_ok(strstr(b.p, "@%q2 bra $Lgot;\nmov.u64 %a9, %a17;") != NULL &&
		       strstr(b.p, "$Lrecheck:") && strstr(b.p, "setp.eq.u64 %q2, %a24, %a10;\nsetp.eq.u64 %q3, %a25, %a9;\nand.pred %q2, %q2, %q3;\n@%q2 bra $Lfull;") &&
		       strstr(b.p, "$Lrecheck:") > strstr(b.p, "atom.cas.relaxed.gpu.b64"),
	       "a failed CAS retries with the position it returned; full only if neither position has moved");
	tap_ok(strstr(b.p, "@%q5 or.b32 %b2, %b2, 0x10000000;\n@%q6 st.v2.u32 [%a18], {%b2, %b1};") != NULL,
	       "reserve writes header and sub-ring in one store, only when asked, marked GPU scope on device copies");
	tap_ok(strstr(b.p, "and.b32 %b1, %b0, 0x10000000;\nsetp.ne.u32 %q2, %b1, 0;") &&
		       strstr(b.p, "@%q2 st.release.gpu.u32 [%a0+-8], %b0;\n@!%q2 st.release.sys.u32 [%a0+-8], %b0;"),
	       "submit and discard release at the scope reserve marked in the header");
	ptx_buf_free(&b);

	if (!ptxas_path()) {
		tap_skip("ptxas not found: the ring functions are not assembled");
		return tap_done();
	}
	for (int i = 0; i < 2; i++) {
		log[0] = 0;
		emit(&b, i, used);
		ptx_buf_puts(&b, entry);
		tap_ok(!b.oom && !ptxas_check(b.p, archs[i], log, sizeof(log)),
		       "ring output, reserve and submit assemble for %s%s%s", archs[i], log[0] ? ": " : "", log);
		ptx_buf_free(&b);
	}
	return tap_done();
}
