/* SPDX-License-Identifier: MIT */
/* gbpf asm / gbpf disasm: between assembler text and instructions. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gbpf/asm.h>

#include "cli.h"
#include "prog_input.h"

int cmd_asm(int argc, char **argv)
{
	static const struct option options[] = {
		{"output", required_argument, NULL, 'o'},
		{0},
	};
	const char *out_path = NULL;
	struct gbpf_insn *insns = NULL;
	size_t n = 0, i, size;
	char err[1024], *text;
	int opt, ret;

	while ((opt = getopt_long(argc, argv, "o:", options, NULL)) >= 0) {
		if (opt != 'o')
			return cli_error("usage: asm FILE.s [-o FILE.bin]");
		out_path = optarg;
	}
	if (optind != argc - 1)
		return cli_error("usage: asm FILE.s [-o FILE.bin]");
	text = cli_read_file(argv[optind], &size);
	if (!text)
		return cli_error("%s: %s", argv[optind], strerror(errno));
	ret = gbpf_asm(text, &insns, &n, err, sizeof(err));
	free(text);
	if (ret)
		return cli_error("%s: %s", argv[optind], err);
	if (out_path) {
		FILE *f = fopen(out_path, "wb");

		if (!f || fwrite(insns, sizeof(*insns), n, f) != n) {
			ret = cli_error("%s: %s", out_path, strerror(errno));
		}
		if (f && fclose(f) && !ret)
			ret = cli_error("%s: %s", out_path, strerror(errno));
	} else if (cli.json) {
		jw_start_array(&cli.jw);
		for (i = 0; i < n; i++) {
			char hex[17];
			const unsigned char *b = (const unsigned char *)&insns[i];

			snprintf(hex, sizeof(hex), "%02x%02x%02x%02x%02x%02x%02x%02x", b[0], b[1],
				 b[2], b[3], b[4], b[5], b[6], b[7]);
			jw_string(&cli.jw, hex);
		}
		jw_end_array(&cli.jw);
		jw_finish(&cli.jw);
	} else {
		for (i = 0; i < n; i++) {
			const unsigned char *b = (const unsigned char *)&insns[i];

			printf("%02x %02x %02x %02x %02x %02x %02x %02x\n", b[0], b[1], b[2], b[3],
			       b[4], b[5], b[6], b[7]);
		}
	}
	free(insns);
	return ret;
}

static int disasm_one(const struct gbpf_prog_desc *p)
{
	size_t i = 0;

	if (cli.json) {
		jw_start_object(&cli.jw);
		jw_kv_string(&cli.jw, "program", p->name);
		jw_kv_string(&cli.jw, "section", p->section);
		jw_key(&cli.jw, "insns");
		jw_start_array(&cli.jw);
	} else {
		printf("%s%s%s:\n", p->name, p->section ? " in " : "", p->section ? p->section : "");
	}
	while (i < p->insn_cnt) {
		char text[160];
		int used = gbpf_disasm_insn(&p->insns[i], p->insn_cnt - i, text, sizeof(text));

		if (used <= 0) {
			snprintf(text, sizeof(text), "<invalid opcode 0x%02x>", p->insns[i].code);
			used = 1;
		}
		if (cli.json) {
			jw_start_object(&cli.jw);
			jw_kv_uint(&cli.jw, "index", i);
			jw_kv_string(&cli.jw, "text", text);
			jw_end_object(&cli.jw);
		} else {
			printf("%6zu: %s\n", i, text);
		}
		i += (size_t)used;
	}
	if (cli.json) {
		jw_end_array(&cli.jw);
		jw_end_object(&cli.jw);
	}
	return 0;
}

int cmd_disasm(int argc, char **argv)
{
	struct prog_input in;
	size_t i, n;

	if (argc != 2)
		return cli_error("usage: disasm FILE");
	if (prog_input_open(argv[1], &in))
		return -1;
	n = prog_input_count(&in);
	if (cli.json)
		jw_start_array(&cli.jw);
	for (i = 0; i < n; i++)
		disasm_one(prog_input_prog(&in, i));
	if (cli.json) {
		jw_end_array(&cli.jw);
		jw_finish(&cli.jw);
	}
	prog_input_close(&in);
	return 0;
}
