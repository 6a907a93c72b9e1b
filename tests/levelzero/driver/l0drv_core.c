/* SPDX-License-Identifier: MIT */
/*
 * Test-only Level Zero driver: initialisation on OpenCL, driver, device,
 * context and memory entry points, and the 53 zeGet*ProcAddrTable exports
 * the loader requires of a driver.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <level_zero/zes_ddi.h>
#include <level_zero/zet_ddi.h>

#include "l0drv.h"

#define L0DRV_MAGIC 0x4c30

/** The OpenCL state of the process, made once by zeInit. */
struct l0drv_cl l0drv_cl_state;
static pthread_once_t l0drv_init_once = PTHREAD_ONCE_INIT;
static ze_result_t l0drv_init_result = ZE_RESULT_ERROR_UNINITIALIZED;

static struct _ze_driver_handle_t l0drv_the_driver = {L0DRV_MAGIC};
static struct _ze_device_handle_t l0drv_the_device = {L0DRV_MAGIC};

/** Live USM allocations and imported ranges, guarded by l0drv_alloc_lock. */
static struct l0drv_alloc *l0drv_allocs;
static pthread_mutex_t l0drv_alloc_lock = PTHREAD_MUTEX_INITIALIZER;

ze_result_t l0drv_cl_result(cl_int err)
{
	switch (err) {
	case CL_SUCCESS:
		return ZE_RESULT_SUCCESS;
	case CL_OUT_OF_HOST_MEMORY:
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	case CL_OUT_OF_RESOURCES:
	case CL_MEM_OBJECT_ALLOCATION_FAILURE:
		return ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
	case CL_INVALID_WORK_GROUP_SIZE:
		return ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION;
	case CL_INVALID_KERNEL_NAME:
		return ZE_RESULT_ERROR_INVALID_KERNEL_NAME;
	case CL_INVALID_KERNEL_ARGS:
		return ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE;
	default:
		return ZE_RESULT_ERROR_UNKNOWN;
	}
}

static void l0drv_do_init(void)
{
	struct l0drv_cl *s = &l0drv_cl_state;
	cl_uint n = 0;
	cl_int err;

	if (clGetPlatformIDs(1, &s->platform, &n) != CL_SUCCESS || n == 0) {
		fprintf(stderr, "l0drv: zeInit: no OpenCL platform\n");
		return;
	}
	if (clGetDeviceIDs(s->platform, CL_DEVICE_TYPE_ALL, 1, &s->device, &n) != CL_SUCCESS ||
	    n == 0) {
		fprintf(stderr, "l0drv: zeInit: no OpenCL device\n");
		return;
	}
	s->context = clCreateContext(NULL, 1, &s->device, NULL, NULL, &err);
	if (!s->context) {
		fprintf(stderr, "l0drv: zeInit: clCreateContext failed (%d)\n", err);
		return;
	}
	s->queue = clCreateCommandQueueWithProperties(s->context, s->device, NULL, &err);
	if (!s->queue) {
		fprintf(stderr, "l0drv: zeInit: clCreateCommandQueue failed (%d)\n", err);
		return;
	}
	clGetDeviceInfo(s->device, CL_DEVICE_NAME, sizeof(s->device_name) - 1, s->device_name,
			NULL);
	clGetDeviceInfo(s->device, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof(s->compute_units),
			&s->compute_units, NULL);
	clGetDeviceInfo(s->device, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof(s->max_group_size),
			&s->max_group_size, NULL);
	if (s->max_group_size == 0 || s->max_group_size > 1024)
		s->max_group_size = 1024;
	l0drv_init_result = ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL l0drv_init(ze_init_flags_t flags)
{
	if (flags && !(flags & ZE_INIT_FLAG_GPU_ONLY))
		return ZE_RESULT_ERROR_UNINITIALIZED; /* only a GPU-type device here */
	pthread_once(&l0drv_init_once, l0drv_do_init);
	return l0drv_init_result;
}

/* --- driver --------------------------------------------------------------- */

static ze_result_t ZE_APICALL l0drv_driver_get(uint32_t *count, ze_driver_handle_t *drivers)
{
	if (!count)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (l0drv_init_result != ZE_RESULT_SUCCESS) {
		*count = 0;
		return ZE_RESULT_ERROR_UNINITIALIZED;
	}
	if (*count == 0 || !drivers) {
		*count = 1;
		return ZE_RESULT_SUCCESS;
	}
	*count = 1;
	drivers[0] = &l0drv_the_driver;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL l0drv_driver_api_version(ze_driver_handle_t d, ze_api_version_t *v)
{
	if (!v)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	*v = ZE_API_VERSION_1_3;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL l0drv_driver_props(ze_driver_handle_t d, ze_driver_properties_t *p)
{
	if (!p)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	memset(p->uuid.id, 0, sizeof(p->uuid.id));
	memcpy(p->uuid.id, "gbpf-l0-testdrv", 15);
	p->driverVersion = 1;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL l0drv_driver_ipc(ze_driver_handle_t d, ze_driver_ipc_properties_t *p)
{
	if (!p)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	p->flags = 0;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL l0drv_driver_ext(ze_driver_handle_t d, uint32_t *count,
					       ze_driver_extension_properties_t *p)
{
	if (!count)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	*count = 0;
	return ZE_RESULT_SUCCESS;
}

/*
 * zexDriverImportExternalPointer (Intel extension): makes host memory the
 * application (or gbpf) allocated usable by kernels. On a CPU OpenCL device
 * host memory already is; the range is recorded so that kernel arguments
 * pointing into it are passed as SVM pointers.
 */
static ze_result_t ZE_APICALL l0drv_import_pointer(ze_driver_handle_t d, void *ptr, size_t size)
{
	struct l0drv_alloc *a;

	if (!ptr || !size)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	a = calloc(1, sizeof(*a));
	if (!a)
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	a->ptr = ptr;
	a->size = size;
	a->type = ZE_MEMORY_TYPE_HOST;
	pthread_mutex_lock(&l0drv_alloc_lock);
	a->next = l0drv_allocs;
	l0drv_allocs = a;
	pthread_mutex_unlock(&l0drv_alloc_lock);
	return ZE_RESULT_SUCCESS;
}

static ze_result_t l0drv_forget(void *ptr, int want_svm)
{
	struct l0drv_alloc **pp, *a = NULL;

	pthread_mutex_lock(&l0drv_alloc_lock);
	for (pp = &l0drv_allocs; *pp; pp = &(*pp)->next) {
		if ((*pp)->ptr == ptr && (*pp)->svm == want_svm) {
			a = *pp;
			*pp = a->next;
			break;
		}
	}
	pthread_mutex_unlock(&l0drv_alloc_lock);
	if (!a)
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	if (a->svm)
		clSVMFree(l0drv_cl_state.context, a->ptr);
	free(a);
	return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL l0drv_release_pointer(ze_driver_handle_t d, void *ptr)
{
	return l0drv_forget(ptr, 0);
}

static ze_result_t ZE_APICALL l0drv_driver_ext_fn(ze_driver_handle_t d, const char *name, void **fn)
{
	if (!name || !fn)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (!strcmp(name, "zexDriverImportExternalPointer"))
		*fn = (void *)l0drv_import_pointer;
	else if (!strcmp(name, "zexDriverReleaseImportedPointer"))
		*fn = (void *)l0drv_release_pointer;
	else
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	return ZE_RESULT_SUCCESS;
}

/* --- device --------------------------------------------------------------- */

static ze_result_t ZE_APICALL l0drv_device_get(ze_driver_handle_t d, uint32_t *count,
					       ze_device_handle_t *devs)
{
	if (!count)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (*count == 0 || !devs) {
		*count = 1;
		return ZE_RESULT_SUCCESS;
	}
	*count = 1;
	devs[0] = &l0drv_the_device;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL l0drv_sub_devices(ze_device_handle_t d, uint32_t *count,
						ze_device_handle_t *subs)
{
	if (!count)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	*count = 0;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL l0drv_device_props(ze_device_handle_t d, ze_device_properties_t *p)
{
	const struct l0drv_cl *s = &l0drv_cl_state;

	if (!p)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	/* stype and pNext belong to the caller; every other field is ours. */
	p->type = ZE_DEVICE_TYPE_GPU;
	p->vendorId = 0;
	p->deviceId = 0;
	p->flags = ZE_DEVICE_PROPERTY_FLAG_INTEGRATED;
	p->subdeviceId = 0;
	p->coreClockRate = 1000;
	p->maxMemAllocSize = 1ULL << 32;
	p->maxHardwareContexts = 1;
	p->maxCommandQueuePriority = 0;
	p->numThreadsPerEU = 1;
	p->physicalEUSimdWidth = 1;
	p->numEUsPerSubslice = 1;
	p->numSubslicesPerSlice = 1;
	p->numSlices = s->compute_units ? s->compute_units : 1;
	p->timerResolution = 1;
	p->timestampValidBits = 64;
	p->kernelTimestampValidBits = 64;
	memset(p->uuid.id, 0, sizeof(p->uuid.id));
	memcpy(p->uuid.id, "gbpf-l0-dev", 11);
	snprintf(p->name, sizeof(p->name), "gbpf L0 test driver on %s", s->device_name);
	return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL l0drv_compute_props(ze_device_handle_t d,
						  ze_device_compute_properties_t *p)
{
	uint32_t g = (uint32_t)l0drv_cl_state.max_group_size;

	if (!p)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	p->maxTotalGroupSize = g;
	p->maxGroupSizeX = g;
	p->maxGroupSizeY = g;
	p->maxGroupSizeZ = g;
	p->maxGroupCountX = 1u << 20;
	p->maxGroupCountY = 1u << 16;
	p->maxGroupCountZ = 1u << 16;
	p->maxSharedLocalMemory = 32768;
	p->numSubGroupSizes = 1;
	p->subGroupSizes[0] = 1;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL l0drv_module_props(ze_device_handle_t d,
						 ze_device_module_properties_t *p)
{
	if (!p)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	p->spirvVersionSupported = ZE_MAKE_VERSION(1, 0);
	p->flags = ZE_DEVICE_MODULE_FLAG_INT64_ATOMICS;
	p->fp16flags = 0;
	p->fp32flags = ZE_DEVICE_FP_FLAG_ROUND_TO_NEAREST;
	p->fp64flags = 0;
	p->maxArgumentsSize = L0DRV_MAX_ARGS * 8;
	p->printfBufferSize = 0;
	memset(&p->nativeKernelSupported, 0, sizeof(p->nativeKernelSupported));
	return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL l0drv_queue_groups(ze_device_handle_t d, uint32_t *count,
						 ze_command_queue_group_properties_t *p)
{
	if (!count)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (*count == 0 || !p) {
		*count = 1;
		return ZE_RESULT_SUCCESS;
	}
	*count = 1;
	p[0].flags = ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE |
		     ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY;
	p[0].maxMemoryFillPatternSize = sizeof(((struct l0drv_cmd *)0)->pattern);
	p[0].numQueues = 1;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL l0drv_memory_props(ze_device_handle_t d, uint32_t *count,
						 ze_device_memory_properties_t *p)
{
	if (!count)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (*count == 0 || !p) {
		*count = 1;
		return ZE_RESULT_SUCCESS;
	}
	*count = 1;
	p[0].flags = 0;
	p[0].maxClockRate = 0;
	p[0].maxBusWidth = 64;
	p[0].totalSize = 1ULL << 32;
	snprintf(p[0].name, sizeof(p[0].name), "host memory (OpenCL SVM)");
	return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL l0drv_device_status(ze_device_handle_t d)
{
	return ZE_RESULT_SUCCESS;
}

/* --- context -------------------------------------------------------------- */

static ze_result_t ZE_APICALL l0drv_context_create(ze_driver_handle_t d,
						   const ze_context_desc_t *desc,
						   ze_context_handle_t *out)
{
	ze_context_handle_t c;

	if (!desc || !out)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	c = calloc(1, sizeof(*c));
	if (!c)
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	c->magic = L0DRV_MAGIC;
	*out = c;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL l0drv_context_destroy(ze_context_handle_t c)
{
	if (!c)
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	free(c);
	return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL l0drv_context_status(ze_context_handle_t c)
{
	return ZE_RESULT_SUCCESS;
}

/* --- memory --------------------------------------------------------------- */

struct l0drv_alloc *l0drv_alloc_find(const void *ptr)
{
	struct l0drv_alloc *a;
	uintptr_t p = (uintptr_t)ptr;

	pthread_mutex_lock(&l0drv_alloc_lock);
	for (a = l0drv_allocs; a; a = a->next)
		if (p >= (uintptr_t)a->ptr && p - (uintptr_t)a->ptr < a->size)
			break;
	pthread_mutex_unlock(&l0drv_alloc_lock);
	return a;
}

static ze_result_t l0drv_alloc(size_t size, size_t align, ze_memory_type_t type, void **out)
{
	struct l0drv_alloc *a;

	if (!out)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (size == 0)
		return ZE_RESULT_ERROR_UNSUPPORTED_SIZE;
	if (align & (align - 1))
		return ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT;
	if (size > (1ULL << 32))
		return ZE_RESULT_ERROR_UNSUPPORTED_SIZE;
	a = calloc(1, sizeof(*a));
	if (!a)
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	a->ptr = clSVMAlloc(l0drv_cl_state.context, CL_MEM_READ_WRITE | CL_MEM_SVM_FINE_GRAIN_BUFFER,
			    size, (cl_uint)(align > 128 ? align : 128));
	if (!a->ptr) {
		free(a);
		return ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
	}
	a->size = size;
	a->type = type;
	a->svm = 1;
	pthread_mutex_lock(&l0drv_alloc_lock);
	a->next = l0drv_allocs;
	l0drv_allocs = a;
	pthread_mutex_unlock(&l0drv_alloc_lock);
	*out = a->ptr;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL l0drv_alloc_shared(ze_context_handle_t c,
						 const ze_device_mem_alloc_desc_t *dd,
						 const ze_host_mem_alloc_desc_t *hd, size_t size,
						 size_t align, ze_device_handle_t dev, void **out)
{
	return l0drv_alloc(size, align, ZE_MEMORY_TYPE_SHARED, out);
}

static ze_result_t ZE_APICALL l0drv_alloc_device(ze_context_handle_t c,
						 const ze_device_mem_alloc_desc_t *dd, size_t size,
						 size_t align, ze_device_handle_t dev, void **out)
{
	return l0drv_alloc(size, align, ZE_MEMORY_TYPE_DEVICE, out);
}

static ze_result_t ZE_APICALL l0drv_alloc_host(ze_context_handle_t c,
					       const ze_host_mem_alloc_desc_t *hd, size_t size,
					       size_t align, void **out)
{
	return l0drv_alloc(size, align, ZE_MEMORY_TYPE_HOST, out);
}

static ze_result_t ZE_APICALL l0drv_mem_free(ze_context_handle_t c, void *ptr)
{
	if (!ptr)
		return ZE_RESULT_SUCCESS;
	return l0drv_forget(ptr, 1);
}

static ze_result_t ZE_APICALL l0drv_mem_props(ze_context_handle_t c, const void *ptr,
					      ze_memory_allocation_properties_t *p,
					      ze_device_handle_t *dev)
{
	struct l0drv_alloc *a;

	if (!p)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	a = l0drv_alloc_find(ptr);
	p->type = a && a->svm ? a->type : ZE_MEMORY_TYPE_UNKNOWN;
	p->id = (uint64_t)(uintptr_t)(a ? a->ptr : NULL);
	p->pageSize = 4096;
	if (dev)
		*dev = a && a->svm && a->type != ZE_MEMORY_TYPE_HOST ? &l0drv_the_device : NULL;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL l0drv_mem_range(ze_context_handle_t c, const void *ptr, void **base,
					      size_t *size)
{
	struct l0drv_alloc *a = l0drv_alloc_find(ptr);

	if (!a)
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	if (base)
		*base = a->ptr;
	if (size)
		*size = a->size;
	return ZE_RESULT_SUCCESS;
}

/* --- tables --------------------------------------------------------------- */

#define L0DRV_CHECK_TABLE(t, v)                                                                    \
	do {                                                                                       \
		if (!(t))                                                                          \
			return ZE_RESULT_ERROR_INVALID_NULL_POINTER;                               \
		if (ZE_MAJOR_VERSION(v) != 1)                                                      \
			return ZE_RESULT_ERROR_UNSUPPORTED_VERSION;                                \
		memset((t), 0, sizeof(*(t)));                                                      \
	} while (0)

ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetGlobalProcAddrTable(ze_api_version_t v,
							      ze_global_dditable_t *t)
{
	L0DRV_CHECK_TABLE(t, v);
	t->pfnInit = l0drv_init;
	return ZE_RESULT_SUCCESS;
}

ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetDriverProcAddrTable(ze_api_version_t v,
							      ze_driver_dditable_t *t)
{
	L0DRV_CHECK_TABLE(t, v);
	t->pfnGet = l0drv_driver_get;
	t->pfnGetApiVersion = l0drv_driver_api_version;
	t->pfnGetProperties = l0drv_driver_props;
	t->pfnGetIpcProperties = l0drv_driver_ipc;
	t->pfnGetExtensionProperties = l0drv_driver_ext;
	t->pfnGetExtensionFunctionAddress = l0drv_driver_ext_fn;
	return ZE_RESULT_SUCCESS;
}

ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetDeviceProcAddrTable(ze_api_version_t v,
							      ze_device_dditable_t *t)
{
	L0DRV_CHECK_TABLE(t, v);
	t->pfnGet = l0drv_device_get;
	t->pfnGetSubDevices = l0drv_sub_devices;
	t->pfnGetProperties = l0drv_device_props;
	t->pfnGetComputeProperties = l0drv_compute_props;
	t->pfnGetModuleProperties = l0drv_module_props;
	t->pfnGetCommandQueueGroupProperties = l0drv_queue_groups;
	t->pfnGetMemoryProperties = l0drv_memory_props;
	t->pfnGetStatus = l0drv_device_status;
	return ZE_RESULT_SUCCESS;
}

ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetContextProcAddrTable(ze_api_version_t v,
							       ze_context_dditable_t *t)
{
	L0DRV_CHECK_TABLE(t, v);
	t->pfnCreate = l0drv_context_create;
	t->pfnDestroy = l0drv_context_destroy;
	t->pfnGetStatus = l0drv_context_status;
	return ZE_RESULT_SUCCESS;
}

ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetMemProcAddrTable(ze_api_version_t v, ze_mem_dditable_t *t)
{
	L0DRV_CHECK_TABLE(t, v);
	t->pfnAllocShared = l0drv_alloc_shared;
	t->pfnAllocDevice = l0drv_alloc_device;
	t->pfnAllocHost = l0drv_alloc_host;
	t->pfnFree = l0drv_mem_free;
	t->pfnGetAllocProperties = l0drv_mem_props;
	t->pfnGetAddressRange = l0drv_mem_range;
	return ZE_RESULT_SUCCESS;
}

#define L0DRV_TABLE_OF(fn, type, fill)                                                             \
	ZE_DLLEXPORT ze_result_t ZE_APICALL fn(ze_api_version_t v, type *t)                        \
	{                                                                                          \
		L0DRV_CHECK_TABLE(t, v);                                                           \
		fill(t);                                                                           \
		return ZE_RESULT_SUCCESS;                                                          \
	}

L0DRV_TABLE_OF(zeGetCommandQueueProcAddrTable, ze_command_queue_dditable_t,
	       l0drv_fill_command_queue_table)
L0DRV_TABLE_OF(zeGetCommandListProcAddrTable, ze_command_list_dditable_t,
	       l0drv_fill_command_list_table)
L0DRV_TABLE_OF(zeGetFenceProcAddrTable, ze_fence_dditable_t, l0drv_fill_fence_table)
L0DRV_TABLE_OF(zeGetEventPoolProcAddrTable, ze_event_pool_dditable_t, l0drv_fill_event_pool_table)
L0DRV_TABLE_OF(zeGetEventProcAddrTable, ze_event_dditable_t, l0drv_fill_event_table)
L0DRV_TABLE_OF(zeGetModuleProcAddrTable, ze_module_dditable_t, l0drv_fill_module_table)
L0DRV_TABLE_OF(zeGetModuleBuildLogProcAddrTable, ze_module_build_log_dditable_t,
	       l0drv_fill_build_log_table)
L0DRV_TABLE_OF(zeGetKernelProcAddrTable, ze_kernel_dditable_t, l0drv_fill_kernel_table)

/* Tables of features the driver does not have: every entry NULL (unsupported). */
#define L0DRV_EMPTY_TABLE(fn, type)                                                                \
	ZE_DLLEXPORT ze_result_t ZE_APICALL fn(ze_api_version_t v, type *t)                        \
	{                                                                                          \
		L0DRV_CHECK_TABLE(t, v);                                                           \
		return ZE_RESULT_SUCCESS;                                                          \
	}

L0DRV_EMPTY_TABLE(zeGetDeviceExpProcAddrTable, ze_device_exp_dditable_t)
L0DRV_EMPTY_TABLE(zeGetImageProcAddrTable, ze_image_dditable_t)
L0DRV_EMPTY_TABLE(zeGetImageExpProcAddrTable, ze_image_exp_dditable_t)
L0DRV_EMPTY_TABLE(zeGetEventExpProcAddrTable, ze_event_exp_dditable_t)
L0DRV_EMPTY_TABLE(zeGetKernelExpProcAddrTable, ze_kernel_exp_dditable_t)
L0DRV_EMPTY_TABLE(zeGetSamplerProcAddrTable, ze_sampler_dditable_t)
L0DRV_EMPTY_TABLE(zeGetPhysicalMemProcAddrTable, ze_physical_mem_dditable_t)
L0DRV_EMPTY_TABLE(zeGetVirtualMemProcAddrTable, ze_virtual_mem_dditable_t)
L0DRV_EMPTY_TABLE(zeGetFabricVertexExpProcAddrTable, ze_fabric_vertex_exp_dditable_t)
L0DRV_EMPTY_TABLE(zeGetFabricEdgeExpProcAddrTable, ze_fabric_edge_exp_dditable_t)
L0DRV_EMPTY_TABLE(zetGetDeviceProcAddrTable, zet_device_dditable_t)
L0DRV_EMPTY_TABLE(zetGetContextProcAddrTable, zet_context_dditable_t)
L0DRV_EMPTY_TABLE(zetGetCommandListProcAddrTable, zet_command_list_dditable_t)
L0DRV_EMPTY_TABLE(zetGetModuleProcAddrTable, zet_module_dditable_t)
L0DRV_EMPTY_TABLE(zetGetKernelProcAddrTable, zet_kernel_dditable_t)
L0DRV_EMPTY_TABLE(zetGetMetricGroupProcAddrTable, zet_metric_group_dditable_t)
L0DRV_EMPTY_TABLE(zetGetMetricGroupExpProcAddrTable, zet_metric_group_exp_dditable_t)
L0DRV_EMPTY_TABLE(zetGetMetricProcAddrTable, zet_metric_dditable_t)
L0DRV_EMPTY_TABLE(zetGetMetricStreamerProcAddrTable, zet_metric_streamer_dditable_t)
L0DRV_EMPTY_TABLE(zetGetMetricQueryPoolProcAddrTable, zet_metric_query_pool_dditable_t)
L0DRV_EMPTY_TABLE(zetGetMetricQueryProcAddrTable, zet_metric_query_dditable_t)
L0DRV_EMPTY_TABLE(zetGetTracerExpProcAddrTable, zet_tracer_exp_dditable_t)
L0DRV_EMPTY_TABLE(zetGetDebugProcAddrTable, zet_debug_dditable_t)
L0DRV_EMPTY_TABLE(zesGetDriverProcAddrTable, zes_driver_dditable_t)
L0DRV_EMPTY_TABLE(zesGetDeviceProcAddrTable, zes_device_dditable_t)
L0DRV_EMPTY_TABLE(zesGetSchedulerProcAddrTable, zes_scheduler_dditable_t)
L0DRV_EMPTY_TABLE(zesGetPerformanceFactorProcAddrTable, zes_performance_factor_dditable_t)
L0DRV_EMPTY_TABLE(zesGetPowerProcAddrTable, zes_power_dditable_t)
L0DRV_EMPTY_TABLE(zesGetFrequencyProcAddrTable, zes_frequency_dditable_t)
L0DRV_EMPTY_TABLE(zesGetEngineProcAddrTable, zes_engine_dditable_t)
L0DRV_EMPTY_TABLE(zesGetStandbyProcAddrTable, zes_standby_dditable_t)
L0DRV_EMPTY_TABLE(zesGetFirmwareProcAddrTable, zes_firmware_dditable_t)
L0DRV_EMPTY_TABLE(zesGetMemoryProcAddrTable, zes_memory_dditable_t)
L0DRV_EMPTY_TABLE(zesGetFabricPortProcAddrTable, zes_fabric_port_dditable_t)
L0DRV_EMPTY_TABLE(zesGetTemperatureProcAddrTable, zes_temperature_dditable_t)
L0DRV_EMPTY_TABLE(zesGetPsuProcAddrTable, zes_psu_dditable_t)
L0DRV_EMPTY_TABLE(zesGetFanProcAddrTable, zes_fan_dditable_t)
L0DRV_EMPTY_TABLE(zesGetLedProcAddrTable, zes_led_dditable_t)
L0DRV_EMPTY_TABLE(zesGetRasProcAddrTable, zes_ras_dditable_t)
L0DRV_EMPTY_TABLE(zesGetDiagnosticsProcAddrTable, zes_diagnostics_dditable_t)
