/* SPDX-License-Identifier: MIT */
/*
 * Every conformance program translates to PTX that ptxas accepts, as a
 * probe fragment (all programs in one fragment, as one object's set) and
 * as a run kernel, for sm_90 and sm_70 (assembled with the lowest -arch
 * the installed ptxas knows when it no longer accepts sm_70).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_test_util.h"
#include "plugins/cuda/ptx_codegen.h"
#include "tests/tap.h"

static int check_fragment(struct conf_case *cases, size_t n, const char *target, const char *arch)
{
	const struct gbpf_prog_desc **progs = calloc(n, sizeof(*progs));
	char err[512], log[2048], hdr[128];
	char *ptx = NULL, *mod;
	size_t len = 0, i;
	int rc;

	if (!progs)
		return tap_ok(0, "fragment %s: out of memory", target);
	for (i = 0; i < n; i++)
		progs[i] = &cases[i].desc;
	rc = gbpf_ptx_emit(progs, n, NULL, &ptx, &len, err, sizeof(err));
	free(progs);
	if (rc)
		return tap_ok(0, "fragment of %zu programs emitted (%d: %s)", n, rc, err);
	tap_ok(strstr(ptx, ".version") == NULL && strstr(ptx, ".target") == NULL,
	       "fragment has no module header");
	gbpf_ptx_header(hdr, sizeof(hdr), target, 0);
	mod = malloc(strlen(hdr) + len + 1);
	if (!mod) {
		free(ptx);
		return tap_ok(0, "out of memory");
	}
	strcpy(mod, hdr);
	strcat(mod, ptx);
	rc = ptxas_check(mod, arch, log, sizeof(log));
	tap_ok(rc == 0, "fragment of %zu programs, .target %s, ptxas -arch=%s%s%s", n, target, arch,
	       rc ? ": " : "", rc ? log : "");
	free(mod);
	free(ptx);
	return rc == 0;
}

int main(void)
{
	const char *tsv = conf_tsv_path(), *sm70;
	struct conf_case *cases;
	size_t n, i, bad90 = 0, bad70 = 0;
	char first_bad[512] = "";

	if (!tsv) {
		tap_skip("conformance suite absent (../shared/conformance): nothing to translate");
		return tap_done();
	}
	n = conf_load(tsv, &cases);
	tap_ok(n >= 313, "read %zu conformance programs from %s", n, tsv);
	if (!ptxas_path()) {
		tap_skip("ptxas not found (set GBPF_PTXAS or install the CUDA toolkit)");
		conf_free(cases, n);
		return tap_done();
	}
	sm70 = ptxas_arch_for_sm70();
	if (strcmp(sm70, "sm_70"))
		tap_diag("this ptxas does not accept -arch=sm_70; sm_70 PTX is assembled with -arch=%s",
			 sm70);
	check_fragment(cases, n, "sm_90", "sm_90");
	check_fragment(cases, n, "sm_70", sm70);

	for (i = 0; i < n; i++) {
		const struct gbpf_prog_desc *p = &cases[i].desc;
		struct gbpf_ptx_opts o = {.sz = sizeof(o), .flags = GBPF_PTX_KERNEL};
		char err[512], log[1024];
		char *ptx = NULL;
		int rc, ok90 = 0, ok70 = 0;

		o.arch = "sm_90";
		rc = gbpf_ptx_emit(&p, 1, &o, &ptx, NULL, err, sizeof(err));
		if (!rc) {
			ok90 = ptxas_check(ptx, "sm_90", log, sizeof(log)) == 0;
			free(ptx);
			ptx = NULL;
		}
		o.arch = "sm_70";
		if (!rc && !gbpf_ptx_emit(&p, 1, &o, &ptx, NULL, err, sizeof(err))) {
			ok70 = ptxas_check(ptx, sm70, ok90 ? log : err, sizeof(log)) == 0;
			free(ptx);
		}
		bad90 += !ok90;
		bad70 += !ok70;
		if ((!ok90 || !ok70) && !first_bad[0])
			snprintf(first_bad, sizeof(first_bad), "%.120s: %.250s", cases[i].name, rc ? err : log);
	}
	tap_ok(bad90 == 0, "run kernels of %zu programs pass ptxas -arch=sm_90 (%zu fail)%s%s", n, bad90,
	       first_bad[0] ? "; first: " : "", first_bad);
	tap_ok(bad70 == 0, "run kernels of %zu programs (.target sm_70) pass ptxas -arch=%s (%zu fail)",
	       n, sm70, bad70);
	conf_free(cases, n);
	return tap_done();
}
