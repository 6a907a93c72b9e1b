/* SPDX-License-Identifier: MIT */
/*
 * plugins/cuda/intercept/hooks.c - hook registration, the re-entrancy
 * guard, the real dlsym and driver entry points, image classification.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <string.h>

#include "plugins/cuda/intercept/intercept_internal.h"

/* The installed hooks: one per process, swapped atomically. */
static _Atomic(const struct gbpf_cu_hooks *) gbpf_cu_installed_hooks;
/* Non-zero while this thread runs a hook: driver calls made by hooks are not hooked again. */
static _Thread_local int gbpf_cu_hook_depth;
/* Launch sequence numbers. */
static _Atomic uint64_t gbpf_cu_launch_seq;

typedef void *(*dlsym_fn)(void *, const char *);
/* glibc's dlsym, found through dlvsym so that our own override is never called. */
static _Atomic(dlsym_fn) gbpf_cu_libc_dlsym;

int gbpf_cu_intercept_set_hooks(const struct gbpf_cu_hooks *hooks)
{
	if (hooks && hooks->sz < offsetof(struct gbpf_cu_hooks, proc_query))
		return -EINVAL;
	atomic_store_explicit(&gbpf_cu_installed_hooks, hooks, memory_order_release);
	return 0;
}

const struct gbpf_cu_hooks *gbpf_cu_hooks_enter(void)
{
	const struct gbpf_cu_hooks *h;

	if (gbpf_cu_hook_depth)
		return NULL;
	h = atomic_load_explicit(&gbpf_cu_installed_hooks, memory_order_acquire);
	if (h)
		gbpf_cu_hook_depth++;
	return h;
}

void gbpf_cu_hooks_leave(void)
{
	gbpf_cu_hook_depth--;
}

uint64_t gbpf_cu_next_launch_id(void)
{
	return atomic_fetch_add_explicit(&gbpf_cu_launch_seq, 1, memory_order_relaxed) + 1;
}

uint64_t gbpf_cu_launch_count(void)
{
	return atomic_load_explicit(&gbpf_cu_launch_seq, memory_order_relaxed);
}

void *(*gbpf_cu_libc_dlsym_fn(void))(void *, const char *)
{
	dlsym_fn fn = atomic_load_explicit(&gbpf_cu_libc_dlsym, memory_order_acquire);

	if (!fn) {
		/* glibc >= 2.34 moved dlsym into libc as GLIBC_2.34; older ones only have 2.2.5. */
		fn = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
		if (!fn)
			fn = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
		if (fn)
			atomic_store_explicit(&gbpf_cu_libc_dlsym, fn, memory_order_release);
	}
	return fn;
}

void *gbpf_cu_real_dlsym(void *handle, const char *name)
{
	dlsym_fn fn = gbpf_cu_libc_dlsym_fn();

	return fn ? fn(handle, name) : NULL;
}

int gbpf_cu_is_own(const void *addr)
{
	static _Atomic(void *) own_base;
	void *base = atomic_load_explicit(&own_base, memory_order_relaxed);
	Dl_info info;

	if (!base) {
		if (!dladdr((const void *)gbpf_cu_is_own, &info) || !info.dli_fbase)
			return 0;
		base = info.dli_fbase;
		atomic_store_explicit(&own_base, base, memory_order_relaxed);
	}
	if (!dladdr(addr, &info))
		return 0;
	return info.dli_fbase == base;
}

/* ---- real driver entry points ---- */

static _Atomic(void *) gbpf_cu_real_gpa_v2;
static _Atomic(void *) gbpf_cu_real_gpa_v1;

void gbpf_cu_note_real_gpa(void *real, int v2)
{
	void *expected = NULL;

	/* Keep the first: later ones come from the same driver. */
	atomic_compare_exchange_strong(v2 ? &gbpf_cu_real_gpa_v2 : &gbpf_cu_real_gpa_v1, &expected,
				       real);
}

void *gbpf_cu_real_proc(const char *name, int version, uint64_t flags)
{
	PFN_cuGetProcAddress_v12000 gpa2 = atomic_load(&gbpf_cu_real_gpa_v2);
	PFN_cuGetProcAddress_v11030 gpa1 = atomic_load(&gbpf_cu_real_gpa_v1);
	void *fn = NULL;
	CUresult res;

	if (!name) {
		errno = EINVAL;
		return NULL;
	}
	if (!gpa2 && !gpa1) {
		/* The app reached the driver some other way (e.g. -lcuda): ask it, never load it. */
		void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);

		if (h) {
			gpa2 = (PFN_cuGetProcAddress_v12000)gbpf_cu_real_dlsym(h, "cuGetProcAddress_v2");
			if (gpa2 && !gbpf_cu_is_own((void *)gpa2))
				gbpf_cu_note_real_gpa((void *)gpa2, 1);
			else
				gpa2 = NULL;
			dlclose(h);
		}
	}
	if (gpa2)
		res = gpa2(name, &fn, version, flags, NULL);
	else if (gpa1)
		res = gpa1(name, &fn, version, flags);
	else
		res = GBPF_CUDA_ERROR_NOT_INITIALIZED;
	if (res != GBPF_CUDA_SUCCESS || !fn) {
		errno = ENOENT;
		return NULL;
	}
	return fn;
}

/* ---- images ---- */

const char *gbpf_cu_image_kind_name(enum gbpf_cu_image_kind kind)
{
	switch (kind) {
	case GBPF_CU_IMAGE_CUBIN: return "cubin";
	case GBPF_CU_IMAGE_FATBIN: return "fatbin";
	case GBPF_CU_IMAGE_WRAPPER: return "wrapper";
	case GBPF_CU_IMAGE_PTX: return "ptx";
	case GBPF_CU_IMAGE_FILE: return "file";
	default: return "unknown";
	}
}

void *gbpf_cu_real_proc_once(_Atomic(void *) *slot, const char *name, int version, uint64_t flags)
{
	void *fn = atomic_load_explicit(slot, memory_order_acquire);

	if (!fn && (fn = gbpf_cu_real_proc(name, version, flags)))
		atomic_store_explicit(slot, fn, memory_order_release);
	return fn;
}

static uint64_t rd64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint32_t rd32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint16_t rd16(const unsigned char *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static int is_text_byte(unsigned char c)
{
	return (c >= 0x20 && c < 0x7f) || c == '\n' || c == '\r' || c == '\t';
}

/* PTX longer than this is not sized (the driver would reject it anyway). */
#define GBPF_CU_MAX_PTX_SIZE ((size_t)1 << 31)

enum gbpf_cu_image_kind gbpf_cu_image_classify(const void *image, size_t *size)
{
	const unsigned char *p = image;
	size_t sz = 0;
	enum gbpf_cu_image_kind kind = GBPF_CU_IMAGE_UNKNOWN;
	uint32_t magic;

	if (size)
		*size = 0;
	if (!p)
		return GBPF_CU_IMAGE_UNKNOWN;
	/*
	 * The driver reads these bytes too, so the image is readable memory by
	 * the API's contract; read the 4-byte magic first, more only when the
	 * format says the header is there.
	 */
	magic = rd32(p);
	if (magic == GBPF_CU_MAGIC_ELF) {
		kind = GBPF_CU_IMAGE_CUBIN;
		if (p[4] == 2) { /* ELFCLASS64: the extent is the later of section and program headers */
			uint64_t sh_end = rd64(p + 0x28) + (uint64_t)rd16(p + 0x3c) * rd16(p + 0x3a);
			uint64_t ph_end = rd64(p + 0x20) + (uint64_t)rd16(p + 0x38) * rd16(p + 0x36);

			sz = (size_t)(sh_end > ph_end ? sh_end : ph_end);
		}
	} else if (magic == GBPF_CU_MAGIC_FATBIN) {
		kind = GBPF_CU_IMAGE_FATBIN;
		sz = (size_t)(rd16(p + 6) + rd64(p + 8));
	} else if (magic == GBPF_CU_MAGIC_WRAPPER) {
		kind = GBPF_CU_IMAGE_WRAPPER;
		sz = 24;
	} else if (is_text_byte(p[0]) && is_text_byte(p[1]) && is_text_byte(p[2]) &&
		   is_text_byte(p[3])) {
		size_t len = strnlen((const char *)p, GBPF_CU_MAX_PTX_SIZE);

		kind = GBPF_CU_IMAGE_PTX;
		sz = len < GBPF_CU_MAX_PTX_SIZE ? len + 1 : 0;
	}
	if (size)
		*size = sz;
	return kind;
}

int gbpf_cu_thread_relaxed_capture(void)
{
	typedef CUresult (*exchange_fn)(int *mode);
	exchange_fn exchange = (exchange_fn)gbpf_cu_real_proc("cuThreadExchangeStreamCaptureMode", 10010, 0);
	int mode = 2; /* CU_STREAM_CAPTURE_MODE_RELAXED */

	if (!exchange)
		return -ENOENT;
	return exchange(&mode) == GBPF_CUDA_SUCCESS ? 0 : -EIO;
}
