/* SPDX-License-Identifier: MIT */
/* Helpers of the injection tests: files, ptxas runs, token comparison. */
#ifndef GBPF_TESTS_INJECT_UTIL_H
#define GBPF_TESTS_INJECT_UTIL_H

#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "plugins/cuda/ptx/ptx.h"

extern char **environ;

/* Read a whole file (NUL-terminated); NULL if absent. Capped at 256 MiB. */
static inline char *iu_read(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || n > (256l << 20) ||
	    fseek(f, 0, SEEK_SET))
		goto out;
	buf = malloc((size_t)n + 1);
	if (!buf)
		goto out;
	if (fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
		goto out;
	}
	buf[n] = 0;
	*len = (size_t)n;
out:
	fclose(f);
	return buf;
}

static inline bool iu_write(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");
	bool ok;

	if (!f)
		return false;
	ok = fwrite(data, 1, len, f) == len;
	return fclose(f) == 0 && ok;
}

/* Path of a fresh temporary file name with @suffix (caller frees). */
static inline char *iu_tmpname(const char *tag, const char *suffix)
{
	static unsigned seq;
	const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char *p = NULL;

	if (asprintf(&p, "%s/gbpf-inject-%d-%u-%s%s", dir, (int)getpid(), seq++, tag, suffix) < 0)
		return NULL;
	return p;
}

/* Assemble @ptx with `ptxas -arch=@arch`; the cubin goes to @cubin_out
 * (a path) when non-NULL. Returns ptxas's exit status (0: accepted). */
static inline int iu_ptxas(const char *ptxas, const char *arch, const char *ptx, size_t len,
			   const char *cubin_out)
{
	char *in = iu_tmpname("in", ".ptx"), *out = cubin_out ? NULL : iu_tmpname("out", ".cubin");
	char archarg[64];
	pid_t pid;
	int st = -1;

	snprintf(archarg, sizeof(archarg), "-arch=%s", arch);
	if (in && iu_write(in, ptx, len)) {
		char *argv[] = {(char *)ptxas, archarg, in, (char *)"-o",
				(char *)(cubin_out ? cubin_out : out), NULL};

		if (posix_spawn(&pid, ptxas, NULL, NULL, argv, environ) == 0 &&
		    waitpid(pid, &st, 0) == pid)
			st = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
		else
			st = -1;
	}
	if (in)
		unlink(in);
	if (out)
		unlink(out);
	free(in);
	free(out);
	return st;
}

/* Compare two PTX texts token by token, comments ignored. Returns -1 if
 * equal, else the index of the first difference. */
static inline long iu_token_diff(const char *a, size_t alen, const char *b, size_t blen)
{
	struct gbpf_ptx_tok *ta = NULL, *tb = NULL;
	int na = gbpf_ptx_tokenize(a, alen, false, &ta, NULL, 0);
	int nb = gbpf_ptx_tokenize(b, blen, false, &tb, NULL, 0);
	long diff = -1;

	if (na < 0 || nb < 0) {
		diff = 0;
		goto out;
	}
	for (int i = 0; i < na || i < nb; i++) {
		if (i >= na || i >= nb || ta[i].len != tb[i].len ||
		    memcmp(ta[i].s, tb[i].s, ta[i].len)) {
			diff = i;
			break;
		}
	}
out:
	free(ta);
	free(tb);
	return diff;
}

/* Number of occurrences of @needle in @hay. */
static inline unsigned iu_count(const char *hay, const char *needle)
{
	unsigned n = 0;
	size_t l = strlen(needle);

	for (const char *p = strstr(hay, needle); p; p = strstr(p + l, needle))
		n++;
	return n;
}

/* Arch of a PTX text from its .target line ("sm_75"), into buf. */
static inline const char *iu_ptx_arch(const char *ptx, char *buf, size_t size)
{
	const char *t = strstr(ptx, ".target");
	size_t i = 0;

	snprintf(buf, size, "sm_90");
	if (!t)
		return buf;
	t += 7;
	while (*t == ' ' || *t == '\t')
		t++;
	while (t[i] && t[i] != ',' && t[i] != '\n' && t[i] != ' ' && i + 1 < size) {
		buf[i] = t[i];
		i++;
	}
	buf[i] = 0;
	return buf;
}

/* A probe fragment with __gbpf_probe_0..3 that read the context. */
static const char iu_fragment[] =
	".version 8.0\n"
	".target sm_90\n"
	".address_size 64\n"
	".global .align 8 .u64 __gbpf_hits[4];\n"
	".visible .func (.param .b64 ret) __gbpf_probe_0(.param .b64 ctx)\n"
	"{\n\t.reg .b64 %rd<4>;\n"
	"\tld.param.u64 %rd1, [ctx];\n\tld.u64 %rd2, [%rd1];\n"
	"\tatom.global.add.u64 %rd3, [__gbpf_hits], 1;\n"
	"\tst.param.b64 [ret], 0;\n\tret;\n}\n"
	".visible .func (.param .b64 ret) __gbpf_probe_1(.param .b64 ctx)\n"
	"{\n\t.reg .b64 %rd<4>;\n"
	"\tld.param.u64 %rd1, [ctx];\n\tld.u64 %rd2, [%rd1+16];\n"
	"\tatom.global.add.u64 %rd3, [__gbpf_hits+8], %rd2;\n"
	"\tst.param.b64 [ret], 0;\n\tret;\n}\n"
	".visible .func (.param .b64 ret) __gbpf_probe_2(.param .b64 ctx)\n"
	"{\n\t.reg .b64 %rd<5>;\n\t.reg .b32 %r<2>;\n"
	"\tld.param.u64 %rd1, [ctx];\n\tld.u64 %rd2, [%rd1+24];\n"
	"\tld.u32 %r1, [%rd1+40];\n\tcvt.u64.u32 %rd4, %r1;\n"
	"\tatom.global.add.u64 %rd3, [__gbpf_hits+16], %rd4;\n"
	"\tst.param.b64 [ret], 0;\n\tret;\n}\n"
	".visible .func (.param .b64 ret) __gbpf_probe_3(.param .b64 ctx)\n"
	"{\n\t.reg .b64 %rd<4>;\n"
	"\tld.param.u64 %rd1, [ctx];\n\tld.u64 %rd2, [%rd1+8];\n"
	"\tatom.global.add.u64 %rd3, [__gbpf_hits+24], 1;\n"
	"\tst.param.b64 [ret], 0;\n\tret;\n}\n";

#endif
