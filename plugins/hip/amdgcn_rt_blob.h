/* SPDX-License-Identifier: MIT */
/*
 * plugins/hip/amdgcn_rt_blob.h - the device map runtime (device/amdgcn_rt.c)
 * as LLVM bitcode, embedded at build time by embed_blob.py.
 */
#ifndef GBPF_HIP_AMDGCN_RT_BLOB_H
#define GBPF_HIP_AMDGCN_RT_BLOB_H

#include <stddef.h>

extern const unsigned char gbpf_amdgcn_rt_bc[];
extern const size_t gbpf_amdgcn_rt_bc_len;

#endif /* GBPF_HIP_AMDGCN_RT_BLOB_H */
