/* SPDX-License-Identifier: MIT */
/*
 * plugins/cuda/ptx/inject_internal.h - state shared by the injector's
 * files: inject.c (walking kernels, entry code, splicing the fragment) and
 * sites.c (the code of each probe site: context stores, inlining and
 * folding a probe into the site).
 */
#ifndef GBPF_CUDA_PTX_INJECT_INTERNAL_H
#define GBPF_CUDA_PTX_INJECT_INTERNAL_H

#include "plugins/cuda/ptx/ptx_internal.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>


#define CTX_NAME "__gbpf_ctx"
#define LAUNCH_ID_NAME "__gbpf_launch_id"
/* Hidden trailing kernel parameter carrying the launch id (gbpf_ptx_plan.launch_param). */
#define LID_PARAM_NAME "__gbpf_lid"
#define LID_PRED "%%__gbpf_lp" /* a tx() format */
/* Kernel parameter space: CUDA's classic 4 KB; 32764 bytes where a kernel already uses more. */
#define PARAM_SPACE_CLASSIC 4096u
#define PARAM_SPACE_LARGE 32764u
/* The device ordinal of the module's context: the agent sets it when it loads the module. */
#define DEVICE_NAME "__gbpf_device"
/* Offsets in struct gbpf_gpu_ctx. */
#define OFF_KERNEL_ID 0
#define OFF_PARAMS 8
#define OFF_LAUNCH_ID 16
#define OFF_MEM_ADDR 24
#define OFF_MEM_VALUE 32
#define OFF_MEM_SIZE 40
#define OFF_MEM_KIND 44
#define OFF_MEM_SPACE 48
#define OFF_MEM_SITE 52
#define OFF_DEVICE 56 /* u32 device and u32 padding (0): every site kind but gpu/block */
#define CTX_SIZE 64
/*
 * struct gbpf_gpu_block_ctx (gpu/block) shares the buffer: its fields after
 * launch_id; its device field lies where gbpf_gpu_ctx has mem_value, so a
 * block site stores it before its probe (as a mem site stores mem_value).
 */
#define OFF_BLOCK_INDEX 24
#define OFF_BLOCK_COUNT 28
#define OFF_BLOCK_DEVICE 32
/* cvta.param on kernel parameters needs PTX ISA 7.7. */
#define CVTA_PARAM_MIN_VERSION 77u

/* Statement text being built (grows; oom set on allocation failure). */

struct text {
	char *p;
	size_t len, cap;
	bool oom;
};

/** Append printf-style text to @p t. */
void gbpf_ptx_tx(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Registers declared by .reg in a function: name (or prefix of a <N> range) and width. */
struct reg_decl {
	const char *name;
	uint32_t len;
	bool range;
	unsigned bits;
};

/* The injector's switches from the environment, read once per injection. */
struct inline_opts {
	unsigned budget;     /* INLINE_KERNEL_BUDGET_LINES, or GBPF_PTX_INLINE_BUDGET if a decimal number */
	bool budget_ignored; /* GBPF_PTX_INLINE_BUDGET set to something else */
	bool no_inline;      /* GBPF_PTX_NO_INLINE: every site calls its probe */
	bool no_sink;        /* GBPF_PTX_NO_SINK: an inlined or called probe's stack stores stay where it made them */
	bool no_sum;         /* GBPF_PTX_NO_COUNTER_SUM: a counter runs at every memory site */
	unsigned sum_exit;   /* SUM_EXIT_*: who flushes the sums at the exit; SUM_EXIT_FIRST, or
			      * GBPF_PTX_COUNTER_SUM_EXIT=lane|warp|block|first (for comparisons) */
	bool sum_exit_ignored; /* GBPF_PTX_COUNTER_SUM_EXIT set to something else (the kernel's note says so) */
	unsigned sum_flush;  /* a sum is flushed at its site when it reaches this: COUNTER_SUM_FLUSH, or
			      * GBPF_PTX_COUNTER_SUM_FLUSH (1..COUNTER_SUM_FLUSH; a test switch that makes
			      * the flush at a site, rare in real kernels, happen at every few accesses) */
};

/*
 * Copies of a memory probe specialised to a site's constant context fields
 * (access kind, space, size, the kernel's id) as .func definitions that
 * every site with those constants calls once the kernel's inline budget is
 * spent: the key and what a called probe stores and loads through the
 * context fold away as in an inlined copy, and the kernel does not grow
 * with each site (a kernel of 128 memory sites has two such tuples). One
 * set per injection; inject.c puts the definitions after the fragment.
 */
#define SPEC_MAX 16u /* copies a module gets at most; further tuples call the probe */
#define SPEC_MAX_KEY 8u
struct probe_spec {
	unsigned probe;
	unsigned n_key;
	unsigned key_off[SPEC_MAX_KEY]; /* the fold's constants the copy is made for */
	uint64_t key_val[SPEC_MAX_KEY];
	bool escaped;  /* the probe reads the context where the fold does not follow: sites store it */
	bool args[4];  /* takes %__gbpf_rd0..2 and the thread's linear id (GTID_REG_FMT) */
};
struct probe_specs {
	struct probe_spec v[SPEC_MAX];
	unsigned n;
	uint32_t uncopyable; /* bit p: probe p's copy could not be made (not tried again) */
	struct text defs; /* the copies' .func definitions */
};

/*
 * Memory sites of a counter (plugins/cuda/ptx_counter.h) summed in a
 * register per key (counter.c): at most COUNTER_SUM_MAX keys a kernel
 * (further keys run the probe at their sites), each register flushed when
 * it reaches COUNTER_SUM_FLUSH (inline_opts.sum_flush) and at the thread's exit.
 */
#define COUNTER_SUM_MAX 8u
#define COUNTER_SUM_FLUSH 256u
#define SUM_REG "%%__gbpf_sum" /* a tx() format; SUM_REG<i>: key i's sum (.b32) */
#define SUM_PRED "%%__gbpf_sump" /* a tx() format */
#define SUM_EXIT_LABEL "__gbpf_sum_exit"
/*
 * Who flushes the sums at the thread's exit: each lane its own; the
 * lowest of the lanes that reach the exit together, with their sums added
 * (redux.sync); the last of the block's threads to leave, with the sums of
 * the whole block gathered in shared memory; or the block's first thread,
 * which waits at its exit for the others' sums (not where the kernel or a
 * device function has a block barrier, or the module calls a function it
 * does not define: a thread waiting at a barrier for the first thread
 * would never see it come). Warp and block need redux.sync
 * (PTX ISA 7.0, sm_80); a module for less flushes lane by lane.
 */
enum { SUM_EXIT_LANE, SUM_EXIT_WARP, SUM_EXIT_BLOCK, SUM_EXIT_FIRST };
#define SUM_WARP_MIN_SM 80u
#define SUM_WARP_MIN_VERSION 70u
#define SUM_WARP_REGS "%%__gbpf_summ" /* a tx() format: .b32 <3>, the next three */
#define SUM_MASK SUM_WARP_REGS "0"      /* the lanes at the exit block */
#define SUM_LOWER SUM_WARP_REGS "1"     /* those of them below this lane; then a scratch word */
#define SUM_SCRATCH SUM_WARP_REGS "2"
#define SUM_NOT_LEAD "%%__gbpf_sumnl" /* a tx() format: this lane is not the lowest of them (.pred) */
#define SUM_OPAQUE "__gbpf_sumx" /* warp mode: .local .b32[COUNTER_SUM_MAX], the lowest lane's sums pass through it */
/*
 * The block's words, one a key (COUNTER_SUM_MAX of 4 bytes): the key's sum
 * above SUM_COUNT_BITS, below them the block's threads that added to it (at
 * most 1024). A thread learns from its one atomic add whether it was the
 * last (the count it brought) and what the others added (the sum): nothing
 * to order between words, so no fence (counter.c). A lane's sum at the exit
 * is below sum_flush (a site flushes it there when it reaches that), so a
 * block's fits in the bits above the count.
 */
#define SUM_SHARED "__gbpf_sumsh"
#define SUM_COUNT_BITS 11u
#define SUM_FIRST_SLEEP_NS 64u /* SUM_EXIT_FIRST: the first thread's sleep between reads of a word */
#define SUM_WORD "%%__gbpf_sumw" /* a tx() format: .b32 <COUNTER_SUM_MAX>, key i's word as added to */
_Static_assert(1024u * COUNTER_SUM_FLUSH <= 1u << (32 - SUM_COUNT_BITS) && 1024u < 1u << SUM_COUNT_BITS,
	       "a block's sum and count fit one 32-bit word");

struct counter_sum {
	bool on;             /* this kernel's memory sites add to registers */
	unsigned flush;      /* the counter's flush variant: __gbpf_probe_<flush> */
	int rest;            /* what the probe does after counting, run at each summed site: __gbpf_probe_<rest>; -1: nothing */
	unsigned add;        /* the increment of each access */
	unsigned fields;     /* PTX_COUNTER_FIELD_*: the site fields that make a key */
	unsigned n;          /* keys (registers) in use */
	unsigned sites;      /* memory sites that add to a register */
	unsigned over;       /* memory sites of keys past COUNTER_SUM_MAX: they run the probe */
	bool exits;          /* the probe is a counter, but a device function may end the thread: not summed */
	unsigned exit;       /* SUM_EXIT_*: who flushes at the exit in this kernel */
	struct {
		unsigned size, kind, space, site; /* a site of the key: its fields for the flush */
	} key[COUNTER_SUM_MAX];
};

struct kctx {
	struct gbpf_ptx_module *m;
	struct gbpf_ptx_func *f;
	const struct gbpf_ptx_plan *plan;
	struct gbpf_ptx_kernel_report *rep;
	struct reg_decl *regs;
	uint32_t n_regs, cap_regs;
	unsigned n_labels;
	bool cvta_param;
	unsigned inline_stack; /* bytes of STACK_NAME inlined probes use (0: none): declared once in the kernel */
	bool use_gtid;     /* an inlined probe reads GTID_REG: compute it at the kernel's entry */
	const struct inline_opts *opts; /* read once per injection */
	unsigned inline_lines;  /* PTX lines inlined probes added to this kernel so far */
	unsigned over_budget;   /* sites that call a probe they would have inlined */
	struct probe_specs *specs; /* the injection's specialised copies; NULL: none made */
	int *funcs_exit;        /* the injection's: a device function may `exit` (1), not (0), not yet known (-1) */
	int *funcs_barrier;     /* the injection's: a device function may wait at a block barrier (1), not (0),
				 * not yet known (-1) */
	unsigned spec_calls;    /* sites of this kernel that call one */
	unsigned params_size; /* bytes of __gbpf_params (copy of the parameters), 0 if none */
	unsigned tls_bytes;   /* GPU_THREAD_LOCAL values after the context (CTX_NAME + CTX_SIZE), 0 if none */
	struct counter_sum sum;        /* memory sites summed in registers */
	struct gbpf_ptx_blocks blocks; /* gpu/block: first instruction of each basic block */
	uint32_t next_block;           /* blocks.first[next_block] is the next site */
	char kname[512];
	char *log;
	size_t log_size;
};

enum site_kind { SITE_NONE, SITE_EXIT, SITE_BARRIER, SITE_MEM };

struct mem_info {
	unsigned kind;   /* GBPF_MEM_* */
	unsigned space;  /* GBPF_SPACE_* */
	bool cluster;    /* .shared::cluster: no cvta */
	unsigned size;   /* bytes */
	int addr_op;     /* operand holding [address] */
	int value_op;    /* operand holding the stored value, -1 if none */
};

/*
 * Probes are inlined at their sites when short: a call is an ABI boundary
 * that ptxas does not inline (register saves, no scheduling across it),
 * which costs a memory-bound kernel several percent even for an empty
 * probe. Inlined, an empty probe disappears and a counter costs what the
 * same code written in the kernel costs. The longest probe each kind of
 * site inlines while the kernel's inline budget lasts; after it, only
 * probes of up to INLINE_MAX_STMTS_SHORT statements.
 */
#define INLINE_MAX_STMTS 600u /* entry, exit, barrier */
/* mem_trace: about 560 statements with the home bucket peeled */
#define INLINE_MAX_STMTS_MEM 640u
/* Every basic block gets a copy: a counter with a helper call (about 170 statements) must fit. */
#define INLINE_MAX_STMTS_BLOCK 256u
#define INLINE_MAX_STMTS_SHORT 64u
/*
 * What inlined probes may add to one kernel, in PTX lines, before its
 * further sites call the probe (probes of at most INLINE_MAX_STMTS_SHORT
 * statements are inlined regardless). The JIT's time grows faster than the
 * kernel's length and every inlined copy adds registers. H200, a kernel of
 * 128 memory sites (2^20 threads, plain 141 us) under mem_count (about 330
 * lines a copy), budget 0 / 2048 / 4096 / 8192 / 16384 lines: 1201 / 1104 /
 * 1359 / 1913 / 3517 us a launch, 54 / 60 / 72 / 96 / 142 registers, first
 * run 1.4-1.9 / 1.9-2.1 / 2.7-3.4 / 4.9 / 9.3-10.9 s; mem_trace 1976 / 1926
 * / 1926 / 2742 / 3826 us (docs/benchmarks/sessions-06-17.md, session 12). A vector add's
 * three sites fit. GBPF_PTX_INLINE_BUDGET overrides it.
 */
#define INLINE_KERNEL_BUDGET_LINES 2048u

/* The code generator's name for a probe's frame (a .local array of 512..GBPF_PTX_FRAME_MAX bytes). */
#define STACK_NAME "__gbpf_stack"
/* the kernel's registers holding the thread-local values, 8 bytes each (printf format, one %u) */
#define TLS_REG_FMT "%%__gbpf_tl%u"
/*
 * The code generator's mark of the scope in which a probe computes the
 * thread's linear id in the grid into %t12 (PTX_GTID_SCOPE_MARK of
 * plugins/cuda/ptx_internal.h), and the kernel register that holds the id
 * instead where the probe is inlined at memory and block sites.
 */
#define GTID_SCOPE_MARK "%__gbpf_gtid_scope"
#define GTID_REG_FMT "%%__gbpf_gtid" /* in a format string */

/** Collect the .reg declarations of @p b into k->regs; 0 or -ENOMEM. */
int gbpf_ptx_collect_regs(struct kctx *k, const struct gbpf_ptx_block *b);

/*
 * The N of @p m's `.target sm_N` (sm_90a: 90; its token's index into
 * *@p tok when @p tok is not NULL); 0 when it has none.
 */
unsigned gbpf_ptx_target_sm(const struct gbpf_ptx_module *m, uint32_t *tok);
/* Opcode @p op is a barrier of the block or the cluster (bar, barrier; not bar.warp.sync). */
bool gbpf_ptx_is_block_barrier(const struct gbpf_ptx_tok *op);
/** Width in bits of a register operand, 0 if unknown. */
unsigned gbpf_ptx_reg_bits(const struct kctx *k, const struct gbpf_ptx_tok *t);

/* sink.c */
/** How tx_inline emitted a statement of the probe's body. */
enum gbpf_ptx_sink_emitted {
	GBPF_PTX_SINK_AS_IS,    /**< the statement (a return as a branch to the body's end) */
	GBPF_PTX_SINK_SKIPPED,  /**< nothing (dead, or the result store) */
	GBPF_PTX_SINK_REPLACED, /**< register moves only (a folded or forwarded load) */
	GBPF_PTX_SINK_LOCAL,    /**< the same access to [__gbpf_stack+off] in .local */
};

/** A statement of an inlined probe's body, as tx_inline emitted it into its text. */
struct gbpf_ptx_sink_stmt {
	size_t at, store_at, end; /**< its text [at, end); [store_at, end) the store of a deferrable one */
	enum gbpf_ptx_sink_emitted emitted;
	int fw_write;    /**< the snapshot register %__gbpf_fw<N> it sets, -1 if none */
	bool deferrable; /**< a store of [__gbpf_stack+off], size bytes, whose value fw_write holds */
	bool is_store;   /**< GBPF_PTX_SINK_LOCAL: a store (else a load) */
	int64_t off;
	unsigned size;
};

/**
 * Rewrite the text of an inlined probe (@p text, one @p info per statement
 * of @p body) into @p out with its deferrable stack stores moved to where
 * the stack may be read; *@p deferred: how many were. Returns 0 (nothing
 * written when no store is deferrable), or a negative errno when the body
 * has a shape this pass does not follow (the caller keeps @p text).
 */
int gbpf_ptx_sink(const struct gbpf_ptx_module *m, const struct gbpf_ptx_block *body,
		  const struct gbpf_ptx_sink_stmt *info, const char *text, const char *stack_name,
		  const char *end_label, struct text *out, unsigned *deferred);

/* sites.c */
/** The definition of __gbpf_probe_<@p idx> in @p m, or NULL. */
const struct gbpf_ptx_func *gbpf_ptx_probe_func(const struct gbpf_ptx_module *m, unsigned idx);
/**
 * Call (or inline) probe @p probe with its context; @p fold: constant
 * fields of the site, or NULL for none (the inlined copy's stack is
 * forwarded and its stores sunk either way).
 */
void gbpf_ptx_site_call(struct text *t, struct kctx *k, unsigned probe, unsigned max_inline,
			struct gbpf_ptx_fold *fold);
/**
 * The definitions of @p specs (the copies' text) into module @p m as items
 * at @p at (after the probe fragment's, before the kernels that call them).
 */
int gbpf_ptx_insert_specs(struct gbpf_ptx_module *m, struct probe_specs *specs, uint32_t at, char *log,
			  size_t log_size);
/** Fold and sink a called probe function's body in place (after every kernel); 1 if rewritten, 0, or < 0. */
int gbpf_ptx_fold_called_probe(struct gbpf_ptx_module *m, struct gbpf_ptx_func *f, char *log, size_t log_size);
/**
 * The longest probe a site of kernel @p k inlines: @p limit while the
 * kernel's inline budget lasts, then only short probes (INLINE_MAX_STMTS_SHORT);
 * a site that calls a probe it would have inlined is counted for the
 * kernel's report.
 */
unsigned gbpf_ptx_budgeted_limit(struct kctx *k, unsigned probe, unsigned limit);
/** The injector's switches (struct inline_opts) from the environment. */
void gbpf_ptx_inline_opts_from_env(struct inline_opts *o);
/** A memory site before @p s; false when the address shape is not understood (nothing emitted). */
bool gbpf_ptx_mem_site(struct text *t, struct kctx *k, const struct gbpf_ptx_stmt *s,
		       const struct mem_info *mi);
/** The memory site @p mi (of index k->rep->n_mem) in the fold's form: its constant fields and its address and value registers. */
void gbpf_ptx_mem_fold(struct gbpf_ptx_fold *fold, const struct kctx *k, const struct mem_info *mi,
		       unsigned site);
/** A memory site's call of @p probe with its fields @p fold: inlined if @p may_inline and the budget allows, else a call of a copy specialised to them. */
void gbpf_ptx_mem_probe_call(struct text *t, struct kctx *k, unsigned probe, struct gbpf_ptx_fold *fold,
			     bool may_inline);

/* counter.c */
/** Whether kernel @p k sums its counter's memory sites (k->sum), from the plan and the module. */
void gbpf_ptx_sum_setup(struct kctx *k);
/** Registers and zeroes at the kernel's entry (k->sum.on). */
void gbpf_ptx_sum_entry(struct text *t, const struct kctx *k);
/** Add the site's count to its key's register; false (nothing emitted) when the site runs the probe. */
bool gbpf_ptx_sum_site(struct text *t, struct kctx *k, const struct mem_info *mi);
/** Before a ret or exit @p s of the kernel: to the flush of every sum first. */
void gbpf_ptx_sum_exit(struct text *t, struct kctx *k, const struct gbpf_ptx_stmt *s);
/** The flush of every sum, then ret, as text to append to the kernel's body (nothing when off or unused). */
void gbpf_ptx_sum_flush_block(struct text *t, struct kctx *k);
/** What the kernel's report says of the sums (appended to @p reason, "; " between notes). */
void gbpf_ptx_sum_report(const struct kctx *k, char *reason, size_t size);

/** A gpu/block site for basic block @p index. */
void gbpf_ptx_block_site(struct text *t, struct kctx *k, uint32_t index);

#endif /* GBPF_CUDA_PTX_INJECT_INTERNAL_H */
