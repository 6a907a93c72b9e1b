/* SPDX-License-Identifier: MIT */
/*
 * gbpf_cuda_inject_image(): find the PTX of an application file (direct
 * PTX, fatbin, ELF with fatbin sections, cubin), instrument it, and list
 * every kernel with the reason those without PTX cannot be instrumented.
 */
#include "plugins/cuda/fatbin/fatbin.h"
#include "plugins/cuda/ptx/ptx_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gbpf/cuda_inject.h>
#include <gbpf/plugin.h>

#define EM_CUDA 190

struct kname_set {
	char **v;
	size_t n, cap;
};

struct run {
	struct gbpf_cuda_inject_opts o;
	struct gbpf_ptx_module *frag;
	struct gbpf_cuda_inject_result *res;
	const char *filename;
	char *log;
	size_t log_size;
	/* Per PTX module being injected. */
	const char *where;
	struct kname_set *seen;
	bool any_instrumented;
	int err;
};

static int set_add(struct kname_set *s, const char *name)
{
	char *d;

	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->v[i], name))
			return 0;
	if (s->n == s->cap) {
		size_t ncap = s->cap ? s->cap * 2 : 16;
		char **nv = realloc(s->v, ncap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		s->v = nv;
		s->cap = ncap;
	}
	d = strdup(name);
	if (!d)
		return -ENOMEM;
	s->v[s->n++] = d;
	return 0;
}

static bool set_has(const struct kname_set *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->v[i], name))
			return true;
	return false;
}

static void set_free(struct kname_set *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	memset(s, 0, sizeof(*s));
}

static struct gbpf_cuda_kernel_info *add_kernel(struct run *r, const char *name, const char *where)
{
	struct gbpf_cuda_inject_result *res = r->res;
	struct gbpf_cuda_kernel_info *k, *nv;

	nv = realloc(res->kernels, (res->n_kernels + 1) * sizeof(*nv));
	if (!nv)
		return NULL;
	res->kernels = nv;
	k = &nv[res->n_kernels];
	memset(k, 0, sizeof(*k));
	k->name = strdup(name);
	k->module = strdup(where);
	if (!k->name || !k->module) {
		free(k->name);
		free(k->module);
		return NULL;
	}
	k->kernel_id = gbpf_kernel_id(name);
	res->n_kernels++;
	return k;
}

static bool select_adapter(const char *name, struct gbpf_ptx_plan *plan, void *arg)
{
	struct run *r = arg;

	(void)plan;
	return !r->o.select || r->o.select(name, r->o.select_arg);
}

static bool keep_adapter(const char *name, void *arg)
{
	return select_adapter(name, NULL, arg);
}

static void report_adapter(const struct gbpf_ptx_kernel_report *rep, void *arg)
{
	struct run *r = arg;
	struct gbpf_cuda_kernel_info *k;

	if (r->err)
		return;
	k = add_kernel(r, rep->name, r->where);
	if (!k || (rep->reason[0] && !(k->reason = strdup(rep->reason))) ||
	    (r->seen && set_add(r->seen, rep->name))) {
		r->err = -ENOMEM;
		return;
	}
	k->instrumented = rep->instrumented;
	k->n_entry = rep->n_entry;
	k->n_exit = rep->n_exit;
	k->n_mem = rep->n_mem;
	k->n_barrier = rep->n_barrier;
	k->n_block = rep->n_block;
	k->n_params = rep->n_params;
	k->launch_param_off = rep->launch_param_off;
	r->any_instrumented |= rep->instrumented;
}

/* Parse, instrument and keep one PTX module. @strict: a parse error fails
 * the call (direct PTX input) instead of being recorded. */
static int do_ptx(struct run *r, const char *text, size_t len, const char *where,
		  struct kname_set *seen, bool strict)
{
	struct gbpf_ptx_inject_req req = {
		.plan = {.sites = r->o.sites, .entry_probe = r->o.entry_probe,
			 .exit_probe = r->o.exit_probe, .mem_probe = r->o.mem_probe,
			 .barrier_probe = r->o.barrier_probe, .ctx_unused = r->o.ctx_unused,
			 .block_probe = r->o.block_probe,
			 .launch_param = r->o.launch_id_param},
		.thread_local_bytes = r->o.thread_local_bytes,
		.select = select_adapter, .select_arg = r, .device_sm = r->o.max_ptx_arch,
		.report = report_adapter, .report_arg = r,
	};
	char name[512], reason[400];
	struct gbpf_ptx_module *m;
	int err;

	snprintf(name, sizeof(name), "%s%s%s", r->filename ? r->filename : "",
		 r->filename ? ": " : "", where);
	m = gbpf_ptx_parse(text, len, name, r->log, r->log_size);
	if (!m) {
		struct gbpf_cuda_kernel_info *k;

		if (errno == ENOMEM)
			return -ENOMEM;
		if (strict)
			return -GBPF_ERRNO__FORMAT;
		snprintf(reason, sizeof(reason), "PTX does not parse: %s", r->log ? r->log : "");
		k = add_kernel(r, "(module)", where);
		if (!k || !(k->reason = strdup(reason)))
			return -ENOMEM;
		return 0;
	}
	r->where = where;
	r->seen = seen;
	r->any_instrumented = false;
	err = gbpf_ptx_inject(m, r->frag, &req, r->log, r->log_size);
	if (err >= 0)
		err = r->err;
	if (err >= 0 && r->any_instrumented && r->o.only_selected) {
		int pruned = gbpf_ptx_prune(m, keep_adapter, r);

		if (pruned < 0)
			err = pruned;
	}
	if (err >= 0 && r->any_instrumented) {
		struct gbpf_cuda_inject_result *res = r->res;
		struct gbpf_cuda_inject_module *nv;

		nv = realloc(res->modules, (res->n_modules + 1) * sizeof(*nv));
		if (!nv) {
			err = -ENOMEM;
			goto out;
		}
		res->modules = nv;
		nv += res->n_modules;
		memset(nv, 0, sizeof(*nv));
		nv->ptx = gbpf_ptx_print_ex(m, GBPF_PTX_PRINT_SOURCE, &nv->ptx_len);
		nv->module = strdup(where);
		if (!nv->ptx || !nv->module) {
			free(nv->ptx);
			free(nv->module);
			err = -ENOMEM;
			goto out;
		}
		res->n_modules++;
	}
out:
	gbpf_ptx_module_free(m);
	return err < 0 ? err : 0;
}

/* Kernels of ELF entries that had no PTX in their container. */
struct sass_kernel {
	struct run *r;
	const struct kname_set *with_ptx;
	struct kname_set *sass_only;
};

static int sass_cb(const char *name, void *arg)
{
	struct sass_kernel *s = arg;

	if (set_has(s->with_ptx, name))
		return 0;
	return set_add(s->sass_only, name);
}

static int do_container(struct run *r, const char *region, const struct gbpf_fatbin *fb,
			unsigned c)
{
	struct kname_set with_ptx = {0}, sass_only = {0};
	char where[256], label[32], archs[200] = "", ptx_problem[300] = "";
	int err = 0;

	/*
	 * PTX entries newest first, those newer than the device left out: the
	 * agent instruments the first entry that holds a kernel, and the driver
	 * can only JIT PTX of the device's architecture or older.
	 */
	size_t *order = calloc(fb->n_entries ? fb->n_entries : 1, sizeof(*order)), n_order = 0;

	if (!order)
		return -ENOMEM;
	for (size_t i = 0; i < fb->n_entries; i++) {
		const struct gbpf_fatbin_entry *e = &fb->entries[i];
		size_t j;

		if (e->container_index != c || e->kind != GBPF_FATBIN_KIND_PTX)
			continue;
		if (r->o.max_ptx_arch && e->arch > r->o.max_ptx_arch) {
			gbpf_fatbin_entry__label(e, label, sizeof(label));
			if (strlen(ptx_problem) + strlen(label) + 48 < sizeof(ptx_problem))
				snprintf(ptx_problem + strlen(ptx_problem), sizeof(ptx_problem) - strlen(ptx_problem),
					 "%s PTX is newer than the device (sm_%u); ", label, r->o.max_ptx_arch);
			continue;
		}
		for (j = n_order; j > 0 && (!r->o.max_ptx_arch ? 0 : fb->entries[order[j - 1]].arch < e->arch); j--)
			order[j] = order[j - 1];
		order[j] = i;
		n_order++;
	}
	for (size_t oi = 0; oi < n_order && !err; oi++) {
		const struct gbpf_fatbin_entry *e = &fb->entries[order[oi]];
		uint8_t *data;
		size_t len;

		snprintf(where, sizeof(where), "%s container %u entry %u (%s)", region, c, e->index,
			 gbpf_fatbin_entry__label(e, label, sizeof(label)));
		err = gbpf_fatbin_entry__data(e, r->o.max_decompressed, &data, &len, r->log,
					      r->log_size);
		if (err == -ENOMEM)
			break;
		if (err) {
			snprintf(ptx_problem, sizeof(ptx_problem), "%s PTX not decodable (%s); ",
				 label, r->log ? r->log : "");
			err = 0;
			continue;
		}
		err = do_ptx(r, (const char *)data, len, where, &with_ptx, false);
		free(data);
	}
	for (size_t i = 0; i < fb->n_entries && !err; i++) {
		const struct gbpf_fatbin_entry *e = &fb->entries[i];
		struct sass_kernel s = {.r = r, .with_ptx = &with_ptx, .sass_only = &sass_only};
		size_t before = sass_only.n;
		uint8_t *data;
		size_t len;
		int n;

		if (e->container_index != c || e->kind != GBPF_FATBIN_KIND_ELF)
			continue;
		gbpf_fatbin_entry__label(e, label, sizeof(label));
		if (gbpf_fatbin_entry__data(e, r->o.max_decompressed, &data, &len, r->log,
					    r->log_size))
			continue; /* an undecodable cubin only hides names */
		n = gbpf_cubin_for_each_kernel(data, len, sass_cb, &s, r->log, r->log_size);
		free(data);
		if (n == -ENOMEM)
			err = n;
		if ((n > 0 || sass_only.n > before) && strlen(archs) + strlen(label) + 3 < sizeof(archs))
			snprintf(archs + strlen(archs), sizeof(archs) - strlen(archs), "%s%s",
				 archs[0] ? ", " : "", label);
	}
	for (size_t i = 0; i < sass_only.n && !err; i++) {
		struct gbpf_cuda_kernel_info *k;
		char reason[600];

		snprintf(where, sizeof(where), "%s container %u", region, c);
		snprintf(reason, sizeof(reason), "%sno PTX in fatbin, only %s SASS", ptx_problem,
			 archs);
		k = add_kernel(r, sass_only.v[i], where);
		if (!k || !(k->reason = strdup(reason)))
			err = -ENOMEM;
	}
	set_free(&with_ptx);
	set_free(&sass_only);
	free(order);
	return err;
}

static int region_cb(const char *region, const uint8_t *data, size_t size, void *arg)
{
	struct run *r = arg;
	struct gbpf_fatbin fb;
	int err;

	err = gbpf_fatbin__parse(data, size, &fb, r->log, r->log_size);
	if (err)
		return err;
	for (unsigned c = 0; c < fb.n_containers && !err; c++)
		err = do_container(r, region, &fb, c);
	gbpf_fatbin__free(&fb);
	return err;
}

static int cubin_cb(const char *name, void *arg)
{
	struct run *r = arg;
	struct gbpf_cuda_kernel_info *k = add_kernel(r, name, "cubin");

	if (!k || !(k->reason = strdup("cubin holds only SASS; no PTX to instrument")))
		return -ENOMEM;
	return 0;
}

static int count_region(const char *where, const uint8_t *d, size_t n, void *arg)
{
	(void)where;
	(void)d;
	(void)n;
	(*(int *)arg)++;
	return 0;
}

static int opts_copy(struct gbpf_cuda_inject_opts *dst, const struct gbpf_cuda_inject_opts *src)
{
	memset(dst, 0, sizeof(*dst));
	dst->sz = sizeof(*dst);
	if (!src)
		return 0;
	if (src->sz < offsetof(struct gbpf_cuda_inject_opts, sites) + sizeof(src->sites))
		return -EINVAL;
	/* A newer caller's trailing fields must be zero: we cannot honour them. */
	for (size_t i = sizeof(*dst); i < src->sz; i++)
		if (((const char *)src)[i])
			return -EINVAL;
	memcpy(dst, src, src->sz < sizeof(*dst) ? src->sz : sizeof(*dst));
	dst->sz = sizeof(*dst);
	return 0;
}

int gbpf_cuda_inject_image(const void *data, size_t size, const char *filename,
			   const struct gbpf_cuda_inject_opts *opts,
			   struct gbpf_cuda_inject_result **result, char *log, size_t log_size)
{
	struct run r = {.filename = filename, .log = log, .log_size = log_size};
	int err, regions = 0;

	if (!result || (!data && size))
		return -EINVAL;
	*result = NULL;
	if (log && log_size)
		log[0] = 0;
	err = opts_copy(&r.o, opts);
	if (err) {
		gbpf_ptx_log(log, log_size, "inject: options struct of size %zu not supported",
			     opts ? opts->sz : 0);
		return err;
	}
	r.res = calloc(1, sizeof(*r.res));
	if (!r.res)
		return -ENOMEM;
	if (r.o.fragment) {
		r.frag = gbpf_ptx_parse(r.o.fragment, strlen(r.o.fragment), "probe fragment", log,
					log_size);
		if (!r.frag) {
			err = errno == ENOMEM ? -ENOMEM : -GBPF_ERRNO__FORMAT;
			goto out;
		}
	}
	switch (gbpf_cuda_image_kind(data, size)) {
	case GBPF_CUDA_IMAGE_PTX:
		err = do_ptx(&r, data, size, "ptx", NULL, true);
		break;
	case GBPF_CUDA_IMAGE_FATBIN:
		err = region_cb("fatbin", data, size, &r);
		break;
	case GBPF_CUDA_IMAGE_ELF:
		err = gbpf_fatbin_find_in_file(data, size, count_region, &regions, log, log_size);
		if (!err && regions)
			err = gbpf_fatbin_find_in_file(data, size, region_cb, &r, log, log_size);
		else if (!err && size > 0x14 && (((const uint8_t *)data)[0x12] |
						 ((const uint8_t *)data)[0x13] << 8) == EM_CUDA) {
			err = gbpf_cubin_for_each_kernel(data, size, cubin_cb, &r, log, log_size);
			err = err > 0 ? 0 : err;
		}
		break;
	case GBPF_CUDA_IMAGE_WRAPPER:
		gbpf_ptx_log(log, log_size,
			     "%s: a fatbin wrapper holds a pointer; pass the container or the "
			     "executable",
			     filename ? filename : "<image>");
		err = -GBPF_ERRNO__FORMAT;
		break;
	default:
		gbpf_ptx_log(log, log_size,
			     "%s: not PTX, a fatbin, a cubin or an ELF file with CUDA code",
			     filename ? filename : "<image>");
		err = -GBPF_ERRNO__FORMAT;
		break;
	}
out:
	gbpf_ptx_module_free(r.frag);
	if (err < 0) {
		gbpf_cuda_inject_result__free(r.res);
		return err;
	}
	*result = r.res;
	return 0;
}

void gbpf_cuda_inject_result__free(struct gbpf_cuda_inject_result *res)
{
	if (!res)
		return;
	for (size_t i = 0; i < res->n_kernels; i++) {
		free(res->kernels[i].name);
		free(res->kernels[i].module);
		free(res->kernels[i].reason);
	}
	for (size_t i = 0; i < res->n_modules; i++) {
		free(res->modules[i].module);
		free(res->modules[i].ptx);
	}
	free(res->kernels);
	free(res->modules);
	free(res);
}
