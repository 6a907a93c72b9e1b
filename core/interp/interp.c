/* SPDX-License-Identifier: MIT */
/*
 * core/interp/interp.c - creating, running and destroying interpreters:
 * decoding into the form the execution loops dispatch on, resolving wide
 * loads and helpers once, and formatting faults.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gbpf/asm.h>

#include "interp_internal.h"
#include "maps/map.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the interpreter assumes a little-endian host (le16/le32 only truncate)"
#endif

static const enum interp_handler alu_k64[16] = {
	H_ADD64_K, H_SUB64_K, H_MUL64_K, H_DIV64_K, H_OR64_K,  H_AND64_K, H_LSH64_K, H_RSH64_K,
	H_NEG64,   H_MOD64_K, H_XOR64_K, H_MOV64_K, H_ARSH64_K, H_INVALID, H_INVALID, H_INVALID,
};
static const enum interp_handler jmp_k64[16] = {
	H_JA,      H_JEQ64_K,  H_JGT64_K,  H_JGE64_K,  H_JSET64_K, H_JNE64_K, H_JSGT64_K, H_JSGE64_K,
	H_INVALID, H_INVALID, H_JLT64_K, H_JLE64_K, H_JSLT64_K, H_JSLE64_K, H_INVALID, H_INVALID,
};

/*
 * The handler lists of the enum keep the order 64_K, 64_X, 32_K, 32_X for
 * every binary ALU operation and conditional jump: the variant is an offset.
 */
static enum interp_handler variant(enum interp_handler k64, int is32, int x)
{
	return (enum interp_handler)(k64 + (is32 ? 2 : 0) + (x ? 1 : 0));
}

static enum interp_handler decode_alu(const struct gbpf_insn *in)
{
	int is32 = GBPF_CLASS(in->code) == GBPF_ALU, x = GBPF_SRC(in->code) == GBPF_X;
	unsigned op = GBPF_OP(in->code);

	switch (op) {
	case GBPF_NEG:
		return is32 ? H_NEG32 : H_NEG64;
	case GBPF_END:
		if (!is32 || x)
			return in->imm == 16 ? H_BE16 : in->imm == 32 ? H_BE32 : H_BE64;
		return in->imm == 16 ? H_LE16 : in->imm == 32 ? H_LE32 : H_LE64;
	case GBPF_DIV:
		return variant(in->off == 1 ? H_SDIV64_K : H_DIV64_K, is32, x);
	case GBPF_MOD:
		return variant(in->off == 1 ? H_SMOD64_K : H_MOD64_K, is32, x);
	case GBPF_MOV:
		if (in->off == 8)
			return is32 ? H_MOVSX8_32 : H_MOVSX8_64;
		if (in->off == 16)
			return is32 ? H_MOVSX16_32 : H_MOVSX16_64;
		if (in->off == 32)
			return H_MOVSX32_64;
		return variant(H_MOV64_K, is32, x);
	default:
		return variant(alu_k64[op >> 4], is32, x);
	}
}

static enum interp_handler decode_jmp(const struct gbpf_insn *in)
{
	int is32 = GBPF_CLASS(in->code) == GBPF_JMP32, x = GBPF_SRC(in->code) == GBPF_X;
	unsigned op = GBPF_OP(in->code);

	switch (op) {
	case GBPF_JA:
		return is32 ? H_GOTOL : H_JA;
	case GBPF_CALL:
		if (x)
			return H_CALLX;
		return in->src == GBPF_CALL_LOCAL ? H_CALL_LOCAL : H_CALL_HELPER;
	case GBPF_EXIT:
		return H_EXIT;
	default:
		return variant(jmp_k64[op >> 4], is32, x);
	}
}

static enum interp_handler decode_mem(const struct gbpf_insn *in)
{
	static const enum interp_handler ldx[4] = {H_LDXW, H_LDXH, H_LDXB, H_LDXDW};
	static const enum interp_handler ldxs[4] = {H_LDXSW, H_LDXSH, H_LDXSB, H_INVALID};
	static const enum interp_handler st[4] = {H_STW, H_STH, H_STB, H_STDW};
	static const enum interp_handler stx[4] = {H_STXW, H_STXH, H_STXB, H_STXDW};
	unsigned sz = GBPF_SIZE(in->code) >> 3;
	int is64 = GBPF_SIZE(in->code) == GBPF_DW;

	switch (GBPF_CLASS(in->code)) {
	case GBPF_LDX:
		return GBPF_MODE(in->code) == GBPF_MEMSX ? ldxs[sz] : ldx[sz];
	case GBPF_ST:
		return st[sz];
	default:
		break;
	}
	if (GBPF_MODE(in->code) == GBPF_MEM)
		return stx[sz];
	switch (in->imm) {
	case GBPF_ATOMIC_ADD:
		return is64 ? H_AADD64 : H_AADD32;
	case GBPF_ATOMIC_OR:
		return is64 ? H_AOR64 : H_AOR32;
	case GBPF_ATOMIC_AND:
		return is64 ? H_AAND64 : H_AAND32;
	case GBPF_ATOMIC_XOR:
		return is64 ? H_AXOR64 : H_AXOR32;
	case GBPF_ATOMIC_ADD | GBPF_FETCH:
		return is64 ? H_FADD64 : H_FADD32;
	case GBPF_ATOMIC_OR | GBPF_FETCH:
		return is64 ? H_FOR64 : H_FOR32;
	case GBPF_ATOMIC_AND | GBPF_FETCH:
		return is64 ? H_FAND64 : H_FAND32;
	case GBPF_ATOMIC_XOR | GBPF_FETCH:
		return is64 ? H_FXOR64 : H_FXOR32;
	case GBPF_ATOMIC_XCHG:
		return is64 ? H_XCHG64 : H_XCHG32;
	case GBPF_ATOMIC_CMPXCHG:
		return is64 ? H_CMPXCHG64 : H_CMPXCHG32;
	default:
		return H_INVALID;
	}
}

static enum interp_handler decode(const struct gbpf_insn *in)
{
	switch (GBPF_CLASS(in->code)) {
	case GBPF_ALU:
	case GBPF_ALU64:
		return decode_alu(in);
	case GBPF_JMP:
	case GBPF_JMP32:
		return decode_jmp(in);
	case GBPF_LD:
		return in->code == GBPF_OP_LDDW ? H_LDDW : H_INVALID;
	default:
		return decode_mem(in);
	}
}

static __attribute__((format(printf, 5, 6))) int create_error(const struct gbpf_interp *ip,
							       size_t pc, char *err,
							       size_t err_size, const char *fmt, ...)
{
	char text[96], why[160];
	va_list ap;

	if (err && err_size) {
		gbpf_disasm_insn(ip->insns + pc, ip->cnt - pc, text, sizeof(text));
		va_start(ap, fmt);
		vsnprintf(why, sizeof(why), fmt, ap);
		va_end(ap);
		snprintf(err, err_size, "%s: instruction %zu (%s): %s", ip->name, pc, text, why);
	}
	return -EINVAL;
}

gbpf_host_helper_fn gbpf_interp_resolve(const struct gbpf_interp *ip, uint32_t id)
{
	gbpf_host_helper_fn fn = NULL;

	if (ip->lookup)
		fn = ip->lookup(id);
	if (!fn)
		fn = gbpf_host_helper_get(id);
	return fn;
}

static int map_is_readonly(const struct gbpf_map_instance *map)
{
	return map->desc && (map->desc->origin == GBPF_MAP_ORIGIN_RODATA ||
			     (map->desc->map_flags & GBPF_F_RDONLY_PROG));
}

/* Resolve the 64-bit value of the wide load at pc (stored in the second decoded slot). */
static int resolve_wide(struct gbpf_interp *ip, size_t pc, char *err, size_t err_size)
{
	const struct gbpf_insn *in = ip->insns + pc;
	uint64_t v = (uint64_t)(uint32_t)in[0].imm | ((uint64_t)(uint32_t)in[1].imm << 32);
	struct gbpf_map_instance *map;
	uint32_t zero = 0;
	uint8_t *value;

	switch (in->src) {
	case 0:
		break;
	case GBPF_PSEUDO_FUNC:
		/* No helper takes callbacks yet: the value is the target slot index. */
		v = (uint64_t)((int64_t)pc + 1 + in->imm);
		break;
	case GBPF_PSEUDO_MAP_IDX:
	case GBPF_PSEUDO_MAP_IDX_VALUE:
		if (in->imm < 0 || (size_t)in->imm >= ip->map_cnt)
			return create_error(ip, pc, err, err_size,
					    "map index %d out of range (%zu maps)", in->imm,
					    ip->map_cnt);
		map = &ip->maps[in->imm];
		if (in->src == GBPF_PSEUDO_MAP_IDX) {
			v = (uint64_t)(uintptr_t)map;
			break;
		}
		value = map->desc ? gbpf_map_lookup(map, &zero, 0) : NULL;
		if (!value)
			return create_error(ip, pc, err, err_size,
					    "map %d (%s) has no value 0 to point into", in->imm,
					    map->desc && map->desc->name ? map->desc->name : "?");
		if ((uint32_t)in[1].imm >= map->desc->value_size)
			return create_error(ip, pc, err, err_size,
					    "offset %u is beyond the %u-byte value of map %d",
					    (uint32_t)in[1].imm, map->desc->value_size, in->imm);
		v = (uint64_t)(uintptr_t)(value + (uint32_t)in[1].imm);
		{
			struct interp_static_region *r;
			size_t k;

			for (k = 0; k < ip->value_cnt; k++)
				if (ip->values[k].start == (uintptr_t)value)
					break;
			if (k == ip->value_cnt) {
				r = realloc(ip->values, (ip->value_cnt + 1) * sizeof(*r));
				if (!r)
					return -ENOMEM;
				ip->values = r;
				r += ip->value_cnt++;
				r->start = (uintptr_t)value;
				r->end = (uintptr_t)value + map->desc->value_size;
				r->writable = !map_is_readonly(map);
				r->name = map->desc->name;
			}
		}
		break;
	default:
		return create_error(ip, pc, err, err_size, "unsupported wide load source %u",
				    (unsigned)in->src);
	}
	ip->code[pc + 1].op = NULL;
	ip->code[pc + 1].k64 = v;
	return 0;
}

int gbpf_interp_create(const struct gbpf_prog_desc *prog, struct gbpf_map_instance *maps,
		       size_t map_cnt, const struct gbpf_interp_opts *opts,
		       struct gbpf_interp **out, char *err, size_t err_size)
{
	const void *const *labels = NULL;
	struct gbpf_interp *ip;
	char why[256];
	size_t pc;
	int ret;

	if (err && err_size)
		err[0] = '\0';
	if (!prog || !out || (map_cnt && !maps))
		return -EINVAL;
	*out = NULL;
	ret = gbpf_insns_check(prog->insns, prog->insn_cnt, why, sizeof(why));
	if (ret) {
		if (err && err_size)
			snprintf(err, err_size, "%s: %s", prog->name ? prog->name : "program", why);
		return ret;
	}
	ip = calloc(1, sizeof(*ip));
	if (!ip)
		return -ENOMEM;
	snprintf(ip->name, sizeof(ip->name), "%s", prog->name ? prog->name : "program");
	ip->cnt = prog->insn_cnt;
	ip->maps = maps;
	ip->map_cnt = map_cnt;
	ip->max_insns = GBPF_INTERP_DEFAULT_MAX_INSNS;
	if (opts) {
		if (opts->sz > offsetof(struct gbpf_interp_opts, bounds_checked))
			ip->checked = opts->bounds_checked != 0;
		if (opts->sz > offsetof(struct gbpf_interp_opts, max_insns) && opts->max_insns)
			ip->max_insns = opts->max_insns;
		if (opts->sz > offsetof(struct gbpf_interp_opts, helper_lookup))
			ip->lookup = opts->helper_lookup;
	}
	ip->insns = malloc(ip->cnt * sizeof(*ip->insns));
	ip->code = calloc(ip->cnt, sizeof(*ip->code));
	ip->helpers = calloc(ip->cnt, sizeof(*ip->helpers));
	if (!ip->insns || !ip->code || !ip->helpers) {
		ret = -ENOMEM;
		goto fail;
	}
	memcpy(ip->insns, prog->insns, ip->cnt * sizeof(*ip->insns));
	if (ip->checked)
		gbpf_interp_exec_checked(NULL, &labels);
	else
		gbpf_interp_exec_fast(NULL, &labels);
	for (pc = 0; pc < ip->cnt; pc++) {
		const struct gbpf_insn *in = ip->insns + pc;
		enum interp_handler h = decode(in);

		ip->code[pc].op = labels[h];
		ip->code[pc].dst = in->dst;
		ip->code[pc].src = in->src;
		ip->code[pc].off = in->off;
		ip->code[pc].imm = in->imm;
		if (h == H_CALL_HELPER)
			ip->helpers[pc] = gbpf_interp_resolve(ip, (uint32_t)in->imm);
		if (h == H_LDDW) {
			ret = resolve_wide(ip, pc, err, err_size);
			if (ret)
				goto fail;
			pc++;
		}
	}
	*out = ip;
	return 0;
fail:
	gbpf_interp_destroy(ip);
	return ret;
}

void gbpf_interp_destroy(struct gbpf_interp *ip)
{
	if (!ip)
		return;
	free(ip->insns);
	free(ip->code);
	free(ip->helpers);
	free(ip->values);
	free(ip);
}

int gbpf_interp_is_checked(const struct gbpf_interp *ip)
{
	return ip && ip->checked;
}

int gbpf_interp_fault(struct interp_run *run, size_t pc, int ret, const char *fmt, ...)
{
	char text[96], why[256];
	va_list ap;

	if (run->err && run->err_size) {
		if (pc < run->ip->cnt)
			gbpf_disasm_insn(run->ip->insns + pc, run->ip->cnt - pc, text, sizeof(text));
		else
			snprintf(text, sizeof(text), "?");
		va_start(ap, fmt);
		vsnprintf(why, sizeof(why), fmt, ap);
		va_end(ap);
		snprintf(run->err, run->err_size, "%s: instruction %zu (%s): %s", run->ip->name, pc,
			 text, why);
	}
	return ret;
}

static int checked_env_access_ok(struct gbpf_exec_env *env, uint64_t addr, uint64_t size,
				 int write)
{
	return gbpf_interp_access_ok(env->user, addr, size, write);
}

int gbpf_interp_run(const struct gbpf_interp *ip, struct gbpf_exec_env *env,
		    const uint64_t args[5], const struct gbpf_interp_region *regions,
		    size_t region_cnt, struct gbpf_interp_result *res, char *err, size_t err_size)
{
	struct gbpf_exec_env local_env, saved_env;
	struct interp_run *run;
	int ret;

	if (err && err_size)
		err[0] = '\0';
	if (!ip || (region_cnt && !regions))
		return -EINVAL;
	/* The run state (stack frames plus the checked mode's region table, tens
	 * of KiB) lives on the heap: host probes run on application threads,
	 * whose stacks may be small. */
	run = malloc(sizeof(*run));
	if (!run)
		return -ENOMEM;
	memset(run, 0, offsetof(struct interp_run, dyn));
	memset(run->stack, 0, sizeof(run->stack));
	run->ip = ip;
	if (!env) {
		memset(&local_env, 0, sizeof(local_env));
		local_env.maps = ip->maps;
		local_env.map_cnt = ip->map_cnt;
		local_env.thread_count = 1;
		env = &local_env;
	}
	saved_env = *env;
	run->env = env;
	run->budget = ip->max_insns;
	run->regions = regions;
	run->region_cnt = region_cnt;
	run->err = err;
	run->err_size = err_size;
	run->dyn_cnt = 0;
	if (args)
		memcpy(&run->reg[1], args, 5 * sizeof(uint64_t));
	run->reg[10] = (uint64_t)(uintptr_t)(run->stack + sizeof(run->stack));
	if (ip->checked) {
		env->access_ok = checked_env_access_ok;
		env->user = run;
		ret = gbpf_interp_exec_checked(run, NULL);
		env->access_ok = saved_env.access_ok;
		env->user = saved_env.user;
	} else {
		ret = gbpf_interp_exec_fast(run, NULL);
	}
	if (res) {
		res->r0 = run->reg[0];
		res->insns = ip->max_insns - run->budget;
		res->exited = run->exited;
	}
	free(run);
	return ret;
}
