/* SPDX-License-Identifier: MIT */
/*
 * tests/intercept/apps/direct_driver.c - a program linked with -lcuda that
 * calls the driver API directly: PTX through cuModuleLoadData, an
 * attribute, cuLaunchKernelEx and cuLaunchKernel. Exported driver names
 * are declared here (as cuda.h maps them) so that no toolkit is needed.
 */
#include <stdio.h>

#include "plugins/cuda/intercept/cuda_types.h"

CUresult cuInit(unsigned int flags);
CUresult cuDeviceGet(CUdevice *dev, int ordinal);
CUresult cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice dev);
CUresult cuCtxSetCurrent(CUcontext ctx);
CUresult cuModuleLoadData(CUmodule *mod, const void *image);
CUresult cuModuleGetFunction(CUfunction *f, CUmodule mod, const char *name);
CUresult cuFuncSetAttribute(CUfunction f, CUfunction_attribute attr, int value);
CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n);
CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n);
CUresult cuLaunchKernelEx(const CUlaunchConfig *c, CUfunction f, void **params, void **extra);
CUresult cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
			unsigned int bx, unsigned int by, unsigned int bz, unsigned int shmem,
			CUstream s, void **params, void **extra);
CUresult cuCtxSynchronize(void);

static const char ptx[] = ".version 8.0\n.target sm_90\n.address_size 64\n"
			  ".visible .entry scale(.param .u64 p)\n{\n\tret;\n}\n";

#define CHECK(call)                                                                                \
	do {                                                                                       \
		CUresult r_ = (call);                                                              \
		if (r_ != 0) {                                                                     \
			printf("%s failed: %d\n", #call, r_);                                      \
			return 1;                                                                  \
		}                                                                                  \
	} while (0)

int main(void)
{
	CUdevice dev;
	CUcontext ctx;
	CUmodule mod;
	CUfunction f;
	CUdeviceptr buf;
	float host[64] = {0};
	void *params[] = {&buf};
	CUlaunchConfig cfg = {.gridDimX = 8, .gridDimY = 2, .gridDimZ = 1, .blockDimX = 128,
			      .blockDimY = 1, .blockDimZ = 1, .sharedMemBytes = 1024};

	CHECK(cuInit(0));
	CHECK(cuDeviceGet(&dev, 0));
	CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CHECK(cuCtxSetCurrent(ctx));
	CHECK(cuModuleLoadData(&mod, ptx));
	CHECK(cuModuleGetFunction(&f, mod, "scale"));
	CHECK(cuFuncSetAttribute(f, GBPF_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 65536));
	CHECK(cuMemAlloc_v2(&buf, sizeof(host)));
	CHECK(cuMemcpyHtoD_v2(buf, host, sizeof(host)));
	CHECK(cuLaunchKernelEx(&cfg, f, params, NULL));
	CHECK(cuLaunchKernel(f, 3, 1, 1, 64, 1, 1, 0, NULL, params, NULL));
	CHECK(cuCtxSynchronize());
	printf("direct_driver ok\n");
	return 0;
}
