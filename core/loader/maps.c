/* SPDX-License-Identifier: MIT */
/*
 * core/loader/maps.c - map descriptions: BTF-defined maps (SEC(".maps")),
 * legacy struct bpf_map_def maps (SEC("maps")) and one array per global
 * data section.
 *
 * BTF maps are read with libbpf's btf__* parser, not bpf_object__open_mem().
 * Checked against Debian's libbpf 1.1.2: bpf_object__open accepts unknown
 * section names (program type 0) and keeps unknown map types (1501..1527)
 * as they are, but it refuses any object with a legacy "maps" section
 * (-EOPNOTSUPP), prefixes global data maps with the object name and prints
 * its diagnostics on stderr; parsing BTF directly avoids all three. The
 * .maps DATASEC of an object file does not reliably carry variable offsets
 * (libbpf fixes them up from ELF symbols too), so the ELF symbol of each map
 * gives its offset.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/btf.h>

#include "loader_internal.h"

/* A global data section larger than this is rejected (a NOBITS .bss could
 * claim any size without occupying the file). */
#define LD_MAX_DATA_SECTION (256u << 20)

static struct gbpf_map_desc *new_map(struct gbpf_object *obj, const char *where)
{
	struct gbpf_map_desc *m;

	if (obj->map_cnt >= LD_MAX_MAPS) {
		ld_err(obj, -E2BIG, "section '%s': more than %d maps", where, LD_MAX_MAPS);
		return NULL;
	}
	if (!obj->maps) {
		obj->maps = calloc(LD_MAX_MAPS, sizeof(*obj->maps));
		obj->map_extra = calloc(LD_MAX_MAPS, sizeof(*obj->map_extra));
		if (!obj->maps || !obj->map_extra) {
			ld_err(obj, -ENOMEM, "section '%s': out of memory for maps", where);
			return NULL;
		}
	}
	m = &obj->maps[obj->map_cnt++];
	memset(m, 0, sizeof(*m));
	m->sz = sizeof(*m);
	return m;
}

static const Elf64_Sym *find_sec_sym(const struct gbpf_object *obj, int shndx, const char *name)
{
	size_t i;

	for (i = 1; i < obj->sym_cnt; i++) {
		const Elf64_Sym *sym = &obj->syms[i];

		if (sym->st_shndx == shndx && ELF64_ST_TYPE(sym->st_info) != STT_SECTION &&
		    strcmp(ld_sym_name(obj, sym), name) == 0)
			return sym;
	}
	return NULL;
}

static const struct btf_type *skip_mods(const struct btf *btf, uint32_t id, uint32_t *res_id)
{
	const struct btf_type *t = btf__type_by_id(btf, id);
	int depth;

	for (depth = 0; t && depth < 32 && (btf_is_mod(t) || btf_is_typedef(t)); depth++) {
		id = t->type;
		t = btf__type_by_id(btf, id);
	}
	if (t && (btf_is_mod(t) || btf_is_typedef(t)))
		return NULL;
	if (res_id)
		*res_id = id;
	return t;
}

/* __uint(name, val) is `int (*name)[val]`: a pointer to an array of val. */
static int get_uint(const struct btf *btf, const struct btf_member *m, uint32_t *val)
{
	const struct btf_type *t = skip_mods(btf, m->type, NULL);
	const struct btf_type *arr;

	if (!t || !btf_is_ptr(t))
		return -EINVAL;
	arr = skip_mods(btf, t->type, NULL);
	if (!arr || !btf_is_array(arr))
		return -EINVAL;
	*val = btf_array(arr)->nelems;
	return 0;
}

/* __type(name, T) is `T *name`: the size of T. */
static int get_type_size(const struct btf *btf, const struct btf_member *m, uint32_t *size)
{
	const struct btf_type *t = skip_mods(btf, m->type, NULL);
	long long sz;

	if (!t || !btf_is_ptr(t))
		return -EINVAL;
	sz = btf__resolve_size(btf, t->type);
	if (sz < 0 || sz > UINT32_MAX)
		return -EINVAL;
	*size = (uint32_t)sz;
	return 0;
}

static int parse_btf_map(struct gbpf_object *obj, const struct btf *btf, const char *name,
			 uint32_t var_type, struct gbpf_map_desc *m)
{
	const struct btf_type *def = skip_mods(btf, var_type, NULL);
	const struct btf_member *mem;
	int have_type = 0, have_key = 0, have_value = 0;
	uint32_t i, n;

	if (!def || !btf_is_struct(def))
		return ld_err(obj, -GBPF_ERRNO__FORMAT,
			      "section '.maps': map '%s': BTF definition is not a struct", name);
	mem = btf_members(def);
	n = btf_vlen(def);
	for (i = 0; i < n; i++, mem++) {
		const char *mname = btf__name_by_offset(btf, mem->name_off);
		uint32_t v = 0, key_sz = 0;
		int err = 0;

		if (!mname)
			return ld_err(obj, -GBPF_ERRNO__FORMAT,
				      "section '.maps': map '%s': member #%u has an invalid BTF name", name, i);
		if (strcmp(mname, "type") == 0) {
			err = get_uint(btf, mem, &m->type);
			have_type = 1;
		} else if (strcmp(mname, "max_entries") == 0) {
			err = get_uint(btf, mem, &m->max_entries);
		} else if (strcmp(mname, "map_flags") == 0) {
			err = get_uint(btf, mem, &m->map_flags);
		} else if (strcmp(mname, "key_size") == 0) {
			err = get_uint(btf, mem, &v);
			if (!err && have_key && v != m->key_size)
				return ld_err(obj, -GBPF_ERRNO__FORMAT,
					      "section '.maps': map '%s': key_size %u contradicts key type size %u",
					      name, v, m->key_size);
			m->key_size = v;
			have_key = 1;
		} else if (strcmp(mname, "key") == 0) {
			err = get_type_size(btf, mem, &key_sz);
			if (!err && have_key && key_sz != m->key_size)
				return ld_err(obj, -GBPF_ERRNO__FORMAT,
					      "section '.maps': map '%s': key type size %u contradicts key_size %u",
					      name, key_sz, m->key_size);
			m->key_size = key_sz;
			have_key = 1;
		} else if (strcmp(mname, "value_size") == 0) {
			err = get_uint(btf, mem, &v);
			if (!err && have_value && v != m->value_size)
				return ld_err(obj, -GBPF_ERRNO__FORMAT,
					      "section '.maps': map '%s': value_size %u contradicts value type size %u",
					      name, v, m->value_size);
			m->value_size = v;
			have_value = 1;
		} else if (strcmp(mname, "value") == 0) {
			err = get_type_size(btf, mem, &v);
			if (!err && have_value && v != m->value_size)
				return ld_err(obj, -GBPF_ERRNO__FORMAT,
					      "section '.maps': map '%s': value type size %u contradicts value_size %u",
					      name, v, m->value_size);
			m->value_size = v;
			have_value = 1;
		} else if (strcmp(mname, "numa_node") == 0 || strcmp(mname, "map_extra") == 0 ||
			   strcmp(mname, "pinning") == 0) {
			/* Meaningless for gbpf maps; accepted so that libbpf-style probes load. */
			err = get_uint(btf, mem, &v);
		} else if (strcmp(mname, "values") == 0) {
			return ld_err(obj, -ENOTSUP,
				      "section '.maps': map '%s': map-in-map ('values') is not supported", name);
		} else {
			return ld_err(obj, -GBPF_ERRNO__FORMAT,
				      "section '.maps': map '%s': unknown member '%s'", name, mname);
		}
		if (err)
			return ld_err(obj, -GBPF_ERRNO__FORMAT,
				      "section '.maps': map '%s': member '%s' is not a __uint()/__type() definition",
				      name, mname);
	}
	if (!have_type)
		return ld_err(obj, -GBPF_ERRNO__FORMAT, "section '.maps': map '%s': no 'type' member", name);
	return 0;
}

static bool hist_array_type(uint32_t t)
{
	return t == GBPF_MAP_TYPE_ARRAY || t == GBPF_MAP_TYPE_GPU_ARRAY ||
	       t == GBPF_MAP_TYPE_PERCPU_ARRAY;
}

static bool hist_hash_type(uint32_t t)
{
	return t == GBPF_MAP_TYPE_HASH || t == GBPF_MAP_TYPE_LRU_HASH ||
	       t == GBPF_MAP_TYPE_GPU_HASH || t == GBPF_MAP_TYPE_PERCPU_HASH;
}

enum gbpf_map_hist_shape gbpf_map_desc__hist_shape(const struct gbpf_map_desc *desc)
{
	uint32_t print = GBPF_MAP_PRINT_AUTO;

	if (!desc || !desc->name || desc->origin == GBPF_MAP_ORIGIN_RODATA)
		return GBPF_MAP_HIST_NONE;
	if (desc->sz >= offsetof(struct gbpf_map_desc, print) + sizeof(desc->print))
		print = desc->print;
	if (print == GBPF_MAP_PRINT_TABLE ||
	    (print == GBPF_MAP_PRINT_AUTO && !strstr(desc->name, "hist")))
		return GBPF_MAP_HIST_NONE;
	if (hist_array_type(desc->type) && desc->value_size == 8)
		return GBPF_MAP_HIST_ARRAY;
	if (print == GBPF_MAP_PRINT_LOG2_HIST && hist_hash_type(desc->type) && desc->value_size == 8 &&
	    (desc->key_size == 4 || desc->key_size == 8))
		return GBPF_MAP_HIST_SLOT_KEY;
	if (desc->key_size && desc->value_size >= 16 && desc->value_size % 8 == 0 &&
	    (hist_array_type(desc->type) || hist_hash_type(desc->type)))
		return GBPF_MAP_HIST_PER_KEY;
	return GBPF_MAP_HIST_NONE;
}

/*
 * Declaration tags on the map variable ("gbpf:print=log2_hist", from
 * GBPF_PRINT_LOG2_HIST in gbpf/probe.h) say how the controller shows it. Tags
 * outside the "gbpf:" namespace belong to other tools and are ignored; an
 * unknown gbpf tag is an error, so that a misspelt one is not silently lost.
 */
static int parse_map_tags(struct gbpf_object *obj, const struct btf *btf, uint32_t var_id,
			  struct gbpf_map_desc *m)
{
	uint32_t id, n = btf__type_cnt(btf);

	for (id = 1; id < n; id++) {
		const struct btf_type *t = btf__type_by_id(btf, id);
		const char *tag;

		if (!t || !btf_is_decl_tag(t) || t->type != var_id)
			continue;
		tag = btf__name_by_offset(btf, t->name_off);
		if (!tag || strncmp(tag, "gbpf:", 5))
			continue;
		if (btf_decl_tag(t)->component_idx != -1)
			return ld_err(obj, -GBPF_ERRNO__FORMAT,
				      "section '.maps': map '%s': tag '%s' is on a member; put it on the map",
				      m->name, tag);
		if (!strcmp(tag, "gbpf:print=log2_hist"))
			m->print = GBPF_MAP_PRINT_LOG2_HIST;
		else if (!strcmp(tag, "gbpf:print=table"))
			m->print = GBPF_MAP_PRINT_TABLE;
		else
			return ld_err(obj, -GBPF_ERRNO__FORMAT,
				      "section '.maps': map '%s': unknown tag '%s' (known: "
				      "gbpf:print=log2_hist, gbpf:print=table)",
				      m->name, tag);
	}
	if (m->print == GBPF_MAP_PRINT_LOG2_HIST && gbpf_map_desc__hist_shape(m) == GBPF_MAP_HIST_NONE)
		return ld_err(obj, -GBPF_ERRNO__FORMAT,
			      "section '.maps': map '%s': gbpf:print=log2_hist needs u64 slots: an array "
			      "of u64, a hash from a 4- or 8-byte slot to u64, or u64[n] values "
			      "(type %u, key %u bytes, value %u bytes)",
			      m->name, m->type, m->key_size, m->value_size);
	return 0;
}

static int collect_btf_maps(struct gbpf_object *obj)
{
	const struct ld_sec *bs, *ms = &obj->secs[obj->maps_btf_idx];
	const struct btf_type *ds;
	const struct btf_var_secinfo *vi;
	struct btf *btf;
	int err = 0, id;
	uint32_t i, n;

	if (obj->btf_idx < 0)
		return ld_err(obj, -GBPF_ERRNO__FORMAT,
			      "section '.maps' (#%d): BTF-defined maps need a .BTF section (build with -g)",
			      obj->maps_btf_idx);
	bs = &obj->secs[obj->btf_idx];
	if (bs->sh.sh_size > UINT32_MAX)
		return ld_err(obj, -GBPF_ERRNO__FORMAT, "section '.BTF' (#%d): size %llu is too large",
			      obj->btf_idx, (unsigned long long)bs->sh.sh_size);
	btf = btf__new(bs->data, (uint32_t)bs->sh.sh_size);
	if (!btf)
		return ld_err(obj, -GBPF_ERRNO__FORMAT,
			      "section '.BTF' (#%d) at offset 0x%llx: libbpf cannot parse the BTF (%s)",
			      obj->btf_idx, (unsigned long long)bs->sh.sh_offset, strerror(errno));
	id = btf__find_by_name_kind(btf, ".maps", BTF_KIND_DATASEC);
	if (id <= 0) {
		err = ld_err(obj, -GBPF_ERRNO__FORMAT,
			     "section '.BTF' (#%d): no DATASEC '.maps' describing section '.maps'", obj->btf_idx);
		goto out;
	}
	ds = btf__type_by_id(btf, id);
	vi = btf_var_secinfos(ds);
	n = btf_vlen(ds);
	for (i = 0; i < n; i++, vi++) {
		const struct btf_type *var = btf__type_by_id(btf, vi->type);
		const char *name = var ? btf__name_by_offset(btf, var->name_off) : NULL;
		const Elf64_Sym *sym;
		struct gbpf_map_desc *m;

		if (!var || !btf_is_var(var) || !name || !*name) {
			err = ld_err(obj, -GBPF_ERRNO__FORMAT,
				     "section '.BTF': DATASEC '.maps' entry #%u is not a named variable", i);
			goto out;
		}
		sym = find_sec_sym(obj, obj->maps_btf_idx, name);
		if (!sym) {
			err = ld_err(obj, -GBPF_ERRNO__FORMAT,
				     "section '.maps': map '%s' described by BTF has no ELF symbol", name);
			goto out;
		}
		if (sym->st_value > ms->sh.sh_size || sym->st_size > ms->sh.sh_size - sym->st_value) {
			err = ld_err(obj, -GBPF_ERRNO__FORMAT,
				     "section '.maps': map '%s' at offset 0x%llx size %llu lies outside the "
				     "%llu-byte section",
				     name, (unsigned long long)sym->st_value,
				     (unsigned long long)sym->st_size, (unsigned long long)ms->sh.sh_size);
			goto out;
		}
		m = new_map(obj, ".maps");
		if (!m) {
			err = -ENOMEM;
			goto out;
		}
		m->name = ld_sym_name(obj, sym);
		m->origin = GBPF_MAP_ORIGIN_USER;
		obj->map_extra[obj->map_cnt - 1] =
			(struct ld_map_extra){obj->maps_btf_idx, sym->st_value, sym->st_size};
		err = parse_btf_map(obj, btf, m->name, var->type, m);
		if (!err)
			err = parse_map_tags(obj, btf, vi->type, m);
		if (err)
			goto out;
	}
	/* clang lays maps out by first use, and the DATASEC follows no fixed
	 * order either: order by offset so that indexes are stable. */
	for (i = 1; !err && i < obj->map_cnt; i++) {
		uint32_t k;

		for (k = i; k > 0 && obj->map_extra[k - 1].off > obj->map_extra[k].off; k--) {
			struct gbpf_map_desc tm = obj->maps[k];
			struct ld_map_extra tx = obj->map_extra[k];

			obj->maps[k] = obj->maps[k - 1];
			obj->map_extra[k] = obj->map_extra[k - 1];
			obj->maps[k - 1] = tm;
			obj->map_extra[k - 1] = tx;
		}
	}
out:
	btf__free(btf);
	return err;
}

static int cmp_sym_value(const void *a, const void *b)
{
	const Elf64_Sym *x = *(const Elf64_Sym *const *)a, *y = *(const Elf64_Sym *const *)b;

	return x->st_value < y->st_value ? -1 : x->st_value > y->st_value;
}

static int collect_legacy_maps(struct gbpf_object *obj)
{
	const struct ld_sec *s = &obj->secs[obj->maps_legacy_idx];
	const Elf64_Sym **list;
	size_t i, n = 0;
	int err = 0;

	list = calloc(obj->sym_cnt, sizeof(*list));
	if (!list)
		return ld_err(obj, -ENOMEM, "section 'maps': out of memory");
	for (i = 1; i < obj->sym_cnt; i++) {
		const Elf64_Sym *sym = &obj->syms[i];

		if (sym->st_shndx == obj->maps_legacy_idx && ELF64_ST_TYPE(sym->st_info) == STT_OBJECT)
			list[n++] = sym;
	}
	qsort(list, n, sizeof(*list), cmp_sym_value);
	for (i = 0; i < n; i++) {
		const Elf64_Sym *sym = list[i];
		const char *name = ld_sym_name(obj, sym);
		uint32_t f[5];
		struct gbpf_map_desc *m;

		if (sym->st_size < LD_LEGACY_MAP_DEF_MIN || sym->st_value > s->sh.sh_size ||
		    sym->st_size > s->sh.sh_size - sym->st_value) {
			err = ld_err(obj, -GBPF_ERRNO__FORMAT,
				     "section 'maps' (#%d): map '%s' at offset 0x%llx size %llu is not a "
				     "struct bpf_map_def inside the %llu-byte section",
				     obj->maps_legacy_idx, name, (unsigned long long)sym->st_value,
				     (unsigned long long)sym->st_size, (unsigned long long)s->sh.sh_size);
			goto out;
		}
		memcpy(f, s->data + sym->st_value, sizeof(f));
		m = new_map(obj, "maps");
		if (!m) {
			err = -ENOMEM;
			goto out;
		}
		m->name = name;
		m->type = f[0];
		m->key_size = f[1];
		m->value_size = f[2];
		m->max_entries = f[3];
		m->map_flags = f[4];
		m->origin = GBPF_MAP_ORIGIN_USER;
		obj->map_extra[obj->map_cnt - 1] =
			(struct ld_map_extra){obj->maps_legacy_idx, sym->st_value, sym->st_size};
	}
out:
	free(list);
	return err;
}

static int collect_data_maps(struct gbpf_object *obj)
{
	size_t i;

	for (i = 1; i < obj->sec_cnt; i++) {
		struct ld_sec *s = &obj->secs[i];
		struct gbpf_map_desc *m;

		if (s->kind != LD_SEC_DATA && s->kind != LD_SEC_RODATA && s->kind != LD_SEC_BSS)
			continue;
		if (s->sh.sh_size == 0)
			continue; /* nothing to map; a relocation against it is reported later */
		if (s->sh.sh_size > LD_MAX_DATA_SECTION)
			return ld_err(obj, -E2BIG,
				      "section '%s' (#%zu): global data of %llu bytes exceeds the %u-byte limit",
				      s->name, i, (unsigned long long)s->sh.sh_size, LD_MAX_DATA_SECTION);
		m = new_map(obj, s->name);
		if (!m)
			return -ENOMEM;
		s->map_idx = (int)(obj->map_cnt - 1);
		m->name = s->name;
		m->type = GBPF_MAP_TYPE_ARRAY;
		m->key_size = 4;
		m->value_size = (uint32_t)s->sh.sh_size;
		m->max_entries = 1;
		m->map_flags = GBPF_F_MMAPABLE;
		if (s->kind == LD_SEC_RODATA) {
			m->origin = GBPF_MAP_ORIGIN_RODATA;
			m->map_flags |= GBPF_F_RDONLY_PROG;
		} else {
			m->origin = s->kind == LD_SEC_DATA ? GBPF_MAP_ORIGIN_DATA : GBPF_MAP_ORIGIN_BSS;
		}
		/* A .data section may be NOBITS when it is all zero. */
		if (s->kind != LD_SEC_BSS && s->data) {
			m->init_data = s->data;
			m->init_size = s->sh.sh_size;
		}
		obj->map_extra[obj->map_cnt - 1] = (struct ld_map_extra){(uint32_t)i, 0, s->sh.sh_size};
	}
	return 0;
}

int ld_collect_maps(struct gbpf_object *obj)
{
	int err = 0;

	if (obj->maps_btf_idx >= 0)
		err = collect_btf_maps(obj);
	if (!err && obj->maps_legacy_idx >= 0)
		err = collect_legacy_maps(obj);
	if (!err)
		err = collect_data_maps(obj);
	return err;
}
