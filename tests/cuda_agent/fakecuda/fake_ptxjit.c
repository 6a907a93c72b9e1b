// SPDX-License-Identifier: MIT
/*
 * tests/cuda_agent/fakecuda/fake_ptxjit.c - stands for the driver's PTX
 * compiler library (libnvidia-ptxjitcompiler.so.1), which the agent loads
 * while the application starts (plugins/cuda/cuda_jit_warm.h): its load is
 * logged to GBPF_FAKE_CUDA_LOG as "ptxjit loaded", once per load.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

__attribute__((constructor)) static void fake_ptxjit_loaded(void)
{
	const char *p = getenv("GBPF_FAKE_CUDA_LOG");
	static const char line[] = "ptxjit loaded\n";
	ssize_t n;
	int fd;

	if (!p)
		return;
	fd = open(p, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	n = write(fd, line, sizeof(line) - 1);
	close(fd);
	(void)n; /* a line not written: the test sees it missing */
}
