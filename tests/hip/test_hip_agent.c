/* SPDX-License-Identifier: MIT */
/*
 * The hip plugin's agent in this (sanitizer) process, without `gbpf run`:
 * the fake libamdhip64.so.5 and the plugin are dlopen'ed RTLD_LOCAL, the
 * interposers are reached through the plugin's own dlsym on the runtime
 * handle (as an application that dlopens the runtime reaches them), and
 * agent_attach gets hand-made services. The fat binary of the hipcc
 * multi_kernel app (its .hip_fatbin section) is registered through the
 * plugin: the runtime is given a rewritten bundle whose code objects pass
 * co_check_object, only the targeted kernel is reported instrumented, its
 * launch is reported, and a module image with no targeted kernel reaches
 * the runtime unchanged (the same pointer).
 *   test_hip_agent FAKE_RT_SO PLUGIN_SO MULTI_KERNEL_APP CO_GFX942
 */
#include <dlfcn.h>
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gbpf/plugin.h>

#include "hip_test_util.h"
#include "plugins/hip/co_instrument.h"
#include "plugins/hip/co_rewrite.h"
#include "tests/tap.h"

static char reports[1 << 16];
static size_t reports_len;

static void svc_report(void *ctx, enum gbpf_agent_event ev, const char *kernel, const char *msg)
{
	(void)ctx;
	reports_len += (size_t)snprintf(reports + reports_len, sizeof(reports) - reports_len, "%d|%s|%s\n", (int)ev,
					kernel ? kernel : "", msg);
	if (reports_len >= sizeof(reports))
		reports_len = sizeof(reports) - 1;
}

static int svc_selected(void *ctx, size_t prog_index, const char *name)
{
	(void)ctx;
	(void)prog_index;
	return !strcmp(name, "_Z6grid2dPiii");
}

static uint64_t launch_ids;

static uint64_t svc_next_launch_id(void *ctx)
{
	(void)ctx;
	return ++launch_ids;
}

/* The bytes of section @p name of an ELF file (malloc'ed copy), or NULL. */
static uint8_t *elf_section(const char *path, const char *name, size_t *len)
{
	size_t flen = 0;
	uint8_t *f = (uint8_t *)read_file(path, &flen), *out = NULL;
	const Elf64_Shdr *sh;

	if (f && !co_find_section(f, flen, name, &sh) && (out = malloc(sh->sh_size))) {
		memcpy(out, f + sh->sh_offset, sh->sh_size);
		*len = sh->sh_size;
	}
	free(f);
	return out;
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

struct wrapper {
	uint32_t magic, version;
	const void *bundle;
	void *unused;
};

typedef struct {
	uint32_t x, y, z;
} dim3;

int main(int argc, char **argv)
{
	/* r0 = 0; exit */
	static const struct gbpf_insn insns[] = {{.code = 0xb7, .dst = 0}, {.code = 0x95}};
	struct gbpf_prog_desc progs[2] = {
		{.sz = sizeof(progs[0]), .name = "on_entry", .section = "gpu/entry/_Z6grid2dPiii", .insns = insns,
		 .insn_cnt = 2, .attach = {.kind = GBPF_ATTACH_GPU_ENTRY, .target = "_Z6grid2dPiii"},
		 .license = "GPL", .source_file = "test.bpf.o"},
		{.sz = sizeof(progs[0]), .name = "on_exit", .section = "gpu/exit/_Z6grid2dPiii", .insns = insns,
		 .insn_cnt = 2, .attach = {.kind = GBPF_ATTACH_GPU_EXIT, .target = "_Z6grid2dPiii"},
		 .license = "GPL", .source_file = "test.bpf.o"},
	};
	struct gbpf_agent_services svc = {.sz = sizeof(svc), .report = svc_report, .kernel_selected = svc_selected,
					  .next_launch_id = svc_next_launch_id};
	struct gbpf_agent_attach_opts ao = {.sz = sizeof(ao), .progs = progs, .prog_cnt = 2, .services = &svc};
	struct gbpf_backend_ops ops = {.sz = sizeof(ops)};
	struct gbpf_backend_caps caps = {.sz = sizeof(caps)};
	gbpf_plugin_get_backend_table_fn entry;
	void *(*pdlsym)(void *, const char *);
	void **(*reg)(const void *);
	void (*reg_fn)(void **, const void *, char *, const char *, unsigned, void *, void *, void *, void *, int *);
	int (*launch)(const void *, dim3, dim3, void **, size_t, void *);
	int (*load_data)(void **, const void *);
	void *rt, *plugin, *mod = NULL;
	struct gbpf_backend *be = NULL;
	char log[512] = "", *dir, dump[600], path[700], err[512];
	uint8_t *fatbin, *co, *got;
	size_t flen = 0, colen = 0, glen = 0;
	static char stub;

	if (argc < 5) {
		tap_skip("fake runtime, plugin or hipcc apps not built");
		return tap_done();
	}
	dir = tmp_dir("hip-agent");
	if (!dir)
		return 1;
	snprintf(dump, sizeof(dump), "GBPF_HIP_SHIM_DUMP=%s", dir);
	putenv(dump);
	putenv((char *)"GBPF_HIP_SHIM_LOG=/dev/null");
	rt = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	plugin = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
	if (!tap_ok(rt && plugin, "fake runtime and plugin load: %s", rt && plugin ? "" : dlerror()))
		return tap_done();
	entry = (gbpf_plugin_get_backend_table_fn)dlsym(plugin, GBPF_PLUGIN_ENTRY_SYMBOL);
	pdlsym = (void *(*)(void *, const char *))dlsym(plugin, "dlsym");
	tap_ok(entry && !entry(GBPF_PLUGIN_ABI_VERSION, &ops, &caps) && ops.open && ops.agent_attach && pdlsym &&
		       (caps.flags & GBPF_CAP_INTERCEPT),
	       "plugin: open, agent_attach, the dlsym interposer and the intercept capability");
	if (!ops.open || !pdlsym)
		return tap_done();
	reg = (void **(*)(const void *))pdlsym(rt, "__hipRegisterFatBinary");
	reg_fn = (void (*)(void **, const void *, char *, const char *, unsigned, void *, void *, void *, void *,
			   int *))pdlsym(rt, "__hipRegisterFunction");
	launch = (int (*)(const void *, dim3, dim3, void **, size_t, void *))pdlsym(rt, "hipLaunchKernel");
	load_data = (int (*)(void **, const void *))pdlsym(rt, "hipModuleLoadData");
	tap_ok(reg && reg != dlsym(rt, "__hipRegisterFatBinary") && reg == dlsym(plugin, "__hipRegisterFatBinary") &&
		       launch == dlsym(plugin, "hipLaunchKernel"),
	       "the plugin's dlsym hands out its interposers for the runtime's entry points");
	tap_ok(pdlsym(rt, "hipMalloc") == dlsym(rt, "hipMalloc"), "other names pass through the dlsym interposer");
	tap_ok(ops.open(NULL, &be) == 0 && ops.agent_attach(be, &ao, log, sizeof(log)) == 0, "agent_attach %s", log);

	fatbin = elf_section(argv[3], ".hip_fatbin", &flen);
	if (tap_ok(fatbin && flen > 4096, "multi_kernel: .hip_fatbin read (%zu bytes)", flen)) {
		struct wrapper w = {0x48495046u, 1, fatbin, NULL};
		struct co_bundle *b = calloc(1, sizeof(*b));
		void **h = reg(&w);

		reg_fn(h, &stub, (char *)"_Z6grid2dPiii", "_Z6grid2dPiii", (unsigned)-1, NULL, NULL, NULL, NULL, NULL);
		launch(&stub, (dim3){4, 8, 1}, (dim3){16, 8, 1}, NULL, 0, NULL);
		snprintf(path, sizeof(path), "%s/fatbin-0.bin", dir);
		got = (uint8_t *)read_file(path, &glen);
		if (tap_ok(got && b && !co_bundle_parse(got, glen, b, err, sizeof(err)) && b->n == 3,
			   "the runtime got a bundle of 3 entries")) {
			for (size_t i = 1; i < b->n; i++) {
				size_t nk = 0;
				int rc = co_check_object(NULL, b->e[i].data, b->e[i].size, &nk, err, sizeof(err));

				tap_ok(rc == 0 && nk == 4 && memmem(b->e[i].data, b->e[i].size, "__gbpf_probe_1", 14),
				       "%s: rewritten code object passes the checker and holds both probes%s%s", b->e[i].id,
				       rc ? ": " : "", rc ? err : "");
			}
			co_bundle_free(b);
		}
		free(b);
		free(got);
		tap_ok(count(reports, "|_Z6grid2dPiii|instrumented in the gfx90a code object") == 1 &&
			       count(reports, "|_Z6grid2dPiii|instrumented in the gfx940 code object") == 1 &&
			       count(reports, "instrumented in the") == 2,
		       "only grid2d is reported instrumented, in both code objects");
		tap_ok(count(reports, "|_Z6grid2dPiii|launched through hipLaunchKernel (grid 4,8,1 block 16,8,1)") == 1 &&
			       launch_ids == 1,
		       "its launch is reported and got a launch id");
	}
	co = (uint8_t *)read_file(argv[4], &colen);
	if (co) {
		struct gbpf_backend_ops *o = &ops;

		tap_ok(load_data(&mod, co) == 0, "hipModuleLoadData through the plugin");
		snprintf(path, sizeof(path), "%s/module-0.bin", dir);
		got = (uint8_t *)read_file(path, &glen);
		tap_ok(got && glen == colen && !memcmp(got, co, colen),
		       "a code object with no targeted kernel reaches the runtime unchanged");
		free(got);
		o->agent_detach(be);
	} else {
		tap_skip("no gfx942 code object");
		ops.agent_detach(be);
	}
	if (!tap_ok(reports_len > 0, "reports were made"))
		tap_diag("%s", reports);
	free(mod);
	free(co);
	free(fatbin);
	ops.close(be);
	rm_tree(dir);
	free(dir);
	return tap_done();
}
