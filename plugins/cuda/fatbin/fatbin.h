/* SPDX-License-Identifier: MIT */
/*
 * plugins/cuda/fatbin/fatbin.h - CUDA fatbinary parsing (internal to the
 * cuda backend and the injection tools).
 *
 * A fatbinary ("fatbin") is a container (magic 0xBA55ED50) of entries, each
 * a PTX text or an ELF cubin for one architecture, optionally compressed
 * (zstd or LZ4 block). Applications embed containers in the `.nv_fatbin`
 * (or, for -rdc objects, `__nv_relfatbin`) section of their ELF files and
 * register them through a 24-byte wrapper (magic 0x466243B1) that points at
 * the container. The layout is described in ../shared/notes/cuda.md.
 *
 * Everything here works on untrusted bytes: every size is checked against
 * the buffer, decompressed sizes are capped by the caller, and nothing is
 * read outside [buf, buf + len). Functions return 0 or a negative errno
 * (-GBPF_ERRNO__FORMAT for malformed input) and write a reason that says
 * what and where (byte offset, entry index) into the caller's log buffer
 * (NUL-terminated, truncated to log_size; log may be NULL).
 */
#ifndef GBPF_CUDA_FATBIN_H
#define GBPF_CUDA_FATBIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GBPF_FATBIN_WRAPPER_MAGIC 0x466243B1u
#define GBPF_FATBIN_MAGIC 0xBA55ED50u

/** Entry kinds. */
#define GBPF_FATBIN_KIND_PTX 1
#define GBPF_FATBIN_KIND_ELF 2

/** Entry flags (subset we interpret). */
#define GBPF_FATBIN_FLAG_64BIT 0x1ull
#define GBPF_FATBIN_FLAG_DEBUG 0x2ull
#define GBPF_FATBIN_FLAG_LINUX 0x10ull
#define GBPF_FATBIN_FLAG_LZ4 0x2000ull
#define GBPF_FATBIN_FLAG_ZSTD 0x8000ull

/** Default cap on one decompressed entry (bytes). */
#define GBPF_FATBIN_DEFAULT_MAX_DECOMPRESSED (512ull << 20)

/** Compression of an entry's payload. */
enum gbpf_fatbin_compression {
	GBPF_FATBIN_COMP_NONE = 0,
	GBPF_FATBIN_COMP_ZSTD,
	GBPF_FATBIN_COMP_LZ4,
};

/** One entry of a container. Pointers point into the parsed buffer. */
struct gbpf_fatbin_entry {
	uint16_t kind;             /**< GBPF_FATBIN_KIND_* */
	uint16_t ver_major;        /**< PTX ISA / ELF version, major */
	uint16_t ver_minor;        /**< ... minor */
	uint32_t arch;             /**< SM number: 75, 90, 100, ... */
	uint64_t flags;            /**< GBPF_FATBIN_FLAG_* and others */
	enum gbpf_fatbin_compression compression;
	const uint8_t *payload;    /**< stored bytes (compressed or not) */
	uint64_t payload_size;     /**< bytes at payload that belong to the entry */
	uint64_t uncompressed_size; /**< size after decompression (0 if unknown) */
	const char *name;          /**< entry name (often the source file), may be NULL */
	size_t name_len;
	const char *ptxas_options; /**< ptxas options recorded for the entry, may be NULL */
	size_t ptxas_options_len;
	size_t container_offset;   /**< offset of the container in the parsed buffer */
	size_t offset;             /**< offset of the entry header in the parsed buffer */
	unsigned container_index;  /**< which container of the buffer */
	unsigned index;            /**< index of the entry in its container */
};

/** All entries of one buffer (one or more concatenated containers). */
struct gbpf_fatbin {
	struct gbpf_fatbin_entry *entries;
	size_t n_entries;
	unsigned n_containers;
};

/** Kinds of images the CUDA driver accepts. */
enum gbpf_cuda_image_kind {
	GBPF_CUDA_IMAGE_UNKNOWN = 0,
	GBPF_CUDA_IMAGE_WRAPPER, /**< 0x466243B1 wrapper (in-process pointer) */
	GBPF_CUDA_IMAGE_FATBIN,  /**< 0xBA55ED50 container */
	GBPF_CUDA_IMAGE_ELF,     /**< ELF: cubin, executable or shared library */
	GBPF_CUDA_IMAGE_PTX,     /**< PTX text */
};

/**
 * Classify an image by its first bytes. @len may be smaller than the image
 * (at least 4 bytes are needed; PTX is recognised by its first directive).
 */
enum gbpf_cuda_image_kind gbpf_cuda_image_kind(const void *buf, size_t len);

/**
 * Parse one or more consecutive containers at @buf (as found in an
 * `.nv_fatbin` section: containers back to back, 8-aligned). Fills @fb
 * (free with gbpf_fatbin__free()). An empty buffer gives zero entries.
 * Returns 0, -GBPF_ERRNO__FORMAT on malformed input, -ENOMEM.
 */
int gbpf_fatbin__parse(const void *buf, size_t len, struct gbpf_fatbin *fb, char *log,
		       size_t log_size);

/** Free what gbpf_fatbin__parse() allocated; @fb may be zeroed or NULL. */
void gbpf_fatbin__free(struct gbpf_fatbin *fb);

/** Whether this build can decompress entries compressed with @c. */
bool gbpf_fatbin_can_decompress(enum gbpf_fatbin_compression c);

/**
 * Decompress (or copy) the payload of @e into a fresh malloc'ed buffer,
 * NUL-terminated (the terminator is not counted in *out_len). Trailing NUL
 * bytes of PTX payloads are trimmed from *out_len. @max_size caps the
 * result (0: GBPF_FATBIN_DEFAULT_MAX_DECOMPRESSED).
 * Returns 0; -EOPNOTSUPP if the compression is not supported by this build
 * (LZ4 without liblz4); -E2BIG above the cap; -GBPF_ERRNO__FORMAT if the
 * data does not decompress to the recorded size; -ENOMEM.
 */
int gbpf_fatbin_entry__data(const struct gbpf_fatbin_entry *e, uint64_t max_size, uint8_t **out,
			    size_t *out_len, char *log, size_t log_size);

/** "sm_90" / "compute_90" style label of an entry into buf; returns buf. */
const char *gbpf_fatbin_entry__label(const struct gbpf_fatbin_entry *e, char *buf, size_t size);

/**
 * Size of the container that starts at @buf: header plus payload. Returns
 * 0 if @buf (of at least @len bytes) does not start with a valid header.
 */
uint64_t gbpf_fatbin_container_size(const void *buf, size_t len);

/**
 * Find the fatbin data of a file: if @buf is an ELF file, the
 * concatenation of its `.nv_fatbin` and `__nv_relfatbin` sections (each
 * returned separately through @cb); if it is a container, itself; a
 * wrapper in a file cannot be followed (its pointer is an address) and is
 * an error. @cb is called with (section name, data, size, arg) for each
 * fatbin region; a non-zero return stops the walk and is returned.
 * Returns 0 (also when an ELF has no fatbin: @cb is then never called),
 * -GBPF_ERRNO__FORMAT, or what @cb returned.
 */
typedef int (*gbpf_fatbin_region_cb)(const char *where, const uint8_t *data, size_t size,
				     void *arg);
int gbpf_fatbin_find_in_file(const void *buf, size_t len, gbpf_fatbin_region_cb cb, void *arg,
			     char *log, size_t log_size);

/**
 * List the kernels (STO_CUDA_ENTRY functions) of an ELF cubin: calls @cb
 * with each mangled name (NUL-terminated copy). Returns the number of
 * kernels, -GBPF_ERRNO__FORMAT on a malformed ELF, or @cb's non-zero
 * return (negative).
 */
int gbpf_cubin_for_each_kernel(const void *buf, size_t len,
			       int (*cb)(const char *name, void *arg), void *arg, char *log,
			       size_t log_size);

/**
 * In-process only: follow a registered wrapper (as passed to
 * __cudaRegisterFatBinary or cuLibraryLoadData) to its container. Returns
 * the container pointer and its size in *size, or NULL (errno EINVAL) if
 * the wrapper or the container header is not valid. The memory is trusted
 * to be mapped (it belongs to the calling process).
 */
const void *gbpf_fatbin_wrapper_container(const void *wrapper, uint64_t *size);

#endif /* GBPF_CUDA_FATBIN_H */
