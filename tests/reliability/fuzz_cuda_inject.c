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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/*
 * The same probes with a memory probe longer than the injector inlines past
 * a kernel's budget (INLINE_MAX_STMTS_SHORT) that reads kind, space, size
 * and the address: with a budget of 0 and the site's index unread, every
 * memory site calls a copy specialised to its constants (sites.c, spec_for).
 */
static char spec_fragment[sizeof(fragment) + 80 * 32];

static const char *spec_fragment_text(void)
{
	static const char probe2[] = ".visible .func (.param .b64 ret) __gbpf_probe_2(";
	/* its replacement takes the code generator's parameter names, the only ones the injector inlines */
	const char *at = strstr(fragment, probe2), *end;
	size_t n;

	if (spec_fragment[0] || !at || !(end = strstr(at, "ret;\n}\n")))
		return spec_fragment;
	n = (size_t)snprintf(spec_fragment, sizeof(spec_fragment),
			     "%.*s.visible .func (.param .b64 __ret) __gbpf_probe_2(.param .b64 __ctx)\n{\n"
			     "\t.reg .b64 %%rd<4>;\n\t.reg .b32 %%r<3>;\n"
			     "\tld.param.b64 %%rd1, [__ctx];\n\tld.u32 %%r1, [%%rd1+44];\n\tld.u32 %%r2, [%%rd1+40];\n"
			     "\tadd.u32 %%r1, %%r1, %%r2;\n\tcvt.u64.u32 %%rd2, %%r1;\n\tld.u64 %%rd3, [%%rd1+24];\n"
			     "\tadd.u64 %%rd2, %%rd2, %%rd3;\n",
			     (int)(at - fragment), fragment);
	for (unsigned i = 0; i < 70 && n < sizeof(spec_fragment); i++)
		n += (size_t)snprintf(spec_fragment + n, sizeof(spec_fragment) - n, "\tadd.u64 %%rd2, %%rd2, %u;\n", i);
	if (n < sizeof(spec_fragment))
		snprintf(spec_fragment + n, sizeof(spec_fragment) - n, "\tst.param.b64 [__ret], %%rd2;\n\tret;\n}\n%s",
			 end + strlen("ret;\n}\n"));
	return spec_fragment;
}

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
	/* bit 2: no inline budget, a long memory probe: the specialised copies */
	if (size && data[size - 1] & 4) {
		o.fragment = spec_fragment_text();
		o.ctx_unused = GBPF_CUDA_CTX_UNUSED_MEM_SITE | GBPF_CUDA_CTX_UNUSED_MEM_VALUE;
		setenv("GBPF_PTX_INLINE_BUDGET", "0", 1);
	}
	if (gbpf_cuda_inject_image(data, size, "fuzz.ptx", &o, &res, log, sizeof(log)) == 0)
		gbpf_cuda_inject_result__free(res);
	unsetenv("GBPF_PTX_INLINE_BUDGET");
	return 0;
}
