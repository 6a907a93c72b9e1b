/* SPDX-License-Identifier: MIT */
/*
 * plugins/cuda/cuda_globals.c - the application's module variables
 * (__device__, __constant__) mirrored around instrumented launches
 * (cuda_globals.h).
 */
#include <stdlib.h>
#include <string.h>

#include "cuda_globals.h"

/* Largest variable mirrored around each launch; larger ones are reported as not kept coherent. */
#define CA_GLOBAL_MIRROR_MAX (1u << 20)

/*
 * Name of the variable a module-scope .global/.const declaration line
 * defines (the identifier before '[', '=' or ';'), in @name; 0 when the
 * line is no such definition.
 */
static int ca_decl_name(const char *line, size_t len, char *name, size_t name_size, int *is_const)
{
	size_t i = 0, start = 0, n = 0;
	int space = 0;

	while (i < len && (line[i] == ' ' || line[i] == '\t'))
		i++;
	if (len - i > 9 && !memcmp(line + i, ".visible ", 9))
		i += 9;
	else if (len - i > 6 && !memcmp(line + i, ".weak ", 6))
		i += 6;
	if (len - i > 8 && !memcmp(line + i, ".global ", 8))
		space = 1;
	else if (len - i > 7 && !memcmp(line + i, ".const ", 7))
		space = 2;
	if (!space)
		return 0;
	for (; i < len && line[i] != '[' && line[i] != '=' && line[i] != ';'; i++) {
		int ident = (line[i] >= 'a' && line[i] <= 'z') || (line[i] >= 'A' && line[i] <= 'Z') ||
			    (line[i] >= '0' && line[i] <= '9') || line[i] == '_' || line[i] == '$' ||
			    line[i] == '.';

		if (ident && (!i || !n || line[i - 1] == ' ' || line[i - 1] == '\t'))
			start = i, n = 0;
		if (ident)
			n++;
	}
	if (!n || n >= name_size || line[start] == '.' || line[start] == '$')
		return 0;
	memcpy(name, line + start, n);
	name[n] = 0;
	*is_const = space == 2;
	return strncmp(name, "__gbpf_", 7) != 0;
}

/*
 * Pair each variable the instrumented module defines at module scope with
 * the app's own (same name in the launched module or library), so launches
 * see what the app wrote with cudaMemcpyToSymbol and the app sees what
 * kernels wrote (ca_globals_sync). Variables the app's module does not
 * export (nvcc's $str, internal ones) are skipped.
 */
void ca_globals_collect(struct ca_global **v, size_t *n, CUmodule inst_mod, const struct gbpf_cu_launch *l,
			const char *ptx, void (*not_mirrored)(void *arg, const char *var, size_t bytes), void *arg)
{
	typedef CUresult (*get_global_fn)(CUdeviceptr *, size_t *, CUmodule, const char *);
	typedef CUresult (*lib_global_fn)(CUdeviceptr *p, size_t *bytes, void *lib, const char *name);
	get_global_fn getg = (get_global_fn)gbpf_cu_real_proc("cuModuleGetGlobal", 3020, 0);
	lib_global_fn lib_getg = (lib_global_fn)gbpf_cu_real_proc("cuLibraryGetGlobal", 12000, 0);
	int depth = 0;

	for (const char *p = ptx; p && *p;) {
		const char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) : strlen(p);
		char name[256];
		int is_const = 0;
		CUdeviceptr orig = 0, inst = 0;
		size_t osz = 0, isz = 0;

		if (!depth && ca_decl_name(p, len, name, sizeof(name), &is_const) && getg &&
		    getg(&inst, &isz, inst_mod, name) == GBPF_CUDA_SUCCESS &&
		    ((l->library && lib_getg && lib_getg(&orig, &osz, l->library, name) == GBPF_CUDA_SUCCESS) ||
		     (!l->library && l->module && getg(&orig, &osz, l->module, name) == GBPF_CUDA_SUCCESS)) &&
		    osz == isz && isz) {
			/* grown only for a variable kept: realloc may move the array and free the old one */
			struct ca_global *nv = isz > CA_GLOBAL_MIRROR_MAX ? NULL : realloc(*v, (*n + 1) * sizeof(*nv));

			if (isz > CA_GLOBAL_MIRROR_MAX) {
				if (not_mirrored)
					not_mirrored(arg, name, isz);
			} else if (nv) {
				*v = nv;
				nv[(*n)++] = (struct ca_global){orig, inst, isz, is_const};
			}
		}
		for (size_t i = 0; i < len; i++)
			depth += p[i] == '{' ? 1 : p[i] == '}' ? -1 : 0;
		if (depth < 0)
			depth = 0;
		p = eol ? eol + 1 : NULL;
	}
}

/*
 * Before an instrumented launch (to = 1) the app's values go to the copy;
 * after it (to = 0) the kernel's writes come back: stream-ordered copies on
 * the launch's stream, so the app's own order of copies and launches holds.
 */
void ca_globals_sync(ca_d2d_async_fn d2d, const struct ca_global *v, size_t n, CUstream stream, int to)
{
	for (size_t i = 0; d2d && i < n; i++) {
		const struct ca_global *g = &v[i];

		if (to)
			d2d(g->inst, g->orig, g->size, stream);
		else if (!g->is_const)
			d2d(g->orig, g->inst, g->size, stream);
	}
}
