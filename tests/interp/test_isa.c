/* SPDX-License-Identifier: MIT */
/*
 * tests/interp/test_isa.c - assembler, disassembler, encoding checker and
 * .data parser, against the conformance suite and hand-written cases.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <gbpf/asm.h>

#include "conf_util.h"
#include "tests/tap.h"

static int contains_ci(const char *hay, const char *needle)
{
	return strcasestr(hay, needle) != NULL;
}

/* Assembled bytes equal the independent assembler's, the round trip holds, the checker agrees. */
static void conformance_programs(void)
{
	struct conf_row *rows = NULL;
	int n = conf_read_tsv(CONF_DIR "/assembled_tests.tsv", &rows);

	if (n <= 0) {
		tap_skip("conformance suite not found at %s (tests skipped)", CONF_DIR);
		return;
	}
	tap_ok(n == 313, "assembled_tests.tsv lists 313 tests (got %d)", n);
	for (int i = 0; i < n; i++) {
		struct conf_row *row = &rows[i];
		struct gbpf_testcase tc;
		struct gbpf_insn *insns = NULL, *again = NULL;
		size_t cnt = 0, cnt2 = 0;
		char path[512], err[512], *text = NULL;
		int ret;

		snprintf(path, sizeof(path), "%s/%s", CONF_DIR, row->name);
		ret = gbpf_testcase_parse_file(path, &tc, err, sizeof(err));
		if (!tap_ok(ret == 0, "%s: parses (%s)", row->name, err))
			continue;
		ret = gbpf_testcase_program(&tc, &insns, &cnt, err, sizeof(err));
		if (tap_ok(ret == 0, "%s: assembles (%s)", row->name, err)) {
			tap_ok(cnt * 8 == row->prog_len && !memcmp(insns, row->prog, row->prog_len),
			       "%s: bytes identical to assembled_tests.tsv (%zu slots)", row->name,
			       cnt);
			ret = gbpf_insns_check(insns, cnt, err, sizeof(err));
			tap_ok(ret == 0, "%s: encoding check accepts (%s)", row->name, err);
			ret = gbpf_disasm(insns, cnt, &text);
			if (ret == 0)
				ret = gbpf_asm(text, &again, &cnt2, err, sizeof(err));
			tap_ok(ret == 0 && cnt2 == cnt && !memcmp(again, insns, cnt * 8),
			       "%s: asm(disasm(x)) == x (%s)", row->name, ret ? err : "");
			if (tc.has_raw)
				tap_ok(tc.raw_cnt == cnt && !memcmp(tc.raw, insns, cnt * 8),
				       "%s: -- raw equals -- asm", row->name);
		}
		tap_ok(tc.has_result && tc.result == row->result,
		       "%s: -- result parsed as 0x%llx", row->name, (unsigned long long)tc.result);
		free(text);
		free(again);
		free(insns);
		gbpf_testcase_free(&tc);
	}
	conf_free_rows(rows, n);
}

/* Negative cases the assembler or the checker alone must reject, with the suite's message. */
static void conformance_negative(void)
{
	struct conf_row *rows = NULL;
	int n = conf_read_tsv(CONF_DIR "/assembled_negative.tsv", &rows);

	if (n <= 0) {
		tap_skip("conformance suite not found at %s (tests skipped)", CONF_DIR);
		return;
	}
	for (int i = 0; i < n; i++) {
		struct conf_row *row = &rows[i];
		struct gbpf_testcase tc;
		struct gbpf_insn *insns = NULL;
		size_t cnt = 0;
		char path[512], err[512] = "";
		int ret;

		snprintf(path, sizeof(path), "%s/%s", CONF_DIR, row->name);
		if (gbpf_testcase_parse_file(path, &tc, err, sizeof(err))) {
			tap_ok(0, "%s: parses (%s)", row->name, err);
			continue;
		}
		ret = gbpf_testcase_program(&tc, &insns, &cnt, err, sizeof(err));
		if (strstr(row->flags, "ASSEMBLER_ERROR")) {
			tap_ok(ret != 0 && contains_ci(err, row->error),
			       "%s: assembler rejects with \"%s\" (got: %s)", row->name, row->error,
			       err);
		} else if (!strncmp(row->name, "negative/unused-", 16)) {
			if (ret == 0)
				ret = gbpf_insns_check(insns, cnt, err, sizeof(err));
			tap_ok(ret != 0 && strstr(err, "instruction 0 (") != NULL,
			       "%s: encoding check rejects (%s)", row->name, err);
		} else if (strstr(row->flags, "no inline program")) {
			tap_ok(ret != 0, "%s: no program (%s)", row->name, err);
		}
		/* error.data and incorrect_return_value_high_bits.data need a run: test_conformance. */
		free(insns);
		gbpf_testcase_free(&tc);
	}
	conf_free_rows(rows, n);
}

static int asm_fails(const char *text, const char *want)
{
	struct gbpf_insn *insns = NULL;
	size_t cnt;
	char err[256];
	int ret = gbpf_asm(text, &insns, &cnt, err, sizeof(err));

	free(insns);
	if (ret != -GBPF_ERRNO__ASM) {
		tap_diag("asm of '%s' returned %d", text, ret);
		return 0;
	}
	if (!strstr(err, want)) {
		tap_diag("asm of '%s': '%s' lacks '%s'", text, err, want);
		return 0;
	}
	return 1;
}

static void asm_cases(void)
{
	struct gbpf_insn *in = NULL;
	size_t cnt = 0;
	char err[256];
	int ret;

	ret = gbpf_asm("start: mov %r0, 0\n"
		       "  jeq %r0, 0, end // comment\n"
		       "lddw %r1, map[2]\n"
		       "lddw %r2, map_value[1]+16\n"
		       "lddw %r3, func start\n"
		       "ja start\n"
		       "end: exit\n",
		       &in, &cnt, err, sizeof(err));
	tap_ok(ret == 0 && cnt == 10, "labels, comments, pseudo wide loads assemble (%s)", err);
	if (ret == 0) {
		tap_ok(in[1].off == 7, "forward label gives off 7 (got %d)", in[1].off);
		tap_ok(in[2].src == GBPF_PSEUDO_MAP_IDX && in[2].imm == 2 && in[3].imm == 0,
		       "map[2] is PSEUDO_MAP_IDX 2");
		tap_ok(in[4].src == GBPF_PSEUDO_MAP_IDX_VALUE && in[4].imm == 1 && in[5].imm == 16,
		       "map_value[1]+16 is PSEUDO_MAP_IDX_VALUE 1, offset 16");
		tap_ok(in[6].src == GBPF_PSEUDO_FUNC && in[6].imm == -7, "func start is pc-relative -7");
		tap_ok(in[8].off == -9, "backward ja gives off -9 (got %d)", in[8].off);
		tap_ok(gbpf_insns_check(in, cnt, err, sizeof(err)) == 0, "checker accepts it (%s)",
		       err);
	}
	free(in);
	tap_ok(asm_fails("mov %r0, 1\nfoo %r0\nexit", "line 2: invalid mnemonic: foo"),
	       "unknown mnemonic names its line");
	tap_ok(asm_fails("mov %r11, 1\nexit", "invalid register: %r11"), "r11 rejected");
	tap_ok(asm_fails("x: mov %r0, 1\nx: exit", "duplicate label: x"), "duplicate label");
	tap_ok(asm_fails("ldxw %r0, [%r1+32768]\nexit", "offset out of 16-bit range"),
	       "offset 32768 rejected");
	tap_ok(asm_fails("mov %r0, -2147483649\nexit", "out of 32-bit range"),
	       "-2147483649 rejected");
	tap_ok(asm_fails("lock fetch nand [%r10-8], %r1\nexit", "invalid atomic operation"),
	       "unknown atomic rejected");
	tap_ok(asm_fails("# nothing\n\n", "empty program"), "empty program rejected");
	tap_ok(asm_fails("jeq %r0, 1\nexit", "invalid number of operands"), "missing jump target");
	ret = gbpf_asm("mov32 %r0, 0xffffffff\nmov %r1, -0x80000000\nexit", &in, &cnt, err,
		       sizeof(err));
	tap_ok(ret == 0 && in[0].imm == -1 && in[1].imm == INT32_MIN,
	       "hex immediates up to 0xffffffff and negated hex accepted");
	free(in);
}

static int check_fails(const struct gbpf_insn *insns, size_t cnt, const char *want)
{
	char err[256];
	int ret = gbpf_insns_check(insns, cnt, err, sizeof(err));

	if (ret != -EINVAL || !strstr(err, want)) {
		tap_diag("check returned %d '%s', wanted '%s'", ret, err, want);
		return 0;
	}
	return 1;
}

static void check_cases(void)
{
	const struct gbpf_insn exit_insn = {.code = GBPF_OP_EXIT};
	struct gbpf_insn p[4];

	memset(p, 0, sizeof(p));
	p[0] = (struct gbpf_insn){.code = GBPF_ALU64 | GBPF_MOV | GBPF_K, .dst = 10, .imm = 1};
	p[1] = exit_insn;
	tap_ok(check_fails(p, 2, "instruction 0 (.invalid b7 0a"), "message names index and bytes");
	tap_ok(check_fails(p, 2, "r10 is read-only"), "mov to r10 rejected");
	p[0] = (struct gbpf_insn){.code = GBPF_LD | GBPF_ABS | GBPF_W};
	tap_ok(check_fails(p, 2, "legacy packet access"), "LD ABS rejected");
	p[0] = (struct gbpf_insn){.code = GBPF_JMP | GBPF_JA, .off = 1};
	p[1] = (struct gbpf_insn){.code = GBPF_OP_LDDW, .imm = 1};
	p[2] = (struct gbpf_insn){.imm = 2};
	p[3] = exit_insn;
	tap_ok(check_fails(p, 4, "instruction 0 (ja +1): target 2 is the second slot"),
	       "jump into wide load second slot rejected");
	p[0].off = 4;
	tap_ok(check_fails(p, 4, "target 5 is outside the program"), "jump past end rejected");
	p[0].off = 0;
	p[2].src = 1;
	tap_ok(check_fails(p, 4, "malformed second slot"), "bad second slot rejected");
	p[2].src = 0;
	tap_ok(gbpf_insns_check(p, 4, NULL, 0) == 0, "well-formed wide load accepted");
	tap_ok(check_fails(p, 2, "missing its second slot"), "truncated wide load rejected");
	p[1].src = GBPF_PSEUDO_MAP_FD;
	p[2].imm = 0;
	tap_ok(check_fails(p, 4, "map fd reference"), "map fd wide load rejected");
	p[1] = (struct gbpf_insn){.code = GBPF_JMP | GBPF_CALL, .src = GBPF_CALL_LOCAL, .imm = 0};
	p[2] = (struct gbpf_insn){.code = GBPF_ALU64 | GBPF_MOV | GBPF_K};
	p[3] = (struct gbpf_insn){.code = GBPF_JMP | GBPF_JEQ | GBPF_K, .off = -3};
	tap_ok(check_fails(p, 4, "instruction 3 (jeq %r0, 0, -3): last instruction can fall off"),
	       "fall off the end rejected");
	p[1].src = GBPF_CALL_KFUNC;
	tap_ok(check_fails(p, 4, "kfunc"), "kfunc call rejected");
	p[0] = (struct gbpf_insn){.code = GBPF_STX | GBPF_ATOMIC | GBPF_H, .imm = GBPF_ATOMIC_ADD};
	tap_ok(check_fails(p, 4, "atomic operations exist only"), "16-bit atomic rejected");
	p[0] = (struct gbpf_insn){.code = GBPF_LDX | GBPF_MEMSX | GBPF_DW};
	tap_ok(check_fails(p, 4, "unknown opcode"), "ldxsdw rejected");
	p[0] = (struct gbpf_insn){.code = GBPF_ALU | GBPF_MOV | GBPF_X, .off = 32};
	tap_ok(check_fails(p, 4, "sign-extension width"), "movsx3232 rejected");
	tap_ok(check_fails(p, 0, "empty program"), "empty program rejected");
}

static void disasm_cases(void)
{
	struct gbpf_insn w[2] = {{.code = GBPF_OP_LDDW, .imm = 0x55667788}, {.imm = 0x11223344}};
	char buf[64];

	tap_ok(gbpf_disasm_insn(w, 2, buf, sizeof(buf)) == 2 &&
		       !strcmp(buf, "lddw %r0, 0x1122334455667788"),
	       "lddw disassembles to 2 slots (%s)", buf);
	tap_ok(gbpf_disasm_insn(w, 1, buf, sizeof(buf)) == -EINVAL, "lddw with 1 slot is invalid");
	tap_ok(gbpf_disasm_insn(w, 2, buf, 8) == -ENOSPC, "small buffer gives -ENOSPC");
	w[0] = (struct gbpf_insn){.code = GBPF_STX | GBPF_ATOMIC | GBPF_W,
				  .dst = 10,
				  .src = 3,
				  .off = -4,
				  .imm = GBPF_ATOMIC_XOR | GBPF_FETCH};
	tap_ok(gbpf_disasm_insn(w, 1, buf, sizeof(buf)) == 1 &&
		       !strcmp(buf, "lock fetch xor32 [%r10-4], %r3"),
	       "atomic fetch disassembles (%s)", buf);
}

static void parser_cases(void)
{
	static const char text[] = "# header\n-- asm\nmov %r0, 1\nexit\n-- mem\n01 02 0x0807060504030201\n"
				   "-- result\n0x2a\n-- error\n  Bad thing \n-- custom thing\nabc\n";
	struct gbpf_testcase tc;
	char err[256];
	int ret;

	ret = gbpf_testcase_parse(text, sizeof(text) - 1, "inline", &tc, err, sizeof(err));
	tap_ok(ret == 0, "inline test file parses (%s)", err);
	if (ret == 0) {
		tap_ok(tc.has_asm && tc.asm_line == 3 && !strcmp(tc.asm_text, "mov %r0, 1\nexit\n"),
		       "asm section kept with its line");
		tap_ok(tc.mem_size == 10 && tc.mem[0] == 1 && tc.mem[2] == 1 && tc.mem[9] == 8,
		       "mem: bytes and a little-endian word");
		tap_ok(tc.result == 0x2a && !strcmp(tc.error, "Bad thing"), "result and error");
		tap_ok(tc.other_cnt == 1 && !strcmp(tc.other[0].name, "custom thing") &&
			       !strcmp(tc.other[0].body, "abc\n"),
		       "unknown section kept by name");
		gbpf_testcase_free(&tc);
	}
	ret = gbpf_testcase_parse("-- raw\n01 02 03\n", 16, "bad", &tc, err, sizeof(err));
	tap_ok(ret == -EINVAL && strstr(err, "bad:1: -- raw"), "partial raw slot rejected (%s)",
	       err);
	ret = gbpf_testcase_parse("-- result\n1\n-- result\n2\n", 24, "dup", &tc, err, sizeof(err));
	tap_ok(ret == -EINVAL && strstr(err, "dup:3"), "repeated section rejected (%s)", err);
	ret = gbpf_testcase_parse("-- mem\nzz\n", 10, "hex", &tc, err, sizeof(err));
	tap_ok(ret == -EINVAL && strstr(err, "invalid hex"), "bad hex rejected (%s)", err);
	ret = gbpf_testcase_parse_file("/nonexistent/x.data", &tc, err, sizeof(err));
	tap_ok(ret == -ENOENT && strstr(err, "/nonexistent/x.data"), "missing file names the path");
}

int main(void)
{
	conformance_programs();
	conformance_negative();
	asm_cases();
	check_cases();
	disasm_cases();
	parser_cases();
	return tap_done();
}
