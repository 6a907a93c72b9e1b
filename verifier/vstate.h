/* SPDX-License-Identifier: MIT */
/*
 * verifier/vstate.h - internal types of the static verifier: abstract
 * values (tnum + ranges), registers, stack, states and the environment.
 */
#ifndef GBPF_VERIFIER_VSTATE_H
#define GBPF_VERIFIER_VSTATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <gbpf/insn.h>
#include <gbpf/prog.h>
#include <gbpf/verifier.h>

/* Tristate number: bits in mask are unknown, the others equal value. */
struct tnum {
	uint64_t value;
	uint64_t mask;
};

/*
 * A 64-bit abstract value. For scalars it is the value; for pointers it is
 * the offset from the start of the pointed-to object.
 */
struct sval {
	struct tnum t;
	int64_t smin, smax;
	uint64_t umin, umax;
};

enum reg_type {
	REG_NOT_INIT = 0,
	REG_SCALAR,
	REG_PTR_CTX,        /* context of the attach kind, read-only */
	REG_PTR_STACK,      /* frame `frameno`, offset relative to its r10 */
	REG_CONST_MAP,      /* the map itself (map index in `map`) */
	REG_PTR_MAP_VALUE,  /* value of map `map` */
	REG_PTR_MAP_VALUE_OR_NULL,
	REG_PTR_RINGBUF,    /* reserved record of `size` bytes */
	REG_PTR_RINGBUF_OR_NULL,
	REG_PTR_MEM,        /* `prog run` buffer of opts.mem_size bytes */
	REG_PTR_MEM_OR_NULL,
	REG_TYPE_CNT,
};

struct reg {
	uint8_t type;    /* enum reg_type */
	uint8_t frameno; /* REG_PTR_STACK */
	uint16_t map;    /* map index for map pointers */
	uint32_t id;     /* nullable pointers: copies share it for null checks */
	uint32_t ref;    /* ring buffer records: reference to release, else 0 */
	uint32_t size;   /* ring buffer record bytes */
	struct sval v;
};

/* Per-byte stack slot kinds. */
enum {
	STK_INVALID = 0, /* never written */
	STK_MISC,        /* data of unknown value */
	STK_SPILL,       /* part of an 8-byte register spill */
	STK_PART,        /* a narrower (1/2/4-byte) spill of a scalar that fits in it */
};

#define STACK_SLOTS (GBPF_STACK_SIZE / 8)

struct stack_slot {
	uint8_t kind[8]; /* per byte, STK_* */
	struct reg spill; /* valid when every kind is STK_SPILL, or for the STK_PART bytes */
};

/* Bytes of a slot holding a narrow spill (bit per byte), 0 if none. */
static inline unsigned slot_part_mask(const struct stack_slot *s)
{
	unsigned m = 0;

	for (int b = 0; b < 8; b++)
		if (s->kind[b] == STK_PART)
			m |= 1u << b;
	return m;
}

struct frame {
	uint32_t nslots;                      /* slots ever touched (prefix from the top) */
	int32_t callsite;                     /* caller's call insn, -1 for the entry */
	uint32_t subprog;                     /* function index */
	struct reg regs[GBPF_REG_COUNT];
	/* Must stay last: checkpoints allocate only the first nslots entries. */
	struct stack_slot stack[STACK_SLOTS]; /* slot i covers [-(i+1)*8, -i*8) */
};

#define MAX_REFS 16

struct vstate {
	struct frame *frames[GBPF_MAX_CALL_DEPTH];
	uint32_t curframe;
	uint32_t nrefs;
	uint32_t refs[MAX_REFS];    /* live ring buffer references */
	uint32_t ref_insn[MAX_REFS];
	uint64_t depth;             /* instructions executed on this path */
	struct checkpoint *parent;  /* last checkpoint of this path */
	uint32_t push_target;       /* where the last branch this path left pending goes */
	uint64_t push_depth;        /* depth at which it was left */
};

/* A stored state at a prune point. */
struct checkpoint {
	struct vstate st;
	struct checkpoint *parent;
	struct checkpoint *next;    /* list of the same instruction (in progress or explored) */
	struct checkpoint *prev;    /* in-progress list only */
	uint32_t branches;          /* unfinished paths below it; 0 = explored */
	uint32_t insn;
	uint64_t max_tail;          /* longest continuation seen below it */
	uint32_t hits, misses;
	uint64_t key;               /* explored and indexed: instruction + anchor values */
	struct checkpoint *hnext;   /* chain of the index (struct venv cp_index) */
};

struct subprog {
	uint32_t start, end; /* [start, end) */
	uint32_t stack_depth;
};

/* Per-instruction facts from the CFG pass. */
enum {
	INSN_PRUNE = 1u << 0,  /* store checkpoints here */
	INSN_SECOND = 1u << 1, /* second slot of a wide load */
	INSN_SEEN = 1u << 2,
	INSN_ANCHORED = 1u << 3, /* anchor / anchor_slots chosen (state.c) */
	INSN_INDEXED = 1u << 4,  /* some explored checkpoint of it is in cp_index */
};

struct pending {
	struct vstate st;
	uint32_t insn;
};

struct venv {
	const struct gbpf_prog_desc *prog;
	const struct gbpf_insn *insns;
	uint32_t insn_cnt;
	uint32_t attach;
	bool device;
	uint32_t ctx_size;
	uint32_t flags;
	uint64_t mem_size;
	uint64_t limit;
	uint32_t log_level;
	/* log */
	char *log_buf;
	size_t log_size, log_len;
	gbpf_verify_log_fn log_fn;
	void *log_ctx;
	/* analysis */
	uint8_t *insn_flags;
	uint16_t *live_in;  /* registers live before each instruction (bit per reg) */
	uint16_t *prec_in;  /* registers whose scalar value may still matter (precise.c) */
	uint64_t *sprec_in; /* current frame's stack slots whose spilled scalar may matter */
	struct subprog *subprogs;
	uint32_t subprog_cnt;
	struct checkpoint **cps; /* per instruction: explored checkpoints (prune others) */
	struct checkpoint **wip; /* per instruction: in progress, newest first (loop check) */
	uint32_t *wip_cnt;       /* per instruction: length of wip */
	uint32_t *cps_cnt;       /* per instruction: length of cps */
	/*
	 * Explored checkpoints whose anchor registers (per instruction: the
	 * live, needed scalars and spilled scalars that were constants in the
	 * first one explored there, typically loop counters) are constants are found by hash
	 * instead of in cps: a state can only be covered by one whose anchors
	 * hold its own constants.
	 */
	uint16_t *anchor;        /* per instruction, once INSN_ANCHORED */
	uint64_t *anchor_slots;  /* same for the top frame's stack slots (spilled constants) */
	struct checkpoint **cp_index;
	size_t cp_index_size, cp_index_cnt;
	uint64_t live_cps;       /* checkpoints held (memory bound) */
	struct pending *stack;
	size_t stack_len, stack_cap;
	uint32_t next_id;
	/* results */
	uint64_t processed, stored, pruned, worst;
	uint32_t max_stack;
	uint64_t ctx_read_mask; /* bit i: some path reads context byte i (0..63); all ones: a helper got ctx */
	bool have_r0;
	struct sval r0;
	int err;
	int64_t err_insn;
	char reason[160];
};

/* scalar.c: tnum and range arithmetic */
struct tnum tnum_const(uint64_t v);
struct tnum tnum_range(uint64_t min, uint64_t max);
bool tnum_is_const(struct tnum t);
bool tnum_in(struct tnum outer, struct tnum inner);
void sval_const(struct sval *v, uint64_t c);
void sval_unknown(struct sval *v);
void sval_sized(struct sval *v, unsigned bytes);
bool sval_is_const(const struct sval *v);
void sval_sync(struct sval *v);
bool sval_in(const struct sval *outer, const struct sval *inner);
void sval_join(struct sval *a, const struct sval *b);
int sval_alu(struct sval *dst, const struct sval *src, uint8_t op, int16_t off, bool is64);
void sval_end(struct sval *v, bool swap, int32_t bits);
/* Returns 1 taken, 0 not taken, -1 unknown. Refines t_* (taken) and f_* (fall-through). */
int sval_branch(uint8_t op, bool is32, const struct sval *d, const struct sval *s, struct sval *td,
		struct sval *ts, struct sval *fd, struct sval *fs);

/* log.c */
void vlog(struct venv *env, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void vlog_insn_text(struct venv *env, uint32_t idx, char *buf, size_t size);
void vlog_state(struct venv *env, const struct vstate *st);
int verr(struct venv *env, uint32_t idx, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
const char *reg_type_name(uint8_t type);

/* cfg.c */
int cfg_check(struct venv *env);

/* precise.c: fills prec_in / sprec_in (after cfg_check) */
int precise_check(struct venv *env);

/* state.c */
int state_copy(struct vstate *dst, const struct vstate *src);
/* Copy that is never modified (checkpoints): frames hold only their used slots. */
int state_copy_compact(struct vstate *dst, const struct vstate *src);
void state_free(struct vstate *st);
int state_push_frame(struct vstate *st, int32_t callsite, uint32_t subprog);
int prune_visit(struct venv *env, uint32_t idx, struct vstate *st, bool *pruned);
void path_end(struct venv *env, struct vstate *st, uint64_t extra_tail);
void checkpoints_free(struct venv *env);

/* helpers.c */
/* Registers (bit per reg) of helper @p id whose scalar value is checked (sizes). */
uint16_t verifier_helper_value_args(int32_t id);
/* May helper @p id return a pointer? */
bool verifier_helper_returns_ptr(int32_t id);
int check_helper_call(struct venv *env, uint32_t idx, struct vstate *st, int32_t id,
		      bool *path_ends);

/* mem.c: shared with helpers.c */
int check_mem_access(struct venv *env, uint32_t idx, struct vstate *st, const struct reg *ptr,
		     int64_t off, uint32_t size, bool write, const char *what);
int check_mem_range(struct venv *env, uint32_t idx, struct vstate *st, const struct reg *ptr,
		    const struct reg *size_reg, bool write, bool zero_ok, const char *what);
/* mem.c: load (*val out) or store (*val in, NULL = unknown data) through ptr */
int mem_access(struct venv *env, uint32_t idx, struct vstate *st, const struct reg *ptr, int64_t off,
	       uint32_t size, bool write, struct reg *val, bool sx, const char *what);
int mem_atomic(struct venv *env, uint32_t idx, struct vstate *st, const struct reg *ptr, int64_t off,
	       uint32_t size, const char *what);
void mark_unknown(struct reg *r);
void release_ref(struct vstate *st, uint32_t ref);

#endif /* GBPF_VERIFIER_VSTATE_H */
