/* SPDX-License-Identifier: MIT */
/*
 * Entry and exit probes in AMD code objects (see co_instrument.h for the
 * stub and its register conventions). The object is rebuilt from
 * assembly rather than patched in place because inserted code moves every
 * later instruction: the assembler recomputes branch offsets from labels,
 * the linker recomputes each descriptor's entry offset (emitted as the
 * expression NAME - NAME.kd) and lays out the probe module's code and data.
 */
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gbpf/plugin.h>
#include <gbpf/probe_ctx.h>

#include "amdgcn_codegen.h"
#include "co_elf.h"
#include "co_instrument.h"
#include "co_meta.h"

/* Inputs the hardware places in SGPRs at a kernel's start, in this order. */
enum in_key {
	IN_PSB,    /* private segment buffer (4) */
	IN_DP,     /* dispatch ptr (2) */
	IN_QP,     /* queue ptr (2) */
	IN_KA,     /* kernarg segment ptr (2) */
	IN_DID,    /* dispatch id (2) */
	IN_FSI,    /* flat scratch init (2) */
	IN_PSS,    /* private segment size (1) */
	IN_WGX,
	IN_WGY,
	IN_WGZ,
	IN_WGINFO,
	IN_WAVEOFF, /* scratch wave offset (gfx90a, with SCRATCH_EN) */
	IN_N
};

static const unsigned in_size[IN_N] = {4, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1};

/* Position of each input (-1 absent) for props/rsrc2 on this processor. */
static unsigned in_layout(uint16_t props, uint32_t rsrc2, int flat_scratch, int pos[IN_N])
{
	unsigned n = 0;

	for (int k = 0; k < IN_N; k++) {
		int on = k <= IN_PSS ? (props >> k) & 1
			 : k == IN_WGINFO ? (rsrc2 >> 10) & 1
			 : k == IN_WAVEOFF ? (rsrc2 & 1) && !flat_scratch
					   : (rsrc2 >> (7 + (k - IN_WGX))) & 1;

		pos[k] = on ? (int)n : -1;
		n += on ? in_size[k] : 0;
	}
	return n;
}

/* The plan for one kernel. */
struct kplan {
	const struct co_meta_kernel *mk;
	uint32_t entry;          /* .text offset */
	uint32_t end;            /* .text offset of the next kernel or the end */
	uint8_t kd[CO_KD_SIZE];  /* patched descriptor */
	uint64_t kd_addr;
	int on;                  /* instrumented */
	struct co_kernel_probes probes;
	int opos[IN_N], npos[IN_N];
	unsigned nin;            /* new input SGPRs */
	unsigned R, E, RV;       /* reserved SGPR block, EXEC pair, VGPR */
	uint32_t sp;             /* stack pointer register value at the call */
	uint64_t imp_off;        /* implicit argument offset */
	struct co_instr_kernel *rep;
};

int co_probe_asm_prepare(const char *in, const char *arch, char **out, struct co_probe_res *res, char *err,
			 size_t err_size)
{
	struct co_sbuf b = {0};
	struct co_regs r = {-1, -1, -1, 0};
	const char *p = in;
	int skip = 0;
	uint64_t stack = 0;

	memset(res, 0, sizeof(*res));
	while (*p) {
		size_t len = strcspn(p, "\n");
		const char *t = p;
		char line[256];
		unsigned long long v;

		while (t < p + len && (*t == ' ' || *t == '\t'))
			t++;
		if (!strncmp(t, ".amdgpu_metadata", 16))
			skip = 1;
		if (!skip)
			co_sb_printf(&b, "%.*s\n", (int)len, p);
		if (!strncmp(t, ".end_amdgpu_metadata", 20))
			skip = 0;
		snprintf(line, sizeof(line), "%.*s", (int)(p + len - t), t);
		if (line[0] && line[0] != '.' && line[0] != ';' && line[0] != '/' && !strchr(line, ':'))
			co_scan_text(line, &r); /* an instruction (labels and directives skipped) */
		/* s_addk_i32 has a 16-bit signed immediate, the others 32 bits */
		if (sscanf(line, "s_addk_i32 s32, %lli", &v) == 1 && v < 0x8000)
			stack += v;
		else if ((sscanf(line, "s_add_i32 s32, s32, %lli", &v) == 1 ||
			  sscanf(line, "s_add_u32 s32, s32, %lli", &v) == 1) &&
			 v < 0x80000000ull)
			stack += v;
		if (!strncmp(t, GBPF_AMDGCN_PROBE_PREFIX, strlen(GBPF_AMDGCN_PROBE_PREFIX)) && strchr(t, ':'))
			res->n_funcs++;
		p += len + (p[len] == '\n');
	}
	if (b.oom) {
		free(b.p);
		return -ENOMEM;
	}
	if (!res->n_funcs) {
		free(b.p);
		snprintf(err, err_size, "probe module assembly (%s): no " GBPF_AMDGCN_PROBE_PREFIX "<i> function", arch);
		return -EINVAL;
	}
	/* s32 counts bytes of the whole wave (64 lanes) with MUBUF scratch */
	if (!co_arch_flat_scratch(arch))
		stack = (stack + 63) / 64;
	res->scratch = stack > UINT32_MAX ? UINT32_MAX : (uint32_t)stack;
	res->sgprs = (uint32_t)(r.s + 1) + 6; /* VCC, FLAT_SCRATCH, XNACK_MASK */
	res->vgprs = (uint32_t)(r.v + 1);
	res->agprs = (uint32_t)(r.a + 1);
	*out = b.p;
	return 0;
}

/* The callee-saved VGPRs of LLVM's AMDGPU calling convention: v40-v47, v56-v63, ... */
static unsigned callee_saved_vgpr(unsigned at_least)
{
	unsigned v = at_least < 40 ? 40 : at_least;

	while ((v - 40) % 16 >= 8)
		v++;
	return v;
}

static unsigned align_up(unsigned v, unsigned a)
{
	return (v + a - 1) / a * a;
}

/* Decide registers and patch the descriptor of one selected kernel. */
static int plan_kernel(struct kplan *k, const struct co_code *c, const struct co_instr_opts *o, int flat_scratch)
{
	uint32_t rsrc1, rsrc2, rsrc3, priv;
	uint16_t props, preload;
	struct co_regs r = {-1, -1, -1, 0};
	unsigned ouser, nuser, karch, arch_need, accum, total, sg, agpr = (unsigned)k->mk->agpr;
	uint16_t nprops;
	uint32_t nrsrc2;
	char *why = k->rep->reason;
	size_t wsz = sizeof(k->rep->reason);

	memcpy(&rsrc3, k->kd + CO_KD_RSRC3, 4);
	memcpy(&rsrc1, k->kd + CO_KD_RSRC1, 4);
	memcpy(&rsrc2, k->kd + CO_KD_RSRC2, 4);
	memcpy(&props, k->kd + CO_KD_PROPS, 2);
	memcpy(&preload, k->kd + CO_KD_PRELOAD, 2);
	memcpy(&priv, k->kd + CO_KD_PRIVATE, 4);
	if (props & (1u << 10)) {
		snprintf(why, wsz, "wave32 kernel (only wave64 is handled)");
		return -ENOTSUP;
	}
	if (props & (1u << 11)) {
		snprintf(why, wsz, "dynamic stack (private segment size unknown)");
		return -ENOTSUP;
	}
	if (preload & 0x7f) {
		snprintf(why, wsz, "kernel arguments preloaded into SGPRs (s_trap entry preamble)");
		return -ENOTSUP;
	}
	in_layout(props, rsrc2, flat_scratch, k->opos);
	ouser = in_layout(props, 0, flat_scratch, (int[IN_N]){0});
	if (((rsrc2 >> 1) & 0x1f) != ouser) {
		snprintf(why, wsz, "user SGPR count %u does not match the enabled inputs (%u)", (rsrc2 >> 1) & 0x1f, ouser);
		return -ENOTSUP;
	}
	/* the inputs the stub needs, appended to what the kernel had */
	nprops = (uint16_t)(props | (1u << IN_DP) | (1u << IN_KA) |
			    (flat_scratch ? 0 : (1u << IN_PSB) | (1u << IN_FSI)));
	nuser = in_layout(nprops, 0, flat_scratch, (int[IN_N]){0});
	nrsrc2 = (rsrc2 & ~(0x1fu << 1) & ~(3u << 11)) | (nuser << 1) | 1u /* private segment */ | (7u << 7) |
		 (2u << 11) /* workitem ids x, y, z */;
	k->nin = in_layout(nprops, nrsrc2, flat_scratch, k->npos);
	/* registers: above everything the kernel (and its callees) uses */
	co_scan_regs(c, k->entry, k->end, &r);
	sg = (unsigned)k->mk->sgpr > (unsigned)(r.s + 1) ? (unsigned)k->mk->sgpr : (unsigned)(r.s + 1);
	k->R = align_up(sg > 34 ? sg : 34, 2);
	k->E = k->R + align_up(k->nin, 2);
	if (k->E + 2 > 102) {
		snprintf(why, wsz, "no free SGPRs for the stub (kernel uses %u, needs s%u-s%u)", sg, k->R, k->E + 1);
		return -ENOSPC;
	}
	accum = ((rsrc3 & 0x3f) + 1) * 4;
	karch = (unsigned)(r.v + 1);
	if (agpr ? accum > karch : k->mk->vgpr > karch)
		karch = agpr ? accum : (unsigned)k->mk->vgpr;
	k->RV = callee_saved_vgpr(karch);
	arch_need = k->RV + 1;
	if (o->res.vgprs > arch_need)
		arch_need = o->res.vgprs;
	/* the probe may spill callee-saved VGPRs into AGPRs (gfx90a, gfx940):
	 * AGPRs sit above accum_offset in the same file */
	if (o->res.agprs > agpr)
		agpr = o->res.agprs;
	accum = align_up(arch_need, 4);
	total = agpr ? accum + agpr : arch_need;
	if (arch_need > 256 || total > 512) {
		snprintf(why, wsz, "no free VGPRs for the stub (needs %u architectural, %u in all)", arch_need, total);
		return -ENOSPC;
	}
	/* SGPRs with VCC, FLAT_SCRATCH and XNACK_MASK at the top */
	sg = k->E + 2 + 6;
	if (o->res.sgprs > sg)
		sg = o->res.sgprs;
	if (k->mk->sgpr > sg)
		sg = (unsigned)k->mk->sgpr;
	rsrc1 = (rsrc1 & ~0x3ffu) | ((align_up(total, 8) / 8 - 1) & 0x3f) | (((align_up(sg, 16) / 8 - 1) & 0xf) << 6);
	rsrc3 = (rsrc3 & ~0x3fu) | ((accum / 4 - 1) & 0x3f);
	k->sp = align_up(priv, 16);
	priv = k->sp + align_up(o->res.scratch, 16);
	if (!flat_scratch)
		k->sp *= 64; /* MUBUF scratch: the stack pointer counts bytes of the whole wave */
	k->imp_off = align_up((unsigned)(k->mk->hidden_off < 0x10000 ? k->mk->hidden_off : 0), 8);
	memcpy(k->kd + CO_KD_RSRC3, &rsrc3, 4);
	memcpy(k->kd + CO_KD_RSRC1, &rsrc1, 4);
	memcpy(k->kd + CO_KD_RSRC2, &nrsrc2, 4);
	memcpy(k->kd + CO_KD_PROPS, &nprops, 2);
	memcpy(k->kd + CO_KD_PRIVATE, &priv, 4);
	k->rep->sgpr_base = k->R;
	k->rep->vgpr_save = k->RV;
	k->rep->sgprs = sg;
	k->rep->vgprs = agpr ? total : arch_need;
	k->rep->priv = priv;
	return 0;
}

/* s_mov_b32 sD, s(R+input k, word w), or 0 when the input is absent. */
static void mov_in(struct co_sbuf *b, const struct kplan *k, unsigned dst, int key, unsigned w)
{
	if (k->npos[key] < 0)
		co_sb_printf(b, "\ts_mov_b32 s%u, 0\n", dst);
	else
		co_sb_printf(b, "\ts_mov_b32 s%u, s%u\n", dst, k->R + (unsigned)k->npos[key] + w);
}

/* The call of __gbpf_probe_<prog> with the ABI inputs rebuilt from the saved block. */
static void emit_call(struct co_sbuf *b, const struct kplan *k, int prog, int flat_scratch, uint64_t reads)
{
	unsigned R = k->R;
	const unsigned ka = R + (unsigned)k->npos[IN_KA];

	if (!flat_scratch) {
		unsigned wo = R + (unsigned)k->npos[IN_WAVEOFF], psb = R + (unsigned)k->npos[IN_PSB],
			 fsi = R + (unsigned)k->npos[IN_FSI];

		co_sb_printf(b, "\ts_add_u32 s0, s%u, s%u\n\ts_addc_u32 s1, s%u, 0\n", psb, wo, psb + 1);
		co_sb_printf(b, "\ts_mov_b32 s2, s%u\n\ts_mov_b32 s3, s%u\n", psb + 2, psb + 3);
		co_sb_printf(b, "\ts_add_u32 flat_scratch_lo, s%u, s%u\n\ts_addc_u32 flat_scratch_hi, s%u, 0\n", fsi, wo,
			     fsi + 1);
	}
	mov_in(b, k, 4, IN_DP, 0);
	mov_in(b, k, 5, IN_DP, 1);
	mov_in(b, k, 6, IN_QP, 0);
	mov_in(b, k, 7, IN_QP, 1);
	co_sb_printf(b, "\ts_add_u32 s8, s%u, 0x%llx\n\ts_addc_u32 s9, s%u, 0\n", ka,
		     (unsigned long long)k->imp_off, ka + 1);
	mov_in(b, k, 10, IN_DID, 0);
	mov_in(b, k, 11, IN_DID, 1);
	mov_in(b, k, 12, IN_WGX, 0);
	mov_in(b, k, 13, IN_WGY, 0);
	mov_in(b, k, 14, IN_WGZ, 0);
	co_sb_printf(b, "\ts_mov_b32 s15, 0\n\ts_mov_b32 s32, 0x%x\n", k->sp);
	co_sb_printf(b, "\tv_mov_b32 v31, v%u\n", k->RV);
	/*
	 * The context fields the probe reads, as its arguments (amdgcn_codegen.h):
	 * v[0:1] kernel id, v[2:3] the kernarg segment (the kernel's raw
	 * parameters), v[4:5] launch id and v6 device from GBPF_AMDGCN_LAUNCH_GLOBAL.
	 */
	if (reads & CO_CTX_KERNEL_ID) {
		uint64_t id = gbpf_kernel_id(k->mk->name);

		co_sb_printf(b, "\tv_mov_b32 v0, 0x%08x\n\tv_mov_b32 v1, 0x%08x\t// kernel id of %s\n",
			     (unsigned)(id & 0xffffffffu), (unsigned)(id >> 32), k->mk->name);
	}
	if (reads & CO_CTX_PARAMS)
		co_sb_printf(b, "\tv_mov_b32 v2, s%u\n\tv_mov_b32 v3, s%u\t// kernarg segment\n", ka, ka + 1);
	if (reads & (CO_CTX_LAUNCH_ID | CO_CTX_DEVICE)) {
		co_sb_printf(b, "\ts_getpc_b64 s[16:17]\n"
				"\ts_add_u32 s16, s16, " GBPF_AMDGCN_LAUNCH_GLOBAL "@rel32@lo+4\n"
				"\ts_addc_u32 s17, s17, " GBPF_AMDGCN_LAUNCH_GLOBAL "@rel32@hi+12\n"
				"\ts_load_dwordx4 s[20:23], s[16:17], 0x0\n"
				"\ts_waitcnt lgkmcnt(0)\n");
		if (reads & CO_CTX_LAUNCH_ID)
			co_sb_printf(b, "\tv_mov_b32 v4, s20\n\tv_mov_b32 v5, s21\t// launch id\n");
		if (reads & CO_CTX_DEVICE)
			co_sb_printf(b, "\tv_mov_b32 v6, s22\t// device\n");
	}
	co_sb_printf(b, "\ts_getpc_b64 s[30:31]\n"
			"\ts_add_u32 s30, s30, " GBPF_AMDGCN_PROBE_PREFIX "%d@rel32@lo+4\n"
			"\ts_addc_u32 s31, s31, " GBPF_AMDGCN_PROBE_PREFIX "%d@rel32@hi+12\n"
			"\ts_swappc_b64 s[30:31], s[30:31]\n",
		     prog, prog);
}

/* CO_CTX_* fields probe @p prog reads (every field without a mask). */
static uint64_t probe_reads(const struct co_instr_opts *o, int prog)
{
	uint64_t m = o->ctx_reads && (size_t)prog < o->n_ctx_reads ? o->ctx_reads[prog] : ~0ULL, f = 0;

	if (m & (0xffULL << offsetof(struct gbpf_gpu_ctx, kernel_id)))
		f |= CO_CTX_KERNEL_ID;
	if (m & (0xffULL << offsetof(struct gbpf_gpu_ctx, params)))
		f |= CO_CTX_PARAMS;
	if (m & (0xffULL << offsetof(struct gbpf_gpu_ctx, launch_id)))
		f |= CO_CTX_LAUNCH_ID;
	if (m & (0xffULL << offsetof(struct gbpf_gpu_ctx, device)))
		f |= CO_CTX_DEVICE;
	return f;
}

static void emit_entry_stub(struct co_sbuf *b, const struct kplan *k, int flat_scratch, const struct co_instr_opts *o)
{
	co_sb_printf(b, "\t// gbpf: entry probe %d of %s (inputs saved in s%u.., exec in s[%u:%u], ids in v%u)\n",
		     k->probes.entry, k->mk->name, k->R, k->E, k->E + 1, k->RV);
	for (unsigned i = 0; i < k->nin; i++)
		co_sb_printf(b, "\ts_mov_b32 s%u, s%u\n", k->R + i, i);
	co_sb_printf(b, "\ts_mov_b64 s[%u:%u], exec\n\tv_mov_b32 v%u, v0\n", k->E, k->E + 1, k->RV);
	if (k->probes.entry >= 0)
		emit_call(b, k, k->probes.entry, flat_scratch, probe_reads(o, k->probes.entry));
	/* the layout the original code expects */
	for (int key = 0; key < IN_N; key++)
		for (unsigned w = 0; k->opos[key] >= 0 && w < in_size[key]; w++)
			co_sb_printf(b, "\ts_mov_b32 s%u, s%u\n", (unsigned)k->opos[key] + w,
				     k->R + (unsigned)k->npos[key] + w);
	co_sb_printf(b, "\tv_mov_b32 v0, v%u\n\ts_mov_b64 exec, s[%u:%u]\n\t// gbpf: end of entry stub\n", k->RV,
		     k->E, k->E + 1);
}

static void emit_exit_stub(struct co_sbuf *b, const struct kplan *k, int flat_scratch, const struct co_instr_opts *o)
{
	co_sb_printf(b, "\t// gbpf: exit probe %d of %s\n\ts_mov_b64 exec, s[%u:%u]\n", k->probes.exit, k->mk->name,
		     k->E, k->E + 1);
	emit_call(b, k, k->probes.exit, flat_scratch, probe_reads(o, k->probes.exit));
}

static void emit_bytes(struct co_sbuf *b, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		co_sb_printf(b, "%s0x%02x%s", i % 16 ? ", " : "\t.byte ", p[i], i % 16 == 15 || i + 1 == n ? "\n" : "");
}

static void declare_sym(struct co_sbuf *b, const struct co_sym *s)
{
	if (s->bind == STB_GLOBAL)
		co_sb_printf(b, "\t.globl %s\n", s->name);
	else if (s->bind == STB_WEAK)
		co_sb_printf(b, "\t.weak %s\n", s->name);
	if (s->vis == STV_PROTECTED)
		co_sb_printf(b, "\t.protected %s\n", s->name);
	else if (s->vis == STV_HIDDEN)
		co_sb_printf(b, "\t.hidden %s\n", s->name);
	co_sb_printf(b, "\t.type %s,@%s\n", s->name, s->type == STT_FUNC ? "function" : "object");
	if (s->type == STT_OBJECT)
		co_sb_printf(b, "\t.size %s, %llu\n", s->name, (unsigned long long)s->size);
	co_sb_printf(b, "%s:\n", s->name);
}

/* A resolved s_getpc_b64 / s_add_u32 / s_addc_u32 address computation. */
struct gpc {
	uint32_t add_off; /* .text offset of the s_add_u32 */
	uint32_t reg;     /* low SGPR of the pair */
	uint64_t target;  /* address it computes */
};

/*
 * Every s_getpc_b64 must start the three-instruction pattern LLVM emits
 * for PC-relative addresses (data, functions): the rewrite turns the two
 * literals into relocations against a label at the target so that the
 * address stays right after the code moves.
 */
static int find_getpc(const struct co_code *c, struct gpc *gp, size_t *n, char *err, size_t err_size)
{
	for (size_t i = 0; i < c->n; i++) {
		const struct co_insn *in = &c->insns[i];
		uint32_t w0, w1, w2, lo, hi, reg;

		if (in->kind != CO_INSN_GETPC)
			continue;
		if (i + 2 >= c->n || strcmp(c->insns[i + 1].mnem, "s_add_u32") || c->insns[i + 1].len != 8 ||
		    strcmp(c->insns[i + 2].mnem, "s_addc_u32") || c->insns[i + 2].len != 8) {
			snprintf(err, err_size, "code object (%s): s_getpc_b64 at .text+0x%x is not followed by s_add_u32 / "
						"s_addc_u32 with literals (not rewritten)", c->arch, in->off);
			return -ENOTSUP;
		}
		memcpy(&w0, c->text + in->off, 4);
		memcpy(&w1, c->text + in->off + 4, 4);
		memcpy(&lo, c->text + in->off + 8, 4);
		memcpy(&w2, c->text + in->off + 12, 4);
		memcpy(&hi, c->text + in->off + 16, 4);
		reg = (w0 >> 16) & 0x7f;
		/* SOP2: sdst 22:16, ssrc1 15:8 (0xff literal), ssrc0 7:0 */
		if (((w1 >> 16) & 0x7f) != reg || (w1 & 0xff) != reg || ((w1 >> 8) & 0xff) != 0xff ||
		    ((w2 >> 16) & 0x7f) != reg + 1 || (w2 & 0xff) != reg + 1 || ((w2 >> 8) & 0xff) != 0xff) {
			snprintf(err, err_size, "code object (%s): s_getpc_b64 at .text+0x%x: the adds use other registers",
				 c->arch, in->off);
			return -ENOTSUP;
		}
		gp[*n].add_off = in->off + 4;
		gp[*n].reg = reg;
		gp[*n].target = c->text_addr + in->off + 4 + (((uint64_t)hi << 32) | lo);
		(*n)++;
	}
	return 0;
}

/* 1 when @p addr lies in an allocated, non-executable PROGBITS/NOBITS section. */
static int data_has(const uint8_t *elf, uint64_t addr)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)elf;
	const Elf64_Shdr *sh = (const Elf64_Shdr *)(elf + eh->e_shoff);

	for (unsigned i = 1; i < eh->e_shnum; i++)
		if ((sh[i].sh_flags & SHF_ALLOC) && !(sh[i].sh_flags & SHF_EXECINSTR) &&
		    (sh[i].sh_type == SHT_PROGBITS || sh[i].sh_type == SHT_NOBITS) && addr >= sh[i].sh_addr &&
		    addr < sh[i].sh_addr + sh[i].sh_size)
			return 1;
	return 0;
}

static const struct kplan *plan_at(const struct kplan *kp, size_t nk, uint32_t off)
{
	for (size_t i = 0; i < nk; i++)
		if (off >= kp[i].entry && off < kp[i].end)
			return &kp[i];
	return NULL;
}

/* .text: raw words, branches as labels, symbols, stubs. */
static void emit_text(struct co_sbuf *b, const struct co_code *c, const struct co_sym *syms, size_t nsyms,
		      struct kplan *kp, size_t nk, int flat_scratch, const uint8_t *lab, const struct gpc *gp, size_t ngp,
		      const struct co_instr_opts *o)
{
	/* the stubs call the probes PC-relative: they must not be preemptible */
	for (size_t j = 0; j < nk; j++)
		for (int e = 0; kp[j].on && e < 2; e++)
			if ((e ? kp[j].probes.exit : kp[j].probes.entry) >= 0)
				co_sb_printf(b, "\t.protected " GBPF_AMDGCN_PROBE_PREFIX "%d\n",
					     e ? kp[j].probes.exit : kp[j].probes.entry);
	co_sb_printf(b, "\t.text\n\t.p2align 8\n");
	for (size_t i = 0; i < c->n; i++) {
		const struct co_insn *in = &c->insns[i];
		const struct kplan *k = plan_at(kp, nk, in->off);
		int kentry = 0;

		for (size_t j = 0; j < nk; j++)
			kentry |= kp[j].entry == in->off;
		if (kentry)
			co_sb_printf(b, "\t.p2align 8\n");
		for (size_t s = 0; s < nsyms; s++)
			if (syms[s].type == STT_FUNC && syms[s].value == c->text_addr + in->off)
				declare_sym(b, &syms[s]);
		if (k && k->on && kentry)
			emit_entry_stub(b, k, flat_scratch, o);
		if (lab[in->off] & 2)
			co_sb_printf(b, ".Lgbpf_a%llx:\n", (unsigned long long)(c->text_addr + in->off));
		if (lab[in->off] & 1)
			co_sb_printf(b, ".Lgbpf_%x:\n", in->off);
		{
			const struct gpc *g = NULL;

			for (size_t j = 0; j < ngp; j++)
				if (gp[j].add_off == in->off || gp[j].add_off + 8 == in->off)
					g = &gp[j];
			if (g) {
				co_sb_printf(b, "\t%s s%u, s%u, .Lgbpf_a%llx@rel32@%s\n", in->mnem, g->reg + (g->add_off != in->off),
					     g->reg + (g->add_off != in->off), (unsigned long long)g->target,
					     g->add_off == in->off ? "lo+4" : "hi+12");
				continue;
			}
		}
		if (k && k->on && in->kind == CO_INSN_ENDPGM && k->probes.exit >= 0) {
			emit_exit_stub(b, k, flat_scratch, o);
			k->rep->n_exit++;
		}
		if (in->kind == CO_INSN_BRANCH && in->target <= c->text_size) {
			co_sb_printf(b, "\t%s .Lgbpf_%x\n", in->mnem, in->target);
			continue;
		}
		co_sb_printf(b, "\t.long ");
		for (uint32_t w = 0; w < in->len; w += 4) {
			uint32_t word;

			memcpy(&word, c->text + in->off + w, 4);
			co_sb_printf(b, "%s0x%08x", w ? ", " : "", word);
		}
		co_sb_printf(b, "\t// %s\n", in->mnem);
	}
	if (lab[c->text_size])
		co_sb_printf(b, ".Lgbpf_%zx:\n", c->text_size);
}

/* Allocated data sections (.rodata with the descriptors, .data, .bss) byte for byte with their symbols. */
static int emit_data(struct co_sbuf *b, const uint8_t *elf, const struct co_sym *syms, size_t nsyms,
		     const struct kplan *kp, size_t nk, const struct gpc *gp, size_t ngp, char *err, size_t err_size)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)elf;
	const Elf64_Shdr *sh = (const Elf64_Shdr *)(elf + eh->e_shoff);
	const char *str = (const char *)elf + sh[eh->e_shstrndx].sh_offset;

	for (unsigned i = 1; i < eh->e_shnum; i++) {
		const Elf64_Shdr *s = &sh[i];
		const char *name = str + s->sh_name;
		uint64_t pos = 0, labelled = 0; /* PC-relative target labels below 'labelled' are out */
		unsigned lg = 0;

		if (s->sh_type == SHT_RELA || s->sh_type == SHT_REL) {
			snprintf(err, err_size, "code object: relocation section %s (dynamic relocations are not rewritten)",
				 name);
			return -ENOTSUP;
		}
		if (!(s->sh_flags & SHF_ALLOC) || (s->sh_flags & SHF_EXECINSTR) ||
		    (s->sh_type != SHT_PROGBITS && s->sh_type != SHT_NOBITS))
			continue;
		while (lg < 12 && (1ull << lg) < s->sh_addralign)
			lg++;
		co_sb_printf(b, "\t.section %s,\"a%s\",@%s\n\t.p2align %u\n", name, s->sh_flags & SHF_WRITE ? "w" : "",
			     s->sh_type == SHT_NOBITS ? "nobits" : "progbits", lg);
		for (size_t y = 0; y <= nsyms; y++) {
			uint64_t at = y < nsyms ? syms[y].value - s->sh_addr : s->sh_size;
			const struct kplan *k = NULL;

			if (y < nsyms && (syms[y].shndx != i || syms[y].type == STT_FUNC || syms[y].value < s->sh_addr ||
					  at > s->sh_size))
				continue;
			/* labels of PC-relative targets up to here */
			for (;;) {
				uint64_t next = UINT64_MAX;

				for (size_t g = 0; g < ngp; g++)
					if (gp[g].target >= s->sh_addr + pos && gp[g].target >= labelled &&
					    gp[g].target - s->sh_addr <= at &&
					    gp[g].target < next)
						next = gp[g].target;
				if (next == UINT64_MAX)
					break;
				if (next - s->sh_addr > pos) {
					if (s->sh_type == SHT_NOBITS)
						co_sb_printf(b, "\t.zero %llu\n", (unsigned long long)(next - s->sh_addr - pos));
					else
						emit_bytes(b, elf + s->sh_offset + pos, next - s->sh_addr - pos);
					pos = next - s->sh_addr;
				}
				co_sb_printf(b, ".Lgbpf_a%llx:\n", (unsigned long long)next);
				labelled = next + 1;
			}
			if (at > pos) {
				if (s->sh_type == SHT_NOBITS)
					co_sb_printf(b, "\t.zero %llu\n", (unsigned long long)(at - pos));
				else
					emit_bytes(b, elf + s->sh_offset + pos, at - pos);
				pos = at;
			}
			if (y == nsyms)
				break;
			declare_sym(b, &syms[y]);
			for (size_t j = 0; j < nk; j++)
				if (!strcmp(kp[j].mk->symbol, syms[y].name))
					k = &kp[j];
			if (k && at + CO_KD_SIZE <= s->sh_size && s->sh_type == SHT_PROGBITS) {
				emit_bytes(b, k->kd, CO_KD_ENTRY);
				co_sb_printf(b, "\t.quad %s - %s\n", k->mk->name, k->mk->symbol);
				emit_bytes(b, k->kd + CO_KD_ENTRY + 8, CO_KD_SIZE - CO_KD_ENTRY - 8);
				pos = at + CO_KD_SIZE;
			}
		}
	}
	return 0;
}

/* The .note section with the metadata note replaced by @p meta. */
static int emit_note(struct co_sbuf *b, const uint8_t *elf, size_t size, const uint8_t *meta, size_t mlen)
{
	const Elf64_Shdr *sh;
	size_t off = 0;
	static const uint8_t zero[4];

	if (co_find_section(elf, size, ".note", &sh))
		return -EINVAL;
	co_sb_printf(b, "\t.section .note,\"a\",@note\n\t.p2align 2\n");
	while (off + 12 <= sh->sh_size) {
		const uint8_t *n = elf + sh->sh_offset + off;
		uint32_t nsz, dsz, type, hdr[3];
		size_t d;

		memcpy(&nsz, n, 4);
		memcpy(&dsz, n + 4, 4);
		memcpy(&type, n + 8, 4);
		d = 12 + (((size_t)nsz + 3) & ~(size_t)3);
		if (off + d > sh->sh_size || dsz > sh->sh_size - off - d)
			return -EINVAL;
		hdr[0] = nsz;
		hdr[1] = type == 32 ? (uint32_t)mlen : dsz;
		hdr[2] = type;
		emit_bytes(b, (const uint8_t *)hdr, 12);
		emit_bytes(b, n + 12, d - 12);
		if (type == 32) {
			emit_bytes(b, meta, mlen);
			if (mlen % 4)
				emit_bytes(b, zero, 4 - mlen % 4);
		} else {
			emit_bytes(b, n + d, ((size_t)dsz + 3) & ~(size_t)3);
		}
		off += d + (((size_t)dsz + 3) & ~(size_t)3);
	}
	return 0;
}

/* llvm-mc then ld.lld -shared in a private directory. */
static int assemble_link(const struct co_instr_opts *o, const char *arch, const char *text, uint8_t **out,
			 size_t *out_size, char *err, size_t err_size)
{
	char dir[] = "/tmp/gbpf-hip-co-XXXXXX", s[64], obj[64], co[64], lg[64], cpu[32];
	FILE *f;
	int rc;

	if (!mkdtemp(dir))
		return -errno;
	snprintf(s, sizeof(s), "%s/k.s", dir);
	snprintf(obj, sizeof(obj), "%s/k.o", dir);
	snprintf(co, sizeof(co), "%s/k.co", dir);
	snprintf(lg, sizeof(lg), "%s/log", dir);
	snprintf(cpu, sizeof(cpu), "-mcpu=%s", arch);
	f = fopen(s, "w");
	rc = !f || fputs(text, f) < 0 ? -EIO : 0;
	if (f && fclose(f))
		rc = -EIO;
	if (!rc) {
		char *mc[] = {(char *)o->mc, (char *)"-triple=amdgcn-amd-amdhsa", cpu, (char *)"-filetype=obj",
			      (char *)"-o", obj, s, NULL};
		char *ld[] = {(char *)o->lld, (char *)"-shared", (char *)"-o", co, obj, NULL};
		const char *step = "llvm-mc";

		rc = co_run_tool(mc, lg);
		if (!rc) {
			step = "ld.lld";
			rc = co_run_tool(ld, lg);
		}
		if (rc) {
			size_t n = 0;
			char *log = co_slurp(lg, &n);

			snprintf(err, err_size, "%s (%s) failed on the rewritten code object: %.300s", step, arch,
				 log ? log : "cannot run");
			free(log);
		}
	}
	if (!rc) {
		*out = (uint8_t *)co_slurp(co, out_size);
		rc = *out ? 0 : -EIO;
	}
	if (getenv("GBPF_HIP_KEEP_ASM"))
		fprintf(stderr, "hip: rewritten code object assembly kept in %s\n", s);
	else
		unlink(s);
	unlink(obj);
	unlink(co);
	unlink(lg);
	if (!getenv("GBPF_HIP_KEEP_ASM"))
		rmdir(dir);
	return rc;
}

static int sym_by_value(const void *a, const void *b)
{
	const struct co_sym *x = a, *y = b;

	return x->value < y->value ? -1 : x->value > y->value;
}

static int plan_by_entry(const void *a, const void *b)
{
	const struct kplan *x = a, *y = b;

	return x->entry < y->entry ? -1 : x->entry > y->entry;
}

int co_instrument(const uint8_t *elf, size_t size, const struct co_instr_opts *o, uint8_t **out,
		  size_t *out_size, struct co_instr_result *res, char *err, size_t err_size)
{
	struct co_code c;
	struct co_sym *syms = NULL;
	struct co_meta_kernel *mk = NULL;
	struct kplan *kp = NULL;
	struct co_meta_patch *mp = NULL;
	struct co_sbuf b = {0};
	struct gpc *gp = NULL;
	size_t ngp = 0;
	uint8_t *lab = NULL, *meta2 = NULL;
	const uint8_t *meta;
	const Elf64_Shdr *ro;
	size_t nsyms = 0, mlen = 0, meta2_n = 0, nmp = 0;
	int nk = 0, rc, fs, any = 0;

	*out = NULL;
	*out_size = 0;
	memset(res, 0, sizeof(*res));
	rc = co_decode(elf, size, &c, err, err_size);
	if (rc)
		return rc;
	fs = co_arch_flat_scratch(c.arch);
	gp = calloc(c.n + 1, sizeof(*gp));
	if (!gp) {
		rc = -ENOMEM;
		goto out;
	}
	if ((rc = find_getpc(&c, gp, &ngp, err, err_size)))
		goto out;
	if ((rc = co_elf_syms(elf, size, &syms, &nsyms, err, err_size)))
		goto out;
	qsort(syms, nsyms, sizeof(*syms), sym_by_value);
	meta = co_elf_meta(elf, size, &mlen);
	mk = calloc(256, sizeof(*mk));
	kp = calloc(256, sizeof(*kp));
	mp = calloc(256, sizeof(*mp));
	lab = calloc(c.text_size + 1, 1);
	if (!mk || !kp || !mp || !lab) {
		rc = -ENOMEM;
		goto out;
	}
	nk = meta ? co_meta_read(meta, mlen, mk, 256) : -EINVAL;
	if (nk < 0 || co_find_section(elf, size, ".rodata", &ro)) {
		snprintf(err, err_size, "code object (%s): no readable metadata note or no .rodata", c.arch);
		rc = -EINVAL;
		goto out;
	}
	res->k = calloc((size_t)nk + 1, sizeof(*res->k));
	if (!res->k) {
		rc = -ENOMEM;
		goto out;
	}
	res->n = (size_t)nk;
	for (int i = 0; i < nk; i++) {
		const struct co_sym *fn = co_sym_find(syms, nsyms, mk[i].name), *kd = co_sym_find(syms, nsyms, mk[i].symbol);

		kp[i].mk = &mk[i];
		kp[i].rep = &res->k[i];
		snprintf(res->k[i].name, sizeof(res->k[i].name), "%s", mk[i].name);
		if (!fn || !kd || fn->value < c.text_addr || fn->value >= c.text_addr + c.text_size ||
		    kd->value < ro->sh_addr || kd->value + CO_KD_SIZE > ro->sh_addr + ro->sh_size) {
			snprintf(err, err_size, "code object (%s): kernel %s has no function or descriptor symbol in range",
				 c.arch, mk[i].name);
			rc = -EINVAL;
			goto out;
		}
		kp[i].entry = (uint32_t)(fn->value - c.text_addr);
		kp[i].kd_addr = kd->value;
		memcpy(kp[i].kd, elf + ro->sh_offset + (kd->value - ro->sh_addr), CO_KD_SIZE);
	}
	qsort(kp, (size_t)nk, sizeof(*kp), plan_by_entry);
	for (int i = 0; i < nk; i++) {
		struct kplan *k = &kp[i];

		k->end = i + 1 < nk ? kp[i + 1].entry : (uint32_t)c.text_size;
		k->probes.entry = k->probes.exit = -1;
		if (!o->select || !o->select(o->select_ctx, k->mk->name, &k->probes) ||
		    (k->probes.entry < 0 && k->probes.exit < 0))
			continue;
		k->rep->probes = k->probes;
		if (plan_kernel(k, &c, o, fs))
			continue;
		k->on = 1;
		any = 1;
		k->rep->instrumented = 1;
		k->rep->n_entry = k->probes.entry >= 0;
		mp[nmp].name = k->mk->name;
		mp[nmp].sgpr = k->rep->sgprs;
		mp[nmp].vgpr = k->rep->vgprs;
		mp[nmp].priv = k->rep->priv;
		nmp++;
	}
	if (!any) {
		rc = 0;
		goto out;
	}
	if ((rc = co_meta_patch(meta, mlen, mp, nmp, &meta2, &meta2_n)))
		goto out;
	for (size_t i = 0; i < c.n; i++)
		if (c.insns[i].kind == CO_INSN_BRANCH && c.insns[i].target <= c.text_size)
			lab[c.insns[i].target] |= 1;
	for (size_t i = 0; i < ngp; i++) {
		if (gp[i].target >= c.text_addr && gp[i].target < c.text_addr + c.text_size) {
			size_t j = 0;

			while (j < c.n && c.insns[j].off < gp[i].target - c.text_addr)
				j++;
			if (j >= c.n || c.insns[j].off != gp[i].target - c.text_addr) {
				snprintf(err, err_size, "code object (%s): s_getpc_b64 pair at .text+0x%x points inside an instruction",
					 c.arch, gp[i].add_off - 4);
				rc = -ENOTSUP;
				goto out;
			}
			lab[c.insns[j].off] |= 2;
		} else if (!data_has(elf, gp[i].target)) {
			snprintf(err, err_size, "code object (%s): s_getpc_b64 pair at .text+0x%x points at 0x%llx, outside .text and data",
				 c.arch, gp[i].add_off - 4, (unsigned long long)gp[i].target);
			rc = -ENOTSUP;
			goto out;
		}
	}
	co_sb_printf(&b, "// gbpf: rewritten %s code object with probes\n%s\n", c.arch, o->probe_asm);
	emit_text(&b, &c, syms, nsyms, kp, (size_t)nk, fs, lab, gp, ngp, o);
	if ((rc = emit_data(&b, elf, syms, nsyms, kp, (size_t)nk, gp, ngp, err, err_size)))
		goto out;
	if ((rc = emit_note(&b, elf, size, meta2, meta2_n))) {
		snprintf(err, err_size, "code object (%s): malformed .note", c.arch);
		goto out;
	}
	if (b.oom) {
		rc = -ENOMEM;
		goto out;
	}
	rc = assemble_link(o, c.arch, b.p, out, out_size, err, err_size);
out:
	if (rc) {
		free(*out);
		*out = NULL;
		co_instr_result_free(res);
	}
	free(b.p);
	free(gp);
	free(meta2);
	free(lab);
	free(mp);
	free(kp);
	free(mk);
	free(syms);
	co_code_free(&c);
	return rc;
}

void co_instr_result_free(struct co_instr_result *res)
{
	free(res->k);
	res->k = NULL;
	res->n = 0;
}
