// SPDX-License-Identifier: MIT
// nvrtc: a kernel compiled at run time by NVRTC and loaded with the driver
// API, once as PTX (cuModuleLoadData of PTX text: instrumentable) and once
// as a cubin (SASS only: gbpf reports it not instrumented). Each module's
// kernel runs and is checked. Build: nvcc -o nvrtc nvrtc.cu -lnvrtc -lcuda
// Prints one "grid=.. block=.. launches=.." line per launched configuration
// (ptx=no for the cubin) so that a test can compute the threads launched,
// with the global accesses of the launch ("mem=KIND.SPACE.BYTES:COUNT,...").
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda.h>
#include <nvrtc.h>

#define CU(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { const char *s_ = "?"; \
	cuGetErrorString(r_, &s_); fprintf(stderr, "nvrtc: %s: %s (line %d)\n", #x, s_, __LINE__); \
	exit(2); } } while (0)
#define RTC(x) do { nvrtcResult r_ = (x); if (r_ != NVRTC_SUCCESS) { \
	fprintf(stderr, "nvrtc: %s: %s (line %d)\n", #x, nvrtcGetErrorString(r_), __LINE__); \
	exit(2); } } while (0)

static const char *const src =
	"extern \"C\" __global__ void rtc_axpy(float a, const float *x, float *y, int n)\n"
	"{\n"
	"	int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
	"	if (i < n)\n"
	"		y[i] = a * x[i] + y[i];\n"
	"}\n";

// Compiles src for the device's architecture: PTX (compute_XY) or a cubin (sm_XY).
static char *compile(int major, int minor, int cubin, size_t *size)
{
	char arch[64];
	const char *opts[1] = {arch};
	nvrtcProgram prog;
	char *out;

	snprintf(arch, sizeof(arch), "--gpu-architecture=%s_%d%d", cubin ? "sm" : "compute", major, minor);
	RTC(nvrtcCreateProgram(&prog, src, "rtc_axpy.cu", 0, NULL, NULL));
	if (nvrtcCompileProgram(prog, 1, opts) != NVRTC_SUCCESS) {
		size_t n = 0;
		nvrtcGetProgramLogSize(prog, &n);
		char *log = (char *)calloc(n + 1, 1);
		if (log)
			nvrtcGetProgramLog(prog, log);
		fprintf(stderr, "nvrtc: compile (%s) failed: %s\n", arch, log ? log : "");
		exit(2);
	}
	if (cubin)
		RTC(nvrtcGetCUBINSize(prog, size));
	else
		RTC(nvrtcGetPTXSize(prog, size));
	out = (char *)malloc(*size);
	if (!out)
		exit(2);
	if (cubin)
		RTC(nvrtcGetCUBIN(prog, out));
	else
		RTC(nvrtcGetPTX(prog, out));
	RTC(nvrtcDestroyProgram(&prog));
	return out;
}

// Loads @image, runs y = a*x + y over n elements (y starts at i, x at 2i) and checks.
static int run(CUstream st, const void *image, const char *form, float a, int n, int block)
{
	CUmodule mod;
	CUfunction fn;
	CUdeviceptr dx, dy;
	size_t bytes = (size_t)n * sizeof(float);
	float *h = (float *)malloc(bytes);
	int grid = (n + block - 1) / block, bad = 0;

	if (!h)
		return 1;
	CU(cuModuleLoadData(&mod, image));
	CU(cuModuleGetFunction(&fn, mod, "rtc_axpy"));
	CU(cuMemAlloc(&dx, bytes));
	CU(cuMemAlloc(&dy, bytes));
	for (int i = 0; i < n; i++)
		h[i] = 2.0f * i;
	CU(cuMemcpyHtoD(dx, h, bytes));
	for (int i = 0; i < n; i++)
		h[i] = (float)i;
	CU(cuMemcpyHtoD(dy, h, bytes));
	void *args[] = {&a, &dx, &dy, &n};
	CU(cuLaunchKernel(fn, grid, 1, 1, block, 1, 1, 0, st, args, NULL));
	CU(cuStreamSynchronize(st));
	CU(cuMemcpyDtoH(h, dy, bytes));
	for (int i = 0; i < n && !bad; i++)
		if (h[i] != a * 2.0f * i + i) {
			fprintf(stderr, "nvrtc: %s: y[%d] = %f, expected %f\n", form, i, h[i], a * 2.0f * i + i);
			bad = 1;
		}
	CU(cuMemFree(dx));
	CU(cuMemFree(dy));
	CU(cuModuleUnload(mod));
	free(h);
	if (!bad)
		printf("nvrtc: rtc_axpy from %s grid=%dx1x1 block=%dx1x1 launches=1%s mem=ld.global.4:%d,"
		       "st.global.4:%d: %d elements ok\n",
		       form, grid, block, strcmp(form, "cubin") ? "" : " ptx=no", 2 * n, n, n);
	return bad;
}

int main(void)
{
	CUdevice dev;
	CUcontext ctx;
	CUstream st;
	int major, minor, bad;
	size_t ptx_size, cubin_size;

	CU(cuInit(0));
	CU(cuDeviceGet(&dev, 0));
	CU(cuDevicePrimaryCtxRetain(&ctx, dev));
	CU(cuCtxSetCurrent(ctx));
	CU(cuStreamCreate(&st, CU_STREAM_NON_BLOCKING));
	CU(cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev));
	CU(cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev));
	char *ptx = compile(major, minor, 0, &ptx_size);
	char *cubin = compile(major, minor, 1, &cubin_size);
	bad = run(st, ptx, "ptx", 3.0f, 100000, 128);
	bad |= run(st, cubin, "cubin", 0.5f, 5000, 64);
	free(ptx);
	free(cubin);
	CU(cuStreamDestroy(st));
	CU(cuDevicePrimaryCtxRelease(dev));
	return bad;
}
