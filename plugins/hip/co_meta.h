/* SPDX-License-Identifier: MIT */
/*
 * plugins/hip/co_meta.h - AMDGPU code-object metadata (MessagePack of the
 * NT_AMDGPU_METADATA note): per-kernel values and re-encoding with new
 * register counts (internal to the hip backend).
 */
#ifndef GBPF_HIP_CO_META_H
#define GBPF_HIP_CO_META_H

#include <stddef.h>
#include <stdint.h>

/** Values of one entry of amdhsa.kernels (absent ones are 0). */
struct co_meta_kernel {
	char name[256];
	char symbol[260];
	uint64_t sgpr, vgpr, agpr, priv, group, kernarg;
	/** offset of the first hidden (implicit) argument in the kernarg
	 *  segment, or the kernarg size when the kernel has none */
	uint64_t hidden_off;
};

/** New values for the kernel named @p name. */
struct co_meta_patch {
	const char *name;
	uint64_t sgpr, vgpr, priv;
};

/**
 * Read the kernels of a metadata document.
 * @return number of kernels stored (at most @p max), -EINVAL when malformed
 */
int co_meta_read(const uint8_t *msgpack, size_t n, struct co_meta_kernel *k, size_t max);

/**
 * Re-encode a metadata document with .sgpr_count, .vgpr_count and
 * .private_segment_fixed_size of the patched kernels replaced.
 * @return 0 (*out malloc'ed), -EINVAL when malformed, -ENOMEM
 */
int co_meta_patch(const uint8_t *msgpack, size_t n, const struct co_meta_patch *p, size_t np, uint8_t **out,
		  size_t *out_n);

#endif /* GBPF_HIP_CO_META_H */
