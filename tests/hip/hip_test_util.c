/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hip_test_util.h"

extern char **environ;

const char *hconf_path(void)
{
	static const char p[] = GBPF_SHARED_ROOT "/conformance/bpf_conformance/assembled_tests.tsv";

	return access(p, R_OK) == 0 ? p : NULL;
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

size_t hconf_load(const char *path, struct hconf_case **out)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0, n = 0, alloc = 0;
	struct hconf_case *v = NULL;
	ssize_t len;

	*out = NULL;
	if (!f)
		return 0;
	while ((len = getline(&line, &cap, f)) > 0) {
		char *tab1 = strchr(line, '\t'), *tab2;
		size_t hex, i;
		struct hconf_case *c;

		if (!tab1 || !strncmp(line, "name\t", 5))
			continue;
		tab2 = strchr(tab1 + 1, '\t');
		hex = tab2 ? (size_t)(tab2 - tab1 - 1) : strlen(tab1 + 1);
		if (!hex || hex % 16)
			continue;
		if (n == alloc) {
			struct hconf_case *nv;

			alloc = alloc ? 2 * alloc : 512;
			nv = realloc(v, alloc * sizeof(*v));
			if (!nv)
				break;
			v = nv;
		}
		c = &v[n];
		memset(c, 0, sizeof(*c));
		snprintf(c->name, sizeof(c->name), "%.*s", (int)(tab1 - line), line);
		c->insn_cnt = hex / 16;
		c->insns = calloc(c->insn_cnt, sizeof(*c->insns));
		if (!c->insns)
			break;
		for (i = 0; i < hex / 2; i++) {
			int hi = hexval(tab1[1 + 2 * i]), lo = hexval(tab1[2 + 2 * i]);

			if (hi < 0 || lo < 0)
				break;
			((uint8_t *)c->insns)[i] = (uint8_t)(hi << 4 | lo);
		}
		if (i != hex / 2) {
			free(c->insns);
			continue;
		}
		if (tab2) {
			char *tab3 = strchr(tab2 + 1, '\t');

			c->has_mem = tab3 && tab3 > tab2 + 1;
			if (tab3 && tab3[1] == '0' && tab3[2] == 'x') {
				c->expected = strtoull(tab3 + 1, NULL, 16);
				c->has_expected = 1;
			}
		}
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
	*out = v;
	return n;
}

void hconf_free(struct hconf_case *c, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(c[i].insns);
	free(c);
}

char *tmp_dir(const char *tag)
{
	char buf[256];

	snprintf(buf, sizeof(buf), "/tmp/gbpf-hip-%s-XXXXXX", tag);
	return mkdtemp(buf) ? strdup(buf) : NULL;
}

static int rm_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(p);
}

void rm_tree(const char *dir)
{
	if (dir && !getenv("GBPF_HIP_KEEP_TMP"))
		nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

int write_file(const char *dir, const char *name, const void *data, size_t len, char *path, size_t psize)
{
	FILE *f;

	if ((size_t)snprintf(path, psize, "%s/%s", dir, name) >= psize)
		return -ENAMETOOLONG;
	f = fopen(path, "wb");
	if (!f)
		return -errno;
	if (len && fwrite(data, 1, len, f) != len) {
		fclose(f);
		return -EIO;
	}
	return fclose(f) ? -errno : 0;
}

char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long sz;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (sz = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
	    (buf = malloc((size_t)sz + 1)) && fread(buf, 1, (size_t)sz, f) == (size_t)sz) {
		buf[sz] = 0;
		if (len)
			*len = (size_t)sz;
	} else {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

int run_cmd(char *const argv[], char **out)
{
	char tmpl[] = "/tmp/gbpf-hip-out-XXXXXX";
	posix_spawn_file_actions_t fa;
	int fd = mkstemp(tmpl), st = 0;
	pid_t pid;

	if (fd < 0)
		return -1;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fd, 1);
	posix_spawn_file_actions_adddup2(&fa, fd, 2);
	if (posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ)) {
		posix_spawn_file_actions_destroy(&fa);
		close(fd);
		unlink(tmpl);
		return -1;
	}
	posix_spawn_file_actions_destroy(&fa);
	close(fd);
	if (waitpid(pid, &st, 0) < 0)
		st = -1;
	if (out)
		*out = read_file(tmpl, NULL);
	unlink(tmpl);
	return st >= 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int check_code_object(const char *dir, const char *name, const void *obj, size_t len, const char *kernel,
		      char *why, size_t why_size)
{
	char opath[512], co[512], *out = NULL;
	int rc;

	snprintf(co, sizeof(co), "%.400s.o", name);
	if (write_file(dir, co, obj, len, opath, sizeof(opath))) {
		snprintf(why, why_size, "cannot write %s", opath);
		return -1;
	}
	snprintf(co, sizeof(co), "%s/%.400s.hsaco", dir, name);
	{
		char *argv[] = {(char *)GBPF_LLD, (char *)"-shared", opath, (char *)"-o", co, NULL};

		rc = run_cmd(argv, &out);
	}
	if (rc) {
		snprintf(why, why_size, "ld.lld failed (%d): %.300s", rc, out ? out : "");
		free(out);
		return -1;
	}
	free(out);
	out = NULL;
	{
		char *argv[] = {(char *)GBPF_READELF, (char *)"--notes", co, NULL};

		rc = run_cmd(argv, &out);
	}
	if (rc || !out || !strstr(out, "amdhsa.kernels") || !strstr(out, "amdhsa.version") ||
	    (kernel && (!strstr(out, ".name:") || !strstr(out, kernel)))) {
		snprintf(why, why_size, "llvm-readelf --notes (%d) shows no kernel metadata%s%s", rc,
			 kernel ? " for " : "", kernel ? kernel : "");
		free(out);
		return -1;
	}
	/* code object v5: amdhsa.version [1, 2] */
	if (!strstr(out, "- 1\n") || !strstr(out, "- 2\n")) {
		snprintf(why, why_size, "code object is not version 5 (amdhsa.version != [1, 2])");
		free(out);
		return -1;
	}
	free(out);
	return 0;
}
