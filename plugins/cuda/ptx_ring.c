/* SPDX-License-Identifier: MIT */
/*
 * Ring buffers (RINGBUF 27, GPU_RINGBUF 1527) and perf event arrays (4) on
 * the device: the producer protocol of docs/MAPS.md / maps/map_ring.c in
 * PTX. A warp uses one of its SM's sub-rings (__gbpf_m_ring_sub) so that
 * reservations contend a few warps a CAS word; reservation is one bounded
 * CAS loop on producer_pos per group of lanes (below), a full sub-ring
 * counts a drop in the sub-ring and the header (never waits for the
 * consumer). Ring words use system scope (GPU scope on a ring in device
 * memory) and commit is a release store, because the consumer may be the
 * host reading while the kernel runs.
 *
 * Offsets: header 8 type, 28 nr_slots, 56 data_off, 72 aux_off, 80
 * sub_size, 96 drops; ring control 0 producer_pos, 64 consumer_pos, 72
 * drops; record word bits 31 BUSY, 30 DISCARD, 0..27 length.
 */
#include <stdio.h>

#include <gbpf/helper_ids.h>

#include "maps/map_layout.h"
#include "ptx_maps.h"

/* The PTX below reads the header's ring_gpu_consumer as [%a0+116]. */
_Static_assert(offsetof(struct gbpf_map_hdr, ring_gpu_consumer) == 116, "ring_gpu_consumer moved");

_Static_assert(GBPF_RING_BUSY == 0x80000000u && GBPF_RING_DISCARD == 0x40000000u &&
		       GBPF_RING_LEN_MASK == 268435455u && GBPF_RING_GPU_SCOPE == 0x10000000u,
	       "device record bits match the layout");
_Static_assert(sizeof(struct gbpf_ring_ctl) == 128, "device ring control stride");

/*
 * reserve len bytes on sub-ring s of ring map m (MAPS.md producer): {record data or 0, error}
 * error: -E2BIG too large (not a drop), -ENOSPC full or -EBUSY contended (both counted drops).
 * Lanes of a warp that reserve records of one size on one sub-ring at the same time reserve
 * together: the lowest lane CASes producer_pos once for all of them (a warp-wide prefix of the
 * group's records), so an SM's producers contend once per warp instead of once per thread; the
 * group's records are contiguous and never wrap (the padding rule applies to the whole group).
 * A group whose records would not fit one sub-ring reserves lane by lane. A failed group
 * reservation drops (and counts) every record of the group. The CAS is relaxed at GPU scope:
 * only GPU threads write producer_pos, and the data's publication is ordered by the commit's
 * release store, not by the reservation.
 *
 * The loop is one dependent chain per warp at kernel exit, and exits come in waves, so its latency is
 * what costs (H200, vec_add 2^20 + a 64-byte record per thread, hand-written: the stores alone 27.7
 * us, with this CAS loop as it was 46.3 us, with a plain fetch-add 27.5 us; 8 or 64 sub-rings per SM
 * made no difference, so it is the chain, not contention). Hence: positions are read once before
 * the loop; a failed CAS retries with the value it returned (the current producer_pos); the consumer
 * and producer positions are read again only when the group does not fit with the ones read before
 * (the consumer's only grows: a stale one can only make the ring look fuller), and the group drops
 * only if neither has moved (H200 kernelretsnoop: 72.4-73.3 us, was 78-80).
 * On device ring copies (header +116) the consumer position is read relaxed, not acquire: an acquire
 * load at GPU scope also invalidates the SM's L1, so the next warps' loads of the map header miss.
 * What the acquire ordered is our record stores after the forwarder's zeroing of consumed space; the
 * forwarder finishes the zeroing (stream synchronised) before it writes consumer_pos at all, and our
 * stores depend on the branch that reads it (they are not issued before its value is known).
 * A fetch-add would be cheaper still, but a full ring could not then be refused without a hole the
 * consumer cannot tell from a record not yet written.
 */
static const char m_ring_reserve_ptx[] =
	".func (.param .align 8 .b8 r[16]) __gbpf_m_ring_reserve(.param .b64 m, .param .b64 s, .param .b64 n, .param .b64 h)\n"
	"{\n.reg .b64 %a<26>;\n.reg .b32 %b<16>;\n.reg .pred %q<7>;\nld.param.b64 %a0, [m];\n"
	"ld.param.b64 %a23, [h];\nsetp.ne.u64 %q6, %a23, 0;\nld.u32 %b14, [%a0+116];\nsetp.ne.u32 %q5, %b14, 0;\n"
	"ld.param.b64 %a1, [s];\nld.param.b64 %a2, [n];\nld.u64 %a3, [%a0+56];\n"
	"add.u64 %a3, %a3, %a0;\nshl.b64 %a4, %a1, 7;\nadd.u64 %a3, %a3, %a4;\n"
	"ld.u64 %a5, [%a0+80];\nld.u64 %a6, [%a0+72];\nadd.u64 %a6, %a6, %a0;\n"
	"mul.lo.u64 %a4, %a1, %a5;\nadd.u64 %a6, %a6, %a4;\nsetp.gt.u64 %q0, %a2, 268435455;\n"
	"@%q0 bra $Lbig;\nadd.u64 %a7, %a2, 15;\nand.b64 %a7, %a7, 0xFFFFFFFFFFFFFFF8;\n"
	"setp.gt.u64 %q0, %a7, %a5;\n@%q0 bra $Lbig;\nsub.u64 %a8, %a5, 1;\n"
	/* group: same sub-ring control word, same record size; cnt %b6, rank %b8, bytes %a21 */
	"activemask.b32 %b3;\nmatch.any.sync.b64 %b4, %a3, %b3;\nmatch.any.sync.b64 %b5, %a7, %b3;\n"
	"and.b32 %b4, %b4, %b5;\npopc.b32 %b6, %b4;\nmov.u32 %b7, %lanemask_lt;\n"
	"and.b32 %b8, %b4, %b7;\npopc.b32 %b8, %b8;\ncvt.u64.u32 %a20, %b6;\n"
	"mul.lo.u64 %a21, %a20, %a7;\nsetp.le.u64 %q0, %a21, %a5;\n@%q0 bra $Lgroup;\n"
	"mov.u32 %b9, %laneid;\nshl.b32 %b4, 1, %b9;\nmov.u32 %b6, 1;\nmov.u32 %b8, 0;\n"
	"mov.u64 %a20, 1;\nmov.u64 %a21, %a7;\n$Lgroup:\nneg.s32 %b10, %b4;\n"
	"and.b32 %b10, %b10, %b4;\nbfind.u32 %b10, %b10;\nmov.u64 %a19, 0;\nmov.u64 %a22, 0;\n"
	"setp.ne.u32 %q4, %b8, 0;\n@%q4 bra $Lshare;\nmov.u32 %b0, 0;\n"
	/* the leader: one bounded CAS loop for the group's %a21 bytes (why this shape: above) */
	"@%q5 ld.relaxed.gpu.u64 %a9, [%a3];\n@!%q5 ld.relaxed.sys.u64 %a9, [%a3];\n"
	"@%q5 ld.relaxed.gpu.u64 %a10, [%a3+64];\n@!%q5 ld.acquire.sys.u64 %a10, [%a3+64];\n"
	"$Ltry:\nsetp.ge.u32 %q0, %b0, 1048576;\n@%q0 bra $Lbusy;\n"
	"and.b64 %a11, %a9, %a8;\nadd.u64 %a12, %a11, %a21;\nsub.u64 %a13, %a5, %a11;\n"
	"setp.gt.u64 %q1, %a12, %a5;\nselp.u64 %a13, %a13, 0, %q1;\nsub.u64 %a14, %a9, %a10;\n"
	"setp.gt.u64 %q2, %a14, %a5;\nadd.u64 %a15, %a14, %a13;\nadd.u64 %a15, %a15, %a21;\n"
	"setp.gt.u64 %q3, %a15, %a5;\nor.pred %q2, %q2, %q3;\n@%q2 bra $Lrecheck;\n"
	"add.u64 %a16, %a9, %a13;\nadd.u64 %a16, %a16, %a21;\n"
	"atom.cas.relaxed.gpu.b64 %a17, [%a3], %a9, %a16;\nsetp.eq.u64 %q2, %a17, %a9;\n"
	"@%q2 bra $Lgot;\nmov.u64 %a9, %a17;\nadd.u32 %b0, %b0, 1;\nbra.uni $Ltry;\n"
	/*
	 * does not fit with the positions read before: full only if neither has moved since (a stale
	 * producer_pos read before a newer consumer_pos would otherwise look like a forbidden one)
	 */
	"$Lrecheck:\n@%q5 ld.relaxed.gpu.u64 %a25, [%a3];\n@!%q5 ld.relaxed.sys.u64 %a25, [%a3];\n"
	"@%q5 ld.relaxed.gpu.u64 %a24, [%a3+64];\n@!%q5 ld.acquire.sys.u64 %a24, [%a3+64];\n"
	"setp.eq.u64 %q2, %a24, %a10;\nsetp.eq.u64 %q3, %a25, %a9;\nand.pred %q2, %q2, %q3;\n"
	"@%q2 bra $Lfull;\nmov.u64 %a10, %a24;\nmov.u64 %a9, %a25;\nadd.u32 %b0, %b0, 1;\n"
	"bra.uni $Ltry;\n$Lgot:\ncvt.u32.u64 %b1, %a1;\n"
	"add.u64 %a22, %a9, %a13;\nsetp.eq.u64 %q2, %a13, 0;\n@%q2 bra $Lshare;\n"
	"add.u64 %a18, %a6, %a11;\nst.u32 [%a18+4], %b1;\ncvt.u32.u64 %b2, %a13;\n"
	"sub.u32 %b2, %b2, 8;\nor.b32 %b2, %b2, 0x40000000;\n@%q5 st.release.gpu.u32 [%a18], %b2;\n"
	"@!%q5 st.release.sys.u32 [%a18], %b2;\n"
	"bra.uni $Lshare;\n$Lfull:\nmov.u64 %a19, -28;\nbra.uni $Ldrop;\n$Lbusy:\n"
	"mov.u64 %a19, -16;\n$Ldrop:\n@%q5 red.add.gpu.u64 [%a3+72], %a20;\n"
	"@%q5 red.add.gpu.u64 [%a0+96], %a20;\n@!%q5 red.add.sys.u64 [%a3+72], %a20;\n"
	"@!%q5 red.add.sys.u64 [%a0+96], %a20;\n"
	/* every lane of the group: the leader's outcome, then its own record */
	"$Lshare:\ncvt.u32.u64 %b11, %a22;\nshr.b64 %a23, %a22, 32;\ncvt.u32.u64 %b12, %a23;\n"
	"cvt.u32.u64 %b13, %a19;\nshfl.sync.idx.b32 %b11, %b11, %b10, 31, %b4;\n"
	"shfl.sync.idx.b32 %b12, %b12, %b10, 31, %b4;\n"
	"shfl.sync.idx.b32 %b13, %b13, %b10, 31, %b4;\ncvt.s64.s32 %a19, %b13;\n"
	"setp.ne.s64 %q0, %a19, 0;\n@%q0 bra $Lfail;\nmov.b64 %a22, {%b11, %b12};\n"
	"cvt.u64.u32 %a23, %b8;\nmul.lo.u64 %a23, %a23, %a7;\nadd.u64 %a18, %a22, %a23;\n"
	"and.b64 %a18, %a18, %a8;\nadd.u64 %a18, %a18, %a6;\ncvt.u32.u64 %b1, %a1;\n"
	"cvt.u32.u64 %b2, %a2;\nor.b32 %b2, %b2, 0x80000000;\n@%q5 or.b32 %b2, %b2, 0x10000000;\n"
	"@%q6 st.v2.u32 [%a18], {%b2, %b1};\n"
	"add.u64 %a18, %a18, 8;\nst.param.b64 [r], %a18;\n"
	"st.param.b64 [r+8], 0;\nret;\n$Lfail:\nst.param.b64 [r], 0;\nst.param.b64 [r+8], %a19;\n"
	"ret;\n$Lbig:\nst.param.b64 [r], 0;\nst.param.b64 [r+8], -7;\nret;\n}\n";

/*
 * commit a record (submit: d = 0, discard: d = 1): the release store makes the record's data
 * visible to the consumer before BUSY clears (a full fence.sc would add nothing the consumer
 * needs): system-wide, or GPU-wide for a record reserve marked GBPF_RING_GPU_SCOPE (a ring in
 * device memory, which only the GPU's forwarder reads), as the warp-wide put publishes there;
 * a release at system scope waits for every earlier store of the thread to reach the system.
 */
static const char m_ring_commit_ptx[] =
	".func __gbpf_m_ring_commit(.param .b64 p, .param .b64 d)\n{\n.reg .b64 %a<3>;\n"
	".reg .b32 %b<3>;\n.reg .pred %q<3>;\nld.param.b64 %a0, [p];\nld.param.b64 %a1, [d];\n"
	"setp.eq.u64 %q0, %a0, 0;\n@%q0 bra $Lout;\nld.relaxed.sys.u32 %b0, [%a0+-8];\n"
	"and.b32 %b1, %b0, 0x80000000;\nsetp.eq.u32 %q0, %b1, 0;\n@%q0 bra $Lout;\n"
	"and.b32 %b1, %b0, 0x10000000;\nsetp.ne.u32 %q2, %b1, 0;\n"
	"and.b32 %b0, %b0, 0x7FFFFFFF;\nsetp.ne.u64 %q1, %a1, 0;\n"
	"@%q1 or.b32 %b0, %b0, 0x40000000;\n@%q2 st.release.gpu.u32 [%a0+-8], %b0;\n"
	"@!%q2 st.release.sys.u32 [%a0+-8], %b0;\n$Lout:\nret;\n}\n";

/*
 * sub-ring of the caller: with k = nr_slots / nsmid sub-rings per SM (at least 1), the warp's
 * smid + nsmid * (v mod k), masked to the slots; -1 for a map that is no ring buffer. v is the
 * warp's index in the grid (the block's linear index times the block's warps, plus the warp's in
 * the block): the warps of a block, and of the blocks an SM holds at once, take consecutive
 * sub-rings, so one CAS word serves a few warps instead of all of an SM's, and every residue of
 * k gets its share. (%warpid, the warp's slot on the SM, can spread them unevenly: with k = 15
 * and slots 0..31 in use, residues 0 and 1 get half again their share.) The SMs' sub-rings still
 * fill unevenly, as the blocks an SM runs vary; v mod nr_slots alone fills all alike but made
 * kernelretsnoop_reserve 9% slower on the H200 (held, 143.8 vs 131 us), so the SM stays.
 */
/* %b1 = the sub-ring of ring map %a0 (above); uses %b2..%b10 */
#define RING_SUB_B1                                                                                \
	"mov.u32 %b1, %smid;\nld.u32 %b2, [%a0+28];\nmov.u32 %b3, %nsmid;\n"                           \
	"max.u32 %b3, %b3, 1;\ndiv.u32 %b4, %b2, %b3;\nmax.u32 %b4, %b4, 1;\n"                          \
	/* v = linear block * warps a block + linear thread / 32 */                                 \
	"mov.u32 %b5, %ctaid.z;\nmov.u32 %b6, %nctaid.y;\nmov.u32 %b7, %ctaid.y;\n"                  \
	"mad.lo.u32 %b5, %b5, %b6, %b7;\nmov.u32 %b6, %nctaid.x;\nmov.u32 %b7, %ctaid.x;\n"          \
	"mad.lo.u32 %b5, %b5, %b6, %b7;\nmov.u32 %b6, %ntid.x;\nmov.u32 %b7, %ntid.y;\n"             \
	"mul.lo.u32 %b8, %b6, %b7;\nmov.u32 %b9, %ntid.z;\nmul.lo.u32 %b8, %b8, %b9;\n"              \
	"add.u32 %b8, %b8, 31;\nshr.u32 %b8, %b8, 5;\nmov.u32 %b9, %tid.z;\nmov.u32 %b10, %tid.y;\n" \
	"mad.lo.u32 %b9, %b9, %b7, %b10;\nmov.u32 %b10, %tid.x;\nmad.lo.u32 %b9, %b9, %b6, %b10;\n"  \
	"shr.u32 %b9, %b9, 5;\nmad.lo.u32 %b5, %b5, %b8, %b9;\n"                                      \
	"rem.u32 %b5, %b5, %b4;\nmad.lo.u32 %b1, %b5, %b3, %b1;\nsub.u32 %b2, %b2, 1;\n"               \
	"and.b32 %b1, %b1, %b2;\n"
static const char m_ring_sub_ptx[] =
	".func (.param .b64 r) __gbpf_m_ring_sub(.param .b64 m)\n{\n.reg .b64 %a<2>;\n"
	".reg .b32 %b<12>;\n.reg .pred %q<2>;\nld.param.b64 %a0, [m];\nld.u32 %b0, [%a0+8];\n"
	"setp.ne.u32 %q0, %b0, 27;\nsetp.ne.u32 %q1, %b0, 1527;\nand.pred %q0, %q0, %q1;\n"
	"@%q0 bra $Lno;\n" RING_SUB_B1 "cvt.u64.u32 %a1, %b1;\nst.param.b64 [r], %a1;\nret;\n$Lno:\n"
	"st.param.b64 [r], -1;\nret;\n}\n";

/*
 * bpf_ringbuf_reserve: flags must be 0; NULL when full (counted), too large or not a ring buffer
 */
static const char h_ringbuf_reserve_ptx[] =
	".func (.param .b64 r) __gbpf_h_ringbuf_reserve(.param .b64 m, .param .b64 n, .param .b64 f)\n"
	"{\n.reg .b64 %a<6>;\n.reg .pred %q<2>;\nld.param.b64 %a0, [m];\nld.param.b64 %a1, [n];\n"
	"ld.param.b64 %a2, [f];\nsetp.ne.u64 %q0, %a2, 0;\n@%q0 bra $Lnull;\n{\n.param .b64 x;\n"
	".param .b64 z;\nst.param.b64 [x], %a0;\ncall (z), __gbpf_m_ring_sub, (x);\n"
	"ld.param.b64 %a3, [z];\n}\nsetp.lt.s64 %q0, %a3, 0;\n@%q0 bra $Lnull;\n{\n"
	".param .b64 x;\n.param .b64 y;\n.param .b64 z;\n.param .b64 h;\n.param .align 8 .b8 o[16];\n"
	"st.param.b64 [x], %a0;\nst.param.b64 [y], %a3;\nst.param.b64 [z], %a1;\nst.param.b64 [h], 1;\n"
	"call (o), __gbpf_m_ring_reserve, (x, y, z, h);\nld.param.b64 %a4, [o];\n}\n"
	"st.param.b64 [r], %a4;\nret;\n$Lnull:\nst.param.b64 [r], 0;\nret;\n}\n";

/*
 * bpf_ringbuf_submit / discard (the verifier guarantees p came from reserve)
 */
static const char h_ringbuf_submit_ptx[] =
	".func (.param .b64 r) __gbpf_h_ringbuf_submit(.param .b64 p, .param .b64 f)\n{\n"
	".reg .b64 %a<1>;\nld.param.b64 %a0, [p];\n{\n.param .b64 x;\n.param .b64 y;\n"
	"st.param.b64 [x], %a0;\nst.param.b64 [y], 0;\ncall __gbpf_m_ring_commit, (x, y);\n}\n"
	"st.param.b64 [r], 0;\nret;\n}\n"
	".func (.param .b64 r) __gbpf_h_ringbuf_discard(.param .b64 p, .param .b64 f)\n{\n"
	".reg .b64 %a<1>;\nld.param.b64 %a0, [p];\n{\n.param .b64 x;\n.param .b64 y;\n"
	"st.param.b64 [x], %a0;\nst.param.b64 [y], 1;\ncall __gbpf_m_ring_commit, (x, y);\n}\n"
	"st.param.b64 [r], 0;\nret;\n}\n";

/* Records of at most this many 8-byte words (header included) take the warp-wide write. */
#define RING_WPUT_MAX_WORDS PTX_RING_WARP_MAX_WORDS
#define RING_WPUT_MAX_DATA "56"
_Static_assert((RING_WPUT_MAX_WORDS - 1) * 8 == 56, "RING_WPUT_MAX_DATA matches");

/* the record's data words passed by value to __gbpf_m_ring_wput (RING_WPUT_MAX_WORDS - 1 of them) */
#define RING_WORD_PARAMS                                                                           \
	", .param .b64 w0, .param .b64 w1, .param .b64 w2, .param .b64 w3, .param .b64 w4, "      \
	".param .b64 w5, .param .b64 w6"
#define RING_WORD_ARGS_DECL                                                                        \
	".param .b64 c0;\n.param .b64 c1;\n.param .b64 c2;\n.param .b64 c3;\n.param .b64 c4;\n"      \
	".param .b64 c5;\n.param .b64 c6;\nst.param.b64 [c0], %c0;\nst.param.b64 [c1], %c1;\n"      \
	"st.param.b64 [c2], %c2;\nst.param.b64 [c3], %c3;\nst.param.b64 [c4], %c4;\n"              \
	"st.param.b64 [c5], %c5;\nst.param.b64 [c6], %c6;\n"
#define RING_WORD_ARGS ", c0, c1, c2, c3, c4, c5, c6"
_Static_assert(RING_WPUT_MAX_WORDS == 8, "one parameter per data word");
/* %c0.. = the words of the n (register N) bytes at D, 0 past n */
#define RING_LOAD_WORD(k, off, D, N)                                                               \
	"mov.u64 %c" k ", 0;\nsetp.le.u64 %q1, " N ", " off ";\n@!%q1 ld.u64 %c" k ", [" D "+" off "];\n"
#define RING_LOAD_WORDS(D, N)                                                                      \
	RING_LOAD_WORD("0", "0", D, N) RING_LOAD_WORD("1", "8", D, N) RING_LOAD_WORD("2", "16", D, N)  \
	RING_LOAD_WORD("3", "24", D, N) RING_LOAD_WORD("4", "32", D, N)                              \
	RING_LOAD_WORD("5", "40", D, N) RING_LOAD_WORD("6", "48", D, N)

/*
 * reserve + copy + submit on sub-ring s; returns 0 or the reservation's error. Whole 8-byte words
 * from an 8-aligned source (the common case: a struct on the probe's stack) go through
 * __gbpf_m_ring_wput, the rest through reserve + copy + commit.
 */
static const char m_ring_put_ptx[] =
	".func (.param .b64 r) __gbpf_m_ring_put(.param .b64 m, .param .b64 s, .param .b64 d, .param .b64 n)\n"
	"{\n.reg .b64 %a<8>;\n.reg .b64 %c<7>;\n.reg .pred %q<2>;\nld.param.b64 %a0, [m];\nld.param.b64 %a1, [s];\n"
	"ld.param.b64 %a2, [d];\nld.param.b64 %a3, [n];\n"
	/* whole words from an aligned source, at most RING_WPUT_MAX_WORDS: the warp writes them */
	"or.b64 %a6, %a2, %a3;\nand.b64 %a6, %a6, 7;\nsetp.ne.u64 %q0, %a6, 0;\n"
	"setp.eq.u64 %q1, %a3, 0;\nor.pred %q0, %q0, %q1;\nsetp.gt.u64 %q1, %a3, " RING_WPUT_MAX_DATA ";\n"
	"or.pred %q0, %q0, %q1;\n@%q0 bra $Lone;\n"
	RING_LOAD_WORDS("%a2", "%a3")
	"{\n.param .b64 x;\n.param .b64 y;\n.param .b64 w;\n.param .b64 o;\n" RING_WORD_ARGS_DECL
	"st.param.b64 [x], %a0;\nst.param.b64 [y], %a1;\nst.param.b64 [w], %a3;\n"
	"call (o), __gbpf_m_ring_wput, (x, y, w" RING_WORD_ARGS ");\n"
	"ld.param.b64 %a5, [o];\n}\nst.param.b64 [r], %a5;\nret;\n$Lone:\n{\n.param .b64 x;\n.param .b64 y;\n"
	".param .b64 z;\n.param .b64 h;\n.param .align 8 .b8 o[16];\nst.param.b64 [x], %a0;\n"
	"st.param.b64 [y], %a1;\nst.param.b64 [z], %a3;\nst.param.b64 [h], 1;\n"
	"call (o), __gbpf_m_ring_reserve, (x, y, z, h);\nld.param.b64 %a4, [o];\n"
	"ld.param.b64 %a5, [o+8];\n}\nsetp.eq.u64 %q0, %a4, 0;\n@%q0 bra $Lerr;\n{\n"
	".param .b64 x;\n.param .b64 y;\n.param .b64 z;\nst.param.b64 [x], %a4;\n"
	"st.param.b64 [y], %a2;\nst.param.b64 [z], %a3;\ncall __gbpf_h_copy, (x, y, z);\n}\n{\n"
	".param .b64 x;\n.param .b64 y;\nst.param.b64 [x], %a4;\nst.param.b64 [y], 0;\n"
	"call __gbpf_m_ring_commit, (x, y);\n}\nst.param.b64 [r], 0;\nret;\n$Lerr:\n"
	"st.param.b64 [r], %a5;\nret;\n}\n";

/*
 * Text the output helpers below share (a record from memory through __gbpf_m_ring_put, or by
 * value through __gbpf_m_ring_wput; a ring buffer or a perf array's ring).
 */
/* %a5 = the caller's sub-ring of ring map %a0; not a ring: $Linval */
#define RING_SUB_A5                                                                                \
	"{\n.param .b64 x;\n.param .b64 z;\nst.param.b64 [x], %a0;\ncall (z), __gbpf_m_ring_sub, (x);\n" \
	"ld.param.b64 %a5, [z];\n}\nsetp.lt.s64 %q0, %a5, 0;\n@%q0 bra $Linval;\n"
/*
 * %a4 = the ring of perf array %a0 that flags %a1 pick (BPF_F_CURRENT_CPU: the SM's); not a
 * perf array: $Linval, out of range: $Lbig
 */
#define PERF_RING_A4                                                                               \
	"ld.u32 %b0, [%a0+8];\nsetp.ne.u32 %q0, %b0, 4;\n@%q0 bra $Linval;\n"                       \
	"ld.u32 %b1, [%a0+28];\ncvt.u32.u64 %b2, %a1;\nsetp.ne.u32 %q0, %b2, 0xFFFFFFFF;\n"          \
	"@%q0 bra $Lidx;\nmov.u32 %b2, %smid;\nrem.u32 %b2, %b2, %b1;\n$Lidx:\n"                     \
	"setp.ge.u32 %q0, %b2, %b1;\n@%q0 bra $Lbig;\ncvt.u64.u32 %a4, %b2;\n"
/* __gbpf_m_ring_put(%a0, RING, %a2 data, %a3 bytes) into %a6 */
#define RING_PUT_A6(RING)                                                                          \
	"{\n.param .b64 x;\n.param .b64 y;\n.param .b64 z;\n.param .b64 w;\n.param .b64 o;\n"        \
	"st.param.b64 [x], %a0;\nst.param.b64 [y], " RING ";\nst.param.b64 [z], %a2;\n"              \
	"st.param.b64 [w], %a3;\ncall (o), __gbpf_m_ring_put, (x, y, z, w);\nld.param.b64 %a6, [o];\n}\n"
/* the words w0.. of a by-value helper's parameters into %c0.. */
#define RING_WORDS_FROM_PARAMS                                                                     \
	"ld.param.b64 %c0, [w0];\nld.param.b64 %c1, [w1];\nld.param.b64 %c2, [w2];\n"                \
	"ld.param.b64 %c3, [w3];\nld.param.b64 %c4, [w4];\nld.param.b64 %c5, [w5];\nld.param.b64 %c6, [w6];\n"
/* __gbpf_m_ring_wput(%a0, RING, %a3 bytes, %c0..) into %a6 */
#define RING_WPUT_A6(RING)                                                                         \
	"{\n.param .b64 x;\n.param .b64 y;\n.param .b64 w;\n.param .b64 o;\n" RING_WORD_ARGS_DECL    \
	"st.param.b64 [x], %a0;\nst.param.b64 [y], " RING ";\nst.param.b64 [w], %a3;\n"              \
	"call (o), __gbpf_m_ring_wput, (x, y, w" RING_WORD_ARGS ");\nld.param.b64 %a6, [o];\n}\n"
/* return %a6: 0 and -E2BIG as they are, any other failure (a counted drop) as FULL */
#define RING_RESULT_A6(FULL)                                                                       \
	"setp.eq.u64 %q0, %a6, 0;\nsetp.eq.s64 %q1, %a6, -7;\nor.pred %q0, %q0, %q1;\n"              \
	"@!%q0 mov.u64 %a6, " FULL ";\nst.param.b64 [r], %a6;\nret;\n"
#define RING_INVAL "$Linval:\nst.param.b64 [r], -22;\nret;\n}\n"
#define PERF_BIG_INVAL "$Lbig:\nst.param.b64 [r], -7;\nret;\n" RING_INVAL

/*
 * ringbuf_output: -EINVAL for flags other than the wakeup bits or a map that is no ring buffer;
 * -E2BIG too large; -EAGAIN full (a counted drop), as the host helper
 */
static const char h_ringbuf_output_ptx[] =
	".func (.param .b64 r) __gbpf_h_ringbuf_output(.param .b64 m, .param .b64 d, .param .b64 n, .param .b64 f)\n"
	"{\n.reg .b64 %a<8>;\n.reg .pred %q<2>;\nld.param.b64 %a0, [m];\nld.param.b64 %a2, [d];\n"
	"ld.param.b64 %a3, [n];\nld.param.b64 %a1, [f];\nand.b64 %a4, %a1, 0xFFFFFFFFFFFFFFFC;\n"
	"setp.ne.u64 %q0, %a4, 0;\n@%q0 bra $Linval;\n" RING_SUB_A5 RING_PUT_A6("%a5") RING_RESULT_A6("-11")
	RING_INVAL;

/*
 * perf_event_output(ctx, map, flags, data, size): ring = flags & 0xffffffff, BPF_F_CURRENT_CPU =
 * the caller's SM (mod the rings); out of range -E2BIG; full -ENOSPC (counted drop)
 */
static const char h_perf_event_output_ptx[] =
	".func (.param .b64 r) __gbpf_h_perf_event_output(.param .b64 c, .param .b64 m, .param .b64 f, .param .b64 d, .param .b64 n)\n"
	"{\n.reg .b64 %a<8>;\n.reg .b32 %b<4>;\n.reg .pred %q<2>;\nld.param.b64 %a0, [m];\n"
	"ld.param.b64 %a1, [f];\nld.param.b64 %a2, [d];\nld.param.b64 %a3, [n];\n" PERF_RING_A4
	RING_PUT_A6("%a4") RING_RESULT_A6("-28") PERF_BIG_INVAL;

/*
 * perf_event_output of a record the code generator passes by value (ptx_perf_output_by_value: a
 * perf event array, n a multiple of 8 of at most RING_WPUT_MAX_DATA); the ring from the flags as
 * __gbpf_h_perf_event_output picks it, with its results.
 */
static const char h_perf_outv_ptx[] =
	".func (.param .b64 r) __gbpf_h_perf_outv(.param .b64 m, .param .b64 f, .param .b64 n" RING_WORD_PARAMS ")\n"
	"{\n.reg .b64 %a<8>;\n.reg .b64 %c<7>;\n.reg .b32 %b<4>;\n.reg .pred %q<2>;\nld.param.b64 %a0, [m];\n"
	"ld.param.b64 %a1, [f];\nld.param.b64 %a3, [n];\n" RING_WORDS_FROM_PARAMS PERF_RING_A4
	RING_WPUT_A6("%a4") RING_RESULT_A6("-28") PERF_BIG_INVAL;

/* %y registers emit_ring_wput_warp uses: the words, two rotations of 3 stages, the rounds */
#define RING_WARP_REGS "64"

static unsigned gcd_u(unsigned a, unsigned b)
{
	while (b) {
		unsigned t = a % b;

		a = b;
		b = t;
	}
	return a;
}

/*
 * Why the plan works: with c = gcd(32, W) and a = 32 / c, lane L's stores need words
 * p = 32 i + L (i < W) of the block, word p mod W of lane p / W. p / W / a = i c / W does not
 * depend on L, so after the pre-rotation (lane r sends word (j + r / a) mod W in round j)
 * store i's word arrives in round j = (p - i c / W) mod W = (pi(i) + L) mod W: exactly one
 * word a round, from lane (32 pinv((j - L) mod W) + L) / W, and the post-rotation by L mod W
 * puts round pi(i)'s word in place i. With W odd (c = 1) there is no pre-rotation.
 */
void ptx_ring_warp_plan(unsigned words, struct ptx_ring_warp_plan *plan)
{
	unsigned c = gcd_u(32, words);

	plan->words = words;
	plan->pre_rotate = c;
	plan->pre_shift = 0;
	while ((1u << plan->pre_shift) < 32 / c)
		plan->pre_shift++;
	for (unsigned i = 0; i < words; i++) {
		plan->pi[i] = (32 * i - i * c / words) % words;
		plan->pinv[plan->pi[i]] = i;
	}
}

/*
 * %y[out + x] = %y[in + (x + R) mod w] for x < w, R (below @limit <= w) in register @amount: a
 * rotation by a lane-dependent amount, as a barrel of selects (one stage per bit of R). Returns
 * the first register of the result.
 */
static unsigned emit_rotate(struct ptx_buf *b, unsigned w, unsigned limit, unsigned in, unsigned next,
			    const char *amount)
{
	for (unsigned bit = 1; bit < limit; bit <<= 1) {
		ptx_buf_printf(b, "and.b32 %%b28, %s, %u;\nsetp.ne.u32 %%q6, %%b28, 0;\n", amount, bit);
		for (unsigned x = 0; x < w; x++)
			ptx_buf_printf(b, "selp.b64 %%y%u, %%y%u, %%y%u, %%q6;\n", next + x, in + (x + bit) % w, in + x);
		in = next;
		next += w;
	}
	return in;
}

/*
 * The block write of a whole warp (32 lanes, lane = rank, words %v0..%v{W-1}, lane id in %b18,
 * block at %a8; uses %y, %b16..%b24, %q6, %a12): block word k = word k mod W of lane k / W, and
 * store i of lane L writes word 32 i + L, so each store is 32 consecutive words. Instead of
 * shuffling all W words per store (the general path), each lane receives one word per round, W
 * rounds of one shuffle each, with a rotation of the lane's own registers by a lane-dependent
 * amount around them (ptx_ring_warp_plan; the plan is checked against the definition lane by
 * lane in tests/cuda/test_ptx_ring_plan.c, the PTX by test_cuda_maps on the GPU). Per lane: W
 * shuffle pairs and up to 6 W selects, where the general path takes 2 W^2 shuffle pairs (W = 7:
 * 7 pairs instead of 49). The shuffles name the whole warp as an immediate: with a mask in a
 * register ptxas checks at every shuffle that the lanes it names are the ones converged (a
 * match, a reduction and a vote, session 26's SASS).
 */
void ptx_ring_emit_warp_block(struct ptx_buf *b, unsigned w)
{
	struct ptx_ring_warp_plan plan;
	unsigned table = 0, words = 0, next = w;

	ptx_ring_warp_plan(w, &plan);
	for (unsigned j = 0; j < w; j++)
		table |= plan.pinv[j] << (4 * j);
	for (unsigned x = 0; x < w; x++)
		ptx_buf_printf(b, "mov.b64 %%y%u, %%v%u;\n", x, x);
	if (plan.pre_rotate > 1) {
		ptx_buf_printf(b, "shr.u32 %%b19, %%b18, %u;\n", plan.pre_shift);
		words = emit_rotate(b, w, plan.pre_rotate, 0, next, "%b19");
		next = words + w;
	}
	/* %b21 = L mod W, %b22 = W - L mod W, %b24 = pinv, 4 bits an entry */
	ptx_buf_printf(b, "rem.u32 %%b21, %%b18, %u;\nsub.u32 %%b22, %u, %%b21;\nmov.u32 %%b24, %u;\n", w, w, table);
	for (unsigned j = 0; j < w; j++)
		ptx_buf_printf(b, "add.u32 %%b23, %%b22, %u;\nsetp.ge.u32 %%q6, %%b23, %u;\n"
				  "@%%q6 sub.u32 %%b23, %%b23, %u;\nshl.b32 %%b23, %%b23, 2;\n"
				  "shr.u32 %%b23, %%b24, %%b23;\nand.b32 %%b23, %%b23, 15;\n"
				  "shl.b32 %%b23, %%b23, 5;\nadd.u32 %%b23, %%b23, %%b18;\n"
				  "div.u32 %%b23, %%b23, %u;\nmov.b64 {%%b16, %%b17}, %%y%u;\n"
				  "shfl.sync.idx.b32 %%b16, %%b16, %%b23, 31, 0xFFFFFFFF;\n"
				  "shfl.sync.idx.b32 %%b17, %%b17, %%b23, 31, 0xFFFFFFFF;\nmov.b64 %%y%u, {%%b16, %%b17};\n",
			       j, w, w, w, words + j, next + j);
	words = emit_rotate(b, w, w, next, next + w, "%b21");
	ptx_buf_puts(b, "cvt.u64.u32 %a12, %b18;\nshl.b64 %a12, %a12, 3;\nadd.u64 %a12, %a12, %a8;\n");
	for (unsigned i = 0; i < w; i++)
		ptx_buf_printf(b, "st.u64 [%%a12+%u], %%y%u;\n", 256 * i, words + plan.pi[i]);
}

/* __gbpf_m_ring_wput's whole-warp groups: the block write for the group's record size */
static void emit_ring_wput_warp(struct ptx_buf *b)
{
	/* the general path above ends here: it must not fall into the warp's code */
	ptx_buf_puts(b, "bra.uni $Lwdone;\n$Lwarp:\nmov.u32 %b18, %laneid;\n");
	for (unsigned w = 1; w <= RING_WPUT_MAX_WORDS; w++)
		ptx_buf_printf(b, "setp.eq.u32 %%q1, %%b3, %u;\n@%%q1 bra $Lww%u;\n", w, w);
	ptx_buf_puts(b, "bra.uni $Lwdone;\n");
	for (unsigned w = 1; w <= RING_WPUT_MAX_WORDS; w++) {
		ptx_buf_printf(b, "$Lww%u:\n", w);
		ptx_ring_emit_warp_block(b, w);
		ptx_buf_puts(b, "bra.uni $Lwdone;\n");
	}
}

/*
 * __gbpf_m_ring_wput(m, s, n, w0, .. w6): ringbuf_output of n bytes (a multiple of 8, at most
 * RING_WPUT_MAX_DATA), words w0.. by value (those past n are ignored), on sub-ring s; returns 0
 * or the reservation's error. By value, so that a record the probe builds on its stack stays in
 * registers (__gbpf_h_perf_outv); __gbpf_m_ring_put loads them from memory first.
 *
 * Why: a warp's records are reserved as one contiguous block (m_ring_reserve), but written lane
 * by lane they are 32 stores 56 bytes apart per instruction, each a partial 32-byte sector:
 * the L2 serves ~8x more sector writes than the bytes need (measured on the H200: 1 M
 * 56-byte records written that way cost 78 us over the kernel, the ring protocol itself ~10 us).
 * Here each lane holds its record's W words (header included) in registers, the block's
 * words are exchanged with shuffles (word k of the block = word k % W of rank k / W) and each
 * instruction stores cnt consecutive words: every sector is written whole, once. Then
 * bar.warp.sync orders every lane's stores before each lane's release of its own header (the
 * release is cumulative over what the barrier made visible to it). A group whose block is not
 * contiguous (lanes reserved apart) writes lane by lane. Scope: gpu when the ring is the
 * device copy the forwarder reads (header +116 set by the agent), sys otherwise.
 * A whole warp's group (the common case: every thread of a warp leaving a kernel) takes
 * emit_ring_wput_warp's exchange instead of the general one below, which shuffles every word of
 * every source lane for each word stored (2 W^2 shuffles a lane).
 */
static void emit_ring_wput(struct ptx_buf *b)
{
	int i, j;

	ptx_buf_puts(b, ".func (.param .b64 r) __gbpf_m_ring_wput(.param .b64 m, .param .b64 s, "
			".param .b64 n" RING_WORD_PARAMS ")\n{\n.reg .b64 %a<16>;\n.reg .b64 %v<8>;\n"
			".reg .b64 %y<" RING_WARP_REGS ">;\n.reg .b32 %b<32>;\n.reg .pred %q<8>;\nld.param.b64 %a0, [m];\n"
			"ld.param.b64 %a1, [s];\nld.param.b64 %a3, [n];\n{\n"
			".param .b64 x;\n.param .b64 y;\n.param .b64 z;\n.param .b64 h;\n"
			".param .align 8 .b8 o[16];\nst.param.b64 [x], %a0;\nst.param.b64 [y], %a1;\n"
			"st.param.b64 [z], %a3;\nst.param.b64 [h], 0;\n"
			"call (o), __gbpf_m_ring_reserve, (x, y, z, h);\nld.param.b64 %a4, [o];\n"
			"ld.param.b64 %a5, [o+8];\n}\nsetp.eq.u64 %q0, %a4, 0;\n@%q0 bra $Lerr;\n"
			"ld.u32 %b20, [%a0+116];\nsetp.ne.u32 %q7, %b20, 0;\nsub.u64 %a4, %a4, 8;\n"
			"cvt.u32.u64 %b0, %a3;\nor.b32 %b1, %b0, 0x80000000;\ncvt.u32.u64 %b2, %a1;\n"
			"mov.b64 %v0, {%b1, %b2};\nshr.u32 %b3, %b0, 3;\nadd.u32 %b3, %b3, 1;\n");
	/* the record's words: %v0 the header (BUSY | n, sub-ring), %v1.. the data (w0..) */
	for (j = 1; j < RING_WPUT_MAX_WORDS; j++)
		ptx_buf_printf(b, "ld.param.b64 %%v%d, [w%d];\n", j, j - 1);
	/* group G (%b5): same sub-ring and size; cnt %b7, rank %b8, leader %b9; contiguous block? */
	ptx_buf_puts(b, "activemask.b32 %b4;\nmatch.any.sync.b64 %b5, %a1, %b4;\n"
			"match.any.sync.b64 %b6, %a3, %b4;\nand.b32 %b5, %b5, %b6;\npopc.b32 %b7, %b5;\n"
			"mov.u32 %b8, %lanemask_lt;\nand.b32 %b8, %b8, %b5;\npopc.b32 %b8, %b8;\n"
			"neg.s32 %b9, %b5;\nand.b32 %b9, %b9, %b5;\nbfind.u32 %b9, %b9;\n"
			"cvt.u64.u32 %a6, %b5;\nshr.b64 %a6, %a6, %b9;\nadd.u64 %a6, %a6, 1;\n"
			"mov.u64 %a7, 1;\nshl.b64 %a7, %a7, %b7;\nsetp.eq.u64 %q2, %a6, %a7;\n"
			"mov.b64 {%b10, %b11}, %a4;\nshfl.sync.idx.b32 %b10, %b10, %b9, 31, %b5;\n"
			"shfl.sync.idx.b32 %b11, %b11, %b9, 31, %b5;\nmov.b64 %a8, {%b10, %b11};\n"
			"cvt.u64.u32 %a9, %b8;\nadd.u64 %a10, %a3, 8;\nmul.lo.u64 %a9, %a9, %a10;\n"
			"add.u64 %a9, %a9, %a8;\nsetp.eq.u64 %q3, %a9, %a4;\nand.pred %q2, %q2, %q3;\n"
			"vote.sync.all.pred %q2, %q2, %b5;\n@!%q2 bra $Lself;\n"
			"setp.eq.u32 %q5, %b7, 32;\n@%q5 bra $Lwarp;\n"
			/* k / W as (k * ceil(2^16 / W)) >> 16: exact for k < 256, W <= 8 */
			"mov.u32 %b12, 65535;\ndiv.u32 %b12, %b12, %b3;\nadd.u32 %b12, %b12, 1;\n");
	for (i = 0; i < RING_WPUT_MAX_WORDS; i++) {
		ptx_buf_printf(b, "setp.le.u32 %%q1, %%b3, %d;\n@%%q1 bra $Lwdone;\n"
				  "mad.lo.u32 %%b13, %%b7, %d, %%b8;\nmul.lo.u32 %%b14, %%b13, %%b12;\n"
				  "shr.u32 %%b14, %%b14, 16;\nmul.lo.u32 %%b15, %%b14, %%b3;\n"
				  "sub.u32 %%b15, %%b13, %%b15;\nadd.u32 %%b14, %%b14, %%b9;\nmov.u64 %%a11, 0;\n",
			       i, i);
		for (j = 0; j < RING_WPUT_MAX_WORDS; j++)
			ptx_buf_printf(b, "setp.le.u32 %%q1, %%b3, %d;\n@%%q1 bra $Lsw%d;\n"
					  "mov.b64 {%%b16, %%b17}, %%v%d;\n"
					  "shfl.sync.idx.b32 %%b16, %%b16, %%b14, 31, %%b5;\n"
					  "shfl.sync.idx.b32 %%b17, %%b17, %%b14, 31, %%b5;\n"
					  "setp.eq.u32 %%q4, %%b15, %d;\n@%%q4 mov.b64 %%a11, {%%b16, %%b17};\n",
				       j, i, j, j);
		ptx_buf_printf(b, "$Lsw%d:\ncvt.u64.u32 %%a12, %%b13;\nshl.b64 %%a12, %%a12, 3;\n"
				  "add.u64 %%a12, %%a12, %%a8;\nst.u64 [%%a12], %%a11;\n",
			       i);
	}
	emit_ring_wput_warp(b);
	ptx_buf_puts(b, "$Lwdone:\nbar.warp.sync %b5;\nbra.uni $Lcommit;\n$Lself:\n"
			"st.v2.u32 [%a4], {%b1, %b2};\n");
	for (j = 1; j < RING_WPUT_MAX_WORDS; j++)
		ptx_buf_printf(b, "setp.le.u32 %%q1, %%b3, %d;\n@!%%q1 st.u64 [%%a4+%d], %%v%d;\n", j, j * 8, j);
	ptx_buf_puts(b, "$Lcommit:\n@%q7 st.release.gpu.u32 [%a4], %b0;\n"
			"@!%q7 st.release.sys.u32 [%a4], %b0;\nst.param.b64 [r], 0;\nret;\n$Lerr:\n"
			"st.param.b64 [r], %a5;\nret;\n}\n");
}

/* ptx_ring_emit_output_inline's %a7 = the data of sub-ring %b1 of map %a0 (size %a1; %a9 clobbered), a printf format */
#define RING_INLINE_DATA_A7                                                                        \
	"ld.u64 %%a7, [%%a0+72];\nadd.u64 %%a7, %%a7, %%a0;\ncvt.u64.u32 %%a9, %%b1;\n"                      \
	"mul.lo.u64 %%a9, %%a9, %%a1;\nadd.u64 %%a7, %%a7, %%a9;\n"

/*
 * bpf_ringbuf_output of @words data words in %t0.. on ring map @map_reg, emitted in the probe
 * (where ptx_ringbuf_output_by_value allows it): the protocol of __gbpf_m_ring_sub,
 * __gbpf_m_ring_reserve and __gbpf_m_ring_wput with what the call site fixes folded in. The
 * lanes at one call site share the ring, its sub-ring and the record size, so the group is the
 * active mask, with no match; the record's size is a constant, so only its own block write is
 * emitted, not one for each size the function dispatches over at run time. And nothing is
 * called: a called function's registers count for the kernel that calls it, and
 * __gbpf_m_ring_wput's (61 with kernelretsnoop's vector add, ptxas -v) left 4 blocks of 256
 * threads an SM, where the kernel's records cost ~25% more with 3 and ~60% more with 2 (H200,
 * session 26: VECADD_SMEM capping the blocks). Results: 0, -E2BIG (a record larger than a
 * sub-ring), -EAGAIN (full or contended: counted drops), as the helper's.
 */
void ptx_ring_emit_output_inline(struct ptx_buf *b, const char *map_reg, unsigned words, unsigned id,
				 size_t prog_idx)
{
	unsigned n = words * 8, rec = n + 8;
	char l[32]; /* the labels' suffix */

	snprintf(l, sizeof(l), "%u_%zu", id, prog_idx);
	ptx_buf_printf(b, "{\n.reg .b64 %%a<16>;\n.reg .b32 %%b<32>;\n.reg .pred %%q<8>;\n"
			  ".reg .b64 %%y<" RING_WARP_REGS ">;\n.reg .b64 %%v<%u>;\nmov.b64 %%a0, %s;\n",
		       PTX_RING_WARP_MAX_WORDS, map_reg);
	/* the sub-ring %b1, its size %a1 (a record larger: -E2BIG), scope %q5 */
	ptx_buf_puts(b, RING_SUB_B1);
	ptx_buf_printf(b, "ld.u64 %%a1, [%%a0+80];\nsetp.lt.u64 %%q0, %%a1, %u;\n@%%q0 bra $Lob%s;\n"
			  "ld.u32 %%b11, [%%a0+116];\nsetp.ne.u32 %%q5, %%b11, 0;\n",
		       rec, l);
	/*
	 * group %b5: the active lanes, %a13 bytes (more than a sub-ring holds: each lane alone); its
	 * lowest lane reserves. Count, rank and leader are computed again where they are used, not
	 * kept: the reservation is where the most values are live (the record's words among them).
	 */
	ptx_buf_printf(b, "activemask.b32 %%b5;\npopc.b32 %%b6, %%b5;\nmul.wide.u32 %%a13, %%b6, %u;\n"
			  "setp.le.u64 %%q0, %%a13, %%a1;\n@%%q0 bra $Log%s;\nmov.u32 %%b9, %%laneid;\n"
			  "shl.b32 %%b5, 1, %%b9;\nmov.u64 %%a13, %u;\n$Log%s:\nmov.u64 %%a14, 0;\nmov.u32 %%b10, 0;\n"
			  "mov.u32 %%b7, %%lanemask_lt;\nand.b32 %%b7, %%b7, %%b5;\nsetp.ne.u32 %%q0, %%b7, 0;\n"
			  "@%%q0 bra $Los%s;\n",
		       rec, l, rec, l, l);
	/*
	 * the leader: __gbpf_m_ring_reserve's CAS loop for the group (why this shape: there), control
	 * words %a2. Two things keep values from living out of the loop: the outcome's register %b10
	 * counts the tries until there is an outcome, and a padding record is placed at size - pad,
	 * not at the loop's offset. Together they make kernelretsnoop's vector add 40 registers (6
	 * blocks of 256 an SM) instead of 44 (5); either alone changed nothing (ptxas -v, sm_90).
	 */
	ptx_buf_printf(b, "ld.u64 %%a2, [%%a0+56];\nadd.u64 %%a2, %%a2, %%a0;\nmul.wide.u32 %%a3, %%b1, 128;\n"
			  "add.u64 %%a2, %%a2, %%a3;\n@%%q5 ld.relaxed.gpu.u64 %%a3, [%%a2];\n"
			  "@!%%q5 ld.relaxed.sys.u64 %%a3, [%%a2];\n@%%q5 ld.relaxed.gpu.u64 %%a4, [%%a2+64];\n"
			  "@!%%q5 ld.acquire.sys.u64 %%a4, [%%a2+64];\n$Lot%s:\n"
			  "setp.ge.u32 %%q0, %%b10, 1048576;\n@%%q0 bra $Lou%s;\nsub.u64 %%a8, %%a1, 1;\n"
			  "and.b64 %%a5, %%a3, %%a8;\nadd.u64 %%a7, %%a5, %%a13;\nsub.u64 %%a6, %%a1, %%a5;\n"
			  "setp.gt.u64 %%q1, %%a7, %%a1;\nselp.u64 %%a6, %%a6, 0, %%q1;\nsub.u64 %%a7, %%a3, %%a4;\n"
			  "setp.gt.u64 %%q2, %%a7, %%a1;\nadd.u64 %%a7, %%a7, %%a6;\nadd.u64 %%a7, %%a7, %%a13;\n"
			  "setp.gt.u64 %%q3, %%a7, %%a1;\nor.pred %%q2, %%q2, %%q3;\n@%%q2 bra $Lor%s;\n"
			  "add.u64 %%a9, %%a3, %%a6;\nadd.u64 %%a9, %%a9, %%a13;\n"
			  "atom.cas.relaxed.gpu.b64 %%a10, [%%a2], %%a3, %%a9;\nsetp.eq.u64 %%q2, %%a10, %%a3;\n"
			  "@%%q2 bra $Lok%s;\nmov.u64 %%a3, %%a10;\nadd.u32 %%b10, %%b10, 1;\nbra.uni $Lot%s;\n",
		       l, l, l, l, l);
	/*
	 * does not fit with the positions read before: full only if neither has moved since. The
	 * consumer's is read again first (it may have freed room); the producer's then by a CAS
	 * that writes what it expects (one value live at a time, not both pairs: 2 registers less)
	 */
	ptx_buf_printf(b, "$Lor%s:\n@%%q5 ld.relaxed.gpu.u64 %%a9, [%%a2+64];\n@!%%q5 ld.acquire.sys.u64 %%a9, [%%a2+64];\n"
			  "setp.ne.u64 %%q2, %%a9, %%a4;\nmov.u64 %%a4, %%a9;\nadd.u32 %%b10, %%b10, 1;\n"
			  "@%%q2 bra $Lot%s;\natom.cas.relaxed.gpu.b64 %%a10, [%%a2], %%a3, %%a3;\n"
			  "setp.eq.u64 %%q2, %%a10, %%a3;\n@%%q2 bra $Lof%s;\nmov.u64 %%a3, %%a10;\nbra.uni $Lot%s;\n",
		       l, l, l, l);
	/* reserved: the group's first record %a14; padding to the sub-ring's end is a discarded record */
	ptx_buf_printf(b, "$Lok%s:\nmov.u32 %%b10, 0;\nadd.u64 %%a14, %%a3, %%a6;\nsetp.eq.u64 %%q2, %%a6, 0;\n@%%q2 bra $Los%s;\n"
			  RING_INLINE_DATA_A7 "sub.u64 %%a5, %%a1, %%a6;\n"
			  "add.u64 %%a7, %%a7, %%a5;\nst.u32 [%%a7+4], %%b1;\ncvt.u32.u64 %%b12, %%a6;\nsub.u32 %%b12, %%b12, 8;\n"
			  "or.b32 %%b12, %%b12, 0x40000000;\n@%%q5 st.release.gpu.u32 [%%a7], %%b12;\n"
			  "@!%%q5 st.release.sys.u32 [%%a7], %%b12;\nbra.uni $Los%s;\n"
			  "$Lof%s:\nmov.u32 %%b10, -28;\nbra.uni $Lod%s;\n$Lou%s:\nmov.u32 %%b10, -16;\n"
			  "$Lod%s:\npopc.b32 %%b6, %%b5;\ncvt.u64.u32 %%a7, %%b6;\n@%%q5 red.add.gpu.u64 [%%a2+72], %%a7;\n"
			  "@%%q5 red.add.gpu.u64 [%%a0+96], %%a7;\n@!%%q5 red.add.sys.u64 [%%a2+72], %%a7;\n"
			  "@!%%q5 red.add.sys.u64 [%%a0+96], %%a7;\n",
		       l, l, l, l, l, l, l);
	/* every lane: the leader's (%b9) outcome, then its record at the block %a8 + rank %b7 * rec (%a15) */
	ptx_buf_printf(b, "$Los%s:\nneg.s32 %%b9, %%b5;\nand.b32 %%b9, %%b9, %%b5;\nbfind.u32 %%b9, %%b9;\n"
			  "shfl.sync.idx.b32 %%b10, %%b10, %%b9, 31, %%b5;\n"
			  "mov.b64 {%%b12, %%b13}, %%a14;\nshfl.sync.idx.b32 %%b12, %%b12, %%b9, 31, %%b5;\n"
			  "shfl.sync.idx.b32 %%b13, %%b13, %%b9, 31, %%b5;\nmov.b64 %%a14, {%%b12, %%b13};\n"
			  "setp.ne.u32 %%q0, %%b10, 0;\n@%%q0 bra $Loe%s;\n"
			  RING_INLINE_DATA_A7 "sub.u64 %%a9, %%a1, 1;\n"
			  "and.b64 %%a8, %%a14, %%a9;\nadd.u64 %%a8, %%a8, %%a7;\nmov.u32 %%b7, %%lanemask_lt;\n"
			  "and.b32 %%b7, %%b7, %%b5;\npopc.b32 %%b7, %%b7;\nmul.wide.u32 %%a15, %%b7, %u;\n"
			  "add.u64 %%a15, %%a15, %%a8;\nmov.u32 %%b2, %u;\nmov.b64 %%v0, {%%b2, %%b1};\n",
		       l, l, rec, 0x80000000u | n);
	for (unsigned k = 0; k < words; k++)
		ptx_buf_printf(b, "mov.b64 %%v%u, %%t%u;\n", k + 1, k);
	/* a whole warp: the block write; else lane by lane (each lane's record is contiguous) */
	ptx_buf_printf(b, "setp.ne.u32 %%q0, %%b5, -1;\n@%%q0 bra $Lol%s;\nmov.u32 %%b18, %%laneid;\n", l);
	ptx_ring_emit_warp_block(b, words + 1);
	ptx_buf_printf(b, "bra.uni $Loc%s;\n$Lol%s:\n", l, l);
	for (unsigned k = 0; k <= words; k++)
		ptx_buf_printf(b, "st.u64 [%%a15+%u], %%v%u;\n", 8 * k, k);
	/* the release of each header orders every lane's stores the barrier made visible to it (__gbpf_m_ring_wput) */
	ptx_buf_printf(b, "$Loc%s:\nbar.warp.sync %%b5;\nmov.u32 %%b2, %u;\n@%%q5 st.release.gpu.u32 [%%a15], %%b2;\n"
			  "@!%%q5 st.release.sys.u32 [%%a15], %%b2;\nmov.u64 %%r0, 0;\nbra.uni $Lox%s;\n"
			  "$Loe%s:\nmov.u64 %%r0, -11;\nbra.uni $Lox%s;\n$Lob%s:\nmov.u64 %%r0, -7;\n$Lox%s:\n}\n",
		       l, n, l, l, l, l, l);
}

void ptx_ring_emit(struct ptx_buf *b, const uint8_t *used)
{
	static const char *const parts[] = {m_ring_reserve_ptx,
					    m_ring_commit_ptx,
					    m_ring_sub_ptx,
					    h_ringbuf_reserve_ptx,
					    h_ringbuf_submit_ptx,
					    m_ring_put_ptx,
					    h_ringbuf_output_ptx,
					    h_perf_outv_ptx,
					    h_perf_event_output_ptx};
	size_t i;

	if (!used[GBPF_HELPER_RINGBUF_OUTPUT] && !used[GBPF_HELPER_RINGBUF_RESERVE] &&
	    !used[GBPF_HELPER_RINGBUF_SUBMIT] && !used[GBPF_HELPER_RINGBUF_DISCARD] &&
	    !used[GBPF_HELPER_PERF_EVENT_OUTPUT])
		return;
	for (i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		ptx_buf_puts(b, parts[i]);
		if (parts[i] == m_ring_reserve_ptx)
			emit_ring_wput(b); /* defined before m_ring_put calls it */
	}
}
