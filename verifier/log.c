/* SPDX-License-Identifier: MIT */
/*
 * verifier/log.c - the verifier's log: lines in the caller's buffer and/or
 * callback, the instruction as text and the register state, in the shape
 * of the Linux verifier's messages.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "verifier/vstate.h"
#include "verifier/disasm_shim.h"

void vlog(struct venv *env, const char *fmt, ...)
{
	char line[768];
	va_list ap;
	int n;

	if (!env->log_buf && !env->log_fn)
		return;
	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(line))
		n = sizeof(line) - 1;
	if (env->log_buf && env->log_size > 1 && env->log_len + 1 < env->log_size) {
		size_t room = env->log_size - 1 - env->log_len;
		size_t k = (size_t)n < room ? (size_t)n : room;

		memcpy(env->log_buf + env->log_len, line, k);
		env->log_len += k;
		env->log_buf[env->log_len] = '\0';
	}
	if (env->log_fn) {
		char *p = line;

		while (*p) {
			char *nl = strchr(p, '\n');

			if (nl)
				*nl = '\0';
			env->log_fn(env->log_ctx, p);
			if (!nl)
				break;
			p = nl + 1;
		}
	}
}

void vlog_insn_text(struct venv *env, uint32_t idx, char *buf, size_t size)
{
	const struct gbpf_insn *in = &env->insns[idx];

	if (vdisasm(env->insns, env->insn_cnt, idx, buf, size) == 0)
		return;
	snprintf(buf, size, "code=0x%02x dst=r%u src=r%u off=%d imm=%d", in->code, in->dst, in->src,
		 in->off, in->imm);
}

static const char *const type_names[REG_TYPE_CNT] = {
	[REG_NOT_INIT] = "?",
	[REG_SCALAR] = "scalar",
	[REG_PTR_CTX] = "ctx",
	[REG_PTR_STACK] = "fp",
	[REG_CONST_MAP] = "map_ptr",
	[REG_PTR_MAP_VALUE] = "map_value",
	[REG_PTR_MAP_VALUE_OR_NULL] = "map_value_or_null",
	[REG_PTR_RINGBUF] = "ringbuf_mem",
	[REG_PTR_RINGBUF_OR_NULL] = "ringbuf_mem_or_null",
	[REG_PTR_MEM] = "mem",
	[REG_PTR_MEM_OR_NULL] = "mem_or_null",
};

const char *reg_type_name(uint8_t type)
{
	return type < REG_TYPE_CNT ? type_names[type] : "invalid";
}

static int fmt_sval(char *buf, size_t size, const struct sval *v)
{
	if (sval_is_const(v))
		return snprintf(buf, size, "%" PRId64, (int64_t)v->t.value);
	return snprintf(buf, size,
			"smin=%" PRId64 ",smax=%" PRId64 ",umin=%" PRIu64 ",umax=%" PRIu64
			",var_off=(0x%" PRIx64 "; 0x%" PRIx64 ")",
			v->smin, v->smax, v->umin, v->umax, v->t.value, v->t.mask);
}

static void fmt_reg(char *buf, size_t size, const struct reg *r, const struct venv *env)
{
	char v[160];

	fmt_sval(v, sizeof(v), &r->v);
	switch (r->type) {
	case REG_SCALAR:
		snprintf(buf, size, "%s", v);
		break;
	case REG_PTR_STACK:
		snprintf(buf, size, "fp%u(off=%s)", r->frameno, v);
		break;
	case REG_CONST_MAP:
		snprintf(buf, size, "map_ptr(%s)",
			 r->map < env->prog->map_cnt && env->prog->maps[r->map].name
				 ? env->prog->maps[r->map].name
				 : "?");
		break;
	case REG_PTR_MAP_VALUE:
	case REG_PTR_MAP_VALUE_OR_NULL:
		snprintf(buf, size, "%s(map=%u,id=%u,off=%s)", reg_type_name(r->type), r->map, r->id,
			 v);
		break;
	case REG_PTR_RINGBUF:
	case REG_PTR_RINGBUF_OR_NULL:
		snprintf(buf, size, "%s(size=%u,id=%u,ref=%u,off=%s)", reg_type_name(r->type),
			 r->size, r->id, r->ref, v);
		break;
	default:
		snprintf(buf, size, "%s(off=%s)", reg_type_name(r->type), v);
		break;
	}
}

void vlog_state(struct venv *env, const struct vstate *st)
{
	char line[2048], one[256];

	for (uint32_t f = 0; f <= st->curframe; f++) {
		const struct frame *fr = st->frames[f];
		size_t len = 0;

		len += snprintf(line + len, sizeof(line) - len, "frame%u:", f);
		for (int i = 0; i < GBPF_REG_COUNT && len < sizeof(line); i++) {
			if (fr->regs[i].type == REG_NOT_INIT)
				continue;
			fmt_reg(one, sizeof(one), &fr->regs[i], env);
			len += snprintf(line + len, sizeof(line) - len, " R%d=%s", i, one);
		}
		for (uint32_t s = 0; s < fr->nslots && len < sizeof(line); s++) {
			const struct stack_slot *sl = &fr->stack[s];
			char kinds[9];
			bool any = false;

			for (int b = 0; b < 8; b++) {
				kinds[7 - b] = ".msp"[sl->kind[b] & 3];
				any |= sl->kind[b] != STK_INVALID;
			}
			kinds[8] = '\0';
			if (!any)
				continue;
			if (sl->kind[0] == STK_SPILL) {
				fmt_reg(one, sizeof(one), &sl->spill, env);
				len += snprintf(line + len, sizeof(line) - len, " fp-%u=%s",
						(s + 1) * 8, one);
			} else {
				len += snprintf(line + len, sizeof(line) - len, " fp-%u=%s",
						(s + 1) * 8, kinds);
			}
		}
		vlog(env, "%s\n", line);
	}
}

int verr(struct venv *env, uint32_t idx, int err, const char *fmt, ...)
{
	char text[128];
	va_list ap;

	if (env->err)
		return env->err;
	va_start(ap, fmt);
	vsnprintf(env->reason, sizeof(env->reason), fmt, ap);
	va_end(ap);
	env->err = err ? err : -EINVAL;
	env->err_insn = idx;
	if (idx < env->insn_cnt) {
		vlog_insn_text(env, idx, text, sizeof(text));
		vlog(env, "%u: (%02x) %s\n", idx, env->insns[idx].code, text);
	}
	vlog(env, "%s%s%s %s: insn %u: %s\n",
	     env->prog->source_file ? env->prog->source_file : "",
	     env->prog->source_file ? ": " : "", env->prog->section ? "section" : "program",
	     env->prog->section ? env->prog->section : (env->prog->name ? env->prog->name : "?"),
	     idx, env->reason);
	return env->err;
}
