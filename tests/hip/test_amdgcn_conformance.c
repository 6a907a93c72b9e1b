/* SPDX-License-Identifier: MIT */
/*
 * Every conformance program becomes a valid AMDGCN code object: the run
 * kernel of each program, emitted as an object for gfx942 (code object v5),
 * linked with ld.lld -shared and read back by llvm-readelf --notes with its
 * kernel metadata; all programs together as probe functions of one module
 * for gfx90a (the injection form) linked the same way, with every probe
 * function present. Assembly output is checked for the run kernel too.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hip_test_util.h"
#include "plugins/hip/amdgcn_codegen.h"
#include "tests/tap.h"

static int emit(const struct gbpf_prog_desc *const *p, size_t n, const char *arch, uint32_t flags,
		uint32_t kind, char **out, size_t *len, char *err, size_t esz)
{
	struct gbpf_amdgcn_opts o = {.sz = sizeof(o), .arch = arch, .flags = flags, .output = kind, .opt_level = 2};

	return gbpf_amdgcn_emit(p, n, &o, out, len, err, esz);
}

int main(void)
{
	const char *tsv = hconf_path();
	struct hconf_case *cases;
	size_t n, i, bad = 0, len;
	char *dir, err[512], why[512], first_bad[700] = "";
	const struct gbpf_prog_desc **all;
	char *obj = NULL;
	int rc;

	if (!tsv) {
		tap_skip("conformance suite absent (../shared/conformance): nothing to translate");
		return tap_done();
	}
	n = hconf_load(tsv, &cases);
	tap_ok(n >= 313, "read %zu conformance programs", n);
	dir = tmp_dir("conf");
	if (!dir)
		return tap_ok(0, "temporary directory"), tap_done();

	for (i = 0; i < n; i++) {
		const struct gbpf_prog_desc *p = &cases[i].desc;
		char base[160];

		obj = NULL;
		err[0] = 0;
		rc = emit(&p, 1, "gfx942", GBPF_AMDGCN_KERNEL, GBPF_AMDGCN_OUT_OBJ, &obj, &len, err, sizeof(err));
		snprintf(base, sizeof(base), "k%zu", i);
		if (!rc)
			rc = check_code_object(dir, base, obj, len, "__gbpf_run", why, sizeof(why));
		else
			snprintf(why, sizeof(why), "emit: %s", err);
		if (rc) {
			if (!bad++)
				snprintf(first_bad, sizeof(first_bad), "%s: %s", cases[i].name, why);
			tap_diag("%s: %s", cases[i].name, why);
		}
		free(obj);
	}
	tap_ok(bad == 0, "%zu/%zu conformance run kernels are gfx942 v5 code objects with kernel metadata%s%s",
	       n - bad, n, bad ? "; first: " : "", first_bad);

	/* Semantics without a GPU: programs that read no input memory fold to a
	 * constant under LLVM's O2, so the r0 the run kernel stores is visible
	 * in the IR and must equal the suite's expected value. */
	{
		size_t folded = 0, wrong = 0, tried = 0;
		char first_wrong[300] = "";

		for (i = 0; i < n; i++) {
			const struct gbpf_prog_desc *p = &cases[i].desc;
			char *ir = NULL, *st;

			if (cases[i].has_mem || !cases[i].has_expected)
				continue;
			tried++;
			if (emit(&p, 1, "gfx942", GBPF_AMDGCN_KERNEL, GBPF_AMDGCN_OUT_IR, &ir, &len, err, sizeof(err))) {
				wrong++;
				continue;
			}
			st = strstr(ir, "\nstore_r0:");
			st = st ? strstr(st, "store i64 ") : NULL;
			if (st && (st[10] == '-' || (st[10] >= '0' && st[10] <= '9'))) {
				uint64_t v = (uint64_t)strtoll(st + 10, NULL, 10);

				if (st[10] != '-')
					v = strtoull(st + 10, NULL, 10);
				folded++;
				if (v != cases[i].expected) {
					if (!wrong)
						snprintf(first_wrong, sizeof(first_wrong), "%s: r0 0x%llx, expected 0x%llx",
							 cases[i].name, (unsigned long long)v,
							 (unsigned long long)cases[i].expected);
					wrong++;
				}
			}
			free(ir);
		}
		tap_ok(wrong == 0, "constant-folded r0 equals the expected result: %zu of %zu memory-free programs folded, %zu wrong%s%s",
		       folded, tried, wrong, wrong ? "; first: " : "", first_wrong);
		tap_ok(folded * 10 >= tried * 8, "most memory-free programs fold to a constant (%zu/%zu)", folded, tried);
	}

	/* all programs as probe functions of one gfx90a module */
	all = calloc(n, sizeof(*all));
	for (i = 0; all && i < n; i++)
		all[i] = &cases[i].desc;
	obj = NULL;
	rc = all ? emit(all, n, "gfx90a", 0, GBPF_AMDGCN_OUT_OBJ, &obj, &len, err, sizeof(err)) : -1;
	tap_ok(rc == 0, "all %zu programs emitted as probe functions for gfx90a%s%s", n, rc ? ": " : "",
	       rc ? err : "");
	if (!rc) {
		char path[512], co[512], *out = NULL;
		size_t missing = 0;

		write_file(dir, "probes.o", obj, len, path, sizeof(path));
		snprintf(co, sizeof(co), "%s/probes.hsaco", dir);
		{
			char *argv[] = {(char *)GBPF_LLD, (char *)"-shared", path, (char *)"-o", co, NULL};

			rc = run_cmd(argv, &out);
		}
		tap_ok(rc == 0, "ld.lld -shared links the probe module (%d)%s%.200s", rc, rc ? ": " : "",
		       rc && out ? out : "");
		free(out);
		out = NULL;
		{
			char *argv[] = {(char *)GBPF_READELF, (char *)"--dyn-syms", (char *)"--notes", co, NULL};

			rc = run_cmd(argv, &out);
		}
		for (i = 0; out && i < n; i++) {
			char sym[64];

			snprintf(sym, sizeof(sym), " %s%zu\n", GBPF_AMDGCN_PROBE_PREFIX, i);
			if (!strstr(out, sym))
				missing++;
		}
		tap_ok(rc == 0 && out && missing == 0, "every probe function exported (%zu missing)", missing);
		tap_ok(out && strstr(out, "__gbpf_maps") && strstr(out, GBPF_AMDGCN_LAUNCH_GLOBAL) && strstr(out, "gfx90a"),
		       "globals __gbpf_maps/" GBPF_AMDGCN_LAUNCH_GLOBAL " exported; target gfx90a in the notes");
		free(out);
	}
	free(obj);
	free(all);

	/* assembly form */
	{
		const struct gbpf_prog_desc *p = &cases[0].desc;
		char *text = NULL;

		rc = emit(&p, 1, "gfx942", GBPF_AMDGCN_KERNEL, GBPF_AMDGCN_OUT_ASM, &text, &len, err, sizeof(err));
		tap_ok(rc == 0 && text && strstr(text, ".amdhsa_kernel __gbpf_run") &&
			       strstr(text, ".amdgcn_target \"amdgcn-amd-amdhsa--gfx942") && strstr(text, "s_endpgm"),
		       "assembly of %s has the kernel descriptor, target and s_endpgm", cases[0].name);
		free(text);
	}
	/* errors name file, section and instruction */
	{
		struct gbpf_insn bad_insns[2] = {{.code = 0xff}, {.code = GBPF_OP_EXIT}};
		struct gbpf_prog_desc d = {.sz = sizeof(d), .name = "badprog", .section = "gpu/entry/k",
					   .insns = bad_insns, .insn_cnt = 2, .source_file = "bad.o"};
		const struct gbpf_prog_desc *p = &d;
		char *text = NULL;

		rc = emit(&p, 1, "gfx942", 0, GBPF_AMDGCN_OUT_ASM, &text, &len, err, sizeof(err));
		tap_ok(rc < 0 && strstr(err, "bad.o") && strstr(err, "gpu/entry/k") && strstr(err, "insn 0"),
		       "bad opcode rejected with file, section and instruction: %s", err);
		free(text);
		rc = emit(&p, 1, "gfx1100", 0, GBPF_AMDGCN_OUT_ASM, &text, &len, err, sizeof(err));
		tap_ok(rc == -95 && strstr(err, "gfx1100"), "unsupported architecture rejected: %s", err);
	}
	rm_tree(dir);
	free(dir);
	hconf_free(cases, n);
	return tap_done();
}
