/* SPDX-License-Identifier: MIT */
/*
 * tests/interp/conf_util.h - helpers shared by the tests that read the
 * conformance suite (../shared/conformance from the project root).
 */
#ifndef GBPF_TESTS_INTERP_CONF_UTIL_H
#define GBPF_TESTS_INTERP_CONF_UTIL_H

#include <stddef.h>
#include <stdint.h>

#define CONF_DIR "../shared/conformance/bpf_conformance"

/** One line of assembled_tests.tsv / assembled_negative.tsv. */
struct conf_row {
	char name[128];   /* "tests/add.data" */
	uint8_t *prog;    /* program bytes */
	size_t prog_len;
	char flags[128];
	char error[256];
	int has_result;
	uint64_t result;
};

/** Read every row of a tsv file; returns the count or -errno. */
static inline int conf_read_tsv(const char *path, struct conf_row **rows);
static inline void conf_free_rows(struct conf_row *rows, int n);

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline int conf_hex_decode(const char *hex, size_t len, uint8_t **out, size_t *out_len)
{
	uint8_t *b;
	size_t i;

	*out = NULL;
	*out_len = 0;
	if (len % 2)
		return -EINVAL;
	b = malloc(len / 2 + 1);
	if (!b)
		return -ENOMEM;
	for (i = 0; i < len / 2; i++) {
		unsigned v;

		if (sscanf(hex + 2 * i, "%2x", &v) != 1) {
			free(b);
			return -EINVAL;
		}
		b[i] = (uint8_t)v;
	}
	*out = b;
	*out_len = len / 2;
	return 0;
}

static inline int conf_read_tsv(const char *path, struct conf_row **rows)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0;
	int n = 0, first = 1;
	struct conf_row *r = NULL;

	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		char *field[6] = {0}, *p = line;
		struct conf_row *row, *grown;
		int k;

		if (first) { /* header */
			first = 0;
			continue;
		}
		line[strcspn(line, "\r\n")] = '\0';
		for (k = 0; k < 6; k++) {
			field[k] = p;
			p = strchr(p, '\t');
			if (!p)
				break;
			*p++ = '\0';
		}
		grown = realloc(r, (size_t)(n + 1) * sizeof(*r));
		if (!grown)
			break;
		r = grown;
		row = &r[n++];
		memset(row, 0, sizeof(*row));
		snprintf(row->name, sizeof(row->name), "%s", field[0] ? field[0] : "");
		if (field[1])
			conf_hex_decode(field[1], strlen(field[1]), &row->prog, &row->prog_len);
		if (field[3] && *field[3]) {
			row->has_result = 1;
			row->result = strtoull(field[3], NULL, 16);
		}
		snprintf(row->error, sizeof(row->error), "%s", field[4] ? field[4] : "");
		snprintf(row->flags, sizeof(row->flags), "%s", field[5] ? field[5] : "");
	}
	free(line);
	fclose(f);
	*rows = r;
	return n;
}

static inline void conf_free_rows(struct conf_row *rows, int n)
{
	for (int i = 0; i < n; i++)
		free(rows[i].prog);
	free(rows);
}

#endif /* GBPF_TESTS_INTERP_CONF_UTIL_H */
