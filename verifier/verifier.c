/* SPDX-License-Identifier: MIT */
/*
 * verifier/verifier.c - gbpf_verify(): options, environment set-up, the
 * control-flow pass, the abstract interpretation and the result.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <gbpf/probe_ctx.h>

#include "verifier/vstate.h"

#define DEFAULT_LIMIT 1000000ULL
#define MAX_INSNS (1u << 20)

int verifier_run(struct venv *env);

/* Read an options field only when the caller's struct has it. */
#define OPT(opts, field, def)                                                                      \
	((opts) && (opts)->sz >= offsetof(struct gbpf_verify_opts, field) + sizeof((opts)->field)   \
		 ? (opts)->field                                                                    \
		 : (def))

static void fill_result(struct venv *env, struct gbpf_verify_result *res, int err)
{
	struct gbpf_verify_result r;
	size_t n;

	memset(&r, 0, sizeof(r));
	r.sz = sizeof(r);
	r.verdict = err ? GBPF_VERDICT_REJECT : GBPF_VERDICT_ACCEPT;
	r.error = err;
	r.error_insn = err ? env->err_insn : -1;
	if (err)
		memcpy(r.reason, env->reason, sizeof(r.reason));
	if (!err && env->have_r0) {
		r.r0_smin = env->r0.smin;
		r.r0_smax = env->r0.smax;
		r.r0_umin = env->r0.umin;
		r.r0_umax = env->r0.umax;
		r.r0_known_mask = env->r0.t.mask;
		r.r0_known_value = env->r0.t.value;
	} else {
		r.r0_smin = INT64_MIN;
		r.r0_smax = INT64_MAX;
		r.r0_umax = UINT64_MAX;
		r.r0_known_mask = UINT64_MAX;
	}
	r.worst_case_insns = env->worst;
	r.insns_processed = env->processed;
	r.states_stored = env->stored;
	r.states_pruned = env->pruned;
	r.max_stack_depth = env->max_stack;
	r.subprog_cnt = env->subprog_cnt;
	r.insn_cnt = env->insn_cnt;
	r.ctx_read_mask = err ? ~0ULL : env->ctx_read_mask;
	n = res->sz < sizeof(r) ? res->sz : sizeof(r);
	if (n > sizeof(size_t)) {
		memcpy((char *)res + sizeof(size_t), (char *)&r + sizeof(size_t),
		       n - sizeof(size_t));
	}
}

int gbpf_verify(const struct gbpf_prog_desc *prog, const struct gbpf_verify_opts *opts,
		struct gbpf_verify_result *result)
{
	struct venv env;
	int err;

	if (!prog || prog->sz < offsetof(struct gbpf_prog_desc, source_file) ||
	    (opts && opts->sz < sizeof(size_t)) || (!prog->insns && prog->insn_cnt))
		return -(errno = EINVAL);
	memset(&env, 0, sizeof(env));
	env.prog = prog;
	env.insns = prog->insns;
	env.attach = prog->attach.kind;
	env.device = gbpf_attach_is_device(env.attach);
	env.log_level = OPT(opts, log_level, 0);
	env.flags = OPT(opts, flags, 0);
	env.log_buf = OPT(opts, log_buf, NULL);
	env.log_size = OPT(opts, log_size, 0);
	env.log_fn = OPT(opts, log_fn, NULL);
	env.log_ctx = OPT(opts, log_ctx, NULL);
	env.limit = OPT(opts, complexity_limit, 0);
	env.mem_size = OPT(opts, mem_size, 0);
	env.err_insn = -1;
	if (!env.limit)
		env.limit = DEFAULT_LIMIT;
	if (env.log_buf && env.log_size)
		env.log_buf[0] = '\0';
	if (prog->insn_cnt == 0) {
		err = verr(&env, 0, -GBPF_ERRNO__VERIFY, "the program has no instructions");
		goto out;
	}
	if (prog->insn_cnt > MAX_INSNS) {
		err = verr(&env, 0, -GBPF_ERRNO__VERIFY,
			   "the program has %zu instructions, more than the %u allowed",
			   prog->insn_cnt, MAX_INSNS);
		goto out;
	}
	if (env.mem_size > (1ULL << 29)) {
		err = verr(&env, UINT32_MAX, -GBPF_ERRNO__VERIFY,
			   "memory buffer of %" PRIu64 " bytes is larger than 512 MiB", env.mem_size);
		goto out;
	}
	env.insn_cnt = (uint32_t)prog->insn_cnt;
	if (env.attach != GBPF_ATTACH_NONE) {
		if (!(env.attach >= GBPF_ATTACH_GPU_ENTRY && env.attach <= GBPF_ATTACH_GPU_BLOCK) &&
		    !(env.attach >= GBPF_ATTACH_HOST_LAUNCH &&
		      env.attach <= GBPF_ATTACH_HOST_MODULE_LOAD) &&
		    env.attach != GBPF_ATTACH_UPROBE && env.attach != GBPF_ATTACH_URETPROBE) {
			err = verr(&env, UINT32_MAX, -GBPF_ERRNO__VERIFY, "unknown attach kind %u",
				   env.attach);
			goto out;
		}
	}
	for (size_t i = 0; i < prog->map_cnt; i++) {
		if (prog->maps[i].value_size > (1u << 29)) {
			err = verr(&env, UINT32_MAX, -GBPF_ERRNO__VERIFY,
				   "map '%s' has a value of %u bytes (more than 512 MiB)",
				   prog->maps[i].name ? prog->maps[i].name : "?",
				   prog->maps[i].value_size);
			goto out;
		}
	}
	err = verifier_run(&env);
out:
	if (!err && env.log_level >= GBPF_VERIFY_LOG_STATE)
		vlog(&env,
		     "verification OK: processed %" PRIu64 " insns, %" PRIu64
		     " states stored, %" PRIu64 " pruned, worst-case path %" PRIu64
		     " insns, stack %u bytes\n",
		     env.processed, env.stored, env.pruned, env.worst, env.max_stack);
	if (result && result->sz >= sizeof(size_t))
		fill_result(&env, result, err == -ENOMEM ? -ENOMEM : err);
	if (err && err != -ENOMEM)
		err = -GBPF_ERRNO__VERIFY;
	if (err)
		errno = -err;
	return err;
}
