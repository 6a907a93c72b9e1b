/* SPDX-License-Identifier: MIT */
/*
 * Plugin discovery and ABI negotiation against stub plugins that need no
 * hardware (see stub_plugin.c for the behaviours).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gbpf/backend.h>

#include "tap.h"

static int silent(enum gbpf_log_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

static struct gbpf_registry *open_registry(const char *path)
{
	struct gbpf_registry *reg = NULL;
	GBPF_OPTS(gbpf_registry_opts, opts, .plugin_path = path, .no_default_dirs = 1);

	if (gbpf_registry_new(&opts, &reg))
		return NULL;
	return reg;
}

static int contains(const char *s, const char *needle)
{
	return s && strstr(s, needle);
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : ".";
	struct gbpf_registry *reg;
	struct gbpf_plugin *p, *chosen = NULL;
	const struct gbpf_device_info *devs;
	const char *why;
	uint32_t count;
	char tmpdir[] = "/tmp/gbpf-plugins-XXXXXX", path[4096], reason[512];
	int err;

	gbpf_set_print(silent);
	unsetenv("GBPF_BACKEND");
	if (!mkdtemp(tmpdir))
		return tap_ok(0, "mkdtemp: %s", strerror(errno)), tap_done();
	/* A file that looks like a plugin but is not a shared object. */
	snprintf(path, sizeof(path), "%s/libgbpf-broken.so", tmpdir);
	FILE *f = fopen(path, "w");
	if (f) {
		fputs("not an ELF file\n", f);
		fclose(f);
	}
	/* The stub directory twice, and the broken one: duplicates are skipped. */
	snprintf(path, sizeof(path), "%s:%s:%s", dir, dir, tmpdir);
	reg = open_registry(path);
	tap_ok(reg != NULL, "registry scans %s", path);
	if (!reg)
		return tap_done();

	tap_ok(gbpf_registry_plugin_count(reg) == 7, "7 plugin files found once each (got %zu)",
	       gbpf_registry_plugin_count(reg));

	p = gbpf_registry_find(reg, "stubgood");
	tap_ok(p && !gbpf_plugin__load_error(p), "good stub loads");
	tap_ok(p && gbpf_plugin__version(p) == GBPF_MAKE_VERSION(0, 7), "its own version is 0.7");
	err = p ? gbpf_plugin__devices(p, &devs, &count, &why) : -1;
	tap_ok(!err && count == 1 && strcmp(devs[0].name, "stub device") == 0 &&
		       devs[0].compute_units == 3,
	       "good stub lists its device");

	p = gbpf_registry_find(reg, "stubnewer");
	tap_ok(p && contains(gbpf_plugin__load_error(p), "ABI major"),
	       "plugin for a newer ABI major is refused: %s", p ? gbpf_plugin__load_error(p) : "?");
	tap_ok(p && gbpf_plugin__ops(p) == NULL, "refused plugin has no dispatch table");

	p = gbpf_registry_find(reg, "stubnoentry");
	tap_ok(p && contains(gbpf_plugin__load_error(p), "no entry symbol"),
	       "plugin without the entry symbol is refused");

	p = gbpf_registry_find(reg, "broken");
	tap_ok(p && contains(gbpf_plugin__load_error(p), "dlopen failed"),
	       "a non-ELF plugin file is reported, not fatal");

	p = gbpf_registry_find(reg, "stubnodev");
	err = p ? gbpf_plugin__devices(p, &devs, &count, &why) : 0;
	tap_ok(p && err == -ENODEV && contains(why, "runtime library not found"),
	       "a backend without its runtime says why it is unusable");

	p = gbpf_registry_find(reg, "stubnoquery");
	tap_ok(p && !gbpf_plugin__load_error(p), "plugin with NULL entries still loads");
	err = p ? gbpf_plugin__devices(p, &devs, &count, &why) : 0;
	tap_ok(err == -ENODEV && contains(why, "cannot list devices"),
	       "NULL query_devices means unsupported, never called");
	if (p) {
		struct gbpf_insn prog_insns[2] = {
			{.code = GBPF_ALU64 | GBPF_MOV | GBPF_K, .dst = 0, .imm = 0},
			{.code = GBPF_OP_EXIT},
		};
		struct gbpf_prog_desc prog = {.sz = sizeof(prog), .name = "t", .insns = prog_insns,
					      .insn_cnt = 2};
		GBPF_OPTS(gbpf_prog_run_opts, ro, .log = reason, .log_size = sizeof(reason));
		struct gbpf_prog_run_result rr = {.sz = sizeof(rr)};

		err = gbpf_plugin__run(p, &prog, &ro, &rr);
		tap_ok(err == -EOPNOTSUPP, "NULL prog_run: running is refused (%d: %s)", err, reason);
	}

	err = gbpf_registry_select(reg, NULL, &chosen, reason, sizeof(reason));
	tap_ok(!err && chosen && strcmp(gbpf_plugin__name(chosen), "stubgood") == 0,
	       "best usable backend is chosen by priority, unusable ones skipped (%s)",
	       chosen ? gbpf_plugin__name(chosen) : reason);

	setenv("GBPF_BACKEND", "stublow", 1);
	err = gbpf_registry_select(reg, NULL, &chosen, reason, sizeof(reason));
	tap_ok(!err && strcmp(gbpf_plugin__name(chosen), "stublow") == 0,
	       "GBPF_BACKEND selects by name");
	setenv("GBPF_BACKEND", "stubnewer", 1);
	err = gbpf_registry_select(reg, NULL, &chosen, reason, sizeof(reason));
	tap_ok(err == -GBPF_ERRNO__NOBACKEND && contains(reason, "failed to load"),
	       "selecting a refused plugin explains why: %s", reason);
	setenv("GBPF_BACKEND", "nosuch", 1);
	err = gbpf_registry_select(reg, NULL, &chosen, reason, sizeof(reason));
	tap_ok(err == -GBPF_ERRNO__NOBACKEND && contains(reason, "not found") &&
		       contains(reason, "stubgood"),
	       "unknown backend name lists what exists: %s", reason);
	err = gbpf_registry_select(reg, "stubgood", &chosen, reason, sizeof(reason));
	tap_ok(!err && strcmp(gbpf_plugin__name(chosen), "stubgood") == 0,
	       "an explicit name wins over GBPF_BACKEND");
	unsetenv("GBPF_BACKEND");

	p = gbpf_registry_find(reg, "stubgood");
	if (p) {
		struct gbpf_insn prog_insns[3] = {
			{.code = GBPF_ALU64 | GBPF_MOV | GBPF_K, .dst = 0, .imm = 7},
			{.code = GBPF_ALU64 | GBPF_ADD | GBPF_K, .dst = 0, .imm = 1},
			{.code = GBPF_OP_EXIT},
		};
		struct gbpf_prog_desc prog = {.sz = sizeof(prog), .name = "t", .insns = prog_insns,
					      .insn_cnt = 3};
		uint64_t r0[4] = {0};
		GBPF_OPTS(gbpf_prog_run_opts, ro, .threads = 4, .r0 = r0, .log = reason,
			  .log_size = sizeof(reason), .unverified = 1);
		struct gbpf_prog_run_result rr = {.sz = sizeof(rr)};

		err = gbpf_plugin__run(p, &prog, &ro, &rr);
		tap_ok(err == -EPERM && contains(reason, "not sandboxed"),
		       "unverified programs are refused on a backend that is not sandboxed");
		ro.unverified = 0;
		err = gbpf_plugin__run(p, &prog, &ro, &rr);
		tap_ok(!err && rr.r0 == 3 && r0[3] == 3 && rr.r0_uniform,
		       "verified program runs through the table (%d %s)", err, reason);
		struct gbpf_insn bad[2] = {
			{.code = GBPF_ALU64 | GBPF_MOV | GBPF_X, .dst = 0, .src = 5},
			{.code = GBPF_OP_EXIT},
		};
		prog.insns = bad;
		prog.insn_cnt = 2;
		err = gbpf_plugin__run(p, &prog, &ro, &rr);
		tap_ok(err == -GBPF_ERRNO__VERIFY && contains(reason, "instruction 0"),
		       "a program the verifier rejects never reaches the backend: %s", reason);
	}
	gbpf_registry_free(reg);
	snprintf(path, sizeof(path), "%s/libgbpf-broken.so", tmpdir);
	unlink(path);
	rmdir(tmpdir);
	return tap_done();
}
