/* SPDX-License-Identifier: MIT */
/*
 * tests/intercept/apps/cudart_like.c - reaches the driver exactly as
 * cudart 13 does (dlopen libcuda.so.1, one dlsym of cuGetProcAddress_v2,
 * then everything through the pointer returned for "cuGetProcAddress"),
 * and then does what cudart does for a <<<>>> launch on a real driver:
 * cuLibraryLoadData with the fatbin wrapper, cuLibraryGetKernel, and the
 * per-thread-default-stream cuLaunchKernel (flags 2, version 7000). The
 * fake driver cannot take real cudart that far (see README.md).
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>

#include "plugins/cuda/intercept/cuda_types.h"

/* A fatbinary container: 16-byte header and a 64-byte payload (not parsed by the fake). */
static const struct {
	uint32_t magic;
	uint16_t version;
	uint16_t header_size;
	uint64_t payload_size;
	unsigned char payload[64];
} fatbin = {GBPF_CU_MAGIC_FATBIN, 1, 16, 64, {0}};

static const struct {
	uint32_t magic;
	uint32_t version;
	const void *fatbin;
	const void *filename;
} wrapper = {GBPF_CU_MAGIC_WRAPPER, 1, &fatbin, NULL};

#define GET(gpa, name, ver, flags, out)                                                            \
	do {                                                                                       \
		if ((gpa)(name, (void **)&(out), ver, flags, NULL) != 0 || !(out)) {               \
			printf("cuGetProcAddress(%s) failed\n", name);                             \
			return 1;                                                                  \
		}                                                                                  \
	} while (0)

int main(void)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW);
	PFN_cuGetProcAddress_v12000 gpa0, gpa;
	CUresult (*init)(unsigned int);
	PFN_cuLibraryLoadData_v12000 lib_load;
	PFN_cuLibraryGetKernel_v12000 get_kernel;
	PFN_cuKernelSetAttribute_v12000 kset;
	PFN_cuLaunchKernel_v4000 launch;
	PFN_cuMemAlloc_v3020 alloc;
	PFN_cuMemcpyHtoD_v3020 htod;
	PFN_cuStreamSynchronize_v2000 ssync;
	CUlibrary lib;
	CUkernel k;
	CUdeviceptr d;
	int n = 1000;
	float host[16] = {0};
	void *params[] = {&d, &d, &d, &n};

	if (!h) {
		printf("dlopen libcuda.so.1: %s\n", dlerror());
		return 1;
	}
	gpa0 = (PFN_cuGetProcAddress_v12000)dlsym(h, "cuGetProcAddress_v2");
	if (!gpa0)
		return 1;
	GET(gpa0, "cuGetProcAddress", 12000, 0, gpa);
	GET(gpa, "cuInit", 2000, 0, init);
	GET(gpa, "cuLibraryLoadData", 12000, 0, lib_load);
	GET(gpa, "cuLibraryGetKernel", 12000, 0, get_kernel);
	GET(gpa, "cuKernelSetAttribute", 12000, 0, kset);
	GET(gpa, "cuLaunchKernel", 7000, GBPF_CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, launch);
	GET(gpa, "cuMemAlloc", 3020, 0, alloc);
	GET(gpa, "cuMemcpyHtoD", 7000, GBPF_CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, htod);
	GET(gpa, "cuStreamSynchronize", 7000, GBPF_CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
	    ssync);
	if (init(0) || lib_load(&lib, &wrapper, NULL, NULL, 0, NULL, NULL, 0) ||
	    get_kernel(&k, lib, "_Z7vec_addPKfS0_Pfi") ||
	    kset(GBPF_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 70000, k, 0) ||
	    alloc(&d, sizeof(host)) || htod(d, host, sizeof(host)) ||
	    launch((CUfunction)k, 4, 1, 1, 256, 1, 1, 0, NULL, params, NULL) || ssync(NULL)) {
		printf("driver call failed\n");
		return 1;
	}
	printf("cudart_like ok\n");
	return 0;
}
