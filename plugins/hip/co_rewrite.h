/* SPDX-License-Identifier: MIT */
/*
 * plugins/hip/co_rewrite.h - AMD code objects: clang offload bundles
 * (plain and compressed "CCOB"), decoding of AMDGCN code with the LLVM
 * disassembler, re-emission as assembly (untouched instructions as raw
 * words, branches as labels), re-assembly with llvm-mc and the static
 * checks of rewritten code (internal to the hip backend and its tests).
 */
#ifndef GBPF_HIP_CO_REWRITE_H
#define GBPF_HIP_CO_REWRITE_H

#include <elf.h>
#include <stddef.h>
#include <stdint.h>

/** Most entries a bundle may have (more is treated as malformed). */
#define CO_BUNDLE_MAX_ENTRIES 256

/** One entry of a clang offload bundle. */
struct co_bundle_entry {
	char id[128];        /**< "hipv4-amdgcn-amd-amdhsa--gfx90a", "host-x86_64-unknown-linux" */
	const uint8_t *data; /**< payload (points into the bundle or into owned memory) */
	size_t size;
};

/** A parsed bundle. */
struct co_bundle {
	struct co_bundle_entry e[CO_BUNDLE_MAX_ENTRIES];
	size_t n;
	uint8_t *owned;      /**< decompressed bytes of a CCOB bundle, else NULL */
	int compressed;      /**< 1 when the input was a CCOB bundle */
};

/**
 * Parse a bundle (plain or CCOB with zstd/zlib) of @p size bytes.
 * @return 0, -EINVAL (with a reason naming the offset in err) for malformed
 *         input, -ENOTSUP for an unknown compression, -ENOMEM
 */
int co_bundle_parse(const uint8_t *buf, size_t size, struct co_bundle *b, char *err, size_t err_size);
/** Free what co_bundle_parse() allocated. */
void co_bundle_free(struct co_bundle *b);
/**
 * Write a plain bundle of @p n entries, payloads 4096-aligned as clang
 * does (so that an unmodified bundle of clang's is reproduced byte for byte).
 * @return 0 or -ENOMEM; *out is malloc'ed
 */
int co_bundle_write(const struct co_bundle_entry *e, size_t n, uint8_t **out, size_t *out_size);

/** Kind of a decoded instruction. */
enum co_insn_kind {
	CO_INSN_PLAIN = 0,
	CO_INSN_BRANCH = 1,  /**< s_branch / s_cbranch_*: target known */
	CO_INSN_ENDPGM = 2,  /**< s_endpgm */
	CO_INSN_GETPC = 3,   /**< s_getpc_b64 */
};

/** One decoded instruction of a .text section. */
struct co_insn {
	uint32_t off;      /**< byte offset in the section */
	uint32_t len;      /**< bytes (4, 8 or 12 with a literal) */
	uint32_t kind;     /**< enum co_insn_kind */
	uint32_t target;   /**< branch target offset (CO_INSN_BRANCH) */
	char mnem[32];     /**< mnemonic */
};

/** Decoded code of one code object. */
struct co_code {
	char arch[16];           /**< from e_flags: "gfx90a", "gfx940", "gfx942" ... */
	const uint8_t *text;     /**< .text bytes */
	size_t text_size;
	uint64_t text_addr;      /**< sh_addr of .text */
	size_t text_file_off;    /**< file offset of .text */
	struct co_insn *insns;
	size_t n;
};

/**
 * Decode the .text of an AMDGPU ELF code object.
 * @return 0, -EINVAL (reason with the offset in err) for malformed input
 *         or undecodable words, -ENOTSUP for an unknown processor, -ENOMEM
 */
int co_decode(const uint8_t *elf, size_t size, struct co_code *c, char *err, size_t err_size);
void co_code_free(struct co_code *c);
/** Initialise LLVM's AMDGPU target and disassembler (once per process). */
void co_llvm_ready(void);
/** Decode c->text / c->text_size for c->arch (filled by the caller), as co_decode(). */
int co_decode_raw(struct co_code *c, char *err, size_t err_size);

/**
 * Assembly text of the code: each instruction as raw .long words, except
 * branches, which become mnemonic + label so the assembler recomputes
 * their offsets; labels at every branch target. With @p probe_entry /
 * @p probe_exit non-NULL, the text of those snippets is inserted at every
 * kernel entry in @p entries (byte offsets) and before every s_endpgm.
 * @return 0 or -ENOMEM; *out malloc'ed, NUL-terminated
 */
int co_emit_asm(const struct co_code *c, const uint32_t *entries, size_t n_entries, const char *probe_entry,
		const char *probe_exit, char **out);

/**
 * Assemble @p asm_text with llvm-mc for @p arch and return the .text bytes.
 * @return 0, -ENOENT when llvm-mc is missing, -EINVAL with its messages in err
 */
int co_assemble_text(const char *mc, const char *arch, const char *asm_text, uint8_t **text, size_t *len,
		     char *err, size_t err_size);

/**
 * Round trip of a code object with no probe: decode, emit, re-assemble,
 * and put the new .text into a copy of the ELF. Byte-identical when the
 * rewriter is faithful. *out malloc'ed.
 */
int co_roundtrip(const char *mc, const uint8_t *elf, size_t size, uint8_t **out, size_t *out_size, char *err,
		 size_t err_size);

/**
 * Branch-target check: every branch of @p c lands on an instruction
 * boundary inside .text. Returns the number of bad branches (first in err).
 */
size_t co_check_branches(const struct co_code *c, char *err, size_t err_size);

/**
 * Run a tool (argv[0] looked up in PATH) with stdout and stderr to @p log_path.
 * @return 0 on exit status 0, -ENOENT when it cannot start, -EINVAL otherwise
 */
int co_run_tool(char *const argv[], const char *log_path);
/** Whole file, malloc'ed and NUL-terminated, or NULL. */
char *co_slurp(const char *path, size_t *len);
/**
 * Section header of section @p want of an ELF64 image (bounds checked).
 * @return 0, -ENOENT when absent, -EINVAL for a malformed header table
 */
int co_find_section(const uint8_t *elf, size_t size, const char *want, const Elf64_Shdr **out);

/** A growing text buffer (assembly emission); oom is sticky. */
struct co_sbuf {
	char *p;
	size_t len, cap;
	int oom;
};
/** Append formatted text to @p b (on allocation failure b->oom is set). */
void co_sb_printf(struct co_sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif /* GBPF_HIP_CO_REWRITE_H */
