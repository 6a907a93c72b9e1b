/* SPDX-License-Identifier: MIT */
/*
 * tests/reliability/fuzz_seeds.c - seed corpus of the verifier fuzz target
 * from real programs, in the input format of fuzz_vformat.h: every
 * program of the given BPF objects (with its maps and attach kind), every
 * conformance test program (GBPF_ATTACH_NONE with its memory size) and
 * structured programs of the differential test's generator.
 * Usage: fuzz_seeds OUTDIR CONFORMANCE_DIR|- [OBJ...]
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gbpf/asm.h>
#include <gbpf/object.h>

#include "difftest_gen.h"
#include "fuzz_vformat.h"

static unsigned written;

static uint8_t index_of(const uint32_t *tab, size_t n, uint32_t v)
{
	for (size_t i = 0; i < n; i++)
		if (tab[i] == v)
			return (uint8_t)i;
	return 0;
}

static void put(const char *out, const char *tag, uint32_t kind, uint64_t mem_size,
		const struct gbpf_map_desc *maps, size_t map_cnt, const struct gbpf_insn *insns,
		size_t n)
{
	char path[4096];
	uint8_t hdr[FV_HDR], m[FV_MAP_BYTES];
	FILE *f;

	if (map_cnt > FV_MAX_MAPS || n > FV_MAX_INSNS)
		return;
	snprintf(path, sizeof(path), "%s/%s-%u", out, tag, written);
	f = fopen(path, "wb");
	if (!f)
		return;
	hdr[0] = index_of(fv_kinds, FV_N(fv_kinds), kind);
	hdr[1] = 0;
	hdr[2] = (uint8_t)map_cnt;
	hdr[3] = (uint8_t)(mem_size / 4 > 255 ? 255 : mem_size / 4);
	fwrite(hdr, 1, sizeof(hdr), f);
	for (size_t i = 0; i < map_cnt; i++) {
		m[0] = index_of(fv_map_types, FV_N(fv_map_types), maps[i].type);
		m[1] = (uint8_t)maps[i].key_size;
		m[2] = (uint8_t)maps[i].value_size;
		m[3] = (uint8_t)(maps[i].value_size >> 8);
		m[4] = (uint8_t)maps[i].max_entries;
		m[5] = (uint8_t)(maps[i].max_entries >> 8);
		m[6] = maps[i].map_flags & GBPF_F_RDONLY_PROG ? 1 : 0;
		m[7] = 0;
		fwrite(m, 1, sizeof(m), f);
	}
	fwrite(insns, 8, n, f);
	fclose(f);
	written++;
}

static void conformance(const char *out, const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	while (d && (e = readdir(d))) {
		struct gbpf_testcase tc;
		struct gbpf_insn *insns = NULL;
		char path[4096];
		size_t n = 0;

		if (!strstr(e->d_name, ".data"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		memset(&tc, 0, sizeof(tc));
		if (gbpf_testcase_parse_file(path, &tc, NULL, 0))
			continue;
		if (!gbpf_testcase_program(&tc, &insns, &n, NULL, 0))
			put(out, "conf", GBPF_ATTACH_NONE, tc.mem_size, NULL, 0, insns, n);
		free(insns);
		gbpf_testcase_free(&tc);
	}
	if (d)
		closedir(d);
}

int main(int argc, char **argv)
{
	static struct dt_prog p;

	if (argc < 3) {
		fprintf(stderr, "usage: %s OUTDIR CONFORMANCE_DIR|- [OBJ...]\n", argv[0]);
		return 2;
	}
	if (strcmp(argv[2], "-"))
		conformance(argv[1], argv[2]);
	for (int i = 3; i < argc; i++) {
		struct gbpf_object *obj = gbpf_object__open_file(argv[i], NULL);

		for (size_t k = 0; obj && k < gbpf_object__prog_cnt(obj); k++) {
			const struct gbpf_prog_desc *d = gbpf_object__prog(obj, k);

			put(argv[1], "obj", d->attach.kind, 64, d->maps, d->map_cnt, d->insns,
			    d->insn_cnt);
		}
		if (!obj)
			fprintf(stderr, "fuzz_seeds: %s: cannot open\n", argv[i]);
		gbpf_object__close(obj);
	}
	for (uint64_t s = 1; s <= 40; s++) {
		dt_generate(&p, s, 0);
		put(argv[1], "gen", GBPF_ATTACH_NONE, 0, dt_maps, 2, p.insns, p.n);
	}
	printf("fuzz_seeds: %u seeds in %s\n", written, argv[1]);
	return 0;
}
