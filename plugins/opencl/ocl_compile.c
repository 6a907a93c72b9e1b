/* SPDX-License-Identifier: MIT */
#include "ocl_compile.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/** Largest SPIR-V module or tool log we read back. */
#define OCL_COMPILE_OUT_MAX ((size_t)64 << 20)
#define OCL_MAX_ARGS 64

extern char **environ;

int ocl_looks_like_source(const void *text, size_t size)
{
	const unsigned char *t = text;
	size_t i;

	if (!size)
		return 0;
	for (i = 0; i < size && i < 4096; i++)
		if (t[i] == 0 || (t[i] < 0x20 && t[i] != '\n' && t[i] != '\r' && t[i] != '\t'))
			return 0;
	return memmem(text, size, "kernel", 6) != NULL;
}

/*
 * The environment of our children without the preload and the agent socket:
 * the compilers are not part of the application and must neither load the
 * agent nor connect to the controller.
 */
static char **clean_environ(void)
{
	size_t n = 0, k = 0;
	char **env;

	while (environ && environ[n])
		n++;
	env = calloc(n + 1, sizeof(*env));
	if (!env)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], "LD_PRELOAD=", 11) && strncmp(environ[i], "GBPF_AGENT_SOCK=", 16))
			env[k++] = environ[i];
	return env;
}

/* Read a whole file, at most OCL_COMPILE_OUT_MAX bytes. */
static int read_all(const char *path, char **buf, size_t *size)
{
	FILE *f = fopen(path, "rb");
	long len;

	if (!f)
		return -errno;
	if (fseek(f, 0, SEEK_END) || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
		fclose(f);
		return -EIO;
	}
	if ((size_t)len > OCL_COMPILE_OUT_MAX) {
		fclose(f);
		return -E2BIG;
	}
	*buf = malloc((size_t)len + 1);
	if (!*buf) {
		fclose(f);
		return -ENOMEM;
	}
	if (fread(*buf, 1, (size_t)len, f) != (size_t)len) {
		free(*buf);
		*buf = NULL;
		fclose(f);
		return -EIO;
	}
	(*buf)[len] = 0;
	*size = (size_t)len;
	fclose(f);
	return 0;
}

/* Run argv[0] (found in PATH) with stdout and stderr into @p out_path; 0 or the reason in log. */
static int run_tool(char *const argv[], const char *out_path, char *log, size_t log_size)
{
	posix_spawn_file_actions_t fa;
	char **env = clean_environ();
	pid_t pid;
	int rc, status = 0;

	if (!env)
		return -ENOMEM;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	posix_spawn_file_actions_adddup2(&fa, 1, 2);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, env);
	posix_spawn_file_actions_destroy(&fa);
	free(env);
	if (rc) {
		snprintf(log, log_size, "cannot run %s: %s", argv[0], strerror(rc));
		return rc == ENOENT ? -ENOENT : -rc;
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			snprintf(log, log_size, "waiting for %s: %s", argv[0], strerror(errno));
			return -errno;
		}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		char *msg = NULL;
		size_t len = 0;

		read_all(out_path, &msg, &len);
		snprintf(log, log_size, "%s failed (%s %d): %.1500s", argv[0],
			 WIFEXITED(status) ? "exit status" : "signal",
			 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), msg ? msg : "");
		free(msg);
		/* posix_spawnp of a missing tool may report it as exit status 127. */
		return WIFEXITED(status) && WEXITSTATUS(status) == 127 ? -ENOENT : -EPROTO;
	}
	return 0;
}

/* Split @p options and keep those clang understands as OpenCL build options. */
static size_t add_options(char *copy, char **argv, size_t argc)
{
	char *save = NULL, *tok;
	int take_next = 0;

	for (tok = copy ? strtok_r(copy, " \t\n", &save) : NULL; tok && argc < OCL_MAX_ARGS - 8;
	     tok = strtok_r(NULL, " \t\n", &save)) {
		if (take_next) {
			argv[argc++] = tok;
			take_next = 0;
		} else if (!strcmp(tok, "-D") || !strcmp(tok, "-I")) {
			argv[argc++] = tok;
			take_next = 1;
		} else if (!strncmp(tok, "-D", 2) || !strncmp(tok, "-I", 2) || !strncmp(tok, "-cl-", 4) ||
			   !strcmp(tok, "-w") || !strcmp(tok, "-Werror")) {
			argv[argc++] = tok;
		}
	}
	return argc;
}

static void rm_dir(const char *dir, const char *const *files, size_t n)
{
	char path[4200];

	for (size_t i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		unlink(path);
	}
	rmdir(dir);
}

int ocl_compile_source(const char *src, size_t size, const char *options, uint32_t **words,
		       size_t *nwords, char *log, size_t log_size)
{
	static const char *const files[] = {"k.cl", "k.bc", "k.spv", "log"};
	const char *clang = getenv("GBPF_CLANG_CL"), *spirv = getenv("GBPF_LLVM_SPIRV");
	const char *tmp = getenv("TMPDIR");
	char dir[4096], cl[4200], bc[4200], spv[4200], lg[4200], *argv[OCL_MAX_ARGS], *opt_copy = NULL;
	char *out = NULL, tool_log[2048] = "";
	size_t argc = 0, len = 0;
	int has_std = 0, rc;
	FILE *f;

	*words = NULL;
	*nwords = 0;
	snprintf(dir, sizeof(dir), "%s/gbpf-ocl-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		snprintf(log, log_size, "cannot create a temporary folder in %s: %s", tmp ? tmp : "/tmp",
			 strerror(errno));
		return -errno;
	}
	snprintf(cl, sizeof(cl), "%s/k.cl", dir);
	snprintf(bc, sizeof(bc), "%s/k.bc", dir);
	snprintf(spv, sizeof(spv), "%s/k.spv", dir);
	snprintf(lg, sizeof(lg), "%s/log", dir);
	f = fopen(cl, "wb");
	if (!f || fwrite(src, 1, size, f) != size) {
		if (f)
			fclose(f);
		snprintf(log, log_size, "cannot write %s", cl);
		rc = -EIO;
		goto out;
	}
	fclose(f);
	if (options) {
		opt_copy = strdup(options);
		if (!opt_copy) {
			rc = -ENOMEM;
			goto out;
		}
		has_std = strstr(options, "-cl-std=") != NULL;
	}
	argv[argc++] = (char *)(clang && *clang ? clang : "clang-15");
	if (!has_std)
		argv[argc++] = (char *)"-cl-std=CL1.2";
	argv[argc++] = (char *)"-target";
	argv[argc++] = (char *)"spir64";
	argv[argc++] = (char *)"-O2";
	argc = add_options(opt_copy, argv, argc);
	argv[argc++] = (char *)"-emit-llvm";
	argv[argc++] = (char *)"-c";
	argv[argc++] = cl;
	argv[argc++] = (char *)"-o";
	argv[argc++] = bc;
	argv[argc] = NULL;
	rc = run_tool(argv, lg, tool_log, sizeof(tool_log));
	if (rc) {
		snprintf(log, log_size, "OpenCL C to LLVM: %s", tool_log);
		goto out;
	}
	argc = 0;
	argv[argc++] = (char *)(spirv && *spirv ? spirv : "llvm-spirv-15");
	argv[argc++] = (char *)"--spirv-max-version=1.0";
	argv[argc++] = bc;
	argv[argc++] = (char *)"-o";
	argv[argc++] = spv;
	argv[argc] = NULL;
	rc = run_tool(argv, lg, tool_log, sizeof(tool_log));
	if (rc) {
		snprintf(log, log_size, "LLVM to SPIR-V: %s", tool_log);
		goto out;
	}
	rc = read_all(spv, &out, &len);
	if (rc || len < 20 || len % 4) {
		snprintf(log, log_size, "%s: unreadable or not a SPIR-V module (%zu bytes)", spv, len);
		rc = rc ? rc : -EPROTO;
		goto out;
	}
	*words = (uint32_t *)(void *)out; /* malloc'ed: aligned for any type */
	*nwords = len / 4;
	out = NULL;
out:
	free(out);
	free(opt_copy);
	rm_dir(dir, files, sizeof(files) / sizeof(files[0]));
	return rc;
}
