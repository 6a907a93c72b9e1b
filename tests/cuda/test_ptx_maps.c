/* SPDX-License-Identifier: MIT */
/*
 * The PTX of programs using every device map helper (hash lookup / update /
 * delete on every hash type, ring buffer output / reserve / submit /
 * discard, perf_event_output) is accepted by ptxas for sm_90 and for the
 * lowest architecture the installed ptxas takes (sm_70 or sm_75), both as
 * a run kernel and as a probe fragment; no stub is left in it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gbpf/prog.h>

#include "cuda_test_util.h"
#include "map_progs.h"
#include "plugins/cuda/ptx_codegen.h"
#include "tests/tap.h"

static void check(const char *what, const struct gbpf_insn *insns, size_t n,
		  const struct gbpf_map_desc *md)
{
	const char *archs[2] = {"sm_90", ptxas_arch_for_sm70()};
	struct gbpf_prog_desc p = {.sz = sizeof(p), .name = what, .section = "gpu/entry/k",
				   .insns = insns, .insn_cnt = n, .maps = md, .map_cnt = 1,
				   .source_file = "test_ptx_maps.c"};
	const struct gbpf_prog_desc *pp = &p;

	for (int a = 0; a < 2; a++) {
		for (int kernel = 0; kernel < 2; kernel++) {
			struct gbpf_ptx_opts o = {.sz = sizeof(o), .arch = archs[a],
						  .flags = kernel ? GBPF_PTX_KERNEL : 0};
			char err[512] = "", log[2048] = "", hdr[128], *ptx = NULL, *mod = NULL;
			int rc = gbpf_ptx_emit(&pp, 1, &o, &ptx, NULL, err, sizeof(err));

			if (!tap_ok(rc == 0 && ptx, "%s (%s, %s): PTX generated %s", what, archs[a],
				    kernel ? "kernel" : "fragment", err))
				continue;
			tap_ok(!strstr(ptx, "-95;") && strstr(ptx, "__gbpf_m_") != NULL,
			       "%s (%s): device map functions, no -EOPNOTSUPP stub", what, archs[a]);
			if (!ptxas_path()) {
				tap_skip("ptxas not found");
				free(ptx);
				continue;
			}
			if (kernel) {
				mod = ptx;
				ptx = NULL;
			} else {
				gbpf_ptx_header(hdr, sizeof(hdr), archs[a], 0);
				mod = malloc(strlen(hdr) + strlen(ptx) + 1);
				if (mod) {
					strcpy(mod, hdr);
					strcat(mod, ptx);
				}
			}
			tap_ok(mod && ptxas_check(mod, archs[a], log, sizeof(log)) == 0,
			       "%s (%s, %s): ptxas accepts %s", what, archs[a],
			       kernel ? "kernel" : "fragment", log);
			free(mod);
			free(ptx);
		}
	}
}

int main(void)
{
	static const uint32_t hash_types[] = {GBPF_MAP_TYPE_HASH, GBPF_MAP_TYPE_PERCPU_HASH,
					      GBPF_MAP_TYPE_LRU_HASH, GBPF_MAP_TYPE_GPU_HASH};
	static const uint32_t ring_types[] = {GBPF_MAP_TYPE_RINGBUF, GBPF_MAP_TYPE_GPU_RINGBUF};
	struct gbpf_insn prog[MAP_PROG_MAX];
	char what[96];
	size_t n;

	for (size_t t = 0; t < sizeof(hash_types) / sizeof(hash_types[0]); t++) {
		struct gbpf_map_desc md = {.sz = sizeof(md), .name = "h", .type = hash_types[t],
					   .key_size = 4, .value_size = 8, .max_entries = 1024};

		n = map_prog_hash_update(prog, 0, 0);
		snprintf(what, sizeof(what), "hash type %u update", hash_types[t]);
		check(what, prog, n, &md);
		n = map_prog_hash_count(prog, 100);
		snprintf(what, sizeof(what), "hash type %u lookup+insert+add", hash_types[t]);
		check(what, prog, n, &md);
		n = map_prog_hash_delete_even(prog);
		snprintf(what, sizeof(what), "hash type %u delete", hash_types[t]);
		check(what, prog, n, &md);
	}
	for (size_t t = 0; t < sizeof(ring_types) / sizeof(ring_types[0]); t++) {
		struct gbpf_map_desc md = {.sz = sizeof(md), .name = "rb", .type = ring_types[t],
					   .max_entries = 1 << 16};

		n = map_prog_ring_output(prog);
		snprintf(what, sizeof(what), "ring type %u output", ring_types[t]);
		check(what, prog, n, &md);
		n = map_prog_ring_reserve(prog);
		snprintf(what, sizeof(what), "ring type %u reserve/submit/discard", ring_types[t]);
		check(what, prog, n, &md);
	}
	{
		struct gbpf_map_desc md = {.sz = sizeof(md), .name = "ev",
					   .type = GBPF_MAP_TYPE_PERF_EVENT_ARRAY, .key_size = 4,
					   .value_size = 4};

		n = map_prog_perf_output(prog);
		check("perf_event_output", prog, n, &md);
	}
	return tap_done();
}
