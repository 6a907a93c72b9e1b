/* SPDX-License-Identifier: MIT */
/* tests/intercept/unit_real.h - the test "real driver" of test_unit.c (unit_real.c). */
#ifndef GBPF_TESTS_INTERCEPT_UNIT_REAL_H
#define GBPF_TESTS_INTERCEPT_UNIT_REAL_H

#include "plugins/cuda/intercept/cuda_types.h"

#define UNIT_API __attribute__((visibility("default")))

struct unit_launch {
	CUfunction f;
	unsigned int gx, bx;
	int calls;
};

UNIT_API extern struct unit_launch got_launch, got_launch_ptsz;
UNIT_API extern CUDA_KERNEL_NODE_PARAMS_v2 got_node;
UNIT_API extern int attr_calls[16], attr_values[16], n_attr_calls;

UNIT_API CUresult real_gpa(const char *sym, void **pfn, int version, cuuint64_t flags,
			   CUdriverProcAddressQueryResult *st);
UNIT_API CUresult real_launch(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
			      unsigned int bx, unsigned int by, unsigned int bz, unsigned int sh,
			      CUstream st, void **p, void **e);
UNIT_API CUresult real_launch_ptsz(CUfunction f, unsigned int gx, unsigned int gy,
				   unsigned int gz, unsigned int bx, unsigned int by,
				   unsigned int bz, unsigned int sh, CUstream st, void **p,
				   void **e);
UNIT_API CUresult real_alloc(CUdeviceptr *d, size_t n);

#endif
