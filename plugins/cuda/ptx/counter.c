/* SPDX-License-Identifier: MIT */
/*
 * A counter's memory sites summed in registers (plugins/cuda/ptx_counter.h).
 *
 * When the memory probe only adds C to one key's value and the fragment
 * has its flush variant, each site of the kernel adds C to a 32-bit
 * register of its key (the site fields the key is built from: kind,
 * space, size, site) instead of running the probe: one add where an
 * inlined probe had its lookup's loads and compares and an atomic. Every
 * ret and exit of the kernel first branches to one block that runs the
 * flush variant once per key whose register is not zero, with the sum as
 * ctx->mem_value and the fields of one of the key's sites, then returns;
 * a site whose register reaches COUNTER_SUM_FLUSH flushes it there (a
 * call, on a path almost never taken), so that a long-running kernel's
 * counts reach the map while it runs and a sum never nears 2^32.
 *
 * What a reader of the map sees is the same sums, later: one atomic per
 * thread and key instead of one per access (the code generator made the
 * variant only where no other program names the map). Not used when a
 * device function of the module may end the thread (`exit` outside the
 * kernel: its sums would be lost), nor with GBPF_PTX_NO_COUNTER_SUM.
 */
#include "plugins/cuda/ptx/inject_internal.h"
#include "plugins/cuda/ptx_counter.h"

#include <stdio.h>
#include <string.h>

#include <gbpf/cuda_inject.h>

static bool is_exit(const struct gbpf_ptx_tok *op)
{
	return gbpf_ptx_tok_eq(op, "exit");
}

static bool block_has(const struct gbpf_ptx_module *m, const struct gbpf_ptx_block *b,
		      bool (*what)(const struct gbpf_ptx_tok *op))
{
	for (uint32_t i = 0; i < b->n; i++) {
		const struct gbpf_ptx_stmt *s = b->v[i];

		if (s->kind == GBPF_PTX_STMT_SCOPE && block_has(m, &s->body, what))
			return true;
		if (s->kind == GBPF_PTX_STMT_INSN && what(&m->toks[s->opcode]))
			return true;
	}
	return false;
}

/* A device function (not a kernel) with an instruction @p what says yes to (`exit`, a barrier). */
static bool module_funcs_have(const struct gbpf_ptx_module *m, bool (*what)(const struct gbpf_ptx_tok *op))
{
	for (uint32_t i = 0; i < m->n_items; i++) {
		const struct gbpf_ptx_item *it = &m->items[i];

		if (it->kind == GBPF_PTX_ITEM_FUNC && !it->func->is_entry && it->func->has_body &&
		    block_has(m, &it->func->body, what))
			return true;
	}
	return false;
}

/* The code generator's mark for probe @p probe (PTX_COUNTER_MARK_PREFIX) into @p sum; false if none. */
static bool find_mark(const struct gbpf_ptx_module *m, unsigned probe, struct counter_sum *sum)
{
	const size_t plen = strlen(PTX_COUNTER_MARK_PREFIX);

	for (uint32_t i = 0; i < m->n_items; i++) {
		const struct gbpf_ptx_item *it = &m->items[i];

		if (it->kind != GBPF_PTX_ITEM_DECL)
			continue;
		for (uint32_t j = it->toks.first; j < it->toks.first + it->toks.n; j++) {
			const struct gbpf_ptx_tok *tk = &m->toks[j];
			char name[96];
			unsigned p, flush, add, fields, rest = 0;
			int end = 0, got;

			if (tk->kind != GBPF_PTX_TOK_IDENT || tk->len <= plen || tk->len >= sizeof(name) ||
			    memcmp(tk->s, PTX_COUNTER_MARK_PREFIX, plen))
				continue;
			memcpy(name, tk->s, tk->len);
			name[tk->len] = 0;
			/* a fifth number: the probe was cut, its rest runs at the summed sites (ptx_split.h) */
			got = sscanf(name + plen, "%u_%u_%u_%u%n_%u%n", &p, &flush, &add, &fields, &end, &rest, &end);
			if (got < 4 || (size_t)end != tk->len - plen || p != probe)
				continue;
			if (!add || add > PTX_COUNTER_MAX_ADD || fields >> 4)
				return false;
			sum->flush = flush;
			sum->add = add;
			sum->fields = fields;
			sum->rest = got == 5 ? (int)rest : -1;
			return true;
		}
	}
	return false;
}

/* A function of the module with a body named as token @p name (not one declared only). */
static bool module_has_body_of(const struct gbpf_ptx_module *m, const struct gbpf_ptx_tok *name)
{
	for (uint32_t i = 0; i < m->n_items; i++) {
		const struct gbpf_ptx_item *it = &m->items[i];

		if (it->kind == GBPF_PTX_ITEM_FUNC && it->func->has_body &&
		    gbpf_ptx_tok_same(&m->toks[it->func->name], name))
			return true;
	}
	return false;
}

/*
 * A device function with a block barrier, or one the module only declares
 * (defined in another module, which may wait at one), but for the CUDA
 * runtime's own that do not (printf, malloc, free, assert).
 */
static bool module_funcs_barrier(const struct gbpf_ptx_module *m)
{
	static const char *const runtime[] = {"vprintf", "malloc", "free", "__assertfail"};

	if (module_funcs_have(m, gbpf_ptx_is_block_barrier))
		return true;
	for (uint32_t i = 0; i < m->n_items; i++) {
		const struct gbpf_ptx_item *it = &m->items[i];
		const struct gbpf_ptx_tok *name;
		bool known = false;

		if (it->kind != GBPF_PTX_ITEM_FUNC || it->func->is_entry || it->func->has_body)
			continue;
		name = &m->toks[it->func->name];
		for (size_t r = 0; r < sizeof(runtime) / sizeof(runtime[0]); r++)
			known = known || gbpf_ptx_tok_eq(name, runtime[r]);
		if (!known && !module_has_body_of(m, name))
			return true;
	}
	return false;
}

void gbpf_ptx_sum_setup(struct kctx *k)
{
	struct counter_sum *sum = &k->sum;

	memset(sum, 0, sizeof(*sum));
	sum->rest = -1;
	if (!(k->plan->sites & GBPF_PTX_SITE_MEM) || k->opts->no_sum)
		return;
	if (!find_mark(k->m, k->plan->mem_probe, sum) || !gbpf_ptx_probe_func(k->m, sum->flush) ||
	    (sum->rest >= 0 && !gbpf_ptx_probe_func(k->m, (unsigned)sum->rest)))
		return;
	/* the module's functions do not change while its kernels are instrumented: asked once */
	if (*k->funcs_exit < 0)
		*k->funcs_exit = module_funcs_have(k->m, is_exit);
	sum->exits = *k->funcs_exit;
	sum->on = !sum->exits;
	sum->exit = k->opts->sum_exit;
	if (gbpf_ptx_target_sm(k->m, NULL) < SUM_WARP_MIN_SM ||
	    k->m->version_major * 10 + k->m->version_minor < SUM_WARP_MIN_VERSION)
		sum->exit = SUM_EXIT_LANE;
	if (sum->exit == SUM_EXIT_FIRST) {
		if (*k->funcs_barrier < 0)
			*k->funcs_barrier = module_funcs_barrier(k->m);
		if (*k->funcs_barrier || block_has(k->m, &k->f->body, gbpf_ptx_is_block_barrier))
			sum->exit = SUM_EXIT_BLOCK;
	}
}

/* SUM_PRED: this thread is not the block's first, (0,0,0) (SUM_SCRATCH and SUM_MASK are clobbered). */
static void tx_not_first_thread(struct text *t)
{
	gbpf_ptx_tx(t, "mov.u32 " SUM_SCRATCH ", %%tid.x;\nmov.u32 " SUM_MASK ", %%tid.y;\n"
		       "or.b32 " SUM_SCRATCH ", " SUM_SCRATCH ", " SUM_MASK ";\nmov.u32 " SUM_MASK ", %%tid.z;\n"
		       "or.b32 " SUM_SCRATCH ", " SUM_SCRATCH ", " SUM_MASK ";\n"
		       "setp.ne.u32 " SUM_PRED ", " SUM_SCRATCH ", 0;\n");
}

/* SUM_MASK: the block's number of threads (SUM_SCRATCH is clobbered). */
static void tx_block_size(struct text *t)
{
	gbpf_ptx_tx(t, "mov.u32 " SUM_MASK ", %%ntid.x;\nmov.u32 " SUM_SCRATCH ", %%ntid.y;\n"
		       "mul.lo.u32 " SUM_MASK ", " SUM_MASK ", " SUM_SCRATCH ";\nmov.u32 " SUM_SCRATCH ", %%ntid.z;\n"
		       "mul.lo.u32 " SUM_MASK ", " SUM_MASK ", " SUM_SCRATCH ";\n");
}

void gbpf_ptx_sum_entry(struct text *t, const struct kctx *k)
{
	if (!k->sum.on)
		return;
	/* all of them: ptxas drops the moves of registers no site adds to */
	for (unsigned i = 0; i < COUNTER_SUM_MAX; i++)
		gbpf_ptx_tx(t, "mov.u32 " SUM_REG "%u, 0;\n", i);
	if (k->sum.exit != SUM_EXIT_BLOCK && k->sum.exit != SUM_EXIT_FIRST)
		return;
	/*
	 * The block's shared words start undefined: its first thread zeroes
	 * them before any thread can leave. Every thread of the block runs
	 * this, before anything of the kernel's own.
	 */
	tx_not_first_thread(t);
	gbpf_ptx_tx(t, "mov.u32 " SUM_MASK ", 0;\n");
	_Static_assert(COUNTER_SUM_MAX % 4 == 0, "the block's words are zeroed 16 bytes at a time");
	for (unsigned w = 0; w < COUNTER_SUM_MAX; w += 4)
		gbpf_ptx_tx(t, "@!" SUM_PRED " st.shared.v4.u32 [" SUM_SHARED "+%u], {" SUM_MASK ", " SUM_MASK ", "
			       SUM_MASK ", " SUM_MASK "};\n", 4 * w);
	gbpf_ptx_tx(t, "bar.sync 0;\n");
}

/* The register of the key of memory site @p mi (index @p site), a new one if there is room; -1 if not. */
static int key_of(struct counter_sum *sum, const struct mem_info *mi, unsigned site)
{
	const unsigned f = sum->fields;

	for (unsigned i = 0; i < sum->n; i++)
		if ((!(f & PTX_COUNTER_FIELD_SIZE) || sum->key[i].size == mi->size) &&
		    (!(f & PTX_COUNTER_FIELD_KIND) || sum->key[i].kind == mi->kind) &&
		    (!(f & PTX_COUNTER_FIELD_SPACE) || sum->key[i].space == mi->space) &&
		    (!(f & PTX_COUNTER_FIELD_SITE) || sum->key[i].site == site))
			return (int)i;
	if (sum->n == COUNTER_SUM_MAX)
		return -1;
	sum->key[sum->n].size = mi->size;
	sum->key[sum->n].kind = mi->kind;
	sum->key[sum->n].space = mi->space;
	sum->key[sum->n].site = site;
	return (int)sum->n++;
}

/*
 * The flush variant with key @p i's sum: the fields of the key's first
 * site, the sum as mem_value (%__gbpf_rd2), no address. The variant reads
 * mem_value, which no other probe may: the context is passed and stored
 * as for a probe that reads every memory field.
 */
static void tx_flush(struct text *t, struct kctx *k, unsigned i, bool may_inline)
{
	const struct counter_sum *sum = &k->sum;
	const struct mem_info mi = {.kind = sum->key[i].kind, .space = sum->key[i].space,
				    .size = sum->key[i].size};
	struct gbpf_ptx_plan plan = *k->plan;
	const struct gbpf_ptx_plan *saved = k->plan;
	struct gbpf_ptx_fold fold;

	gbpf_ptx_tx(t, "cvt.u64.u32 %%__gbpf_rd2, " SUM_REG "%u;\n", i);
	gbpf_ptx_tx(t, "mov.u64 %%__gbpf_rd1, 0;\n");
	gbpf_ptx_mem_fold(&fold, k, &mi, sum->key[i].site);
	plan.ctx_unused &= ~(GBPF_CUDA_CTX_UNUSED_MEM | GBPF_CUDA_CTX_UNUSED_MEM_VALUE);
	k->plan = &plan;
	gbpf_ptx_mem_probe_call(t, k, sum->flush, &fold, may_inline);
	k->plan = saved;
}

bool gbpf_ptx_sum_site(struct text *t, struct kctx *k, const struct mem_info *mi)
{
	struct counter_sum *sum = &k->sum;
	unsigned skip;
	int i;

	if (!sum->on)
		return false;
	if ((i = key_of(sum, mi, k->rep->n_mem)) < 0) {
		sum->over++;
		return false;
	}
	skip = k->n_labels++;
	gbpf_ptx_tx(t, "add.u32 " SUM_REG "%d, " SUM_REG "%d, %u;\n", i, i, sum->add);
	gbpf_ptx_tx(t, "setp.lt.u32 " SUM_PRED ", " SUM_REG "%d, %u;\n", i, k->opts->sum_flush);
	gbpf_ptx_tx(t, "@" SUM_PRED " bra __gbpf_L%u;\n", skip);
	tx_flush(t, k, (unsigned)i, false);
	gbpf_ptx_tx(t, "mov.u32 " SUM_REG "%d, 0;\n__gbpf_L%u:\n", i, skip);
	sum->sites++;
	return true;
}

void gbpf_ptx_sum_exit(struct text *t, struct kctx *k, const struct gbpf_ptx_stmt *s)
{
	if (!k->sum.on)
		return;
	/* the ret stays after the branch, never reached: the flush block returns */
	if (s->pred >= 0)
		gbpf_ptx_tx(t, "@%s%.*s ", s->pred_neg ? "!" : "", (int)k->m->toks[s->pred].len,
			    k->m->toks[s->pred].s);
	gbpf_ptx_tx(t, "bra " SUM_EXIT_LABEL ";\n");
}

/* Key @p i's flush at the exit, skipped where its sum is 0 (or, @p lead_only, in a lane not the lowest). */
static void tx_exit_flush(struct text *t, struct kctx *k, unsigned i, bool lead_only)
{
	unsigned skip = k->n_labels++;

	if (lead_only)
		gbpf_ptx_tx(t, "setp.eq.or.u32 " SUM_PRED ", " SUM_REG "%u, 0, " SUM_NOT_LEAD ";\n", i);
	else
		gbpf_ptx_tx(t, "setp.eq.u32 " SUM_PRED ", " SUM_REG "%u, 0;\n", i);
	gbpf_ptx_tx(t, "@" SUM_PRED " bra __gbpf_L%u;\n", skip);
	tx_flush(t, k, i, true);
	gbpf_ptx_tx(t, "__gbpf_L%u:\n", skip);
}

/*
 * The exit of SUM_EXIT_FIRST, in the lowest lane of those at the exit
 * (SUM_LOWER holds their number): each key's word gets its sum and count
 * by a reduction, which no lane waits for. The block's first thread (the
 * lowest lane of its warp) then waits until each word's count is the
 * block's size, and flushes its sum: the other warps leave without a round
 * trip to shared memory, where the last thread to leave waited for its
 * add's answer, and so did every warp before it (SUM_EXIT_BLOCK). The first
 * thread's warp is done with the kernel's work; that it stays only holds
 * the block's place, which the block keeps until its last warp leaves.
 */
static void tx_exit_first(struct text *t, struct kctx *k)
{
	for (unsigned i = 0; i < k->sum.n; i++)
		gbpf_ptx_tx(t, "shl.b32 " SUM_REG "%u, " SUM_REG "%u, %u;\nor.b32 " SUM_REG "%u, " SUM_REG "%u, "
			       SUM_LOWER ";\nred.shared.add.u32 [" SUM_SHARED "+%u], " SUM_REG "%u;\n",
			    i, i, SUM_COUNT_BITS, i, i, 4 * i, i);
	tx_not_first_thread(t);
	gbpf_ptx_tx(t, "@" SUM_PRED " ret;\n");
	tx_block_size(t);
	/* a sleep between reads: the wait lasts until the block's slowest warp leaves */
	for (unsigned i = 0; i < k->sum.n; i++) {
		unsigned wait = k->n_labels++, done = k->n_labels++;

		gbpf_ptx_tx(t, "__gbpf_L%u:\nld.volatile.shared.u32 " SUM_REG "%u, [" SUM_SHARED "+%u];\n"
			       "and.b32 " SUM_SCRATCH ", " SUM_REG "%u, %u;\nsetp.eq.u32 " SUM_PRED ", " SUM_SCRATCH ", "
			       SUM_MASK ";\n@" SUM_PRED " bra __gbpf_L%u;\nnanosleep.u32 %u;\nbra __gbpf_L%u;\n"
			       "__gbpf_L%u:\nshr.u32 " SUM_REG "%u, " SUM_REG "%u, %u;\n",
			    wait, i, 4 * i, i, (1u << SUM_COUNT_BITS) - 1, done, SUM_FIRST_SLEEP_NS, wait, done, i, i,
			    SUM_COUNT_BITS);
	}
	for (unsigned i = 0; i < k->sum.n; i++)
		tx_exit_flush(t, k, i, false);
	gbpf_ptx_tx(t, "ret;\n");
}

/*
 * Warp mode: the lowest lane's sums, just added by redux.sync, pass through local memory,
 * which ptxas cannot see through. A redux.sync's result is a uniform register: ptxas takes
 * it to be the same in every lane that runs the code after it, and folds the warp-level
 * steps of that code. But the lowest lanes of two groups that reached the exit at different
 * times may run on together (a convergence barrier in the flush's lookup joins them), each
 * with its own group's sum. On the H200 the flush's aggregated add to the counter, whose
 * match.all ptxas had folded to true, then added the first lane's sum once for each of
 * them (the warp mode's over-count of sessions 26 and 27: 143,611 for 143,300, in 1 to 3
 * of 8 launches of test_inline_run's divergent kernel; none in the 144 since). Loaded from
 * memory, each lane's sum is its own. The load's address adds the lanes below this one
 * (none, in the lane that loads), so ptxas cannot forward the store to it; PTX has no
 * volatile local access, and a volatile generic one cost mem_count 1.23x -> 1.82x.
 *
 * First and block mode need none of this: their lowest lanes use the sums only in the
 * shared-memory add that follows the reduction in straight-line code, where no other lane
 * can join them, and the flush takes its sum from what shared memory returns. Done there
 * too, it cost mem_count 4% (1.24x -> 1.29x, H200, session 27).
 */
static void tx_sums_opaque(struct text *t, struct kctx *k)
{
	gbpf_ptx_tx(t, "mov.u64 %%__gbpf_rd2, " SUM_OPAQUE ";\nmul.wide.u32 %%__gbpf_rd1, " SUM_LOWER ", 4;\n"
		       "add.u64 %%__gbpf_rd2, %%__gbpf_rd2, %%__gbpf_rd1;\n");
	for (unsigned i = 0; i < k->sum.n; i++)
		gbpf_ptx_tx(t, "@!" SUM_NOT_LEAD " st.local.u32 [" SUM_OPAQUE "+%u], " SUM_REG "%u;\n"
			       "@!" SUM_NOT_LEAD " ld.local.u32 " SUM_REG "%u, [%%__gbpf_rd2+%u];\n",
			    4 * i, i, i, 4 * i);
}

void gbpf_ptx_sum_flush_block(struct text *t, struct kctx *k)
{
	if (!k->sum.on)
		return;
	gbpf_ptx_tx(t, SUM_EXIT_LABEL ":\n");
	/*
	 * A key is the same in every lane (the site's constant fields, the
	 * kernel, the launch), so the lanes that reach the exit together add
	 * their sums. In warp mode the lowest of them flushes the total: one
	 * lookup a warp instead of one a lane (the flush's atomic is one a
	 * warp either way: the code generator aggregates it). In block mode
	 * that lane adds to each key's shared word the total shifted past
	 * SUM_COUNT_BITS plus its number of lanes; the lane whose add brings a
	 * word's count to the block's size has the block's whole sum (what the
	 * add returned, and its own) and flushes it: one lookup a block and
	 * key, where the warps' chains of dependent loads were what the flush
	 * cost (docs/BENCHMARKS.md, session 24). Session 24 kept the counts in
	 * a word of their own, with an acquire-release add that cost each
	 * warp's exit a fence (MEMBAR.ALL.CTA) to order the sums' words before
	 * it; one word a key needs no order. The words are 32 bits: a 64-bit
	 * add to shared memory is a compare-and-swap loop (H200, session 25:
	 * mem_count 1.86x against 1.42x). In first mode (the default where the
	 * module has no block barrier) no warp waits for its add's answer: the
	 * block's first thread waits for all of them (tx_exit_first; mem_count
	 * 1.34x -> 1.24x).
	 */
	if (k->sum.exit == SUM_EXIT_LANE) {
		for (unsigned i = 0; i < k->sum.n; i++)
			tx_exit_flush(t, k, i, false);
		gbpf_ptx_tx(t, "ret;\n");
		return;
	}
	gbpf_ptx_tx(t, "activemask.b32 " SUM_MASK ";\nmov.u32 " SUM_LOWER ", %%lanemask_lt;\n"
		       "and.b32 " SUM_LOWER ", " SUM_LOWER ", " SUM_MASK ";\n"
		       "setp.ne.u32 " SUM_NOT_LEAD ", " SUM_LOWER ", 0;\n");
	for (unsigned i = 0; i < k->sum.n; i++)
		gbpf_ptx_tx(t, "redux.sync.add.u32 " SUM_REG "%u, " SUM_REG "%u, " SUM_MASK ";\n", i, i);
	if (k->sum.exit == SUM_EXIT_WARP) {
		tx_sums_opaque(t, k);
		for (unsigned i = 0; i < k->sum.n; i++)
			tx_exit_flush(t, k, i, true);
		gbpf_ptx_tx(t, "ret;\n");
		return;
	}
	gbpf_ptx_tx(t, "@" SUM_NOT_LEAD " ret;\npopc.b32 " SUM_LOWER ", " SUM_MASK ";\n");
	if (k->sum.exit == SUM_EXIT_FIRST) {
		tx_exit_first(t, k);
		return;
	}
	/* the lanes (SUM_LOWER), each key's add (SUM_WORD), all before the first wait for one */
	for (unsigned i = 0; i < k->sum.n; i++)
		gbpf_ptx_tx(t, "shl.b32 " SUM_WORD "%u, " SUM_REG "%u, %u;\nor.b32 " SUM_WORD "%u, " SUM_WORD "%u, "
			       SUM_LOWER ";\natom.shared.add.u32 " SUM_WORD "%u, [" SUM_SHARED "+%u], " SUM_WORD "%u;\n",
			    i, i, SUM_COUNT_BITS, i, i, i, 4 * i, i);
	tx_block_size(t);
	/*
	 * Key i's register: the block's sum where this add was the word's last (this warp's total
	 * and what the others added), else 0. All of them before the first flush, so that only
	 * the registers live across a flush's lookup (the deepest code of the kernel): with each
	 * key's word and the counts live there too, mem_count's vector add took 38 registers
	 * instead of 32 (with 64-bit words; 6 blocks of 256 threads an SM instead of 8).
	 */
	for (unsigned i = 0; i < k->sum.n; i++)
		gbpf_ptx_tx(t, "and.b32 " SUM_SCRATCH ", " SUM_WORD "%u, %u;\nadd.u32 " SUM_SCRATCH ", " SUM_SCRATCH ", "
			       SUM_LOWER ";\nsetp.eq.u32 " SUM_PRED ", " SUM_SCRATCH ", " SUM_MASK ";\n"
			       "shr.u32 " SUM_WORD "%u, " SUM_WORD "%u, %u;\nadd.u32 " SUM_WORD "%u, " SUM_WORD "%u, " SUM_REG "%u;\n"
			       "selp.b32 " SUM_REG "%u, " SUM_WORD "%u, 0, " SUM_PRED ";\n",
			    i, (1u << SUM_COUNT_BITS) - 1, i, i, SUM_COUNT_BITS, i, i, i, i, i);
	for (unsigned i = 0; i < k->sum.n; i++)
		tx_exit_flush(t, k, i, false);
	gbpf_ptx_tx(t, "ret;\n");
}

void gbpf_ptx_sum_report(const struct kctx *k, char *reason, size_t size)
{
	const struct counter_sum *sum = &k->sum;
	size_t used = strlen(reason);

	if (sum->sites)
		used += (size_t)snprintf(reason + used, size - used,
					 "%s%u memory %s summed per thread in %u %s (the counter's map gets them "
					 "at the thread's exit%s%s)", used ? "; " : "", sum->sites,
					 sum->sites == 1 ? "site" : "sites", sum->n, sum->n == 1 ? "register" : "registers",
					 sum->exit == SUM_EXIT_FIRST ? ", added across the block, its first thread flushes"
					 : sum->exit == SUM_EXIT_BLOCK ? ", added across the block"
					 : sum->exit == SUM_EXIT_WARP ? ", added across the warp" : "",
					 sum->rest >= 0 ? "; what the probe does after counting runs at each site" : "");
	if (used < size && sum->sites && k->opts->sum_exit_ignored)
		used += (size_t)snprintf(reason + used, size - used,
					 "; GBPF_PTX_COUNTER_SUM_EXIT is not lane, warp, block or first: ignored");
	if (used < size && sum->over)
		used += (size_t)snprintf(reason + used, size - used,
					 "%s%u memory %s of keys past the first %u %s the counter", used ? "; " : "",
					 sum->over, sum->over == 1 ? "site" : "sites", COUNTER_SUM_MAX,
					 sum->over == 1 ? "runs" : "run");
	if (used < size && sum->exits)
		snprintf(reason + used, size - used,
			 "%smemory sites not summed: a device function of the module may end the thread (exit)",
			 used ? "; " : "");
}
