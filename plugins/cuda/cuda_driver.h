/* SPDX-License-Identifier: MIT */
/*
 * plugins/cuda/cuda_driver.h - the few CUDA driver API types and entry
 * points the backend uses, declared here (checked against CUDA 13.0's
 * cuda.h) so that the plugin builds without the CUDA toolkit; libcuda.so.1
 * is dlopen'ed at run time.
 */
#ifndef GBPF_CUDA_DRIVER_H
#define GBPF_CUDA_DRIVER_H

#include <stddef.h>

#include "cuda_clock.h"

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUevent_st *CUevent;
typedef struct CUstream_st *CUstream;
typedef int CUjit_option;

#define CUDA_SUCCESS 0
#define CUDA_ERROR_NO_DEVICE 100
#define CU_DEVICE_ATTRIBUTE_WARP_SIZE 10
#define CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT 16
#define CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR 75
#define CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR 76
#define CU_JIT_INFO_LOG_BUFFER 3
#define CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES 4
#define CU_JIT_ERROR_LOG_BUFFER 5
#define CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES 6
#define CU_EVENT_DEFAULT 0
#define CU_MEMHOSTALLOC_PORTABLE 0x01
#define CU_MEMHOSTALLOC_DEVICEMAP 0x02

/** Driver entry points, resolved by cuda_driver_open(). */
struct cuda_driver {
	void *handle;
	CUresult (*cuInit)(unsigned flags);
	CUresult (*cuDeviceGetCount)(int *count);
	CUresult (*cuDeviceGet)(CUdevice *dev, int ordinal);
	CUresult (*cuDeviceGetName)(char *name, int len, CUdevice dev);
	CUresult (*cuDeviceGetAttribute)(int *v, int attrib, CUdevice dev);
	CUresult (*cuDeviceTotalMem)(size_t *bytes, CUdevice dev);
	CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *ctx, CUdevice dev);
	CUresult (*cuDevicePrimaryCtxRelease)(CUdevice dev);
	CUresult (*cuCtxSetCurrent)(CUcontext ctx);
	CUresult (*cuCtxSynchronize)(void);
	CUresult (*cuModuleLoadDataEx)(CUmodule *mod, const void *image, unsigned n,
				       CUjit_option *opts, void **vals);
	CUresult (*cuModuleUnload)(CUmodule mod);
	CUresult (*cuModuleGetFunction)(CUfunction *f, CUmodule mod, const char *name);
	CUresult (*cuModuleGetGlobal)(CUdeviceptr *p, size_t *bytes, CUmodule mod, const char *name);
	CUresult (*cuMemAlloc)(CUdeviceptr *p, size_t bytes);
	CUresult (*cuMemFree)(CUdeviceptr p);
	CUresult (*cuMemcpyHtoD)(CUdeviceptr dst, const void *src, size_t bytes);
	CUresult (*cuMemcpyDtoH)(void *dst, CUdeviceptr src, size_t bytes);
	CUresult (*cuMemsetD8)(CUdeviceptr dst, unsigned char v, size_t n);
	CUresult (*cuLaunchKernel)(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
				   unsigned by, unsigned bz, unsigned shmem, CUstream s, void **params,
				   void **extra);
	CUresult (*cuEventCreate)(CUevent *e, unsigned flags);
	CUresult (*cuEventRecord)(CUevent e, CUstream s);
	CUresult (*cuEventSynchronize)(CUevent e);
	CUresult (*cuEventElapsedTime)(float *ms, CUevent a, CUevent b);
	CUresult (*cuEventDestroy)(CUevent e);
	CUresult (*cuGetErrorString)(CUresult r, const char **s);
};

/**
 * dlopen libcuda.so.1 (or $GBPF_LIBCUDA), resolve every entry and cuInit.
 * Returns 0, or -ENODEV with the reason in @p why.
 */
int cuda_driver_open(struct cuda_driver *drv, char *why, size_t why_size);
/**
 * cuda_driver_open() without the cuInit: the entries only (for the agent,
 * which must not initialise CUDA in a process that has not). Returns 0, or
 * -ENODEV with the reason in @p why.
 */
int cuda_driver_load(struct cuda_driver *drv, char *why, size_t why_size);
/**
 * cuInit and a device count of a loaded driver. Returns 0, or -ENODEV with
 * the reason in @p why (the driver stays loaded).
 */
int cuda_driver_init(struct cuda_driver *drv, char *why, size_t why_size);
/** dlclose the driver. */
void cuda_driver_close(struct cuda_driver *drv);
/** Text of a driver error code. */
const char *cuda_driver_strerror(const struct cuda_driver *drv, CUresult r);

#endif /* GBPF_CUDA_DRIVER_H */
