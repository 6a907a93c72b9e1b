/* SPDX-License-Identifier: MIT */
/*
 * Every example probe (the build's examples/NAME.bpf.o, passed as arguments)
 * becomes valid AMDGCN code objects: each device program as a run kernel
 * (gfx942 and gfx90a, kernel metadata read back by llvm-readelf), and all
 * device programs of an object as probe functions of one module (the
 * injection form), linked with ld.lld and exporting __gbpf_probe_<i>.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gbpf/object.h>

#include "hip_test_util.h"
#include "plugins/hip/amdgcn_codegen.h"
#include "tests/tap.h"

static const char *const archs[] = {"gfx942", "gfx90a"};

static void check_object(const char *path, const char *dir)
{
	struct gbpf_object *obj = gbpf_object__open_file(path, NULL);
	const struct gbpf_prog_desc *progs[64];
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	size_t n = 0, i, len, a;
	char err[512], why[512];
	int rc;

	if (!tap_ok(obj != NULL, "%s opens", base))
		return;
	for (i = 0; i < gbpf_object__prog_cnt(obj) && n < 64; i++) {
		const struct gbpf_prog_desc *p = gbpf_object__prog(obj, i);

		if (gbpf_attach_is_device(p->attach.kind) || p->attach.kind == GBPF_ATTACH_NONE)
			progs[n++] = p;
	}
	for (a = 0; a < 2; a++) {
		for (i = 0; i < n; i++) {
			struct gbpf_amdgcn_opts o = {.sz = sizeof(o), .arch = archs[a], .flags = GBPF_AMDGCN_KERNEL,
						     .output = GBPF_AMDGCN_OUT_OBJ, .opt_level = 2};
			char *co = NULL, name[256];

			err[0] = 0;
			rc = gbpf_amdgcn_emit(&progs[i], 1, &o, &co, &len, err, sizeof(err));
			snprintf(name, sizeof(name), "%s-%s-%zu", base, archs[a], i);
			if (!rc)
				rc = check_code_object(dir, name, co, len, "__gbpf_run", why, sizeof(why));
			else
				snprintf(why, sizeof(why), "%s", err);
			tap_ok(rc == 0, "%s %s (%s): run kernel is a %s code object with kernel metadata%s%s", base,
			       progs[i]->name, progs[i]->section, archs[a], rc ? ": " : "", rc ? why : "");
			free(co);
		}
		if (n) {
			struct gbpf_amdgcn_opts o = {.sz = sizeof(o), .arch = archs[a], .output = GBPF_AMDGCN_OUT_OBJ,
						     .opt_level = 2};
			char *co = NULL, opath[512], hsaco[512 + 16], *out = NULL;
			size_t missing = 0;

			rc = gbpf_amdgcn_emit(progs, n, &o, &co, &len, err, sizeof(err));
			if (!tap_ok(rc == 0, "%s: %zu probe functions for %s%s%s", base, n, archs[a], rc ? ": " : "",
				    rc ? err : "")) {
				free(co);
				continue;
			}
			snprintf(why, sizeof(why), "%s-%s-probes.o", base, archs[a]);
			write_file(dir, why, co, len, opath, sizeof(opath));
			snprintf(hsaco, sizeof(hsaco), "%s.hsaco", opath);
			{
				char *argv[] = {(char *)GBPF_LLD, (char *)"-shared", opath, (char *)"-o", hsaco, NULL};

				rc = run_cmd(argv, NULL);
			}
			{
				char *argv[] = {(char *)GBPF_READELF, (char *)"--dyn-syms", (char *)"--notes", hsaco, NULL};

				if (!rc)
					rc = run_cmd(argv, &out);
			}
			for (i = 0; out && i < n; i++) {
				char sym[64];

				snprintf(sym, sizeof(sym), " %s%zu\n", GBPF_AMDGCN_PROBE_PREFIX, i);
				missing += !strstr(out, sym);
			}
			tap_ok(rc == 0 && out && !missing && strstr(out, archs[a]) && strstr(out, "__gbpf_maps"),
			       "%s: probe module links for %s and exports every probe (%zu missing)", base, archs[a],
			       missing);
			free(out);
			free(co);
		}
	}
	gbpf_object__close(obj);
}


/* A GPU_THREAD_LOCAL map is CUDA's alone: refused by name, not run as some other map. */
static void test_thread_local_refused(void)
{
	static const struct gbpf_insn ret0[] = {{.code = 0xb7}, {.code = 0x95}};
	struct gbpf_map_desc md = {.sz = sizeof(md), .name = "last_addr", .type = GBPF_MAP_TYPE_GPU_THREAD_LOCAL,
				   .key_size = 4, .value_size = 8, .max_entries = 1};
	struct gbpf_prog_desc pd = {.sz = sizeof(pd), .name = "tls", .section = "gpu/mem/k", .insns = ret0,
				    .insn_cnt = 2, .maps = &md, .map_cnt = 1, .source_file = "tls.bpf.o"};
	const struct gbpf_prog_desc *p = &pd;
	struct gbpf_amdgcn_opts o = {.sz = sizeof(o), .arch = "gfx90a", .flags = GBPF_AMDGCN_KERNEL,
				     .output = GBPF_AMDGCN_OUT_OBJ, .opt_level = 2};
	char *co = NULL;
	size_t len = 0;
	char err[512] = "";
	int rc = gbpf_amdgcn_emit(&p, 1, &o, &co, &len, err, sizeof(err));

	tap_ok(rc == -ENOTSUP && strstr(err, "map 'last_addr' is thread-local") && strstr(err, "tls.bpf.o"),
	       "amdgcn: a thread-local map is refused by name (%s)", err);
	free(co);
}

int main(int argc, char **argv)
{
	char *dir = tmp_dir("examples");

	test_thread_local_refused();

	if (argc < 2) {
		tap_skip("no example objects given");
		return tap_done();
	}
	if (!dir)
		return tap_ok(0, "temporary directory"), tap_done();
	for (int i = 1; i < argc; i++)
		check_object(argv[i], dir);
	rm_tree(dir);
	free(dir);
	return tap_done();
}
