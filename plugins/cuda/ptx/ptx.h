/* SPDX-License-Identifier: MIT */
/*
 * plugins/cuda/ptx/ptx.h - PTX parser, printer and probe injector (internal
 * to the cuda backend and the injection tools).
 *
 * A module is parsed into items (module directives, declarations,
 * functions); function bodies into blocks of statements (labels,
 * instructions with predicate / opcode / operands, declarations and other
 * directives, nested `{ }` scopes, comments). Every statement refers to a
 * range of tokens of the module; the printer regenerates text from the
 * structure, so that lexing print(parse(x)) gives the tokens of x (comments
 * aside) and ptxas produces the same code.
 *
 * Functions return 0 or a negative errno (-GBPF_ERRNO__FORMAT for a syntax
 * error, -GBPF_ERRNO__INJECT when a kernel cannot be instrumented) and
 * write the reason (file, line, function, statement) into the caller's log
 * buffer (may be NULL).
 */
#ifndef GBPF_CUDA_PTX_H
#define GBPF_CUDA_PTX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** Token kinds. */
enum gbpf_ptx_tok_kind {
	GBPF_PTX_TOK_IDENT,   /**< name or opcode with modifiers: ld.global.f32, $L__BB0_1 */
	GBPF_PTX_TOK_DOT,     /**< directive / type word: .reg, .b32 */
	GBPF_PTX_TOK_REG,     /**< %r1, %tid.x */
	GBPF_PTX_TOK_NUM,     /**< 12, 0x1f, 0f3F800000 */
	GBPF_PTX_TOK_STR,     /**< "text" */
	GBPF_PTX_TOK_PUNCT,   /**< one character: { } ( ) [ ] , ; : + - @ ! < > = | */
	GBPF_PTX_TOK_COMMENT, /**< // ... or / * ... * / */
};

struct gbpf_ptx_tok {
	const char *s;
	uint32_t len;
	uint8_t kind;       /**< enum gbpf_ptx_tok_kind */
	uint8_t nl_before;  /**< a newline separates it from the previous token */
	uint32_t line;      /**< 1-based source line (0 for injected code) */
};

/** A range of token indices of the module. */
struct gbpf_ptx_range {
	uint32_t first;
	uint32_t n;
};

enum gbpf_ptx_operand_kind {
	GBPF_PTX_OP_REG,  /**< register, possibly negated (!%p) or paired (%p|%q) */
	GBPF_PTX_OP_IMM,  /**< number, possibly negative */
	GBPF_PTX_OP_SYM,  /**< name: label, variable, function */
	GBPF_PTX_OP_MEM,  /**< [ ... ] */
	GBPF_PTX_OP_VEC,  /**< { ... } */
	GBPF_PTX_OP_LIST, /**< ( ... ) (call arguments) */
	GBPF_PTX_OP_OTHER,
};

struct gbpf_ptx_operand {
	struct gbpf_ptx_range toks;
	enum gbpf_ptx_operand_kind kind;
};

enum gbpf_ptx_stmt_kind {
	GBPF_PTX_STMT_INSN,
	GBPF_PTX_STMT_LABEL,
	GBPF_PTX_STMT_DIRECTIVE, /**< .reg/.local/.shared/.param/.pragma/.loc/.file ... */
	GBPF_PTX_STMT_SCOPE,     /**< nested { } */
	GBPF_PTX_STMT_COMMENT,
};

struct gbpf_ptx_stmt;

/** A sequence of statements (a function body or a nested scope). */
struct gbpf_ptx_block {
	struct gbpf_ptx_stmt **v;
	uint32_t n;
	uint32_t cap;
};

struct gbpf_ptx_stmt {
	enum gbpf_ptx_stmt_kind kind;
	struct gbpf_ptx_range toks; /**< whole statement (INSN, LABEL, DIRECTIVE, COMMENT) */
	uint32_t line;
	bool nl_terminated;         /**< directive ends at the line end (.loc, .file) */
	/* INSN: */
	int32_t pred;               /**< token of the predicate register, -1 if none */
	bool pred_neg;              /**< @!%p */
	uint32_t opcode;            /**< token of the opcode (with modifiers) */
	struct gbpf_ptx_operand *ops;
	uint32_t n_ops;
	/* SCOPE: */
	struct gbpf_ptx_block body;
};

/** A .func or .entry. */
struct gbpf_ptx_func {
	bool is_entry;
	bool has_body;                /**< false: prototype ending in ';' */
	bool has_ret;                 /**< .func with a return parameter list */
	bool has_params;              /**< a parameter list is present */
	struct gbpf_ptx_range prefix; /**< linkage words and .entry/.func */
	struct gbpf_ptx_range *rets;  /**< return parameters, each a token range */
	uint32_t n_rets;
	uint32_t name;                /**< token of the name */
	struct gbpf_ptx_range *params;
	uint32_t n_params;
	struct gbpf_ptx_range *directives; /**< .maxntid, .reqntid, .pragma, .noreturn ... */
	uint32_t n_directives;
	struct gbpf_ptx_block body;
	bool modified;                /**< changed since parsing (printed from the structure) */
};

enum gbpf_ptx_item_kind {
	GBPF_PTX_ITEM_DIRECTIVE, /**< .version, .target, .address_size, .file (line-terminated) */
	GBPF_PTX_ITEM_DECL,      /**< declaration ending in ';' */
	GBPF_PTX_ITEM_FUNC,
	GBPF_PTX_ITEM_RAW,       /**< .section { ... } and other text kept as tokens */
	GBPF_PTX_ITEM_COMMENT,
};

struct gbpf_ptx_item {
	enum gbpf_ptx_item_kind kind;
	struct gbpf_ptx_range toks; /**< DIRECTIVE, DECL, RAW, COMMENT */
	struct gbpf_ptx_func *func; /**< FUNC */
};

struct gbpf_ptx_module {
	char *filename;
	struct gbpf_ptx_tok *toks;
	uint32_t n_toks;
	uint32_t cap_toks;
	struct gbpf_ptx_item *items;
	uint32_t n_items;
	uint32_t cap_items;
	unsigned version_major; /**< from .version (0 if absent) */
	unsigned version_minor;
	/* Text buffers the tokens point into (the source, injected snippets). */
	char **texts;
	uint32_t n_texts;
	uint32_t cap_texts;
};

/**
 * Parse PTX text (not necessarily NUL-terminated; @len bytes). @filename
 * is used in messages only (may be NULL). Returns the module, or NULL with
 * errno set (EINVAL for a syntax error, described in @log; ENOMEM).
 */
struct gbpf_ptx_module *gbpf_ptx_parse(const char *text, size_t len, const char *filename,
				       char *log, size_t log_size);

/** Free a module (NULL is allowed). */
void gbpf_ptx_module_free(struct gbpf_ptx_module *m);

/**
 * Print a module as PTX text: a malloc'ed NUL-terminated string, its
 * length in *len (if non-NULL). Returns NULL with errno ENOMEM on failure.
 */
char *gbpf_ptx_print(const struct gbpf_ptx_module *m, size_t *len);

/**
 * Print one statement (a nested scope with its body) as PTX text: a
 * malloc'ed NUL-terminated string, its length in *len (if non-NULL).
 * Returns NULL with errno ENOMEM on failure.
 */
char *gbpf_ptx_print_stmt(const struct gbpf_ptx_module *m, const struct gbpf_ptx_stmt *s, size_t *len);

/** gbpf_ptx_print_ex() flags. */
#define GBPF_PTX_PRINT_SOURCE 1u /**< copy unmodified functions byte for byte from the source */

/**
 * As gbpf_ptx_print(); with GBPF_PTX_PRINT_SOURCE, functions that were not
 * modified are copied from the parsed text unchanged (comments and layout
 * included), so that kernels the injector left alone stay byte-identical.
 */
char *gbpf_ptx_print_ex(const struct gbpf_ptx_module *m, unsigned flags, size_t *len);

/**
 * Tokenize @text into a malloc'ed array (comments included when
 * @keep_comments). Returns the count or a negative errno; *toks must be
 * freed. Used by tests to compare texts token by token.
 */
int gbpf_ptx_tokenize(const char *text, size_t len, bool keep_comments, struct gbpf_ptx_tok **toks,
		      char *log, size_t log_size);

/** Compare two tokens' text. */
bool gbpf_ptx_tok_eq(const struct gbpf_ptx_tok *t, const char *s);

/** Whether opcode token @p op has the dot-separated component @p word ("ld.global.u32" has "global"). */
bool gbpf_ptx_op_has(const struct gbpf_ptx_tok *op, const char *word);

/** Name of function @f of @m copied into buf (NUL-terminated, truncated). */
const char *gbpf_ptx_func_name(const struct gbpf_ptx_module *m, const struct gbpf_ptx_func *f,
			       char *buf, size_t size);

/* ---- injection ---------------------------------------------------- */

/** Site kinds of a plan. */
#define GBPF_PTX_SITE_ENTRY (1u << 0)
#define GBPF_PTX_SITE_EXIT (1u << 1)
#define GBPF_PTX_SITE_MEM (1u << 2)
#define GBPF_PTX_SITE_BARRIER (1u << 3)
#define GBPF_PTX_SITE_BLOCK (1u << 4) /**< first instruction of every basic block */

/** What to inject into one kernel: a probe index per site kind. */
struct gbpf_ptx_plan {
	unsigned sites;       /**< GBPF_PTX_SITE_* */
	unsigned entry_probe; /**< calls __gbpf_probe_<entry_probe> */
	unsigned exit_probe;
	unsigned mem_probe;
	unsigned barrier_probe;
	unsigned ctx_unused;  /**< GBPF_CUDA_CTX_UNUSED_* (gbpf/cuda_inject.h): fields no probe reads */
	unsigned block_probe; /**< probe at basic-block entries (GBPF_PTX_SITE_BLOCK) */
	/**
	 * Append the hidden parameter `.param .u64 __gbpf_lid` to the kernel:
	 * the launch id of each launch (bit 63 set: read `__gbpf_launch_id`).
	 */
	bool launch_param;
};

/** Per-kernel outcome. */
struct gbpf_ptx_kernel_report {
	const char *name;     /**< mangled name (valid while the module lives) */
	uint64_t kernel_id;
	bool instrumented;
	char reason[384];     /**< why not instrumented, or notes on how it was ("; " between them), or "" */
	unsigned n_entry, n_exit, n_mem, n_barrier;
	unsigned n_block;     /**< basic-block sites (= basic blocks of the kernel) */
	unsigned n_params;    /**< the kernel's own parameters (the hidden one not counted) */
	unsigned launch_param_off; /**< plan.launch_param: byte offset of __gbpf_lid, else 0 */
};

/**
 * Decide for kernel @name: return false to leave it untouched; otherwise
 * adjust @plan (pre-filled with the request's default) and return true.
 */
typedef bool (*gbpf_ptx_select_fn)(const char *name, struct gbpf_ptx_plan *plan, void *arg);

struct gbpf_ptx_inject_req {
	struct gbpf_ptx_plan plan;  /**< default plan for selected kernels */
	gbpf_ptx_select_fn select;  /**< NULL: every kernel with the default plan */
	void *select_arg;
	/** Called once per .entry of the module (instrumented or not); may be NULL. */
	void (*report)(const struct gbpf_ptx_kernel_report *r, void *arg);
	void *report_arg;
	/**
	 * The GPU's architecture as an SM number (90 for sm_90); 0: unknown.
	 * A module for sm_70..sm_79 loaded on sm_80 or later has its .target
	 * raised to sm_80 (PTX ISA 7.0 or later), so that the injected code may
	 * use what sm_80 has (the counter sums' redux.sync).
	 */
	unsigned device_sm;
	/**
	 * Bytes of GPU_THREAD_LOCAL values the probes keep after the context
	 * (gbpf_cuda_inject_opts.thread_local_bytes): the context's .local
	 * array grows by them, zeroed at the kernel's entry.
	 */
	unsigned thread_local_bytes;
};

/**
 * Instrument @m in place: splice @fragment (a PTX module whose functions
 * include `__gbpf_probe_<i>`) in once, raise .version to the larger of
 * both (and .target as gbpf_ptx_inject_req.device_sm says), declare
 * `__gbpf_launch_id` if the fragment does not, and insert the
 * planned probe calls into each selected kernel. Kernels not selected are
 * left unchanged. @fragment may be NULL only if no site is planned.
 * Returns the number of kernels instrumented, or a negative errno
 * (-GBPF_ERRNO__INJECT if the fragment lacks a planned probe). After an
 * error the module may be partly instrumented: free it, do not print it.
 */
int gbpf_ptx_inject(struct gbpf_ptx_module *m, const struct gbpf_ptx_module *fragment,
		    const struct gbpf_ptx_inject_req *req, char *log, size_t log_size);

/**
 * Leave out of @m every kernel (.entry with a body) that @keep does not
 * name, and every function with a body that no remaining function or
 * module-level item names (calls, function addresses, initialisers).
 * Declarations and all other items stay. Returns the number of functions
 * left out, or -EINVAL / -ENOMEM (@m unchanged).
 */
int gbpf_ptx_prune(struct gbpf_ptx_module *m, bool (*keep)(const char *kernel, void *arg), void *arg);

/* ---- basic blocks --------------------------------------------------- */

/** Basic blocks of a kernel: the first instruction of each, in PTX order. */
struct gbpf_ptx_blocks {
	const struct gbpf_ptx_stmt **first; /**< first[i]: first instruction of block i */
	uint32_t n;
	uint32_t cap;
};

/**
 * Find the basic blocks of function @f of @m, starting at statement @first
 * of its body (after the leading declarations). A block starts at the first
 * instruction, after a label that a `bra` or `.branchtargets` names, and
 * after bra / brx / ret / exit (predicated or not); blocks are numbered in
 * text order (docs/ATTACH.md, gpu/block). @out is overwritten; free it with
 * gbpf_ptx_blocks_free(). Returns 0, -ENOMEM, or -E2BIG (too deep / too many).
 */
int gbpf_ptx_find_blocks(const struct gbpf_ptx_module *m, const struct gbpf_ptx_func *f,
			 uint32_t first, struct gbpf_ptx_blocks *out);

/** Free what gbpf_ptx_find_blocks() allocated (the struct itself is the caller's). */
void gbpf_ptx_blocks_free(struct gbpf_ptx_blocks *b);

#endif /* GBPF_CUDA_PTX_H */
