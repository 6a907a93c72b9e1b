/* SPDX-License-Identifier: MIT */
/*
 * Hash maps on the device (HASH 1, PERCPU_HASH 5, LRU_HASH 9, GPU_HASH 1501):
 * the algorithm of docs/MAPS.md and maps/map_hash.c, step for step, in PTX.
 * Open addressing over the fixed table of maps/map_layout.h; bucket state
 * words claimed with CAS; writers of one home bucket serialised by its lock
 * word; readers lock-free with a seqlock-style re-check of the state word.
 * Only device threads write a map while a kernel runs (the host copies it
 * back afterwards), so .gpu scope is enough for every atomic here.
 *
 * Register conventions inside these functions: %a 64-bit, %b 32-bit, %q
 * predicates; map header offsets as in struct gbpf_map_hdr (8 type, 16
 * key_size, 20 value_size, 24 max_entries, 28 nr_slots, 32 value_stride,
 * 36 key_stride, 40 nr_buckets, 44 bucket_size, 56 data_off, 72 aux_off, 88 count,
 * 96 drops, 104 clock). The lock bound 4194304 is GBPF_HASH_LOCK_SPINS.
 */
#include "maps/map_layout.h"
#include "ptx_maps.h"

_Static_assert(GBPF_HASH_LOCK_SPINS == 4194304u, "device lock bound matches the layout");
_Static_assert(GBPF_LRU_WINDOW == 64u, "device LRU window matches the layout");
_Static_assert(GBPF_HASH_BUCKET_HDR == 16u, "device bucket header (key at +16) matches the layout");
_Static_assert(GBPF_MAP_PLANE_ALIGN == 128u, "device per-slot planes (127, 0x...80) match the layout");

/*
 * hash of key bytes k[0..n) (map_layout.h); byte loads: key alignment unknown
 */
static const char m_hkey_ptx[] =
	".func (.param .b64 r) __gbpf_m_hkey(.param .b64 k, .param .b64 n)\n{\n.reg .b64 %a<9>;\n"
	".reg .b32 %b<2>;\n.reg .pred %q<3>;\nld.param.b64 %a0, [k];\nld.param.b64 %a1, [n];\n"
	"xor.b64 %a2, %a1, 0x9E3779B97F4A7C15;\nmov.u64 %a3, 0;\n$Lw:\n"
	"setp.ge.u64 %q0, %a3, %a1;\n@%q0 bra $Lfin;\nmov.u64 %a4, 0;\nmov.u32 %b0, 0;\n$Lb:\n"
	"add.u64 %a6, %a0, %a3;\nld.u8 %a7, [%a6];\nshl.b64 %a7, %a7, %b0;\n"
	"or.b64 %a4, %a4, %a7;\nadd.u64 %a3, %a3, 1;\nadd.u32 %b0, %b0, 8;\n"
	"setp.lt.u64 %q1, %a3, %a1;\nsetp.lt.u32 %q2, %b0, 64;\nand.pred %q1, %q1, %q2;\n"
	"@%q1 bra $Lb;\nxor.b64 %a2, %a2, %a4;\nmul.lo.u64 %a2, %a2, 0xFF51AFD7ED558CCD;\n"
	"shr.b64 %a8, %a2, 32;\nxor.b64 %a2, %a2, %a8;\nbra.uni $Lw;\n$Lfin:\n"
	"shr.b64 %a8, %a2, 33;\nxor.b64 %a2, %a2, %a8;\n"
	"mul.lo.u64 %a2, %a2, 0xC4CEB9FE1A85EC53;\nshr.b64 %a8, %a2, 33;\n"
	"xor.b64 %a2, %a2, %a8;\nst.param.b64 [r], %a2;\nret;\n}\n";

/*
 * probe run of key k (hash h) from its home: {bucket index or -1, state word, first free or -1}
 * Header fields are loaded in every step rather than held: this function is the deepest of the
 * slow paths, so each register it holds is one more for every kernel that looks up (the update
 * below says why), and the loads hit L1 after the first step.
 */
static const char m_hprobe_ptx[] =
	".func (.param .align 8 .b8 r[24]) __gbpf_m_hprobe(.param .b64 m, .param .b64 k, .param .b64 h)\n"
	"{\n.reg .b64 %a<8>;\n.reg .b32 %b<10>;\n.reg .pred %q<4>;\nld.param.b64 %a0, [m];\n"
	"ld.param.b64 %a1, [k];\nld.param.b64 %a2, [h];\nmov.u32 %b3, -1;\nmov.u32 %b4, 0;\n"
	"$Ll:\nld.u32 %b0, [%a0+40];\nsetp.ge.u32 %q0, %b4, %b0;\n@%q0 bra $Lmiss;\n"
	"cvt.u32.u64 %b5, %a2;\nadd.u32 %b5, %b5, %b4;\nsub.u32 %b0, %b0, 1;\nand.b32 %b5, %b5, %b0;\n"
	"ld.u32 %b1, [%a0+44];\nmul.wide.u32 %a4, %b5, %b1;\nld.u64 %a3, [%a0+56];\n"
	"add.u64 %a4, %a4, %a3;\nadd.u64 %a4, %a4, %a0;\nld.acquire.gpu.u32 %b6, [%a4];\nand.b32 %b7, %b6, 3;\n"
	"setp.eq.u32 %q1, %b7, 0;\nsetp.eq.u32 %q2, %b7, 3;\nor.pred %q2, %q1, %q2;\n"
	"@!%q2 bra $Lready;\nsetp.eq.u32 %q3, %b3, -1;\n@%q3 mov.u32 %b3, %b5;\n"
	"@%q1 bra $Lmiss;\nbra.uni $Lnext;\n$Lready:\nsetp.ne.u32 %q1, %b7, 2;\n"
	"@%q1 bra $Lnext;\nld.relaxed.gpu.u64 %a5, [%a4+8];\nsetp.ne.u64 %q1, %a5, %a2;\n"
	"@%q1 bra $Lnext;\nld.u32 %b2, [%a0+16];\nmov.u32 %b8, 0;\n"
	/* an 8-byte aligned key of whole words (the common case) compares a word at a time */
	"cvt.u32.u64 %b9, %a1;\nor.b32 %b9, %b9, %b2;\nand.b32 %b9, %b9, 7;\nsetp.ne.u32 %q1, %b9, 0;\n"
	"@%q1 bra $Lc;\n$Lc8:\nsetp.ge.u32 %q1, %b8, %b2;\n@%q1 bra $Leq;\ncvt.u64.u32 %a6, %b8;\n"
	"add.u64 %a7, %a4, %a6;\nld.u64 %a5, [%a7+16];\nadd.u64 %a7, %a1, %a6;\nld.u64 %a6, [%a7];\n"
	"setp.ne.u64 %q1, %a5, %a6;\n@%q1 bra $Lnext;\nadd.u32 %b8, %b8, 8;\nbra $Lc8;\n"
	"$Lc:\nsetp.ge.u32 %q1, %b8, %b2;\n@%q1 bra $Leq;\n"
	"cvt.u64.u32 %a6, %b8;\nadd.u64 %a7, %a4, %a6;\nld.u8 %b9, [%a7+16];\n"
	"add.u64 %a7, %a1, %a6;\nld.u8 %b7, [%a7];\nsetp.ne.u32 %q1, %b9, %b7;\n"
	"@%q1 bra $Lnext;\nadd.u32 %b8, %b8, 1;\nbra.uni $Lc;\n$Leq:\nfence.acq_rel.gpu;\n"
	"ld.relaxed.gpu.u32 %b9, [%a4];\nsetp.ne.u32 %q1, %b9, %b6;\n@%q1 bra $Lnext;\n"
	"cvt.u64.u32 %a6, %b5;\nst.param.b64 [r], %a6;\ncvt.u64.u32 %a6, %b6;\n"
	"st.param.b64 [r+8], %a6;\ncvt.s64.s32 %a6, %b3;\nst.param.b64 [r+16], %a6;\nret;\n$Lnext:\n"
	"add.u32 %b4, %b4, 1;\nbra.uni $Ll;\n$Lmiss:\nst.param.b64 [r], -1;\n"
	"st.param.b64 [r+8], 0;\ncvt.s64.s32 %a6, %b3;\nst.param.b64 [r+16], %a6;\nret;\n}\n";

/*
 * address of bucket b's value for the caller (map_layout.h: every hash keeps
 * its values in planes), aux_off + slot * plane + b * value_stride, the plane
 * nr_buckets values rounded up to GBPF_MAP_PLANE_ALIGN (128) bytes; PERCPU_HASH
 * uses the SM's plane, slot = min(smid, nr_slots - 1) as the inlined lookup
 * (ptx_maps.c), and any other hash has one slot, so the same formula gives 0
 */
static const char m_hval_ptx[] =
	".func (.param .b64 r) __gbpf_m_hval(.param .b64 m, .param .b64 b)\n{\n.reg .b64 %a<6>;\n"
	".reg .b32 %b<6>;\nld.param.b64 %a0, [m];\nld.param.b64 %a1, [b];\n"
	"cvt.u32.u64 %b1, %a1;\n"
	"mov.u32 %b4, %smid;\nld.u32 %b5, [%a0+28];\nmax.u32 %b5, %b5, 1;\nsub.u32 %b5, %b5, 1;\nmin.u32 %b4, %b4, %b5;\n"
	"ld.u32 %b5, [%a0+40];\nld.u32 %b2, [%a0+32];\nmul.wide.u32 %a4, %b5, %b2;\nadd.u64 %a4, %a4, 127;\n"
	"and.b64 %a4, %a4, 0xFFFFFFFFFFFFFF80;\ncvt.u64.u32 %a3, %b4;\nmul.lo.u64 %a3, %a3, %a4;\n"
	"mul.wide.u32 %a4, %b1, %b2;\nadd.u64 %a3, %a3, %a4;\n"
	"ld.u64 %a2, [%a0+72];\nadd.u64 %a2, %a2, %a0;\nadd.u64 %a2, %a2, %a3;\n"
	"st.param.b64 [r], %a2;\nret;\n}\n";

/*
 * lookup (lock-free) of key k with hash h: probe, LRU: last_use = clock; the value copy of the caller
 */
static const char m_hash_lookup_h_ptx[] =
	".func (.param .b64 r) __gbpf_m_hash_lookup_h(.param .b64 m, .param .b64 k, .param .b64 h)\n{\n"
	".local .align 8 .b8 fr[16];\n.reg .b64 %a<8>;\n.reg .b32 %b<2>;\n.reg .pred %q<2>;\n"
	"ld.param.b64 %a0, [m];\nld.param.b64 %a1, [k];\nld.param.b64 %a3, [h];\n"
	"st.local.u64 [fr], %a0;\n{\n"
	".param .b64 x;\n.param .b64 y;\n.param .b64 z;\n.param .align 8 .b8 o[24];\n"
	"st.param.b64 [x], %a0;\nst.param.b64 [y], %a1;\nst.param.b64 [z], %a3;\n"
	"call (o), __gbpf_m_hprobe, (x, y, z);\nld.param.b64 %a4, [o];\n}\n"
	"setp.lt.s64 %q0, %a4, 0;\n@%q0 bra $Lnone;\nst.local.u64 [fr+8], %a4;\n"
	"ld.local.u64 %a0, [fr];\n{\n.param .b64 x;\n.param .b64 y;\n"
	".param .b64 z;\nst.param.b64 [x], %a0;\nst.param.b64 [y], %a4;\n"
	"call (z), __gbpf_m_hval, (x, y);\nld.param.b64 %a5, [z];\n}\n"
	"ld.local.u64 %a0, [fr];\nld.u32 %b0, [%a0+8];\nsetp.ne.u32 %q0, %b0, 9;\n@%q0 bra $Lout;\n"
	"ld.local.u64 %a4, [fr+8];\nld.u32 %b1, [%a0+44];\n"
	"ld.u64 %a6, [%a0+56];\nadd.u64 %a6, %a6, %a0;\ncvt.u32.u64 %b0, %a4;\n"
	"mul.wide.u32 %a7, %b0, %b1;\nadd.u64 %a6, %a6, %a7;\n"
	"cvt.u64.u32 %a4, %b1;\nadd.u64 %a6, %a6, %a4;\nadd.u64 %a6, %a6, -8;\n"
	"ld.relaxed.gpu.u64 %a7, [%a0+104];\nst.relaxed.gpu.u64 [%a6], %a7;\n"
	"$Lout:\nst.param.b64 [r], %a5;\nret;\n$Lnone:\n"
	"st.param.b64 [r], 0;\nret;\n}\n";

/*
 * lookup of key k, once per warp and key: lanes that look up keys of one hash in one map at the
 * same time form a group whose lowest lane looks up for all; the others take its answer when
 * their key bytes equal the leader's (shuffled 4 bytes at a time), else (a hash collision) look
 * up themselves. Counters keyed by kernel, site or access kind are looked up by whole warps
 * with one key, so this turns 32 probe runs into one; lanes with distinct keys pay only the
 * grouping (two match instructions).
 */
static const char m_hash_lookup_ptx[] =
	".func (.param .b64 r) __gbpf_m_hash_lookup(.param .b64 m, .param .b64 k)\n{\n"
	".local .align 8 .b8 fr[32];\n.reg .b64 %a<8>;\n.reg .b32 %b<16>;\n.reg .pred %q<4>;\n"
	"ld.param.b64 %a0, [m];\nld.param.b64 %a1, [k];\nst.local.u64 [fr], %a0;\nst.local.u64 [fr+8], %a1;\n"
	"ld.u32 %b0, [%a0+16];\ncvt.u64.u32 %a2, %b0;\n{\n"
	".param .b64 x;\n.param .b64 y;\n.param .b64 z;\nst.param.b64 [x], %a1;\n"
	"st.param.b64 [y], %a2;\ncall (z), __gbpf_m_hkey, (x, y);\nld.param.b64 %a3, [z];\n}\n"
	"ld.local.u64 %a0, [fr];\n"
	"activemask.b32 %b1;\nmatch.any.sync.b64 %b2, %a0, %b1;\nmatch.any.sync.b64 %b3, %a3, %b1;\n"
	"and.b32 %b2, %b2, %b3;\nneg.s32 %b4, %b2;\nand.b32 %b4, %b4, %b2;\nbfind.u32 %b4, %b4;\n"
	"st.local.u64 [fr+16], %a3;\nst.local.v2.u32 [fr+24], {%b2, %b4};\n"
	"mov.u32 %b5, %laneid;\nsetp.eq.u32 %q0, %b4, %b5;\nmov.u64 %a4, 0;\n@!%q0 bra $Lshare;\n"
	"ld.local.u64 %a1, [fr+8];\n"
	"$Lself:\n{\n.param .b64 x;\n.param .b64 y;\n.param .b64 z;\n.param .b64 w;\n"
	"st.param.b64 [x], %a0;\nst.param.b64 [y], %a1;\nst.param.b64 [z], %a3;\n"
	"call (w), __gbpf_m_hash_lookup_h, (x, y, z);\nld.param.b64 %a4, [w];\n}\n"
	"ld.local.v2.u32 {%b2, %b4}, [fr+24];\nmov.u32 %b5, %laneid;\nsetp.eq.u32 %q0, %b4, %b5;\n"
	"@!%q0 bra $Lout;\npopc.b32 %b6, %b2;\nsetp.eq.u32 %q1, %b6, 1;\n@%q1 bra $Lout;\n"
	/* the group: the leader's answer, and whether my key is the leader's */
	"$Lshare:\nld.local.u64 %a1, [fr+8];\nld.local.u64 %a0, [fr];\nld.u32 %b0, [%a0+16];\n"
	"cvt.u32.u64 %b7, %a4;\nshr.b64 %a5, %a4, 32;\ncvt.u32.u64 %b8, %a5;\n"
	"shfl.sync.idx.b32 %b7, %b7, %b4, 31, %b2;\nshfl.sync.idx.b32 %b8, %b8, %b4, 31, %b2;\n"
	"mov.b64 %a6, {%b7, %b8};\nmov.u32 %b9, 0;\nmov.u32 %b10, 0;\n$Lword:\n"
	"setp.ge.u32 %q1, %b9, %b0;\n@%q1 bra $Lcmp;\nmov.u32 %b11, 0;\nmov.u32 %b12, 0;\n$Lbyte:\n"
	"add.u32 %b13, %b9, %b12;\nsetp.ge.u32 %q2, %b13, %b0;\n@%q2 bra $Lwdone;\n"
	"cvt.u64.u32 %a7, %b13;\nadd.u64 %a7, %a7, %a1;\nld.u8 %b14, [%a7];\nshl.b32 %b15, %b12, 3;\n"
	"shl.b32 %b14, %b14, %b15;\nor.b32 %b11, %b11, %b14;\nadd.u32 %b12, %b12, 1;\n"
	"setp.lt.u32 %q2, %b12, 4;\n@%q2 bra $Lbyte;\n$Lwdone:\n"
	"shfl.sync.idx.b32 %b14, %b11, %b4, 31, %b2;\nsetp.ne.u32 %q2, %b14, %b11;\n"
	"selp.u32 %b14, 1, 0, %q2;\nor.b32 %b10, %b10, %b14;\nadd.u32 %b9, %b9, 4;\nbra.uni $Lword;\n"
	"$Lcmp:\nsetp.eq.u32 %q1, %b4, %b5;\n@%q1 bra $Lout;\nmov.u64 %a4, %a6;\n"
	"setp.ne.u32 %q1, %b10, 0;\n@%q1 bra $Lcoll;\nbra.uni $Lout;\n$Lcoll:\n"
	"ld.local.u64 %a3, [fr+16];\nmov.pred %q0, 0;\n"
	"bra.uni $Lself;\n$Lout:\nst.param.b64 [r], %a4;\nret;\n}\n";

/*
 * lookup of key k whose hash h the caller computed inline (a 4-byte aligned key of whole 4-byte
 * words, in a map the code generator knew): __gbpf_m_hash_lookup without the hash call, and the group's
 * key comparison 4 bytes at a time
 */
static const char m_hash_lookup_kh_ptx[] =
	".func (.param .b64 r) __gbpf_m_hash_lookup_kh(.param .b64 m, .param .b64 k, .param .b64 h)\n{\n"
	".local .align 8 .b8 fr[32];\n.reg .b64 %a<8>;\n.reg .b32 %b<16>;\n.reg .pred %q<4>;\n"
	"ld.param.b64 %a0, [m];\nld.param.b64 %a1, [k];\nld.param.b64 %a3, [h];\n"
	"activemask.b32 %b1;\nmatch.any.sync.b64 %b2, %a0, %b1;\nmatch.any.sync.b64 %b3, %a3, %b1;\n"
	"and.b32 %b2, %b2, %b3;\nneg.s32 %b4, %b2;\nand.b32 %b4, %b4, %b2;\nbfind.u32 %b4, %b4;\n"
	"st.local.u64 [fr], %a0;\nst.local.u64 [fr+8], %a1;\nst.local.u64 [fr+16], %a3;\n"
	"st.local.v2.u32 [fr+24], {%b2, %b4};\n"
	"mov.u32 %b5, %laneid;\nsetp.eq.u32 %q0, %b4, %b5;\nmov.u64 %a4, 0;\n@!%q0 bra $Lshare;\n"
	"$Lself:\n{\n.param .b64 x;\n.param .b64 y;\n.param .b64 z;\n.param .b64 w;\n"
	"st.param.b64 [x], %a0;\nst.param.b64 [y], %a1;\nst.param.b64 [z], %a3;\n"
	"call (w), __gbpf_m_hash_lookup_h, (x, y, z);\nld.param.b64 %a4, [w];\n}\n"
	"ld.local.v2.u32 {%b2, %b4}, [fr+24];\nmov.u32 %b5, %laneid;\nsetp.eq.u32 %q0, %b4, %b5;\n"
	"@!%q0 bra $Lout;\npopc.b32 %b6, %b2;\nsetp.eq.u32 %q1, %b6, 1;\n@%q1 bra $Lout;\n"
	"ld.local.u64 %a1, [fr+8];\nld.local.u64 %a0, [fr];\n"
	"$Lshare:\ncvt.u32.u64 %b7, %a4;\nshr.b64 %a5, %a4, 32;\ncvt.u32.u64 %b8, %a5;\n"
	"shfl.sync.idx.b32 %b7, %b7, %b4, 31, %b2;\nshfl.sync.idx.b32 %b8, %b8, %b4, 31, %b2;\n"
	"mov.b64 %a6, {%b7, %b8};\nld.u32 %b0, [%a0+16];\nmov.u32 %b9, 0;\nmov.u32 %b10, 0;\n$Lword:\n"
	"setp.ge.u32 %q1, %b9, %b0;\n@%q1 bra $Lcmp;\ncvt.u64.u32 %a7, %b9;\nadd.u64 %a7, %a7, %a1;\n"
	"ld.u32 %b11, [%a7];\nshfl.sync.idx.b32 %b14, %b11, %b4, 31, %b2;\nsetp.ne.u32 %q2, %b14, %b11;\n"
	"selp.u32 %b14, 1, 0, %q2;\nor.b32 %b10, %b10, %b14;\nadd.u32 %b9, %b9, 4;\nbra.uni $Lword;\n"
	"$Lcmp:\nsetp.eq.u32 %q1, %b4, %b5;\n@%q1 bra $Lout;\nmov.u64 %a4, %a6;\n"
	"setp.ne.u32 %q1, %b10, 0;\n@%q1 bra $Lcoll;\nbra.uni $Lout;\n$Lcoll:\n"
	"ld.local.u64 %a0, [fr];\nld.local.u64 %a3, [fr+16];\nmov.pred %q0, 0;\n"
	"bra.uni $Lself;\n$Lout:\nst.param.b64 [r], %a4;\nret;\n}\n";

/*
 * LRU eviction (MAPS.md): victim = least last_use among 64 buckets from home (whole table if none);
 * its home lock is only tried, never waited for; up to 8 candidates skipped. 0, -ENOENT or -EBUSY.
 * The victim's place in the entry count is not given back: it is the caller's reservation
 * (maps/map_hash.c lru_evict says why: given back, another writer's failed reservation, counted
 * for a moment, could make the caller give up, and the map would end a kernel short of full).
 */
static const char m_lru_evict_ptx[] =
	".func (.param .b64 r) __gbpf_m_lru_evict(.param .b64 m, .param .b64 h)\n{\n"
	".local .align 4 .b8 sk[32];\n.reg .b64 %a<16>;\n.reg .b32 %b<20>;\n.reg .pred %q<6>;\n"
	"ld.param.b64 %a0, [m];\nld.param.b64 %a1, [h];\ncvt.u32.u64 %b0, %a1;\n"
	"ld.u32 %b1, [%a0+40];\nsub.u32 %b2, %b1, 1;\nld.u32 %b3, [%a0+44];\n"
	"ld.u64 %a2, [%a0+56];\nadd.u64 %a2, %a2, %a0;\nmov.u64 %a3, sk;\nmov.u32 %b4, 0;\n"
	"cvt.u64.u32 %a11, %b3;\nadd.u64 %a11, %a11, -8;\n"
	"$Latt:\nsetp.ge.u32 %q0, %b4, 8;\n@%q0 bra $Lbusy;\nmin.u32 %b5, %b1, 64;\n"
	"mov.u64 %a4, -1;\nmov.u64 %a5, 0xFFFFFFFFFFFFFFFF;\nmov.u32 %b6, 0;\n$Lpass:\n"
	"mov.u32 %b7, 0;\n$Lscan:\nsetp.ge.u32 %q0, %b7, %b5;\n@%q0 bra $Lpend;\n"
	"add.u32 %b8, %b0, %b7;\nand.b32 %b8, %b8, %b2;\nmul.wide.u32 %a6, %b8, %b3;\n"
	"add.u64 %a6, %a6, %a2;\nld.acquire.gpu.u32 %b9, [%a6];\nand.b32 %b10, %b9, 3;\n"
	"setp.ne.u32 %q1, %b10, 2;\n@%q1 bra $Lsnext;\nmov.u32 %b11, 0;\n$Lsk:\n"
	"setp.ge.u32 %q1, %b11, %b4;\n@%q1 bra $Lnos;\nmul.wide.u32 %a7, %b11, 4;\n"
	"add.u64 %a7, %a7, %a3;\nld.local.u32 %b12, [%a7];\nsetp.eq.u32 %q2, %b12, %b8;\n"
	"@%q2 bra $Lsnext;\nadd.u32 %b11, %b11, 1;\nbra.uni $Lsk;\n$Lnos:\n"
	"add.u64 %a7, %a6, %a11;\nld.relaxed.gpu.u64 %a8, [%a7];\nsetp.lt.u64 %q2, %a8, %a5;\n@!%q2 bra $Lsnext;\n"
	"mov.u64 %a5, %a8;\ncvt.u64.u32 %a4, %b8;\nmov.u32 %b6, %b9;\n$Lsnext:\n"
	"add.u32 %b7, %b7, 1;\nbra.uni $Lscan;\n$Lpend:\nsetp.ge.s64 %q0, %a4, 0;\n"
	"@%q0 bra $Lfound;\nsetp.eq.u32 %q0, %b5, %b1;\n@%q0 bra $Lnoent;\nmov.u32 %b5, %b1;\n"
	"bra.uni $Lpass;\n$Lfound:\ncvt.u32.u64 %b8, %a4;\nmul.wide.u32 %a6, %b8, %b3;\n"
	"add.u64 %a6, %a6, %a2;\nld.relaxed.gpu.u64 %a9, [%a6+8];\ncvt.u32.u64 %b13, %a9;\n"
	"and.b32 %b13, %b13, %b2;\nsetp.eq.u32 %q3, %b13, %b0;\nmul.wide.u32 %a10, %b13, %b3;\n"
	"add.u64 %a10, %a10, %a2;\n@%q3 bra $Lown;\n"
	"atom.cas.acquire.gpu.b32 %b14, [%a10+4], 0, 1;\nsetp.ne.u32 %q4, %b14, 0;\n"
	"@%q4 bra $Lskip;\n$Lown:\nor.b32 %b15, %b6, 3;\n"
	"atom.cas.acq_rel.gpu.b32 %b16, [%a6], %b6, %b15;\nsetp.eq.u32 %q5, %b16, %b6;\n"
	"@!%q3 st.release.gpu.u32 [%a10+4], 0;\n"
	"@%q5 bra $Lok;\n$Lskip:\nmul.wide.u32 %a7, %b4, 4;\nadd.u64 %a7, %a7, %a3;\n"
	"st.local.u32 [%a7], %b8;\nadd.u32 %b4, %b4, 1;\nbra.uni $Latt;\n$Lok:\n"
	"st.param.b64 [r], 0;\nret;\n$Lnoent:\nst.param.b64 [r], -2;\nret;\n$Lbusy:\n"
	"st.param.b64 [r], -16;\nret;\n}\n";

/*
 * update (MAPS.md): under the key's home lock (taken inside a bounded loop, -EBUSY after
 * GBPF_HASH_LOCK_SPINS), find the key, else reserve a count and claim a free bucket by CAS.
 *
 * Registers: ptxas allocates a kernel's registers for its whole call graph, so the values this
 * function keeps live across a call add to what the kernel that calls it needs at every site,
 * slow path or not. Everything needed after a call therefore waits in the frame fr (0 m, 8 k,
 * 16 v, 24 flags, 32 hash, 40 lock word address, 48 bucket, 52 the claimed state word or 0,
 * 56 eviction tries, 60 lock spins) and header fields are loaded again; zeroing and the LRU tick
 * are inline.
 */
/*
 * The signature (printf: the function's name) and first loads of __gbpf_m_hash_update and
 * __gbpf_m_hash_update_nl. The flags are BPF_ANY, BPF_NOEXIST or BPF_EXIST: __gbpf_h_map_update
 * checked them, and the _nl update is called only with such a constant (ptx_update_is_plain_hash).
 * An early return for -EINVAL here, never taken, cost the vector add of mem_count 4 registers.
 */
static const char m_hash_update_sig_ptx[] =
	"(.param .b64 r) %s(.param .b64 m, .param .b64 k, .param .b64 v, .param .b64 f)\n"
	"{\n.local .align 8 .b8 fr[64];\n.reg .b64 %%a<16>;\n.reg .b32 %%b<20>;\n.reg .pred %%q<4>;\n"
	"ld.param.b64 %%a0, [m];\nld.param.b64 %%a1, [k];\nld.param.b64 %%a2, [v];\nld.param.b64 %%a3, [f];\n";

static const char m_hash_update_ptx[] =
	"st.local.u64 [fr], %a0;\nst.local.u64 [fr+8], %a1;\nst.local.u64 [fr+16], %a2;\n"
	"st.local.u64 [fr+24], %a3;\nst.local.u32 [fr+56], 0;\n"
	"ld.u32 %b0, [%a0+16];\ncvt.u64.u32 %a5, %b0;\n{\n.param .b64 x;\n.param .b64 y;\n"
	".param .b64 z;\nst.param.b64 [x], %a1;\nst.param.b64 [y], %a5;\n"
	"call (z), __gbpf_m_hkey, (x, y);\nld.param.b64 %a4, [z];\n}\n"
	"st.local.u64 [fr+32], %a4;\nld.local.u64 %a0, [fr];\n"
	"ld.u32 %b1, [%a0+40];\nsub.u32 %b2, %b1, 1;\ncvt.u32.u64 %b3, %a4;\nand.b32 %b3, %b3, %b2;\n"
	"ld.u64 %a5, [%a0+56];\nadd.u64 %a5, %a5, %a0;\nld.u32 %b4, [%a0+44];\n"
	"mul.wide.u32 %a6, %b3, %b4;\nadd.u64 %a6, %a6, %a5;\nadd.u64 %a6, %a6, 4;\n"
	"st.local.u64 [fr+40], %a6;\nmov.u64 %a7, -16;\nmov.u32 %b5, 0;\n"
	"ld.local.u64 %a3, [fr+24];\nsetp.eq.u64 %q0, %a3, 1;\n@%q0 bra $Lnx;\n"
	"$Llock:\nld.relaxed.gpu.u32 %b6, [%a6];\n"
	"setp.ne.u32 %q0, %b6, 0;\n@%q0 bra $Lspin;\natom.cas.acquire.gpu.b32 %b6, [%a6], 0, 1;\n"
	"setp.eq.u32 %q0, %b6, 0;\n@%q0 bra $Lcs;\n$Lspin:\nadd.u32 %b5, %b5, 1;\n"
	"setp.ge.u32 %q0, %b5, 4194304;\n@%q0 bra $Ldone;\n"
	"ld.local.u64 %a3, [fr+24];\nsetp.ne.u64 %q0, %a3, 1;\n@%q0 bra $Llock;\n"
	/*
	 * BPF_NOEXIST looks lock-free before taking the lock and again while waiting for it: in the
	 * first launch of a counter probe every thread misses the empty map at once and asks to
	 * insert the same key. Taking the lock only to learn -EEXIST made them pass it on one by
	 * one (mem_count's first launch 7.2 s on the H200). Spins wait in the frame across the call.
	 */
	"$Lnx:\nst.local.u32 [fr+60], %b5;\nld.local.u64 %a1, [fr+8];\n{\n"
	".param .b64 x;\n.param .b64 y;\n.param .b64 z;\n.param .align 8 .b8 o[24];\n"
	"st.param.b64 [x], %a0;\nst.param.b64 [y], %a1;\nst.param.b64 [z], %a4;\n"
	"call (o), __gbpf_m_hprobe, (x, y, z);\nld.param.b64 %a8, [o];\n}\n"
	"mov.u64 %a7, -17;\nsetp.ge.s64 %q0, %a8, 0;\n@%q0 bra $Ldone;\nmov.u64 %a7, -16;\n"
	"ld.local.u64 %a0, [fr];\nld.local.u64 %a4, [fr+32];\nld.local.u64 %a6, [fr+40];\n"
	"ld.local.u32 %b5, [fr+60];\nbra.uni $Llock;\n"
	"$Lcs:\nld.local.u64 %a1, [fr+8];\n{\n"
	".param .b64 x;\n.param .b64 y;\n.param .b64 z;\n.param .align 8 .b8 o[24];\n"
	"st.param.b64 [x], %a0;\nst.param.b64 [y], %a1;\nst.param.b64 [z], %a4;\n"
	"call (o), __gbpf_m_hprobe, (x, y, z);\nld.param.b64 %a8, [o];\n"
	"ld.param.b64 %a10, [o+16];\n}\nld.local.u64 %a0, [fr];\nld.local.u64 %a3, [fr+24];\n"
	"setp.lt.s64 %q0, %a8, 0;\n@%q0 bra $Labsent;\nmov.u64 %a7, -17;\n"
	"setp.eq.u64 %q0, %a3, 1;\n@%q0 bra $Lunlock;\ncvt.u32.u64 %b8, %a8;\n"
	"st.local.v2.u32 [fr+48], {%b8, 0};\nbra.uni $Lwrite;\n"
	"$Labsent:\nmov.u64 %a7, -2;\nsetp.eq.u64 %q0, %a3, 2;\n@%q0 bra $Lunlock;\n"
	"cvt.u32.u64 %b8, %a10;\nst.local.u32 [fr+48], %b8;\n"
	"$Lres:\nld.local.u64 %a0, [fr];\nld.u32 %b9, [%a0+24];\ncvt.u64.u32 %a11, %b9;\n"
	"atom.add.acq_rel.gpu.u64 %a12, [%a0+88], 1;\nsetp.lt.u64 %q0, %a12, %a11;\n"
	"@%q0 bra $Lclaim;\nred.add.u64 [%a0+88], 0xFFFFFFFFFFFFFFFF;\n"
	"ld.u32 %b10, [%a0+8];\nld.local.u32 %b11, [fr+56];\n"
	"setp.ne.u32 %q1, %b10, 9;\nsetp.ge.u32 %q2, %b11, 8;\nor.pred %q1, %q1, %q2;\n"
	"@%q1 bra $Lbig;\n";

/*
 * LRU_HASH, the map full: evict and take the victim's reservation (at most 8 evictions).
 * __gbpf_m_hash_update_nl, for maps the code generator knows are not LRU, leaves it out: the
 * eviction's registers on top of what the update keeps live across its call are the deepest
 * part of the update's call graph, and a kernel that calls the update pays for all of it at
 * every site (mem_count's vector add, its lookup's long run inline: 43 registers with the generic
 * update, 32 with this one).
 */
static const char m_hash_update_evict_ptx[] =
	"add.u32 %b11, %b11, 1;\nst.local.u32 [fr+56], %b11;\n"
	"ld.local.u64 %a4, [fr+32];\nld.u32 %b1, [%a0+40];\nsub.u32 %b2, %b1, 1;\n"
	"cvt.u32.u64 %b3, %a4;\nand.b32 %b3, %b3, %b2;\ncvt.u64.u32 %a13, %b3;\n"
	"{\n.param .b64 x;\n.param .b64 y;\n.param .b64 z;\n"
	"st.param.b64 [x], %a0;\nst.param.b64 [y], %a13;\n"
	"call (z), __gbpf_m_lru_evict, (x, y);\nld.param.b64 %a12, [z];\n}\n"
	/* an eviction is the reservation (its count passes to this insert) */
	"setp.eq.u64 %q0, %a12, 0;\n@%q0 ld.local.u64 %a0, [fr];\n@%q0 bra $Lclaim;\nbra.uni $Lres;\n";

static const char m_hash_update_tail_ptx[] =
	"$Lbig:\nred.add.u64 [%a0+96], 1;\nmov.u64 %a7, -7;\nbra.uni $Lunlock;\n"
	/* claim: from the probe run's first free bucket, else from home */
	"$Lclaim:\nld.local.u64 %a4, [fr+32];\nld.local.u32 %b8, [fr+48];\n"
	"ld.u32 %b1, [%a0+40];\nsub.u32 %b2, %b1, 1;\ncvt.u32.u64 %b3, %a4;\nand.b32 %b3, %b3, %b2;\n"
	"setp.eq.u32 %q0, %b8, 0xFFFFFFFF;\n@%q0 mov.u32 %b8, %b3;\n"
	"ld.u64 %a5, [%a0+56];\nadd.u64 %a5, %a5, %a0;\nld.u32 %b4, [%a0+44];\n"
	"mov.u32 %b12, 0;\n$Lcl:\nsetp.ge.u32 %q0, %b12, %b1;\n@%q0 bra $Lnofree;\n"
	"mul.wide.u32 %a14, %b8, %b4;\nadd.u64 %a14, %a14, %a5;\n"
	"ld.acquire.gpu.u32 %b13, [%a14];\nand.b32 %b14, %b13, 3;\nsetp.eq.u32 %q1, %b14, 0;\n"
	"setp.eq.u32 %q2, %b14, 3;\nor.pred %q1, %q1, %q2;\n@!%q1 bra $Lclnext;\n"
	"and.b32 %b15, %b13, 0xFFFFFFFC;\nadd.u32 %b15, %b15, 5;\n"
	"atom.cas.acq_rel.gpu.b32 %b16, [%a14], %b13, %b15;\nsetp.eq.u32 %q1, %b16, %b13;\n"
	"@%q1 bra $Lgot;\nbra.uni $Lcl;\n$Lclnext:\nadd.u32 %b8, %b8, 1;\n"
	"and.b32 %b8, %b8, %b2;\nadd.u32 %b12, %b12, 1;\nbra.uni $Lcl;\n$Lnofree:\n"
	"red.add.u64 [%a0+88], 0xFFFFFFFFFFFFFFFF;\nmov.u64 %a7, -7;\nbra.uni $Lunlock;\n"
	/* claimed (BUSY): hash, zeroed key part, the key */
	"$Lgot:\nst.relaxed.gpu.u64 [%a14+8], %a4;\nst.local.v2.u32 [fr+48], {%b8, %b15};\n"
	"add.u64 %a15, %a14, 16;\nld.u32 %b17, [%a0+36];\ncvt.u64.u32 %a9, %b17;\nadd.u64 %a9, %a9, %a15;\n"
	"$Lzk:\nsetp.ge.u64 %q0, %a15, %a9;\n@%q0 bra $Lzkd;\nst.u64 [%a15], 0;\n"
	"add.u64 %a15, %a15, 8;\nbra.uni $Lzk;\n$Lzkd:\nadd.u64 %a15, %a14, 16;\n"
	"ld.local.u64 %a1, [fr+8];\nld.u32 %b0, [%a0+16];\ncvt.u64.u32 %a5, %b0;\n"
	"{\n.param .b64 x;\n.param .b64 y;\n.param .b64 z;\nst.param.b64 [x], %a15;\n"
	"st.param.b64 [y], %a1;\nst.param.b64 [z], %a5;\ncall __gbpf_h_copy, (x, y, z);\n}\n"
	/* zero the value in each slot's plane (PERCPU_HASH: one per slot, other hashes: one plane;
	 * %a14: nr_buckets values rounded up to GBPF_MAP_PLANE_ALIGN bytes; %a14 is free until
	 * $Lwrite reloads the bucket) */
	"ld.local.u64 %a0, [fr];\nld.local.u32 %b8, [fr+48];\nld.u32 %b17, [%a0+32];\n"
	"ld.u32 %b18, [%a0+40];\nld.u32 %b19, [%a0+28];\nmul.wide.u32 %a14, %b18, %b17;\n"
	"add.u64 %a14, %a14, 127;\nand.b64 %a14, %a14, 0xFFFFFFFFFFFFFF80;\n"
	"cvt.u64.u32 %a12, %b19;\nmul.lo.u64 %a9, %a14, %a12;\nmul.wide.u32 %a15, %b8, %b17;\nld.u64 %a5, [%a0+72];\n"
	"add.u64 %a15, %a15, %a5;\nadd.u64 %a15, %a15, %a0;\n"
	/* zero value_stride bytes at each of the planes' copies: one loop over stride steps */
	"add.u64 %a9, %a9, %a15;\ncvt.u64.u32 %a11, %b17;\n"
	"$Lzv:\nsetp.ge.u64 %q1, %a15, %a9;\n@%q1 bra $Lwrite;\nmov.u64 %a12, 0;\n"
	"$Lzw:\nsetp.ge.u64 %q2, %a12, %a11;\n@%q2 bra $Lzwd;\nadd.u64 %a13, %a15, %a12;\n"
	"st.u64 [%a13], 0;\nadd.u64 %a12, %a12, 8;\nbra.uni $Lzw;\n$Lzwd:\n"
	"add.u64 %a15, %a15, %a14;\nbra.uni $Lzv;\n"
	/* the value (the SM's copy for PERCPU_HASH), the LRU tick, READY */
	"$Lwrite:\nld.local.u64 %a0, [fr];\nld.local.u32 %b8, [fr+48];\ncvt.u64.u32 %a13, %b8;\n"
	"{\n.param .b64 x;\n.param .b64 y;\n"
	".param .b64 z;\nst.param.b64 [x], %a0;\nst.param.b64 [y], %a13;\n"
	"call (z), __gbpf_m_hval, (x, y);\nld.param.b64 %a12, [z];\n}\n"
	"ld.local.u64 %a2, [fr+16];\nld.local.u64 %a0, [fr];\nld.u32 %b7, [%a0+20];\ncvt.u64.u32 %a5, %b7;\n"
	"{\n.param .b64 x;\n.param .b64 y;\n.param .b64 z;\nst.param.b64 [x], %a12;\nst.param.b64 [y], %a2;\n"
	"st.param.b64 [z], %a5;\ncall __gbpf_h_copy, (x, y, z);\n}\n"
	"ld.local.u64 %a0, [fr];\nld.local.v2.u32 {%b8, %b15}, [fr+48];\n"
	"ld.u32 %b4, [%a0+44];\nmul.wide.u32 %a14, %b8, %b4;\nld.u64 %a5, [%a0+56];\nadd.u64 %a14, %a14, %a5;\n"
	"add.u64 %a14, %a14, %a0;\nld.u32 %b10, [%a0+8];\nsetp.ne.u32 %q0, %b10, 9;\n@%q0 bra $Lnt;\n"
	"atom.add.u64 %a5, [%a0+104], 1;\nadd.u64 %a5, %a5, 1;\ncvt.u64.u32 %a13, %b4;\nadd.u64 %a13, %a13, %a14;\n"
	"st.relaxed.gpu.u64 [%a13+-8], %a5;\n"
	"$Lnt:\nsetp.eq.u32 %q0, %b15, 0;\n@%q0 bra $Lok;\nadd.u32 %b15, %b15, 1;\n"
	"st.release.gpu.u32 [%a14], %b15;\n$Lok:\nmov.u64 %a7, 0;\n"
	"$Lunlock:\nld.local.u64 %a6, [fr+40];\nst.release.gpu.u32 [%a6], 0;\n$Ldone:\nst.param.b64 [r], %a7;\nret;\n}\n";

/*
 * delete: under the home lock, READY -> TOMBSTONE by CAS (-ENOENT if absent or evicted)
 */
static const char m_hash_delete_ptx[] =
	".func (.param .b64 r) __gbpf_m_hash_delete(.param .b64 m, .param .b64 k)\n{\n"
	".local .align 8 .b8 fr[16];\n.reg .b64 %a<12>;\n.reg .b32 %b<12>;\n.reg .pred %q<3>;\nld.param.b64 %a0, [m];\n"
	"ld.param.b64 %a1, [k];\nst.local.u64 [fr], %a0;\nld.u32 %b0, [%a0+16];\ncvt.u64.u32 %a2, %b0;\n{\n"
	".param .b64 x;\n.param .b64 y;\n.param .b64 z;\nst.param.b64 [x], %a1;\n"
	"st.param.b64 [y], %a2;\ncall (z), __gbpf_m_hkey, (x, y);\nld.param.b64 %a4, [z];\n}\n"
	"ld.local.u64 %a0, [fr];\nld.u32 %b1, [%a0+40];\nsub.u32 %b2, %b1, 1;\ncvt.u32.u64 %b3, %a4;\n"
	"and.b32 %b3, %b3, %b2;\nld.u64 %a5, [%a0+56];\nadd.u64 %a5, %a5, %a0;\n"
	"ld.u32 %b4, [%a0+44];\nmul.wide.u32 %a6, %b3, %b4;\nadd.u64 %a6, %a6, %a5;\n"
	"add.u64 %a6, %a6, 4;\nst.local.u64 [fr+8], %a6;\nmov.u64 %a7, -16;\nmov.u32 %b5, 0;\n$Llock:\n"
	"ld.relaxed.gpu.u32 %b6, [%a6];\nsetp.ne.u32 %q0, %b6, 0;\n@%q0 bra $Lspin;\n"
	"atom.cas.acquire.gpu.b32 %b6, [%a6], 0, 1;\nsetp.eq.u32 %q0, %b6, 0;\n@%q0 bra $Lcs;\n"
	"$Lspin:\nadd.u32 %b5, %b5, 1;\nsetp.lt.u32 %q0, %b5, 4194304;\n@%q0 bra $Llock;\n"
	"bra.uni $Ldone;\n$Lcs:\n{\n.param .b64 x;\n.param .b64 y;\n.param .b64 z;\n"
	".param .align 8 .b8 o[24];\nst.param.b64 [x], %a0;\nst.param.b64 [y], %a1;\n"
	"st.param.b64 [z], %a4;\ncall (o), __gbpf_m_hprobe, (x, y, z);\nld.param.b64 %a8, [o];\n"
	"ld.param.b64 %a9, [o+8];\n}\nld.local.u64 %a0, [fr];\nmov.u64 %a7, -2;\nsetp.lt.s64 %q0, %a8, 0;\n"
	"@%q0 bra $Lunlock;\ncvt.u32.u64 %b7, %a8;\nld.u32 %b4, [%a0+44];\nmul.wide.u32 %a10, %b7, %b4;\n"
	"ld.u64 %a5, [%a0+56];\nadd.u64 %a10, %a10, %a5;\nadd.u64 %a10, %a10, %a0;\ncvt.u32.u64 %b8, %a9;\nor.b32 %b9, %b8, 3;\n"
	"atom.cas.acq_rel.gpu.b32 %b10, [%a10], %b8, %b9;\nsetp.ne.u32 %q1, %b10, %b8;\n"
	"@%q1 bra $Lunlock;\nred.add.u64 [%a0+88], 0xFFFFFFFFFFFFFFFF;\nmov.u64 %a7, 0;\n"
	"$Lunlock:\nld.local.u64 %a6, [fr+8];\nst.release.gpu.u32 [%a6], 0;\n$Ldone:\nst.param.b64 [r], %a7;\nret;\n}\n";


void ptx_hash_emit(struct ptx_buf *b)
{
	static const char *const parts[] = {m_hkey_ptx, m_hprobe_ptx, m_hval_ptx, m_hash_lookup_h_ptx, m_hash_lookup_ptx, m_hash_lookup_kh_ptx, m_lru_evict_ptx, m_hash_delete_ptx};
	size_t i;

	for (i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
		ptx_buf_puts(b, parts[i]);
	/* the update of any hash map, and the one without LRU eviction (ptx_update_is_plain_hash) */
	for (i = 0; i < 2; i++) {
		ptx_buf_puts(b, ".func ");
		ptx_buf_printf(b, m_hash_update_sig_ptx, i ? "__gbpf_m_hash_update_nl" : "__gbpf_m_hash_update");
		ptx_buf_puts(b, m_hash_update_ptx);
		if (!i)
			ptx_buf_puts(b, m_hash_update_evict_ptx);
		ptx_buf_puts(b, m_hash_update_tail_ptx);
	}
}
