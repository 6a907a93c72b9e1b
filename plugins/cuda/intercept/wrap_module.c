/* SPDX-License-Identifier: MIT */
/*
 * plugins/cuda/intercept/wrap_module.c - wrappers of cuGetProcAddress, of
 * module / library / link loading, of handle creation and of attributes.
 *
 * Each wrapper calls the real driver first and reports afterwards: loading
 * is never delayed or changed, hooks only learn about it.
 */
#include "plugins/cuda/intercept/intercept_internal.h"

/* ---- cuGetProcAddress: every later driver lookup of cudart goes through here ---- */

static CUresult gpa_v1_impl(const struct gbpf_cu_slot *s, const char *symbol, void **pfn,
			    int version, cuuint64_t flags)
{
	PFN_cuGetProcAddress_v11030 real = gbpf_cu_slot_real(s);
	CUresult res = real(symbol, pfn, version, flags);

	if (res == GBPF_CUDA_SUCCESS && pfn && *pfn)
		*pfn = gbpf_cu_wrap_proc(symbol, version, flags, *pfn);
	return res;
}
GBPF_CU_FAMILY(gpa_v1, (const char *symbol, void **pfn, int version, cuuint64_t flags),
	       (symbol, pfn, version, flags));

static CUresult gpa_v2_impl(const struct gbpf_cu_slot *s, const char *symbol, void **pfn,
			    int version, cuuint64_t flags, CUdriverProcAddressQueryResult *status)
{
	PFN_cuGetProcAddress_v12000 real = gbpf_cu_slot_real(s);
	CUresult res = real(symbol, pfn, version, flags, status);

	if (res == GBPF_CUDA_SUCCESS && pfn && *pfn)
		*pfn = gbpf_cu_wrap_proc(symbol, version, flags, *pfn);
	return res;
}
GBPF_CU_FAMILY(gpa_v2,
	       (const char *symbol, void **pfn, int version, cuuint64_t flags,
		CUdriverProcAddressQueryResult *status),
	       (symbol, pfn, version, flags, status));

/* ---- images ---- */

static void report_image(const char *api, const void *image, size_t given_size, const char *path,
			 CUmodule *mod, CUlibrary *lib, CUlinkState link, CUresult res)
{
	const struct gbpf_cu_hooks *h = gbpf_cu_hooks_enter();
	struct gbpf_cu_image_event ev = {0};

	if (!h)
		return;
	ev.api = api;
	ev.result = res;
	ev.path = path;
	ev.link = link;
	if (path) {
		ev.kind = GBPF_CU_IMAGE_FILE;
	} else {
		ev.image = image;
		ev.kind = gbpf_cu_image_classify(image, &ev.image_size);
		if (given_size)
			ev.image_size = given_size;
		if (ev.kind == GBPF_CU_IMAGE_WRAPPER) {
			const void *const *w = (const void *const *)image;

			ev.fatbin = w[1];
			if (gbpf_cu_image_classify(ev.fatbin, &ev.fatbin_size) != GBPF_CU_IMAGE_FATBIN)
				ev.fatbin_size = 0;
		}
	}
	if (res == GBPF_CUDA_SUCCESS) {
		ev.module = mod ? *mod : NULL;
		ev.library = lib ? *lib : NULL;
	}
	if (h->image_loaded)
		h->image_loaded(h->ctx, &ev);
	gbpf_cu_hooks_leave();
}

static CUresult module_load_impl(const struct gbpf_cu_slot *s, CUmodule *module, const char *fname)
{
	CUresult res = ((PFN_cuModuleLoad_v2000)gbpf_cu_slot_real(s))(module, fname);

	report_image("cuModuleLoad", NULL, 0, fname ? fname : "", module, NULL, NULL, res);
	return res;
}
GBPF_CU_FAMILY(module_load, (CUmodule *module, const char *fname), (module, fname));

static CUresult module_load_data_impl(const struct gbpf_cu_slot *s, CUmodule *module,
				      const void *image)
{
	CUresult res = ((PFN_cuModuleLoadData_v2000)gbpf_cu_slot_real(s))(module, image);

	report_image("cuModuleLoadData", image, 0, NULL, module, NULL, NULL, res);
	return res;
}
GBPF_CU_FAMILY(module_load_data, (CUmodule *module, const void *image), (module, image));

static CUresult module_load_data_ex_impl(const struct gbpf_cu_slot *s, CUmodule *module,
					 const void *image, unsigned int n, CUjit_option *opts,
					 void **vals)
{
	CUresult res = ((PFN_cuModuleLoadDataEx_v2010)gbpf_cu_slot_real(s))(module, image, n, opts,
									   vals);

	report_image("cuModuleLoadDataEx", image, 0, NULL, module, NULL, NULL, res);
	return res;
}
GBPF_CU_FAMILY(module_load_data_ex,
	       (CUmodule *module, const void *image, unsigned int n, CUjit_option *opts,
		void **vals),
	       (module, image, n, opts, vals));

static CUresult module_load_fatbin_impl(const struct gbpf_cu_slot *s, CUmodule *module,
					const void *image)
{
	CUresult res = ((PFN_cuModuleLoadFatBinary_v2000)gbpf_cu_slot_real(s))(module, image);

	report_image("cuModuleLoadFatBinary", image, 0, NULL, module, NULL, NULL, res);
	return res;
}
GBPF_CU_FAMILY(module_load_fatbin, (CUmodule *module, const void *image), (module, image));

static CUresult library_load_data_impl(const struct gbpf_cu_slot *s, CUlibrary *lib,
				       const void *code, CUjit_option *jo, void **jv,
				       unsigned int njo, CUlibraryOption *lo, void **lv,
				       unsigned int nlo)
{
	CUresult res = ((PFN_cuLibraryLoadData_v12000)gbpf_cu_slot_real(s))(lib, code, jo, jv, njo,
									    lo, lv, nlo);

	report_image("cuLibraryLoadData", code, 0, NULL, NULL, lib, NULL, res);
	return res;
}
GBPF_CU_FAMILY(library_load_data,
	       (CUlibrary *lib, const void *code, CUjit_option *jo, void **jv, unsigned int njo,
		CUlibraryOption *lo, void **lv, unsigned int nlo),
	       (lib, code, jo, jv, njo, lo, lv, nlo));

static CUresult library_load_file_impl(const struct gbpf_cu_slot *s, CUlibrary *lib,
				       const char *path, CUjit_option *jo, void **jv,
				       unsigned int njo, CUlibraryOption *lo, void **lv,
				       unsigned int nlo)
{
	CUresult res = ((PFN_cuLibraryLoadFromFile_v12000)gbpf_cu_slot_real(s))(lib, path, jo, jv,
										 njo, lo, lv, nlo);

	report_image("cuLibraryLoadFromFile", NULL, 0, path ? path : "", NULL, lib, NULL, res);
	return res;
}
GBPF_CU_FAMILY(library_load_file,
	       (CUlibrary *lib, const char *path, CUjit_option *jo, void **jv, unsigned int njo,
		CUlibraryOption *lo, void **lv, unsigned int nlo),
	       (lib, path, jo, jv, njo, lo, lv, nlo));

static CUresult link_add_data_impl(const struct gbpf_cu_slot *s, CUlinkState state,
				   CUjitInputType type, void *data, size_t size, const char *name,
				   unsigned int n, CUjit_option *opts, void **vals)
{
	CUresult res = ((PFN_cuLinkAddData_v6050)gbpf_cu_slot_real(s))(state, type, data, size,
									name, n, opts, vals);

	report_image("cuLinkAddData", data, size, NULL, NULL, NULL, state, res);
	return res;
}
GBPF_CU_FAMILY(link_add_data,
	       (CUlinkState state, CUjitInputType type, void *data, size_t size, const char *name,
		unsigned int n, CUjit_option *opts, void **vals),
	       (state, type, data, size, name, n, opts, vals));

static CUresult link_complete_impl(const struct gbpf_cu_slot *s, CUlinkState state, void **cubin,
				   size_t *size)
{
	CUresult res = ((PFN_cuLinkComplete_v5050)gbpf_cu_slot_real(s))(state, cubin, size);

	if (res == GBPF_CUDA_SUCCESS && cubin && *cubin)
		report_image("cuLinkComplete", *cubin, size ? *size : 0, NULL, NULL, NULL, state, res);
	return res;
}
GBPF_CU_FAMILY(link_complete, (CUlinkState state, void **cubin, size_t *size),
	       (state, cubin, size));

/* ---- handles ---- */

static void report_handle(const char *api, enum gbpf_cu_handle_kind kind, const void *handle,
			  const char *name, CUmodule mod, CUlibrary lib, CUkernel kernel)
{
	const struct gbpf_cu_hooks *h;
	struct gbpf_cu_handle_event ev = {api, kind, handle, name, mod, lib, kernel};

	/* Recorded even without hooks: launches and replays need the names later. */
	gbpf_cu_handle_record(handle, kind, name, mod, lib, kernel);
	h = gbpf_cu_hooks_enter();
	if (!h)
		return;
	if (h->handle_created)
		h->handle_created(h->ctx, &ev);
	gbpf_cu_hooks_leave();
}

static CUresult module_get_function_impl(const struct gbpf_cu_slot *s, CUfunction *f,
					 CUmodule mod, const char *name)
{
	CUresult res = ((PFN_cuModuleGetFunction_v2000)gbpf_cu_slot_real(s))(f, mod, name);

	if (res == GBPF_CUDA_SUCCESS && f && *f)
		report_handle("cuModuleGetFunction", GBPF_CU_HANDLE_FUNCTION, *f, name, mod, NULL,
			      NULL);
	return res;
}
GBPF_CU_FAMILY(module_get_function, (CUfunction * f, CUmodule mod, const char *name),
	       (f, mod, name));

static CUresult library_get_kernel_impl(const struct gbpf_cu_slot *s, CUkernel *k, CUlibrary lib,
					const char *name)
{
	CUresult res = ((PFN_cuLibraryGetKernel_v12000)gbpf_cu_slot_real(s))(k, lib, name);

	if (res == GBPF_CUDA_SUCCESS && k && *k)
		report_handle("cuLibraryGetKernel", GBPF_CU_HANDLE_KERNEL, *k, name, NULL, lib,
			      *k);
	return res;
}
GBPF_CU_FAMILY(library_get_kernel, (CUkernel * k, CUlibrary lib, const char *name),
	       (k, lib, name));

static CUresult kernel_get_function_impl(const struct gbpf_cu_slot *s, CUfunction *f, CUkernel k)
{
	CUresult res = ((PFN_cuKernelGetFunction_v12000)gbpf_cu_slot_real(s))(f, k);

	if (res == GBPF_CUDA_SUCCESS && f && *f) {
		struct gbpf_cu_handle_info info = {0};

		gbpf_cu_handle_lookup(k, &info);
		report_handle("cuKernelGetFunction", GBPF_CU_HANDLE_FUNCTION, *f, info.name,
			      info.module, info.library, k);
	}
	return res;
}
GBPF_CU_FAMILY(kernel_get_function, (CUfunction * f, CUkernel k), (f, k));

static CUresult library_get_module_impl(const struct gbpf_cu_slot *s, CUmodule *mod,
					CUlibrary lib)
{
	/* Observed only to be complete: functions of that module are seen by cuModuleGetFunction. */
	return ((PFN_cuLibraryGetModule_v12000)gbpf_cu_slot_real(s))(mod, lib);
}
GBPF_CU_FAMILY(library_get_module, (CUmodule * mod, CUlibrary lib), (mod, lib));

/* ---- attributes ---- */

static void report_attr(const char *api, const void *handle, int cache_config, int attrib,
			int value, CUdevice dev, CUresult res)
{
	const struct gbpf_cu_hooks *h;
	struct gbpf_cu_attr_event ev = {api, handle, cache_config, attrib, value, dev, res};

	if (res == GBPF_CUDA_SUCCESS)
		gbpf_cu_attr_record(handle, cache_config, attrib, value);
	h = gbpf_cu_hooks_enter();
	if (!h)
		return;
	if (h->attribute_set)
		h->attribute_set(h->ctx, &ev);
	gbpf_cu_hooks_leave();
}

static CUresult func_set_attribute_impl(const struct gbpf_cu_slot *s, CUfunction f,
					CUfunction_attribute attrib, int value)
{
	CUresult res = ((PFN_cuFuncSetAttribute_v9000)gbpf_cu_slot_real(s))(f, attrib, value);

	report_attr("cuFuncSetAttribute", f, 0, attrib, value, -1, res);
	return res;
}
GBPF_CU_FAMILY(func_set_attribute, (CUfunction f, CUfunction_attribute attrib, int value),
	       (f, attrib, value));

static CUresult kernel_set_attribute_impl(const struct gbpf_cu_slot *s,
					  CUfunction_attribute attrib, int value, CUkernel k,
					  CUdevice dev)
{
	CUresult res = ((PFN_cuKernelSetAttribute_v12000)gbpf_cu_slot_real(s))(attrib, value, k,
										dev);

	report_attr("cuKernelSetAttribute", k, 0, attrib, value, dev, res);
	return res;
}
GBPF_CU_FAMILY(kernel_set_attribute,
	       (CUfunction_attribute attrib, int value, CUkernel k, CUdevice dev),
	       (attrib, value, k, dev));

static CUresult func_set_cache_config_impl(const struct gbpf_cu_slot *s, CUfunction f,
					   CUfunc_cache config)
{
	CUresult res = ((PFN_cuFuncSetCacheConfig_v3000)gbpf_cu_slot_real(s))(f, config);

	report_attr("cuFuncSetCacheConfig", f, 1, 0, config, -1, res);
	return res;
}
GBPF_CU_FAMILY(func_set_cache_config, (CUfunction f, CUfunc_cache config), (f, config));

static CUresult kernel_set_cache_config_impl(const struct gbpf_cu_slot *s, CUkernel k,
					     CUfunc_cache config, CUdevice dev)
{
	CUresult res = ((PFN_cuKernelSetCacheConfig_v12000)gbpf_cu_slot_real(s))(k, config, dev);

	report_attr("cuKernelSetCacheConfig", k, 1, 0, config, dev, res);
	return res;
}
GBPF_CU_FAMILY(kernel_set_cache_config, (CUkernel k, CUfunc_cache config, CUdevice dev),
	       (k, config, dev));
