/* SPDX-License-Identifier: MIT */
/*
 * An inlined probe's stack stores moved to where the stack may be read
 * (plugins/cuda/ptx/sink.c): probes in the code generator's form injected
 * at the basic blocks of hand-written PTX, the text of every site checked
 * for where the stores went, and assembled.
 * Usage: test_inject_sink PTXAS|- BLOCKS.ptx
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugins/cuda/ptx_codegen.h"
#include "tests/inject/block_inject.h"
#include "tests/inject/inject_util.h"
#include "tests/tap.h"

#define SITES 11u /* basic blocks of data/blocks.ptx */

static const char *ptxas;

/* Helpers the fragments call: a read-only map update and a probe_read that writes its buffer. */
static const char helpers[] =
	".visible .global .align 8 .u64 __gbpf_counts[64];\n"
	".visible .func (.param .b64 r) __gbpf_h_map_update(.param .b64 a, .param .b64 b, .param .b64 c,"
	" .param .b64 d)\n{\n.reg .b64 %x<3>;\nld.param.b64 %x1, [b];\nld.u32 %x2, [%x1];\n"
	"st.global.u64 [__gbpf_counts+0], %x2;\nst.param.b64 [r], %x2;\nret;\n}\n"
	".visible .func (.param .b64 r) __gbpf_h_probe_read(.param .b64 a, .param .b64 b, .param .b64 c)\n{\n"
	".reg .b64 %x<3>;\nld.param.b64 %x1, [a];\nmov.b64 %x2, 7;\nst.u32 [%x1], %x2;\n"
	"st.param.b64 [r], %x2;\nret;\n}\n";

/*
 * __gbpf_probe_0 with @body after the code generator's prologue (r10 the
 * frame pointer, r1 the context, a frame of @frame bytes) and the block index
 * stored at key word [stack+504] and 0 at [stack+508] (two deferrable stores).
 */
static char *fragment(const char *body, unsigned frame)
{
	char *s = NULL;

	if (asprintf(&s,
		     "%s.visible .func (.param .b64 __ret) __gbpf_probe_0(.param .b64 __ctx)\n{\n"
		     ".local .align 8 .b8 __gbpf_stack[%u];\n"
		     ".reg .b64 %%r<11>;\n.reg .b64 %%t<16>;\n.reg .b32 %%w<16>;\n.reg .pred %%p<8>;\n"
		     "mov.u64 %%r10, __gbpf_stack;\ncvta.local.u64 %%r10, %%r10;\nadd.u64 %%r10, %%r10, 512;\n"
		     "ld.param.b64 %%r1, [__ctx];\nld.u32 %%r2, [%%r1+24];\n"
		     "st.local.u32 [__gbpf_stack+504], %%r2;\nmov.b64 %%r3, 0;\n"
		     "st.local.u32 [__gbpf_stack+508], %%r3;\n%s"
		     "mov.b64 %%r0, 0;\nst.param.b64 [__ret], %%r0;\nret;\n}\n",
		     helpers, frame, body) < 0)
		return NULL;
	return s;
}

/* The helper call scope: update(map, &key, &value, flags) with r2 = &key. */
#define CALL_UPDATE                                                                                        \
	"mov.b64 %r2, %r10;\nadd.s64 %r2, %r2, -8;\n{\n.param .b64 __hr;\n.param .b64 __h1;\n"            \
	".param .b64 __h2;\n.param .b64 __h3;\n.param .b64 __h4;\nst.param.b64 [__h1], %r1;\n"             \
	"st.param.b64 [__h2], %r2;\nst.param.b64 [__h3], %r2;\nst.param.b64 [__h4], %r1;\n"                \
	"call (__hr), __gbpf_h_map_update, (__h1, __h2, __h3, __h4);\nld.param.b64 %r0, [__hr];\n}\n"

#define FLUSH_504 "st.local.b32 [__gbpf_stack+504], %__gbpf_fw"
#define FLUSH_508 "st.local.b32 [__gbpf_stack+508], %__gbpf_fw"
#define STORE_504 "st.local.u32 [__gbpf_stack+504], %r2;"

/* The checks of one case done: its module assembles; both texts freed. */
static void finish(const char *what, char *out, char *kernels)
{
	bi_check_ptxas(ptxas, what, out);
	free(out);
	free(kernels);
}

/* Occurrences of @needle in the text of each site between @from and the next @to, summed. */
static unsigned count_between(const char *text, const char *from, const char *to, const char *needle)
{
	unsigned n = 0;

	for (const char *p = strstr(text, from); p; p = strstr(p + 1, from)) {
		const char *e = strstr(p, to);
		size_t len = e ? (size_t)(e - p) : strlen(p);

		for (const char *q = strstr(p, needle); q && q < p + len; q = strstr(q + 1, needle))
			n++;
	}
	return n;
}

/*
 * The module instrumented with @body, its kernels' text in *kernels (the
 * probe function the module keeps, with the stores as written, left out).
 */
static char *inject_frame(const char *text, size_t len, const char *body, unsigned frame, const char *what,
			  char **kernels)
{
	char *frag = fragment(body, frame), *out, *func, *end;
	struct bi_report rep;

	*kernels = NULL;
	if (!frag)
		return NULL;
	out = bi_instrument(text, len, frag, &rep);
	free(frag);
	if (!tap_ok(out && rep.blocks == SITES, "%s: injected at %u block sites", what, rep.blocks)) {
		free(out);
		return NULL;
	}
	if (getenv("TEST_SINK_DUMP"))
		fputs(out, stderr);
	*kernels = strdup(out);
	func = *kernels ? strstr(*kernels, "__gbpf_probe_0(\n") : NULL;
	end = func ? strstr(func, "\n}\n") : NULL;
	if (!end) {
		tap_diag("%s: the probe function is not in the module", what);
		free(*kernels);
		free(out);
		*kernels = NULL;
		return NULL;
	}
	memmove(func, end + 3, strlen(end + 3) + 1);
	return out;
}

/* inject_frame with the eBPF stack alone (512 bytes) */
static char *inject(const char *text, size_t len, const char *body, const char *what, char **kernels)
{
	return inject_frame(text, len, body, 512, what, kernels);
}

/*
 * A counter's shape: the key read back (forwarded), a map word loaded
 * through a generic pointer that is not the stack, the hit counted, the
 * miss calling update with the key's address.
 */
static const char counter[] =
	"ld.local.u32 %w10, [__gbpf_stack+504];\nmov.u64 %t1, __gbpf_counts;\nld.u64 %t2, [%t1+8];\n"
	"cvt.u64.u32 %t3, %w10;\nsetp.ne.u64 %p1, %t2, %t3;\n@%p1 bra $Lslow;\n"
	"red.global.add.u64 [__gbpf_counts+16], 1;\nbra.uni $Ldone;\n$Lslow:\n" CALL_UPDATE "$Ldone:\n";

static void test_counter(const char *text, size_t len)
{
	char *k, *out = inject(text, len, counter, "counter", &k);

	if (!out)
		return;
	tap_ok(iu_count(k, STORE_504) == 0 && iu_count(k, "st.local.u32 [__gbpf_stack+508]") == 0,
	       "counter: the key's stores are not where the probe made them");
	tap_ok(count_between(k, "mov.u64 %t1, __gbpf_counts;", "$Lslow:", "[__gbpf_stack+") == 0,
	       "counter: the hit path stores nothing to the stack (its map load is not a stack read)");
	tap_ok(count_between(k, "$Lslow:", "call (__hr), __gbpf_h_map_update", FLUSH_504) == SITES &&
		       count_between(k, "$Lslow:", "call (__hr), __gbpf_h_map_update", FLUSH_508) == SITES,
	       "counter: both key words written before the update call at every site");
	tap_ok(count_between(k, "cvt.u32.u64 %w10, %__gbpf_fw", "$Lslow:", "") >= SITES,
	       "counter: the key's load is still forwarded from its register");
	finish("counter probe with moved stores", out, k);

	setenv("GBPF_PTX_NO_SINK", "1", 1);
	out = inject(text, len, counter, "counter, GBPF_PTX_NO_SINK=1", &k);
	unsetenv("GBPF_PTX_NO_SINK");
	if (out)
		tap_ok(iu_count(k, STORE_504) == SITES && iu_count(k, FLUSH_504) == 0,
		       "GBPF_PTX_NO_SINK=1: the stores stay where they were");
	free(out);
	free(k);
}

/*
 * The stack read through a generic pointer after a join, the stores stale
 * on both ways in: written once, just before the read.
 */
static void test_read_after_join(const char *text, size_t len)
{
	char *k, *out = inject(text, len,
			   "setp.eq.u64 %p1, %r2, 3;\n@%p1 bra $Lj;\nred.global.add.u64 [__gbpf_counts+8], 1;\n$Lj:\n"
			   "mov.b64 %r4, %r10;\nadd.s64 %r4, %r4, -8;\nld.u32 %r5, [%r4];\n"
			   "st.global.u32 [__gbpf_counts+24], %r5;\n",
			   "read after a join", &k);

	if (!out)
		return;
	tap_ok(count_between(k, "$Lj:", "ld.local.u32 %r5, [__gbpf_stack+504]", FLUSH_504) == SITES &&
		       iu_count(k, FLUSH_504) == SITES,
	       "read after a join: the word written once, between the join and the read");
	tap_ok(iu_count(k, "__gbpf_sk") == 0, "read after a join: no trampoline (stale on both ways in)");
	finish("read after a join", out, k);
}

/*
 * One way into the join calls probe_read into the stack (its register no
 * longer the word's value), the other skips it: the skipping branch must
 * write the word itself, through a trampoline; after the join the word is
 * in memory on both ways, so the read needs no store.
 */
static void test_clobber_on_one_way(const char *text, size_t len)
{
	char *k, *out = inject(text, len,
			   "setp.eq.u64 %p1, %r2, 3;\n@%p1 bra $Lj;\nmov.b64 %r4, %r10;\nadd.s64 %r4, %r4, -8;\n"
			   "{\n.param .b64 __hr;\n.param .b64 __h1;\n.param .b64 __h2;\n.param .b64 __h3;\n"
			   "st.param.b64 [__h1], %r4;\nst.param.b64 [__h2], %r1;\nst.param.b64 [__h3], %r1;\n"
			   "call (__hr), __gbpf_h_probe_read, (__h1, __h2, __h3);\nld.param.b64 %r0, [__hr];\n}\n"
			   "$Lj:\nld.local.u32 %r5, [__gbpf_stack+504];\nst.global.u32 [__gbpf_counts+24], %r5;\n",
			   "clobber on one way", &k);

	if (!out)
		return;
	tap_ok(count_between(k, "__gbpf_sk0:", "bra.uni $Lj;", FLUSH_504) == SITES &&
		       iu_count(k, "@%p1 bra __gbpf_sk0;") == SITES,
	       "clobber on one way: the branch around the call writes the word in a trampoline");
	tap_ok(count_between(k, "call (__hr), __gbpf_h_probe_read", "$Lj:", FLUSH_504) == 0 &&
		       count_between(k, "$Lj:", "ld.local.u32 %r5", FLUSH_504) == 0,
	       "clobber on one way: nothing stored over what probe_read wrote");
	tap_ok(count_between(k, "mov.b64 %r3, 0;", "{", FLUSH_504) == SITES,
	       "clobber on one way: written before the call that reads and writes the stack");
	finish("clobber on one way", out, k);
}

/*
 * The key's address stored to global memory and loaded back: a generic
 * load through the loaded pointer may read the stack.
 */
static void test_escaped_address(const char *text, size_t len)
{
	char *k, *out = inject(text, len,
			   "mov.b64 %r4, %r10;\nadd.s64 %r4, %r4, -8;\nst.global.u64 [__gbpf_counts+32], %r4;\n"
			   "ld.global.u64 %t1, [__gbpf_counts+32];\nld.u32 %r5, [%t1];\n"
			   "st.global.u32 [__gbpf_counts+24], %r5;\n",
			   "escaped address", &k);

	if (!out)
		return;
	tap_ok(count_between(k, "ld.global.u64 %t1, [__gbpf_counts+32];", "ld.u32 %r5, [%t1];", FLUSH_504) ==
		       SITES,
	       "escaped address: the word written before the load through the loaded pointer");
	finish("escaped address", out, k);
}

/*
 * After a join the fold forgets its snapshots and gives the next store the
 * same register: the first store, still unwritten, must reach memory
 * before that register changes, and both before the call that reads them.
 */
static void test_register_reused(const char *text, size_t len)
{
	char *k, *out = inject(text, len,
			       "setp.eq.u64 %p1, %r2, 3;\n@%p1 bra $Lj;\nred.global.add.u64 [__gbpf_counts+8], 1;\n$Lj:\n"
			       "mov.b64 %r4, 5;\nst.local.u32 [__gbpf_stack+496], %r4;\n" CALL_UPDATE,
			       "snapshot register reused", &k);
	const char *site, *flush, *reuse, *call;
	unsigned good = 0;

	if (!out)
		return;
	/* in each site: the +504 word (register fw0) written before fw0 takes the +496 word */
	for (site = strstr(k, "$Lj:"); site; site = strstr(site + 1, "$Lj:")) {
		flush = strstr(site, FLUSH_504);
		reuse = strstr(site, "mov.b64 %__gbpf_fw0, %r4;");
		call = strstr(site, "call (__hr), __gbpf_h_map_update");
		good += flush && reuse && call && flush < reuse && strstr(reuse, "st.local.b32 [__gbpf_stack+496], "
										  "%__gbpf_fw0;") < call;
	}
	tap_ok(good == SITES, "snapshot register reused: the old word written before, the new one after (%u sites)",
	       good);
	finish("snapshot register reused", out, k);
}

/*
 * The stores' bytes read by nothing after the point where they would be
 * written (mem_stride's key words: register reused after a join, or the
 * word held in different registers on the ways into a join): nothing is
 * stored at all. With a read after the join the word reaches memory on
 * both ways in, each with its own value.
 */
static void test_dead_stores(const char *text, size_t len)
{
	static const char reuse[] = "setp.eq.u64 %p1, %r2, 3;\n@%p1 bra $Lj;\nred.global.add.u64 [__gbpf_counts+8], 1;\n"
				    "$Lj:\nmov.b64 %r4, 5;\nst.local.u32 [__gbpf_stack+496], %r4;\n"
				    "red.global.add.u64 [__gbpf_counts+16], 1;\n";
	static const char rewritten[] = "setp.eq.u64 %p1, %r2, 3;\n@%p1 bra $Lj;\nmov.b64 %r4, 7;\n"
					"st.local.u32 [__gbpf_stack+504], %r4;\n$Lj:\n"
					"red.global.add.u64 [__gbpf_counts+8], 1;\n";
	static const char read_after[] = "mov.b64 %r4, %r10;\nadd.s64 %r4, %r4, -8;\nld.u32 %r5, [%r4];\n"
					 "st.global.u32 [__gbpf_counts+24], %r5;\n";
	char body[1024], *k, *out = inject(text, len, reuse, "dead after a reuse", &k);

	if (out) {
		tap_ok(iu_count(k, "[__gbpf_stack+") == 0 && iu_count(k, "__gbpf_sk") == 0,
		       "register reused, nothing read after: no stack store at any site");
		finish("dead after a reuse", out, k);
	}
	out = inject(text, len, rewritten, "dead at a join", &k);
	if (out) {
		tap_ok(iu_count(k, "[__gbpf_stack+") == 0 && iu_count(k, "__gbpf_sk") == 0,
		       "word in two registers at a join, nothing read after: no stack store, no trampoline");
		finish("dead at a join", out, k);
	}
	snprintf(body, sizeof(body), "%s%s", rewritten, read_after);
	out = inject(text, len, body, "live at a join", &k);
	if (out) {
		/* the way around the rewrite through a trampoline, the way through it falling into the join */
		tap_ok(iu_count(k, FLUSH_504) == 2 * SITES && iu_count(k, "@%p1 bra __gbpf_sk0;") == SITES &&
			       count_between(k, "__gbpf_sk0:", "bra.uni $Lj;", FLUSH_504) == SITES &&
			       iu_count(k, "ld.local.u32 %r5, [__gbpf_stack+504];") == SITES,
		       "word in two registers at a join, read after: written on both ways in, read from memory");
		finish("live at a join", out, k);
	}
}

/*
 * A loop that reads nothing of the stack, then the update call: the key is
 * written once, after the loop, not in it.
 */
static void test_loop(const char *text, size_t len)
{
	char *k, *out = inject(text, len,
			       "mov.u32 %w1, 0;\n$Lloop:\nred.global.add.u64 [__gbpf_counts+8], 1;\nadd.u32 %w1, %w1, 1;\n"
			       "setp.lt.u32 %p1, %w1, 4;\n@%p1 bra $Lloop;\n" CALL_UPDATE,
			       "loop", &k);

	if (!out)
		return;
	tap_ok(count_between(k, "$Lloop:", "@%p1 bra $Lloop;", "[__gbpf_stack+") == 0 &&
		       count_between(k, "@%p1 bra $Lloop;", "call (__hr), __gbpf_h_map_update", FLUSH_504) == SITES,
	       "loop: nothing stored in the loop, the key written after it, before the call");
	finish("loop", out, k);
}

/*
 * A store over the key's word under a predicate: it may not happen, so the
 * word's register is written first (then either value is in memory), not
 * taken as overwritten.
 */
static void test_predicated_store(const char *text, size_t len)
{
	char *k, *out = inject(text, len,
			       "setp.eq.u64 %p1, %r2, 3;\nmov.b64 %r4, %r10;\nadd.s64 %r4, %r4, -8;\nmov.b64 %r5, 9;\n"
			       "@%p1 st.u32 [%r4], %r5;\n" CALL_UPDATE,
			       "predicated store", &k);

	if (!out)
		return;
	tap_ok(count_between(k, "mov.b64 %r5, 9;", "@%p1 st.local.u32 [__gbpf_stack+504], %r5;", FLUSH_504) ==
		       SITES,
	       "predicated store: the deferred word written before the store that may not happen");
	finish("predicated store", out, k);
}

/*
 * The probe as sites call it (GBPF_PTX_NO_INLINE; past a kernel's inline
 * budget): its own body gets the same treatment once every kernel is
 * instrumented, so the hit path of every call stores nothing either.
 */
static void test_called_probe(const char *text, size_t len)
{
	char *k, *out, *func, *end;

	setenv("GBPF_PTX_NO_INLINE", "1", 1);
	out = inject(text, len, counter, "called probe", &k);
	unsetenv("GBPF_PTX_NO_INLINE");
	if (!out)
		return;
	func = strstr(out, "__gbpf_probe_0(\n");
	end = func ? strstr(func, "\n}\n") : NULL;
	if (tap_ok(end != NULL, "called probe: the function is in the module")) {
		*end = 0;
		tap_ok(iu_count(func, STORE_504) == 0 &&
			       count_between(func, "mov.u64 %t1, __gbpf_counts;", "$Lslow:", "[__gbpf_stack+") == 0 &&
			       count_between(func, "$Lslow:", "call (__hr), __gbpf_h_map_update", FLUSH_504) == 1,
		       "called probe: its hit path stores nothing, the key is written before the update call");
		*end = '\n';
	}
	tap_ok(iu_count(k, "call (__gbpf_ret), __gbpf_probe_0") == SITES, "called probe: called at every site");
	finish("called probe", out, k);

	/* the measurement switch leaves the called probe as the code generator wrote it too */
	setenv("GBPF_PTX_NO_INLINE", "1", 1);
	setenv("GBPF_PTX_NO_SINK", "1", 1);
	out = inject(text, len, counter, "called probe, GBPF_PTX_NO_SINK=1", &k);
	unsetenv("GBPF_PTX_NO_SINK");
	unsetenv("GBPF_PTX_NO_INLINE");
	func = out ? strstr(out, "__gbpf_probe_0(\n") : NULL;
	end = func ? strstr(func, "\n}\n") : NULL;
	if (end)
		*end = 0;
	tap_ok(end && iu_count(func, STORE_504) == 1 && iu_count(func, FLUSH_504) == 0,
	       "called probe, GBPF_PTX_NO_SINK=1: its store stays where it was");
	free(out);
	free(k);
}

/* A branch from inside a scope to the body's label: not followed, the stores stay. */
static void test_unfollowed(const char *text, size_t len)
{
	char *k, *out = inject(text, len,
			   "setp.eq.u64 %p1, %r2, 3;\n{\n.reg .b32 %x;\n@%p1 bra $Lout;\n}\n"
			   "ld.local.u32 %r5, [__gbpf_stack+504];\nst.global.u32 [__gbpf_counts+24], %r5;\n$Lout:\n",
			   "branch out of a scope", &k);

	if (!out)
		return;
	tap_ok(iu_count(k, STORE_504) == SITES && iu_count(k, FLUSH_504) == 0,
	       "branch out of a scope: the stores stay where the probe made them");
	finish("branch out of a scope", out, k);
}

/*
 * A store through a pointer loaded from a map (a reserved ring record, say) then a read of the key:
 * addressed .global, the store cannot write the stack and the read is forwarded from its register
 * (nothing stored); addressed generically, it may, so the fold forgets the word and the read
 * finds it in memory.
 */
static void test_store_past_global(const char *text, size_t len)
{
	static const char *const spaces[2] = {"cvta.to.global.u64 %t4, %t1;\nst.global.u32 [%t4+0], %r2;\n",
					      "st.u32 [%t1+0], %r2;\n"};

	for (int generic = 0; generic < 2; generic++) {
		const char *what = generic ? "store through a generic pointer" : "store to .global memory";
		char body[512], *k, *out;

		snprintf(body, sizeof(body),
			 "ld.global.u64 %%t1, [__gbpf_counts+40];\n%smov.b64 %%r4, %%r10;\nadd.s64 %%r4, %%r4, -8;\n"
			 "ld.u32 %%r5, [%%r4];\nst.global.u32 [__gbpf_counts+24], %%r5;\n",
			 spaces[generic]);
		out = inject(text, len, body, what, &k);
		if (!out)
			return;
		if (generic)
			tap_ok(iu_count(k, FLUSH_504) == SITES && iu_count(k, "ld.local.u32 %r5, [__gbpf_stack+504];") == SITES,
			       "%s: the key's word written, then read from memory", what);
		else
			tap_ok(iu_count(k, FLUSH_504) == 0 && iu_count(k, "ld.local.u32 %r5") == 0 &&
				       iu_count(k, "ld.u32 %r5") == 0,
			       "%s: the key's read forwarded from its register, nothing stored", what);
		finish(what, out, k);
	}
}

/*
 * Frames past the eBPF stack (ring records reserved there, plugins/cuda/ptx_reserve.c): the
 * probe is inlined and the kernel's one frame declared as large, its record words forwarded
 * like the stack's; a frame larger than the code generator makes keeps the call.
 */
static void test_frame_sizes(const char *text, size_t len)
{
	static const char record[] = "mov.u64 %r6, __gbpf_stack;\ncvta.local.u64 %r6, %r6;\nadd.u64 %r6, %r6, 512;\n"
				     "st.local.u64 [__gbpf_stack+520], %r2;\nld.local.u64 %t0, [__gbpf_stack+520];\n"
				     "st.global.u64 [__gbpf_counts+32], %t0;\n";
	char *k, *out = inject_frame(text, len, record, 576, "frame of 576 bytes", &k);

	if (out) {
		tap_ok(iu_count(k, ".local .align 8 .b8 __gbpf_stack[576];") >= 1 &&
			       iu_count(k, "__gbpf_probe_0") == 0 && iu_count(k, "[__gbpf_stack+520]") == 0,
		       "frame of 576 bytes: inlined, declared in the kernel, the record's word forwarded");
		finish("frame of 576 bytes", out, k);
	}
	out = inject_frame(text, len, record, GBPF_PTX_FRAME_MAX + 8, "frame past the largest", &k);
	if (out) {
		tap_ok(iu_count(k, "call (__gbpf_ret), __gbpf_probe_0") == SITES,
		       "frame of %u bytes (past GBPF_PTX_FRAME_MAX): the probe is called", GBPF_PTX_FRAME_MAX + 8);
		finish("frame past the largest", out, k);
	}
}

static void run(const char *text, size_t len)
{
	test_frame_sizes(text, len);
	test_store_past_global(text, len);
	test_counter(text, len);
	test_read_after_join(text, len);
	test_clobber_on_one_way(text, len);
	test_escaped_address(text, len);
	test_register_reused(text, len);
	test_dead_stores(text, len);
	test_loop(text, len);
	test_predicated_store(text, len);
	test_called_probe(text, len);
	test_unfollowed(text, len);
}

int main(int argc, char **argv)
{
	return bi_main(argc, argv, &ptxas, run);
}
