/* SPDX-License-Identifier: MIT */
/*
 * core/loader/attach.c - section names to attach points (docs/ATTACH.md).
 */
#include <errno.h>
#include <string.h>

#include "loader_internal.h"

struct attach_rule {
	const char *prefix;
	uint32_t kind;
	enum { ARG_NONE, ARG_OPT_GLOB, ARG_NAME, ARG_BIN_SYM } arg;
};

/* Longest prefixes first where one is a prefix of another. */
static const struct attach_rule attach_rules[] = {
	{"kprobe/__memcapture", GBPF_ATTACH_GPU_MEM, ARG_NONE},
	{"kprobe/", GBPF_ATTACH_GPU_ENTRY, ARG_NAME},
	{"kretprobe/", GBPF_ATTACH_GPU_EXIT, ARG_NAME},
	{"uprobe/", GBPF_ATTACH_UPROBE, ARG_BIN_SYM},
	{"uretprobe/", GBPF_ATTACH_URETPROBE, ARG_BIN_SYM},
	{"gpu/entry", GBPF_ATTACH_GPU_ENTRY, ARG_OPT_GLOB},
	{"gpu/exit", GBPF_ATTACH_GPU_EXIT, ARG_OPT_GLOB},
	{"gpu/mem", GBPF_ATTACH_GPU_MEM, ARG_OPT_GLOB},
	{"gpu/barrier", GBPF_ATTACH_GPU_BARRIER, ARG_OPT_GLOB},
	{"gpu/block", GBPF_ATTACH_GPU_BLOCK, ARG_OPT_GLOB},
	{"host/launch", GBPF_ATTACH_HOST_LAUNCH, ARG_OPT_GLOB},
	{"host/memcpy", GBPF_ATTACH_HOST_MEMCPY, ARG_NONE},
	{"host/malloc", GBPF_ATTACH_HOST_MALLOC, ARG_NONE},
	{"host/sync", GBPF_ATTACH_HOST_SYNC, ARG_NONE},
	{"host/module_load", GBPF_ATTACH_HOST_MODULE_LOAD, ARG_NONE},
};

/* The word after "gpu/" or "host/" must be a whole path component. */
static int prefix_matches(const char *sec, const struct attach_rule *r)
{
	size_t n = strlen(r->prefix);

	if (strncmp(sec, r->prefix, n) != 0)
		return 0;
	if (r->prefix[n - 1] == '/')
		return 1;
	return sec[n] == '\0' || sec[n] == '/';
}

int gbpf_attach_parse(const char *section, struct gbpf_attach *attach, char *storage, size_t size)
{
	const struct attach_rule *r = NULL;
	const char *rest;
	size_t i;

	if (!section || !attach || (!storage && size))
		return -EINVAL;
	memset(attach, 0, sizeof(*attach));
	for (i = 0; i < sizeof(attach_rules) / sizeof(attach_rules[0]); i++) {
		if (prefix_matches(section, &attach_rules[i])) {
			r = &attach_rules[i];
			break;
		}
	}
	if (!r) {
		/* gpu/... and host/... belong to gbpf's scheme: a typo there is an error. */
		if (strncmp(section, "gpu/", 4) == 0 || strncmp(section, "host/", 5) == 0)
			return -EINVAL;
		attach->kind = GBPF_ATTACH_NONE;
		return 0;
	}
	rest = section + strlen(r->prefix);
	switch (r->arg) {
	case ARG_NONE:
		if (*rest)
			return -EINVAL;
		break;
	case ARG_OPT_GLOB:
		if (*rest == '/')
			rest++;
		/* No glob, or "*", means every kernel. */
		if (*rest && strcmp(rest, "*") != 0) {
			if (strlen(rest) + 1 > size)
				return -ENOSPC;
			memcpy(storage, rest, strlen(rest) + 1);
			attach->target = storage;
		}
		break;
	case ARG_NAME:
		if (!*rest)
			return -EINVAL;
		if (strlen(rest) + 1 > size)
			return -ENOSPC;
		memcpy(storage, rest, strlen(rest) + 1);
		attach->target = storage;
		break;
	case ARG_BIN_SYM: {
		const char *colon = strchr(rest, ':');

		if (!colon || colon == rest || !colon[1])
			return -EINVAL;
		if (strlen(rest) + 1 > size)
			return -ENOSPC;
		memcpy(storage, rest, strlen(rest) + 1);
		storage[colon - rest] = '\0';
		attach->target = storage;
		attach->symbol = storage + (colon - rest) + 1;
		break;
	}
	}
	attach->kind = r->kind;
	return 0;
}
