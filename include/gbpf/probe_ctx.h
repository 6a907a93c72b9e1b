/* SPDX-License-Identifier: MIT */
/*
 * gbpf/probe_ctx.h - the context (r1) a probe receives, per attach kind.
 *
 * Safe to include from BPF C and from host C: fixed-width fields only, no
 * pointers, explicit padding. Every field is read-only to the probe; the
 * verifier rejects stores into the context and reads outside the struct of
 * the program's attach kind.
 */
#ifndef GBPF_PROBE_CTX_H
#define GBPF_PROBE_CTX_H

#ifdef __bpf__
typedef unsigned long long gbpf_u64;
typedef unsigned int gbpf_u32;
#else
#include <stdint.h>
typedef uint64_t gbpf_u64;
typedef uint32_t gbpf_u32;
#endif

/** Memory access kinds (gbpf_gpu_ctx.mem_kind). */
#define GBPF_MEM_LOAD 1
#define GBPF_MEM_STORE 2
#define GBPF_MEM_ATOMIC 3

/** Memory spaces (gbpf_gpu_ctx.mem_space). */
#define GBPF_SPACE_GENERIC 0
#define GBPF_SPACE_GLOBAL 1
#define GBPF_SPACE_SHARED 2
#define GBPF_SPACE_LOCAL 3

/**
 * Context of GPU probes. gpu/entry, gpu/exit and gpu/barrier probes read
 * the first three fields ([0, 24)) and device ([56, 64)); the verifier
 * rejects their reads of the mem_* fields. gpu/mem probes read the whole
 * struct. device was appended after mem_site so that no older field moved.
 */
struct gbpf_gpu_ctx {
	gbpf_u64 kernel_id;  /**< FNV-1a 64 of the kernel's mangled name */
	gbpf_u64 params;     /**< device address of the kernel's raw parameters */
	gbpf_u64 launch_id;  /**< sequence number of the launch in the process (CUDA graph node
			      *   launches: bit 62 set, docs/ATTACH.md) */
	/* gpu/mem only: */
	gbpf_u64 mem_addr;   /**< effective address of the access */
	gbpf_u64 mem_value;  /**< value stored (stores, atomics), else 0 */
	gbpf_u32 mem_size;   /**< bytes accessed */
	gbpf_u32 mem_kind;   /**< GBPF_MEM_* */
	gbpf_u32 mem_space;  /**< GBPF_SPACE_* */
	gbpf_u32 mem_site;   /**< index of the access in the kernel */
	/* every GPU probe: */
	gbpf_u32 device;     /**< device the kernel runs on: host/launch's ctx->device of its launch */
	gbpf_u32 device_pad; /**< reads as 0 */
};
/** Bytes of struct gbpf_gpu_ctx that every GPU probe reads before the mem_* fields. */
#define GBPF_GPU_CTX_KERNEL_SIZE 24u
/** Offset of gbpf_gpu_ctx.device: the end of the mem_* fields that only gpu/mem probes read. */
#define GBPF_GPU_CTX_DEVICE_OFF 56u

/**
 * Context of gpu/block probes (entry of every basic block of a kernel,
 * docs/ATTACH.md). The first three fields are those of struct gbpf_gpu_ctx.
 * block_index and block_count are constants at each site: the CUDA
 * injector folds their loads into the probe's code.
 */
struct gbpf_gpu_block_ctx {
	gbpf_u64 kernel_id;   /**< FNV-1a 64 of the kernel's mangled name */
	gbpf_u64 params;      /**< device address of the kernel's raw parameters */
	gbpf_u64 launch_id;   /**< sequence number of the launch in the process */
	gbpf_u32 block_index; /**< the block's number in its kernel: 0 = entry block, then PTX order */
	gbpf_u32 block_count; /**< number of basic blocks of the kernel */
	gbpf_u32 device;      /**< device the kernel runs on: host/launch's ctx->device of its launch */
	gbpf_u32 device_pad;
};

/** Context of host/launch probes. */
struct gbpf_host_launch_ctx {
	gbpf_u64 kernel_id;  /**< FNV-1a 64 of the kernel's mangled name */
	gbpf_u64 stream;     /**< runtime stream handle */
	gbpf_u64 launch_id;  /**< same number the GPU probes of this launch see */
	gbpf_u64 time_ns;    /**< CLOCK_MONOTONIC at the call */
	gbpf_u32 grid[3];
	gbpf_u32 block[3];
	gbpf_u32 shared_mem_bytes;
	gbpf_u32 device;
	char kernel_name[64]; /**< mangled name, truncated, NUL-terminated */
};

/** Directions of host/memcpy. */
#define GBPF_COPY_H2D 1
#define GBPF_COPY_D2H 2
#define GBPF_COPY_D2D 3
#define GBPF_COPY_H2H 4

/** Context of host/memcpy, host/malloc, host/sync and host/module_load probes. */
struct gbpf_host_call_ctx {
	gbpf_u64 dst;        /**< memcpy destination; malloc: returned address */
	gbpf_u64 src;        /**< memcpy source */
	gbpf_u64 bytes;      /**< memcpy / malloc size; module_load: image size */
	gbpf_u64 stream;     /**< stream, 0 for synchronous calls */
	gbpf_u64 time_ns;    /**< CLOCK_MONOTONIC at the call */
	gbpf_u32 direction;  /**< GBPF_COPY_* for memcpy */
	gbpf_u32 async;      /**< 1 for *Async calls */
	gbpf_u32 device;
	gbpf_u32 pad;
};

#endif /* GBPF_PROBE_CTX_H */
