/* SPDX-License-Identifier: MIT */
/*
 * verifier/cfg.c - the control-flow pass that runs before the abstract
 * interpretation: wide loads are complete, jumps land on instructions of
 * their own function, functions are found from local calls, prune points
 * are marked, and the registers live before each instruction are computed
 * (so that pruning ignores dead registers).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <gbpf/asm.h>

#include "verifier/vstate.h"

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static bool is_cond_jmp(const struct gbpf_insn *in)
{
	uint8_t cls = GBPF_CLASS(in->code), op = GBPF_OP(in->code);

	return (cls == GBPF_JMP || cls == GBPF_JMP32) && op != GBPF_JA && op != GBPF_CALL &&
	       op != GBPF_EXIT;
}

/* Jump target of instruction idx, or -1 if it does not jump. */
static int64_t jump_target(const struct gbpf_insn *in, uint32_t idx)
{
	uint8_t cls = GBPF_CLASS(in->code), op = GBPF_OP(in->code);

	if (cls == GBPF_JMP32 && op == GBPF_JA)
		return (int64_t)idx + 1 + in->imm;
	if ((cls == GBPF_JMP && op == GBPF_JA) || is_cond_jmp(in))
		return (int64_t)idx + 1 + in->off;
	return -1;
}

static bool is_local_call(const struct gbpf_insn *in)
{
	return in->code == GBPF_OP_CALL && in->src == GBPF_CALL_LOCAL;
}

/* use and def register sets of one instruction (bit per register) */
static void use_def(const struct gbpf_insn *in, uint16_t *use, uint16_t *def)
{
	uint8_t cls = GBPF_CLASS(in->code), op = GBPF_OP(in->code), mode = GBPF_MODE(in->code);
	uint16_t d = (uint16_t)(1u << (in->dst & 15)), s = (uint16_t)(1u << (in->src & 15));

	*use = *def = 0;
	switch (cls) {
	case GBPF_ALU:
	case GBPF_ALU64:
		*def = d;
		if (op != GBPF_MOV)
			*use |= d;
		if (GBPF_SRC(in->code) == GBPF_X && op != GBPF_END && op != GBPF_NEG)
			*use |= s;
		break;
	case GBPF_LD:
		*def = d;
		break;
	case GBPF_LDX:
		*use = s;
		*def = d;
		break;
	case GBPF_ST:
		*use = d;
		break;
	case GBPF_STX:
		*use = d | s;
		if (mode == GBPF_ATOMIC) {
			if (in->imm == GBPF_ATOMIC_CMPXCHG) {
				*use |= 1;
				*def = 1;
			} else if (in->imm & GBPF_FETCH) {
				*def = s;
			}
		}
		break;
	default:
		if (op == GBPF_CALL) {
			*use = 0x3e; /* r1-r5 */
			if (GBPF_SRC(in->code) == GBPF_X)
				*use |= d;
			*def = 0x3f;
		} else if (op == GBPF_EXIT) {
			*use = 1;
		} else if (op != GBPF_JA) {
			*use = d;
			if (GBPF_SRC(in->code) == GBPF_X)
				*use |= s;
		}
		break;
	}
	*use &= 0x3ff;
	*def &= 0x3ff;
}

static int liveness(struct venv *env)
{
	uint32_t n = env->insn_cnt;
	uint16_t *use = malloc(n * sizeof(*use) * 2), *def;
	bool changed = true;
	int rounds = 0;

	if (!use)
		return -ENOMEM;
	def = use + n;
	for (uint32_t i = 0; i < n; i++) {
		use_def(&env->insns[i], &use[i], &def[i]);
		env->live_in[i] = 0;
	}
	/* Backward fixpoint; each round can only add bits, so it ends within
	 * 11 rounds per loop nesting level; the cap bounds pathological CFGs
	 * (extra live registers only make pruning more conservative). */
	while (changed && rounds++ < 64) {
		changed = false;
		for (uint32_t k = n; k-- > 0;) {
			const struct gbpf_insn *in = &env->insns[k];
			uint16_t out = 0, li;
			int64_t t;

			if (env->insn_flags[k] & INSN_SECOND)
				continue;
			if (in->code == GBPF_OP_EXIT)
				out = 0;
			else {
				uint32_t nx = k + (gbpf_insn_is_wide(in) ? 2 : 1);
				bool uncond = (GBPF_OP(in->code) == GBPF_JA &&
					       (GBPF_CLASS(in->code) == GBPF_JMP ||
						GBPF_CLASS(in->code) == GBPF_JMP32));

				if (!uncond && nx < n)
					out |= env->live_in[nx];
				t = jump_target(in, k);
				if (t >= 0 && t < n)
					out |= env->live_in[t];
			}
			li = (uint16_t)(use[k] | (out & ~def[k]));
			if (rounds > 60)
				li = 0x3ff;
			if (li != env->live_in[k]) {
				env->live_in[k] = li;
				changed = true;
			}
		}
	}
	if (changed)
		for (uint32_t i = 0; i < n; i++)
			env->live_in[i] = 0x3ff;
	free(use);
	return 0;
}

int cfg_check(struct venv *env)
{
	uint32_t n = env->insn_cnt, *starts, ns = 1;
	int err = 0;

	/* Encoding first (core/isa owns it): reserved fields, opcodes, targets. */
	{
		char why[256];
		const char *p;
		long at = 0;

		if (gbpf_insns_check(env->insns, n, why, sizeof(why))) {
			p = strstr(why, "instruction ");
			if (p)
				at = strtol(p + 12, NULL, 10);
			if (at < 0 || (uint32_t)at >= n)
				at = 0;
			return verr(env, (uint32_t)at, -GBPF_ERRNO__VERIFY, "invalid encoding: %s",
				    why);
		}
	}
	starts = malloc((n + 1) * sizeof(*starts));
	if (!starts)
		return -ENOMEM;
	starts[0] = 0;
	for (uint32_t i = 0; i < n; i++) {
		const struct gbpf_insn *in = &env->insns[i];
		int64_t t;

		if (env->insn_flags[i] & INSN_SECOND)
			continue;
		if (gbpf_insn_is_wide(in)) {
			const struct gbpf_insn *hi = in + 1;

			if (i + 1 >= n) {
				err = verr(env, i, -GBPF_ERRNO__VERIFY,
					   "wide load (lddw) is missing its second slot");
				goto out;
			}
			if (hi->code || hi->dst || hi->src || hi->off) {
				err = verr(env, i + 1, -GBPF_ERRNO__VERIFY,
					   "second slot of a wide load must be zero except imm");
				goto out;
			}
			env->insn_flags[i + 1] |= INSN_SECOND;
			/*
			 * Every map reference, reachable or not: code generators and
			 * the interpreter translate every instruction (the fuzzer
			 * found dead lddw map[N] past the table accepted).
			 */
			if ((in->src == GBPF_PSEUDO_MAP_IDX || in->src == GBPF_PSEUDO_MAP_IDX_VALUE) &&
			    (in->imm < 0 || (size_t)in->imm >= env->prog->map_cnt)) {
				err = verr(env, i, -GBPF_ERRNO__VERIFY,
					   "map index %d out of range (the object has %zu maps)", in->imm,
					   env->prog->map_cnt);
				goto out;
			}
			/*
			 * A direct value address (map_value[i]+off) needs element 0
			 * to exist for the whole run: only plain arrays have it (as
			 * Linux's direct value access); the fuzzer found one on a
			 * hash map accepted and the interpreter refusing it.
			 */
			if (in->src == GBPF_PSEUDO_MAP_IDX_VALUE) {
				const struct gbpf_map_desc *m = &env->prog->maps[in->imm];

				if ((m->type != GBPF_MAP_TYPE_ARRAY && m->type != GBPF_MAP_TYPE_GPU_ARRAY) ||
				    !m->max_entries || m->key_size != 4) {
					err = verr(env, i, -GBPF_ERRNO__VERIFY,
						   "map_value[%d]: map '%s' is not an array with an element 0 "
						   "to point into", in->imm, m->name ? m->name : "?");
					goto out;
				}
				if (hi->imm < 0 || (uint32_t)hi->imm >= m->value_size) {
					err = verr(env, i, -GBPF_ERRNO__VERIFY,
						   "lddw offset %d outside the value of map '%s' (%u bytes)",
						   hi->imm, m->name ? m->name : "?", m->value_size);
					goto out;
				}
			}
			if (in->src == GBPF_PSEUDO_FUNC) {
				t = (int64_t)i + 1 + in->imm;
				if (t < 0 || t >= n) {
					err = verr(env, i, -GBPF_ERRNO__VERIFY,
						   "function address %lld out of range",
						   (long long)t);
					goto out;
				}
			}
			continue;
		}
		if (is_local_call(in)) {
			t = (int64_t)i + 1 + in->imm;
			if (t < 0 || t >= n) {
				err = verr(env, i, -GBPF_ERRNO__VERIFY,
					   "call to %lld is outside the program (0..%u)",
					   (long long)t, n - 1);
				goto out;
			}
			starts[ns++] = (uint32_t)t;
			env->insn_flags[i + 1 < n ? i + 1 : i] |= INSN_PRUNE;
		}
	}
	qsort(starts, ns, sizeof(*starts), cmp_u32);
	env->subprogs = calloc(ns, sizeof(*env->subprogs));
	if (!env->subprogs) {
		err = -ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; i < ns; i++) {
		if (i && starts[i] == starts[i - 1])
			continue;
		if (env->insn_flags[starts[i]] & INSN_SECOND) {
			err = verr(env, starts[i], -GBPF_ERRNO__VERIFY,
				   "a call lands in the middle of a wide load");
			goto out;
		}
		env->subprogs[env->subprog_cnt++].start = starts[i];
	}
	for (uint32_t i = 0; i < env->subprog_cnt; i++)
		env->subprogs[i].end = i + 1 < env->subprog_cnt ? env->subprogs[i + 1].start : n;
	/* jumps stay inside their function and land on an instruction */
	for (uint32_t sp = 0; sp < env->subprog_cnt; sp++) {
		for (uint32_t i = env->subprogs[sp].start; i < env->subprogs[sp].end; i++) {
			const struct gbpf_insn *in = &env->insns[i];
			int64_t t;

			if (env->insn_flags[i] & INSN_SECOND)
				continue;
			if (!is_cond_jmp(in) &&
			    !(GBPF_OP(in->code) == GBPF_JA &&
			      (GBPF_CLASS(in->code) == GBPF_JMP || GBPF_CLASS(in->code) == GBPF_JMP32)))
				continue;
			t = jump_target(in, i);
			if (t < env->subprogs[sp].start || t >= env->subprogs[sp].end) {
				err = verr(env, i, -GBPF_ERRNO__VERIFY,
					   "jump to %lld leaves function %u ([%u, %u))", (long long)t,
					   sp, env->subprogs[sp].start, env->subprogs[sp].end);
				goto out;
			}
			if (env->insn_flags[t] & INSN_SECOND) {
				err = verr(env, i, -GBPF_ERRNO__VERIFY,
					   "jump to %lld lands in the middle of a wide load",
					   (long long)t);
				goto out;
			}
			env->insn_flags[t] |= INSN_PRUNE;
			if (is_cond_jmp(in) && i + 1 < n)
				env->insn_flags[i + 1] |= INSN_PRUNE;
		}
	}
	err = liveness(env);
out:
	free(starts);
	return err;
}
