/* SPDX-License-Identifier: MIT */
/*
 * plugins/cuda/intercept/handles.c - what is known about CUfunction and
 * CUkernel handles: name, module, library, and the attributes the app set
 * on them (so that they can be replayed on an instrumented replacement).
 *
 * One open-addressing hash table keyed by the handle, under a rwlock: a
 * launch takes the read lock for one probe sequence; writers (handle
 * creation, attribute calls) are rare. Entries are never freed: a handle
 * that the driver reuses gets a fresh entry, and names handed to hooks stay
 * valid for the life of the process. The table is bounded.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugins/cuda/intercept/intercept_internal.h"

#define GBPF_CU_MAX_NAME 4096          /* mangled names longer than this are truncated */
#define GBPF_CU_MAX_HANDLES (1u << 22) /* bound on the table (entries) */
#define GBPF_CU_MAX_ATTRS 16           /* distinct settings kept per handle */

struct gbpf_cu_setting {
	int cache_config; /* 1: cache configuration, 0: attribute */
	int attrib;
	int value;
};

struct gbpf_cu_handle_entry {
	const void *handle;
	enum gbpf_cu_handle_kind kind;
	CUmodule module;
	CUlibrary library;
	CUkernel kernel;
	unsigned int nsettings;
	struct gbpf_cu_setting settings[GBPF_CU_MAX_ATTRS];
	char name[];
};

/* The handle table of the process. */
static struct {
	pthread_rwlock_t lock;
	struct gbpf_cu_handle_entry **slots;
	size_t cap; /* power of two, 0 before the first insert */
	size_t used;
} gbpf_cu_handles = {.lock = PTHREAD_RWLOCK_INITIALIZER};

static size_t hash_ptr(const void *p)
{
	uint64_t x = (uint64_t)(uintptr_t)p;

	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return (size_t)x;
}

/* Caller holds the lock. Returns the slot index holding @p handle or the empty one to use. */
static size_t probe(const void *handle)
{
	size_t mask = gbpf_cu_handles.cap - 1;
	size_t i = hash_ptr(handle) & mask;

	while (gbpf_cu_handles.slots[i] && gbpf_cu_handles.slots[i]->handle != handle)
		i = (i + 1) & mask;
	return i;
}

static int grow(void)
{
	size_t ncap = gbpf_cu_handles.cap ? gbpf_cu_handles.cap * 2 : 256;
	struct gbpf_cu_handle_entry **old = gbpf_cu_handles.slots;
	size_t ocap = gbpf_cu_handles.cap;

	if (ncap / 2 > GBPF_CU_MAX_HANDLES)
		return -ENOSPC;
	gbpf_cu_handles.slots = calloc(ncap, sizeof(*gbpf_cu_handles.slots));
	if (!gbpf_cu_handles.slots) {
		gbpf_cu_handles.slots = old;
		return -ENOMEM;
	}
	gbpf_cu_handles.cap = ncap;
	for (size_t i = 0; i < ocap; i++)
		if (old[i])
			gbpf_cu_handles.slots[probe(old[i]->handle)] = old[i];
	free(old);
	return 0;
}

int gbpf_cu_handle_record(const void *handle, enum gbpf_cu_handle_kind kind, const char *name,
			  CUmodule module, CUlibrary library, CUkernel kernel)
{
	size_t len = name ? strnlen(name, GBPF_CU_MAX_NAME - 1) : 0;
	struct gbpf_cu_handle_entry *e;
	size_t i;
	int err = 0;

	if (!handle)
		return -EINVAL;
	e = calloc(1, sizeof(*e) + len + 1);
	if (!e)
		return -ENOMEM;
	e->handle = handle;
	e->kind = kind;
	e->module = module;
	e->library = library;
	e->kernel = kernel;
	if (len)
		memcpy(e->name, name, len);
	e->name[len] = '\0';

	pthread_rwlock_wrlock(&gbpf_cu_handles.lock);
	if ((gbpf_cu_handles.used + 1) * 2 > gbpf_cu_handles.cap)
		err = grow();
	if (!err) {
		i = probe(handle);
		/* A reused handle: the old entry stays allocated (its name may be in use). */
		if (!gbpf_cu_handles.slots[i])
			gbpf_cu_handles.used++;
		gbpf_cu_handles.slots[i] = e;
	}
	pthread_rwlock_unlock(&gbpf_cu_handles.lock);
	if (err)
		free(e);
	return err;
}

int gbpf_cu_handle_lookup(const void *handle, struct gbpf_cu_handle_info *info)
{
	const struct gbpf_cu_handle_entry *e = NULL;

	if (!handle)
		return -ENOENT;
	pthread_rwlock_rdlock(&gbpf_cu_handles.lock);
	if (gbpf_cu_handles.cap)
		e = gbpf_cu_handles.slots[probe(handle)];
	if (e && info) {
		info->kind = e->kind;
		info->name = e->name[0] ? e->name : NULL;
		info->module = e->module;
		info->library = e->library;
		info->kernel = e->kernel;
	}
	pthread_rwlock_unlock(&gbpf_cu_handles.lock);
	return e ? 0 : -ENOENT;
}

int gbpf_cu_attr_record(const void *handle, int cache_config, int attrib, int value)
{
	struct gbpf_cu_handle_entry *e = NULL;
	int err = 0;

	if (!handle)
		return -EINVAL;
	/* A handle we did not see being created (e.g. made before the agent loaded) gets an entry. */
	if (gbpf_cu_handle_lookup(handle, NULL) == -ENOENT) {
		err = gbpf_cu_handle_record(handle, GBPF_CU_HANDLE_FUNCTION, NULL, NULL, NULL, NULL);
		if (err)
			return err;
	}
	pthread_rwlock_wrlock(&gbpf_cu_handles.lock);
	e = gbpf_cu_handles.slots[probe(handle)];
	if (e) {
		unsigned int i;

		/* The latest value of a setting wins; the order of first setting is kept. */
		for (i = 0; i < e->nsettings; i++)
			if (e->settings[i].cache_config == cache_config &&
			    (cache_config || e->settings[i].attrib == attrib))
				break;
		if (i == e->nsettings && e->nsettings < GBPF_CU_MAX_ATTRS)
			e->nsettings++;
		if (i < e->nsettings) {
			e->settings[i].cache_config = cache_config;
			e->settings[i].attrib = attrib;
			e->settings[i].value = value;
		} else {
			err = -ENOSPC;
		}
	}
	pthread_rwlock_unlock(&gbpf_cu_handles.lock);
	return err;
}

/* Copy the settings of @p handle (parent kernel's first) into @p out; returns how many. */
static unsigned int collect_settings(const void *handle, struct gbpf_cu_setting *out,
				     unsigned int max)
{
	const struct gbpf_cu_handle_entry *e, *k = NULL;
	unsigned int n = 0;

	pthread_rwlock_rdlock(&gbpf_cu_handles.lock);
	if (gbpf_cu_handles.cap) {
		e = gbpf_cu_handles.slots[probe(handle)];
		if (e && e->kernel && e->kernel != (CUkernel)handle)
			k = gbpf_cu_handles.slots[probe(e->kernel)];
		for (unsigned int i = 0; k && i < k->nsettings && n < max; i++)
			out[n++] = k->settings[i];
		for (unsigned int i = 0; e && i < e->nsettings && n < max; i++)
			out[n++] = e->settings[i];
	}
	pthread_rwlock_unlock(&gbpf_cu_handles.lock);
	return n;
}

int gbpf_cu_attr_replay(const void *original, CUfunction replacement, char *log,
			size_t log_size)
{
	struct gbpf_cu_setting settings[2 * GBPF_CU_MAX_ATTRS];
	PFN_cuFuncSetAttribute_v9000 set_attr;
	PFN_cuFuncSetCacheConfig_v3000 set_cache;
	unsigned int n;

	if (!original || !replacement) {
		if (log && log_size)
			snprintf(log, log_size, "attribute replay: NULL %s handle",
				 original ? "replacement" : "original");
		return -EINVAL;
	}
	n = collect_settings(original, settings, 2 * GBPF_CU_MAX_ATTRS);
	if (!n)
		return 0;
	set_attr = (PFN_cuFuncSetAttribute_v9000)gbpf_cu_real_proc("cuFuncSetAttribute", 9000, 0);
	set_cache = (PFN_cuFuncSetCacheConfig_v3000)gbpf_cu_real_proc("cuFuncSetCacheConfig", 3000, 0);
	if (!set_attr || !set_cache) {
		if (log && log_size)
			snprintf(log, log_size,
				 "attribute replay: driver has no cuFuncSetAttribute/cuFuncSetCacheConfig");
		return -ENOSYS;
	}
	for (unsigned int i = 0; i < n; i++) {
		const struct gbpf_cu_setting *s = &settings[i];
		CUresult res = s->cache_config ? set_cache(replacement, s->value)
					       : set_attr(replacement, s->attrib, s->value);

		if (res != GBPF_CUDA_SUCCESS) {
			if (log && log_size) {
				struct gbpf_cu_handle_info info = {0};

				gbpf_cu_handle_lookup(original, &info);
				snprintf(log, log_size,
					 "attribute replay on the replacement of %s: %s(%d, value %d) "
					 "returned CUresult %d",
					 info.name ? info.name : "(unnamed function)",
					 s->cache_config ? "cuFuncSetCacheConfig" : "cuFuncSetAttribute",
					 s->attrib, s->value, res);
			}
			return -EIO;
		}
	}
	return (int)n;
}
