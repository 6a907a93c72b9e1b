/* SPDX-License-Identifier: MIT */
/*
 * Plugin discovery: scan, dlopen, negotiate the ABI, remember failures.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <gbpf/backend.h>

#include "core/base/log.h"
#include "core/registry_internal.h"

#define PLUGIN_PREFIX "libgbpf-"
#define PLUGIN_SUFFIX ".so"

static int is_plugin_file_name(const char *name)
{
	size_t len = strlen(name);
	size_t pre = strlen(PLUGIN_PREFIX), suf = strlen(PLUGIN_SUFFIX);

	return len > pre + suf && strncmp(name, PLUGIN_PREFIX, pre) == 0 &&
	       strcmp(name + len - suf, PLUGIN_SUFFIX) == 0;
}

/* "libgbpf-cuda.so" -> "cuda": the name a plugin is known by until it loads. */
static char *name_from_file(const char *path)
{
	const char *base = strrchr(path, '/');
	size_t pre = strlen(PLUGIN_PREFIX), suf = strlen(PLUGIN_SUFFIX);

	base = base ? base + 1 : path;
	if (!is_plugin_file_name(base))
		return strdup(base);
	return strndup(base + pre, strlen(base) - pre - suf);
}

static struct gbpf_plugin *plugin_new(const char *path)
{
	struct gbpf_plugin *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->path = strdup(path);
	p->file_name = name_from_file(path);
	if (!p->path || !p->file_name) {
		free(p->path);
		free(p->file_name);
		free(p);
		return NULL;
	}
	return p;
}

static void plugin_fail(struct gbpf_plugin *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void plugin_fail(struct gbpf_plugin *p, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&p->load_error, fmt, ap) < 0)
		p->load_error = NULL;
	va_end(ap);
	gbpf_debug("plugin %s: %s\n", p->path, p->load_error ? p->load_error : "failed");
}

/* dlopen the file and negotiate the ABI; failures are recorded, never fatal. */
static void plugin_load(struct gbpf_plugin *p)
{
	gbpf_plugin_get_backend_table_fn entry;
	int err;

	p->handle = dlopen(p->path, RTLD_NOW | RTLD_LOCAL);
	if (!p->handle) {
		plugin_fail(p, "dlopen failed: %s", dlerror());
		return;
	}
	*(void **)&entry = dlsym(p->handle, GBPF_PLUGIN_ENTRY_SYMBOL);
	if (!entry) {
		plugin_fail(p, "no entry symbol %s", GBPF_PLUGIN_ENTRY_SYMBOL);
		return;
	}
	memset(&p->ops, 0, sizeof(p->ops));
	memset(&p->caps, 0, sizeof(p->caps));
	p->ops.sz = sizeof(p->ops);
	p->caps.sz = sizeof(p->caps);
	err = entry(GBPF_PLUGIN_ABI_VERSION, &p->ops, &p->caps);
	if (err == -EPROTONOSUPPORT) {
		plugin_fail(p, "plugin ABI major version differs from %u.%u",
			    GBPF_VERSION_MAJOR(GBPF_PLUGIN_ABI_VERSION),
			    GBPF_VERSION_MINOR(GBPF_PLUGIN_ABI_VERSION));
		return;
	}
	if (err) {
		plugin_fail(p, "entry point failed: %s", strerror(err < 0 ? -err : err));
		return;
	}
	/* A table may be shorter than ours (older minor), never longer. */
	if (p->ops.sz > sizeof(p->ops) || p->caps.sz > sizeof(p->caps) ||
	    p->ops.sz < offsetof(struct gbpf_backend_ops, query_devices)) {
		plugin_fail(p, "dispatch table has an invalid size (%zu bytes)", p->ops.sz);
		return;
	}
	memset((char *)&p->ops + p->ops.sz, 0, sizeof(p->ops) - p->ops.sz);
	memset((char *)&p->caps + p->caps.sz, 0, sizeof(p->caps) - p->caps.sz);
	if (!p->ops.name || !*p->ops.name) {
		plugin_fail(p, "dispatch table has no backend name");
		return;
	}
	p->loaded = 1;
}

static int registry_add(struct gbpf_registry *reg, const char *path)
{
	struct gbpf_plugin *p, **grown;
	size_t i;

	for (i = 0; i < reg->count; i++)
		if (strcmp(reg->plugins[i]->path, path) == 0)
			return 0;
	p = plugin_new(path);
	if (!p)
		return -ENOMEM;
	for (i = 0; i < reg->count; i++) {
		if (strcmp(reg->plugins[i]->file_name, p->file_name) == 0) {
			gbpf_debug("plugin %s: skipped, '%s' already found at %s\n", path,
				   p->file_name, reg->plugins[i]->path);
			plugin_free(p);
			return 0;
		}
	}
	grown = realloc(reg->plugins, (reg->count + 1) * sizeof(*grown));
	if (!grown) {
		plugin_free(p);
		return -ENOMEM;
	}
	reg->plugins = grown;
	reg->plugins[reg->count++] = p;
	plugin_load(p);
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Add the plugins of a directory (and, for build trees, of its subdirectories). */
static int registry_scan_dir(struct gbpf_registry *reg, const char *dir, int depth)
{
	char **names = NULL;
	size_t n = 0, i;
	struct dirent *de;
	DIR *d = opendir(dir);
	int err = 0;

	if (!d)
		return 0;
	while ((de = readdir(d))) {
		char **grown;

		if (de->d_name[0] == '.')
			continue;
		grown = realloc(names, (n + 1) * sizeof(*names));
		if (!grown) {
			err = -ENOMEM;
			break;
		}
		names = grown;
		names[n] = strdup(de->d_name);
		if (!names[n]) {
			err = -ENOMEM;
			break;
		}
		n++;
	}
	closedir(d);
	if (names)
		qsort(names, n, sizeof(*names), cmp_str);
	for (i = 0; i < n && !err; i++) {
		char *path;
		struct stat st;

		if (asprintf(&path, "%s/%s", dir, names[i]) < 0) {
			err = -ENOMEM;
			break;
		}
		if (stat(path, &st) == 0) {
			if (S_ISDIR(st.st_mode) && depth > 0)
				err = registry_scan_dir(reg, path, depth - 1);
			else if (S_ISREG(st.st_mode) && is_plugin_file_name(names[i]))
				err = registry_add(reg, path);
		}
		free(path);
	}
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return err;
}

static int registry_scan_path(struct gbpf_registry *reg, const char *search_path)
{
	char *copy = strdup(search_path), *save = NULL, *item;
	int err = 0;

	if (!copy)
		return -ENOMEM;
	for (item = strtok_r(copy, ":", &save); item && !err; item = strtok_r(NULL, ":", &save)) {
		struct stat st;

		if (stat(item, &st) != 0) {
			gbpf_debug("GBPF_PLUGIN_PATH entry %s: %s\n", item, strerror(errno));
			continue;
		}
		err = S_ISDIR(st.st_mode) ? registry_scan_dir(reg, item, 1) : registry_add(reg, item);
	}
	free(copy);
	return err;
}

int gbpf_registry_new(const struct gbpf_registry_opts *opts, struct gbpf_registry **out)
{
	struct gbpf_registry *reg;
	const char *search;
	int err = 0;

	if (!out || (opts && opts->sz < sizeof(size_t)))
		return -(errno = EINVAL);
	reg = calloc(1, sizeof(*reg));
	if (!reg)
		return -(errno = ENOMEM);
	search = opts && opts->plugin_path ? opts->plugin_path : getenv("GBPF_PLUGIN_PATH");
	if (search && *search)
		err = registry_scan_path(reg, search);
	if (!err && !(opts && opts->no_default_dirs)) {
		err = registry_scan_dir(reg, GBPF_BUILD_PLUGIN_DIR, 1);
		if (!err)
			err = registry_scan_dir(reg, GBPF_PLUGIN_INSTALL_DIR, 0);
	}
	if (err) {
		gbpf_registry_free(reg);
		return -(errno = -err);
	}
	*out = reg;
	return 0;
}

void plugin_free(struct gbpf_plugin *p)
{
	if (!p)
		return;
	if (p->backend && p->ops.close)
		p->ops.close(p->backend);
	/* Plugins may have started threads or registered atexit handlers:
	 * keep their code mapped for the life of the process. */
	free(p->devs);
	free(p->load_error);
	free(p->path);
	free(p->file_name);
	free(p);
}

void gbpf_registry_free(struct gbpf_registry *reg)
{
	size_t i;

	if (!reg)
		return;
	for (i = 0; i < reg->count; i++)
		plugin_free(reg->plugins[i]);
	free(reg->plugins);
	free(reg);
}

size_t gbpf_registry_plugin_count(const struct gbpf_registry *reg)
{
	return reg ? reg->count : 0;
}

struct gbpf_plugin *gbpf_registry_plugin(const struct gbpf_registry *reg, size_t index)
{
	if (!reg || index >= reg->count) {
		errno = EINVAL;
		return NULL;
	}
	return reg->plugins[index];
}

struct gbpf_plugin *gbpf_registry_find(const struct gbpf_registry *reg, const char *name)
{
	size_t i;

	for (i = 0; reg && name && i < reg->count; i++)
		if (strcmp(gbpf_plugin__name(reg->plugins[i]), name) == 0)
			return reg->plugins[i];
	errno = ENOENT;
	return NULL;
}

static void list_names(const struct gbpf_registry *reg, char *buf, size_t size)
{
	size_t i, used = 0;

	buf[0] = 0;
	for (i = 0; i < reg->count && used < size; i++)
		used += snprintf(buf + used, size - used, "%s%s", i ? ", " : "",
				 gbpf_plugin__name(reg->plugins[i]));
	if (!reg->count)
		snprintf(buf, size, "none; set GBPF_PLUGIN_PATH");
}

int gbpf_registry_select(struct gbpf_registry *reg, const char *name, struct gbpf_plugin **out,
			 char *why, size_t why_size)
{
	struct gbpf_plugin *best = NULL;
	const char *reason;
	char names[256];
	size_t i;

	if (!reg || !out)
		return -(errno = EINVAL);
	if (!name || !*name)
		name = getenv("GBPF_BACKEND");
	if (name && *name) {
		struct gbpf_plugin *p = gbpf_registry_find(reg, name);
		const struct gbpf_device_info *devs;
		uint32_t count;

		if (!p) {
			list_names(reg, names, sizeof(names));
			snprintf(why, why_size, "backend '%s' not found (found: %s)", name, names);
			return -(errno = GBPF_ERRNO__NOBACKEND);
		}
		if (p->load_error) {
			snprintf(why, why_size, "backend '%s' (%s) failed to load: %s", name, p->path,
				 p->load_error);
			return -(errno = GBPF_ERRNO__NOBACKEND);
		}
		if (gbpf_plugin__devices(p, &devs, &count, &reason) || !count) {
			snprintf(why, why_size, "backend '%s' has no usable device: %s", name,
				 reason ? reason : "none found");
			return -(errno = GBPF_ERRNO__NOBACKEND);
		}
		*out = p;
		return 0;
	}
	for (i = 0; i < reg->count; i++) {
		struct gbpf_plugin *p = reg->plugins[i];
		const struct gbpf_device_info *devs;
		uint32_t count;

		if (!p->loaded || gbpf_plugin__devices(p, &devs, &count, &reason) || !count)
			continue;
		if (!best || p->ops.priority > best->ops.priority)
			best = p;
	}
	if (!best) {
		list_names(reg, names, sizeof(names));
		snprintf(why, why_size, "no backend reports a usable device (found: %s)", names);
		return -(errno = GBPF_ERRNO__NOBACKEND);
	}
	*out = best;
	return 0;
}

const char *gbpf_plugin__name(const struct gbpf_plugin *p)
{
	return p->loaded ? p->ops.name : p->file_name;
}

const char *gbpf_plugin__path(const struct gbpf_plugin *p)
{
	return p->path;
}

const char *gbpf_plugin__description(const struct gbpf_plugin *p)
{
	return p->loaded && p->ops.description ? p->ops.description : "";
}

uint32_t gbpf_plugin__version(const struct gbpf_plugin *p)
{
	return p->loaded ? p->ops.plugin_version : 0;
}

const char *gbpf_plugin__load_error(const struct gbpf_plugin *p)
{
	return p->loaded ? NULL : (p->load_error ? p->load_error : "not loaded");
}

const struct gbpf_backend_caps *gbpf_plugin__caps(const struct gbpf_plugin *p)
{
	return p->loaded ? &p->caps : NULL;
}

const struct gbpf_backend_ops *gbpf_plugin__ops(const struct gbpf_plugin *p)
{
	return p->loaded ? &p->ops : NULL;
}

int gbpf_plugin__devices(struct gbpf_plugin *p, const struct gbpf_device_info **devs,
			 uint32_t *count, const char **why)
{
	uint32_t n = 0;

	*devs = NULL;
	*count = 0;
	*why = NULL;
	if (!p->loaded) {
		*why = gbpf_plugin__load_error(p);
		return -ENODEV;
	}
	if (!p->devices_queried) {
		p->devices_queried = 1;
		if (!p->ops.query_devices) {
			snprintf(p->why, sizeof(p->why), "plugin cannot list devices");
			p->dev_err = -ENODEV;
		} else {
			p->dev_err = p->ops.query_devices(NULL, &n, p->why, sizeof(p->why));
			if (!p->dev_err && n) {
				uint32_t i;

				p->devs = calloc(n, sizeof(*p->devs));
				if (!p->devs) {
					p->dev_err = -ENOMEM;
				} else {
					for (i = 0; i < n; i++)
						p->devs[i].sz = sizeof(p->devs[i]);
					p->dev_err = p->ops.query_devices(p->devs, &n, p->why,
									  sizeof(p->why));
				}
			}
			if (!p->dev_err)
				p->dev_count = n;
			else if (!p->why[0])
				snprintf(p->why, sizeof(p->why), "%s", strerror(-p->dev_err));
		}
	}
	*devs = p->devs;
	*count = p->dev_count;
	*why = p->why[0] ? p->why : NULL;
	return p->dev_err;
}
