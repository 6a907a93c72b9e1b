/* SPDX-License-Identifier: MIT */
/*
 * Every example probe (the build's examples/NAME.bpf.o, passed as
 * arguments) becomes valid SPIR-V: each device program as a run kernel, all
 * device programs of an object as probe functions of one module, and all
 * of them injected into the test application module (when built), every
 * result validated by SPIRV-Tools.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gbpf/object.h>

#include "plugins/spirv/spirv.h"
#include "spv_test_util.h"
#include "tests/tap.h"

static void check_object(const char *path, const uint32_t *app, size_t app_count)
{
	struct gbpf_object *obj = gbpf_object__open_file(path, NULL);
	const struct gbpf_prog_desc *progs[64];
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	struct gbpf_spirv_opts ko = {.sz = sizeof(ko), .flags = GBPF_SPIRV_KERNEL,
				     .ctx_table = 0x10000};
	size_t n = 0, i, wc;
	uint32_t *w;
	char err[1024];
	int rc;

	if (!tap_ok(obj != NULL, "%s opens", base))
		return;
	for (i = 0; i < gbpf_object__prog_cnt(obj) && n < 64; i++) {
		const struct gbpf_prog_desc *p = gbpf_object__prog(obj, i);

		if (gbpf_attach_is_device(p->attach.kind) || p->attach.kind == GBPF_ATTACH_NONE)
			progs[n++] = p;
	}
	for (i = 0; i < n; i++) {
		w = NULL;
		rc = gbpf_spirv_emit(&progs[i], 1, &ko, &w, &wc, err, sizeof(err));
		tap_ok(rc == 0, "%s %s (%s): run kernel emitted and validated (%zu words)%s%s", base,
		       progs[i]->name, progs[i]->section ? progs[i]->section : "-", rc ? 0 : wc,
		       rc ? ": " : "", rc ? err : "");
		free(w);
	}
	if (n) {
		struct gbpf_spirv_opts po = {.sz = sizeof(po), .ctx_table = 0x10000};
		char *text = NULL;

		w = NULL;
		rc = gbpf_spirv_emit(progs, n, &po, &w, &wc, err, sizeof(err));
		if (!rc)
			rc = gbpf_spirv_disassemble(w, wc, &text);
		tap_ok(rc == 0 && strstr(text, "__gbpf_probe_0"),
		       "%s: %zu device programs as probe functions of one module, validated%s%s", base,
		       n, rc ? ": " : "", rc ? err : "");
		free(text);
		free(w);
	}
	if (n && app) {
		struct gbpf_spirv_inject_opts io = {.sz = sizeof(io), .ctx_table = 0x10000};
		struct gbpf_spirv_inject_result res;
		size_t k, inst = 0;

		rc = gbpf_spirv_inject(app, app_count, progs, n, &io, &res, err, sizeof(err));
		for (k = 0; !rc && k < res.kernel_cnt; k++)
			inst += res.kernels[k].instrumented;
		tap_ok(rc == 0, "%s: injected into the test application (%zu of %zu kernels "
		       "instrumented), validated%s%s", base, inst, rc ? 0 : res.kernel_cnt,
		       rc ? ": " : "", rc ? err : "");
		if (!rc)
			gbpf_spirv_inject_result_free(&res);
	}
	gbpf_object__close(obj);
}

int main(int argc, char **argv)
{
	void *app = NULL;
	size_t app_size = 0;
	int i;

#ifdef GBPF_TEST_APPS_SPV
	if (spv_read_file(GBPF_TEST_APPS_SPV, &app, &app_size))
		app = NULL;
#endif
	if (argc < 2)
		tap_skip("no example objects given");
	for (i = 1; i < argc; i++)
		check_object(argv[i], app, app_size / 4);
	free(app);
	return tap_done();
}
