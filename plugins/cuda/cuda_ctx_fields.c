/* SPDX-License-Identifier: MIT */
/* plugins/cuda/cuda_ctx_fields.c - the context fields a device program reads (cuda_ctx_fields.h). */
#include <stddef.h>

#include <gbpf/cuda_inject.h>
#include <gbpf/helper_ids.h>
#include <gbpf/probe_ctx.h>

#include "cuda_ctx_fields.h"

/* Bits lo..hi-1 of a context byte mask. */
static uint64_t byte_range(int lo, int hi)
{
	uint64_t m = 0;

	for (int b = lo; b < hi && b < 64; b++)
		m |= 1ULL << b;
	return m;
}

unsigned gbpf_cuda_ctx_unused(const struct gbpf_prog_desc *p, const uint64_t *reads)
{
	static const struct {
		unsigned bit;
		int16_t lo, hi;
	} fields[] = {
		{GBPF_CUDA_CTX_UNUSED_KERNEL_ID, offsetof(struct gbpf_gpu_ctx, kernel_id),
		 offsetof(struct gbpf_gpu_ctx, kernel_id) + 8},
		{GBPF_CUDA_CTX_UNUSED_PARAMS, offsetof(struct gbpf_gpu_ctx, params),
		 offsetof(struct gbpf_gpu_ctx, params) + 8},
		{GBPF_CUDA_CTX_UNUSED_LAUNCH_ID, offsetof(struct gbpf_gpu_ctx, launch_id),
		 offsetof(struct gbpf_gpu_ctx, launch_id) + 8},
		{GBPF_CUDA_CTX_UNUSED_MEM, offsetof(struct gbpf_gpu_ctx, mem_addr),
		 offsetof(struct gbpf_gpu_ctx, device)},
		{GBPF_CUDA_CTX_UNUSED_MEM_ADDR, offsetof(struct gbpf_gpu_ctx, mem_addr),
		 offsetof(struct gbpf_gpu_ctx, mem_addr) + 8},
		{GBPF_CUDA_CTX_UNUSED_MEM_VALUE, offsetof(struct gbpf_gpu_ctx, mem_value),
		 offsetof(struct gbpf_gpu_ctx, mem_value) + 8},
		{GBPF_CUDA_CTX_UNUSED_MEM_SITE, offsetof(struct gbpf_gpu_ctx, mem_site),
		 offsetof(struct gbpf_gpu_ctx, mem_site) + 4},
	};
	static const int16_t size_bytes[4] = {4, 2, 1, 8};
	/* device and its padding: read as one u64 too; gpu/block has it at another offset. */
	const int16_t dev_lo = p->attach.kind == GBPF_ATTACH_GPU_BLOCK
				       ? (int16_t)offsetof(struct gbpf_gpu_block_ctx, device)
				       : (int16_t)offsetof(struct gbpf_gpu_ctx, device);
	unsigned unused = GBPF_CUDA_CTX_UNUSED_ALL | GBPF_CUDA_CTX_UNUSED_MEM_FIELDS;

	if (reads) {
		for (size_t f = 0; f < sizeof(fields) / sizeof(fields[0]); f++)
			if (*reads & byte_range(fields[f].lo, fields[f].hi))
				unused &= ~fields[f].bit;
		if (*reads & byte_range(dev_lo, dev_lo + 8))
			unused &= ~GBPF_CUDA_CTX_UNUSED_DEVICE;
		return unused;
	}
	/* a load's offset alone does not say which field a moved pointer reads: no finer claims */
	unused &= ~GBPF_CUDA_CTX_UNUSED_MEM_FIELDS;
	for (size_t k = 0; k < p->insn_cnt; k++) {
		const struct gbpf_insn *in = &p->insns[k];

		if (in->code == (GBPF_JMP | GBPF_CALL) && in->src == 0 &&
		    in->imm == GBPF_HELPER_PERF_EVENT_OUTPUT)
			return 0;
		if ((in->code & 0x07) != GBPF_LDX)
			continue;
		for (size_t f = 0; f < sizeof(fields) / sizeof(fields[0]); f++)
			if (in->off < fields[f].hi && in->off + size_bytes[(in->code >> 3) & 3] > fields[f].lo)
				unused &= ~fields[f].bit;
		if (in->off < dev_lo + 8 && in->off + size_bytes[(in->code >> 3) & 3] > dev_lo)
			unused &= ~GBPF_CUDA_CTX_UNUSED_DEVICE;
	}
	return unused;
}

