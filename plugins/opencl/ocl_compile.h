/* SPDX-License-Identifier: MIT */
/*
 * plugins/opencl/ocl_compile.h - OpenCL C to SPIR-V with the installed
 * compilers (internal), so that programs an application creates from source
 * can be instrumented like SPIR-V ones.
 */
#ifndef GBPF_OCL_COMPILE_H
#define GBPF_OCL_COMPILE_H

#include <stddef.h>
#include <stdint.h>

/** 1 when @p text looks like OpenCL C (printable text holding "kernel"). */
int ocl_looks_like_source(const void *text, size_t size);

/**
 * Compile OpenCL C to a SPIR-V 1.0 module: `clang-15 -cl-std=CL1.2 -target
 * spir64 -O2 -emit-llvm -c`, then `llvm-spirv-15 --spirv-max-version=1.0`
 * (GBPF_CLANG_CL and GBPF_LLVM_SPIRV override the tools). Children run with
 * LD_PRELOAD and GBPF_AGENT_SOCK removed from their environment, in a
 * private temporary folder that is removed afterwards.
 * @param src       source bytes (not necessarily NUL-terminated)
 * @param size      bytes at src
 * @param options   the application's build options (-D, -I, -cl-*, -w are
 *                  passed on, others dropped), may be NULL
 * @param words     out: malloc'ed module
 * @param nwords    out: words at *words
 * @param log       reason on failure: which tool, its exit status and output
 * @return 0, -ENOENT when a tool is not installed, -EPROTO when compilation
 *         fails, -EIO, -ENOMEM, -E2BIG for output larger than 64 MiB
 */
int ocl_compile_source(const char *src, size_t size, const char *options, uint32_t **words,
		       size_t *nwords, char *log, size_t log_size);

#endif
