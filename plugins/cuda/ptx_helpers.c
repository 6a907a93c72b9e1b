/* SPDX-License-Identifier: MIT */
/*
 * eBPF to PTX: helper calls.
 *
 * Helpers that read a special register (thread and block indices, timers,
 * SM / warp / lane ids) or compute (log2: clz) are emitted inline: a call
 * would cost more than the helper. Everything else is a module-scope .func named __gbpf_h_*,
 * emitted once per module and only when some program uses it, so that a
 * probe fragment carries no dead code into the application's module.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <gbpf/helper_ids.h>

#include "cuda_printq.h"
#include "maps/map_layout.h"
#include "ptx_codegen.h"
#include "ptx_internal.h"
#include "ptx_maps.h"

/* Helpers implemented by device functions, with their parameter count. */
struct mod_helper {
	uint32_t id;
	const char *fn;
	int nargs;
};

static const struct mod_helper mod_helpers[] = {
	{GBPF_HELPER_MAP_LOOKUP_ELEM, "__gbpf_h_map_lookup", 2},
	{GBPF_HELPER_MAP_UPDATE_ELEM, "__gbpf_h_map_update", 4},
	{GBPF_HELPER_MAP_DELETE_ELEM, "__gbpf_h_map_delete", 2},
	{GBPF_HELPER_PROBE_READ, "__gbpf_h_probe_read", 3},
	{GBPF_HELPER_PROBE_READ_USER, "__gbpf_h_probe_read", 3},
	{GBPF_HELPER_PROBE_READ_KERNEL, "__gbpf_h_probe_read", 3},
	{GBPF_HELPER_TRACE_PRINTK, "__gbpf_h_trace_printk", 5},
	{GBPF_HELPER_GPU_PUTS, "__gbpf_h_puts", 1},
	{GBPF_HELPER_GET_PRANDOM_U32, "__gbpf_h_prandom", 0},
	{GBPF_HELPER_PERF_EVENT_OUTPUT, "__gbpf_h_perf_event_output", 5},
	{GBPF_HELPER_RINGBUF_OUTPUT, "__gbpf_h_ringbuf_output", 4},
	{GBPF_HELPER_RINGBUF_RESERVE, "__gbpf_h_ringbuf_reserve", 3},
	{GBPF_HELPER_RINGBUF_SUBMIT, "__gbpf_h_ringbuf_submit", 2},
	{GBPF_HELPER_RINGBUF_DISCARD, "__gbpf_h_ringbuf_discard", 2},
};

static const struct mod_helper *mod_helper_find(uint32_t id)
{
	size_t i;

	for (i = 0; i < sizeof(mod_helpers) / sizeof(mod_helpers[0]); i++)
		if (mod_helpers[i].id == id)
			return &mod_helpers[i];
	return NULL;
}

static int inline_helper(uint32_t id)
{
	switch (id) {
	case GBPF_HELPER_KTIME_GET_NS:
	case GBPF_HELPER_KTIME_GET_BOOT_NS:
	case GBPF_HELPER_GET_SMP_PROCESSOR_ID:
	case GBPF_HELPER_GET_CURRENT_PID_TGID:
	case GBPF_HELPER_GPU_GLOBALTIMER:
	case GBPF_HELPER_GPU_BLOCK_IDX:
	case GBPF_HELPER_GPU_BLOCK_DIM:
	case GBPF_HELPER_GPU_THREAD_IDX:
	case GBPF_HELPER_GPU_MEMBAR:
	case GBPF_HELPER_GPU_EXIT:
	case GBPF_HELPER_GPU_GRID_DIM:
	case GBPF_HELPER_GPU_SM_ID:
	case GBPF_HELPER_GPU_WARP_ID:
	case GBPF_HELPER_GPU_LANE_ID:
	case GBPF_HELPER_GPU_GLOBAL_THREAD_ID:
	case GBPF_HELPER_GPU_THREAD_COUNT:
	case GBPF_HELPER_LOG2:
		return 1;
	default:
		return 0;
	}
}

int ptx_helper_known(uint32_t id)
{
	return inline_helper(id) || mod_helper_find(id) != NULL;
}

int gbpf_ptx_helper_supported(uint32_t id)
{
	return ptx_helper_known(id);
}

void ptx_helper_mark(uint8_t *used, uint32_t id)
{
	if (id >= PTX_HELPER_ID_MAX || !ptx_helper_known(id))
		return;
	used[id] = 1;
}

/* Linear thread id in the grid into %t10 (uses %t11..%t13, %w10..%w11). */
static const char gtid_ptx[] =
	"mov.u32 %w10, %ntid.x;\nmov.u32 %w11, %ntid.y;\nmul.wide.u32 %t11, %w10, %w11;\n"
	"mov.u32 %w10, %ntid.z;\ncvt.u64.u32 %t12, %w10;\nmul.lo.u64 %t11, %t11, %t12;\n"
	"mov.u32 %w10, %nctaid.x;\nmov.u32 %w11, %ctaid.y;\nmul.wide.u32 %t12, %w10, %w11;\n"
	"mov.u32 %w10, %nctaid.y;\nmov.u32 %w11, %ctaid.z;\nmul.wide.u32 %t13, %w10, %w11;\n"
	"mov.u32 %w10, %nctaid.x;\ncvt.u64.u32 %t10, %w10;\nmul.lo.u64 %t13, %t13, %t10;\n"
	"add.u64 %t12, %t12, %t13;\nmov.u32 %w10, %ctaid.x;\ncvt.u64.u32 %t13, %w10;\n"
	"add.u64 %t12, %t12, %t13;\nmul.lo.u64 %t12, %t12, %t11;\n"
	"mov.u32 %w10, %ntid.x;\nmov.u32 %w11, %tid.y;\nmul.wide.u32 %t13, %w10, %w11;\n"
	"mov.u32 %w10, %ntid.y;\nmov.u32 %w11, %tid.z;\nmul.wide.u32 %t10, %w10, %w11;\n"
	"mov.u32 %w10, %ntid.x;\ncvt.u64.u32 %t11, %w10;\nmul.lo.u64 %t10, %t10, %t11;\n"
	"add.u64 %t13, %t13, %t10;\nmov.u32 %w10, %tid.x;\ncvt.u64.u32 %t10, %w10;\n"
	"add.u64 %t13, %t13, %t10;\nadd.u64 %t10, %t12, %t13;\n";

static void emit_xyz(struct ptx_cg *cg, const char *sreg)
{
	static const char axis[3] = {'x', 'y', 'z'};
	int i;

	/*
	 * bpftime's helpers write through three pointers; NULL ones are
	 * skipped. A pointer known to be the frame plus an aligned constant
	 * (the usual `&x` of a stack variable) is stored as a .local access
	 * at that offset, as the probe's own stack loads are addressed, so
	 * that ptxas can forward the value instead of a generic store.
	 */
	for (i = 0; i < 3; i++) {
		long long fo = (long long)GBPF_STACK_SIZE + cg->stk_off[i + 1];

		ptx_buf_printf(cg->b, "mov.u32 %%w10, %s.%c;\ncvt.u64.u32 %%t10, %%w10;\n", sreg, axis[i]);
		if (cg->stk_known[i + 1] && fo >= 0 && fo + 8 <= GBPF_STACK_SIZE && fo % 8 == 0)
			ptx_buf_printf(cg->b, "st.local.u64 [__gbpf_stack+%lld], %%t10;\n", fo);
		else
			ptx_buf_printf(cg->b, "setp.ne.u64 %%p6, %%r%d, 0;\n@%%p6 st.u64 [%%r%d], %%t10;\n", i + 1,
				       i + 1);
	}
	ptx_buf_puts(cg->b, "mov.u64 %r0, 0;\n");
}

static void emit_inline(struct ptx_cg *cg, uint32_t id)
{
	struct ptx_buf *b = cg->b;

	switch (id) {
	case GBPF_HELPER_KTIME_GET_NS:
	case GBPF_HELPER_KTIME_GET_BOOT_NS:
		/*
		 * %globaltimer counts Unix-epoch nanoseconds; bpf_ktime_get_ns is
		 * the host's CLOCK_MONOTONIC, as host probes see it: the host sets
		 * __gbpf_clock_off (CLOCK_REALTIME - CLOCK_MONOTONIC) in each module,
		 * so GPU and host timestamps of one object compare (launchlate).
		 */
		ptx_buf_puts(b, "mov.u64 %r0, %globaltimer;\nld.global.u64 %t10, [__gbpf_clock_off];\n"
				"sub.u64 %r0, %r0, %t10;\n");
		break;
	case GBPF_HELPER_GPU_GLOBALTIMER:
		ptx_buf_puts(b, "mov.u64 %r0, %globaltimer;\n");
		break;
	case GBPF_HELPER_GET_SMP_PROCESSOR_ID:
	case GBPF_HELPER_GPU_SM_ID:
		ptx_buf_puts(b, "mov.u32 %w10, %smid;\ncvt.u64.u32 %r0, %w10;\n");
		break;
	case GBPF_HELPER_GPU_WARP_ID:
		ptx_buf_puts(b, "mov.u32 %w10, %warpid;\ncvt.u64.u32 %r0, %w10;\n");
		break;
	case GBPF_HELPER_GPU_LANE_ID:
		ptx_buf_puts(b, "mov.u32 %w10, %laneid;\ncvt.u64.u32 %r0, %w10;\n");
		break;
	case GBPF_HELPER_GET_CURRENT_PID_TGID:
		ptx_buf_puts(b, "ld.global.u64 %r0, [__gbpf_pid_tgid];\n");
		break;
	case GBPF_HELPER_GPU_BLOCK_IDX:
		emit_xyz(cg, "%ctaid");
		break;
	case GBPF_HELPER_GPU_BLOCK_DIM:
		emit_xyz(cg, "%ntid");
		break;
	case GBPF_HELPER_GPU_THREAD_IDX:
		emit_xyz(cg, "%tid");
		break;
	case GBPF_HELPER_GPU_GRID_DIM:
		emit_xyz(cg, "%nctaid");
		break;
	case GBPF_HELPER_GPU_MEMBAR:
		ptx_buf_puts(b, "membar.sys;\nmov.u64 %r0, 0;\n");
		break;
	case GBPF_HELPER_GPU_EXIT:
		ptx_emit_gpu_exit(cg);
		break;
	case GBPF_HELPER_GPU_GLOBAL_THREAD_ID:
		if (cg->kernel && cg->cur == 0) {
			/* the run kernel is 1-D and already holds the id */
			ptx_buf_puts(b, "mov.u64 %r0, %gtid;\n");
			break;
		}
		ptx_buf_puts(b, gtid_ptx);
		ptx_buf_puts(b, "mov.u64 %r0, %t10;\n");
		break;
	case GBPF_HELPER_GPU_THREAD_COUNT:
		ptx_buf_puts(b, "mov.u32 %w10, %ntid.x;\nmov.u32 %w11, %ntid.y;\nmul.wide.u32 %r0, %w10, %w11;\n"
				"mov.u32 %w10, %ntid.z;\ncvt.u64.u32 %t10, %w10;\nmul.lo.u64 %r0, %r0, %t10;\n"
				"mov.u32 %w10, %nctaid.x;\nmov.u32 %w11, %nctaid.y;\nmul.wide.u32 %t10, %w10, %w11;\n"
				"mul.lo.u64 %r0, %r0, %t10;\nmov.u32 %w10, %nctaid.z;\ncvt.u64.u32 %t10, %w10;\n"
				"mul.lo.u64 %r0, %r0, %t10;\n");
		break;
	case GBPF_HELPER_LOG2:
		/* clz of 0 is 64: 63 - 64 clamps to bucket 0, as 1's */
		ptx_buf_puts(b, "clz.b64 %w10, %r1;\nsub.s32 %w10, 63, %w10;\nmax.s32 %w10, %w10, 0;\n"
				"cvt.u64.u32 %r0, %w10;\n");
		break;
	default:
		break;
	}
}

void ptx_emit_call_arg(struct ptx_cg *cg, unsigned arg, unsigned reg)
{
	long long fo = reg < 10 ? (long long)GBPF_STACK_SIZE + cg->stk_off[reg] : -1;

	if (reg < 10 && cg->stk_known[reg] && fo >= 0 && fo <= GBPF_STACK_SIZE)
		ptx_buf_printf(cg->b,
			       "mov.u64 %%__sa, __gbpf_stack;\ncvta.local.u64 %%__sa, %%__sa;\nadd.u64 %%__sa, %%__sa, %lld;\n"
			       "st.param.b64 [__h%u], %%__sa;\n",
			       fo, arg);
	else
		ptx_buf_printf(cg->b, "st.param.b64 [__h%u], %%r%u;\n", arg, reg);
}

static void emit_mod_call(struct ptx_cg *cg, const struct mod_helper *h)
{
	struct ptx_buf *b = cg->b;
	int i;

	ptx_buf_puts(b, "{\n.param .b64 __hr;\n" PTX_STACK_ARG_DECL);
	for (i = 1; i <= h->nargs; i++) {
		ptx_buf_printf(b, ".param .b64 __h%d;\n", i);
		ptx_emit_call_arg(cg, (unsigned)i, (unsigned)i);
	}
	ptx_buf_printf(b, "call (__hr), %s, (", h->fn);
	for (i = 1; i <= h->nargs; i++)
		ptx_buf_printf(b, "%s__h%d", i > 1 ? ", " : "", i);
	ptx_buf_puts(b, ");\nld.param.b64 %r0, [__hr];\n}\n");
}

/* %t0.. = the record's @p words words at @p frame_off in the frame (the fold forwards them from registers) */
static void emit_frame_words(struct ptx_cg *cg, long long frame_off, unsigned words)
{
	for (unsigned k = 0; k < words; k++)
		ptx_buf_printf(cg->b, "ld.local.u64 %%t%u, [__gbpf_stack+%lld];\n", k, frame_off + 8 * k);
}

void ptx_emit_ringbuf_output_inline(struct ptx_cg *cg, const char *map_reg, long long frame_off, unsigned words)
{
	emit_frame_words(cg, frame_off, words);
	ptx_ring_emit_output_inline(cg->b, map_reg, words, cg->uniq++, cg->prog_idx);
}

/*
 * bpf_ringbuf_output / bpf_perf_event_output of a record at a known place in the frame: its words
 * are read here, where the fold (plugins/cuda/ptx/fold.c) forwards them from the registers the
 * probe stored, and passed by value to @p fn after @p lead (the map, and the flags for a perf
 * array), so that an injected probe's record is neither stored to local memory nor read back by
 * the helper (kernelretsnoop: 12 local stores and 6 generic loads a thread before).
 */
void ptx_emit_output_by_value(struct ptx_cg *cg, const char *fn, const char *const *lead, unsigned n_lead,
			      long long frame_off, unsigned words)
{
	struct ptx_buf *b = cg->b;

	emit_frame_words(cg, frame_off, words);
	ptx_buf_puts(b, "{\n.param .b64 __hr;\n");
	for (unsigned i = 0; i < n_lead; i++)
		ptx_buf_printf(b, ".param .b64 __h%u;\nst.param.b64 [__h%u], %s;\n", i + 1, i + 1, lead[i]);
	ptx_buf_printf(b, ".param .b64 __hn;\nst.param.b64 [__hn], %u;\n", words * 8);
	for (unsigned k = 0; k < PTX_RING_WARP_MAX_WORDS - 1; k++) {
		ptx_buf_printf(b, ".param .b64 __hw%u;\n", k);
		if (k < words)
			ptx_buf_printf(b, "st.param.b64 [__hw%u], %%t%u;\n", k, k);
		else
			ptx_buf_printf(b, "st.param.b64 [__hw%u], 0;\n", k);
	}
	ptx_buf_printf(b, "call (__hr), %s, (", fn);
	for (unsigned i = 0; i < n_lead; i++)
		ptx_buf_printf(b, "__h%u, ", i + 1);
	ptx_buf_puts(b, "__hn");
	for (unsigned k = 0; k < PTX_RING_WARP_MAX_WORDS - 1; k++)
		ptx_buf_printf(b, ", __hw%u", k);
	ptx_buf_puts(b, ");\nld.param.b64 %r0, [__hr];\n}\n");
}

int ptx_emit_helper_call(struct ptx_cg *cg, size_t pc, uint32_t id)
{
	const struct mod_helper *h;
	long long frame_off;
	unsigned words;
	int rc;

	/* a thread's own values (GPU_THREAD_LOCAL): in its frame, never through the map's block */
	rc = ptx_emit_thread_local_call(cg, pc, id);
	if (rc)
		return rc < 0 ? rc : 0;
	if (id == GBPF_HELPER_MAP_LOOKUP_ELEM && ptx_emit_known_lookup(cg, pc))
		return 0;
	/* a record the frame holds until its submit (ptx_reserve.c) */
	if (id == GBPF_HELPER_RINGBUF_RESERVE && ptx_rsv_emit_reserve(cg, pc))
		return 0;
	if ((id == GBPF_HELPER_RINGBUF_SUBMIT || id == GBPF_HELPER_RINGBUF_DISCARD) && ptx_rsv_emit_commit(cg, id))
		return 0;
	/*
	 * A record reserved in the ring: its data is 8-byte aligned (data areas are, records are
	 * multiples of 8 apart and the header is 8 bytes) or NULL, so the probe's stores into it need
	 * no run-time alignment check and byte path (one branch and 8 byte stores a field). It is
	 * global memory (a ring in device memory or in host memory mapped for the device), so the
	 * stores address .global, which tells the fold they leave the probe's stack alone (ptx_mem.c).
	 */
	if (id == GBPF_HELPER_RINGBUF_RESERVE) {
		cg->call_r0_align = 3;
		cg->call_r0_ptr = PTX_PTR_RING;
	}
	if (id == GBPF_HELPER_MAP_UPDATE_ELEM && ptx_update_is_plain_hash(cg, pc)) {
		/* the update's body without the dispatch and the eviction: their registers count */
		static const struct mod_helper plain = {GBPF_HELPER_MAP_UPDATE_ELEM, "__gbpf_m_hash_update_nl", 4};

		emit_mod_call(cg, &plain);
		return 0;
	}
	if (id == GBPF_HELPER_RINGBUF_OUTPUT && ptx_ringbuf_output_by_value(cg, pc, &frame_off, &words)) {
		ptx_emit_ringbuf_output_inline(cg, "%r1", frame_off, words);
		return 0;
	}
	if (id == GBPF_HELPER_PERF_EVENT_OUTPUT && ptx_perf_output_by_value(cg, pc, &frame_off, &words)) {
		static const char *const map_flags[] = {"%r2", "%r3"};

		ptx_emit_output_by_value(cg, "__gbpf_h_perf_outv", map_flags, 2, frame_off, words);
		return 0;
	}
	if (inline_helper(id)) {
		emit_inline(cg, id);
		return 0;
	}
	h = mod_helper_find(id);
	if (!h)
		return ptx_fail(cg, pc, -ENOTSUP, "helper %u is not available on the GPU", id);
	if (h->nargs == 0 && h->fn[0]) {
		ptx_buf_printf(cg->b, "{\n.param .b64 __hr;\ncall (__hr), %s, ();\n"
				      "ld.param.b64 %%r0, [__hr];\n}\n", h->fn);
		return 0;
	}
	emit_mod_call(cg, h);
	return 0;
}

void ptx_emit_local_call(struct ptx_cg *cg, size_t fidx)
{
	struct ptx_buf *b = cg->b;

	ptx_buf_printf(b, "{\n.param .b64 __c1;\n.param .b64 __c2;\n.param .b64 __c3;\n"
			  ".param .b64 __c4;\n.param .b64 __c5;\n%s\n",
		       cg->exit_struct ? ".param .align 8 .b8 __cr[16];" : ".param .b64 __cr;");
	ptx_buf_puts(b, "st.param.b64 [__c1], %r1;\nst.param.b64 [__c2], %r2;\n"
			"st.param.b64 [__c3], %r3;\nst.param.b64 [__c4], %r4;\n"
			"st.param.b64 [__c5], %r5;\n");
	ptx_buf_printf(b, "call (__cr), __gbpf_p%zu_f%zu, (__c1, __c2, __c3, __c4, __c5);\n",
		       cg->prog_idx, fidx);
	ptx_buf_puts(b, "ld.param.b64 %r0, [__cr];\n");
	if (cg->exit_struct)
		ptx_buf_puts(b, "ld.param.b32 %w10, [__cr+8];\n");
	ptx_buf_puts(b, "}\n");
	if (cg->exit_struct) {
		/* the callee ran helper 507: unwind this frame too */
		unsigned id = cg->uniq++;

		ptx_buf_printf(b, "setp.eq.u32 %%p6, %%w10, 0;\n@%%p6 bra $Lx%u;\n", id);
		ptx_emit_gpu_exit(cg);
		ptx_buf_printf(b, "$Lx%u:\n", id);
	}
}

int ptx_emit_callx(struct ptx_cg *cg, size_t pc, unsigned reg)
{
	struct ptx_buf *b = cg->b;
	unsigned id = cg->uniq++;
	uint32_t h;
	size_t f;
	int rc;

	/* A dispatch over every helper the device knows and every subprogram
	 * whose address the program can take (tagged values from lddw). */
	ptx_buf_printf(b, "mov.b64 %%t14, %%r%u;\n", reg);
	for (h = 0; h < PTX_HELPER_ID_MAX; h++) {
		if (!ptx_helper_known(h))
			continue;
		ptx_buf_printf(b, "setp.ne.u64 %%p7, %%t14, %u;\n@%%p7 bra $Lcx%u_%u;\n", h, id, h);
		rc = ptx_emit_helper_call(cg, pc, h);
		if (rc)
			return rc;
		ptx_buf_printf(b, "bra.uni $Lcxe%u;\n$Lcx%u_%u:\n", id, id, h);
	}
	for (f = 1; f < cg->nfuncs; f++) {
		ptx_buf_printf(b, "setp.ne.u64 %%p7, %%t14, 0x%016llX;\n@%%p7 bra $Lcf%u_%zu;\n",
			       (unsigned long long)(PTX_FUNC_TAG | f), id, f);
		ptx_emit_local_call(cg, f);
		ptx_buf_printf(b, "bra.uni $Lcxe%u;\n$Lcf%u_%zu:\n", id, id, f);
	}
	/* unknown target: the interpreter's answer for a bad helper id */
	ptx_buf_printf(b, "mov.u64 %%r0, %lld;\n$Lcxe%u:\n", (long long)-EINVAL, id);
	return 0;
}

/* ---- module-scope helper functions ---------------------------------------- */

static const char memcpy_ptx[] =
	".func __gbpf_h_copy(.param .b64 d, .param .b64 s, .param .b64 n)\n{\n"
	".reg .b64 %a<8>;\n.reg .pred %q<3>;\n"
	"ld.param.b64 %a0, [d];\nld.param.b64 %a1, [s];\nld.param.b64 %a2, [n];\n"
	"or.b64 %a3, %a0, %a1;\nor.b64 %a3, %a3, %a2;\nand.b64 %a3, %a3, 7;\n"
	"setp.ne.u64 %q0, %a3, 0;\nmov.u64 %a4, 0;\n@%q0 bra $Lbyte;\n"
	"$Lword:\nsetp.ge.u64 %q1, %a4, %a2;\n@%q1 bra $Lend;\nadd.u64 %a5, %a1, %a4;\n"
	"ld.u64 %a6, [%a5];\nadd.u64 %a5, %a0, %a4;\nst.u64 [%a5], %a6;\nadd.u64 %a4, %a4, 8;\n"
	"bra.uni $Lword;\n"
	"$Lbyte:\nsetp.ge.u64 %q1, %a4, %a2;\n@%q1 bra $Lend;\nadd.u64 %a5, %a1, %a4;\n"
	"ld.u8 %a6, [%a5];\nadd.u64 %a5, %a0, %a4;\nst.u8 [%a5], %a6;\nadd.u64 %a4, %a4, 1;\n"
	"bra.uni $Lbyte;\n$Lend:\nret;\n}\n";

static const char probe_read_ptx[] =
	".func (.param .b64 r) __gbpf_h_probe_read(.param .b64 d, .param .b64 n, .param .b64 s)\n{\n"
	".reg .b64 %a<4>;\nld.param.b64 %a0, [d];\nld.param.b64 %a1, [n];\nld.param.b64 %a2, [s];\n"
	"{\n.param .b64 x;\n.param .b64 y;\n.param .b64 z;\nst.param.b64 [x], %a0;\n"
	"st.param.b64 [y], %a2;\nst.param.b64 [z], %a1;\ncall __gbpf_h_copy, (x, y, z);\n}\n"
	"st.param.b64 [r], 0;\nret;\n}\n";

/* splitmix64 over the clock, the timer and the thread: no state to keep. */
static const char prandom_ptx[] =
	".func (.param .b64 r) __gbpf_h_prandom()\n{\n.reg .b64 %a<4>;\n.reg .b32 %b<2>;\n"
	"mov.u64 %a0, %clock64;\nmov.u64 %a1, %globaltimer;\nshl.b64 %a1, %a1, 17;\n"
	"xor.b64 %a0, %a0, %a1;\nmov.u32 %b0, %tid.x;\nmov.u32 %b1, %ctaid.x;\n"
	"mul.wide.u32 %a1, %b1, 65599;\ncvt.u64.u32 %a2, %b0;\nadd.u64 %a1, %a1, %a2;\n"
	"shl.b64 %a1, %a1, 32;\nxor.b64 %a0, %a0, %a1;\nadd.u64 %a0, %a0, 0x9E3779B97F4A7C15;\n"
	"shr.u64 %a1, %a0, 30;\nxor.b64 %a0, %a0, %a1;\nmul.lo.u64 %a0, %a0, 0xBF58476D1CE4E5B9;\n"
	"shr.u64 %a1, %a0, 27;\nxor.b64 %a0, %a0, %a1;\nmul.lo.u64 %a0, %a0, 0x94D049BB133111EB;\n"
	"shr.u64 %a1, %a0, 31;\nxor.b64 %a0, %a0, %a1;\nand.b64 %a0, %a0, 0xFFFFFFFF;\n"
	"st.param.b64 [r], %a0;\nret;\n}\n";

void ptx_emit_module_helpers(struct ptx_buf *b, const uint8_t *used, size_t map_cnt, bool const_maps)
{
	int copy = 0, printq = 0, maps = 0;

	ptx_buf_printf(b, ".visible .global .align 8 .u64 __gbpf_maps[%zu];\n", map_cnt ? map_cnt : 1);
	if (const_maps && gbpf_ptx_const_map_table(map_cnt))
		ptx_buf_printf(b, ".visible .const .align 8 .u64 __gbpf_maps_const[%zu];\n"
				  ".visible .const .align 4 .u32 __gbpf_slots_const[%zu];\n",
			       map_cnt, map_cnt);
	ptx_buf_puts(b, ".visible .global .align 8 .u64 __gbpf_pid_tgid;\n"
			".visible .global .align 8 .u64 __gbpf_clock_off;\n"
			".visible .global .align 8 .u64 __gbpf_printq;\n");
	if (used[GBPF_HELPER_PROBE_READ] || used[GBPF_HELPER_PROBE_READ_USER] ||
	    used[GBPF_HELPER_PROBE_READ_KERNEL])
		copy = 1;
	if (used[GBPF_HELPER_TRACE_PRINTK] || used[GBPF_HELPER_GPU_PUTS])
		printq = 1;
	if (used[GBPF_HELPER_MAP_LOOKUP_ELEM] || used[GBPF_HELPER_MAP_UPDATE_ELEM] ||
	    used[GBPF_HELPER_MAP_DELETE_ELEM] || used[GBPF_HELPER_RINGBUF_OUTPUT] ||
	    used[GBPF_HELPER_RINGBUF_RESERVE] || used[GBPF_HELPER_RINGBUF_SUBMIT] ||
	    used[GBPF_HELPER_RINGBUF_DISCARD] || used[GBPF_HELPER_PERF_EVENT_OUTPUT])
		maps = copy = 1;
	if (copy)
		ptx_buf_puts(b, memcpy_ptx);
	if (copy && (used[GBPF_HELPER_PROBE_READ] || used[GBPF_HELPER_PROBE_READ_USER] ||
		     used[GBPF_HELPER_PROBE_READ_KERNEL]))
		ptx_buf_puts(b, probe_read_ptx);
	if (used[GBPF_HELPER_GET_PRANDOM_U32])
		ptx_buf_puts(b, prandom_ptx);
	if (printq)
		gbpf_printq_emit_ptx(b, used[GBPF_HELPER_TRACE_PRINTK], used[GBPF_HELPER_GPU_PUTS]);
	if (maps)
		ptx_maps_emit(b, used);
}
