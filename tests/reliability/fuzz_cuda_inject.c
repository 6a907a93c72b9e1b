/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the PTX injector through its public entry point
 * (gbpf_cuda_inject_image, include/gbpf/cuda_inject.h). The input is the
 * application's image (PTX text, or anything the file sniffing accepts);
 * the probe fragment is fixed and defines the four probe functions, so
 * every kernel the parser finds is instrumented at entry, exits, memory
 * accesses and barriers, and the instrumented text is produced. Must
 * never crash, hang or leak, whatever the image.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include <gbpf/cuda_inject.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char fragment[] =
	".version 7.8\n.target sm_75\n.address_size 64\n"
	".visible .global .align 8 .u64 __gbpf_counts[4];\n"
	".visible .func (.param .b64 ret) __gbpf_probe_0(.param .b64 ctx)\n{\n"
	"\t.reg .b64 %rd<4>;\n\tld.param.u64 %rd1, [ctx];\n\tld.u64 %rd2, [%rd1+16];\n"
	"\tatom.global.add.u64 %rd3, [__gbpf_counts], 1;\n\tst.param.b64 [ret], 0;\n\tret;\n}\n"
	".visible .func (.param .b64 ret) __gbpf_probe_1(.param .b64 ctx)\n{\n"
	"\tst.param.b64 [ret], 0;\n\tret;\n}\n"
	".visible .func (.param .b64 ret) __gbpf_probe_2(.param .b64 ctx)\n{\n"
	"\t.reg .b64 %rd<3>;\n\tld.param.u64 %rd1, [ctx];\n\tld.u64 %rd2, [%rd1+24];\n"
	"\tst.param.b64 [ret], %rd2;\n\tret;\n}\n"
	".visible .func (.param .b64 ret) __gbpf_probe_3(.param .b64 ctx)\n{\n"
	"\tst.param.b64 [ret], 0;\n\tret;\n}\n";

/* Select every other kernel by name length parity: both paths get exercised. */
static bool select_some(const char *name, void *arg)
{
	size_t n = 0;

	(void)arg;
	while (name[n])
		n++;
	return n % 2 == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gbpf_cuda_inject_result *res = NULL;
	char log[512];
	GBPF_OPTS(gbpf_cuda_inject_opts, o, .fragment = fragment,
		  .sites = GBPF_CUDA_SITE_ENTRY | GBPF_CUDA_SITE_EXIT | GBPF_CUDA_SITE_MEM |
			   GBPF_CUDA_SITE_BARRIER,
		  .entry_probe = 0, .exit_probe = 1, .mem_probe = 2, .barrier_probe = 3,
		  .max_decompressed = 16u << 20);

	/* the last byte picks the kernel selection and whether the rest is left out (the agent's
	 * module for one kernel), so the corpus controls them */
	if (size && data[size - 1] & 1) {
		o.select = select_some;
		o.select_arg = NULL;
	}
	o.only_selected = size && data[size - 1] & 2;
	if (gbpf_cuda_inject_image(data, size, "fuzz.ptx", &o, &res, log, sizeof(log)) == 0)
		gbpf_cuda_inject_result__free(res);
	return 0;
}
