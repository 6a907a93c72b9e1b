/* SPDX-License-Identifier: MIT */
/*
 * plugins/spirv/spv_inject.c - probes into an application's SPIR-V module.
 *
 * The application module is validated, then split into the builder's
 * sections with every type and constant entered into the builder's cache
 * and every BuiltIn variable recorded. The probe programs are then emitted
 * by the ordinary code generator INTO that module: their types, constants
 * and built-in variables unify with the application's by construction
 * (SPIR-V forbids duplicate non-aggregate types; duplicate BuiltIn
 * variables are a known pitfall of linkers), and their ids lie above the
 * application's bound. Finally the application's functions are copied with
 * probe calls inserted, the probe functions appended (definitions after
 * every declaration), entry point interfaces extended with the built-ins
 * the probes read, and the result validated. The SPIR-V version is kept.
 *
 * llvm-spirv emits each kernel as a wrapper entry point whose body only
 * calls the real function, and its reverse reader drops wrapper bodies:
 * in that case the called function is instrumented.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <stdbool.h>

#define SPV_ENABLE_UTILITY_CODE
#include "spv_internal.h"

#include <gbpf/plugin.h>
#include <gbpf/probe_ctx.h>

/* spirv.h defines this as a C99 inline function: one external definition here */
extern void SpvHasResultAndType(SpvOp opcode, bool *hasResult, bool *hasResultType);

/* Largest application module accepted (ids and words). */
#define SPV_APP_MAX_BOUND (1u << 22)
#define SPV_APP_MAX_WORDS (64u << 20)

struct app_entry {
	size_t at;        /* word index of the OpEntryPoint */
	uint32_t fid;     /* entry function */
	uint32_t target;  /* function instrumented (fid or the wrapped callee) */
	const char *name; /* points into the app's words (NUL-terminated inside) */
	size_t k;         /* index into res->kernels, or SIZE_MAX */
};

struct inj {
	const uint32_t *w;
	size_t count;
	uint32_t bound;
	size_t *def;        /* word index of the instruction defining each id, 0 = none */
	uint32_t *rtype;    /* result type of each id */
	struct app_entry *eps;
	size_t neps;
	size_t funcs_at;    /* first OpFunction */
	struct spv_mod *m;
	struct spv_gen *g;
	const struct gbpf_prog_desc *const *progs;
	size_t n;
	uint32_t *probe_fid;
	uint32_t device;    /* gbpf_gpu_ctx.device (gbpf_spirv_inject_opts.device) */
	int device_table;   /* GBPF_SPIRV_DEVICE_TABLE: device from the context table instead */
	char *err;
	size_t err_size;
};

static int bad(struct inj *j, size_t at, const char *what)
{
	snprintf(j->err, j->err_size, "spirv inject: word %zu: %s", at, what);
	return -EPROTO;
}

/* Structure checks before anything else reads the words. */
static int walk_check(struct inj *j)
{
	size_t i = 5;

	if (j->count < 5)
		return bad(j, 0, "module shorter than its 5-word header");
	if (j->w[0] != SpvMagicNumber)
		return bad(j, 0, "bad magic: not a SPIR-V module");
	if (j->w[1] < GBPF_SPIRV_VERSION(1, 0) || j->w[1] > GBPF_SPIRV_VERSION(1, 6) ||
	    (j->w[1] & 0xff0000ffu))
		return bad(j, 1, "unsupported SPIR-V version");
	if (!j->w[3] || j->w[3] > SPV_APP_MAX_BOUND)
		return bad(j, 3, "id bound out of range");
	if (j->count > SPV_APP_MAX_WORDS)
		return bad(j, 0, "module too large");
	while (i < j->count) {
		uint32_t len = j->w[i] >> 16;

		if (!len)
			return bad(j, i, "instruction of length 0");
		if (i + len > j->count)
			return bad(j, i, "instruction runs past the end of the module");
		i += len;
	}
	return 0;
}

static enum spv_section section_of(uint32_t op)
{
	switch (op) {
	case SpvOpCapability: return SPV_SEC_CAP;
	case SpvOpExtension: return SPV_SEC_EXT;
	case SpvOpExtInstImport: return SPV_SEC_IMPORT;
	case SpvOpMemoryModel: return SPV_SEC_MEMMODEL;
	case SpvOpEntryPoint: return SPV_SEC_ENTRY;
	case SpvOpExecutionMode:
	case SpvOpExecutionModeId: return SPV_SEC_EXEC;
	case SpvOpString:
	case SpvOpSourceExtension:
	case SpvOpSource:
	case SpvOpSourceContinued:
	case SpvOpName:
	case SpvOpMemberName:
	case SpvOpModuleProcessed: return SPV_SEC_DEBUG;
	case SpvOpDecorate:
	case SpvOpMemberDecorate:
	case SpvOpDecorationGroup:
	case SpvOpGroupDecorate:
	case SpvOpGroupMemberDecorate:
	case SpvOpDecorateId:
	case SpvOpDecorateString: return SPV_SEC_ANNOT;
	default: return SPV_SEC_TYPES;
	}
}

static int is_cached_type(uint32_t op)
{
	return op == SpvOpTypeVoid || op == SpvOpTypeBool || op == SpvOpTypeInt ||
	       op == SpvOpTypeVector || op == SpvOpTypePointer || op == SpvOpTypeArray ||
	       op == SpvOpTypeFunction;
}

/* Split the module-level part into sections; record types, ids, built-ins and entry points. */
static int load_app(struct inj *j)
{
	struct spv_mod *m = j->m;
	size_t i = 5;

	j->def = calloc(j->bound, sizeof(*j->def));
	j->rtype = calloc(j->bound, sizeof(*j->rtype));
	j->eps = calloc(j->count / 4 + 1, sizeof(*j->eps));
	if (!j->def || !j->rtype || !j->eps)
		return -ENOMEM;
	m->bound = j->bound;
	while (i < j->count) {
		const uint32_t *in = j->w + i;
		uint32_t len = in[0] >> 16, op = in[0] & 0xffff;
		bool has_res = false, has_type = false;

		SpvHasResultAndType((SpvOp)op, &has_res, &has_type);
		if (has_res) {
			size_t ri = has_type ? 2 : 1;

			if (len <= ri || in[ri] >= j->bound)
				return bad(j, i, "result id out of range");
			j->def[in[ri]] = i;
			if (has_type)
				j->rtype[in[ri]] = in[1];
		}
		if (op == SpvOpFunction && !j->funcs_at)
			j->funcs_at = i;
		if (!j->funcs_at) {
			enum spv_section s = section_of(op);

			if (op == SpvOpCapability && len == 2 &&
			    m->ncaps < sizeof(m->caps) / sizeof(m->caps[0]))
				m->caps[m->ncaps++] = in[1];
			if (op == SpvOpEntryPoint) {
				struct app_entry *e = &j->eps[j->neps++];
				size_t k;

				if (len < 4)
					return bad(j, i, "short OpEntryPoint");
				e->at = i;
				e->fid = e->target = in[2];
				e->k = SIZE_MAX;
				e->name = (const char *)(in + 3);
				/* the name must end inside the instruction */
				for (k = 0; k < (len - 3) * 4 && e->name[k]; k++)
					;
				if (k == (len - 3) * 4)
					return bad(j, i, "entry point name not terminated");
			} else {
				spv_inst(m, s, op, len - 1, in + 1);
			}
			if (is_cached_type(op) && len >= 2 &&
			    spv_cache_add(m, op, len - 2, in + 2, in[1]))
				return -ENOMEM;
			if ((op == SpvOpConstant || op == SpvOpConstantTrue ||
			     op == SpvOpConstantFalse) && len >= 3) {
				uint32_t key[4];
				size_t nk = len - 2;

				if (nk <= 4) {
					key[0] = in[1];
					memcpy(key + 1, in + 3, (len - 3) * 4);
					if (spv_cache_add(m, op, nk, key, in[2]))
						return -ENOMEM;
				}
			}
			if (op == SpvOpDecorate && len == 4 && in[2] == SpvDecorationBuiltIn &&
			    in[3] < 64 && in[1] < j->bound)
				m->builtin_var[in[3]] = in[1];
		}
		i += len;
	}
	if (!j->funcs_at)
		j->funcs_at = j->count;
	return m->oom ? -ENOMEM : 0;
}

/* Body of function fid is "label; call f(...); return": return f, else fid. */
static uint32_t unwrap(struct inj *j, uint32_t fid)
{
	size_t at = fid < j->bound ? j->def[fid] : 0, i;
	uint32_t callee = 0, n = 0;

	if (!at || (j->w[at] & 0xffff) != SpvOpFunction)
		return fid;
	for (i = at + (j->w[at] >> 16); i < j->count; i += j->w[i] >> 16) {
		uint32_t op = j->w[i] & 0xffff;

		if (op == SpvOpFunctionEnd)
			break;
		if (op == SpvOpFunctionParameter || op == SpvOpLabel || op == SpvOpReturn ||
		    op == SpvOpLine || op == SpvOpNoLine)
			continue;
		if (op == SpvOpFunctionCall && (j->w[i] >> 16) >= 4)
			callee = j->w[i + 3];
		n++;
	}
	return n == 1 && callee && callee < j->bound ? callee : fid;
}

/* Byte size of a type (scalars, vectors, pointers), 0 when not a scalar access. */
static uint32_t type_size(struct inj *j, uint32_t t)
{
	size_t at = t < j->bound ? j->def[t] : 0;
	uint32_t op;

	if (!at)
		return 0;
	op = j->w[at] & 0xffff;
	if ((op == SpvOpTypeInt || op == SpvOpTypeFloat) && (j->w[at] >> 16) >= 3)
		return j->w[at + 2] / 8;
	if (op == SpvOpTypePointer)
		return 8;
	if (op == SpvOpTypeVector && (j->w[at] >> 16) >= 4)
		return type_size(j, j->w[at + 2]) * j->w[at + 3];
	return 0;
}

/* Per instrumented function: which probes run where, and the ctx variable. */
struct site {
	uint8_t *entry, *exit, *mem; /* per program: selected for this function */
	uint32_t ctx;                /* integer address of the ctx struct */
	uint64_t kid;
	uint32_t n_entry, n_exit, n_mem, mem_site;
};

static void put64(struct spv_mod *m, uint32_t base, uint32_t off, uint32_t v)
{
	spv_store(m, spv_addr_ptr(m, m->t_u64, spv_addk(m, base, off)), v, 8);
}

static void put32(struct spv_mod *m, uint32_t base, uint32_t off, uint32_t v)
{
	spv_store(m, spv_addr_ptr(m, m->t_u32, spv_addk(m, base, off)), v, 4);
}

static void call_probes(struct inj *j, struct site *st, const uint8_t *sel, uint32_t *count)
{
	struct spv_mod *m = j->m;
	size_t p;

	for (p = 0; p < j->n; p++) {
		if (!sel[p])
			continue;
		spv_op(m, SPV_SEC_FUNCS, SpvOpFunctionCall, 4, m->t_u64, spv_id(m), j->probe_fid[p],
		       st->ctx);
		(*count)++;
	}
}

static int any(const uint8_t *sel, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (sel[i])
			return 1;
	return 0;
}

static void fill_head(struct inj *j, struct site *st)
{
	struct spv_mod *m = j->m;
	uint32_t lid = j->g->ctx_table ? spv_ld64(m, spv_c64(m, j->g->ctx_table),
						  offsetof(struct gbpf_spirv_ctx_table, launch_id))
				       : spv_c64(m, 0);

	put64(m, st->ctx, 0, spv_c64(m, st->kid));
	put64(m, st->ctx, 8, spv_c64(m, 0)); /* no raw parameter block in SPIR-V kernels */
	put64(m, st->ctx, 16, lid);
}

/* Memory access at app word i: fill the gpu/mem fields and call the probes. */
static void mem_site(struct inj *j, struct site *st, size_t i)
{
	struct spv_mod *m = j->m;
	const uint32_t *in = j->w + i;
	uint32_t len = in[0] >> 16, op = in[0] & 0xffff, ptr = 0, val = 0, kind, pt, size, space;
	size_t pat;

	switch (op) {
	case SpvOpLoad:
		if (len < 4)
			return;
		ptr = in[3];
		kind = GBPF_MEM_LOAD;
		break;
	case SpvOpStore:
		if (len < 3)
			return;
		ptr = in[1];
		val = in[2];
		kind = GBPF_MEM_STORE;
		break;
	case SpvOpAtomicStore:
		if (len < 5)
			return;
		ptr = in[1];
		val = in[4];
		kind = GBPF_MEM_ATOMIC;
		break;
	case SpvOpAtomicLoad:
	case SpvOpAtomicIIncrement:
	case SpvOpAtomicIDecrement:
		if (len < 4)
			return;
		ptr = in[3];
		kind = op == SpvOpAtomicLoad ? GBPF_MEM_LOAD : GBPF_MEM_ATOMIC;
		break;
	case SpvOpAtomicCompareExchange:
		if (len < 9)
			return;
		ptr = in[3];
		val = in[7];
		kind = GBPF_MEM_ATOMIC;
		break;
	case SpvOpAtomicExchange:
	case SpvOpAtomicIAdd:
	case SpvOpAtomicISub:
	case SpvOpAtomicSMin:
	case SpvOpAtomicUMin:
	case SpvOpAtomicSMax:
	case SpvOpAtomicUMax:
	case SpvOpAtomicAnd:
	case SpvOpAtomicOr:
	case SpvOpAtomicXor:
		if (len < 7)
			return;
		ptr = in[3];
		val = in[6];
		kind = GBPF_MEM_ATOMIC;
		break;
	default:
		return;
	}
	if (ptr >= j->bound)
		return;
	pt = j->rtype[ptr];
	pat = pt < j->bound ? j->def[pt] : 0;
	if (!pat || (j->w[pat] & 0xffff) != SpvOpTypePointer || (j->w[pat] >> 16) < 4)
		return;
	switch (j->w[pat + 2]) {
	case SpvStorageClassCrossWorkgroup: space = GBPF_SPACE_GLOBAL; break;
	case SpvStorageClassWorkgroup: space = GBPF_SPACE_SHARED; break;
	case SpvStorageClassGeneric: space = GBPF_SPACE_GENERIC; break;
	default: return;
	}
	size = type_size(j, j->w[pat + 3]);
	if (!size)
		return;
	fill_head(j, st);
	put64(m, st->ctx, 24, spv_un(m, SpvOpConvertPtrToU, m->t_u64, ptr));
	{
		uint32_t v = spv_c64(m, 0);
		uint32_t vt = val && val < j->bound ? j->rtype[val] : 0;
		size_t vat = vt < j->bound ? j->def[vt] : 0;

		if (vat && (j->w[vat] & 0xffff) == SpvOpTypeInt && size <= 8) {
			v = size == 8 ? val : spv_un(m, SpvOpUConvert, m->t_u64, val);
		} else if (vat && (j->w[vat] & 0xffff) == SpvOpTypeFloat &&
			   (size == 4 || size == 8)) {
			v = spv_un(m, SpvOpBitcast, spv_type_int(m, size * 8), val);
			if (size == 4)
				v = spv_un(m, SpvOpUConvert, m->t_u64, v);
		} else if (vat && (j->w[vat] & 0xffff) == SpvOpTypePointer) {
			v = spv_un(m, SpvOpConvertPtrToU, m->t_u64, val);
		}
		put64(m, st->ctx, 32, v);
	}
	put32(m, st->ctx, 40, spv_c32(m, size));
	put32(m, st->ctx, 44, spv_c32(m, kind));
	put32(m, st->ctx, 48, spv_c32(m, space));
	put32(m, st->ctx, 52, spv_c32(m, st->mem_site++));
	call_probes(j, st, st->mem, &st->n_mem);
}

/* Copy function at word @p at (OpFunction) into the module, instrumented per @p st (or not). */
static size_t copy_function(struct inj *j, size_t at, struct site *st)
{
	struct spv_mod *m = j->m;
	size_t i = at;
	int seen_label = 0, in_vars = 0;

	while (i < j->count) {
		const uint32_t *in = j->w + i;
		uint32_t len = in[0] >> 16, op = in[0] & 0xffff;

		if (st && in_vars && op != SpvOpVariable && op != SpvOpLine && op != SpvOpNoLine) {
			/*
			 * end of the entry block's variables: the context struct (and after it the
			 * work-item's GPU_THREAD_LOCAL values, spv_tls.c), then entry probes
			 */
			uint32_t tls = gbpf_progs_thread_local_size(j->progs, j->n);
			uint32_t arr = spv_type_array(m, m->t_u64, (sizeof(struct gbpf_gpu_ctx) + tls) / 8);
			uint32_t var = spv_var(m, arr);
			uint32_t g = spv_un(m, SpvOpPtrCastToGeneric,
					    spv_type_ptr(m, SpvStorageClassGeneric, arr), var);

			st->ctx = spv_un(m, SpvOpConvertPtrToU, m->t_u64, g);
			in_vars = 0;
			/* the work-item's thread-local values start at zero, before any site runs */
			for (uint32_t o = 0; o < tls; o += 8)
				put64(m, st->ctx, sizeof(struct gbpf_gpu_ctx) + o, spv_c64(m, 0));
			/*
			 * device and its padding: the same at every site and no site
			 * overwrites them, so once per work-item, whichever sites exist.
			 */
			put64(m, st->ctx, offsetof(struct gbpf_gpu_ctx, device),
			      j->device_table ? spv_ld64(m, spv_c64(m, j->g->ctx_table),
							 offsetof(struct gbpf_spirv_ctx_table, device))
					      : spv_c64(m, j->device));
			if (any(st->entry, j->n)) {
				fill_head(j, st);
				call_probes(j, st, st->entry, &st->n_entry);
			}
		}
		if (st && !in_vars && st->ctx) {
			if ((op == SpvOpReturn || op == SpvOpReturnValue) && any(st->exit, j->n)) {
				fill_head(j, st);
				call_probes(j, st, st->exit, &st->n_exit);
			} else if (any(st->mem, j->n)) {
				mem_site(j, st, i);
			}
		}
		spv_inst(m, SPV_SEC_FUNCS, op, len - 1, in + 1);
		if (st && op == SpvOpLabel && !seen_label) {
			seen_label = 1;
			in_vars = 1;
		}
		i += len;
		if (op == SpvOpFunctionEnd)
			break;
	}
	return i;
}

static int selected(const struct gbpf_spirv_inject_opts *o, size_t p, const char *name)
{
	if (!o || !o->kernel_selected)
		return 1;
	return o->kernel_selected(o->select_ctx, p, name) > 0;
}

static int kind_of(const struct gbpf_prog_desc *p, uint32_t kind)
{
	return p->sz >= offsetof(struct gbpf_prog_desc, attach) + sizeof(p->attach) &&
	       p->attach.kind == kind;
}

const char *gbpf_spirv_site_unsupported(uint32_t attach_kind)
{
	switch (attach_kind) {
	case GBPF_ATTACH_GPU_BARRIER:
		return "barrier probes are not inserted into SPIR-V modules (only gpu/entry, gpu/exit and gpu/mem)";
	case GBPF_ATTACH_GPU_BLOCK:
		return "basic-block probes are not inserted into SPIR-V modules (only gpu/entry, gpu/exit and gpu/mem)";
	default:
		return NULL;
	}
}

int gbpf_spirv_inject(const uint32_t *app_words, size_t app_count,
		      const struct gbpf_prog_desc *const *progs, size_t n,
		      const struct gbpf_spirv_inject_opts *opts, struct gbpf_spirv_inject_result *res,
		      char *err, size_t err_size)
{
	struct spv_mod m;
	struct spv_gen g;
	struct inj j;
	struct site *sites = NULL;
	struct spv_words probes = {0};
	size_t e, i, p, at;
	char dummy[1];
	int rc;

	if (!err || !err_size) {
		err = dummy;
		err_size = sizeof(dummy);
	}
	err[0] = 0;
	if (!res || !progs || !n) {
		snprintf(err, err_size, "spirv inject: no program given");
		return -EINVAL;
	}
	memset(res, 0, sizeof(*res));
	memset(&j, 0, sizeof(j));
	memset(&m, 0, sizeof(m));
	memset(&g, 0, sizeof(g));
	j.w = app_words;
	j.count = app_words ? app_count : 0;
	j.err = err;
	j.err_size = err_size;
	j.progs = progs;
	j.n = n;
	rc = walk_check(&j);
	if (rc)
		return rc;
	j.bound = app_words[3];
	rc = gbpf_spirv_validate(app_words, app_count, GBPF_SPIRV_ENV_AUTO, err, err_size);
	if (rc) {
		char why[768];

		snprintf(why, sizeof(why), "%s", err);
		snprintf(err, err_size, "spirv inject: application module is not valid SPIR-V: %s", why);
		return -EPROTO;
	}
	j.m = &m;
	j.g = &g;
	rc = load_app(&j);
	if (rc)
		goto out;
	rc = spv_mod_std_types(&m);
	if (rc)
		goto out;
	g.m = &m;
	g.ctx_table = opts ? opts->ctx_table : 0;
	j.device = opts && opts->sz >= offsetof(struct gbpf_spirv_inject_opts, device) + sizeof(opts->device)
			   ? opts->device
			   : 0;
	g.flags = opts ? (opts->flags & GBPF_SPIRV_TIMER_IMPORT) : 0;
	j.device_table = opts && (opts->flags & GBPF_SPIRV_DEVICE_TABLE);
	if (j.device_table && !g.ctx_table) {
		snprintf(err, err_size, "spirv inject: GBPF_SPIRV_DEVICE_TABLE needs a context table (ctx_table is 0)");
		rc = -EINVAL;
		goto out;
	}
	spv_cap(&m, SpvCapabilityAddresses);
	spv_cap(&m, SpvCapabilityKernel);
	spv_cap(&m, SpvCapabilityInt64);

	/* kernels and what each needs */
	res->kernels = calloc(j.neps + 1, sizeof(*res->kernels));
	sites = calloc(j.neps + 1, sizeof(*sites));
	j.probe_fid = calloc(n, sizeof(*j.probe_fid));
	if (!res->kernels || !sites || !j.probe_fid) {
		rc = -ENOMEM;
		goto out;
	}
	for (e = 0; e < j.neps; e++) {
		struct app_entry *ep = &j.eps[e];
		struct gbpf_spirv_inject_kernel *k = &res->kernels[res->kernel_cnt];
		struct site *st = &sites[e];
		int want = 0;

		if (j.w[ep->at + 1] != SpvExecutionModelKernel)
			continue;
		ep->k = res->kernel_cnt++;
		k->name = strdup(ep->name);
		st->entry = calloc(n, 1);
		st->exit = calloc(n, 1);
		st->mem = calloc(n, 1);
		if (!k->name || !st->entry || !st->exit || !st->mem) {
			rc = -ENOMEM;
			goto out;
		}
		st->kid = gbpf_kernel_id(ep->name);
		for (p = 0; p < n; p++) {
			if (!selected(opts, p, ep->name))
				continue;
			st->entry[p] = kind_of(progs[p], GBPF_ATTACH_GPU_ENTRY);
			st->exit[p] = kind_of(progs[p], GBPF_ATTACH_GPU_EXIT);
			st->mem[p] = kind_of(progs[p], GBPF_ATTACH_GPU_MEM);
			want |= st->entry[p] | st->exit[p] | st->mem[p];
		}
		ep->target = unwrap(&j, ep->fid);
		if (!want) {
			k->reason = strdup("no gpu/entry, gpu/exit or gpu/mem program targets this kernel");
			continue;
		}
		for (i = 0; i < e; i++)
			if (j.eps[i].k != SIZE_MAX && j.eps[i].target == ep->target &&
			    res->kernels[j.eps[i].k].instrumented) {
				/* one function behind two entry points: instrument it once */
				k->reason = strdup("shares its function with an earlier kernel");
				want = 0;
			}
		if (!want)
			continue;
		k->instrumented = 1;
		if (ep->target != ep->fid)
			k->reason = strdup("llvm-spirv kernel wrapper: the called function is instrumented");
	}

	/* probe functions first (then moved after the application's functions) */
	rc = spv_gen_progs(&g, progs, n, SPV_GEN_NO_EXPORT, j.probe_fid, err, err_size);
	if (rc)
		goto out;
	probes = m.sec[SPV_SEC_FUNCS];
	memset(&m.sec[SPV_SEC_FUNCS], 0, sizeof(m.sec[SPV_SEC_FUNCS]));

	for (at = j.funcs_at; at < j.count;) {
		uint32_t fid = (j.w[at] >> 16) >= 3 ? j.w[at + 2] : 0;
		struct site *st = NULL;

		if ((j.w[at] & 0xffff) != SpvOpFunction) {
			rc = bad(&j, at, "expected OpFunction");
			goto out;
		}
		for (e = 0; e < j.neps; e++)
			if (j.eps[e].k != SIZE_MAX && res->kernels[j.eps[e].k].instrumented &&
			    j.eps[e].target == fid && !sites[e].ctx) {
				st = &sites[e];
				break;
			}
		at = copy_function(&j, at, st);
		if (st) {
			struct gbpf_spirv_inject_kernel *k = &res->kernels[j.eps[e].k];

			k->n_entry = st->n_entry;
			k->n_exit = st->n_exit;
			k->n_mem = st->n_mem;
		}
	}
	for (i = 0; i < probes.n;) {
		uint32_t len = probes.w[i] >> 16;

		spv_inst(&m, SPV_SEC_FUNCS, probes.w[i] & 0xffff, len - 1, probes.w + i + 1);
		i += len ? len : 1;
	}
	/* entry points, their interfaces extended with the probes' built-ins */
	for (e = 0; e < j.neps; e++) {
		const uint32_t *in = j.w + j.eps[e].at;
		uint32_t len = in[0] >> 16, ops[512];
		size_t no = 0, k, q;

		if (len - 1 + m.niface > 512) {
			rc = bad(&j, j.eps[e].at, "entry point interface too long");
			goto out;
		}
		for (k = 1; k < len; k++)
			ops[no++] = in[k];
		for (q = 0; q < m.niface; q++) {
			int have = 0;

			/* the interface starts after the name */
			for (k = 3 + (strlen(j.eps[e].name) / 4 + 1); k < len; k++)
				if (in[k] == m.iface[q])
					have = 1;
			if (!have)
				ops[no++] = m.iface[q];
		}
		spv_inst(&m, SPV_SEC_ENTRY, SpvOpEntryPoint, no, ops);
	}
	rc = spv_mod_finish(&m, app_words[1], &res->words, &res->word_count);
	if (rc) {
		snprintf(err, err_size, "spirv inject: out of memory");
		goto out;
	}
	rc = gbpf_spirv_validate(res->words, res->word_count, GBPF_SPIRV_ENV_AUTO, err, err_size);
	if (rc) {
		char why[768];

		snprintf(why, sizeof(why), "%s", err);
		snprintf(err, err_size, "spirv inject: instrumented module fails validation: %s", why);
	}
out:
	if (rc == -ENOMEM && !err[0])
		snprintf(err, err_size, "spirv inject: out of memory");
	for (e = 0; sites && e < j.neps; e++) {
		free(sites[e].entry);
		free(sites[e].exit);
		free(sites[e].mem);
	}
	free(sites);
	free(probes.w);
	free(j.def);
	free(j.rtype);
	free(j.eps);
	free(j.probe_fid);
	spv_mod_free(&m);
	if (rc)
		gbpf_spirv_inject_result_free(res);
	return rc;
}

void gbpf_spirv_inject_result_free(struct gbpf_spirv_inject_result *res)
{
	size_t i;

	if (!res)
		return;
	for (i = 0; res->kernels && i < res->kernel_cnt; i++) {
		free(res->kernels[i].name);
		free(res->kernels[i].reason);
	}
	free(res->kernels);
	free(res->words);
	memset(res, 0, sizeof(*res));
}
