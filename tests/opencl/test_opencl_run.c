/* SPDX-License-Identifier: MIT */
/*
 * tests/opencl/test_opencl_run.c - `gbpf run` with the opencl backend on
 * the example OpenCL apps (examples/apps/opencl) running on PoCL: the real
 * controller, the real agent and the opencl plugin preloaded into the app.
 *
 * Every check compares with what the app itself does: its output line is
 * identical with and without gbpf; exit probes fire once per work-item;
 * memory probes once per access the kernel makes; launch probes once per
 * launch; a kernel that cannot be instrumented (GBPF_OPENCL_FAULT) runs as
 * the app's own, with a report.
 *
 * Args: BUILD_ROOT MODE. MODE "native": this build; "sibling": the gcc
 *       release build scripts/test.sh makes beside a sanitizer build
 *       (preloading sanitized libraries into PoCL's linker child fails).
 */
#include <stdint.h>
#include <unistd.h>

#include "ocl_test_util.h"
#include "print_check.h"

static char gbpf[4096], ex[4096], apps[4096], progs[4096];
/* Device features of plugins/spirv this run can count on (probed first). */
static int have_hash, have_ring;
static char dir[] = "/tmp/gbpf-ocl-run-XXXXXX";
static struct cmd_out o, plain;

/*
 * The app's own result line (from @p prefix to the end of its line) of
 * @p out, or "". The app and the controller share stdout, and the
 * controller's buffered JSON may be flushed in pieces around the app's
 * line: the line is found anywhere and cut out of @p out, which rejoins
 * the JSON it split.
 */
static const char *app_line(char *out, const char *prefix, char *buf, size_t size)
{
	char *p = strstr(out, prefix), *e;

	buf[0] = 0;
	if (!p)
		return buf;
	e = strchr(p, '\n');
	snprintf(buf, size, "%.*s", e ? (int)(e - p) : (int)strlen(p), p);
	if (e)
		memmove(p, e + 1, strlen(e + 1) + 1);
	else
		*p = 0;
	return buf;
}

/* gbpf -j run PROBE -- APP ARGS, with extra environment. */
static int gbpf_run(const char *env, const char *probe, const char *app, const char *args)
{
	return ocl_run(dir, &o, "env %s '%s' -j run --backend opencl '%s/%s.bpf.o' -- '%s/%s' %s", env, gbpf, ex,
		       probe, apps, app, args);
}

/* Sum of the values of array map @p name ({"type":"maps",...}); 0 when not printed (all zero). */
static uint64_t array_total(const char *out, const char *name)
{
	char key[128];
	const char *p, *end;
	uint64_t total = 0;

	snprintf(key, sizeof(key), "\"name\":\"%s\"", name);
	p = strstr(out, key);
	if (!p) {
		/* a map printed as a log2 histogram: "NAME":[{"min":..,"max":..,"count":N},...] */
		snprintf(key, sizeof(key), "\"%s\":[", name);
		p = strstr(out, key);
		if (!p)
			return 0;
		end = strchr(p, ']');
		for (; (p = strstr(p, "\"count\":")) && (!end || p < end); p += 8)
			total += strtoull(p + 8, NULL, 10);
		return total;
	}
	end = strchr(p, ']');
	for (; (p = strstr(p, "\"value\":")) && (!end || p < end); p += 8)
		total += strtoull(p + 8, NULL, 10);
	return total;
}

/* Value of "KEY":N inside the JSON object of hash map @p name ({"type":"map",...}); UINT64_MAX if absent. */
static uint64_t map_value(const char *out, const char *name, const char *key)
{
	char k[256];
	const char *p, *end;

	snprintf(k, sizeof(k), "\"%s\":{", name);
	p = strstr(out, k);
	if (!p)
		return UINT64_MAX;
	end = strchr(p, '}');
	snprintf(k, sizeof(k), "\"%s\":", key);
	p = strstr(p, k);
	if (!p || (end && p > end))
		return UINT64_MAX;
	return strtoull(p + strlen(k), NULL, 10);
}

/* Slot 0 of element 0 of the per-GPU-thread array @p name ({"type":"maps",...}); 0 if not printed. */
static uint64_t thread_array_value(const char *out, const char *name)
{
	char k[256];
	const char *p, *v;

	snprintf(k, sizeof(k), "\"name\":\"%s\"", name);
	p = strstr(out, k);
	if (!p)
		return 0; /* the controller prints non-empty maps only */
	v = strstr(p, "{\"key\":0,\"slot\":0,\"value\":");
	return v ? strtoull(v + strlen("{\"key\":0,\"slot\":0,\"value\":"), NULL, 10) : 0;
}

static int instrumented(const char *kernel)
{
	char k[256];

	snprintf(k, sizeof(k), "kernel %s: instrumented", kernel);
	return strstr(o.err, k) != NULL;
}

static void show(void)
{
	ocl_diag("out", o.out, 30);
	ocl_diag("err", o.err, 30);
}

static void test_plain(const char *app, const char *args, const char *prefix, char *line, size_t size)
{
	ocl_run(dir, &plain, "'%s/%s' %s", apps, app, args);
	app_line(plain.out, prefix, line, size);
	tap_ok(plain.status == 0 && (strstr(line, " errors=0") || strstr(line, " ok")),
	       "%s runs correctly without gbpf: %s", app, line);
}

static void test_vecadd(void)
{
	char base[512], got[512];
	uint64_t v;

	test_plain("ocl_vecadd", "'" OCL_SRC "/examples/apps/opencl/vecadd.cl' 4096", "vecadd:", base,
		   sizeof(base));

	gbpf_run("", "threadhist", "ocl_vecadd", "'" OCL_SRC "/examples/apps/opencl/vecadd.cl' 4096");
	app_line(o.out, "vecadd:", got, sizeof(got));
	tap_ok(o.status == 0 && base[0] && !strcmp(base, got), "threadhist: vecadd output unchanged");
	tap_ok(instrumented("vecadd"), "threadhist: kernel vecadd instrumented");
	v = thread_array_value(o.out, "thread_exits");
	tap_ok(v == 4096, "threadhist: thread_exits == 4096 work-items (got %llu)", (unsigned long long)v);
	if (o.status || v != 4096)
		show();

	gbpf_run("", "kernelretsnoop", "ocl_vecadd", "'" OCL_SRC "/examples/apps/opencl/vecadd.cl' 4096");
	app_line(o.out, "vecadd:", got, sizeof(got));
	{
		int records = ocl_count(o.out, "\"type\":\"event\",\"map\":\"events\"");
		uint64_t nlost = lost_events_total(o.out, "events");

		tap_ok(o.status == 0 && !strcmp(base, got), "kernelretsnoop: vecadd output unchanged");
		if (!have_ring)
			tap_skip("kernelretsnoop records: plugins/spirv's device ring buffer reserve fails (feature probe)");
		else
			tap_ok(records + nlost == 4096, "kernelretsnoop: records %d + lost %llu == 4096 work-items",
			       records, (unsigned long long)nlost);
		if (have_ring && records + nlost != 4096)
			show();
	}

	/*
	 * The distance histogram with the last address thread-local: 2 distances a work-item of one
	 * launch (its 3 accesses), counted from zero in each work-item
	 */
	ocl_run(dir, &o, "'%s' -j run --backend opencl '%s/tlstride.bpf.o' -- '%s/ocl_vecadd' '" OCL_SRC
		"/examples/apps/opencl/vecadd.cl' 4096", gbpf, progs, apps);
	app_line(o.out, "vecadd:", got, sizeof(got));
	tap_ok(o.status == 0 && !strcmp(base, got) && instrumented("vecadd") &&
		       array_total(o.out, "stride") == 2 * 4096,
	       "thread-local last address: vecadd instrumented, output unchanged, 8192 distances (got %llu)",
	       (unsigned long long)array_total(o.out, "stride"));

	/* one thread-local map shared by an entry and an exit program: each work-item finds its own */
	ocl_run(dir, &o, "'%s' -j run --backend opencl '%s/tlsentryexit.bpf.o' -- '%s/ocl_vecadd' '" OCL_SRC
		"/examples/apps/opencl/vecadd.cl' 4096", gbpf, progs, apps);
	tap_ok(o.status == 0 && instrumented("vecadd") && strstr(o.out, "{\"key\":0,\"value\":4096}") &&
		       strstr(o.out, "{\"key\":1,\"value\":4096}"),
	       "thread-local value from entry to exit: all 4096 work-items start at zero and find their own");
	if (!strstr(o.out, "{\"key\":0,\"value\":4096}"))
		show();

	gbpf_run("", "mem_trace", "ocl_vecadd", "'" OCL_SRC "/examples/apps/opencl/vecadd.cl' 4096");
	app_line(o.out, "vecadd:", got, sizeof(got));
	tap_ok(o.status == 0 && !strcmp(base, got), "mem_trace: vecadd output unchanged");
	tap_ok(instrumented("vecadd"), "mem_trace: kernel vecadd instrumented");
	/* c[i] = a[i] + b[i] for 4096 work-items: 2 x 4096 global 4-byte loads, 4096 stores */
	{
		const char *p = strstr(o.out, "\"accesses\":{");
		uint64_t loads = 0, stores = 0;

		/* keys: kind, space, size, pad as 16 bytes of hex (little endian u32s) */
		if (!have_hash) {
			tap_skip("mem_trace access counts: plugins/spirv's device hash update fails (feature probe)");
			return;
		}
		loads = map_value(o.out, "accesses", "01000000010000000400000000000000");
		stores = map_value(o.out, "accesses", "02000000010000000400000000000000");
		tap_ok(p && loads == 2 * 4096, "mem_trace: global 4-byte loads == 8192 (got %llu)",
		       (unsigned long long)loads);
		tap_ok(p && stores == 4096, "mem_trace: global 4-byte stores == 4096 (got %llu)",
		       (unsigned long long)stores);
		if (loads != 8192 || stores != 4096)
			show();
	}
}

static void test_faults(void)
{
	char base[512], got[512];
	uint64_t v;

	test_plain("ocl_vecadd", "'" OCL_SRC "/examples/apps/opencl/vecadd.cl' 4096", "vecadd:", base,
		   sizeof(base));
	gbpf_run("GBPF_OPENCL_FAULT=build", "threadhist", "ocl_vecadd",
		 "'" OCL_SRC "/examples/apps/opencl/vecadd.cl' 4096");
	app_line(o.out, "vecadd:", got, sizeof(got));
	tap_ok(o.status == 0 && !strcmp(base, got), "forced build failure: vecadd output unchanged");
	tap_ok(strstr(o.err, "not instrumented: kernel vecadd: build of the instrumented program failed: forced") !=
		       NULL,
	       "forced build failure: reported as not instrumented, with the reason");
	v = thread_array_value(o.out, "thread_exits");
	tap_ok(v == 0, "forced build failure: no probe ran (thread_exits %llu)", (unsigned long long)v);
	if (!strstr(o.err, "not instrumented: kernel vecadd"))
		show();
	gbpf_run("GBPF_OPENCL_FAULT=launch", "threadhist", "ocl_vecadd",
		 "'" OCL_SRC "/examples/apps/opencl/vecadd.cl' 4096");
	app_line(o.out, "vecadd:", got, sizeof(got));
	tap_ok(o.status == 0 && !strcmp(base, got) && strstr(o.err, "error: kernel vecadd: launch of the instrumented"),
	       "forced launch failure: the original kernel ran, error reported");
}

static void test_multikernel(void)
{
	char base[512], got[512], args[512];

	snprintf(args, sizeof(args), "'%s/examples/apps/opencl/multikernel.cl' 1024 3", OCL_SRC);
	test_plain("ocl_multikernel", args, "multikernel:", base, sizeof(base));

	gbpf_run("", "launchlate", "ocl_multikernel", args);
	app_line(o.out, "multikernel:", got, sizeof(got));
	tap_ok(o.status == 0 && base[0] && !strcmp(base, got), "launchlate: multikernel output unchanged");
	tap_ok(instrumented("scale") && instrumented("shift") && instrumented("square_sum"),
	       "launchlate: the three kernels instrumented");
	if (!have_hash) {
		tap_skip("launchlate latencies: plugins/spirv's device hash lookup fails (feature probe)");
	} else {
		tap_ok(array_total(o.out, "usecs") == 7, "launchlate: one latency per launch (7, got %llu)",
		       (unsigned long long)array_total(o.out, "usecs"));
		if (array_total(o.out, "usecs") != 7)
			show();
	}
	/* the host side alone: one launch_time entry per launch, ids 1..7 (none deleted without device hashes) */
	tap_ok(have_hash || (map_value(o.out, "launch_time", "1") != UINT64_MAX &&
			     map_value(o.out, "launch_time", "7") != UINT64_MAX),
	       "launchlate: host/launch ran at each of the 7 launches");

	gbpf_run("", "threadhist", "ocl_multikernel", args);
	app_line(o.out, "multikernel:", got, sizeof(got));
	tap_ok(o.status == 0 && !strcmp(base, got), "threadhist: multikernel output unchanged");
	tap_ok(thread_array_value(o.out, "thread_exits") == 7 * 1024,
	       "threadhist: thread_exits == 7 launches x 1024 work-items (got %llu)",
	       (unsigned long long)thread_array_value(o.out, "thread_exits"));

	gbpf_run("", "kernelretsnoop", "ocl_multikernel", args);
	app_line(o.out, "multikernel:", got, sizeof(got));
	{
		int records = ocl_count(o.out, "\"type\":\"event\",\"map\":\"events\"");
		uint64_t nlost = lost_events_total(o.out, "events");

		tap_ok(o.status == 0 && !strcmp(base, got), "kernelretsnoop: multikernel output unchanged");
		if (have_ring)
			tap_ok(records + nlost == 7 * 1024,
			       "kernelretsnoop: records %d + lost %llu == 7 launches x 1024 work-items", records,
			       (unsigned long long)nlost);
		else
			tap_skip("kernelretsnoop records: plugins/spirv's device ring buffer reserve fails (feature probe)");
	}

	gbpf_run("", "cuda_counter", "ocl_multikernel", args);
	app_line(o.out, "multikernel:", got, sizeof(got));
	tap_ok(o.status == 0 && !strcmp(base, got), "cuda-counter: multikernel output unchanged");
	tap_ok(instrumented("scale"), "cuda-counter: kernels instrumented");
	if (o.status)
		show();
}

static void test_spvapp(void)
{
	char line[512], spv[4200];

	snprintf(spv, sizeof(spv), "%s/saxpy.spv", apps);
	if (access(spv, R_OK)) {
		tap_skip("saxpy.spv not built (clang-15 / llvm-spirv-15 missing)");
		return;
	}
	ocl_run(dir, &plain, "'%s/ocl_spvapp' '%s' 2048", apps, spv);
	app_line(plain.out, "spvapp:", line, sizeof(line));
	tap_ok((plain.status == 2 && strstr(line, "no SPIR-V IL support")) ||
		       (plain.status == 0 && strstr(line, "errors=0")),
	       "spvapp without gbpf: %s", line);
	ocl_run(dir, &o, "'%s' -j run --backend opencl '%s/threadhist.bpf.o' -- '%s/ocl_spvapp' '%s' 2048", gbpf,
		ex, apps, spv);
	app_line(o.out, "spvapp:", line, sizeof(line));
	tap_ok(o.status == 0 && strstr(line, "work-items=2048 errors=0"), "spvapp under gbpf runs correctly: %s",
	       line);
	tap_ok(instrumented("saxpy") && thread_array_value(o.out, "thread_exits") == 2048,
	       "spvapp: SPIR-V kernel saxpy instrumented, thread_exits == 2048");
	if (o.status || !instrumented("saxpy"))
		show();
}

/*
 * trace_printk / puts from device code: `gbpf prog run` prints every
 * work-item's line once, formatted as the interpreter formats it; under
 * `gbpf run` every exit of every work-item of an example app prints its
 * line exactly once (printk only: see printprobe.bpf.c), and with a tiny device queue (GBPF_PRINTQ_SLOTS=16)
 * lines delivered + lines reported lost == lines printed.
 */
static void test_print(void)
{
	char args[512], cpu_line[256];
	struct print_check pc;
	int ok, bad = 0, puts;

	/* the cpu backend (the interpreter) gives the expected text of work-item 0 */
	ocl_run(dir, &o, "'%s' prog run --backend cpu '%s/printrun.bpf.o' 2>&1", gbpf, progs);
	snprintf(cpu_line, sizeof(cpu_line), "%s", strstr(o.out, "gbpf-run tid=0 ") ? strstr(o.out, "gbpf-run tid=0 ") : "");
	if (strchr(cpu_line, '\n'))
		*strchr(cpu_line, '\n') = 0;
	/* (the interpreter adds no newline: puts' line follows on the same line there) */
	tap_ok(!strncmp(cpu_line, "gbpf-run tid=0 neg=-1 pct=%", 27), "prog run on cpu prints '%.27s'", cpu_line);

	ocl_run(dir, &o, "'%s' prog run --backend opencl --threads 256 '%s/printrun.bpf.o'", gbpf, progs);
	for (unsigned t = 0; t < 256; t++) {
		char want[128];

		snprintf(want, sizeof(want), "gbpf-run tid=%u neg=%d pct=%%\n", t, -(int)t - 1);
		bad += ocl_count(o.out, want) != 1;
	}
	puts = ocl_count(o.out, "gbpf-run puts\n");
	ok = tap_ok(o.status == 0 && !bad && puts == 1,
		    "prog run --backend opencl: 256 work-items' printk lines each once (%d wrong), puts once (%d)", bad,
		    puts);
	/* r0 = bytes of the format queued, as the PTX backend returns */
	ok &= tap_ok(strstr(o.out, "r0 = 31 (") != NULL, "prog run --backend opencl: trace_printk returned 31 (format bytes)");
	if (!ok)
		show();

	snprintf(args, sizeof(args), "'%s/examples/apps/opencl/vecadd.cl' 4096", OCL_SRC);
	ocl_run(dir, &o, "'%s' run --backend opencl '%s/printprobe.bpf.o' -- '%s/ocl_vecadd' %s", gbpf, progs, apps,
		args);
	print_check(o.out, 4096, &pc);
	pc.lost += print_check_lost(o.err);
	ok = tap_ok(o.status == 0 && pc.launches == 1 && pc.lines == 4096 && !pc.dups && !pc.missing &&
			    !pc.malformed && !pc.lost,
		    "gbpf run vecadd: 4096 work-items' lines each exactly once (lines %llu, dups %llu, missing %llu, "
		    "malformed %llu, lost %llu)",
		    (unsigned long long)pc.lines, (unsigned long long)pc.dups, (unsigned long long)pc.missing,
		    (unsigned long long)pc.malformed, (unsigned long long)pc.lost);
	if (!ok)
		show();

	snprintf(args, sizeof(args), "'%s/examples/apps/opencl/multikernel.cl' 1024 3", OCL_SRC);
	ocl_run(dir, &o, "'%s' -j run --backend opencl '%s/printprobe.bpf.o' -- '%s/ocl_multikernel' %s", gbpf,
		progs, apps, args);
	print_check(o.out, 1024, &pc);
	pc.lost += print_check_lost(o.err);
	ok = tap_ok(o.status == 0 && pc.launches == 7 && pc.lines == 7 * 1024 && !pc.dups && !pc.missing &&
			    !pc.malformed && !pc.lost,
		    "gbpf -j run multikernel: 7 launches x 1024 lines each once (launches %u, lines %llu, "
		    "dups %llu, missing %llu, lost %llu)",
		    pc.launches, (unsigned long long)pc.lines, (unsigned long long)pc.dups,
		    (unsigned long long)pc.missing, (unsigned long long)pc.lost);
	ok &= tap_ok(ocl_count(o.out, "\"type\":\"printf\"") == 7 * 1024,
		     "gbpf -j run multikernel: every line is a JSON printf record");
	if (!ok)
		show();

	/* a 16-record queue cannot hold a launch: every line is delivered or counted lost */
	snprintf(args, sizeof(args), "'%s/examples/apps/opencl/vecadd.cl' 4096", OCL_SRC);
	ocl_run(dir, &o, "env GBPF_PRINTQ_SLOTS=16 '%s' run --backend opencl '%s/printprobe.bpf.o' -- '%s/ocl_vecadd' %s",
		gbpf, progs, apps, args);
	print_check(o.out, 4096, &pc);
	pc.lost += print_check_lost(o.err);
	ok = tap_ok(o.status == 0 && !pc.dups && !pc.malformed && pc.lost > 0 &&
			    pc.lines + pc.lost == 4096,
		    "16-record queue: delivered %llu + reported lost %llu == 4096 lines printed",
		    (unsigned long long)pc.lines, (unsigned long long)pc.lost);
	if (!ok)
		show();
}

/* r0 of a feature-probe program run on the opencl backend, or -1. */
static long probe_r0(const char *name)
{
	const char *p;

	ocl_run(dir, &o, "'%s' prog run --backend opencl '%s/%s.bpf.o'", gbpf, progs, name);
	p = strstr(o.out, "r0 = ");
	return o.status == 0 && p ? strtol(p + 5, NULL, 10) : -1;
}

static void probe_features(void)
{
	long r;

	r = probe_r0("hashprobe");
	have_hash = r == 3;
	tap_diag("device hash maps: %s (hashprobe r0 = %ld)", have_hash ? "yes" : "NO", r);
	r = probe_r0("ringprobe");
	have_ring = r == 1;
	tap_diag("device ring buffers: %s (ringprobe r0 = %ld)", have_ring ? "yes" : "NO", r);
}

int main(int argc, char **argv)
{
	const char *root;
	char path[4200];

	if (argc < 4) {
		fprintf(stderr, "usage: %s BUILD_ROOT native|sibling PROGS_DIR\n", argv[0]);
		return 2;
	}
	root = argv[1];
	snprintf(gbpf, sizeof(gbpf), "%s/tools/gbpf", root);
	snprintf(ex, sizeof(ex), "%s/examples", root);
	snprintf(apps, sizeof(apps), "%s/examples/apps/opencl", root);
	snprintf(progs, sizeof(progs), "%s", argv[3]);
	snprintf(path, sizeof(path), "%s/ocl_vecadd", apps);
	if (access(gbpf, X_OK) || access(path, X_OK)) {
		tap_skip("%s build %s has no gbpf or OpenCL apps (a sanitizer build runs this test on the "
			 "non-sanitized <build>-gcc that scripts/test.sh makes)",
			 argv[2], root);
		return tap_done();
	}
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 2;
	}
	probe_features();
	test_vecadd();
	test_faults();
	test_multikernel();
	test_spvapp();
	test_print();
	ocl_run(dir, &o, "rm -rf '%s'", dir);
	return tap_done();
}
