/* SPDX-License-Identifier: MIT */
/*
 * tests/verifier/test_corpus.c - runs the verifier corpus written for gbpf:
 * tests/verifier/corpus/NAME.s files, each holding cases of the form
 *
 *   === case name
 *   kind: gpu/entry            attach kind (default: none)
 *   map: NAME TYPE KEY VALUE ENTRIES [ro]   one per map, in index order
 *   rostr: TEXT                a .rodata map whose value is TEXT and a NUL
 *   mem: N                     buffer size for kind none
 *   raw: 8 hex bytes           one slot given as bytes (instead of asm)
 *   expect: accept
 *   expect: reject [@INSN] text that the reason must contain
 *   ...assembler text...
 *
 * Every case checks the verdict, and for rejections the instruction index
 * and the message.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gbpf/asm.h>

#include "tap.h"
#include "vtest_util.h"

#define CORPUS_DIR "tests/verifier/corpus"
#define MAX_MAPS 8

struct vcase {
	char name[128];
	uint32_t kind;
	struct gbpf_map_desc maps[MAX_MAPS];
	char map_names[MAX_MAPS][32];
	char rostr[MAX_MAPS][128];
	size_t map_cnt;
	uint64_t mem;
	int expect_accept;
	long expect_insn; /* -1: any */
	char expect_text[256];
	char *asm_text;
	size_t asm_len, asm_cap;
	struct gbpf_insn raw[64];
	size_t raw_cnt;
};

static const struct {
	const char *name;
	uint32_t kind;
} kinds[] = {
	{"none", GBPF_ATTACH_NONE},
	{"gpu/entry", GBPF_ATTACH_GPU_ENTRY},
	{"gpu/exit", GBPF_ATTACH_GPU_EXIT},
	{"gpu/mem", GBPF_ATTACH_GPU_MEM},
	{"gpu/barrier", GBPF_ATTACH_GPU_BARRIER},
	{"host/launch", GBPF_ATTACH_HOST_LAUNCH},
	{"host/memcpy", GBPF_ATTACH_HOST_MEMCPY},
	{"host/malloc", GBPF_ATTACH_HOST_MALLOC},
	{"host/sync", GBPF_ATTACH_HOST_SYNC},
	{"uprobe", GBPF_ATTACH_UPROBE},
};

static const struct {
	const char *name;
	uint32_t type;
} map_types[] = {
	{"hash", GBPF_MAP_TYPE_HASH},
	{"array", GBPF_MAP_TYPE_ARRAY},
	{"percpu_array", GBPF_MAP_TYPE_PERCPU_ARRAY},
	{"perf", GBPF_MAP_TYPE_PERF_EVENT_ARRAY},
	{"ringbuf", GBPF_MAP_TYPE_RINGBUF},
	{"gpu_array", GBPF_MAP_TYPE_GPU_ARRAY},
	{"gpu_ringbuf", GBPF_MAP_TYPE_GPU_RINGBUF},
	{"pergputhread", GBPF_MAP_TYPE_PERGPUTHREAD_ARRAY},
};

static void append_asm(struct vcase *c, const char *line)
{
	size_t n = strlen(line);

	if (c->asm_len + n + 2 > c->asm_cap) {
		size_t cap = (c->asm_cap + n + 2) * 2;
		char *p = realloc(c->asm_text, cap);

		if (!p)
			abort();
		c->asm_text = p;
		c->asm_cap = cap;
	}
	memcpy(c->asm_text + c->asm_len, line, n);
	c->asm_len += n;
	c->asm_text[c->asm_len++] = '\n';
	c->asm_text[c->asm_len] = '\0';
}

static int parse_directive(struct vcase *c, const char *line, const char *file)
{
	char a[64], b[32];
	unsigned k, v, e;

	if (!strncmp(line, "kind: ", 6)) {
		for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
			if (!strcmp(line + 6, kinds[i].name)) {
				c->kind = kinds[i].kind;
				return 1;
			}
		tap_diag("%s: %s: unknown kind '%s'", file, c->name, line + 6);
		return -1;
	}
	if (!strncmp(line, "mem: ", 5)) {
		c->mem = strtoull(line + 5, NULL, 0);
		return 1;
	}
	if (!strncmp(line, "map: ", 5) || !strncmp(line, "rostr: ", 7)) {
		struct gbpf_map_desc *m = &c->maps[c->map_cnt];

		if (c->map_cnt >= MAX_MAPS)
			return -1;
		memset(m, 0, sizeof(*m));
		m->sz = sizeof(*m);
		if (line[0] == 'r') {
			snprintf(c->rostr[c->map_cnt], sizeof(c->rostr[0]), "%.127s", line + 7);
			snprintf(c->map_names[c->map_cnt], sizeof(c->map_names[0]), ".rodata");
			m->type = GBPF_MAP_TYPE_ARRAY;
			m->key_size = 4;
			m->value_size = (uint32_t)strlen(c->rostr[c->map_cnt]) + 1;
			m->max_entries = 1;
			m->origin = GBPF_MAP_ORIGIN_RODATA;
			m->init_data = c->rostr[c->map_cnt];
			m->init_size = m->value_size;
		} else {
			char ro[8] = "";
			int n = sscanf(line + 5, "%31s %31s %u %u %u %7s", c->map_names[c->map_cnt],
				       b, &k, &v, &e, ro);
			size_t i;

			if (n < 5)
				return -1;
			for (i = 0; i < sizeof(map_types) / sizeof(map_types[0]); i++)
				if (!strcmp(b, map_types[i].name))
					break;
			if (i == sizeof(map_types) / sizeof(map_types[0]))
				return -1;
			m->type = map_types[i].type;
			m->key_size = k;
			m->value_size = v;
			m->max_entries = e;
			if (n == 6 && !strcmp(ro, "ro"))
				m->origin = GBPF_MAP_ORIGIN_RODATA;
		}
		m->name = c->map_names[c->map_cnt];
		c->map_cnt++;
		return 1;
	}
	if (!strncmp(line, "raw: ", 5)) {
		uint8_t *bytes = NULL;
		char hex[64];
		size_t n = 0;

		for (const char *p = line + 5; *p && n < sizeof(hex) - 1; p++)
			if (*p != ' ')
				hex[n++] = *p;
		hex[n] = '\0';
		if (vt_unhex(hex, n, &bytes) != 8 || c->raw_cnt >= 64) {
			free(bytes);
			return -1;
		}
		memcpy(&c->raw[c->raw_cnt++], bytes, 8);
		free(bytes);
		return 1;
	}
	if (!strncmp(line, "expect: ", 8)) {
		const char *p = line + 8;

		if (!strcmp(p, "accept")) {
			c->expect_accept = 1;
			return 1;
		}
		if (strncmp(p, "reject", 6))
			return -1;
		p += 6;
		while (*p == ' ')
			p++;
		c->expect_insn = -1;
		if (*p == '@') {
			c->expect_insn = strtol(p + 1, (char **)&p, 10);
			while (*p == ' ')
				p++;
		}
		snprintf(c->expect_text, sizeof(c->expect_text), "%s", p);
		return 1;
	}
	(void)a;
	return 0;
}

static void run_case(struct vcase *c, const char *file)
{
	struct gbpf_insn *insns = NULL;
	size_t cnt = 0;
	char err[256], log[16384];
	struct gbpf_verify_result res;
	int rc;

	if (c->raw_cnt) {
		insns = malloc(c->raw_cnt * sizeof(*insns));
		if (!insns)
			abort();
		memcpy(insns, c->raw, c->raw_cnt * sizeof(*insns));
		cnt = c->raw_cnt;
	} else if (gbpf_asm(c->asm_text ? c->asm_text : "", &insns, &cnt, err, sizeof(err))) {
		tap_ok(0, "%s: %s: does not assemble: %s", file, c->name, err);
		return;
	}
	rc = vt_verify(insns, cnt, c->kind, c->maps, c->map_cnt, c->mem, &res, log, sizeof(log));
	if (c->expect_accept) {
		if (!tap_ok(rc == 0 && res.verdict == GBPF_VERDICT_ACCEPT, "%s: %s: accepted",
			    file, c->name))
			tap_diag("%s", log);
	} else {
		int ok = rc == -GBPF_ERRNO__VERIFY && res.verdict == GBPF_VERDICT_REJECT &&
			 strstr(res.reason, c->expect_text) &&
			 (c->expect_insn < 0 || c->expect_insn == res.error_insn);

		if (!tap_ok(ok, "%s: %s: rejected at insn %" PRId64 ": %s", file, c->name,
			    res.error_insn, res.reason))
			tap_diag("expected insn %ld, text '%s'; log:\n%s", c->expect_insn,
				 c->expect_text, log);
	}
	free(insns);
}

static int run_file(const char *path, const char *file)
{
	FILE *f = fopen(path, "r");
	char line[512];
	struct vcase c;
	int have = 0, cases = 0;

	if (!f) {
		tap_ok(0, "cannot open %s: %s", path, strerror(errno));
		return 0;
	}
	memset(&c, 0, sizeof(c));
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\r\n")] = '\0';
		if (!strncmp(line, "=== ", 4)) {
			if (have) {
				run_case(&c, file);
				cases++;
			}
			free(c.asm_text);
			memset(&c, 0, sizeof(c));
			snprintf(c.name, sizeof(c.name), "%.127s", line + 4);
			have = 1;
			continue;
		}
		if (!have)
			continue;
		int d = parse_directive(&c, line, file);

		if (d < 0) {
			tap_ok(0, "%s: %s: bad directive '%s'", file, c.name, line);
			have = 0;
			continue;
		}
		if (d == 0)
			append_asm(&c, line);
	}
	if (have) {
		run_case(&c, file);
		cases++;
	}
	free(c.asm_text);
	fclose(f);
	return cases;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(void)
{
	DIR *d = opendir(CORPUS_DIR);
	struct dirent *e;
	char *names[64];
	int n = 0, total = 0;

	if (!d) {
		tap_ok(0, "corpus folder %s missing (run from the project root)", CORPUS_DIR);
		return tap_done();
	}
	while ((e = readdir(d)) && n < 64) {
		size_t l = strlen(e->d_name);

		if (l > 2 && !strcmp(e->d_name + l - 2, ".s"))
			names[n++] = strdup(e->d_name);
	}
	closedir(d);
	qsort(names, (size_t)n, sizeof(names[0]), cmp_str);
	for (int i = 0; i < n; i++) {
		char path[512];

		snprintf(path, sizeof(path), "%s/%s", CORPUS_DIR, names[i]);
		total += run_file(path, names[i]);
		free(names[i]);
	}
	tap_ok(total >= 130, "corpus holds %d asm cases", total);
	return tap_done();
}
