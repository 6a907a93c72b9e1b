/* SPDX-License-Identifier: MIT */
/*
 * Agent side of the hip plugin: what `gbpf run` does inside a HIP
 * application. agent_attach keeps the request; the interposers of
 * hip_intercept.c then hand every fat binary and module image here before
 * the runtime sees it. Each AMDGCN code object of the image whose kernels a
 * device program targets goes through co_instrument() (entry/exit probe
 * stubs, the probe module generated for its processor and code object
 * version), the bundle is re-written, and the runtime registers the
 * rewritten copy. Anything that fails is reported and the original image
 * is used: the application always runs.
 *
 * Probe context: the stubs pass kernel_id (gbpf_kernel_id of the kernel's
 * name, as host/launch sees it) and params (the kernarg segment) and read
 * launch_id and device from GBPF_AMDGCN_LAUNCH_GLOBAL, for the fields the
 * programs read (prog_ctx_reads).
 *
 * Not done: placing the maps where a GPU can reach them and setting the
 * probe module's globals (__gbpf_maps, __gbpf_pid_tgid, __gbpf_launch:
 * the launch id of hip_agent_launch and the device). Until then a
 * rewritten image would fault on a real device, so images are rewritten
 * only where the runtime reports no AMD device (the fake-device test
 * runtime, or a machine without a GPU); with a device the originals run and
 * this is reported.
 */
#include <elf.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gbpf/plugin.h>
#include <gbpf/probe_ctx.h>

#include "amdgcn_codegen.h"
#include "co_instrument.h"
#include "co_rewrite.h"
#include "hip_agent.h"
#include "hip_intercept.h"

#ifndef GBPF_HIP_MC
#define GBPF_HIP_MC "llvm-mc-19"
#endif
#ifndef GBPF_HIP_LLD
#define GBPF_HIP_LLD "ld.lld-19"
#endif

#define HIP_MAX_DEV_PROGS 64    /* device programs in one probe module */
#define HIP_MAX_PROBE_MODS 8    /* (processor, code object version) pairs */
#define HIP_MAX_KERNELS 4096    /* kernels remembered for reports */
#define HIP_MAX_HANDLES 65536   /* host stubs and module functions */
#define HIP_MAX_IMAGE (1ull << 30) /* larger images are registered untouched */
#define HIP_NO_DEVICE_UNKNOWN (-1000)

/** One kernel the agent has seen (registered, loaded or launched). */
struct hip_kernel_rec {
	char name[256];
	char objects[64]; /* processors of the rewritten code objects holding it, "gfx90a gfx940" */
	int instrumented;
	uint64_t launches;
};

struct hip_handle_rec {
	const void *handle;
	int module_function;
	uint32_t kernel; /* index into kernels */
};

struct hip_probe_mod {
	char arch[16];
	unsigned cov;
	char *text; /* co_probe_asm_prepare() output, NULL when it failed */
	struct co_probe_res res;
};

/* Everything the agent keeps; one per process (the plugin is loaded once). */
static struct hip_agent_state {
	pthread_mutex_t lock;
	atomic_int attached;
	struct gbpf_agent_services svc;
	const struct gbpf_prog_desc *progs;
	size_t prog_cnt;
	/* device programs of the probe module: __gbpf_probe_<i> is dev[i] */
	const struct gbpf_prog_desc *dev[HIP_MAX_DEV_PROGS];
	size_t dev_idx[HIP_MAX_DEV_PROGS];
	uint64_t dev_reads[HIP_MAX_DEV_PROGS]; /* context bytes each may read (prog_ctx_reads; all without it) */
	size_t n_dev;
	struct hip_probe_mod mods[HIP_MAX_PROBE_MODS];
	size_t n_mods;
	struct hip_kernel_rec *kernels;
	size_t n_kernels;
	struct hip_handle_rec *handles;
	size_t n_handles;
	/* rewritten images and wrappers: the runtime keeps pointers to them */
	void **owned;
	size_t n_owned, cap_owned;
	int devices; /* AMD devices the runtime reports; HIP_NO_DEVICE_UNKNOWN until asked */
	int device_rc;
	uint64_t images_rewritten;
} hip_agent = {.lock = PTHREAD_MUTEX_INITIALIZER, .devices = HIP_NO_DEVICE_UNKNOWN};

static void report(enum gbpf_agent_event ev, const char *kernel, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void report(enum gbpf_agent_event ev, const char *kernel, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	gbpf_agent_vreportf(&hip_agent.svc, ev, kernel, fmt, ap);
	va_end(ap);
}

static const char *mc_path(void)
{
	const char *e = getenv("GBPF_HIP_MC");

	return e && *e ? e : GBPF_HIP_MC;
}

static const char *lld_path(void)
{
	const char *e = getenv("GBPF_HIP_LLD");

	return e && *e ? e : GBPF_HIP_LLD;
}

/* ---- attach ---- */

int gbpf_hip_agent_attach(struct gbpf_backend *backend, const struct gbpf_agent_attach_opts *opts, char *log,
			  size_t log_size)
{
	const char *first_obj = NULL;
	size_t n;

	(void)backend;
	if (!opts || !opts->services || opts->sz < offsetof(struct gbpf_agent_attach_opts, services) + sizeof(void *)) {
		if (log && log_size)
			snprintf(log, log_size, "hip: agent_attach: no attach options / services");
		return -EINVAL;
	}
	pthread_mutex_lock(&hip_agent.lock);
	memset(&hip_agent.svc, 0, sizeof(hip_agent.svc));
	n = opts->services->sz < sizeof(hip_agent.svc) ? opts->services->sz : sizeof(hip_agent.svc);
	memcpy(&hip_agent.svc, opts->services, n);
	hip_agent.progs = opts->progs;
	hip_agent.prog_cnt = opts->prog_cnt;
	hip_agent.n_dev = 0;
	/* One probe module per code object holds the device programs of one
	 * BPF object (they share its map table), as on the other backends. */
	for (size_t i = 0; i < opts->prog_cnt; i++) {
		const struct gbpf_prog_desc *p = &opts->progs[i];
		const char *src = p->source_file ? p->source_file : "";

		if (!gbpf_attach_is_device(p->attach.kind))
			continue;
		if (!first_obj)
			first_obj = src;
		if (strcmp(src, first_obj) || hip_agent.n_dev >= HIP_MAX_DEV_PROGS) {
			report(GBPF_AGENT_EVENT_NOT_INSTRUMENTED, NULL,
			       "program '%s' of %s: not attached (the hip backend attaches the device programs of one "
			       "object, %s, at most %d)",
			       p->name ? p->name : "?", src, first_obj, HIP_MAX_DEV_PROGS);
			continue;
		}
		if (p->attach.kind != GBPF_ATTACH_GPU_ENTRY && p->attach.kind != GBPF_ATTACH_GPU_EXIT)
			report(GBPF_AGENT_EVENT_NOT_INSTRUMENTED, NULL,
			       "program '%s' (section %s): memory, barrier and basic-block probes are not inserted "
			       "into AMD code objects yet (only gpu/entry and gpu/exit)",
			       p->name ? p->name : "?", p->section ? p->section : "?");
		hip_agent.dev[hip_agent.n_dev] = p;
		hip_agent.dev_reads[hip_agent.n_dev] =
			opts->sz >= offsetof(struct gbpf_agent_attach_opts, prog_ctx_reads) + sizeof(opts->prog_ctx_reads) &&
					opts->prog_ctx_reads
				? opts->prog_ctx_reads[i]
				: ~0ULL;
		/*
		 * launch_id and device reach the stubs through the code object's
		 * GBPF_AMDGCN_LAUNCH_GLOBAL, which the host writes before each launch
		 * only once rewritten images run on a device (see the top of this
		 * file): say so rather than let a probe read 0 unawares.
		 */
		if (hip_agent.dev_reads[hip_agent.n_dev] &
		    ((0xffULL << offsetof(struct gbpf_gpu_ctx, launch_id)) | (0xffULL << offsetof(struct gbpf_gpu_ctx, device))))
			report(GBPF_AGENT_EVENT_INFO, NULL,
			       "program '%s' reads ctx->launch_id / ctx->device: on AMD they come from the rewritten code "
			       "object's " GBPF_AMDGCN_LAUNCH_GLOBAL " global, which the agent does not write yet (no rewritten "
			       "image runs on a device); kernel_id and params are filled by the stubs",
			       p->name ? p->name : "?");
		hip_agent.dev_idx[hip_agent.n_dev++] = i;
	}
	atomic_store(&hip_agent.attached, 1);
	pthread_mutex_unlock(&hip_agent.lock);
	return 0;
}

void gbpf_hip_agent_detach(struct gbpf_backend *backend)
{
	(void)backend;
	/* Registered images stay as they are; later registrations and loads
	 * are not rewritten and launches run no host probes. */
	atomic_store(&hip_agent.attached, 0);
}

/* ---- tables (called with the lock held) ---- */

static struct hip_kernel_rec *kernel_rec(const char *name, uint32_t *idx)
{
	struct hip_kernel_rec *k;

	for (size_t i = 0; i < hip_agent.n_kernels; i++)
		if (!strcmp(hip_agent.kernels[i].name, name)) {
			if (idx)
				*idx = (uint32_t)i;
			return &hip_agent.kernels[i];
		}
	if (hip_agent.n_kernels >= HIP_MAX_KERNELS)
		return NULL;
	if (!hip_agent.kernels) {
		hip_agent.kernels = calloc(HIP_MAX_KERNELS, sizeof(*hip_agent.kernels));
		if (!hip_agent.kernels)
			return NULL;
	}
	k = &hip_agent.kernels[hip_agent.n_kernels];
	snprintf(k->name, sizeof(k->name), "%s", name);
	if (idx)
		*idx = (uint32_t)hip_agent.n_kernels;
	hip_agent.n_kernels++;
	return k;
}

static void handle_add(const void *handle, int module_function, const char *name)
{
	uint32_t idx;

	if (!handle || !name)
		return;
	pthread_mutex_lock(&hip_agent.lock);
	if (kernel_rec(name, &idx)) {
		for (size_t i = 0; i < hip_agent.n_handles; i++)
			if (hip_agent.handles[i].handle == handle &&
			    hip_agent.handles[i].module_function == module_function) {
				hip_agent.handles[i].kernel = idx;
				goto out;
			}
		if (!hip_agent.handles)
			hip_agent.handles = calloc(HIP_MAX_HANDLES, sizeof(*hip_agent.handles));
		if (hip_agent.handles && hip_agent.n_handles < HIP_MAX_HANDLES)
			hip_agent.handles[hip_agent.n_handles++] =
				(struct hip_handle_rec){handle, module_function, idx};
	}
out:
	pthread_mutex_unlock(&hip_agent.lock);
}

static int own(void *p)
{
	if (hip_agent.n_owned == hip_agent.cap_owned) {
		size_t cap = hip_agent.cap_owned ? 2 * hip_agent.cap_owned : 16;
		void **n = realloc(hip_agent.owned, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		hip_agent.owned = n;
		hip_agent.cap_owned = cap;
	}
	hip_agent.owned[hip_agent.n_owned++] = p;
	return 0;
}

/* ---- devices ---- */

/*
 * Whether rewritten images may be registered: only when no AMD device can
 * run them (see the top of this file). Asked once, at the first image.
 */
static int rewrite_allowed(const char *where)
{
	int (*count)(int *) = (int (*)(int *))hip_real(HIP_FN_GET_DEVICE_COUNT);
	int n = 0;

	if (hip_agent.devices == HIP_NO_DEVICE_UNKNOWN) {
		hip_agent.device_rc = count ? count(&n) : -1;
		hip_agent.devices = hip_agent.device_rc == 0 && n > 0 ? n : 0;
		if (hip_agent.devices == 0)
			report(GBPF_AGENT_EVENT_INFO, NULL,
			       "no AMD device (hipGetDeviceCount returned %d): instrumented code objects are registered "
			       "but no device will run them",
			       hip_agent.device_rc);
	}
	if (hip_agent.devices > 0) {
		report(GBPF_AGENT_EVENT_NOT_INSTRUMENTED, NULL,
		       "%s: %d AMD device(s) present, but device maps are not wired up on AMD yet: the original code "
		       "objects run",
		       where, hip_agent.devices);
		return 0;
	}
	return 1;
}

/* ---- probe modules ---- */

static const struct hip_probe_mod *probe_mod(const char *arch, unsigned cov, const char *where)
{
	struct gbpf_amdgcn_opts o = {.sz = sizeof(o), .arch = arch, .output = GBPF_AMDGCN_OUT_ASM, .opt_level = 2,
				     .cov = cov, .ctx_reads = hip_agent.dev_reads};
	struct hip_probe_mod *m;
	char *text = NULL, err[512] = "";
	size_t len = 0;
	int rc;

	for (size_t i = 0; i < hip_agent.n_mods; i++)
		if (!strcmp(hip_agent.mods[i].arch, arch) && hip_agent.mods[i].cov == cov)
			return hip_agent.mods[i].text ? &hip_agent.mods[i] : NULL;
	if (hip_agent.n_mods >= HIP_MAX_PROBE_MODS)
		return NULL;
	m = &hip_agent.mods[hip_agent.n_mods++];
	snprintf(m->arch, sizeof(m->arch), "%s", arch);
	m->cov = cov;
	rc = gbpf_amdgcn_emit(hip_agent.dev, hip_agent.n_dev, &o, &text, &len, err, sizeof(err));
	if (!rc)
		rc = co_probe_asm_prepare(text, arch, &m->text, &m->res, err, sizeof(err));
	free(text);
	if (rc) {
		m->text = NULL;
		report(GBPF_AGENT_EVENT_ERROR, NULL, "%s: probe module for %s (code object v%u): %s (%d)", where, arch,
		       cov, err, rc);
		return NULL;
	}
	return m;
}

/* Which probes kernel @p name gets: the first entry and exit program targeting it. */
static int select_kernel(void *ctx, const char *name, struct co_kernel_probes *p)
{
	(void)ctx;
	p->entry = p->exit = -1;
	for (size_t i = 0; i < hip_agent.n_dev; i++) {
		const struct gbpf_prog_desc *d = hip_agent.dev[i];
		int *slot = d->attach.kind == GBPF_ATTACH_GPU_ENTRY ? &p->entry :
			    d->attach.kind == GBPF_ATTACH_GPU_EXIT  ? &p->exit :
								      NULL;

		if (!slot || *slot >= 0 || !hip_agent.svc.kernel_selected ||
		    !hip_agent.svc.kernel_selected(hip_agent.svc.ctx, hip_agent.dev_idx[i], name))
			continue;
		*slot = (int)i;
	}
	return p->entry >= 0 || p->exit >= 0;
}

/*
 * Instrument one code object (@p arch, from the bundle id or ELF flags).
 * @return 1 with *out set when rewritten, 0 when left alone (reported).
 */
static int instrument_co(const uint8_t *co, size_t size, const char *arch, const char *where, uint8_t **out,
			 size_t *out_size)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)co;
	struct co_instr_opts o = {.mc = mc_path(), .lld = lld_path(), .select = select_kernel,
				  .ctx_reads = hip_agent.dev_reads, .n_ctx_reads = hip_agent.n_dev};
	struct co_instr_result r = {0};
	const struct hip_probe_mod *m;
	char err[512] = "";
	unsigned cov;
	int rc, any = 0;

	*out = NULL;
	if (size < sizeof(*eh) || memcmp(co, ELFMAG, SELFMAG)) {
		report(GBPF_AGENT_EVENT_ERROR, NULL, "%s: %s entry is not an ELF code object", where, arch);
		return 0;
	}
	/* EI_ABIVERSION 2 = code object v4, 3 = v5 */
	cov = eh->e_ident[EI_ABIVERSION] == 3 ? 5 : eh->e_ident[EI_ABIVERSION] == 2 ? 4 : 0;
	if (!cov || !gbpf_amdgcn_arch_supported(arch)) {
		report(GBPF_AGENT_EVENT_NOT_INSTRUMENTED, NULL,
		       "%s: %s code object (ABI version %u) left alone: only gfx90a/gfx94x code objects v4/v5 are "
		       "rewritten",
		       where, arch, eh->e_ident[EI_ABIVERSION]);
		return 0;
	}
	m = probe_mod(arch, cov, where);
	if (!m)
		return 0;
	o.probe_asm = m->text;
	o.res = m->res;
	rc = co_instrument(co, size, &o, out, out_size, &r, err, sizeof(err));
	if (rc) {
		report(GBPF_AGENT_EVENT_ERROR, NULL, "%s: %s code object not rewritten: %s (%s); the original runs",
		       where, arch, err, strerror(-rc));
		*out = NULL;
	}
	for (size_t i = 0; i < r.n; i++) {
		const struct co_instr_kernel *k = &r.k[i];
		struct co_kernel_probes p;
		struct hip_kernel_rec *kr;

		if (!select_kernel(NULL, k->name, &p))
			continue;
		if (!rc && k->instrumented && *out) {
			any = 1;
			kr = kernel_rec(k->name, NULL);
			if (kr) {
				kr->instrumented = 1;
				if (strlen(kr->objects) + strlen(arch) + 2 < sizeof(kr->objects))
					snprintf(kr->objects + strlen(kr->objects), sizeof(kr->objects) - strlen(kr->objects),
						 "%s%s", kr->objects[0] ? " " : "", arch);
			}
			report(GBPF_AGENT_EVENT_INFO, k->name,
			       "instrumented in the %s code object of %s (entry probe %d, exit probe %d; %u entry and %u "
			       "exit stubs, %u SGPRs, %u VGPRs, %u private bytes)",
			       arch, where, k->probes.entry, k->probes.exit, k->n_entry, k->n_exit, k->sgprs, k->vgprs,
			       k->priv);
		} else if (!rc) {
			report(GBPF_AGENT_EVENT_NOT_INSTRUMENTED, k->name, "%s code object of %s: %s", arch, where,
			       k->reason[0] ? k->reason : "not rewritten");
		}
	}
	co_instr_result_free(&r);
	if (!any) {
		free(*out);
		*out = NULL;
	}
	return *out != NULL;
}

/* Processor of a bundle entry id "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-", or "" */
static void id_arch(const char *id, char *arch, size_t size)
{
	const char *p = strstr(id, "amdgcn-amd-amdhsa");
	const char *a = p ? strstr(p, "--") : NULL;
	size_t n;

	arch[0] = 0;
	if (!a)
		return;
	a += 2;
	n = strcspn(a, ":");
	if (n < size)
		snprintf(arch, size, "%.*s", (int)n, a);
}

/* Bytes of a bundle whose size the caller does not know (registration), 0 when unknown. */
static size_t bundle_extent(const uint8_t *p)
{
	uint64_t n, end = 0, off, sz, idl, v = 0;
	size_t pos = 32;

	if (!memcmp(p, "CCOB", 4)) {
		uint16_t version;

		/* total size in the header from version 2 on; version 1 has none */
		memcpy(&version, p + 4, 2);
		if (version == 2) {
			uint32_t t;

			memcpy(&t, p + 8, 4);
			v = t;
		} else if (version == 3) {
			memcpy(&v, p + 8, 8);
		}
		return v <= HIP_MAX_IMAGE ? (size_t)v : 0;
	}
	if (memcmp(p, "__CLANG_OFFLOAD_BUNDLE__", 24))
		return 0;
	memcpy(&n, p + 24, 8);
	if (n > CO_BUNDLE_MAX_ENTRIES)
		return 0;
	for (uint64_t i = 0; i < n; i++) {
		memcpy(&off, p + pos, 8);
		memcpy(&sz, p + pos + 8, 8);
		memcpy(&idl, p + pos + 16, 8);
		if (idl > 1024 || off > HIP_MAX_IMAGE || sz > HIP_MAX_IMAGE)
			return 0;
		pos += 24 + idl;
		if (off + sz > end)
			end = off + sz;
	}
	return end > pos ? (size_t)end : pos;
}

/* Bytes of an ELF image whose size the caller does not know: the end of its last section or header table. */
static size_t elf_extent(const uint8_t *p)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)p;
	uint64_t end = eh->e_shoff + (uint64_t)eh->e_shnum * eh->e_shentsize;

	if (eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_shentsize != sizeof(Elf64_Shdr) || eh->e_shoff > HIP_MAX_IMAGE)
		return 0;
	for (unsigned i = 0; i < eh->e_shnum; i++) {
		const Elf64_Shdr *sh = (const Elf64_Shdr *)(p + eh->e_shoff + (size_t)i * sizeof(Elf64_Shdr));

		if (sh->sh_type != SHT_NOBITS && sh->sh_offset + sh->sh_size > end && sh->sh_size <= HIP_MAX_IMAGE)
			end = sh->sh_offset + sh->sh_size;
	}
	return end <= HIP_MAX_IMAGE ? (size_t)end : 0;
}

/*
 * Rewrite every AMDGCN entry of a bundle. Returns a malloc'ed plain
 * bundle, or NULL when nothing was rewritten (each reason reported).
 */
static uint8_t *instrument_bundle(const uint8_t *buf, size_t size, const char *where, size_t *out_size)
{
	struct co_bundle *b = calloc(1, sizeof(*b));
	uint8_t *news[CO_BUNDLE_MAX_ENTRIES] = {0}, *out = NULL;
	char err[256] = "", arch[16];
	size_t n_new = 0;
	int rc;

	if (!b)
		return NULL;
	rc = co_bundle_parse(buf, size, b, err, sizeof(err));
	if (rc) {
		report(GBPF_AGENT_EVENT_ERROR, NULL, "%s: offload bundle not read: %s (%d); the original is registered",
		       where, err, rc);
		free(b);
		return NULL;
	}
	for (size_t i = 0; i < b->n; i++) {
		size_t nsz = 0;

		id_arch(b->e[i].id, arch, sizeof(arch));
		if (!arch[0] || !b->e[i].size)
			continue;
		if (instrument_co(b->e[i].data, b->e[i].size, arch, where, &news[i], &nsz)) {
			b->e[i].data = news[i];
			b->e[i].size = nsz;
			n_new++;
		}
	}
	if (n_new && co_bundle_write(b->e, b->n, &out, out_size)) {
		report(GBPF_AGENT_EVENT_ERROR, NULL, "%s: out of memory writing the rewritten bundle", where);
		out = NULL;
	}
	for (size_t i = 0; i < b->n; i++)
		free(news[i]);
	co_bundle_free(b);
	free(b);
	return out;
}

/* ---- calls from the interposers ---- */

const struct hip_fatbin_wrapper *hip_agent_fatbin(const struct hip_fatbin_wrapper *w)
{
	const struct hip_fatbin_wrapper *use = w;
	struct hip_fatbin_wrapper *nw;
	uint8_t *nb = NULL;
	size_t size, nsize = 0;
	char where[64];

	if (!w || !atomic_load(&hip_agent.attached) || !hip_agent.n_dev)
		return w;
	pthread_mutex_lock(&hip_agent.lock);
	snprintf(where, sizeof(where), "fat binary %p", (const void *)w);
	if (w->magic != HIP_FATBIN_MAGIC || !w->bundle) {
		report(GBPF_AGENT_EVENT_ERROR, NULL, "%s: not a HIP fat binary wrapper (magic 0x%08x)", where, w->magic);
		goto out;
	}
	size = bundle_extent(w->bundle);
	if (!size) {
		report(GBPF_AGENT_EVENT_ERROR, NULL,
		       "%s: size of the offload bundle unknown (CCOB version 1 or malformed header); registered as it is",
		       where);
		goto out;
	}
	if (!rewrite_allowed(where))
		goto out;
	nb = instrument_bundle(w->bundle, size, where, &nsize);
	if (!nb)
		goto out;
	nw = malloc(sizeof(*nw));
	if (!nw || own(nb)) {
		free(nw);
		free(nb);
		report(GBPF_AGENT_EVENT_ERROR, NULL, "%s: out of memory; the original is registered", where);
		goto out;
	}
	if (own(nw)) {
		/* nb stays owned (unused): the original is registered */
		free(nw);
		report(GBPF_AGENT_EVENT_ERROR, NULL, "%s: out of memory; the original is registered", where);
		goto out;
	}
	*nw = *w;
	nw->bundle = nb;
	use = nw;
	hip_agent.images_rewritten++;
out:
	pthread_mutex_unlock(&hip_agent.lock);
	return use;
}

void hip_agent_function(const void *host, const char *name)
{
	handle_add(host, 0, name);
}

void hip_agent_module_function(const void *f, const char *name)
{
	handle_add(f, 1, name);
}

const void *hip_agent_module_image(const char *api, const void *image, size_t size)
{
	const uint8_t *p = image;
	uint8_t *out = NULL;
	size_t out_size = 0;
	char where[64];
	struct co_code c;
	char err[256];

	if (!p || !atomic_load(&hip_agent.attached) || !hip_agent.n_dev)
		return image;
	pthread_mutex_lock(&hip_agent.lock);
	snprintf(where, sizeof(where), "%s image %p", api, image);
	if (!memcmp(p, ELFMAG, SELFMAG)) {
		if (!size)
			size = elf_extent(p);
		if (size && rewrite_allowed(where)) {
			if (co_decode(p, size, &c, err, sizeof(err)))
				report(GBPF_AGENT_EVENT_ERROR, NULL, "%s: code object not decoded: %s", where, err);
			else {
				instrument_co(p, size, c.arch, where, &out, &out_size);
				co_code_free(&c);
			}
		}
	} else if (!memcmp(p, "CCOB", 4) || !memcmp(p, "__CLANG_OFFLOAD_BUNDLE__", 24)) {
		if (!size)
			size = bundle_extent(p);
		if (size && rewrite_allowed(where))
			out = instrument_bundle(p, size, where, &out_size);
	} else {
		report(GBPF_AGENT_EVENT_NOT_INSTRUMENTED, NULL,
		       "%s: neither a code object nor an offload bundle; loaded as it is", where);
	}
	if (out && own(out)) {
		free(out);
		out = NULL;
	}
	if (out)
		hip_agent.images_rewritten++;
	pthread_mutex_unlock(&hip_agent.lock);
	return out ? out : image;
}

const char *hip_agent_kernel_name(const void *handle, int module_function)
{
	const char *name = NULL;

	pthread_mutex_lock(&hip_agent.lock);
	for (size_t i = 0; i < hip_agent.n_handles; i++)
		if (hip_agent.handles[i].handle == handle && hip_agent.handles[i].module_function == module_function) {
			/* records are never removed or moved: the name outlives the lock */
			name = hip_agent.kernels[hip_agent.handles[i].kernel].name;
			break;
		}
	pthread_mutex_unlock(&hip_agent.lock);
	return name;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * The device a launch runs on: its stream's (hipGetStreamDeviceId; a
 * stream belongs to the device current when it was created), else the
 * calling thread's current device (the null stream, or a runtime without
 * the call); 0 when the runtime answers neither.
 */
static uint32_t launch_device(const struct hip_launch *l)
{
	int (*stream_dev)(void *) = (int (*)(void *))hip_real(HIP_FN_GET_STREAM_DEVICE_ID);
	int (*cur_dev)(int *) = (int (*)(int *))hip_real(HIP_FN_GET_DEVICE);
	int d = -1;

	if (l->stream && stream_dev)
		d = stream_dev(l->stream);
	if (d < 0 && cur_dev && cur_dev(&d) != 0)
		d = -1;
	return d < 0 ? 0 : (uint32_t)d;
}

/* host/launch programs that target this kernel run on the host before the launch. */
static void run_launch_probes(const struct hip_launch *l, uint64_t launch_id)
{
	struct gbpf_host_launch_ctx ctx = {
		.kernel_id = gbpf_kernel_id(l->kernel),
		.stream = (uint64_t)(uintptr_t)l->stream,
		.launch_id = launch_id,
		.time_ns = now_ns(),
		.grid = {l->grid.x, l->grid.y, l->grid.z},
		.block = {l->block.x, l->block.y, l->block.z},
		.shared_mem_bytes = (uint32_t)l->shmem,
	};

	int made = 0;

	if (!hip_agent.svc.run_host_prog)
		return;
	for (size_t i = 0; i < hip_agent.prog_cnt; i++) {
		if (hip_agent.progs[i].attach.kind != GBPF_ATTACH_HOST_LAUNCH)
			continue;
		if (hip_agent.svc.kernel_selected &&
		    !hip_agent.svc.kernel_selected(hip_agent.svc.ctx, i, l->kernel ? l->kernel : ""))
			continue;
		/* the runtime calls only for launches a host/launch program runs on */
		if (!made) {
			ctx.device = launch_device(l);
			snprintf(ctx.kernel_name, sizeof(ctx.kernel_name), "%s", l->kernel ? l->kernel : "");
			made = 1;
		}
		hip_agent.svc.run_host_prog(hip_agent.svc.ctx, i, &ctx, sizeof(ctx), NULL);
	}
}

void hip_agent_launch(const struct hip_launch *l)
{
	struct hip_kernel_rec *k = NULL;
	uint64_t launch_id = 0, n = 0;
	int first_instrumented = 0, no_device;
	char objects[64] = "";

	if (!atomic_load(&hip_agent.attached))
		return;
	pthread_mutex_lock(&hip_agent.lock);
	if (l->kernel)
		k = kernel_rec(l->kernel, NULL);
	if (k) {
		n = ++k->launches;
		first_instrumented = k->instrumented && n == 1;
		memcpy(objects, k->objects, sizeof(objects));
	}
	no_device = hip_agent.devices == 0;
	pthread_mutex_unlock(&hip_agent.lock);
	if (hip_agent.svc.next_launch_id)
		launch_id = hip_agent.svc.next_launch_id(hip_agent.svc.ctx);
	if (first_instrumented)
		report(GBPF_AGENT_EVENT_INFO, l->kernel,
		       "launched through %s (grid %u,%u,%u block %u,%u,%u) with its instrumented code objects (%s)%s",
		       l->api, l->grid.x, l->grid.y, l->grid.z, l->block.x, l->block.y, l->block.z, objects,
		       no_device ? "; no AMD device ran it: the probes did not execute" : "");
	run_launch_probes(l, launch_id);
}
