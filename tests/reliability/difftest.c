/* SPDX-License-Identifier: MIT */
/*
 * tests/reliability/difftest.c - differential testing: random verified
 * programs (difftest_gen.c) run on the reference interpreter and on every
 * backend libgbpf finds; r0 and the contents of both maps must be
 * identical. A mismatch is shrunk (blocks left out while it persists) and
 * printed as assembler text with the two results.
 *
 *   gbpf-difftest [--seed S] [--count N] [--backend NAME]... [--verbose]
 *                 [--shrink N] [--asm FILE]
 *
 * --shrink N: shrink and print only the first N mismatches (default 5; the
 * others are listed by seed, each re-runs with --seed S --count 1).
 * --asm FILE: run that one program (a reproducer as printed, maps as above)
 * instead of generated ones.
 *
 * Output is TAP (one check per backend and a summary line starting with
 * "# difftest:"). Without --backend every loaded backend that can run
 * programs and reports a device is used; a named backend that is absent or
 * has no device is a failure (the device scripts rely on that).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gbpf/asm.h>
#include <gbpf/backend.h>
#include <gbpf/maps.h>
#include <gbpf/verifier.h>

#include "core/interp/interp.h"
#include "difftest_gen.h"
#include "tap.h"

#define MAX_BACKENDS 8

/* What one run produced: r0 and the observable map contents. */
struct outcome {
	int err;
	char why[256];
	uint64_t r0;
	uint64_t arr[DT_ARRAY_ENTRIES];
	uint64_t hash[DT_KEY_SPAN];
	uint8_t present[DT_KEY_SPAN];
};

struct backend {
	struct gbpf_plugin *plugin;
	unsigned ran, mismatches, errors;
};

static void prog_desc(struct gbpf_prog_desc *d, const struct dt_prog *p)
{
	memset(d, 0, sizeof(*d));
	d->sz = sizeof(*d);
	d->name = "difftest";
	d->insns = p->insns;
	d->insn_cnt = p->n;
	d->maps = dt_maps;
	d->map_cnt = 2;
	d->source_file = "<difftest>";
}

static void snapshot(struct gbpf_map_instance *maps, struct outcome *o)
{
	for (uint32_t k = 0; k < DT_ARRAY_ENTRIES; k++) {
		uint64_t *v = gbpf_map__lookup(&maps[DT_MAP_ARRAY], &k, 0);

		o->arr[k] = v ? *v : 0xdeadull;
	}
	for (uint32_t k = 0; k < DT_KEY_SPAN; k++) {
		uint64_t *v = gbpf_map__lookup(&maps[DT_MAP_HASH], &k, 0);

		o->present[k] = v != NULL;
		o->hash[k] = v ? *v : 0;
	}
}

static int verify(const struct gbpf_prog_desc *d, char *why, size_t size)
{
	struct gbpf_verify_result res = {.sz = sizeof(res)};
	int err = gbpf_verify(d, NULL, &res);

	if (err)
		snprintf(why, size, "verifier: instruction %lld: %s", (long long)res.error_insn,
			 res.reason);
	return err;
}

/* The reference: the bounds-checked interpreter on host maps. */
static void run_interp(const struct gbpf_prog_desc *d, uint64_t threads, struct outcome *o)
{
	struct gbpf_map_instance *maps = NULL;
	struct gbpf_interp *ip = NULL;
	GBPF_OPTS(gbpf_interp_opts, io, .bounds_checked = 1, .max_insns = 10000000);

	memset(o, 0, sizeof(*o));
	o->err = gbpf_plugin__maps_create(NULL, d, threads, &maps, o->why, sizeof(o->why));
	if (o->err)
		return;
	o->err = gbpf_interp_create(d, maps, d->map_cnt, &io, &ip, o->why, sizeof(o->why));
	for (uint64_t t = 0; !o->err && t < threads; t++) {
		struct gbpf_exec_env env = {.maps = maps, .map_cnt = d->map_cnt, .thread_id = t,
					    .thread_count = threads};
		struct gbpf_interp_result res = {0};

		o->err = gbpf_interp_run(ip, &env, NULL, NULL, 0, &res, o->why, sizeof(o->why));
		if (t == 0)
			o->r0 = res.r0;
	}
	if (!o->err)
		snapshot(maps, o);
	gbpf_interp_destroy(ip);
	gbpf_maps__destroy(maps, d->map_cnt);
}

static void run_backend(struct gbpf_plugin *pl, const struct gbpf_prog_desc *d, uint64_t threads,
			struct outcome *o)
{
	struct gbpf_map_instance *maps = NULL;
	struct gbpf_prog_run_result res = {.sz = sizeof(res)};

	memset(o, 0, sizeof(*o));
	o->err = gbpf_plugin__maps_create(pl, d, threads, &maps, o->why, sizeof(o->why));
	if (o->err)
		return;
	GBPF_OPTS(gbpf_prog_run_opts, ro, .threads = threads, .maps = maps, .log = o->why,
		  .log_size = sizeof(o->why));
	o->err = gbpf_plugin__run(pl, d, &ro, &res);
	if (!o->err) {
		o->r0 = res.r0;
		snapshot(maps, o);
	}
	gbpf_maps__destroy(maps, d->map_cnt);
}

/*
 * The differences between two outcomes, as text ("" when equal): r0 and the
 * first differing entry of each map, so that one reproducer run tells whether
 * a wrong r0 came with wrong map contents (a store to the wrong place) or not.
 */
static void diff(const struct outcome *a, const struct outcome *b, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = 0;
	if (a->err != b->err) {
		snprintf(buf, size, "error %d (%.200s) vs %d (%.200s)", a->err, a->why, b->err, b->why);
		return;
	}
	if (a->err)
		return;
	if (a->r0 != b->r0)
		len += (size_t)snprintf(buf + len, size - len, "r0 0x%" PRIx64 " vs 0x%" PRIx64,
					a->r0, b->r0);
	for (int k = 0; k < DT_ARRAY_ENTRIES && len < size; k++)
		if (a->arr[k] != b->arr[k]) {
			len += (size_t)snprintf(buf + len, size - len, "%sarr[%d] 0x%" PRIx64
						" vs 0x%" PRIx64, len ? "; " : "", k, a->arr[k],
						b->arr[k]);
			break;
		}
	for (int k = 0; k < DT_KEY_SPAN && len < size; k++)
		if (a->present[k] != b->present[k] || a->hash[k] != b->hash[k]) {
			snprintf(buf + len, size - len, "%shash[%d] %s0x%" PRIx64 " vs %s0x%" PRIx64,
				 len ? "; " : "", k, a->present[k] ? "" : "absent ", a->hash[k],
				 b->present[k] ? "" : "absent ", b->hash[k]);
			break;
		}
}

/* 1 when the program of (seed, mask) verifies and still differs on @p pl. */
static int still_differs(struct gbpf_plugin *pl, uint64_t seed, uint64_t mask, uint64_t threads,
			 struct dt_prog *p)
{
	struct gbpf_prog_desc d;
	struct outcome ref, got;
	char why[256], buf[512];

	dt_generate(p, seed, mask);
	prog_desc(&d, p);
	if (verify(&d, why, sizeof(why)))
		return 0;
	run_interp(&d, threads, &ref);
	run_backend(pl, &d, threads, &got);
	diff(&ref, &got, buf, sizeof(buf));
	return buf[0] != 0;
}

/* Leave out blocks one at a time while the mismatch persists; print the rest. */
static void report_mismatch(struct gbpf_plugin *pl, uint64_t seed, uint64_t threads,
			    const char *first)
{
	static struct dt_prog p;
	struct gbpf_prog_desc d;
	struct outcome ref, got;
	uint64_t mask = 0;
	char buf[512], *text = NULL;
	unsigned blocks;

	dt_generate(&p, seed, 0);
	blocks = p.blocks;
	for (unsigned b = 0; b < blocks; b++)
		if (still_differs(pl, seed, mask | (1ull << b), threads, &p))
			mask |= 1ull << b;
	dt_generate(&p, seed, mask);
	prog_desc(&d, &p);
	run_interp(&d, threads, &ref);
	run_backend(pl, &d, threads, &got);
	diff(&ref, &got, buf, sizeof(buf));
	tap_ok(0, "seed %" PRIu64 ": %s differs from the interpreter: %s", seed,
	       gbpf_plugin__name(pl), first);
	tap_diag("reproducer (seed %" PRIu64 ", blocks left out 0x%" PRIx64 ", %zu slots): "
		 "interpreter vs %s: %s", seed, mask, p.n, gbpf_plugin__name(pl), buf);
	tap_diag("maps: 0 = array arr (key u32, value u64, %d entries), "
		 "1 = hash hash (key u32, value u64, %d entries); threads %" PRIu64,
		 DT_ARRAY_ENTRIES, DT_HASH_ENTRIES, threads);
	if (gbpf_disasm(p.insns, p.n, &text) == 0) {
		for (char *l = strtok(text, "\n"); l; l = strtok(NULL, "\n"))
			printf("#   %s\n", l);
	}
	free(text);
}

static int usable(struct gbpf_plugin *pl, const char **why)
{
	const struct gbpf_backend_caps *caps = gbpf_plugin__caps(pl);
	const struct gbpf_device_info *devs;
	uint32_t n = 0;

	*why = gbpf_plugin__load_error(pl);
	if (*why)
		return 0;
	if (!caps || !(caps->flags & GBPF_CAP_PROG_RUN)) {
		*why = "cannot run programs";
		return 0;
	}
	if (gbpf_plugin__devices(pl, &devs, &n, why) || n == 0) {
		if (!*why)
			*why = "no device";
		return 0;
	}
	return 1;
}

/* Assemble @p path into @p prog (the reproducer of a mismatch). */
static int load_asm(const char *path, struct dt_prog *prog)
{
	struct gbpf_insn *insns = NULL;
	char err[256], *text;
	size_t n = 0;
	long len;
	FILE *f = fopen(path, "r");
	int rc;

	if (!f)
		return -errno;
	if (fseek(f, 0, SEEK_END) || (len = ftell(f)) < 0 || len > (1 << 20) || fseek(f, 0, SEEK_SET)) {
		fclose(f);
		return -EFBIG;
	}
	text = calloc(1, (size_t)len + 1);
	if (!text || fread(text, 1, (size_t)len, f) != (size_t)len) {
		free(text);
		fclose(f);
		return -EIO;
	}
	fclose(f);
	/* reproducers are printed as TAP comments: "#   insn" lines are read as instructions */
	for (char *p = text; *p; p++)
		if ((p == text || p[-1] == '\n') && !strncmp(p, "#   ", 4))
			*p = ' ';
	rc = gbpf_asm(text, &insns, &n, err, sizeof(err));
	free(text);
	if (rc || n > DT_MAX_INSNS) {
		fprintf(stderr, "%s: %s\n", path, rc ? err : "too long");
		free(insns);
		return rc ? rc : -E2BIG;
	}
	memset(prog, 0, sizeof(*prog));
	memcpy(prog->insns, insns, n * sizeof(*insns));
	prog->n = n;
	free(insns);
	return 0;
}

/*
 * LeakSanitizer (the test command's builds): PoCL and the LLVM it compiles
 * with keep allocations until exit when the opencl backend runs; they are
 * not ours (their frames stop in libstdc++'s operator new).
 */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "leak:libpocl\nleak:libLLVM\nleak:libOpenCL\nleak:libstdc++\nleak:<unknown module>\n";
}

int main(int argc, char **argv)
{
	static struct dt_prog prog;
	const char *asm_path = NULL;
	unsigned shrink_left = 5;
	const char *names[MAX_BACKENDS];
	struct backend be[MAX_BACKENDS];
	size_t nnames = 0, nbe = 0;
	/*
	 * One instance per run: with several, plain stores and NOEXIST updates
	 * race and the final maps legitimately depend on the schedule.
	 */
	const uint64_t threads = 1;
	uint64_t seed = 1, count = 200;
	unsigned rejected = 0, interp_err = 0, total_mismatch = 0;
	struct gbpf_registry *reg = NULL;
	int quiet_ok = 1;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--seed") && v)
			seed = strtoull(v, NULL, 0), i++;
		else if (!strcmp(a, "--count") && v)
			count = strtoull(v, NULL, 0), i++;
		else if ((!strcmp(a, "--backend") || !strcmp(a, "-b")) && v && nnames < MAX_BACKENDS)
			names[nnames++] = v, i++;
		else if (!strcmp(a, "--verbose"))
			quiet_ok = 0;
		else if (!strcmp(a, "--shrink") && v)
			shrink_left = (unsigned)strtoul(v, NULL, 0), i++;
		else if (!strcmp(a, "--asm") && v)
			asm_path = v, i++, count = 1;
		else {
			fprintf(stderr, "usage: %s [--seed S] [--count N] [--backend NAME]... "
					"[--verbose] [--shrink N] [--asm FILE]\n", argv[0]);
			return 2;
		}
	}
	if (gbpf_registry_new(NULL, &reg)) {
		tap_ok(0, "plugin registry: %s", strerror(errno));
		return tap_done();
	}
	if (nnames) {
		for (size_t i = 0; i < nnames; i++) {
			struct gbpf_plugin *pl = gbpf_registry_find(reg, names[i]);
			const char *why = "not found";

			if (!pl || !usable(pl, &why)) {
				tap_ok(0, "backend %s usable: %s", names[i], why ? why : "?");
				continue;
			}
			be[nbe++] = (struct backend){.plugin = pl};
		}
	} else {
		for (size_t i = 0; i < gbpf_registry_plugin_count(reg) && nbe < MAX_BACKENDS; i++) {
			struct gbpf_plugin *pl = gbpf_registry_plugin(reg, i);
			const char *why;

			if (usable(pl, &why))
				be[nbe++] = (struct backend){.plugin = pl};
			else
				tap_diag("backend %s skipped: %s", gbpf_plugin__name(pl),
					 why ? why : "?");
		}
	}
	if (!nbe) {
		if (!nnames)
			tap_skip("no usable backend found");
		gbpf_registry_free(reg);
		return tap_done();
	}

	for (uint64_t s = seed; s < seed + count; s++) {
		struct gbpf_prog_desc d;
		struct outcome ref;
		char why[256];

		if (asm_path) {
			int rc = load_asm(asm_path, &prog);

			if (rc) {
				tap_ok(0, "%s: cannot read the program: %s", asm_path, strerror(-rc));
				break;
			}
			quiet_ok = 0;
		} else {
			dt_generate(&prog, s, 0);
		}
		prog_desc(&d, &prog);
		if (verify(&d, why, sizeof(why))) {
			/* the generator's contract is "always verifiable": every rejection is shown */
			rejected++;
			tap_diag("seed %" PRIu64 ": generated program rejected: %s", s, why);
			continue;
		}
		run_interp(&d, threads, &ref);
		if (ref.err) {
			/* a verified program that faults in the checked interpreter: verifier bug */
			char *text = NULL;

			interp_err++;
			tap_ok(0, "seed %" PRIu64 ": verified program fails in the interpreter: %s", s,
			       ref.why);
			if (gbpf_disasm(prog.insns, prog.n, &text) == 0)
				tap_diag("program:\n%s", text);
			free(text);
			continue;
		}
		for (size_t b = 0; b < nbe; b++) {
			struct outcome got;
			char buf[512];

			run_backend(be[b].plugin, &d, threads, &got);
			be[b].ran++;
			if (got.err)
				be[b].errors++;
			diff(&ref, &got, buf, sizeof(buf));
			if (buf[0]) {
				be[b].mismatches++;
				total_mismatch++;
				if (asm_path || !shrink_left)
					tap_ok(0, "seed %" PRIu64 ": %s differs from the interpreter: %s",
					       s, gbpf_plugin__name(be[b].plugin), buf);
				else
					report_mismatch(be[b].plugin, s, threads, buf), shrink_left--;
			} else if (!quiet_ok) {
				tap_ok(1, "seed %" PRIu64 ": %s r0 0x%" PRIx64 " (interpreter 0x%" PRIx64
				       ", %s)", s, gbpf_plugin__name(be[b].plugin), got.r0, ref.r0,
				       got.err ? got.why : "maps equal");
			}
		}
	}
	tap_ok(rejected <= count / 100,
	       "generator: %u of %" PRIu64 " programs rejected by the verifier (at most 1%%)",
	       rejected, count);
	tap_ok(interp_err == 0, "every verified program runs in the checked interpreter (%u failed)",
	       interp_err);
	for (size_t b = 0; b < nbe; b++)
		tap_ok(be[b].mismatches == 0,
		       "%s: %u programs (seeds %" PRIu64 "..%" PRIu64 ", %" PRIu64
		       " threads) identical to the interpreter: %u mismatches (%u errors)",
		       gbpf_plugin__name(be[b].plugin), be[b].ran, seed, seed + count - 1, threads,
		       be[b].mismatches, be[b].errors);
	printf("# difftest: %" PRIu64 " programs x %zu backends:", count - rejected - interp_err, nbe);
	for (size_t b = 0; b < nbe; b++)
		printf(" %s %u/%u", gbpf_plugin__name(be[b].plugin), be[b].ran - be[b].mismatches,
		       be[b].ran);
	printf("; %u mismatches, %u rejected\n", total_mismatch, rejected);
	gbpf_registry_free(reg);
	return tap_done();
}
