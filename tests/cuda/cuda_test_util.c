/* SPDX-License-Identifier: MIT */
#include "cuda_test_util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef GBPF_SHARED_ROOT
#define GBPF_SHARED_ROOT "../shared"
#endif

const char *conf_tsv_path(void)
{
	static const char *cands[] = {
		"../shared/conformance/bpf_conformance/assembled_tests.tsv",
		GBPF_SHARED_ROOT "/conformance/bpf_conformance/assembled_tests.tsv",
	};
	const char *env = getenv("GBPF_CONFORMANCE_TSV");
	size_t i;

	if (env && access(env, R_OK) == 0)
		return env;
	for (i = 0; i < sizeof(cands) / sizeof(cands[0]); i++)
		if (access(cands[i], R_OK) == 0)
			return cands[i];
	return NULL;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static uint8_t *unhex(const char *s, size_t n, size_t *out_len)
{
	uint8_t *p;
	size_t i;

	if (n % 2)
		return NULL;
	p = calloc(n / 2 + 1, 1);
	if (!p)
		return NULL;
	for (i = 0; i < n / 2; i++) {
		int hi = hexval(s[2 * i]), lo = hexval(s[2 * i + 1]);

		if (hi < 0 || lo < 0) {
			free(p);
			return NULL;
		}
		p[i] = (uint8_t)(hi << 4 | lo);
	}
	*out_len = n / 2;
	return p;
}

size_t conf_load(const char *path, struct conf_case **out)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0, n = 0, alloc = 0;
	struct conf_case *cases = NULL;
	ssize_t len;
	int first = 1;

	*out = NULL;
	if (!f)
		return 0;
	while ((len = getline(&line, &cap, f)) > 0) {
		char *fields[6] = {0};
		char *p = line;
		struct conf_case *c;
		size_t plen;
		int k;

		if (first) {
			first = 0;
			continue;
		}
		while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = 0;
		for (k = 0; k < 6; k++) {
			fields[k] = p;
			p = p ? strchr(p, '\t') : NULL;
			if (p)
				*p++ = 0;
		}
		if (!fields[1])
			continue;
		if (n == alloc) {
			struct conf_case *nc;

			alloc = alloc ? alloc * 2 : 512;
			nc = realloc(cases, alloc * sizeof(*cases));
			if (!nc)
				break;
			cases = nc;
		}
		c = &cases[n];
		memset(c, 0, sizeof(*c));
		snprintf(c->name, sizeof(c->name), "%s", fields[0]);
		c->insns = (struct gbpf_insn *)unhex(fields[1], strlen(fields[1]), &plen);
		if (!c->insns || plen % 8) {
			free(c->insns);
			continue;
		}
		c->insn_cnt = plen / 8;
		if (fields[2] && fields[2][0])
			c->mem = unhex(fields[2], strlen(fields[2]), &c->mem_size);
		if (fields[3] && fields[3][0]) {
			c->expected = strtoull(fields[3], NULL, 16);
			c->has_expected = 1;
		}
		if (fields[4])
			snprintf(c->error, sizeof(c->error), "%s", fields[4]);
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

void conf_free(struct conf_case *cases, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(cases[i].insns);
		free(cases[i].mem);
	}
	free(cases);
}

const char *ptxas_path(void)
{
	const char *env = getenv("GBPF_PTXAS");

	if (env && access(env, X_OK) == 0)
		return env;
#ifdef GBPF_PTXAS
	if (access(GBPF_PTXAS, X_OK) == 0)
		return GBPF_PTXAS;
#endif
	if (access("/usr/local/cuda/bin/ptxas", X_OK) == 0)
		return "/usr/local/cuda/bin/ptxas";
	return NULL;
}

static int run_ptxas(const char *file, const char *arch, char *log, size_t log_size)
{
	char cmd[1024];
	FILE *p;
	size_t used = 0;
	int st;

	snprintf(cmd, sizeof(cmd), "'%s' -arch=%s -o /dev/null '%s' 2>&1", ptxas_path(), arch, file);
	p = popen(cmd, "r");
	if (!p)
		return -errno;
	if (log && log_size) {
		log[0] = 0;
		while (used + 1 < log_size && fgets(log + used, (int)(log_size - used), p))
			used = strlen(log);
	}
	while (fgetc(p) != EOF)
		;
	st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int ptxas_check(const char *ptx, const char *arch, char *log, size_t log_size)
{
	char path[] = "/tmp/gbpf-ptx-XXXXXX.ptx";
	int fd = mkstemps(path, 4), rc;
	size_t len = strlen(ptx);

	if (fd < 0)
		return -errno;
	if (write(fd, ptx, len) != (ssize_t)len) {
		close(fd);
		unlink(path);
		return -EIO;
	}
	close(fd);
	rc = run_ptxas(path, arch, log, log_size);
	unlink(path);
	return rc;
}

const char *ptxas_arch_for_sm70(void)
{
	static const char *arch;
	static const char probe[] = ".version 7.8\n.target sm_70\n.address_size 64\n";

	if (!arch)
		arch = ptxas_check(probe, "sm_70", NULL, 0) == 0 ? "sm_70" : "sm_75";
	return arch;
}

const char loop_app_ptx[] =
	".version 7.8\n.target sm_90\n.address_size 64\n"
	".visible .entry app(.param .u64 a, .param .u64 b, .param .u32 n)\n{\n"
	".reg .pred %p<3>;\n.reg .b32 %r<6>;\n.reg .b64 %rd<8>;\n.reg .f32 %f<4>;\n"
	"ld.param.u64 %rd1, [a];\nld.param.u64 %rd2, [b];\nld.param.u32 %r1, [n];\n"
	"mov.u32 %r2, %tid.x;\nmov.u32 %r3, 0;\ncvta.to.global.u64 %rd3, %rd1;\ncvta.to.global.u64 %rd4, %rd2;\n"
	"$L_loop:\nsetp.ge.u32 %p1, %r3, %r1;\n@%p1 bra $L_done;\nmul.wide.u32 %rd5, %r2, 4;\n"
	"add.s64 %rd6, %rd3, %rd5;\nadd.s64 %rd7, %rd4, %rd5;\nld.global.f32 %f1, [%rd6];\n"
	"ld.global.f32 %f2, [%rd7];\nadd.f32 %f3, %f1, %f2;\nst.global.f32 [%rd6], %f3;\nbar.sync 0;\n"
	"add.u32 %r3, %r3, 1;\nbra.uni $L_loop;\n$L_done:\nst.global.u32 [%rd4], %r3;\nret;\n}\n";
