/* SPDX-License-Identifier: MIT */
/*
 * plugins/cuda/ptx_counter.h - memory probes that only count: found here,
 * summed in a register per thread by the injector (docs/ATTACH.md,
 * "Counters summed per thread").
 *
 * A gpu/mem program is a counter when, at any one memory site, running it
 * k times in a row leaves its map as running it once with its increment
 * multiplied by k: it adds a constant C to the value under one key that
 * depends on the site's constant fields only (kind, space, size, site,
 * kernel, launch, device), inserting C when the key is missing, and does
 * nothing else. mem_trace's access counter is one:
 *
 *     count = lookup(&m, &key); if (count) add(count, C);
 *     else if (update(&m, &key, &C, NOEXIST)) { count = lookup(..); if (count) add(count, C); }
 *
 * The injector then adds C to a register at each site and runs the
 * program once per key at the thread's exit (and whenever the register
 * grows large), with the register's sum in place of C: the same map
 * contents with one lookup and one atomic per thread and key instead of
 * one per access. The variant it runs is the program with each move of C
 * that feeds the count replaced by a load of ctx->mem_value, which the
 * injector sets to the sum.
 */
#ifndef GBPF_CUDA_PTX_COUNTER_H
#define GBPF_CUDA_PTX_COUNTER_H

#include <stdint.h>

#include <gbpf/prog.h>

/** Most moves of the increment a counter may have (they are few: clang makes one or two). */
#define PTX_COUNTER_MAX_MOVS 8

/** Site fields a counter's key may depend on (ptx_counter.site_fields). */
#define PTX_COUNTER_FIELD_SIZE (1u << 0)  /**< gbpf_gpu_ctx.mem_size */
#define PTX_COUNTER_FIELD_KIND (1u << 1)  /**< mem_kind */
#define PTX_COUNTER_FIELD_SPACE (1u << 2) /**< mem_space */
#define PTX_COUNTER_FIELD_SITE (1u << 3)  /**< mem_site */

/**
 * Largest increment a counter may have: a thread's sum stays in 32 bits
 * between flushes (the injector flushes before it passes 2^31).
 */
#define PTX_COUNTER_MAX_ADD 65535u

/** What ptx_counter_find() found. */
struct ptx_counter {
	uint32_t map;         /**< index of the map counted into */
	uint32_t add;         /**< the increment C, 1..PTX_COUNTER_MAX_ADD */
	uint32_t site_fields; /**< PTX_COUNTER_FIELD_*: the site fields the key is built from */
	uint32_t n_movs;
	uint32_t mov_pc[PTX_COUNTER_MAX_MOVS]; /**< the `rX = C` moves whose value is counted */
};

/**
 * Whether program @p p (its instructions and its object's maps) is a
 * counter as above. A program with a loop, a bpf-to-bpf call, a helper
 * other than map lookup and update, a read of the counted value, or a key
 * or branch that depends on the access's address or value is not one.
 * @return 1 and @p c filled when it is, 0 when not (then @p c is undefined)
 */
int ptx_counter_find(const struct gbpf_prog_desc *p, struct ptx_counter *c);

/**
 * Name of the module variable that marks program @p probe of a fragment as
 * a counter whose flush variant is __gbpf_probe_<@p flush>:
 * "__gbpf_counter_<probe>_<flush>_<add>_<site_fields>". The injector
 * reads it (ptx/counter.c); nothing reads the variable itself.
 */
#define PTX_COUNTER_MARK_PREFIX "__gbpf_counter_"

#endif /* GBPF_CUDA_PTX_COUNTER_H */
