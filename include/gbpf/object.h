/* SPDX-License-Identifier: MIT */
/*
 * gbpf/object.h - open BPF ELF objects built by `clang -O2 -g -target bpf`.
 *
 * An object is opened once, fully: every program is linked (its entry
 * function first, then every subprogram it reaches), every relocation is
 * resolved into map indexes, and every map (SEC(".maps") BTF maps, the
 * legacy SEC("maps") struct bpf_map_def maps, and one single-value array per
 * global data section) is described. The results are the plain structs of
 * <gbpf/prog.h>, owned by the object and valid until gbpf_object__close().
 *
 * Section names decide attach points; the scheme is documented in
 * docs/ATTACH.md.
 *
 * Errors: opening returns NULL and sets errno to a positive errno or
 * GBPF_ERRNO__* code. The exact reason (file, section, offset) is written
 * into the caller's error buffer (gbpf_object_open_opts.errbuf), or, when
 * there is none, printed through the gbpf_set_print() callback.
 */
#ifndef GBPF_OBJECT_H
#define GBPF_OBJECT_H

#include <stddef.h>
#include <stdint.h>

#include <gbpf/gbpf.h>
#include <gbpf/prog.h>

#ifdef __cplusplus
extern "C" {
#endif

/** An opened and linked object (opaque). */
struct gbpf_object;

/** Options of gbpf_object__open_file() / gbpf_object__open_mem(); fill with GBPF_OPTS(). */
struct gbpf_object_open_opts {
	size_t sz; /**< sizeof(struct gbpf_object_open_opts) */
	/**
	 * Name used in messages and as source_file of the programs. Default:
	 * the path for open_file, "<memory>" for open_mem.
	 */
	const char *object_name;
	/**
	 * Buffer that receives the reason of a failure, NUL-terminated and
	 * truncated to errbuf_size ("probe.o: section 'kprobe/x' (#4):
	 * relocation #2 at offset 0x18: unknown relocation type 9"). May be
	 * NULL: the message then goes to the print callback (gbpf_set_print())
	 * at GBPF_LOG_WARN instead.
	 */
	char *errbuf;
	size_t errbuf_size; /**< bytes at errbuf */
};

/** Largest object file gbpf_object__open_file() reads (bytes). */
#define GBPF_OBJECT_MAX_FILE_SIZE (256u << 20)
/** Most instruction slots in one linked program. */
#define GBPF_OBJECT_MAX_PROG_INSNS (1u << 20)

/**
 * Open and link the object file at @p path.
 * @param path  file to read (at most GBPF_OBJECT_MAX_FILE_SIZE bytes)
 * @param opts  options or NULL
 * @return the object, or NULL with errno set (ENOENT, ENOMEM,
 *         GBPF_ERRNO__FORMAT for malformed ELF/BTF/maps, GBPF_ERRNO__RELOC for
 *         relocations and calls that cannot be resolved, ENOTSUP for
 *         features gbpf does not implement, EINVAL for bad arguments).
 */
GBPF_API struct gbpf_object *gbpf_object__open_file(const char *path,
						    const struct gbpf_object_open_opts *opts);

/**
 * Open and link an object from memory. The bytes are copied; @p buf may be
 * freed once this returns.
 * @param buf   ELF bytes
 * @param size  bytes at buf
 * @param opts  options or NULL
 * @return the object, or NULL with errno set (as gbpf_object__open_file()).
 */
GBPF_API struct gbpf_object *gbpf_object__open_mem(const void *buf, size_t size,
						   const struct gbpf_object_open_opts *opts);

/** Free @p obj and everything its getters returned. NULL is a no-op. */
GBPF_API void gbpf_object__close(struct gbpf_object *obj);

/** Name of the object (object_name, the path, or "<memory>"). */
GBPF_API const char *gbpf_object__name(const struct gbpf_object *obj);

/** Contents of the "license" section, or NULL when the object has none. */
GBPF_API const char *gbpf_object__license(const struct gbpf_object *obj);

/** Number of programs (entry functions in non-.text executable sections). */
GBPF_API size_t gbpf_object__prog_cnt(const struct gbpf_object *obj);

/**
 * Program @p idx (in section order, then by offset), or NULL with errno
 * ENOENT when idx >= gbpf_object__prog_cnt().
 */
GBPF_API const struct gbpf_prog_desc *gbpf_object__prog(const struct gbpf_object *obj,
							size_t idx);

/**
 * Iterate programs: the first one when @p prev is NULL, else the one after
 * @p prev; NULL at the end.
 */
GBPF_API const struct gbpf_prog_desc *gbpf_object__next_prog(const struct gbpf_object *obj,
							     const struct gbpf_prog_desc *prev);

/** Program whose function name is @p name, or NULL with errno ENOENT. */
GBPF_API const struct gbpf_prog_desc *gbpf_object__find_prog(const struct gbpf_object *obj,
							     const char *name);

/**
 * Number of maps: user maps first (BTF maps, then legacy maps, each ordered by
 * their offset in .maps / maps), then one per global data section in section
 * order.
 */
GBPF_API size_t gbpf_object__map_cnt(const struct gbpf_object *obj);

/**
 * Map @p idx, the index used by GBPF_PSEUDO_MAP_IDX(_VALUE) loads, or NULL
 * with errno ENOENT when out of range.
 */
GBPF_API const struct gbpf_map_desc *gbpf_object__map(const struct gbpf_object *obj, size_t idx);

/** Iterate maps as gbpf_object__next_prog() does programs. */
GBPF_API const struct gbpf_map_desc *gbpf_object__next_map(const struct gbpf_object *obj,
							   const struct gbpf_map_desc *prev);

/** Map named @p name (".data", ".rodata", ... for globals), or NULL with errno ENOENT. */
GBPF_API const struct gbpf_map_desc *gbpf_object__find_map(const struct gbpf_object *obj,
							   const char *name);

/** Index of the map named @p name, or -ENOENT. */
GBPF_API int gbpf_object__find_map_idx(const struct gbpf_object *obj, const char *name);

/** Loop over the programs of an object. */
#define gbpf_object__for_each_prog(pos, obj)                                                       \
	for ((pos) = gbpf_object__next_prog((obj), NULL); (pos);                                   \
	     (pos) = gbpf_object__next_prog((obj), (pos)))

/** Loop over the maps of an object. */
#define gbpf_object__for_each_map(pos, obj)                                                        \
	for ((pos) = gbpf_object__next_map((obj), NULL); (pos);                                    \
	     (pos) = gbpf_object__next_map((obj), (pos)))

/**
 * Decode a section name into an attach point (docs/ATTACH.md).
 * @param section  ELF section name
 * @param attach   filled; target and symbol point into @p storage (or are NULL)
 * @param storage  scratch for the target/symbol strings
 * @param size     bytes at storage; strlen(section) + 1 is always enough
 * @return 0 (a name outside the scheme gives kind GBPF_ATTACH_NONE), -EINVAL
 *         for a name inside the scheme but malformed ("uprobe/x" without
 *         ":symbol", "host/memcpy/extra"), -ENOSPC when storage is too small.
 */
GBPF_API int gbpf_attach_parse(const char *section, struct gbpf_attach *attach, char *storage,
			       size_t size);

/**
 * Demangle an Itanium C++ ABI function name ("_Z6vecAddPfS_S_i" ->
 * "vecAdd(float*, float*, float*, int)"). Handles nested names, templates
 * of simple types and literals, substitutions and parameter lists; names
 * that are not mangled are copied unchanged.
 * @return length of the demangled name (as snprintf), -EINVAL for a name
 *         this demangler cannot read (buf then holds the input),
 *         -ENOSPC when it does not fit in @p size bytes (buf truncated).
 */
GBPF_API int gbpf_demangle(const char *mangled, char *buf, size_t size);

/**
 * Does GPU kernel @p kernel (its mangled symbol name) match @p pattern?
 * True when pattern equals, or fnmatch(3)-matches as a glob, the mangled
 * name, the demangled name ("ns::k<int>(float*, int)"), or the demangled
 * name without its parameter list ("ns::k<int>") or its base name ("k").
 * A NULL or empty pattern, or "*", matches every kernel.
 * @return 1 on a match, 0 otherwise.
 */
GBPF_API int gbpf_kernel_name_match(const char *pattern, const char *kernel);

/**
 * Does @p prog apply to kernel @p kernel (mangled name)? True for programs
 * whose attach point names kernels (gpu/entry, gpu/exit, gpu/mem,
 * gpu/barrier, host/launch) when gbpf_kernel_name_match() accepts their
 * target (a NULL target applies to every kernel); false for other kinds.
 */
GBPF_API int gbpf_prog_targets_kernel(const struct gbpf_prog_desc *prog, const char *kernel);

/** How a map is shown as a log2 histogram (see enum gbpf_map_print). */
enum gbpf_map_hist_shape {
	GBPF_MAP_HIST_NONE = 0,    /**< not a histogram: a table or the generic printer */
	GBPF_MAP_HIST_ARRAY = 1,   /**< array of u64: element i is slot i */
	GBPF_MAP_HIST_SLOT_KEY = 2, /**< hash keyed by the slot (4 or 8 bytes) with u64 values */
	GBPF_MAP_HIST_PER_KEY = 3, /**< values are u64[slots]: one histogram per key */
};

/**
 * The histogram shape of a map as declared: the map's print tag
 * (desc->print, honoured only when desc->sz covers it), else the name rule
 * (a name containing "hist"); GBPF_MAP_HIST_NONE when the map is not a
 * histogram or its shape cannot be one. Slot-keyed hashes are histograms
 * only when tagged. Slots beyond 64 are not shown.
 */
GBPF_API enum gbpf_map_hist_shape gbpf_map_desc__hist_shape(const struct gbpf_map_desc *desc);

#ifdef __cplusplus
}
#endif

#endif /* GBPF_OBJECT_H */
