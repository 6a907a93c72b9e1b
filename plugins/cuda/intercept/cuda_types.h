/* SPDX-License-Identifier: MIT */
/*
 * plugins/cuda/intercept/cuda_types.h - the CUDA driver API types the
 * interception layer needs, declared here so that gbpf builds without the
 * CUDA toolkit.
 *
 * Every layout and value below was checked against
 * /usr/local/cuda/include/cuda.h and cudaTypedefs.h of CUDA 13.0;
 * tests/intercept/test_cuda_types.c compares sizes and offsets with the
 * real header wherever the toolkit is installed. The PFN_* typedefs carry
 * the version suffix of cudaTypedefs.h: the ABI of an entry point is the
 * pair (name, version) that cuGetProcAddress is asked for.
 */
#ifndef GBPF_CUDA_INTERCEPT_CUDA_TYPES_H
#define GBPF_CUDA_INTERCEPT_CUDA_TYPES_H

#include <stddef.h>
#include <stdint.h>

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef uint64_t cuuint64_t;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUlib_st *CUlibrary;
typedef struct CUkern_st *CUkernel;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef struct CUgraph_st *CUgraph;
typedef struct CUgraphNode_st *CUgraphNode;
typedef struct CUgraphExec_st *CUgraphExec;
typedef struct CUlinkState_st *CUlinkState;
typedef int CUjit_option;
typedef int CUjitInputType;
typedef int CUlibraryOption;
typedef int CUfunction_attribute;
typedef int CUfunc_cache;
typedef int CUdriverProcAddressQueryResult;

/* CUresult values used here (cuda.h enum cudaError_enum). */
#define GBPF_CUDA_SUCCESS 0
#define GBPF_CUDA_ERROR_INVALID_VALUE 1
#define GBPF_CUDA_ERROR_NOT_INITIALIZED 3
#define GBPF_CUDA_ERROR_NO_DEVICE 100
#define GBPF_CUDA_ERROR_INVALID_IMAGE 200
#define GBPF_CUDA_ERROR_INVALID_CONTEXT 201
#define GBPF_CUDA_ERROR_FILE_NOT_FOUND 301
#define GBPF_CUDA_ERROR_INVALID_HANDLE 400
#define GBPF_CUDA_ERROR_NOT_FOUND 500
#define GBPF_CUDA_ERROR_NOT_SUPPORTED 801
#define GBPF_CUDA_ERROR_UNKNOWN 999

/* cuGetProcAddress flags (CUdriverProcAddress_flags). */
#define GBPF_CU_GET_PROC_ADDRESS_DEFAULT 0
#define GBPF_CU_GET_PROC_ADDRESS_LEGACY_STREAM 1
#define GBPF_CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM 2

/* CUdriverProcAddressQueryResult values. */
#define GBPF_CU_GET_PROC_ADDRESS_SUCCESS 0
#define GBPF_CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND 1
#define GBPF_CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT 2

/* CUgraphNodeType: the kernel node. */
#define GBPF_CU_GRAPH_NODE_TYPE_KERNEL 0

/* Launch attribute ids (CUlaunchAttributeID) that matter to a replacement. */
#define GBPF_CU_LAUNCH_ATTRIBUTE_COOPERATIVE 2

/* CUfunction_attribute values that are settable (cuFuncSetAttribute). */
#define GBPF_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES 8
#define GBPF_CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT 9

/* Magic numbers of the images cuModuleLoadData / cuLibraryLoadData accept. */
#define GBPF_CU_MAGIC_ELF 0x464C457Fu     /* bytes 7F 'E' 'L' 'F' read as little-endian u32 */
#define GBPF_CU_MAGIC_FATBIN 0xBA55ED50u  /* fatbinary container */
#define GBPF_CU_MAGIC_WRAPPER 0x466243B1u /* __fatBinC_Wrapper_t */

/** Value of a launch attribute: 64 bytes, 8-aligned (CUlaunchAttributeValue). */
typedef union CUlaunchAttributeValue_union {
	char pad[64];
	int cooperative;
	unsigned long long align_;
} CUlaunchAttributeValue;

/** One launch attribute (CUlaunchAttribute). */
typedef struct CUlaunchAttribute_st {
	int id;
	char pad[8 - sizeof(int)];
	CUlaunchAttributeValue value;
} CUlaunchAttribute;

/** Configuration of cuLaunchKernelEx (CUlaunchConfig). */
typedef struct CUlaunchConfig_st {
	unsigned int gridDimX;
	unsigned int gridDimY;
	unsigned int gridDimZ;
	unsigned int blockDimX;
	unsigned int blockDimY;
	unsigned int blockDimZ;
	unsigned int sharedMemBytes;
	CUstream hStream;
	CUlaunchAttribute *attrs;
	unsigned int numAttrs;
} CUlaunchConfig;

/**
 * Kernel node parameters. v1 (cuGraph*KernelNode* version 10000/10010)
 * is the prefix up to @c extra; v2 (version 12000) and v3 (inside
 * CUgraphNodeParams) add @c kern and @c ctx. @c kern is used only when
 * @c func is NULL.
 */
typedef struct CUDA_KERNEL_NODE_PARAMS_v1_st {
	CUfunction func;
	unsigned int gridDimX;
	unsigned int gridDimY;
	unsigned int gridDimZ;
	unsigned int blockDimX;
	unsigned int blockDimY;
	unsigned int blockDimZ;
	unsigned int sharedMemBytes;
	void **kernelParams;
	void **extra;
} CUDA_KERNEL_NODE_PARAMS_v1;

typedef struct CUDA_KERNEL_NODE_PARAMS_v2_st {
	CUfunction func;
	unsigned int gridDimX;
	unsigned int gridDimY;
	unsigned int gridDimZ;
	unsigned int blockDimX;
	unsigned int blockDimY;
	unsigned int blockDimZ;
	unsigned int sharedMemBytes;
	void **kernelParams;
	void **extra;
	CUkernel kern;
	CUcontext ctx;
} CUDA_KERNEL_NODE_PARAMS_v2;

/** Generic graph node parameters (CUgraphNodeParams, 256 bytes). */
typedef struct CUgraphNodeParams_st {
	int type; /* CUgraphNodeType */
	int reserved0[3];
	union {
		long long reserved1[29];
		CUDA_KERNEL_NODE_PARAMS_v2 kernel;
	};
	long long reserved2;
} CUgraphNodeParams;

/** Edge data of cuGraphAddNode_v2 (opaque here). */
typedef struct CUgraphEdgeData_st CUgraphEdgeData;

/* Function-pointer types, named after cudaTypedefs.h (name_vVERSION[_ptsz]). */
typedef CUresult (*PFN_cuGetProcAddress_v11030)(const char *symbol, void **pfn, int driverVersion,
						  cuuint64_t flags);
typedef CUresult (*PFN_cuGetProcAddress_v12000)(const char *symbol, void **pfn, int driverVersion,
						  cuuint64_t flags,
						  CUdriverProcAddressQueryResult *symbolStatus);

typedef CUresult (*PFN_cuModuleLoad_v2000)(CUmodule *module, const char *fname);
typedef CUresult (*PFN_cuModuleLoadData_v2000)(CUmodule *module, const void *image);
typedef CUresult (*PFN_cuModuleLoadDataEx_v2010)(CUmodule *module, const void *image,
						   unsigned int numOptions, CUjit_option *options,
						   void **optionValues);
typedef CUresult (*PFN_cuModuleLoadFatBinary_v2000)(CUmodule *module, const void *fatCubin);
typedef CUresult (*PFN_cuLibraryLoadData_v12000)(CUlibrary *library, const void *code,
						   CUjit_option *jitOptions, void **jitOptionsValues,
						   unsigned int numJitOptions,
						   CUlibraryOption *libraryOptions,
						   void **libraryOptionValues,
						   unsigned int numLibraryOptions);
typedef CUresult (*PFN_cuLibraryLoadFromFile_v12000)(CUlibrary *library, const char *fileName,
						       CUjit_option *jitOptions,
						       void **jitOptionsValues,
						       unsigned int numJitOptions,
						       CUlibraryOption *libraryOptions,
						       void **libraryOptionValues,
						       unsigned int numLibraryOptions);
typedef CUresult (*PFN_cuLinkAddData_v6050)(CUlinkState state, CUjitInputType type, void *data,
					      size_t size, const char *name, unsigned int numOptions,
					      CUjit_option *options, void **optionValues);
typedef CUresult (*PFN_cuLinkComplete_v5050)(CUlinkState state, void **cubinOut, size_t *sizeOut);

typedef CUresult (*PFN_cuModuleGetFunction_v2000)(CUfunction *hfunc, CUmodule hmod,
						    const char *name);
typedef CUresult (*PFN_cuLibraryGetKernel_v12000)(CUkernel *pKernel, CUlibrary library,
						    const char *name);
typedef CUresult (*PFN_cuKernelGetFunction_v12000)(CUfunction *pFunc, CUkernel kernel);
typedef CUresult (*PFN_cuLibraryGetModule_v12000)(CUmodule *pMod, CUlibrary library);

typedef CUresult (*PFN_cuFuncSetAttribute_v9000)(CUfunction hfunc, CUfunction_attribute attrib,
						   int value);
typedef CUresult (*PFN_cuKernelSetAttribute_v12000)(CUfunction_attribute attrib, int val,
						      CUkernel kernel, CUdevice dev);
typedef CUresult (*PFN_cuFuncSetCacheConfig_v3000)(CUfunction hfunc, CUfunc_cache config);
typedef CUresult (*PFN_cuKernelSetCacheConfig_v12000)(CUkernel kernel, CUfunc_cache config,
							CUdevice dev);

typedef CUresult (*PFN_cuLaunchKernel_v4000)(CUfunction f, unsigned int gridDimX,
					       unsigned int gridDimY, unsigned int gridDimZ,
					       unsigned int blockDimX, unsigned int blockDimY,
					       unsigned int blockDimZ, unsigned int sharedMemBytes,
					       CUstream hStream, void **kernelParams, void **extra);
typedef CUresult (*PFN_cuLaunchKernelEx_v11060)(const CUlaunchConfig *config, CUfunction f,
						  void **kernelParams, void **extra);
typedef CUresult (*PFN_cuLaunchCooperativeKernel_v9000)(CUfunction f, unsigned int gridDimX,
							  unsigned int gridDimY,
							  unsigned int gridDimZ,
							  unsigned int blockDimX,
							  unsigned int blockDimY,
							  unsigned int blockDimZ,
							  unsigned int sharedMemBytes,
							  CUstream hStream, void **kernelParams);

typedef CUresult (*PFN_cuGraphAddKernelNode_v10000)(CUgraphNode *phGraphNode, CUgraph hGraph,
						      const CUgraphNode *dependencies,
						      size_t numDependencies,
						      const CUDA_KERNEL_NODE_PARAMS_v1 *nodeParams);
typedef CUresult (*PFN_cuGraphAddKernelNode_v12000)(CUgraphNode *phGraphNode, CUgraph hGraph,
						      const CUgraphNode *dependencies,
						      size_t numDependencies,
						      const CUDA_KERNEL_NODE_PARAMS_v2 *nodeParams);
typedef CUresult (*PFN_cuGraphKernelNodeSetParams_v10000)(
	CUgraphNode hNode, const CUDA_KERNEL_NODE_PARAMS_v1 *nodeParams);
typedef CUresult (*PFN_cuGraphKernelNodeSetParams_v12000)(
	CUgraphNode hNode, const CUDA_KERNEL_NODE_PARAMS_v2 *nodeParams);
typedef CUresult (*PFN_cuGraphExecKernelNodeSetParams_v10010)(
	CUgraphExec hGraphExec, CUgraphNode hNode, const CUDA_KERNEL_NODE_PARAMS_v1 *nodeParams);
typedef CUresult (*PFN_cuGraphExecKernelNodeSetParams_v12000)(
	CUgraphExec hGraphExec, CUgraphNode hNode, const CUDA_KERNEL_NODE_PARAMS_v2 *nodeParams);
typedef CUresult (*PFN_cuGraphAddNode_v12020)(CUgraphNode *phGraphNode, CUgraph hGraph,
						const CUgraphNode *dependencies,
						size_t numDependencies,
						CUgraphNodeParams *nodeParams);
typedef CUresult (*PFN_cuGraphAddNode_v12030)(CUgraphNode *phGraphNode, CUgraph hGraph,
						const CUgraphNode *dependencies,
						const CUgraphEdgeData *dependencyData,
						size_t numDependencies,
						CUgraphNodeParams *nodeParams);
typedef CUresult (*PFN_cuGraphNodeSetParams_v12020)(CUgraphNode hNode,
						      CUgraphNodeParams *nodeParams);
typedef CUresult (*PFN_cuGraphExecNodeSetParams_v12020)(CUgraphExec hGraphExec,
							  CUgraphNode hNode,
							  CUgraphNodeParams *nodeParams);

typedef CUresult (*PFN_cuMemAlloc_v3020)(CUdeviceptr *dptr, size_t bytesize);
typedef CUresult (*PFN_cuMemcpy_v4000)(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount);
typedef CUresult (*PFN_cuMemcpyAsync_v4000)(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount,
					      CUstream hStream);
typedef CUresult (*PFN_cuMemcpyHtoD_v3020)(CUdeviceptr dstDevice, const void *srcHost,
					     size_t ByteCount);
typedef CUresult (*PFN_cuMemcpyDtoH_v3020)(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount);
typedef CUresult (*PFN_cuMemcpyDtoD_v3020)(CUdeviceptr dstDevice, CUdeviceptr srcDevice,
					     size_t ByteCount);
typedef CUresult (*PFN_cuMemcpyHtoDAsync_v3020)(CUdeviceptr dstDevice, const void *srcHost,
						  size_t ByteCount, CUstream hStream);
typedef CUresult (*PFN_cuMemcpyDtoHAsync_v3020)(void *dstHost, CUdeviceptr srcDevice,
						  size_t ByteCount, CUstream hStream);
typedef CUresult (*PFN_cuMemcpyDtoDAsync_v3020)(CUdeviceptr dstDevice, CUdeviceptr srcDevice,
						  size_t ByteCount, CUstream hStream);
typedef CUresult (*PFN_cuMemsetD8_v3020)(CUdeviceptr dstDevice, unsigned char uc, size_t N);
typedef CUresult (*PFN_cuMemsetD16_v3020)(CUdeviceptr dstDevice, unsigned short us, size_t N);
typedef CUresult (*PFN_cuMemsetD32_v3020)(CUdeviceptr dstDevice, unsigned int ui, size_t N);
typedef CUresult (*PFN_cuMemsetD8Async_v3020)(CUdeviceptr dstDevice, unsigned char uc, size_t N,
						CUstream hStream);
typedef CUresult (*PFN_cuMemsetD16Async_v3020)(CUdeviceptr dstDevice, unsigned short us,
						 size_t N, CUstream hStream);
typedef CUresult (*PFN_cuMemsetD32Async_v3020)(CUdeviceptr dstDevice, unsigned int ui, size_t N,
						 CUstream hStream);

typedef CUresult (*PFN_cuCtxSynchronize_v2000)(void);
typedef CUresult (*PFN_cuCtxSynchronize_v13000)(CUcontext ctx);
typedef CUresult (*PFN_cuStreamSynchronize_v2000)(CUstream hStream);
typedef CUresult (*PFN_cuGraphLaunch_v10000)(CUgraphExec hGraphExec, CUstream hStream);
typedef CUresult (*PFN_cuEventSynchronize_v2000)(CUevent hEvent);
typedef CUresult (*PFN_cuCtxDestroy_v4000)(CUcontext ctx);
typedef CUresult (*PFN_cuModuleUnload_v2000)(CUmodule hmod);
typedef CUresult (*PFN_cuLibraryUnload_v12000)(CUlibrary library);
typedef CUresult (*PFN_cuDevicePrimaryCtxReset_v11000)(CUdevice dev);

#endif /* GBPF_CUDA_INTERCEPT_CUDA_TYPES_H */
