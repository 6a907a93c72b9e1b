/* SPDX-License-Identifier: MIT */
/*
 * tests/opencl/test_opencl_cli.c - the opencl backend through the gbpf
 * command (plugin dlopen'ed by the command, nothing preloaded): backend
 * listing and detection, prog run against the cpu backend, the ISA
 * conformance suite, codegen --target spirv and prog inject into a .spv
 * file, both re-assembled and validated with SPIRV-Tools' CLIs.
 *
 * Args: gbpf, plugin folder, examples build folder, saxpy.spv, conformance
 *       folder, spirv-as, spirv-val (empty when not installed), folder of
 *       the feature-probe objects (hashprobe.bpf.o).
 */
#include <unistd.h>

#include "ocl_test_util.h"

static const char *gbpf, *plugin_dir, *examples, *spv, *conf, *spirv_as, *spirv_val, *progs;
static char dir[] = "/tmp/gbpf-ocl-cli-XXXXXX";
static struct cmd_out o;

#define GBPF "GBPF_PLUGIN_PATH='%s' '%s'"

static void test_backends(void)
{
	ocl_run(dir, &o, GBPF " backends", plugin_dir, gbpf);
	tap_ok(o.status == 0 && strstr(o.out, "opencl") != NULL, "gbpf backends lists opencl");
	tap_ok(strstr(o.out, "can: prog-run codegen inject intercept targets=spirv") != NULL,
	       "opencl: prog-run codegen inject intercept, target spirv");
	tap_ok(strstr(o.out, "device 0:") != NULL && strstr(o.out, "spirv64") != NULL,
	       "opencl: a device is listed (PoCL on this machine)");
	/* no GPU here: cuda is unusable, so opencl (priority 50) wins over cpu (0) */
	if (strstr(o.out, "sm_"))
		tap_skip("a CUDA GPU is present: the detected backend is cuda");
	else
		tap_ok(strstr(o.out, "selected: opencl") != NULL, "detected backend is opencl without a GPU");
	if (o.status || !strstr(o.out, "selected: opencl"))
		ocl_diag("out", o.out, 30);
	ocl_run(dir, &o, "GBPF_LIBOPENCL=/nonexistent/libOpenCL.so.1 " GBPF " backends", plugin_dir, gbpf);
	tap_ok(strstr(o.out, "cannot load the ICD loader /nonexistent/libOpenCL.so.1") != NULL,
	       "no ICD loader: opencl says why it is unusable");
}

static void test_prog_run(void)
{
	char cpu[4096];

	ocl_run(dir, &o, GBPF " prog run --backend cpu --threads 64 '%s/vec_add.bpf.o'", plugin_dir, gbpf,
		examples);
	/* the first line holds the run time */
	snprintf(cpu, sizeof(cpu), "%s", strchr(o.out, '\n') ? strchr(o.out, '\n') : "");
	ocl_run(dir, &o, GBPF " prog run --backend opencl --threads 64 '%s/vec_add.bpf.o'", plugin_dir, gbpf,
		examples);
	tap_ok(o.status == 0 && cpu[0] && strchr(o.out, '\n') && !strcmp(strchr(o.out, '\n'), cpu),
	       "prog run vec_add on opencl == on cpu (r0 of 64 work-items)");
	if (o.status || !strchr(o.out, '\n') || strcmp(strchr(o.out, '\n'), cpu)) {
		ocl_diag("opencl", o.out, 10);
		ocl_diag("opencl err", o.err, 10);
		ocl_diag("cpu", cpu, 10);
	}
	/* a device hash map: 64 work-items, one insert wins, the others count into it */
	ocl_run(dir, &o, GBPF " prog run --backend opencl --threads 64 '%s/hashprobe.bpf.o'", plugin_dir, gbpf, progs);
	tap_ok(o.status == 0 && strstr(o.out, "key 5: 64") != NULL,
	       "prog run of a hash map program on 64 work-items: key 5 counts 64 (as on cpu)");
	if (!strstr(o.out, "key 5: 64")) {
		ocl_diag("out", o.out, 10);
		ocl_diag("err", o.err, 5);
	}
	ocl_run(dir, &o, GBPF " -j prog run --backend opencl --threads 4096 '%s/threadhist.bpf.o'", plugin_dir,
		gbpf, examples);
	tap_ok(o.status == 0, "prog run threadhist on 4096 work-items");
	if (o.status)
		ocl_diag("err", o.err, 10);
}

static void test_conformance(void)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/add.data", conf);
	if (access(path, R_OK)) {
		tap_skip("conformance suite not found at %s (../shared/conformance)", conf);
		return;
	}
	ocl_run(dir, &o, GBPF " conformance --backend opencl '%s'", plugin_dir, gbpf, conf);
	tap_ok(o.status == 0 && strstr(o.out, "313 passed, 0 failed") != NULL,
	       "conformance on opencl: 313 passed, 0 failed");
	if (!strstr(o.out, "313 passed, 0 failed")) {
		const char *p = o.out;
		int n = 0;

		while ((p = strstr(p, "FAIL ")) && n++ < 20) {
			const char *e = strchr(p, '\n');

			tap_diag("%.*s", e ? (int)(e - p) : 200, p);
			p += 5;
		}
		ocl_diag("tail", o.out + (strlen(o.out) > 200 ? strlen(o.out) - 200 : 0), 5);
	}
}

/*
 * Re-assemble SPIR-V text and validate it as gbpf_spirv_validate does: for
 * OpenCL 1.2, or 2.0 where the module needs generic pointers; a module with
 * 64-bit atomics (cl_khr_int64_*_atomics, which spirv-val's OpenCL
 * environments do not know) passes the universal environment as it is and
 * the OpenCL one without that capability line. 1 when valid.
 */
static int valid_spirv_text(const char *text_path, const char *what)
{
	const char *env;
	int int64_atomics;

	if (!spirv_as[0] || !spirv_val[0]) {
		tap_skip("%s: spirv-as / spirv-val not installed", what);
		return -1;
	}
	ocl_slurp(text_path, o.out, sizeof(o.out));
	env = strstr(o.out, "OpCapability GenericPointer") ? "opencl2.0" : "opencl1.2";
	int64_atomics = strstr(o.out, "OpCapability Int64Atomics") != NULL;
	ocl_run(dir, &o, "'%s' --target-env spv1.0 '%s' -o '%s/m.spv' && '%s' --target-env spv1.0 '%s/m.spv'",
		spirv_as, text_path, dir, spirv_val, dir);
	if (o.status) {
		ocl_diag("spirv-val", o.err, 10);
		return tap_ok(0, "%s: spirv-val --target-env spv1.0 accepts it", what);
	}
	ocl_run(dir, &o,
		"grep -v 'OpCapability Int64Atomics' '%s' > '%s/m2.spvasm' && "
		"'%s' --target-env spv1.0 '%s/m2.spvasm' -o '%s/m2.spv' && '%s' --target-env %s '%s/m2.spv'",
		text_path, dir, spirv_as, dir, dir, spirv_val, env, dir);
	/* without the capability, the only error allowed is the one about it */
	if (o.status && !(int64_atomics && strstr(o.err, "require the Int64Atomics capability")))
		ocl_diag("spirv-val", o.err, 10);
	return tap_ok(!o.status || (int64_atomics && strstr(o.err, "require the Int64Atomics capability")),
		      "%s: spirv-as + spirv-val accept it (universal 1.0, then %s%s)", what, env,
		      int64_atomics ? " without the Int64Atomics line" : "");
}

static void test_codegen(void)
{
	static const char *const probes[] = {"threadhist", "kernelretsnoop", "mem_trace", "launchlate",
					     "cuda_counter", "vec_add"};
	char path[4200];

	for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s.spvasm", dir, probes[i]);
		ocl_run(dir, &o, GBPF " prog codegen --target spirv '%s/%s.bpf.o' > '%s'", plugin_dir, gbpf,
			examples, probes[i], path);
		ocl_slurp(path, o.out, sizeof(o.out));
		tap_ok(o.status == 0 && strstr(o.out, "OpCapability Kernel") &&
			       strstr(o.out, "OpMemoryModel Physical64 OpenCL"),
		       "codegen --target spirv %s: Kernel capability, Physical64 OpenCL", probes[i]);
		if (o.status)
			ocl_diag("err", o.err, 5);
		else
			valid_spirv_text(path, probes[i]);
	}
}

static void test_inject(void)
{
	char path[4200];

	if (access(spv, R_OK)) {
		tap_skip("%s not built (clang-15 / llvm-spirv-15 missing)", spv);
		return;
	}
	ocl_run(dir, &o, GBPF " prog inject --backend opencl '%s/kernelretsnoop.bpf.o' --into '%s' -o '%s/inj'",
		plugin_dir, gbpf, examples, spv, dir);
	tap_ok(o.status == 0 && strstr(o.err, "kernel saxpy (") && strstr(o.err, "instrumented: 0 entry, ") &&
		       !strstr(o.err, "instrumented: 0 entry, 0 exit"),
	       "prog inject kernelretsnoop into saxpy.spv: saxpy instrumented at its exits");
	if (o.status)
		ocl_diag("err", o.err, 10);
	snprintf(path, sizeof(path), "%s/inj/module0.ptx", dir);
	if (access(path, R_OK) == 0)
		valid_spirv_text(path, "instrumented saxpy.spv");
	else
		tap_ok(0, "prog inject -o wrote %s", path);
	ocl_run(dir, &o, GBPF " prog inject --backend opencl '%s/mem_trace.bpf.o' --into '%s'", plugin_dir, gbpf,
		examples, spv);
	tap_ok(o.status == 0 && strstr(o.err, "kernel saxpy (") && !strstr(o.err, "0 memory"),
	       "prog inject mem_trace into saxpy.spv: memory sites instrumented");
	tap_ok(strstr(o.out, "OpEntryPoint Kernel") != NULL, "inject prints the instrumented module's disassembly");
	ocl_run(dir, &o, GBPF " prog inject --backend opencl '%s/threadhist.bpf.o' --into '%s/vec_add.bpf.o'",
		plugin_dir, gbpf, examples, examples);
	tap_ok(o.status != 0 && strstr(o.err, "neither a SPIR-V module") != NULL,
	       "prog inject into a non-SPIR-V file fails with a reason");
}

int main(int argc, char **argv)
{
	if (argc < 9) {
		fprintf(stderr, "usage: %s GBPF PLUGIN_DIR EXAMPLES SAXPY_SPV CONFORMANCE SPIRV_AS SPIRV_VAL PROGS\n",
			argv[0]);
		return 2;
	}
	gbpf = argv[1];
	plugin_dir = argv[2];
	examples = argv[3];
	spv = argv[4];
	conf = argv[5];
	spirv_as = argv[6];
	spirv_val = argv[7];
	progs = argv[8];
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 2;
	}
	test_backends();
	test_prog_run();
	test_conformance();
	test_codegen();
	test_inject();
	ocl_run(dir, &o, "rm -rf '%s'", dir);
	return tap_done();
}
