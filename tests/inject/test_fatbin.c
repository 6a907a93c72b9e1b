/* SPDX-License-Identifier: MIT */
/*
 * Fatbin parsing of nvcc-built executables in several forms, end-to-end
 * injection through gbpf_cuda_inject_image(), and robustness on truncated
 * and corrupted fatbins.
 * Usage: test_fatbin PTXAS|- FORM=PATH ...
 *   FORM: default, sm90, nocompress, lz4, compressall, noptx, shared, rdc, cubin
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gbpf/cuda_inject.h>
#include <gbpf/gbpf.h>

#include "plugins/cuda/fatbin/fatbin.h"
#include "tests/inject/inject_util.h"
#include "tests/tap.h"
#include "tests/xorshift.h"

static const char *ptxas;

struct regions {
	unsigned n;
	uint8_t *data[8];
	size_t size[8];
};

static int grab(const char *where, const uint8_t *d, size_t n, void *arg)
{
	struct regions *r = arg;

	(void)where;
	if (r->n < 8) {
		r->data[r->n] = (uint8_t *)d;
		r->size[r->n] = n;
		r->n++;
	}
	return 0;
}

struct summary {
	unsigned ptx, elf, zstd, lz4, ptx_ok, elf_ok, arch90, arch75, undecodable, ptx_rt;
};

static void summarize(const uint8_t *d, size_t n, struct summary *s, int *perr)
{
	struct gbpf_fatbin fb;
	char log[256];

	*perr = gbpf_fatbin__parse(d, n, &fb, log, sizeof(log));
	if (*perr)
		return;
	for (size_t i = 0; i < fb.n_entries; i++) {
		const struct gbpf_fatbin_entry *e = &fb.entries[i];
		uint8_t *out;
		size_t len;
		int err;

		s->ptx += e->kind == GBPF_FATBIN_KIND_PTX;
		s->elf += e->kind == GBPF_FATBIN_KIND_ELF;
		s->zstd += e->compression == GBPF_FATBIN_COMP_ZSTD;
		s->lz4 += e->compression == GBPF_FATBIN_COMP_LZ4;
		s->arch90 += e->arch == 90;
		s->arch75 += e->arch == 75;
		err = gbpf_fatbin_entry__data(e, 0, &out, &len, log, sizeof(log));
		if (err) {
			s->undecodable++;
			continue;
		}
		if (e->kind == GBPF_FATBIN_KIND_PTX) {
			struct gbpf_ptx_module *m =
				gbpf_ptx_parse((char *)out, len, "entry", NULL, 0);
			char *p = m ? gbpf_ptx_print(m, NULL) : NULL;

			s->ptx_ok += gbpf_cuda_image_kind(out, len) == GBPF_CUDA_IMAGE_PTX &&
				     strstr((char *)out, ".entry") != NULL;
			s->ptx_rt += p && iu_token_diff((char *)out, len, p, strlen(p)) == -1;
			free(p);
			gbpf_ptx_module_free(m);
		} else
			s->elf_ok += gbpf_cuda_image_kind(out, len) == GBPF_CUDA_IMAGE_ELF &&
				     gbpf_cubin_for_each_kernel(out, len, NULL, NULL, NULL, 0) >= 0;
		free(out);
	}
	gbpf_fatbin__free(&fb);
}

static bool have_lz4(void)
{
	return gbpf_fatbin_can_decompress(GBPF_FATBIN_COMP_LZ4);
}

static void inject_file(const char *form, const char *path, const uint8_t *data, size_t size)
{
	GBPF_OPTS(gbpf_cuda_inject_opts, opts, .fragment = iu_fragment,
		  .sites = GBPF_CUDA_SITE_ENTRY | GBPF_CUDA_SITE_EXIT | GBPF_CUDA_SITE_MEM |
			   GBPF_CUDA_SITE_BARRIER,
		  .entry_probe = 0, .exit_probe = 1, .mem_probe = 2, .barrier_probe = 3);
	struct gbpf_cuda_inject_result *res = NULL;
	char log[512] = "";
	unsigned instr = 0, sass_only = 0, asm_ok = 0;
	int err;

	err = gbpf_cuda_inject_image(data, size, path, &opts, &res, log, sizeof(log));
	tap_ok(err == 0 && res && res->n_kernels > 0, "%s: inject_image lists %zu kernels (%d %s)",
	       form, res ? res->n_kernels : 0, err, log);
	if (!res)
		return;
	for (size_t i = 0; i < res->n_kernels; i++) {
		const struct gbpf_cuda_kernel_info *k = &res->kernels[i];

		instr += k->instrumented;
		sass_only += !k->instrumented && k->reason && strstr(k->reason, "no PTX in fatbin");
		if (!k->instrumented)
			tap_diag("%s: %s in %s: %s", form, k->name, k->module,
				 k->reason ? k->reason : "");
	}
	if (!strcmp(form, "rdc")) {
		/* The registered .nv_fatbin is device-linked SASS; PTX is only in __nv_relfatbin. */
		unsigned rel = 0, reg_sass = 0;

		for (size_t i = 0; i < res->n_kernels; i++) {
			const struct gbpf_cuda_kernel_info *k = &res->kernels[i];

			rel += k->instrumented && strstr(k->module, "__nv_relfatbin") != NULL;
			reg_sass += !k->instrumented && strstr(k->module, ".nv_fatbin") &&
				    k->reason && strstr(k->reason, "no PTX in fatbin");
		}
		tap_ok(rel >= 1 && reg_sass >= 1,
		       "rdc: .nv_fatbin kernel has no PTX, __nv_relfatbin PTX instrumented");
		for (size_t i = 0; ptxas && i < res->n_modules; i++)
			asm_ok += iu_ptxas(ptxas, "sm_75", res->modules[i].ptx,
					   res->modules[i].ptx_len, NULL) == 0;
		if (ptxas)
			tap_ok(asm_ok == res->n_modules, "rdc: relocatable PTX instrumented assembles");
	} else if (!strcmp(form, "noptx")) {
		tap_ok(instr == 0 && sass_only == res->n_kernels,
		       "noptx: no kernel instrumentable, each says 'no PTX in fatbin'");
		tap_ok(res->kernels[0].reason && strstr(res->kernels[0].reason, "sm_90 SASS"),
		       "noptx: reason names the SASS arch: %s",
		       res->kernels[0].reason ? res->kernels[0].reason : "");
	} else if (!strcmp(form, "lz4") && !have_lz4()) {
		tap_ok(instr == 0, "lz4: no instrumentation without liblz4");
	} else if (!strcmp(form, "cubin")) {
		tap_ok(instr == 0 && res->kernels[0].reason &&
			       strstr(res->kernels[0].reason, "only SASS"),
		       "cubin: kernels listed as SASS only");
	} else {
		tap_ok(instr == res->n_kernels && res->n_modules > 0,
		       "%s: all %u kernels instrumented in %zu modules", form, instr,
		       res->n_modules);
		for (size_t i = 0; ptxas && i < res->n_modules; i++) {
			char arch[32];

			iu_ptx_arch(res->modules[i].ptx, arch, sizeof(arch));
			asm_ok += iu_ptxas(ptxas, arch, res->modules[i].ptx, res->modules[i].ptx_len,
					   NULL) == 0;
		}
		if (ptxas)
			tap_ok(asm_ok == res->n_modules, "%s: %u/%zu instrumented modules assemble",
			       form, asm_ok, res->n_modules);
	}
	gbpf_cuda_inject_result__free(res);
}

static void check_form(const char *form, const char *path)
{
	size_t size;
	char *data = iu_read(path, &size);
	struct regions r = {0};
	struct summary s = {0};
	char log[256] = "";
	int err, perr = 0;

	if (!data) {
		tap_skip("%s: %s not built", form, path);
		return;
	}
	if (!strcmp(form, "cubin")) {
		inject_file(form, path, (uint8_t *)data, size);
		free(data);
		return;
	}
	err = gbpf_fatbin_find_in_file(data, size, grab, &r, log, sizeof(log));
	tap_ok(err == 0 && r.n >= 1, "%s: %u fatbin section(s) found (%s)", form, r.n, log);
	for (unsigned i = 0; i < r.n; i++) {
		summarize(r.data[i], r.size[i], &s, &perr);
		if (perr)
			break;
	}
	tap_ok(perr == 0 && s.elf > 0, "%s: fatbin parses: %u PTX, %u ELF entries", form, s.ptx,
	       s.elf);
	if (s.ptx_ok)
		tap_ok(s.ptx_rt == s.ptx_ok, "%s: stored PTX round-trips token for token (%u)", form,
		       s.ptx_rt);
	if (!strcmp(form, "default") || !strcmp(form, "shared")) {
		tap_ok(s.ptx >= 1 && s.zstd >= 1 && s.ptx_ok == s.ptx && s.arch75 >= 2,
		       "%s: zstd compute_75 PTX decompresses (%u/%u)", form, s.ptx_ok, s.ptx);
	} else if (!strcmp(form, "sm90")) {
		tap_ok(s.ptx >= 1 && s.ptx_ok == s.ptx && s.arch90 >= 2,
		       "sm90: compute_90 PTX and sm_90 SASS");
	} else if (!strcmp(form, "nocompress")) {
		tap_ok(s.ptx >= 1 && s.zstd == 0 && s.lz4 == 0 && s.ptx_ok == s.ptx,
		       "nocompress: plain PTX");
	} else if (!strcmp(form, "lz4")) {
		tap_ok(s.lz4 >= 1, "lz4: LZ4-compressed entries (%u)", s.lz4);
		if (have_lz4())
			tap_ok(s.ptx_ok == s.ptx && s.undecodable == 0, "lz4: every entry decodes");
		else
			tap_ok(s.undecodable == s.lz4, "lz4: reported not decodable without liblz4");
	} else if (!strcmp(form, "compressall")) {
		tap_ok(s.zstd > s.ptx && s.elf_ok == s.elf && s.ptx_ok == s.ptx,
		       "compressall: ELF entries compressed too and decode (%u zstd)", s.zstd);
	} else if (!strcmp(form, "noptx")) {
		tap_ok(s.ptx == 0 && s.elf_ok == s.elf, "noptx: no PTX, SASS only");
	}
	inject_file(form, path, (uint8_t *)data, size);
	free(data);
}

/* xorshift: deterministic corruption. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng(void)
{
	return test_xorshift64(&rng_state);
}

static int parse_all(const uint8_t *d, size_t n)
{
	struct gbpf_fatbin fb;
	int err = gbpf_fatbin__parse(d, n, &fb, NULL, 0);

	if (err)
		return err;
	for (size_t i = 0; i < fb.n_entries; i++) {
		uint8_t *out;
		size_t len;

		if (!gbpf_fatbin_entry__data(&fb.entries[i], 16 << 20, &out, &len, NULL, 0)) {
			if (fb.entries[i].kind == GBPF_FATBIN_KIND_ELF)
				gbpf_cubin_for_each_kernel(out, len, NULL, NULL, NULL, 0);
			free(out);
		}
	}
	gbpf_fatbin__free(&fb);
	return 0;
}

static void check_robustness(const char *path)
{
	size_t size;
	char *data = iu_read(path, &size), log[256];
	struct regions r = {0};
	unsigned truncated_errors = 0, runs = 0, bad = 0;
	uint8_t *fb, *copy;
	size_t n;

	if (!data || gbpf_fatbin_find_in_file(data, size, grab, &r, NULL, 0) || !r.n) {
		tap_skip("robustness: %s not available", path);
		free(data);
		return;
	}
	fb = r.data[0];
	n = r.size[0];
	copy = malloc(n);
	/* Every truncation of the first container fails cleanly. */
	n = (size_t)gbpf_fatbin_container_size(fb, n);
	for (size_t cut = 1; cut < n && cut < 4096; cut += (cut < 256 ? 1 : 37)) {
		int err;

		memcpy(copy, fb, cut);
		err = gbpf_fatbin__parse(copy, cut, &(struct gbpf_fatbin){0}, log, sizeof(log));
		truncated_errors += err == -GBPF_ERRNO__FORMAT;
		runs++;
	}
	tap_ok(truncated_errors == runs, "robustness: %u/%u truncations rejected", truncated_errors,
	       runs);
	/* Random corruption of headers and payloads: no crash, defined results. */
	for (unsigned it = 0; it < 3000; it++) {
		int err;

		memcpy(copy, fb, n);
		for (unsigned k = 0; k < 1 + rng() % 4; k++) {
			size_t at = (it & 1) ? rng() % (n < 128 ? n : 128) : rng() % n;

			copy[at] = (uint8_t)rng();
		}
		err = parse_all(copy, n);
		bad += err != 0 && err != -GBPF_ERRNO__FORMAT && err != -ENOMEM;
	}
	tap_ok(bad == 0, "robustness: 3000 corrupted fatbins parsed or rejected with FORMAT");
	/* Hostile sizes. */
	{
		uint8_t h[16 + 64 + 8] = {0};
		struct gbpf_fatbin f;
		int err;

		h[0] = 0x50, h[1] = 0xed, h[2] = 0x55, h[3] = 0xba; /* magic */
		h[4] = 1, h[6] = 16;
		h[8] = 72; /* payload size */
		h[16] = 1; /* PTX */
		h[20] = 64;
		h[24] = 8;                          /* payload 8 bytes */
		h[16 + 0x10] = 8;                   /* compressed size */
		h[16 + 0x29] = 0x80;                /* zstd flag */
		memset(h + 16 + 0x38, 0xff, 7);     /* absurd uncompressed size */
		err = gbpf_fatbin__parse(h, sizeof(h), &f, log, sizeof(log));
		tap_ok(err == 0 && f.n_entries == 1, "hostile: header parses (%s)", log);
		if (!err) {
			uint8_t *out;
			size_t len;

			err = gbpf_fatbin_entry__data(&f.entries[0], 1 << 20, &out, &len, log,
						      sizeof(log));
			tap_ok(err == -E2BIG, "hostile: huge uncompressed size refused: %s", log);
			f.entries[0].uncompressed_size = 100;
			err = gbpf_fatbin_entry__data(&f.entries[0], 1 << 20, &out, &len, log,
						      sizeof(log));
			tap_ok(err == -GBPF_ERRNO__FORMAT, "hostile: bad zstd data refused: %s", log);
			gbpf_fatbin__free(&f);
		}
		h[8] = 0xff, h[15] = 0x7f; /* container larger than the buffer */
		err = gbpf_fatbin__parse(h, sizeof(h), &f, log, sizeof(log));
		tap_ok(err == -GBPF_ERRNO__FORMAT && strstr(log, "offset 0"),
		       "hostile: oversized container refused: %s", log);
	}
	/* An ELF header with sections but no section table offset. */
	{
		uint8_t elf[64] = {0x7f, 'E', 'L', 'F', 2, 1, 1};

		elf[0x3c] = 5;
		tap_ok(gbpf_cubin_for_each_kernel(elf, sizeof(elf), NULL, NULL, NULL, 0) == 0,
		       "hostile: ELF with section count but no table has no kernels");
		elf[0x28] = 60; /* table overlapping the end */
		tap_ok(gbpf_cubin_for_each_kernel(elf, sizeof(elf), NULL, NULL, log, sizeof(log)) ==
			       -GBPF_ERRNO__FORMAT,
		       "hostile: section table outside the file refused: %s", log);
	}
	free(copy);
	free(data);
}

int main(int argc, char **argv)
{
	const char *default_path = NULL;

	if (argc < 2) {
		fprintf(stderr, "usage: %s PTXAS|- FORM=PATH...\n", argv[0]);
		return 2;
	}
	ptxas = strcmp(argv[1], "-") ? argv[1] : NULL;
	if (argc == 2)
		tap_skip("no nvcc: no CUDA application was built");
	for (int i = 2; i < argc; i++) {
		char *eq = strchr(argv[i], '=');

		if (!eq)
			continue;
		*eq = 0;
		if (!strcmp(argv[i], "default"))
			default_path = eq + 1;
		check_form(argv[i], eq + 1);
	}
	if (default_path)
		check_robustness(default_path);
	return tap_done();
}
