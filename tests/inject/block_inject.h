/* SPDX-License-Identifier: MIT */
/*
 * Helpers of the tests that inject a PTX probe fragment at the gpu/block
 * sites of hand-written PTX (test_blocks.c, test_sink.c).
 */
#ifndef GBPF_TESTS_INJECT_BLOCK_INJECT_H
#define GBPF_TESTS_INJECT_BLOCK_INJECT_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gbpf/cuda_inject.h>

#include "plugins/cuda/ptx/ptx.h"
#include "tests/inject/inject_util.h"
#include "tests/tap.h"

struct bi_report {
	unsigned kernels, blocks;
	char note[384]; /* an instrumented kernel's note (the last one), "" if none */
};

static inline void bi_on_report(const struct gbpf_ptx_kernel_report *r, void *arg)
{
	struct bi_report *c = arg;

	c->kernels += r->instrumented;
	c->blocks += r->n_block;
	if (r->instrumented && r->reason[0])
		snprintf(c->note, sizeof(c->note), "%s", r->reason);
}

/*
 * @text with probe fragment @frag (PTX of __gbpf_probe_0) at every basic
 * block, printed with one space for every run of blanks (the checks spell
 * statements plainly); NULL (and a diagnostic) when injection fails.
 */
static inline char *bi_instrument(const char *text, size_t len, const char *frag, struct bi_report *rep)
{
	char log[512] = "";
	struct gbpf_ptx_module *m = gbpf_ptx_parse(text, len, "blocks.ptx", log, sizeof(log));
	struct gbpf_ptx_module *f = gbpf_ptx_parse(frag, strlen(frag), "frag", log, sizeof(log));
	struct gbpf_ptx_inject_req req = {
		.plan = {.sites = GBPF_PTX_SITE_BLOCK, .block_probe = 0,
			 .ctx_unused = GBPF_CUDA_CTX_UNUSED_PARAMS | GBPF_CUDA_CTX_UNUSED_LAUNCH_ID},
		.report = bi_on_report,
		.report_arg = rep,
	};
	char *out = NULL;

	memset(rep, 0, sizeof(*rep));
	if (m && f && gbpf_ptx_inject(m, f, &req, log, sizeof(log)) >= 0) {
		out = gbpf_ptx_print(m, NULL);
		if (out) {
			char *w = out;

			for (const char *r = out; *r; r++) {
				if ((*r == ' ' || *r == '\t') && w > out && (w[-1] == ' ' || w[-1] == '\t'))
					continue;
				*w++ = *r == '\t' ? ' ' : *r;
			}
			*w = 0;
		}
	} else {
		tap_diag("inject: %s", log);
	}
	gbpf_ptx_module_free(m);
	gbpf_ptx_module_free(f);
	return out;
}

/* @ptx assembles for sm_75 and sm_90 (skipped without @ptxas). */
static inline void bi_check_ptxas(const char *ptxas, const char *what, const char *ptx)
{
	if (!ptxas) {
		tap_skip("%s assembles for sm_75: ptxas not found", what);
		tap_skip("%s assembles for sm_90: ptxas not found", what);
		return;
	}
	tap_ok(iu_ptxas(ptxas, "sm_75", ptx, strlen(ptx), NULL) == 0, "%s assembles for sm_75", what);
	tap_ok(iu_ptxas(ptxas, "sm_90", ptx, strlen(ptx), NULL) == 0, "%s assembles for sm_90", what);
}

/* A test's main: arguments PTXAS|- BLOCKS.ptx; *@ptxas set (NULL for "-"), @run on the file's text. */
static inline int bi_main(int argc, char **argv, const char **ptxas, void (*run)(const char *text, size_t len))
{
	size_t len;
	char *text;

	if (argc < 3) {
		fprintf(stderr, "usage: %s PTXAS|- BLOCKS.ptx\n", argv[0]);
		return 2;
	}
	*ptxas = strcmp(argv[1], "-") ? argv[1] : NULL;
	text = iu_read(argv[2], &len);
	if (!text) {
		tap_skip("%s is missing", argv[2]);
		return tap_done();
	}
	run(text, len);
	free(text);
	return tap_done();
}

#endif
