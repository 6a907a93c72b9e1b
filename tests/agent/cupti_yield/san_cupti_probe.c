/* SPDX-License-Identifier: MIT */
/*
 * Device diagnostic (H200; not a test): does CUPTI get the driver's tool
 * subscription once the Compute Sanitizer gave it up, and what must the
 * giving up include? One variant per process:
 *   none     no Sanitizer: cuptiSubscribe as a baseline
 *   unsub    sanitizerSubscribe + the module-unload callback, CUDA context, sanitizerUnsubscribe
 *   disable  as unsub, callbacks and domains disabled before the unsubscription
 *   dlclose  as disable, then the library unloaded
 *   cupti1st cuptiSubscribe first, then sanitizerSubscribe
 * Prints "variant V: sanitizerSubscribe S cuptiSubscribe C cuptiActivityEnable A".
 * argv: SANITIZER_LIB CUPTI_LIB VARIANT
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

typedef int (*sub_fn)(void **, void *, void *);
typedef int (*unsub_fn)(void *);
typedef int (*en_cb_fn)(unsigned, void *, int, unsigned);
typedef int (*en_dom_fn)(unsigned, void *, int);
typedef int (*en_all_fn)(unsigned, void *);
typedef int (*int_fn)(int);
typedef int (*dev_get_fn)(int *, int);
typedef int (*retain_fn)(void **, int);
typedef int (*set_fn)(void *);

static void san_cb(void *u, int d, unsigned id, const void *data)
{
	(void)u;
	(void)d;
	(void)id;
	(void)data;
}

static void *sym(void *h, const char *name)
{
	void *p = h ? dlsym(h, name) : NULL;

	if (!p)
		fprintf(stderr, "probe: %s missing\n", name);
	return p;
}

int main(int argc, char **argv)
{
	void *san = NULL, *cupti, *cuda, *ssub = NULL, *csub = NULL, *ctx = NULL;
	int rs = -1, rc = -1, ra = -1, dev = 0;
	const char *v = argc > 3 ? argv[3] : "none";

	if (argc < 4)
		return 2;
	cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
	cupti = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
	if (!cuda || !cupti) {
		fprintf(stderr, "probe: %s\n", dlerror());
		return 2;
	}
	if (!strcmp(v, "cupti1st"))
		rc = ((sub_fn)sym(cupti, "cuptiSubscribe"))(&csub, NULL, NULL);
	if (strcmp(v, "none")) {
		san = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
		rs = ((sub_fn)sym(san, "sanitizerSubscribe"))(&ssub, (void *)san_cb, NULL);
		if (!rs)
			((en_cb_fn)sym(san, "sanitizerEnableCallback"))(1, ssub, 3, 10);
	}
	((int_fn)sym(cuda, "cuInit"))(0);
	((dev_get_fn)sym(cuda, "cuDeviceGet"))(&dev, 0);
	((retain_fn)sym(cuda, "cuDevicePrimaryCtxRetain"))(&ctx, dev);
	((set_fn)sym(cuda, "cuCtxSetCurrent"))(ctx);
	if (!strcmp(v, "cupti1st")) {
		printf("variant %s: cuptiSubscribe %d then sanitizerSubscribe %d\n", v, rc, rs);
		return 0;
	}
	if (san && !rs && (!strcmp(v, "disable") || !strcmp(v, "dlclose"))) {
		((en_cb_fn)sym(san, "sanitizerEnableCallback"))(0, ssub, 3, 10);
		((en_dom_fn)sym(san, "sanitizerEnableDomain"))(0, ssub, 3);
		((en_all_fn)sym(san, "sanitizerEnableAllDomains"))(0, ssub);
	}
	if (san && !rs)
		((unsub_fn)sym(san, "sanitizerUnsubscribe"))(ssub);
	if (san && !strcmp(v, "dlclose"))
		dlclose(san);
	rc = ((sub_fn)sym(cupti, "cuptiSubscribe"))(&csub, NULL, NULL);
	ra = ((int_fn)sym(cupti, "cuptiActivityEnable"))(10);
	printf("variant %s: sanitizerSubscribe %d cuptiSubscribe %d cuptiActivityEnable %d\n", v, rs, rc, ra);
	return 0;
}
