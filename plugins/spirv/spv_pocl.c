/* SPDX-License-Identifier: MIT */
/*
 * plugins/spirv/spv_pocl.c - SPIR-V to LLVM bitcode with llvm-spirv -r,
 * for OpenCL implementations without IL support (PoCL 3.1 answers
 * clCreateProgramWithIL with -30).
 *
 * The translator runs as a child process (fork + execv, no shell) on files
 * of a private mkdtemp directory that is removed afterwards.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "spv_internal.h"

/* Largest bitcode accepted back from the translator. */
#define SPV_MAX_BITCODE (256u << 20)

static int find_in_path(const char *name, char *out, size_t size)
{
	const char *path = getenv("PATH");
	char *dup, *dir, *save = NULL;
	int found = 0;

	if (!path)
		path = "/usr/bin:/bin";
	dup = strdup(path);
	if (!dup)
		return 0;
	for (dir = strtok_r(dup, ":", &save); dir && !found; dir = strtok_r(NULL, ":", &save)) {
		snprintf(out, size, "%s/%s", *dir ? dir : ".", name);
		if (access(out, X_OK) == 0)
			found = 1;
	}
	free(dup);
	return found;
}

/* GBPF_LLVM_SPIRV, then llvm-spirv-15, then llvm-spirv on PATH. */
static int find_translator(char *out, size_t size)
{
	const char *env = getenv("GBPF_LLVM_SPIRV");

	if (env && *env) {
		snprintf(out, size, "%s", env);
		return access(out, X_OK) == 0;
	}
	return find_in_path("llvm-spirv-15", out, size) || find_in_path("llvm-spirv", out, size);
}

static int write_all(const char *path, const void *buf, size_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	const char *p = buf;

	if (fd < 0)
		return -errno;
	while (size) {
		ssize_t w = write(fd, p, size);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			close(fd);
			return -EIO;
		}
		p += w;
		size -= (size_t)w;
	}
	return close(fd) ? -EIO : 0;
}

static int read_all(const char *path, void **buf, size_t *size, size_t max)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	char *p;
	size_t got = 0;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || st.st_size <= 0 || (uint64_t)st.st_size > max) {
		close(fd);
		return -EIO;
	}
	p = malloc((size_t)st.st_size);
	if (!p) {
		close(fd);
		return -ENOMEM;
	}
	while (got < (size_t)st.st_size) {
		ssize_t r = read(fd, p + got, (size_t)st.st_size - got);

		if (r <= 0) {
			if (r < 0 && errno == EINTR)
				continue;
			free(p);
			close(fd);
			return -EIO;
		}
		got += (size_t)r;
	}
	close(fd);
	*buf = p;
	*size = got;
	return 0;
}

int gbpf_spirv_to_pocl(const uint32_t *words, size_t count, void **bitcode, size_t *size,
		       char *err, size_t err_size)
{
	char tool[512], dir[] = "/tmp/gbpf-spirv-XXXXXX", in[64], out[64], logp[64];
	char *argv[7];
	pid_t pid;
	int status = 0, rc, logfd;

	if (err && err_size)
		err[0] = 0;
	if (!words || count < 5 || !bitcode || !size)
		return -EINVAL;
	if (!find_translator(tool, sizeof(tool))) {
		snprintf(err, err_size,
			 "spirv: llvm-spirv not found (set GBPF_LLVM_SPIRV or install llvm-spirv-15): "
			 "PoCL needs SPIR-V turned into LLVM bitcode");
		return -ENOENT;
	}
	if (!mkdtemp(dir)) {
		snprintf(err, err_size, "spirv: cannot create a temporary directory: %s",
			 strerror(errno));
		return -EIO;
	}
	snprintf(in, sizeof(in), "%s/m.spv", dir);
	snprintf(out, sizeof(out), "%s/m.bc", dir);
	snprintf(logp, sizeof(logp), "%s/log", dir);
	rc = write_all(in, words, count * 4);
	if (rc) {
		snprintf(err, err_size, "spirv: cannot write %s", in);
		goto out;
	}
	logfd = open(logp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	argv[0] = tool;
	argv[1] = (char *)"-r";
	/* OpenCL 1.2 built-in names (atom_*): PoCL 3.1's library has 64-bit
	 * atomics for global and local pointers only, under those names */
	argv[2] = (char *)"--spirv-target-env=CL1.2";
	argv[3] = in;
	argv[4] = (char *)"-o";
	argv[5] = out;
	argv[6] = NULL;
	pid = fork();
	if (pid == 0) {
		if (logfd >= 0) {
			dup2(logfd, 1);
			dup2(logfd, 2);
		}
		execv(tool, argv);
		_exit(127);
	}
	if (logfd >= 0)
		close(logfd);
	if (pid < 0) {
		rc = -EIO;
		snprintf(err, err_size, "spirv: fork: %s", strerror(errno));
		goto out;
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		void *msg = NULL;
		size_t mlen = 0;

		rc = -EPROTO;
		if (!read_all(logp, &msg, &mlen, 1 << 20)) {
			snprintf(err, err_size, "spirv: %s -r failed: %.*s", tool,
				 (int)(mlen > 400 ? 400 : mlen), (char *)msg);
			free(msg);
		} else {
			snprintf(err, err_size, "spirv: %s -r failed (status %d)", tool, status);
		}
		goto out;
	}
	rc = read_all(out, bitcode, size, SPV_MAX_BITCODE);
	if (rc)
		snprintf(err, err_size, "spirv: cannot read the bitcode %s", out);
out:
	unlink(in);
	unlink(out);
	unlink(logp);
	rmdir(dir);
	return rc;
}
