/* SPDX-License-Identifier: MIT */
/*
 * tests/loader/test_loader.c - open the BPF test objects built by every
 * clang found (paths on the command line) and check maps, globals,
 * relocations, linking and attach points against what the sources say.
 */
#include <errno.h>
#include <string.h>

#include "loader_test_util.h"
#include "tap.h"

static const struct gbpf_map_desc *map_ok(const struct gbpf_object *obj, const char *tag,
					  const char *name, uint32_t type, uint32_t ks, uint32_t vs,
					  uint32_t max, uint32_t flags, uint32_t origin)
{
	const struct gbpf_map_desc *m = gbpf_object__find_map(obj, name);

	tap_ok(m && m->type == type && m->key_size == ks && m->value_size == vs &&
		       m->max_entries == max && m->map_flags == flags && m->origin == origin &&
		       m->sz == sizeof(*m),
	       "%s: map %s: type %u key %u value %u max %u flags 0x%x origin %u (got %u %u %u %u 0x%x %u)",
	       tag, name, type, ks, vs, max, flags, origin, m ? m->type : 0, m ? m->key_size : 0,
	       m ? m->value_size : 0, m ? m->max_entries : 0, m ? m->map_flags : 0,
	       m ? m->origin : 0);
	return m;
}

/* Names of the maps a program's wide loads refer to, in order, comma-joined. */
static void map_refs(const struct gbpf_prog_desc *p, char *out, size_t size)
{
	size_t i, n = 0;

	out[0] = '\0';
	for (i = 0; p && i + 1 < p->insn_cnt; i++) {
		const struct gbpf_insn *in = &p->insns[i];

		if (in->code != GBPF_OP_LDDW)
			continue;
		if (in->src == GBPF_PSEUDO_MAP_IDX && in->imm >= 0 && (size_t)in->imm < p->map_cnt)
			n += (size_t)snprintf(out + n, size - n, "%s%s", n ? "," : "",
					      p->maps[in->imm].name);
		i++;
		if (n >= size)
			return;
	}
}

static void attach_ok(const struct gbpf_object *obj, const char *tag, const char *prog,
		      uint32_t kind, const char *target, const char *symbol)
{
	const struct gbpf_prog_desc *p = gbpf_object__find_prog(obj, prog);
	int ok = p && p->attach.kind == kind &&
		 ((!target && !p->attach.target) ||
		  (target && p->attach.target && strcmp(target, p->attach.target) == 0)) &&
		 ((!symbol && !p->attach.symbol) ||
		  (symbol && p->attach.symbol && strcmp(symbol, p->attach.symbol) == 0));

	tap_ok(ok, "%s: %s (section '%s') attaches as kind %u target '%s' symbol '%s'", tag, prog,
	       p ? p->section : "?", kind, target ? target : "(null)", symbol ? symbol : "(null)");
}

static void check_maps_btf(const struct gbpf_object *obj, const char *tag)
{
	char refs[256];

	/* ten user maps, then the two struct val16 initialisers, which clang puts in .rodata.cst16 */
	tap_ok(gbpf_object__map_cnt(obj) == 11, "%s: 11 maps (got %zu)", tag, gbpf_object__map_cnt(obj));
	map_ok(obj, tag, ".rodata.cst16", GBPF_MAP_TYPE_ARRAY, 4, 32, 1, GBPF_F_MMAPABLE | GBPF_F_RDONLY_PROG,
	       GBPF_MAP_ORIGIN_RODATA);
	map_ok(obj, tag, "m_hash", GBPF_MAP_TYPE_HASH, 4, 16, 128, 0, GBPF_MAP_ORIGIN_USER);
	map_ok(obj, tag, "m_array", GBPF_MAP_TYPE_ARRAY, 4, 8, 8, 0, GBPF_MAP_ORIGIN_USER);
	map_ok(obj, tag, "m_percpu", GBPF_MAP_TYPE_PERCPU_ARRAY, 4, 24, 4, 0, GBPF_MAP_ORIGIN_USER);
	map_ok(obj, tag, "m_lru", GBPF_MAP_TYPE_LRU_HASH, 8, 4, 1000, 1, GBPF_MAP_ORIGIN_USER);
	map_ok(obj, tag, "m_perf", GBPF_MAP_TYPE_PERF_EVENT_ARRAY, 4, 4, 0, 0, GBPF_MAP_ORIGIN_USER);
	map_ok(obj, tag, "m_ringbuf", GBPF_MAP_TYPE_RINGBUF, 0, 0, 1 << 16, 0, GBPF_MAP_ORIGIN_USER);
	map_ok(obj, tag, "m_gpu_hash", GBPF_MAP_TYPE_GPU_HASH, 8, 8, 64, 0, GBPF_MAP_ORIGIN_USER);
	map_ok(obj, tag, "m_thread", GBPF_MAP_TYPE_PERGPUTHREAD_ARRAY, 4, 8, 1, 0, GBPF_MAP_ORIGIN_USER);
	map_ok(obj, tag, "m_gpu_array", GBPF_MAP_TYPE_GPU_ARRAY, 4, 16, 16, 0, GBPF_MAP_ORIGIN_USER);
	map_ok(obj, tag, "m_gpu_ringbuf", GBPF_MAP_TYPE_GPU_RINGBUF, 4, 16, 1 << 12, 0,
	       GBPF_MAP_ORIGIN_USER);
	{
		size_t i;
		int sorted = 1;

		/* user maps come first, ordered as they lie in .maps (clang orders by first use) */
		for (i = 0; i < 10; i++)
			sorted &= gbpf_object__map(obj, i)->origin == GBPF_MAP_ORIGIN_USER;
		tap_ok(sorted && gbpf_object__find_map_idx(obj, ".rodata.cst16") == 10,
		       "%s: user maps first, then global data", tag);
	}
	tap_ok(gbpf_object__prog_cnt(obj) == 5, "%s: 5 programs", tag);
	tap_ok(gbpf_object__license(obj) && strcmp(gbpf_object__license(obj), "Dual MIT/GPL") == 0,
	       "%s: license 'Dual MIT/GPL'", tag);
	attach_ok(obj, tag, "on_entry", GBPF_ATTACH_GPU_ENTRY, "_Z6vecAddPfS_S_i", NULL);
	attach_ok(obj, tag, "on_exit", GBPF_ATTACH_GPU_EXIT, "_Z6vecAddPfS_S_i", NULL);
	attach_ok(obj, tag, "on_mem", GBPF_ATTACH_GPU_MEM, NULL, NULL);
	attach_ok(obj, tag, "on_main", GBPF_ATTACH_UPROBE, "./vec_add", "main");
	attach_ok(obj, tag, "on_launch_ret", GBPF_ATTACH_URETPROBE, "/usr/lib/libcuda.so.1",
		  "cuLaunchKernel");
	map_refs(gbpf_object__find_prog(obj, "on_entry"), refs, sizeof(refs));
	tap_ok(strcmp(refs, "m_thread,m_hash") == 0, "%s: on_entry map loads m_thread,m_hash (got %s)",
	       tag, refs);
	map_refs(gbpf_object__find_prog(obj, "on_mem"), refs, sizeof(refs));
	tap_ok(strcmp(refs, "m_gpu_hash,m_lru,m_percpu") == 0,
	       "%s: on_mem map loads m_gpu_hash,m_lru,m_percpu (got %s)", tag, refs);
	map_refs(gbpf_object__find_prog(obj, "on_main"), refs, sizeof(refs));
	tap_ok(strcmp(refs, "m_ringbuf,m_perf") == 0, "%s: on_main map loads m_ringbuf,m_perf (got %s)",
	       tag, refs);
}

static void check_legacy(const struct gbpf_object *obj, const char *tag)
{
	char refs[256];

	tap_ok(gbpf_object__map_cnt(obj) == 3, "%s: 3 legacy maps (got %zu)", tag,
	       gbpf_object__map_cnt(obj));
	map_ok(obj, tag, "counts", GBPF_MAP_TYPE_HASH, 4, 8, 256, 0, GBPF_MAP_ORIGIN_USER);
	map_ok(obj, tag, "per_thread", GBPF_MAP_TYPE_PERGPUTHREAD_ARRAY, 4, 8, 1, 0, GBPF_MAP_ORIGIN_USER);
	map_ok(obj, tag, "events", GBPF_MAP_TYPE_GPU_RINGBUF, 4, 32, 4096, 0, GBPF_MAP_ORIGIN_USER);
	map_refs(gbpf_object__find_prog(obj, "legacy_prog"), refs, sizeof(refs));
	tap_ok(strcmp(refs, "counts,per_thread,events") == 0,
	       "%s: legacy_prog loads counts,per_thread,events (got %s)", tag, refs);
	attach_ok(obj, tag, "legacy_prog", GBPF_ATTACH_GPU_ENTRY, "legacy_kernel", NULL);
	tap_ok(gbpf_object__license(obj) && strcmp(gbpf_object__license(obj), "GPL") == 0,
	       "%s: license GPL", tag);
}

/* Does the program load the address of @p map at the offset where @p bytes lie? */
static int refers_to(const struct gbpf_object *obj, const struct gbpf_prog_desc *p, const char *map,
		     const void *bytes, size_t n)
{
	int idx = gbpf_object__find_map_idx(obj, map);
	const struct gbpf_map_desc *m = gbpf_object__map(obj, (size_t)(idx < 0 ? 0 : idx));
	size_t i;

	if (idx < 0)
		return 0;
	for (i = 0; p && i + 1 < p->insn_cnt; i++) {
		const struct gbpf_insn *in = &p->insns[i];

		if (in->code != GBPF_OP_LDDW)
			continue;
		if (in->src == GBPF_PSEUDO_MAP_IDX_VALUE && in->imm == idx) {
			uint32_t off = (uint32_t)in[1].imm;

			if (!bytes && off < m->value_size)
				return 1;
			if (bytes && m->init_data && off + n <= m->init_size &&
			    memcmp((const uint8_t *)m->init_data + off, bytes, n) == 0)
				return 1;
		}
		i++;
	}
	return 0;
}

static void check_globals(const struct gbpf_object *obj, const char *tag)
{
	const struct gbpf_prog_desc *p = gbpf_object__find_prog(obj, "use_globals");
	const uint32_t v_data = 0x11223344, v_ro = 0xfeedbeef, v_custom = 42;
	const uint64_t v_data2 = 0x5566778899aabbccULL;
	const struct gbpf_map_desc *m;

	m = map_ok(obj, tag, ".data", GBPF_MAP_TYPE_ARRAY, 4, 16, 1, GBPF_F_MMAPABLE, GBPF_MAP_ORIGIN_DATA);
	tap_ok(m && m->init_data && m->init_size == 16 && memmem(m->init_data, 16, &v_data, 4) &&
		       memmem(m->init_data, 16, &v_data2, 8),
	       "%s: .data holds 0x11223344 and 0x5566778899aabbcc", tag);
	m = map_ok(obj, tag, ".rodata", GBPF_MAP_TYPE_ARRAY, 4, 12, 1, GBPF_F_MMAPABLE | GBPF_F_RDONLY_PROG,
		   GBPF_MAP_ORIGIN_RODATA);
	tap_ok(m && m->init_data && memmem(m->init_data, m->init_size, &v_ro, 4) &&
		       memmem(m->init_data, m->init_size, "gbpf!", 6),
	       "%s: .rodata holds 0xfeedbeef and \"gbpf!\"", tag);
	m = map_ok(obj, tag, ".data.custom", GBPF_MAP_TYPE_ARRAY, 4, 4, 1, GBPF_F_MMAPABLE,
		   GBPF_MAP_ORIGIN_DATA);
	tap_ok(m && m->init_data && m->init_size == 4 && memcmp(m->init_data, &v_custom, 4) == 0,
	       "%s: .data.custom holds 42", tag);
	m = map_ok(obj, tag, ".bss", GBPF_MAP_TYPE_ARRAY, 4, 40, 1, GBPF_F_MMAPABLE, GBPF_MAP_ORIGIN_BSS);
	tap_ok(m && !m->init_data && m->init_size == 0, "%s: .bss has no init data", tag);
	m = map_ok(obj, tag, ".rodata.str1.1", GBPF_MAP_TYPE_ARRAY, 4, 12, 1,
		   GBPF_F_MMAPABLE | GBPF_F_RDONLY_PROG, GBPF_MAP_ORIGIN_RODATA);
	tap_ok(m && m->init_data && memmem(m->init_data, m->init_size, "literal %d\n", 12),
	       "%s: .rodata.str1.1 holds the literal", tag);
	tap_ok(refers_to(obj, p, ".data", &v_data, 4), "%s: g_data load points at 0x11223344 in .data", tag);
	tap_ok(refers_to(obj, p, ".data", &v_data2, 8), "%s: g_data2 load points at its value", tag);
	tap_ok(refers_to(obj, p, ".rodata", &v_ro, 4), "%s: g_rodata load points at 0xfeedbeef", tag);
	tap_ok(refers_to(obj, p, ".rodata", "gbpf!", 6), "%s: g_rostr load points at \"gbpf!\"", tag);
	tap_ok(refers_to(obj, p, ".data.custom", &v_custom, 4), "%s: g_custom load points at 42", tag);
	tap_ok(refers_to(obj, p, ".rodata.str1.1", "literal %d\n", 12),
	       "%s: string literal load points at the literal", tag);
	tap_ok(refers_to(obj, p, ".bss", NULL, 0), "%s: .bss is referenced with an in-range offset", tag);
	attach_ok(obj, tag, "use_globals", GBPF_ATTACH_GPU_ENTRY, "vec*", NULL);
}

static int count_local_calls(const struct gbpf_prog_desc *p, int *bad)
{
	size_t i;
	int n = 0;

	*bad = 0;
	for (i = 0; i < p->insn_cnt; i++) {
		const struct gbpf_insn *in = &p->insns[i];
		int64_t t = (int64_t)i + in->imm + 1;

		if ((in->code == GBPF_OP_CALL && in->src == GBPF_CALL_LOCAL) ||
		    (in->code == GBPF_OP_LDDW && in->src == GBPF_PSEUDO_FUNC)) {
			n++;
			/* targets lie inside and start right after an exit (a function boundary) */
			if (t <= 0 || (size_t)t >= p->insn_cnt || p->insns[t - 1].code != GBPF_OP_EXIT)
				(*bad)++;
		}
		if (in->code == GBPF_OP_LDDW)
			i++;
	}
	return n;
}

static void eval_ok(const struct gbpf_object *obj, const char *tag, const char *prog, uint64_t want)
{
	const struct gbpf_prog_desc *p = gbpf_object__find_prog(obj, prog);
	uint64_t got = ~0ULL;
	int rc = p ? mini_eval(p, 0, &got) : -2;

	tap_ok(rc == 0 && got == want, "%s: %s links and computes %llu (rc %d, got %llu)", tag, prog,
	       (unsigned long long)want, rc, (unsigned long long)got);
}

static void check_subprogs(const struct gbpf_object *obj, const char *tag)
{
	const struct gbpf_prog_desc *p;
	int bad, calls;
	size_t i;

	tap_ok(gbpf_object__prog_cnt(obj) == 13, "%s: 13 programs (got %zu)", tag,
	       gbpf_object__prog_cnt(obj));
	p = gbpf_object__prog(obj, 0);
	tap_ok(p && strcmp(p->name, "first_in_section") == 0 &&
		       gbpf_object__prog(obj, 1) &&
		       strcmp(gbpf_object__prog(obj, 1)->name, "second_in_section") == 0 &&
		       strcmp(gbpf_object__prog(obj, 1)->section, p->section) == 0,
	       "%s: two programs share section 'gpu/entry/vec_add*'", tag);
	eval_ok(obj, tag, "first_in_section", 4);   /* leaf(1) */
	eval_ok(obj, tag, "second_in_section", 17); /* middle(2) = leaf(2) + leaf(3) */
	eval_ok(obj, tag, "plain_runnable", 14);    /* (leaf(1) + leaf(2)) ^ 5 */
	for (i = 0; i < gbpf_object__prog_cnt(obj); i++) {
		p = gbpf_object__prog(obj, i);
		calls = count_local_calls(p, &bad);
		if (bad)
			tap_ok(0, "%s: %s: %d of %d code references miss a function start", tag, p->name,
			       bad, calls);
	}
	p = gbpf_object__find_prog(obj, "second_in_section");
	calls = p ? count_local_calls(p, &bad) : 0;
	tap_ok(p && calls >= 3 && !bad, "%s: second_in_section has %d resolved local calls", tag, calls);
	p = gbpf_object__find_prog(obj, "with_callback");
	calls = p ? count_local_calls(p, &bad) : 0;
	{
		int pf = 0;

		for (i = 0; p && i < p->insn_cnt; i++)
			if (p->insns[i].code == GBPF_OP_LDDW && p->insns[i].src == GBPF_PSEUDO_FUNC) {
				int64_t t = (int64_t)i + p->insns[i].imm + 1;

				/* loop_cb starts by zero-extending its u32 argument: r1 <<= 32 */
				pf = t > 0 && (size_t)t < p->insn_cnt &&
				     p->insns[t].code == (GBPF_ALU64 | GBPF_LSH | GBPF_K) &&
				     p->insns[t].imm == 32;
			}
		tap_ok(pf && !bad, "%s: bpf_loop callback address is a GBPF_PSEUDO_FUNC load of loop_cb", tag);
	}
	p = gbpf_object__find_prog(obj, "mem_all");
	tap_ok(p && p->insn_cnt == 2, "%s: a program without calls links to itself only", tag);
	attach_ok(obj, tag, "first_in_section", GBPF_ATTACH_GPU_ENTRY, "vec_add*", NULL);
	attach_ok(obj, tag, "with_callback", GBPF_ATTACH_GPU_EXIT, "ns::kernel<float>", NULL);
	attach_ok(obj, tag, "mem_all", GBPF_ATTACH_GPU_MEM, NULL, NULL);
	attach_ok(obj, tag, "on_barrier", GBPF_ATTACH_GPU_BARRIER, "reduce", NULL);
	attach_ok(obj, tag, "launch_all", GBPF_ATTACH_HOST_LAUNCH, NULL, NULL);
	attach_ok(obj, tag, "launch_gemm", GBPF_ATTACH_HOST_LAUNCH, "gemm_*", NULL);
	attach_ok(obj, tag, "on_memcpy", GBPF_ATTACH_HOST_MEMCPY, NULL, NULL);
	attach_ok(obj, tag, "on_malloc", GBPF_ATTACH_HOST_MALLOC, NULL, NULL);
	attach_ok(obj, tag, "on_sync", GBPF_ATTACH_HOST_SYNC, NULL, NULL);
	attach_ok(obj, tag, "on_module_load", GBPF_ATTACH_HOST_MODULE_LOAD, NULL, NULL);
	attach_ok(obj, tag, "entry_every_kernel", GBPF_ATTACH_GPU_ENTRY, NULL, NULL);
	attach_ok(obj, tag, "plain_runnable", GBPF_ATTACH_NONE, NULL, NULL);
	map_ok(obj, tag, "counters", GBPF_MAP_TYPE_GPU_ARRAY, 4, 8, 4, 0, GBPF_MAP_ORIGIN_USER);
	map_ok(obj, tag, ".bss", GBPF_MAP_TYPE_ARRAY, 4, 8, 1, GBPF_F_MMAPABLE, GBPF_MAP_ORIGIN_BSS);
}

static void check_api(const struct gbpf_object *obj, const char *path, const char *tag)
{
	const struct gbpf_prog_desc *p;
	const struct gbpf_map_desc *m;
	size_t n = 0, k = 0;

	gbpf_object__for_each_prog(p, obj) {
		if (p->sz == sizeof(*p) && p->maps == gbpf_object__map(obj, 0) &&
		    p->map_cnt == gbpf_object__map_cnt(obj) && p->source_file &&
		    strcmp(p->source_file, path) == 0 && p->license == gbpf_object__license(obj))
			n++;
	}
	gbpf_object__for_each_map(m, obj)
		k++;
	tap_ok(n == gbpf_object__prog_cnt(obj) && k == gbpf_object__map_cnt(obj),
	       "%s: iteration visits %zu programs with consistent descs and %zu maps", tag, n, k);
	errno = 0;
	tap_ok(!gbpf_object__prog(obj, 1000) && errno == ENOENT && !gbpf_object__find_prog(obj, "nope") &&
		       !gbpf_object__find_map(obj, "nope") && gbpf_object__find_map_idx(obj, "nope") == -ENOENT,
	       "%s: out-of-range and unknown names give NULL / -ENOENT", tag);
}

/* Print tags: each map's tag, and the histogram shape the printer derives from tag, name and shape. */
static void check_print_tags(const struct gbpf_object *obj, const char *tag)
{
	static const struct {
		const char *map;
		uint32_t print;
		enum gbpf_map_hist_shape shape;
	} want[] = {
		{"usecs", GBPF_MAP_PRINT_LOG2_HIST, GBPF_MAP_HIST_ARRAY},
		{"slots", GBPF_MAP_PRINT_LOG2_HIST, GBPF_MAP_HIST_SLOT_KEY},
		{"per_kernel", GBPF_MAP_PRINT_LOG2_HIST, GBPF_MAP_HIST_PER_KEY},
		{"history", GBPF_MAP_PRINT_TABLE, GBPF_MAP_HIST_NONE},
		{"lat_hist", GBPF_MAP_PRINT_AUTO, GBPF_MAP_HIST_ARRAY},
		{"events", GBPF_MAP_PRINT_AUTO, GBPF_MAP_HIST_NONE},
	};
	size_t i;

	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const struct gbpf_map_desc *m = gbpf_object__find_map(obj, want[i].map);

		tap_ok(m && m->print == want[i].print && gbpf_map_desc__hist_shape(m) == want[i].shape,
		       "%s: map %s: print tag %u, histogram shape %d (got %d, %d)", tag, want[i].map,
		       want[i].print, want[i].shape, m ? (int)m->print : -1,
		       m ? (int)gbpf_map_desc__hist_shape(m) : -1);
	}
	{
		/* A producer whose struct ends before the field: the name rule alone. */
		struct gbpf_map_desc old = *gbpf_object__find_map(obj, "history");

		old.sz = offsetof(struct gbpf_map_desc, print);
		tap_ok(gbpf_map_desc__hist_shape(&old) == GBPF_MAP_HIST_ARRAY,
		       "%s: a description without the print field falls back to the name rule", tag);
	}
}

int main(int argc, char **argv)
{
	int i, seen = 0;

	for (i = 1; i < argc; i++) {
		const char *path = argv[i], *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
		char err[512] = "";
		GBPF_OPTS(gbpf_object_open_opts, opts, .errbuf = err, .errbuf_size = sizeof(err));
		struct gbpf_object *obj = gbpf_object__open_file(path, &opts);
		size_t size = 0;
		uint8_t *bytes;

		if (!tap_ok(obj != NULL, "%s: opens (%s)", base, err))
			continue;
		seen++;
		tap_ok(strcmp(gbpf_object__name(obj), path) == 0, "%s: object name is the path", base);
		check_api(obj, path, base);
		if (strncmp(base, "maps_btf.", 9) == 0)
			check_maps_btf(obj, base);
		else if (strncmp(base, "legacy_maps.", 12) == 0)
			check_legacy(obj, base);
		else if (strncmp(base, "globals.", 8) == 0)
			check_globals(obj, base);
		else if (strncmp(base, "subprogs.", 9) == 0)
			check_subprogs(obj, base);
		else if (strncmp(base, "print_tags.", 11) == 0)
			check_print_tags(obj, base);
		gbpf_object__close(obj);

		/* The same bytes from memory give the same object. */
		bytes = read_whole(path, &size);
		if (bytes) {
			GBPF_OPTS(gbpf_object_open_opts, mopts, .object_name = "mem.o");
			struct gbpf_object *mobj = gbpf_object__open_mem(bytes, size, &mopts);
			size_t cnt = mobj ? gbpf_object__prog_cnt(mobj) : 0;

			free(bytes); /* the object keeps its own copy */
			tap_ok(mobj && cnt > 0 && strcmp(gbpf_object__name(mobj), "mem.o") == 0 &&
				       strcmp(gbpf_object__prog(mobj, 0)->source_file, "mem.o") == 0,
			       "%s: open_mem works and names the object", base);
			gbpf_object__close(mobj);
		}
	}
	tap_ok(seen == argc - 1 && seen >= 4, "every object given (%d) was opened", argc - 1);
	return tap_done();
}
