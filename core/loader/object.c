/* SPDX-License-Identifier: MIT */
/*
 * core/loader/object.c - the public object API: open, close, getters.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/base/log.h"
#include "loader_internal.h"

int ld_err(struct gbpf_object *obj, int err, const char *fmt, ...)
{
	va_list ap;
	int n;

	/* Keep the first (innermost) message: it is the precise one. */
	if (obj->msg[0])
		return err;
	n = snprintf(obj->msg, sizeof(obj->msg), "%s: ", obj->name ? obj->name : "<object>");
	if (n >= 0 && (size_t)n < sizeof(obj->msg)) {
		va_start(ap, fmt);
		vsnprintf(obj->msg + n, sizeof(obj->msg) - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return err;
}

/* The caller's buffer gets the message; without one it goes to the print
 * callback, so that it is never lost and never shown twice. */
static void report(struct gbpf_object *obj, char *errbuf, size_t errbuf_size)
{
	if (errbuf && errbuf_size)
		snprintf(errbuf, errbuf_size, "%s", obj->msg);
	else
		gbpf_warn("%s\n", obj->msg);
}

char *ld_own(struct gbpf_object *obj, char *s)
{
	char **v;

	if (!s)
		return NULL;
	v = realloc(obj->owned_strs, (obj->owned_cnt + 1) * sizeof(*v));
	if (!v) {
		free(s);
		return NULL;
	}
	obj->owned_strs = v;
	v[obj->owned_cnt++] = s;
	return s;
}

const char *ld_sym_name(const struct gbpf_object *obj, const Elf64_Sym *sym)
{
	return obj->strtab + sym->st_name;
}

/* Unknown non-zero bytes past the fields we know mean a newer caller asks
 * for something we cannot do. */
static int opts_valid(const struct gbpf_object_open_opts *opts)
{
	size_t i;

	if (!opts)
		return 1;
	if (opts->sz < offsetof(struct gbpf_object_open_opts, object_name))
		return 0;
	for (i = sizeof(*opts); i < opts->sz; i++)
		if (((const char *)opts)[i])
			return 0;
	return 1;
}

#define OPT(opts, field, def)                                                                      \
	((opts) && (opts)->sz >= offsetof(struct gbpf_object_open_opts, field) + sizeof((opts)->field) \
		 ? (opts)->field                                                                   \
		 : (def))

static struct gbpf_object *open_buf(uint8_t *buf, size_t size, const char *name,
				    const struct gbpf_object_open_opts *opts)
{
	char *errbuf = OPT(opts, errbuf, NULL);
	size_t errbuf_size = OPT(opts, errbuf_size, 0);
	struct gbpf_object *obj;
	int err;

	if (errbuf && errbuf_size)
		errbuf[0] = '\0';
	obj = calloc(1, sizeof(*obj));
	if (!obj) {
		free(buf);
		errno = ENOMEM;
		return NULL;
	}
	obj->buf = buf;
	obj->size = size;
	obj->name = strdup(name);
	if (!obj->name) {
		err = ld_err(obj, -ENOMEM, "out of memory");
		goto fail;
	}
	err = ld_elf_parse(obj);
	if (!err)
		err = ld_collect_maps(obj);
	if (!err)
		err = ld_collect_relocs(obj);
	if (!err)
		err = ld_collect_progs(obj);
	if (err)
		goto fail;
	return obj;
fail:
	ld_err(obj, err, "cannot open object (error %d)", err);
	report(obj, errbuf, errbuf_size);
	gbpf_object__close(obj);
	errno = -err;
	return NULL;
}

struct gbpf_object *gbpf_object__open_mem(const void *buf, size_t size,
					  const struct gbpf_object_open_opts *opts)
{
	uint8_t *copy;

	if (!opts_valid(opts) || (!buf && size)) {
		errno = EINVAL;
		return NULL;
	}
	/* +1 so that a zero-byte input still gets a distinct allocation. */
	copy = malloc(size + 1);
	if (!copy) {
		errno = ENOMEM;
		return NULL;
	}
	if (size)
		memcpy(copy, buf, size);
	return open_buf(copy, size, OPT(opts, object_name, NULL) ?: "<memory>", opts);
}

struct gbpf_object *gbpf_object__open_file(const char *path, const struct gbpf_object_open_opts *opts)
{
	char *errbuf = OPT(opts, errbuf, NULL);
	size_t errbuf_size = OPT(opts, errbuf_size, 0), got = 0;
	struct stat st;
	uint8_t *buf;
	int fd, err;

	if (!path || !opts_valid(opts)) {
		errno = EINVAL;
		return NULL;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		err = errno;
		if (errbuf && errbuf_size)
			snprintf(errbuf, errbuf_size, "%s: cannot open: %s", path, strerror(err));
		else
			gbpf_warn("%s: cannot open: %s\n", path, strerror(err));
		if (fd >= 0)
			close(fd);
		errno = err;
		return NULL;
	}
	if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size > GBPF_OBJECT_MAX_FILE_SIZE) {
		if (errbuf && errbuf_size)
			snprintf(errbuf, errbuf_size, "%s: not a regular file of at most %u bytes", path,
				 GBPF_OBJECT_MAX_FILE_SIZE);
		else
			gbpf_warn("%s: not a regular file of at most %u bytes\n", path,
				  GBPF_OBJECT_MAX_FILE_SIZE);
		close(fd);
		errno = S_ISREG(st.st_mode) ? EFBIG : EINVAL;
		return NULL;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		close(fd);
		errno = ENOMEM;
		return NULL;
	}
	while (got < (size_t)st.st_size) {
		ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	return open_buf(buf, got, OPT(opts, object_name, NULL) ?: path, opts);
}

void gbpf_object__close(struct gbpf_object *obj)
{
	size_t i;

	if (!obj)
		return;
	for (i = 0; i < obj->prog_cnt; i++)
		free((void *)obj->progs[i].insns);
	free(obj->progs);
	for (i = 0; obj->secs && i < obj->sec_cnt; i++) {
		free(obj->secs[i].insns);
		free(obj->secs[i].relocs);
	}
	for (i = 0; i < obj->owned_cnt; i++)
		free(obj->owned_strs[i]);
	free(obj->owned_strs);
	free(obj->secs);
	free(obj->syms);
	free(obj->maps);
	free(obj->map_extra);
	free(obj->buf);
	free(obj->name);
	free(obj);
}

const char *gbpf_object__name(const struct gbpf_object *obj)
{
	return obj ? obj->name : NULL;
}

const char *gbpf_object__license(const struct gbpf_object *obj)
{
	return obj ? obj->license : NULL;
}

size_t gbpf_object__prog_cnt(const struct gbpf_object *obj)
{
	return obj ? obj->prog_cnt : 0;
}

const struct gbpf_prog_desc *gbpf_object__prog(const struct gbpf_object *obj, size_t idx)
{
	if (!obj || idx >= obj->prog_cnt) {
		errno = ENOENT;
		return NULL;
	}
	return &obj->progs[idx];
}

const struct gbpf_prog_desc *gbpf_object__next_prog(const struct gbpf_object *obj,
						    const struct gbpf_prog_desc *prev)
{
	size_t idx = 0;

	if (!obj)
		return NULL;
	if (prev) {
		if (prev < obj->progs || prev >= obj->progs + obj->prog_cnt)
			return NULL;
		idx = (size_t)(prev - obj->progs) + 1;
	}
	return idx < obj->prog_cnt ? &obj->progs[idx] : NULL;
}

const struct gbpf_prog_desc *gbpf_object__find_prog(const struct gbpf_object *obj, const char *name)
{
	size_t i;

	for (i = 0; obj && name && i < obj->prog_cnt; i++)
		if (strcmp(obj->progs[i].name, name) == 0)
			return &obj->progs[i];
	errno = ENOENT;
	return NULL;
}

size_t gbpf_object__map_cnt(const struct gbpf_object *obj)
{
	return obj ? obj->map_cnt : 0;
}

const struct gbpf_map_desc *gbpf_object__map(const struct gbpf_object *obj, size_t idx)
{
	if (!obj || idx >= obj->map_cnt) {
		errno = ENOENT;
		return NULL;
	}
	return &obj->maps[idx];
}

const struct gbpf_map_desc *gbpf_object__next_map(const struct gbpf_object *obj,
						  const struct gbpf_map_desc *prev)
{
	size_t idx = 0;

	if (!obj)
		return NULL;
	if (prev) {
		if (prev < obj->maps || prev >= obj->maps + obj->map_cnt)
			return NULL;
		idx = (size_t)(prev - obj->maps) + 1;
	}
	return idx < obj->map_cnt ? &obj->maps[idx] : NULL;
}

int gbpf_object__find_map_idx(const struct gbpf_object *obj, const char *name)
{
	size_t i;

	for (i = 0; obj && name && i < obj->map_cnt; i++)
		if (strcmp(obj->maps[i].name, name) == 0)
			return (int)i;
	return -ENOENT;
}

const struct gbpf_map_desc *gbpf_object__find_map(const struct gbpf_object *obj, const char *name)
{
	int idx = gbpf_object__find_map_idx(obj, name);

	if (idx < 0) {
		errno = ENOENT;
		return NULL;
	}
	return &obj->maps[idx];
}
