/* SPDX-License-Identifier: MIT */
/*
 * gbpf/prog.h - plain descriptions of programs and maps.
 *
 * These structs are the contract between the loader (which produces them
 * from an ELF object or from assembler text), the verifier, the interpreter
 * and every backend plugin (which consume them). They are plain data with
 * no behaviour so that they can cross the plugin ABI unchanged: a struct
 * may only grow at its end, and consumers must check @c sz before reading a
 * field added later.
 */
#ifndef GBPF_PROG_H
#define GBPF_PROG_H

#include <stddef.h>
#include <stdint.h>

#include <gbpf/insn.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Map types. Numbers of the Linux map types gbpf implements are the Linux
 * numbers (enum bpf_map_type); bpftime's GPU types keep bpftime's numbers so
 * its probes load unmodified.
 */
enum gbpf_map_type {
	GBPF_MAP_TYPE_HASH = 1,
	GBPF_MAP_TYPE_ARRAY = 2,
	GBPF_MAP_TYPE_PERF_EVENT_ARRAY = 4,
	GBPF_MAP_TYPE_PERCPU_HASH = 5,
	GBPF_MAP_TYPE_PERCPU_ARRAY = 6,
	GBPF_MAP_TYPE_LRU_HASH = 9,
	GBPF_MAP_TYPE_RINGBUF = 27,
	/** bpftime: hash map shared with the GPU (same semantics as HASH). */
	GBPF_MAP_TYPE_GPU_HASH = 1501,
	/** bpftime: one value slot per GPU thread of the launch. */
	GBPF_MAP_TYPE_PERGPUTHREAD_ARRAY = 1502,
	/** bpftime: array shared by all GPU threads (same semantics as ARRAY). */
	GBPF_MAP_TYPE_GPU_ARRAY = 1503,
	/**
	 * gbpf: a GPU thread's own values for the thread's run (key: u32 index
	 * < max_entries): zero when the thread starts, gone when it ends, never
	 * seen by the host; at most GBPF_MAP_THREAD_LOCAL_MAX bytes. The CUDA
	 * injector keeps them in the kernel's registers (or its frame), the
	 * SPIR-V one in the kernel's frame, so they cost no global memory
	 * traffic; AMDGCN and the Compute Sanitizer engine refuse them
	 * (docs/MAPS.md).
	 */
	GBPF_MAP_TYPE_GPU_THREAD_LOCAL = 1504,
	/** bpftime: ring buffer written from the GPU (same semantics as RINGBUF). */
	GBPF_MAP_TYPE_GPU_RINGBUF = 1527,
};

/** Most bytes a GPU_THREAD_LOCAL map holds (max_entries x value_size rounded up to 8). */
#define GBPF_MAP_THREAD_LOCAL_MAX 256u

/** Where a map came from in the object. */
enum gbpf_map_origin {
	GBPF_MAP_ORIGIN_USER = 0,   /**< declared in SEC(".maps") or SEC("maps") */
	GBPF_MAP_ORIGIN_DATA = 1,   /**< .data (initialised globals) */
	GBPF_MAP_ORIGIN_RODATA = 2, /**< .rodata (constants; read-only to programs) */
	GBPF_MAP_ORIGIN_BSS = 3,    /**< .bss (zeroed globals) */
};

/** Map flags (Linux values). */
#define GBPF_F_NO_PREALLOC (1U << 0)
#define GBPF_F_RDONLY_PROG (1U << 7)
#define GBPF_F_MMAPABLE (1U << 10)

/**
 * How the controller shows a map, from a BTF declaration tag on the map
 * variable (`GBPF_PRINT_LOG2_HIST` / `GBPF_PRINT_TABLE` in gbpf/probe.h,
 * the tag text "gbpf:print=log2_hist" / "gbpf:print=table").
 */
enum gbpf_map_print {
	/** No tag: by shape; a u64 map whose name contains "hist" is a log2 histogram. */
	GBPF_MAP_PRINT_AUTO = 0,
	/**
	 * Log2 histogram: slot i counts values in [2^i, 2^(i+1)) (slot 0: 0 and 1).
	 * An array of u64 (element i is slot i), a hash with a 4- or 8-byte
	 * slot key and u64 values (bcc's BPF_HISTOGRAM), or a map whose values
	 * are u64[slots] (one histogram per key).
	 */
	GBPF_MAP_PRINT_LOG2_HIST = 1,
	/** Keys and values, never a histogram (whatever the name). */
	GBPF_MAP_PRINT_TABLE = 2,
};

/** A map as declared by the object: its shape, not its memory. */
struct gbpf_map_desc {
	size_t sz;             /**< sizeof(struct gbpf_map_desc) of the producer */
	const char *name;      /**< map name (".data", ".rodata", ".bss" for globals) */
	uint32_t type;         /**< enum gbpf_map_type */
	uint32_t key_size;     /**< bytes; 4 for arrays, 0 for ring buffers */
	uint32_t value_size;   /**< bytes; 0 for ring buffers */
	uint32_t max_entries;  /**< entries; ring buffer: data bytes (power of two) */
	uint32_t map_flags;    /**< GBPF_F_* */
	uint32_t origin;       /**< enum gbpf_map_origin */
	const void *init_data; /**< initial value bytes for DATA/RODATA, else NULL */
	size_t init_size;      /**< bytes at init_data */
	/**
	 * enum gbpf_map_print (appended: gbpf_map_desc__hist_shape() reads it
	 * when @c sz covers it).
	 */
	uint32_t print;
};

/**
 * Where a thread's GPU_THREAD_LOCAL values lie, the one rule every backend
 * follows: map by map in the order of @p maps, each max_entries values of
 * value_size rounded up to 8. Returns the bytes before map @p map_index (all
 * of them: @p map_cnt).
 */
static inline uint32_t gbpf_thread_local_off(const struct gbpf_map_desc *maps, size_t map_cnt, size_t map_index)
{
	uint32_t off = 0;

	for (size_t i = 0; maps && i < map_index && i < map_cnt; i++)
		if (maps[i].type == GBPF_MAP_TYPE_GPU_THREAD_LOCAL)
			off += maps[i].max_entries * ((maps[i].value_size + 7u) & ~7u);
	return off;
}

/** What a program attaches to, decoded from its section name. */
enum gbpf_attach_kind {
	GBPF_ATTACH_NONE = 0,         /**< no attach point: run with `prog run` */
	GBPF_ATTACH_GPU_ENTRY = 1,    /**< gpu/entry/<glob>, kprobe/<kernel> */
	GBPF_ATTACH_GPU_EXIT = 2,     /**< gpu/exit/<glob>, kretprobe/<kernel> */
	GBPF_ATTACH_GPU_MEM = 3,      /**< gpu/mem/<glob>, kprobe/__memcapture */
	GBPF_ATTACH_GPU_BARRIER = 4,  /**< gpu/barrier/<glob> */
	GBPF_ATTACH_GPU_BLOCK = 5,    /**< gpu/block/<glob>: entry of every basic block */
	GBPF_ATTACH_HOST_LAUNCH = 16, /**< host/launch[/<glob>] */
	GBPF_ATTACH_HOST_MEMCPY = 17, /**< host/memcpy */
	GBPF_ATTACH_HOST_MALLOC = 18, /**< host/malloc */
	GBPF_ATTACH_HOST_SYNC = 19,   /**< host/sync */
	GBPF_ATTACH_HOST_MODULE_LOAD = 20, /**< host/module_load */
	GBPF_ATTACH_UPROBE = 32,      /**< uprobe/<binary>:<symbol> */
	GBPF_ATTACH_URETPROBE = 33,   /**< uretprobe/<binary>:<symbol> */
};

/** True for attach kinds whose programs run on a GPU. */
static inline int gbpf_attach_is_device(uint32_t kind)
{
	return kind >= GBPF_ATTACH_GPU_ENTRY && kind <= GBPF_ATTACH_GPU_BLOCK;
}

/** Decoded attach point. */
struct gbpf_attach {
	uint32_t kind;      /**< enum gbpf_attach_kind */
	const char *target; /**< kernel glob, host binary, or NULL for all */
	const char *symbol; /**< uprobe symbol, else NULL */
};

/**
 * A program ready for verification, code generation or execution.
 *
 * @c insns is linked: the entry function comes first and every subprogram it
 * reaches follows, with local calls (CALL|K src=GBPF_CALL_LOCAL) and
 * GBPF_PSEUDO_FUNC loads holding pc-relative targets inside the array.
 * Map references are wide loads with src GBPF_PSEUDO_MAP_IDX or
 * GBPF_PSEUDO_MAP_IDX_VALUE whose imm indexes @c maps.
 */
struct gbpf_prog_desc {
	size_t sz;                        /**< sizeof(struct gbpf_prog_desc) of the producer */
	const char *name;                 /**< function name */
	const char *section;              /**< ELF section name, or NULL */
	const struct gbpf_insn *insns;    /**< linked instructions */
	size_t insn_cnt;                  /**< slots in insns (a wide load counts 2) */
	const struct gbpf_map_desc *maps; /**< every map of the object */
	size_t map_cnt;
	struct gbpf_attach attach;
	const char *license;              /**< "GPL", "Dual MIT/GPL", ... or NULL */
	const char *source_file;          /**< object path, for messages */
};

/**
 * Bytes of GPU_THREAD_LOCAL values a thread keeps for the programs @p progs
 * of one object (they share its maps: the largest program's count), 0 for
 * none: what a backend reserves for each thread (gbpf_thread_local_off).
 */
static inline uint32_t gbpf_progs_thread_local_size(const struct gbpf_prog_desc *const *progs, size_t n)
{
	uint32_t most = 0;

	for (size_t i = 0; progs && i < n; i++) {
		uint32_t b = progs[i] ? gbpf_thread_local_off(progs[i]->maps, progs[i]->map_cnt, progs[i]->map_cnt) : 0;

		most = b > most ? b : most;
	}
	return most;
}

#ifdef __cplusplus
}
#endif

#endif /* GBPF_PROG_H */
