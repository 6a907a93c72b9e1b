/* SPDX-License-Identifier: MIT */
/*
 * tests/intercept/test_apps.c - runs applications against the fake
 * libcuda.so.1 with the test agent preloaded and checks what the hooks and
 * the fake driver saw.
 *
 * usage: test_apps FAKE_DIR AGENT DIRECT_APP CUDART_LIKE_APP [NVCC_APP NVCC_SHARED_APP CUDA_LIB64]
 * (the nvcc apps are "" when nvcc was not found at configure time).
 */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/tap.h"

extern char **environ;

#define MAX_LOG (8u << 20)

struct run {
	int status;
	char *out;       /* app stdout+stderr */
	char *agent_log; /* test agent's log */
	char *fake_log;  /* fake driver's log */
};

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	size_t n;

	if (!f)
		return strdup("");
	buf = malloc(MAX_LOG + 1);
	if (!buf) {
		fclose(f);
		return NULL;
	}
	n = fread(buf, 1, MAX_LOG, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static void run_free(struct run *r)
{
	free(r->out);
	free(r->agent_log);
	free(r->fake_log);
}

/* Run @p app with the given LD_PRELOAD (NULL: none) and mode; 0 or -errno. */
static int run_app(const char *app, const char *fake_dir, const char *extra_lib_dir,
		   const char *preload, const char *mode, struct run *r)
{
	char dir[] = "/tmp/gbpf-icpt-XXXXXX";
	char out_path[64], alog[64], flog[64];
	char e_ld[4096], e_pre[4096], e_alog[128], e_flog[128], e_mode[64];
	char **envp;
	size_t n = 0, k = 0;
	posix_spawn_file_actions_t fa;
	char *argv[] = {(char *)app, NULL};
	pid_t pid;
	int err;

	memset(r, 0, sizeof(*r));
	if (!mkdtemp(dir))
		return -errno;
	snprintf(out_path, sizeof(out_path), "%s/out", dir);
	snprintf(alog, sizeof(alog), "%s/agent", dir);
	snprintf(flog, sizeof(flog), "%s/fake", dir);
	snprintf(e_ld, sizeof(e_ld), "LD_LIBRARY_PATH=%s%s%s", fake_dir, extra_lib_dir ? ":" : "",
		 extra_lib_dir ? extra_lib_dir : "");
	snprintf(e_pre, sizeof(e_pre), "LD_PRELOAD=%s", preload ? preload : "");
	snprintf(e_alog, sizeof(e_alog), "GBPF_TEST_AGENT_LOG=%s", alog);
	snprintf(e_flog, sizeof(e_flog), "GBPF_FAKE_CUDA_LOG=%s", flog);
	snprintf(e_mode, sizeof(e_mode), "GBPF_TEST_AGENT_REPLACE=%s", mode ? mode : "");
	while (environ[n])
		n++;
	envp = calloc(n + 6, sizeof(*envp));
	if (!envp)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], "LD_LIBRARY_PATH=", 16) && strncmp(environ[i], "LD_PRELOAD=", 11))
			envp[k++] = environ[i];
	envp[k++] = e_ld;
	envp[k++] = e_pre;
	envp[k++] = e_alog;
	envp[k++] = e_flog;
	envp[k++] = e_mode;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	posix_spawn_file_actions_adddup2(&fa, 1, 2);
	err = posix_spawn(&pid, app, &fa, NULL, argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	free(envp);
	if (err)
		return -err;
	if (waitpid(pid, &r->status, 0) < 0)
		return -errno;
	r->out = slurp(out_path);
	r->agent_log = slurp(alog);
	r->fake_log = slurp(flog);
	unlink(out_path);
	unlink(alog);
	unlink(flog);
	rmdir(dir);
	return r->out && r->agent_log && r->fake_log ? 0 : -ENOMEM;
}

static int has(const char *log, const char *needle)
{
	return log && strstr(log, needle) != NULL;
}

static int count(const char *log, const char *needle)
{
	int c = 0;

	for (const char *p = log; p && (p = strstr(p, needle)); p++)
		c++;
	return c;
}

static int exited_ok(const struct run *r)
{
	return WIFEXITED(r->status) && WEXITSTATUS(r->status) == 0;
}

static void test_direct(const char *fake, const char *agent, const char *app)
{
	struct run r;

	if (run_app(app, fake, NULL, agent, NULL, &r)) {
		tap_ok(0, "direct_driver: spawn %s", app);
		return;
	}
	tap_ok(exited_ok(&r) && has(r.out, "direct_driver ok"), "direct_driver runs under the agent (%s)",
	       r.out);
	tap_ok(has(r.agent_log, "image cuModuleLoadData ptx size="),
	       "direct_driver: module load seen as PTX");
	tap_ok(has(r.agent_log, "handle cuModuleGetFunction function name=scale"),
	       "direct_driver: function handle and its name seen");
	tap_ok(has(r.agent_log, "attr cuFuncSetAttribute attrib=8 value=65536"),
	       "direct_driver: cuFuncSetAttribute seen");
	tap_ok(has(r.agent_log, "launch cuLaunchKernelEx id=1 name=scale grid=8,2,1 block=128,1,1 "
				"shmem=1024 ptds=0 replaced=0"),
	       "direct_driver: cuLaunchKernelEx seen with grid/block/shmem");
	tap_ok(has(r.agent_log, "launch cuLaunchKernel id=2 name=scale grid=3,1,1 block=64,1,1"),
	       "direct_driver: cuLaunchKernel seen");
	tap_ok(has(r.agent_log, "call cuMemAlloc_v2 kind=3 bytes=256") &&
		       has(r.agent_log, "call cuMemcpyHtoD_v2 kind=1 bytes=256 dir=1") &&
		       has(r.agent_log, "call cuCtxSynchronize kind=4"),
	       "direct_driver: host calls (alloc, HtoD copy, sync) seen");
	tap_ok(has(r.fake_log, "launch cuLaunchKernelEx scale grid=8,2,1 block=128,1,1 shmem=1024"),
	       "direct_driver: the driver received the original launch");
	run_free(&r);

	/* Replacement: the driver must receive gbpf_replacement, attributes replayed first. */
	if (run_app(app, fake, NULL, agent, "ok", &r)) {
		tap_ok(0, "direct_driver replace: spawn");
		return;
	}
	tap_ok(exited_ok(&r), "direct_driver with replacement exits 0");
	tap_ok(has(r.fake_log, "launch cuLaunchKernelEx gbpf_replacement grid=8,2,1 block=128,1,1 "
			       "shmem=1024") &&
		       has(r.fake_log, "launch cuLaunchKernel gbpf_replacement grid=3,1,1") &&
		       !has(r.fake_log, "launch cuLaunchKernelEx scale"),
	       "replacement: the driver received the replacement function, same launch config");
	tap_ok(has(r.fake_log, "cuFuncSetAttribute gbpf_replacement attr=8 value=65536") &&
		       has(r.agent_log, "replay 1 "),
	       "replacement: max dynamic shared memory replayed on the replacement");
	tap_ok(has(r.agent_log, "launch cuLaunchKernelEx id=1 name=scale grid=8,2,1 block=128,1,1 "
				"shmem=1024 ptds=0 replaced=1"),
	       "replacement: launch_post reports replaced=1");
	tap_ok(!has(r.fake_log, "cuCtxSynchronize\ncuStreamSynchronize") &&
		       count(r.fake_log, "cuCtxSynchronize") == 1,
	       "replacement: no synchronisation added (one cuCtxSynchronize, the app's)");
	run_free(&r);

	/* A replacement with a hidden trailing parameter: appended after the app's, app's intact. */
	setenv("GBPF_FAKE_XPARAM", "1", 1);
	if (run_app(app, fake, NULL, agent, "param", &r)) {
		tap_ok(0, "direct_driver param: spawn");
		return;
	}
	unsetenv("GBPF_FAKE_XPARAM");
	tap_ok(exited_ok(&r) && count(r.fake_log, "hidden=0xabc") == 2 &&
		       has(r.fake_log, "xparam cuLaunchKernelEx arg0=") &&
		       has(r.fake_log, "xparam cuLaunchKernel arg0="),
	       "hidden parameter: cuLaunchKernelEx and cuLaunchKernel pass the app's parameter then 0xabc");
	run_free(&r);

	/* Failing hook: original launch untouched. */
	if (run_app(app, fake, NULL, agent, "fail", &r)) {
		tap_ok(0, "direct_driver fail: spawn");
		return;
	}
	tap_ok(exited_ok(&r) &&
		       has(r.fake_log, "launch cuLaunchKernelEx scale grid=8,2,1 block=128,1,1 shmem=1024") &&
		       !has(r.fake_log, "launch cuLaunchKernelEx gbpf_replacement"),
	       "failing hook: the original launch proceeds untouched");
	tap_ok(has(r.agent_log, "replaced=0 replacement_result=0 result=0"),
	       "failing hook: launch_post reports replaced=0");
	run_free(&r);

	/* Replacement refused by the driver: the original is launched after it. */
	if (run_app(app, fake, NULL, agent, "reject", &r)) {
		tap_ok(0, "direct_driver reject: spawn");
		return;
	}
	tap_ok(exited_ok(&r) && has(r.fake_log, "rejected cuLaunchKernelEx gbpf_reject") &&
		       has(r.fake_log, "launch cuLaunchKernelEx scale grid=8,2,1"),
	       "refused replacement: the original is launched instead, app succeeds");
	tap_ok(has(r.agent_log, "replaced=0 replacement_result=701 result=0"),
	       "refused replacement: launch_post reports the replacement's error");
	run_free(&r);
}

static void test_cudart_like(const char *fake, const char *agent, const char *app)
{
	struct run r;

	if (run_app(app, fake, NULL, agent, NULL, &r)) {
		tap_ok(0, "cudart_like: spawn %s", app);
		return;
	}
	tap_ok(exited_ok(&r) && has(r.out, "cudart_like ok"), "cudart_like runs under the agent (%s)",
	       r.out);
	tap_ok(has(r.agent_log, "query cuGetProcAddress_v2 0 0 wrapped"),
	       "cudart_like: dlsym(cuGetProcAddress_v2) wrapped");
	tap_ok(has(r.agent_log, "query cuGetProcAddress 12000 0 wrapped") &&
		       has(r.agent_log, "query cuLaunchKernel 7000 2 wrapped"),
	       "cudart_like: lookups through the wrapped cuGetProcAddress are wrapped");
	tap_ok(has(r.agent_log, "image cuLibraryLoadData wrapper size=24 fatbin_size=80"),
	       "cudart_like: cuLibraryLoadData seen with the fatbin wrapper (and its container)");
	tap_ok(has(r.agent_log, "handle cuLibraryGetKernel kernel name=_Z7vec_addPKfS0_Pfi"),
	       "cudart_like: kernel handle and mangled name seen");
	tap_ok(has(r.agent_log, "attr cuKernelSetAttribute attrib=8 value=70000"),
	       "cudart_like: cuKernelSetAttribute seen");
	tap_ok(has(r.agent_log, "launch cuLaunchKernel_ptsz id=1 name=_Z7vec_addPKfS0_Pfi "
				"grid=4,1,1 block=256,1,1 shmem=0 ptds=1"),
	       "cudart_like: per-thread-stream launch of a CUkernel seen with grid/block");
	tap_ok(has(r.agent_log, "call cuMemcpyHtoD_v2_ptds kind=1 bytes=64 dir=1 async=0 ptds=1") &&
		       has(r.agent_log, "call cuStreamSynchronize_ptsz kind=4"),
	       "cudart_like: ptds copy and stream sync seen");
	tap_ok(has(r.fake_log, "launch cuLaunchKernel_ptsz _Z7vec_addPKfS0_Pfi grid=4,1,1"),
	       "cudart_like: the driver's ptsz entry point received the launch");
	run_free(&r);

	if (run_app(app, fake, NULL, agent, "ok", &r)) {
		tap_ok(0, "cudart_like replace: spawn");
		return;
	}
	tap_ok(exited_ok(&r) &&
		       has(r.fake_log, "launch cuLaunchKernel_ptsz gbpf_replacement grid=4,1,1") &&
		       has(r.fake_log, "cuFuncSetAttribute gbpf_replacement attr=8 value=70000"),
	       "cudart_like: replacement launched on the ptsz entry point, kernel attribute replayed");
	run_free(&r);
}

static void test_nvcc(const char *label, const char *fake, const char *agent, const char *app,
		      const char *lib64)
{
	struct run plain, r;

	if (!app || !*app || access(app, X_OK) != 0) {
		tap_skip("%s: app not built (nvcc not found at configure time)", label);
		return;
	}
	if (run_app(app, fake, lib64, NULL, NULL, &plain) || run_app(app, fake, lib64, agent, NULL, &r)) {
		tap_ok(0, "%s: spawn", label);
		return;
	}
	/* one diagnostic line per line of output: TAP has no multi-line comments */
	for (const char *l = plain.out; l && *l;) {
		const char *nl = strchr(l, '\n');
		int len = nl ? (int)(nl - l) : (int)strlen(l);

		tap_diag("%s output without agent: %.*s", label, len, l);
		l += len + (nl != NULL);
	}
	tap_ok(strcmp(plain.out, r.out) == 0 && plain.status == r.status,
	       "%s: same output and status with and without the agent", label);
	tap_ok(count(r.agent_log, "query cuGetProcAddress_v2 0 0 wrapped") == 1,
	       "%s: cudart's single dlsym(cuGetProcAddress_v2) was wrapped", label);
	tap_ok(has(r.agent_log, "query cuGetProcAddress 12000 0 wrapped") &&
		       has(r.agent_log, "query cuInit 2000 0 passthrough"),
	       "%s: cudart's first queries went through our cuGetProcAddress", label);
	tap_ok(has(r.agent_log, "query cuLaunchKernel 4000 0 wrapped") &&
		       has(r.agent_log, "query cuLaunchKernel 7000 2 wrapped") &&
		       has(r.agent_log, "query cuLibraryLoadData 12000 0 wrapped") &&
		       has(r.agent_log, "query cuLibraryGetKernel 12000 0 wrapped") &&
		       has(r.agent_log, "query cuMemAlloc 3020 0 wrapped"),
	       "%s: launch, library and allocation entry points handed out wrapped", label);
	/* Every lookup the driver answered, plus the dlsym, reached the hooks. */
	tap_ok(count(r.fake_log, "gpa ") >= 400 &&
		       count(r.agent_log, "query ") == count(r.fake_log, " found\n") + 1,
	       "%s: every answered driver lookup seen (%d of %d queries answered)", label,
	       count(r.agent_log, "query "), count(r.fake_log, "gpa "));
	tap_ok(has(r.fake_log, "cuInit 0"), "%s: cudart initialised the (fake) driver", label);
	run_free(&plain);
	run_free(&r);
}

/* Whether the line of @p text that starts with @p prefix contains @p needle. */
static int line_has(const char *text, const char *prefix, const char *needle)
{
	const char *l = text ? strstr(text, prefix) : NULL;
	const char *end, *hit;

	if (!l || (l != text && l[-1] != '\n'))
		return 0;
	end = strchr(l, '\n');
	hit = strstr(l, needle);
	return hit && (!end || hit < end);
}

/*
 * A tool's injection library (compute-sanitizer's, CUPTI's) gets the
 * driver's own entry points from dlsym; the application gets the agent's.
 */
static void test_tool_lookup(const char *fake, const char *agent, const char *app)
{
	char libdir[4096];
	const char *slash = strrchr(app, '/');
	struct run r;

	snprintf(libdir, sizeof(libdir), "%.*s", slash ? (int)(slash - app) : 1, slash ? app : ".");
	if (run_app(app, fake, libdir, agent, NULL, &r)) {
		tap_ok(0, "tool_lookup: spawn %s", app);
		return;
	}
	tap_ok(exited_ok(&r) && has(r.out, "tool_lookup ok"), "tool_lookup runs under the agent (%s)", r.out);
	tap_ok(line_has(r.out, "tool cuGetProcAddress_v2 ", "libcuda") &&
		       line_has(r.out, "tool cuLaunchKernel ", "libcuda"),
	       "tool_lookup: the tool library's dlsym gets the driver's own entry points");
	tap_ok(line_has(r.out, "app cuLaunchKernel ", "gbpf_test_agent") &&
		       line_has(r.out, "app cuGetProcAddress_v2 ", "gbpf_test_agent"),
	       "tool_lookup: the application's lookups stay wrapped");
	tap_ok(has(r.out, "next 2\n"),
	       "tool_lookup: dlsym(RTLD_NEXT) from a loaded library finds the next library's definition");
	run_free(&r);
}

int main(int argc, char **argv)
{
	if (argc < 6) {
		tap_skip("usage: test_apps FAKE_DIR AGENT DIRECT CUDART_LIKE TOOL_LOOKUP [NVCC NVCC_SHARED LIB64]");
		return tap_done();
	}
	test_direct(argv[1], argv[2], argv[3]);
	test_cudart_like(argv[1], argv[2], argv[4]);
	test_tool_lookup(argv[1], argv[2], argv[5]);
	test_nvcc("nvcc default (static cudart)", argv[1], argv[2], argc > 6 ? argv[6] : NULL,
		  NULL);
	test_nvcc("nvcc -cudart=shared", argv[1], argv[2], argc > 7 ? argv[7] : NULL,
		  argc > 8 ? argv[8] : NULL);
	return tap_done();
}
