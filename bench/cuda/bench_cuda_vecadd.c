/* SPDX-License-Identifier: MIT */
/*
 * eBPF vector add run directly on the GPU (cuda plugin, run kernel) vs the
 * same kernel as nvcc emits it for
 *   __global__ void vadd(const unsigned *a, const unsigned *b, unsigned *c, size_t n)
 *   { size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; if (i < n) c[i] = a[i] + b[i]; }
 * (its PTX is embedded so that the benchmark needs no nvcc). Kernel time
 * from CUDA events, best of several runs; goal: ratio <= 1.3.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gbpf/helper_ids.h>
#include <gbpf/plugin.h>

#include "cuda_driver.h"

#define INSN(c, d, s, o, i) ((struct gbpf_insn){.code = (c), .dst = (d), .src = (s), .off = (o), .imm = (i)})

static const char vadd_ptx[] =
	".version 7.8\n.target sm_70\n.address_size 64\n"
	".visible .entry vadd(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pn)\n{\n"
	".reg .pred %p<2>;\n.reg .b32 %r<6>;\n.reg .b64 %rd<12>;\n"
	"ld.param.u64 %rd1, [pa];\nld.param.u64 %rd2, [pb];\nld.param.u64 %rd3, [pc];\nld.param.u64 %rd4, [pn];\n"
	"mov.u32 %r1, %ctaid.x;\nmov.u32 %r2, %ntid.x;\nmov.u32 %r3, %tid.x;\n"
	"mul.wide.u32 %rd5, %r1, %r2;\ncvt.u64.u32 %rd6, %r3;\nadd.s64 %rd7, %rd5, %rd6;\n"
	"setp.ge.u64 %p1, %rd7, %rd4;\n@%p1 bra $Lend;\n"
	"cvta.to.global.u64 %rd8, %rd1;\nshl.b64 %rd9, %rd7, 2;\nadd.s64 %rd10, %rd8, %rd9;\n"
	"ld.global.u32 %r4, [%rd10];\ncvta.to.global.u64 %rd8, %rd2;\nadd.s64 %rd10, %rd8, %rd9;\n"
	"ld.global.u32 %r5, [%rd10];\nadd.s32 %r4, %r4, %r5;\ncvta.to.global.u64 %rd8, %rd3;\n"
	"add.s64 %rd10, %rd8, %rd9;\nst.global.u32 [%rd10], %r4;\n$Lend:\nret;\n}\n";

int main(int argc, char **argv)
{
	uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 0) : (1ull << 26);
	/* data: u64 n, then a[n], b[n], c[n] (u32); thread i: c[i] = a[i] + b[i] */
	const struct gbpf_insn prog[] = {
		INSN(0xbf, 6, 1, 0, 0),                                 /* r6 = r1 */
		INSN(0x85, 0, 0, 0, GBPF_HELPER_GPU_GLOBAL_THREAD_ID),  /* r0 = i */
		INSN(0x79, 7, 6, 0, 0),                                 /* r7 = n */
		INSN(0x3d, 0, 7, 9, 0),                                 /* if r0 >= r7 goto out */
		INSN(0x67, 0, 0, 0, 2),                                 /* r0 <<= 2 */
		INSN(0x67, 7, 0, 0, 2),                                 /* r7 <<= 2 */
		INSN(0xbf, 8, 6, 0, 0), INSN(0x07, 8, 0, 0, 8), INSN(0x0f, 8, 0, 0, 0), /* r8 = &a[i] */
		INSN(0x61, 2, 8, 0, 0),                                 /* r2 = a[i] */
		INSN(0x0f, 8, 7, 0, 0), INSN(0x61, 3, 8, 0, 0),         /* r3 = b[i] */
		INSN(0x0c, 2, 3, 0, 0),                                 /* w2 += w3 */
		INSN(0x0f, 8, 7, 0, 0), INSN(0x63, 8, 2, 0, 0),         /* c[i] = w2 */
		INSN(0xb7, 0, 0, 0, 0), INSN(0x95, 0, 0, 0, 0),
	};
	struct gbpf_prog_desc p = {.sz = sizeof(p), .name = "vadd", .section = "bench", .insns = prog,
				   .insn_cnt = sizeof(prog) / sizeof(prog[0]), .source_file = "bench_cuda_vecadd.c"};
	struct gbpf_backend_ops ops = {.sz = sizeof(ops)};
	struct gbpf_backend_caps caps = {.sz = sizeof(caps)};
	struct gbpf_backend_open_opts oo = {.sz = sizeof(oo), .device_index = -1};
	gbpf_plugin_get_backend_table_fn entry;
	struct gbpf_backend *be = NULL;
	struct gbpf_backend_prog *bp = NULL;
	struct cuda_driver drv;
	CUmodule mod;
	CUfunction fn;
	CUdeviceptr da, db, dc;
	CUevent e0, e1;
	char why[512], log[1024];
	size_t bytes = 8 + 12 * n, i;
	uint8_t *data, *out;
	double best_ebpf = 1e30, best_cuda = 1e30;
	uint64_t bad = 0;
	void *h;
	int it, rc;

	if (cuda_driver_open(&drv, why, sizeof(why))) {
		printf("cuda_vecadd: SKIP (%s)\n", why);
		return 0;
	}
	h = dlopen(GBPF_CUDA_PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);
	entry = h ? (gbpf_plugin_get_backend_table_fn)dlsym(h, GBPF_PLUGIN_ENTRY_SYMBOL) : NULL;
	if (!entry || entry(GBPF_PLUGIN_ABI_VERSION, &ops, &caps) || ops.open(&oo, &be)) {
		fprintf(stderr, "cuda_vecadd: cannot open the cuda plugin\n");
		return 1;
	}
	data = malloc(bytes);
	out = malloc(bytes);
	if (!data || !out)
		return 1;
	memcpy(data, &n, 8);
	for (i = 0; i < n; i++) {
		uint32_t a = (uint32_t)i * 3u, b = (uint32_t)i ^ 0x5a5a5a5au;

		memcpy(data + 8 + 4 * i, &a, 4);
		memcpy(data + 8 + 4 * (n + i), &b, 4);
	}
	rc = ops.prog_load(be, &p, NULL, 0, &bp, log, sizeof(log));
	if (rc) {
		fprintf(stderr, "cuda_vecadd: load: %s\n", log);
		return 1;
	}
	for (it = 0; it < 5; it++) {
		struct gbpf_run_opts ro = {.sz = sizeof(ro), .threads = n, .data = data, .data_size = bytes,
					   .flags = GBPF_RUN_SHARED_DATA, .block_size = 256};
		struct gbpf_run_result res = {.sz = sizeof(res), .data_out = it == 0 ? out : NULL};

		rc = ops.prog_run(bp, &ro, &res, log, sizeof(log));
		if (rc) {
			fprintf(stderr, "cuda_vecadd: run: %s\n", log);
			return 1;
		}
		if (res.elapsed_ns < best_ebpf)
			best_ebpf = (double)res.elapsed_ns;
	}
	for (i = 0; i < n; i++) {
		uint32_t a, b, c;

		memcpy(&a, out + 8 + 4 * i, 4);
		memcpy(&b, out + 8 + 4 * (n + i), 4);
		memcpy(&c, out + 8 + 4 * (2 * n + i), 4);
		bad += c != a + b;
	}
	ops.prog_unload(bp);

	/* the CUDA kernel, on the primary context the plugin made current */
	if (drv.cuModuleLoadDataEx(&mod, vadd_ptx, 0, NULL, NULL) ||
	    drv.cuModuleGetFunction(&fn, mod, "vadd") || drv.cuMemAlloc(&da, 4 * n) ||
	    drv.cuMemAlloc(&db, 4 * n) || drv.cuMemAlloc(&dc, 4 * n)) {
		fprintf(stderr, "cuda_vecadd: reference kernel setup failed\n");
		return 1;
	}
	drv.cuMemcpyHtoD(da, data + 8, 4 * n);
	drv.cuMemcpyHtoD(db, data + 8 + 4 * n, 4 * n);
	drv.cuEventCreate(&e0, 0);
	drv.cuEventCreate(&e1, 0);
	for (it = 0; it < 5; it++) {
		void *params[4] = {&da, &db, &dc, &n};
		float ms = 0;

		drv.cuEventRecord(e0, NULL);
		drv.cuLaunchKernel(fn, (unsigned)((n + 255) / 256), 1, 1, 256, 1, 1, 0, NULL, params, NULL);
		drv.cuEventRecord(e1, NULL);
		drv.cuEventSynchronize(e1);
		drv.cuEventElapsedTime(&ms, e0, e1);
		if (ms * 1e6 < best_cuda)
			best_cuda = ms * 1e6;
	}
	printf("cuda_vecadd: n=%llu  ebpf %.1f us  cuda %.1f us  ratio %.2f (goal <= 1.30)  wrong=%llu\n",
	       (unsigned long long)n, best_ebpf / 1e3, best_cuda / 1e3, best_ebpf / best_cuda,
	       (unsigned long long)bad);
	ops.close(be);
	return bad ? 1 : 0;
}
