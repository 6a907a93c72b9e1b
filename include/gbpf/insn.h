/* SPDX-License-Identifier: MIT */
/*
 * gbpf/insn.h - the eBPF instruction set (RFC 9669) as gbpf sees it.
 *
 * One definition of the encoding shared by the loader, the assembler, the
 * interpreter, the verifier and every code generator. Names follow the RFC
 * but carry the GBPF_ prefix so this header can be included next to
 * <linux/bpf.h> without clashes.
 *
 * An instruction is 8 bytes, little endian:
 *   opcode (8) | dst_reg (4) | src_reg (4) | offset (16, signed) | imm (32, signed)
 * The wide instruction (lddw / ld_imm64) takes two slots; the second slot
 * holds the upper 32 bits of the constant in its imm field and must have
 * every other field zero.
 */
#ifndef GBPF_INSN_H
#define GBPF_INSN_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** One eBPF instruction slot, bit-compatible with struct bpf_insn. */
struct gbpf_insn {
	uint8_t code;    /**< opcode: class | source/size | operation/mode */
	uint8_t dst : 4; /**< destination register, 0..10 */
	uint8_t src : 4; /**< source register, 0..10, or pseudo source tag */
	int16_t off;     /**< signed offset */
	int32_t imm;     /**< signed immediate */
};

/** Number of registers r0..r10. r10 is the read-only frame pointer. */
#define GBPF_REG_COUNT 11
/** Bytes of stack every function frame owns (below r10). */
#define GBPF_STACK_SIZE 512
/** Deepest chain of BPF-to-BPF calls (as in Linux). */
#define GBPF_MAX_CALL_DEPTH 8

/* Instruction classes (low 3 bits of the opcode). */
#define GBPF_CLASS(code) ((code)&0x07)
#define GBPF_LD 0x00
#define GBPF_LDX 0x01
#define GBPF_ST 0x02
#define GBPF_STX 0x03
#define GBPF_ALU 0x04
#define GBPF_JMP 0x05
#define GBPF_JMP32 0x06
#define GBPF_ALU64 0x07

/* Source operand (bit 3) for ALU and JMP classes. */
#define GBPF_SRC(code) ((code)&0x08)
#define GBPF_K 0x00 /**< use imm */
#define GBPF_X 0x08 /**< use src register */

/* ALU operations (high 4 bits). */
#define GBPF_OP(code) ((code)&0xf0)
#define GBPF_ADD 0x00
#define GBPF_SUB 0x10
#define GBPF_MUL 0x20
#define GBPF_DIV 0x30 /**< off = 1: signed (sdiv) */
#define GBPF_OR 0x40
#define GBPF_AND 0x50
#define GBPF_LSH 0x60
#define GBPF_RSH 0x70
#define GBPF_NEG 0x80
#define GBPF_MOD 0x90 /**< off = 1: signed (smod) */
#define GBPF_XOR 0xa0
#define GBPF_MOV 0xb0 /**< off = 8/16/32: sign-extending move (movsx) */
#define GBPF_ARSH 0xc0
#define GBPF_END 0xd0 /**< ALU: K = to little endian, X = to big endian; ALU64|K: bswap */

#define GBPF_TO_LE 0x00
#define GBPF_TO_BE 0x08

/* Jump operations (high 4 bits). */
#define GBPF_JA 0x00 /**< JMP: pc += off; JMP32 (gotol): pc += imm */
#define GBPF_JEQ 0x10
#define GBPF_JGT 0x20
#define GBPF_JGE 0x30
#define GBPF_JSET 0x40
#define GBPF_JNE 0x50
#define GBPF_JSGT 0x60
#define GBPF_JSGE 0x70
#define GBPF_CALL 0x80 /**< K: helper / local call by src tag; X: callx */
#define GBPF_EXIT 0x90
#define GBPF_JLT 0xa0
#define GBPF_JLE 0xb0
#define GBPF_JSLT 0xc0
#define GBPF_JSLE 0xd0

/* Load and store: size (bits 3-4) and mode (bits 5-7). */
#define GBPF_SIZE(code) ((code)&0x18)
#define GBPF_W 0x00
#define GBPF_H 0x08
#define GBPF_B 0x10
#define GBPF_DW 0x18
#define GBPF_MODE(code) ((code)&0xe0)
#define GBPF_IMM 0x00
#define GBPF_ABS 0x20 /**< legacy packet access, rejected by gbpf */
#define GBPF_IND 0x40 /**< legacy packet access, rejected by gbpf */
#define GBPF_MEM 0x60
#define GBPF_MEMSX 0x80 /**< sign-extending load (LDX only) */
#define GBPF_ATOMIC 0xc0

/* Atomic operations (imm of STX|ATOMIC). */
#define GBPF_FETCH 0x01
#define GBPF_ATOMIC_ADD 0x00
#define GBPF_ATOMIC_OR 0x40
#define GBPF_ATOMIC_AND 0x50
#define GBPF_ATOMIC_XOR 0xa0
#define GBPF_ATOMIC_XCHG (0xe0 | GBPF_FETCH)
#define GBPF_ATOMIC_CMPXCHG (0xf0 | GBPF_FETCH)

/* src tags of the wide load (LD|IMM|DW). */
#define GBPF_PSEUDO_MAP_FD 1        /**< imm = map fd (Linux); not produced by gbpf */
#define GBPF_PSEUDO_MAP_VALUE 2     /**< imm = map fd, next imm = offset (Linux) */
#define GBPF_PSEUDO_BTF_ID 3        /**< kernel BTF variable: rejected */
#define GBPF_PSEUDO_FUNC 4          /**< address of a subprogram: imm = pc-relative target */
#define GBPF_PSEUDO_MAP_IDX 5       /**< imm = index into the object's map table */
#define GBPF_PSEUDO_MAP_IDX_VALUE 6 /**< imm = map index, next imm = offset into value 0 */

/* src tags of CALL|K. */
#define GBPF_CALL_HELPER 0 /**< imm = helper id */
#define GBPF_CALL_LOCAL 1  /**< imm = pc-relative target (BPF_PSEUDO_CALL) */
#define GBPF_CALL_KFUNC 2  /**< kernel function by BTF id: rejected */

/* Whole opcodes used often enough to name. */
#define GBPF_OP_LDDW (GBPF_LD | GBPF_IMM | GBPF_DW)
#define GBPF_OP_CALL (GBPF_JMP | GBPF_CALL)
#define GBPF_OP_CALLX (GBPF_JMP | GBPF_CALL | GBPF_X)
#define GBPF_OP_EXIT (GBPF_JMP | GBPF_EXIT)
#define GBPF_OP_JA (GBPF_JMP | GBPF_JA)
#define GBPF_OP_GOTOL (GBPF_JMP32 | GBPF_JA)

/** True when @p insn is the first slot of a two-slot wide load. */
static inline int gbpf_insn_is_wide(const struct gbpf_insn *insn)
{
	return insn->code == GBPF_OP_LDDW;
}

#ifdef __cplusplus
}
#endif

#endif /* GBPF_INSN_H */
