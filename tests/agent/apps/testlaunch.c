/* SPDX-License-Identifier: MIT */
/*
 * A stand-in for a GPU runtime: the test backend interposes
 * gbpf_test_launch() the way the CUDA backend interposes cuLaunchKernel.
 */
#include <string.h>

unsigned long gbpf_test_launch(const char *kernel, unsigned grid, unsigned block);

__attribute__((visibility("default"))) unsigned long gbpf_test_launch(const char *kernel,
								       unsigned grid,
								       unsigned block)
{
	return (unsigned long)grid * block + strlen(kernel);
}
