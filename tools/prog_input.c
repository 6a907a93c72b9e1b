/* SPDX-License-Identifier: MIT */
#include "prog_input.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static int has_suffix(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && strcmp(s + a - b, suffix) == 0;
}

static void single_desc(struct prog_input *in, const char *name)
{
	memset(&in->single, 0, sizeof(in->single));
	in->single.sz = sizeof(in->single);
	in->single.name = name;
	in->single.insns = in->insns;
	in->single.insn_cnt = in->insn_cnt;
	in->single.source_file = in->path;
}

int prog_input_open(const char *path, struct prog_input *in)
{
	char err[1024] = "";
	size_t size = 0;
	char *bytes;
	int ret;

	memset(in, 0, sizeof(*in));
	in->path = path;
	bytes = cli_read_file(path, &size);
	if (!bytes)
		return cli_error("%s: cannot read: %s", path, strerror(errno));

	if (size >= 4 && memcmp(bytes, "\177ELF", 4) == 0) {
		GBPF_OPTS(gbpf_object_open_opts, opts, .object_name = path, .errbuf = err,
			  .errbuf_size = sizeof(err));

		in->kind = PROG_INPUT_OBJECT;
		in->obj = gbpf_object__open_mem(bytes, size, &opts);
		ret = in->obj ? 0 : -errno;
		free(bytes);
		if (ret)
			return cli_error_code(ret, "%s", err[0] ? err : path);
		return 0;
	}
	if (has_suffix(path, ".data")) {
		in->kind = PROG_INPUT_TESTCASE;
		ret = gbpf_testcase_parse(bytes, size, path, &in->tc, err, sizeof(err));
		free(bytes);
		if (ret)
			return cli_error("%s", err);
		in->has_tc = 1;
		ret = gbpf_testcase_program(&in->tc, &in->insns, &in->insn_cnt, err, sizeof(err));
		if (ret)
			return cli_error("%s", err);
		single_desc(in, "testcase");
		return 0;
	}
	if (has_suffix(path, ".s") || has_suffix(path, ".asm")) {
		in->kind = PROG_INPUT_ASM;
		ret = gbpf_asm(bytes, &in->insns, &in->insn_cnt, err, sizeof(err));
		free(bytes);
		if (ret)
			return cli_error("%s: %s", path, err);
		single_desc(in, "asm");
		return 0;
	}
	if (size == 0 || size % sizeof(struct gbpf_insn)) {
		free(bytes);
		return cli_error("%s: not an ELF object, .data, .s/.asm file, or raw program "
				 "(%zu bytes is not a multiple of 8)", path, size);
	}
	in->kind = PROG_INPUT_RAW;
	in->insns = (struct gbpf_insn *)bytes; /* malloc'ed, suitably aligned */
	in->insn_cnt = size / sizeof(struct gbpf_insn);
	single_desc(in, "raw");
	return 0;
}

void prog_input_close(struct prog_input *in)
{
	gbpf_object__close(in->obj);
	if (in->has_tc)
		gbpf_testcase_free(&in->tc);
	free(in->insns);
	memset(in, 0, sizeof(*in));
}

size_t prog_input_count(const struct prog_input *in)
{
	return in->kind == PROG_INPUT_OBJECT ? gbpf_object__prog_cnt(in->obj) : 1;
}

const struct gbpf_prog_desc *prog_input_prog(const struct prog_input *in, size_t idx)
{
	if (in->kind == PROG_INPUT_OBJECT)
		return gbpf_object__prog(in->obj, idx);
	return idx == 0 ? &in->single : NULL;
}

const struct gbpf_prog_desc *prog_input_select(const struct prog_input *in, const char *name)
{
	const struct gbpf_prog_desc *p;

	if (in->kind != PROG_INPUT_OBJECT || !name) {
		p = prog_input_prog(in, 0);
		if (!p)
			cli_error("%s: holds no program", in->path);
		return p;
	}
	p = gbpf_object__find_prog(in->obj, name);
	if (!p)
		cli_error("%s: no program named '%s'", in->path, name);
	return p;
}
