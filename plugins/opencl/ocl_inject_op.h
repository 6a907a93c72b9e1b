/* SPDX-License-Identifier: MIT */
/* plugins/opencl/ocl_inject_op.h - the opencl plugin's inject() (internal). */
#ifndef GBPF_OCL_INJECT_OP_H
#define GBPF_OCL_INJECT_OP_H

#include <gbpf/plugin.h>

/**
 * inject() of the opencl backend: instrument a SPIR-V module (a .spv file),
 * or OpenCL C source compiled to SPIR-V first (ocl_compile.h), with the
 * object's device programs; the module text is the SPIR-V disassembly of
 * the validated, instrumented module.
 * @return 0, -EINVAL when the file is neither SPIR-V nor compilable source,
 *         -ENOENT when no program attaches to kernels, or the injector's error
 */
int ocl_inject(const struct gbpf_inject_opts *opts, struct gbpf_inject_result *result, char *log,
	       size_t log_size);

/** inject_free() of the opencl backend. */
void ocl_inject_free(struct gbpf_inject_result *result);

#endif
