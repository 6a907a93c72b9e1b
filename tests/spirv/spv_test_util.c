/* SPDX-License-Identifier: MIT */
/* tests/spirv/spv_test_util.c - see spv_test_util.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spv_test_util.h"

#ifndef GBPF_SHARED_ROOT
#define GBPF_SHARED_ROOT "../shared"
#endif

const char *spv_conf_path(void)
{
	static const char *const cands[] = {
		"../shared/conformance/bpf_conformance/assembled_tests.tsv",
		GBPF_SHARED_ROOT "/conformance/bpf_conformance/assembled_tests.tsv",
	};
	size_t i;

	for (i = 0; i < sizeof(cands) / sizeof(cands[0]); i++)
		if (access(cands[i], R_OK) == 0)
			return cands[i];
	return NULL;
}

static uint8_t *unhex(const char *s, size_t *len)
{
	size_t n = strlen(s), i;
	uint8_t *p;

	if (n % 2)
		return NULL;
	p = calloc(n / 2 + 8, 1);
	if (!p)
		return NULL;
	for (i = 0; i < n / 2; i++) {
		unsigned v;

		if (sscanf(s + 2 * i, "%2x", &v) != 1) {
			free(p);
			return NULL;
		}
		p[i] = (uint8_t)v;
	}
	*len = n / 2;
	return p;
}

size_t spv_conf_load(const char *path, struct spv_case **out)
{
	FILE *f = fopen(path, "r");
	char *line = NULL, *fld[6];
	size_t cap = 0, n = 0, alloc = 0, plen;
	struct spv_case *cases = NULL, *c;
	int first = 1, k;

	*out = NULL;
	if (!f)
		return 0;
	while (getline(&line, &cap, f) > 0) {
		char *p = line;

		line[strcspn(line, "\r\n")] = 0;
		if (first) {
			first = 0;
			continue;
		}
		for (k = 0; k < 6; k++) {
			fld[k] = p;
			p = p ? strchr(p, '\t') : NULL;
			if (p)
				*p++ = 0;
		}
		if (!fld[3] || !fld[3][0])
			continue;
		if (n == alloc) {
			void *nc;

			alloc = alloc ? alloc * 2 : 512;
			nc = realloc(cases, alloc * sizeof(*cases));
			if (!nc)
				break;
			cases = nc;
		}
		c = &cases[n];
		memset(c, 0, sizeof(*c));
		snprintf(c->name, sizeof(c->name), "%s", fld[0]);
		c->insns = (struct gbpf_insn *)unhex(fld[1], &plen);
		if (!c->insns || plen % 8 || !plen) {
			free(c->insns);
			continue;
		}
		c->insn_cnt = plen / 8;
		if (fld[2] && fld[2][0])
			c->mem = unhex(fld[2], &c->mem_size);
		c->expected = strtoull(fld[3], NULL, 16);
		c->desc.sz = sizeof(c->desc);
		c->desc.name = c->name;
		c->desc.section = "conformance";
		c->desc.insns = c->insns;
		c->desc.insn_cnt = c->insn_cnt;
		c->desc.source_file = c->name;
		n++;
	}
	free(line);
	fclose(f);
	*out = cases;
	return n;
}

void spv_conf_free(struct spv_case *cases, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(cases[i].insns);
		free(cases[i].mem);
	}
	free(cases);
}

int spv_read_file(const char *path, void **buf, size_t *size)
{
	FILE *f = fopen(path, "rb");
	long len;
	void *p;

	if (!f)
		return -errno;
	if (fseek(f, 0, SEEK_END) || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
		fclose(f);
		return -EIO;
	}
	p = malloc((size_t)len + 1);
	if (!p || fread(p, 1, (size_t)len, f) != (size_t)len) {
		free(p);
		fclose(f);
		return -EIO;
	}
	fclose(f);
	*buf = p;
	*size = (size_t)len;
	return 0;
}

/*
 * The OpenCL runtime (PoCL and the LLVM it compiles with) keeps
 * allocations until exit; only leaks with a frame in our own code count.
 */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "leak:libLLVM\nleak:libpocl\nleak:libOpenCL\nleak:libstdc++\nleak:<unknown module>\n";
}
