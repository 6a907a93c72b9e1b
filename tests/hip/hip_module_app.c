/* SPDX-License-Identifier: MIT */
/*
 * A HIP application that dlopens the runtime (libamdhip64.so.5) and uses
 * every entry point the hip plugin intercepts besides <<<>>>: hipModuleLoad,
 * hipModuleLoadData, hipModuleLoadDataEx, hipModuleGetFunction,
 * hipModuleLaunchKernel, hipExtModuleLaunchKernel (C or HIP 5.x C++ name),
 * and a fat binary it registers itself (a bundle around the same code
 * object) launched with hipLaunchKernel, hipLaunchCooperativeKernel and
 * hipExtLaunchKernel. Plain C, no hipcc: run under the fake runtime.
 *   hip_module_app CODE_OBJECT ARCH   (kernels vector_add, reduce_loop)
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
	uint32_t x, y, z;
} dim3;

struct wrapper {
	uint32_t magic, version;
	const void *bundle;
	void *unused;
};

static void *rt;
static int launches;

static void *sym(const char *name)
{
	void *p = dlsym(rt, name);

	if (!p) {
		fprintf(stderr, "module_app: %s not found in the runtime\n", name);
		exit(2);
	}
	return p;
}

#define CHECK(call)                                                                                                \
	do {                                                                                                       \
		int rc_ = (call);                                                                                  \
		if (rc_) {                                                                                         \
			fprintf(stderr, "module_app: %s failed (%d)\n", #call, rc_);                               \
			exit(1);                                                                                   \
		}                                                                                                  \
	} while (0)

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *b = NULL;
	long n;

	if (!f || fseek(f, 0, SEEK_END) || (n = ftell(f)) <= 0 || fseek(f, 0, SEEK_SET) || !(b = malloc((size_t)n)) ||
	    fread(b, 1, (size_t)n, f) != (size_t)n) {
		fprintf(stderr, "module_app: cannot read %s\n", path);
		exit(2);
	}
	fclose(f);
	*len = (size_t)n;
	return b;
}

/* A clang offload bundle: an empty host entry and the code object at 4096. */
static uint8_t *bundle(const uint8_t *co, size_t len, const char *arch, size_t *out_len)
{
	char id0[] = "host-x86_64-unknown-linux", id1[64];
	uint64_t n = 2, off0 = 4096, sz0 = 0, l0 = strlen(id0), off1 = 4096, sz1 = len, l1;
	uint8_t *b, *p;

	snprintf(id1, sizeof(id1), "hipv4-amdgcn-amd-amdhsa--%s", arch);
	l1 = strlen(id1);
	*out_len = 4096 + len;
	b = calloc(1, *out_len);
	if (!b)
		exit(2);
	p = b;
	memcpy(p, "__CLANG_OFFLOAD_BUNDLE__", 24), p += 24;
	memcpy(p, &n, 8), p += 8;
	memcpy(p, &off0, 8), memcpy(p + 8, &sz0, 8), memcpy(p + 16, &l0, 8), memcpy(p + 24, id0, l0), p += 24 + l0;
	memcpy(p, &off1, 8), memcpy(p + 8, &sz1, 8), memcpy(p + 16, &l1, 8), memcpy(p + 24, id1, l1);
	memcpy(b + 4096, co, len);
	return b;
}

/* Host stubs of the registered kernels: only their addresses matter. */
static char stub_vector_add, stub_reduce_loop;

int main(int argc, char **argv)
{
	int (*load)(void **, const char *), (*load_data)(void **, const void *);
	int (*load_data_ex)(void **, const void *, unsigned, void *, void **);
	int (*get_function)(void **, void *, const char *);
	int (*module_launch)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *,
			     void **, void **);
	int (*ext_module_launch)(void *, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, size_t, void *,
				 void **, void **, void *, void *, uint32_t);
	int (*launch)(const void *, dim3, dim3, void **, size_t, void *);
	int (*coop)(const void *, dim3, dim3, void **, unsigned, void *);
	int (*ext_launch)(const void *, dim3, dim3, void **, size_t, void *, void *, void *, int);
	void **(*reg_fatbin)(const void *);
	void (*reg_function)(void **, const void *, char *, const char *, unsigned, void *, void *, void *, void *,
			     int *);
	void (*unreg_fatbin)(void **);
	void *m1, *m2, *m3, *f1, *f2, *f3, *args[4] = {0};
	void **handle;
	struct wrapper w = {0x48495046u, 1, NULL, NULL};
	uint8_t *co, *b;
	size_t len, blen;

	if (argc < 3) {
		fprintf(stderr, "usage: %s CODE_OBJECT ARCH\n", argv[0]);
		return 2;
	}
	rt = dlopen("libamdhip64.so.5", RTLD_NOW | RTLD_LOCAL);
	if (!rt) {
		fprintf(stderr, "module_app: %s\n", dlerror());
		return 2;
	}
	load = (int (*)(void **, const char *))sym("hipModuleLoad");
	load_data = (int (*)(void **, const void *))sym("hipModuleLoadData");
	load_data_ex = (int (*)(void **, const void *, unsigned, void *, void **))sym("hipModuleLoadDataEx");
	get_function = (int (*)(void **, void *, const char *))sym("hipModuleGetFunction");
	module_launch = (int (*)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *,
				 void **, void **))sym("hipModuleLaunchKernel");
	ext_module_launch = (int (*)(void *, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, size_t, void *,
				     void **, void **, void *, void *, uint32_t))dlsym(rt, "hipExtModuleLaunchKernel");
	if (!ext_module_launch)
		ext_module_launch = (int (*)(void *, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, size_t,
					     void *, void **, void **, void *, void *, uint32_t))
			sym("_Z24hipExtModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_j");
	launch = (int (*)(const void *, dim3, dim3, void **, size_t, void *))sym("hipLaunchKernel");
	coop = (int (*)(const void *, dim3, dim3, void **, unsigned, void *))sym("hipLaunchCooperativeKernel");
	ext_launch = (int (*)(const void *, dim3, dim3, void **, size_t, void *, void *, void *, int))sym(
		"hipExtLaunchKernel");
	reg_fatbin = (void **(*)(const void *))sym("__hipRegisterFatBinary");
	reg_function = (void (*)(void **, const void *, char *, const char *, unsigned, void *, void *, void *, void *,
				 int *))sym("__hipRegisterFunction");
	unreg_fatbin = (void (*)(void **))sym("__hipUnregisterFatBinary");

	co = slurp(argv[1], &len);
	CHECK(load(&m1, argv[1]));
	CHECK(get_function(&f1, m1, "vector_add"));
	CHECK(module_launch(f1, 4, 1, 1, 256, 1, 1, 0, NULL, args, NULL));
	launches++;
	CHECK(load_data(&m2, co));
	CHECK(get_function(&f2, m2, "reduce_loop"));
	CHECK(ext_module_launch(f2, 4096, 1, 1, 256, 1, 1, 1024, NULL, args, NULL, NULL, NULL, 0));
	launches++;
	CHECK(load_data_ex(&m3, co, 0, NULL, NULL));
	CHECK(get_function(&f3, m3, "vector_add"));
	CHECK(module_launch(f3, 2, 1, 1, 128, 1, 1, 0, NULL, args, NULL));
	launches++;

	b = bundle(co, len, argv[2], &blen);
	w.bundle = b;
	handle = reg_fatbin(&w);
	reg_function(handle, &stub_vector_add, (char *)"vector_add", "vector_add", (unsigned)-1, NULL, NULL, NULL, NULL,
		     NULL);
	reg_function(handle, &stub_reduce_loop, (char *)"reduce_loop", "reduce_loop", (unsigned)-1, NULL, NULL, NULL,
		     NULL, NULL);
	CHECK(launch(&stub_vector_add, (dim3){8, 1, 1}, (dim3){64, 1, 1}, args, 0, NULL));
	launches++;
	CHECK(coop(&stub_reduce_loop, (dim3){16, 1, 1}, (dim3){256, 1, 1}, args, 0, NULL));
	launches++;
	CHECK(ext_launch(&stub_vector_add, (dim3){1, 2, 1}, (dim3){32, 1, 1}, args, 0, NULL, NULL, NULL, 0));
	launches++;
	unreg_fatbin(handle);
	printf("module_app: %d launches done\n", launches);
	free(b);
	free(co);
	return 0;
}
