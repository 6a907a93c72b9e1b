/* SPDX-License-Identifier: MIT */
/*
 * The one shared memory region of `gbpf run`: a header, an offset table and
 * every map block (maps/map_layout.h), in a memfd the controller creates and
 * passes to each agent. memfds are reachable only through their descriptor,
 * so the region is owner-only by construction; it is sealed against
 * shrinking so that no process can truncate it under another's mapping
 * (which would turn map accesses into SIGBUS).
 */
#include "core/agent/proto.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "maps/map.h"
#include "maps/map_layout.h"

#define ALIGN_UP(x, a) (((x) + ((a)-1)) & ~(uint64_t)((a)-1))

int gbpf_shm_create(struct gbpf_shm *shm, const struct gbpf_map_desc *descs, const uint32_t *slots,
		    size_t count, char *why, size_t why_size)
{
	struct gbpf_shm_entry *tab = NULL;
	struct gbpf_shm_hdr *hdr;
	uint64_t off, hdr_size;
	size_t i;
	int err;

	memset(shm, 0, sizeof(*shm));
	shm->fd = -1;
	if (count > GBPF_AGENT_MAX_MAPS) {
		snprintf(why, why_size, "%zu maps: more than the %u gbpf run supports", count,
			 GBPF_AGENT_MAX_MAPS);
		return -E2BIG;
	}
	tab = calloc(count ? count : 1, sizeof(*tab));
	if (!tab)
		return -ENOMEM;
	hdr_size = sizeof(*hdr) + count * sizeof(*tab);
	off = ALIGN_UP(hdr_size, GBPF_SHM_ALIGN);
	for (i = 0; i < count; i++) {
		uint64_t sz = gbpf_map_mem_size(&descs[i], slots[i]);

		if (!sz) {
			char reason[256] = "";

			gbpf_map_desc_check(&descs[i], reason, sizeof(reason));
			snprintf(why, why_size, "map '%s': cannot be built: %s", descs[i].name,
				 reason[0] ? reason : "invalid description or too large");
			err = -EINVAL;
			goto fail;
		}
		tab[i].off = off;
		tab[i].size = sz;
		off = ALIGN_UP(off + sz, GBPF_SHM_ALIGN);
		if (off > GBPF_MAP_MAX_MEM_SIZE) {
			snprintf(why, why_size, "maps need more than %llu bytes of shared memory",
				 (unsigned long long)GBPF_MAP_MAX_MEM_SIZE);
			err = -E2BIG;
			goto fail;
		}
	}
	shm->size = off;
	shm->fd = memfd_create("gbpf-maps", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (shm->fd < 0) {
		err = -errno;
		snprintf(why, why_size, "memfd_create for the maps: %s", strerror(errno));
		goto fail;
	}
	if (ftruncate(shm->fd, (off_t)shm->size) ||
	    fcntl(shm->fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)) {
		err = -errno;
		snprintf(why, why_size, "sizing and sealing %zu bytes of map memory: %s", shm->size,
			 strerror(errno));
		goto fail;
	}
	shm->base = mmap(NULL, shm->size, PROT_READ | PROT_WRITE, MAP_SHARED, shm->fd, 0);
	if (shm->base == MAP_FAILED) {
		shm->base = NULL;
		err = -errno;
		snprintf(why, why_size, "mapping %zu bytes of map memory: %s", shm->size,
			 strerror(errno));
		goto fail;
	}
	hdr = shm->base;
	hdr->magic = GBPF_SHM_MAGIC;
	hdr->version = GBPF_SHM_VERSION;
	hdr->map_cnt = (uint32_t)count;
	hdr->hdr_size = (uint32_t)hdr_size;
	hdr->total_size = shm->size;
	memcpy(hdr + 1, tab, count * sizeof(*tab));
	shm->maps = calloc(count ? count : 1, sizeof(*shm->maps));
	if (!shm->maps) {
		err = -ENOMEM;
		goto fail;
	}
	shm->map_cnt = count;
	for (i = 0; i < count; i++) {
		struct gbpf_map_instance *m = &shm->maps[i];

		m->desc = &descs[i];
		m->mem = (char *)shm->base + tab[i].off;
		m->mem_size = tab[i].size;
		err = gbpf_map_mem_init(m->mem, m->mem_size, &descs[i], slots[i]);
		if (err) {
			snprintf(why, why_size, "map '%s': initialising its memory failed: %s",
				 descs[i].name, strerror(-err));
			goto fail;
		}
	}
	free(tab);
	return 0;
fail:
	free(tab);
	gbpf_shm_destroy(shm);
	return err;
}

int gbpf_shm_attach(struct gbpf_shm *shm, int fd, const struct gbpf_map_desc *descs,
		    size_t count, char *why, size_t why_size)
{
	const struct gbpf_shm_entry *tab;
	const struct gbpf_shm_hdr *hdr;
	struct stat st;
	size_t i;
	int err = -EINVAL;

	memset(shm, 0, sizeof(*shm));
	shm->fd = fd;
	if (fstat(fd, &st)) {
		err = -errno;
		snprintf(why, why_size, "map memory: fstat: %s", strerror(errno));
		goto fail;
	}
	if (!S_ISREG(st.st_mode) || st.st_size < (off_t)sizeof(*hdr) ||
	    (uint64_t)st.st_size > GBPF_MAP_MAX_MEM_SIZE) {
		snprintf(why, why_size, "map memory: %lld bytes is not a gbpf map region",
			 (long long)st.st_size);
		goto fail;
	}
	/* Without the shrink seal another process could truncate it under us. */
	if (!(fcntl(fd, F_GET_SEALS) & F_SEAL_SHRINK)) {
		snprintf(why, why_size, "map memory: not sealed against shrinking");
		goto fail;
	}
	shm->size = (size_t)st.st_size;
	shm->base = mmap(NULL, shm->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (shm->base == MAP_FAILED) {
		shm->base = NULL;
		err = -errno;
		snprintf(why, why_size, "map memory: mmap of %zu bytes: %s", shm->size,
			 strerror(errno));
		goto fail;
	}
	hdr = shm->base;
	if (hdr->magic != GBPF_SHM_MAGIC || hdr->version != GBPF_SHM_VERSION) {
		snprintf(why, why_size, "map memory: bad header (magic 0x%08x, version %u)",
			 hdr->magic, hdr->version);
		goto fail;
	}
	if (hdr->map_cnt != count || hdr->total_size != shm->size ||
	    hdr->hdr_size != sizeof(*hdr) + count * sizeof(*tab) || hdr->hdr_size > shm->size) {
		snprintf(why, why_size,
			 "map memory: header says %u maps, %llu bytes; expected %zu maps, %zu bytes",
			 hdr->map_cnt, (unsigned long long)hdr->total_size, count, shm->size);
		goto fail;
	}
	tab = (const struct gbpf_shm_entry *)(hdr + 1);
	shm->maps = calloc(count ? count : 1, sizeof(*shm->maps));
	if (!shm->maps) {
		err = -ENOMEM;
		goto fail;
	}
	for (i = 0; i < count; i++) {
		uint64_t off = tab[i].off, size = tab[i].size;
		const struct gbpf_map_hdr *mh;

		if (off < hdr->hdr_size || off % 8 || size > shm->size || off > shm->size - size) {
			snprintf(why, why_size, "map #%zu '%s': block [%llu, +%llu) outside the region",
				 i, descs[i].name, (unsigned long long)off, (unsigned long long)size);
			goto fail;
		}
		mh = (const void *)((const char *)shm->base + off);
		if (gbpf_map_mem_validate(mh, size)) {
			snprintf(why, why_size, "map #%zu '%s': malformed map memory", i,
				 descs[i].name);
			goto fail;
		}
		if (mh->type != descs[i].type || mh->key_size != descs[i].key_size ||
		    mh->value_size != descs[i].value_size ||
		    mh->max_entries != descs[i].max_entries) {
			snprintf(why, why_size,
				 "map #%zu '%s': memory holds type %u key %u value %u entries %u, "
				 "description says %u/%u/%u/%u",
				 i, descs[i].name, mh->type, mh->key_size, mh->value_size,
				 mh->max_entries, descs[i].type, descs[i].key_size,
				 descs[i].value_size, descs[i].max_entries);
			goto fail;
		}
		shm->maps[i].desc = &descs[i];
		shm->maps[i].mem = (void *)mh;
		shm->maps[i].mem_size = size;
	}
	shm->map_cnt = count;
	return 0;
fail:
	gbpf_shm_destroy(shm);
	return err;
}

void gbpf_shm_destroy(struct gbpf_shm *shm)
{
	if (shm->base)
		munmap(shm->base, shm->size);
	if (shm->fd >= 0)
		close(shm->fd);
	free(shm->maps);
	memset(shm, 0, sizeof(*shm));
	shm->fd = -1;
}

const char *gbpf_agent_library_path(void)
{
	const char *env = getenv(GBPF_AGENT_ENV_LIB);

	if (env && env[0])
		return env;
	/* Running from the build tree: use the agent built next to this gbpf. */
	if (access(GBPF_AGENT_BUILD_PATH, R_OK) == 0)
		return GBPF_AGENT_BUILD_PATH;
	return GBPF_AGENT_INSTALL_PATH;
}
